/*
 * openmcp.c - see openmcp.h. The checks and messages follow the openMCP
 * operator's own validation of its scheduler configuration
 * (internal/config/config_scheduler.go), with the field paths rooted at
 * `scheduler`.
 */
#include "openmcp.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8sname.h"
#include "shake.h"
#include "values.h"

/* ---- a growing string, for manifests ------------------------------------ */

typedef struct buf {
    char *s;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_json_string(buf *b, const char *s)
{
    put(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        const unsigned char *run = p; /* what needs no escape, put at once */
        while (*p && *p != '"' && *p != '\\' && *p >= 0x20)
            p++;
        put(b, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(b, esc, 2);
        } else {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(b, esc, 6);
        }
        p++;
    }
    put(b, "\"", 1);
}

typedef struct json_ctx {
    const trellis_host *h;
    buf *b;
    int first;
} json_ctx;

static void put_value(const trellis_host *h, buf *b, const trellis_value *v);

static int put_member(const char *key, const trellis_value *v, void *ud)
{
    json_ctx *j = ud;
    if (!j->first)
        put(j->b, ",", 1);
    j->first = 0;
    put_json_string(j->b, key);
    put(j->b, ":", 1);
    put_value(j->h, j->b, v);
    return 0;
}

/* A value tree as JSON: strings stay strings, numbers and booleans keep
 * their text. */
static void put_value(const trellis_host *h, buf *b, const trellis_value *v)
{
    switch (v ? h->value_type(v) : TRELLIS_VALUE_NULL) {
    case TRELLIS_VALUE_NULL:
        puts_(b, "null");
        return;
    case TRELLIS_VALUE_STRING:
        put_json_string(b, h->value_string(v));
        return;
    case TRELLIS_VALUE_BOOL:
    case TRELLIS_VALUE_INT:
    case TRELLIS_VALUE_DOUBLE:
        puts_(b, h->value_string(v));
        return;
    case TRELLIS_VALUE_LIST:
        put(b, "[", 1);
        for (size_t i = 0; i < h->value_len(v); i++) {
            if (i)
                put(b, ",", 1);
            put_value(h, b, h->value_at(v, i));
        }
        put(b, "]", 1);
        return;
    case TRELLIS_VALUE_MAP: {
        json_ctx j = {h, b, 1};
        put(b, "{", 1);
        h->value_foreach(v, put_member, &j);
        put(b, "}", 1);
        return;
    }
    }
}

/* ---- the configuration ------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* A string member of map m at path.key: *out borrowed, NULL when absent.
 * -1 when present and not a string. */
static int get_string(const trellis_host *h, const trellis_value *m, const char *key,
                      const char *path, const char **out, char *err, size_t errlen)
{
    const trellis_value *v = m ? h->value_get(m, key) : NULL;
    char where[256];
    snprintf(where, sizeof where, "%s.%s", path, key);
    int r = values_expect(h, v, TRELLIS_VALUE_STRING, "a string", where, err, errlen);
    if (r < 0)
        return -1;
    *out = r ? h->value_string(v) : NULL;
    if (*out && !**out)
        *out = NULL;
    return 0;
}

/* A map member (NULL when absent); -1 when present and not a map. */
static int get_map(const trellis_host *h, const trellis_value *m, const char *key, const char *path,
                   const trellis_value **out, char *err, size_t errlen)
{
    const trellis_value *v = m ? h->value_get(m, key) : NULL;
    char where[256];
    snprintf(where, sizeof where, "%s.%s", path, key);
    int r = values_expect(h, v, TRELLIS_VALUE_MAP, "a map", where, err, errlen);
    if (r < 0)
        return -1;
    *out = r ? v : NULL;
    return 0;
}

static int parse_selector(const trellis_host *h, const trellis_value *m, const char *key,
                          const char *path, selector **out, char *err, size_t errlen)
{
    const trellis_value *v;
    char where[256];
    snprintf(where, sizeof where, "%s.%s", path, key);
    if (get_map(h, m, key, path, &v, err, errlen) < 0)
        return -1;
    return v ? selector_parse(h, v, SELECTOR_FORMAT_SELECTOR, where, out, err, errlen) : 0;
}

static const char *map_lookup(const void *ud, const char *key)
{
    const void *const *p = ud;
    const trellis_host *h = p[0];
    const trellis_value *labels = p[1];
    const trellis_value *v = labels ? h->value_get(labels, key) : NULL;
    return v && h->value_type(v) == TRELLIS_VALUE_STRING ? h->value_string(v) : NULL;
}

/* Drop from local the matchLabels entries whose key the global selector's
 * matchLabels also set: openMCP merges the two with the global value
 * winning. */
static void drop_overridden(selector *local, const selector *global)
{
    if (!local || !global)
        return;
    size_t k = 0;
    for (size_t i = 0; i < local->n; i++) {
        selector_req *r = &local->reqs[i];
        int overridden = 0;
        for (size_t j = 0; r->op == SELECTOR_EQUALS && j < global->n; j++)
            overridden |=
                global->reqs[j].op == SELECTOR_EQUALS && strcmp(global->reqs[j].key, r->key) == 0;
        if (!overridden) {
            local->reqs[k++] = *r;
            continue;
        }
        free(r->key);
        for (size_t v = 0; v < r->nvalues; v++)
            free(r->values[v]);
        free(r->values);
    }
    local->n = k;
}

typedef struct strings_ctx {
    const trellis_host *h;
    const char *path;
    int labels; /* the map is labels: each value is a label value too */
    char *err;
    size_t errlen;
    int bad;
} strings_ctx;

/* A member of a labels or annotations map: a string under a key the API
 * server takes (and, for a label, a value it takes). */
static int member_is_string(const char *key, const trellis_value *v, void *ud)
{
    strings_ctx *x = ud;
    char where[400];
    values_member_path(where, sizeof where, x->path, key, "./");
    const char *why = x->labels ? k8s_qualified_name(key) : k8s_annotation_key(key);
    if (why) {
        x->bad = fail(x->err, x->errlen,
                      "%s: the key %s (a key is [prefix/]name; the API server would refuse "
                      "the Cluster)",
                      where, why);
        return 1;
    }
    if (x->h->value_type(v) != TRELLIS_VALUE_STRING) {
        x->bad = fail(x->err, x->errlen, "%s: expected a string, got %s (quote it)", where,
                      values_type_name(x->h->value_type(v)));
        return 1;
    }
    if (x->labels && (why = k8s_label_value(x->h->value_string(v)))) {
        x->bad = fail(x->err, x->errlen,
                      "%s: the label value \"%s\" %s (the API server would refuse the Cluster)",
                      where, x->h->value_string(v), why);
        return 1;
    }
    return 0;
}

/* The labels or annotations map (or the list spec.purposes) at
 * parent.key holds strings only, as Kubernetes requires; absent is fine. */
static int strings_only(const trellis_host *h, const trellis_value *v, const char *parent,
                        const char *key, char *err, size_t errlen)
{
    char path[400];
    snprintf(path, sizeof path, "%s.%s", parent, key);
    strings_ctx x = {h, path, strcmp(key, "labels") == 0, err, errlen, 0};
    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    if (h->value_type(v) == TRELLIS_VALUE_MAP) {
        h->value_foreach(v, member_is_string, &x);
        return x.bad;
    }
    if (h->value_type(v) != TRELLIS_VALUE_LIST)
        return fail(err, errlen, "%s: expected a %s, got %s", path,
                    strcmp(key, "purposes") == 0 ? "list of strings" : "map of strings",
                    values_type_name(h->value_type(v)));
    for (size_t i = 0; i < h->value_len(v); i++)
        if (h->value_type(h->value_at(v, i)) != TRELLIS_VALUE_STRING)
            return fail(err, errlen, "%s[%zu]: expected a string, got %s", path, i,
                        values_type_name(h->value_type(h->value_at(v, i))));
    return 0;
}

/* The names new Clusters get from the template (at metadata path mp) are
 * names the API server takes: its namespace, its name, its generateName,
 * or without either the purpose's name as the prefix. */
static int template_names(const omcp_purpose *p, const char *mp, char *err, size_t errlen)
{
    const char *why;
    if (p->namespace_ && (why = k8s_dns_label(p->namespace_)))
        return fail(err, errlen, "%s.namespace: \"%s\" %s (a namespace of the API server)", mp,
                    p->namespace_, why);
    if (p->name_ && (why = k8s_dns_subdomain(p->name_)))
        return fail(err, errlen, "%s.name: \"%s\" %s (a name of the API server)", mp, p->name_,
                    why);
    if (p->generate_name && (why = k8s_name_prefix(p->generate_name)))
        return fail(err, errlen,
                    "%s.generateName: \"%s\" %s (the names of new Clusters start with it)", mp,
                    p->generate_name, why);
    if (!p->generate_name && !p->name_) {
        char prefix[OMCP_NAME_MAX + 2];
        snprintf(prefix, sizeof prefix, "%s-", p->name);
        if ((why = k8s_name_prefix(prefix)))
            return fail(err, errlen,
                        "%s: new Clusters of purpose '%s' are named after it, and a name %s: "
                        "set generateName (or name)",
                        mp, p->name, why);
    }
    return 0;
}

static int parse_template(const trellis_host *h, const trellis_value *def, const char *path,
                          omcp_purpose *p, char *err, size_t errlen)
{
    char tp[300], mp[320], sp[320];
    const trellis_value *tmpl, *meta;
    const char *profile, *tenancy;
    snprintf(tp, sizeof tp, "%s.template", path);
    snprintf(mp, sizeof mp, "%s.metadata", tp);
    snprintf(sp, sizeof sp, "%s.spec", tp);
    if (get_map(h, def, "template", path, &tmpl, err, errlen) < 0 ||
        get_map(h, tmpl, "metadata", tp, &meta, err, errlen) < 0 ||
        get_map(h, tmpl, "spec", tp, &p->spec, err, errlen) < 0 ||
        get_map(h, meta, "labels", mp, &p->labels, err, errlen) < 0 ||
        get_map(h, meta, "annotations", mp, &p->annotations, err, errlen) < 0 ||
        get_string(h, meta, "namespace", mp, &p->namespace_, err, errlen) < 0 ||
        get_string(h, meta, "name", mp, &p->name_, err, errlen) < 0 ||
        get_string(h, meta, "generateName", mp, &p->generate_name, err, errlen) < 0 ||
        get_string(h, p->spec, "profile", sp, &profile, err, errlen) < 0 ||
        get_string(h, p->spec, "tenancy", sp, &tenancy, err, errlen) < 0 ||
        strings_only(h, p->labels, mp, "labels", err, errlen) < 0 ||
        strings_only(h, p->annotations, mp, "annotations", err, errlen) < 0 ||
        strings_only(h, p->spec ? h->value_get(p->spec, "purposes") : NULL, sp, "purposes", err,
                     errlen) < 0)
        return -1;
    if (template_names(p, mp, err, errlen) < 0)
        return -1;
    if (!profile)
        return fail(err, errlen, "%s.spec.profile: required (the cluster profile of new Clusters)",
                    tp);
    if (!tenancy)
        return fail(err, errlen, "%s.spec.tenancy: required (Exclusive or Shared)", tp);
    if (strcmp(tenancy, "Exclusive") != 0 && strcmp(tenancy, "Shared") != 0)
        return fail(err, errlen, "%s.spec.tenancy: expected Exclusive or Shared, got '%s'", tp,
                    tenancy);
    p->exclusive = strcmp(tenancy, "Exclusive") == 0;
    return 0;
}

typedef struct load_ctx {
    omcp_config *c;
    char *err;
    size_t errlen;
    int failed;
} load_ctx;

/* The template's labels must match both selectors, or the scheduler could
 * not find the Clusters it creates again. */
static int check_template_labels(const omcp_config *c, const omcp_purpose *p, const char *path,
                                 char *err, size_t errlen)
{
    const void *ud[2] = {c->h, p->labels};
    const selector *sel[2] = {c->clusters, p->local};
    static const char *const which[2] = {"global", "local"};
    for (int k = 0; k < 2; k++) {
        long i = selector_first_mismatch(sel[k], map_lookup, ud);
        if (i < 0)
            continue;
        char req[128];
        selector_describe(&sel[k]->reqs[i], req, sizeof req);
        return fail(err, errlen,
                    "%s.template.metadata.labels: labels do not match specified %s cluster "
                    "selector (%s): the scheduler could not find the Clusters it creates for "
                    "purpose '%s' again",
                    path, which[k], req, p->name);
    }
    return 0;
}

static int load_purpose(const char *name, const trellis_value *def, void *ud)
{
    load_ctx *l = ud;
    omcp_config *c = l->c;
    const trellis_host *h = c->h;
    char path[256];
    values_member_path(path, sizeof path, "scheduler.purposeMappings", name, ".");
    if (!*name)
        return l->failed = fail(l->err, l->errlen, "%s: purpose must not be empty", path), 1;
    if (c->n_purposes == OMCP_PURPOSES_MAX)
        return l->failed =
                   fail(l->err, l->errlen, "%s: more than %d purposes", path, OMCP_PURPOSES_MAX),
               1;
    if (!def || h->value_type(def) != TRELLIS_VALUE_MAP)
        return l->failed = fail(l->err, l->errlen,
                                "%s: definition must not be nil (a map with "
                                "template, tenancyCount, selector)",
                                path),
               1;
    omcp_purpose *p = &c->purposes[c->n_purposes++];
    p->name = values_strdup(name);
    const trellis_value *tc = h->value_get(def, "tenancyCount");
    if (tc && h->value_type(tc) != TRELLIS_VALUE_NULL &&
        (h->value_type(tc) != TRELLIS_VALUE_INT || h->value_int(tc, &p->tenancy_count) < 0))
        return l->failed = fail(l->err, l->errlen, "%s.tenancyCount: expected an integer", path), 1;
    if (!p->name || parse_template(h, def, path, p, l->err, l->errlen) < 0 ||
        parse_selector(h, def, "selector", path, &p->local, l->err, l->errlen) < 0)
        return l->failed = -1, 1;
    if (p->tenancy_count < 0)
        return l->failed =
                   fail(l->err, l->errlen,
                        "%s.tenancyCount: tenancyCount must be greater than or equal to 0", path),
               1;
    if (p->exclusive && p->tenancy_count != 0)
        return l->failed = fail(l->err, l->errlen,
                                "%s.tenancyCount: tenancyCount must be 0 if the template specifies "
                                "'Exclusive' tenancy (got %lld)",
                                path, (long long)p->tenancy_count),
               1;
    if (check_template_labels(c, p, path, l->err, l->errlen) < 0)
        return l->failed = -1, 1;
    drop_overridden(p->local, c->clusters);
    return 0;
}

static int choice(const char *v, const char *const *names, const char *path, int *out, char *err,
                  size_t errlen)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    if (names[2])
        return fail(err, errlen, "%s: expected %s, %s or %s, got '%s'", path, names[0], names[1],
                    names[2], v);
    return fail(err, errlen, "%s: expected %s or %s, got '%s'", path, names[0], names[1], v);
}

