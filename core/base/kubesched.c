/*
 * kubesched.c - see kubesched.h. The YAML is read whole (libyaml's
 * document API, so that every node keeps its line); then, per profile,
 * kube-scheduler's v1 defaulting (pkg/scheduler/apis/config/v1:
 * getDefaultPlugins, mergePlugins) and its framework's expansion of
 * multiPoint (expandMultiPointPlugins, getScoreWeights) are done on small
 * arrays of plugin ids, and the result is written as libconfig settings.
 */
#include "config.h"

#include "kubesched.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base64.h"
#include "util.h"

/* ---- kube's extension points and plugins ---- */

/* kube's extension points, in the order of its Plugins struct, and
 * multiPoint last. */
enum {
    KP_PRE_ENQUEUE,
    KP_QUEUE_SORT,
    KP_PRE_FILTER,
    KP_FILTER,
    KP_POST_FILTER,
    KP_PRE_SCORE,
    KP_SCORE,
    KP_RESERVE,
    KP_PERMIT,
    KP_PRE_BIND,
    KP_BIND,
    KP_POST_BIND,
    KP_MULTI,
    KP_N
};
static const char *const kp_key[KP_N] = {
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",  "score",
    "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint"};
/* the trellis extension point each kube point is (cfg.h's names) */
static const char *const kp_trellis[KP_MULTI] = {
    "pre_enqueue", "queue_sort", "pre_filter", "filter",   "post_filter", "pre_score",
    "score",       "reserve",    "permit",     "pre_bind", "bind",        "post_bind"};
/* every trellis point, in cfg.c's order: what `points` lists */
static const char *const trellis_points[] = {
    "queue_sort", "pre_filter",  "filter",   "post_filter", "pre_score", "score",
    "reserve",    "permit",      "pre_bind", "bind",        "post_bind", "pre_enqueue",
    "finalize",   "target_lost", "decided",  NULL};

#define B(p) (1u << (p))
#define K_PF B(KP_PRE_FILTER)
#define K_F B(KP_FILTER)
#define K_PS B(KP_PRE_SCORE)
#define K_S B(KP_SCORE)

/* A kube plugin: the trellis plugin reproducing it (NULL: none, trellis
 * has no volumes or resource claims), the points kube's implements, its
 * weight in kube's default set (0: not in it, -1: in it, not scoring),
 * the kind of its pluginConfig args (NULL: it takes none). */
typedef struct kplugin {
    const char *kube;
    const char *trellis;
    unsigned points;
    int default_weight;
    const char *args_kind;
} kplugin;

/* kube's getDefaultPlugins (v1), in its order, then the plugins trellis
 * knows by name but does not reproduce. */
static const kplugin KPLUGINS[] = {
    {"SchedulingGates", "scheduling-gates", B(KP_PRE_ENQUEUE), -1, NULL},
    {"PrioritySort", "priority-sort", B(KP_QUEUE_SORT), -1, NULL},
    {"NodeUnschedulable", "node-unschedulable", K_F, -1, NULL},
    {"NodeName", "node-name", K_F, -1, NULL},
    {"TaintToleration", "taint-toleration", K_F | K_PS | K_S, 3, NULL},
    {"NodeAffinity", "node-affinity", K_PF | K_F | K_PS | K_S, 2, "NodeAffinityArgs"},
    {"NodePorts", "node-ports", K_PF | K_F, -1, NULL},
    {"NodeResourcesFit", "node-resources-fit", K_PF | K_F | K_PS | K_S, 1, "NodeResourcesFitArgs"},
    {"VolumeRestrictions", NULL, K_PF | K_F, -1, NULL},
    {"NodeVolumeLimits", NULL, K_PF | K_F, -1, NULL},
    {"VolumeBinding", NULL, K_PF | K_F | B(KP_RESERVE) | B(KP_PRE_BIND) | K_PS | K_S, -1,
     "VolumeBindingArgs"},
    {"VolumeZone", NULL, K_PF | K_F, -1, NULL},
    {"PodTopologySpread", "pod-topology-spread", K_PF | K_F | K_PS | K_S, 2,
     "PodTopologySpreadArgs"},
    {"InterPodAffinity", "inter-pod-affinity", K_PF | K_F | K_PS | K_S, 2, "InterPodAffinityArgs"},
    {"DefaultPreemption", "preemption", B(KP_POST_FILTER), -1, "DefaultPreemptionArgs"},
    {"NodeResourcesBalancedAllocation", "node-resources-balanced-allocation", K_PS | K_S, 1,
     "NodeResourcesBalancedAllocationArgs"},
    {"ImageLocality", "image-locality", K_S, 1, NULL},
    {"DefaultBinder", "default-binder", B(KP_BIND), -1, NULL},
    /* known, not in kube's default set, not reproduced */
    {"DynamicResources", NULL,
     B(KP_PRE_ENQUEUE) | K_PF | K_F | B(KP_POST_FILTER) | B(KP_RESERVE) | B(KP_PRE_BIND) | K_PS |
         K_S,
     0, "DynamicResourcesArgs"},
    {"EBSLimits", NULL, K_PF | K_F, 0, NULL},
    {"GCEPDLimits", NULL, K_PF | K_F, 0, NULL},
    {"AzureDiskLimits", NULL, K_PF | K_F, 0, NULL},
    {"CinderLimits", NULL, K_PF | K_F, 0, NULL},
};
#define N_KPLUGINS ((int)(sizeof KPLUGINS / sizeof *KPLUGINS))

/* The top-level keys of each *Args that the trellis plugin reads. */
static const char *const FIT_KEYS[] = {"ignoredResources", "ignoredResourceGroups",
                                       "scoringStrategy", NULL};
static const char *const BALANCED_KEYS[] = {"resources", NULL};
static const char *const SPREAD_KEYS[] = {"defaultConstraints", "defaultingType", NULL};
static const char *const IPA_KEYS[] = {"hardPodAffinityWeight",
                                       "ignorePreferredTermsOfExistingPods", NULL};
static const char *const NA_KEYS[] = {"addedAffinity", NULL};
static const char *const PREEMPT_KEYS[] = {"minCandidateNodesPercentage",
                                           "minCandidateNodesAbsolute", NULL};

static const char *const *args_keys(const char *kind)
{
    if (strcmp(kind, "NodeResourcesFitArgs") == 0)
        return FIT_KEYS;
    if (strcmp(kind, "NodeResourcesBalancedAllocationArgs") == 0)
        return BALANCED_KEYS;
    if (strcmp(kind, "PodTopologySpreadArgs") == 0)
        return SPREAD_KEYS;
    if (strcmp(kind, "InterPodAffinityArgs") == 0)
        return IPA_KEYS;
    if (strcmp(kind, "NodeAffinityArgs") == 0)
        return NA_KEYS;
    if (strcmp(kind, "DefaultPreemptionArgs") == 0)
        return PREEMPT_KEYS;
    return NULL;
}

static int kplugin_find(const char *name)
{
    for (int i = 0; i < N_KPLUGINS; i++)
        if (strcmp(KPLUGINS[i].kube, name) == 0)
            return i;
    return -1;
}

/* ---- reading the YAML ---- */

#define API_GROUP "kubescheduler.config.k8s.io"
#define API_VERSION API_GROUP "/v1"
#define KIND "KubeSchedulerConfiguration"
#define MAX_EXTENDERS 64

typedef struct ks {
    const char *file;
    yaml_document_t doc;
    config_t *lc;
    char *err;
    size_t errlen;
    unsigned absent; /* kube default plugins left out (bits of KPLUGINS) */
    int have_kubeconfig;
    /* extenders: managedResources ignoredByScheduler (kube: they replace
     * NodeResourcesFitArgs.ignoredResources) */
    yaml_node_t *ignored[MAX_EXTENDERS * 8];
    size_t n_ignored;
    yaml_node_t *extenders; /* the sequence, or NULL */
} ks;

static yaml_node_t *node(ks *k, int id)
{
    return yaml_document_get_node(&k->doc, id);
}

static int line_of(const yaml_node_t *n)
{
    return n ? (int)n->start_mark.line + 1 : 0;
}

