/*
 * pod_topology_spread.c - the pod-topology-spread plugin: kube-scheduler's
 * PodTopologySpread.
 *
 * A Pod's spec.topologySpreadConstraints (or, when it has none, the
 * default constraints of the plugin's PodTopologySpreadArgs with a
 * selector deduced from the Services, ReplicationController, ReplicaSet or
 * StatefulSet that select or own it) count, per topology domain (a value
 * of the constraint's topologyKey on the Nodes), the Pods of its namespace
 * that match the constraint's selector, not being deleted and not
 * Succeeded or Failed.
 *
 * Filter (DoNotSchedule): a Node without the topologyKey is UNRESOLVABLE
 * ("... (missing required label)"); otherwise the Node fits when
 * count(its domain) + (1 if the Pod matches its own selector) - global
 * minimum <= maxSkew, the global minimum being the smallest count over the
 * eligible domains, or 0 when there are fewer than minDomains of them
 * (UNSCHEDULABLE: evicting Pods may help). Eligible domains are those of
 * the Nodes that hold every DoNotSchedule topologyKey and pass the
 * constraint's node inclusion policies: nodeAffinityPolicy Honor (the
 * default) keeps Nodes the Pod's nodeSelector and required node affinity
 * match, nodeTaintsPolicy Honor (default Ignore) Nodes whose NoSchedule
 * and NoExecute taints the Pod tolerates.
 *
 * Score (ScheduleAnyway): for each constraint whose key the Node holds,
 * count * log(domains + 2) + maxSkew - 1, summed and rounded, where a
 * kubernetes.io/hostname constraint counts the Pods on the Node itself and
 * `domains` is the number of feasible Nodes, and any other counts the
 * domain over every Node passing its policies, `domains` being the number
 * of domains among the feasible Nodes. Nodes lacking a key are not scored
 * (0) unless the constraints are the system defaults. Normalized as kube:
 * 100 * (max + min - score) / max, all 100 when max is 0.
 *
 * Everything about an object is parsed once, in prepare: constraints,
 * selectors, node affinity and tolerations of Pods, labels and taints of
 * Nodes become interned ids. A cycle counts once (pre_filter, reused by
 * pre_score): it walks each Node's Pods one time, adds the matches per
 * constraint and per Node, sums them into per-domain counters (a small
 * hash map per constraint, in the cycle's arena) and writes each Node's
 * verdict into a column that filter_span reads; score_span reads the
 * counters. Filter and score allocate nothing. A copy of a Node the host
 * hands the plain filter instead of the cycle's own (with the Pods
 * nominated to it, or without a preemption's victims) is judged with the
 * Pods it adds or lacks counted in its domain, as kube's AddPod and
 * RemovePod: the domain's count and the global minimum change.
 *
 * `config` is kube's PodTopologySpreadArgs as a document:
 *   defaultingType: System | List       (System: the system defaults)
 *   defaultConstraints: [{maxSkew, topologyKey, whenUnsatisfiable, ...}]
 */
/* the oldest host it runs on: the document argument and declare_kinds of 1.4 */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "nodeselector.h"
#include "selector.h"
#include "spread.h"
#include "taints.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

#define CONSTRAINTS_FIELD "spec.topologySpreadConstraints"
#define SELECTOR_FIELD "spec.nodeSelector"
#define REQUIRED_FIELD "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
/* each has its own (topologyKey, whenUnsatisfiable): far more than any Pod has */
#define MAX_CONSTRAINTS 64
#define MISMATCH "node(s) didn't match pod topology spread constraints"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    intern ids;        /* written in prepare only */
    int32_t hostname;  /* id of kubernetes.io/hostname */
    int32_t empty;     /* id of "": the domain of a Node without the key */
    spread_list dhard; /* default constraints, DoNotSchedule */
    spread_list dsoft; /* ScheduleAnyway */
    int system;        /* defaultingType System */
    /* per-Node match counts of recent classes of Pods (see counts());
     * main thread only: pre_filter and pre_score */
    struct ccache *cache;
    size_t ncache;
    uint64_t clock;
} config;

/* What a Pod with constraints (its own or defaults) needs in a cycle. */
typedef struct podspec {
    int32_t ns;             /* namespace id, as the Pod's */
    spread_list hard, soft; /* DoNotSchedule and ScheduleAnyway, in order */
    int defaulted;          /* hard and soft are the default constraints */
    int has_selector;       /* spec.nodeSelector */
    selector_ids selector;
    node_selector *required; /* NULL: no required node affinity */
    taint_list *tolerations;
    int32_t *sig; /* what its per-Node counts depend on (see counts()) */
    size_t nsig;
} podspec;

/* Prepared data of Pods and Nodes alike (one release function); small,
 * since every Pod has one and a cycle may read those of every placed Pod. */
typedef struct prepared {
    uint8_t node;       /* a Node's (else a Pod's) */
    uint8_t counted;    /* Pod: not being deleted, not Succeeded or Failed */
    uint8_t bad_taints; /* Node: its taints did not parse, tolerated by nothing */
    int32_t id;         /* Pod: its namespace id; Node: its name id */
    label_set labels;
    podspec *spec;             /* Pod: NULL when the plugin sits it out */
    taint_list *taints;        /* Node */
    const trellis_object *obj; /* Node, borrowed: outlives its prepared data */
} prepared;

static const trellis_arg_spec args_table[] = {
    {"config", TRELLIS_ARG_DOCUMENT, "{}",
     "kube-scheduler's PodTopologySpreadArgs: defaultingType (System or List) and "
     "defaultConstraints"},
    {NULL, 0, NULL, NULL},
};

