/*
 * fx_failing_init.c - fixture: a plugin whose init fails.
 *
 * init returns -1 with the message "cannot reach the inventory service", as
 * a plugin that depends on an external service would at start-up. The host
 * must stop with that message, the plugin's name and the file and line of
 * the config entry that named it.
 */
#include <stdio.h>

#include "trellis/plugin.h"

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    snprintf(err, errlen, "cannot reach the inventory service");
    return -1;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-failing-init",
    "0.0.1",
    "fixture: init always fails",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
