/*
 * resources_fit.c - the resources-fit plugin: a target fits a workload when
 * every resource it requests is still free there.
 *
 * Kubernetes' NodeResourcesFit filter. The counted resources come from the
 * `resources` argument ("cpu,memory,pods" by default); each workload's
 * effective request and each target's allocatable are computed once, in
 * prepare (common/resources.c). The host keeps the per-target sums of the
 * requests of assigned and assumed workloads in this plugin's counters, so
 * the filter compares three arrays and allocates nothing.
 *
 * A resource the workload does not request is not checked; "pods" is
 * always requested (one per workload). A target that lacks the resource,
 * or whose allocatable is below the request even when empty, is rejected
 * as UNRESOLVABLE (no eviction can help there); a target that is merely
 * full right now is UNSCHEDULABLE, so preemption may free it.
 *
 * Queueing hints: a rejected workload may fit after a target appears that
 * could hold it when empty, after a target's allocatable grows for a
 * resource the workload requests (and still holds the request), or after
 * an assigned workload that used such a resource goes away.
 */
/* the oldest host it runs on: it uses the columnar hooks of SDK 1.3 */
#define TRELLIS_PLUGIN_MIN_MINOR 3

#include <stdio.h>

#include "trellis/helpers.h"
#include "resources.h"
#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static const trellis_arg_spec args_table[] = {
    {"resources", TRELLIS_ARG_STRING_LIST, "cpu,memory,pods",
     "resources to check; the order gives each its counter index"},
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

static void allocated(trellis_plugin *self, const trellis_object *target,
                      const trellis_object *const *placed, size_t n, int64_t *used,
                      int64_t *allocatable)
{
    res_allocatable(host, self, target, allocatable);
}

/* Index of the first resource that does not fit, -1 when all do.
 * *unresolvable tells whether it would not fit on the empty target. */
static int first_insufficient(const res_config *cfg, const res_amounts *req,
                              const res_amounts *alloc, const int64_t *used, int *unresolvable)
{
    for (size_t i = 0; i < cfg->n; i++) {
        int64_t r = req->v[i], a, u;

        if (r <= 0)
            continue;
        if (!alloc || !res_has(alloc, i) || r > alloc->v[i]) {
            *unresolvable = 1;
            return (int)i;
        }
        a = alloc->v[i];
        u = used ? used[i] : 0;
        if (u > a || r > a - u) {
            *unresolvable = 0;
            return (int)i;
        }
    }
    return -1;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    const res_amounts *alloc = host->object_data(self, host->target_object(target));
    const int64_t *used = host->target_counters(self, target);
    char rq[32], us[32], al[32];
    int unresolvable = 0, i;
    trellis_code code;

    if (!req)
        return TRELLIS_SUCCESS;
    i = first_insufficient(cfg, req, alloc, used, &unresolvable);
    if (i < 0)
        return TRELLIS_SUCCESS;
    code = unresolvable ? TRELLIS_UNRESOLVABLE : TRELLIS_UNSCHEDULABLE;
    res_format(req->v[i], cfg->unit[i], rq, sizeof(rq));
    if (!alloc || !res_has(alloc, i)) {
        host->status(st, code, "InsufficientResources",
                     "insufficient %s: requested %s, the target has no "
                     "allocatable %s",
                     cfg->names[i], rq, cfg->names[i]);
        return code;
    }
    res_format(used ? used[i] : 0, cfg->unit[i], us, sizeof(us));
    res_format(alloc->v[i], cfg->unit[i], al, sizeof(al));
    host->status(st, code, "InsufficientResources", "insufficient %s: requested %s, used %s of %s",
                 cfg->names[i], rq, us, al);
    return code;
}

/* filter_span: first_insufficient over 64 targets at a time, one
 * requested resource after the other, from the allocatable amounts kept
 * as target values (-1 when the target does not declare the resource) and
 * the usage columns. A target fails when allocatable - used < request: an
 * undeclared resource (-1) fails every positive request, and used > 0, so
 * this is first_insufficient's test without a branch. */
