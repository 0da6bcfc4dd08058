/*
 * scheduling_gates.c - the scheduling-gates plugin: kube-scheduler's
 * SchedulingGates (pkg/scheduler/framework/plugins/schedulinggates).
 *
 * A Pod whose spec.schedulingGates lists any gate is not tried: the
 * plugin's pre_enqueue holds it back, so it gets no cycle, no decision and
 * no FailedScheduling Event, and the host counts it in the profile's gated
 * queue (trellis_pending_workloads{queue="gated"}, kube's
 * scheduler_pending_pods{queue="gated"}). Whoever owns the gates removes
 * them (the Pod changes); the host asks again then and queues it. Each
 * gate must be a map with a name, as the API server validates it; a
 * malformed list is the Pod's error.
 */
/* the oldest host it runs on: SDK 1.4, the first with pre_enqueue */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdio.h>
#include <stdlib.h>

#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *field; /* host-owned */
} config;

static const trellis_arg_spec args_table[] = {
    {"gates_field", TRELLIS_ARG_STRING, "spec.schedulingGates",
     "dotted path of the workload's list of gates ({name}); a non-empty list holds it back"},
    {NULL, 0, NULL, NULL},
};

/* The number of gates of w (0 when absent, null or empty), or -1 with err
 * when the list is malformed. */
static int gates(const config *cfg, const trellis_object *w, char *err, size_t errlen)
{
    const trellis_value *g = host->object_get(w, cfg->field);
    int rc =
        values_expect(host, g, TRELLIS_VALUE_LIST, "a list of {name}", cfg->field, err, errlen);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < host->value_len(g); i++) {
        const trellis_value *e = host->value_at(g, i);
        const trellis_value *n =
            host->value_type(e) == TRELLIS_VALUE_MAP ? host->value_get(e, "name") : NULL;
        const char *name =
            n && host->value_type(n) == TRELLIS_VALUE_STRING ? host->value_string(n) : NULL;

        if (!name || !*name) {
            snprintf(err, errlen, "%s[%zu]: expected a gate {name: ...}", cfg->field, i);
            return -1;
        }
    }
    return (int)host->value_len(g);
}

/* Only checks the gates: a malformed list is the workload's error. */
static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    *data = NULL;
    return gates(host->get_private(self), obj, err, errlen) < 0 ? -1 : 0;
}

static int pre_enqueue(trellis_plugin *self, const trellis_object *w)
{
    char err[TRELLIS_MESSAGE_MAX];

    /* a malformed list is not held back: its cycle reports the error */
    return gates(host->get_private(self), w, err, sizeof(err)) > 0 ? TRELLIS_SKIP : TRELLIS_SUCCESS;
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
    cfg->field = h->arg_string(args, "gates_field");
    if (values_check_path("gates_field", cfg->field, err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_pre_enqueue(self, pre_enqueue) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "scheduling-gates",
    "1.0.0",
    "kube-scheduler's SchedulingGates: holds Pods with spec.schedulingGates back (the gated "
    "queue) until the gates are removed",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, scheduling_gates)
