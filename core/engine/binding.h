/*
 * binding.h - how a profile records a placement.
 *
 * Today's one binding model, "field": the target's name is written into
 * one field of the workload (binding_field, e.g. spec.nodeName), and the
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

/* The target w is placed on, or NULL when it is pending. Borrowed from w. */
const char *binding_target(const cfg_profile *pc, const trellis_object *w);
/* Whether w is placed on target. */
int binding_is_on(const cfg_profile *pc, const trellis_object *w, const char *target);
/* The targets w counts on (its placement and the also_counts fields),
 * without repeats, into out[0..BINDING_MAX_COUNTED); their number.
 * Borrowed from w. */
size_t binding_counted(const cfg_profile *pc, const trellis_object *w, const char **out);
/* Whether w still counts on target (after a change of w). */
int binding_counts_on(const cfg_profile *pc, const trellis_object *w, const char *target);
/* The store edit that clears w's placement (an eviction). The path is
 * borrowed from the config. */
store_edit binding_clear(const cfg_profile *pc);

#endif
