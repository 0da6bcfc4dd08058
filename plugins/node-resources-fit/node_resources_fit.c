/*
 * node_resources_fit.c - the node-resources-fit plugin: kube-scheduler's
 * NodeResourcesFit, filter and score.
 *
 * Filter (kube's fitsRequest): the Node must have room for one more Pod
 * (allocatable pods), and for every resource the Pod requests (cpu,
 * memory, ephemeral-storage and any scalar resource: nvidia.com/gpu,
 * hugepages-2Mi, ...) allocatable - requested by the Pods there >= the
 * request. Extended resources named in ignoredResources, or whose domain
 * is in ignoredResourceGroups, are not checked. A Node whose allocatable is
 * below the request even when empty is UNRESOLVABLE; one that is merely
 * full is UNSCHEDULABLE (preemption may help).
 *
 * Score (kube's scoringStrategy, over its resources with their weights,
 * cpu and memory with weight 1 by default): per resource, requested =
 * what the Node's Pods request + the Pod's request, where for cpu and
 * memory a container without a request counts 100m and 200Mi (kube's
 * non-zero requests); a resource the Node has no allocatable of, or a
 * scalar resource the Pod does not request, is left out of the weighted
 * average. LeastAllocated: (allocatable - requested) * 100 / allocatable
 * (0 when over-committed); MostAllocated: requested * 100 / allocatable
 * (requested capped at allocatable); RequestedToCapacityRatio: the broken
 * line through the shape's points (utilization 0..100, score 0..10 scaled
 * by 10) at requested * 100 / allocatable, averaged over the resources
 * whose score is positive and rounded. The node score is
 * sum(score * weight) / sum(weight), integer division except for
 * RequestedToCapacityRatio.
 *
 * Counting: every Pod's requests are read once (prepare, common/podres.c)
 * and the host keeps per-Node sums in this plugin's counters: pods, cpu,
 * memory, ephemeral-storage, non-zero cpu and memory, and ten slots for
 * scalar resources given out as Pods first request them; a scalar
 * resource past those is summed over the Node's Pods when a Pod asks for
 * it. Pods in phase Succeeded or Failed count for nothing. The filter and
 * score spans read allocatable amounts as target values and the sums as
 * counter columns.
 *
 * `config` is kube's NodeResourcesFitArgs as a document:
 *   ignoredResources: [example.com/foo]
 *   ignoredResourceGroups: [example.com]
 *   scoringStrategy:
 *     type: LeastAllocated | MostAllocated | RequestedToCapacityRatio
 *     resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
 *     requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, ...]}
 */
/* the oldest host it runs on: the columnar hooks of SDK 1.3, the document argument of 1.4 */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "podres.h"
#include "resources.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* Counter indices. */
enum { C_CPU = 0, C_MEM, C_PODS, C_EPH, C_NZCPU, C_NZMEM, C_DYN, C_N = 16 };
#define DYN_SLOTS (C_N - C_DYN)
/* Target value indices: allocatable pods, cpu, memory, ephemeral-storage,
 * 1.0 / allocatable cpu and memory (a double's bits, 0 when none), then
 * one per score resource. */
enum { V_PODS = 0, V_CPU, V_MEM, V_EPH, V_RCPU, V_RMEM, V_SCORE };
#define MAX_SCORE_RES 8
#define MAX_SHAPE 16

enum { LEAST_ALLOCATED = 0, MOST_ALLOCATED, REQUESTED_TO_CAPACITY };

typedef struct config {
    podres_fields f;
    intern ids; /* written in prepare and init only */
    int strategy;
    size_t nscore;
    int32_t score_id[MAX_SCORE_RES];
    int64_t score_weight[MAX_SCORE_RES];
    int score_scalar[MAX_SCORE_RES];
    size_t nshape;
    int64_t shape_u[MAX_SHAPE], shape_s[MAX_SHAPE];
    char **ignored, **groups; /* owned */
    size_t nignored, ngroups;
    int8_t *slot_of; /* resource id -> dynamic slot, -1 none */
    size_t cap_slot;
    int nslots;
} config;

/* A Pod's prepared requests. */
typedef struct wreq {
    int terminal;
    int64_t cpu, mem, eph, nzcpu, nzmem;
    uint32_t nscalar; /* scalar resources requested (> 0), not ignored */
    int32_t sid[PODRES_MAX];
    int64_t sv[PODRES_MAX];
    int8_t sslot[PODRES_MAX];
    int64_t score_req[MAX_SCORE_RES]; /* per score resource (non-zero cpu, memory) */
} wreq;