/* The match counts per Node and constraint of one class of Pods (equal
 * `sig`: namespace and selectors), with the counter sums of each Node's
 * Pods when they were counted: a Node whose sums did not change holds the
 * same Pods and keeps its counts. */
typedef struct ccache {
    int32_t *sig;
    size_t nsig, nt, nc;
    int64_t *key; /* [3 * i ..]: the Node's counter sums; key[3 * i] -1: not counted */
    int32_t *cnt; /* [k * nt + i] */
    uint64_t used;
} ccache;

#define NCACHE 4

static void cache_free(config *cfg)
{
    for (size_t i = 0; i < cfg->ncache; i++) {
        free(cfg->cache[i].sig);
        free(cfg->cache[i].key);
        free(cfg->cache[i].cnt);
    }
    free(cfg->cache);
}

static void config_free(void *p)
{
    config *cfg = p;

    if (!cfg)
        return;
    spread_clear(&cfg->dhard);
    spread_clear(&cfg->dsoft);
    intern_free(&cfg->ids);
    cache_free(cfg);
    free(cfg);
}

static void spec_clear(podspec *sp)
{
    spread_clear(&sp->hard);
    spread_clear(&sp->soft);
    selector_ids_clear(&sp->selector);
    ns_free(sp->required);
    taints_free(sp->tolerations);
    free(sp->sig);
    memset(sp, 0, sizeof(*sp));
}

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    (void)self;
    if (!p)
        return;
    label_set_clear(&p->labels);
    if (p->spec)
        spec_clear(p->spec);
    free(p->spec);
    taints_free(p->taints);
    free(p);
}

/* ---- the default selector (kube's helper.DefaultSelector) -------------- */

typedef struct deflt {
    const trellis_object *pod;
    const char **keys, **values; /* the merged label set; borrowed strings */
    size_t n, cap;
    int nomem;
} deflt;

/* labels.Merge: a later value of a key wins. */
static int merge_pair(const char *key, const trellis_value *v, void *ud)
{
    deflt *d = ud;
    const char *text = values_scalar_text(host, v);

    if (!text)
        return 0;
    for (size_t i = 0; i < d->n; i++) {
        if (strcmp(d->keys[i], key) == 0) {
            d->values[i] = text;
            return 0;
        }
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        const char **k = realloc(d->keys, cap * sizeof(*k));
        const char **v2 = k ? realloc(d->values, cap * sizeof(*v2)) : NULL;

        if (k)
            d->keys = k;
        if (!v2) {
            d->nomem = 1;
            return 1;
        }
        d->values = v2;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->values[d->n++] = text;
    return 0;
}

static int pod_has_pair(const char *key, const trellis_value *v, void *ud)
{
    const char *want = values_scalar_text(host, v);
    const char *have = host->object_label(ud, key);

    return !want || !have || strcmp(want, have) != 0;
}

/* A Service whose spec.selector (a map; nil selects nothing) matches the
 * Pod's labels adds its pairs. */
static int service(const trellis_object *o, void *ud)
{
    deflt *d = ud;
    const trellis_value *sel = host->object_get(o, "spec.selector");

    if (!sel || host->value_type(sel) != TRELLIS_VALUE_MAP ||
        host->value_foreach(sel, pod_has_pair, (void *)d->pod))
        return 0;
    host->value_foreach(sel, merge_pair, d);
    return d->nomem;
}

/* The controller reference of the Pod (ownerReferences[].controller). */
static const trellis_value *controller_of(const trellis_object *pod)
{
    const trellis_value *refs = host->object_get(pod, "metadata.ownerReferences");

    for (size_t i = 0; refs && i < host->value_len(refs); i++) {
        const trellis_value *r = host->value_at(refs, i);
        int ctl = 0;

        if (host->value_type(r) == TRELLIS_VALUE_MAP &&
            host->value_bool(host->value_get(r, "controller"), &ctl) == 0 && ctl)
            return r;
    }
    return NULL;
}

static const char *ref_string(const trellis_value *ref, const char *key)
{
    const char *s = values_scalar_text(host, host->value_get(ref, key));

    return s ? s : "";
}

/* *out: the selector of the Services selecting the Pod and of its
 * ReplicationController, ReplicaSet or StatefulSet; NULL when empty (no
 * default constraints then). -1 only when out of memory. */
static int default_selector(trellis_plugin *self, const trellis_object *pod, int has_labels,
                            selector **out)
{
    deflt d = {pod, NULL, NULL, 0, 0, 0};
    const trellis_value *ref = controller_of(pod);
    const char *ns = host->object_namespace(pod);
    selector *extra = NULL;
    int rc = 0;

    *out = NULL;
    /* a Service with a non-empty selector cannot select a Pod without
     * labels, and an empty one adds nothing: no need to read them */
    if (has_labels)
        host->foreach_object(self, "Service", ns, service, &d);
    if (ref) {
        const char *api = ref_string(ref, "apiVersion"), *kind = ref_string(ref, "kind");
        const char *name = ref_string(ref, "name");
        const trellis_object *o = NULL;

        if (strcmp(api, "v1") == 0 && strcmp(kind, "ReplicationController") == 0) {
            o = host->lookup_object(self, kind, ns, name);
            if (o)
                host->value_foreach(host->object_get(o, "spec.selector"), merge_pair, &d);
        } else if (strcmp(api, "apps/v1") == 0 &&
                   (strcmp(kind, "ReplicaSet") == 0 || strcmp(kind, "StatefulSet") == 0)) {
            char err[256];

            o = host->lookup_object(self, kind, ns, name);
            /* a selector that does not parse adds nothing, as in kube */
            if (o &&
                selector_parse(host, host->object_get(o, "spec.selector"), SELECTOR_FORMAT_SELECTOR,
                               "spec.selector", &extra, err, sizeof(err)) < 0)
                extra = NULL;
        }
    }
    for (size_t i = 0; !d.nomem && i < d.n; i++) {
        char *v = (char *)d.values[i];
        selector_req r = {(char *)d.keys[i], SELECTOR_EQUALS, &v, 1};

        d.nomem = spread_selector_add(out, &r) < 0;
    }
    for (size_t i = 0; !d.nomem && extra && i < extra->n; i++)
        d.nomem = spread_selector_add(out, &extra->reqs[i]) < 0;
    if (d.nomem) {
        selector_free(*out);
        *out = NULL;
        rc = -1;
    }
    selector_free(extra);
    free(d.keys);
    free(d.values);
    return rc;
}

/* ---- prepare ----------------------------------------------------------- */

static int any_honors(const podspec *p, int taints)
{
    const spread_list *l[] = {&p->hard, &p->soft};

    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < l[k]->n; i++) {
            if (taints ? l[k]->v[i].honor_taints : l[k]->v[i].honor_affinity)
                return 1;
        }
    }
    return 0;
}

