/*
 * fleet_affinity.c - the fleet-affinity plugin: KubeFleet's ClusterAffinity
 * (pkg/scheduler/framework/plugins/clusteraffinity).
 *
 * Filter: a placement with required cluster affinity
 * (policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuring
 * Execution.clusterSelectorTerms) takes a member cluster that matches one
 * of the terms: its labelSelector (when set) AND every expression of its
 * propertySelector (Gt, Ge, Eq, Ne, Lt, Le against one quantity; a
 * property the cluster does not report does not match).
 * Score: each preferred term with a weight adds it when its labelSelector
 * matches, or, with a propertySorter, round(weight x (v - min) / (max -
 * min)) (Descending) or round(weight x (1 - (v - min) / (max - min)))
 * (Ascending), min and max over every member cluster that reports the
 * property (eligible or not), 0 for a cluster without it; a PickAll
 * placement ignores preferences, a PickFixed one the whole affinity. The
 * score is raw and signed (weights are -100..100): score_mode "tuple".
 *
 * Properties: resources.kubernetes-fleet.io/<total|allocatable|available>-
 * <resource> from status.resourceUsage.capacity / allocatable / available,
 * any other name from status.properties[name].value (the member agent's
 * kubernetes-fleet.io/node-count among them), as Kubernetes quantities.
 * Clusters are read once per change, policies once per placement or
 * snapshot change: label keys and values and property names become
 * interned ids there (intern.h), so filter and score compare integers (a
 * compiled selector against the cluster's label set, a property found by
 * its id in the cluster's array).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "intern.h"
#include "resources.h"
#include "selector.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define RESOURCE_PREFIX "resources.kubernetes-fleet.io/"

struct memo;

#define MEMO_ENTRIES 8

typedef struct config {
    const char *snapshot_kind; /* host-owned; first (fleet_setup) */
    intern labels;             /* label keys and values; written in prepare only */
    intern props;              /* property names; written in prepare only */
    /* counts the clusters prepared and released: a memo made at another
     * count may hold a cluster that is gone (main thread) */
    uint64_t gen;
    size_t n_bad;       /* prepared clusters with a reading that is no quantity */
    struct memo *memos; /* MEMO_ENTRIES of them, made at the first use */
    uint64_t tick;      /* of the last memo use */
} config;

static void memos_free(struct memo *v);

static void config_free(void *p)
{
    config *cfg = p;
    intern_free(&cfg->labels);
    intern_free(&cfg->props);
    memos_free(cfg->memos);
    free(cfg);
}

/* A quantity as KubeFleet compares it (Quantity.Cmp, exact) and
 * interpolates it (AsApproximateFloat64). */
typedef struct quantity {
    res_exact x;
    double f;
} quantity;

/* A reading that is not a quantity: KubeFleet fails on it only when a
 * policy names the property, so it is kept, not refused. */
typedef struct bad_reading {
    int32_t id;
    char *text;
} bad_reading;

enum { READ_NONE = 0, READ_OK, READ_BAD };

/* Prepared data of a cluster and of a placement share the release hook:
 * both begin with is_cluster. */
typedef struct cluster {
    int is_cluster; /* 1 */
    label_set labels;
    quantity *q;      /* by property id: q[id], when has[id] is READ_OK */
    uint8_t *has;     /* READ_*: whether the cluster reports property id */
    size_t n_ids;     /* ids below n_ids may be reported; any other is not */
    bad_reading *bad; /* the readings that are no quantity, n_bad */
    size_t n_bad;
} cluster;

enum { OP_GT = 0, OP_GE, OP_EQ, OP_NE, OP_LT, OP_LE };

typedef struct expr {
    int32_t name; /* property id */
    int op;
    quantity q;
} expr;

typedef struct term {
    int has_labels; /* 0: labels not checked */
    selector_ids labels;
    expr *exprs;
    size_t n_exprs;
    int32_t weight; /* preferred */
    int32_t sorter; /* preferred: the propertySorter's property id, or -1 */
    int ascending;
} term;

typedef struct affinity {
    int is_cluster; /* 0 */
    term *required, *preferred;
    size_t n_required, n_preferred;
} affinity;

