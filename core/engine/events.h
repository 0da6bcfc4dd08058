/*
 * events.h - Kubernetes Events about workloads, written to the store.
 *
 * The host records Scheduled and FailedScheduling Events as kube-scheduler
 * does, so `kubectl get events` (or a look at the state directory) tells
 * an operator what happened. The same event again (in this run or a later
 * one) is the same Event object: its count goes up and its lastTimestamp
 * moves.
 */
#ifndef TRELLIS_EVENTS_H
#define TRELLIS_EVENTS_H

#include <stdint.h>

#include "cycle.h"
#include "object.h"
#include "store.h"

/* Record an Event of type ("Normal", "Warning") and reason about w from
 * component (the profile's name), stamped now_ms (the run's clock). The name is derived from the
 * workload, the reason and the message. codes (may be NULL) goes into the annotation
 * trellis.io/reasons for tools. A store failure is logged. The caller has the store flushed. */
void events_record(store *st, int64_t now_ms, const char *component, const trellis_object *w,
                   const char *type, const char *reason, const char *message, const char *codes);
/* "target=Reason,..." for every target of an unschedulable cycle (the
 * FailedScheduling annotation). Owned by the caller. */
char *events_reason_codes(trellis_cycle *c);

#endif
