/*
 * inter_pod_affinity.c - the inter-pod-affinity plugin: kube-scheduler's
 * InterPodAffinity.
 *
 * Filter (kube's filtering.go): a Pod fits a Node when
 *   - for each of its required pod affinity terms the Node has the term's
 *     topology key and some existing Pod in that topology domain matches
 *     all of its terms (the domain counts of affinityCounts), except that
 *     a Pod matching its own terms when no Pod anywhere matches them may go
 *     to any Node having every topology key (UNRESOLVABLE otherwise: "node(s)
 *     didn't match pod affinity rules");
 *   - no existing Pod matching one of its required anti-affinity terms is
 *     in the Node's domain of that term (UNSCHEDULABLE: "node(s) didn't
 *     match pod anti-affinity rules");
 *   - no existing Pod whose required anti-affinity term matches it is in
 *     the Node's domain of that term (UNSCHEDULABLE: "node(s) didn't
 *     satisfy existing pods anti-affinity rules").
 * pre_filter builds the three maps, (topology key, value) -> count, once
 * per cycle from the Pods on the Nodes: the incoming Pod's terms against
 * every Pod, and only the Pods with required anti-affinity (a counter the
 * host keeps per Node) against the incoming Pod. The filter looks up the
 * Node's few topology values: no Pod is walked per Node. Preemption's
 * "as if these victims were gone" (cycle_filter_without) subtracts the
 * victims' contributions from the Node's domains, as kube's RemovePod;
 * the Pods the host adds to a copy of a Node (those nominated to it, as
 * kube's RunFilterPluginsWithNominatedPods) add theirs, as its AddPod.
 *
 * Score (kube's scoring.go): for every existing Pod on a labelled Node,
 * the incoming Pod's preferred affinity terms it matches add their weight
 * to the Pod's domain, its preferred anti-affinity terms subtract theirs;
 * the existing Pod's required affinity terms that match the incoming Pod
 * add hardPodAffinityWeight, its preferred affinity terms add their weight
 * and its preferred anti-affinity terms subtract theirs. A Node scores the
 * sum over the topology keys of the map of its domain's value, normalized
 * as kube: (score - min) * 100 / (max - min) over the scored Nodes, 0 when
 * all are equal.
 *
 * Terms follow kube's AffinityTerm: a missing labelSelector matches no
 * Pod, an empty one every Pod; no namespaces and no namespaceSelector
 * means the Pod's own namespace; an empty namespaceSelector means every
 * namespace; a namespaceSelector is matched against the labels of the
 * Namespace objects (the incoming Pod's terms: every Namespace, once per
 * cycle; the existing Pods' terms: the incoming Pod's Namespace).
 * matchLabelKeys and mismatchLabelKeys are merged into the selector as
 * the API server does (key In / NotIn the Pod's own value). Pods in phase
 * Succeeded or Failed, and Pods being deleted, do not count.
 *
 * Every Pod's terms are parsed and compiled to interned ids once
 * (prepare), each Node's labels read into a sorted set of ids: the cycle
 * compares integers. A term kube cannot parse drops its list of terms, as
 * kube's PodInfo does; an incoming Pod with such a term is UNRESOLVABLE
 * ("parsing pod: ...").
 *
 * `config` is kube's InterPodAffinityArgs as a document:
 *   hardPodAffinityWeight: 1                   (0..100)
 *   ignorePreferredTermsOfExistingPods: false
 */
/* the oldest host it runs on: the columnar filter of SDK 1.3, the document argument of 1.4 */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "selector.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* The four lists of terms of a Pod, in kube's PodInfo order. */
enum { REQ_AFF = 0, REQ_ANTI, PREF_AFF, PREF_ANTI, NLISTS };

static const char *const list_name[NLISTS] = {"requiredAffinityTerms", "requiredAntiAffinityTerms",
                                              "preferredAffinityTerms",
                                              "preferredAntiAffinityTerms"};

/* kube's AffinityTerm (with its weight for preferred terms). */
typedef struct term {
    int32_t key;      /* topologyKey id */
    int32_t weight;   /* preferred terms; 0 for required ones */
    int sel_nothing;  /* labelSelector absent: matches no Pod */
    selector_ids sel; /* compiled labelSelector (empty: every Pod) */
    int32_t *ns;      /* namespaces (the Pod's own when neither is given) */
    size_t nns;
    int ns_all;       /* namespaceSelector {}: every namespace */
    selector *ns_sel; /* a non-empty namespaceSelector, NULL otherwise */
} term;

/* Prepared data of a Pod. */
typedef struct pod {
    int is_node; /* 0: prepared data of both kinds starts with it */
    int32_t ns;
    label_set labels;
    int inert; /* Succeeded, Failed or being deleted: not counted */
    term *t[NLISTS];
    size_t n[NLISTS];
    char *error; /* terms kube cannot parse, NULL when none */
} pod;

/* Prepared data of a Node. */
typedef struct node {
    int is_node; /* 1 */
    label_set labels;
} node;

typedef struct config {
    const char *affinity_field; /* host-owned until fini */
    const char *phase_field;
    int32_t hard_weight; /* hardPodAffinityWeight */
    int ignore_existing; /* ignorePreferredTermsOfExistingPods */
    intern ids;          /* written in prepare only */
    size_t with_terms;   /* prepared Pods with any term: 0 lets the plugin sit out */
} config;

/* (topology key id, value id) -> count, in the cycle's arena. */
typedef struct pairmap {
    uint64_t *keys; /* UINT64_MAX: empty slot */
    int64_t *vals;
    size_t cap, n;
} pairmap;

#define NO_PAIR UINT64_MAX

/* An incoming Pod's term with its namespaceSelector resolved (kube's
 * mergeAffinityTermNamespacesIfNotEmpty). */