/* A Node's prepared allocatable. */
typedef struct talloc {
    podres_list alloc;
} talloc;

static const trellis_arg_spec args_table[] = {
    {"config", TRELLIS_ARG_DOCUMENT, "{}",
     "kube-scheduler's NodeResourcesFitArgs: ignoredResources, ignoredResourceGroups, "
     "scoringStrategy {type, resources, requestedToCapacityRatio}"},
    RES_FIELD_ARGS,
    {"phase_field", TRELLIS_ARG_STRING, "status.phase",
     "dotted path of the workload's phase: Succeeded and Failed hold no room"},
    {NULL, 0, NULL, NULL},
};

static void config_free(void *p)
{
    config *cfg = p;

    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->nignored; i++)
        free(cfg->ignored[i]);
    for (size_t i = 0; i < cfg->ngroups; i++)
        free(cfg->groups[i]);
    free(cfg->ignored);
    free(cfg->groups);
    free(cfg->slot_of);
    intern_free(&cfg->ids);
    free(cfg);
}

/* The dynamic counter slot of resource id, given out on first use; -1
 * when all are taken. Main thread (prepare, init). */
static int slot_for(config *cfg, int32_t id)
{
    if ((size_t)id >= cfg->cap_slot) {
        size_t cap = cfg->cap_slot ? cfg->cap_slot : 64;
        int8_t *p;

        while (cap <= (size_t)id)
            cap *= 2;
        p = realloc(cfg->slot_of, cap);
        if (!p)
            return -1;
        memset(p + cfg->cap_slot, -1, cap - cfg->cap_slot);
        cfg->slot_of = p;
        cfg->cap_slot = cap;
    }
    if (cfg->slot_of[id] < 0 && cfg->nslots < DYN_SLOTS)
        cfg->slot_of[id] = (int8_t)cfg->nslots++;
    return cfg->slot_of[id];
}

