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
#include <stdio.h>

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

/* free * 100 / alloc for 0 <= free <= alloc, without overflowing for
 * allocatable amounts near the int64 range (exabytes), where the
 * precision lost by going through long double is far below one point. */
static int64_t share(int64_t free_amount, int64_t alloc)
{
    if (free_amount <= INT64_MAX / TRELLIS_MAX_SCORE)
        return free_amount * TRELLIS_MAX_SCORE / alloc;
    return (int64_t)((long double)free_amount * TRELLIS_MAX_SCORE / alloc);
}

static int64_t least_allocated(const trellis_plugin *self, const trellis_object *workload,
                               const trellis_target *t)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    const res_amounts *alloc = host->object_data(self, host->target_object(t));
    const int64_t *used = host->target_counters(self, t);
    int64_t total = 0;

    if (!alloc)
        return 0;
    for (size_t i = 0; i < cfg->n; i++) {
        int64_t a = alloc->v[i], r = req ? req->v[i] : 0;
        int64_t u = used ? used[i] : 0;

        if (!alloc->has[i] || a <= 0 || u > a || r > a - u)
            continue;
        total += share(a - u - r, a);
    }
    return total / (int64_t)cfg->n;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = least_allocated(self, workload, target);
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    for (size_t i = 0; i < n; i++)
        scores[i] = least_allocated(self, workload, targets[i]);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (res_plugin_init(h, self, args, "score_resources", prepare_workload, prepare_target, amounts,
                        err, errlen) < 0)
        return -1;
    if (h->register_score(self, score) < 0 || h->register_score_batch(self, score_batch) < 0) {
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

TRELLIS_PLUGIN(desc)
