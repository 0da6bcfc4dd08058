/*
 * http_extender.c - kube-scheduler's HTTP extender (extender protocol v1),
 * one extender per profile entry.
 *
 * kube-scheduler's HTTPExtender (pkg/scheduler/extender.go) and where
 * schedule_one.go calls it:
 *   filter      after every filter plugin, once per cycle, with the
 *               feasible Nodes (SDK 1.6 filter_feasible). What the
 *               extender leaves out is rejected: FailedAndUnresolvableNodes
 *               unresolvable, FailedNodes unschedulable, each with the
 *               extender's message; the others it did not return are
 *               rejected too. An answer naming a Node it was not sent, an
 *               Error, a status other than 200, a timeout or an answer
 *               that is not ExtenderFilterResult fails the cycle (decision
 *               "error" naming the URL), unless `ignorable`: then the
 *               extender is skipped for the cycle, as kube does.
 *   prioritize  with the feasible Nodes once they are more than one (pre
 *               score): score s of Node n becomes s * 100 / 10 (kube's
 *               MaxNodeScore / MaxExtenderPriority), clamped to 0..100;
 *               Nodes it does not list score 0; the entry's weight is
 *               kube's extender weight. A failure of any kind costs the
 *               extender its say in this cycle and nothing else (kube
 *               ignores prioritize errors, ignorable or not).
 *   bind        when bind_verb is set, the extender binds the Pods it is
 *               interested in (ExtenderBindingArgs) and the host writes no
 *               binding of its own: list the entry before default-binder,
 *               kube asks a binder extender before its bind plugins. A
 *               failure or an Error fails the binding.
 *   preempt     when a post-filter (preemption) found candidates, before
 *               it picks one (SDK 1.7 review_candidates; kube's
 *               callExtenders and ProcessPreemption): ExtenderPreemptionArgs
 *               with the Pod and, per candidate Node, its victims (the
 *               Pods, or their UIDs with node_cache_capable) and budget
 *               violations. The answer's NodeNameToMetaVictims is what is
 *               left: a Node it leaves out is dropped, its victims (found
 *               by UID among the Node's Pods) and NumPDBViolations replace
 *               the candidate's. A Node that was no candidate, a UID not on
 *               its Node, a status other than 200, a timeout or an answer
 *               that is not ExtenderPreemptionResult fails the preemption
 *               (the Pod stays unschedulable, the message names the URL),
 *               unless `ignorable`: then the extender is skipped. A Node
 *               answered without victims fails it too ("expected at least
 *               one victim pod on node"); an ignorable extender's such
 *               Node is dropped alone, as kube does.
 *   interest    managed_resources: the extender hears only of Pods whose
 *               containers or init containers request or limit one of
 *               them (IsInterested); empty: every Pod.
 *
 * The requests carry the Go field names of extender/v1 ("Pod", "Nodes",
 * "NodeNames", ...) as today's kube-scheduler sends them (its types have
 * no json tags); the answers are read in either spelling, keys matched
 * without regard to case as Go's decoder does (extender_request.h,
 * extender_reply.h). The Pod and the Nodes go out as their manifests'
 * JSON; a Node's JSON is made once per change of the Node (prepared
 * data), not per cycle. With node_cache_capable only the names are sent
 * (NodeNames). Calls to one extender are serialised on one kept-alive
 * connection (extender_http.c).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
/* the oldest host it runs on: filter_feasible (1.6); the preempt verb
 * needs review_candidates (1.7) and is logged as not called without it */
#define TRELLIS_PLUGIN_MIN_MINOR 6

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender_http.h"
#include "extender_reply.h"
#include "extender_request.h"
#include "trellis/plugin.h"

