/*
 * fleet_binder.c - the fleet-binder plugin: a ClusterResourceBinding as
 * KubeFleet's scheduler writes one.
 *
 * The host creates the binding object (binding model "object": the
 * placement's label, spec.targetCluster, spec.state Scheduled, the
 * scheduler's cleanup finalizer) or places an Unscheduled one again; this
 * binder adds, in the same write (store_bind_edits), what KubeFleet
 * records with every placement: spec.schedulingPolicySnapshotName, the
 * policy snapshot it was made under, and spec.clusterDecision:
 *
 *   clusterName, selected: true,
 *   clusterScore: {affinityScore, priorityScore} (the topology spread
 *     score; both 0 for PickAll, whose clusters are not scored; null for
 *     PickFixed),
 *   reason: Successfully scheduled resources for placement in "<cluster>"
 *     (affinity score: A, topology spread score: T): picked by scheduling
 *     policy (without the scores for PickFixed).
 *
 * A binding of an older snapshot picked again (fleet-policy put it to the
 * vote) gets the same two fields and keeps its state. The scores are the
 * ones the cycle ranked with (cycle_score of the plugins named by the
 * arguments affinity and spread), taken in reserve on the scheduling
 * thread and written by bind on the binding thread.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"
#include "fleet.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
    const char *affinity;      /* the score plugins, by name in the profile */
    const char *spread;
} config;

/* The scores of the clusters reserved in this cycle. */
typedef struct picked {
    const char *key; /* copied: the binding thread reads it */
    int64_t affinity, spread;
    struct picked *next;
} picked;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"affinity", TRELLIS_ARG_STRING, "fleet-affinity",
     "the score plugin whose score is the affinity score"},
    {"spread", TRELLIS_ARG_STRING, "fleet-topology-spread",
     "the score plugin whose score is the topology spread score"},
    {NULL, 0, NULL, NULL},
};

static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)w;
    const config *cfg = host->get_private(self);
    const char *key = host->target_key(t);
    size_t kl = strlen(key) + 1;
    picked *x = host->cycle_alloc(c, sizeof *x + kl);
    if (!x) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for a cluster decision");
        return TRELLIS_ERROR;
    }
    x->key = memcpy((char *)(x + 1), key, kl);
    /* not scored (PickAll, one feasible cluster, a plugin that sat the
     * cycle out): 0, as KubeFleet's empty ClusterScore */
    if (host->cycle_score(c, cfg->affinity, t, &x->affinity) < 0)
        x->affinity = 0;
    if (host->cycle_score(c, cfg->spread, t, &x->spread) < 0)
        x->spread = 0;
    x->next = host->cycle_get(c, self);
    host->cycle_set(c, self, x);
    return TRELLIS_SUCCESS;
}

/* JSON text of s (a cluster name) into buf, quoted and escaped. */
static void json_string(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    if (len < 3)
        return;
    buf[o++] = '"';
    for (; *s && o + 8 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(buf + o, len - o, "\\u%04x", ch);
        } else {
            buf[o++] = (char)ch;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                const trellis_target *t, trellis_status *st)
{
    const fleet_policy *p = host->object_data(self, w);
    const char *name = host->target_key(t);
    const picked *x = host->cycle_get(c, self);
    while (x && strcmp(x->key, name) != 0)
        x = x->next;
    char q[600], reason[1024], decision[2048], err[TRELLIS_MESSAGE_MAX];
    json_string(name, q, sizeof q);
    if (p && p->type == FLEET_PICK_FIXED) {
        snprintf(reason, sizeof reason,
                 "Successfully scheduled resources for placement in %s: picked by scheduling "
                 "policy",
                 q);
    } else {
        snprintf(reason, sizeof reason,
                 "Successfully scheduled resources for placement in %s (affinity score: %" PRId64
                 ", topology spread score: %" PRId64 "): picked by scheduling policy",
                 q, x ? x->affinity : 0, x ? x->spread : 0);
    }
    char rq[1200];
    json_string(reason, rq, sizeof rq);
    if (p && p->type == FLEET_PICK_FIXED)
        snprintf(decision, sizeof decision,
                 "{\"clusterName\":%s,\"selected\":true,\"clusterScore\":null,\"reason\":%s}", q,
                 rq);
    else
        snprintf(
            decision, sizeof decision,
            "{\"clusterName\":%s,\"selected\":true,\"clusterScore\":{\"affinityScore\":%" PRId64
            ",\"priorityScore\":%" PRId64 "},\"reason\":%s}",
            q, x ? x->affinity : 0, x ? x->spread : 0, rq);
    trellis_edit e[2];
    size_t n = 0;
    if (p && p->snapshot)
        e[n++] = (trellis_edit){TRELLIS_EDIT_SET, "spec.schedulingPolicySnapshotName", p->snapshot};
    e[n++] = (trellis_edit){TRELLIS_EDIT_SET_JSON, "spec.clusterDecision", decision};
    if (host->store_bind_edits(self, w, t, e, n, err, sizeof err) < 0) {
        host->status(st, TRELLIS_ERROR, "BindFailed", "%s",
                     err[0] ? err : "the store refused the change");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->affinity = h->arg_string(args, "affinity");
    cfg->spread = h->arg_string(args, "spread");
    if (fleet_register_policy(h, self) < 0 || h->register_reserve(self, reserve) < 0 ||
        h->register_bind(self, bind) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-binder",
    "1.0.0",
    "a ClusterResourceBinding as KubeFleet writes one: the policy snapshot and the cluster "
    "decision with its scores",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_binder)
