/*
 * snapshot.h - the immutable view of one target kind used by a cycle.
 *
 * At the start of every cycle the snapshot is brought up to date from the
 * cache: only targets whose generation moved since the last update are
 * copied (walking the cache's most-recently-changed list), and the target
 * array is rebuilt only when targets were added or removed. Targets are
 * ordered by name, which makes every result independent of hash order and
 * of the number of workers. Plugins see the copies, so nothing the cache
 * does during binding can change what a cycle is looking at.
 *
 * Besides the copies the snapshot keeps columns indexed by a target's
 * position, for the SDK's span hooks: each counter's sums over all targets,
 * each plugin target value, every plugin slot's prepared data, a bitmap of
 * the targets some plugin could not prepare, and each target's generation
 * (what changed since a generation, for the equivalence cache). A hot loop
 * over targets reads these arrays and calls nothing.
 */
#ifndef TRELLIS_SNAPSHOT_H
#define TRELLIS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "hmap.h"

typedef struct snapshot {
    char *kind;                      /* owned */
    struct trellis_target **targets; /* sorted by name; copies owned here */
    size_t n;
    hmap by_name; /* name -> struct trellis_target* */
    uint64_t gen, set_gen, removals;
    int n_counters;
    int n_slots, n_tvalues;
    /* columns of cap_cols elements: column k of x starts at x + k * cap_cols;
     * the targets, their generations and snap_ids, counters, target values
     * and prepared data are columns too. Their blocks keep `off` free
     * elements before x: a target added in the first half of the order
     * moves the entries before it down one (off shrinks by one), one in
     * the second half those after it up. */
    size_t cap_cols, off;
    int64_t *counters; /* n_counters columns: counter k's sum on target i */
    int64_t *tvalues;  /* n_tvalues columns: target value k of target i */
    void **data;       /* n_slots columns: the prepared data of target i */
    uint64_t *invalid; /* bit i: target i's object failed a plugin's prepare */
    uint64_t *tgen;    /* the cache generation target i was copied at */
    /* a target's place in the blocks (its position + off) by its snap_id,
     * and the snap_id at a position: a target added between two others
     * moves the earlier or the later ones by one without touching their
     * copies, and only the moved ones' places change */
    uint32_t *pos, *id_at;
} snapshot;

void snapshot_init(snapshot *s, const char *kind, int n_counters, int n_slots, int n_tvalues);
void snapshot_free(snapshot *s);
void snapshot_update(snapshot *s, const cache *c);
struct trellis_target *snapshot_find(const snapshot *s, const char *name);
/* Columns of n elements, by target position: the prepared data of plugin
 * slot `slot`, counter k's sums, target value k. */
static inline void *const *snapshot_data(const snapshot *s, int slot)
{
    return s->data ? s->data + (size_t)slot * s->cap_cols : NULL;
}

static inline const int64_t *snapshot_counter(const snapshot *s, int k)
{
    return s->counters ? s->counters + (size_t)k * s->cap_cols : NULL;
}

static inline const int64_t *snapshot_values(const snapshot *s, int k)
{
    return s->tvalues ? s->tvalues + (size_t)k * s->cap_cols : NULL;
}

/* The position of the snapshot's target t (or of a copy of it). */
static inline size_t snapshot_pos(const snapshot *s, const struct trellis_target *t)
{
    return t->snap_id < s->n ? s->pos[t->snap_id] - s->off : SIZE_MAX;
}

#endif