static const trellis_arg_spec args_table[] = {
    {"snapshot_kind", TRELLIS_ARG_STRING, "ClusterSchedulingPolicySnapshot",
     "the kind of the policy snapshots"},
    {NULL, 0, NULL, NULL},
};

/* ---- quantities and properties ---- */

static int parse_quantity(const char *text, quantity *q)
{
    if (!text || res_exact_parse(text, &q->x) != RES_OK)
        return -1;
    q->f = res_exact_approx(&q->x);
    return 0;
}

static void cluster_free(cluster *c)
{
    if (c) {
        label_set_clear(&c->labels);
        free(c->q);
        free(c->has);
        for (size_t i = 0; i < c->n_bad; i++)
            free(c->bad[i].text);
        free(c->bad);
    }
    free(c);
}

typedef struct add_ctx {
    cluster *c;
    intern *ids;
    const char *prefix, *sub, *where;
    char *err;
    size_t errlen;
} add_ctx;

static int add_one(const char *key, const trellis_value *v, void *ud)
{
    add_ctx *x = ud;
    const char *t = values_scalar_text(host, x->sub ? host->value_get(v, x->sub) : v);
    char name[512];
    snprintf(name, sizeof name, "%s%s", x->prefix, key);
    quantity q;
    int ok = parse_quantity(t, &q) == 0;
    int32_t id = intern_id(x->ids, name);
    cluster *c = x->c;
    if (id >= 0 && (size_t)id >= c->n_ids) {
        size_t n = (size_t)id + 8;
        quantity *nq = realloc(c->q, n * sizeof *nq);
        if (nq)
            c->q = nq;
        uint8_t *nh = nq ? realloc(c->has, n) : NULL;
        if (nh) {
            memset(nh + c->n_ids, 0, n - c->n_ids);
            c->has = nh;
            c->n_ids = n;
        }
    }
    if (id < 0 || (size_t)id >= c->n_ids) {
        snprintf(x->err, x->errlen, "out of memory");
        return 1;
    }
    /* a name read twice (a custom property named like a resource one):
     * the first reading counts, as status.properties come first */
    if (c->has[id])
        return 0;
    if (ok) {
        c->q[id] = q;
        c->has[id] = READ_OK;
        return 0;
    }
    bad_reading *nb = realloc(c->bad, (c->n_bad + 1) * sizeof *nb);
    char *text = nb ? values_strdup(t ? t : "") : NULL;
    if (nb)
        c->bad = nb;
    if (!text) {
        snprintf(x->err, x->errlen, "out of memory");
        return 1;
    }
    c->bad[c->n_bad++] = (bad_reading){id, text};
    c->has[id] = READ_BAD;
    return 0;
}

/* Add the quantities of the map m under prefix + key (sub: the member of
 * each entry holding it); NULL m: none. */
static int add_props(cluster *c, intern *ids, const trellis_value *m, const char *prefix,
                     const char *sub, const char *where, char *err, size_t errlen)
{
    if (!m || host->value_type(m) != TRELLIS_VALUE_MAP)
        return 0;
    add_ctx x = {c, ids, prefix, sub, where, err, errlen};
    err[0] = '\0';
    host->value_foreach(m, add_one, &x);
    return err[0] ? -1 : 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    cfg->gen++;
    cluster *c = calloc(1, sizeof *c);
    if (!c || label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->labels,
                             &c->labels) < 0) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->is_cluster = 1;
    static const char *const usage[][2] = {{"capacity", RESOURCE_PREFIX "total-"},
                                           {"allocatable", RESOURCE_PREFIX "allocatable-"},
                                           {"available", RESOURCE_PREFIX "available-"}};
    const trellis_value *ru = host->object_get(obj, "status.resourceUsage");
    int rc = add_props(c, &cfg->props, host->object_get(obj, "status.properties"), "", "value",
                       "status.properties", err, errlen);
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        char where[64];
        snprintf(where, sizeof where, "status.resourceUsage.%s", usage[i][0]);
        rc = add_props(c, &cfg->props, ru ? host->value_get(ru, usage[i][0]) : NULL, usage[i][1],
                       NULL, where, err, errlen);
    }
    if (rc < 0) {
        cluster_free(c);
        return -1;
    }
    cfg->n_bad += c->n_bad > 0;
    *data = c;
    return 0;
}

