/*
 * fleet_topology_spread.c - the fleet-topology-spread plugin: KubeFleet's
 * TopologySpreadConstraints for PickN placements.
 *
 * A constraint names a topology key (a label of the member clusters), a
 * maxSkew (default 1) and whenUnsatisfiable (DoNotSchedule, the default,
 * or ScheduleAnyway). Every member cluster carrying the key is in the
 * domain its value names; a domain counts the clusters in it where the
 * placement has a Scheduled or Bound binding of its current policy
 * snapshot. Domains are counted over all member clusters, eligible or not
 * (KubeFleet lists them all), and a cluster without the key is in no
 * domain: placing there changes no skew.
 *
 * For each cluster, KubeFleet asks what one more binding there does to
 * the skew (largest count minus smallest): with every domain equal it
 * grows by one; in the only domain with the smallest count it shrinks by
 * one; in a domain with the largest count it grows by one; otherwise it
 * stays. The placement violates a constraint when the skew after it is
 * above maxSkew. A DoNotSchedule violation rejects the cluster (filter,
 * KubeFleet's message); a ScheduleAnyway one costs 1000; otherwise the
 * score gains minus the skew change (one shrink scores 1). The score is
 * the first of KubeFleet's score tuple (score_mode "tuple").
 *
 * While a placement's policy has a constraint, it gets one cluster per
 * cycle and another cycle at once until it holds what it wants
 * (KubeFleet's batch limit of one), so each pick is counted before the
 * next. The counts are made once per cycle in pre_filter; filter and
 * score read them by snapshot index.
 */
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
    const char *target_kind;
} config;

typedef struct constraint {
    char *key;
    int64_t max_skew;
    int do_not_schedule;
} constraint;

/* A placement's constraints (PickN only), read once per change. */
typedef struct spread {
    fleet_policy *policy;
    constraint *v;
    size_t n;
} spread;

/* This cycle's verdicts, by snapshot index. */
typedef struct verdicts {
    size_t n;
    int64_t *score;
    int16_t *violated; /* the DoNotSchedule constraint violated first, or -1 */
    const spread *sp;
} verdicts;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"target_kind", TRELLIS_ARG_STRING, "MemberCluster", "the kind of the member clusters"},
    {NULL, 0, NULL, NULL},
};

static void spread_free(spread *sp)
{
    if (!sp)
        return;
    for (size_t i = 0; i < sp->n; i++)
        free(sp->v[i].key);
    free(sp->v);
    fleet_policy_free(sp->policy);
    free(sp);
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    spread_free(data);
}

