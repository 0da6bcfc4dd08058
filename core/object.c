/*
 * object.c - trellis objects and the value accessors behind the SDK.
 *
 * An object wraps one json-c tree (from a manifest, a store or a plugin's
 * create_target) with its identity and provenance. Values are json-c nodes
 * handed out as trellis_value pointers. Plugins read values from worker
 * threads, so nothing here may write to a tree after object_new: json-c
 * renders the text of numbers into a buffer inside the node, which is why
 * object_new "freezes" every number once, on the main thread, by attaching
 * its text as the node's user data. Path lookups parse the path in place
 * and never allocate.
 */
#include "config.h"

#include "object.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Keys up to this length are looked up through json-c's hash table from a
 * stack copy; longer ones by a linear scan of the map. */
#define KEYBUF 256

static const char *type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a bool";
    case json_type_double:
    case json_type_int:
        return "a number";
    case json_type_string:
        return "a string";
    case json_type_array:
        return "a list";
    case json_type_object:
        return "a map";
    }
    return "unknown";
}

/* Attach the text of every number to its node, so that value_string never
 * has to render it (json-c renders into the node itself, which would race
 * between worker threads). Doubles parsed by json-c already carry their
 * source text as user data. */
static void freeze(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_int:
    case json_type_double: {
        if (json_object_get_userdata(v))
            return;
        char *text;
        if (json_object_is_type(v, json_type_int))
            text = xasprintf("%" PRId64, json_object_get_int64(v));
        else
            text = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        json_object_set_serializer(v, json_object_userdata_to_json_string, text,
                                   json_object_free_userdata);
        return;
    }
    case json_type_array: {
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++)
            freeze(json_object_array_get_idx(v, i));
        return;
    }
    case json_type_object: {
        json_object_object_foreach(v, key, child)
        {
            (void)key;
            freeze(child);
        }
        return;
    }
    default:
        return;
    }
}

/* A required, non-empty string member of m; "" and an error otherwise. */
static int need_string(json_object *m, const char *key, const char *label, const char **out,
                       char *err, size_t errlen)
{
    json_object *v;
    if (!json_object_object_get_ex(m, key, &v) || !v)
        return errf(err, errlen, "missing %s", label);
    if (!json_object_is_type(v, json_type_string))
        return errf(err, errlen, "%s is not a string", label);
    if (json_object_get_string_len(v) == 0)
        return errf(err, errlen, "%s is empty", label);
    *out = json_object_get_string(v);
    return 0;
}