int omcp_config_load(const trellis_host *h, const trellis_args *args, const char *default_scope,
                     omcp_config *c, char *err, size_t errlen)
{
    return omcp_config_parse(h, h->arg_document(args, "config"), default_scope, c, err, errlen);
}

int omcp_config_parse(const trellis_host *h, const trellis_value *doc, const char *default_scope,
                      omcp_config *c, char *err, size_t errlen)
{
    static const char *const scopes[] = {"Cluster", "Namespaced", NULL};
    static const char *const strategies[] = {"Balanced", "Simple", "Random", NULL};
    memset(c, 0, sizeof *c);
    c->h = h;
    const trellis_value *root, *sels, *pm;
    const char *scope, *strategy;
    if (!doc || h->value_type(doc) != TRELLIS_VALUE_MAP)
        return fail(err, errlen,
                    "config: expected a map with `scheduler:` at its root (the "
                    "openMCP operator's scheduler configuration)");
    if (get_map(h, doc, "scheduler", "config", &root, err, errlen) < 0)
        return -1;
    if (!root)
        return fail(err, errlen,
                    "config: no `scheduler:` at the root of the document (the "
                    "openMCP operator's scheduler configuration)");
    if (get_string(h, root, "scope", "scheduler", &scope, err, errlen) < 0 ||
        get_string(h, root, "strategy", "scheduler", &strategy, err, errlen) < 0 ||
        choice(scope ? scope : default_scope, scopes,
               scope ? "scheduler.scope" : "argument default_scope", &c->namespaced, err,
               errlen) < 0 ||
        choice(strategy ? strategy : "Balanced", strategies, "scheduler.strategy", &c->strategy,
               err, errlen) < 0 ||
        get_map(h, root, "selectors", "scheduler", &sels, err, errlen) < 0 ||
        parse_selector(h, sels, "clusters", "scheduler.selectors", &c->clusters, err, errlen) < 0 ||
        parse_selector(h, sels, "requests", "scheduler.selectors", &c->requests, err, errlen) < 0 ||
        get_map(h, root, "purposeMappings", "scheduler", &pm, err, errlen) < 0)
        return -1;
    size_t n = pm ? h->value_len(pm) : 0;
    c->purposes = calloc(n ? n : 1, sizeof *c->purposes);
    if (!c->purposes)
        return fail(err, errlen, "out of memory");
    load_ctx l = {c, err, errlen, 0};
    if (pm)
        h->value_foreach(pm, load_purpose, &l);
    if (l.failed)
        return -1;
    buf names = {0};
    for (size_t i = 0; i < c->n_purposes; i++) {
        if (i)
            puts_(&names, ", ");
        puts_(&names, c->purposes[i].name);
    }
    c->purpose_names = names.s ? names.s : values_strdup("none");
    return names.oom || !c->purpose_names ? fail(err, errlen, "out of memory") : 0;
}

