/*
 * fx_wrong_major.c - fixture: a plugin that claims to be built against the
 * next major SDK.
 *
 * The descriptor header is written by hand instead of TRELLIS_DESC_HEADER so
 * that sdk_major can be TRELLIS_SDK_MAJOR + 1. The host must refuse it before
 * reading anything past the first three fields, with a message naming both
 * versions and saying that the major differs.
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
    TRELLIS_SDK_MAJOR + 1,
    0,
    "fx-wrong-major",
    "0.0.1",
    "fixture: built against a future major SDK",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
