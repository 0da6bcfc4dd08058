/*
 * fx_narrow.c - fixture: a pre-filter that narrows the cycle (cycle_narrow,
 * SDK 1.7, kube-scheduler's PreFilterResult).
 *
 * A workload labelled pool=P is narrowed to the targets labelled pool=P
 * (none when no target is). Its plain filter rejects a target whose pool
 * label is another ("OtherPool"), so that a target left out is explained
 * by it; a target with no pool label passes it, so one left out is
 * explained in the host's words (NotInPreFilterResult). A workload
 * without the label is not narrowed. It checks the host's guards as it
 * goes: a position out of range is refused in pre_filter (and narrows
 * nothing), and so is any narrowing in pre_score: a guard that lets it
 * through ends the cycle with an error, which the decisions show.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    const char *pool = host->object_label(w, "pool");
    size_t n = host->cycle_target_count(c);
    uint32_t bad = (uint32_t)n;
    if (host->cycle_narrow(c, self, &bad, 1) == 0)
        return host->status(st, TRELLIS_ERROR, "GuardMissing",
                            "cycle_narrow took a position out of range");
    if (!pool)
        return TRELLIS_SUCCESS;
    uint32_t *idx = host->cycle_alloc(c, (n ? n : 1) * sizeof *idx);
    if (!idx)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    size_t m = 0;
    for (size_t i = n; i-- > 0;) { /* any order will do */
        const char *tp = host->object_label(host->target_object(host->cycle_target(c, i)), "pool");
        if (tp && strcmp(tp, pool) == 0)
            idx[m++] = (uint32_t)i;
    }
    if (host->cycle_narrow(c, self, idx, m) < 0)
        return host->status(st, TRELLIS_ERROR, "NarrowRefused", "cycle_narrow refused");
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    (void)self;
    (void)c;
    const char *pool = host->object_label(w, "pool");
    const char *tp = host->object_label(host->target_object(t), "pool");
    if (pool && tp && strcmp(tp, pool) != 0)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "OtherPool", "%s is in pool %s, not %s",
                            host->target_name(t), tp, pool);
    return TRELLIS_SUCCESS;
}

/* cycle_narrow outside pre_filter is refused. */
static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    (void)w;
    (void)feasible;
    (void)n;
    if (host->cycle_narrow(c, self, NULL, 0) == 0)
        return host->status(st, TRELLIS_ERROR, "GuardMissing", "cycle_narrow worked in pre_score");
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    (void)args;
    host = h;
    if (h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_pre_score(self, pre_score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-narrow",
    "0.0.1",
    "fixture: a pre-filter that narrows the cycle to the workload's pool",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
