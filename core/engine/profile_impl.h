/*
 * profile_impl.h - the profile's layout, for the scheduling engine's own
 * modules (framework, runtime, equivalence, cycle and the scheduler's
 * parts). Front-ends use profile.h.
 */
#ifndef TRELLIS_PROFILE_IMPL_H
#define TRELLIS_PROFILE_IMPL_H

#include <stddef.h>

#include "cfg.h"
#include "equivalence.h"
#include "plugin.h"
#include "profile.h"
#include "queue.h"
#include "snapshot.h"

struct pool;
struct placements;

struct profile {
    const cfg_profile *cfg;
    int index;
    trellis_plugin **plugins; /* config order */
    size_t n_plugins;
    trellis_plugin *queue_sort;
    struct rt_order *order; /* its queue's order (runtime.h), or NULL */
    plist pre_filter, filter, filter_feasible, post_filter, pre_score, score, reserve, permit,
        pre_bind, bind, post_bind, prepare_workload, prepare_target, eviction, pre_enqueue,
        finalize, target_lost, decided, review_candidates;
    queue q;
    snapshot snap;
    struct pool *sched_pool;
    size_t next_start; /* where the next sampled filter pass begins */
    int equivalent;    /* every filter and score plugin registered `equivalent` */
    equiv_cache eq;
    /* binding model "object": the placements its binding objects make
     * (placements.h); NULL with model "field" */
    struct placements *placed;
    /* its series of the scheduling metrics (metrics.h), owned */
    struct metrics_cache *mcache;
};

/* Group the instances p->plugins[0..n_plugins) by extension point. */
void profile_build(profile *p);
/* Free what profile_build and the cycles left in p (not the instances). */
void profile_free(profile *p);

#endif
