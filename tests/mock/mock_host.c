/*
 * mock_host.c - see mock_host.h.
 *
 * Objects are json-c trees: a trellis_value is a json_object. Paths
 * follow the host's syntax: a.b, a[0], a["k.e/y"].
 */
/* strndup, dlopen, strptime: POSIX 2008 + XSI; timegm: glibc (the file
 * stands alone, without config.h) */
#define _DEFAULT_SOURCE   /* timegm */
#define _XOPEN_SOURCE 700 /* strptime */

#include "mock_host.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#define MAX_PLUGINS 8
#define MAX_COUNTERS 16
#define MAX_TVALUES 32
#define MAX_OBJECTS 4096

struct trellis_object {
    json_object *root;
    const char *kind, *api, *ns, *name, *uid;
    char *key; /* "ns/name", or name when cluster-scoped */
    void *data[MAX_PLUGINS];
    char *prepare_error[MAX_PLUGINS];
    int64_t counters[MAX_PLUGINS][MAX_COUNTERS];
    int64_t tvalues[MAX_PLUGINS][MAX_TVALUES];
    /* as a target */
    const trellis_object *wl[64];
    size_t n_wl;
    int64_t sums[MAX_PLUGINS][MAX_COUNTERS];
};

struct trellis_target {
    trellis_object *o;
};

typedef struct arg {
    const trellis_arg_spec *spec;
    char *s;
    int64_t i;
    double d;
    char **list;
    size_t n_list;
    json_object *doc; /* DOCUMENT: the value itself (JSON only in the mock) */
} arg;

struct trellis_args {
    arg *v;
    size_t n;
};

struct trellis_plugin {
    mock *m;
    int index;
    void *dl;
    const trellis_plugin_desc *desc;
    trellis_args args;
    int in_init;
    void *priv;
    void (*priv_free)(void *);
    trellis_prepare_fn prepare_workload, prepare_target;
    trellis_release_fn release;
    trellis_amounts_fn amounts, target_values;
    int n_counters, n_tvalues;
    trellis_less_fn less;
    trellis_pre_filter_fn pre_filter;
    trellis_filter_fn filter;
    trellis_filter_batch_fn filter_batch;
    trellis_filter_span_fn filter_span;
    trellis_filter_feasible_fn filter_feasible;
    trellis_post_filter_fn post_filter;
    trellis_pre_score_fn pre_score;
    trellis_score_fn score;
    trellis_score_batch_fn score_batch;
    trellis_score_span_fn score_span;
    trellis_normalize_fn normalize;
    trellis_reserve_fn reserve;
    trellis_unreserve_fn unreserve;
    trellis_permit_fn permit;
    trellis_bind_fn pre_bind, bind;
    trellis_post_bind_fn post_bind;
    trellis_eviction_fn eviction_check;
    trellis_equivalent_fn equivalent;
    trellis_pre_enqueue_fn pre_enqueue;
    trellis_finalize_fn finalize;
    trellis_target_lost_fn target_lost;
    trellis_decided_fn decided;
    trellis_review_candidates_fn review_candidates;
    unsigned events;
    int has_events;
    trellis_hint_fn hint;
    /* name_counters: NULL names until it is called (then owned) */
    char *counter_names[MAX_COUNTERS];
    trellis_unit counter_units[MAX_COUNTERS];
    int named;
    trellis_allocated_fn allocated;
};

struct trellis_cycle {
    mock *m;
    const trellis_object *w;
    struct trellis_target *targets;
    size_t n;
    void *slots[MAX_PLUGINS];
    void **arena;
    size_t n_arena;
    /* columns for the span hooks, per plugin of this cycle */
    void **data;
    int64_t *cols;
    /* mock_filter_feasible: the plugin whose hook runs, and where its
     * rejections (cycle_reject) go */
    const trellis_plugin *ff;
    int *ff_codes;
    trellis_status *ff_st;
    /* mock_review_candidates: a review runs (no second one inside it) */
    int in_review;
    /* cycle_narrow: in_set[i] whether target i is left in (NULL: not
     * narrowed) */
    unsigned char *in_set;
};

typedef struct written {
    char *ns, *name, *path, *value;
} written;

struct mock {
    trellis_host table;
    int minor;
    trellis_plugin *plugins[MAX_PLUGINS];
    size_t n_plugins;
    trellis_object *objects[MAX_OBJECTS];
    size_t n_objects;
    written *writes;
    size_t n_writes;
    size_t logged[4];
    int64_t now_ms;   /* mock_set_now */
    int64_t retry_at; /* the last cycle's earliest cycle_retry_at, 0: none */
    /* several targets: what the workload holds (mock_set_held), and what
     * the last cycle's plugin said (cycle_want, cycle_release,
     * cycle_requeue_now, cycle_note) */
    const char *held[64];
    const trellis_object *held_obj[64]; /* their binding objects, or NULL */
    size_t n_held;
    uint32_t want;
    char *released[64];
    size_t n_released;
    char *reconsidered[64];
    size_t n_reconsidered;
    int requeue_now;
    long narrowed; /* the last cycle's narrowed set size, -1 when none */
    char *notes[64];
    size_t n_notes;
};

/* ---- arguments --------------------------------------------------------- */

static void arg_free(arg *a)
{
    json_object_put(a->doc);
    free(a->s);
    for (size_t i = 0; i < a->n_list; i++)
        free(a->list[i]);
    free(a->list);
}

static void list_add(arg *a, const char *s, size_t n)
{
    a->list = realloc(a->list, (a->n_list + 1) * sizeof *a->list);
    a->list[a->n_list] = strndup(s, n);
    a->n_list++;
}

/* A default written as text, as the host reads it ("a, b" for a list). */
static int arg_from_text(arg *a, const char *text)
{
    char *end;
    switch (a->spec->type) {
    case TRELLIS_ARG_STRING:
        a->s = strdup(text);
        return 0;
    case TRELLIS_ARG_INT:
        a->i = strtoll(text, &end, 10);
        return *text && !*end ? 0 : -1;
    case TRELLIS_ARG_BOOL:
        a->i = strcmp(text, "true") == 0;
        return a->i || strcmp(text, "false") == 0 ? 0 : -1;
    case TRELLIS_ARG_DOUBLE:
        a->d = strtod(text, &end);
        return *text && !*end ? 0 : -1;
    case TRELLIS_ARG_STRING_LIST:
        for (const char *p = text; *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            while (n && *p == ' ')
                p++, n--;
            while (n && p[n - 1] == ' ')
                n--;
            if (n)
                list_add(a, p, n);
            if (!e)
                break;
            p = e + 1;
        }
        return 0;
    case TRELLIS_ARG_DOCUMENT:
        /* the host reads YAML too; the mock reads a JSON default only */
        a->doc = json_tokener_parse(text);
        return a->doc ? 0 : -1;
    }
    return -1;
}

static int arg_from_json(arg *a, json_object *j)
{
    json_type t = json_object_get_type(j);
    switch (a->spec->type) {
    case TRELLIS_ARG_STRING:
        if (t != json_type_string)
            return -1;
        free(a->s);
        a->s = strdup(json_object_get_string(j));
        return 0;
    case TRELLIS_ARG_INT:
        if (t != json_type_int)
            return -1;
        a->i = json_object_get_int64(j);
        return 0;
    case TRELLIS_ARG_BOOL:
        if (t != json_type_boolean)
            return -1;
        a->i = json_object_get_boolean(j);
        return 0;
    case TRELLIS_ARG_DOUBLE:
        if (t != json_type_double && t != json_type_int)
            return -1;
        a->d = json_object_get_double(j);
        return 0;
    case TRELLIS_ARG_STRING_LIST:
        if (t != json_type_array)
            return -1;
        for (size_t i = 0; i < a->n_list; i++)
            free(a->list[i]);
        a->n_list = 0;
        for (size_t i = 0; i < json_object_array_length(j); i++) {
            json_object *e = json_object_array_get_idx(j, i);
            if (json_object_get_type(e) != json_type_string)
                return -1;
            list_add(a, json_object_get_string(e), strlen(json_object_get_string(e)));
        }
        return 0;
    case TRELLIS_ARG_DOCUMENT: /* any JSON value is the document */
        json_object_put(a->doc);
        a->doc = json_object_get(j);
        return 0;
    }
    return -1;
}

