/*
 * fleet_binder.c - the fleet-binder plugin: a ClusterResourceBinding as
 * KubeFleet's scheduler writes one.
 *
 * The host creates the binding object (binding model "object": the
 * placement's label, spec.targetCluster, spec.state Scheduled, the
 * scheduler's cleanup finalizer) or places an Unscheduled one again; this
 * binder adds, in the same write (store_bind_edits), what KubeFleet
 * records with every placement: spec.schedulingPolicySnapshotName, the
 * policy snapshot it was made under, and spec.clusterDecision:
 *
 *   clusterName, selected: true,
 *   clusterScore: {affinityScore, priorityScore} (the topology spread
 *     score; both 0 for PickAll, whose clusters are not scored; null for
 *     PickFixed),
 *   reason: Successfully scheduled resources for placement in "<cluster>"
 *     (affinity score: A, topology spread score: T): picked by scheduling
 *     policy (without the scores for PickFixed).
 *
 * A binding of an older snapshot picked again (fleet-policy put it to the
 * vote) gets the same two fields and keeps its state. The scores are the
 * ones the cycle ranked with (cycle_score of the plugins named by the
 * arguments affinity and spread), taken in reserve on the scheduling
 * thread and written by bind on the binding thread.
 *
 * decided: the policy snapshot's status as KubeFleet writes it once a
 * placement's cycle is over (not while it takes one cluster per cycle):
 * status.clusterDecisions (every selected cluster: the new ones, those
 * kept from an older snapshot, the Scheduled ones, then the Bound ones,
 * each with its cluster decision; then at most 20 unselected: clusters
 * that did not score high enough, the best first, then clusters filtered
 * out, by name, with KubeFleet's "ClusterUnschedulable, <reason>"; PickFixed:
 * the named clusters found, those not eligible and those not found),
 * status.observedCRPGeneration (the snapshot's CRP-generation annotation;
 * without a valid one nothing is written, as KubeFleet writes nothing)
 * and the Scheduled condition (SchedulingPolicyFulfilled when it holds as
 * many clusters as wanted, else SchedulingPolicyUnfulfilled). Nothing is
 * written when all three are as they were, so a status write that makes
 * the placement be looked at again ends there.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"
#include "fleet.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
    const char *affinity;      /* the score plugins, by name in the profile */
    const char *spread;
} config;

/* The scores of the clusters reserved in this cycle. */
typedef struct picked {
    const char *key; /* copied: the binding thread reads it */
    int64_t affinity, spread;
    struct picked *next;
} picked;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"affinity", TRELLIS_ARG_STRING, "fleet-affinity",
     "the score plugin whose score is the affinity score"},
    {"spread", TRELLIS_ARG_STRING, "fleet-topology-spread",
     "the score plugin whose score is the topology spread score"},
    {NULL, 0, NULL, NULL},
};

static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)w;
    const config *cfg = host->get_private(self);
    const char *key = host->target_key(t);
    size_t kl = strlen(key) + 1;
    picked *x = host->cycle_alloc(c, sizeof *x + kl);
    if (!x) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for a cluster decision");
        return TRELLIS_ERROR;
    }
    x->key = memcpy((char *)(x + 1), key, kl);
    /* not scored (PickAll, one feasible cluster, a plugin that sat the
     * cycle out): 0, as KubeFleet's empty ClusterScore */
    if (host->cycle_score(c, cfg->affinity, t, &x->affinity) < 0)
        x->affinity = 0;
    if (host->cycle_score(c, cfg->spread, t, &x->spread) < 0)
        x->spread = 0;
    x->next = host->cycle_get(c, self);
    host->cycle_set(c, self, x);
    return TRELLIS_SUCCESS;
}