static int ignored(const config *cfg, const char *name)
{
    const char *slash;

    if (!podres_is_extended(name))
        return 0;
    for (size_t i = 0; i < cfg->nignored; i++) {
        if (strcmp(cfg->ignored[i], name) == 0)
            return 1;
    }
    slash = strchr(name, '/');
    for (size_t i = 0; slash && i < cfg->ngroups; i++) {
        if (strlen(cfg->groups[i]) == (size_t)(slash - name) &&
            strncmp(cfg->groups[i], name, (size_t)(slash - name)) == 0)
            return 1;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    podres_list req, nz;
    wreq *w;

    *data = NULL;
    if (podres_requests(host, &cfg->f, obj, &cfg->ids, 0, &req, err, errlen) < 0 ||
        podres_requests(host, &cfg->f, obj, &cfg->ids, 1, &nz, err, errlen) < 0)
        return -1;
    w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->terminal = podres_terminal(host, &cfg->f, obj);
    w->cpu = podres_get(&req, PODRES_CPU);
    w->mem = podres_get(&req, PODRES_MEMORY);
    w->eph = podres_get(&req, PODRES_EPHEMERAL);
    w->nzcpu = podres_get(&nz, PODRES_CPU);
    w->nzmem = podres_get(&nz, PODRES_MEMORY);
    for (uint32_t i = 0; i < req.n; i++) {
        int32_t id = req.id[i];

        if (id < PODRES_WELL_KNOWN || req.v[i] <= 0 || ignored(cfg, intern_str(&cfg->ids, id)))
            continue;
        w->sid[w->nscalar] = id;
        w->sv[w->nscalar] = req.v[i];
        w->sslot[w->nscalar] = (int8_t)slot_for(cfg, id);
        w->nscalar++;
    }
    for (size_t r = 0; r < cfg->nscore; r++) {
        int32_t id = cfg->score_id[r];

        w->score_req[r] = id == PODRES_CPU      ? w->nzcpu
                          : id == PODRES_MEMORY ? w->nzmem
                                                : podres_get(&req, id);
    }
    *data = w;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    talloc *t = calloc(1, sizeof(*t));

    *data = NULL;
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (podres_allocatable(host, &cfg->f, obj, &cfg->ids, &t->alloc, err, errlen) < 0) {
        free(t);
        return -1;
    }
    *data = t;
    return 0;
}

/* For the operator's views: each Node's allocatable cpu, memory and
 * pods (the counters' sums are what its Pods request). */
static void allocated(trellis_plugin *self, const trellis_object *target,
                      const trellis_object *const *placed, size_t n, int64_t *used,
                      int64_t *allocatable)
{
    (void)placed;
    (void)n;
    (void)used;
    const talloc *t = host->object_data(self, target);
    static const struct {
        int counter;
        int32_t id;
    } shown[] = {{C_CPU, PODRES_CPU}, {C_MEM, PODRES_MEMORY}, {C_PODS, PODRES_PODS}};
    for (size_t i = 0; t && i < sizeof shown / sizeof *shown; i++)
        if (podres_has(&t->alloc, shown[i].id))
            allocatable[shown[i].counter] = podres_get(&t->alloc, shown[i].id);
}

/* Name the counters an operator reads (a 1.5 host): cpu, memory, pods;
 * the others (ephemeral storage, non-zero requests, scalar slots given
 * out as Pods ask) are the plugin's own. */
static int name_counters(trellis_plugin *self, char *err, size_t errlen)
{
    const char *names[C_N] = {NULL};
    trellis_unit units[C_N] = {TRELLIS_UNIT_COUNT};
    names[C_PODS] = "pods";
    names[C_CPU] = "cpu";
    units[C_CPU] = TRELLIS_UNIT_MILLI;
    names[C_MEM] = "memory";
    units[C_MEM] = TRELLIS_UNIT_BYTES;
    if (TRELLIS_HOST_HAS(host, name_counters) &&
        host->name_counters(self, names, units, allocated) < 0) {
        snprintf(err, errlen, "cannot name the counters");
        return -1;
    }
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

/* Counters: what a Pod holds on its Node. */
static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    const wreq *w = host->object_data(self, workload);

    memset(out, 0, C_N * sizeof(*out));
    if (!w) {
        out[C_PODS] = 1; /* unreadable requests still take a pod slot */
        return;
    }
    if (w->terminal)
        return;
    out[C_PODS] = 1;
    out[C_CPU] = w->cpu;
    out[C_MEM] = w->mem;
    out[C_EPH] = w->eph;
    out[C_NZCPU] = w->nzcpu;
    out[C_NZMEM] = w->nzmem;
    for (uint32_t i = 0; i < w->nscalar; i++) {
        if (w->sslot[i] >= 0)
            out[C_DYN + w->sslot[i]] += w->sv[i];
    }
}

static void target_values(trellis_plugin *self, const trellis_object *target, int64_t *out)
{
    const config *cfg = host->get_private(self);
    const talloc *t = host->object_data(self, target);
    const podres_list *a = t ? &t->alloc : NULL;

    out[V_PODS] = a ? podres_get(a, PODRES_PODS) : 0;
    out[V_CPU] = a ? podres_get(a, PODRES_CPU) : 0;
    out[V_MEM] = a ? podres_get(a, PODRES_MEMORY) : 0;
    out[V_EPH] = a ? podres_get(a, PODRES_EPHEMERAL) : 0;
    for (int k = 0; k < 2; k++) {
        int64_t al = out[k == 0 ? V_CPU : V_MEM];
        double recip = al > 0 ? 1.0 / (double)al : 0.0;

        memcpy(&out[k == 0 ? V_RCPU : V_RMEM], &recip, sizeof(recip));
    }
    for (size_t r = 0; r < cfg->nscore; r++)
        out[V_SCORE + r] = a ? podres_get(a, cfg->score_id[r]) : 0;
}

/* What the Pods on target t request of scalar resource id (slot < 0: no
 * counter, summed over them). */
static int64_t scalar_used(trellis_plugin *self, const trellis_target *t, const int64_t *used,
                           int32_t id, int slot)
{
    int64_t sum = 0;
    size_t n;

    if (slot >= 0)
        return used ? used[C_DYN + slot] : 0;
    n = host->target_workload_count(t);
    for (size_t i = 0; i < n; i++) {
        const wreq *o = host->object_data(self, host->target_workload(t, i));

        for (uint32_t k = 0; o && !o->terminal && k < o->nscalar; k++) {
            if (o->sid[k] == id)
                sum += o->sv[k];
        }
    }
    return sum;
}

/* Why a Pod does not fit. */
typedef struct shortage {
    int32_t id; /* resource */
    int64_t want, used, alloc;
    int unresolvable;
} shortage;

static int short_of(int32_t id, int64_t want, int64_t used, int64_t alloc, shortage *s)
{
    if (want <= 0 || want <= alloc - used)
        return 0;
    s->id = id;
    s->want = want;
    s->used = used;
    s->alloc = alloc;
    s->unresolvable = want > alloc;
    return 1;
}

/* kube's fitsRequest: 1 with *s filled when w does not fit. `used` holds
 * the target's counters (NULL: none), `a` its allocatable. */
static int misfit(trellis_plugin *self, const wreq *w, const podres_list *a, const int64_t *used,
                  const trellis_target *t, shortage *s)
{
    int64_t u_pods = used ? used[C_PODS] : 0;

    if (short_of(PODRES_PODS, 1, u_pods, podres_get(a, PODRES_PODS), s))
        return 1;
    if (short_of(PODRES_CPU, w->cpu, used ? used[C_CPU] : 0, podres_get(a, PODRES_CPU), s) ||
        short_of(PODRES_MEMORY, w->mem, used ? used[C_MEM] : 0, podres_get(a, PODRES_MEMORY), s) ||
        short_of(PODRES_EPHEMERAL, w->eph, used ? used[C_EPH] : 0, podres_get(a, PODRES_EPHEMERAL),
                 s))
        return 1;
    for (uint32_t i = 0; i < w->nscalar; i++) {
        if (short_of(w->sid[i], w->sv[i], scalar_used(self, t, used, w->sid[i], w->sslot[i]),
                     podres_get(a, w->sid[i]), s))
            return 1;
    }
    return 0;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);
    const talloc *t = host->object_data(self, host->target_object(target));
    static const podres_list none = {0};
    const char *name;
    char rq[32], us[32], al[32];
    shortage s;
    res_unit unit;
    int code;

    if (!w ||
        !misfit(self, w, t ? &t->alloc : &none, host->target_counters(self, target), target, &s))
        return TRELLIS_SUCCESS;
    name = intern_str(&cfg->ids, s.id);
    unit = res_unit_of(name);
    code = s.unresolvable ? TRELLIS_UNRESOLVABLE : TRELLIS_UNSCHEDULABLE;
    res_format(s.want, unit, rq, sizeof(rq));
    res_format(s.used, unit, us, sizeof(us));
    res_format(s.alloc, unit, al, sizeof(al));
    if (s.id == PODRES_PODS)
        return host->status(st, code, "InsufficientResources",
                            "Too many pods: %s on the node, %s allowed", us, al);
    return host->status(st, code, "InsufficientResources",
                        "Insufficient %s: requested %s, used %s of %s", name, rq, us, al);
}

