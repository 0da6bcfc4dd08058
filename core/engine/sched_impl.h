/*
 * sched_impl.h - the scheduler's state, shared by its parts and by nothing
 * else: scheduler.c (sequencing), routing.c (which profile an object
 * belongs to), bindcycle.c (the binding cycle), changes.c (store changes),
 * evictions.c (eviction checks), deschedule.c, services.c (what the host
 * table may ask) and explain.c (the "why not" query). Each part has its
 * own header; only scheduler.c implements scheduler.h, so the parts never
 * call up into it. Front-ends see the opaque handle and the accessors of
 * scheduler.h.
 */
#ifndef TRELLIS_SCHED_IMPL_H
#define TRELLIS_SCHED_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "binder.h"
#include "binding.h"
#include "cache.h"
#include "cfg.h"
#include "cycle.h"
#include "decision.h"
#include "framework.h"
#include "index.h"
#include "plugin.h"
#include "pool.h"
#include "profile_impl.h"
#include "services.h"
#include "store.h"

/* a workload assumed on a target, its binding held by a permit WAIT */
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
    char *refresh;                     /* or: prepare this id again, as it is then */
};

typedef struct sched sched;

struct sched {
    cfg *cfg;
    registry reg;
    profile *profiles;
    size_t n_profiles;
    cache cache;
    obj_index *ix;
    decisions *dec;
    store *st;
    pool *pool;
    host_services svc;
    int explain;           /* one-shot: record every target's verdict */
    int progress;          /* one-shot: show progress on stderr */
    unsigned max_attempts; /* per workload in a one-shot run */
    trellis_cycle cycle;
    const char **held; /* the cycle's held targets (schedule_one), copies in held_buf:
                          releasing one may free its cache target */
    size_t cap_held;
    char *held_buf;
    size_t cap_held_buf;
    /* the binding cycle (bindcycle.c) */
    waiting *waiting;
    size_t n_waiting, cap_waiting;
    pthread_mutex_t wait_mu; /* waiting[]: permit_allow may come from the binder */
    binder *binder;          /* NULL: bind in the scheduling thread */
    /* a one-shot run's releases, written after its bindings are */
    binding_release_w *late;
    size_t n_late, cap_late;
    /* figures */
    size_t n_manifest_errors;
    size_t n_targets_loaded, n_workloads_loaded, n_pending;
    uint64_t load_ns, schedule_ns, write_ns; /* reading, deciding, writing back */
    uint32_t *cycle_ns;                      /* the duration of every cycle, for --stats */
    size_t n_cycles, cap_cycles;
    size_t n_bound_total, n_bind_errors;
    /* long-running mode */
    int run_mode;
    uint64_t now_ms;         /* monotonic clock of the current loop turn */
    _Atomic int64_t wall_ms; /* the wall clock decisions see (clock.h); any thread reads it */
    struct change *deferred; /* changes to workloads in flight, applied later */
    /* objects the host wrote (binding objects, objects plugins created),
     * from any thread, applied on the scheduling thread (changes_apply_own) */
    pthread_mutex_t own_mu;
    struct own_write {
        trellis_object *o; /* one reference */
        int deleted;
        /* a condition (ownwrites.h OWN_IF_*, 0: none): an undo applied
         * only while the host holds what the refused write made it see,
         * a patch only while the host holds the version it was made on
         * (expect, one reference, or nothing) */
        int undo;
        trellis_object *expect;
    } * own;
    size_t n_own, cap_own;
    /* a plugin's writes seen at once (read your writes) until the store
     * took or refused them: the object as the host held it before (NULL:
     * the write created it), under own_mu (ownwrites.c) */
    struct own_pending {
        int op;                 /* OWN_PATCH, OWN_CREATE, OWN_DELETE */
        trellis_object *before; /* one reference, or NULL: created */
        trellis_object *after;  /* one reference: what the host sees */
        uint64_t gen;           /* own_gen when noted */
        int queued;             /* the store took the write */
    } * pend;
    size_t n_pend, cap_pend;
    uint64_t own_gen;
    size_t n_deferred, cap_deferred;
    int targets_changed;        /* since the last sched_after_changes */
    uint64_t next_pool_scan_ms; /* next look for workloads unschedulable too long */
    /* objects a plugin crashed or hung on (quarantine.h); NULL: none kept */
    struct quarantine *quarantine;
    size_t n_quarantined;
};

#endif