/* A growing string; out of memory leaves failed set. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Room on b for more bytes and a NUL. 0, or -1 (failed set). */
static int room(sbuf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->s && b->len + more < b->cap)
        return 0;
    size_t cap = (b->cap + more + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

static void put(sbuf *b, const char *fmt, ...)
{
    if (!strchr(fmt, '%')) { /* most are plain text */
        size_t n = strlen(fmt);
        if (room(b, n) == 0) {
            memcpy(b->s + b->len, fmt, n + 1);
            b->len += n;
        }
        return;
    }
    for (int tries = 0; tries < 2 && !b->failed; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        room(b, (size_t)n);
    }
}

/* A JSON string of text (quoted, escaped) onto b: room for the worst
 * case (six bytes a character) made once, then copied. */
static void put_string(sbuf *b, const char *text)
{
    const unsigned char *q = (const unsigned char *)(text ? text : "");
    if (room(b, 6 * strlen((const char *)q) + 2) < 0) /* the quotes too */
        return;
    char *o = b->s + b->len;
    *o++ = '"';
    for (; *q; q++) {
        if (*q == '"' || *q == '\\') {
            *o++ = '\\';
            *o++ = (char)*q;
        } else if (*q < 0x20) {
            o += snprintf(o, 7, "\\u%04x", *q);
        } else {
            *o++ = (char)*q;
        }
    }
    *o++ = '"';
    *o = '\0';
    b->len = (size_t)(o - b->s);
}

/* text onto o, stopping at end; where it ended. */
static char *cat(char *o, const char *end, const char *text)
{
    while (*text && o < end)
        *o++ = *text++;
    return o;
}

/* v in decimal onto o, stopping at end; where it ended. */
static char *cat_int(char *o, const char *end, int64_t v)
{
    char t[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        t[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0 && o < end)
        *o++ = '-';
    while (n && o < end)
        *o++ = t[--n];
    return o;
}

/* v in decimal onto b. */
static void put_int(sbuf *b, int64_t v)
{
    if (room(b, 24) == 0) {
        char *o = cat_int(b->s + b->len, b->s + b->cap - 1, v);
        *o = '\0';
        b->len = (size_t)(o - b->s);
    }
}

/* The reason KubeFleet gives a selected cluster: with the scores it was
 * ranked by, or (PickFixed, scores NULL) without; cut to len like
 * snprintf (written out: it is made for every binding). */
static void success_reason(char *buf, size_t len, const char *name, const int64_t *scores)
{
    char *o = buf, *end = buf + len - 1;
    o = cat(o, end, "Successfully scheduled resources for placement in \"");
    o = cat(o, end, name);
    if (scores) {
        o = cat(o, end, "\" (affinity score: ");
        o = cat_int(o, end, scores[0]);
        o = cat(o, end, ", topology spread score: ");
        o = cat_int(o, end, scores[1]);
        o = cat(o, end, "): picked by scheduling policy");
    } else {
        o = cat(o, end, "\": picked by scheduling policy");
    }
    *o = '\0';
}

/* A ClusterDecision in KubeFleet's JSON (field order as its Go type):
 * scores[0] the affinity score, scores[1] the topology spread score
 * (its JSON `priorityScore`), NULL for a null clusterScore. */
static void put_decision(sbuf *b, const char *name, int selected, const int64_t *scores,
                         const char *reason)
{
    put(b, "{\"clusterName\":");
    put_string(b, name);
    put(b, selected ? ",\"selected\":true,\"clusterScore\":"
                    : ",\"selected\":false,\"clusterScore\":");
    if (scores) {
        put(b, "{\"affinityScore\":");
        put_int(b, scores[0]);
        put(b, ",\"priorityScore\":");
        put_int(b, scores[1]);
        put(b, "}");
    } else {
        put(b, "null");
    }
    put(b, ",\"reason\":");
    put_string(b, reason ? reason : "");
    put(b, "}");
}

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                const trellis_target *t, trellis_status *st)
{
    const fleet_policy *p = host->object_data(self, w);
    const char *name = host->target_key(t);
    const picked *x = host->cycle_get(c, self);
    while (x && strcmp(x->key, name) != 0)
        x = x->next;
    /* not reserved in a cycle that scored: KubeFleet's zero scores */
    int64_t scores[2] = {x ? x->affinity : 0, x ? x->spread : 0};
    const int64_t *sc = p && p->type == FLEET_PICK_FIXED ? NULL : scores;
    char reason[1024], err[TRELLIS_MESSAGE_MAX];
    success_reason(reason, sizeof reason, name, sc);
    sbuf d = {malloc(512), 0, 512, 0}; /* a decision's size: one allocation */
    d.failed = !d.s;
    put_decision(&d, name, 1, sc, reason);
    trellis_edit e[2];
    size_t n = 0;
    if (p && p->snapshot)
        e[n++] = (trellis_edit){TRELLIS_EDIT_SET, "spec.schedulingPolicySnapshotName", p->snapshot};
    e[n++] = (trellis_edit){TRELLIS_EDIT_SET_JSON, "spec.clusterDecision", d.s};
    int rc = d.failed ? (snprintf(err, sizeof err, "out of memory"), -1)
                      : host->store_bind_edits(self, w, t, e, n, err, sizeof err);
    free(d.s);
    if (rc < 0) {
        host->status(st, TRELLIS_ERROR, "BindFailed", "%s",
                     err[0] ? err : "the store refused the change");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

/* ---- the policy snapshot's status ---- */

#define MAX_UNSELECTED 20
#define GENERATION_ANNOTATION "kubernetes-fleet.io/CRP-generation"

static const char *str_at(const trellis_value *v, const char *key)
{
    const trellis_value *x = v ? host->value_get(v, key) : NULL;
    return x ? host->value_string(x) : NULL;
}

/* ms since the epoch as RFC 3339 in UTC, to the second, into buf (the
 * days to a civil date: Howard Hinnant's algorithm). */
static void rfc3339(int64_t ms, char *buf, size_t len)
{
    int64_t secs = ms / 1000 - (ms % 1000 < 0), days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (m <= 2);
    snprintf(buf, len,
             "%04" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02" PRId64 ":%02" PRId64 ":%02" PRId64 "Z",
             y, m, d, rem / 3600, rem / 60 % 60, rem % 60);
}

/* A decision as stored (a binding's spec.clusterDecision, a status
 * entry), in the canonical form, onto b; name when it names none. */
static void put_stored_decision(sbuf *b, const trellis_value *d, const char *name)
{
    int64_t sc[2];
    const trellis_value *sel = d ? host->value_get(d, "selected") : NULL;
    int selected = 1;
    if (sel)
        host->value_bool(sel, &selected);
    const char *n = str_at(d, "clusterName");
    put_decision(
        b, n ? n : name, selected,
        fleet_stored_scores(host, d ? host->value_get(d, "clusterScore") : NULL, sc) ? sc : NULL,
        str_at(d, "reason"));
}

/* The decision of this cycle's pick t onto b (what bind writes). */
static void put_picked_decision(sbuf *b, trellis_cycle *c, const config *cfg, const fleet_policy *p,
                                const char *name, const trellis_target *t)
{
    int64_t sc[2];
    if (host->cycle_score(c, cfg->affinity, t, &sc[0]) < 0)
        sc[0] = 0;
    if (host->cycle_score(c, cfg->spread, t, &sc[1]) < 0)
        sc[1] = 0;
    char reason[1024];
    const int64_t *scores = p->type == FLEET_PICK_FIXED ? NULL : sc;
    success_reason(reason, sizeof reason, name, scores);
    put_decision(b, name, 1, scores, reason);
}

/* A scored cluster that was not picked. */
typedef struct unpicked {
    const char *name;
    int64_t score[2]; /* affinity, topology spread */
} unpicked;

/* The ranking: topology spread, then affinity, then the larger name. */
static int by_rank(const void *pa, const void *pb)
{
    const unpicked *a = pa, *b = pb;
    if (a->score[1] != b->score[1])
        return a->score[1] > b->score[1] ? -1 : 1;
    if (a->score[0] != b->score[0])
        return a->score[0] > b->score[0] ? -1 : 1;
    return -strcmp(a->name, b->name);
}

/* Whether name is one of the cycle's picks. */
static const trellis_target *picked_as(trellis_cycle *c, const char *name)
{
    for (size_t i = 0; i < host->cycle_pick_count(c); i++)
        if (strcmp(host->target_key(host->cycle_pick(c, i)), name) == 0)
            return host->cycle_pick(c, i);
    return NULL;
}

/* Append the selected clusters' decisions to b ("," between): the new
 * picks, the held ones picked again, then the kept ones of state first
 * and then the other state. How many. */
static size_t put_selected(sbuf *b, trellis_cycle *c, const config *cfg, const fleet_policy *p,
                           const char *first_state)
{
    size_t n = 0, nh = host->cycle_held_count(c);
    for (int held_pass = 0; held_pass < 2; held_pass++) {
        for (size_t i = 0; i < host->cycle_pick_count(c); i++) {
            const trellis_target *t = host->cycle_pick(c, i);
            const char *name = host->target_key(t);
            int held = 0;
            for (size_t k = 0; k < nh && !held; k++)
                held = strcmp(host->cycle_held(c, k), name) == 0;
            if (held != held_pass)
                continue;
            put(b, n++ ? "," : "");
            put_picked_decision(b, c, cfg, p, name, t);
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nh; i++) {
            const char *name = host->cycle_held(c, i);
            const trellis_object *bo = host->cycle_held_object(c, i);
            if (!host->cycle_held_kept(c, i) || picked_as(c, name) || !bo)
                continue;
            const char *st = str_at(host->object_get(bo, "spec"), "state");
            int first = st && strcmp(st, first_state) == 0;
            if (first != (pass == 0))
                continue;
            put(b, n++ ? "," : "");
            put_stored_decision(b, host->object_get(bo, "spec.clusterDecision"), name);
        }
    }
    return n;
}

/* The unselected decisions of a PickN or PickAll (at most 20): the scored
 * clusters not picked, the best first (PickN), then those filtered out,
 * by name. */
static void put_unselected_all(sbuf *b, trellis_cycle *c, const config *cfg, const fleet_policy *p,
                               size_t *n)
{
    size_t nt = host->cycle_target_count(c), left = MAX_UNSELECTED, nu = 0, ns = 0;
    size_t np = host->cycle_pick_count(c), nh = host->cycle_held_count(c);
    unpicked *u = nt ? host->cycle_alloc(c, nt * sizeof *u) : NULL;
    /* the selected clusters, sorted: each target is looked up once */
    const char **sel = host->cycle_alloc(c, (np + nh + 1) * sizeof *sel);
    if (!u || !sel)
        return;
    for (size_t i = 0; i < np; i++)
        sel[ns++] = host->target_key(host->cycle_pick(c, i));
    for (size_t i = 0; i < nh; i++)
        if (host->cycle_held_kept(c, i))
            sel[ns++] = host->cycle_held(c, i);
    qsort(sel, ns, sizeof *sel, fleet_key_cmp);
    /* the verdicts alone (no filter runs again) for every target; the
     * reasons only for the few listed */
    for (size_t i = 0; i < nt; i++) {
        const trellis_target *t = host->cycle_target(c, i);
        const char *name = host->target_key(t);
        int64_t a, sp;
        if (p->type != FLEET_PICK_N || bsearch(&name, sel, ns, sizeof *sel, fleet_key_cmp) ||
            host->cycle_target_status(c, i, NULL) != TRELLIS_SUCCESS)
            continue;
        if (host->cycle_score(c, cfg->affinity, t, &a) < 0)
            a = 0;
        if (host->cycle_score(c, cfg->spread, t, &sp) < 0)
            sp = 0;
        u[nu++] = (unpicked){name, {a, sp}};
    }
    qsort(u, nu, sizeof *u, by_rank);
    char reason[TRELLIS_MESSAGE_MAX + 200];
    for (size_t i = 0; i < nu && left; i++, left--) {
        snprintf(reason, sizeof reason,
                 "Cluster \"%s\" does not score high enough (affinity score: %" PRId64
                 ", topology spread score: %" PRId64 ")",
                 u[i].name, u[i].score[0], u[i].score[1]);
        put(b, (*n)++ ? "," : "");
        put_decision(b, u[i].name, 0, u[i].score, reason);
    }
    trellis_status st;
    for (size_t i = 0; i < nt && left; i++) {
        const char *name = host->target_key(host->cycle_target(c, i));
        if (bsearch(&name, sel, ns, sizeof *sel, fleet_key_cmp) ||
            host->cycle_target_status(c, i, NULL) == TRELLIS_SUCCESS)
            continue;
        host->cycle_target_status(c, i, &st);
        snprintf(reason, sizeof reason, "ClusterUnschedulable, %s", st.message);
        put(b, (*n)++ ? "," : "");
        put_decision(b, name, 0, NULL, reason);
        left--;
    }
}

/* PickFixed's decisions: the named clusters found and feasible, those
 * not eligible, those not found; *ok how many were found. */
static size_t put_fixed(sbuf *b, trellis_cycle *c, const config *cfg, const fleet_policy *p,
                        size_t *ok)
{
    size_t n = put_selected(b, c, cfg, p, "Scheduled"), bad = 0;
    *ok = n;
    trellis_status st;
    char reason[TRELLIS_MESSAGE_MAX + 200];
    for (size_t k = 0; k < p->n_names; k++) {
        const char *name = p->names[k];
        size_t i = 0, nt = host->cycle_target_count(c);
        while (i < nt && strcmp(host->target_key(host->cycle_target(c, i)), name) != 0)
            i++;
        if (i == nt) {
            snprintf(reason, sizeof reason, "Specified cluster \"%s\" is not found", name);
        } else if (host->cycle_target_status(c, i, &st) != TRELLIS_SUCCESS &&
                   strcmp(st.reason, "Held") != 0) {
            snprintf(reason, sizeof reason,
                     "Cluster \"%s\" is not eligible for resource placement yet: %s", name,
                     st.message);
        } else {
            continue;
        }
        put(b, n++ ? "," : "");
        put_decision(b, name, 0, NULL, reason);
        bad++;
    }
    return bad;
}

/* Whether the stored list old holds new_json's decisions, in the same
 * order (each in the canonical form put_decision writes): KubeFleet
 * compares them by cluster; the order here is deterministic, so only a
 * list reordered by someone else is written once more. */
static int same_decisions(const trellis_value *old, const char *new_json)
{
    sbuf ob = {0};
    size_t n = old && host->value_type(old) == TRELLIS_VALUE_LIST ? host->value_len(old) : 0;
    put(&ob, "[");
    for (size_t i = 0; i < n; i++) {
        put(&ob, i ? "," : "");
        put_stored_decision(&ob, host->value_at(old, i), "");
    }
    put(&ob, "]");
    int same = !ob.failed && ob.s && strcmp(ob.s, new_json) == 0;
    free(ob.s);
    return same;
}

static void decided(trellis_plugin *self, trellis_cycle *c, const trellis_object *w, int again)
{
    const config *cfg = host->get_private(self);
    const fleet_policy *p = host->object_data(self, w);
    if (again || !p || !p->snapshot)
        return; /* not done yet; or no snapshot to write to */
    const trellis_object *snap =
        host->lookup_object(self, cfg->snapshot_kind, host->object_namespace(w), p->snapshot);
    if (!snap)
        return;
    /* what it holds after this cycle, and what it wants */
    size_t kept = 0, released = 0;
    for (size_t i = 0; i < host->cycle_held_count(c); i++) {
        int k = host->cycle_held_kept(c, i) && !picked_as(c, host->cycle_held(c, i));
        kept += (size_t)k;
        released += (size_t)!k && !picked_as(c, host->cycle_held(c, i));
    }
    size_t selected = kept + host->cycle_pick_count(c);
    sbuf b = {0};
    put(&b, "[");
    size_t n = 0, found = 0, missing = 0;
    int satisfied = p->type == FLEET_PICK_N && selected >= p->n && !host->cycle_pick_count(c);
    if (p->type == FLEET_PICK_FIXED) {
        missing = put_fixed(&b, c, cfg, p, &found);
    } else if (satisfied) {
        /* KubeFleet writes only what it knows: the selected clusters
         * (Scheduled first when it scaled down, else Bound first) */
        n = put_selected(&b, c, cfg, p, released ? "Scheduled" : "Bound");
    } else {
        n = put_selected(&b, c, cfg, p, "Scheduled");
        put_unselected_all(&b, c, cfg, p, &n);
    }
    put(&b, "]");
    /* the Scheduled condition */
    size_t want = p->type == FLEET_PICK_N       ? p->n
                  : p->type == FLEET_PICK_FIXED ? selected
                                                : selected;
    int fulfilled = p->type == FLEET_PICK_FIXED ? missing == 0 : selected >= want;
    char msg[256];
    if (fulfilled)
        snprintf(msg, sizeof msg,
                 "found all cluster needed as specified by the scheduling policy, found %zu "
                 "cluster(s)",
                 p->type == FLEET_PICK_FIXED ? found : selected);
    else
        snprintf(msg, sizeof msg,
                 "could not find all clusters needed as specified by the scheduling policy, found "
                 "%zu cluster(s) instead",
                 p->type == FLEET_PICK_FIXED ? found : selected);
    const char *reason = fulfilled ? "SchedulingPolicyFulfilled" : "SchedulingPolicyUnfulfilled";
    const char *status = fulfilled ? "True" : "False";
    int64_t gen = -1, obs = -1, snap_gen = 0;
    const char *ga = host->object_annotation(snap, GENERATION_ANNOTATION);
    if (!ga || fleet_atoi(ga, &gen) < 0 || gen < 0) {
        /* KubeFleet stops there too (an unexpected-behaviour error): the
         * placement controller writes the annotation with the snapshot */
        host->log(self, TRELLIS_LOG_WARN,
                  "%s %s: status not written: annotation %s: expected the placement's "
                  "generation (a non-negative integer), got %s%s%s",
                  cfg->snapshot_kind, p->snapshot, GENERATION_ANNOTATION, ga ? "\"" : "",
                  ga ? ga : "none", ga ? "\"" : "");
        free(b.s);
        return;
    }
    const trellis_value *st = host->object_get(snap, "status");
    const trellis_value *x = st ? host->value_get(st, "observedCRPGeneration") : NULL;
    if (x)
        host->value_int(x, &obs);
    x = host->object_get(snap, "metadata.generation");
    if (x)
        host->value_int(x, &snap_gen);
    /* the conditions: the Scheduled one replaced, the others kept */
    const trellis_value *conds = st ? host->value_get(st, "conditions") : NULL;
    size_t nc = conds && host->value_type(conds) == TRELLIS_VALUE_LIST ? host->value_len(conds) : 0;
    const trellis_value *old = NULL;
    for (size_t i = 0; i < nc && !old; i++) {
        const char *t = str_at(host->value_at(conds, i), "type");
        if (t && strcmp(t, "Scheduled") == 0)
            old = host->value_at(conds, i);
    }
    int64_t old_gen = -1;
    x = old ? host->value_get(old, "observedGeneration") : NULL;
    if (x)
        host->value_int(x, &old_gen);
    int same_cond = old && str_at(old, "status") && strcmp(str_at(old, "status"), status) == 0 &&
                    str_at(old, "reason") && strcmp(str_at(old, "reason"), reason) == 0 &&
                    str_at(old, "message") && strcmp(str_at(old, "message"), msg) == 0 &&
                    old_gen == snap_gen;
    if (!b.failed && same_cond && obs == gen &&
        same_decisions(st ? host->value_get(st, "clusterDecisions") : NULL, b.s)) {
        free(b.s);
        return; /* as it was: nothing to write */
    }
    /* lastTransitionTime moves when the status does (meta.SetStatusCondition) */
    char when[64];
    const char *was = old ? str_at(old, "lastTransitionTime") : NULL;
    if (was && strcmp(str_at(old, "status") ? str_at(old, "status") : "", status) == 0) {
        snprintf(when, sizeof when, "%s", was);
    } else {
        rfc3339(host->clock_now(self), when, sizeof when);
    }
    sbuf cb = {0};
    put(&cb, "[");
    size_t k = 0;
    for (size_t i = 0; i < nc; i++) {
        const trellis_value *cd = host->value_at(conds, i);
        if (cd == old)
            continue;
        int64_t og = 0;
        x = host->value_get(cd, "observedGeneration");
        if (x)
            host->value_int(x, &og);
        put(&cb, k++ ? ",{\"type\":" : "{\"type\":");
        put_string(&cb, str_at(cd, "type"));
        put(&cb, ",\"status\":");
        put_string(&cb, str_at(cd, "status"));
        put(&cb, ",\"observedGeneration\":%" PRId64 ",\"lastTransitionTime\":", og);
        put_string(&cb, str_at(cd, "lastTransitionTime"));
        put(&cb, ",\"reason\":");
        put_string(&cb, str_at(cd, "reason"));
        put(&cb, ",\"message\":");
        put_string(&cb, str_at(cd, "message"));
        put(&cb, "}");
    }
    put(&cb,
        "%s{\"type\":\"Scheduled\",\"status\":\"%s\",\"observedGeneration\":%" PRId64
        ",\"lastTransitionTime\":\"%s\",\"reason\":\"%s\",\"message\":",
        k ? "," : "", status, snap_gen, when, reason);
    put_string(&cb, msg);
    put(&cb, "}]");
    char gen_text[32];
    snprintf(gen_text, sizeof gen_text, "%" PRId64, gen);
    trellis_edit e[3] = {{TRELLIS_EDIT_SET_JSON, "status.clusterDecisions", b.s},
                         {TRELLIS_EDIT_SET_JSON, "status.observedCRPGeneration", gen_text},
                         {TRELLIS_EDIT_SET_JSON, "status.conditions", cb.s}};
    char err[TRELLIS_MESSAGE_MAX];
    if (b.failed || cb.failed)
        host->log(self, TRELLIS_LOG_ERROR, "%s: status not written: out of memory", p->snapshot);
    else if (host->store_patch(self, snap, "status", e, 3, err, sizeof err) < 0)
        host->log(self, TRELLIS_LOG_WARN, "%s %s: status not written: %s", cfg->snapshot_kind,
                  p->snapshot, err);
    free(b.s);
    free(cb.s);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->affinity = h->arg_string(args, "affinity");
    cfg->spread = h->arg_string(args, "spread");
    if (fleet_register_policy(h, self) < 0 || h->register_reserve(self, reserve) < 0 ||
        h->register_bind(self, bind) < 0 || h->register_decided(self, decided) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-binder",
    "1.0.0",
    "a ClusterResourceBinding as KubeFleet writes one: the policy snapshot and the cluster "
    "decision with its scores",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_binder)