/* The pods, cpu, memory and ephemeral-storage tests over 64 targets a
 * word, from target values and counter columns; a Pod with scalar
 * requests then runs misfit on the targets left. */
static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const wreq *w = host->object_data(self, workload);
    const int64_t *alloc[4], *used[4];
    int64_t want[4];
    size_t m = 0;

    if (!w)
        return;
    {
        const int ks[4] = {C_PODS, C_CPU, C_MEM, C_EPH};
        const int vs[4] = {V_PODS, V_CPU, V_MEM, V_EPH};
        const int64_t wants[4] = {1, w->cpu, w->mem, w->eph};

        for (int k = 0; k < 4; k++) {
            if (wants[k] <= 0)
                continue;
            alloc[m] = host->cycle_target_values(c, self, vs[k]);
            used[m] = host->cycle_target_counter(c, self, ks[k]);
            want[m] = wants[k];
            if (!alloc[m] || !used[m])
                return; /* declared in init: the host always has them */
            m++;
        }
    }
    for (size_t wd = 0; wd < (n + 63) / 64; wd++) {
        size_t b = first + wd * 64, cnt = n - wd * 64 < 64 ? n - wd * 64 : 64;
        uint64_t bad = 0;

        if (!pass[wd])
            continue;
        for (size_t k = 0; k < m; k++) {
            const int64_t *a = alloc[k] + b, *u = used[k] + b;
            int64_t r = want[k];

            for (size_t j = 0; j < cnt; j++)
                bad |= (uint64_t)(a[j] - u[j] < r) << j;
        }
        pass[wd] &= ~bad;
    }
    if (w->nscalar) {
        void *const *td = host->cycle_target_data(c, self);

        for (size_t wd = 0; wd < (n + 63) / 64; wd++) {
            uint64_t bits = pass[wd];

            while (bits) {
                size_t j = wd * 64 + (size_t)__builtin_ctzll(bits);
                const trellis_target *t = host->cycle_target(c, first + j);
                const talloc *ta = td ? td[first + j] : NULL;
                static const podres_list none = {0};
                shortage s;

                bits &= bits - 1;
                if (j < n &&
                    misfit(self, w, ta ? &ta->alloc : &none, host->target_counters(self, t), t, &s))
                    pass[wd] &= ~(UINT64_C(1) << (j % 64));
            }
        }
    }
}

