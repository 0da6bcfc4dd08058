/*
 * openmcp_strategy.c - the openmcp-strategy plugin: which of the Clusters
 * left a ClusterRequest gets, by the configuration's strategy.
 *
 *   Balanced  the Cluster with the fewest requests (the request finalizers
 *             on it plus the requests assumed there in this run), the first in namespace/name order
 * on a tie: raw score minus that count, with the profile's score_mode "tuple" and tie_break "name";
 *   Simple    the first in namespace/name order: every score 0;
 *   Random    uniform among them, drawn from the argument `seed` and the
 *             request's namespace/name, so that a run can be replayed: the
 *             drawn Cluster scores 1, the others 0, and the decision notes
 *             the seed and the draw.
 * The argument `strategy` (empty by default) overrides the configuration's.
 * The decision notes the choice (reserve): the strategy's pick, or the one
 * Cluster left; nothing when that Cluster already carries the request's
 * finalizer (recovered or created: openmcp-clusters or openmcp-create
 * noted it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openmcp.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"

static const trellis_host *host;

typedef struct conf {
    omcp_config c;
    int strategy;
    uint64_t seed;
    /* per purpose, the dup of the Clusters serving it, summed: while it is
     * 0, scoring a request of the purpose reads no Cluster's data */
    int64_t dups[OMCP_PURPOSES_MAX];
    /* at most PACKED_MAX purposes: the purposes a Cluster serves are in
     * the high half of its finalizer column, and score_span reads one
     * column of its own for both (more purposes: it reads every
     * candidate's dup) */
    int packed;
} conf;

#define PACKED_MAX 32

enum { T_REQ = 1, T_CLU };

/* a request, prepared once per change: its purpose's index (-1: unknown) */
typedef struct req {
    int tag; /* T_REQ */
    int purpose;
} req;

static void amounts(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    omcp_request_counters(host, self, w, out);
}

/* one cycle: how many candidates, the Random draw, the request's purpose
 * (-1: unknown) */
typedef struct cyc {
    size_t n;
    const trellis_target *pick;
    int purpose;
} cyc;

/* A Cluster, prepared once per change: its request finalizers, and the
 * requests assumed on it in this run that it carries the finalizer of
 * already (recovered or created), counted once; dup changes in reserve /
 * unreserve on the main thread, and so do the sums by purpose. */
typedef struct tgt {
    int tag; /* T_CLU */
    int64_t finalizers, dup;
    uint64_t purposes;
    conf *cf;
} tgt;

/* Add d to t's dup and to the sums of the purposes it serves. */
static void add_dup(tgt *t, int64_t d)
{
    t->dup += d;
    for (uint64_t m = t->purposes; m; m &= m - 1)
        t->cf->dups[__builtin_ctzll(m)] += d;
}

static int prepare_target(trellis_plugin *self, const trellis_object *o, void **data, char *err,
                          size_t errlen)
{
    conf *cf = host->get_private(self);
    tgt *t = calloc(1, sizeof *t);
    if (!t)
        return snprintf(err, errlen, "out of memory"), -1;
    t->tag = T_CLU;
    t->finalizers = omcp_cluster_requests(host, o);
    t->purposes = omcp_cluster_purposes(&cf->c, o);
    t->cf = cf;
    *data = t;
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *w, void **data, char *err,
                            size_t errlen)
{
    const conf *cf = host->get_private(self);
    req *r = malloc(sizeof *r);
    if (!r)
        return snprintf(err, errlen, "out of memory"), -1;
    r->tag = T_REQ;
    r->purpose = omcp_purpose_index(&cf->c, omcp_request_purpose(host, w));
    *data = r;
    return 0;
}

/* The column score_span reads: request finalizers (fewer than 2^31: an
 * object holds less than 2 GiB), with the purposes served in the high half
 * when packed. */
static void target_values(trellis_plugin *self, const trellis_object *o, int64_t *out)
{
    const conf *cf = host->get_private(self);
    const tgt *t = host->object_data(self, o);
    out[0] = !t           ? 0
             : cf->packed ? (int64_t)(t->purposes << 32 | (uint64_t)t->finalizers)
                          : t->finalizers;
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    tgt *t = data;
    if (t && t->tag == T_CLU)
        add_dup(t, -t->dup);
    free(t);
}

static void unreserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      const trellis_target *t)
{
    (void)c;
    tgt *tt = host->object_data(self, host->target_object(t));
    if (tt && tt->dup > 0 && omcp_carries_own(host, w, host->target_object(t)))
        add_dup(tt, -1);
}

/* omcp_held() of one target (outside the hot loop). */
static int64_t requests_on(const trellis_plugin *self, const trellis_target *t)
{
    const int64_t *k = host->target_counters(self, t);
    const tgt *d = host->object_data(self, host->target_object(t));
    return d ? omcp_held(d->finalizers, k[0], d->dup) : 0;
}

/* "reused X, the only candidate left", unless X carries the request's
 * finalizer (recovered or created: noted by the plugin that did it). */
