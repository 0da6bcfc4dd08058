/*
 * hints.c - the "target turned acceptable" rule and registration that
 * tolerates hosts older than SDK 1.2.
 */
#include "hints.h"

#include <stdio.h>

int hints_target_turned(trellis_plugin *self, const trellis_object *workload, unsigned event,
                        const trellis_object *old_obj, const trellis_object *new_obj,
                        hints_rejects_fn rejects)
{
    if (event != TRELLIS_EV_TARGET_ADD && event != TRELLIS_EV_TARGET_UPDATE)
        return TRELLIS_QUEUE;
    if (!new_obj)
        return TRELLIS_QUEUE; /* not what the host promises: unsure */
    if (rejects(self, workload, new_obj))
        return TRELLIS_QUEUE_SKIP;
    return !old_obj || rejects(self, workload, old_obj) ? TRELLIS_QUEUE : TRELLIS_QUEUE_SKIP;
}

int hints_register(const trellis_host *h, trellis_plugin *self, unsigned events, trellis_hint_fn fn,
                   char *err, size_t errlen)
{
    /* A 1.0 or 1.1 host requeues every workload on every change: nothing
     * to tell it. */
    if (!TRELLIS_HOST_HAS(h, register_events) || !h->register_events)
        return 0;
    if (h->register_events(self, events, fn) < 0) {
        snprintf(err, errlen, "cannot register queueing hints");
        return -1;
    }
    return 0;
}