static int kerr(ks *k, const yaml_node_t *n, const char *fmt, ...) UTIL_PRINTF(3, 4);
static int kerr(ks *k, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n)
        return errf(k->err, k->errlen, "%s:%d: %s", k->file, line_of(n), msg);
    return errf(k->err, k->errlen, "%s: %s", k->file, msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int plain(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* null, ~ or nothing: as if the key were absent (Go's nil) */
static int is_null(const yaml_node_t *n)
{
    const char *s = scalar(n);
    return !n || (plain(n) && (!*s || strcmp(s, "null") == 0 || strcmp(s, "~") == 0 ||
                               strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0));
}

static yaml_node_t *member(ks *k, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *kk = scalar(node(k, p->key));
        if (kk && strcmp(kk, key) == 0) {
            yaml_node_t *v = node(k, p->value);
            return is_null(v) ? NULL : v;
        }
    }
    return NULL;
}

/* A key kube-scheduler has that trellis refuses, with what to do. */
typedef struct refusal {
    const char *key;
    const char *why;
} refusal;

/* Every key of map must be in allowed (refused keys say why): 0, or -1
 * naming the first other key, its line and the keys that are read. */
static int check_keys(ks *k, const yaml_node_t *map, const char *what, const char *const *allowed,
                      const refusal *refused)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *kn = node(k, p->key);
        const char *key = scalar(kn);
        if (!key)
            return kerr(k, kn, "%s: a key must be a string", what);
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            const char *other = scalar(node(k, q->key));
            if (other && strcmp(other, key) == 0)
                return kerr(k, kn, "%s: '%s' is given twice (line %d): keep one", what, key,
                            line_of(node(k, q->key)));
        }
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (ok)
            continue;
        for (const refusal *r = refused; r && r->key; r++)
            if (strcmp(r->key, key) == 0)
                return kerr(k, kn, "%s: '%s' is not supported: %s", what, key, r->why);
        strbuf b;
        sb_init(&b);
        for (const char *const *a = allowed; *a; a++)
            sb_printf(&b, "%s%s", a == allowed ? "" : ", ", *a);
        kerr(k, kn, "%s: unknown key '%s' (trellis reads: %s); remove it or correct its name", what,
             key, b.s ? b.s : "");
        sb_free(&b);
        return -1;
    }
    return 0;
}

static int want_map(ks *k, const yaml_node_t *n, const char *what)
{
    if (n->type != YAML_MAPPING_NODE)
        return kerr(k, n, "%s: expected a mapping of keys to values", what);
    return 0;
}

static int want_seq(ks *k, const yaml_node_t *n, const char *what)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return kerr(k, n, "%s: expected a list", what);
    return 0;
}

static int get_int(ks *k, const yaml_node_t *n, const char *what, long long min, long long max,
                   long long *out)
{
    const char *s = plain(n) ? scalar(n) : NULL;
    char *end;
    errno = 0;
    long long v = s && *s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || v < min || v > max)
        return kerr(k, n, "%s: expected an integer from %lld to %lld, got '%s'", what, min, max,
                    scalar(n) ? scalar(n) : "a list or mapping");
    *out = v;
    return 0;
}

static int get_bool(ks *k, const yaml_node_t *n, const char *what, int *out)
{
    const char *s = plain(n) ? scalar(n) : NULL;
    if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")))
        *out = 1;
    else if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")))
        *out = 0;
    else
        return kerr(k, n, "%s: expected true or false, got '%s'", what,
                    scalar(n) ? scalar(n) : "a list or mapping");
    return 0;
}

static int get_str(ks *k, const yaml_node_t *n, const char *what, const char **out)
{
    if (!scalar(n))
        return kerr(k, n, "%s: expected a string", what);
    *out = scalar(n);
    return 0;
}

/* A Go duration ("30s", "1m30s", "500ms") in milliseconds. */
static int get_duration(ks *k, const yaml_node_t *n, const char *what, long long *ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3},  {"ms", 1},
                 {"s", 1000},  {"m", 60000}, {"h", 3600000}};
    const char *s = scalar(n), *p = s;
    double total = 0;
    if (!s || !*s || strcmp(s, "0") == 0) {
        if (s && strcmp(s, "0") == 0) {
            *ms = 0;
            return 0;
        }
        return kerr(k, n, "%s: expected a duration such as \"30s\" or \"1m30s\"", what);
    }
    while (*p) {
        char *end;
        errno = 0;
        /* Go's time.ParseDuration: digits (and a point), never "nan",
         * "inf" or hex */
        double v = isdigit((unsigned char)*p) || *p == '.' ? strtod(p, &end) : (end = (char *)p, 0);
        if (end == p || errno || !(v >= 0) || !isfinite(v) ||
            (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
            return kerr(k, n, "%s: expected a duration such as \"30s\" or \"1m30s\", got '%s'",
                        what, s);
        size_t best = 0;
        double f = 0;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
            size_t l = strlen(units[i].unit);
            if (strncmp(end, units[i].unit, l) == 0 && l > best) {
                /* "ms" before "m" */
                best = l;
                f = units[i].ms;
            }
        }
        if (!best)
            return kerr(k, n, "%s: '%s': a duration needs a unit (ns, us, ms, s, m, h)", what, s);
        total += v * f;
        p = end + best;
    }
    if (total > 1e15)
        return kerr(k, n, "%s: '%s' is too long", what, s);
    *ms = (long long)(total + 0.5);
    return 0;
}

/* ---- writing libconfig settings ---- */

static config_setting_t *cs_add(config_setting_t *parent, const char *name, int type, int line)
{
    config_setting_t *s = config_setting_add(parent, name, type);
    if (!s)
        abort(); /* names are ours and valid: a bug */
    if (line > 0)
        s->line = (unsigned)line;
    return s;
}

static void cs_str(config_setting_t *parent, const char *name, const char *v, int line)
{
    config_setting_set_string(cs_add(parent, name, CONFIG_TYPE_STRING, line), v);
}

static void cs_int(config_setting_t *parent, const char *name, long long v, int line)
{
    if (v >= INT32_MIN && v <= INT32_MAX)
        config_setting_set_int(cs_add(parent, name, CONFIG_TYPE_INT, line), (int)v);
    else
        config_setting_set_int64(cs_add(parent, name, CONFIG_TYPE_INT64, line), v);
}

static void cs_bool(config_setting_t *parent, const char *name, int v, int line)
{
    config_setting_set_bool(cs_add(parent, name, CONFIG_TYPE_BOOL, line), v);
}

/* ---- a YAML node as one line of flow YAML (a plugin's args) ---- */

/* A plain scalar that reads back as the same plain scalar. */
static int safe_plain(const char *s)
{
    if (!*s)
        return 0;
    if (!isalnum((unsigned char)s[0]) && !(s[0] == '-' && isdigit((unsigned char)s[1])) &&
        s[0] != '.')
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._/-", *p))
            return 0;
    return 1;
}

static void emit_quoted(strbuf *b, const char *s)
{
    sb_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p == '\n')
            sb_puts(b, "\\n");
        else if (*p == '\t')
            sb_puts(b, "\\t");
        else if (*p < 0x20)
            sb_printf(b, "\\x%02x", *p);
        else
            sb_add(b, (const char *)p, 1);
    }
    sb_puts(b, "\"");
}

static void emit_scalar(strbuf *b, const yaml_node_t *n)
{
    const char *s = scalar(n);
    if (plain(n) && safe_plain(s))
        sb_puts(b, s);
    else if (plain(n) && is_null(n))
        sb_puts(b, "null");
    else
        emit_quoted(b, s);
}

/* n as flow YAML; at the top (depth 0) kind and apiVersion are left out
 * and the key `replace` (when not NULL) gets the list `with` instead of
 * its value, added when absent. */
/* The most a plugin's args may come to once YAML aliases are expanded
 * (an alias of an alias ... grows exponentially): write_profile refuses
 * more. */
#define EMIT_MAX (4u << 20)