void omcp_config_free(omcp_config *c)
{
    for (size_t i = 0; i < c->n_purposes; i++) {
        free(c->purposes[i].name);
        selector_free(c->purposes[i].local);
    }
    free(c->purposes);
    selector_free(c->clusters);
    selector_free(c->requests);
    free(c->purpose_names);
    memset(c, 0, sizeof *c);
}

/* The private struct of a plugin: its configuration first, then its own
 * members; the free function is kept in a header before it. */
typedef struct setup_head {
    void (*more)(void *conf);
    max_align_t align;
} setup_head;

static void setup_free(void *conf)
{
    setup_head *hd = (setup_head *)((char *)conf - offsetof(setup_head, align));
    if (hd->more)
        hd->more(conf);
    omcp_config_free(conf);
    free(hd);
}

void *omcp_plugin_setup(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                        size_t size, const char *default_scope, void (*more)(void *conf), char *err,
                        size_t errlen)
{
    setup_head *hd = calloc(1, offsetof(setup_head, align) + size);
    if (!hd) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    hd->more = more;
    void *conf = (char *)hd + offsetof(setup_head, align);
    h->set_private(self, conf, setup_free);
    return omcp_config_load(h, args, default_scope, conf, err, errlen) < 0 ? NULL : conf;
}

int omcp_purpose_index(const omcp_config *c, const char *name)
{
    for (size_t i = 0; name && i < c->n_purposes; i++)
        if (strcmp(c->purposes[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- requests and Clusters --------------------------------------------- */

const char *omcp_request_purpose(const trellis_host *h, const trellis_object *w)
{
    const char *s = values_scalar_text(h, h->object_get(w, "spec.purpose"));
    return s ? s : "";
}

static const char *label_lookup(const void *ud, const char *key)
{
    const void *const *p = ud;
    const trellis_host *h = p[0];
    return h->object_label(p[1], key);
}

int omcp_request_selected(const omcp_config *c, const trellis_object *w)
{
    const void *ud[2] = {c->h, w};
    return selector_first_mismatch(c->requests, label_lookup, ud) < 0;
}

int omcp_request_left_alone(const omcp_config *c, const trellis_object *w, int honour_ignore)
{
    const char *op = c->h->object_annotation(w, OMCP_OPERATION_ANNOTATION);
    if (honour_ignore && op && strcmp(op, "ignore") == 0)
        return 1;
    return !omcp_request_selected(c, w);
}

uint64_t omcp_cluster_purposes(const omcp_config *c, const trellis_object *cluster)
{
    const trellis_host *h = c->h;
    const void *ud[2] = {h, cluster};
    if (selector_first_mismatch(c->clusters, label_lookup, ud) >= 0)
        return 0;
    const trellis_value *ps = h->object_get(cluster, "spec.purposes");
    uint64_t mask = 0;
    for (size_t i = 0; ps && i < h->value_len(ps); i++) {
        const trellis_value *e = h->value_at(ps, i);
        int k = e && h->value_type(e) == TRELLIS_VALUE_STRING
                    ? omcp_purpose_index(c, h->value_string(e))
                    : -1;
        if (k >= 0 && selector_first_mismatch(c->purposes[k].local, label_lookup, ud) < 0)
            mask |= 1ull << k;
    }
    return mask;
}

static const trellis_value *finalizers(const trellis_host *h, const trellis_object *o)
{
    const trellis_value *f = h->object_get(o, "metadata.finalizers");
    return f && h->value_type(f) == TRELLIS_VALUE_LIST ? f : NULL;
}

static const char *str_at(const trellis_host *h, const trellis_value *list, size_t i)
{
    const trellis_value *e = h->value_at(list, i);
    return e && h->value_type(e) == TRELLIS_VALUE_STRING ? h->value_string(e) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int64_t omcp_cluster_requests(const trellis_host *h, const trellis_object *cluster)
{
    static const size_t plen = sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1;
    const trellis_value *f = finalizers(h, cluster);
    size_t n = f ? h->value_len(f) : 0, k = 0;
    const char **req = malloc((n ? n : 1) * sizeof *req);
    for (size_t i = 0; i < n; i++) {
        const char *s = str_at(h, f, i);
        if (s && strncmp(s, OMCP_CLUSTER_FINALIZER_PREFIX, plen) == 0) {
            if (!req)
                k++; /* no memory to tell duplicates apart: count each */
            else
                req[k++] = s;
        }
    }
    if (!req)
        return (int64_t)k;
    /* uids are counted once: sorted, then the distinct ones (a shared
     * Cluster may carry thousands) */
    qsort(req, k, sizeof *req, cmp_str);
    int64_t count = 0;
    for (size_t i = 0; i < k; i++)
        count += i == 0 || strcmp(req[i], req[i - 1]) != 0;
    free(req);
    return count;
}

void omcp_request_counters(const trellis_host *h, const trellis_plugin *self,
                           const trellis_object *w, int64_t out[1])
{
    const trellis_value *b = h->object_get(w, h->binding_field(self));
    const char *s = values_scalar_text(h, b);
    out[0] = !(s && *s);
}

int omcp_carries_own(const trellis_host *h, const trellis_object *w, const trellis_object *cluster)
{
    char fin[OMCP_FINALIZER_MAX];
    return cluster && omcp_request_finalizer(h, w, fin, sizeof fin) == 0 &&
           omcp_has_finalizer(h, cluster, fin);
}

int omcp_has_finalizer(const trellis_host *h, const trellis_object *o, const char *fin)
{
    const trellis_value *f = finalizers(h, o);
    for (size_t i = 0; f && i < h->value_len(f); i++) {
        const char *s = str_at(h, f, i);
        if (s && strcmp(s, fin) == 0)
            return 1;
    }
    return 0;
}

int omcp_being_deleted(const trellis_host *h, const trellis_object *o)
{
    const trellis_value *v = h->object_get(o, "metadata.deletionTimestamp");
    return v && h->value_type(v) != TRELLIS_VALUE_NULL;
}

int omcp_request_finalizer(const trellis_host *h, const trellis_object *w, char *out, size_t len)
{
    const char *uid = h->object_uid(w);
    if (!uid || !*uid)
        return -1;
    /* asked in every cycle and binding: two copies, not a format */
    size_t pl = sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1, ul = strlen(uid);
    if (pl + ul >= len)
        return -1;
    memcpy(out, OMCP_CLUSTER_FINALIZER_PREFIX, pl);
    memcpy(out + pl, uid, ul + 1);
    return 0;
}

const char *omcp_new_namespace(const omcp_purpose *p, const trellis_host *h,
                               const trellis_object *w)
{
    return p->namespace_ ? p->namespace_ : h->object_namespace(w);
}

/* ---- names ------------------------------------------------------------- */

uint64_t omcp_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t omcp_hash(const char *s, uint64_t h)
{
    h ^= 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* prefix + the hash of "<namespace>/<name>": openMCP's GenerateClusterName
 * (controller-utils NameHashSHAKE128Base32, shortened to what the prefix
 * leaves of 63 characters; a prefix that leaves no room for the hash is an
 * error there too). */
static int hashed_name(const char *prefix, const trellis_host *h, const trellis_object *w,
                       char *out, size_t len, char *err, size_t errlen)
{
    char in[512];
    uint8_t digest[5];
    char suffix[9];
    int n = snprintf(in, sizeof in, "%s/%s", h->object_namespace(w), h->object_name(w));
    if (n < 0 || (size_t)n >= sizeof in)
        return fail(err, errlen, "request name too long");
    shake128(in, (size_t)n, digest, sizeof digest);
    base32_lower(digest, sizeof digest, suffix);
    size_t plen = strlen(prefix);
    if (plen + 8 > OMCP_NAME_MAX)
        return fail(err, errlen,
                    "error generating cluster name: the prefix is %zu characters long ('%.40s%s'); "
                    "at most %d leave room for the 8-character hash in a %d-character name",
                    plen, prefix, plen > 40 ? "..." : "", OMCP_NAME_MAX - 8, OMCP_NAME_MAX);
    if (plen + 9 > len)
        return fail(err, errlen, "name buffer too small");
    snprintf(out, len, "%s%s", prefix, suffix);
    return 0;
}

/* prefix + 5 characters of Kubernetes' generateName alphabet, drawn from
 * seed and the request's uid: a random name that a replay gets again. */
static int random_name(const char *prefix, const trellis_host *h, const trellis_object *w,
                       uint64_t seed, char *out, size_t len, char *err, size_t errlen)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    size_t plen = strlen(prefix);
    if (plen > OMCP_NAME_MAX - 5)
        plen = OMCP_NAME_MAX - 5; /* as the API server cuts a long generateName */
    if (plen + 6 > len)
        return fail(err, errlen, "name buffer too small");
    memcpy(out, prefix, plen);
    uint64_t x = omcp_mix(omcp_hash(h->object_uid(w), seed));
    for (int i = 0; i < 5; i++, x /= 27)
        out[plen + (size_t)i] = alphabet[x % 27];
    out[plen + 5] = '\0';
    return 0;
}

int omcp_new_name(const omcp_purpose *p, const trellis_host *h, const trellis_object *w,
                  uint64_t seed, char *out, size_t len, char *err, size_t errlen)
{
    const char *r = h->object_label(w, OMCP_RANDOMIZE_LABEL);
    int randomize = r && strcmp(r, "true") == 0;
    char prefix[256];
    if (!p->exclusive && p->tenancy_count == 0 && !p->generate_name) {
        const char *name = p->name_ ? p->name_ : p->name;
        if (strlen(name) > OMCP_NAME_MAX || strlen(name) + 1 > len)
            return fail(err, errlen,
                        "the new Cluster's name ('%.40s%s', the template's metadata.name or the "
                        "purpose) is %zu characters long; Kubernetes allows %d",
                        name, strlen(name) > 40 ? "..." : "", strlen(name), OMCP_NAME_MAX);
        memcpy(out, name, strlen(name) + 1);
        return 0;
    }
    if (p->generate_name)
        snprintf(prefix, sizeof prefix, "%s", p->generate_name);
    else
        snprintf(prefix, sizeof prefix, "%s-", p->name);
    if (randomize)
        return random_name(prefix, h, w, seed, out, len, err, errlen);
    return hashed_name(prefix, h, w, out, len, err, errlen);
}

/* ---- the manifest of a new Cluster ------------------------------------- */

/* Labels or annotations being put together: later sets of a key win. */
typedef struct kv {
    const char **k, **v; /* malloc'd arrays of borrowed strings */
    size_t n, cap;
    int oom;
} kv;

static void kv_set(kv *m, const char *k, const char *v)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->k[i], k) == 0) {
            m->v[i] = v;
            return;
        }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        const char **nk = realloc(m->k, cap * sizeof *nk);
        if (nk)
            m->k = nk;
        const char **nv = nk ? realloc(m->v, cap * sizeof *nv) : NULL;
        if (!nv) {
            m->oom = 1;
            return;
        }
        m->v = nv;
        m->cap = cap;
    }
    m->k[m->n] = k;
    m->v[m->n++] = v;
}

typedef struct kv_ctx {
    const trellis_host *h;
    kv *m;
    const char *prefix; /* only keys with this prefix; NULL: all */
} kv_ctx;

static int kv_member(const char *key, const trellis_value *v, void *ud)
{
    kv_ctx *x = ud;
    const char *s = values_scalar_text(x->h, v);
    if (s && (!x->prefix || strncmp(key, x->prefix, strlen(x->prefix)) == 0))
        kv_set(x->m, key, s);
    return 0;
}

static void put_kv(buf *b, const char *field, const kv *m)
{
    put_json_string(b, field);
    puts_(b, ":{");
    for (size_t i = 0; i < m->n; i++) {
        if (i)
            put(b, ",", 1);
        put_json_string(b, m->k[i]);
        put(b, ":", 1);
        put_json_string(b, m->v[i]);
    }
    put(b, "}", 1);
}

/* The template's map, then (an Exclusive purpose) the request's
 * metadata.open-control-plane.io/ members, which win. */
static void put_metadata_map(const trellis_host *h, buf *b, const char *field,
                             const trellis_value *tmpl, const trellis_object *w, int inherit,
                             const char *extra_key, const char *extra_value)
{
    kv m = {NULL, NULL, 0, 0, 0};
    kv_ctx x = {h, &m, NULL};
    if (tmpl)
        h->value_foreach(tmpl, kv_member, &x);
    if (extra_key && !(tmpl && h->value_get(tmpl, extra_key)))
        kv_set(&m, extra_key, extra_value);
    const trellis_value *own =
        inherit ? h->object_get(w, strcmp(field, "labels") == 0 ? "metadata.labels"
                                                                : "metadata.annotations")
                : NULL;
    x.prefix = OMCP_METADATA_PREFIX;
    if (own && h->value_type(own) == TRELLIS_VALUE_MAP)
        h->value_foreach(own, kv_member, &x);
    put_kv(b, field, &m);
    b->oom |= m.oom;
    free(m.k);
    free(m.v);
}

typedef struct spec_ctx {
    const trellis_host *h;
    buf *b;
} spec_ctx;

static int spec_member(const char *key, const trellis_value *v, void *ud)
{
    spec_ctx *x = ud;
    if (strcmp(key, "purposes") == 0)
        return 0;
    put_json_string(x->b, key);
    put(x->b, ":", 1);
    put_value(x->h, x->b, v);
    put(x->b, ",", 1);
    return 0;
}

/* The template's spec with the purpose added to spec.purposes, as a JSON
 * object. */
static void put_spec(const trellis_host *h, buf *b, const omcp_purpose *p)
{
    spec_ctx x = {h, b};
    puts_(b, "{");
    h->value_foreach(p->spec, spec_member, &x);
    puts_(b, "\"purposes\":[");
    const trellis_value *ps = h->value_get(p->spec, "purposes");
    int have = 0;
    size_t n = ps && h->value_type(ps) == TRELLIS_VALUE_LIST ? h->value_len(ps) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = str_at(h, ps, i);
        if (!s)
            continue;
        if (b->s[b->n - 1] != '[')
            put(b, ",", 1);
        put_json_string(b, s);
        have |= strcmp(s, p->name) == 0;
    }
    if (!have) {
        if (b->s[b->n - 1] != '[')
            put(b, ",", 1);
        put_json_string(b, p->name);
    }
    puts_(b, "]}");
}