/* kube-scheduler's MaxExtenderPriority: extender scores are 0..10 */
#define MAX_EXTENDER_PRIORITY 10

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static const trellis_arg_spec args[] = {
    {"url_prefix", TRELLIS_ARG_STRING, NULL,
     "the extender's URL up to the verb (http:// or https://); a call POSTs to "
     "url_prefix/verb"},
    {"filter_verb", TRELLIS_ARG_STRING, "", "the filter verb; empty: the extender does not filter"},
    {"prioritize_verb", TRELLIS_ARG_STRING, "",
     "the prioritize verb; empty: the extender does not score"},
    {"preempt_verb", TRELLIS_ARG_STRING, "",
     "the preempt verb; set: the extender reviews preemption's candidates before its pick"},
    {"bind_verb", TRELLIS_ARG_STRING, "",
     "the bind verb; set: the extender binds the Pods it is interested in"},
    {"http_timeout_ms", TRELLIS_ARG_INT, "5000",
     "the timeout of one call (kube's httpTimeout; 0: its default, 5 s); keep it below the "
     "profile's hook_deadline_ms (bind: bind_deadline_ms)"},
    {"node_cache_capable", TRELLIS_ARG_BOOL, "false",
     "send only Node names (NodeNames), not the Nodes (Nodes)"},
    {"managed_resources", TRELLIS_ARG_STRING_LIST, "",
     "resource names; when set, only Pods requesting or limiting one of them are sent"},
    {"ignorable", TRELLIS_ARG_BOOL, "false",
     "a filter call that fails (unreachable, timed out, an error) skips the extender "
     "instead of failing the cycle"},
    {"tls_insecure", TRELLIS_ARG_BOOL, "false", "do not verify the server's certificate"},
    {"tls_server_name", TRELLIS_ARG_STRING, "",
     "the name the server's certificate is checked against (and sent as SNI)"},
    {"tls_ca_file", TRELLIS_ARG_STRING, "", "CA certificates (PEM file)"},
    {"tls_cert_file", TRELLIS_ARG_STRING, "", "client certificate (PEM file)"},
    {"tls_key_file", TRELLIS_ARG_STRING, "", "client key (PEM file)"},
    {"tls_ca_data", TRELLIS_ARG_STRING, "", "CA certificates (PEM text)"},
    {"tls_cert_data", TRELLIS_ARG_STRING, "", "client certificate (PEM text)"},
    {"tls_key_data", TRELLIS_ARG_STRING, "", "client key (PEM text)"},
    {NULL, 0, NULL, NULL},
};

typedef struct extender {
    char *url; /* url_prefix, for messages */
    char *filter_verb, *prioritize_verb, *bind_verb, *preempt_verb;
    int node_cache_capable, ignorable;
    char **managed;
    size_t n_managed;
    ext_http *http;
    ext_http *bind_http; /* the binding thread's own connection (bind_verb) */
} extender;

/* What a prioritize call gave this cycle: the feasible targets as handed
 * to pre_score and their scores, 0..100. */
typedef struct cycle_scores {
    const trellis_target *const *feasible;
    size_t n;
    int64_t *score;  /* by feasible position */
    int64_t *by_idx; /* by snapshot index (score_span) */
} cycle_scores;

static void extender_free(void *p)
{
    extender *e = p;
    if (!e)
        return;
    ext_http_free(e->http);
    ext_http_free(e->bind_http);
    free(e->url);
    free(e->filter_verb);
    free(e->prioritize_verb);
    free(e->bind_verb);
    free(e->preempt_verb);
    for (size_t i = 0; i < e->n_managed; i++)
        free(e->managed[i]);
    free(e->managed);
    free(e);
}

/* ---- interest: managed resources ---- */

typedef struct interest_ctx {
    const extender *e;
    int hit;
} interest_ctx;

static int managed_key(const char *key, const trellis_value *v, void *ud)
{
    interest_ctx *x = ud;
    for (size_t i = 0; i < x->e->n_managed; i++)
        if (strcmp(key, x->e->managed[i]) == 0)
            return x->hit = 1;
    return 0;
}

/* kube's hasManagedResources over one container list. */
static int containers_hit(const extender *e, const trellis_value *list)
{
    interest_ctx x = {e, 0};
    for (size_t i = 0; list && i < host->value_len(list) && !x.hit; i++) {
        const trellis_value *c = host->value_at(list, i);
        host->value_foreach(host->value_path(c, "resources.requests"), managed_key, &x);
        if (!x.hit)
            host->value_foreach(host->value_path(c, "resources.limits"), managed_key, &x);
    }
    return x.hit;
}