static void emit_flow(ks *k, strbuf *b, const yaml_node_t *n, int depth, const char *replace,
                      yaml_node_t *const *with, size_t n_with)
{
    if (b->len > EMIT_MAX)
        return; /* refused by the caller: stop walking */
    if (depth > 64) {
        sb_puts(b, "null"); /* kube's decoder refuses such depth too; the plugin says so */
        return;
    }
    if (!n || n->type == YAML_NO_NODE) {
        sb_puts(b, "null");
    } else if (n->type == YAML_SCALAR_NODE) {
        emit_scalar(b, n);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        sb_puts(b, "[");
        for (yaml_node_item_t *i = n->data.sequence.items.start;
             i < n->data.sequence.items.top && b->len <= EMIT_MAX; i++) {
            if (i != n->data.sequence.items.start)
                sb_puts(b, ", ");
            emit_flow(k, b, node(k, *i), depth + 1, NULL, NULL, 0);
        }
        sb_puts(b, "]");
    } else {
        int first = 1, replaced = 0;
        sb_puts(b, "{");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             p < n->data.mapping.pairs.top && b->len <= EMIT_MAX; p++) {
            yaml_node_t *kn = node(k, p->key);
            const char *key = scalar(kn);
            if (depth == 0 && key && (!strcmp(key, "kind") || !strcmp(key, "apiVersion")))
                continue;
            if (!first)
                sb_puts(b, ", ");
            first = 0;
            emit_flow(k, b, kn, depth + 1, NULL, NULL, 0);
            sb_puts(b, ": ");
            if (depth == 0 && replace && key && strcmp(key, replace) == 0) {
                replaced = 1;
                sb_puts(b, "[");
                for (size_t i = 0; i < n_with; i++) {
                    sb_puts(b, i ? ", " : "");
                    emit_scalar(b, with[i]);
                }
                sb_puts(b, "]");
            } else {
                emit_flow(k, b, node(k, p->value), depth + 1, NULL, NULL, 0);
            }
        }
        if (depth == 0 && replace && !replaced) {
            sb_printf(b, "%s%s: [", first ? "" : ", ", replace);
            for (size_t i = 0; i < n_with; i++) {
                sb_puts(b, i ? ", " : "");
                emit_scalar(b, with[i]);
            }
            sb_puts(b, "]");
        }
        sb_puts(b, "}");
    }
}

/* ---- one profile: kube's merge and expansion ---- */

typedef struct pent {
    int id;     /* into KPLUGINS */
    int weight; /* 0: not given */
    int line;
} pent;

typedef struct pset {
    pent en[2 * N_KPLUGINS];
    int n_en;
    unsigned dis; /* bits of KPLUGINS */
    int star;     /* '*' disabled */
} pset;

typedef struct prof {
    pset set[KP_N]; /* the file's, then merged with the defaults */
    int final[KP_MULTI][N_KPLUGINS];
    int n_final[KP_MULTI];
    int weight[N_KPLUGINS];
    yaml_node_t *args[N_KPLUGINS]; /* pluginConfig args */
    int args_line[N_KPLUGINS];
    long long preempt[2]; /* DefaultPreemptionArgs: percentage, absolute */
} prof;

static int pset_has(const pset *s, int id)
{
    for (int i = 0; i < s->n_en; i++)
        if (s->en[i].id == id)
            return i;
    return -1;
}

/* plugins.<point>: {enabled: [{name, weight}], disabled: [{name}]} */
static int read_pset(ks *k, const yaml_node_t *n, int point, const char *what, pset *s)
{
    static const char *const keys[] = {"enabled", "disabled", NULL};
    static const char *const pkeys[] = {"name", "weight", NULL};
    if (want_map(k, n, what) < 0 || check_keys(k, n, what, keys, NULL) < 0)
        return -1;
    for (int en = 1; en >= 0; en--) {
        yaml_node_t *l = member(k, n, en ? "enabled" : "disabled");
        char w[160];
        snprintf(w, sizeof w, "%s.%s", what, en ? "enabled" : "disabled");
        if (!l)
            continue;
        if (want_seq(k, l, w) < 0)
            return -1;
        for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top;
             i++) {
            yaml_node_t *e = node(k, *i);
            const char *name = NULL;
            if (want_map(k, e, w) < 0 || check_keys(k, e, w, pkeys, NULL) < 0)
                return -1;
            yaml_node_t *nn = member(k, e, "name");
            if (!nn)
                return kerr(k, e, "%s: an entry needs a name", w);
            if (get_str(k, nn, w, &name) < 0)
                return -1;
            if (!en && strcmp(name, "*") == 0) {
                s->star = 1;
                continue;
            }
            int id = kplugin_find(name);
            if (id < 0)
                return kerr(k, nn,
                            "%s: '%s' is not a kube-scheduler plugin trellis reproduces "
                            "(doc/kube.md lists them); remove it",
                            w, name);
            yaml_node_t *wn = member(k, e, "weight");
            if (!en) {
                if (wn)
                    return kerr(k, wn, "%s: a disabled plugin has no weight", w);
                s->dis |= 1u << id;
                continue;
            }
            if (!KPLUGINS[id].trellis)
                return kerr(k, nn,
                            "%s: '%s' is enabled, but trellis does not reproduce it: trellis "
                            "schedules without volumes and resource claims; remove it",
                            w, name);
            if (point != KP_MULTI && !(KPLUGINS[id].points & B(point)))
                return kerr(k, nn, "%s: plugin '%s' does not extend %s", w, name, kp_key[point]);
            if (pset_has(s, id) >= 0)
                return kerr(k, nn, "%s: plugin '%s' is enabled twice", w, name);
            pent *p = &s->en[s->n_en++];
            p->id = id;
            p->line = line_of(e);
            p->weight = 0;
            if (wn) {
                long long v = 0;
                /* kube ignores the weight of a plugin that does not score */
                if (get_int(k, wn, "weight", 0, 1000000, &v) < 0)
                    return -1;
                p->weight = (int)v;
            }
        }
    }
    return 0;
}

/* kube's mergePluginSet: the defaults less the disabled ones ('*': all),
 * each re-enabled one in the default's place, the others after. */
static void merge_set(const pset *def, const pset *custom, pset *out)
{
    pset r;
    memset(&r, 0, sizeof r);
    r.dis = custom->dis | def->dis;
    r.star = custom->star;
    int replaced[2 * N_KPLUGINS] = {0};
    if (!r.star)
        for (int i = 0; i < def->n_en; i++) {
            pent e = def->en[i];
            if (r.dis & (1u << e.id))
                continue;
            int j = pset_has(custom, e.id);
            if (j >= 0) {
                e = custom->en[j];
                replaced[j] = 1;
            }
            r.en[r.n_en++] = e;
        }
    for (int j = 0; j < custom->n_en; j++)
        if (!replaced[j])
            r.en[r.n_en++] = custom->en[j];
    *out = r;
}

static int in_list(const int *v, int n, int id)
{
    for (int i = 0; i < n; i++)
        if (v[i] == id)
            return 1;
    return 0;
}

/* kube's expandMultiPointPlugins for every point, then getScoreWeights.
 * The plugins trellis does not reproduce are left out at the end
 * (recorded for the notice). */
