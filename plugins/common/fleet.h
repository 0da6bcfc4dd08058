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
#include <stdint.h>

#include "trellis/plugin.h"

#define FLEET_PARENT_LABEL "kubernetes-fleet.io/parent-CRP"
#define FLEET_LATEST_LABEL "kubernetes-fleet.io/is-latest-snapshot"
#define FLEET_COUNT_ANNOTATION "kubernetes-fleet.io/number-of-clusters"

/* A policy's placement type: KubeFleet's default is PickAll (also for no
 * policy, NULL); FLEET_PICK_UNKNOWN for any other text, or a value that
 * is no text. */
enum { FLEET_PICK_ALL = 0, FLEET_PICK_N, FLEET_PICK_FIXED, FLEET_PICK_UNKNOWN };
int fleet_policy_type(const trellis_host *h, const trellis_value *policy);
/* A decimal integer as Go's strconv.Atoi reads it (an optional sign, then
 * digits only; no space): 0 with *out, or -1. */
int fleet_atoi(const char *s, int64_t *out);

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

/* A placement's policy, read once per change of the placement or of a
 * snapshot (prepare_workload). */
typedef struct fleet_policy {
    int type;
    uint32_t n;   /* FLEET_PICK_N: how many clusters */
    char **names; /* FLEET_PICK_FIXED: the clusters named, sorted, owned */
    size_t n_names;
    char *snapshot; /* the snapshot it came from, NULL: the placement's spec */
    /* the policy as read (NULL: none): borrowed from the placement or the
     * snapshot, valid while the prepared data is */
    const trellis_value *raw;
} fleet_policy;
/* The policy of placement w (fleet_policy_of), its type, count and
 * names read; NULL with err naming the field when it cannot be read (an
 * unknown placement type, a count that is not one, a name that is not a
 * string). Free with fleet_policy_free. */
fleet_policy *fleet_policy_load(const trellis_host *h, trellis_plugin *self,
                                const trellis_object *w, const char *snapshot_kind, char *err,
                                size_t errlen);
void fleet_policy_free(fleet_policy *p);
/* Register prepare_workload and release hooks that keep each
 * placement's fleet_policy as its prepared data (object_data), for a
 * plugin set up with fleet_setup. 0, or -1. */
int fleet_register_policy(const trellis_host *h, trellis_plugin *self);
/* strcmp of two `const char *` array elements (qsort, bsearch). */
int fleet_key_cmp(const void *a, const void *b);
/* The scores of a stored KubeFleet clusterScore (a binding's
 * spec.clusterDecision.clusterScore) into out: out[0] the affinity score,
 * out[1] the topology spread score (JSON `priorityScore`). 1, or 0 (both
 * 0) when it is null or absent. */
int fleet_stored_scores(const trellis_host *h, const trellis_value *score, int64_t out[2]);
/* Whether a PickFixed policy names the cluster. */
int fleet_policy_names(const fleet_policy *p, const char *name);

/* The state a binding of the current snapshot is in, as KubeFleet sorts
 * them: a binding of a cluster that is gone or leaving is dangling; one of
 * an older policy snapshot (spec.schedulingPolicySnapshotName is not
 * `snapshot`; NULL: the placement has no snapshot, and no binding is
 * older) is obsolete; the others are Scheduled or Bound. */
enum { FLEET_HELD_SCHEDULED = 0, FLEET_HELD_BOUND, FLEET_HELD_OBSOLETE, FLEET_HELD_DANGLING };
/* Which of those held target i of cycle c (cycle_held) is; clusters of
 * kind cluster_kind are looked up by key. */
int fleet_held_class(const trellis_host *h, trellis_plugin *self, const trellis_cycle *c, size_t i,
                     const char *snapshot, const char *cluster_kind);
/* How many held targets of c are Scheduled or Bound under snapshot (what
 * KubeFleet counts against a PickN's number of clusters). */
size_t fleet_held_current(const trellis_host *h, trellis_plugin *self, const trellis_cycle *c,
                          const char *snapshot, const char *cluster_kind);

#endif