/* Prepared data of a Pod: nonzero (a non-NULL pointer) when the extender
 * is interested in it. */
static int prepare_workload(trellis_plugin *self, const trellis_object *w, void **data, char *err,
                            size_t errlen)
{
    const extender *e = host->get_private(self);
    int hit = containers_hit(e, host->object_get(w, "spec.containers")) ||
              containers_hit(e, host->object_get(w, "spec.initContainers"));
    *data = hit ? (void *)e : NULL; /* a marker, nothing to free */
    return 0;
}

static int interested(trellis_plugin *self, const extender *e, const trellis_object *w)
{
    return !e->n_managed || host->object_data(self, w) != NULL;
}

/* Prepared data of a Node: its JSON text, when Nodes are sent whole. */
static int prepare_target(trellis_plugin *self, const trellis_object *t, void **data, char *err,
                          size_t errlen)
{
    *data = ext_object_json(host, t);
    if (!*data) {
        snprintf(err, errlen, "cannot write the Node as JSON for the extender");
        return -1;
    }
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    const extender *e = host->get_private(self);
    if (data != (void *)e) /* a workload's marker is not ours to free */
        free(data);
}

/* ---- one call ---- */

/* The ExtenderArgs body for w over feasible[0..n); NULL with err. */
static char *args_body(trellis_plugin *self, const extender *e, trellis_cycle *c,
                       const trellis_object *w, const trellis_target *const *feasible, size_t n,
                       size_t *len, char *err, size_t errlen)
{
    char *pod = ext_object_json(host, w);
    const char **items = host->cycle_alloc(c, (n ? n : 1) * sizeof *items);
    char *body = NULL;
    if (!pod || !items) {
        snprintf(err, errlen, "cannot write the request (out of memory)");
        free(pod);
        return NULL;
    }
    for (size_t j = 0; j < n; j++)
        items[j] = e->node_cache_capable
                       ? host->target_name(feasible[j])
                       : host->object_data(self, host->target_object(feasible[j]));
    body = ext_args_body(pod, items, n, e->node_cache_capable, len);
    free(pod);
    if (!body)
        snprintf(err, errlen, "cannot write the request (out of memory)");
    return body;
}

/* POST body to verb; 0 with the reply, or -1 with err naming the
 * extender. */
static int call(const extender *e, const char *verb, char *body, size_t len, char **reply,
                size_t *reply_len, char *err, size_t errlen)
{
    char why[TRELLIS_MESSAGE_MAX];
    /* bind runs on the binding thread: a connection of its own, so that
     * a scheduling cycle never waits for a binding's call */
    ext_http *h = verb == e->bind_verb && e->bind_http ? e->bind_http : e->http;
    int rc = ext_http_post(h, verb, body, len, reply, reply_len, why, sizeof why);
    free(body);
    if (rc < 0)
        snprintf(err, errlen, "extender %s: %.200s", e->url, why);
    return rc;
}

/* ---- filter ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is among the sorted names[0..n). */
static int listed(char **names, size_t n, const char *name)
{
    return n && bsearch(&name, names, n, sizeof *names, by_name) != NULL;
}

/* A name of list[0..n) that is not among the sorted names[0..nf) (the
 * feasible targets'), or NULL. */
static const char *unknown_name(char **list, size_t n, char **names, size_t nf)
{
    for (size_t i = 0; i < n; i++)
        if (!listed(names, nf, list[i]))
            return list[i];
    return NULL;
}

/* A failed call (filter, preempt): skipped when ignorable, else the
 * cycle's error (or the review's: the preemption fails). */
static int call_failed(trellis_plugin *self, const extender *e, const char *why, trellis_status *st)
{
    if (e->ignorable) {
        host->log(self, TRELLIS_LOG_WARN, "skipping the ignorable extender: %s", why);
        return TRELLIS_SKIP;
    }
    host->status(st, TRELLIS_ERROR, "ExtenderError", "%s", why);
    return TRELLIS_ERROR;
}