static int expand(ks *k, prof *p, const yaml_node_t *where)
{
    const pset *mp = &p->set[KP_MULTI];
    for (int pt = 0; pt < KP_MULTI; pt++) {
        const pset *s = &p->set[pt];
        int out[3 * N_KPLUGINS], n = 0;
        int over[N_KPLUGINS], n_over = 0, mpe[N_KPLUGINS], n_mpe = 0;
        if (!s->star)
            for (int i = 0; i < mp->n_en; i++) {
                int id = mp->en[i].id;
                if (!(KPLUGINS[id].points & B(pt)) || (s->dis & (1u << id)))
                    continue;
                if (pset_has(s, id) >= 0) {
                    if (!in_list(over, n_over, id))
                        over[n_over++] = id;
                    continue;
                }
                if (in_list(mpe, n_mpe, id))
                    return kerr(k, where, "plugin '%s' is registered twice at %s",
                                KPLUGINS[id].kube, kp_key[pt]);
                mpe[n_mpe++] = id;
            }
        for (int i = 0; i < n_over; i++)
            out[n++] = over[i];
        for (int i = 0; i < n_mpe; i++)
            if (!in_list(out, n, mpe[i]))
                out[n++] = mpe[i];
        for (int i = 0; i < s->n_en; i++)
            if (!in_list(out, n, s->en[i].id))
                out[n++] = s->en[i].id;
        p->n_final[pt] = 0;
        for (int i = 0; i < n; i++) {
            if (!KPLUGINS[out[i]].trellis) {
                k->absent |= 1u << out[i];
                continue;
            }
            p->final[pt][p->n_final[pt]++] = out[i];
        }
    }
    /* getScoreWeights: score's own entries first, then multiPoint's;
     * a weight of 0 (or none) is 1 */
    for (int i = 0; i < N_KPLUGINS; i++)
        p->weight[i] = -1;
    const pset *lists[2] = {&p->set[KP_SCORE], mp};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < lists[l]->n_en; i++) {
            const pent *e = &lists[l]->en[i];
            if ((KPLUGINS[e->id].points & K_S) && p->weight[e->id] < 0)
                p->weight[e->id] = e->weight > 0 ? e->weight : 1;
        }
    if (p->n_final[KP_QUEUE_SORT] == 0)
        return kerr(k, where,
                    "no queue sort plugin is enabled (kube-scheduler refuses this "
                    "profile too): enable PrioritySort");
    if (p->n_final[KP_BIND] == 0)
        return kerr(k, where,
                    "at least one bind plugin is needed (kube-scheduler refuses this "
                    "profile too): enable DefaultBinder");
    return 0;
}

/* The points whose order decides something (the first rejecting filter
 * names the reason, the first binder binds, ...); score sums do not care. */
static int order_matters(int pt)
{
    return pt != KP_SCORE && pt != KP_PRE_SCORE;
}

/* One order for the profile's plugin list that keeps kube's order at
 * every point where order matters: a topological sort of "a before b"
 * (consecutive plugins of each point), ties to kube's list order
 * (multiPoint's, then each point's). */
static int plugin_order(ks *k, const prof *p, const yaml_node_t *where, int *order, int *n_order)
{
    int rank[N_KPLUGINS], present[N_KPLUGINS] = {0}, r = 0;
    for (int i = 0; i < N_KPLUGINS; i++)
        rank[i] = 1000;
    for (int i = 0; i < p->set[KP_MULTI].n_en; i++)
        if (rank[p->set[KP_MULTI].en[i].id] == 1000)
            rank[p->set[KP_MULTI].en[i].id] = r++;
    for (int pt = 0; pt < KP_MULTI; pt++)
        for (int i = 0; i < p->set[pt].n_en; i++)
            if (rank[p->set[pt].en[i].id] == 1000)
                rank[p->set[pt].en[i].id] = r++;
    for (int pt = 0; pt < KP_MULTI; pt++)
        for (int i = 0; i < p->n_final[pt]; i++) {
            present[p->final[pt][i]] = 1;
            if (rank[p->final[pt][i]] == 1000)
                rank[p->final[pt][i]] = r++;
        }
    /* before[a] holds b when a must come before b */
    unsigned before[N_KPLUGINS] = {0};
    int why_pt[N_KPLUGINS][N_KPLUGINS];
    for (int pt = 0; pt < KP_MULTI; pt++) {
        if (!order_matters(pt))
            continue;
        for (int i = 0; i + 1 < p->n_final[pt]; i++)
            for (int j = i + 1; j < p->n_final[pt]; j++) {
                int a = p->final[pt][i], b = p->final[pt][j];
                if (before[b] & (1u << a))
                    return kerr(k, where,
                                "kube runs %s before %s at %s but after it at %s; trellis runs "
                                "a profile's plugins in one order at every point: order them "
                                "alike",
                                KPLUGINS[a].kube, KPLUGINS[b].kube, kp_key[pt],
                                kp_key[why_pt[b][a]]);
                before[a] |= 1u << b;
                why_pt[a][b] = pt;
            }
    }
    *n_order = 0;
    unsigned done = 0;
    for (;;) {
        int best = -1;
        for (int c = 0; c < N_KPLUGINS; c++) {
            if (!present[c] || (done & (1u << c)))
                continue;
            int blocked = 0;
            for (int a = 0; a < N_KPLUGINS && !blocked; a++)
                blocked = present[a] && !(done & (1u << a)) && (before[a] & (1u << c));
            if (!blocked && (best < 0 || rank[c] < rank[best]))
                best = c;
        }
        if (best < 0)
            break;
        done |= 1u << best;
        order[(*n_order)++] = best;
    }
    return 0;
}

/* ---- pluginConfig ---- */

static int read_plugin_config(ks *k, const yaml_node_t *l, const char *what, prof *p)
{
    static const char *const keys[] = {"name", "args", NULL};
    if (want_seq(k, l, what) < 0)
        return -1;
    for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++) {
        yaml_node_t *e = node(k, *i), *nn, *a;
        const char *name = NULL;
        if (want_map(k, e, what) < 0 || check_keys(k, e, what, keys, NULL) < 0)
            return -1;
        if (!(nn = member(k, e, "name")))
            return kerr(k, e, "%s: an entry needs a name", what);
        if (get_str(k, nn, what, &name) < 0)
            return -1;
        int id = kplugin_find(name);
        if (id < 0)
            return kerr(k, nn,
                        "%s: '%s' is not a kube-scheduler plugin trellis reproduces "
                        "(doc/kube.md lists them); remove its entry",
                        what, name);
        if (p->args_line[id])
            return kerr(k, nn, "%s: '%s' is configured twice (line %d): keep one", what, name,
                        p->args_line[id]);
        p->args_line[id] = line_of(nn);
        a = member(k, e, "args");
        if (!a)
            continue;
        char w[200];
        snprintf(w, sizeof w, "%s %s.args", what, name);
        if (want_map(k, a, w) < 0)
            return -1;
        const char *kind = KPLUGINS[id].args_kind;
        if (!KPLUGINS[id].trellis)
            continue; /* the plugin is left out (the notice says so) */
        if (!kind) {
            if (a->data.mapping.pairs.top == a->data.mapping.pairs.start)
                continue;
            return kerr(k, a, "%s: kube-scheduler's %s takes no arguments; remove them", w, name);
        }
        yaml_node_t *kn = member(k, a, "kind"), *av = member(k, a, "apiVersion");
        if (kn && (!scalar(kn) || strcmp(scalar(kn), kind) != 0))
            return kerr(k, kn, "%s: kind: expected %s", w, kind);
        if (av && (!scalar(av) || strcmp(scalar(av), API_VERSION) != 0))
            return kerr(k, av, "%s: apiVersion: expected %s", w, API_VERSION);
        const char *const *ak = args_keys(kind);
        const char *allowed[8];
        size_t n = 0;
        for (; ak[n]; n++)
            allowed[n] = ak[n];
        allowed[n++] = "kind";
        allowed[n++] = "apiVersion";
        allowed[n] = NULL;
        if (check_keys(k, a, w, allowed, NULL) < 0)
            return -1;
        if (strcmp(kind, "DefaultPreemptionArgs") == 0) {
            /* the preemption plugin's min_candidate_nodes_* (it checks
             * them as kube's validation does) */
            static const struct {
                const char *key;
                long long max;
            } dp[] = {{"minCandidateNodesPercentage", 100},
                      {"minCandidateNodesAbsolute", INT32_MAX}};
            for (size_t d = 0; d < 2; d++) {
                yaml_node_t *v = member(k, a, dp[d].key);
                if (v && get_int(k, v, dp[d].key, 0, dp[d].max, &p->preempt[d]) < 0)
                    return -1;
            }
            continue;
        }
        p->args[id] = a;
    }
    return 0;
}

/* ---- extenders ---- */

