/*
 * taint_toleration.c - the taint-toleration plugin: targets repel workloads
 * that do not tolerate their taints.
 *
 * Filter: a target with a NoSchedule or NoExecute taint that the workload
 * does not tolerate is rejected (UNRESOLVABLE, as in kube-scheduler:
 * evicting workloads removes no taint). Score: the number of
 * PreferNoSchedule taints not tolerated, reversed by normalize so that the
 * target with the fewest gets 100. Eviction check (SDK 1.1 hosts,
 * `evict_no_execute`): a workload bound to a target with a NoExecute taint
 * it does not tolerate is evicted. Taints and tolerations are parsed once per
 * object by common/taints.c; filter and score walk plain arrays. The
 * `semantics` argument switches between Kubernetes' matching rules and
 * Gardener's seed tolerations; `ignore_taints` drops taints that another
 * plugin handles (Gardener's disable-dns taint, see gardener-dns), and
 * `namespace_taints` gives taints that only the workloads of one namespace
 * tolerate, whatever their tolerations (the scheduler document's rule for
 * seed.gardener.cloud/protected and the garden namespace).
 *
 * Queueing hints: a rejected workload may fit after a target appears whose
 * hard taints it tolerates, or after a target's taints change from some it
 * does not tolerate to ones it does.
 */
/* the oldest host it runs on: it uses the columnar hooks of SDK 1.3 */
#define TRELLIS_PLUGIN_MIN_MINOR 3

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "taints.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* At most this many distinct keys in namespace_taints: a workload's
 * permissions are one bit per key. */
#define MAX_NAMESPACE_KEYS 64

/* One namespace_taints entry: taints with key group `group` are tolerated
 * by the workloads in `namespace_`. */
typedef struct namespace_rule {
    int group;
    char *namespace_;
} namespace_rule;

typedef struct config {
    const char *taints_field;      /* on the target; host-owned */
    const char *tolerations_field; /* on the workload; host-owned */
    taint_effect empty_effect;
    taint_semantics semantics;
    const char **ignore; /* ignore_taints keys, host-owned strings */
    size_t n_ignore;
    char *ns_keys[MAX_NAMESPACE_KEYS]; /* namespace_taints keys, one per group */
    size_t n_ns_keys;
    namespace_rule *ns_rules;
    size_t n_ns_rules;
} config;

/* Prepared data of workloads and targets alike, because the host hands
 * both to the same release function. */
typedef struct prepared {
    /* workload: its tolerations; target: its taints, ignored ones dropped */
    taint_list *list;
    /* target: per taint, its namespace_taints key group or -1 (NULL when
     * no taint has one) */
    signed char *ns_group;
    /* workload: bit g set when its namespace tolerates key group g */
    uint64_t ns_allowed;
} prepared;

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
    {"ignore_taints", TRELLIS_ARG_STRING_LIST, "", "taint keys this plugin ignores entirely"},
    {"namespace_taints", TRELLIS_ARG_STRING_LIST, "",
     "\"key=namespace\": taints with this key are tolerated by the workloads in that "
     "namespace and by no other workload"},
    {"evict_no_execute", TRELLIS_ARG_BOOL, "true",
     "evict bound workloads from targets with a NoExecute taint they do not tolerate"},
    {NULL, 0, NULL, NULL},
};

static void free_config(void *data)
{
    config *cfg = data;

    if (!cfg)
        return;
    free(cfg->ignore);
    for (size_t i = 0; i < cfg->n_ns_keys; i++)
        free(cfg->ns_keys[i]);
    for (size_t i = 0; i < cfg->n_ns_rules; i++)
        free(cfg->ns_rules[i].namespace_);
    free(cfg->ns_rules);
    free(cfg);
}

static const prepared *target_data(const trellis_plugin *self, const trellis_target *t)
{
    return host->object_data(self, host->target_object(t));
}

/* Whether taint i of target data tp is tolerated by the workload with
 * prepared data wp (may be NULL: no tolerations). */
static int tolerated(const config *cfg, const prepared *tp, size_t i, const prepared *wp)
{
    int group = tp->ns_group ? tp->ns_group[i] : -1;

    if (group >= 0)
        return wp && ((wp->ns_allowed >> group) & 1);
    return taints_tolerated(&tp->list->items[i], wp ? wp->list : NULL, cfg->semantics);
}

/* The first taint with an effect in `effects` (a bit per taint_effect)
 * that the workload does not tolerate. */
static const taint_item *untolerated(const config *cfg, const prepared *tp, const prepared *wp,
                                     unsigned effects)
{
    if (!tp || !tp->list)
        return NULL;
    for (size_t i = 0; i < tp->list->n; i++) {
        const taint_item *t = &tp->list->items[i];

        if ((effects & (1u << t->effect)) && !tolerated(cfg, tp, i, wp))
            return t;
    }
    return NULL;
}

#define HARD_EFFECTS ((1u << TAINT_NO_SCHEDULE) | (1u << TAINT_NO_EXECUTE))