/* ExtenderArgs for w and feasible[0..n) POSTed to verb: 0 with the
 * reply, or -1 with why. */
static int exchange(trellis_plugin *self, const extender *e, trellis_cycle *c,
                    const trellis_object *w, const trellis_target *const *feasible, size_t n,
                    const char *verb, char **reply, size_t *reply_len, char *why, size_t whylen)
{
    size_t len;
    char *body = args_body(self, e, c, w, feasible, n, &len, why, whylen);
    return body ? call(e, verb, body, len, reply, reply_len, why, whylen) : -1;
}

static int filter_feasible(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                           const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const extender *e = host->get_private(self);
    char why[TRELLIS_MESSAGE_MAX];
    if (!interested(self, e, w))
        return TRELLIS_SKIP;
    size_t reply_len;
    char *reply;
    if (exchange(self, e, c, w, feasible, n, e->filter_verb, &reply, &reply_len, why, sizeof why) <
        0)
        return call_failed(self, e, why, st);
    ext_filter_result r;
    char perr[160];
    int prc = ext_parse_filter(reply, reply_len, &r, perr, sizeof perr);
    free(reply);
    if (prc < 0) {
        snprintf(why, sizeof why, "extender %s: %s answer: %s", e->url, e->filter_verb, perr);
        return call_failed(self, e, why, st);
    }
    if (r.error) {
        snprintf(why, sizeof why, "extender %s: %s", e->url, r.error);
        ext_filter_result_free(&r);
        return call_failed(self, e, why, st);
    }
    /* kube reads nodenames only from a node-cache-capable extender */
    int names = e->node_cache_capable && r.has_names;
    char **kept = names ? r.names : r.nodes;
    size_t n_kept = names ? r.n_names : r.n_nodes;
    char **sent = host->cycle_alloc(c, (n ? n : 1) * sizeof *sent);
    if (!sent) {
        ext_filter_result_free(&r);
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for %zu names", n);
        return TRELLIS_ERROR;
    }
    for (size_t j = 0; j < n; j++)
        sent[j] = (char *)host->target_name(feasible[j]);
    qsort(sent, n, sizeof *sent, by_name);
    const char *stray = unknown_name(kept, n_kept, sent, n);
    if (stray) {
        snprintf(why, sizeof why,
                 "extender %s claims a filtered node \"%s\" which is not found in the input "
                 "node list",
                 e->url, stray);
        ext_filter_result_free(&r);
        return call_failed(self, e, why, st);
    }
    qsort(kept, n_kept, sizeof *kept, by_name);
    /* a failed node's name is its first member: sorted and found by it */
    qsort(r.failed, r.n_failed, sizeof *r.failed, by_name);
    for (size_t j = 0; j < n; j++) {
        const char *name = host->target_name(feasible[j]);
        if (listed(kept, n_kept, name))
            continue;
        trellis_status rej;
        ext_failed key = {(char *)name, NULL, 0};
        const ext_failed *f =
            r.n_failed ? bsearch(&key, r.failed, r.n_failed, sizeof *r.failed, by_name) : NULL;
        if (f)
            host->status(&rej, f->unresolvable ? TRELLIS_UNRESOLVABLE : TRELLIS_UNSCHEDULABLE,
                         "ExtenderRejected", "%s", f->message);
        else
            host->status(&rej, TRELLIS_UNSCHEDULABLE, "ExtenderRejected",
                         "extender %s did not return this node", e->url);
        host->cycle_reject(c, self, feasible[j], &rej);
    }
    ext_filter_result_free(&r);
    return TRELLIS_SUCCESS;
}