static int read_extenders(ks *k, yaml_node_t *l)
{
    static const char *const keys[] = {
        "urlPrefix",        "filterVerb",  "preemptVerb", "prioritizeVerb", "bindVerb",
        "weight",           "enableHTTPS", "tlsConfig",   "httpTimeout",    "nodeCacheCapable",
        "managedResources", "ignorable",   NULL};
    static const char *const mkeys[] = {"name", "ignoredByScheduler", NULL};
    if (want_seq(k, l, "extenders") < 0)
        return -1;
    int binders = 0, n = 0;
    for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top;
         i++, n++) {
        yaml_node_t *e = node(k, *i), *v;
        const char *s = NULL;
        if (n >= MAX_EXTENDERS)
            return kerr(k, e, "extenders: at most %d", MAX_EXTENDERS);
        if (want_map(k, e, "extenders") < 0 || check_keys(k, e, "extenders", keys, NULL) < 0)
            return -1;
        if (!(v = member(k, e, "urlPrefix")) || get_str(k, v, "extenders.urlPrefix", &s) < 0 ||
            (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0))
            return kerr(k, v ? v : e,
                        "extenders: urlPrefix: expected the extender's URL, "
                        "http://HOST:PORT/PATH or https://...");
        if ((v = member(k, e, "bindVerb")) && ++binders > 1)
            return kerr(k, v, "extenders: only one extender can implement bind");
        long long w;
        if ((v = member(k, e, "weight")) && get_int(k, v, "extenders.weight", 1, 1000000, &w) < 0)
            return -1;
        if (member(k, e, "prioritizeVerb") && !member(k, e, "weight"))
            return kerr(k, e,
                        "extenders: an extender with prioritizeVerb needs a weight of 1 "
                        "or more");
        int b = 0;
        if ((v = member(k, e, "enableHTTPS")) && get_bool(k, v, "extenders.enableHTTPS", &b) < 0)
            return -1;
        yaml_node_t *mr = member(k, e, "managedResources");
        if (mr) {
            if (want_seq(k, mr, "extenders.managedResources") < 0)
                return -1;
            for (yaml_node_item_t *j = mr->data.sequence.items.start;
                 j < mr->data.sequence.items.top; j++) {
                yaml_node_t *r = node(k, *j), *rn, *ig;
                int ignored = 0;
                if (want_map(k, r, "extenders.managedResources") < 0 ||
                    check_keys(k, r, "extenders.managedResources", mkeys, NULL) < 0)
                    return -1;
                if (!(rn = member(k, r, "name")) ||
                    get_str(k, rn, "extenders.managedResources.name", &s) < 0)
                    return kerr(k, r, "extenders.managedResources: an entry needs a name");
                if ((ig = member(k, r, "ignoredByScheduler")) &&
                    get_bool(k, ig, "ignoredByScheduler", &ignored) < 0)
                    return -1;
                if (ignored && k->n_ignored < sizeof k->ignored / sizeof *k->ignored)
                    k->ignored[k->n_ignored++] = rn;
            }
        }
    }
    k->extenders = l;
    return 0;
}

/* The longest an extender call may take (kube's DefaultExtenderTimeout,
 * 5 s, where httpTimeout is absent or 0), 0 without extenders: the
 * profile's hook deadlines must leave it room, or a slow extender would
 * end the run instead of being timed out (read_extenders checked them). */
static long long extender_timeout_ms(ks *k)
{
    long long most = 0;
    for (yaml_node_item_t *i = k->extenders ? k->extenders->data.sequence.items.start : NULL;
         i && i < k->extenders->data.sequence.items.top; i++) {
        yaml_node_t *v = member(k, node(k, *i), "httpTimeout");
        long long ms = 0;
        if (!v || get_duration(k, v, "extenders.httpTimeout", &ms) < 0 || ms <= 0)
            ms = 5000;
        if (ms > most)
            most = ms;
    }
    return most;
}

/* One http-extender entry per extender (the contract of that plugin). */
static int write_extender(ks *k, config_setting_t *plugins, yaml_node_t *e, int index)
{
    static const struct {
        const char *kube, *arg;
    } verbs[] = {{"urlPrefix", "url_prefix"},
                 {"filterVerb", "filter_verb"},
                 {"prioritizeVerb", "prioritize_verb"},
                 {"preemptVerb", "preempt_verb"},
                 {"bindVerb", "bind_verb"}};
    static const char *const tkeys[] = {"insecure", "serverName", "certFile", "keyFile", "caFile",
                                        "certData", "keyData",    "caData",   NULL};
    config_setting_t *g = cs_add(plugins, NULL, CONFIG_TYPE_GROUP, line_of(e));
    yaml_node_t *v;
    cs_str(g, "name", "http-extender", line_of(e));
    if (index > 0) {
        char as[32];
        snprintf(as, sizeof as, "extender-%d", index + 1);
        cs_str(g, "as", as, line_of(e));
    }
    long long w = 1;
    if ((v = member(k, e, "weight")))
        get_int(k, v, "weight", 1, 1000000, &w); /* checked by read_extenders */
    cs_int(g, "weight", w, v ? line_of(v) : line_of(e));
    config_setting_t *a = cs_add(g, "args", CONFIG_TYPE_GROUP, line_of(e));
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
        const char *s = NULL;
        if ((v = member(k, e, verbs[i].kube))) {
            if (get_str(k, v, verbs[i].kube, &s) < 0)
                return -1;
            cs_str(a, verbs[i].arg, s, line_of(v));
        }
    }
    if ((v = member(k, e, "httpTimeout"))) {
        long long ms = 0;
        if (get_duration(k, v, "extenders.httpTimeout", &ms) < 0)
            return -1;
        if (ms > 86400000LL)
            return kerr(k, v, "extenders.httpTimeout: expected at most 24h");
        if (ms > 0) /* 0: kube's DefaultExtenderTimeout, 5 s, which is the plugin's */
            cs_int(a, "http_timeout_ms", ms, line_of(v));
    }
    int b = 0;
    if ((v = member(k, e, "nodeCacheCapable"))) {
        if (get_bool(k, v, "extenders.nodeCacheCapable", &b) < 0)
            return -1;
        cs_bool(a, "node_cache_capable", b, line_of(v));
    }
    if ((v = member(k, e, "managedResources"))) {
        config_setting_t *l = cs_add(a, "managed_resources", CONFIG_TYPE_ARRAY, line_of(v));
        for (yaml_node_item_t *j = v->data.sequence.items.start; j < v->data.sequence.items.top;
             j++)
            config_setting_set_string_elem(l, -1, scalar(member(k, node(k, *j), "name")));
    }
    if ((v = member(k, e, "ignorable"))) {
        if (get_bool(k, v, "extenders.ignorable", &b) < 0)
            return -1;
        cs_bool(a, "ignorable", b, line_of(v));
    }
    yaml_node_t *t = member(k, e, "tlsConfig");
    if (t && (want_map(k, t, "extenders.tlsConfig") < 0 ||
              check_keys(k, t, "extenders.tlsConfig", tkeys, NULL) < 0))
        return -1;
    /* kube's makeTransport: enableHTTPS without a CA verifies nothing */
    int https = 0, insecure = -1;
    yaml_node_t *hv = member(k, e, "enableHTTPS"), *iv = member(k, t, "insecure");
    if (hv && get_bool(k, hv, "extenders.enableHTTPS", &https) < 0)
        return -1;
    if (iv && get_bool(k, iv, "tlsConfig.insecure", &insecure) < 0)
        return -1;
    if (https && !member(k, t, "caFile") && !member(k, t, "caData"))
        insecure = 1;
    if (insecure >= 0)
        cs_bool(a, "tls_insecure", insecure, iv ? line_of(iv) : line_of(hv));
    if (!t)
        return 0;
    static const struct {
        const char *kube, *arg;
        int data;
    } tls[] = {{"serverName", "tls_server_name", 0}, {"caFile", "tls_ca_file", 0},
               {"certFile", "tls_cert_file", 0},     {"keyFile", "tls_key_file", 0},
               {"caData", "tls_ca_data", 1},         {"certData", "tls_cert_data", 1},
               {"keyData", "tls_key_data", 1}};
    for (size_t i = 0; i < sizeof tls / sizeof *tls; i++) {
        const char *s = NULL;
        if (!(v = member(k, t, tls[i].kube)))
            continue;
        if (get_str(k, v, tls[i].kube, &s) < 0)
            return -1;
        if (!tls[i].data) {
            cs_str(a, tls[i].arg, s, line_of(v));
            continue;
        }
        /* []byte in kube's JSON and YAML: base64 of the PEM text */
        size_t n;
        char *pem = base64_decode(s, strlen(s), &n);
        if (!pem || memchr(pem, '\0', n))
            return free(pem), kerr(k, v,
                                   "extenders.tlsConfig.%s: expected base64 of PEM data (as "
                                   "kube-scheduler reads it)",
                                   tls[i].kube);
        cs_str(a, tls[i].arg, pem, line_of(v));
        free(pem);
    }
    return 0;
}