/* An optional string member: "" when absent or null. */
static int opt_string(json_object *m, const char *key, const char *label, const char **out,
                      char *err, size_t errlen)
{
    json_object *v;
    *out = "";
    if (!m || !json_object_object_get_ex(m, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return errf(err, errlen, "%s is not a string", label);
    *out = json_object_get_string(v);
    return 0;
}

static json_object *opt_map(json_object *m, const char *key)
{
    json_object *v;
    if (!m || !json_object_object_get_ex(m, key, &v))
        return NULL;
    return json_object_is_type(v, json_type_object) ? v : NULL;
}

trellis_object *object_new(json_object *root, char *err, size_t errlen)
{
    if (!json_object_is_type(root, json_type_object)) {
        errf(err, errlen, "document is %s, expected a map", type_name(root));
        json_object_put(root);
        return NULL;
    }
    trellis_object *o = xcalloc(1, sizeof *o);
    o->root = root;
    json_object *meta = NULL;
    if (need_string(root, "apiVersion", "apiVersion", &o->api_version, err, errlen) < 0 ||
        need_string(root, "kind", "kind", &o->kind, err, errlen) < 0)
        goto fail;
    if (json_object_object_get_ex(root, "metadata", &meta) && meta &&
        !json_object_is_type(meta, json_type_object)) {
        errf(err, errlen, "metadata is not a map");
        goto fail;
    }
    if (!meta) {
        errf(err, errlen, "missing metadata.name");
        goto fail;
    }
    if (need_string(meta, "name", "metadata.name", &o->name, err, errlen) < 0 ||
        opt_string(meta, "namespace", "metadata.namespace", &o->namespace_, err, errlen) < 0 ||
        opt_string(meta, "uid", "metadata.uid", &o->uid, err, errlen) < 0)
        goto fail;
    o->labels = opt_map(meta, "labels");
    o->annotations = opt_map(meta, "annotations");
    if (o->namespace_[0])
        o->key = xasprintf("%s/%s", o->namespace_, o->name);
    else
        o->key = xstrdup(o->name);
    o->item = -1;
    o->prepare_failed_slot = -1;
    atomic_init(&o->refs, 1);
    freeze(root);
    return o;
fail:
    json_object_put(root);
    free(o);
    return NULL;
}

/* 1-based line of byte offset off in text. */
static int line_of(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n')
            line++;
    return line;
}

static int column_of(const char *text, size_t off)
{
    size_t i = off;
    while (i > 0 && text[i - 1] != '\n')
        i--;
    return (int)(off - i) + 1;
}

trellis_object *object_from_json(const char *text, char *err, size_t errlen)
{
    if (!text)
        return errf(err, errlen, "no JSON text"), NULL;
    size_t len = strlen(text);
    if (len >= INT_MAX)
        return errf(err, errlen, "JSON text too large"), NULL;
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
    if (!tok)
        return errf(err, errlen, "out of memory"), NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    /* include the terminating NUL so a top-level number can end */
    json_object *root = json_tokener_parse_ex(tok, text, (int)len + 1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        size_t at = end > len ? len : end;
        errf(err, errlen, "line %d, column %d: %s", line_of(text, at), column_of(text, at),
             json_tokener_error_desc(jerr));
        return NULL;
    }
    return object_new(root, err, errlen);
}

trellis_object *object_ref(trellis_object *o)
{
    if (o)
        atomic_fetch_add(&o->refs, 1);
    return o;
}

void object_unref(trellis_object *o)
{
    if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    json_object_put(o->root);
    free(o->key);
    free(o->file);
    free(o->aux);
    free(o->counters);
    free(o->tvalues);
    free(o->failed);
    free(o->prepare_error);
    free(o);
}

void object_set_origin(trellis_object *o, const char *file, int doc, int item, int line)
{
    free(o->file);
    o->file = file ? xstrdup(file) : NULL;
    o->doc = doc;
    o->item = item;
    o->line = line;
}

const char *object_label(const trellis_object *o, const char *key)
{
    return value_string(value_get((const trellis_value *)o->labels, key));
}

const char *object_annotation(const trellis_object *o, const char *key)
{
    return value_string(value_get((const trellis_value *)o->annotations, key));
}

const trellis_value *object_get(const trellis_object *o, const char *path)
{
    if (!o)
        return NULL;
    return value_path((const trellis_value *)o->root, path);
}

const char *object_describe(const trellis_object *o, char *buf, size_t len)
{
    if (o->namespace_[0])
        snprintf(buf, len, "%s %s/%s", o->kind, o->namespace_, o->name);
    else
        snprintf(buf, len, "%s %s", o->kind, o->name);
    return buf;
}

/* ---- values ------------------------------------------------------------ */

static json_object *J(const trellis_value *v)
{
    return (json_object *)(uintptr_t)v;
}

static const trellis_value *V(json_object *j)
{
    return (const trellis_value *)j;
}

trellis_value_type value_type(const trellis_value *v)
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

const char *value_string(const trellis_value *v)
{
    json_object *j = J(v);
    switch (json_object_get_type(j)) {
    case json_type_string:
        return json_object_get_string(j);
    case json_type_boolean:
        return json_object_get_boolean(j) ? "true" : "false";
    case json_type_int:
    case json_type_double: {
        const char *text = json_object_get_userdata(j);
        /* not frozen (a tree that never went through object_new) */
        return text ? text : json_object_get_string(j);
    }
    default:
        return NULL;
    }
}

/* Whole-string decimal integer with optional sign. */
static int parse_int64(const char *s, int64_t *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end;
    long long n = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (int64_t)n;
    return 0;
}

int value_int(const trellis_value *v, int64_t *out)
{
    json_object *j = J(v);
    int64_t n;
    if (json_object_is_type(j, json_type_int)) {
        n = json_object_get_int64(j);
    } else if (json_object_is_type(j, json_type_string)) {
        if (parse_int64(json_object_get_string(j), &n) < 0)
            return -1;
    } else {
        return -1;
    }
    if (out)
        *out = n;
    return 0;
}

int value_double(const trellis_value *v, double *out)
{
    json_object *j = J(v);
    if (!json_object_is_type(j, json_type_double) && !json_object_is_type(j, json_type_int))
        return -1;
    if (out)
        *out = json_object_get_double(j);
    return 0;
}

int value_bool(const trellis_value *v, int *out)
{
    json_object *j = J(v);
    int b;
    if (json_object_is_type(j, json_type_boolean)) {
        b = json_object_get_boolean(j) ? 1 : 0;
    } else if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (strcmp(s, "true") == 0)
            b = 1;
        else if (strcmp(s, "false") == 0)
            b = 0;
        else
            return -1;
    } else {
        return -1;
    }
    if (out)
        *out = b;
    return 0;
}

size_t value_len(const trellis_value *v)
{
    json_object *j = J(v);
    if (json_object_is_type(j, json_type_array))
        return json_object_array_length(j);
    if (json_object_is_type(j, json_type_object))
        return (size_t)json_object_object_length(j);
    return 0;
}

const trellis_value *value_at(const trellis_value *list, size_t i)
{
    json_object *j = J(list);
    if (!json_object_is_type(j, json_type_array) || i >= json_object_array_length(j))
        return NULL;
    return V(json_object_array_get_idx(j, i));
}

const trellis_value *value_get(const trellis_value *map, const char *key)
{
    json_object *j = J(map), *out;
    if (!key || !json_object_is_type(j, json_type_object) ||
        !json_object_object_get_ex(j, key, &out))
        return NULL;
    return V(out);
}

/* A key segment of a path: seg[0..len) raw, with backslash escapes when
 * `escaped` (the inside of a quoted ["..."] segment). */
typedef struct segment {
    const char *s;
    size_t len;
    int escaped;
} segment;

/* Compare a map key with a segment. */
static int seg_equal(const char *key, const segment *g)
{
    size_t i = 0;
    const char *k = key;
    while (i < g->len) {
        char c = g->s[i++];
        if (g->escaped && c == '\\' && i < g->len)
            c = g->s[i++];
        if (*k++ != c)
            return 0;
    }
    return *k == '\0';
}

static json_object *map_lookup(json_object *m, const segment *g)
{
    if (!json_object_is_type(m, json_type_object))
        return NULL;
    char buf[KEYBUF];
    size_t n = 0;
    int fits = 1;
    for (size_t i = 0; i < g->len; i++) {
        char c = g->s[i];
        if (g->escaped && c == '\\' && i + 1 < g->len)
            c = g->s[++i];
        if (n + 1 >= sizeof buf) {
            fits = 0;
            break;
        }
        buf[n++] = c;
    }
    if (fits) {
        buf[n] = '\0';
        json_object *out;
        return json_object_object_get_ex(m, buf, &out) ? out : NULL;
    }
    json_object_object_foreach(m, key, child)
    {
        if (seg_equal(key, g))
            return child;
    }
    return NULL;
}

/* Parse a bracketed segment at p (just after '['). Sets either *g (quoted
 * key) or *index; returns the position after ']' or NULL when malformed. */
static const char *parse_bracket(const char *p, segment *g, size_t *index, int *is_key)
{
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        const char *start = p;
        int escaped = 0;
        while (*p && *p != q) {
            if (*p == '\\' && p[1]) {
                escaped = 1;
                p++;
            }
            p++;
        }
        if (*p != q || p[1] != ']')
            return NULL;
        g->s = start;
        g->len = (size_t)(p - start);
        g->escaped = escaped;
        *is_key = 1;
        return p + 2;
    }
    if (*p < '0' || *p > '9')
        return NULL;
    size_t n = 0;
    while (*p >= '0' && *p <= '9') {
        size_t d = (size_t)(*p - '0');
        if (n > (SIZE_MAX - d) / 10)
            return NULL;
        n = n * 10 + d;
        p++;
    }
    if (*p != ']')
        return NULL;
    *index = n;
    *is_key = 0;
    return p + 1;
}

