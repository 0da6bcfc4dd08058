/*
 * changes.h - a store change applied to the scheduler: the index, the
 * cache, the queues and the decisions follow it, and the unschedulable
 * workloads a change may help are queued again (kube-scheduler's queueing
 * hints: only those whose rejecting plugins say the change concerns
 * them). A change to a workload being bound waits until its binding
 * ends.
 */
#ifndef TRELLIS_CHANGES_H
#define TRELLIS_CHANGES_H

#include "sched_impl.h"

void changes_apply(sched *s, store_event_type type, trellis_object *old_obj,
                   trellis_object *new_obj);
/* Apply what the host noted it wrote (ownwrites.h). Scheduling thread. */
void changes_apply_own(sched *s);
/* Changes that waited for a workload in flight, in order. */
void changes_apply_deferred(sched *s);
/* After a batch: eviction checks when targets changed, and release of
 * prepared data no longer referenced. */
void changes_settle(sched *s);
/* The host placed w (binding model field; a binding of its own that
 * landed): the unschedulable workloads this may help are queued again
 * (TRELLIS_EV_WORKLOAD_PLACED; a placement by another writer comes as a
 * change). */
void changes_workload_placed(sched *s, profile *p, const trellis_object *w);
void changes_free(sched *s);

#endif