typedef struct view {
    const term *t;
    const int32_t *extra; /* namespaces whose labels match t->ns_sel */
    size_t nextra;
} view;

/* The cycle's state (one slot: the filter part from pre_filter, the score
 * part from pre_score). */
typedef struct state {
    trellis_cycle *c;
    const pod *in;
    /* the incoming Pod's Namespace (NULL if none), looked up again by each
     * hook that reads it: a borrowed object is valid until its hook returns */
    const trellis_object *nsobj;
    view *v[NLISTS];
    /* filter */
    pairmap existing, aff, anti;
    int self_match;
    /* score */
    pairmap score;
    int32_t *score_keys; /* the distinct topology keys of score */
    size_t n_score_keys, cap_score_keys;
} state;

static const trellis_arg_spec args_table[] = {
    {"affinity_field", TRELLIS_ARG_STRING, "spec.affinity",
     "dotted path of the workload's Affinity (podAffinity and podAntiAffinity)"},
    {"phase_field", TRELLIS_ARG_STRING, "status.phase",
     "dotted path of the workload's phase: Succeeded and Failed Pods do not count"},
    {"config", TRELLIS_ARG_DOCUMENT, "{}",
     "kube-scheduler's InterPodAffinityArgs: hardPodAffinityWeight (0-100, default 1) and "
     "ignorePreferredTermsOfExistingPods (default false)"},
    {NULL, 0, NULL, NULL},
};

/* ---- prepared data ------------------------------------------------------ */

/* snprintf for messages and paths that may be cut at len (a long
 * affinity_field, a deep path): cut is fine there. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static void term_clear(term *t)
{
    selector_ids_clear(&t->sel);
    selector_free(t->ns_sel);
    free(t->ns);
}

static void list_free(pod *p, int l)
{
    for (size_t i = 0; i < p->n[l]; i++)
        term_clear(&p->t[l][i]);
    free(p->t[l]);
    p->t[l] = NULL;
    p->n[l] = 0;
}

static int has_terms(const pod *p)
{
    return p->n[REQ_AFF] + p->n[REQ_ANTI] + p->n[PREF_AFF] + p->n[PREF_ANTI] || p->error;
}

/* Free a Pod's prepared data. */
static void pod_free(pod *p)
{
    if (!p)
        return;
    for (int l = 0; l < NLISTS; l++)
        list_free(p, l);
    label_set_clear(&p->labels);
    free(p->error);
    free(p);
}

static void release(trellis_plugin *self, void *data)
{
    config *cfg = host->get_private(self);
    pod *p = data;

    if (!p)
        return;
    if (p->is_node) {
        node *n = data;

        label_set_clear(&n->labels);
        free(n);
        return;
    }
    if (has_terms(p))
        cfg->with_terms--;
    pod_free(p);
}

/* A label key list of a term (matchLabelKeys, mismatchLabelKeys) merged
 * into *sel: key op the Pod's own value, for each key the Pod has. */
static int merge_label_keys(const trellis_value *keys, const char *path, const trellis_object *obj,
                            selector_op op, selector **sel, char *err, size_t errlen)
{
    if (!keys || host->value_type(keys) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(keys) != TRELLIS_VALUE_LIST) {
        say(err, errlen, "%s: expected a list of label keys, got %s", path,
            values_type_name(host->value_type(keys)));
        return -1;
    }
    for (size_t i = 0; i < host->value_len(keys); i++) {
        const char *k = host->value_string(host->value_at(keys, i));
        const char *v;

        if (!k || host->value_type(host->value_at(keys, i)) != TRELLIS_VALUE_STRING) {
            say(err, errlen, "%s[%zu]: expected a label key", path, i);
            return -1;
        }
        v = host->object_label(obj, k);
        if (v && selector_add(sel, k, op, v) < 0) {
            say(err, errlen, "%s: out of memory", path);
            return -1;
        }
    }
    return 0;
}