/* Constraint i of the list l into c: 0, or -1 with err naming the field. */
static int read_constraint(const trellis_value *l, size_t i, const char *where, constraint *c,
                           char *err, size_t errlen)
{
    const trellis_value *tc = host->value_at(l, i);
    const trellis_value *key = tc ? host->value_get(tc, "topologyKey") : NULL;
    const trellis_value *skew = tc ? host->value_get(tc, "maxSkew") : NULL;
    const trellis_value *when = tc ? host->value_get(tc, "whenUnsatisfiable") : NULL;
    const char *k = key ? host->value_string(key) : NULL;
    if (!tc || host->value_type(tc) != TRELLIS_VALUE_MAP || !k || !*k) {
        snprintf(err, errlen, "%s.topologySpreadConstraints[%zu].topologyKey: expected a label key",
                 where, i);
        return -1;
    }
    c->max_skew = 1;
    if (skew && host->value_type(skew) != TRELLIS_VALUE_NULL &&
        (host->value_int(skew, &c->max_skew) < 0 || c->max_skew < 1)) {
        snprintf(err, errlen,
                 "%s.topologySpreadConstraints[%zu].maxSkew: expected an integer of at least 1",
                 where, i);
        return -1;
    }
    const char *w = when ? host->value_string(when) : NULL;
    if (w && *w && strcmp(w, "DoNotSchedule") != 0 && strcmp(w, "ScheduleAnyway") != 0) {
        snprintf(err, errlen,
                 "%s.topologySpreadConstraints[%zu].whenUnsatisfiable: expected DoNotSchedule or "
                 "ScheduleAnyway, got \"%s\"",
                 where, i, w);
        return -1;
    }
    c->do_not_schedule = !w || strcmp(w, "ScheduleAnyway") != 0;
    c->key = values_strdup(k);
    if (!c->key) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    spread *sp = calloc(1, sizeof *sp);
    if (!sp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sp->policy = fleet_policy_load(host, self, obj, cfg->snapshot_kind, err, errlen);
    if (!sp->policy) {
        spread_free(sp);
        return -1;
    }
    const trellis_value *l = sp->policy->raw && sp->policy->type == FLEET_PICK_N
                                 ? host->value_get(sp->policy->raw, "topologySpreadConstraints")
                                 : NULL;
    size_t n = l && host->value_type(l) == TRELLIS_VALUE_LIST ? host->value_len(l) : 0;
    if (n > INT16_MAX) {
        snprintf(err, errlen, "%zu topology spread constraints: at most %d", n, INT16_MAX);
        spread_free(sp);
        return -1;
    }
    sp->v = n ? calloc(n, sizeof *sp->v) : NULL;
    if (n && !sp->v) {
        snprintf(err, errlen, "out of memory");
        spread_free(sp);
        return -1;
    }
    char where[300];
    fleet_policy_where(host, NULL, where, sizeof where);
    if (sp->policy->snapshot)
        snprintf(where, sizeof where, "%s %s: spec.policy", cfg->snapshot_kind,
                 sp->policy->snapshot);
    for (; sp->n < n; sp->n++) {
        if (read_constraint(l, sp->n, where, &sp->v[sp->n], err, errlen) < 0) {
            spread_free(sp);
            return -1;
        }
    }
    *data = sp;
    return 0;
}

/* A cluster's domain under one constraint, for counting. */
typedef struct member {
    const char *domain; /* the label's value, NULL: in no domain */
    uint32_t idx;       /* snapshot index */
    int placed;         /* a Scheduled or Bound binding of this snapshot */
} member;

static int by_domain(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    if (!a->domain || !b->domain)
        return (a->domain == NULL) - (b->domain == NULL);
    return strcmp(a->domain, b->domain);
}

/* KubeFleet's willViolate: does one more binding in a domain of count
 * `count` violate maxSkew, and by how much does the skew change. */
static int will_violate(int64_t count, int64_t smallest, int64_t second, int64_t largest,
                        int64_t max_skew, int64_t *change)
{
    int64_t skew = largest - smallest;
    if (largest == smallest) {
        *change = 1;
        return skew + 1 > max_skew;
    }
    if (count == smallest && smallest != second) {
        *change = -1;
        return skew - 1 > max_skew;
    }
    if (count == largest) {
        *change = 1;
        return skew + 1 > max_skew;
    }
    *change = 0;
    return skew > max_skew;
}

/* Count one constraint over every cluster and apply it to v. m has room
 * for every target; counts for every distinct domain. */
static void apply(trellis_cycle *c, const constraint *k, int16_t ki, member *m, int64_t *counts,
                  const char *const *current, size_t n_current, verdicts *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const trellis_target *t = host->cycle_target(c, i);
        const char *d = host->object_label(host->target_object(t), k->key);
        if (!d)
            continue;
        const char *key = host->target_key(t);
        m[n++] =
            (member){d, (uint32_t)i,
                     bsearch(&key, current, n_current, sizeof *current, fleet_key_cmp) != NULL};
    }
    qsort(m, n, sizeof *m, by_domain);
    /* the count of each domain, and the sorted counts' special values */
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(m[i].domain, m[i - 1].domain) != 0)
            counts[nd++] = 0;
        counts[nd - 1] += m[i].placed;
    }
    int64_t smallest = -1, second = -1, largest = -1;
    for (size_t i = 0; i < nd; i++) {
        if (largest < 0 || counts[i] > largest)
            largest = counts[i];
        if (smallest < 0 || counts[i] < smallest) {
            second = smallest;
            smallest = counts[i];
        } else if (second < 0 || counts[i] < second) {
            second = counts[i];
        }
    }
    if (nd == 1) /* KubeFleet: one count is all three */
        second = smallest;
    for (size_t i = 0, d = 0; i < n; i++) {
        if (i > 0 && strcmp(m[i].domain, m[i - 1].domain) != 0)
            d++;
        uint32_t x = m[i].idx;
        if (v->violated[x] >= 0)
            continue; /* out already: no score kept */
        int64_t change;
        int bad = will_violate(counts[d], smallest, second, largest, k->max_skew, &change);
        if (bad && k->do_not_schedule)
            v->violated[x] = ki;
        else if (bad)
            v->score[x] -= 1000;
        else
            v->score[x] -= change;
    }
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const spread *sp = host->object_data(self, w);
    if (!sp || !sp->n)
        return TRELLIS_SKIP;
    /* one cluster per cycle: KubeFleet's batch limit of one */
    size_t cur = fleet_held_current(host, self, c, sp->policy->snapshot, cfg->target_kind);
    if (cur < sp->policy->n) {
        host->cycle_want(c, (uint32_t)cur + 1);
        if (cur + 1 < sp->policy->n)
            host->cycle_requeue_now(c);
    }
    verdicts *v = host->cycle_alloc(c, sizeof *v);
    size_t n = host->cycle_target_count(c), nh = host->cycle_held_count(c);
    const char **current = host->cycle_alloc(c, (nh ? nh : 1) * sizeof *current);
    member *m = host->cycle_alloc(c, (n ? n : 1) * sizeof *m);
    int64_t *counts = host->cycle_alloc(c, (n ? n : 1) * sizeof *counts);
    if (v) {
        v->score = host->cycle_alloc(c, (n ? n : 1) * sizeof *v->score);
        v->violated = host->cycle_alloc(c, (n ? n : 1) * sizeof *v->violated);
    }
    if (!v || !current || !m || !counts || !v->score || !v->violated) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room to count %zu clusters", n);
        return TRELLIS_ERROR;
    }
    v->n = n;
    v->sp = sp;
    memset(v->violated, 0xff, n * sizeof *v->violated); /* -1: none */
    size_t n_current = 0;
    for (size_t i = 0; i < nh; i++)
        if (fleet_held_class(host, self, c, i, sp->policy->snapshot, cfg->target_kind) <=
            FLEET_HELD_BOUND)
            current[n_current++] = host->cycle_held(c, i);
    qsort(current, n_current, sizeof *current, fleet_key_cmp);
    /* DoNotSchedule constraints first, as KubeFleet evaluates them */
    for (int pass = 1; pass >= 0; pass--)
        for (size_t k = 0; k < sp->n; k++)
            if (sp->v[k].do_not_schedule == pass)
                apply(c, &sp->v[k], (int16_t)k, m, counts, current, n_current, v);
    host->cycle_set(c, self, v);
    return TRELLIS_SUCCESS;
}

