/*
 * node_affinity.c - the node-affinity plugin: kube-scheduler's NodeAffinity.
 *
 * Filter: a Pod fits a Node when the Node's labels hold every pair of the
 * Pod's spec.nodeSelector AND one of the terms of
 * spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 * matches (terms ORed, requirements ANDed; common/nodeselector.c has the
 * rules), AND the scheduler-enforced addedAffinity of the plugin's
 * configuration matches. A mismatch is UNRESOLVABLE: evicting Pods changes
 * no label. pre_filter skips the filter for a Pod with none of the three.
 *
 * Score: the sum of the weights of the preferred terms
 * (preferredDuringSchedulingIgnoredDuringExecution, the Pod's and the
 * added ones) that match, normalized as kube's DefaultNormalizeScore: the
 * highest sum among the feasible Nodes gets 100, the others
 * sum * 100 / highest (integer division), all 0 when no term matches
 * anywhere. pre_score skips the score when there is no preferred term.
 *
 * Everything is parsed once per object in prepare: the Pod's selector and
 * terms are compiled to interned ids, each Node's labels into a sorted set
 * of ids, so filter and score compare integers and allocate nothing.
 *
 * `config` is kube's NodeAffinityArgs as a document:
 *   addedAffinity:
 *     requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [...]}
 *     preferredDuringSchedulingIgnoredDuringExecution: [{weight, preference}]
 */
/* the oldest host it runs on: the columnar filter of SDK 1.3, the document argument of 1.4 */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "nodeselector.h"
#include "selector.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *selector_field; /* host-owned until fini */
    const char *affinity_field;
    char *required_path, *preferred_path; /* owned: the affinity's two lists */
    intern ids;                           /* written in prepare only */
    node_selector *added_required;        /* NULL when not configured */
    node_selector *added_preferred;
} config;

/* Prepared data of Pods and Nodes alike (one release function). */
typedef struct prepared {
    /* Pod */
    int has_selector;
    selector_ids selector;   /* spec.nodeSelector */
    node_selector *required; /* NULL: no required node affinity */
    node_selector *preferred;
    /* Node */
    label_set labels;
    int32_t name;
    const trellis_object *node; /* borrowed: outlives its prepared data */
} prepared;

static const trellis_arg_spec args_table[] = {
    {"node_selector_field", TRELLIS_ARG_STRING, "spec.nodeSelector",
     "dotted path of the workload's map of required labels"},
    {"affinity_field", TRELLIS_ARG_STRING, "spec.affinity.nodeAffinity",
     "dotted path of the workload's NodeAffinity (required and preferred terms)"},
    {"config", TRELLIS_ARG_DOCUMENT, "{}",
     "kube-scheduler's NodeAffinityArgs: addedAffinity with required and preferred terms that "
     "apply to every workload"},
    {NULL, 0, NULL, NULL},
};

static void config_free(void *p)
{
    config *cfg = p;

    if (!cfg)
        return;
    ns_free(cfg->added_required);
    ns_free(cfg->added_preferred);
    intern_free(&cfg->ids);
    free(cfg->required_path);
    free(cfg->preferred_path);
    free(cfg);
}

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    selector_ids_clear(&p->selector);
    ns_free(p->required);
    ns_free(p->preferred);
    label_set_clear(&p->labels);
    free(p);
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *aff = host->object_get(obj, cfg->affinity_field);
    selector *sel = NULL;
    prepared *p;

    *data = NULL;
    if (values_expect(host, aff, TRELLIS_VALUE_MAP, "a map {required..., preferred...}",
                      cfg->affinity_field, err, errlen) < 0)
        return -1;
    if (selector_parse(host, host->object_get(obj, cfg->selector_field), SELECTOR_FORMAT_MAP,
                       cfg->selector_field, &sel, err, errlen) < 0)
        return -1;
    p = calloc(1, sizeof(*p));
    if (!p) {
        selector_free(sel);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->name = -1;
    if (sel) {
        p->has_selector = 1;
        if (selector_compile(sel, &cfg->ids, &p->selector) < 0) {
            selector_free(sel);
            release(self, p);
            snprintf(err, errlen, "%s: out of memory", cfg->selector_field);
            return -1;
        }
        selector_free(sel);
    }
    if (aff && host->value_type(aff) == TRELLIS_VALUE_MAP) {
        const trellis_value *req =
            host->value_get(aff, "requiredDuringSchedulingIgnoredDuringExecution");

        if (req && host->value_type(req) != TRELLIS_VALUE_NULL &&
            ns_parse_required(host, req, cfg->required_path, &cfg->ids, &p->required, err, errlen) <
                0)
            goto fail;
        if (ns_parse_preferred(
                host, host->value_get(aff, "preferredDuringSchedulingIgnoredDuringExecution"),
                cfg->preferred_path, &cfg->ids, &p->preferred, err, errlen) < 0)
            goto fail;
    }
    if (!p->has_selector && !p->required && !p->preferred) {
        release(self, p);
        return 0; /* nothing to match: fits everywhere, scores nothing */
    }
    *data = p;
    return 0;
fail:
    release(self, p);
    return -1;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    prepared *p = calloc(1, sizeof(*p));

    *data = NULL;
    if (!p ||
        label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->ids, &p->labels) < 0) {
        free(p);
        snprintf(err, errlen, "metadata.labels: out of memory");
        return -1;
    }
    p->name = intern_id(&cfg->ids, host->object_name(obj));
    p->node = obj;
    *data = p;
    return 0;
}

