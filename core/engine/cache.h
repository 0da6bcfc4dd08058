/*
 * cache.h - the scheduler's picture of the world between cycles.
 *
 * Holds every target (by kind and key: namespace/name, or the name when
 * cluster-scoped) with the workloads assigned to it,
 * assumed ones included, and per-target sums of the plugins' workload
 * counters. A workload is assigned when it is read bound (its binding field
 * names a target) or when the scheduling cycle assumes it; finish_binding
 * makes an assumption permanent and forget undoes it. A workload may be
 * assigned to several targets (one binding per target). Each change stamps
 * the target with a new generation and moves it to the front of a
 * most-recently-changed list, so the per-cycle snapshot copies only what
 * changed. A workload bound to a target not (yet) known gets a placeholder
 * target without object, which the snapshot skips. The cache also keeps
 * the nominations (nominator.h): a workload assumed or read bound loses
 * its nomination.
 */
#ifndef TRELLIS_CACHE_H
#define TRELLIS_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"
#include "nominator.h"
#include "object.h"

/* A target with its assignments; the snapshot holds copies. */
struct trellis_target {
    trellis_object *obj; /* NULL for a placeholder */
    /* the target's identity among its kind, as bindings name it and
     * decisions print it: "namespace/name" for a namespaced target (two
     * namespaces may each hold one of the same name), the name alone for a
     * cluster-scoped one (a Node, a Seed): the object's key */
    const char *name;
    trellis_object **wl; /* assigned workloads (each holds a reference) */
    size_t n_wl, cap_wl;
    int64_t *sums; /* cache->n_counters sums */
    uint64_t gen;
    /* set (from the cache's cuts) when the target is made and whenever a
     * workload leaves wl: while it stays, wl only grew at its end */
    uint64_t wl_cut;
    /* in a snapshot: an id that stays while the target does (0..n-1);
     * snapshot_pos gives its position (cycle_target index) */
    uint32_t snap_id;
};

typedef struct cache_target {
    struct trellis_target t;
    char *key;                        /* "Kind/<t.name>", owned */
    char *name;                       /* owned, t.name points here (the object's key) */
    uint64_t name_hash;               /* hmap_hash(name): a snapshot finds its copy by it */
    struct cache_target *prev, *next; /* most recently changed first */
    char kind[];                      /* beside the rest: read for every change */
} cache_target;

typedef struct cache_assignment {
    cache_target *target;
    int assumed;
} cache_assignment;

typedef struct cache_workload {
    trellis_object *obj; /* one reference */
    const char *key;     /* obj's id ("Kind/namespace/name"), borrowed */
    cache_assignment *as;
    size_t n_as;
} cache_workload;

typedef struct cache {
    hmap targets;   /* key -> cache_target */
    hmap workloads; /* key -> cache_workload */
    cache_target *mru;
    uint64_t gen;      /* bumped on every change */
    uint64_t set_gen;  /* bumped when targets are added or removed */
    uint64_t removals; /* bumped when a target is removed */
    uint64_t cuts;     /* the last trellis_target.wl_cut given */
    int n_counters;
    size_t n_assumed;
    nominator nom; /* workloads nominated to a target, not placed yet */
} cache;

void cache_init(cache *c, int n_counters);
void cache_free(cache *c);

/* Add or replace a target object (a reference is taken). */
cache_target *cache_set_target(cache *c, trellis_object *o);
/* Remove a target; its assignments stay as a placeholder if any. */
void cache_remove_target(cache *c, const char *kind, const char *name);
cache_target *cache_get_target(const cache *c, const char *kind, const char *name);

/* Record a workload bound to target kind/name (read from the store). */
int cache_add_bound(cache *c, trellis_object *w, const char *kind, const char *name);
/* Assume w on a target for the binding cycle. */
int cache_assume(cache *c, trellis_object *w, cache_target *t);
/* The binding to t landed. */
int cache_finish_binding(cache *c, const trellis_object *w, const cache_target *t);
/* Undo an assumption, or unassign a bound workload (eviction). */
int cache_forget(cache *c, const trellis_object *w, const cache_target *t);
/* Undo an assumption only: an assignment read from the store (a status
 * field counting the workload on t) stays. */
int cache_forget_assumed(cache *c, const trellis_object *w, const cache_target *t);
/* Drop every assignment of w and the workload itself. */
void cache_remove_workload(cache *c, const trellis_object *w);
cache_workload *cache_get_workload(const cache *c, const trellis_object *w);
/* Number of targets of a kind, placeholders excluded. */
size_t cache_count_targets(const cache *c, const char *kind);

#endif
