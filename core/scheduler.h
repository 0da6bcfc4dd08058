/*
 * scheduler.h - the scheduler: profiles, cache, queues, cycles, decisions.
 *
 * sched_open loads the plugins every profile names and builds the
 * profiles; sched_load reads all objects from the store, has the plugins
 * prepare them, fills the cache with targets and bound workloads and the
 * queues with pending ones; sched_run_once schedules until every queue is
 * drained, as seed 004 describes: a scheduling cycle per workload (snapshot,
 * algorithm, post-filter, assume, reserve, permit), then its binding cycle
 * (pre-bind, bind, post-bind; on failure unreserve and forget), and
 * finally flushes the store. Each workload attempted gets a decision.
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
 */
#ifndef TRELLIS_SCHEDULER_H
#define TRELLIS_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "binder.h"
#include "cache.h"
#include "cfg.h"
#include "framework.h"
#include "hmap.h"
#include "plugin.h"
#include "pool.h"
#include "store.h"

typedef enum { DEC_PENDING = 0, DEC_SCHEDULED, DEC_UNSCHEDULABLE, DEC_ERROR } dec_result;

typedef struct obj_id {
    char *kind, *namespace_, *name;
} obj_id;

typedef struct dec_cand {
    char *target;
    int feasible;
    char *plugin; /* first rejecting plugin, NULL when feasible */
    char *code;   /* its reason code */
    char *reason; /* its message */
    int has_score;
    int64_t score;     /* weighted total */
    int64_t *scores;   /* per score plugin, normalized */
} dec_cand;

/* One per workload a run looked at (fifty thousand in a big run: the
 * counts are 32 bits to keep it small). */
typedef struct decision {
    trellis_object *w; /* one reference */
    profile *p;
    char **targets; /* one allocation with the names it points to */
    char *message;
    obj_id *evicted;
    obj_id *created;
    dec_cand *cands;
    char *nominated;
    dec_result result;
    uint32_t n_targets;
    uint32_t n_evicted;
    uint32_t n_created;
    uint32_t n_cands;
    unsigned attempts;
} decision;

/* a bound workload evicted before scheduling (eviction checks) */
typedef struct eviction {
    obj_id workload;
    char *target, *plugin, *code, *reason;
} eviction;

typedef struct waiting {
    decision *d;
    profile *p;
    qitem *it;
    struct trellis_target *target;
    uint64_t deadline_ms;
    int allowed, rejected;
    char *reject_reason;
} waiting;

/* a store change kept for later */
struct change {
    store_event_type type;
    trellis_object *old_obj, *new_obj; /* one reference each, or NULL */
};

typedef struct sched {
    cfg *cfg;
    registry reg;
    profile *profiles;
    size_t n_profiles;
    cache cache;
    store *st;
    pool *pool;
    int explain;
    trellis_cycle cycle;
    decision **decisions;
    size_t n_dec, cap_dec;
    hmap dec_by_key;
    waiting *waiting;
    size_t n_waiting, cap_waiting;
    trellis_object **objects; /* every object read, in store order */
    size_t n_objects, cap_objects;
    hmap by_id; /* "Kind/namespace/name" -> object */
    eviction *evictions;
    size_t n_evictions;
    trellis_object **prepared; /* every object the plugins prepared */
    size_t n_prepared, cap_prepared;
    size_t n_manifest_errors;
    size_t n_targets_loaded, n_workloads_loaded, n_pending;
    unsigned max_attempts; /* per workload in a one-shot run */
    uint64_t load_ns, schedule_ns;
    /* the duration of every scheduling + binding cycle, for --stats */
    uint32_t *cycle_ns;
    size_t n_cycles, cap_cycles;
    /* one-shot: show progress (workloads done / total, rate) on stderr */
    int progress;
    /* long-running mode */
    int run_mode;
    uint64_t now_ms;     /* monotonic clock of the current loop turn */
    binder *binder;      /* NULL: bind in the scheduling thread */
    pthread_mutex_t wait_mu; /* waiting[]: permit_allow may come from the binder */
    struct change *deferred; /* changes to workloads in flight, applied later */
    size_t n_deferred, cap_deferred;
    int targets_changed;  /* since the last sched_after_changes */
    uint64_t next_pool_scan_ms; /* next look for workloads unschedulable too long */
    size_t n_replaced;    /* objects dropped since the last sweep */
    size_t n_bound_total, n_bind_errors;
    /* objects a plugin crashed or hung on (quarantine.h); NULL: none kept */
    struct quarantine *quarantine;
    size_t n_quarantined;
} sched;

/* Load every plugin and build the profiles. extra_dirs are searched before
 * the config's plugin_dirs and the installed plugin directory. */
int sched_open(sched *s, cfg *c, char *const *extra_dirs, size_t n_extra, int parallelism,
               char *err, size_t errlen);
/* Keep the objects recorded in the quarantine file path (quarantine.h)
 * away from the plugins, from the next sched_load on; read_only: never
 * rewrite the file (a dry run). */
void sched_set_quarantine(sched *s, const char *path, int read_only);
/* Read the store. Malformed documents are logged and counted, not fatal. */
int sched_load(sched *s, store *st, char *err, size_t errlen);
/* Schedule until the queues are drained; flush the store. -1 with err when
 * the store could not be written (decisions are still complete). */
int sched_run_once(sched *s, char *err, size_t errlen);
void sched_close(sched *s);

/* ---- the long-running host ---- */
/* Bind on the binding thread from now on. 0, or -1 with err. */
int sched_start(sched *s, char *err, size_t errlen);
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
/* The next time (now_ms clock) something is due, or UINT64_MAX. */
uint64_t sched_next_due(const sched *s);
/* Finish the bindings queued and stop the binding thread. */
void sched_stop(sched *s);
/* Queue and cache figures to the metrics. */
void sched_report_metrics(const sched *s);

/* Deschedule: for each target of p holding more workloads (by binding
 * field) than its capacity_field allows, move workloads (largest names
 * first) to other targets through the normal cycle with their current
 * target excluded, at most `budget` in all; a workload no other target
 * takes stays. report(ud, w, from, to, why) is called for each one tried:
 * to is NULL when it stayed. Returns the number moved, or -1 with err
 * when the store could not be written. */
typedef void (*desched_fn)(void *ud, const trellis_object *w, const char *from, const char *to,
                           const char *why);
int sched_deschedule(sched *s, profile *p, size_t budget, desched_fn report, void *ud,
                     char *err, size_t errlen);

/* Free n ids and the array. */
void obj_ids_free(obj_id *ids, size_t n);

/* decisions sorted by workload kind, namespace, name */
void sched_sorted_decisions(sched *s);

/* host API support (hostapi.c) */
int sched_evict(trellis_cycle *c, const trellis_plugin *pl, const trellis_object *victim,
                const char *reason, char *err, size_t errlen);
int sched_create_target(trellis_cycle *c, const trellis_plugin *pl, const char *json,
                        char *err, size_t errlen);
int sched_nominate(trellis_cycle *c, const struct trellis_target *t);
int sched_store_set_field(const trellis_plugin *pl, const trellis_object *o, const char *path,
                          const char *value, char *err, size_t errlen);
int sched_permit_set(const trellis_plugin *pl, const char *ns, const char *name, int allow,
                     const char *reason);
const trellis_object *sched_lookup(const sched *s, const char *kind, const char *ns,
                                   const char *name);
int sched_foreach(const sched *s, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud);
/* The profile that schedules w (by kind and scheduler name), or NULL. */
profile *sched_profile_for(const sched *s, const trellis_object *w);

#endif
