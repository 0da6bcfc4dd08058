/*
 * fleet_policy.c - the fleet-policy plugin: how many member clusters a
 * ClusterResourcePlacement wants, and which, from its scheduling policy.
 *
 * KubeFleet schedules a placement by its latest ClusterSchedulingPolicy
 * Snapshot: the snapshot labelled kubernetes-fleet.io/parent-CRP=<crp>
 * and kubernetes-fleet.io/is-latest-snapshot=true. Its spec.policy says
 * the placement type: PickAll (also when there is no policy), PickN (N
 * from the snapshot's annotation kubernetes-fleet.io/number-of-clusters,
 * which a scale-out changes without a new snapshot) or PickFixed
 * (spec.policy.clusterNames). Without a snapshot, the placement's own
 * spec.policy is read (numberOfClusters for PickN). The snapshot is found
 * and the policy read once per change of the placement or of a snapshot
 * (prepare_workload: the host prepares it again when a snapshot of the
 * kind changes).
 *
 * pre_filter: PickAll wants every feasible cluster, PickN N in all, and
 * PickFixed the clusters it names: it gives up a cluster it holds that is
 * no longer named, and notes each named cluster that does not exist with
 * KubeFleet's reason. Before that, the bindings are sorted as KubeFleet's
 * framework sorts them: a binding whose cluster is gone or leaving is
 * given up (dangling); one of an older policy snapshot is put to the vote
 * again (picked again, the binder moves it to the new snapshot; not
 * picked, it is given up), except when a PickN scales down: then every
 * such binding is given up, and of the current ones the Scheduled go
 * before the Bound, each lowest stored score (topology spread, then
 * affinity; none first) then smallest name first. A cluster that gains a
 * taint or loses a label keeps its binding: held clusters are not filtered
 * again. filter (PickFixed): a cluster not named is not a
 * candidate. An unreadable policy (an unknown placement type, a count that
 * is not a number) is the workload's error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "fleet.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
    const char *target_kind;
} config;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"target_kind", TRELLIS_ARG_STRING, "MemberCluster",
     "the kind of the clusters PickFixed names"},
    {NULL, 0, NULL, NULL},
};

/* A held binding of the current snapshot, for the scale-down order. */
typedef struct held {
    const char *key;
    int has_score; /* spec.clusterDecision.clusterScore is there */
    int64_t spread, affinity;
} held;

static held held_of(trellis_cycle *c, size_t i)
{
    held x = {host->cycle_held(c, i), 0, 0, 0};
    const trellis_object *b = host->cycle_held_object(c, i);
    int64_t sc[2];
    x.has_score = fleet_stored_scores(
        host, b ? host->object_get(b, "spec.clusterDecision.clusterScore") : NULL, sc);
    x.affinity = sc[0];
    x.spread = sc[1];
    return x;
}

/* KubeFleet's scale-down order: a binding without a stored score first,
 * then the lower score (topology spread, then affinity), then the
 * smaller cluster name. */
