/*
 * gardener_self_hosted.c - the gardener-self-hosted plugin: self-hosted
 * shoots are not the scheduler's.
 *
 * A self-hosted shoot runs its control plane on its own machines: one of
 * its worker pools has spec.provider.workers[].controlPlane set. It needs
 * no seed, and current Gardener's scheduler does not look at it (the
 * predicate ShootIsNotSelfHosted of pkg/scheduler/controller/shoot/add.go,
 * with v1beta1helper.IsShootSelfHosted). This plugin's pre_enqueue says the
 * same to the host: such a shoot gets no decision and no Event, and is
 * asked again whenever it changes. The design document has no self-hosted
 * shoots, so the plugin is only in the current profile.
 */
/* the oldest host it runs on: SDK 1.4, the first with pre_enqueue */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdio.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static const trellis_arg_spec args_table[] = {
    {NULL, 0, NULL, NULL},
};

/* Whether a worker pool of the shoot has spec.provider.workers[].controlPlane
 * (present and not null, as Gardener's pointer is set). */
static int self_hosted(const trellis_object *shoot)
{
    const trellis_value *w = host->object_get(shoot, "spec.provider.workers");

    if (!w || host->value_type(w) != TRELLIS_VALUE_LIST)
        return 0;
    for (size_t i = 0; i < host->value_len(w); i++) {
        const trellis_value *pool = host->value_at(w, i);
        const trellis_value *cp = pool && host->value_type(pool) == TRELLIS_VALUE_MAP
                                      ? host->value_get(pool, "controlPlane")
                                      : NULL;

        if (cp && host->value_type(cp) != TRELLIS_VALUE_NULL)
            return 1;
    }
    return 0;
}

static int pre_enqueue(trellis_plugin *self, const trellis_object *w)
{
    (void)self;
    return self_hosted(w) ? TRELLIS_SKIP : TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    (void)args;
    host = h;
    if (h->register_pre_enqueue(self, pre_enqueue) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-self-hosted",
    "1.0.0",
    "leaves self-hosted shoots (a worker pool with controlPlane) alone, as current Gardener does",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_self_hosted)
