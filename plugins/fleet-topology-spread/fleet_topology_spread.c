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
 * next. The counts are made once per cycle in pre_filter, and what one
 * more binding does in each domain with them; filter and score look a
 * cluster's domains up (only the clusters they are asked about, not all).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"
#include "fleet.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* Which domain each cluster is in under one topology key, by snapshot
 * index, kept while the clusters do not change (each prepared cluster
 * carries a serial number; a changed one gets a new one). */
typedef struct domains {
    char *key;
    size_t n;          /* clusters */
    uint64_t *serials; /* of the clusters when counted */
    uint32_t *dom;     /* their domain; n_dom: without the label */
    uint32_t n_dom;
    uint64_t epoch; /* clusters_epoch when numbered */
} domains;

/* Counts every cluster prepared or released: while it stays, the
 * clusters are the ones numbered (a cluster added, changed or gone is
 * prepared or released), and their serials need not be compared. */
static _Atomic uint64_t clusters_epoch;

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
    const char *target_kind;
    /* pre_filter's (main thread) */
    domains *cache;
    size_t n_cache;
    uint64_t *counts; /* per domain, this cycle */
    size_t cap_counts;
} config;

/* A prepared cluster: its serial number. */
typedef struct cluster {
    int is_cluster; /* 1; a placement's spread has 0 first */
    uint64_t serial;
} cluster;

typedef struct constraint {
    char *key;
    int64_t max_skew;
    int do_not_schedule;
} constraint;

/* A placement's constraints (PickN only), read once per change. */
typedef struct spread {
    int is_cluster; /* 0 */
    fleet_policy *policy;
    constraint *v;
    size_t n;
} spread;

/* One constraint as this cycle applies it: the domain of each cluster
 * (by snapshot index, n of them) and what one more binding does in each
 * domain (INT64_MIN: it violates a DoNotSchedule constraint; else the
 * score it adds; 0 in the domain of the clusters without the label). */
typedef struct applied {
    int16_t k; /* the constraint's index in its spread */
    const uint32_t *dom;
    const int64_t *effect;
} applied;

/* This cycle's verdicts: the constraints in the order KubeFleet applies
 * them (DoNotSchedule first). */
typedef struct verdicts {
    size_t n;
    const spread *sp;
    applied *a;
    size_t n_a;
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
    if (data && *(const int *)data) {
        atomic_fetch_add(&clusters_epoch, 1);
        free(data);
    } else
        spread_free(data);
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    (void)self;
    (void)obj;
    static uint64_t next_serial; /* prepare runs on the main thread */
    atomic_fetch_add(&clusters_epoch, 1);
    cluster *cl = malloc(sizeof *cl);
    if (!cl) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cl->is_cluster = 1;
    cl->serial = ++next_serial;
    *data = cl;
    return 0;
}

