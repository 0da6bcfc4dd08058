/*
 * wqueue.h - the writes a networked store (the etcd store, the
 * Kubernetes API store) holds until its flush: one per object, the edits
 * of successive patches of the same part merged; a second write of an
 * object that cannot be merged with the one queued is refused, naming
 * it. The caller locks.
 */
#ifndef TRELLIS_WQUEUE_H
#define TRELLIS_WQUEUE_H

#include <stddef.h>

#include "hmap.h"
#include "store.h"

enum { WQ_PATCH, WQ_CREATE, WQ_REMOVE };

typedef struct wq_write {
    char *id;
    char *ix; /* its key in the queue: id, or id and "binding" for a Binding */
    int op;
    trellis_object *o; /* as read (patch, remove) or to create; one reference */
    char *sub;         /* the subresource of a patch, or NULL */
    store_edit *edits; /* path and value owned */
    /* for each edit, 1 when it came through the status subresource: a
     * patch of the object and one of its status may be queued together
     * (with beside), each edit keeping its part */
    unsigned char *in_status;
    size_t n_edits;
    /* a patch, then a removal of the object (with beside; without, the
     * removal takes the patch's place) */
    int then_remove;
    int state; /* the flush's own: 0 on queueing */
    char *why; /* the flush's own: NULL on queueing, freed with the write */
} wq_write;

typedef struct wqueue {
    wq_write *v;
    size_t n, cap;
    hmap ix; /* ix -> index + 1 */
} wqueue;

void wqueue_init(wqueue *q);

/* Queue a creation or removal of o (a reference is taken). 0, or -1 with
 * err when another write of o is queued; but a removal after a patch of
 * the object (openMCP's binder takes its finalizer off a Cluster, then
 * deletes it): with beside, the write is the patch, then the removal
 * (then_remove); without, the removal alone. */
int wqueue_add(wqueue *q, const trellis_object *o, int op, int beside, char *err, size_t errlen);

/* Queue edits[0..n) of o's part sub (NULL: the object), checked against
 * o first (edit_check), after those of a patch of the same part queued
 * before. With beside, the Kubernetes API's parts: a Binding (sub
 * "binding") and a status patch of the same object may both be queued
 * (kube-scheduler writes status.nominatedNodeName before it binds), and
 * a patch of the object and one of its status go into one write, each
 * edit marked with its part (openMCP's binder adds a finalizer to a
 * request, then writes its status.cluster). 0, or -1 with err. */
int wqueue_patch(wqueue *q, const trellis_object *o, const char *sub, const store_edit *edits,
                 size_t n, int beside, char *err, size_t errlen);

/* Every write queued, in order (*n of them; the caller owns the array
 * and frees each with wq_write_free); the queue is empty after. */
wq_write *wqueue_take(wqueue *q, size_t *n);

/* Whether w is a patch of the subresource "binding" (a Binding). */
int wq_write_is_binding(const wq_write *w);

void wq_write_free(wq_write *w);

/* Free what is queued; q is empty (and initialised) after. */
void wqueue_clear(wqueue *q);

#endif