/* The Pod's required node affinity (nodeSelector and required terms), as
 * kube's nodeaffinity.GetRequiredNodeAffinity. */
static int read_affinity(config *cfg, const trellis_object *obj, podspec *p, char *err,
                         size_t errlen)
{
    selector *sel = NULL;
    const trellis_value *req = host->object_get(obj, REQUIRED_FIELD);

    if (selector_parse(host, host->object_get(obj, SELECTOR_FIELD), SELECTOR_FORMAT_MAP,
                       SELECTOR_FIELD, &sel, err, errlen) < 0)
        return -1;
    if (sel) {
        p->has_selector = 1;
        if (selector_compile(sel, &cfg->ids, &p->selector) < 0) {
            selector_free(sel);
            snprintf(err, errlen, "%s: out of memory", SELECTOR_FIELD);
            return -1;
        }
        selector_free(sel);
    }
    if (req && host->value_type(req) != TRELLIS_VALUE_NULL &&
        ns_parse_required(host, req, REQUIRED_FIELD, &cfg->ids, &p->required, err, errlen) < 0)
        return -1;
    return 0;
}

/* What a Pod's per-Node match counts depend on, as integers: its
 * namespace and, per constraint (DoNotSchedule ones first), the selector:
 * Pods with equal signatures count the same Pods on every Node. */
static int sig_put(int32_t **v, size_t *n, size_t *cap, int32_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 32;
        int32_t *q = realloc(*v, c * sizeof(*q));

        if (!q)
            return -1;
        *v = q;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static int make_sig(podspec *p)
{
    const spread_list *l[] = {&p->hard, &p->soft};
    size_t cap = 0;
    int rc = sig_put(&p->sig, &p->nsig, &cap, p->ns) |
             sig_put(&p->sig, &p->nsig, &cap, (int32_t)p->hard.n) |
             sig_put(&p->sig, &p->nsig, &cap, (int32_t)p->soft.n);

    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < l[k]->n; i++) {
            const spread_constraint *c = &l[k]->v[i];

            rc |= sig_put(&p->sig, &p->nsig, &cap, (int32_t)c->match) |
                  sig_put(&p->sig, &p->nsig, &cap, (int32_t)c->sel.n);
            for (size_t j = 0; j < c->sel.n; j++) {
                const selector_idreq *r = &c->sel.reqs[j];

                rc |= sig_put(&p->sig, &p->nsig, &cap, r->key) |
                      sig_put(&p->sig, &p->nsig, &cap, (int32_t)r->op) |
                      sig_put(&p->sig, &p->nsig, &cap, (int32_t)r->nvalues);
                for (uint32_t m = 0; m < r->nvalues; m++)
                    rc |= sig_put(&p->sig, &p->nsig, &cap, c->sel.values[r->first + m]);
            }
        }
    }
    return rc ? -1 : 0;
}

/* Counters of a Pod that counts (not being deleted, not finished): 1, and
 * two independent 40-bit hashes of its namespace and labels. The host
 * sums them per Node: equal sums, the same Pods (a Node's sums stay far
 * below the range of int64). */