/* One PodAffinityTerm (v, at path) of the Pod obj into *t. */
static int parse_term(config *cfg, const trellis_object *obj, int32_t own_ns,
                      const trellis_value *v, const char *path, term *t, char *err, size_t errlen)
{
    const trellis_value *ls, *nss, *nsel, *tk;
    selector *sel = NULL;
    char sub[256];
    int rc = 0;

    if (host->value_type(v) != TRELLIS_VALUE_MAP) {
        say(err, errlen, "%s: expected a PodAffinityTerm map, got %s", path,
            values_type_name(host->value_type(v)));
        return -1;
    }
    tk = host->value_get(v, "topologyKey");
    if (!tk || host->value_type(tk) != TRELLIS_VALUE_STRING) {
        say(err, errlen, "%s.topologyKey: expected a label key", path);
        return -1;
    }
    t->key = intern_id(&cfg->ids, host->value_string(tk));
    ls = host->value_get(v, "labelSelector");
    say(sub, sizeof(sub), "%s.labelSelector", path);
    if (!ls || host->value_type(ls) == TRELLIS_VALUE_NULL) {
        t->sel_nothing = 1; /* kube: a nil selector matches nothing */
    } else {
        if (values_expect(host, ls, TRELLIS_VALUE_MAP, "a LabelSelector map", sub, err, errlen) <
                0 ||
            selector_parse(host, ls, SELECTOR_FORMAT_SELECTOR, sub, &sel, err, errlen) < 0)
            return -1;
        say(sub, sizeof(sub), "%s.matchLabelKeys", path);
        rc = merge_label_keys(host->value_get(v, "matchLabelKeys"), sub, obj, SELECTOR_IN, &sel,
                              err, errlen);
        say(sub, sizeof(sub), "%s.mismatchLabelKeys", path);
        if (rc == 0)
            rc = merge_label_keys(host->value_get(v, "mismatchLabelKeys"), sub, obj,
                                  SELECTOR_NOT_IN, &sel, err, errlen);
        if (rc == 0 && selector_compile(sel, &cfg->ids, &t->sel) < 0) {
            say(err, errlen, "%s: out of memory", path);
            rc = -1;
        }
        selector_free(sel);
        if (rc < 0)
            return -1;
    }
    nss = host->value_get(v, "namespaces");
    nsel = host->value_get(v, "namespaceSelector");
    if (nsel && host->value_type(nsel) != TRELLIS_VALUE_NULL) {
        say(sub, sizeof(sub), "%s.namespaceSelector", path);
        if (values_expect(host, nsel, TRELLIS_VALUE_MAP, "a LabelSelector map", sub, err, errlen) <
                0 ||
            selector_parse(host, nsel, SELECTOR_FORMAT_SELECTOR, sub, &t->ns_sel, err, errlen) < 0)
            return -1;
        t->ns_all = !t->ns_sel; /* {}: every namespace */
    }
    if (nss && host->value_type(nss) != TRELLIS_VALUE_NULL) {
        size_t n;

        say(sub, sizeof(sub), "%s.namespaces", path);
        if (values_expect(host, nss, TRELLIS_VALUE_LIST, "a list of namespaces", sub, err, errlen) <
            0)
            return -1;
        n = host->value_len(nss);
        t->ns = calloc(n ? n : 1, sizeof(*t->ns));
        if (!t->ns) {
            say(err, errlen, "%s: out of memory", sub);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            const char *s = host->value_string(host->value_at(nss, i));

            if (!s || host->value_type(host->value_at(nss, i)) != TRELLIS_VALUE_STRING) {
                say(err, errlen, "%s[%zu]: expected a namespace name", sub, i);
                return -1;
            }
            t->ns[t->nns++] = intern_id(&cfg->ids, s);
        }
    }
    if (t->nns == 0 && (!nsel || host->value_type(nsel) == TRELLIS_VALUE_NULL)) {
        t->ns = calloc(1, sizeof(*t->ns));
        if (!t->ns) {
            say(err, errlen, "%s: out of memory", path);
            return -1;
        }
        t->ns[0] = own_ns;
        t->nns = 1;
    }
    return 0;
}

/* The list at aff.<group>.<field> into p's list l; weighted lists hold
 * {weight, podAffinityTerm}. A term that does not parse drops the whole
 * list and is recorded in p->error, as kube's PodInfo does. */
static int parse_list(config *cfg, const trellis_object *obj, pod *p, int l,
                      const trellis_value *group, const char *group_path, char *err, size_t errlen)
{
    int weighted = l >= PREF_AFF;
    const char *field = weighted ? "preferredDuringSchedulingIgnoredDuringExecution"
                                 : "requiredDuringSchedulingIgnoredDuringExecution";
    const trellis_value *list = group ? host->value_get(group, field) : NULL;
    char path[256], why[TRELLIS_MESSAGE_MAX];
    size_t n;

    if (!list || host->value_type(list) == TRELLIS_VALUE_NULL)
        return 0;
    say(path, sizeof(path), "%s.%s", group_path, field);
    if (host->value_type(list) != TRELLIS_VALUE_LIST) {
        say(why, sizeof(why), "%s: expected a list, got %s", path,
            values_type_name(host->value_type(list)));
        goto bad;
    }
    n = host->value_len(list);
    if (n == 0)
        return 0;
    p->t[l] = calloc(n, sizeof(term));
    if (!p->t[l]) {
        say(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_value *e = host->value_at(list, i), *v = e;
        char at[300];
        term *t = &p->t[l][p->n[l]++];

        say(at, sizeof(at), "%s[%zu]", path, i);
        if (weighted) {
            const trellis_value *w =
                host->value_type(e) == TRELLIS_VALUE_MAP ? host->value_get(e, "weight") : NULL;
            int64_t wv;

            if (!w || host->value_int(w, &wv) < 0 || wv < 1 || wv > 100) {
                say(why, sizeof(why), "%s.weight: expected an integer 1-100", at);
                goto bad;
            }
            t->weight = (int32_t)wv;
            v = host->value_get(e, "podAffinityTerm");
            if (!v) {
                say(why, sizeof(why), "%s.podAffinityTerm: missing", at);
                goto bad;
            }
            say(at + strlen(at), sizeof(at) - strlen(at), ".podAffinityTerm");
        }
        if (parse_term(cfg, obj, p->ns, v, at, t, why, sizeof(why)) < 0)
            goto bad;
    }
    return 0;
bad:
    list_free(p, l);
    if (!p->error) {
        size_t len = strlen(list_name[l]) + strlen(why) + 3;

        p->error = malloc(len);
        if (!p->error) {
            say(err, errlen, "out of memory");
            return -1;
        }
        say(p->error, len, "%s: %s", list_name[l], why);
    }
    return 0;
}

/* Read the Pod obj into *out (owned by the caller, pod_free). 0, or -1
 * with err when out of memory: terms kube cannot parse are p->error. */
static int prepare_pod(config *cfg, const trellis_object *obj, pod **out, char *err, size_t errlen)
{
    const trellis_value *aff = host->object_get(obj, cfg->affinity_field);
    const trellis_value *ph = host->object_get(obj, cfg->phase_field);
    const char *phase = ph ? host->value_string(ph) : NULL;
    pod *p = calloc(1, sizeof(*p));
    char path[256];

    *out = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->ns = intern_id(&cfg->ids, host->object_namespace(obj));
    p->inert = (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) ||
               host->object_get(obj, "metadata.deletionTimestamp") != NULL;
    if (p->ns < 0 ||
        label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->ids, &p->labels) < 0)
        goto nomem;
    if (aff && host->value_type(aff) != TRELLIS_VALUE_NULL) {
        if (host->value_type(aff) != TRELLIS_VALUE_MAP) {
            const char *t = values_type_name(host->value_type(aff));
            size_t len = strlen(cfg->affinity_field) + strlen(t) + 40;

            p->error = malloc(len);
            if (!p->error)
                goto nomem;
            snprintf(p->error, len, "%s: expected an Affinity map, got %s", cfg->affinity_field, t);
        } else {
            for (int l = 0; l < NLISTS; l++) {
                const char *g = l == REQ_AFF || l == PREF_AFF ? "podAffinity" : "podAntiAffinity";
                const trellis_value *group = host->value_get(aff, g);

                snprintf(path, sizeof(path), "%s.%s", cfg->affinity_field, g);
                if (group && host->value_type(group) != TRELLIS_VALUE_MAP &&
                    host->value_type(group) != TRELLIS_VALUE_NULL) {
                    group = NULL;
                    if (!p->error) {
                        p->error = malloc(strlen(path) + 32);
                        if (!p->error)
                            goto nomem;
                        sprintf(p->error, "%s: expected a map", path);
                    }
                }
                if (parse_list(cfg, obj, p, l, group, path, err, errlen) < 0) {
                    pod_free(p);
                    return -1;
                }
            }
        }
    }
    *out = p;
    return 0;
nomem:
    pod_free(p);
    snprintf(err, errlen, "out of memory");
    return -1;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    pod *p;

    *data = NULL;
    if (prepare_pod(cfg, obj, &p, err, errlen) < 0)
        return -1;
    if (has_terms(p))
        cfg->with_terms++; /* released in release() */
    *data = p;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    node *n = calloc(1, sizeof(*n));

    *data = NULL;
    if (n)
        n->is_node = 1;
    if (!n ||
        label_set_read(host, host->object_get(obj, "metadata.labels"), &cfg->ids, &n->labels) < 0) {
        free(n);
        snprintf(err, errlen, "metadata.labels: out of memory");
        return -1;
    }
    *data = n;
    return 0;
}