const trellis_value *value_path(const trellis_value *v, const char *path)
{
    json_object *cur = J(v);
    const char *p = path;
    if (!p)
        return NULL;
    int need_key = *p != '[' && *p != '\0';
    while (cur && (need_key || *p)) {
        if (need_key || *p == '.') {
            if (!need_key)
                p++;
            need_key = 0;
            segment g = {p, 0, 0};
            while (*p && *p != '.' && *p != '[')
                p++;
            g.len = (size_t)(p - g.s);
            if (g.len == 0)
                return NULL;
            cur = map_lookup(cur, &g);
        } else if (*p == '[') {
            segment g = {NULL, 0, 0};
            size_t index = 0;
            int is_key = 0;
            p = parse_bracket(p + 1, &g, &index, &is_key);
            if (!p)
                return NULL;
            if (is_key) {
                cur = map_lookup(cur, &g);
            } else {
                if (!json_object_is_type(cur, json_type_array) ||
                    index >= json_object_array_length(cur))
                    return NULL;
                cur = json_object_array_get_idx(cur, index);
            }
        } else {
            return NULL;
        }
    }
    return V(cur);
}

int value_foreach(const trellis_value *map,
                  int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud)
{
    json_object *j = J(map);
    if (!json_object_is_type(j, json_type_object))
        return 0;
    /* json-c keeps a map's members in insertion (document) order */
    json_object_object_foreach(j, key, child)
    {
        int rc = cb(key, V(child), ud);
        if (rc)
            return rc;
    }
    return 0;
}
