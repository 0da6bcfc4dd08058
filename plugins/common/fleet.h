/*
 * fleet.h - what the Fleet plugins share: a placement's scheduling policy
 * as KubeFleet reads it.
 *
 * KubeFleet schedules a ClusterResourcePlacement by its latest
 * ClusterSchedulingPolicySnapshot: the one labelled
 * kubernetes-fleet.io/parent-CRP=<placement> and
 * kubernetes-fleet.io/is-latest-snapshot=true. Without one, the plugins
 * read the placement's own spec.policy. Call from prepare_workload: the
 * walk over the snapshots is recorded, and the placement is prepared again
 * when a snapshot changes.
 */
#ifndef TRELLIS_PLUGINS_FLEET_H
#define TRELLIS_PLUGINS_FLEET_H

#include <stddef.h>

#include "trellis/plugin.h"

#define FLEET_PARENT_LABEL "kubernetes-fleet.io/parent-CRP"
#define FLEET_LATEST_LABEL "kubernetes-fleet.io/is-latest-snapshot"
#define FLEET_COUNT_ANNOTATION "kubernetes-fleet.io/number-of-clusters"

/* A policy's placement type: KubeFleet's default is PickAll (also for no
 * policy, NULL); FLEET_PICK_UNKNOWN for any other text. */
enum { FLEET_PICK_ALL = 0, FLEET_PICK_N, FLEET_PICK_FIXED, FLEET_PICK_UNKNOWN };
int fleet_policy_type(const trellis_host *h, const trellis_value *policy);

/* The policy of placement w: *snap gets its latest snapshot of kind
 * snapshot_kind (NULL: none, the policy is w's spec.policy), and the
 * policy value (NULL: no policy) is returned. -1 with err when more than
 * one snapshot is the latest (*snap NULL then). */
int fleet_policy_of(const trellis_host *h, trellis_plugin *self, const trellis_object *w,
                    const char *snapshot_kind, const trellis_object **snap,
                    const trellis_value **policy, char *err, size_t errlen);
/* What a Fleet plugin that reads policies does first in init: its
 * private config, size bytes, zeroed, whose first member is
 * `const char *snapshot_kind` (set from the argument snapshot_kind, a kind
 * it declares it reads), made the plugin's private data. The config, or
 * NULL with err. */
void *fleet_setup(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                  size_t size, char *err, size_t errlen);
/* "<Kind> <name>: spec.policy" for the snapshot, "spec.policy" without,
 * into buf: where a policy's fields are, for messages. */
const char *fleet_policy_where(const trellis_host *h, const trellis_object *snap, char *buf,
                               size_t len);

#endif
