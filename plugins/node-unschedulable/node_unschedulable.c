/*
 * node_unschedulable.c - the node-unschedulable plugin: kube-scheduler's
 * NodeUnschedulable.
 *
 * A Node whose spec.unschedulable is true (cordoned: `kubectl cordon`,
 * `trellis drain`) takes no new Pod, unless the Pod tolerates the taint
 * node.kubernetes.io/unschedulable:NoSchedule (as the node lifecycle
 * controller's taint would say; DaemonSet Pods carry that toleration).
 * UNRESOLVABLE: evicting Pods does not uncordon a Node.
 *
 * The Pod's verdict (tolerates or not) is computed once in prepare; a Pod
 * that tolerates skips the filter in pre_filter. The Node's flag is a
 * target value, so the columnar filter reads one integer per Node.
 */
/* the oldest host it runs on: it uses the columnar hooks of SDK 1.3 */
#define TRELLIS_PLUGIN_MIN_MINOR 3

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taints.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* The prepared data of a Pod that tolerates the unschedulable taint; Pods
 * that do not have none. Never freed (no release hook). */
static const int tolerates_marker = 1;

typedef struct config {
    const char *unschedulable_field; /* host-owned until fini */
    const char *tolerations_field;
} config;

static const trellis_arg_spec args_table[] = {
    {"unschedulable_field", TRELLIS_ARG_STRING, "spec.unschedulable",
     "dotted path of the target's boolean: true takes no new workload"},
    {"tolerations_field", TRELLIS_ARG_STRING, "spec.tolerations",
     "dotted path of the workload's tolerations"},
    {NULL, 0, NULL, NULL},
};

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    char key[] = "node.kubernetes.io/unschedulable", none[] = "";
    taint_item unschedulable = {key, none, 0, TAINT_NO_SCHEDULE, 0};
    taint_list *tols;
    int ok;

    *data = NULL;
    if (taints_parse_tolerations(host, host->object_get(obj, cfg->tolerations_field),
                                 cfg->tolerations_field, TAINT_SEMANTICS_KUBERNETES, &tols, err,
                                 errlen) < 0)
        return -1;
    ok = taints_tolerated(&unschedulable, tols, TAINT_SEMANTICS_KUBERNETES);
    taints_free(tols);
    if (ok)
        *data = (void *)&tolerates_marker;
    return 0;
}

/* 1 when the target is cordoned. A value that is not a boolean reads as
 * false, as a Node without the field. */
static int cordoned(const config *cfg, const trellis_object *target)
{
    const trellis_value *v = host->object_get(target, cfg->unschedulable_field);
    int b = 0;

    return v && host->value_bool(v, &b) == 0 && b;
}

static void target_values(trellis_plugin *self, const trellis_object *target, int64_t *out)
{
    out[0] = cordoned(host->get_private(self), target);
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    return host->object_data(self, workload) ? TRELLIS_SKIP : TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    if (host->object_data(self, workload) ||
        !cordoned(host->get_private(self), host->target_object(target)))
        return TRELLIS_SUCCESS;
    return host->status(st, TRELLIS_UNRESOLVABLE, "NodeUnschedulable",
                        "node(s) were unschedulable");
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const int64_t *flag = host->cycle_target_values(c, self, 0);

    if (!flag || host->object_data(self, workload))
        return;
    flag += first;
    for (size_t w = 0; w < (n + 63) / 64; w++) {
        size_t cnt = n - w * 64 < 64 ? n - w * 64 : 64;
        uint64_t bad = 0;

        for (size_t j = 0; j < cnt; j++)
            bad |= (uint64_t)(flag[w * 64 + j] != 0) << j;
        pass[w] &= ~bad;
    }
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *target)
{
    return !host->object_data(self, workload) && cordoned(host->get_private(self), target);
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Pods that both tolerate, or both do not, get the same verdicts. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    return !host->object_data(self, a) == !host->object_data(self, b);
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
    h->set_private(self, cfg, free);
    cfg->unschedulable_field = h->arg_string(args, "unschedulable_field");
    cfg->tolerations_field = h->arg_string(args, "tolerations_field");
    if (values_check_path("unschedulable_field", cfg->unschedulable_field, err, errlen) < 0 ||
        values_check_path("tolerations_field", cfg->tolerations_field, err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 ||
        h->declare_target_values(self, 1, target_values) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-unschedulable",
    "1.0.0",
    "kube-scheduler's NodeUnschedulable: cordoned targets take only workloads that tolerate "
    "node.kubernetes.io/unschedulable",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_unschedulable)
