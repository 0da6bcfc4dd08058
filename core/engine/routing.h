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
/* The targets w holds, as the cycle c's held targets (cycle.h): its
 * assignments in the cache that its binding places it on (not a target it
 * only counts on, nor one it was evicted from); none for a pending
 * workload of a profile with binding model "field" that does not
 * reconcile. The keys are the cache's; the array is s->held. */
void routing_set_held(sched *s, const profile *p, trellis_cycle *c, const trellis_object *w);
/* Whether o is of some profile's target kind. */
int routing_is_target(const sched *s, const trellis_object *o);
/* The profile whose binding objects (binding model "object") o is one
 * of, or NULL. */
profile *routing_binding_owner(const sched *s, const trellis_object *o);
/* Count w (of owner p) on every target it is placed on, or counts on. */
void routing_count_placements(sched *s, profile *p, trellis_object *w);
/* Keep the nomination of w (of owner p) as the store has it, kube's
 * nominator on a Pod add or update: its nominated_field names the target
 * (old: the version it replaces, NULL when it is new); when the field is
 * empty before and after, a nomination made in the run stays. A workload
 * placed somewhere has none. */
void routing_nominations(sched *s, const profile *p, const trellis_object *old, trellis_object *w);
/* Whether w needs a scheduling cycle from p: it is placed nowhere, or p
 * reconciles placed workloads too (binding model "object" always does). */
int routing_wants_cycle(const profile *p, const trellis_object *w);
/* Finalize w (being deleted, or deleted) with p's plugins, and have the
 * binder write what they wrote (a long-running host). */
void routing_finalize(sched *s, profile *p, trellis_object *w);
/* Queue w (pending) in p. */
void routing_enqueue(sched *s, profile *p, trellis_object *w);
/* Hold w (pending) back in p's gated set: a pre_enqueue plugin skips it
 * (queue_gate). */
void routing_gate(sched *s, profile *p, trellis_object *w);
/* Record an Event about w for p (when p's config wants Events), and
 * have the binder flush the store. */
void routing_event(sched *s, profile *p, const trellis_object *w, const char *type,
                   const char *reason, const char *message, const char *codes);

#endif
