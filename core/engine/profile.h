/*
 * profile.h - a profile at run time: its plugin instances grouped per
 * extension point, its queue and its snapshot.
 *
 * profile_build groups a profile's instances (config order) into one list
 * per extension point, honouring each entry's `points`; the lists are what
 * the extension-point runtime (runtime.h) walks. Outside the scheduling
 * engine a profile is opaque: front-ends read it through the accessors
 * below. The engine's own modules include profile_impl.h.
 */
#ifndef TRELLIS_PROFILE_H
#define TRELLIS_PROFILE_H

#include <stddef.h>

#include "cfg.h"
#include "trellis/plugin.h"

typedef struct profile profile;

/* The plugins of one extension point, in config order. */
typedef struct plist {
    trellis_plugin **v;
    size_t n;
} plist;

/* The extension points a profile groups its plugins by. */
typedef enum {
    EP_PRE_FILTER,
    EP_FILTER,
    EP_POST_FILTER,
    EP_PRE_SCORE,
    EP_SCORE,
    EP_RESERVE,
    EP_PERMIT,
    EP_PRE_BIND,
    EP_BIND,
    EP_POST_BIND,
    EP_PREPARE_WORKLOAD,
    EP_PREPARE_TARGET,
    EP_EVICTION,
    EP_PRE_ENQUEUE,
    EP_FINALIZE,
    EP_TARGET_LOST,
    EP_DECIDED,
    EP_COUNT
} ext_point;

const cfg_profile *profile_cfg(const profile *p);
const char *profile_name(const profile *p);
/* The plugins of point ep. */
const plist *profile_point(const profile *p, ext_point ep);
/* Every plugin of the profile, config order. */
trellis_plugin *const *profile_plugins(const profile *p, size_t *n);
/* Whether w is of the profile's workload kind (and API version). */
int profile_is_workload_kind(const profile *p, const trellis_object *o);
int profile_is_target_kind(const profile *p, const trellis_object *o);
/* Whether workload w has run to its end (the profile's finished_field
 * holds one of its finished_values): it counts on no target, is no
 * preemption victim and gets no cycle, as if it were gone. */
int profile_workload_finished(const profile *p, const trellis_object *w);
/* The target w is nominated to in its nominated_field, NULL when the
 * profile has none or the field is absent or empty; borrowed from w. */
const char *profile_workload_nominated(const profile *p, const trellis_object *w);

#endif
