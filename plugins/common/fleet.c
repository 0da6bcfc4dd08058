/*
 * fleet.c - see fleet.h.
 */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

typedef struct find_ctx {
    const trellis_host *h;
    const char *placement;
    const trellis_object *latest;
    int n_latest;
} find_ctx;

static int find_latest(const trellis_object *o, void *ud)
{
    find_ctx *f = ud;
    const char *parent = f->h->object_label(o, FLEET_PARENT_LABEL);
    const char *latest = f->h->object_label(o, FLEET_LATEST_LABEL);
    if (parent && strcmp(parent, f->placement) == 0 && latest && strcmp(latest, "true") == 0) {
        f->latest = o;
        f->n_latest++;
    }
    return 0;
}

int fleet_policy_of(const trellis_host *h, trellis_plugin *self, const trellis_object *w,
                    const char *snapshot_kind, const trellis_object **snap,
                    const trellis_value **policy, char *err, size_t errlen)
{
    find_ctx f = {h, h->object_name(w), NULL, 0};
    h->foreach_object(self, snapshot_kind, h->object_namespace(w), find_latest, &f);
    *snap = NULL;
    *policy = NULL;
    if (f.n_latest > 1) {
        snprintf(err, errlen, "%d %s objects are labelled %s=true for this placement; expected one",
                 f.n_latest, snapshot_kind, FLEET_LATEST_LABEL);
        return -1;
    }
    *snap = f.latest;
    const trellis_value *v = h->object_get(f.latest ? f.latest : w, "spec.policy");
    *policy = v && h->value_type(v) != TRELLIS_VALUE_NULL ? v : NULL;
    return 0;
}

int fleet_policy_type(const trellis_host *h, const trellis_value *policy)
{
    static const char *const names[] = {"PickAll", "PickN", "PickFixed"};
    const trellis_value *v = policy ? h->value_get(policy, "placementType") : NULL;
    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return FLEET_PICK_ALL;
    const char *t = h->value_type(v) == TRELLIS_VALUE_STRING ? h->value_string(v) : NULL;
    if (!t)
        return FLEET_PICK_UNKNOWN; /* a list, a map, a number: not a type */
    for (int i = 0; i < 3; i++)
        if (strcmp(t, names[i]) == 0)
            return i;
    return FLEET_PICK_UNKNOWN;
}

const char *fleet_policy_where(const trellis_host *h, const trellis_object *snap, char *buf,
                               size_t len)
{
    if (snap)
        snprintf(buf, len, "%s %s: spec.policy", h->object_kind(snap), h->object_name(snap));
    else
        snprintf(buf, len, "spec.policy");
    return buf;
}

void *fleet_setup(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                  size_t size, char *err, size_t errlen)
{
    const char **cfg = calloc(1, size);
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cfg[0] = h->arg_string(args, "snapshot_kind");
    h->set_private(self, cfg, free);
    const char *const kinds[] = {cfg[0], NULL};
    if (h->declare_kinds(self, kinds) < 0) {
        snprintf(err, errlen, "snapshot_kind: expected a kind (letters and digits), got '%s'",
                 cfg[0] ? cfg[0] : "");
        return NULL;
    }
    return cfg;
}

int fleet_held_class(const trellis_host *h, trellis_plugin *self, const trellis_cycle *c, size_t i,
                     const char *snapshot, const char *cluster_kind)
{
    const char *key = h->cycle_held(c, i);
    const trellis_object *cl = key ? h->lookup_object(self, cluster_kind, "", key) : NULL;
    if (!cl) /* gone */
        return FLEET_HELD_DANGLING;
    const trellis_value *del = h->object_get(cl, "metadata.deletionTimestamp");
    if (del && h->value_type(del) != TRELLIS_VALUE_NULL) /* leaving */
        return FLEET_HELD_DANGLING;
    const trellis_object *b = h->cycle_held_object(c, i);
    if (!b)
        return FLEET_HELD_SCHEDULED;
    const trellis_value *v = h->object_get(b, "spec.schedulingPolicySnapshotName");
    const char *name = v ? h->value_string(v) : NULL;
    if (snapshot && (!name || strcmp(name, snapshot) != 0))
        return FLEET_HELD_OBSOLETE;
    v = h->object_get(b, "spec.state");
    const char *state = v ? h->value_string(v) : NULL;
    return state && strcmp(state, "Bound") == 0 ? FLEET_HELD_BOUND : FLEET_HELD_SCHEDULED;
}

size_t fleet_held_current(const trellis_host *h, trellis_plugin *self, const trellis_cycle *c,
                          const char *snapshot, const char *cluster_kind)
{
    size_t n = 0;
    for (size_t i = 0; i < h->cycle_held_count(c); i++)
        n += fleet_held_class(h, self, c, i, snapshot, cluster_kind) <= FLEET_HELD_BOUND;
    return n;
}

void fleet_policy_free(fleet_policy *p)
{
    for (size_t i = 0; p && i < p->n_names; i++)
        free(p->names[i]);
    if (p) {
        free(p->names);
        free(p->snapshot);
    }
    free(p);
}
int fleet_key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}
int fleet_atoi(const char *s, int64_t *out)
{
    const char *p = s && (*s == '+' || *s == '-') ? s + 1 : s;
    if (!p || !*p)
        return -1;
    int64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = *s == '-' ? -v : v;
    return 0;
}