static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    const int64_t *alloc[RES_MAX], *used[RES_MAX];
    int64_t want[RES_MAX];
    size_t m = 0;

    if (!req)
        return;
    for (size_t i = 0; i < cfg->n; i++) {
        if (req->v[i] <= 0)
            continue;
        alloc[m] = host->cycle_target_values(c, self, (int)i);
        used[m] = host->cycle_target_counter(c, self, (int)i);
        want[m] = req->v[i];
        if (!alloc[m] || !used[m])
            return; /* declared in init: the host always has them */
        m++;
    }
    for (size_t w = 0; w < (n + 63) / 64 && m; w++) {
        size_t b = first + w * 64, cnt = n - w * 64 < 64 ? n - w * 64 : 64;
        uint64_t bad = 0;

        if (!pass[w])
            continue;
        for (size_t k = 0; k < m; k++) {
            const int64_t *a = alloc[k] + b, *u = used[k] + b;
            int64_t r = want[k];

            for (size_t j = 0; j < cnt; j++)
                bad |= (uint64_t)(a[j] - u[j] < r) << j;
        }
        pass[w] &= ~bad;
    }
}

/* Target values: allocatable per resource, -1 when not declared. */
static void target_values(trellis_plugin *self, const trellis_object *target, int64_t *out)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *alloc = host->object_data(self, target);

    for (size_t i = 0; i < cfg->n; i++)
        out[i] = alloc && res_has(alloc, i) ? alloc->v[i] : -1;
}

/* Whether a target change may free room for req: the new target holds req
 * when empty, and it is new or its allocatable grew for a resource req
 * needs. The target's usage does not change with the target object. */
static int target_grew(const res_config *cfg, const res_amounts *req, const res_amounts *before,
                       const res_amounts *after)
{
    int unresolvable;

    if (!after || first_insufficient(cfg, req, after, NULL, &unresolvable) >= 0)
        return 0;
    if (!before)
        return 1;
    for (size_t i = 0; i < cfg->n; i++) {
        if (req->v[i] > 0 && res_has(after, i) &&
            (!res_has(before, i) || after->v[i] > before->v[i]))
            return 1;
    }
    return 0;
}

/* Whether the workload that went away (prepared as `gone`, NULL when its
 * requests could not be read) used a resource req needs: the counters
 * gave it its requests and one pod, see res_counter_amounts. */
static int frees_needed(const res_config *cfg, const res_amounts *req, const res_amounts *gone)
{
    for (size_t i = 0; i < cfg->n; i++) {
        int64_t freed = (int)i == cfg->pods_index ? 1 : gone ? gone->v[i] : 0;

        if (req->v[i] > 0 && freed > 0)
            return 1;
    }
    return 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);

    if (!req)
        return TRELLIS_QUEUE;
    switch (event) {
    case TRELLIS_EV_TARGET_ADD:
    case TRELLIS_EV_TARGET_UPDATE:
        if (!new_obj)
            return TRELLIS_QUEUE;
        return target_grew(cfg, req, old_obj ? host->object_data(self, old_obj) : NULL,
                           host->object_data(self, new_obj))
                   ? TRELLIS_QUEUE
                   : TRELLIS_QUEUE_SKIP;
    case TRELLIS_EV_WORKLOAD_GONE:
        if (!old_obj)
            return TRELLIS_QUEUE;
        return frees_needed(cfg, req, host->object_data(self, old_obj)) ? TRELLIS_QUEUE
                                                                        : TRELLIS_QUEUE_SKIP;
    }
    return TRELLIS_QUEUE;
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
    if (res_plugin_init(h, self, args, "resources", prepare_workload, prepare_target, amounts, err,
                        errlen) < 0 ||
        res_name_counters(h, self, allocated, err, errlen) < 0)
        return -1;
    if (h->register_filter(self, filter) < 0 || h->register_filter_span(self, filter_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0 ||
        h->declare_target_values(self, (int)((const res_config *)h->get_private(self))->n,
                                 target_values) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(
        h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE | TRELLIS_EV_WORKLOAD_GONE, hint,
        err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "resources-fit",
    "1.1.0",
    "rejects targets without enough free allocatable for the workload's "
    "requests",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, resources_fit)