/* The snapshot index of t: member clusters are cluster-scoped, in name
 * order; a linear look when that does not find it. For the plain filter
 * and score, which the host calls for reasons and explanations. */
static size_t index_of(trellis_cycle *c, const trellis_target *t)
{
    size_t lo = 0, n = host->cycle_target_count(c), hi = n;
    const char *name = host->target_name(t);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const trellis_target *x = host->cycle_target(c, mid);
        if (x == t)
            return mid;
        if (strcmp(host->target_name(x), name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = 0; i < n; i++)
        if (host->cycle_target(c, i) == t)
            return i;
    return n;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    (void)w;
    const verdicts *v = host->cycle_get(c, self);
    size_t i = v ? index_of(c, t) : 0;
    if (!v || i >= v->n || v->violated[i] < 0)
        return TRELLIS_SUCCESS;
    const constraint *k = &v->sp->v[v->violated[i]];
    host->status(st, TRELLIS_UNSCHEDULABLE, "TopologySpreadViolated",
                 "violated doNotSchedule topology spread constraint \"%s\" (max skew %lld)", k->key,
                 (long long)k->max_skew);
    return TRELLIS_UNSCHEDULABLE;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        size_t first, size_t n, uint64_t *pass)
{
    (void)w;
    const verdicts *v = host->cycle_get(c, self);
    for (size_t j = 0; v && j < n && first + j < v->n; j++)
        if (v->violated[first + j] >= 0)
            pass[j / 64] &= ~(1ull << (j % 64));
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    (void)w;
    (void)st;
    const verdicts *v = host->cycle_get(c, self);
    size_t i = v ? index_of(c, t) : 0;
    *out = v && i < v->n ? v->score[i] : 0;
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    (void)w;
    const verdicts *v = host->cycle_get(c, self);
    for (size_t j = 0; j < n; j++)
        scores[j] = v && idx[j] < v->n ? v->score[idx[j]] : 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->target_kind = h->arg_string(args, "target_kind");
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_span(self, filter_span) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-topology-spread",
    "1.0.0",
    "KubeFleet's topology spread constraints: skew per domain of member clusters, one cluster "
    "per cycle",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_topology_spread)
