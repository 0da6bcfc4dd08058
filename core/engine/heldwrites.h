/*
 * heldwrites.h - plugins' patches held back until something else landed.
 *
 * With binding objects, what a cycle's decided hooks write (Fleet's
 * policy snapshot status) goes out once the cycle's bindings landed, and
 * not when one failed: the services hold the patches here (services.h,
 * services_hold), the binding cycle writes or drops them. A list owns a
 * reference to each object and a copy of each patch.
 */
#ifndef TRELLIS_HELDWRITES_H
#define TRELLIS_HELDWRITES_H

#include <stddef.h>

#include "object.h"
#include "store.h"

typedef struct held_writes held_writes;

/* Add plugin's patch of o (subresource sub or NULL) to *h (made at the
 * first). */
void held_writes_add(held_writes **h, const char *plugin, const trellis_object *o, const char *sub,
                     const store_edit *edits, size_t n);

/* A patch written: 0, or -1 with err. */
typedef int (*held_write_fn)(void *ud, const trellis_object *o, const char *sub,
                             const store_edit *edits, size_t n, char *err, size_t errlen);

/* Write each patch of h in order with write (why_not NULL), or drop them
 * all saying why_not; a failure is logged with the plugin's name. Frees h
 * (NULL: nothing). */
void held_writes_finish(held_writes *h, held_write_fn write, void *ud, const char *why_not);

#endif