/* The cluster's reading of the property of id, or NULL (none, or one
 * that is no quantity). */
static inline const quantity *property(const cluster *c, int32_t id)
{
    if (!c || id < 0 || (size_t)id >= c->n_ids || c->has[id] != READ_OK)
        return NULL;
    return &c->q[id];
}

/* The text of the cluster's reading of property id that is no quantity,
 * or NULL. */
static const char *bad_text(const cluster *c, int32_t id)
{
    for (size_t i = 0; c && i < c->n_bad; i++)
        if (c->bad[i].id == id)
            return c->bad[i].text;
    return NULL;
}

/* ---- the policy ---- */

static void terms_free(term *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        selector_ids_clear(&t[i].labels);
        free(t[i].exprs);
    }
    free(t);
}

static void affinity_free(affinity *a)
{
    if (!a)
        return;
    terms_free(a->required, a->n_required);
    terms_free(a->preferred, a->n_preferred);
    free(a);
}

static void release(trellis_plugin *self, void *data)
{
    if (data && *(const int *)data) {
        config *cfg = host->get_private(self);
        if (cfg) { /* the memo must not outlive the cluster */
            cfg->gen++;
            cfg->n_bad -= ((const cluster *)data)->n_bad > 0;
        }
        cluster_free(data);
    } else {
        affinity_free(data);
    }
}

static const char *const op_names[] = {"Gt", "Ge", "Eq", "Ne", "Lt", "Le", NULL};

/* A term's labelSelector and (required terms) propertySelector, or
 * (preferred) its propertySorter. */