static int build_args(trellis_args *out, const trellis_arg_spec *spec, const char *json, char *err,
                      size_t errlen)
{
    json_object *given = json ? json_tokener_parse(json) : NULL;
    if (json && !json_object_is_type(given, json_type_object)) {
        snprintf(err, errlen, "arguments: not a JSON object: %s", json);
        json_object_put(given);
        return -1;
    }
    size_t n = 0;
    while (spec && spec[n].key)
        n++;
    out->v = calloc(n ? n : 1, sizeof *out->v);
    out->n = n;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        arg *a = &out->v[i];
        json_object *j = NULL;
        a->spec = &spec[i];
        if (given && json_object_object_get_ex(given, spec[i].key, &j)) {
            if (arg_from_json(a, j) < 0) {
                snprintf(err, errlen, "argument '%s' has the wrong type", spec[i].key);
                rc = -1;
            }
        } else if (!spec[i].default_value) {
            snprintf(err, errlen, "argument '%s' is required", spec[i].key);
            rc = -1;
        } else if (arg_from_text(a, spec[i].default_value) < 0) {
            snprintf(err, errlen, "default of '%s' does not parse", spec[i].key);
            rc = -1;
        }
    }
    if (given && rc == 0) {
        json_object_object_foreach(given, key, val)
        {
            (void)val;
            size_t i = 0;
            while (i < n && strcmp(spec[i].key, key) != 0)
                i++;
            if (i == n) {
                snprintf(err, errlen, "unknown argument '%s'", key);
                rc = -1;
                break;
            }
        }
    }
    json_object_put(given);
    return rc;
}

static const arg *find_arg(const trellis_args *a, const char *key)
{
    for (size_t i = 0; a && i < a->n; i++)
        if (strcmp(a->v[i].spec->key, key) == 0)
            return &a->v[i];
    return NULL;
}

static const char *h_arg_string(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING ? v->s : NULL;
}

static int64_t h_arg_int(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_INT ? v->i : 0;
}

static int h_arg_bool(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_BOOL ? (int)v->i : 0;
}

static double h_arg_double(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_DOUBLE ? v->d : 0;
}

static size_t h_arg_list_len(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING_LIST ? v->n_list : 0;
}

static const char *h_arg_list_at(const trellis_args *a, const char *key, size_t i)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING_LIST && i < v->n_list ? v->list[i] : NULL;
}

static const trellis_value *h_arg_document(const trellis_args *a, const char *key);

/* ---- values ------------------------------------------------------------ */

#define J(v) ((json_object *)(void *)(v))
#define V(j) ((const trellis_value *)(void *)(j))

static trellis_value_type h_value_type(const trellis_value *v)
{
    switch (json_object_get_type(J(v))) {
    case json_type_boolean:
        return TRELLIS_VALUE_BOOL;
    case json_type_int:
        return TRELLIS_VALUE_INT;
    case json_type_double:
        return TRELLIS_VALUE_DOUBLE;
    case json_type_string:
        return TRELLIS_VALUE_STRING;
    case json_type_array:
        return TRELLIS_VALUE_LIST;
    case json_type_object:
        return TRELLIS_VALUE_MAP;
    default:
        return TRELLIS_VALUE_NULL;
    }
}

static const char *h_value_string(const trellis_value *v)
{
    switch (json_object_get_type(J(v))) {
    case json_type_boolean:
        return json_object_get_boolean(J(v)) ? "true" : "false";
    case json_type_int:
    case json_type_double:
    case json_type_string:
        return json_object_get_string(J(v));
    default:
        return NULL;
    }
}

static int h_value_int(const trellis_value *v, int64_t *out)
{
    json_type t = json_object_get_type(J(v));
    if (t == json_type_int) {
        *out = json_object_get_int64(J(v));
        return 0;
    }
    if (t == json_type_string) {
        const char *s = json_object_get_string(J(v));
        char *end;
        long long n = strtoll(s, &end, 10);
        if (*s && !*end && (*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) {
            *out = n;
            return 0;
        }
    }
    return -1;
}

static int h_value_double(const trellis_value *v, double *out)
{
    json_type t = json_object_get_type(J(v));
    if (t != json_type_double && t != json_type_int)
        return -1;
    *out = json_object_get_double(J(v));
    return 0;
}

static int h_value_bool(const trellis_value *v, int *out)
{
    json_type t = json_object_get_type(J(v));
    if (t == json_type_boolean) {
        *out = json_object_get_boolean(J(v));
        return 0;
    }
    if (t == json_type_string) {
        const char *s = json_object_get_string(J(v));
        if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
            *out = s[0] == 't';
            return 0;
        }
    }
    return -1;
}

static size_t h_value_len(const trellis_value *v)
{
    json_type t = json_object_get_type(J(v));
    if (t == json_type_array)
        return json_object_array_length(J(v));
    if (t == json_type_object)
        return (size_t)json_object_object_length(J(v));
    return 0;
}

static const trellis_value *h_value_at(const trellis_value *list, size_t i)
{
    if (!json_object_is_type(J(list), json_type_array) || i >= json_object_array_length(J(list)))
        return NULL;
    return V(json_object_array_get_idx(J(list), i));
}

static const trellis_value *h_value_get(const trellis_value *map, const char *key)
{
    json_object *out;
    if (!json_object_is_type(J(map), json_type_object) ||
        !json_object_object_get_ex(J(map), key, &out))
        return NULL;
    return V(out);
}

/* a.b[0]["k"]: the host's path syntax */
static const trellis_value *h_value_path(const trellis_value *v, const char *path)
{
    json_object *cur = J(v);
    const char *p = path;
    char key[512];
    if (!p)
        return NULL;
    int need_key = *p != '[' && *p != '\0';
    while (cur && (need_key || *p)) {
        if (need_key || *p == '.') {
            if (!need_key)
                p++;
            need_key = 0;
            size_t n = strcspn(p, ".[");
            if (n == 0 || n >= sizeof key)
                return NULL;
            memcpy(key, p, n);
            key[n] = '\0';
            p += n;
            cur = J(h_value_get(V(cur), key));
        } else if (*p == '[' && (p[1] == '"' || p[1] == '\'')) {
            char q = p[1];
            size_t n = 0;
            p += 2;
            while (*p && *p != q && n + 1 < sizeof key) {
                if (*p == '\\' && p[1])
                    p++;
                key[n++] = *p++;
            }
            key[n] = '\0';
            if (*p != q || p[1] != ']')
                return NULL;
            p += 2;
            cur = J(h_value_get(V(cur), key));
        } else if (*p == '[') {
            char *end;
            unsigned long long i = strtoull(p + 1, &end, 10);
            if (end == p + 1 || *end != ']')
                return NULL;
            p = end + 1;
            cur = J(h_value_at(V(cur), (size_t)i));
        } else {
            return NULL;
        }
    }
    return cur ? V(cur) : NULL;
}