/* ---- prioritize ---- */

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const extender *e = host->get_private(self);
    char why[TRELLIS_MESSAGE_MAX];
    if (!interested(self, e, w))
        return TRELLIS_SKIP;
    size_t reply_len;
    char *reply;
    if (exchange(self, e, c, w, feasible, n, e->prioritize_verb, &reply, &reply_len, why,
                 sizeof why) < 0) {
        host->log(self, TRELLIS_LOG_INFO, "no score from the extender: %s", why);
        return TRELLIS_SKIP;
    }
    ext_priority *pr;
    size_t np;
    char perr[160];
    int prc = ext_parse_priorities(reply, reply_len, &pr, &np, perr, sizeof perr);
    free(reply);
    if (prc < 0) {
        host->log(self, TRELLIS_LOG_INFO, "no score from the extender %s: %s answer: %s", e->url,
                  e->prioritize_verb, perr);
        return TRELLIS_SKIP;
    }
    size_t nt = host->cycle_target_count(c);
    cycle_scores *s = host->cycle_alloc(c, sizeof *s);
    int64_t *score = host->cycle_alloc(c, (n ? n : 1) * sizeof *score);
    int64_t *by_idx = host->cycle_alloc(c, (nt ? nt : 1) * sizeof *by_idx);
    if (!s || !score || !by_idx) {
        ext_priorities_free(pr, np);
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for %zu scores", nt);
        return TRELLIS_ERROR;
    }
    /* each listed host adds its score (kube sums them per node name) */
    qsort(pr, np, sizeof *pr, by_name); /* host is the first member */
    size_t i = 0;
    for (size_t j = 0; j < n; j++) {
        const char *name = host->target_name(feasible[j]);
        int64_t sum = 0;
        ext_priority key = {(char *)name, 0};
        ext_priority *hit = np ? bsearch(&key, pr, np, sizeof *pr, by_name) : NULL;
        while (hit && hit > pr && strcmp(hit[-1].host, name) == 0)
            hit--;
        for (; hit && hit < pr + np && strcmp(hit->host, name) == 0; hit++)
            if (__builtin_add_overflow(sum, hit->score, &sum)) /* clamped below */
                sum = hit->score < 0 ? INT64_MIN : INT64_MAX;
        /* kube multiplies by MaxNodeScore / MaxExtenderPriority; the host
         * takes 0..100 */
        int64_t v = sum < 0 ? 0 : sum > MAX_EXTENDER_PRIORITY ? MAX_EXTENDER_PRIORITY : sum;
        score[j] = v * (TRELLIS_MAX_SCORE / MAX_EXTENDER_PRIORITY);
        /* feasible targets are in snapshot order: walk the snapshot once */
        while (i < nt && host->cycle_target(c, i) != feasible[j])
            i++;
        if (i < nt)
            by_idx[i] = score[j];
    }
    ext_priorities_free(pr, np);
    s->feasible = feasible;
    s->n = n;
    s->score = score;
    s->by_idx = by_idx;
    host->cycle_set(c, self, s);
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    const cycle_scores *s = host->cycle_get(c, self);
    *out = 0;
    for (size_t j = 0; s && j < s->n; j++)
        if (s->feasible[j] == t)
            *out = s->score[j];
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const cycle_scores *s = host->cycle_get(c, self);
    for (size_t j = 0; j < n; j++)
        scores[j] = s ? s->by_idx[idx[j]] : 0;
}

/* ---- preempt ---- */

/* The ExtenderPreemptionArgs body for w and cands[0..n); NULL with why.
 * The victims' JSON texts are made for this call and freed here. */
static char *preempt_body(const extender *e, trellis_cycle *c, const trellis_object *w,
                          const trellis_candidate *cands, size_t n, size_t *len, char *why,
                          size_t whylen)
{
    /* zeroed: a text not made is NULL */
    ext_victims *v = host->cycle_alloc(c, n * sizeof *v);
    char *pod = ext_object_json(host, w), *body = NULL;
    int ok = v && pod;
    for (size_t i = 0; ok && i < n; i++) {
        const char **pods = host->cycle_alloc(c, (cands[i].n_victims + 1) * sizeof *pods);
        if (!(ok = pods != NULL))
            break;
        v[i].node = host->target_name(cands[i].target);
        v[i].pods = pods;
        v[i].n_pods = cands[i].n_victims;
        v[i].pdb_violations = cands[i].pdb_violations;
        for (size_t j = 0; ok && j < cands[i].n_victims; j++) {
            pods[j] = e->node_cache_capable ? host->object_uid(cands[i].victims[j])
                                            : ext_object_json(host, cands[i].victims[j]);
            ok = pods[j] != NULL;
        }
    }
    if (ok)
        body = ext_preemption_body(pod, v, n, e->node_cache_capable, len);
    for (size_t i = 0; v && !e->node_cache_capable && i < n; i++)
        for (size_t j = 0; v[i].pods && j < v[i].n_pods; j++)
            free((char *)v[i].pods[j]);
    free(pod);
    if (!body)
        snprintf(why, whylen, "cannot write the request (out of memory)");
    return body;
}