static void free_cache(void *p)
{
    config *cfg = p;
    for (size_t i = 0; i < cfg->n_cache; i++) {
        free(cfg->cache[i].key);
        free(cfg->cache[i].serials);
        free(cfg->cache[i].dom);
    }
    free(cfg->cache);
    free(cfg->counts);
    free(cfg);
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

/* A cluster's label value and snapshot index, to number the domains. */
typedef struct member {
    const char *value;
    uint32_t idx;
} member;

static int by_value(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    int r = strcmp(a->value, b->value);
    return r ? r : (a->idx > b->idx) - (a->idx < b->idx);
}

/* The domains of key over this cycle's clusters: the cached ones while
 * no cluster changed, else numbered again. NULL when out of memory. */
static domains *domains_of(config *cfg, trellis_cycle *c, trellis_plugin *self, const char *key)
{
    size_t n = host->cycle_target_count(c);
    void *const *td = host->cycle_target_data(c, self);
    domains *d = NULL;
    for (size_t i = 0; i < cfg->n_cache && !d; i++)
        if (strcmp(cfg->cache[i].key, key) == 0)
            d = &cfg->cache[i];
    if (!d) {
        domains *v = realloc(cfg->cache, (cfg->n_cache + 1) * sizeof *v);
        if (!v)
            return NULL;
        cfg->cache = v;
        d = &v[cfg->n_cache];
        memset(d, 0, sizeof *d);
        if (!(d->key = values_strdup(key)))
            return NULL;
        cfg->n_cache++;
    }
    uint64_t epoch = atomic_load(&clusters_epoch);
    int same = d->n == n && td;
    for (size_t i = 0; same && d->epoch != epoch && i < n; i++)
        same = td[i] && ((const cluster *)td[i])->serial == d->serials[i];
    d->epoch = epoch; /* compared with it, or numbered again below */
    if (same)
        return d;
    /* number the domains again: the clusters changed */
    uint64_t *serials = malloc((n ? n : 1) * sizeof *serials);
    uint32_t *dom = malloc((n ? n : 1) * sizeof *dom);
    member *m = malloc((n ? n : 1) * sizeof *m);
    if (!serials || !dom || !m) {
        free(serials);
        free(dom);
        free(m);
        return NULL;
    }
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        serials[i] = td && td[i] ? ((const cluster *)td[i])->serial : 0;
        dom[i] = UINT32_MAX; /* until numbered */
        const char *v = host->object_label(host->target_object(host->cycle_target(c, i)), key);
        if (v)
            m[nm++] = (member){v, (uint32_t)i};
    }
    qsort(m, nm, sizeof *m, by_value);
    uint32_t nd = 0;
    for (size_t i = 0; i < nm; i++) {
        if (i > 0 && strcmp(m[i].value, m[i - 1].value) != 0)
            nd++;
        dom[m[i].idx] = nd;
    }
    nd = nm ? nd + 1 : 0;
    for (size_t i = 0; i < n; i++) /* without the label: the domain past the last */
        dom[i] = dom[i] == UINT32_MAX ? nd : dom[i];
    free(m);
    free(d->serials);
    free(d->dom);
    d->serials = serials;
    d->dom = dom;
    d->n = n;
    d->n_dom = nd;
    return d;
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

/* The snapshot index of the cluster of key (clusters are cluster-scoped,
 * in name order), or n. */
static size_t index_of_key(trellis_cycle *c, const char *key)
{
    size_t lo = 0, n = host->cycle_target_count(c), hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(host->target_name(host->cycle_target(c, mid)), key);
        if (r == 0)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return n;
}

/* What one more binding does in each domain of one constraint (its
 * domains d), into effect[0..d->n_dom] (the last: without the label,
 * nothing). current: the snapshot indices of
 * the clusters where the placement has a binding of its current
 * snapshot. */
static void effects(config *cfg, const constraint *k, const domains *d, const size_t *current,
                    size_t n_current, int64_t *effect)
{
    uint64_t *counts = cfg->counts;
    memset(counts, 0, d->n_dom * sizeof *counts);
    for (size_t i = 0; i < n_current; i++)
        if (current[i] < d->n && d->dom[current[i]] != d->n_dom)
            counts[d->dom[current[i]]]++;
    /* the sorted counts' smallest, second smallest and largest, as
     * KubeFleet takes them (one count is all three) */
    int64_t smallest = -1, second = -1, largest = -1;
    for (uint32_t i = 0; i < d->n_dom; i++) {
        int64_t x = (int64_t)counts[i];
        if (largest < 0 || x > largest)
            largest = x;
        if (smallest < 0 || x < smallest) {
            second = smallest;
            smallest = x;
        } else if (second < 0 || x < second) {
            second = x;
        }
    }
    if (d->n_dom == 1)
        second = smallest;
    /* it depends on the domain's count alone */
    for (uint32_t i = 0; i < d->n_dom; i++) {
        int64_t change;
        int bad = will_violate((int64_t)counts[i], smallest, second, largest, k->max_skew, &change);
        effect[i] = !bad ? -change : k->do_not_schedule ? INT64_MIN : -1000;
    }
    effect[d->n_dom] = 0; /* in no domain: no skew */
}

/* The verdict on the cluster at snapshot index x: the DoNotSchedule
 * constraint it violates first, or -1; *score what the constraints
 * applied before that add (all of them when none is violated). */
static int verdict(const verdicts *v, size_t x, int64_t *score)
{
    int64_t sum = 0;
    int out = -1;
    for (size_t j = 0; x < v->n && j < v->n_a; j++) {
        int64_t e = v->a[j].effect[v->a[j].dom[x]];
        if (e == INT64_MIN) {
            out = v->a[j].k;
            break;
        }
        sum += e;
    }
    *score = sum;
    return out;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    config *cfg = host->get_private(self);
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
    size_t *current = host->cycle_alloc(c, (nh ? nh : 1) * sizeof *current);
    if (v)
        v->a = host->cycle_alloc(c, sp->n * sizeof *v->a);
    if (n > cfg->cap_counts) {
        uint64_t *counts = realloc(cfg->counts, n * sizeof *counts);
        if (counts) {
            cfg->counts = counts;
            cfg->cap_counts = n;
        }
    }
    if (!v || !current || !v->a || cfg->cap_counts < n) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room to count %zu clusters", n);
        return TRELLIS_ERROR;
    }
    v->n = n;
    v->sp = sp;
    size_t n_current = 0;
    for (size_t i = 0; i < nh; i++)
        if (fleet_held_class(host, self, c, i, sp->policy->snapshot, cfg->target_kind) <=
            FLEET_HELD_BOUND)
            current[n_current++] = index_of_key(c, host->cycle_held(c, i));
    /* DoNotSchedule constraints first, as KubeFleet evaluates them */
    for (int pass = 1; pass >= 0; pass--) {
        for (size_t k = 0; k < sp->n; k++) {
            if (sp->v[k].do_not_schedule != pass)
                continue;
            const domains *d = domains_of(cfg, c, self, sp->v[k].key);
            int64_t *effect = d ? host->cycle_alloc(c, (d->n_dom + 1) * sizeof *effect) : NULL;
            if (!effect) {
                host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room to count %zu clusters", n);
                return TRELLIS_ERROR;
            }
            effects(cfg, &sp->v[k], d, current, n_current, effect);
            /* the domains stay where they are for the cycle: numbered
             * again only in a later pre_filter */
            v->a[v->n_a++] = (applied){(int16_t)k, d->dom, effect};
        }
    }
    host->cycle_set(c, self, v);
    return TRELLIS_SUCCESS;
}

