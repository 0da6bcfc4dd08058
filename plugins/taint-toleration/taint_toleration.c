/*
 * taint_toleration.c - the taint-toleration plugin: targets repel workloads
 * that do not tolerate their taints.
 *
 * Filter: a target with a NoSchedule or NoExecute taint that the workload
 * does not tolerate is rejected (UNRESOLVABLE, as in kube-scheduler:
 * evicting workloads removes no taint). Score: the number of
 * PreferNoSchedule taints not tolerated, reversed by normalize so that the
 * target with the fewest gets 100. Taints and tolerations are parsed once per
 * object by common/taints.c; filter and score walk plain arrays. The
 * `semantics` argument switches between Kubernetes' matching rules and
 * Gardener's seed tolerations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taints.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *taints_field;      /* on the target; host-owned */
    const char *tolerations_field; /* on the workload; host-owned */
    taint_effect empty_effect;
    taint_semantics semantics;
} config;

static const trellis_arg_spec args_table[] = {
    {"taints_field", TRELLIS_ARG_STRING, "spec.taints",
     "dotted path of the taints list in the target"},
    {"tolerations_field", TRELLIS_ARG_STRING, "spec.tolerations",
     "dotted path of the tolerations list in the workload"},
    {"empty_effect", TRELLIS_ARG_STRING, "NoSchedule",
     "effect of a taint that has none: NoSchedule, PreferNoSchedule or "
     "NoExecute"},
    {"semantics", TRELLIS_ARG_STRING, "kubernetes",
     "toleration matching rules: kubernetes or gardener"},
    {NULL, 0, NULL, NULL},
};

static const taint_list *target_taints(const trellis_plugin *self, const trellis_target *t)
{
    return host->object_data(self, host->target_object(t));
}

/* The first taint with a hard effect that tols does not tolerate. */
static const taint_item *untolerated(const taint_list *taints, const taint_list *tols,
                                     taint_semantics sem)
{
    if (!taints)
        return NULL;
    for (size_t i = 0; i < taints->n; i++) {
        const taint_item *t = &taints->items[i];

        if (t->effect == TAINT_PREFER_NO_SCHEDULE)
            continue;
        if (!taints_tolerated(t, tols, sem))
            return t;
    }
    return NULL;
}

static int64_t intolerable_preferred(const taint_list *taints, const taint_list *tols,
                                     taint_semantics sem)
{
    int64_t count = 0;

    if (!taints)
        return 0;
    for (size_t i = 0; i < taints->n; i++) {
        const taint_item *t = &taints->items[i];

        if (t->effect == TAINT_PREFER_NO_SCHEDULE && !taints_tolerated(t, tols, sem))
            count++;
    }
    return count;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    taint_list *tols;
    int rc;

    rc = taints_parse_tolerations(host, host->object_get(obj, cfg->tolerations_field),
                                  cfg->tolerations_field, cfg->semantics, &tols, err, errlen);
    *data = tols;
    return rc;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const config *cfg = host->get_private(self);
    taint_list *taints;
    int rc;

    rc = taints_parse_taints(host, host->object_get(obj, cfg->taints_field), cfg->taints_field,
                             cfg->empty_effect, &taints, err, errlen);
    *data = taints;
    return rc;
}

/* Workload and target data are both taint_lists. */
static void release(trellis_plugin *self, void *data)
{
    taints_free(data);
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const taint_item *bad;
    char text[200];

    bad =
        untolerated(target_taints(self, target), host->object_data(self, workload), cfg->semantics);
    if (!bad)
        return TRELLIS_SUCCESS;
    taints_describe(bad, text, sizeof(text));
    host->status(st, TRELLIS_UNRESOLVABLE, "TaintNotTolerated",
                 "target has taint {%s} that the workload does not tolerate", text);
    return TRELLIS_UNRESOLVABLE;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const config *cfg = host->get_private(self);
    const taint_list *tols = host->object_data(self, workload);

    for (size_t i = 0; i < n; i++) {
        uint64_t bit = UINT64_C(1) << (i % 64);

        if ((pass[i / 64] & bit) &&
            untolerated(target_taints(self, targets[i]), tols, cfg->semantics))
            pass[i / 64] &= ~bit;
    }
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);

    *out = intolerable_preferred(target_taints(self, target), host->object_data(self, workload),
                                 cfg->semantics);
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const taint_list *tols = host->object_data(self, workload);

    for (size_t i = 0; i < n; i++)
        scores[i] = intolerable_preferred(target_taints(self, targets[i]), tols, cfg->semantics);
}

/* Fewer intolerable taints is better: kube-scheduler's reversed default
 * normalization. */
static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    int64_t max = 0;

    for (size_t i = 0; i < n; i++) {
        if (scores[i] > max)
            max = scores[i];
    }
    for (size_t i = 0; i < n; i++)
        scores[i] =
            max == 0 ? TRELLIS_MAX_SCORE : TRELLIS_MAX_SCORE - scores[i] * TRELLIS_MAX_SCORE / max;
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    const char *effect, *semantics;
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->taints_field = h->arg_string(args, "taints_field");
    cfg->tolerations_field = h->arg_string(args, "tolerations_field");
    effect = h->arg_string(args, "empty_effect");
    semantics = h->arg_string(args, "semantics");
    if (values_check_path("taints_field", cfg->taints_field, err, errlen) < 0 ||
        values_check_path("tolerations_field", cfg->tolerations_field, err, errlen) < 0)
        goto fail;
    if (!effect || taints_parse_effect(effect, &cfg->empty_effect) < 0) {
        snprintf(err, errlen,
                 "empty_effect: expected NoSchedule, PreferNoSchedule or "
                 "NoExecute, got '%s'",
                 effect ? effect : "");
        goto fail;
    }
    if (semantics && strcmp(semantics, "kubernetes") == 0) {
        cfg->semantics = TAINT_SEMANTICS_KUBERNETES;
    } else if (semantics && strcmp(semantics, "gardener") == 0) {
        cfg->semantics = TAINT_SEMANTICS_GARDENER;
    } else {
        snprintf(err, errlen, "semantics: expected kubernetes or gardener, got '%s'",
                 semantics ? semantics : "");
        goto fail;
    }
    h->set_private(self, cfg, free);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_batch(self, filter_batch) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_batch(self, score_batch) < 0 ||
        h->register_normalize(self, normalize) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
fail:
    free(cfg);
    return -1;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "taint-toleration",
    "1.0.0",
    "rejects targets with untolerated taints, prefers fewer PreferNoSchedule "
    "taints",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN(desc)