static int h_value_foreach(const trellis_value *map,
                           int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud)
{
    if (!json_object_is_type(J(map), json_type_object))
        return 0;
    json_object_object_foreach(J(map), key, val)
    {
        int rc = cb(key, V(val), ud);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- objects ----------------------------------------------------------- */

static const char *str_at(json_object *root, const char *path)
{
    const char *s = h_value_string(h_value_path(V(root), path));
    return s ? s : "";
}

static const char *h_object_kind(const trellis_object *o)
{
    return o->kind;
}
static const char *h_object_api(const trellis_object *o)
{
    return o->api;
}
static const char *h_object_ns(const trellis_object *o)
{
    return o->ns;
}
static const char *h_object_name(const trellis_object *o)
{
    return o->name;
}
static const char *h_object_uid(const trellis_object *o)
{
    return o->uid;
}

static const trellis_value *h_object_get(const trellis_object *o, const char *path)
{
    return o ? h_value_path(V(o->root), path) : NULL;
}

static const char *h_object_label(const trellis_object *o, const char *key)
{
    return h_value_string(h_value_get(h_object_get(o, "metadata.labels"), key));
}

static const char *h_object_annotation(const trellis_object *o, const char *key)
{
    return h_value_string(h_value_get(h_object_get(o, "metadata.annotations"), key));
}

static void *h_object_data(const trellis_plugin *self, const trellis_object *o)
{
    return o ? o->data[self->index] : NULL;
}

/* ---- targets and cycles ------------------------------------------------ */

static const trellis_object *h_target_object(const trellis_target *t)
{
    return t->o;
}
static const char *h_target_name(const trellis_target *t)
{
    return t->o->name;
}
static const char *h_target_key(const trellis_target *t)
{
    return t->o->key;
}
static size_t h_target_workload_count(const trellis_target *t)
{
    return t->o->n_wl;
}

static const trellis_object *h_target_workload(const trellis_target *t, size_t i)
{
    return i < t->o->n_wl ? t->o->wl[i] : NULL;
}

static const int64_t *h_target_counters(const trellis_plugin *self, const trellis_target *t)
{
    return self->n_counters ? t->o->sums[self->index] : NULL;
}

static const int64_t *h_workload_counters(const trellis_plugin *self, const trellis_object *w)
{
    return self->n_counters ? w->counters[self->index] : NULL;
}

static void h_cycle_set(trellis_cycle *c, const trellis_plugin *self, void *data)
{
    c->slots[self->index] = data;
}

static void *h_cycle_get(const trellis_cycle *c, const trellis_plugin *self)
{
    return c->slots[self->index];
}

static void *h_cycle_alloc(trellis_cycle *c, size_t size)
{
    void *p = calloc(1, size ? size : 1);
    c->arena = realloc(c->arena, (c->n_arena + 1) * sizeof *c->arena);
    c->arena[c->n_arena++] = p;
    return p;
}

static size_t h_cycle_target_count(const trellis_cycle *c)
{
    return c->n;
}

static const trellis_target *h_cycle_target(const trellis_cycle *c, size_t i)
{
    return i < c->n ? &c->targets[i] : NULL;
}

static int h_cycle_target_code(const trellis_cycle *c, size_t i)
{
    (void)c;
    (void)i;
    return TRELLIS_SUCCESS;
}

static int h_cycle_filter_without(trellis_cycle *c, const trellis_target *t,
                                  const trellis_object *const *victims, size_t n,
                                  trellis_status *st)
{
    (void)c;
    (void)t;
    (void)victims;
    (void)n;
    if (st)
        snprintf(st->reason, sizeof st->reason, "NotInMock");
    return TRELLIS_ERROR;
}

static void *const *h_cycle_target_data(const trellis_cycle *c, const trellis_plugin *self)
{
    trellis_cycle *mc = (trellis_cycle *)c;
    if (!mc->data)
        mc->data = calloc(c->n ? c->n : 1, sizeof *mc->data);
    for (size_t i = 0; i < c->n; i++)
        mc->data[i] = c->targets[i].o->data[self->index];
    return mc->data;
}

/* One column of per-target numbers, fresh for each call (the mock keeps
 * them all until the cycle ends). */
static const int64_t *column(const trellis_cycle *c, const trellis_plugin *self, int k, int values)
{
    int64_t *col = h_cycle_alloc((trellis_cycle *)c, (c->n ? c->n : 1) * sizeof *col);
    for (size_t i = 0; i < c->n; i++)
        col[i] = values ? c->targets[i].o->tvalues[self->index][k]
                        : c->targets[i].o->sums[self->index][k];
    return col;
}

static const int64_t *h_cycle_target_values(const trellis_cycle *c, const trellis_plugin *self,
                                            int k)
{
    return k >= 0 && k < self->n_tvalues ? column(c, self, k, 1) : NULL;
}

static const int64_t *h_cycle_target_counter(const trellis_cycle *c, const trellis_plugin *self,
                                             int k)
{
    return k >= 0 && k < self->n_counters ? column(c, self, k, 0) : NULL;
}

/* ---- actions ----------------------------------------------------------- */

static int h_evict(trellis_cycle *c, const trellis_plugin *self, const trellis_object *victim,
                   const char *reason, char *err, size_t errlen)
{
    (void)c;
    (void)self;
    (void)reason;
    snprintf(err, errlen, "evict %s: not in the mock", victim->name);
    return -1;
}

static int h_create_target(trellis_cycle *c, const trellis_plugin *self, const char *json,
                           char *err, size_t errlen)
{
    (void)c;
    (void)self;
    (void)json;
    snprintf(err, errlen, "create_target: not in the mock");
    return -1;
}

static int h_nominate(trellis_cycle *c, const trellis_target *t)
{
    (void)c;
    (void)t;
    return -1;
}

static void record_write(mock *m, const char *ns, const char *name, const char *path,
                         const char *prefix, const char *value)
{
    m->writes = realloc(m->writes, (m->n_writes + 1) * sizeof *m->writes);
    written *w = &m->writes[m->n_writes++];
    w->ns = strdup(ns);
    w->name = strdup(name);
    w->path = strdup(path);
    w->value = malloc(strlen(prefix) + strlen(value ? value : "") + 1);
    sprintf(w->value, "%s%s", prefix, value ? value : "");
}

static int h_store_set_field(const trellis_plugin *self, const trellis_object *o, const char *path,
                             const char *value, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    record_write(self->m, o->ns, o->name, path, "", value);
    return 0;
}

static int h_store_patch(const trellis_plugin *self, const trellis_object *o,
                         const char *subresource, const trellis_edit *edits, size_t n, char *err,
                         size_t errlen)
{
    static const char *const prefix[] = {"", "", "", "+", "-"};
    (void)subresource;
    if (!o || n > TRELLIS_EDITS_MAX) {
        snprintf(err, errlen, "store_patch: bad arguments");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (edits[i].op < 0 || edits[i].op > TRELLIS_EDIT_LIST_REMOVE || !edits[i].path) {
            snprintf(err, errlen, "store_patch: edit %zu: bad op or no path", i);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++)
        record_write(self->m, o->ns, o->name, edits[i].path, prefix[edits[i].op],
                     edits[i].op == TRELLIS_EDIT_REMOVE ? NULL : edits[i].value);
    return 0;
}

static int h_store_create(const trellis_plugin *self, const char *json, char *err, size_t errlen)
{
    json_object *root = json ? json_tokener_parse(json) : NULL;
    const char *name = root ? str_at(root, "metadata.name") : "";
    if (!*name) {
        snprintf(err, errlen, "store_create: not a manifest with metadata.name");
        json_object_put(root);
        return -1;
    }
    record_write(self->m, str_at(root, "metadata.namespace"), name, "(created)", "", json);
    json_object_put(root);
    return 0;
}

static int h_store_delete(const trellis_plugin *self, const trellis_object *o, char *err,
                          size_t errlen)
{
    (void)err;
    (void)errlen;
    record_write(self->m, o->ns, o->name, "(deleted)", "", NULL);
    return 0;
}

static int h_permit(const trellis_plugin *self, const char *ns, const char *name)
{
    (void)self;
    (void)ns;
    (void)name;
    return -1;
}

static int h_permit_reject(const trellis_plugin *self, const char *ns, const char *name,
                           const char *reason)
{
    (void)reason;
    return h_permit(self, ns, name);
}

static const trellis_object *h_lookup_object(const trellis_plugin *self, const char *kind,
                                             const char *ns, const char *name)
{
    mock *m = self->m;
    for (size_t i = 0; i < m->n_objects; i++) {
        const trellis_object *o = m->objects[i];
        if (strcmp(o->kind, kind) == 0 && strcmp(o->ns, ns ? ns : "") == 0 &&
            strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

static int h_foreach_object(const trellis_plugin *self, const char *kind, const char *ns,
                            int (*cb)(const trellis_object *o, void *ud), void *ud)
{
    mock *m = self->m;
    for (size_t i = 0; i < m->n_objects; i++) {
        const trellis_object *o = m->objects[i];
        if (strcmp(o->kind, kind) != 0 || (ns && strcmp(o->ns, ns) != 0))
            continue;
        int rc = cb(o, ud);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- instance ---------------------------------------------------------- */

static void h_set_private(trellis_plugin *self, void *data, void (*free_fn)(void *))
{
    if (self->priv_free && self->priv && self->priv != data)
        self->priv_free(self->priv);
    self->priv = data;
    self->priv_free = free_fn;
}

static void *h_get_private(const trellis_plugin *self)
{
    return self->priv;
}
static const char *h_profile_name(const trellis_plugin *self)
{
    (void)self;
    return "mock";
}

static const char *h_binding_field(const trellis_plugin *self)
{
    (void)self;
    return "spec.nodeName";
}

static void h_log(const trellis_plugin *self, trellis_log_level level, const char *fmt, ...)
{
    if (level <= TRELLIS_LOG_DEBUG)
        self->m->logged[level]++;
    if (getenv("MOCK_VERBOSE")) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "[%s] ", self->desc->name);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
}

static int h_status(trellis_status *st, trellis_code code, const char *reason, const char *fmt, ...)
{
    if (!st)
        return code;
    st->code = code;
    snprintf(st->reason, sizeof st->reason, "%s", reason ? reason : "");
    st->message[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->message, sizeof st->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* registration: init only, once per hook */
#define REG(name, field, type)                                                                     \
    static int name(trellis_plugin *self, type fn)                                                 \
    {                                                                                              \
        if (!self->in_init || !fn || self->field)                                                  \
            return -1;                                                                             \
        self->field = fn;                                                                          \
        return 0;                                                                                  \
    }
REG(r_prepare_workload, prepare_workload, trellis_prepare_fn)
REG(r_prepare_target, prepare_target, trellis_prepare_fn)
REG(r_release, release, trellis_release_fn)
REG(r_queue_sort, less, trellis_less_fn)
REG(r_pre_filter, pre_filter, trellis_pre_filter_fn)
REG(r_filter, filter, trellis_filter_fn)
REG(r_filter_batch, filter_batch, trellis_filter_batch_fn)
REG(r_filter_span, filter_span, trellis_filter_span_fn)
REG(r_post_filter, post_filter, trellis_post_filter_fn)
REG(r_filter_feasible, filter_feasible, trellis_filter_feasible_fn)
REG(r_pre_score, pre_score, trellis_pre_score_fn)
REG(r_score, score, trellis_score_fn)
REG(r_score_batch, score_batch, trellis_score_batch_fn)
REG(r_score_span, score_span, trellis_score_span_fn)
REG(r_normalize, normalize, trellis_normalize_fn)
REG(r_reserve, reserve, trellis_reserve_fn)
REG(r_unreserve, unreserve, trellis_unreserve_fn)
REG(r_permit, permit, trellis_permit_fn)
REG(r_pre_bind, pre_bind, trellis_bind_fn)
REG(r_bind, bind, trellis_bind_fn)
REG(r_post_bind, post_bind, trellis_post_bind_fn)
REG(r_eviction_check, eviction_check, trellis_eviction_fn)
REG(r_equivalent, equivalent, trellis_equivalent_fn)
REG(r_pre_enqueue, pre_enqueue, trellis_pre_enqueue_fn)
REG(r_finalize, finalize, trellis_finalize_fn)
REG(r_target_lost, target_lost, trellis_target_lost_fn)
REG(r_decided, decided, trellis_decided_fn)
REG(r_review_candidates, review_candidates, trellis_review_candidates_fn)
#undef REG

static int r_counters(trellis_plugin *self, int n, trellis_amounts_fn fn)
{
    if (!self->in_init || !fn || n < 1 || n > MAX_COUNTERS || self->n_counters)
        return -1;
    self->n_counters = n;
    self->amounts = fn;
    return 0;
}

static int r_target_values(trellis_plugin *self, int n, trellis_amounts_fn fn)
{
    if (!self->in_init || !fn || n < 1 || n > MAX_TVALUES || self->n_tvalues)
        return -1;
    self->n_tvalues = n;
    self->target_values = fn;
    return 0;
}

static int r_events(trellis_plugin *self, unsigned events, trellis_hint_fn fn)
{
    if (!self->in_init || (events & ~(unsigned)TRELLIS_EV_ALL))
        return -1;
    self->events |= events;
    self->has_events = 1;
    self->hint = fn;
    return 0;
}

/* ---- the clock (1.4) ---------------------------------------------------- */

static int64_t h_clock_now(const trellis_plugin *self)
{
    return self ? self->m->now_ms : 0;
}

/* RFC 3339 with glibc's strptime and timegm: a second reading of the
 * format, independent of the host's. */
static int h_time_parse(const char *text, int64_t *ms)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = text ? strptime(text, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!p)
        return -1;
    int64_t frac = 0, scale = 100;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        off = (int64_t)((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
              ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
        if (*p == '-')
            off = -off;
        p += 6;
    } else {
        return -1;
    }
    if (*p || !ms)
        return -1;
    *ms = ((int64_t)timegm(&tm) - off) * 1000 + frac;
    return 0;
}

static int h_store_bind(const trellis_plugin *self, const trellis_object *w,
                        const trellis_target *t, char *err, size_t errlen)
{
    if (!w || !t) {
        snprintf(err, errlen, "store_bind: no workload or target");
        return -1;
    }
    /* the mock's binding model: the target's key into spec.nodeName */
    record_write(self->m, w->ns, w->name, h_binding_field(self), "", t->o->key);
    return 0;
}

/* The mock records the placement as store_bind does, then each edit as
 * a write of the workload. */
static int h_store_bind_edits(const trellis_plugin *self, const trellis_object *w,
                              const trellis_target *t, const trellis_edit *edits, size_t n,
                              char *err, size_t errlen)
{
    if (n > TRELLIS_EDITS_MAX || (n && !edits)) {
        snprintf(err, errlen, "store_bind_edits: bad arguments");
        return -1;
    }
    if (h_store_bind(self, w, t, err, errlen) < 0)
        return -1;
    static const char *const prefix[] = {"", "", "", "+", "-"};
    for (size_t i = 0; i < n; i++) {
        if (edits[i].op < 0 || edits[i].op > TRELLIS_EDIT_LIST_REMOVE || !edits[i].path)
            return -1;
        record_write(self->m, w->ns, w->name, edits[i].path, prefix[edits[i].op],
                     edits[i].op == TRELLIS_EDIT_REMOVE ? NULL : edits[i].value);
    }
    return 0;
}

static const trellis_value *h_arg_document(const trellis_args *a, const char *key)
{
    const arg *v = find_arg(a, key);
    return v && v->spec->type == TRELLIS_ARG_DOCUMENT && v->doc ? V(v->doc) : NULL;
}

/* The mock's documents come from JSON arguments, without a source text:
 * it names them "(inline)" and knows no line. */
static int h_arg_document_where(const trellis_args *a, const char *key, const char *const *path,
                                size_t depth, char *buf, size_t len)
{
    (void)path;
    (void)depth;
    if (!h_arg_document(a, key))
        return -1;
    if (buf && len)
        snprintf(buf, len, "(inline)");
    return 0;
}

static void h_cycle_retry_at(trellis_cycle *c, int64_t ms)
{
    if (c && ms > c->m->now_ms && (!c->m->retry_at || ms < c->m->retry_at))
        c->m->retry_at = ms;
}

static void h_cycle_note(trellis_cycle *c, const trellis_plugin *self, const char *fmt, ...)
{
    if (!c || !self || !fmt || c->m->n_notes >= 64)
        return;
    char text[TRELLIS_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    c->m->notes[c->m->n_notes++] = strdup(text);
}

static void h_cycle_want(trellis_cycle *c, uint32_t n)
{
    if (c)
        c->m->want = n;
}

static size_t h_cycle_held_count(const trellis_cycle *c)
{
    return c ? c->m->n_held : 0;
}

static const char *h_cycle_held(const trellis_cycle *c, size_t i)
{
    return c && i < c->m->n_held ? c->m->held[i] : NULL;
}

/* Put target on list v (released or reconsidered) once: 0, or -1. */
static int give_up(mock *m, const char *target, char **v, size_t *n)
{
    if (!m || !target || *n >= 64)
        return -1;
    for (size_t i = 0; i < m->n_released; i++)
        if (strcmp(m->released[i], target) == 0)
            return -1;
    for (size_t i = 0; i < m->n_reconsidered; i++)
        if (strcmp(m->reconsidered[i], target) == 0)
            return -1;
    for (size_t i = 0; i < m->n_held; i++) {
        if (strcmp(m->held[i], target) == 0) {
            v[(*n)++] = strdup(target);
            return 0;
        }
    }
    return -1;
}

static int h_cycle_release(trellis_cycle *c, const trellis_plugin *self, const char *target,
                           const char *reason)
{
    (void)self;
    (void)reason;
    mock *m = c ? c->m : NULL;
    return m ? give_up(m, target, m->released, &m->n_released) : -1;
}

static int h_cycle_reconsider(trellis_cycle *c, const trellis_plugin *self, const char *target,
                              const char *reason)
{
    (void)self;
    (void)reason;
    mock *m = c ? c->m : NULL;
    return m ? give_up(m, target, m->reconsidered, &m->n_reconsidered) : -1;
}

/* The mock's cycles pick nothing: a plugin's decided hook sees no picks,
 * every held target kept but those given up, and verdicts as they were
 * filtered. */
static size_t h_cycle_pick_count(const trellis_cycle *c)
{
    (void)c;
    return 0;
}

static const trellis_target *h_cycle_pick(const trellis_cycle *c, size_t i)
{
    (void)c;
    (void)i;
    return NULL;
}

static int h_cycle_held_kept(const trellis_cycle *c, size_t i)
{
    mock *m = c ? c->m : NULL;
    if (!m || i >= m->n_held)
        return 0;
    for (size_t k = 0; k < m->n_released; k++)
        if (strcmp(m->released[k], m->held[i]) == 0)
            return 0;
    for (size_t k = 0; k < m->n_reconsidered; k++)
        if (strcmp(m->reconsidered[k], m->held[i]) == 0)
            return 0;
    return 1;
}

static int h_cycle_target_status(trellis_cycle *c, size_t i, trellis_status *st)
{
    (void)c;
    (void)i;
    if (st)
        memset(st, 0, sizeof *st);
    return TRELLIS_SUCCESS;
}

static const trellis_object *h_cycle_held_object(const trellis_cycle *c, size_t i)
{
    return c && i < c->m->n_held ? c->m->held_obj[i] : NULL;
}

static void h_cycle_requeue_now(trellis_cycle *c)
{
    if (c)
        c->m->requeue_now = 1;
}

/* The mock runs one plugin at a time: no ranking, no other plugin's
 * score. */
static int h_cycle_score(const trellis_cycle *c, const char *plugin, const trellis_target *t,
                         int64_t *out)
{
    (void)c;
    (void)plugin;
    (void)t;
    (void)out;
    return -1;
}

/* As the host: any position in range, intersected with an earlier set
 * (the mock does not check that the caller is in pre_filter). */
static int h_cycle_narrow(trellis_cycle *c, const trellis_plugin *self, const uint32_t *idx,
                          size_t n)
{
    if (!c || !self || (n && !idx))
        return -1;
    for (size_t k = 0; k < n; k++)
        if (idx[k] >= c->n)
            return -1;
    unsigned char *set = calloc(c->n ? c->n : 1, 1);
    if (!set)
        return -1;
    for (size_t k = 0; k < n; k++)
        set[idx[k]] = 1;
    long count = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->in_set)
            set[i] &= c->in_set[i];
        count += set[i];
    }
    free(c->in_set);
    c->in_set = set;
    c->m->narrowed = count;
    return 0;
}

/* Checked as the host checks them. */
/* Only in mock_filter_feasible, by the plugin it runs, on a target not
 * rejected yet, with a rejection's code. */
static int h_cycle_reject(trellis_cycle *c, const trellis_plugin *self, const trellis_target *t,
                          const trellis_status *st)
{
    if (!c || !c->ff || c->ff != self || !t || !st ||
        (st->code != TRELLIS_UNSCHEDULABLE && st->code != TRELLIS_UNRESOLVABLE))
        return -1;
    size_t i = (size_t)(t - c->targets);
    if (t < c->targets || i >= c->n || c->ff_codes[i] != TRELLIS_SUCCESS)
        return -1;
    c->ff_codes[i] = st->code;
    if (c->ff_st)
        c->ff_st[i] = *st;
    return 0;
}

/* The mock has no profile: no other plugin reviews, so the candidates
 * stay as they are; refused inside a review and without a list. */
static int h_cycle_review_candidates(trellis_cycle *c, const trellis_plugin *self,
                                     trellis_candidate *cands, size_t *n, trellis_status *st)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!c || !self || !n || (*n && !cands) || c->in_review) {
        if (st) {
            st->code = TRELLIS_ERROR;
            snprintf(st->reason, sizeof st->reason, "ReviewRefused");
        }
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int h_name_counters(trellis_plugin *self, const char *const *names,
                           const trellis_unit *units, trellis_allocated_fn fn)
{
    if (!self || !self->in_init || !names || !units || self->named || !self->n_counters)
        return -1;
    for (int i = 0; i < self->n_counters; i++) {
        const char *q = names[i];
        size_t len = q ? strlen(q) : 1;
        if (len == 0 || len > 63 || (q && ((int)units[i] < 0 || (int)units[i] > 2)))
            return -1;
        for (; q && *q; q++)
            if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
                  (*q >= '0' && *q <= '9') || strchr(".-_/", *q)))
                return -1;
    }
    for (int i = 0; i < self->n_counters; i++) {
        self->counter_names[i] = names[i] ? strdup(names[i]) : NULL;
        self->counter_units[i] = names[i] ? units[i] : TRELLIS_UNIT_COUNT;
    }
    self->named = 1;
    self->allocated = fn;
    return 0;
}

/* Checked as the host checks them; the mock reads every object anyway. */
static int h_declare_kinds(trellis_plugin *self, const char *const *kinds)
{
    if (!self || !self->in_init || !kinds)
        return -1;
    for (size_t i = 0; kinds[i]; i++) {
        if (!*kinds[i])
            return -1;
        for (const char *q = kinds[i]; *q; q++)
            if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
                return -1;
    }
    return 0;
}

void mock_set_held(mock *m, const char *const *keys, size_t n)
{
    mock_set_held_objects(m, keys, NULL, n);
}

void mock_set_held_objects(mock *m, const char *const *keys, const trellis_object *const *objs,
                           size_t n)
{
    m->n_held = n < 64 ? n : 64;
    for (size_t i = 0; i < m->n_held; i++) {
        m->held[i] = keys[i];
        m->held_obj[i] = objs ? objs[i] : NULL;
    }
}

const char *mock_reconsidered(const mock *m, size_t i)
{
    return i < m->n_reconsidered ? m->reconsidered[i] : NULL;
}

uint32_t mock_want(const mock *m)
{
    return m->want;
}

const char *mock_released(const mock *m, size_t i)
{
    return i < m->n_released ? m->released[i] : NULL;
}

int mock_requeue_now(const mock *m)
{
    return m->requeue_now;
}

const char *mock_note(const mock *m, size_t i)
{
    return i < m->n_notes ? m->notes[i] : NULL;
}

void mock_set_now(mock *m, int64_t ms)
{
    m->now_ms = ms;
}

long mock_narrowed(const mock *m)
{
    return m->narrowed;
}

int64_t mock_retry_at(const mock *m)
{
    return m->retry_at;
}

/* The table of the newest minor; mock_new cuts it to the minor asked. */
static const trellis_host full = {
    .size = sizeof(trellis_host),
    .sdk_major = TRELLIS_SDK_MAJOR,
    .sdk_minor = TRELLIS_SDK_MINOR,
    .register_prepare_workload = r_prepare_workload,
    .register_prepare_target = r_prepare_target,
    .register_release = r_release,
    .declare_counters = r_counters,
    .register_queue_sort = r_queue_sort,
    .register_pre_filter = r_pre_filter,
    .register_filter = r_filter,
    .register_filter_batch = r_filter_batch,
    .register_post_filter = r_post_filter,
    .register_pre_score = r_pre_score,
    .register_score = r_score,
    .register_score_batch = r_score_batch,
    .register_normalize = r_normalize,
    .register_reserve = r_reserve,
    .register_unreserve = r_unreserve,
    .register_permit = r_permit,
    .register_pre_bind = r_pre_bind,
    .register_bind = r_bind,
    .register_post_bind = r_post_bind,
    .set_private = h_set_private,
    .get_private = h_get_private,
    .profile_name = h_profile_name,
    .binding_field = h_binding_field,
    .log = h_log,
    .status = h_status,
    .arg_string = h_arg_string,
    .arg_int = h_arg_int,
    .arg_bool = h_arg_bool,
    .arg_double = h_arg_double,
    .arg_list_len = h_arg_list_len,
    .arg_list_at = h_arg_list_at,
    .object_kind = h_object_kind,
    .object_api_version = h_object_api,
    .object_namespace = h_object_ns,
    .object_name = h_object_name,
    .object_uid = h_object_uid,
    .object_label = h_object_label,
    .object_annotation = h_object_annotation,
    .object_get = h_object_get,
    .object_data = h_object_data,
    .value_type = h_value_type,
    .value_string = h_value_string,
    .value_int = h_value_int,
    .value_double = h_value_double,
    .value_bool = h_value_bool,
    .value_len = h_value_len,
    .value_at = h_value_at,
    .value_get = h_value_get,
    .value_path = h_value_path,
    .value_foreach = h_value_foreach,
    .target_object = h_target_object,
    .target_name = h_target_name,
    .target_workload_count = h_target_workload_count,
    .target_workload = h_target_workload,
    .target_counters = h_target_counters,
    .workload_counters = h_workload_counters,
    .cycle_set = h_cycle_set,
    .cycle_get = h_cycle_get,
    .cycle_alloc = h_cycle_alloc,
    .cycle_target_count = h_cycle_target_count,
    .cycle_target = h_cycle_target,
    .cycle_target_code = h_cycle_target_code,
    .cycle_filter_without = h_cycle_filter_without,
    .evict = h_evict,
    .create_target = h_create_target,
    .nominate = h_nominate,
    .store_set_field = h_store_set_field,
    .permit_allow = h_permit,
    .permit_reject = h_permit_reject,
    .lookup_object = h_lookup_object,
    .foreach_object = h_foreach_object,
    .register_eviction_check = r_eviction_check,
    .register_events = r_events,
    .register_filter_span = r_filter_span,
    .register_score_span = r_score_span,
    .cycle_target_data = h_cycle_target_data,
    .declare_target_values = r_target_values,
    .cycle_target_values = h_cycle_target_values,
    .cycle_target_counter = h_cycle_target_counter,
    .register_equivalent = r_equivalent,
    .clock_now = h_clock_now,
    .time_parse = h_time_parse,
    .cycle_retry_at = h_cycle_retry_at,
    .target_key = h_target_key,
    .store_patch = h_store_patch,
    .store_create = h_store_create,
    .store_delete = h_store_delete,
    .register_pre_enqueue = r_pre_enqueue,
    .register_finalize = r_finalize,
    .arg_document = h_arg_document,
    .store_bind = h_store_bind,
    .register_target_lost = r_target_lost,
    .cycle_note = h_cycle_note,
    .cycle_want = h_cycle_want,
    .cycle_held_count = h_cycle_held_count,
    .cycle_held = h_cycle_held,
    .cycle_release = h_cycle_release,
    .cycle_requeue_now = h_cycle_requeue_now,
    .cycle_score = h_cycle_score,
    .declare_kinds = h_declare_kinds,
    .arg_document_where = h_arg_document_where,
    .cycle_held_object = h_cycle_held_object,
    .cycle_reconsider = h_cycle_reconsider,
    .store_bind_edits = h_store_bind_edits,
    .register_decided = r_decided,
    .cycle_pick_count = h_cycle_pick_count,
    .cycle_pick = h_cycle_pick,
    .cycle_held_kept = h_cycle_held_kept,
    .cycle_target_status = h_cycle_target_status,
    .name_counters = h_name_counters,
    .register_filter_feasible = r_filter_feasible,
    .cycle_reject = h_cycle_reject,
    .register_review_candidates = r_review_candidates,
    .cycle_review_candidates = h_cycle_review_candidates,
    .cycle_narrow = h_cycle_narrow,
};

/* How much of the table a host of SDK 1.<minor> has. */
static size_t table_size(int minor)
{
    switch (minor) {
    case 0:
        return offsetof(trellis_host, lookup_object);
    case 1:
        return offsetof(trellis_host, register_events);
    case 2:
        return offsetof(trellis_host, register_filter_span);
    case 3:
        return offsetof(trellis_host, clock_now);
    case 4:
        return offsetof(trellis_host, cycle_held_object);
    case 5:
        return offsetof(trellis_host, register_filter_feasible);
    case 6:
        return offsetof(trellis_host, register_review_candidates);
    default:
        return sizeof(trellis_host);
    }
}

mock *mock_new(int minor)
{
    mock *m = calloc(1, sizeof *m);
    if (minor < 0 || minor > TRELLIS_SDK_MINOR)
        minor = TRELLIS_SDK_MINOR;
    m->minor = minor;
    m->table = full;
    m->narrowed = -1;
    m->table.size = table_size(minor);
    m->table.sdk_minor = minor;
    /* what an older host does not have is not there */
    memset((char *)&m->table + m->table.size, 0, sizeof m->table - m->table.size);
    return m;
}

const trellis_host *mock_table(const mock *m)
{
    return &m->table;
}

static void object_free(mock *m, trellis_object *o)
{
    for (size_t k = 0; k < m->n_plugins; k++) {
        trellis_plugin *pl = m->plugins[k];
        if (o->data[k] && pl->release)
            pl->release(pl, o->data[k]);
        free(o->prepare_error[k]);
    }
    json_object_put(o->root);
    free(o->key);
    free(o);
}

void mock_free(mock *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_released; i++)
        free(m->released[i]);
    for (size_t i = 0; i < m->n_reconsidered; i++)
        free(m->reconsidered[i]);
    for (size_t i = 0; i < m->n_notes; i++)
        free(m->notes[i]);
    for (size_t i = 0; i < m->n_objects; i++)
        object_free(m, m->objects[i]);
    for (size_t k = 0; k < m->n_plugins; k++) {
        trellis_plugin *pl = m->plugins[k];
        if (pl->desc->fini)
            pl->desc->fini(pl);
        if (pl->priv_free)
            pl->priv_free(pl->priv);
        for (size_t i = 0; i < pl->args.n; i++)
            arg_free(&pl->args.v[i]);
        free(pl->args.v);
        for (int i = 0; i < MAX_COUNTERS; i++)
            free(pl->counter_names[i]);
        /* never dlclose, as the host */
        free(pl);
    }
    for (size_t i = 0; i < m->n_writes; i++) {
        free(m->writes[i].ns);
        free(m->writes[i].name);
        free(m->writes[i].path);
        free(m->writes[i].value);
    }
    free(m->writes);
    free(m);
}

static void *open_plugin(const char *name, char *err, size_t errlen)
{
    char path[4096];
    size_t len = strlen(name);
    if (len > 3 && strcmp(name + len - 3, ".so") == 0)
        return dlopen(name, RTLD_NOW | RTLD_LOCAL);
    const char *dirs = getenv("TRELLIS_PLUGIN_PATH");
    for (const char *p = dirs; p && *p;) {
        size_t n = strcspn(p, ":");
        snprintf(path, sizeof path, "%.*s/%s.so", (int)n, p, name);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (dl)
            return dl;
        p += n + (p[n] == ':');
    }
    snprintf(err, errlen, "%s.so not found in TRELLIS_PLUGIN_PATH (%s)", name,
             dirs ? dirs : "unset");
    return NULL;
}

trellis_plugin *mock_load(mock *m, const char *name, const char *args_json, char *err,
                          size_t errlen)
{
    if (m->n_plugins == MAX_PLUGINS) {
        snprintf(err, errlen, "the mock holds %d plugins at most", MAX_PLUGINS);
        return NULL;
    }
    err[0] = '\0';
    void *dl = open_plugin(name, err, errlen);
    if (!dl) {
        if (!err[0])
            snprintf(err, errlen, "%s", dlerror());
        return NULL;
    }
    trellis_plugin_entry_fn entry;
    *(void **)&entry = dlsym(dl, TRELLIS_PLUGIN_ENTRY);
    const trellis_plugin_desc *d = entry ? entry() : NULL;
    if (!d) {
        snprintf(err, errlen, "%s: no descriptor", name);
        return NULL;
    }
    if (d->sdk_major != TRELLIS_SDK_MAJOR || d->sdk_minor > m->minor ||
        d->size < offsetof(trellis_plugin_desc, fini) + sizeof d->fini) {
        snprintf(err, errlen, "%s: needs SDK %d.%d, the mock is a %d.%d host", name, d->sdk_major,
                 d->sdk_minor, TRELLIS_SDK_MAJOR, m->minor);
        return NULL;
    }
    trellis_plugin *pl = calloc(1, sizeof *pl);
    pl->m = m;
    pl->index = (int)m->n_plugins;
    pl->dl = dl;
    pl->desc = d;
    if (build_args(&pl->args, d->args, args_json, err, errlen) < 0) {
        for (size_t i = 0; i < pl->args.n; i++)
            arg_free(&pl->args.v[i]);
        free(pl->args.v);
        free(pl);
        return NULL;
    }
    m->plugins[m->n_plugins++] = pl;
    pl->in_init = 1;
    char ierr[512] = "";
    int rc = d->init(pl, &m->table, &pl->args, ierr, sizeof ierr);
    pl->in_init = 0;
    if (rc != 0) {
        snprintf(err, errlen, "%s: init failed: %s", name, ierr);
        return NULL; /* it stays in the list: mock_free runs its fini */
    }
    return pl;
}

int mock_registered(const trellis_plugin *pl, const char *hook)
{
    static const char *const names[] = {
        "prepare_workload", "prepare_target", "release",     "counters",
        "target_values",    "queue_sort",     "pre_filter",  "filter",
        "filter_batch",     "filter_span",    "post_filter", "filter_feasible",
        "pre_score",        "score",          "score_batch", "score_span",
        "normalize",        "reserve",        "unreserve",   "permit",
        "pre_bind",         "bind",           "post_bind",   "eviction_check",
        "equivalent",       "pre_enqueue",    "finalize",    "events",
        "review_candidates"};
    const int has[] = {pl->prepare_workload != NULL, pl->prepare_target != NULL,
                       pl->release != NULL,          pl->amounts != NULL,
                       pl->target_values != NULL,    pl->less != NULL,
                       pl->pre_filter != NULL,       pl->filter != NULL,
                       pl->filter_batch != NULL,     pl->filter_span != NULL,
                       pl->post_filter != NULL,      pl->filter_feasible != NULL,
                       pl->pre_score != NULL,        pl->score != NULL,
                       pl->score_batch != NULL,      pl->score_span != NULL,
                       pl->normalize != NULL,        pl->reserve != NULL,
                       pl->unreserve != NULL,        pl->permit != NULL,
                       pl->pre_bind != NULL,         pl->bind != NULL,
                       pl->post_bind != NULL,        pl->eviction_check != NULL,
                       pl->equivalent != NULL,       pl->pre_enqueue != NULL,
                       pl->finalize != NULL,         pl->has_events,
                       pl->review_candidates != NULL};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(names[i], hook) == 0)
            return has[i];
    return 0;
}

unsigned mock_events(const trellis_plugin *pl)
{
    return pl->events;
}

/* ---- objects ----------------------------------------------------------- */

static void prepare(mock *m, trellis_object *o, int as_workload)
{
    for (size_t k = 0; k < m->n_plugins; k++) {
        trellis_plugin *pl = m->plugins[k];
        trellis_prepare_fn fn = as_workload ? pl->prepare_workload : pl->prepare_target;
        int failed = 0;
        if (fn) {
            char perr[512] = "";
            void *data = NULL;
            if (fn(pl, o, &data, perr, sizeof perr) != 0) {
                failed = 1;
                o->prepare_error[k] = strdup(perr[0] ? perr : "malformed");
            }
            o->data[k] = data;
        }
        if (as_workload && pl->amounts)
            pl->amounts(pl, o, o->counters[k]);
        if (!as_workload && pl->target_values && !failed)
            pl->target_values(pl, o, o->tvalues[k]);
    }
}

trellis_object *mock_object(mock *m, const char *json, int as_workload, char *err, size_t errlen)
{
    json_object *root = json_tokener_parse(json);
    if (!json_object_is_type(root, json_type_object) || m->n_objects == MAX_OBJECTS) {
        snprintf(err, errlen, "not a JSON object (or too many objects): %.200s", json);
        json_object_put(root);
        return NULL;
    }
    trellis_object *o = calloc(1, sizeof *o);
    o->root = root;
    o->kind = str_at(root, "kind");
    o->api = str_at(root, "apiVersion");
    o->ns = str_at(root, "metadata.namespace");
    o->name = str_at(root, "metadata.name");
    o->uid = str_at(root, "metadata.uid");
    o->key = malloc(strlen(o->ns) + strlen(o->name) + 2);
    sprintf(o->key, "%s%s%s", o->ns, *o->ns ? "/" : "", o->name);
    m->objects[m->n_objects++] = o;
    if (as_workload >= 0)
        prepare(m, o, as_workload);
    return o;
}

const char *mock_prepare_error(const trellis_object *o, const trellis_plugin *pl)
{
    return o->prepare_error[pl->index] ? o->prepare_error[pl->index] : "";
}

void mock_assign(mock *m, trellis_object *t, trellis_object *w)
{
    if (t->n_wl < sizeof t->wl / sizeof *t->wl)
        t->wl[t->n_wl++] = w;
    for (size_t k = 0; k < m->n_plugins; k++)
        for (int c = 0; c < MAX_COUNTERS; c++)
            t->sums[k][c] += w->counters[k][c];
}

const char *mock_counter_name(const trellis_plugin *pl, int k, trellis_unit *unit)
{
    if (!pl->named || k < 0 || k >= pl->n_counters || !pl->counter_names[k])
        return NULL;
    *unit = pl->counter_units[k];
    return pl->counter_names[k];
}

void mock_allocated(trellis_plugin *pl, const trellis_object *t, int64_t *used,
                    int64_t *allocatable)
{
    for (int k = 0; k < pl->n_counters; k++) {
        used[k] = t->sums[pl->index][k];
        allocatable[k] = -1;
    }
    if (pl->allocated && !t->prepare_error[pl->index])
        pl->allocated(pl, t, t->wl, t->n_wl, used, allocatable);
}

/* ---- cycles ------------------------------------------------------------ */

static void cycle_start(trellis_cycle *c, mock *m, const trellis_object *w,
                        trellis_object *const *targets, size_t n)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    m->retry_at = 0;
    /* what a plugin says about the workload is the last cycle's */
    m->want = 1;
    m->requeue_now = 0;
    m->narrowed = -1;
    for (size_t i = 0; i < m->n_released; i++)
        free(m->released[i]);
    for (size_t i = 0; i < m->n_reconsidered; i++)
        free(m->reconsidered[i]);
    for (size_t i = 0; i < m->n_notes; i++)
        free(m->notes[i]);
    m->n_released = m->n_reconsidered = m->n_notes = 0;
    c->w = w;
    c->n = n;
    c->targets = calloc(n ? n : 1, sizeof *c->targets);
    for (size_t i = 0; i < n; i++)
        c->targets[i].o = targets[i];
}

static void cycle_end(trellis_cycle *c)
{
    for (size_t i = 0; i < c->n_arena; i++)
        free(c->arena[i]);
    free(c->arena);
    free(c->data);
    free(c->targets);
    free(c->in_set);
}

static const trellis_target *const *target_ptrs(trellis_cycle *c)
{
    const trellis_target **v = h_cycle_alloc(c, (c->n ? c->n : 1) * sizeof *v);
    for (size_t i = 0; i < c->n; i++)
        v[i] = &c->targets[i];
    return v;
}

/* The batch or span verdicts of pl over every target into pass. */
static void batch_pass(trellis_cycle *c, trellis_plugin *pl, uint64_t *pass, size_t words)
{
    for (size_t i = 0; i < words; i++)
        pass[i] = ~UINT64_C(0);
    if (c->n % 64)
        pass[words - 1] = (UINT64_C(1) << (c->n % 64)) - 1;
    for (size_t i = 0; c->in_set && i < c->n; i++)
        if (!c->in_set[i])
            pass[i / 64] &= ~(UINT64_C(1) << (i % 64));
    if (pl->filter_span)
        pl->filter_span(pl, c, c->w, 0, c->n, pass);
    else
        pl->filter_batch(pl, c, c->w, target_ptrs(c), c->n, pass);
}

int mock_filter(mock *m, trellis_plugin *pl, const trellis_object *w,
                trellis_object *const *targets, size_t n, int *codes, trellis_status *sts,
                char *err, size_t errlen)
{
    trellis_cycle c;
    trellis_status st;
    int rc = 0;
    cycle_start(&c, m, w, targets, n);
    memset(&st, 0, sizeof st);
    int pre = pl->pre_filter ? pl->pre_filter(pl, &c, w, &st) : TRELLIS_SUCCESS;
    if (pre == TRELLIS_ERROR) {
        snprintf(err, errlen, "pre_filter failed: %s", st.message);
        cycle_end(&c);
        return -1;
    }
    int skip = pre == TRELLIS_SKIP || !pl->filter;
    for (size_t i = 0; i < n; i++) {
        trellis_status *s = sts ? &sts[i] : &st;
        memset(s, 0, sizeof *s);
        if (pre == TRELLIS_UNSCHEDULABLE || pre == TRELLIS_UNRESOLVABLE) {
            codes[i] = pre;
            if (sts)
                *s = st;
        } else {
            codes[i] = skip ? TRELLIS_SUCCESS : pl->filter(pl, &c, w, &c.targets[i], s);
        }
        if (c.in_set && !c.in_set[i]) {
            /* left out: unresolvable, with the filter's reason, or the
             * host's words when it has none */
            if (codes[i] == TRELLIS_SUCCESS) {
                snprintf(s->reason, sizeof s->reason, "NotInPreFilterResult");
                snprintf(s->message, sizeof s->message, "didn't satisfy plugin(s) [%s]",
                         pl->desc->name);
            }
            codes[i] = TRELLIS_UNRESOLVABLE;
        }
    }
    if (!skip && pre == TRELLIS_SUCCESS && (pl->filter_batch || pl->filter_span)) {
        size_t words = (n + 63) / 64;
        uint64_t *pass = h_cycle_alloc(&c, (words ? words : 1) * sizeof *pass);
        if (n)
            batch_pass(&c, pl, pass, words);
        for (size_t i = 0; i < n && rc == 0; i++) {
            int batch_ok = (pass[i / 64] >> (i % 64)) & 1;
            if (batch_ok != (codes[i] == TRELLIS_SUCCESS)) {
                snprintf(err, errlen, "target %s: the %s filter says %s, the plain filter %d",
                         targets[i]->name, pl->filter_span ? "span" : "batch",
                         batch_ok ? "feasible" : "rejected", codes[i]);
                rc = -1;
            }
        }
    }
    cycle_end(&c);
    return rc;
}

int mock_filter_feasible(mock *m, trellis_plugin *pl, const trellis_object *w,
                         trellis_object *const *targets, size_t n, int *codes, trellis_status *sts,
                         char *err, size_t errlen)
{
    trellis_cycle c;
    trellis_status st;
    cycle_start(&c, m, w, targets, n);
    for (size_t i = 0; i < n; i++) {
        codes[i] = TRELLIS_SUCCESS;
        if (sts)
            memset(&sts[i], 0, sizeof sts[i]);
    }
    memset(&st, 0, sizeof st);
    int rc = TRELLIS_SUCCESS;
    if (pl->filter_feasible && n) {
        c.ff = pl;
        c.ff_codes = codes;
        c.ff_st = sts;
        rc = pl->filter_feasible(pl, &c, w, target_ptrs(&c), n, &st);
        c.ff = NULL;
    }
    if (rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE) {
        for (size_t i = 0; i < n; i++) {
            if (codes[i] != TRELLIS_SUCCESS)
                continue;
            codes[i] = rc;
            if (sts)
                sts[i] = st;
        }
    } else if (rc != TRELLIS_SUCCESS && rc != TRELLIS_SKIP) {
        snprintf(err, errlen, "filter_feasible failed: %s", st.message);
        cycle_end(&c);
        return -1;
    }
    cycle_end(&c);
    return 0;
}

int mock_review_candidates(mock *m, trellis_plugin *pl, const trellis_object *w,
                           trellis_object *const *targets, size_t nt, mock_candidate *cands,
                           size_t *n, trellis_status *st)
{
    trellis_cycle c;
    trellis_status tmp;
    if (!st)
        st = &tmp;
    memset(st, 0, sizeof *st);
    if (!pl->review_candidates || *n == 0)
        return TRELLIS_SKIP;
    cycle_start(&c, m, w, targets, nt);
    trellis_candidate *v = h_cycle_alloc(&c, *n * sizeof *v);
    for (size_t j = 0; j < *n; j++) {
        v[j].target = &c.targets[cands[j].target];
        v[j].victims = cands[j].victims;
        v[j].n_victims = cands[j].n_victims;
        v[j].pdb_violations = cands[j].pdb_violations;
    }
    size_t k = *n;
    c.in_review = 1;
    int rc = pl->review_candidates(pl, &c, w, v, &k, st);
    c.in_review = 0;
    if (rc == TRELLIS_SUCCESS) {
        for (size_t j = 0; j < k && j < *n; j++) {
            cands[j].target = (size_t)(v[j].target - c.targets);
            cands[j].n_victims = v[j].n_victims < MOCK_VICTIMS ? v[j].n_victims : MOCK_VICTIMS;
            for (size_t i = 0; i < cands[j].n_victims; i++)
                cands[j].victims[i] = v[j].victims[i];
            cands[j].pdb_violations = v[j].pdb_violations;
        }
        *n = k < *n ? k : *n;
    }
    cycle_end(&c);
    return rc;
}

int mock_score(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *const *targets,
               size_t n, int64_t *scores, char *err, size_t errlen)
{
    trellis_cycle c;
    trellis_status st;
    int rc = 0;
    cycle_start(&c, m, w, targets, n);
    memset(&st, 0, sizeof st);
    const trellis_target *const *tp = target_ptrs(&c);
    /* as in the host's cycle: the plugin's pre_filter has run before it
     * scores (what it counted there may be what it scores by) */
    int pf = pl->pre_filter ? pl->pre_filter(pl, &c, w, &st) : TRELLIS_SUCCESS;
    if (pf != TRELLIS_SUCCESS && pf != TRELLIS_SKIP) {
        snprintf(err, errlen,
                 "pre_filter returned %d (%s): the host scores no target after that; give "
                 "mock_score a workload the pre_filter lets through",
                 pf, st.message);
        cycle_end(&c);
        return -1;
    }
    int pre = pl->pre_score ? pl->pre_score(pl, &c, w, tp, n, &st) : TRELLIS_SUCCESS;
    if (pre == TRELLIS_SKIP || !pl->score) {
        memset(scores, 0, n * sizeof *scores);
        cycle_end(&c);
        return 0;
    }
    if (pre != TRELLIS_SUCCESS) {
        snprintf(err, errlen, "pre_score failed: %s", st.message);
        cycle_end(&c);
        return -1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (pl->score(pl, &c, w, tp[i], &scores[i], &st) != TRELLIS_SUCCESS) {
            snprintf(err, errlen, "score failed on %s: %s", targets[i]->name, st.message);
            rc = -1;
        }
    }
    if (rc == 0 && (pl->score_batch || pl->score_span) && n) {
        int64_t *raw = h_cycle_alloc(&c, n * sizeof *raw);
        if (pl->score_span) {
            uint32_t *idx = h_cycle_alloc(&c, n * sizeof *idx);
            for (size_t i = 0; i < n; i++)
                idx[i] = (uint32_t)i;
            pl->score_span(pl, &c, w, idx, n, raw);
        } else {
            pl->score_batch(pl, &c, w, tp, n, raw);
        }
        for (size_t i = 0; i < n && rc == 0; i++)
            if (raw[i] != scores[i]) {
                snprintf(err, errlen, "target %s: the %s score is %lld, the plain score %lld",
                         targets[i]->name, pl->score_span ? "span" : "batch", (long long)raw[i],
                         (long long)scores[i]);
                rc = -1;
            }
    }
    if (rc == 0 && pl->normalize && pl->normalize(pl, &c, w, tp, n, scores, &st) != 0) {
        snprintf(err, errlen, "normalize failed: %s", st.message);
        rc = -1;
    }
    cycle_end(&c);
    return rc;
}

int mock_hint(mock *m, trellis_plugin *pl, const trellis_object *w, unsigned event,
              const trellis_object *old_obj, const trellis_object *new_obj)
{
    (void)m;
    if (!pl->hint)
        return TRELLIS_QUEUE;
    return pl->hint(pl, w, event, old_obj, new_obj);
}

int mock_equivalent(trellis_plugin *pl, const trellis_object *a, const trellis_object *b)
{
    return pl->equivalent ? pl->equivalent(pl, a, b) : 1;
}

int mock_pre_enqueue(trellis_plugin *pl, const trellis_object *w)
{
    return pl->pre_enqueue ? pl->pre_enqueue(pl, w) : TRELLIS_SUCCESS;
}

int mock_finalize(trellis_plugin *pl, const trellis_object *w, trellis_status *st)
{
    memset(st, 0, sizeof *st);
    return pl->finalize ? pl->finalize(pl, w, st) : TRELLIS_SUCCESS;
}

int mock_less(trellis_plugin *pl, const trellis_object *a, const trellis_object *b)
{
    return pl->less ? pl->less(pl, a, 1, b, 2) : 0;
}

int mock_eviction_check(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *t,
                        trellis_status *st)
{
    (void)m;
    struct trellis_target tt = {t};
    memset(st, 0, sizeof *st);
    return pl->eviction_check ? pl->eviction_check(pl, w, &tt, st) : TRELLIS_SUCCESS;
}

int mock_bind(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *t,
              trellis_status *st)
{
    trellis_cycle c;
    cycle_start(&c, m, w, &t, 1);
    memset(st, 0, sizeof *st);
    int rc = pl->bind ? pl->bind(pl, &c, w, &c.targets[0], st) : TRELLIS_SKIP;
    cycle_end(&c);
    return rc;
}

const char *mock_written(const mock *m, const char *ns, const char *name, const char *path)
{
    for (size_t i = m->n_writes; i-- > 0;) {
        const written *w = &m->writes[i];
        if (strcmp(w->ns, ns) == 0 && strcmp(w->name, name) == 0 && strcmp(w->path, path) == 0)
            return w->value;
    }
    return NULL;
}

size_t mock_logged(const mock *m, trellis_log_level level)
{
    size_t n = 0;
    for (int l = 0; l <= (int)level && l < 4; l++)
        n += m->logged[l];
    return n;
}
