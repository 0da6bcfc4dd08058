/*
 * node_resources_balanced_allocation.c - the
 * node-resources-balanced-allocation plugin: kube-scheduler's
 * NodeResourcesBalancedAllocation.
 *
 * Score: for each resource of `resources` (cpu and memory by default) the
 * fraction requested / allocatable after placing the Pod, requested being
 * the Node's Pods' requests plus the Pod's (plain requests, not kube's
 * non-zero ones: kube's useRequested), capped at 1; a resource the Node
 * has no allocatable of, or a scalar resource the Pod does not request, is
 * left out. The score is (1 - std) * 100, truncated, std being the
 * standard deviation of the fractions: |f1 - f2| / 2 for two, the square
 * root of the mean squared deviation for more, 0 for one. A Pod that
 * requests none of the resources (best effort) is not scored, as
 * kube-scheduler 1.33 skips it, so that such Pods do not pile up on one
 * Node.
 *
 * Per-Node sums are host counters, allocatable amounts target values;
 * the span reads columns. `config` is kube's
 * NodeResourcesBalancedAllocationArgs: resources [{name, weight}] (the
 * weights are not used, as in kube).
 */
/* the oldest host it runs on: the columnar hooks of SDK 1.3, the document argument of 1.4 */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "podres.h"
#include "resources.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define MAX_RES 8

typedef struct config {
    podres_fields f;
    intern ids; /* written in prepare and init only */
    size_t n;
    int32_t id[MAX_RES];
    int scalar[MAX_RES];
} config;

/* A Pod's requests of the configured resources. */
typedef struct wreq {
    int terminal;
    int any; /* requests one of them */
    int64_t v[MAX_RES];
} wreq;

static const trellis_arg_spec args_table[] = {
    {"config", TRELLIS_ARG_DOCUMENT, "{}",
     "kube-scheduler's NodeResourcesBalancedAllocationArgs: resources [{name, weight}]"},
    RES_FIELD_ARGS,
    {"phase_field", TRELLIS_ARG_STRING, "status.phase",
     "dotted path of the workload's phase: Succeeded and Failed hold no room"},
    {NULL, 0, NULL, NULL},
};

static void config_free(void *p)
{
    config *cfg = p;

    if (cfg)
        intern_free(&cfg->ids);
    free(cfg);
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    podres_list req;
    wreq *w;

    *data = NULL;
    if (podres_requests(host, &cfg->f, obj, &cfg->ids, 0, &req, err, errlen) < 0)
        return -1;
    w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->terminal = podres_terminal(host, &cfg->f, obj);
    for (size_t r = 0; r < cfg->n; r++) {
        w->v[r] = podres_get(&req, cfg->id[r]);
        w->any |= w->v[r] > 0;
    }
    *data = w;
    return 0;
}

/* Allocatable of the configured resources, read straight into the target
 * values (no prepared data is kept). */
static void target_values(trellis_plugin *self, const trellis_object *target, int64_t *out)
{
    config *cfg = host->get_private(self);
    podres_list a;
    char err[256];

    if (podres_allocatable(host, &cfg->f, target, &cfg->ids, &a, err, sizeof(err)) < 0)
        a.n = 0; /* node-resources-fit names the malformed field */
    for (size_t r = 0; r < cfg->n; r++)
        out[r] = podres_get(&a, cfg->id[r]);
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);

    for (size_t r = 0; r < cfg->n; r++)
        out[r] = w && !w->terminal ? w->v[r] : 0;
}

/* kube's balancedResourceScorer over n (requested, allocatable) pairs. */
static int64_t balanced(const config *cfg, const int64_t *req, const int64_t *alloc)
{
    double f[MAX_RES], total = 0, sd = 0;
    size_t m = 0;

    for (size_t r = 0; r < cfg->n; r++) {
        double x;

        if (alloc[r] == 0)
            continue;
        x = (double)req[r] / (double)alloc[r];
        if (x > 1)
            x = 1;
        total += x;
        f[m++] = x;
    }
    if (m == 2) {
        sd = (f[0] - f[1]) / 2;
        if (sd < 0)
            sd = -sd;
    } else if (m > 2) {
        double mean = total / (double)m, sum = 0;

        for (size_t i = 0; i < m; i++)
            sum = sum + (f[i] - mean) * (f[i] - mean);
        sd = sqrt(sum / (double)m);
    }
    return (int64_t)((1 - sd) * (double)TRELLIS_MAX_SCORE);
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const wreq *w = host->object_data(self, workload);

    return w && w->any ? TRELLIS_SUCCESS : TRELLIS_SKIP;
}