#define HASH_BITS 40

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void amounts(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    const prepared *p = host->object_data(self, w);
    uint64_t h1 = 0x9e3779b97f4a7c15ull, h2 = 0x632be59bd9b4e019ull;

    out[0] = out[1] = out[2] = 0;
    if (!p || p->node || !p->counted)
        return;
    h1 = mix64(h1 ^ (uint32_t)p->id);
    h2 = mix64(h2 + (uint32_t)p->id * 0x100000001b3ull);
    for (size_t i = 0; i < p->labels.n; i++) {
        h1 = mix64(h1 ^ p->labels.pairs[i]);
        h2 = mix64((h2 + p->labels.pairs[i]) * 0x100000001b3ull);
    }
    out[0] = 1;
    out[1] = (int64_t)(h1 >> (64 - HASH_BITS));
    out[2] = (int64_t)(h2 >> (64 - HASH_BITS));
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *cons = host->object_get(obj, CONSTRAINTS_FIELD);
    const char *phase = values_scalar_text(host, host->object_get(obj, "status.phase"));
    const trellis_value *del = host->object_get(obj, "metadata.deletionTimestamp");
    prepared *p = calloc(1, sizeof(*p));
    podspec sp;

    *data = NULL;
    memset(&sp, 0, sizeof(sp));
    if (!p ||
        label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->ids, &p->labels) < 0 ||
        (p->id = intern_id(&cfg->ids, host->object_namespace(obj))) < 0) {
        release(self, p);
        snprintf(err, errlen, "metadata.labels: out of memory");
        return -1;
    }
    sp.ns = p->id;
    p->counted = (!del || host->value_type(del) == TRELLIS_VALUE_NULL) &&
                 !(phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0));
    if (cons && host->value_type(cons) == TRELLIS_VALUE_LIST && host->value_len(cons) > 0) {
        if (spread_parse(host, cons, CONSTRAINTS_FIELD, &p->labels, &cfg->ids, &sp.hard, &sp.soft,
                         err, errlen) < 0)
            goto fail;
    } else if (cons && host->value_type(cons) != TRELLIS_VALUE_NULL &&
               host->value_type(cons) != TRELLIS_VALUE_LIST) {
        snprintf(err, errlen, "%s: expected a list, got %s", CONSTRAINTS_FIELD,
                 values_type_name(host->value_type(cons)));
        goto fail;
    } else if (cfg->dhard.n + cfg->dsoft.n > 0) {
        selector *sel;

        if (default_selector(self, obj, p->labels.n > 0, &sel) < 0 ||
            (sel &&
             (spread_with_selector(&cfg->dhard, sel, &cfg->ids, &p->labels, &sp.hard) < 0 ||
              spread_with_selector(&cfg->dsoft, sel, &cfg->ids, &p->labels, &sp.soft) < 0))) {
            selector_free(sel);
            snprintf(err, errlen, "default constraints: out of memory");
            goto fail;
        }
        sp.defaulted = sel != NULL;
        selector_free(sel);
    }
    if (sp.hard.n + sp.soft.n == 0) { /* the plugin sits the Pod out */
        spec_clear(&sp);
        *data = p;
        return 0;
    }
    if (sp.hard.n + sp.soft.n > MAX_CONSTRAINTS) {
        snprintf(err, errlen, "%s: more than %d constraints", CONSTRAINTS_FIELD, MAX_CONSTRAINTS);
        goto fail;
    }
    if (make_sig(&sp) < 0 || !(p->spec = malloc(sizeof(*p->spec)))) {
        snprintf(err, errlen, "%s: out of memory", CONSTRAINTS_FIELD);
        goto fail;
    }
    if (any_honors(&sp, 0) && read_affinity(cfg, obj, &sp, err, errlen) < 0)
        goto fail;
    if (any_honors(&sp, 1) &&
        taints_parse_tolerations(host, host->object_get(obj, "spec.tolerations"),
                                 "spec.tolerations", TAINT_SEMANTICS_KUBERNETES, &sp.tolerations,
                                 err, errlen) < 0)
        goto fail;
    *p->spec = sp;
    *data = p;
    return 0;
fail:
    spec_clear(&sp);
    release(self, p);
    return -1;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    prepared *p = calloc(1, sizeof(*p));
    char terr[256];

    *data = NULL;
    if (!p ||
        label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->ids, &p->labels) < 0 ||
        (p->id = intern_id(&cfg->ids, host->object_name(obj))) < 0) {
        release(self, p);
        snprintf(err, errlen, "metadata.labels: out of memory");
        return -1;
    }
    p->node = 1;
    p->obj = obj;
    /* taint-toleration reports a malformed taint; here such a Node is
     * only left out where taints are honored */
    if (taints_parse_taints(host, host->object_get(obj, "spec.taints"), "spec.taints",
                            TAINT_NO_SCHEDULE, &p->taints, terr, sizeof(terr)) < 0)
        p->bad_taints = 1;
    *data = p;
    return 0;
}

/* ---- per-domain counters ------------------------------------------------ */

/* Counts by value id, open addressing, in the cycle's arena. */
typedef struct dmap {
    int32_t *keys; /* value id + 1; 0: empty slot */
    int64_t *vals;
    uint32_t cap, n;
} dmap;

static uint32_t dmap_hash(int32_t key, uint32_t cap)
{
    return ((uint32_t)key * 2654435761u) & (cap - 1);
}

static int dmap_init(trellis_cycle *c, dmap *m, uint32_t cap)
{
    m->keys = host->cycle_alloc(c, cap * sizeof(*m->keys));
    m->vals = host->cycle_alloc(c, cap * sizeof(*m->vals));
    m->cap = cap;
    m->n = 0;
    return m->keys && m->vals ? 0 : -1;
}

static int64_t *dmap_find(const dmap *m, int32_t key)
{
    if (!m->cap)
        return NULL;
    for (uint32_t i = dmap_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key + 1)
            return &m->vals[i];
        if (!m->keys[i])
            return NULL;
    }
}

