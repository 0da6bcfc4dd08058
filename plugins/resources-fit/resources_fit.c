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
#include <stdio.h>

#include "batch.h"
#include "hints.h"
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

/* Index of the first resource that does not fit, -1 when all do.
 * *unresolvable tells whether it would not fit on the empty target. */
static int first_insufficient(const res_config *cfg, const res_amounts *req,
                              const res_amounts *alloc, const int64_t *used, int *unresolvable)
{
    for (size_t i = 0; i < cfg->n; i++) {
        int64_t r = req->v[i], a, u;

        if (r <= 0)
            continue;
        if (!alloc || !alloc->has[i] || r > alloc->v[i]) {
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
    if (!alloc || !alloc->has[i]) {
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

static int batch_rejects(trellis_plugin *self, const void *cfg, const void *req,
                         const trellis_target *t)
{
    int unresolvable;

    return first_insufficient(cfg, req, host->object_data(self, host->target_object(t)),
                              host->target_counters(self, t), &unresolvable) >= 0;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const res_amounts *req = host->object_data(self, workload);

    if (req)
        batch_clear_rejected(self, host->get_private(self), req, targets, n, pass, batch_rejects);
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
        if (req->v[i] > 0 && after->has[i] && (!before->has[i] || after->v[i] > before->v[i]))
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

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (res_plugin_init(h, self, args, "resources", prepare_workload, prepare_target, amounts, err,
                        errlen) < 0)
        return -1;
    if (h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return hints_register(
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

TRELLIS_PLUGIN(desc)
