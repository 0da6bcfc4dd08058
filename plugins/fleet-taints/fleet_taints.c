/*
 * fleet_taints.c - the fleet-taints plugin: KubeFleet's TaintToleration
 * filter. A member cluster with a taint (spec.taints, effect NoSchedule)
 * the placement's policy does not tolerate is not a candidate.
 *
 * KubeFleet's matching (pkg/scheduler/framework/plugins/tainttoleration)
 * differs from Kubernetes': a toleration with operator Exists tolerates a
 * taint of its key (an empty key: every taint), one with operator Equal a
 * taint of its key and value, and one without an operator nothing; an
 * empty toleration effect matches any effect. The tolerations are the
 * policy's (spec.policy.tolerations of the latest policy snapshot, else of
 * the placement); a PickFixed policy runs no filter in KubeFleet, so none
 * of its clusters is rejected here. The message is KubeFleet's, the taint
 * printed as Go's %+v prints it. Taints are read once per cluster change,
 * tolerations once per placement or snapshot change.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
} config;

/* A taint or a toleration: strings owned by the struct that holds it. */
typedef struct item {
    char *key, *value, *effect;
    int op; /* tolerations: OP_* */
} item;

enum { OP_NONE = 0, OP_EXISTS, OP_EQUAL };

typedef struct items {
    item *v;
    size_t n;
    int fixed; /* tolerations of a PickFixed policy: no filter */
} items;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {NULL, 0, NULL, NULL},
};

static void items_free(items *it)
{
    for (size_t i = 0; it && i < it->n; i++) {
        free(it->v[i].key);
        free(it->v[i].value);
        free(it->v[i].effect);
    }
    if (it)
        free(it->v);
    free(it);
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    items_free(data);
}

static char *text(const trellis_value *m, const char *key)
{
    const char *t = values_scalar_text(host, host->value_get(m, key));
    return values_strdup(t ? t : "");
}

/* The list at path of o (where names it for messages) into a new items;
 * NULL with err when it is not a list of maps. */
static items *read_items(const trellis_value *list, const char *where, int tolerations, char *err,
                         size_t errlen)
{
    if (list && host->value_type(list) != TRELLIS_VALUE_LIST &&
        host->value_type(list) != TRELLIS_VALUE_NULL) {
        snprintf(err, errlen, "%s: expected a list, got %s", where,
                 values_type_name(host->value_type(list)));
        return NULL;
    }
    size_t n = list && host->value_type(list) == TRELLIS_VALUE_LIST ? host->value_len(list) : 0;
    items *it = calloc(1, sizeof *it);
    if (it)
        it->v = calloc(n ? n : 1, sizeof *it->v);
    if (!it || !it->v) {
        items_free(it);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_value *e = host->value_at(list, i);
        if (host->value_type(e) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s[%zu]: expected a map, got %s", where, i,
                     values_type_name(host->value_type(e)));
            items_free(it);
            return NULL;
        }
        item *x = &it->v[it->n++];
        x->key = text(e, "key");
        x->value = text(e, "value");
        x->effect = text(e, "effect");
        const char *op = values_scalar_text(host, host->value_get(e, "operator"));
        x->op = !tolerations || !op         ? OP_NONE
                : strcmp(op, "Exists") == 0 ? OP_EXISTS
                : strcmp(op, "Equal") == 0  ? OP_EQUAL
                                            : OP_NONE;
        if (!x->key || !x->value || !x->effect) {
            snprintf(err, errlen, "out of memory");
            items_free(it);
            return NULL;
        }
    }
    return it;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    (void)self;
    items *t = read_items(host->object_get(obj, "spec.taints"), "spec.taints", 0, err, errlen);
    *data = t;
    return t ? 0 : -1;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    const trellis_object *snap;
    const trellis_value *pol;
    char where[300], path[340];
    if (fleet_policy_of(host, self, obj, cfg->snapshot_kind, &snap, &pol, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof path, "%s.tolerations",
             fleet_policy_where(host, snap, where, sizeof where));
    items *t = read_items(pol ? host->value_get(pol, "tolerations") : NULL, path, 1, err, errlen);
    if (!t)
        return -1;
    t->fixed = fleet_policy_type(host, pol) == FLEET_PICK_FIXED;
    *data = t;
    return 0;
}

/* KubeFleet's canTolerationTolerateTaint. */
static int tolerates(const item *tol, const item *taint)
{
    int effect = !*tol->effect || strcmp(tol->effect, taint->effect) == 0;
    if (tol->op == OP_EXISTS)
        return (!*tol->key || strcmp(tol->key, taint->key) == 0) && effect;
    if (tol->op == OP_EQUAL)
        return strcmp(tol->key, taint->key) == 0 && strcmp(tol->value, taint->value) == 0 && effect;
    return 0;
}

/* The first taint of the cluster no toleration tolerates, or NULL. */
static const item *untolerated(const items *tols, const items *taints)
{
    if (!taints || (tols && tols->fixed))
        return NULL;
    for (size_t i = 0; i < taints->n; i++) {
        int ok = 0;
        for (size_t k = 0; tols && k < tols->n && !ok; k++)
            ok = tolerates(&tols->v[k], &taints->v[i]);
        if (!ok)
            return &taints->v[i];
    }
    return NULL;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *target, trellis_status *st)
{
    (void)c;
    const item *t = untolerated(host->object_data(self, w),
                                host->object_data(self, host->target_object(target)));
    if (!t)
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNRESOLVABLE, "TaintNotTolerated",
                 "taint &{Key:%s Value:%s Effect:%s} cannot be tolerated", t->key, t->value,
                 t->effect);
    return TRELLIS_UNRESOLVABLE;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        size_t first, size_t n, uint64_t *pass)
{
    const items *tols = host->object_data(self, w);
    if (tols && tols->fixed)
        return; /* tolerates every taint */
    /* the clusters still in the running, and of them those with taints */
    void *const *data = host->cycle_target_data(c, self);
    for (size_t wd = 0; wd < (n + 63) / 64; wd++) {
        uint64_t bits = pass[wd];
        while (bits) {
            size_t j = wd * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            const items *taints = j < n ? data[first + j] : NULL;
            if (taints && taints->n && untolerated(tols, taints))
                pass[wd] &= ~(1ull << (j % 64));
        }
    }
}

static int same_items(const items *a, const items *b)
{
    if (!a || !b)
        return a == b;
    if (a->n != b->n || a->fixed != b->fixed)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].op != b->v[i].op || strcmp(a->v[i].key, b->v[i].key) != 0 ||
            strcmp(a->v[i].value, b->v[i].value) != 0 ||
            strcmp(a->v[i].effect, b->v[i].effect) != 0)
            return 0;
    return 1;
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    return same_items(host->object_data(self, a), host->object_data(self, b));
}

static int rejects_on(trellis_plugin *self, const trellis_object *w, const trellis_object *cluster)
{
    return untolerated(host->object_data(self, w), host->object_data(self, cluster)) != NULL;
}

static int hint(trellis_plugin *self, const trellis_object *w, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, w, event, old_obj, new_obj, rejects_on);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (!fleet_setup(h, self, args, sizeof(config), err, errlen))
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-taints",
    "1.0.0",
    "keeps the member clusters whose taints the placement's policy tolerates, with KubeFleet's "
    "matching",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_taints)
