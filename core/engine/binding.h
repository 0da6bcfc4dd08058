/*
 * binding.h - how a profile records a placement.
 *
 * The binding model "field": the target's key is written into one field
 * of the workload (binding_field, e.g. spec.nodeName), or its name and
 * namespace into two (namespace_field: openMCP's status.cluster.name and
 * .namespace), through the object or a subresource; and the profile's
 * also_counts fields name targets the workload counts on as well without
 * being placed there by this scheduler (Gardener's status.seedName during
 * a migration). The model "object": one binding object per (workload,
 * target) (Fleet's ClusterResourceBinding), indexed by placements.h; a
 * workload may then be placed on many targets. Every place in the host
 * that asks "is this workload placed, where, and on what does it count",
 * or records or releases a placement, asks here, so another model is a
 * change of this file pair.
 */
#ifndef TRELLIS_BINDING_H
#define TRELLIS_BINDING_H

#include <stddef.h>

#include "object.h"
#include "profile.h"
#include "store.h"

/* Room for a composed key (namespace/name). */
#define BINDING_KEY_MAX 512

/* The target w is placed on (its key: namespace/name, or the name of a
 * cluster-scoped target; with model "object" the first binding read), or
 * NULL when it is pending. Borrowed from w or its binding object, or
 * composed in buf (namespace_field) of len bytes. */
const char *binding_target(const profile *p, const trellis_object *w, char *buf, size_t len);
/* Whether w is placed on target (a key). */
int binding_is_on(const profile *p, const trellis_object *w, const char *target);
/* The targets w is placed on by this profile (its binding field, or its
 * binding objects; not also_counts), by key, into out[0..max); how many
 * there are. Borrowed from w, its binding objects or buf. */
size_t binding_held(const profile *p, const trellis_object *w, const char **out, size_t max,
                    char *buf, size_t len);
/* fn(ud, key) for every target w counts on (its placements and the
 * also_counts fields), without repeats; keys borrowed for the call. */
void binding_each_counted(const profile *p, const trellis_object *w,
                          void (*fn)(void *ud, const char *target), void *ud);
/* Whether w still counts on target (after a change of w). */
int binding_counts_on(const profile *p, const trellis_object *w, const char *target);
/* What a binding write changed in the host's view (model "object"): the
 * binding object as it is now, or (deleted) the one deleted; a new
 * reference, or NULL with model "field". */
typedef struct binding_change {
    trellis_object *obj;
    int deleted;
} binding_change;

/* Edits a binder may add to a binding (binding_record's extra). */
#define BINDING_EDITS_MAX 64

/* Record w's placement on t in st, with extra[0..n_extra) (borrowed; at
 * most BINDING_EDITS_MAX: what a binder adds, Fleet's snapshot name and
 * cluster decision) in the same write: the field edits through the
 * subresource; or a new binding object (with the configured finalizer);
 * or the one released earlier placing again (the state its
 * previous-state annotation kept, else the initial state); or, when one
 * places already (a placement reconsidered and picked again), extra
 * alone. *ch (may be NULL) says what changed. 0, or -1 with err. */
int binding_record(const profile *p, store *st, const trellis_object *w, const trellis_object *t,
                   const store_edit *extra, size_t n_extra, binding_change *ch, char *err,
                   size_t errlen);
/* The id of the object binding_record writes for w's placement on t
 * (a key) (w's own id, or its binding object's, both borrowed from the
 * object, whatever their length; or the name of the one it would create,
 * in buf of len bytes): what a store names when that write fails. */
const char *binding_written_id(const profile *p, const trellis_object *w, const char *target,
                               char *buf, size_t len);
/* Release w's placement on target in st: clear the field(s), or give its
 * binding object the release state, keeping the state it had in the
 * previous-state annotation (or delete it). *ch (may be NULL) says what
 * changed. 0, or -1 with err. */
int binding_release(const profile *p, store *st, const trellis_object *w, const char *target,
                    binding_change *ch, char *err, size_t errlen);

/* A release worked out and not yet written (binding_release_plan): the
 * object, its edits (or its deletion), until binding_release_write. */
typedef struct binding_release_w {
    trellis_object *o; /* a reference */
    const char *subresource;
    store_edit e[2];
    size_t n;
    int remove;
    char *path, *was; /* what e may point at (owned: *rw may be copied) */
} binding_release_w;

/* binding_release in two steps: what it writes into *rw and what the
 * host's view becomes into *ch (may be NULL), nothing written; then the
 * write (which frees *rw, written or not). A decision that moves a
 * workload writes its new bindings first and releases after them. */
int binding_release_plan(const profile *p, const trellis_object *w, const char *target,
                         binding_release_w *rw, binding_change *ch, char *err, size_t errlen);
int binding_release_write(store *st, binding_release_w *rw, char *err, size_t errlen);
/* Drop *rw unwritten. */
void binding_release_forget(binding_release_w *rw);
/* A binding object b of p being deleted loses the finalizer the host
 * put on it (a patch in st, made at the next flush): 1 when one was
 * asked for, 0 when nothing was to do (or the store refused: logged). */
int binding_clean_up(const profile *p, store *st, const trellis_object *b);

#endif
