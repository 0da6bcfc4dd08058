/*
 * binding.h - how a profile records a placement.
 *
 * The binding model "field": the target's key is written into one field
 * of the workload (binding_field, e.g. spec.nodeName), or its name and
 * namespace into two (namespace_field: openMCP's status.cluster.name and
 * .namespace), through the object or a subresource; and the
 * profile's also_counts fields name targets the workload counts on as
 * well without being placed there by this scheduler (Gardener's
 * status.seedName during a migration). Every place in the host that asks
 * "is this workload placed, where, and on what does it count" asks here,
 * so another model is a change of this file pair.
 */
#ifndef TRELLIS_BINDING_H
#define TRELLIS_BINDING_H

#include <stddef.h>

#include "cfg.h"
#include "object.h"
#include "store.h"

/* The most targets one workload counts on. */
#define BINDING_MAX_COUNTED 8
/* Room for a composed key (namespace/name). */
#define BINDING_KEY_MAX 512

/* The target w is placed on (its key: namespace/name, or the name of a
 * cluster-scoped target), or NULL when it is pending. Borrowed from w, or
 * composed in buf (namespace_field) of len bytes. */
const char *binding_target(const cfg_profile *pc, const trellis_object *w, char *buf, size_t len);
/* Whether w is placed on target (a key). */
int binding_is_on(const cfg_profile *pc, const trellis_object *w, const char *target);
/* The targets w counts on (its placement and the also_counts fields),
 * without repeats, into out[0..BINDING_MAX_COUNTED); their number.
 * Borrowed from w, or (the placement, composed) from buf. */
size_t binding_counted(const cfg_profile *pc, const trellis_object *w, const char **out, char *buf,
                       size_t len);
/* Whether w still counts on target (after a change of w). */
int binding_counts_on(const cfg_profile *pc, const trellis_object *w, const char *target);
/* The subresource placements are written through: NULL (the object),
 * "status" or "binding". */
const char *binding_subresource(const cfg_profile *pc);
/* The store edits that clear w's placement (an eviction) into out; their
 * number (1 or 2). Paths borrowed from the config. */
size_t binding_clear(const cfg_profile *pc, store_edit out[2]);
/* The store edits that place a workload on target t into out; their
 * number: its key into the field, or its name and namespace into the
 * field and the namespace field. Borrowed from the config and t. */
size_t binding_edits(const cfg_profile *pc, const trellis_object *t, store_edit out[2]);

#endif
