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
 */
#ifndef TRELLIS_SNAPSHOT_H
#define TRELLIS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "hmap.h"

typedef struct snapshot {
    char *kind; /* owned */
    struct trellis_target **targets; /* sorted by name; copies owned here */
    size_t n, cap;
    hmap by_name; /* name -> struct trellis_target* */
    uint64_t gen, set_gen;
    int n_counters;
} snapshot;

void snapshot_init(snapshot *s, const char *kind, int n_counters);
void snapshot_free(snapshot *s);
void snapshot_update(snapshot *s, const cache *c);
struct trellis_target *snapshot_find(const snapshot *s, const char *name);

#endif