/* The counter of key, added (0) when new; NULL when out of memory. */
static int64_t *dmap_slot(trellis_cycle *c, dmap *m, int32_t key)
{
    int64_t *v = dmap_find(m, key);
    uint32_t i;

    if (v)
        return v;
    if ((m->n + 1) * 2 > m->cap) {
        dmap old = *m;

        if (dmap_init(c, m, old.cap ? old.cap * 2 : 16) < 0)
            return NULL;
        for (uint32_t j = 0; j < old.cap; j++) {
            if (old.keys[j])
                *dmap_slot(c, m, old.keys[j] - 1) = old.vals[j];
        }
    }
    for (i = dmap_hash(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
        ;
    m->keys[i] = key + 1;
    m->n++;
    return &m->vals[i];
}

/* ---- the cycle ---------------------------------------------------------- */

enum { PASS = 0, SKEW, MISSING };

typedef struct cstate {
    const podspec *wp;
    size_t nt, nh, ns; /* targets, hard and soft constraints */
    int32_t *cnt;      /* [k * nt + i]: matching Pods on target i, hard k then soft */
    dmap *hard;        /* per hard constraint: eligible domain -> count */
    int64_t *min;      /* per hard constraint: the global minimum (minDomains applied) */
    uint8_t *code;     /* per target: the filter's verdict */
    int32_t *hval;     /* [k * nt + i]: target i's value of hard key k, -1 when absent */
    /* pre_score */
    int scored, require_all;
    dmap *soft;     /* per soft constraint (not hostname): domain -> count */
    double *weight; /* per soft constraint: log(domains + 2) */
} cstate;

static const spread_constraint *con(const cstate *s, size_t k)
{
    return k < s->nh ? &s->wp->hard.v[k] : &s->wp->soft.v[k - s->nh];
}

static int has_keys(const spread_list *l, const prepared *np)
{
    for (size_t i = 0; i < l->n; i++) {
        if (label_set_get(&np->labels, l->v[i].key) < 0)
            return 0;
    }
    return 1;
}

static const char *node_label(const void *ud, const char *key)
{
    return host->object_label(ud, key);
}

/* kube's matchNodeInclusionPolicies for constraint c on Node np. */
static int included(const podspec *wp, const spread_constraint *c, const prepared *np)
{
    if (c->honor_affinity) {
        ns_node n = {&np->labels, np->id, node_label, np->obj};

        if (wp->has_selector && selector_ids_first_mismatch(&wp->selector, &np->labels) >= 0)
            return 0;
        if (wp->required && !ns_matches(wp->required, &n))
            return 0;
    }
    if (c->honor_taints) {
        if (np->bad_taints)
            return 0;
        for (size_t i = 0; np->taints && i < np->taints->n; i++) {
            const taint_item *t = &np->taints->items[i];

            if ((t->effect == TAINT_NO_SCHEDULE || t->effect == TAINT_NO_EXECUTE) &&
                !taints_tolerated(t, wp->tolerations, TAINT_SEMANTICS_KUBERNETES))
                return 0;
        }
    }
    return 1;
}

/* The matching Pods of wp's namespace on target t for each constraint,
 * added to cnt[k * stride]. */
static void count_target(trellis_plugin *self, const cstate *s, const trellis_target *t,
                         int32_t *cnt, size_t stride)
{
    size_t n = host->target_workload_count(t), nc = s->nh + s->ns;

    for (size_t j = 0; j < n; j++) {
        const prepared *pd = host->object_data(self, host->target_workload(t, j));

        if (!pd || pd->node || !pd->counted || pd->id != s->wp->ns)
            continue;
        for (size_t k = 0; k < nc; k++)
            cnt[k * stride] += spread_counts(con(s, k), &pd->labels);
    }
}

/* The match counts of every Node into s->cnt: kept from an earlier cycle
 * of the same class of Pods for the Nodes whose counter sums did not
 * change, counted again (their Pods walked) for the others. */
static int counts(trellis_plugin *self, trellis_cycle *c, cstate *s)
{
    config *cfg = host->get_private(self);
    const int64_t *col[3];
    size_t nc = s->nh + s->ns, nt = s->nt;
    ccache *e = NULL;

    for (int k = 0; k < 3; k++)
        col[k] = host->cycle_target_counter(c, self, k);
    if (!col[0] || !col[1] || !col[2]) { /* no counters: walk every Node */
        for (size_t i = 0; i < nt; i++)
            count_target(self, s, host->cycle_target(c, i), &s->cnt[i], nt);
        return 0;
    }
    if (!cfg->cache && !(cfg->cache = calloc(NCACHE, sizeof(*cfg->cache))))
        return -1;
    for (size_t j = 0; j < cfg->ncache && !e; j++) {
        if (cfg->cache[j].nsig == s->wp->nsig &&
            memcmp(cfg->cache[j].sig, s->wp->sig, s->wp->nsig * sizeof(int32_t)) == 0)
            e = &cfg->cache[j];
    }
    if (!e) { /* a new class: an empty entry, or the least recently used */
        if (cfg->ncache < NCACHE) {
            e = &cfg->cache[cfg->ncache++];
        } else {
            e = &cfg->cache[0];
            for (size_t j = 1; j < NCACHE; j++)
                if (cfg->cache[j].used < e->used)
                    e = &cfg->cache[j];
        }
        free(e->sig);
        e->sig = malloc(s->wp->nsig * sizeof(int32_t));
        if (!e->sig) {
            e->nsig = 0;
            return -1;
        }
        memcpy(e->sig, s->wp->sig, s->wp->nsig * sizeof(int32_t));
        e->nsig = s->wp->nsig;
        e->nt = 0; /* sized below */
    }
    e->used = ++cfg->clock;
    if (e->nt != nt || e->nc != nc) {
        int64_t *key = realloc(e->key, 3 * (nt ? nt : 1) * sizeof(*key));
        int32_t *cnt = key ? realloc(e->cnt, nc * (nt ? nt : 1) * sizeof(*cnt)) : NULL;

        if (key)
            e->key = key;
        if (cnt)
            e->cnt = cnt;
        if (!key || !cnt) {
            e->nt = 0;
            return -1;
        }
        e->nt = nt;
        e->nc = nc;
        for (size_t i = 0; i < nt; i++)
            e->key[3 * i] = -1;
    }
    for (size_t i = 0; i < nt; i++) {
        int64_t *key = &e->key[3 * i];

        if (key[0] == col[0][i] && key[1] == col[1][i] && key[2] == col[2][i])
            continue;
        for (size_t k = 0; k < nc; k++)
            e->cnt[k * nt + i] = 0;
        count_target(self, s, host->cycle_target(c, i), &e->cnt[i], nt);
        key[0] = col[0][i];
        key[1] = col[1][i];
        key[2] = col[2][i];
    }
    memcpy(s->cnt, e->cnt, nc * nt * sizeof(*s->cnt));
    return 0;
}

/* The filter's verdict on Node np (NULL: no labels). */
static int verdict(const cstate *s, const prepared *np)
{
    static const label_set none = {NULL, 0};
    const label_set *l = np ? &np->labels : &none;

    for (size_t k = 0; k < s->nh; k++) {
        const spread_constraint *c = &s->wp->hard.v[k];
        int32_t v = label_set_get(l, c->key);
        const int64_t *n;

        if (v < 0)
            return MISSING;
        n = dmap_find(&s->hard[k], v);
        if ((n ? *n : 0) + c->self_match - s->min[k] > c->max_skew)
            return SKEW;
    }
    return PASS;
}

/* verdict() on target i, from the values of the hard keys read once. */
static int verdict_at(const cstate *s, size_t i)
{
    for (size_t k = 0; k < s->nh; k++) {
        const spread_constraint *c = &s->wp->hard.v[k];
        int32_t v = s->hval[k * s->nt + i];
        const int64_t *n;

        if (v < 0)
            return MISSING;
        n = dmap_find(&s->hard[k], v);
        if ((n ? *n : 0) + c->self_match - s->min[k] > c->max_skew)
            return SKEW;
    }
    return PASS;
}

/* The counts of the cycle (kube's calPreFilterState, for every
 * constraint at once), built on the first call and kept in the cycle. */
static cstate *state(trellis_plugin *self, trellis_cycle *c, const podspec *wp)
{
    cstate *s = host->cycle_get(c, self);
    void *const *tdata;

    if (s)
        return s;
    s = host->cycle_alloc(c, sizeof(*s));
    if (!s)
        return NULL;
    s->wp = wp;
    s->nt = host->cycle_target_count(c);
    s->nh = wp->hard.n;
    s->ns = wp->soft.n;
    tdata = host->cycle_target_data(c, self);
    s->cnt = host->cycle_alloc(c, (s->nh + s->ns) * (s->nt ? s->nt : 1) * sizeof(*s->cnt));
    s->hard = host->cycle_alloc(c, (s->nh + 1) * sizeof(*s->hard));
    s->min = host->cycle_alloc(c, (s->nh + 1) * sizeof(*s->min));
    s->code = host->cycle_alloc(c, s->nt + 1);
    s->hval = host->cycle_alloc(c, (s->nh * s->nt + 1) * sizeof(*s->hval));
    if (!s->cnt || !s->hard || !s->min || !s->code || !s->hval)
        return NULL;
    if (counts(self, c, s) < 0)
        return NULL;
    for (size_t i = 0; s->nh && i < s->nt; i++) {
        const prepared *np = tdata ? tdata[i] : NULL;
        int all = np != NULL;

        for (size_t k = 0; k < s->nh; k++) {
            int32_t v = np ? label_set_get(&np->labels, wp->hard.v[k].key) : -1;

            s->hval[k * s->nt + i] = v;
            all &= v >= 0;
        }
        if (!all)
            continue;
        for (size_t k = 0; k < s->nh; k++) {
            int64_t *slot;

            if (!included(wp, &wp->hard.v[k], np))
                continue;
            slot = dmap_slot(c, &s->hard[k], s->hval[k * s->nt + i]);
            if (!slot)
                return NULL;
            *slot += s->cnt[k * s->nt + i];
        }
    }
    for (size_t k = 0; k < s->nh; k++) {
        const dmap *m = &s->hard[k];
        int64_t lo = INT64_MAX;

        for (uint32_t j = 0; j < m->cap; j++) {
            if (m->keys[j] && m->vals[j] < lo)
                lo = m->vals[j];
        }
        s->min[k] = m->n < (uint32_t)wp->hard.v[k].min_domains ? 0 : lo;
    }
    for (size_t i = 0; s->nh && i < s->nt; i++)
        s->code[i] = (uint8_t)verdict_at(s, i);
    host->cycle_set(c, self, s);
    return s;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const prepared *pp = host->object_data(self, workload);
    const podspec *wp = pp ? pp->spec : NULL;

    if (!wp || wp->hard.n == 0)
        return TRELLIS_SKIP;
    if (!state(self, c, wp))
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", "counting the domains");
    return TRELLIS_SUCCESS;
}

static int say(trellis_status *st, int code)
{
    if (code == MISSING)
        return host->status(st, TRELLIS_UNRESOLVABLE, "PodTopologySpreadMissingLabel",
                            MISMATCH " (missing required label)");
    if (code == SKEW)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "PodTopologySpreadMismatch", MISMATCH);
    return TRELLIS_SUCCESS;
}

/* The Pods of `from` that `other` lacks matching constraint k, as
 * count_target counts them. */
static int64_t matches_missing(trellis_plugin *self, const cstate *s, size_t k,
                               const trellis_target *from, const trellis_target *other)
{
    size_t n = host->target_workload_count(from);
    int64_t d = 0;

    for (size_t j = 0; j < n; j++) {
        const trellis_object *w = host->target_workload(from, j);
        const prepared *pd = host->object_data(self, w);

        if (!pd || pd->node || !pd->counted || pd->id != s->wp->ns ||
            trellis_target_holds(host, other, w))
            continue;
        d += spread_counts(con(s, k), &pd->labels);
    }
    return d;
}

/* verdict() on now, a copy of the cycle's Node orig with Pods added (the
 * ones nominated to it) or taken away (a preemption's trial): kube's
 * AddPod and RemovePod change the count of the Node's domain, and with
 * it the global minimum, when the Node is one the constraint counts. */
static int verdict_changed(trellis_plugin *self, const cstate *s, const prepared *np,
                           const trellis_target *orig, const trellis_target *now)
{
    int code = verdict(s, np);

    if (code == MISSING || !np)
        return code;
    for (size_t k = 0; k < s->nh; k++) {
        const spread_constraint *c = &s->wp->hard.v[k];
        int32_t v = label_set_get(&np->labels, c->key);
        const int64_t *n = dmap_find(&s->hard[k], v);
        const dmap *m = &s->hard[k];
        int64_t d, cnt, lo = INT64_MAX;

        if (!included(s->wp, c, np) || !n) {
            if ((n ? *n : 0) + c->self_match - s->min[k] > c->max_skew)
                return SKEW;
            continue;
        }
        d = matches_missing(self, s, k, now, orig) - matches_missing(self, s, k, orig, now);
        cnt = *n + d;
        for (uint32_t j = 0; j < m->cap; j++) {
            if (m->keys[j])
                lo = m->keys[j] == v + 1 ? (cnt < lo ? cnt : lo)
                                         : (m->vals[j] < lo ? m->vals[j] : lo);
        }
        if (m->n < (uint32_t)c->min_domains)
            lo = 0;
        if (cnt + c->self_match - lo > c->max_skew)
            return SKEW;
    }
    return PASS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const cstate *s = host->cycle_get(c, self);
    const prepared *np;
    const trellis_target *orig;

    (void)workload;
    if (!s || s->nh == 0)
        return TRELLIS_SUCCESS;
    np = host->object_data(self, host->target_object(target));
    orig = trellis_cycle_own_target(host, c, target);
    if (orig && orig != target)
        return say(st, verdict_changed(self, s, np, orig, target));
    return say(st, verdict(s, np));
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const cstate *s = host->cycle_get(c, self);

    (void)workload;
    if (!s || s->nh == 0)
        return;
    for (size_t j = 0; j < n; j++) {
        if (s->code[first + j] != PASS)
            pass[j / 64] &= ~(UINT64_C(1) << (j % 64));
    }
}

/* The domain of Node np for soft constraint c: its value, or "" when it
 * lacks the key (only looked at when the system defaults apply). */
static int32_t domain(const config *cfg, const spread_constraint *c, const prepared *np)
{
    int32_t v = label_set_get(&np->labels, c->key);

    return v < 0 ? cfg->empty : v;
}

/* kube's initPreScoreState and PreScore. */
static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *pp = host->object_data(self, workload);
    const podspec *wp = pp ? pp->spec : NULL;
    void *const *tdata;
    size_t ignored = 0;
    cstate *s;

    if (!wp || wp->soft.n == 0 || host->cycle_target_count(c) == 0)
        return TRELLIS_SKIP;
    if (!(s = state(self, c, wp)))
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", "counting the domains");
    s->require_all = !(wp->defaulted && cfg->system);
    s->soft = host->cycle_alloc(c, s->ns * sizeof(*s->soft));
    s->weight = host->cycle_alloc(c, s->ns * sizeof(*s->weight));
    if (!s->soft || !s->weight)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", "counting the domains");
    for (size_t j = 0; j < n; j++) {
        const prepared *np = host->object_data(self, host->target_object(feasible[j]));

        if (!np || (s->require_all && !has_keys(&wp->soft, np))) {
            ignored++;
            continue;
        }
        for (size_t k = 0; k < s->ns; k++) {
            if (wp->soft.v[k].key != cfg->hostname &&
                !dmap_slot(c, &s->soft[k], domain(cfg, &wp->soft.v[k], np)))
                return host->status(st, TRELLIS_ERROR, "OutOfMemory", "counting the domains");
        }
    }
    for (size_t k = 0; k < s->ns; k++) {
        size_t size = wp->soft.v[k].key == cfg->hostname ? n - ignored : s->soft[k].n;

        s->weight[k] = log((double)size + 2);
    }
    tdata = host->cycle_target_data(c, self);
    for (size_t i = 0; i < s->nt; i++) {
        const prepared *np = tdata ? tdata[i] : NULL;

        if (!np || (s->require_all && !has_keys(&wp->soft, np)))
            continue;
        for (size_t k = 0; k < s->ns; k++) {
            const spread_constraint *sc = &wp->soft.v[k];
            int64_t *slot;

            if (sc->key == cfg->hostname || !included(wp, sc, np))
                continue;
            if ((slot = dmap_find(&s->soft[k], domain(cfg, sc, np))))
                *slot += s->cnt[(s->nh + k) * s->nt + i];
        }
    }
    s->scored = 1;
    return TRELLIS_SUCCESS;
}