static void inputs(const config *cfg, const wreq *w, const int64_t *used, const int64_t *alloc,
                   int64_t *req, int64_t *al)
{
    for (size_t r = 0; r < cfg->n; r++) {
        al[r] = cfg->scalar[r] && w->v[r] == 0 ? 0 : alloc[r];
        req[r] = used[r] + w->v[r];
    }
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);
    const int64_t *used = host->target_counters(self, target);
    int64_t alloc[MAX_RES], req[MAX_RES], al[MAX_RES], zero[MAX_RES] = {0};

    *out = 0;
    if (!w || !w->any)
        return TRELLIS_SUCCESS;
    target_values(self, host->target_object(target), alloc);
    inputs(cfg, w, used ? used : zero, alloc, req, al);
    *out = balanced(cfg, req, al);
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const wreq *w = host->object_data(self, workload);
    const int64_t *acol[MAX_RES], *ucol[MAX_RES];
    int64_t alloc[MAX_RES], used[MAX_RES], req[MAX_RES], al[MAX_RES];

    for (size_t r = 0; r < cfg->n; r++) {
        acol[r] = host->cycle_target_values(c, self, (int)r);
        ucol[r] = host->cycle_target_counter(c, self, (int)r);
        if (!acol[r] || !ucol[r])
            return;
    }
    if (w && w->any && cfg->n == 2 && !cfg->scalar[0] && !cfg->scalar[1]) {
        /* the default, cpu and memory: balanced() without its loops */
        for (size_t j = 0; j < n; j++) {
            uint32_t i = idx[j];
            int64_t a0 = acol[0][i], a1 = acol[1][i];
            double f0, f1, sd;

            if (a0 == 0 || a1 == 0) {
                scores[j] = TRELLIS_MAX_SCORE; /* one fraction or none: std 0 */
                continue;
            }
            f0 = (double)(ucol[0][i] + w->v[0]) / (double)a0;
            f1 = (double)(ucol[1][i] + w->v[1]) / (double)a1;
            f0 = f0 > 1 ? 1 : f0;
            f1 = f1 > 1 ? 1 : f1;
            sd = (f0 - f1) / 2;
            sd = sd < 0 ? -sd : sd;
            scores[j] = (int64_t)((1 - sd) * (double)TRELLIS_MAX_SCORE);
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        if (!w || !w->any) {
            scores[j] = 0;
            continue;
        }
        for (size_t r = 0; r < cfg->n; r++) {
            alloc[r] = acol[r][idx[j]];
            used[r] = ucol[r][idx[j]];
        }
        inputs(cfg, w, used, alloc, req, al);
        scores[j] = balanced(cfg, req, al);
    }
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const wreq *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->terminal == y->terminal && memcmp(x->v, y->v, sizeof(x->v)) == 0;
}

static int read_config(config *cfg, const trellis_value *doc, char *err, size_t errlen)
{
    const trellis_value *res;
    int rc;

    cfg->n = 2;
    cfg->id[0] = PODRES_CPU;
    cfg->id[1] = PODRES_MEMORY;
    if (!doc || host->value_type(doc) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(doc) != TRELLIS_VALUE_MAP ||
        host->value_len(doc) != (host->value_get(doc, "resources") ? 1u : 0u)) {
        snprintf(err, errlen,
                 "config: expected a map with resources only "
                 "(NodeResourcesBalancedAllocationArgs)");
        return -1;
    }
    res = host->value_get(doc, "resources");
    rc = values_expect(host, res, TRELLIS_VALUE_LIST, "a list of {name, weight}",
                       "config.resources", err, errlen);
    if (rc <= 0)
        return rc;
    if (host->value_len(res) == 0 || host->value_len(res) > MAX_RES) {
        snprintf(err, errlen, "config.resources: expected 1 to %d resources", MAX_RES);
        return -1;
    }
    cfg->n = host->value_len(res);
    for (size_t i = 0; i < cfg->n; i++) {
        const char *name =
            values_scalar_text(host, host->value_get(host->value_at(res, i), "name"));

        if (!name || !*name) {
            snprintf(err, errlen, "config.resources[%zu].name: expected a resource name", i);
            return -1;
        }
        cfg->id[i] = intern_id(&cfg->ids, name);
        if (cfg->id[i] < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t k = 0; k < i; k++) {
            if (cfg->id[k] == cfg->id[i]) {
                snprintf(err, errlen, "config.resources[%zu].name: '%s' is listed twice", i, name);
                return -1;
            }
        }
        cfg->scalar[i] = cfg->id[i] >= PODRES_WELL_KNOWN && podres_is_scalar(name);
    }
    return 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, config_free);
    if (podres_setup(h, args, &cfg->ids, &cfg->f, err, errlen) < 0 ||
        read_config(cfg, h->arg_document(args, "config"), err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 ||
        h->declare_counters(self, (int)cfg->n, amounts) < 0 ||
        h->declare_target_values(self, (int)cfg->n, target_values) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_span(self, score_span) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-resources-balanced-allocation",
    "1.0.0",
    "kube-scheduler's NodeResourcesBalancedAllocation: prefers targets whose resource fractions "
    "stay balanced",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_resources_balanced_allocation)