static const char *node_label(const void *ud, const char *key)
{
    return host->object_label(ud, key);
}

static void node_view(const prepared *tp, ns_node *n)
{
    n->labels = &tp->labels;
    n->name = tp->name;
    n->label = node_label;
    n->ud = tp->node;
}

/* Which rule rejects the Node: 0 none, 1 the added affinity, 2 the
 * nodeSelector, 3 the required terms. A Node without prepared data (its
 * prepare failed: out of memory) has no labels. */
static int rejection(const config *cfg, const prepared *wp, const prepared *tp)
{
    static const label_set none = {NULL, 0};
    ns_node n = {&none, -1, NULL, NULL};

    if (tp)
        node_view(tp, &n);
    if (cfg->added_required && !ns_matches(cfg->added_required, &n))
        return 1;
    if (!wp)
        return 0;
    if (wp->has_selector && selector_ids_first_mismatch(&wp->selector, n.labels) >= 0)
        return 2;
    if (wp->required && !ns_matches(wp->required, &n))
        return 3;
    return 0;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *wp = host->object_data(self, workload);

    if (!cfg->added_required && (!wp || (!wp->has_selector && !wp->required)))
        return TRELLIS_SKIP;
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *wp = host->object_data(self, workload);
    const prepared *tp = host->object_data(self, host->target_object(target));
    char why[TRELLIS_MESSAGE_MAX - 64];
    ns_node n;
    long bad;

    switch (rejection(cfg, wp, tp)) {
    case 0:
        return TRELLIS_SUCCESS;
    case 1:
        return host->status(st, TRELLIS_UNRESOLVABLE, "EnforcedNodeAffinityMismatch",
                            "node(s) didn't match scheduler-enforced node affinity");
    case 2:
        bad = tp ? selector_ids_first_mismatch(&wp->selector, &tp->labels) : 0;
        snprintf(why, sizeof(why), "label %s=%s not matched",
                 intern_str(&cfg->ids, wp->selector.reqs[bad].key),
                 intern_str(&cfg->ids, wp->selector.values[wp->selector.reqs[bad].first]));
        return host->status(st, TRELLIS_UNRESOLVABLE, "NodeAffinityMismatch",
                            "node(s) didn't match Pod's node affinity/selector: nodeSelector %s",
                            why);
    default:
        if (tp) {
            node_view(tp, &n);
            ns_describe_mismatch(wp->required, &cfg->ids, &n, why, sizeof(why));
        } else {
            snprintf(why, sizeof(why), "the node has no labels");
        }
        return host->status(st, TRELLIS_UNRESOLVABLE, "NodeAffinityMismatch",
                            "node(s) didn't match Pod's node affinity/selector: %s", why);
    }
}