/* kube's Score on Node np; own[k] is the count of soft constraint k on
 * the Node itself (its hostname constraints). -1: not scored (a key is
 * missing), what normalize turns into 0. */
static int64_t node_score(const config *cfg, const cstate *s, const prepared *np,
                          const int32_t *own, size_t stride)
{
    double sum = 0;

    if (!np || (s->require_all && !has_keys(&s->wp->soft, np)))
        return -1;
    for (size_t k = 0; k < s->ns; k++) {
        const spread_constraint *c = &s->wp->soft.v[k];
        int32_t v = label_set_get(&np->labels, c->key);
        int64_t cnt;

        if (v < 0)
            continue;
        if (c->key == cfg->hostname) {
            cnt = own[k * stride];
        } else {
            const int64_t *d = dmap_find(&s->soft[k], v);

            cnt = d ? *d : 0;
        }
        sum += (double)cnt * s->weight[k] + (double)(c->max_skew - 1);
    }
    return (int64_t)round(sum);
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const cstate *s = host->cycle_get(c, self);
    int32_t own[MAX_CONSTRAINTS] = {0};
    cstate one;

    (void)workload;
    (void)st;
    *out = 0;
    if (!s || !s->scored)
        return TRELLIS_SUCCESS;
    one = *s; /* count the Node's own Pods, soft constraints at own[k] */
    count_target(self, &one, target, own, 1);
    *out = node_score(cfg, s, host->object_data(self, host->target_object(target)), own + s->nh, 1);
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const cstate *s = host->cycle_get(c, self);
    void *const *tdata = host->cycle_target_data(c, self);

    (void)workload;
    for (size_t j = 0; j < n; j++) {
        scores[j] = !s || !s->scored ? 0
                                     : node_score(cfg, s, tdata ? tdata[idx[j]] : NULL,
                                                  s->cnt + s->nh * s->nt + idx[j], s->nt);
    }
}

