/*
 * least_allocated.c - the least-allocated plugin: prefer the targets with
 * the largest share of their allocatable still free.
 *
 * Kubernetes' NodeResourcesFit scoring with the LeastAllocated strategy and
 * equal weights: for each resource of `score_resources`,
 * (allocatable - (used + request)) * 100 / allocatable, 0 when the target
 * does not declare the resource or would be over-committed, averaged over
 * the resources. Requests, allocatable and per-target sums come from
 * common/resources.c and this plugin's own host counters, exactly as in
 * resources-fit; the score is already 0..100, so there is no normalize.
 */
/* the oldest host it runs on: it uses the columnar hooks of SDK 1.3 */
#define TRELLIS_PLUGIN_MIN_MINOR 3

#include <stdio.h>
#include <string.h>

#include "resources.h"
#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static const trellis_arg_spec args_table[] = {
    {"score_resources", TRELLIS_ARG_STRING_LIST, "cpu,memory",
     "resources whose free share is averaged, with equal weights"},
    RES_FIELD_ARGS,
    {NULL, 0, NULL, NULL},
};

/* The hooks common/resources.c implements, given this plugin's host. */
static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    return res_prepare_workload(host, self, obj, data, err, errlen);
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    return res_prepare_target(host, self, obj, data, err, errlen);
}

static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    res_counter_amounts(host, self, workload, out);
}

/* free * 100 / alloc for amounts too large for res_div, without
 * overflowing near the int64 range (exabytes), where the precision lost by
 * going through long double is far below one point. Out of line: the hot
 * loop never gets here for real-sized amounts. */
static __attribute__((noinline)) int64_t large_share(int64_t free_amount, int64_t alloc)
{
    if (free_amount <= INT64_MAX / TRELLIS_MAX_SCORE)
        return free_amount * TRELLIS_MAX_SCORE / alloc;
    return (int64_t)((long double)free_amount * TRELLIS_MAX_SCORE / alloc);
}

/* free * 100 / alloc of one resource, recip being 1.0 / alloc: a resource
 * the target does not declare (or declares as 0), or that the workload
 * would over-commit, adds 0. */
static inline int64_t free_share(int64_t alloc, int64_t used, int64_t req, double recip)
{
    int64_t free_amount = alloc - used - req;

    if (alloc <= 0 || free_amount < 0)
        return 0;
    if (free_amount < RES_DIV_EXACT / TRELLIS_MAX_SCORE)
        return res_div(free_amount * TRELLIS_MAX_SCORE, alloc, recip);
    return large_share(free_amount, alloc);
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    const res_amounts *alloc = host->object_data(self, host->target_object(target));
    const int64_t *used = host->target_counters(self, target);
    int64_t total = 0;

    for (size_t i = 0; alloc && i < cfg->n; i++) {
        int64_t a = res_has(alloc, i) ? alloc->v[i] : 0;

        total +=
            free_share(a, used ? used[i] : 0, req ? req->v[i] : 0, a > 0 ? 1.0 / (double)a : 0.0);
    }
    *out = total / (int64_t)cfg->n;
    return TRELLIS_SUCCESS;
}

/* Target values: per resource the allocatable (0 when not declared), then
 * per resource 1.0 / allocatable as a double's bits, so that the span
 * divides by nothing. */
static void target_values(trellis_plugin *self, const trellis_object *target, int64_t *out)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *alloc = host->object_data(self, target);

    for (size_t i = 0; i < cfg->n; i++) {
        int64_t a = alloc && res_has(alloc, i) ? alloc->v[i] : 0;
        double recip = a > 0 ? 1.0 / (double)a : 0.0;

        out[i] = a;
        memcpy(&out[cfg->n + i], &recip, sizeof(recip));
    }
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    const int64_t *alloc[RES_MAX], *used[RES_MAX];
    const double *recip[RES_MAX];
    double recip_n = 1.0 / (double)cfg->n;

    for (size_t i = 0; i < cfg->n; i++) {
        const int64_t *r = host->cycle_target_values(c, self, (int)(cfg->n + i));

        alloc[i] = host->cycle_target_values(c, self, (int)i);
        used[i] = host->cycle_target_counter(c, self, (int)i);
        /* the column holds doubles' bits, written with memcpy above */
        recip[i] = (const double *)(const void *)r;
        if (!alloc[i] || !used[i] || !r)
            return; /* declared in init: the host always has them */
    }
    for (size_t j = 0; j < n; j++) {
        uint32_t t = idx[j];
        int64_t total = 0;

        for (size_t i = 0; i < cfg->n; i++)
            total += free_share(alloc[i][t], used[i][t], req ? req->v[i] : 0, recip[i][t]);
        scores[j] = res_div(total, (int64_t)cfg->n, recip_n);
    }
}

/* Two workloads requesting the same amounts get the same verdicts. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    return res_equivalent(host, self, a, b);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (res_plugin_init(h, self, args, "score_resources", prepare_workload, prepare_target, amounts,
                        err, errlen) < 0)
        return -1;
    if (h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0 ||
        h->declare_target_values(self, 2 * (int)((const res_config *)h->get_private(self))->n,
                                 target_values) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "least-allocated",
    "1.0.0",
    "prefers targets with the largest free share of their allocatable",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, least_allocated)