/* ---- the cycle's maps ------------------------------------------------------ */

static uint64_t pair_of(int32_t key, int32_t value)
{
    return (uint64_t)(uint32_t)key << 32 | (uint32_t)value;
}

static size_t pm_slot(const pairmap *m, uint64_t k)
{
    uint64_t h = k * UINT64_C(0x9E3779B97F4A7C15);

    return (size_t)(h ^ (h >> 29)) & (m->cap - 1);
}

/* The count of pair k; 0 when absent. Allocates nothing: any thread. */
static int64_t pm_get(const pairmap *m, uint64_t k)
{
    if (!m->n)
        return 0;
    for (size_t i = pm_slot(m, k);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            return m->vals[i];
        if (m->keys[i] == NO_PAIR)
            return 0;
    }
}

/* Add d to pair k (creating it). Main thread: grows in the arena. 0, or -1
 * when the arena is exhausted. */
static int pm_add(trellis_cycle *c, pairmap *m, uint64_t k, int64_t d)
{
    size_t i;

    if ((m->n + 1) * 2 > m->cap) {
        pairmap g = {NULL, NULL, m->cap ? m->cap * 2 : 64, 0};

        g.keys = host->cycle_alloc(c, g.cap * sizeof(*g.keys));
        g.vals = host->cycle_alloc(c, g.cap * sizeof(*g.vals));
        if (!g.keys || !g.vals)
            return -1;
        memset(g.keys, 0xff, g.cap * sizeof(*g.keys));
        for (size_t j = 0; j < m->cap; j++) {
            if (m->keys[j] == NO_PAIR)
                continue;
            for (i = pm_slot(&g, m->keys[j]); g.keys[i] != NO_PAIR; i = (i + 1) & (g.cap - 1))
                ;
            g.keys[i] = m->keys[j];
            g.vals[i] = m->vals[j];
            g.n++;
        }
        *m = g;
    }
    for (i = pm_slot(m, k); m->keys[i] != NO_PAIR && m->keys[i] != k; i = (i + 1) & (m->cap - 1))
        ;
    if (m->keys[i] == NO_PAIR) {
        m->keys[i] = k;
        m->vals[i] = 0;
        m->n++;
    }
    m->vals[i] += d;
    return 0;
}

/* The value id of the Node's label key, -1 when it has none. */
static int32_t node_value(const node *nd, int32_t key)
{
    return nd ? label_set_get(&nd->labels, key) : -1;
}

/* The Node's (key, value) pair, NO_PAIR when it lacks the label. */
static uint64_t pair_at(const node *nd, int32_t key)
{
    int32_t v = node_value(nd, key);

    return v < 0 ? NO_PAIR : pair_of(key, v);
}

/* ---- matching ----------------------------------------------------------- */

static const char *ns_label(const void *ud, const char *key)
{
    return ud ? host->object_label(ud, key) : NULL;
}

/* kube's AffinityTerm.Matches for a term of the incoming Pod (its
 * namespaceSelector merged into its namespaces) and an existing Pod. */
static int view_matches(const view *v, const pod *p)
{
    const term *t = v->t;

    if (!t->ns_all && !intern_ids_has(t->ns, t->nns, p->ns) &&
        !intern_ids_has(v->extra, v->nextra, p->ns))
        return 0;
    return !t->sel_nothing && selector_ids_first_mismatch(&t->sel, &p->labels) < 0;
}

/* kube's podMatchesAllAffinityTerms: false for no terms. */
static int all_match(const view *v, size_t n, const pod *p)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!view_matches(&v[i], p))
            return 0;
    }
    return 1;
}

/* kube's AffinityTerm.Matches for a term of an existing Pod and the
 * incoming Pod, with the labels of the incoming Pod's Namespace nsobj. */
