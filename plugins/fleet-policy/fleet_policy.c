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
 * KubeFleet's reason. filter (PickFixed): a cluster not named is not a
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

typedef struct policy {
    int type;
    uint32_t n;   /* FLEET_PICK_N */
    char **names; /* FLEET_PICK_FIXED, sorted, owned */
    size_t n_names;
    char *snapshot; /* the snapshot it came from, NULL: the placement's spec */
} policy;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"target_kind", TRELLIS_ARG_STRING, "MemberCluster",
     "the kind of the clusters PickFixed names"},
    {NULL, 0, NULL, NULL},
};

static void policy_free(policy *p)
{
    for (size_t i = 0; p && i < p->n_names; i++)
        free(p->names[i]);
    if (p) {
        free(p->names);
        free(p->snapshot);
    }
    free(p);
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    policy_free(data);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The count of a PickN policy: the snapshot's annotation, or the
 * placement's numberOfClusters. */
static int read_count(const trellis_object *snap, const trellis_value *pol, policy *p, char *err,
                      size_t errlen)
{
    int64_t n;
    if (snap) {
        const char *t = host->object_annotation(snap, FLEET_COUNT_ANNOTATION);
        char *end = NULL;
        long long v = t ? strtoll(t, &end, 10) : -1;
        if (!t || !*t || *end || v < 0 || v > 100000) {
            snprintf(err, errlen,
                     "%s %s: annotation %s: expected a count of clusters (0..100000), got %s%s%s",
                     host->object_kind(snap), host->object_name(snap), FLEET_COUNT_ANNOTATION,
                     t ? "\"" : "", t ? t : "none", t ? "\"" : "");
            return -1;
        }
        p->n = (uint32_t)v;
        return 0;
    }
    const trellis_value *v = host->value_get(pol, "numberOfClusters");
    if (!v || host->value_int(v, &n) < 0 || n < 0 || n > 100000) {
        snprintf(err, errlen,
                 "spec.policy.numberOfClusters: expected a count of clusters (0..100000) for "
                 "PickN");
        return -1;
    }
    p->n = (uint32_t)n;
    return 0;
}

/* The names of a PickFixed policy, sorted. */
static int read_names(const trellis_value *pol, const char *where, policy *p, char *err,
                      size_t errlen)
{
    const trellis_value *l = host->value_get(pol, "clusterNames");
    size_t n = l && host->value_type(l) == TRELLIS_VALUE_LIST ? host->value_len(l) : 0;
    p->names = calloc(n ? n : 1, sizeof *p->names);
    if (!p->names) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = values_scalar_text(host, host->value_at(l, i));
        if (!name || !*name) {
            snprintf(err, errlen, "%s.clusterNames[%zu]: expected a cluster name", where, i);
            return -1;
        }
        if (!(p->names[p->n_names] = values_strdup(name))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        p->n_names++;
    }
    qsort(p->names, p->n_names, sizeof *p->names, by_name);
    return 0;
}

static int read_policy(const trellis_object *snap, const trellis_value *pol, const char *where,
                       policy *p, char *err, size_t errlen)
{
    if (!pol || host->value_type(pol) == TRELLIS_VALUE_NULL)
        return 0; /* no policy: PickAll */
    if (host->value_type(pol) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map, got %s", where,
                 values_type_name(host->value_type(pol)));
        return -1;
    }
    p->type = fleet_policy_type(host, pol);
    if (p->type == FLEET_PICK_N)
        return read_count(snap, pol, p, err, errlen);
    if (p->type == FLEET_PICK_FIXED)
        return read_names(pol, where, p, err, errlen);
    if (p->type == FLEET_PICK_ALL)
        return 0;
    snprintf(err, errlen, "%s.placementType: expected PickAll, PickN or PickFixed, got \"%s\"",
             where, values_scalar_text(host, host->value_get(pol, "placementType")));
    return -1;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    const trellis_object *snap;
    const trellis_value *pol;
    if (fleet_policy_of(host, self, obj, cfg->snapshot_kind, &snap, &pol, err, errlen) < 0)
        return -1;
    policy *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char where[300];
    p->snapshot = snap ? values_strdup(host->object_name(snap)) : NULL;
    if (read_policy(snap, pol, fleet_policy_where(host, snap, where, sizeof where), p, err,
                    errlen) < 0) {
        policy_free(p);
        return -1;
    }
    *data = p;
    return 0;
}

static int named(const policy *p, const char *name)
{
    return bsearch(&name, p->names, p->n_names, sizeof *p->names, by_name) != NULL;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    (void)st;
    const config *cfg = host->get_private(self);
    const policy *p = host->object_data(self, w);
    if (!p)
        return TRELLIS_SUCCESS;
    static const char *const types[] = {"PickAll", "PickN", "PickFixed"};
    host->cycle_note(c, self, "%s, from %s%s", types[p->type],
                     p->snapshot ? "policy snapshot " : "the placement's spec.policy",
                     p->snapshot ? p->snapshot : "");
    if (p->type == FLEET_PICK_ALL) {
        host->cycle_want(c, TRELLIS_WANT_ALL);
        return TRELLIS_SUCCESS;
    }
    if (p->type == FLEET_PICK_N) {
        host->cycle_want(c, p->n);
        return TRELLIS_SUCCESS;
    }
    /* PickFixed: the named clusters, and none it holds that is not named */
    for (size_t i = 0; i < host->cycle_held_count(c); i++) {
        const char *held = host->cycle_held(c, i);
        if (!named(p, held))
            host->cycle_release(c, self, held, "not in the policy's clusterNames any more");
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
    const policy *p = host->object_data(self, w);
    if (!p || p->type != FLEET_PICK_FIXED || named(p, host->target_key(target)))
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNRESOLVABLE, "NotInClusterNames",
                 "the placement's PickFixed policy does not name this cluster");
    return TRELLIS_UNRESOLVABLE;
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const policy *x = host->object_data(self, a), *y = host->object_data(self, b);
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
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_equivalent(self, equivalent) < 0) {
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