/* ---- the profile as libconfig ---- */

/* PrioritySort's and DefaultPreemption's arguments: where the priority
 * is read, and (preempt non-NULL) DefaultPreemptionArgs. */
static void write_priority_args(config_setting_t *g, int line, const long long *preempt)
{
    config_setting_t *a = cs_add(g, "args", CONFIG_TYPE_GROUP, line);
    cs_str(a, "priority_field", "spec.priority", line);
    cs_str(a, "priority_class_field", "spec.priorityClassName", line);
    if (preempt) {
        cs_int(a, "min_candidate_nodes_percentage", preempt[0], line);
        cs_int(a, "min_candidate_nodes_absolute", preempt[1], line);
    }
}

static int write_profile(ks *k, config_setting_t *list, const yaml_node_t *pn, int index,
                         const char *name, int is_default, long long pct, long long init_s,
                         long long max_s)
{
    static const char *const keys[] = {"schedulerName", "plugins", "pluginConfig",
                                       "percentageOfNodesToScore", NULL};
    static const char *const pkeys[] = {
        "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",   "score",
        "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint", NULL};
    char what[64];
    snprintf(what, sizeof what, "profiles[%d]", index);
    prof *p = xcalloc(1, sizeof *p);
    p->preempt[0] = 10; /* kube's DefaultPreemptionArgs */
    p->preempt[1] = 100;
    int rc = -1, line = pn ? line_of(pn) : 1;
    if (pn && (want_map(k, pn, what) < 0 || check_keys(k, pn, what, keys, NULL) < 0))
        goto out;
    yaml_node_t *v, *pv;
    if ((pv = member(k, pn, "percentageOfNodesToScore")) &&
        get_int(k, pv, "percentageOfNodesToScore", 0, 100, &pct) < 0)
        goto out;
    yaml_node_t *pl = member(k, pn, "plugins");
    if (pl) {
        char w[96];
        snprintf(w, sizeof w, "%s.plugins", what);
        if (want_map(k, pl, w) < 0 || check_keys(k, pl, w, pkeys, NULL) < 0)
            goto out;
        for (int pt = 0; pt < KP_N; pt++) {
            yaml_node_t *s = member(k, pl, kp_key[pt]);
            char ws[128];
            snprintf(ws, sizeof ws, "%s.%s", w, kp_key[pt]);
            if (s && read_pset(k, s, pt, ws, &p->set[pt]) < 0)
                goto out;
        }
    }
    /* the defaults (getDefaultPlugins: all of them in multiPoint), then
     * the file's sets merged in */
    pset def;
    memset(&def, 0, sizeof def);
    for (int i = 0; i < N_KPLUGINS; i++)
        if (KPLUGINS[i].default_weight)
            def.en[def.n_en++] =
                (pent){i, KPLUGINS[i].default_weight > 0 ? KPLUGINS[i].default_weight : 0, 0};
    pset empty;
    memset(&empty, 0, sizeof empty);
    for (int pt = 0; pt < KP_N; pt++)
        merge_set(pt == KP_MULTI ? &def : &empty, &p->set[pt], &p->set[pt]);
    if ((v = member(k, pn, "pluginConfig"))) {
        char w[96];
        snprintf(w, sizeof w, "%s.pluginConfig", what);
        if (read_plugin_config(k, v, w, p) < 0)
            goto out;
    }
    if (expand(k, p, pn) < 0)
        goto out;
    int order[N_KPLUGINS], n_order = 0;
    if (plugin_order(k, p, pn, order, &n_order) < 0)
        goto out;

    config_setting_t *g = cs_add(list, NULL, CONFIG_TYPE_GROUP, line);
    yaml_node_t *sn = member(k, pn, "schedulerName");
    cs_str(g, "name", name, sn ? line_of(sn) : line);
    if (is_default)
        cs_bool(g, "default", 1, line);
    config_setting_t *w = cs_add(g, "workload", CONFIG_TYPE_GROUP, line);
    cs_str(w, "kind", "Pod", line);
    cs_str(w, "api_version", "v1", line);
    cs_str(w, "scheduler_name_field", "spec.schedulerName", line);
    cs_str(w, "finished_field", "status.phase", line);
    config_setting_t *fv = cs_add(w, "finished_values", CONFIG_TYPE_ARRAY, line);
    config_setting_set_string_elem(fv, -1, "Succeeded");
    config_setting_set_string_elem(fv, -1, "Failed");
    config_setting_t *t = cs_add(g, "target", CONFIG_TYPE_GROUP, line);
    cs_str(t, "kind", "Node", line);
    cs_str(t, "api_version", "v1", line);
    config_setting_t *b = cs_add(g, "binding", CONFIG_TYPE_GROUP, line);
    cs_str(b, "field", "spec.nodeName", line);
    cs_str(b, "subresource", "binding", line);
    cs_str(g, "tie_break", "name", line);
    cs_int(g, "percentage_of_targets_to_score", pct, pv ? line_of(pv) : line);
    config_setting_t *bo = cs_add(g, "backoff", CONFIG_TYPE_GROUP, line);
    cs_int(bo, "initial_ms", init_s * 1000, line);
    cs_int(bo, "max_ms", max_s * 1000, line);
    cs_int(g, "max_unschedulable_ms", 300000, line);
    long long ext_ms = extender_timeout_ms(k);
    if (ext_ms) { /* the defaults are 5 s and 60 s */
        cs_int(g, "hook_deadline_ms", ext_ms + 5000, line);
        cs_int(g, "bind_deadline_ms", ext_ms + 5000 > 60000 ? ext_ms + 5000 : 60000, line);
    }
    config_setting_t *plist = cs_add(g, "plugins", CONFIG_TYPE_LIST, pl ? line_of(pl) : line);
    int extenders_written = 0;
    for (int o = 0; o < n_order; o++) {
        int id = order[o];
        unsigned kset = 0;
        for (int pt = 0; pt < KP_MULTI; pt++)
            if (in_list(p->final[pt], p->n_final[pt], id))
                kset |= B(pt);
        if (!extenders_written && (kset & B(KP_BIND)) && k->extenders) {
            /* after every filter and score plugin, before the binder:
             * where kube consults its extenders */
            int e = 0;
            for (yaml_node_item_t *i = k->extenders->data.sequence.items.start;
                 i < k->extenders->data.sequence.items.top; i++, e++)
                if (write_extender(k, plist, node(k, *i), e) < 0)
                    goto out;
            extenders_written = 1;
        }
        int eline = line;
        for (int pt = 0; pt < KP_N; pt++) {
            int j = pset_has(&p->set[pt], id);
            if (j >= 0 && p->set[pt].en[j].line) {
                eline = p->set[pt].en[j].line;
                break;
            }
        }
        config_setting_t *e = cs_add(plist, NULL, CONFIG_TYPE_GROUP, eline);
        cs_str(e, "name", KPLUGINS[id].trellis, eline);
        if (kset & K_S)
            cs_int(e, "weight", p->weight[id], eline);
        unsigned off = KPLUGINS[id].points & ~kset;
        if (off) {
            /* the points kube's plugin implements but the file turned
             * off; every other point (trellis's own included) stays */
            config_setting_t *pts = cs_add(e, "points", CONFIG_TYPE_ARRAY, eline);
            for (const char *const *tp = trellis_points; *tp; tp++) {
                int keep = 1;
                for (int pt = 0; pt < KP_MULTI; pt++)
                    if ((off & B(pt)) && strcmp(kp_trellis[pt], *tp) == 0)
                        keep = 0;
                if (keep)
                    config_setting_set_string_elem(pts, -1, *tp);
            }
        }
        if (strcmp(KPLUGINS[id].kube, "PrioritySort") == 0 ||
            strcmp(KPLUGINS[id].kube, "DefaultPreemption") == 0) {
            write_priority_args(
                e, eline, strcmp(KPLUGINS[id].kube, "DefaultPreemption") == 0 ? p->preempt : NULL);
        } else if (p->args[id] ||
                   (k->n_ignored && strcmp(KPLUGINS[id].kube, "NodeResourcesFit") == 0)) {
            strbuf yb;
            sb_init(&yb);
            int aline = p->args[id] ? line_of(p->args[id]) : eline;
            if (k->n_ignored && strcmp(KPLUGINS[id].kube, "NodeResourcesFit") == 0) {
                if (p->args[id])
                    emit_flow(k, &yb, p->args[id], 0, "ignoredResources", k->ignored, k->n_ignored);
                else {
                    yaml_node_t empty_map;
                    memset(&empty_map, 0, sizeof empty_map);
                    empty_map.type = YAML_MAPPING_NODE;
                    emit_flow(k, &yb, &empty_map, 0, "ignoredResources", k->ignored, k->n_ignored);
                }
            } else {
                emit_flow(k, &yb, p->args[id], 0, NULL, NULL, 0);
            }
            if (yb.len > EMIT_MAX) {
                sb_free(&yb);
                kerr(k, p->args[id],
                     "pluginConfig %s: its args come to more than %u MiB "
                     "once YAML aliases are expanded",
                     KPLUGINS[id].kube, EMIT_MAX >> 20);
                goto out;
            }
            config_setting_t *a = cs_add(e, "args", CONFIG_TYPE_GROUP, aline);
            config_setting_t *c = cs_add(a, "config", CONFIG_TYPE_GROUP, aline);
            cs_str(c, "inline", yb.s ? yb.s : "{}", aline);
            sb_free(&yb);
        }
    }
    if (!extenders_written && k->extenders) {
        int e = 0;
        for (yaml_node_item_t *i = k->extenders->data.sequence.items.start;
             i < k->extenders->data.sequence.items.top; i++, e++)
            if (write_extender(k, plist, node(k, *i), e) < 0)
                goto out;
    }
    rc = 0;
out:
    free(p);
    return rc;
}

