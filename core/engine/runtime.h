/*
 * runtime.h - the extension-point runtime: every call the host makes into
 * a plugin's hooks goes through here.
 *
 * Each run_* function walks one extension point of a profile (or calls one
 * hook of one plugin) the same way: under the guard (guard.h: a crash or
 * a call past its deadline names the plugin, the hook and the object),
 * timed for /metrics when metrics are on (per plugin and per point, with
 * the status from the hook's return code), and with one wording for a
 * failure: "plugin NAME: POINT failed: MESSAGE". The scheduling algorithm
 * (framework.c), the binding cycle (bindcycle.c), the object index and
 * the change handling decide what to do with the results; nothing else in
 * the host calls a hook.
 *
 * Threads: the filter and score block functions run on the pool's worker
 * threads; every other function runs on the main thread, except the
 * binding points (pre-bind, bind, post-bind), which run on the binding
 * thread in a long-running host.
 */
#ifndef TRELLIS_RUNTIME_H
#define TRELLIS_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "cycle.h"
#include "profile.h"
#include "trellis/plugin.h"

/* Targets are filtered and scored in blocks of at most this many (whole
 * words of the pass bitmap). */
#define RT_BLOCK 256

/* ---- timing ---- */
/* A start time for rt_time_*: 0 when metrics are off (nothing is read). */
uint64_t rt_clock(void);
/* An extension point's latency since t0 (point: MP_*, metrics.h), with
 * the status its rc gives. */
void rt_time_point(const profile *p, int point, int rc, uint64_t t0);

/* ---- objects (main thread) ---- */
/* Have p's plugins prepare o as a workload or a target (prepare hooks,
 * counters, target values); a failure is logged and recorded on o
 * (o->failed, o->prepare_error). o's aux, counters and values are
 * allocated by the caller. */
void run_prepare(profile *p, trellis_object *o, int as_workload);
/* Give o's prepared data back to pl. */
void run_release(trellis_plugin *pl, trellis_object *o);
/* The queue order of a profile's queue-sort plugin, for its queue
 * (queue.h): rt_order_less is the queue's `less` and calls the hook
 * unguarded; rt_order_enter / rt_order_leave are its order hooks and
 * guard each sift (a few comparisons) as one call. ud is the rt_order. */
typedef struct rt_order rt_order;
rt_order *rt_order_new(trellis_plugin *pl);
void rt_order_free(rt_order *o);
int rt_order_less(void *ud, const trellis_object *a, uint64_t as, const trellis_object *b,
                  uint64_t bs);
void rt_order_enter(void *ud, const trellis_object *w);
void rt_order_leave(void *ud);
/* Whether workload a ranks at least as high as b in p's queue order on
 * their own merit: the queue sort does not put b first when both were
 * queued at the same moment (kube's "priority >= the incoming Pod's" for
 * PrioritySort). 1 when p has no queue sort. Main thread, guarded. */
int rt_outranks_or_equals(const profile *p, const trellis_object *a, const trellis_object *b);
/* What target t, with placed[0..n) on it, holds and can hold of each of
 * pl's counters (name_counters) into used and allocatable (n_counters
 * each): the sums of the placed workloads' counters and -1, corrected by
 * the plugin's allocated hook when it has one and t's prepare did not
 * fail for it. For the operator's views; main thread, outside cycles. */
void run_allocated(trellis_plugin *pl, const trellis_object *t, const trellis_object *const *placed,
                   size_t n, int64_t *used, int64_t *allocatable);
/* Whether a and b are equivalent for pl (1 when it has no hook). */
int run_equivalent(trellis_plugin *pl, const trellis_object *a, const trellis_object *b);
/* p's eviction checks on a workload bound to t: 0 when it may stay, 1
 * when a plugin evicts it (*who and *st say which and why). */
int run_eviction_check(profile *p, trellis_object *w, struct trellis_target *t,
                       const trellis_plugin **who, trellis_status *st);
/* 1 when this change might let w fit for pl, which rejected it; 0 when it
 * certainly does not. event is one TRELLIS_EV_* bit; old_obj / new_obj as
 * trellis_hint_fn has them, prepared. No registration: 1.
 * TRELLIS_EV_WORKLOAD_UPDATE, an unknown event, or an old_obj (or w) whose
 * prepare failed for this plugin: 1. Event not in the plugin's mask: 0. No
 * hint function: 1. Otherwise the hint's answer. */
int run_hint(const trellis_plugin *pl, const trellis_object *w, unsigned event,
             const trellis_object *old_obj, const trellis_object *new_obj);

/* ---- the scheduling cycle (c->p, c->w) ---- */
/* Pre-filter: TRELLIS_SUCCESS; TRELLIS_UNSCHEDULABLE when a plugin
 * rejected the workload for every target (c->pre_status, c->pre_plugin);
 * TRELLIS_ERROR with msg. A plugin returning TRELLIS_SKIP is skipped by
 * the filters (c->skip_filter). */