static int read_term(config *cfg, const trellis_value *v, const char *where, int preferred, term *t,
                     char *err, size_t errlen)
{
    char path[600];
    t->sorter = -1;
    const trellis_value *ls = host->value_get(v, "labelSelector");
    if (ls && host->value_type(ls) != TRELLIS_VALUE_NULL) {
        selector *sel = NULL;
        snprintf(path, sizeof path, "%.500s.labelSelector", where);
        if (selector_parse(host, ls, SELECTOR_FORMAT_SELECTOR, path, &sel, err, errlen) < 0)
            return -1;
        int rc = selector_compile(sel, &cfg->labels, &t->labels);
        selector_free(sel);
        if (rc < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        t->has_labels = 1;
    }
    if (preferred) {
        const trellis_value *ps = host->value_get(v, "propertySorter");
        if (!ps || host->value_type(ps) == TRELLIS_VALUE_NULL)
            return 0;
        const char *name = values_scalar_text(host, host->value_get(ps, "name"));
        const char *order = values_scalar_text(host, host->value_get(ps, "sortOrder"));
        if (!name || !*name || !order ||
            (strcmp(order, "Ascending") != 0 && strcmp(order, "Descending") != 0)) {
            snprintf(err, errlen,
                     "%s.propertySorter: expected a name and sortOrder Ascending or Descending",
                     where);
            return -1;
        }
        t->sorter = intern_id(&cfg->props, name);
        if (t->sorter < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        t->ascending = strcmp(order, "Ascending") == 0;
        return 0;
    }
    const trellis_value *me =
        host->value_get(host->value_get(v, "propertySelector"), "matchExpressions");
    size_t n = me && host->value_type(me) == TRELLIS_VALUE_LIST ? host->value_len(me) : 0;
    t->exprs = calloc(n ? n : 1, sizeof *t->exprs);
    if (!t->exprs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_value *e = host->value_at(me, i);
        const char *name = values_scalar_text(host, host->value_get(e, "name"));
        const char *op = values_scalar_text(host, host->value_get(e, "operator"));
        const trellis_value *vals = host->value_get(e, "values");
        expr *x = &t->exprs[t->n_exprs];
        x->op = -1;
        for (int k = 0; op && op_names[k]; k++)
            if (strcmp(op, op_names[k]) == 0)
                x->op = k;
        snprintf(path, sizeof path, "%.500s.propertySelector.matchExpressions[%zu]", where, i);
        if (!name || !*name || x->op < 0) {
            snprintf(err, errlen, "%s: expected a name and an operator Gt, Ge, Eq, Ne, Lt or Le",
                     path);
            return -1;
        }
        if (!vals || host->value_type(vals) != TRELLIS_VALUE_LIST || host->value_len(vals) != 1 ||
            parse_quantity(values_scalar_text(host, host->value_at(vals, 0)), &x->q) < 0) {
            snprintf(err, errlen, "%s.values: expected exactly one quantity", path);
            return -1;
        }
        x->name = intern_id(&cfg->props, name);
        if (x->name < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        t->n_exprs++;
    }
    return 0;
}

/* The list at v (where names it) into *out: its terms, or (preferred)
 * {weight, preference} entries. */
static int read_terms(config *cfg, const trellis_value *v, const char *where, int preferred,
                      term **out, size_t *n_out, char *err, size_t errlen)
{
    size_t n = v && host->value_type(v) == TRELLIS_VALUE_LIST ? host->value_len(v) : 0;
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char path[400];
        const trellis_value *e = host->value_at(v, i);
        term *t = &(*out)[(*n_out)++];
        snprintf(path, sizeof path, "%s[%zu]%s", where, i, preferred ? ".preference" : "");
        if (preferred) {
            int64_t w;
            const trellis_value *wv = host->value_get(e, "weight");
            if (!wv || host->value_int(wv, &w) < 0 || w < -100 || w > 100) {
                snprintf(err, errlen, "%s[%zu].weight: expected -100..100", where, i);
                return -1;
            }
            t->weight = (int32_t)w;
            e = host->value_get(e, "preference");
        }
        if (read_term(cfg, e, path, preferred, t, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_object *snap;
    const trellis_value *pol;
    if (fleet_policy_of(host, self, obj, cfg->snapshot_kind, &snap, &pol, err, errlen) < 0)
        return -1;
    affinity *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int type = fleet_policy_type(host, pol);
    const trellis_value *ca =
        pol ? host->value_get(host->value_get(pol, "affinity"), "clusterAffinity") : NULL;
    char where[300], path[400];
    fleet_policy_where(host, snap, where, sizeof where);
    int rc = 0;
    if (ca && type != FLEET_PICK_FIXED) {
        snprintf(path, sizeof path,
                 "%s.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                 "clusterSelectorTerms",
                 where);
        rc = read_terms(cfg,
                        host->value_get(host->value_get(ca, "requiredDuringSchedulingIgnoredDuring"
                                                            "Execution"),
                                        "clusterSelectorTerms"),
                        path, 0, &a->required, &a->n_required, err, errlen);
        snprintf(path, sizeof path,
                 "%s.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution",
                 where);
        /* PickAll ignores preferences */
        if (rc == 0 && type == FLEET_PICK_N)
            rc = read_terms(cfg,
                            host->value_get(ca, "preferredDuringSchedulingIgnoredDuringExecution"),
                            path, 1, &a->preferred, &a->n_preferred, err, errlen);
    }
    if (rc < 0) {
        affinity_free(a);
        return -1;
    }
    *data = a;
    return 0;
}

/* ---- filter ---- */

static int cmp_ok(int op, const quantity *have, const quantity *want)
{
    int c = res_exact_cmp(&have->x, &want->x);
    switch (op) {
    case OP_GT:
        return c > 0;
    case OP_GE:
        return c >= 0;
    case OP_EQ:
        return c == 0;
    case OP_NE:
        return c != 0;
    case OP_LT:
        return c < 0;
    default:
        return c <= 0;
    }
}

/* KubeFleet's clusterRequirement.Matches: 1 when the term matches, 0
 * when it does not, -1 - id when its walk (labels, then each expression
 * in order) reached the cluster's reading of property id that is no
 * quantity, where KubeFleet stops with an error. */
static int64_t term_matches(const term *t, const cluster *c)
{
    static const label_set none = {NULL, 0};
    if (t->has_labels && selector_ids_first_mismatch(&t->labels, c ? &c->labels : &none) >= 0)
        return 0;
    for (size_t i = 0; i < t->n_exprs; i++) {
        int32_t id = t->exprs[i].name;
        if (c && id >= 0 && (size_t)id < c->n_ids && c->has[id] == READ_BAD)
            return -1 - (int64_t)id;
        const quantity *q = property(c, id);
        if (!q || !cmp_ok(t->exprs[i].op, q, &t->exprs[i].q))
            return 0;
    }
    return 1;
}

/* Whether the required terms, in order, pass c over: none matches before
 * one reaches a reading that is no quantity (*bad: its property id; -1
 * when none did). KubeFleet's Filter fails the placement's cycle there;
 * here that cluster alone is passed over (a span filter fails no cycle),
 * and the plain filter says why. */
static int rejects(const affinity *a, const cluster *c, int32_t *bad)
{
    *bad = -1;
    if (!a || !a->n_required)
        return 0;
    for (size_t i = 0; i < a->n_required; i++) {
        int64_t r = term_matches(&a->required[i], c);
        if (r == 1)
            return 0;
        if (r < 0) {
            *bad = (int32_t)(-1 - r);
            return 1;
        }
    }
    return 1;
}

static int filter(trellis_plugin *self, trellis_cycle *cy, const trellis_object *w,
                  const trellis_target *target, trellis_status *st)
{
    (void)cy;
    const trellis_object *o = host->target_object(target);
    const affinity *a = host->object_data(self, w);
    const cluster *c = host->object_data(self, o);
    int32_t id;
    if (!rejects(a, c, &id))
        return TRELLIS_SUCCESS;
    if (id >= 0) {
        config *cfg = host->get_private(self);
        return host->status(st, TRELLIS_UNRESOLVABLE, "PropertyNotAQuantity",
                            "value %s of property %s from cluster %s is not a valid quantity",
                            bad_text(c, id), intern_str(&cfg->props, id), host->object_name(o));
    }
    host->status(st, TRELLIS_UNRESOLVABLE, "AffinityMismatch",
                 "cluster does not match with any of the required cluster affinity terms");
    return TRELLIS_UNRESOLVABLE;
}

/* The filter over a block of the snapshot, from its prepared-data column. */
static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        size_t first, size_t n, uint64_t *pass)
{
    const affinity *a = host->object_data(self, w);
    if (!a || !a->n_required)
        return;
    void *const *data = host->cycle_target_data(c, self);
    int32_t bad;
    for (size_t j = 0; j < n; j++)
        if (rejects(a, data ? data[first + j] : NULL, &bad))
            pass[j / 64] &= ~(1ull << (j % 64));
}

/* ---- score ---- */

typedef struct extremes {
    double min, max;
    int seen;
} extremes;

/* min and max of every sorted property of terms[0..n_terms) over the n
 * clusters of data, into ex. */
static void extremes_of(const term *terms, size_t n_terms, void *const *data, size_t n,
                        extremes *ex)
{
    for (size_t k = 0; k < n_terms; k++) {
        ex[k] = (extremes){0, 0, 0};
        if (terms[k].sorter < 0)
            continue;
        const quantity *lo = NULL, *hi = NULL; /* by Quantity.Cmp, as KubeFleet keeps them */
        for (size_t i = 0; i < n; i++) {
            const quantity *q = property(data[i], terms[k].sorter);
            if (!q)
                continue;
            if (!lo || res_exact_cmp(&q->x, &lo->x) < 0)
                lo = q;
            if (!hi || res_exact_cmp(&q->x, &hi->x) > 0)
                hi = q;
        }
        if (lo)
            ex[k] = (extremes){lo->f, hi->f, 1};
    }
}

/* KubeFleet's clusterPreference.Scores with interpolateWeightFor. */
static int64_t preference(const term *t, const extremes *ex, const cluster *c)
{
    static const label_set none = {NULL, 0};
    if (t->has_labels && selector_ids_first_mismatch(&t->labels, c ? &c->labels : &none) >= 0)
        return 0;
    if (t->sorter < 0)
        return t->weight;
    const quantity *q = property(c, t->sorter);
    /* beyond a double (a reading above 1e308), KubeFleet refuses to
     * interpolate: no weight here, and no undefined conversion */
    if (!q || !ex->seen || ex->min == ex->max || !__builtin_isfinite(ex->max - ex->min))
        return 0;
    double share = (q->f - ex->min) / (ex->max - ex->min);
    double w = (t->ascending ? 1 - share : share) * (double)t->weight;
    /* Go's math.Round: halves away from zero (no libm: plugins may be built in) */
    return w >= 0 ? (int64_t)(w + 0.5) : -(int64_t)(-w + 0.5);
}

/* The score of cluster cl by the preferred terms[0..n_terms). */
static int64_t preferences(const term *terms, size_t n_terms, const extremes *ex, const cluster *cl)
{
    int64_t sc = 0;
    for (size_t k = 0; k < n_terms; k++)
        if (terms[k].weight != 0)
            sc += preference(&terms[k], &ex[k], cl);
    return sc;
}

/* ---- the memo: scores kept across cycles ---- */

/* The preferred terms' extremes and every cluster's score, made once for
 * all the placements with the same preferred terms and kept while the
 * clusters are the same: the same prepared data at every position, and
 * none prepared or released since (so that no address was reused). Each
 * cycle copies what it uses (a memo may be remade while the cycle lives). */
typedef struct memo {
    term *terms; /* a copy: weight, labels and sorter (preferred terms have no exprs) */
    size_t n_terms;
    extremes *ex; /* one per term */
    uint64_t gen; /* config.gen when made */
    size_t n;     /* clusters */
    void **data;  /* their prepared data, in snapshot order */
    int64_t *scores;
    uint64_t used; /* config.tick of its last use; 0: empty */
} memo;

static void memo_clear(memo *e)
{
    if (e->terms)
        for (size_t k = 0; k < e->n_terms; k++)
            selector_ids_clear(&e->terms[k].labels);
    free(e->terms);
    free(e->ex);
    free(e->data);
    free(e->scores);
    memset(e, 0, sizeof *e);
}

static void memos_free(memo *v)
{
    for (size_t k = 0; v && k < MEMO_ENTRIES; k++)
        memo_clear(&v[k]);
    free(v);
}

static int same_terms(const memo *e, const affinity *a)
{
    if (!e->used || e->n_terms != a->n_preferred)
        return 0;
    for (size_t k = 0; k < e->n_terms; k++) {
        const term *x = &e->terms[k], *y = &a->preferred[k];
        if (x->weight != y->weight || x->sorter != y->sorter || x->ascending != y->ascending ||
            x->has_labels != y->has_labels || !selector_ids_equal(&x->labels, &y->labels))
            return 0;
    }
    return 1;
}

/* e remade for a's preferred terms over the n clusters of data. 0, or -1
 * when out of memory (e is then empty). */
static int memo_make(memo *e, const affinity *a, void *const *data, size_t n, uint64_t gen)
{
    memo_clear(e);
    e->terms = calloc(a->n_preferred, sizeof *e->terms);
    e->ex = calloc(a->n_preferred, sizeof *e->ex);
    e->data = malloc((n ? n : 1) * sizeof *e->data);
    e->scores = malloc((n ? n : 1) * sizeof *e->scores);
    if (!e->terms || !e->ex || !e->data || !e->scores) {
        memo_clear(e);
        return -1;
    }
    for (size_t k = 0; k < a->n_preferred; k++) {
        term *t = &e->terms[k];
        *t = a->preferred[k];
        t->exprs = NULL;
        t->n_exprs = 0;
        e->n_terms = k + 1;
        if (selector_ids_copy(&a->preferred[k].labels, &t->labels) < 0) {
            memo_clear(e);
            return -1;
        }
    }
    extremes_of(e->terms, e->n_terms, data, n, e->ex);
    for (size_t i = 0; i < n; i++) {
        e->data[i] = data[i];
        e->scores[i] = preferences(e->terms, e->n_terms, e->ex, data[i]);
    }
    e->n = n;
    e->gen = gen;
    return 0;
}

/* The memo of a's preferred terms over the n clusters of data, made when
 * none is valid (in the entry of the same terms, else the least recently
 * used), or NULL when out of memory. */
static const memo *memo_for(config *cfg, const affinity *a, void *const *data, size_t n)
{
    if (!cfg->memos && !(cfg->memos = calloc(MEMO_ENTRIES, sizeof *cfg->memos)))
        return NULL;
    memo *victim = &cfg->memos[0];
    for (size_t k = 0; k < MEMO_ENTRIES; k++) {
        memo *e = &cfg->memos[k];
        if (same_terms(e, a)) {
            if (e->gen == cfg->gen && e->n == n &&
                (n == 0 || memcmp(e->data, data, n * sizeof *data) == 0)) {
                e->used = ++cfg->tick;
                return e;
            }
            victim = e;
            break;
        }
        if (e->used < victim->used)
            victim = e;
    }
    if (memo_make(victim, a, data, n, cfg->gen) < 0)
        return NULL;
    victim->used = ++cfg->tick;
    return victim;
}

/* What a cycle scores with: the extremes of its preferred terms and, when
 * the memo served, every cluster's score (its own copies). */
typedef struct scoring {
    extremes *ex;
    int64_t *scores; /* by snapshot index, or NULL */
} scoring;

/* pre_score: min and max of every sorted property over all clusters, and
 * the scores, from the memo when the clusters did not change. */
static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n_feasible, trellis_status *st)
{
    (void)feasible;
    (void)n_feasible;
    const affinity *a = host->object_data(self, w);
    if (!a || !a->n_preferred)
        return TRELLIS_SKIP;
    config *cfg = host->get_private(self);
    size_t n = host->cycle_target_count(c);
    void *const *data = host->cycle_target_data(c, self);
    for (size_t k = 0; cfg->n_bad && data && k < a->n_preferred; k++) {
        /* KubeFleet's PreScore reads the sorted property of every cluster
         * and fails on one that is no quantity */
        for (size_t i = 0; a->preferred[k].sorter >= 0 && i < n; i++) {
            const char *t = bad_text(data[i], a->preferred[k].sorter);
            if (t)
                return host->status(
                    st, TRELLIS_ERROR, "PropertyNotAQuantity",
                    "value %s of property %s from cluster %s is not a valid quantity", t,
                    intern_str(&cfg->props, a->preferred[k].sorter),
                    host->object_name(host->target_object(host->cycle_target(c, i))));
        }
    }
    scoring *sc = host->cycle_alloc(c, sizeof *sc);
    extremes *ex = host->cycle_alloc(c, a->n_preferred * sizeof *ex);
    if (!sc || !ex)
        return TRELLIS_SKIP;
    const memo *m = data ? memo_for(cfg, a, data, n) : NULL;
    sc->ex = ex;
    sc->scores = m && n ? host->cycle_alloc(c, n * sizeof *sc->scores) : NULL;
    if (sc->scores) {
        memcpy(ex, m->ex, a->n_preferred * sizeof *ex);
        memcpy(sc->scores, m->scores, n * sizeof *sc->scores);
    } else if (data) {
        extremes_of(a->preferred, a->n_preferred, data, n, ex);
    } else {
        memset(ex, 0, a->n_preferred * sizeof *ex);
    }
    host->cycle_set(c, self, sc);
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    (void)st;
    const affinity *a = host->object_data(self, w);
    const scoring *sc = host->cycle_get(c, self);
    const cluster *cl = host->object_data(self, host->target_object(target));
    *out = a && sc ? preferences(a->preferred, a->n_preferred, sc->ex, cl) : 0;
    return TRELLIS_SUCCESS;
}

/* The score of the feasible targets idx[0..n), as score gives each. */
static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const affinity *a = host->object_data(self, w);
    const scoring *sc = host->cycle_get(c, self);
    void *const *data = host->cycle_target_data(c, self);
    for (size_t j = 0; j < n; j++) {
        if (sc && sc->scores)
            scores[j] = sc->scores[idx[j]];
        else
            scores[j] = a && sc ? preferences(a->preferred, a->n_preferred, sc->ex,
                                              data ? data[idx[j]] : NULL)
                                : 0;
    }
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = fleet_setup(h, self, args, sizeof(config), err, errlen);
    if (!cfg)
        return -1;
    h->set_private(self, cfg, config_free); /* the same data, freed with its tables */
    /* no `equivalent`: the score depends on every cluster (min, max) */
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_span(self, score_span) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-affinity",
    "1.0.0",
    "KubeFleet's cluster affinity: required terms (labels and properties) filter, preferred ones "
    "score",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_affinity)