static int64_t intolerable_preferred(const config *cfg, const prepared *tp, const prepared *wp)
{
    int64_t count = 0;

    if (!tp || !tp->list)
        return 0;
    for (size_t i = 0; i < tp->list->n; i++) {
        if (tp->list->items[i].effect == TAINT_PREFER_NO_SCHEDULE && !tolerated(cfg, tp, i, wp))
            count++;
    }
    return count;
}

/* Workload and target data are both `prepared`. */
static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    taints_free(p->list);
    free(p->ns_group);
    free(p);
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    const char *ns = host->object_namespace(obj);
    uint64_t allowed = 0;
    taint_list *tols;
    prepared *p;

    *data = NULL;
    if (taints_parse_tolerations(host, host->object_get(obj, cfg->tolerations_field),
                                 cfg->tolerations_field, cfg->semantics, &tols, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < cfg->n_ns_rules; i++) {
        if (ns && strcmp(ns, cfg->ns_rules[i].namespace_) == 0)
            allowed |= UINT64_C(1) << cfg->ns_rules[i].group;
    }
    if (!tols && !allowed)
        return 0;
    p = calloc(1, sizeof(*p));
    if (!p) {
        taints_free(tols);
        snprintf(err, errlen, "%s: out of memory", cfg->tolerations_field);
        return -1;
    }
    p->list = tols;
    p->ns_allowed = allowed;
    *data = p;
    return 0;
}

static int ignored(const config *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->n_ignore; i++) {
        if (strcmp(cfg->ignore[i], key) == 0)
            return 1;
    }
    return 0;
}

static int ns_group_of(const config *cfg, const char *key)
{
    for (size_t g = 0; g < cfg->n_ns_keys; g++) {
        if (strcmp(cfg->ns_keys[g], key) == 0)
            return (int)g;
    }
    return -1;
}

