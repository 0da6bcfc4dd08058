/*
 * node_name.c - the node-name plugin: kube-scheduler's NodeName.
 *
 * kube-scheduler's NodeName filter passes a Node when the Pod's
 * spec.nodeName is empty or names that Node. A Pod whose spec.nodeName is
 * set never reaches kube-scheduler at all: the kubelet of that Node runs
 * it. In a trellis profile whose binding field is spec.nodeName (the kube
 * profile) the same holds: a workload with the field set is bound, not
 * pending, so this plugin has nothing to check and sits every cycle out
 * (pre_filter SKIP). It matters in a profile that binds through another
 * field or through binding objects while workloads may name their target
 * in `field`: then only the named target fits (UNRESOLVABLE elsewhere).
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *field; /* host-owned until fini */
    int is_binding;    /* field is the profile's binding field */
} config;

static const trellis_arg_spec args_table[] = {
    {"field", TRELLIS_ARG_STRING, "spec.nodeName",
     "dotted path of the target name a workload may ask for"},
    {NULL, 0, NULL, NULL},
};

/* The requested name, copied (NULL when empty or absent). */
static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    const trellis_value *v = host->object_get(obj, cfg->field);
    const char *name;

    *data = NULL;
    if (!v || host->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(v) != TRELLIS_VALUE_STRING) {
        snprintf(err, errlen, "%s: expected a string, got %s", cfg->field,
                 values_type_name(host->value_type(v)));
        return -1;
    }
    name = host->value_string(v);
    if (!name || !*name)
        return 0;
    *data = values_strdup(name);
    if (!*data) {
        snprintf(err, errlen, "%s: out of memory", cfg->field);
        return -1;
    }
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);

    if (cfg->is_binding || !host->object_data(self, workload))
        return TRELLIS_SKIP;
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const char *want = host->object_data(self, workload);

    if (cfg->is_binding || !want || strcmp(want, host->target_name(target)) == 0)
        return TRELLIS_SUCCESS;
    return host->status(st, TRELLIS_UNRESOLVABLE, "NodeNameMismatch",
                        "node(s) didn't match the requested node name %s", want);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *target)
{
    const config *cfg = host->get_private(self);
    const char *want = host->object_data(self, workload);

    return !cfg->is_binding && want && strcmp(want, host->object_name(target)) != 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const char *x = host->object_data(self, a), *y = host->object_data(self, b);

    return x == y || (x && y && strcmp(x, y) == 0);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;
    const char *binding;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, free);
    cfg->field = h->arg_string(args, "field");
    if (values_check_path("field", cfg->field, err, errlen) < 0)
        return -1;
    binding = h->binding_field(self);
    cfg->is_binding = binding && strcmp(binding, cfg->field) == 0;
    if (h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    if (!cfg->is_binding && (h->register_prepare_workload(self, prepare_workload) < 0 ||
                             h->register_release(self, release) < 0)) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD, hint, err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-name",
    "1.0.0",
    "kube-scheduler's NodeName: a workload that names its target fits only there",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_name)
