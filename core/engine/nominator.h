/*
 * nominator.h - the workloads nominated to a target and not yet placed
 * (kube-scheduler's nominator, pkg/scheduler/backend/queue/nominator.go).
 *
 * A nomination comes from a post-filter's decision (host->nominate, the
 * preemption's) or from the workload's nominated_field read from the
 * store; it is dropped when the workload is placed (assumed or read
 * bound), deleted, or nominated elsewhere. A workload has at most one
 * nomination. The scheduling cycle counts the nominations of workloads
 * that outrank or equal its own on their targets while filtering
 * (framework.c); with none anywhere it looks at nothing here but the count.
 */
#ifndef TRELLIS_NOMINATOR_H
#define TRELLIS_NOMINATOR_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"
#include "object.h"

typedef struct nomination {
    trellis_object *w; /* one reference: the newest version read */
    char *kind;        /* the target's kind, owned */
    char *target;      /* the target's name (its key), owned */
    size_t pos;        /* in nominator.v */
} nomination;

typedef struct nominator {
    hmap by_id; /* workload id (borrowed from w) -> nomination */
    nomination **v;
    size_t n, cap;
    uint64_t gen; /* bumped on every change */
} nominator;

void nominator_init(nominator *m);
void nominator_free(nominator *m);
/* Nominate w to the target kind/name, replacing any other nomination of
 * w. A reference to w is taken; the strings are copied. */
void nominator_set(nominator *m, trellis_object *w, const char *kind, const char *name);
/* Drop the nomination of the workload of w's id, if any. */
void nominator_drop(nominator *m, const trellis_object *w);
/* The nomination of the workload of w's id, NULL when none; borrowed
 * until the next change. */
const nomination *nominator_get(const nominator *m, const trellis_object *w);
/* Keep the newest version of a nominated workload (its counters). */
void nominator_refresh(nominator *m, trellis_object *w);

static inline size_t nominator_count(const nominator *m)
{
    return m->n;
}

static inline const nomination *nominator_at(const nominator *m, size_t i)
{
    return m->v[i];
}

#endif