/* ---- score --------------------------------------------------------------- */

/* kube's helper.BuildBrokenLinearFunction over the shape, at p. */
static int64_t broken_line(const config *cfg, int64_t p)
{
    for (size_t i = 0; i < cfg->nshape; i++) {
        if (p <= cfg->shape_u[i]) {
            if (i == 0)
                return cfg->shape_s[0];
            return cfg->shape_s[i - 1] + (cfg->shape_s[i] - cfg->shape_s[i - 1]) *
                                             (p - cfg->shape_u[i - 1]) /
                                             (cfg->shape_u[i] - cfg->shape_u[i - 1]);
        }
    }
    return cfg->shape_s[cfg->nshape - 1];
}

/* The node score from requested and allocatable per score resource
 * (allocatable 0: left out), as kube's scorers. */
static int64_t node_score(const config *cfg, const int64_t *req, const int64_t *alloc)
{
    int64_t total = 0, weights = 0;

    for (size_t r = 0; r < cfg->nscore; r++) {
        int64_t a = alloc[r], q = req[r], s;

        if (a == 0)
            continue;
        switch (cfg->strategy) {
        case LEAST_ALLOCATED:
            s = q > a ? 0 : (a - q) * TRELLIS_MAX_SCORE / a;
            break;
        case MOST_ALLOCATED:
            s = (q > a ? a : q) * TRELLIS_MAX_SCORE / a;
            break;
        default:
            s = broken_line(cfg, q > a ? 100 : q * 100 / a);
            if (s <= 0)
                continue;
            break;
        }
        total += s * cfg->score_weight[r];
        weights += cfg->score_weight[r];
    }
    if (weights == 0)
        return 0;
    if (cfg->strategy == REQUESTED_TO_CAPACITY)
        return (2 * total + weights) / (2 * weights); /* math.Round, both >= 0 */
    return total / weights;
}

/* LeastAllocated's free * 100 / alloc of one resource (0 when over-
 * committed) with recip = 1.0 / alloc: res_div's multiplication and one
 * correction instead of a 64-bit division, exact below 2^52 / 100;
 * larger amounts (exabytes) divide. */
static inline int64_t least_share(int64_t free_amount, int64_t alloc, double recip)
{
    if (free_amount < 0)
        return 0;
    if (free_amount < RES_DIV_EXACT / TRELLIS_MAX_SCORE && alloc < RES_DIV_EXACT)
        return res_div(free_amount * TRELLIS_MAX_SCORE, alloc, recip);
    return (int64_t)((long double)free_amount * TRELLIS_MAX_SCORE / alloc);
}

