/*
 * fx_sdk11.c - fixture: a plugin built against the frozen SDK 1.1 header
 * (tests/sdk-1.1), as a plugin compiled years ago would be.
 *
 * A filter that rejects targets labelled `fx-sdk11/avoid: "true"` (reason
 * Avoided), and that, through lookup_object (new in 1.1), also rejects
 * every target when a ConfigMap fx-sdk11/stop exists in namespace
 * default (reason Stopped). tests/abi.sh loads it into the current host:
 * its descriptor says 1.1, and the host table it calls keeps the offsets
 * the 1.1 header gave them.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "trellis/plugin.h"

#if TRELLIS_SDK_MINOR != 1
#error "fx-sdk11 must be built against tests/sdk-1.1"
#endif

static const trellis_host *host;

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const char *avoid = host->object_label(host->target_object(target), "fx-sdk11/avoid");
    (void)c;
    (void)workload;
    if (host->lookup_object(self, "ConfigMap", "default", "fx-sdk11-stop"))
        return host->status(st, TRELLIS_UNSCHEDULABLE, "Stopped", "fx-sdk11-stop exists");
    if (avoid && strcmp(avoid, "true") == 0)
        return host->status(st, TRELLIS_UNRESOLVABLE, "Avoided", "the target asks to be avoided");
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    (void)args;
    host = h;
    if (h->register_filter(self, filter) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-sdk11",
    "0.0.1",
    "fixture: built against the SDK 1.1 header",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