static int term_matches_incoming(const state *s, const trellis_object *nsobj, const term *t)
{
    const pod *in = s->in;

    if (!intern_ids_has(t->ns, t->nns, in->ns) && !t->ns_all &&
        !(t->ns_sel && selector_first_mismatch(t->ns_sel, ns_label, nsobj) < 0))
        return 0;
    return !t->sel_nothing && selector_ids_first_mismatch(&t->sel, &in->labels) < 0;
}

/* ---- the cycle's state ------------------------------------------------- */

typedef struct ns_walk {
    const config *cfg;
    const selector *sel;
    int32_t *out;
    size_t n, cap;
} ns_walk;

static int count_one(const trellis_object *o, void *ud)
{
    (void)o;
    ((ns_walk *)ud)->cap++;
    return 0;
}

static int match_one(const trellis_object *o, void *ud)
{
    ns_walk *w = ud;
    int32_t id;

    if (w->n < w->cap && selector_first_mismatch(w->sel, ns_label, o) < 0 &&
        (id = intern_find(&w->cfg->ids, host->object_name(o))) >= 0)
        w->out[w->n++] = id;
    return 0;
}

/* The Namespace object of the workload w, NULL when the store has none. */
static const trellis_object *namespace_of(trellis_plugin *self, const trellis_object *w)
{
    return host->lookup_object(self, "Namespace", "", host->object_namespace(w));
}

/* The state of this cycle, made at its first use (pre_filter or
 * pre_score): the incoming Pod's terms with their namespaceSelectors
 * resolved against the Namespace objects. NULL when the arena is
 * exhausted. Main thread. */
static state *state_get(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        const pod *wp)
{
    const config *cfg = host->get_private(self);
    state *s = host->cycle_get(c, self);

    if (s) {
        s->nsobj = namespace_of(self, w); /* for this hook */
        return s;
    }
    s = host->cycle_alloc(c, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    s->in = wp;
    s->nsobj = namespace_of(self, w);
    for (int l = 0; l < NLISTS; l++) {
        if (!wp->n[l])
            continue;
        s->v[l] = host->cycle_alloc(c, wp->n[l] * sizeof(view));
        if (!s->v[l])
            return NULL;
        for (size_t i = 0; i < wp->n[l]; i++) {
            view *v = &s->v[l][i];

            v->t = &wp->t[l][i];
            if (v->t->ns_sel) {
                ns_walk nw = {cfg, v->t->ns_sel, NULL, 0, 0};

                host->foreach_object(self, "Namespace", NULL, count_one, &nw);
                nw.out = host->cycle_alloc(c, (nw.cap ? nw.cap : 1) * sizeof(int32_t));
                if (!nw.out)
                    return NULL;
                host->foreach_object(self, "Namespace", NULL, match_one, &nw);
                v->extra = nw.out;
                v->nextra = nw.n;
            }
        }
    }
    host->cycle_set(c, self, s);
    return s;
}

/* ---- filter ------------------------------------------------------------- */

/* Room for n pairs in m (main thread), so that pre_filter's adds do not
 * grow it step by step. */
static int pm_reserve(trellis_cycle *c, pairmap *m, size_t n)
{
    size_t cap = 64;

    while (cap < 2 * n)
        cap *= 2;
    if (cap <= m->cap)
        return 0;
    m->keys = host->cycle_alloc(c, cap * sizeof(*m->keys));
    m->vals = host->cycle_alloc(c, cap * sizeof(*m->vals));
    if (!m->keys || !m->vals)
        return -1;
    memset(m->keys, 0xff, cap * sizeof(*m->keys));
    m->cap = cap;
    m->n = 0;
    return 0;
}

/* The sum of a counter column (0 when the host has none). */
static size_t column_sum(const int64_t *col, size_t n)
{
    int64_t sum = 0;

    for (size_t i = 0; col && i < n; i++)
        sum += col[i];
    return sum > 0 ? (size_t)sum : 0;
}

/* What one existing Pod ep on the Node nd adds to the three counts. */
static int count_pod(trellis_cycle *c, state *s, const pod *ep, const node *nd)
{
    const pod *wp = s->in;

    for (size_t j = 0; j < ep->n[REQ_ANTI]; j++) {
        const term *tt = &ep->t[REQ_ANTI][j];
        uint64_t pr = pair_at(nd, tt->key);

        if (pr != NO_PAIR && term_matches_incoming(s, s->nsobj, tt) &&
            pm_add(c, &s->existing, pr, 1) < 0)
            return -1;
    }
    if (all_match(s->v[REQ_AFF], wp->n[REQ_AFF], ep)) {
        for (size_t j = 0; j < wp->n[REQ_AFF]; j++) {
            uint64_t pr = pair_at(nd, wp->t[REQ_AFF][j].key);

            if (pr != NO_PAIR && pm_add(c, &s->aff, pr, 1) < 0)
                return -1;
        }
    }
    for (size_t j = 0; j < wp->n[REQ_ANTI]; j++) {
        uint64_t pr = pair_at(nd, wp->t[REQ_ANTI][j].key);

        if (pr != NO_PAIR && view_matches(&s->v[REQ_ANTI][j], ep) && pm_add(c, &s->anti, pr, 1) < 0)
            return -1;
    }
    return 0;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const pod *wp = host->object_data(self, workload);
    void *const *nodes;
    const int64_t *anti_col, *live_col;
    int own;
    size_t n;
    state *s;

    if (!wp)
        return TRELLIS_SKIP;
    if (wp->error)
        return host->status(st, TRELLIS_UNRESOLVABLE, "InvalidPodAffinity", "parsing pod: %s",
                            wp->error);
    if (cfg->with_terms == 0)
        return TRELLIS_SKIP; /* no Pod has a term: nothing to count */
    if (!(s = state_get(self, c, workload, wp)))
        goto nomem;
    nodes = host->cycle_target_data(c, self);
    n = host->cycle_target_count(c);
    anti_col = host->cycle_target_counter(c, self, 0);
    live_col = host->cycle_target_counter(c, self, 2);
    own = wp->n[REQ_AFF] || wp->n[REQ_ANTI];
    /* one walk over the Pods: every counted Pod against the incoming Pod's
     * required terms, and those with required anti-affinity (kube's
     * PodsWithRequiredAntiAffinity) against the incoming Pod; the Nodes
     * whose counters say they hold none of either are not looked at */
    if (pm_reserve(c, &s->existing, column_sum(anti_col, n)) < 0 ||
        (wp->n[REQ_AFF] && pm_reserve(c, &s->aff, column_sum(live_col, n) * wp->n[REQ_AFF]) < 0) ||
        (wp->n[REQ_ANTI] && pm_reserve(c, &s->anti, column_sum(live_col, n) * wp->n[REQ_ANTI]) < 0))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        const trellis_target *t;
        const node *nd;
        size_t np;

        if (own ? live_col && live_col[i] == 0 : anti_col && anti_col[i] == 0)
            continue;
        t = host->cycle_target(c, i);
        nd = nodes ? nodes[i] : NULL;
        np = host->target_workload_count(t);
        for (size_t k = 0; k < np; k++) {
            const pod *ep = host->object_data(self, host->target_workload(t, k));

            if (ep && !ep->inert && count_pod(c, s, ep, nd) < 0)
                goto nomem;
        }
    }
    if (own)
        s->self_match = all_match(s->v[REQ_AFF], wp->n[REQ_AFF], wp);
    if (s->existing.n == 0 && !own)
        return TRELLIS_SKIP;
    return TRELLIS_SUCCESS;
nomem:
    return host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
}

