/*
 * label_selector.c - the label-selector plugin: a filter that keeps the
 * targets whose labels satisfy a selector carried by the workload.
 *
 * The selector is read from a configurable field of the workload (a Pod's
 * spec.nodeSelector by default), either as a plain map of labels that must
 * all be equal or as a Kubernetes LabelSelector with matchLabels and
 * matchExpressions. It is parsed once per workload in prepare_workload
 * (common/selector.c); the filter only compares strings. A workload without
 * the field, or with an empty selector, fits every target, and pre_filter
 * tells the host to skip this plugin's filter for it altogether.
 *
 * A mismatch is UNRESOLVABLE, as in kube-scheduler: evicting workloads never
 * changes a target's labels, so preemption need not consider the target.
 *
 * Queueing hints: a rejected workload may fit after a target appears whose
 * labels satisfy its selector, or after a target's labels change from ones
 * that do not to ones that do.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "selector.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef enum match_kind {
    MATCH_LABELS = 0,  /* metadata.labels */
    MATCH_ANNOTATIONS, /* metadata.annotations */
    MATCH_PATH         /* a map of strings at a path in the target */
} match_kind;

typedef struct config {
    const char *field; /* host-owned until fini */
    selector_format format;
    match_kind match;
    const char *match_path; /* MATCH_PATH only */
} config;

/* Prepared data, one shape for workloads and targets because the host hands
 * both to the same release function. */
typedef struct prepared {
    selector *sel;            /* workload: its selector, NULL when empty */
    const trellis_value *map; /* target (MATCH_PATH): the map to match */
} prepared;

/* What the lookup function needs to read one target's labels. */
typedef struct target_view {
    const config *cfg;
    const trellis_object *obj;
    const trellis_value *map;
} target_view;

static const trellis_arg_spec args_table[] = {
    {"field", TRELLIS_ARG_STRING, "spec.nodeSelector",
     "dotted path of the selector in the workload"},
    {"format", TRELLIS_ARG_STRING, "map",
     "map: every label=value must match (nodeSelector); selector: "
     "{matchLabels, matchExpressions}"},
    {"match", TRELLIS_ARG_STRING, "labels",
     "what the selector is matched against on the target: labels, "
     "annotations, or the dotted path of a map of strings"},
    {NULL, 0, NULL, NULL},
};

static const char *lookup(const void *ud, const char *key)
{
    const target_view *tv = ud;

    switch (tv->cfg->match) {
    case MATCH_LABELS:
        return host->object_label(tv->obj, key);
    case MATCH_ANNOTATIONS:
        return host->object_annotation(tv->obj, key);
    case MATCH_PATH:
        if (!tv->map)
            return NULL;
        return values_scalar_text(host, host->value_get(tv->map, key));
    }
    return NULL;
}

/* Index of the first requirement the target object fails, -1 when it
 * fits. */
static long mismatch_object(const trellis_plugin *self, const config *cfg, const selector *sel,
                            const trellis_object *target)
{
    target_view tv;

    tv.cfg = cfg;
    tv.obj = target;
    tv.map = NULL;
    if (cfg->match == MATCH_PATH) {
        const prepared *tp = host->object_data(self, tv.obj);

        tv.map = tp ? tp->map : NULL;
    }
    return selector_first_mismatch(sel, lookup, &tv);
}

static long mismatch(const trellis_plugin *self, const config *cfg, const selector *sel,
                     const trellis_target *t)
{
    return mismatch_object(self, cfg, sel, host->target_object(t));
}

static const selector *workload_selector(const trellis_plugin *self, const trellis_object *w)
{
    const prepared *p = host->object_data(self, w);

    return p ? p->sel : NULL;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    selector *sel;
    prepared *p;

    *data = NULL;
    if (selector_parse(host, host->object_get(obj, cfg->field), cfg->format, cfg->field, &sel, err,
                       errlen) < 0)
        return -1;
    if (!sel)
        return 0; /* absent or empty: fits everywhere, nothing to keep */
    p = calloc(1, sizeof(*p));
    if (!p) {
        selector_free(sel);
        snprintf(err, errlen, "%s: out of memory", cfg->field);
        return -1;
    }
    p->sel = sel;
    *data = p;
    return 0;
}

