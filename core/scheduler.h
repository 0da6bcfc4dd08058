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
 */
#ifndef TRELLIS_SCHEDULER_H
#define TRELLIS_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

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

typedef struct decision {
    trellis_object *w; /* one reference */
    profile *p;
    dec_result result;
    char **targets;
    size_t n_targets;
    char *message;
    obj_id *evicted;
    size_t n_evicted;
    obj_id *created;
    size_t n_created;
    dec_cand *cands;
    size_t n_cands;
    char *nominated;
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
} sched;

/* Load every plugin and build the profiles. extra_dirs are searched before
 * the config's plugin_dirs and the installed plugin directory. */
int sched_open(sched *s, cfg *c, char *const *extra_dirs, size_t n_extra, int parallelism,
               char *err, size_t errlen);
/* Read the store. Malformed documents are logged and counted, not fatal. */
int sched_load(sched *s, store *st, char *err, size_t errlen);
/* Schedule until the queues are drained; flush the store. -1 with err when
 * the store could not be written (decisions are still complete). */
int sched_run_once(sched *s, char *err, size_t errlen);
void sched_close(sched *s);

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
