/*
 * placements.h - the placements a profile derives from binding objects
 * (binding model "object": one object per (workload, target), Fleet's
 * ClusterResourceBinding).
 *
 * A binding object names its workload in a field (a label such as
 * kubernetes-fleet.io/parent-CRP; the workload is in the binding's
 * namespace) and its target in another (spec.targetCluster); an optional
 * state field says whether it places the workload (Scheduled, Bound) or no
 * longer does (Unscheduled); one being deleted (metadata.deletionTimestamp)
 * does neither. The index keeps, per workload, the binding
 * objects that name it, so "where is this workload placed" is a lookup,
 * and says which workloads a changed binding object concerns.
 */
#ifndef TRELLIS_PLACEMENTS_H
#define TRELLIS_PLACEMENTS_H

#include <stddef.h>

#include "cfg.h"
#include "object.h"
#include "store.h"

/* Room for a workload id ("Kind/namespace/name"): a binding object that
 * names a workload of a longer id places nothing (a warning names it),
 * and such a workload is an error decision; never cut. */
#define PLACEMENTS_ID_MAX 768

typedef struct placements placements;

/* The index of a profile whose binding model is "object" (pc is
 * borrowed and outlives it). */
placements *placements_new(const cfg_profile *pc);
void placements_free(placements *pl);
/* Whether o is one of the profile's binding objects. */
int placements_claims(const placements *pl, const trellis_object *o);
/* A binding object was added (old_obj NULL), changed or removed (new_obj
 * NULL): the index follows (a reference to new_obj is taken). The ids of
 * the workloads whose placements may have changed go to ids; their
 * number (0..2). */
size_t placements_update(placements *pl, const trellis_object *old_obj, trellis_object *new_obj,
                         char ids[2][PLACEMENTS_ID_MAX]);
/* The targets w is placed on (keys, borrowed from the binding objects),
 * in the order the bindings were read, each once, into out[0..max); how
 * many there are (possibly more than max). */
size_t placements_of(const placements *pl, const trellis_object *w, const char **out, size_t max);
/* The binding object that places w on target (placed), or that names
 * them in a state that does not place (!placed: one released), or NULL. */
const trellis_object *placements_binding(const placements *pl, const trellis_object *w,
                                         const char *target, int placed);
/* The name of the binding object the host creates for w on the target
 * of key target: <workload>-<target namespace>-<target name> (no
 * namespace for a cluster-scoped target), cut at 200 characters and then
 * made unique with 8 hex digits of a hash of the workload's id and the
 * key; into buf (len >= 256). The same state always gives the same
 * names. */
const char *placements_object_name(const trellis_object *w, const char *target, char *buf,
                                   size_t len);
/* placements_binding from any thread (a binder's): a new reference, or
 * NULL. The other functions belong to the scheduling thread. */
trellis_object *placements_binding_ref(placements *pl, const trellis_object *w, const char *target,
                                       int placed);
/* A new binding object placing w on t (a new reference): the configured kind and apiVersion, in w's
 * namespace, named <workload>-<target name>, the workload and target fields, the initial state and
 * the finalizer set, then extra[0..n_extra) applied (what a binder adds). NULL with err when a
 * field cannot be written (a workload field that is not a label or a plain path, an edit that does
 * not fit). */
trellis_object *placements_manifest(const placements *pl, const trellis_object *w,
                                    const trellis_object *t, const store_edit *extra,
                                    size_t n_extra, char *err, size_t errlen);

#endif