/* The workload of UID uid on t, or NULL. */
static const trellis_object *pod_of_uid(const trellis_target *t, const char *uid)
{
    for (size_t i = 0; uid[0] && i < host->target_workload_count(t); i++)
        if (strcmp(host->object_uid(host->target_workload(t, i)), uid) == 0)
            return host->target_workload(t, i);
    return NULL;
}

/* kube's callExtenders for this extender: the candidates it keeps, with
 * the victims it names, into cands[0..*n). */
static int review(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  trellis_candidate *cands, size_t *n, trellis_status *st)
{
    const extender *e = host->get_private(self);
    char why[TRELLIS_MESSAGE_MAX], perr[160];
    if (!interested(self, e, w))
        return TRELLIS_SKIP;
    size_t len, reply_len, na;
    char *reply;
    char *body = preempt_body(e, c, w, cands, *n, &len, why, sizeof why);
    if (!body || call(e, e->preempt_verb, body, len, &reply, &reply_len, why, sizeof why) < 0)
        return call_failed(self, e, why, st);
    ext_meta_victims *a;
    int prc = ext_parse_preemption(reply, reply_len, &a, &na, perr, sizeof perr);
    free(reply);
    if (prc < 0) {
        snprintf(why, sizeof why, "extender %s: %s answer: %s", e->url, e->preempt_verb, perr);
        return call_failed(self, e, why, st);
    }
    trellis_candidate *kept = host->cycle_alloc(c, (na ? na : 1) * sizeof *kept);
    size_t k = 0;
    int rc = TRELLIS_SUCCESS;
    if (!kept) {
        ext_meta_victims_free(a, na);
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for %zu candidates", na);
        return TRELLIS_ERROR;
    }
    /* kube's convertToVictims: every Node a candidate, every UID a Pod on
     * its Node; a failure here is the extender's */
    for (size_t i = 0; i < na && rc == TRELLIS_SUCCESS; i++) {
        const trellis_candidate *given = NULL;
        for (size_t j = 0; j < *n && !given; j++)
            if (strcmp(host->target_name(cands[j].target), a[i].node) == 0)
                given = &cands[j];
        if (!given) {
            snprintf(why, sizeof why,
                     "extender %s claims to preempt on node \"%.64s\", which is not a "
                     "candidate",
                     e->url, a[i].node);
            rc = call_failed(self, e, why, st);
            break;
        }
        const trellis_object **victims =
            host->cycle_alloc(c, (a[i].n_uids ? a[i].n_uids : 1) * sizeof *victims);
        if (!victims) {
            rc = host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for the victims");
            break;
        }
        for (size_t j = 0; j < a[i].n_uids && rc == TRELLIS_SUCCESS; j++) {
            if (!(victims[j] = pod_of_uid(given->target, a[i].uids[j]))) {
                snprintf(why, sizeof why,
                         "extender %s claims to preempt pod (UID: %.64s) on node: %.64s, but "
                         "the pod is not found on that node",
                         e->url, a[i].uids[j], a[i].node);
                rc = call_failed(self, e, why, st);
            }
        }
        kept[k].target = given->target;
        kept[k].victims = victims;
        kept[k].n_victims = a[i].n_uids;
        kept[k].pdb_violations = a[i].pdb_violations;
        k++;
    }
    /* then the Nodes left without victims: an ignorable extender's are
     * dropped, any other's fail the preemption */
    size_t m = 0;
    for (size_t i = 0; i < k && rc == TRELLIS_SUCCESS; i++) {
        if (kept[i].n_victims > 0) {
            kept[m++] = kept[i];
            continue;
        }
        if (e->ignorable) {
            host->log(self, TRELLIS_LOG_INFO,
                      "ignored node %s for which the extender didn't report victims",
                      host->target_name(kept[i].target));
            continue;
        }
        rc = host->status(st, TRELLIS_ERROR, "ExtenderError",
                          "extender %s: expected at least one victim pod on node \"%s\"", e->url,
                          host->target_name(kept[i].target));
    }
    ext_meta_victims_free(a, na);
    if (rc != TRELLIS_SUCCESS)
        return rc;
    memcpy(cands, kept, m * sizeof *kept);
    *n = m;
    return TRELLIS_SUCCESS;
}