/* ---- the whole file ---- */

static const refusal TOP_REFUSED[] = {
    {"healthzBindAddress",
     "it is not a setting of kubescheduler.config.k8s.io/v1; trellis run serves /healthz and "
     "/metrics on its --listen address (or the http group of a trellis config)"},
    {"metricsBindAddress",
     "it is not a setting of kubescheduler.config.k8s.io/v1; trellis run serves /healthz and "
     "/metrics on its --listen address (or the http group of a trellis config)"},
    {"featureGates",
     "kube-scheduler takes feature gates on its command line, and trellis has none: remove it"},
    {NULL, NULL}};

static int read_leader_election(ks *k, const yaml_node_t *le, config_setting_t *store)
{
    static const char *const keys[] = {
        "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
        "resourceLock", "resourceName",  "resourceNamespace", NULL};
    if (want_map(k, le, "leaderElection") < 0 ||
        check_keys(k, le, "leaderElection", keys, NULL) < 0)
        return -1;
    yaml_node_t *v;
    int b = 0;
    if ((v = member(k, le, "leaderElect"))) {
        if (get_bool(k, v, "leaderElection.leaderElect", &b) < 0)
            return -1;
        if (!b)
            return kerr(k, v,
                        "leaderElection.leaderElect: false is not supported: trellis always "
                        "elects through its store (a second host on the same state waits as a "
                        "standby); remove it");
    }
    /* client-go's defaults, which trellis's Lease election uses */
    static const struct {
        const char *key;
        long long ms;
    } fixed[] = {{"renewDeadline", 10000}, {"retryPeriod", 2000}};
    for (size_t i = 0; i < 2; i++) {
        long long ms = 0;
        if (!(v = member(k, le, fixed[i].key)))
            continue;
        if (get_duration(k, v, fixed[i].key, &ms) < 0)
            return -1;
        if (ms != fixed[i].ms)
            return kerr(k, v,
                        "leaderElection.%s is not supported: trellis renews and retries its "
                        "lease at client-go's defaults (renewDeadline 10s, retryPeriod 2s) "
                        "derived from store.lease_ttl_s; remove it",
                        fixed[i].key);
    }
    const char *s = NULL;
    if ((v = member(k, le, "resourceLock"))) {
        if (get_str(k, v, "leaderElection.resourceLock", &s) < 0)
            return -1;
        if (strcmp(s, "leases") != 0)
            return kerr(k, v,
                        "leaderElection.resourceLock: trellis elects through a "
                        "coordination.k8s.io Lease only: use \"leases\" or remove it");
    }
    static const struct {
        const char *kube, *store;
    } mapped[] = {{"leaseDuration", "lease_ttl_s"},
                  {"resourceName", "lease_name"},
                  {"resourceNamespace", "lease_namespace"}};
    for (size_t i = 0; i < 3; i++) {
        if (!(v = member(k, le, mapped[i].kube)))
            continue;
        if (!store)
            return kerr(k, v,
                        "leaderElection.%s applies to the Kubernetes API store only: give "
                        "clientConnection.kubeconfig, or remove it (with --state trellis "
                        "elects through a lock file in the state directory)",
                        mapped[i].kube);
        if (i == 0) {
            long long ms = 0;
            if (get_duration(k, v, "leaderElection.leaseDuration", &ms) < 0)
                return -1;
            if (ms % 1000 || ms < 3000 || ms > 3600000)
                return kerr(k, v,
                            "leaderElection.leaseDuration: expected whole seconds from 3s to "
                            "1h (store.lease_ttl_s)");
            cs_int(store, mapped[i].store, ms / 1000, line_of(v));
        } else {
            if (get_str(k, v, mapped[i].kube, &s) < 0)
                return -1;
            cs_str(store, mapped[i].store, s, line_of(v));
        }
    }
    return 0;
}

static int read_client_connection(ks *k, const yaml_node_t *cc, config_setting_t *root,
                                  config_setting_t **store)
{
    static const char *const keys[] = {"kubeconfig", NULL};
    static const refusal refused[] = {
        {"qps", "trellis's API client has no rate limit; remove it"},
        {"burst", "trellis's API client has no rate limit; remove it"},
        {"contentType", "trellis's API client speaks JSON only; remove it"},
        {"acceptContentTypes", "trellis's API client speaks JSON only; remove it"},
        {NULL, NULL}};
    if (want_map(k, cc, "clientConnection") < 0 ||
        check_keys(k, cc, "clientConnection", keys, refused) < 0)
        return -1;
    yaml_node_t *v = member(k, cc, "kubeconfig");
    const char *s = NULL;
    if (!v)
        return 0;
    if (get_str(k, v, "clientConnection.kubeconfig", &s) < 0)
        return -1;
    *store = cs_add(root, "store", CONFIG_TYPE_GROUP, line_of(cc));
    cs_str(*store, "type", "kubernetes", line_of(v));
    cs_str(*store, "kubeconfig", s, line_of(v));
    k->have_kubeconfig = 1;
    return 0;
}

