/*
 * scheduler.h - the scheduler: load, run once, follow changes, step, tick.
 *
 * sched_open loads the plugins every profile names and builds the
 * profiles; sched_load reads all objects from the store, has the plugins
 * prepare them, fills the cache with targets and bound workloads and the
 * queues with pending ones; sched_run_once schedules until every queue is
 * drained, as seed 004 describes: a scheduling cycle per workload
 * (framework.h), then its binding cycle (bindcycle.c), and finally
 * flushes the store. Each workload attempted gets a decision (decision.h).
 *
 * The long-running host (run.c) drives the same cycles differently:
 * sched_start hands binding cycles to the binding thread (binder.c) and
 * follows the store; sched_on_change applies each store change to the
 * index, the cache and the queues (a changed target moves back the
 * unschedulable workloads the plugins' queueing hints say it may help);
 * sched_step runs one scheduling cycle; sched_collect finishes the
 * bindings the binder is done with (success: the assumption becomes a
 * binding; failure: unreserve, forget, back off); sched_tick moves
 * workloads whose backoff or permit wait ended.
 *
 * The scheduler is opaque: front-ends use the functions below.
 */
#ifndef TRELLIS_SCHEDULER_H
#define TRELLIS_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "decision.h"
#include "deschedule.h"
#include "object.h"
#include "profile.h"
#include "store.h"

typedef struct sched sched;

/* Load every plugin and build the profiles. extra_dirs are searched before
 * the config's plugin_dirs and the installed plugin directory. NULL with
 * err on failure. */
sched *sched_open(cfg *c, char *const *extra_dirs, size_t n_extra, int parallelism, char *err,
                  size_t errlen);
void sched_close(sched *s);
/* Keep the objects recorded in the quarantine file path (quarantine.h)
 * away from the plugins, from the next sched_load on; read_only: never
 * rewrite the file (a dry run). */
void sched_set_quarantine(sched *s, const char *path, int read_only);
/* One-shot options: record every target's verdict (--explain); show
 * progress on stderr. */
void sched_set_explain(sched *s, int on);
void sched_set_progress(sched *s, int on);
/* The wall-clock time decisions are made at (ms since the epoch,
 * clock.h): the config's `now`, or the system clock when the scheduler was
 * opened, until set again (`trellis run` sets it once per loop turn). */
void sched_set_wall_clock(sched *s, int64_t wall_ms);
/* Read the store. Malformed documents are logged and counted, not fatal. */
int sched_load(sched *s, store *st, char *err, size_t errlen);
/* Schedule until the queues are drained; flush the store. -1 with err when
 * the store could not be written (decisions are still complete). */
int sched_run_once(sched *s, char *err, size_t errlen);

/* ---- the long-running host ---- */
/* A long-running host keeps a decision only while its workload is not
 * placed; call before sched_load. */
void sched_set_long_running(sched *s);
/* Bind on the binding thread from now on. 0, or -1 with err. */
int sched_start(sched *s, char *err, size_t errlen);
/* The clock of this loop turn (monotonic milliseconds). */
void sched_set_now(sched *s, uint64_t now_ms);
/* A store change (the store's dispatch callback; ud is the sched). */
void sched_on_change(void *ud, store_event_type type, trellis_object *old_obj,
                     trellis_object *new_obj);
/* After a batch of changes: eviction checks when targets changed, and
 * release of prepared data no longer referenced. */
void sched_after_changes(sched *s);
/* Run one scheduling cycle; 0 when no workload is ready. */
int sched_step(sched *s);
/* Finish the bindings the binder is done with. */
void sched_collect(sched *s);
/* Timers: unschedulable workloads waiting too long, permit timeouts. */
void sched_tick(sched *s);
/* The bound workloads checked against their targets as they are now
 * (eviction and target-lost plugins), as a one-shot run does first: a
 * long-running host when it has read the state. */
void sched_check_bound(sched *s);
/* The next time (now_ms clock) something is due, or UINT64_MAX. */
uint64_t sched_next_due(const sched *s);
/* A descriptor readable when the binder has finished bindings, or -1. */
int sched_binder_fd(const sched *s);
/* Finish the bindings queued and stop the binding thread. */
void sched_stop(sched *s);
/* Queue and cache figures to the metrics. */
void sched_report_metrics(const sched *s);

/* ---- what it did ---- */
typedef struct sched_stats {
    size_t targets_loaded, workloads_loaded, pending, manifest_errors;
    size_t decisions, cycles, bound_total, bind_errors, workers;
    size_t assumed; /* workloads assumed on a target, their binding not done */
    uint64_t load_ns, schedule_ns, write_ns;         /* reading, deciding, writing back */
    uint64_t eq_hits, eq_score_hits, eq_reevaluated; /* the equivalence cache */
} sched_stats;
void sched_get_stats(const sched *s, sched_stats *out);
/* The duration of every cycle of a one-shot run, in nanoseconds. */
const uint32_t *sched_cycle_times(const sched *s, size_t *n);
/* Whether every target's verdict was recorded (sched_set_explain). */
int sched_explaining(const sched *s);
/* The decisions of a one-shot run, sorted by workload. */
const decisions *sched_decisions(sched *s);
/* Pending workloads a pre_enqueue plugin holds back (the gated queues of
 * every profile): they get no decision until they change. */
size_t sched_gated(const sched *s);

/* ---- what it holds ---- */
size_t sched_profile_count(const sched *s);
profile *sched_profile_at(const sched *s, size_t i);
/* The profile that schedules w (by kind and scheduler name), or NULL. */
profile *sched_profile_for(const sched *s, const trellis_object *w);
store *sched_store(const sched *s);
/* The kinds the host reads: every profile's workload, target and binding
 * object kinds, Event when a profile writes Events, and the kinds its
 * plugins declared (declare_kinds), without repeats, in that order;
 * *kinds is an array the caller frees (the strings are borrowed). */
size_t sched_kinds(const sched *s, const char ***kinds);
const trellis_object *sched_lookup(const sched *s, const char *kind, const char *ns,
                                   const char *name);
int sched_foreach(const sched *s, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud);
/* Every object read, in store order. */
size_t sched_object_count(const sched *s);
trellis_object *sched_object_at(const sched *s, size_t i);

/* Deschedule: for each target of p holding more workloads (by binding
 * field) than its capacity_field allows, move workloads (largest names
 * first) to other targets through the normal cycle with their current
 * target excluded, at most `budget` in all; a workload no other target
 * takes stays. report(ud, w, from, to, why) is called for each one tried:
 * to is NULL when it stayed. Returns the number moved, or -1 with err
 * when the store could not be written. */
int sched_deschedule(sched *s, profile *p, size_t budget, desched_fn report, void *ud, char *err,
                     size_t errlen);

#endif