char *omcp_finalizers_json(const trellis_host *h, const trellis_object *o, const char *const *drop,
                           size_t n_drop, const char *add)
{
    buf b = {0};
    puts_(&b, "[");
    const trellis_value *f = h->object_get(o, "metadata.finalizers");
    size_t k = 0;
    for (size_t i = 0; f && i < h->value_len(f); i++) {
        const char *s = h->value_string(h->value_at(f, i));
        size_t j = 0;
        while (s && j < n_drop && strcmp(drop[j], s) != 0)
            j++;
        if (!s || j < n_drop || (add && strcmp(s, add) == 0))
            continue; /* dropped, or added below once */
        if (k++)
            puts_(&b, ",");
        put_json_string(&b, s);
    }
    if (add) {
        if (k)
            puts_(&b, ",");
        put_json_string(&b, add);
    }
    puts_(&b, "]");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *omcp_spec_json(const omcp_config *c, const omcp_purpose *p)
{
    buf b = {0};
    put_spec(c->h, &b, p);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

typedef struct edits_ctx {
    const trellis_host *h;
    const char *field;
    trellis_edit *e;
    char **paths;
    size_t n, max;
} edits_ctx;

static void add_set(edits_ctx *x, const char *key, const char *value)
{
    if (x->n == x->max)
        return;
    char *path = malloc(strlen(x->field) + strlen(key) + 5);
    if (!path)
        return;
    sprintf(path, "%s[\"%s\"]", x->field, key);
    x->paths[x->n] = path;
    x->e[x->n++] = (trellis_edit){TRELLIS_EDIT_SET, path, value};
}

static int set_member(const char *key, const trellis_value *v, void *ud)
{
    edits_ctx *x = ud;
    const char *s = x->h->value_string(v);
    if (s && !strchr(key, '"'))
        add_set(x, key, s);
    return 0;
}

size_t omcp_template_label_edits(const omcp_config *c, const omcp_purpose *p, trellis_edit *e,
                                 char **paths, size_t max)
{
    const trellis_host *h = c->h;
    edits_ctx x = {h, "metadata.labels", e, paths, 0, max};
    if (p->labels)
        h->value_foreach(p->labels, set_member, &x);
    if (!(p->labels && h->value_get(p->labels, OMCP_DELETE_LABEL)))
        add_set(&x, OMCP_DELETE_LABEL, "true");
    x.field = "metadata.annotations";
    if (p->annotations)
        h->value_foreach(p->annotations, set_member, &x);
    return x.n;
}

char *omcp_cluster_manifest(const omcp_config *c, const omcp_purpose *p, const trellis_object *w,
                            const char *api_version, const char *kind, const char *ns,
                            const char *name, const char *const *fins, size_t n_fins)
{
    const trellis_host *h = c->h;
    buf b = {0};
    puts_(&b, "{\"apiVersion\":");
    put_json_string(&b, api_version);
    puts_(&b, ",\"kind\":");
    put_json_string(&b, kind);
    puts_(&b, ",\"metadata\":{\"name\":");
    put_json_string(&b, name);
    puts_(&b, ",\"namespace\":");
    put_json_string(&b, ns);
    put(&b, ",", 1);
    put_metadata_map(h, &b, "labels", p->labels, w, p->exclusive, OMCP_DELETE_LABEL, "true");
    put(&b, ",", 1);
    put_metadata_map(h, &b, "annotations", p->annotations, w, p->exclusive, NULL, NULL);
    puts_(&b, ",\"finalizers\":[");
    for (size_t i = 0; i < n_fins; i++) {
        if (i)
            put(&b, ",", 1);
        put_json_string(&b, fins[i]);
    }
    puts_(&b, "]},\"spec\":");
    put_spec(h, &b, p);
    put(&b, "}", 1);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
