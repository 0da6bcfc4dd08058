/*
 * fx_bad_score.c - fixture: a score plugin that scores outside 0..100.
 *
 * The filter passes every target; score returns 150 for each and there is
 * no normalize to bring it back into range. The host must not let such a
 * score outweigh the other plugins: the workload's decision is "error" with
 * a message naming this plugin and the allowed range. The host only scores
 * when two or more targets are feasible, so a test needs at least two.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trellis/plugin.h"

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = 150;
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    if (h->register_filter(self, filter) < 0 || h->register_score(self, score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-bad-score",
    "0.0.1",
    "fixture: scores every target 150 with no normalize",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