/* The used amount of score resource r, from the counters (NULL: none). */
static int64_t score_used(trellis_plugin *self, const config *cfg, size_t r, const int64_t *used,
                          const trellis_target *t)
{
    int32_t id = cfg->score_id[r];

    if (id == PODRES_CPU)
        return used ? used[C_NZCPU] : 0;
    if (id == PODRES_MEMORY)
        return used ? used[C_NZMEM] : 0;
    if (id == PODRES_EPHEMERAL)
        return used ? used[C_EPH] : 0;
    return scalar_used(self, t, used, id, (size_t)id < cfg->cap_slot ? cfg->slot_of[id] : -1);
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);
    const talloc *t = host->object_data(self, host->target_object(target));
    const int64_t *used = host->target_counters(self, target);
    int64_t req[MAX_SCORE_RES], alloc[MAX_SCORE_RES];

    for (size_t r = 0; r < cfg->nscore; r++) {
        int64_t want = w ? w->score_req[r] : 0;

        alloc[r] = t ? podres_get(&t->alloc, cfg->score_id[r]) : 0;
        if (cfg->score_scalar[r] && want == 0)
            alloc[r] = 0; /* a scalar resource the Pod does not request */
        req[r] = alloc[r] ? score_used(self, cfg, r, used, target) + want : 0;
    }
    *out = node_score(cfg, req, alloc);
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);
    const int64_t *acol[MAX_SCORE_RES], *ucol[MAX_SCORE_RES];
    int64_t want[MAX_SCORE_RES], req[MAX_SCORE_RES], alloc[MAX_SCORE_RES];
    int fallback = 0;

    for (size_t r = 0; r < cfg->nscore; r++) {
        int32_t id = cfg->score_id[r];
        int k = id == PODRES_CPU                                      ? C_NZCPU
                : id == PODRES_MEMORY                                 ? C_NZMEM
                : id == PODRES_EPHEMERAL                              ? C_EPH
                : (size_t)id < cfg->cap_slot && cfg->slot_of[id] >= 0 ? C_DYN + cfg->slot_of[id]
                                                                      : -1;

        want[r] = w ? w->score_req[r] : 0;
        acol[r] = host->cycle_target_values(c, self, V_SCORE + (int)r);
        ucol[r] = k >= 0 ? host->cycle_target_counter(c, self, k) : NULL;
        if (!acol[r])
            return;
        if (!ucol[r] && !(cfg->score_scalar[r] && want[r] == 0))
            fallback = 1;
    }
    if (cfg->strategy == LEAST_ALLOCATED && cfg->nscore == 2 && !fallback &&
        cfg->score_id[0] == PODRES_CPU && cfg->score_id[1] == PODRES_MEMORY) {
        /* the default, LeastAllocated over cpu and memory: node_score()
         * without its loops and switch */
        int64_t w0 = cfg->score_weight[0], w1 = cfg->score_weight[1];
        /* the columns hold doubles' bits, written with memcpy */
        const double *r0 = (const double *)(const void *)host->cycle_target_values(c, self, V_RCPU);
        const double *r1 = (const double *)(const void *)host->cycle_target_values(c, self, V_RMEM);

        if (!r0 || !r1)
            return;
        for (size_t j = 0; j < n; j++) {
            uint32_t i = idx[j];
            int64_t a0 = acol[0][i], a1 = acol[1][i];
            int64_t f0 = a0 - ucol[0][i] - want[0], f1 = a1 - ucol[1][i] - want[1];
            int64_t total = 0, weights = 0;

            if (a0) {
                total += least_share(f0, a0, r0[i]) * w0;
                weights += w0;
            }
            if (a1) {
                total += least_share(f1, a1, r1[i]) * w1;
                weights += w1;
            }
            scores[j] = weights == 2 ? total >> 1 : weights ? total / weights : 0;
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        uint32_t i = idx[j];

        for (size_t r = 0; r < cfg->nscore; r++) {
            alloc[r] = cfg->score_scalar[r] && want[r] == 0 ? 0 : acol[r][i];
            req[r] = (ucol[r] ? ucol[r][i] : 0) + want[r];
        }
        if (fallback) {
            const trellis_target *t = host->cycle_target(c, i);

            for (size_t r = 0; r < cfg->nscore; r++) {
                if (!ucol[r] && alloc[r])
                    req[r] = score_used(self, cfg, r, host->target_counters(self, t), t) + want[r];
            }
        }
        scores[j] = node_score(cfg, req, alloc);
    }
}

/* ---- hints, equivalence ---------------------------------------------------- */

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    const wreq *w = host->object_data(self, workload), *gone;
    const talloc *after, *before;
    shortage s;

    if (!w)
        return TRELLIS_QUEUE;
    switch (event) {
    case TRELLIS_EV_TARGET_ADD:
    case TRELLIS_EV_TARGET_UPDATE:
        after = new_obj ? host->object_data(self, new_obj) : NULL;
        before = old_obj ? host->object_data(self, old_obj) : NULL;
        if (!after)
            return TRELLIS_QUEUE;
        /* it must hold the Pod when empty, and be new or changed */
        if (misfit(self, w, &after->alloc, NULL, NULL, &s) && s.unresolvable)
            return TRELLIS_QUEUE_SKIP;
        return !before || memcmp(&before->alloc, &after->alloc, sizeof(after->alloc)) != 0
                   ? TRELLIS_QUEUE
                   : TRELLIS_QUEUE_SKIP;
    case TRELLIS_EV_WORKLOAD_GONE:
        gone = old_obj ? host->object_data(self, old_obj) : NULL;
        return !gone || !gone->terminal ? TRELLIS_QUEUE : TRELLIS_QUEUE_SKIP;
    }
    return TRELLIS_QUEUE;
}

/* Equal requests get equal verdicts and scores. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const wreq *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->terminal == y->terminal && x->cpu == y->cpu && x->mem == y->mem && x->eph == y->eph &&
           x->nzcpu == y->nzcpu && x->nzmem == y->nzmem && x->nscalar == y->nscalar &&
           memcmp(x->sid, y->sid, x->nscalar * sizeof(*x->sid)) == 0 &&
           memcmp(x->sv, y->sv, x->nscalar * sizeof(*x->sv)) == 0;
}

/* ---- the config document -------------------------------------------------- */