/* kube's NormalizeScore: Nodes not scored get 0, the others
 * 100 * (max + min - score) / max, or 100 when max is 0. */
static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    int64_t lo = INT64_MAX, hi = 0;

    (void)self;
    (void)c;
    (void)workload;
    (void)targets;
    (void)st;
    for (size_t i = 0; i < n; i++) {
        if (scores[i] < 0)
            continue;
        if (scores[i] < lo)
            lo = scores[i];
        if (scores[i] > hi)
            hi = scores[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (scores[i] < 0)
            scores[i] = 0;
        else if (hi == 0)
            scores[i] = TRELLIS_MAX_SCORE;
        else
            scores[i] = TRELLIS_MAX_SCORE * (hi + lo - scores[i]) / hi;
    }
    return TRELLIS_SUCCESS;
}

/* A Pod without constraints (its own or defaults) gets nothing from this
 * plugin: such Pods are equivalent. Any other depends on the other Nodes'
 * Pods, which the equivalence cache cannot see. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *pa = host->object_data(self, a), *pb = host->object_data(self, b);

    return pa && pb && !pa->spec && !pb->spec;
}

/* ---- init --------------------------------------------------------------- */

static int read_config(config *cfg, const trellis_value *doc, char *err, size_t errlen)
{
    const trellis_value *type, *list;
    const char *t = "System";

    if (doc && host->value_type(doc) != TRELLIS_VALUE_NULL &&
        host->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "config: expected a map {defaultingType, defaultConstraints}, got %s",
                 values_type_name(host->value_type(doc)));
        return -1;
    }
    type = doc ? host->value_get(doc, "defaultingType") : NULL;
    list = doc ? host->value_get(doc, "defaultConstraints") : NULL;
    if (doc && host->value_type(doc) == TRELLIS_VALUE_MAP &&
        host->value_len(doc) > (size_t)(type != NULL) + (list != NULL)) {
        snprintf(err, errlen,
                 "config: only defaultingType and defaultConstraints are supported "
                 "(PodTopologySpreadArgs)");
        return -1;
    }
    if (type && host->value_type(type) != TRELLIS_VALUE_NULL) {
        t = values_scalar_text(host, type);
        if (!t || (strcmp(t, "System") && strcmp(t, "List"))) {
            snprintf(err, errlen, "config.defaultingType: expected System or List, got %s%s%s",
                     t ? "'" : "", t ? t : values_type_name(host->value_type(type)), t ? "'" : "");
            return -1;
        }
    }
    cfg->system = strcmp(t, "System") == 0;
    if (spread_parse_defaults(host, list, "config.defaultConstraints", &cfg->ids, &cfg->dhard,
                              &cfg->dsoft, err, errlen) < 0)
        return -1;
    if (cfg->system && cfg->dhard.n + cfg->dsoft.n > 0) {
        snprintf(err, errlen,
                 "config.defaultConstraints: must be empty when defaultingType is System (the "
                 "system defaults apply); set defaultingType: List");
        return -1;
    }
    if (cfg->system && spread_system_defaults(&cfg->ids, &cfg->dhard, &cfg->dsoft) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    static const char *const kinds[] = {"Service", "ReplicationController", "ReplicaSet",
                                        "StatefulSet", NULL};
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, config_free);
    cfg->hostname = intern_id(&cfg->ids, "kubernetes.io/hostname");
    cfg->empty = intern_id(&cfg->ids, "");
    if (cfg->hostname < 0 || cfg->empty < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (read_config(cfg, h->arg_document(args, "config"), err, errlen) < 0)
        return -1;
    if (cfg->dhard.n + cfg->dsoft.n > 0 && h->declare_kinds(self, kinds) < 0) {
        snprintf(err, errlen, "cannot declare the kinds it reads");
        return -1;
    }
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->declare_counters(self, 3, amounts) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_span(self, score_span) < 0 ||
        h->register_normalize(self, normalize) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    /* a Pod placed anywhere, a Node's labels or taints: any change may
     * move a domain's count or the global minimum */
    return trellis_hints_register(h, self, TRELLIS_EV_ALL, NULL, err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "pod-topology-spread",
    "1.0.0",
    "kube-scheduler's PodTopologySpread: topology spread constraints (maxSkew, minDomains, node "
    "inclusion policies, matchLabelKeys) filter and score, and the default constraints",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, pod_topology_spread)
