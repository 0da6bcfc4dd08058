/*
 * fx_dup_b.c - fixture: one of two plugin files declaring the same name.
 *
 * fx_dup_a.c and fx_dup_b.c both call themselves "fx-dup". A config that
 * loads both (by explicit path) must be refused with "duplicate plugin
 * name", because hooks, arguments and log lines are all keyed by name.
 */
#include "trellis/plugin.h"

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-dup",
    "0.0.1",
    "fixture: shares its name with another plugin file (b)",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