/* The snapshot index of t (index_of_key by its name; a linear look when
 * that is not t): for the plain filter and score, which the host calls
 * for reasons and explanations. */
static size_t index_of(trellis_cycle *c, const trellis_target *t)
{
    size_t n = host->cycle_target_count(c), i = index_of_key(c, host->target_name(t));
    if (i < n && host->cycle_target(c, i) == t)
        return i;
    for (i = 0; i < n; i++)
        if (host->cycle_target(c, i) == t)
            return i;
    return n;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    (void)w;
    const verdicts *v = host->cycle_get(c, self);
    int64_t sum;
    int out = v ? verdict(v, index_of(c, t), &sum) : -1;
    if (out < 0)
        return TRELLIS_SUCCESS;
    const constraint *k = &v->sp->v[out];
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
    if (!v)
        return;
    /* one constraint (the usual): its domain's effect alone decides,
     * looked up for every cluster of a word that has one still in */
    const uint32_t *dom = v->n_a == 1 ? v->a[0].dom : NULL;
    const int64_t *effect = v->n_a == 1 ? v->a[0].effect : NULL;
    int64_t sum;
    size_t upto = first + n < v->n ? n : v->n > first ? v->n - first : 0;
    for (size_t wd = 0; wd < (upto + 63) / 64; wd++) {
        uint64_t bits = pass[wd], bad = 0;
        size_t base = wd * 64, m = upto - base < 64 ? upto - base : 64;
        if (!bits)
            continue;
        if (dom) {
            const uint32_t *dw = dom + first + base;
            for (size_t b = 0; b < m; b++)
                bad |= (uint64_t)(effect[dw[b]] == INT64_MIN) << b;
        } else {
            for (; bits; bits &= bits - 1) {
                size_t b = (size_t)__builtin_ctzll(bits);
                if (b < m && verdict(v, first + base + b, &sum) >= 0)
                    bad |= 1ull << b;
            }
        }
        pass[wd] &= ~bad;
    }
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    (void)w;
    (void)st;
    const verdicts *v = host->cycle_get(c, self);
    *out = 0;
    if (v)
        verdict(v, index_of(c, t), out);
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    (void)w;
    const verdicts *v = host->cycle_get(c, self);
    if (v && v->n_a == 1) { /* one constraint: its domain's effect, 0 when it violates */
        const uint32_t *dom = v->a[0].dom;
        const int64_t *effect = v->a[0].effect;
        for (size_t j = 0; j < n; j++) {
            int64_t e = idx[j] < v->n ? effect[dom[idx[j]]] : 0;
            scores[j] = e == INT64_MIN ? 0 : e;
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        scores[j] = 0;
        if (v)
            verdict(v, idx[j], &scores[j]);
    }
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->target_kind = h->arg_string(args, "target_kind");
    /* the domain cache goes with the config */
    h->set_private(self, cfg, free_cache);
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
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