static void note_only(trellis_cycle *c, const trellis_plugin *self, const trellis_object *w,
                      const trellis_target *t)
{
    char fin[OMCP_FINALIZER_MAX];
    if (omcp_request_finalizer(host, w, fin, sizeof fin) == 0 &&
        omcp_has_finalizer(host, host->target_object(t), fin))
        return;
    host->cycle_note(c, self, "reused %s, the only candidate left", host->target_key(t));
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const conf *cf = host->get_private(self);
    cyc *y = host->cycle_alloc(c, sizeof *y);
    if (!y)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    y->n = n;
    const req *r = host->object_data(self, w);
    y->purpose = r ? r->purpose : omcp_purpose_index(&cf->c, omcp_request_purpose(host, w));
    host->cycle_set(c, self, y);
    if (n == 1) /* only explain scores a single candidate */
        note_only(c, self, w, feasible[0]);
    if (cf->strategy != OMCP_RANDOM || n < 2)
        return TRELLIS_SUCCESS;
    char id[512];
    snprintf(id, sizeof id, "%s/%s", host->object_namespace(w), host->object_name(w));
    size_t k = (size_t)(omcp_mix(omcp_hash(id, cf->seed)) % n);
    y->pick = feasible[k];
    host->cycle_note(c, self, "Random (seed %llu): drew %s, %zu of %zu candidates",
                     (unsigned long long)cf->seed, host->target_key(feasible[k]), k + 1, n);
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    (void)w;
    const conf *cf = host->get_private(self);
    const cyc *y = host->cycle_get(c, self);
    const int64_t *fin = host->cycle_target_values(c, self, 0);
    const int64_t *assumed = host->cycle_target_counter(c, self, 0);
    void *const *data = host->cycle_target_data(c, self);
    if (cf->strategy == OMCP_RANDOM) {
        for (size_t j = 0; j < n; j++)
            scores[j] = y && host->cycle_target(c, idx[j]) == y->pick;
    } else if (cf->strategy == OMCP_SIMPLE) {
        memset(scores, 0, n * sizeof *scores);
    } else if (y && y->purpose >= 0 && cf->dups[y->purpose] == 0 && cf->packed) {
        /* no Cluster serving the request's purpose has a dup: only the
         * others' data is read (the purposes: fin's high half) */
        for (size_t j = 0; j < n; j++) {
            uint32_t i = idx[j];
            uint64_t v = (uint64_t)fin[i];
            int64_t dup = v >> 32 >> y->purpose & 1 ? 0 : data[i] ? ((const tgt *)data[i])->dup : 0;
            scores[j] = -omcp_held((int64_t)(uint32_t)v, assumed[i], dup);
        }
    } else {
        const uint64_t mask = cf->packed ? UINT32_MAX : UINT64_MAX;
        for (size_t j = 0; j < n; j++) {
            uint32_t i = idx[j];
            scores[j] = -omcp_held((int64_t)((uint64_t)fin[i] & mask), assumed[i],
                                   data[i] ? ((const tgt *)data[i])->dup : 0);
        }
    }
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    (void)w;
    (void)st;
    const conf *cf = host->get_private(self);
    const cyc *y = host->cycle_get(c, self);
    if (cf->strategy == OMCP_RANDOM)
        *out = y && y->pick == t;
    else if (cf->strategy == OMCP_SIMPLE)
        *out = 0;
    else
        *out = -requests_on(self, t);
    return TRELLIS_SUCCESS;
}

/* The decision's note, once the choice is made. */
static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)st;
    const conf *cf = host->get_private(self);
    const cyc *y = host->cycle_get(c, self);
    tgt *tt = host->object_data(self, host->target_object(t));
    size_t n = y ? y->n : 1; /* one feasible Cluster is not scored: no pre_score */
    /* a recovered or created Cluster is always the only candidate */
    int own = n == 1 && omcp_carries_own(host, w, host->target_object(t));
    if (n == 1 && !own && !y)
        host->cycle_note(c, self, "reused %s, the only candidate left", host->target_key(t));
    else if (n > 1 && cf->strategy == OMCP_SIMPLE)
        host->cycle_note(c, self, "Simple: %s is the first of %zu candidates", host->target_key(t),
                         n);
    else if (n > 1 && cf->strategy == OMCP_BALANCED) /* before this request */
        host->cycle_note(c, self, "Balanced: %s held the fewest requests (%lld) of %zu candidates",
                         host->target_key(t), (long long)requests_on(self, t), n);
    if (own && tt)
        add_dup(tt, 1);
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    static const char *const names[] = {"Balanced", "Simple", "Random"};
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, "Namespaced", NULL, err, errlen);
    if (!cf)
        return -1;
    cf->strategy = cf->c.strategy;
    const char *s = h->arg_string(args, "strategy");
    if (s && *s) {
        cf->strategy = -1;
        for (int i = 0; i < 3; i++)
            if (strcmp(s, names[i]) == 0)
                cf->strategy = i;
        if (cf->strategy < 0)
            return snprintf(err, errlen,
                            "argument strategy: expected Balanced, Simple or Random, got '%s'", s),
                   -1;
    }
    cf->seed = (uint64_t)h->arg_int(args, "seed");
    cf->packed = cf->c.n_purposes <= PACKED_MAX;
    if (h->declare_target_values(self, 1, target_values) < 0 ||
        h->declare_counters(self, 1, amounts) < 0 || h->register_pre_score(self, pre_score) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0 ||
        h->register_reserve(self, reserve) < 0 || h->register_unreserve(self, unreserve) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 ||
        (cf->strategy != OMCP_RANDOM &&
         trellis_register_equivalent(h, self, trellis_equal_always) < 0))
        return snprintf(err, errlen, "cannot register hooks"), -1;
    return 0;
}

static const trellis_arg_spec args[] = {
    OMCP_CONFIG_ARG,
    {"strategy", TRELLIS_ARG_STRING, "",
     "Balanced, Simple or Random instead of the configuration's strategy"},
    {"seed", TRELLIS_ARG_INT, "0", "the seed of the Random strategy's draws"},
    {NULL, 0, NULL, NULL}};

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "openmcp-strategy",
    "1.0",
    "openMCP: Balanced, Simple or Random choice among the Clusters left",
    args,
    init,
    NULL};
TRELLIS_PLUGIN_AS(desc, openmcp_strategy)
