/*
 * hints.h - queueing hints (SDK 1.2) the way the in-tree filters give them.
 *
 * A filter plugin tells a long-running host which store changes may undo
 * its rejections, so that the host requeues only the unschedulable
 * workloads a change may let fit. Most filters decide from the workload and
 * one target alone; for them a target change concerns a rejected workload
 * exactly when the new target passes and the old one did not (or did not
 * exist): hints_target_turned is that rule over the plugin's own predicate.
 * hints_register registers where the host has register_events and does
 * nothing on an older host, which asks no plugin anything.
 */
#ifndef TRELLIS_PLUGINS_HINTS_H
#define TRELLIS_PLUGINS_HINTS_H

#include <stddef.h>

#include "trellis/plugin.h"

/* Nonzero when `target`, a prepared target object, rejects `workload`. */
typedef int (*hints_rejects_fn)(trellis_plugin *self, const trellis_object *workload,
                                const trellis_object *target);

/* For TRELLIS_EV_TARGET_ADD / _UPDATE: TRELLIS_QUEUE when new_obj passes and
 * old_obj is NULL or rejects, TRELLIS_QUEUE_SKIP otherwise. Any other event:
 * TRELLIS_QUEUE. Ownership of every argument is retained by the caller. */
int hints_target_turned(trellis_plugin *self, const trellis_object *workload, unsigned event,
                        const trellis_object *old_obj, const trellis_object *new_obj,
                        hints_rejects_fn rejects);

/* In init: register `events` with `fn` when the host has register_events
 * (SDK 1.2); on an older host do nothing. 0, or -1 with err filled. */
int hints_register(const trellis_host *h, trellis_plugin *self, unsigned events, trellis_hint_fn fn,
                   char *err, size_t errlen);

#endif