static int translate(ks *k, yaml_node_t *root)
{
    static const char *const keys[] = {"apiVersion",
                                       "kind",
                                       "parallelism",
                                       "leaderElection",
                                       "clientConnection",
                                       "enableProfiling",
                                       "enableContentionProfiling",
                                       "percentageOfNodesToScore",
                                       "podInitialBackoffSeconds",
                                       "podMaxBackoffSeconds",
                                       "profiles",
                                       "extenders",
                                       "delayCacheUntilActive",
                                       NULL};
    if (want_map(k, root, KIND) < 0)
        return -1;
    yaml_node_t *kind = member(k, root, "kind"), *api = member(k, root, "apiVersion");
    if (!kind || !scalar(kind) || strcmp(scalar(kind), KIND) != 0)
        return kerr(k, kind ? kind : root, "kind: expected %s", KIND);
    if (!api || !scalar(api) || strcmp(scalar(api), API_VERSION) != 0)
        return kerr(k, api ? api : root,
                    "apiVersion: expected %s (trellis reads v1 only; kube-scheduler 1.25 and "
                    "later read it too: move the file to v1 as kube's migration guide says)",
                    API_VERSION);
    if (check_keys(k, root, "KubeSchedulerConfiguration", keys, TOP_REFUSED) < 0)
        return -1;
    config_setting_t *lroot = config_root_setting(k->lc);
    yaml_node_t *v;
    long long x = 0;
    int b = 0;
    /* parallelism: kube's default 16 workers; trellis's 0 is one per CPU,
     * at most 16. Decisions do not depend on it. */
    if ((v = member(k, root, "parallelism"))) {
        if (get_int(k, v, "parallelism", 1, 256, &x) < 0)
            return -1;
        cs_int(lroot, "parallelism", x, line_of(v));
    }
    static const struct {
        const char *key, *why;
    } off_only[] = {
        {"enableProfiling", "trellis serves no /debug/pprof; remove it or set it to false"},
        {"enableContentionProfiling",
         "trellis serves no /debug/pprof; remove it or set it to false"}};
    for (size_t i = 0; i < sizeof off_only / sizeof *off_only; i++) {
        if (!(v = member(k, root, off_only[i].key)))
            continue;
        if (get_bool(k, v, off_only[i].key, &b) < 0)
            return -1;
        if (b)
            return kerr(k, v, "%s: true is not supported: %s", off_only[i].key, off_only[i].why);
    }
    /* a trellis standby reads the state once it leads, as kube's true
     * does; false fills kube's cache while it waits: the decisions are
     * the same, only a takeover is quicker */
    if ((v = member(k, root, "delayCacheUntilActive")) &&
        get_bool(k, v, "delayCacheUntilActive", &b) < 0)
        return -1;
    config_setting_t *store = NULL;
    if ((v = member(k, root, "clientConnection")) &&
        read_client_connection(k, v, lroot, &store) < 0)
        return -1;
    if ((v = member(k, root, "leaderElection")) && read_leader_election(k, v, store) < 0)
        return -1;
    long long pct = 0, init_s = 1, max_s = 10;
    if ((v = member(k, root, "percentageOfNodesToScore")) &&
        get_int(k, v, "percentageOfNodesToScore", 0, 100, &pct) < 0)
        return -1;
    if ((v = member(k, root, "podInitialBackoffSeconds")) &&
        get_int(k, v, "podInitialBackoffSeconds", 1, 86400, &init_s) < 0)
        return -1;
    yaml_node_t *mv = member(k, root, "podMaxBackoffSeconds");
    if (mv && get_int(k, mv, "podMaxBackoffSeconds", 1, 86400, &max_s) < 0)
        return -1;
    if (max_s < init_s)
        return kerr(k, mv ? mv : v,
                    "podMaxBackoffSeconds (%lld) must be at least podInitialBackoffSeconds "
                    "(%lld)",
                    max_s, init_s);
    if ((v = member(k, root, "extenders")) && read_extenders(k, v) < 0)
        return -1;
    yaml_node_t *profs = member(k, root, "profiles");
    if (profs && want_seq(k, profs, "profiles") < 0)
        return -1;
    int n = profs ? (int)(profs->data.sequence.items.top - profs->data.sequence.items.start) : 0;
    config_setting_t *list =
        cs_add(lroot, "profiles", CONFIG_TYPE_LIST, profs ? line_of(profs) : 1);
    if (n == 0)
        return write_profile(k, list, NULL, 0, "default-scheduler", 1, pct, init_s, max_s);
    /* kube defaults the name only of a single profile; the profile
     * "default-scheduler" takes Pods naming no scheduler (the API server
     * gives them that name), else the first does */
    int def = 0;
    for (int i = 0; i < n; i++) {
        yaml_node_t *pn = node(k, profs->data.sequence.items.start[i]);
        const char *s = scalar(member(k, pn, "schedulerName"));
        if (s && strcmp(s, "default-scheduler") == 0) {
            def = i;
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        yaml_node_t *pn = node(k, profs->data.sequence.items.start[i]), *sn;
        const char *name = "default-scheduler";
        if ((sn = member(k, pn, "schedulerName"))) {
            if (get_str(k, sn, "schedulerName", &name) < 0)
                return -1;
        } else if (n > 1) {
            return kerr(k, pn,
                        "profiles[%d]: schedulerName is required when there are several "
                        "profiles",
                        i);
        }
        if (!*name)
            return kerr(k, sn, "profiles[%d].schedulerName must not be empty", i);
        if (write_profile(k, list, pn, i, name, i == def, pct, init_s, max_s) < 0)
            return -1;
    }
    return 0;
}

/* The first document of text as a node tree: 1, 0 when it is no YAML
 * (or empty), -1 with err when kube (detect) said it is one but it does
 * not parse. */
static int load_doc(ks *k, const char *text, size_t len, int report)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return report ? kerr(k, NULL, "out of memory") : 0;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int ok = yaml_parser_load(&parser, &k->doc);
    if (!ok) {
        if (report)
            errf(k->err, k->errlen, "%s:%zu: %s", k->file, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "malformed YAML");
        yaml_parser_delete(&parser);
        return report ? -1 : 0;
    }
    int rc = 1;
    if (!yaml_document_get_root_node(&k->doc)) {
        rc = 0;
    } else if (report) {
        yaml_document_t next;
        if (yaml_parser_load(&parser, &next)) {
            if (yaml_document_get_root_node(&next)) {
                rc = -1;
                kerr(k, yaml_document_get_root_node(&next),
                     "a second document: kube-scheduler reads one KubeSchedulerConfiguration "
                     "per file; remove it");
            }
            yaml_document_delete(&next);
        }
    }
    yaml_parser_delete(&parser);
    if (rc <= 0)
        yaml_document_delete(&k->doc);
    return rc;
}

int kubesched_detect(const char *text, size_t len)
{
    /* cheap first: a trellis config names neither */
    int named = 0;
    const char *words[] = {KIND, API_GROUP};
    for (size_t w = 0; w < 2 && !named; w++) {
        size_t l = strlen(words[w]);
        for (size_t i = 0; i + l <= len && !named; i++)
            named = memcmp(text + i, words[w], l) == 0;
    }
    if (!named)
        return 0;
    ks k;
    char err[16];
    memset(&k, 0, sizeof k);
    k.file = "";
    k.err = err;
    k.errlen = sizeof err;
    if (load_doc(&k, text, len, 0) <= 0)
        return 0;
    yaml_node_t *root = yaml_document_get_root_node(&k.doc);
    const char *kind = scalar(member(&k, root, "kind"));
    const char *api = scalar(member(&k, root, "apiVersion"));
    int yes = (kind && strcmp(kind, KIND) == 0) ||
              (api && strncmp(api, API_GROUP "/", strlen(API_GROUP) + 1) == 0);
    yaml_document_delete(&k.doc);
    return yes;
}

int kubesched_translate(const char *file, const char *text, size_t len, config_t *lc, char **notice,
                        char *err, size_t errlen)
{
    ks k;
    memset(&k, 0, sizeof k);
    k.file = file;
    k.lc = lc;
    k.err = err;
    k.errlen = errlen;
    *notice = NULL;
    int rc = load_doc(&k, text, len, 1);
    if (rc == 0)
        return errf(err, errlen, "%s: empty: expected a %s", file, KIND);
    if (rc < 0)
        return -1;
    rc = translate(&k, yaml_document_get_root_node(&k.doc));
    yaml_document_delete(&k.doc);
    if (rc == 0 && k.absent) {
        strbuf b;
        sb_init(&b);
        for (int i = 0; i < N_KPLUGINS; i++)
            if (k.absent & (1u << i))
                sb_printf(&b, "%s%s", b.len ? ", " : "", KPLUGINS[i].kube);
        *notice = xasprintf("%s: kube-scheduler's default plugins %s are left out: trellis "
                            "schedules without volumes (Pods' volumes are not checked; see "
                            "doc/kube.md)",
                            file, b.s);
        sb_free(&b);
    }
    return rc;
}
