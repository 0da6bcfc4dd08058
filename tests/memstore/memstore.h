/*
 * memstore.h - an in-memory store: the whole store interface (store.h)
 * over a table of objects with a version each, for unit tests of what
 * sits on a store (the binder, the change path) without files.
 *
 * Writes are buffered until flush, as every store's are: a patch is
 * refused when the object's version moved since it was read, and a flush
 * refuses a set whose object another writer changed meanwhile; list edits
 * are resolved at flush against the object as it is then (a concurrent
 * addition is not lost); a flush makes each object's writes or reports
 * them failed by object. Changes, this store's own writes included, are
 * delivered by dispatch, in order, through a descriptor that watch gives.
 * A test changes objects "from outside" with memstore_put/memstore_del
 * and makes a write fail with memstore_fail_next. Thread-safe.
 */
#ifndef TRELLIS_MEMSTORE_H
#define TRELLIS_MEMSTORE_H

#include <stddef.h>

#include "store.h"

store *memstore_new(void);
/* Add or replace the object of o's id, as another writer would (a
 * reference is taken): its version moves, and a change is queued. */
void memstore_put(store *s, trellis_object *o);
/* Delete the object of id, as another writer would. */
void memstore_del(store *s, const char *id);
/* The object of id now (a new reference), or NULL. */
trellis_object *memstore_get(store *s, const char *id);
/* The next flush refuses every write of id with message. */
void memstore_fail_next(store *s, const char *id, const char *message);
/* The i-th kind the host said it reads (set_kinds), or NULL. */
const char *memstore_kind(store *s, size_t i);
/* How many objects flushes have written (created, patched or deleted). */
size_t memstore_writes(store *s);
/* Every write the flushes made, in order: "create|patch|remove ID; ",
 * each flush ended by "| " (borrowed; valid until the next flush). */
const char *memstore_log(store *s);

#endif