/* A copy of a Node the host hands the filter instead of the cycle's own:
 * preemption's trial without some Pods (cycle_filter_without), or the Node
 * with the Pods nominated to it (kube's RunFilterPluginsWithNominatedPods),
 * or both: the Pods of orig that now lacks were removed, those of now that
 * orig lacks added. */
typedef struct removed {
    trellis_plugin *self;
    const trellis_target *orig, *now;
    const node *nd;
    const trellis_object *nsobj; /* the incoming Pod's Namespace */
} removed;

enum { M_EXISTING, M_AFF, M_ANTI };

/* What the Pods of `from` that `other` lacks add to pair of map `which`,
 * as pre_filter counts them: kube's RemovePod (from = orig) and AddPod
 * (from = now). */
static int64_t contribution(const state *s, int which, uint64_t pair, const removed *rm,
                            const trellis_target *from, const trellis_target *other)
{
    size_t n = host->target_workload_count(from);
    const pod *in = s->in;
    int64_t d = 0;

    for (size_t i = 0; i < n; i++) {
        const trellis_object *w = host->target_workload(from, i);
        const pod *ep;

        if (trellis_target_holds(host, other, w) || !(ep = host->object_data(rm->self, w)) ||
            ep->inert)
            continue;
        if (which == M_EXISTING) {
            for (size_t j = 0; j < ep->n[REQ_ANTI]; j++)
                d += pair_at(rm->nd, ep->t[REQ_ANTI][j].key) == pair &&
                     term_matches_incoming(s, rm->nsobj, &ep->t[REQ_ANTI][j]);
        } else if (which == M_AFF) {
            if (all_match(s->v[REQ_AFF], in->n[REQ_AFF], ep)) {
                for (size_t j = 0; j < in->n[REQ_AFF]; j++)
                    d += pair_at(rm->nd, in->t[REQ_AFF][j].key) == pair;
            }
        } else {
            for (size_t j = 0; j < in->n[REQ_ANTI]; j++)
                d += pair_at(rm->nd, in->t[REQ_ANTI][j].key) == pair &&
                     view_matches(&s->v[REQ_ANTI][j], ep);
        }
    }
    return d;
}

static int64_t count_of(const state *s, int which, uint64_t pair, const removed *rm)
{
    const pairmap *m = which == M_EXISTING ? &s->existing : which == M_AFF ? &s->aff : &s->anti;
    int64_t c = pm_get(m, pair);

    if (!rm)
        return c;
    if (c > 0)
        c -= contribution(s, which, pair, rm, rm->orig, rm->now);
    return c + contribution(s, which, pair, rm, rm->now, rm->orig);
}

/* kube's satisfyPodAffinity. */
static int affinity_ok(const state *s, const node *nd, const removed *rm)
{
    const pod *in = s->in;
    int exist = 1;
    size_t len;

    for (size_t i = 0; i < in->n[REQ_AFF]; i++) {
        uint64_t pr = pair_at(nd, in->t[REQ_AFF][i].key);

        if (pr == NO_PAIR)
            return 0; /* every topology key must be on the Node */
        if (count_of(s, M_AFF, pr, rm) <= 0)
            exist = 0;
    }
    if (exist)
        return 1;
    len = s->aff.n;
    for (size_t i = 0; rm && i < in->n[REQ_AFF]; i++) {
        uint64_t pr = pair_at(nd, in->t[REQ_AFF][i].key);
        int first = 1;

        for (size_t j = 0; j < i && first; j++)
            first = pair_at(nd, in->t[REQ_AFF][j].key) != pr;
        if (first && pm_get(&s->aff, pr) > 0 && count_of(s, M_AFF, pr, rm) == 0)
            len--; /* kube deletes a count that drops to zero */
        else if (first && pm_get(&s->aff, pr) == 0 && count_of(s, M_AFF, pr, rm) > 0)
            len++; /* and adds one an added Pod brings */
    }
    /* the first of a series of Pods with affinity to themselves */
    return len == 0 && s->self_match;
}