/* Drop the taints with an ignored key. */
static void drop_ignored(const config *cfg, taint_list *l)
{
    size_t keep = 0;

    for (size_t i = 0; i < l->n; i++) {
        if (ignored(cfg, l->items[i].key)) {
            free(l->items[i].key);
            free(l->items[i].value);
            continue;
        }
        l->items[keep++] = l->items[i];
    }
    l->n = keep;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const config *cfg = host->get_private(self);
    taint_list *taints;
    prepared *p;

    *data = NULL;
    if (taints_parse_taints(host, host->object_get(obj, cfg->taints_field), cfg->taints_field,
                            cfg->empty_effect, &taints, err, errlen) < 0)
        return -1;
    if (taints && cfg->n_ignore)
        drop_ignored(cfg, taints);
    if (!taints || taints->n == 0) {
        taints_free(taints);
        return 0;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        goto nomem;
    p->list = taints;
    taints = NULL;
    if (cfg->n_ns_keys) {
        int any = 0;

        p->ns_group = malloc(p->list->n * sizeof(*p->ns_group));
        if (!p->ns_group)
            goto nomem;
        for (size_t i = 0; i < p->list->n; i++) {
            p->ns_group[i] = (signed char)ns_group_of(cfg, p->list->items[i].key);
            any |= p->ns_group[i] >= 0;
        }
        if (!any) {
            free(p->ns_group);
            p->ns_group = NULL;
        }
    }
    *data = p;
    return 0;
nomem:
    taints_free(taints);
    release(self, p);
    snprintf(err, errlen, "%s: out of memory", cfg->taints_field);
    return -1;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const taint_item *bad;
    char text[200];

    bad = untolerated(cfg, target_data(self, target), host->object_data(self, workload),
                      HARD_EFFECTS);
    if (!bad)
        return TRELLIS_SUCCESS;
    taints_describe(bad, text, sizeof(text));
    host->status(st, TRELLIS_UNRESOLVABLE, "TaintNotTolerated",
                 "target has taint {%s} that the workload does not tolerate", text);
    return TRELLIS_UNRESOLVABLE;
}

/* Targets without taints have no prepared data: the common case costs a
 * load and a test. */
static int span_rejects(const void *cfg, const void *wp, const void *tp)
{
    return tp && untolerated(cfg, tp, wp, HARD_EFFECTS) != NULL;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    trellis_span_clear_rejected(host->cycle_target_data(c, self), host->get_private(self),
                                host->object_data(self, workload), first, n, pass, span_rejects);
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const config *cfg = host->get_private(self);

    *out = intolerable_preferred(cfg, target_data(self, target), host->object_data(self, workload));
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const prepared *wp = host->object_data(self, workload);
    void *const *tdata = host->cycle_target_data(c, self);

    for (size_t j = 0; j < n; j++) {
        const prepared *tp = tdata ? tdata[idx[j]] : NULL;

        scores[j] = tp ? intolerable_preferred(cfg, tp, wp) : 0;
    }
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
    if (max == 0) { /* no target has a taint the workload minds */
        for (size_t i = 0; i < n; i++)
            scores[i] = TRELLIS_MAX_SCORE;
        return TRELLIS_SUCCESS;
    }
    for (size_t i = 0; i < n; i++)
        scores[i] = TRELLIS_MAX_SCORE - scores[i] * TRELLIS_MAX_SCORE / max;
    return TRELLIS_SUCCESS;
}

/* A bound workload stays unless the target has a NoExecute taint it does
 * not tolerate. */
static int eviction_check(trellis_plugin *self, const trellis_object *workload,
                          const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const taint_item *bad;
    char text[200];

    bad = untolerated(cfg, target_data(self, target), host->object_data(self, workload),
                      1u << TAINT_NO_EXECUTE);
    if (!bad)
        return TRELLIS_SUCCESS;
    taints_describe(bad, text, sizeof(text));
    host->status(st, TRELLIS_UNSCHEDULABLE, "TaintNoExecute",
                 "target has taint {%s} that the workload does not tolerate", text);
    return TRELLIS_UNSCHEDULABLE;
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *target)
{
    return untolerated(host->get_private(self), host->object_data(self, target),
                       host->object_data(self, workload), HARD_EFFECTS) != NULL;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* ignore_taints and namespace_taints into cfg. */
static int read_key_lists(const trellis_host *h, const trellis_args *args, config *cfg, char *err,
                          size_t errlen)
{
    size_t n = h->arg_list_len(args, "ignore_taints");

    if (n) {
        cfg->ignore = calloc(n, sizeof(*cfg->ignore));
        if (!cfg->ignore)
            goto nomem;
        for (size_t i = 0; i < n; i++) {
            const char *k = h->arg_list_at(args, "ignore_taints", i);

            if (!k || k[0] == '\0') {
                snprintf(err, errlen, "ignore_taints[%zu]: expected a taint key", i);
                return -1;
            }
            cfg->ignore[cfg->n_ignore++] = k;
        }
    }
    n = h->arg_list_len(args, "namespace_taints");
    if (n) {
        cfg->ns_rules = calloc(n, sizeof(*cfg->ns_rules));
        if (!cfg->ns_rules)
            goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        const char *e = h->arg_list_at(args, "namespace_taints", i);
        const char *eq = e ? strchr(e, '=') : NULL;
        namespace_rule *r = &cfg->ns_rules[cfg->n_ns_rules];
        size_t klen;
        int group = -1;

        if (!eq || eq == e || eq[1] == '\0') {
            snprintf(err, errlen, "namespace_taints[%zu]: expected \"key=namespace\", got '%s'", i,
                     e ? e : "");
            return -1;
        }
        klen = (size_t)(eq - e);
        for (size_t g = 0; g < cfg->n_ns_keys; g++) {
            if (strlen(cfg->ns_keys[g]) == klen && strncmp(cfg->ns_keys[g], e, klen) == 0)
                group = (int)g;
        }
        if (group < 0) {
            if (cfg->n_ns_keys == MAX_NAMESPACE_KEYS) {
                snprintf(err, errlen, "namespace_taints: more than %d distinct keys",
                         MAX_NAMESPACE_KEYS);
                return -1;
            }
            cfg->ns_keys[cfg->n_ns_keys] = malloc(klen + 1);
            if (!cfg->ns_keys[cfg->n_ns_keys])
                goto nomem;
            memcpy(cfg->ns_keys[cfg->n_ns_keys], e, klen);
            cfg->ns_keys[cfg->n_ns_keys][klen] = '\0';
            group = (int)cfg->n_ns_keys++;
        }
        r->group = group;
        r->namespace_ = values_strdup(eq + 1);
        if (!r->namespace_)
            goto nomem;
        cfg->n_ns_rules++;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Workloads with the same tolerations and namespace permissions get the
 * same verdicts and scores. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->ns_allowed == y->ns_allowed && taints_equal(x->list, y->list);
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
    if (read_key_lists(h, args, cfg, err, errlen) < 0)
        goto fail;
    h->set_private(self, cfg, free_config);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_span(self, score_span) < 0 ||
        h->register_normalize(self, normalize) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    if (trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint, err,
                               errlen) < 0)
        return -1;
    /* A 1.0 host has no eviction checks: the plugin still filters and
     * scores there, it just cannot evict. */
    if (h->arg_bool(args, "evict_no_execute")) {
        if (TRELLIS_HOST_HAS(h, register_eviction_check) && h->register_eviction_check) {
            if (h->register_eviction_check(self, eviction_check) < 0) {
                snprintf(err, errlen, "cannot register the eviction check");
                return -1;
            }
        } else {
            h->log(self, TRELLIS_LOG_INFO,
                   "host SDK %d.%d has no eviction checks; NoExecute taints only filter",
                   h->sdk_major, h->sdk_minor);
        }
    }
    return 0;
fail:
    free_config(cfg);
    return -1;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "taint-toleration",
    "1.2.0",
    "rejects targets with untolerated taints, prefers fewer PreferNoSchedule "
    "taints, evicts from NoExecute taints",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, taint_toleration)