static int read_count(const trellis_host *host, const trellis_object *snap,
                      const trellis_value *pol, fleet_policy *p, char *err, size_t errlen)
{
    int64_t n;
    if (snap) {
        const char *t = host->object_annotation(snap, FLEET_COUNT_ANNOTATION);
        int64_t v = -1;
        if (!t || fleet_atoi(t, &v) < 0 || v < 0 || v > 100000) {
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
    if (!v || host->value_type(v) != TRELLIS_VALUE_INT || host->value_int(v, &n) < 0 || n < 0 ||
        n > 100000) {
        snprintf(err, errlen,
                 "spec.policy.numberOfClusters: expected a count of clusters (0..100000) for "
                 "PickN");
        return -1;
    }
    p->n = (uint32_t)n;
    return 0;
}

/* The names of a PickFixed policy, sorted: a list of names, each once
 * (KubeFleet's admission refuses a repeated name, or none). */
static int read_names(const trellis_host *host, const trellis_value *pol, const char *where,
                      fleet_policy *p, char *err, size_t errlen)
{
    const trellis_value *l = host->value_get(pol, "clusterNames");
    trellis_value_type ty = l ? host->value_type(l) : TRELLIS_VALUE_NULL;
    if (ty != TRELLIS_VALUE_LIST || host->value_len(l) == 0) {
        snprintf(err, errlen,
                 "%s.clusterNames: expected a list of cluster names for PickFixed, got %s", where,
                 ty == TRELLIS_VALUE_LIST ? "an empty list" : values_type_name(ty));
        return -1;
    }
    size_t n = host->value_len(l);
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
    qsort(p->names, p->n_names, sizeof *p->names, fleet_key_cmp);
    for (size_t i = 1; i < p->n_names; i++) {
        if (strcmp(p->names[i - 1], p->names[i]) == 0) {
            snprintf(err, errlen, "%s.clusterNames: %s is named twice (each cluster once)", where,
                     p->names[i]);
            return -1;
        }
    }
    return 0;
}

static int read_policy(const trellis_host *host, const trellis_object *snap,
                       const trellis_value *pol, const char *where, fleet_policy *p, char *err,
                       size_t errlen)
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
        return read_count(host, snap, pol, p, err, errlen);
    if (p->type == FLEET_PICK_FIXED)
        return read_names(host, pol, where, p, err, errlen);
    if (p->type == FLEET_PICK_ALL)
        return 0;
    const trellis_value *t = host->value_get(pol, "placementType");
    const char *text = values_scalar_text(host, t);
    if (text)
        snprintf(err, errlen, "%s.placementType: expected PickAll, PickN or PickFixed, got \"%s\"",
                 where, text);
    else
        snprintf(err, errlen, "%s.placementType: expected PickAll, PickN or PickFixed, got %s",
                 where, values_type_name(host->value_type(t)));
    return -1;
}

fleet_policy *fleet_policy_load(const trellis_host *host, trellis_plugin *self,
                                const trellis_object *w, const char *snapshot_kind, char *err,
                                size_t errlen)
{
    const trellis_object *snap;
    const trellis_value *pol;
    if (fleet_policy_of(host, self, w, snapshot_kind, &snap, &pol, err, errlen) < 0)
        return NULL;
    fleet_policy *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char where[300];
    p->snapshot = snap ? values_strdup(host->object_name(snap)) : NULL;
    if (read_policy(host, snap, pol, fleet_policy_where(host, snap, where, sizeof where), p, err,
                    errlen) < 0) {
        fleet_policy_free(p);
        return NULL;
    }
    p->raw = pol;
    return p;
}

int fleet_policy_names(const fleet_policy *p, const char *name)
{
    return bsearch(&name, p->names, p->n_names, sizeof *p->names, fleet_key_cmp) != NULL;
}

/* The host of the plugins that prepare a policy with
 * fleet_register_policy: one table, whichever plugin set it. */
static const trellis_host *policy_host;

static int prepare_policy(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const char *const *cfg = policy_host->get_private(self); /* fleet_setup's layout */
    fleet_policy *p = fleet_policy_load(policy_host, self, obj, cfg[0], err, errlen);
    if (!p)
        return -1;
    *data = p;
    return 0;
}

static void release_policy(trellis_plugin *self, void *data)
{
    (void)self;
    fleet_policy_free(data);
}

int fleet_register_policy(const trellis_host *h, trellis_plugin *self)
{
    policy_host = h;
    return h->register_prepare_workload(self, prepare_policy) < 0 ||
                   h->register_release(self, release_policy) < 0
               ? -1
               : 0;
}

int fleet_stored_scores(const trellis_host *h, const trellis_value *score, int64_t out[2])
{
    out[0] = out[1] = 0;
    if (!score || h->value_type(score) != TRELLIS_VALUE_MAP)
        return 0;
    const trellis_value *x = h->value_get(score, "affinityScore");
    if (x)
        h->value_int(x, &out[0]);
    x = h->value_get(score, "priorityScore");
    if (x)
        h->value_int(x, &out[1]);
    return 1;
}