/* Which rule rejects the Node: 0 none, 1 the Pod's affinity, 2 its
 * anti-affinity, 3 an existing Pod's anti-affinity. rm: the Pods a trial
 * of preemption removed, or NULL. Allocates nothing. */
static int verdict(const state *s, const node *nd, const removed *rm)
{
    const pod *in = s->in;

    if (in->n[REQ_AFF] && !affinity_ok(s, nd, rm))
        return 1;
    for (size_t i = 0; (s->anti.n || rm) && i < in->n[REQ_ANTI]; i++) {
        uint64_t pr = pair_at(nd, in->t[REQ_ANTI][i].key);

        if (pr != NO_PAIR && count_of(s, M_ANTI, pr, rm) > 0)
            return 2;
    }
    for (size_t i = 0; (s->existing.n || rm) && nd && i < nd->labels.n; i++) {
        if (count_of(s, M_EXISTING, nd->labels.pairs[i], rm) > 0)
            return 3;
    }
    return 0;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const state *s = host->cycle_get(c, self);
    const node *nd = host->object_data(self, host->target_object(target));
    const trellis_target *orig;
    removed rm = {self, NULL, target, nd, NULL};

    if (!s)
        return TRELLIS_SUCCESS;
    orig = trellis_cycle_own_target(host, c, target);
    if (orig && orig != target) {
        rm.orig = orig; /* a trial without some Pods, or with nominated ones */
        rm.nsobj = namespace_of(self, workload);
    }
    switch (verdict(s, nd, rm.orig ? &rm : NULL)) {
    case 0:
        return TRELLIS_SUCCESS;
    case 1:
        return host->status(st, TRELLIS_UNRESOLVABLE, "PodAffinityRulesNotMatch",
                            "node(s) didn't match pod affinity rules");
    case 2:
        return host->status(st, TRELLIS_UNSCHEDULABLE, "PodAntiAffinityRulesNotMatch",
                            "node(s) didn't match pod anti-affinity rules");
    default:
        return host->status(st, TRELLIS_UNSCHEDULABLE, "ExistingPodsAntiAffinityRulesNotMatch",
                            "node(s) didn't satisfy existing pods anti-affinity rules");
    }
}

static int span_rejects(const void *cfg, const void *s, const void *nd)
{
    (void)cfg;
    return verdict(s, nd, NULL) != 0;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const state *s = host->cycle_get(c, self);

    if (s)
        trellis_span_clear_rejected(host->cycle_target_data(c, self), NULL, s, first, n, pass,
                                    span_rejects);
}

/* ---- score -------------------------------------------------------------- */

/* kube's scoreMap.processTerm: weight into the domain of key of the
 * existing Pod's Node. */
static int add_score(state *s, const node *nd, int32_t key, int64_t weight)
{
    uint64_t pr = pair_at(nd, key);
    size_t i;

    if (pr == NO_PAIR)
        return 0;
    for (i = 0; i < s->n_score_keys && s->score_keys[i] != key; i++)
        ;
    if (i == s->n_score_keys) {
        if (s->n_score_keys == s->cap_score_keys) {
            size_t cap = s->cap_score_keys ? s->cap_score_keys * 2 : 8;
            int32_t *k = host->cycle_alloc(s->c, cap * sizeof(*k));

            if (!k)
                return -1;
            if (s->n_score_keys)
                memcpy(k, s->score_keys, s->n_score_keys * sizeof(*k));
            s->score_keys = k;
            s->cap_score_keys = cap;
        }
        s->score_keys[s->n_score_keys++] = key;
    }
    return pm_add(s->c, &s->score, pr, weight);
}

/* kube's processExistingPod. */
static int process_existing(const config *cfg, state *s, const pod *ep, const node *nd)
{
    const pod *in = s->in;
    int rc = 0;

    for (size_t j = 0; j < in->n[PREF_AFF] && rc == 0; j++) {
        if (view_matches(&s->v[PREF_AFF][j], ep))
            rc = add_score(s, nd, in->t[PREF_AFF][j].key, in->t[PREF_AFF][j].weight);
    }
    for (size_t j = 0; j < in->n[PREF_ANTI] && rc == 0; j++) {
        if (view_matches(&s->v[PREF_ANTI][j], ep))
            rc = add_score(s, nd, in->t[PREF_ANTI][j].key, -(int64_t)in->t[PREF_ANTI][j].weight);
    }
    for (size_t j = 0; cfg->hard_weight > 0 && j < ep->n[REQ_AFF] && rc == 0; j++) {
        if (term_matches_incoming(s, s->nsobj, &ep->t[REQ_AFF][j]))
            rc = add_score(s, nd, ep->t[REQ_AFF][j].key, cfg->hard_weight);
    }
    for (size_t j = 0; j < ep->n[PREF_AFF] && rc == 0; j++) {
        if (term_matches_incoming(s, s->nsobj, &ep->t[PREF_AFF][j]))
            rc = add_score(s, nd, ep->t[PREF_AFF][j].key, ep->t[PREF_AFF][j].weight);
    }
    for (size_t j = 0; j < ep->n[PREF_ANTI] && rc == 0; j++) {
        if (term_matches_incoming(s, s->nsobj, &ep->t[PREF_ANTI][j]))
            rc = add_score(s, nd, ep->t[PREF_ANTI][j].key, -(int64_t)ep->t[PREF_ANTI][j].weight);
    }
    return rc;
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t nf, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const pod *wp = host->object_data(self, workload);
    int constraints;
    void *const *nodes;
    const int64_t *aff_col;
    size_t n;
    state *s;

    if (!wp || nf == 0 || cfg->with_terms == 0)
        return TRELLIS_SKIP;
    constraints = wp->n[PREF_AFF] || wp->n[PREF_ANTI];
    if (cfg->ignore_existing && !constraints)
        return TRELLIS_SKIP;
    if (!(s = state_get(self, c, workload, wp)))
        goto nomem;
    nodes = host->cycle_target_data(c, self);
    aff_col = host->cycle_target_counter(c, self, 1);
    n = host->cycle_target_count(c);
    /* every Node (not only the feasible ones), as kube */
    for (size_t i = 0; i < n; i++) {
        const trellis_target *t;
        const node *nd = nodes ? nodes[i] : NULL;
        size_t np;

        if ((!constraints && aff_col && aff_col[i] == 0) || !nd || nd->labels.n == 0)
            continue;
        t = host->cycle_target(c, i);
        np = host->target_workload_count(t);
        for (size_t k = 0; k < np; k++) {
            const pod *ep = host->object_data(self, host->target_workload(t, k));

            if (ep && !ep->inert && process_existing(cfg, s, ep, nd) < 0)
                goto nomem;
        }
    }
    return s->score.n ? TRELLIS_SUCCESS : TRELLIS_SKIP;
nomem:
    return host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const state *s = host->cycle_get(c, self);
    const node *nd = host->object_data(self, host->target_object(target));
    int64_t sum = 0;

    for (size_t i = 0; s && i < s->n_score_keys; i++) {
        uint64_t pr = pair_at(nd, s->score_keys[i]);

        if (pr != NO_PAIR)
            sum += pm_get(&s->score, pr);
    }
    *out = sum;
    return TRELLIS_SUCCESS;
}