/* Registered only when matching a map at a path: labels and annotations
 * are already indexed by the host. */
static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const config *cfg = host->get_private(self);
    const trellis_value *map = host->object_get(obj, cfg->match_path);
    prepared *p;

    *data = NULL;
    if (!map || host->value_type(map) == TRELLIS_VALUE_NULL)
        return 0; /* no labels: only NotIn / DoesNotExist can match */
    if (host->value_type(map) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map of strings, got %s", cfg->match_path,
                 host->value_type(map) == TRELLIS_VALUE_LIST ? "a list" : "a scalar");
        return -1;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "%s: out of memory", cfg->match_path);
        return -1;
    }
    /* Borrowed from the object, which outlives its prepared data. */
    p->map = map;
    *data = p;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    selector_free(p->sel);
    free(p);
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    return workload_selector(self, workload) ? TRELLIS_SUCCESS : TRELLIS_SKIP;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const selector *sel = workload_selector(self, workload);
    long bad;
    char req[160];

    if (!sel)
        return TRELLIS_SUCCESS;
    bad = mismatch(self, cfg, sel, target);
    if (bad < 0)
        return TRELLIS_SUCCESS;
    selector_describe(&sel->reqs[bad], req, sizeof(req));
    host->status(st, TRELLIS_UNRESOLVABLE, "SelectorMismatch", "%s %s not matched",
                 cfg->match == MATCH_ANNOTATIONS ? "annotation" : "label", req);
    return TRELLIS_UNRESOLVABLE;
}

static int batch_rejects(trellis_plugin *self, const void *cfg, const void *sel,
                         const trellis_target *t)
{
    return mismatch(self, cfg, sel, t) >= 0;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const selector *sel = workload_selector(self, workload);

    if (sel)
        trellis_batch_clear_rejected(self, host->get_private(self), sel, targets, n, pass,
                                     batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *target)
{
    const selector *sel = workload_selector(self, workload);

    return sel && mismatch_object(self, host->get_private(self), sel, target) >= 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Workloads with equal selectors get the same verdicts. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const config *cfg = host->get_private(self);

    return trellis_equal_fields(host, a, b, cfg->field);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    const char *field, *format, *match;
    config *cfg;

    host = h;
    field = h->arg_string(args, "field");
    format = h->arg_string(args, "format");
    match = h->arg_string(args, "match");
    if (values_check_path("field", field, err, errlen) < 0)
        return -1;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->field = field;
    if (format && strcmp(format, "map") == 0) {
        cfg->format = SELECTOR_FORMAT_MAP;
    } else if (format && strcmp(format, "selector") == 0) {
        cfg->format = SELECTOR_FORMAT_SELECTOR;
    } else {
        snprintf(err, errlen, "format: expected map or selector, got '%s'", format ? format : "");
        free(cfg);
        return -1;
    }
    if (!match || match[0] == '\0') {
        snprintf(err, errlen, "match: expected labels, annotations or a dotted path, got ''");
        free(cfg);
        return -1;
    } else if (strcmp(match, "labels") == 0) {
        cfg->match = MATCH_LABELS;
    } else if (strcmp(match, "annotations") == 0) {
        cfg->match = MATCH_ANNOTATIONS;
    } else {
        cfg->match = MATCH_PATH;
        cfg->match_path = match;
    }
    h->set_private(self, cfg, free);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0 ||
        (cfg->match == MATCH_PATH && h->register_prepare_target(self, prepare_target) < 0)) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "label-selector",
    "1.1.0",
    "keeps targets whose labels match the workload's selector",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, label_selector)
