/*
 * fx_newer_minor.c - fixture: a plugin built against a newer minor SDK
 * than the host's.
 *
 * A plugin may use host functions added in its minor version, so the host
 * must refuse a plugin whose sdk_minor is greater than its own, saying the
 * plugin needs a newer host.
 */
#include <stddef.h>

#include "trellis/plugin.h"

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    /* never reached: the loader refuses the descriptor first */
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    sizeof(trellis_plugin_desc),
    TRELLIS_SDK_MAJOR,
    TRELLIS_SDK_MINOR + 1,
    "fx-newer-minor",
    "0.0.1",
    "fixture: built against a newer minor SDK than the host's",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