/* kube's NormalizeScore: min-max to 0..100 over the scored Nodes. */
static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    const state *s = host->cycle_get(c, self);
    int64_t lo, hi;

    if (!s || s->score.n == 0)
        return TRELLIS_SUCCESS;
    trellis_scores_min_max(scores, n, &lo, &hi);
    for (size_t i = 0; i < n; i++) {
        double f = 0;

        if (hi > lo)
            f = (double)TRELLIS_MAX_SCORE * ((double)(scores[i] - lo) / (double)(hi - lo));
        scores[i] = (int64_t)f;
    }
    return TRELLIS_SUCCESS;
}

/* ---- the rest ------------------------------------------------------------ */

/* Per Pod, for the counter sums per Node (assumed Pods included): [0] the
 * Pod counts and has required anti-affinity (kube's
 * PodsWithRequiredAntiAffinity), [1] it counts and has a term that may
 * score toward another Pod (required affinity, preferred terms), [2] it
 * counts. pre_filter and pre_score walk only the Nodes where the ones
 * they need are not zero. */
static void amounts(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    const pod *p = host->object_data(self, w);
    int live = p && !p->inert;

    out[0] = live && p->n[REQ_ANTI];
    out[1] = live && p->n[REQ_AFF] + p->n[PREF_AFF] + p->n[PREF_ANTI];
    out[2] = live;
}

/* Verdicts and scores depend on other Nodes' Pods (topology domains), so
 * they may be reused only while no Pod has a term: then the plugin sits
 * every cycle out. */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const config *cfg = host->get_private(self);

    (void)a;
    (void)b;
    return cfg->with_terms == 0;
}

static void config_free(void *p)
{
    config *cfg = p;

    if (!cfg)
        return;
    intern_free(&cfg->ids);
    free(cfg);
}

/* InterPodAffinityArgs from the config document. */
static int read_config(config *cfg, const trellis_value *doc, char *err, size_t errlen)
{
    const trellis_value *v;
    size_t known = 0;

    cfg->hard_weight = 1;
    if (!doc || host->value_type(doc) == TRELLIS_VALUE_NULL)
        return 0;
    if (host->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "config: expected a map (InterPodAffinityArgs), got %s",
                 values_type_name(host->value_type(doc)));
        return -1;
    }
    if ((v = host->value_get(doc, "hardPodAffinityWeight"))) {
        int64_t w;

        known++;
        if (host->value_type(v) != TRELLIS_VALUE_INT || host->value_int(v, &w) < 0 || w < 0 ||
            w > 100) {
            snprintf(err, errlen,
                     "config.hardPodAffinityWeight: expected an integer 0-100, got '%s'",
                     host->value_string(v) ? host->value_string(v) : "?");
            return -1;
        }
        cfg->hard_weight = (int32_t)w;
    }
    if ((v = host->value_get(doc, "ignorePreferredTermsOfExistingPods"))) {
        known++;
        if (host->value_type(v) != TRELLIS_VALUE_BOOL ||
            host->value_bool(v, &cfg->ignore_existing) < 0) {
            snprintf(err, errlen,
                     "config.ignorePreferredTermsOfExistingPods: expected true or false");
            return -1;
        }
    }
    if (host->value_len(doc) > known) {
        snprintf(err, errlen,
                 "config: only hardPodAffinityWeight and ignorePreferredTermsOfExistingPods "
                 "are supported (InterPodAffinityArgs)");
        return -1;
    }
    return 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    static const char *const kinds[] = {"Namespace", NULL};
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, config_free);
    cfg->affinity_field = h->arg_string(args, "affinity_field");
    cfg->phase_field = h->arg_string(args, "phase_field");
    if (values_check_path("affinity_field", cfg->affinity_field, err, errlen) < 0 ||
        values_check_path("phase_field", cfg->phase_field, err, errlen) < 0 ||
        read_config(cfg, h->arg_document(args, "config"), err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->declare_counters(self, 3, amounts) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_normalize(self, normalize) < 0 ||
        h->register_equivalent(self, equivalent) < 0 || h->declare_kinds(self, kinds) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "inter-pod-affinity",
    "1.0.0",
    "kube-scheduler's InterPodAffinity: required pod affinity and anti-affinity filter, "
    "preferred terms score, over topology domains",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, inter_pod_affinity)