static int read_names(const trellis_value *list, const char *path, char ***out, size_t *n,
                      char *err, size_t errlen)
{
    int rc = values_expect(host, list, TRELLIS_VALUE_LIST, "a list of names", path, err, errlen);

    if (rc <= 0)
        return rc;
    *n = host->value_len(list);
    *out = calloc(*n ? *n : 1, sizeof(**out));
    if (!*out) {
        *n = 0;
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < *n; i++) {
        const char *s = values_scalar_text(host, host->value_at(list, i));

        if (!s) {
            snprintf(err, errlen, "%s[%zu]: expected a string", path, i);
            return -1;
        }
        (*out)[i] = values_strdup(s);
        if (!(*out)[i]) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
    }
    return 0;
}

static int member_int(const trellis_value *map, const char *key, const char *path, int64_t lo,
                      int64_t hi, int64_t *out, char *err, size_t errlen)
{
    const trellis_value *v = host->value_get(map, key);

    if (!v || host->value_int(v, out) < 0 || *out < lo || *out > hi) {
        snprintf(err, errlen, "%s.%s: expected an integer from %lld to %lld", path, key,
                 (long long)lo, (long long)hi);
        return -1;
    }
    return 0;
}

static int only_keys(const trellis_value *map, const char *path, const char *const *keys, char *err,
                     size_t errlen)
{
    size_t known = 0;

    for (size_t i = 0; keys[i]; i++)
        known += host->value_get(map, keys[i]) != NULL;
    if (host->value_len(map) != known) {
        snprintf(err, errlen, "%s: unknown member (expected only:", path);
        for (size_t i = 0; keys[i]; i++) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, " %s", keys[i]);
        }
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, ")");
        return -1;
    }
    return 0;
}

