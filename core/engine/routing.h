/*
 * routing.h - where an object belongs: which profile schedules a workload,
 * which profile's placement of it counts, whether it is a target; and
 * the two ways work reaches a profile (its queue, its Events).
 */
#ifndef TRELLIS_ROUTING_H
#define TRELLIS_ROUTING_H

#include "sched_impl.h"

/* The profile that schedules w (by kind and scheduler name), or NULL. */
profile *routing_profile_for(const sched *s, const trellis_object *w);
/* The profile whose placement of w counts: its own scheduler's, else the
 * first profile of its kind; NULL when w is no workload. */
profile *routing_owner_for(const sched *s, const trellis_object *w);
/* Whether o is of some profile's target kind. */
int routing_is_target(const sched *s, const trellis_object *o);
/* Whether w is being deleted (metadata.deletionTimestamp is set): it is
 * finalized, never scheduled. */
int routing_being_deleted(const trellis_object *w);
/* Finalize w (being deleted, or deleted) with p's plugins, and have the
 * binder write what they wrote (a long-running host). */
void routing_finalize(sched *s, profile *p, trellis_object *w);
/* Queue w (pending) in p. */
void routing_enqueue(sched *s, profile *p, trellis_object *w);
/* Record an Event about w for p (when p's config wants Events), and
 * have the binder flush the store. */
void routing_event(sched *s, profile *p, const trellis_object *w, const char *type,
                   const char *reason, const char *message, const char *codes);

#endif
