/*
 * fleet_same_placement.c - the fleet-same-placement plugin: KubeFleet's
 * SamePlacementAffinity score.
 *
 * KubeFleet's plugin has two halves. Its filter ("a cluster the placement
 * already has a Scheduled or Bound binding on is selected already") is
 * the host's: held targets are never candidates. Its score is this
 * plugin: a cluster where the placement has a binding of an older policy
 * snapshot (one fleet-policy put to the vote again) scores 1, any other 0,
 * the last of KubeFleet's score tuple (score_mode "tuple"), so that of two
 * clusters otherwise equal the one already serving the placement is kept.
 * PickN only: PickAll and PickFixed are not scored.
 */
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
    const char *target_kind;
} config;

/* This cycle's clusters with an obsolete binding, sorted. */
typedef struct obsolete {
    const char **keys;
    size_t n;
} obsolete;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {"target_kind", TRELLIS_ARG_STRING, "MemberCluster", "the kind of the member clusters"},
    {NULL, 0, NULL, NULL},
};

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n_feasible, trellis_status *st)
{
    (void)feasible;
    (void)n_feasible;
    const config *cfg = host->get_private(self);
    const fleet_policy *p = host->object_data(self, w);
    size_t nh = host->cycle_held_count(c);
    if (!p || p->type != FLEET_PICK_N || !nh)
        return TRELLIS_SKIP;
    obsolete *o = host->cycle_alloc(c, sizeof *o);
    if (o)
        o->keys = host->cycle_alloc(c, nh * sizeof *o->keys);
    if (!o || !o->keys) {
        host->status(st, TRELLIS_ERROR, "OutOfMemory", "no room for %zu bindings", nh);
        return TRELLIS_ERROR;
    }
    for (size_t i = 0; i < nh; i++)
        if (fleet_held_class(host, self, c, i, p->snapshot, cfg->target_kind) ==
            FLEET_HELD_OBSOLETE)
            o->keys[o->n++] = host->cycle_held(c, i);
    qsort(o->keys, o->n, sizeof *o->keys, fleet_key_cmp);
    host->cycle_set(c, self, o);
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    (void)w;
    (void)st;
    const obsolete *o = host->cycle_get(c, self);
    const char *key = host->target_key(t);
    *out = o && o->n && bsearch(&key, o->keys, o->n, sizeof *o->keys, fleet_key_cmp) ? 1 : 0;
    return TRELLIS_SUCCESS;
}

/* The score of the feasible targets idx[0..n), as score gives each. */
static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    (void)w;
    const obsolete *o = host->cycle_get(c, self);
    for (size_t j = 0; j < n; j++) {
        const char *key = o && o->n ? host->target_key(host->cycle_target(c, idx[j])) : NULL;
        scores[j] = key && bsearch(&key, o->keys, o->n, sizeof *o->keys, fleet_key_cmp) ? 1 : 0;
    }
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    cfg->target_kind = h->arg_string(args, "target_kind");
    if (fleet_register_policy(h, self) < 0 || h->register_pre_score(self, pre_score) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-same-placement",
    "1.0.0",
    "KubeFleet's SamePlacementAffinity score: 1 where the placement has a binding of an older "
    "policy snapshot",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_same_placement)