static int span_rejects(const void *cfg, const void *wp, const void *tp)
{
    return rejection(cfg, wp, tp) != 0;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    trellis_span_clear_rejected(host->cycle_target_data(c, self), host->get_private(self),
                                host->object_data(self, workload), first, n, pass, span_rejects);
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *wp = host->object_data(self, workload);

    if (!cfg->added_preferred && (!wp || !wp->preferred))
        return TRELLIS_SKIP;
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *wp = host->object_data(self, workload);
    const prepared *tp = host->object_data(self, host->target_object(target));
    ns_node n;

    *out = 0;
    if (!tp)
        return TRELLIS_SUCCESS;
    node_view(tp, &n);
    *out = ns_score(cfg->added_preferred, &n) + (wp ? ns_score(wp->preferred, &n) : 0);
    return TRELLIS_SUCCESS;
}

/* kube's helper.DefaultNormalizeScore(MaxNodeScore, reverse = false). */
static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    int64_t lo, hi;

    trellis_scores_min_max(scores, n, &lo, &hi);
    if (hi == 0)
        return TRELLIS_SUCCESS;
    for (size_t i = 0; i < n; i++)
        scores[i] = scores[i] * TRELLIS_MAX_SCORE / hi;
    return TRELLIS_SUCCESS;
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *target)
{
    return rejection(host->get_private(self), host->object_data(self, workload),
                     host->object_data(self, target)) != 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Workloads with equal selectors and node affinity get the same verdicts
 * and scores. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const config *cfg = host->get_private(self);

    return trellis_equal_fields(host, a, b, cfg->selector_field) &&
           trellis_equal_fields(host, a, b, cfg->affinity_field);
}

/* addedAffinity from the config document. */
static int read_config(config *cfg, const trellis_value *doc, char *err, size_t errlen)
{
    const trellis_value *added;
    int rc;

    if (!doc || host->value_type(doc) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "config: expected a map {addedAffinity}, got %s",
                 values_type_name(host->value_type(doc)));
        return -1;
    }
    if (host->value_len(doc) > (host->value_get(doc, "addedAffinity") ? 1u : 0u)) {
        snprintf(err, errlen, "config: only addedAffinity is supported (NodeAffinityArgs)");
        return -1;
    }
    added = host->value_get(doc, "addedAffinity");
    rc = values_expect(host, added, TRELLIS_VALUE_MAP, "a NodeAffinity map", "config.addedAffinity",
                       err, errlen);
    if (rc <= 0)
        return rc;
    if (host->value_get(added, "requiredDuringSchedulingIgnoredDuringExecution")) {
        node_selector *s;
        const char *path = "config.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution";

        if (ns_parse_required(
                host, host->value_get(added, "requiredDuringSchedulingIgnoredDuringExecution"),
                path, &cfg->ids, &s, err, errlen) < 0)
            return -1;
        for (size_t i = 0; i < s->n; i++) {
            if (s->terms[i].invalid) {
                snprintf(err, errlen, "%s.nodeSelectorTerms: term %zu has an invalid requirement",
                         path, i);
                ns_free(s);
                return -1;
            }
        }
        cfg->added_required = s;
    }
    return ns_parse_preferred(
        host, host->value_get(added, "preferredDuringSchedulingIgnoredDuringExecution"),
        "config.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution", &cfg->ids,
        &cfg->added_preferred, err, errlen);
}

static char *joined(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);

    if (s)
        snprintf(s, n, "%s.%s", a, b);
    return s;
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
    cfg->selector_field = h->arg_string(args, "node_selector_field");
    cfg->affinity_field = h->arg_string(args, "affinity_field");
    if (values_check_path("node_selector_field", cfg->selector_field, err, errlen) < 0 ||
        values_check_path("affinity_field", cfg->affinity_field, err, errlen) < 0)
        return -1;
    cfg->required_path =
        joined(cfg->affinity_field, "requiredDuringSchedulingIgnoredDuringExecution");
    cfg->preferred_path =
        joined(cfg->affinity_field, "preferredDuringSchedulingIgnoredDuringExecution");
    if (!cfg->required_path || !cfg->preferred_path) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (read_config(cfg, h->arg_document(args, "config"), err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_span(self, filter_span) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_normalize(self, normalize) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-affinity",
    "1.0.0",
    "kube-scheduler's NodeAffinity: nodeSelector and required node affinity filter, preferred "
    "terms score",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_affinity)
