/*
 * fx_reject_all.c - fixture: a filter that rejects every target.
 *
 * Every target is UNSCHEDULABLE with reason "RejectAll", so every workload
 * of a profile using it is unschedulable (not an error), and the host's
 * summary message counts the targets under that reason. It registers a
 * batch filter too, which clears every bit: the host asks the plain filter
 * for the reasons of what the batch filter rejected, so the two must agree.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    host->status(st, TRELLIS_UNSCHEDULABLE, "RejectAll", "fx-reject-all rejects every target");
    return TRELLIS_UNSCHEDULABLE;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    for (size_t i = 0; i < n; i++)
        pass[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-reject-all",
    "0.0.1",
    "fixture: rejects every target (RejectAll)",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
