/*
 * fx_lease.c - fixture: a filter whose verdicts depend on the run's clock.
 *
 * A target annotated fx.trellis.io/usable-from (RFC 3339) is rejected
 * ("NotYetUsable") before that time, and the plugin asks the host to try
 * the workload again then (cycle_retry_at); a target annotated
 * fx.trellis.io/lease-until is rejected ("LeaseExpired") from that time on.
 * An annotation that is not a time makes the target UNRESOLVABLE
 * ("BadTime"). The time comes from the host (clock_now): --now, the
 * config's `now`, or the system clock, never time().
 */
/* the clock came with SDK 1.4: it runs on a 1.4 host and no older one */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* The annotation `key` of the target as a time: 1 and *ms, 0 when absent,
 * -1 (st filled) when it is not a time. */
static int annotation_time(const trellis_object *o, const char *key, int64_t *ms,
                           trellis_status *st)
{
    const char *v = host->object_annotation(o, key);
    if (!v)
        return 0;
    if (host->time_parse(v, ms) < 0) {
        char m[256];
        snprintf(m, sizeof m, "annotation %s is not an RFC 3339 time: '%s'", key, v);
        host->status(st, TRELLIS_UNRESOLVABLE, "BadTime", "%s", m);
        return -1;
    }
    return 1;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    (void)workload;
    const trellis_object *o = host->target_object(target);
    int64_t now = host->clock_now(self), from, until;
    int r = annotation_time(o, "fx.trellis.io/usable-from", &from, st);
    if (r < 0)
        return TRELLIS_UNRESOLVABLE;
    if (r > 0 && now < from) {
        host->cycle_retry_at(c, from);
        host->status(st, TRELLIS_UNSCHEDULABLE, "NotYetUsable", "the target is not usable yet");
        return TRELLIS_UNSCHEDULABLE;
    }
    r = annotation_time(o, "fx.trellis.io/lease-until", &until, st);
    if (r < 0)
        return TRELLIS_UNRESOLVABLE;
    if (r > 0 && now >= until) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "LeaseExpired", "the target's lease expired");
        return TRELLIS_UNSCHEDULABLE;
    }
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
    "fx-lease",
    "0.0.1",
    "fixture: targets usable from / until an annotated time (the host's clock)",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