static int read_strategy(config *cfg, const trellis_value *ss, char *err, size_t errlen)
{
    static const char *const keys[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    const trellis_value *type, *res, *rtc;
    const char *t;
    int rc;

    rc = values_expect(host, ss, TRELLIS_VALUE_MAP, "a map {type, resources, ...}",
                       "config.scoringStrategy", err, errlen);
    if (rc <= 0)
        return rc;
    if (only_keys(ss, "config.scoringStrategy", keys, err, errlen) < 0)
        return -1;
    type = host->value_get(ss, "type");
    t = type ? host->value_string(type) : "LeastAllocated";
    if (t && strcmp(t, "LeastAllocated") == 0) {
        cfg->strategy = LEAST_ALLOCATED;
    } else if (t && strcmp(t, "MostAllocated") == 0) {
        cfg->strategy = MOST_ALLOCATED;
    } else if (t && strcmp(t, "RequestedToCapacityRatio") == 0) {
        cfg->strategy = REQUESTED_TO_CAPACITY;
    } else {
        snprintf(err, errlen,
                 "config.scoringStrategy.type: expected LeastAllocated, MostAllocated or "
                 "RequestedToCapacityRatio, got '%s'",
                 t ? t : "?");
        return -1;
    }
    res = host->value_get(ss, "resources");
    rc = values_expect(host, res, TRELLIS_VALUE_LIST, "a list of {name, weight}",
                       "config.scoringStrategy.resources", err, errlen);
    if (rc < 0)
        return -1;
    if (rc > 0) {
        if (host->value_len(res) == 0 || host->value_len(res) > MAX_SCORE_RES) {
            snprintf(err, errlen, "config.scoringStrategy.resources: expected 1 to %d resources",
                     MAX_SCORE_RES);
            return -1;
        }
        cfg->nscore = host->value_len(res);
        for (size_t i = 0; i < cfg->nscore; i++) {
            const trellis_value *e = host->value_at(res, i);
            const char *name = values_scalar_text(host, host->value_get(e, "name"));
            char path[96];

            snprintf(path, sizeof(path), "config.scoringStrategy.resources[%zu]", i);
            if (!name || !*name) {
                snprintf(err, errlen, "%s.name: expected a resource name", path);
                return -1;
            }
            cfg->score_weight[i] = 1;
            if (host->value_get(e, "weight") &&
                member_int(e, "weight", path, 1, 100, &cfg->score_weight[i], err, errlen) < 0)
                return -1;
            cfg->score_id[i] = intern_id(&cfg->ids, name);
            if (cfg->score_id[i] < 0) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            for (size_t k = 0; k < i; k++) {
                if (cfg->score_id[k] == cfg->score_id[i]) {
                    snprintf(err, errlen, "%s.name: '%s' is listed twice", path, name);
                    return -1;
                }
            }
        }
    }
    rtc = host->value_get(ss, "requestedToCapacityRatio");
    if (cfg->strategy == REQUESTED_TO_CAPACITY) {
        const trellis_value *shape = rtc ? host->value_get(rtc, "shape") : NULL;

        if (!shape || host->value_type(shape) != TRELLIS_VALUE_LIST ||
            host->value_len(shape) == 0 || host->value_len(shape) > MAX_SHAPE) {
            snprintf(err, errlen,
                     "config.scoringStrategy.requestedToCapacityRatio.shape: expected 1 to %d "
                     "points {utilization, score}",
                     MAX_SHAPE);
            return -1;
        }
        cfg->nshape = host->value_len(shape);
        for (size_t i = 0; i < cfg->nshape; i++) {
            const trellis_value *p = host->value_at(shape, i);
            char path[96];

            snprintf(path, sizeof(path),
                     "config.scoringStrategy.requestedToCapacityRatio.shape[%zu]", i);
            if (member_int(p, "utilization", path, 0, 100, &cfg->shape_u[i], err, errlen) < 0 ||
                member_int(p, "score", path, 0, 10, &cfg->shape_s[i], err, errlen) < 0)
                return -1;
            cfg->shape_s[i] *= TRELLIS_MAX_SCORE / 10; /* kube's MaxCustomPriorityScore */
            if (i > 0 && cfg->shape_u[i] <= cfg->shape_u[i - 1]) {
                snprintf(err, errlen, "%s.utilization: must be greater than the previous point's",
                         path);
                return -1;
            }
        }
    } else if (rtc) {
        snprintf(err, errlen,
                 "config.scoringStrategy.requestedToCapacityRatio: only with type "
                 "RequestedToCapacityRatio");
        return -1;
    }
    return 0;
}

static int read_config(config *cfg, const trellis_value *doc, char *err, size_t errlen)
{
    static const char *const keys[] = {"ignoredResources", "ignoredResourceGroups",
                                       "scoringStrategy", NULL};

    cfg->strategy = LEAST_ALLOCATED;
    cfg->nscore = 2;
    cfg->score_id[0] = PODRES_CPU;
    cfg->score_id[1] = PODRES_MEMORY;
    cfg->score_weight[0] = cfg->score_weight[1] = 1;
    if (!doc || host->value_type(doc) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "config: expected a map (NodeResourcesFitArgs), got %s",
                 values_type_name(host->value_type(doc)));
        return -1;
    }
    if (only_keys(doc, "config", keys, err, errlen) < 0 ||
        read_names(host->value_get(doc, "ignoredResources"), "config.ignoredResources",
                   &cfg->ignored, &cfg->nignored, err, errlen) < 0 ||
        read_names(host->value_get(doc, "ignoredResourceGroups"), "config.ignoredResourceGroups",
                   &cfg->groups, &cfg->ngroups, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < cfg->ngroups; i++) {
        if (strchr(cfg->groups[i], '/')) {
            snprintf(err, errlen,
                     "config.ignoredResourceGroups[%zu]: '%s' is a group, without "
                     "'/'",
                     i, cfg->groups[i]);
            return -1;
        }
    }
    return read_strategy(cfg, host->value_get(doc, "scoringStrategy"), err, errlen);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, config_free);
    if (podres_setup(h, args, &cfg->ids, &cfg->f, err, errlen) < 0 ||
        read_config(cfg, h->arg_document(args, "config"), err, errlen) < 0)
        return -1;
    for (size_t r = 0; r < cfg->nscore; r++) {
        int32_t id = cfg->score_id[r];

        cfg->score_scalar[r] =
            id >= PODRES_WELL_KNOWN && podres_is_scalar(intern_str(&cfg->ids, id));
        if (id >= PODRES_WELL_KNOWN)
            slot_for(cfg, id); /* score resources are counted from the start */
    }
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->declare_counters(self, C_N, amounts) < 0 ||
        h->declare_target_values(self, V_SCORE + (int)cfg->nscore, target_values) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_span(self, filter_span) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    if (name_counters(self, err, errlen) < 0)
        return -1;
    return trellis_hints_register(
        h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE | TRELLIS_EV_WORKLOAD_GONE, hint,
        err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-resources-fit",
    "1.0.0",
    "kube-scheduler's NodeResourcesFit: every requested resource fits; LeastAllocated, "
    "MostAllocated or RequestedToCapacityRatio scoring",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_resources_fit)