static int scale_down_order(const void *pa, const void *pb)
{
    const held *a = pa, *b = pb;
    if (a->has_score != b->has_score)
        return a->has_score - b->has_score;
    if (a->has_score && a->spread != b->spread)
        return a->spread < b->spread ? -1 : 1;
    if (a->has_score && a->affinity != b->affinity)
        return a->affinity < b->affinity ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* Release the first n of v[0..nv) in scale-down order. */
static size_t trim(trellis_plugin *self, trellis_cycle *c, held *v, size_t nv, size_t n,
                   const char *state, uint32_t want)
{
    qsort(v, nv, sizeof *v, scale_down_order);
    size_t k = 0;
    char why[200];
    snprintf(why, sizeof why, "scaled down to %u cluster(s): a %s binding given up", want, state);
    for (; k < n && k < nv; k++)
        host->cycle_release(c, self, v[k].key, why);
    return k;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    (void)st;
    const config *cfg = host->get_private(self);
    const fleet_policy *p = host->object_data(self, w);
    if (!p)
        return TRELLIS_SUCCESS;
    static const char *const types[] = {"PickAll", "PickN", "PickFixed"};
    host->cycle_note(c, self, "%s, from %s%s", types[p->type],
                     p->snapshot ? "policy snapshot " : "the placement's spec.policy",
                     p->snapshot ? p->snapshot : "");
    /* KubeFleet's classification of the bindings: dangling ones (their
     * cluster gone or leaving) are given up first; those of an older
     * snapshot are ranked again with the other clusters (picked again,
     * they move to this snapshot), or given up when scaling down */
    size_t nh = host->cycle_held_count(c), n_obsolete = 0, ns = 0, nb = 0;
    held *sched = nh ? host->cycle_alloc(c, nh * sizeof *sched) : NULL;
    held *bound = nh ? host->cycle_alloc(c, nh * sizeof *bound) : NULL;
    if (nh && (!sched || !bound)) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for %zu bindings", nh);
        return TRELLIS_ERROR;
    }
    for (size_t i = 0; i < nh; i++) {
        int k = fleet_held_class(host, self, c, i, p->snapshot, cfg->target_kind);
        const char *key = host->cycle_held(c, i);
        char why[300];
        if (k == FLEET_HELD_DANGLING) {
            snprintf(why, sizeof why, "cluster %s has left the fleet: its binding is unscheduled",
                     key);
            host->cycle_release(c, self, key, why);
        } else if (k == FLEET_HELD_OBSOLETE) {
            n_obsolete++;
        } else if (k == FLEET_HELD_BOUND) {
            bound[nb++] = held_of(c, i);
        } else {
            sched[ns++] = held_of(c, i);
        }
    }
    size_t present = ns + nb;
    int down = p->type == FLEET_PICK_N && p->n <= present && present - p->n + n_obsolete > 0;
    for (size_t i = 0; i < nh && n_obsolete; i++) {
        if (fleet_held_class(host, self, c, i, p->snapshot, cfg->target_kind) !=
            FLEET_HELD_OBSOLETE)
            continue;
        const char *key = host->cycle_held(c, i);
        if (down)
            host->cycle_release(
                c, self, key, "a binding of an older policy snapshot, given up when scaling down");
        else
            host->cycle_reconsider(c, self, key,
                                   "a binding of an older policy snapshot, ranked again");
    }
    if (p->type == FLEET_PICK_ALL) {
        host->cycle_want(c, TRELLIS_WANT_ALL);
        return TRELLIS_SUCCESS;
    }
    if (p->type == FLEET_PICK_N) {
        if (down && present > p->n) {
            /* Scheduled bindings go first, then Bound ones */
            size_t gone = trim(self, c, sched, ns, present - p->n, "Scheduled", p->n);
            trim(self, c, bound, nb, present - p->n - gone, "Bound", p->n);
        }
        host->cycle_want(c, p->n);
        return TRELLIS_SUCCESS;
    }
    /* PickFixed: the named clusters, and none it holds that is not named */
    for (size_t i = 0; i < nh; i++) {
        const char *key = host->cycle_held(c, i);
        if (!fleet_policy_names(p, key))
            host->cycle_release(c, self, key, "not in the policy's clusterNames any more");
    }
    for (size_t i = 0; i < p->n_names; i++)
        if (!host->lookup_object(self, cfg->target_kind, "", p->names[i]))
            host->cycle_note(c, self, "Specified cluster \"%s\" is not found", p->names[i]);
    host->cycle_want(c, (uint32_t)p->n_names);
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *target, trellis_status *st)
{
    (void)c;
    const fleet_policy *p = host->object_data(self, w);
    if (!p || p->type != FLEET_PICK_FIXED || fleet_policy_names(p, host->target_key(target)))
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNRESOLVABLE, "NotInClusterNames",
                 "the placement's PickFixed policy does not name this cluster");
    return TRELLIS_UNRESOLVABLE;
}

/* The filter over a block: only a PickFixed placement rejects anything. */
static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        size_t first, size_t n, uint64_t *pass)
{
    const fleet_policy *p = host->object_data(self, w);
    if (!p || p->type != FLEET_PICK_FIXED)
        return;
    for (size_t j = 0; j < n; j++)
        if (!fleet_policy_names(p, host->target_key(host->cycle_target(c, first + j))))
            pass[j / 64] &= ~(1ull << (j % 64));
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const fleet_policy *x = host->object_data(self, a), *y = host->object_data(self, b);
    if (!x || !y || x->type != y->type || x->n_names != y->n_names)
        return x == y;
    for (size_t i = 0; i < x->n_names; i++)
        if (strcmp(x->names[i], y->names[i]) != 0)
            return 0;
    return 1;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->target_kind = h->arg_string(args, "target_kind");
    if (fleet_register_policy(h, self) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_span(self, filter_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-policy",
    "1.0.0",
    "how many member clusters a placement wants and which: PickAll, PickN, PickFixed, from its "
    "latest policy snapshot",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_policy)
