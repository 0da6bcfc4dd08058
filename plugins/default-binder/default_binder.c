/*
 * default_binder.c - the default-binder plugin: binding is writing the
 * target's name into the workload.
 *
 * Kubernetes' DefaultBinder creates a Binding, which sets spec.nodeName; in
 * trellis the store does the same to the workload's manifest. The field is
 * the profile's binding field unless the `field` argument names another
 * one. A store failure fails the binding cycle, and the host then unreserves
 * and requeues the workload.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *field; /* host-owned; "" means the profile's binding field */
} config;

static const trellis_arg_spec args_table[] = {
    {"field", TRELLIS_ARG_STRING, "",
     "dotted path written with the target's name; empty: the profile's "
     "binding field"},
    {NULL, 0, NULL, NULL},
};

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const char *field = cfg->field[0] ? cfg->field : host->binding_field(self);
    char err[TRELLIS_MESSAGE_MAX];

    err[0] = '\0';
    if (!cfg->field[0] && TRELLIS_HOST_HAS(host, store_bind)) {
        /* the profile's binding model: one field, or name and namespace
         * fields, through a subresource */
        if (host->store_bind(self, workload, target, err, sizeof(err)) < 0) {
            host->status(st, TRELLIS_ERROR, "BindFailed", "%s",
                         err[0] ? err : "the store refused the change");
            return TRELLIS_ERROR;
        }
        return TRELLIS_SUCCESS;
    }
    /* a namespaced target is named namespace/name (1.4); a 1.0 host knows
     * cluster-scoped targets only */
    const char *name =
        TRELLIS_HOST_HAS(host, target_key) ? host->target_key(target) : host->target_name(target);
    if (host->store_set_field(self, workload, field, name, err, sizeof(err)) < 0) {
        host->status(st, TRELLIS_ERROR, "BindFailed", "%s",
                     err[0] ? err : "the store refused the change");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    const char *field;
    config *cfg;

    host = h;
    field = h->arg_string(args, "field");
    cfg = malloc(sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->field = field ? field : "";
    h->set_private(self, cfg, free);

    if (h->register_bind(self, bind) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "default-binder",
    "1.0.0",
    "binds by writing the target's name into the workload's binding field",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, default_binder)
