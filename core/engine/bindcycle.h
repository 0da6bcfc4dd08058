/*
 * bindcycle.h - the binding cycle: assume -> reserve -> permit -> (wait)
 * -> pre-bind, bind -> post-bind, then done or failed.
 *
 * The workload is assumed on its target in the cache first, so the next
 * scheduling cycle sees the place taken while the binding is under way.
 * A failure anywhere unreserves (reverse order), forgets the assumption
 * and requeues the workload. In a long-running host the pre-bind and
 * bind hooks run on the binding thread (binder.c) in batches, with one
 * store flush per batch; the main thread collects the finished jobs.
 */
#ifndef TRELLIS_BINDCYCLE_H
#define TRELLIS_BINDCYCLE_H

#include "sched_impl.h"

/* After a scheduling cycle chose best for the workload of it: assume,
 * reserve, permit, then bind (or hand the binding to the binder, or wait
 * on a permit). */
void bindcycle_run(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                   const struct trellis_target *best);
/* A decision of several targets (binding model "object"): release
 * what the cycle's plugins gave up, then assume, reserve and permit each
 * of picks[0..n) (the best first) and bind those that passed (or hand
 * them to the binder, as one job); a partial failure keeps what landed
 * and sends the workload to the backoff for the rest. */
void bindcycle_run_many(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                        const struct trellis_target *const *picks, size_t n);
/* The workload holds what it wants (after what its plugins released). */
void bindcycle_satisfied(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it);
/* The message of a decision that holds fewer targets than it wants. */
void bindcycle_shortfall(const decision *d, uint32_t want, char *msg, size_t len);
/* Release what the cycle's plugins gave up; the decision's targets
 * become those the workload keeps. */
void bindcycle_release(sched *s, profile *p, trellis_cycle *c, decision *d);
/* Queue the releases rw[0..n) (bindcycle_run_many's, made after the
 * bindings of their decision) in the store, freeing them; how many it
 * took, their objects as read into was[] (NULL: not kept; a reference
 * each). One the store refuses is logged and seen again as the store has
 * it. */
size_t bindcycle_write_releases(sched *s, binding_release_w *rw, size_t n, trellis_object **was);
/* The same, then a store flush of them: one the flush does not write is
 * seen again as the store has it. 0, or -1 with err (the flush's). */
int bindcycle_flush_releases(sched *s, binding_release_w *rw, size_t n, char *err, size_t errlen);
/* Bind workloads whose permit wait ended; with `final`, every wait ends
 * (a one-shot run has no later moment to allow them). */
void bindcycle_process_waiting(sched *s, int final);
/* Allow or reject a waiting workload: 0, or -1 when none of that name
 * waits. */
int bindcycle_permit(sched *s, const char *ns, const char *name, int allow, const char *reason);
/* Bind on the binding thread from now on. */
int bindcycle_start(sched *s, char *err, size_t errlen);
/* Finish the bindings the binder is done with: how many. */
size_t bindcycle_collect(sched *s);
/* Finish the bindings queued and stop the binding thread. */
void bindcycle_stop(sched *s);
/* The earliest permit deadline (or now when one is settled) below due. */
uint64_t bindcycle_next_due(const sched *s, uint64_t due);
void bindcycle_free(sched *s);

#endif
