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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const res_config *cfg = host->get_private(self);
    res_amounts *a = malloc(sizeof(*a));

    *data = NULL;
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (res_workload_requests(host, cfg, obj, a, err, errlen) < 0) {
        free(a);
        return -1;
    }
    *data = a;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const res_config *cfg = host->get_private(self);
    res_amounts *a = malloc(sizeof(*a));

    *data = NULL;
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (res_target_allocatable(host, cfg, obj, a, err, errlen) < 0) {
        free(a);
        return -1;
    }
    *data = a;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

/* A workload whose requests could not be read still takes a pod slot. */
static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);

    for (size_t i = 0; i < cfg->n; i++)
        out[i] = req ? req->v[i] : 0;
    if (cfg->pods_index >= 0)
        out[cfg->pods_index] = 1;
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

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const res_config *cfg = host->get_private(self);
    const res_amounts *req = host->object_data(self, workload);
    int unresolvable;

    if (!req)
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t bit = UINT64_C(1) << (i % 64);
        const trellis_target *t = targets[i];

        if (!(pass[i / 64] & bit))
            continue;
        if (first_insufficient(cfg, req, host->object_data(self, host->target_object(t)),
                               host->target_counters(self, t), &unresolvable) >= 0)
            pass[i / 64] &= ~bit;
    }
}

static void free_config(void *p)
{
    free(p);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    res_config *cfg;

    host = h;
    cfg = malloc(sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (res_config_read(h, args, "resources", cfg, err, errlen) < 0) {
        free(cfg);
        return -1;
    }
    h->set_private(self, cfg, free_config);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 ||
        h->declare_counters(self, (int)cfg->n, amounts) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "resources-fit",
    "1.0.0",
    "rejects targets without enough free allocatable for the workload's "
    "requests",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN(desc)