/* ---- bind ---- */

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                const trellis_target *t, trellis_status *st)
{
    const extender *e = host->get_private(self);
    char why[TRELLIS_MESSAGE_MAX];
    if (!interested(self, e, w))
        return TRELLIS_SKIP; /* the next binder binds it */
    size_t len, reply_len;
    char *reply, *error;
    char *body = ext_binding_body(host->object_name(w), host->object_namespace(w),
                                  host->object_uid(w), host->target_name(t), &len);
    if (!body) {
        host->status(st, TRELLIS_ERROR, "ExtenderError", "cannot write the request");
        return TRELLIS_ERROR;
    }
    if (call(e, e->bind_verb, body, len, &reply, &reply_len, why, sizeof why) < 0) {
        host->status(st, TRELLIS_ERROR, "ExtenderError", "%s", why);
        return TRELLIS_ERROR;
    }
    int prc = ext_parse_binding(reply, reply_len, &error, why, sizeof why);
    free(reply);
    if (prc < 0 || error) {
        host->status(st, TRELLIS_ERROR, "ExtenderError", "extender %s: %s%s%s", e->url,
                     prc < 0 ? e->bind_verb : error, prc < 0 ? " answer: " : "",
                     prc < 0 ? why : "");
        free(error);
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

/* ---- configuration ---- */

/* A verb goes into the URL's path: letters, digits and -._~/ only. */
static int bad_verb(const char *v)
{
    if (v[0] == '/')
        return 1;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("-._~/", *p)))
            return 1;
    return 0;
}

static char *verb(const trellis_args *a, const char *key, char *err, size_t errlen, int *bad)
{
    const char *v = host->arg_string(a, key);
    if (!v || !v[0])
        return NULL;
    if (bad_verb(v)) {
        snprintf(err, errlen,
                 "%s '%s': expected a path segment of letters, digits and -._~/ (the URL is "
                 "url_prefix/%s)",
                 key, v, key);
        *bad = 1;
        return NULL;
    }
    return strdup(v);
}