int run_pre_filter(trellis_cycle *c, char *msg, size_t msglen);
/* Filter k (of the profile's filters) over targets [b, e) of c's pass
 * bitmap; b is a multiple of 64 and e - b at most RT_BLOCK. Batch and span
 * hooks are used where the plugin has them; their rejections are recorded
 * with code CODE_UNKNOWN. An ignorable plugin cut short passes the block
 * and sits out the cycle. Worker threads. */
void run_filter_block(trellis_cycle *c, size_t k, size_t b, size_t e);
/* Filter k on target i alone, as run_filter_block would (a batch hook
 * gets a block of one, a span hook the target's word with only its bit
 * set): TRELLIS_SUCCESS, or the rejection's code (CODE_UNKNOWN from a
 * batch or span hook). */
int run_filter_at(trellis_cycle *c, size_t k, size_t i);
/* pl's plain filter on t, its raw return (st filled). */
int run_filter(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *t,
               trellis_status *st);
/* The feasible filters (filter_feasible), in profile order, over
 * c->feasible while any is left; their rejections (cycle_reject, or a
 * hook's UNSCHEDULABLE / UNRESOLVABLE for all) leave the feasible list.
 * TRELLIS_SUCCESS, or TRELLIS_ERROR with msg. */
int run_filter_feasible(trellis_cycle *c, char *msg, size_t msglen);
/* Post-filter, with c->in_post_filter set: TRELLIS_SUCCESS when a plugin
 * made room (c->changed), TRELLIS_UNSCHEDULABLE, or TRELLIS_ERROR with
 * msg. */
int run_post_filter(trellis_cycle *c, char *msg, size_t msglen);
/* The review of a post-filter's preemption candidates (SDK 1.7): every
 * review_candidates plugin of the profile but `caller`, in profile order,
 * on a copy of cands[0..*n) while any is left; an answer that passes
 * review_check (review.h) replaces them, a SKIP leaves them. With
 * c->in_review set. TRELLIS_SUCCESS, or TRELLIS_ERROR with st ("plugin
 * NAME: ..."; cands as the reviewers before it left them). Main thread,
 * inside caller's post_filter. */
int run_review_candidates(trellis_cycle *c, const trellis_plugin *caller, trellis_candidate *cands,
                          size_t *n, trellis_status *st);
/* Pre-score over the feasible targets: TRELLIS_SUCCESS or TRELLIS_ERROR
 * with msg; TRELLIS_SKIP sets c->skip_score. */
int run_pre_score(trellis_cycle *c, char *msg, size_t msglen);
/* Score k over feasible targets [b, e) into out (its row); a failed raw
 * score is INT64_MIN. Worker threads. */
void run_score_block(trellis_cycle *c, size_t k, int64_t *out, size_t b, size_t e);
/* pl's plain score on t. */
int run_score(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *t, int64_t *v,
              trellis_status *st);
/* pl's normalize over n scores: 0, or -1 with msg (c->failed). */
int run_normalize(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *const *ts,
                  size_t n, int64_t *sc, char *msg, size_t msglen);
/* Record that pl ended the cycle with st: c->failed, c->error_plugin,
 * c->error_status, and "plugin NAME: WHAT: MESSAGE" in msg. */
void rt_fail(trellis_cycle *c, const trellis_plugin *pl, const trellis_status *st, const char *what,
             char *msg, size_t msglen);

/* ---- the binding cycle ---- */
/* Reserve on t: 0, or -1 with msg (the plugins reserved so far are not
 * undone: run_unreserve undoes all). */
int run_reserve(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
                char *msg, size_t msglen);
/* Unreserve, in reverse order. */
void run_unreserve(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t);
/* Permit: TRELLIS_SUCCESS, TRELLIS_WAIT (*wait_ms: the longest timeout
 * asked, 0 for none), or TRELLIS_UNSCHEDULABLE with msg. */
int run_permit(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
               uint64_t *wait_ms, char *msg, size_t msglen);
/* Pre-bind, then bind (the first plugin not answering TRELLIS_SKIP binds):
 * 0, or -1 with msg. */
int run_bind(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
             char *msg, size_t msglen);
/* Post-bind, after the binding landed. */
void run_post_bind(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t);
/* p's decided plugins on w's finished scheduling cycle c (again: it gets
 * another cycle at once). Main thread. */
void run_decided(profile *p, trellis_cycle *c, trellis_object *w, int again);

/* ---- around the queue ---- */
/* Whether p takes the pending workload w: 0 when a pre_enqueue plugin
 * says SKIP (no decision, no Event, not queued; *by, when by is not NULL,
 * names it), else 1. */
int run_pre_enqueue(profile *p, trellis_object *w, const char **by);
/* p's target_lost plugins on w, bound to the target key `key` that the
 * store does not hold: 1 when one of them wants the placement cleared
 * (st filled, *by the plugin), else 0. */
int run_target_lost(profile *p, trellis_object *w, const char *key, const trellis_plugin **by,
                    trellis_status *st);
/* Finalize w (being deleted or gone) with every finalize plugin of p; a
 * failure is logged with the plugin and the workload. */
void run_finalize(profile *p, trellis_object *w);

#endif
