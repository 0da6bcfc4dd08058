/*
 * index.h - every object the host read, by identity, and what the plugins
 * prepared for them.
 *
 * The index keeps the objects in store order and finds them by
 * "Kind/namespace/name" (the host table's lookup_object and
 * foreach_object read it). It also owns the prepared set: each object the
 * plugins prepared (run_prepare) is held here until only the index still
 * refers to it; index_sweep then gives its prepared data back to the
 * plugins that made it (release hooks). A changed object replaces the old
 * one at the same place; the old one's data is released at the next sweep,
 * once no cycle, queue or cache holds it any more.
 */
#ifndef TRELLIS_INDEX_H
#define TRELLIS_INDEX_H

#include <stddef.h>

#include "object.h"
#include "plugin.h"
#include "profile.h"

typedef struct obj_index obj_index;

/* The plugins of reg prepare objects for profiles[0..n). */
obj_index *index_new(const registry *reg, profile *profiles, size_t n_profiles);
/* Release every prepared object's data and drop every object. */
void index_free(obj_index *ix);

/* Add o, or put it in the place of the object of the same identity. */
void index_set(obj_index *ix, trellis_object *o);
/* Drop the object of o's identity; the others keep store order. */
void index_del(obj_index *ix, const trellis_object *o);
/* While a prepare runs, a lookup or a walk is recorded as what that
 * object depends on (depends.h). */
const trellis_object *index_lookup(const obj_index *ix, const char *kind, const char *ns,
                                   const char *name);
/* By id ("Kind/namespace/name"); not recorded. */
const trellis_object *index_lookup_id(const obj_index *ix, const char *id);
/* The ids of the objects whose prepare read o (depends_on). */
size_t index_dependents(const obj_index *ix, const trellis_object *o, char ***ids);
/* cb for every object of kind (in ns; every namespace when NULL), in store
 * order, until it returns nonzero; that value, or 0. */
int index_foreach(const obj_index *ix, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud);
size_t index_count(const obj_index *ix);
trellis_object *index_at(const obj_index *ix, size_t i);

/* Have the profiles whose workload (as_workload) or target kind o is
 * prepare it, and hold it in the prepared set. */
void index_prepare(obj_index *ix, trellis_object *o, int as_workload);
/* Release the prepared data of objects only the prepared set still holds,
 * when enough were replaced since the last sweep for it to pay (force:
 * always). */
void index_sweep(obj_index *ix, int force);

#endif