/* A file named by a TLS argument must be readable now. */
static int readable(const trellis_args *a, const char *key, char *err, size_t errlen)
{
    const char *path = host->arg_string(a, key);
    if (!path || !path[0])
        return 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen,
                 "%s '%s': cannot be read (a PEM file, relative to the directory "
                 "trellis runs in)",
                 key, path);
        return -1;
    }
    fclose(f);
    return 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *a, char *err,
                size_t errlen)
{
    host = h;
    const char *url = h->arg_string(a, "url_prefix");
    int64_t timeout = h->arg_int(a, "http_timeout_ms");
    if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
        !url[strncmp(url, "http://", 7) == 0 ? 7 : 8]) {
        snprintf(err, errlen,
                 "url_prefix '%s': expected an http:// or https:// URL "
                 "(the extender's address up to the verb)",
                 url ? url : "");
        return -1;
    }
    if (timeout < 0) {
        snprintf(err, errlen, "http_timeout_ms %lld: expected 0 (5000, kube's default) or more",
                 (long long)timeout);
        return -1;
    }
    if (timeout == 0)
        timeout = 5000;
    extender *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, e, extender_free);
    int bad = 0;
    e->url = strdup(url);
    e->filter_verb = verb(a, "filter_verb", err, errlen, &bad);
    if (!bad)
        e->prioritize_verb = verb(a, "prioritize_verb", err, errlen, &bad);
    if (!bad)
        e->bind_verb = verb(a, "bind_verb", err, errlen, &bad);
    if (!bad)
        e->preempt_verb = verb(a, "preempt_verb", err, errlen, &bad);
    if (bad)
        return -1;
    if (e->preempt_verb && !TRELLIS_HOST_HAS(h, register_review_candidates)) {
        h->log(self, TRELLIS_LOG_WARN,
               "preempt_verb '%s' is not called: this host cannot have preemption candidates "
               "reviewed (SDK 1.7)",
               e->preempt_verb);
        free(e->preempt_verb);
        e->preempt_verb = NULL;
    }
    e->node_cache_capable = h->arg_bool(a, "node_cache_capable");
    e->ignorable = h->arg_bool(a, "ignorable");
    e->n_managed = h->arg_list_len(a, "managed_resources");
    e->managed = calloc(e->n_managed ? e->n_managed : 1, sizeof *e->managed);
    for (size_t i = 0; e->managed && i < e->n_managed; i++)
        e->managed[i] = strdup(h->arg_list_at(a, "managed_resources", i));
    const char *key = h->arg_string(a, "tls_key_file"), *cert = h->arg_string(a, "tls_cert_file");
    const char *keyd = h->arg_string(a, "tls_key_data"), *certd = h->arg_string(a, "tls_cert_data");
    int has_cert = (cert && cert[0]) || (certd && certd[0]);
    int has_key = (key && key[0]) || (keyd && keyd[0]);
    if (has_cert != has_key) {
        snprintf(err, errlen, "%s without %s: a client certificate needs its key",
                 has_cert ? "tls_cert_file/tls_cert_data" : "tls_key_file/tls_key_data",
                 has_cert ? "tls_key_file/tls_key_data" : "tls_cert_file/tls_cert_data");
        return -1;
    }
    if (readable(a, "tls_ca_file", err, errlen) < 0 ||
        readable(a, "tls_cert_file", err, errlen) < 0 ||
        readable(a, "tls_key_file", err, errlen) < 0)
        return -1;
    ext_tls tls = {h->arg_bool(a, "tls_insecure"),
                   h->arg_string(a, "tls_server_name"),
                   h->arg_string(a, "tls_ca_file"),
                   cert,
                   key,
                   h->arg_string(a, "tls_ca_data"),
                   certd,
                   keyd};
    char herr[256];
    e->http = ext_http_new(url, (long)timeout, &tls, herr, sizeof herr);
    if (e->http && e->bind_verb)
        e->bind_http = ext_http_new(url, (long)timeout, &tls, herr, sizeof herr);
    if (!e->http || (e->bind_verb && !e->bind_http) || !e->url || !e->managed) {
        snprintf(err, errlen, "%s", !e->url || !e->managed ? "out of memory" : herr);
        return -1;
    }
    int rc = 0;
    if (e->n_managed)
        rc |= h->register_prepare_workload(self, prepare_workload);
    if (!e->node_cache_capable && (e->filter_verb || e->prioritize_verb))
        rc |= h->register_prepare_target(self, prepare_target);
    if (e->n_managed || (!e->node_cache_capable && (e->filter_verb || e->prioritize_verb)))
        rc |= h->register_release(self, release);
    if (e->filter_verb)
        rc |= h->register_filter_feasible(self, filter_feasible);
    if (e->prioritize_verb)
        rc |= h->register_pre_score(self, pre_score) | h->register_score(self, score) |
              h->register_score_span(self, score_span);
    if (e->bind_verb)
        rc |= h->register_bind(self, bind);
    if (e->preempt_verb)
        rc |= h->register_review_candidates(self, review);
    if (rc) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "http-extender",
    "0.1.0",
    "a kube-scheduler HTTP extender (filter, prioritize, preempt, bind verbs; extender "
    "protocol v1)",
    args,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN_AS(desc, http_extender)
