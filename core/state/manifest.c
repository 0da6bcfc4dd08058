/*
 * manifest.c - manifest files (YAML or JSON) to trellis objects.
 *
 * YAML is read from libyaml's event stream into an object builder with
 * the resolution rules Kubernetes applies (YAML 1.2 core schema: plain
 * null/bool/int/float, everything quoted or block-styled is a string),
 * anchors shared while the document is built (each use is copied into the
 * object), merge keys applied and duplicate keys refused. Documents are
 * counted exactly as libyaml reports them (one per DOCUMENT-START event,
 * empty ones included), the same count writeback.c uses to address a
 * document. JSON files hold one value or several concatenated ones, each
 * counted as a document; each is read by ob_parse_json, and a document
 * that reader leaves (anything unusual, and every error) is parsed by
 * json-c, so what is accepted and every message stay json-c's. Documents
 * of kind List are expanded into their items. A document that is not a
 * valid object is reported and skipped. After a YAML syntax error the
 * parse goes on at the next line that starts a document ("---"), so every
 * later document that can be read is read. After a JSON syntax error the
 * parse goes on at the next line that starts with "{" or "[" (how a stream
 * of documents is written: one per line, or pretty-printed); when the
 * broken document is a List, each of its items is read alone, so only the
 * items that cannot be read are lost, and each is reported.
 */
#include "config.h"

#include "manifest.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "util.h"

/* Deeper nesting is refused (and skipped without recursion). */
#define MAX_DEPTH 200
/* Nodes a document may hold once aliases are expanded ("billion laughs"). */
#define MAX_EXPANDED ((size_t)1 << 20)

#define TAG_PREFIX "tag:yaml.org,2002:"

/* ---- the set ----------------------------------------------------------- */

void manifest_set_init(manifest_set *s)
{
    memset(s, 0, sizeof *s);
}

void manifest_set_free(manifest_set *s)
{
    for (size_t i = 0; i < s->n_objects; i++)
        object_unref(s->objects[i]);
    for (size_t i = 0; i < s->n_errors; i++) {
        free(s->errors[i].file);
        free(s->errors[i].message);
    }
    free(s->objects);
    free(s->errors);
    manifest_set_init(s);
}

static void add_error(manifest_set *s, const char *file, int line, int doc, const char *fmt, ...)
    UTIL_PRINTF(5, 6);

void manifest_add_error(manifest_set *s, const char *file, int line, int doc, char *message)
{
    grow(&s->errors, &s->cap_errors, s->n_errors + 1, sizeof *s->errors);
    manifest_error *e = &s->errors[s->n_errors++];
    e->file = xstrdup(file);
    e->line = line;
    e->doc = doc;
    e->message = message;
}

static void add_error(manifest_set *s, const char *file, int line, int doc, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    manifest_add_error(s, file, line, doc, xstrdup(buf));
}

static void add_object(manifest_set *s, trellis_object *o)
{
    grow(&s->objects, &s->cap_objects, s->n_objects + 1, sizeof *s->objects);
    s->objects[s->n_objects++] = o;
}

int manifest_is_manifest_name(const char *name)
{
    if (!name)
        return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (base[0] == '.' || base[0] == '\0')
        return 0;
    return str_endswith(base, ".yaml") || str_endswith(base, ".yml") || str_endswith(base, ".json");
}

/* ---- one parsed document to objects ------------------------------------ */

/* Whether a document's root is a List wrapper whose items are to be
 * expanded; sets *items (OB_NONE for an empty List). */
static int is_list(const obuild *b, oref root, oref *items)
{
    *items = OB_NONE;
    if (ob_type(b, root) != TRELLIS_VALUE_MAP)
        return 0;
    oref kind = ob_get(b, root, "kind");
    if (ob_type(b, kind) != TRELLIS_VALUE_STRING)
        return 0;
    const char *k = ob_text(b, kind);
    oref it = ob_get(b, root, "items");
    if (strcmp(k, "List") == 0) {
        *items = ob_type(b, it) == TRELLIS_VALUE_NULL ? OB_NONE : it;
        return 1;
    }
    if (str_endswith(k, "List") && ob_type(b, it) == TRELLIS_VALUE_LIST) {
        *items = it;
        return 1;
    }
    return 0;
}

/* Turn one document's value into objects. item_lines[i] is the line of
 * items[i] when n_item_lines matches. */
static void add_document(manifest_set *s, obuild *b, const char *file, int doc, int line, oref root,
                         const int *item_lines, size_t n_item_lines)
{
    char err[512];
    oref items;
    if (ob_type(b, root) == TRELLIS_VALUE_NULL)
        return; /* empty document: skipped, still counted */
    if (!is_list(b, root, &items)) {
        trellis_object *o = object_build(b, root, err, sizeof err);
        if (!o) {
            add_error(s, file, line, doc, "document %d: %s", doc, err);
            return;
        }
        object_set_origin(o, file, doc, -1, line);
        add_object(s, o);
        return;
    }
    if (items != OB_NONE && ob_type(b, items) != TRELLIS_VALUE_LIST) {
        add_error(s, file, line, doc, "document %d: items is not a list", doc);
        return;
    }
    size_t n = ob_len(b, items);
    for (size_t i = 0; i < n; i++) {
        int iline = n_item_lines == n ? item_lines[i] : line;
        trellis_object *o = object_build(b, ob_at(b, items, i), err, sizeof err);
        if (!o) {
            add_error(s, file, iline, doc, "document %d, item %zu: %s", doc, i, err);
            continue;
        }
        object_set_origin(o, file, doc, (int)i, iline);
        add_object(s, o);
    }
}

static void add_raw(manifest_set *s, obuild *b, const char *file, int doc, int line, oref root)
{
    char err[512];
    trellis_object *o = object_build_document(b, root, err, sizeof err);
    if (!o) {
        add_error(s, file, line, doc, "document %d: %s", doc, err);
        return;
    }
    object_set_origin(o, file, doc, -1, line);
    add_object(s, o);
}

/* 1-based line of byte offset off, counting from a cursor that moves
 * forward (offsets asked for are mostly increasing). */
typedef struct line_cursor {
    const char *text;
    size_t off;
    int line;
} line_cursor;

static int line_at(line_cursor *c, size_t off)
{
    if (off < c->off) {
        c->off = 0;
        c->line = 1;
    }
    for (; c->off < off; c->off++)
        if (c->text[c->off] == '\n')
            c->line++;
    return c->line;
}

/* ---- YAML -------------------------------------------------------------- */

typedef struct anchor {
    char *name;
    oref node;
    size_t size; /* expanded node count */
} anchor;

typedef struct yctx {
    yaml_parser_t parser;
    obuild *b;
    const char *file;
    const char *text;
    size_t len;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
    /* first semantic error of the current document */
    char err[512];
    int err_line;
    /* start lines of the elements of the root's items list */
    int *item_lines;
    size_t n_item_lines, cap_item_lines;
    /* where the parser's input starts in text (it starts again after a
     * document nested too deep), and the lines before that */
    size_t base;
    int line_base;
    int too_deep; /* the current document went past MAX_DEPTH */
} yctx;

/* The 1-based line of a libyaml mark in the whole text. */
#define LINE(c, m) ((int)(m).line + 1 + (c)->line_base)

static void doc_fail(yctx *c, int line, const char *fmt, ...) UTIL_PRINTF(3, 4);

static void doc_fail(yctx *c, int line, const char *fmt, ...)
{
    if (c->err[0])
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, sizeof c->err, "line %d: %s", line, msg);
    c->err_line = line;
}

static void clear_anchors(yctx *c)
{
    for (size_t i = 0; i < c->n_anchors; i++)
        free(c->anchors[i].name);
    c->n_anchors = 0;
}

static void set_anchor(yctx *c, const char *name, oref node, size_t size)
{
    for (size_t i = 0; i < c->n_anchors; i++) {
        if (strcmp(c->anchors[i].name, name) == 0) {
            /* redefinition: later aliases refer to the new node */
            c->anchors[i].node = node;
            c->anchors[i].size = size;
            return;
        }
    }
    grow(&c->anchors, &c->cap_anchors, c->n_anchors + 1, sizeof *c->anchors);
    anchor *a = &c->anchors[c->n_anchors++];
    a->name = xstrdup(name);
    a->node = node;
    a->size = size;
}

static anchor *find_anchor(yctx *c, const char *name)
{
    for (size_t i = c->n_anchors; i-- > 0;)
        if (strcmp(c->anchors[i].name, name) == 0)
            return &c->anchors[i];
    return NULL;
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static int next_event(yctx *c, yaml_event_t *ev)
{
    return yaml_parser_parse(&c->parser, ev) ? 0 : -1;
}

/* ---- scalar resolution (YAML 1.2 core schema) ---- */

static int all_in(const char *s, size_t len, const char *set)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return 1;
}

static int is_null_text(const char *s, size_t len)
{
    return len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

static int bool_text(const char *s, int *b)
{
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        return *b = 1, 1;
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return *b = 0, 1;
    return 0;
}

/* 1 and *out when s is a core-schema int; 2 when it is one but overflows
 * int64; 0 when it is not an int. */
static int int_text(const char *s, size_t len, int64_t *out)
{
    const char *digits = s;
    int base = 10;
    if (len > 2 && s[0] == '0' && s[1] == 'x' && all_in(s + 2, len - 2, "0123456789abcdefABCDEF")) {
        base = 16;
        digits = s + 2;
    } else if (len > 2 && s[0] == '0' && s[1] == 'o' && all_in(s + 2, len - 2, "01234567")) {
        base = 8;
        digits = s + 2;
    } else {
        size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
        if (!all_in(s + i, len - i, "0123456789"))
            return 0;
    }
    errno = 0;
    char *end;
    if (base == 10) {
        long long v = strtoll(digits, &end, 10);
        if (errno == ERANGE)
            return 2;
        *out = (int64_t)v;
    } else {
        unsigned long long v = strtoull(digits, &end, base);
        if (errno == ERANGE || v > (unsigned long long)INT64_MAX)
            return 2;
        *out = (int64_t)v;
    }
    return 1;
}

/* Core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int float_text(const char *s, size_t len, double *out)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    if (p == s && (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN"))) {
        *out = NAN;
        return 1;
    }
    size_t intd = 0, fracd = 0;
    while (*p >= '0' && *p <= '9')
        p++, intd++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, fracd++;
    }
    if (intd == 0 && fracd == 0)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if ((size_t)(p - s) != len)
        return 0;
    *out = strtod(s, NULL);
    return 1;
}

/* Whether s is a JSON number, so json-c may keep it as the node's text. */
static int json_number_text(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static oref new_double(obuild *b, double d, const char *text)
{
    /* json-c's own text for what is not a JSON number */
    return ob_double(b, d, isfinite(d) && json_number_text(text) ? text : NULL);
}

/* An untagged plain scalar. */
static oref resolve_plain(obuild *bld, const char *s, size_t len)
{
    int b;
    int64_t i;
    double d;
    unsigned char c = (unsigned char)s[0];
    /* most plain scalars are names: a letter that starts no null, bool,
     * int or float word makes a string */
    if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && !strchr("nNtTfF", c))
        return ob_string(bld, s, len);
    if (strlen(s) != len) /* NUL inside: only a string can hold it */
        return ob_string(bld, s, len);
    if (is_null_text(s, len))
        return ob_null(bld);
    if (bool_text(s, &b))
        return ob_bool(bld, b);
    switch (int_text(s, len, &i)) {
    case 1:
        return ob_int(bld, i, NULL);
    case 2:
        return ob_string(bld, s, len);
    default:
        break;
    }
    if (float_text(s, len, &d))
        return new_double(bld, d, s);
    return ob_string(bld, s, len);
}

static oref resolve_scalar(yctx *c, const yaml_event_t *ev)
{
    obuild *bld = c->b;
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    int line = LINE(c, ev->start_mark);
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (tag && strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0) {
        const char *t = tag + strlen(TAG_PREFIX);
        int64_t i;
        double d;
        int b;
        if (strcmp(t, "str") == 0)
            return ob_string(bld, s, len);
        if (strcmp(t, "null") == 0) {
            if (!is_null_text(s, len))
                doc_fail(c, line, "invalid !!null value '%s'", s);
            return ob_null(bld);
        }
        if (strcmp(t, "bool") == 0) {
            if (!bool_text(s, &b)) {
                doc_fail(c, line, "invalid !!bool value '%s'", s);
                return ob_null(bld);
            }
            return ob_bool(bld, b);
        }
        if (strcmp(t, "int") == 0) {
            if (int_text(s, len, &i) != 1) {
                doc_fail(c, line, "invalid !!int value '%s'", s);
                return ob_null(bld);
            }
            return ob_int(bld, i, NULL);
        }
        if (strcmp(t, "float") == 0) {
            if (int_text(s, len, &i) == 1)
                return new_double(bld, (double)i, s);
            if (!float_text(s, len, &d)) {
                doc_fail(c, line, "invalid !!float value '%s'", s);
                return ob_null(bld);
            }
            return new_double(bld, d, s);
        }
        /* other standard tags (!!binary, !!timestamp): as the style says */
    } else if (tag && strcmp(tag, "!") == 0) {
        return ob_string(bld, s, len); /* non-specific tag: a string */
    }
    return plain ? resolve_plain(bld, s, len) : ob_string(bld, s, len);
}

/* ---- nodes ---- */

/* Consume the rest of a node whose start event was already read, without
 * recursion (used past MAX_DEPTH). */
static int skip_node(yctx *c, const yaml_event_t *start)
{
    if (start->type != YAML_SEQUENCE_START_EVENT && start->type != YAML_MAPPING_START_EVENT)
        return 0;
    size_t level = 1;
    while (level) {
        yaml_event_t ev;
        if (next_event(c, &ev) < 0)
            return -1;
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
            level++;
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            level--;
        yaml_event_delete(&ev);
    }
    return 0;
}

static int load_node(yctx *c, yaml_event_t *ev, oref *out, size_t *size, int depth,
                     int record_items);

static int load_sequence(yctx *c, size_t *size, int depth, int record_items)
{
    for (;;) {
        yaml_event_t ev;
        if (next_event(c, &ev) < 0)
            return -1;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (record_items) {
            grow(&c->item_lines, &c->cap_item_lines, c->n_item_lines + 1, sizeof *c->item_lines);
            c->item_lines[c->n_item_lines++] = LINE(c, ev.start_mark);
        }
        oref v;
        size_t vsize = 0;
        if (load_node(c, &ev, &v, &vsize, depth + 1, 0) < 0)
            return -1;
        ob_item(c->b, v);
        *size = sat_add(*size, vsize);
    }
}

/* Key text of a scalar (or alias of a scalar) key node. 0 and *key set (a
 * builder key handle), 1 when the key is unusable (error recorded, node
 * consumed), -1 on a syntax error. *merge is set for a plain `<<`. */
static int load_key(yctx *c, yaml_event_t *ev, uint32_t *key, int *merge)
{
    int line = LINE(c, ev->start_mark);
    *merge = 0;
    if (ev->type == YAML_SCALAR_EVENT) {
        const char *s = (const char *)ev->data.scalar.value;
        const char *tag = (const char *)ev->data.scalar.tag;
        *merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(s, "<<") == 0 &&
                 (!tag || strcmp(tag, TAG_PREFIX "merge") == 0);
        *key = ob_key(c->b, s, ev->data.scalar.length);
        if (ev->data.scalar.anchor)
            set_anchor(c, (const char *)ev->data.scalar.anchor,
                       ob_string(c->b, s, ev->data.scalar.length), 1);
        yaml_event_delete(ev);
        return 0;
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        const char *name = (const char *)ev->data.alias.anchor;
        anchor *a = find_anchor(c, name);
        int rc = 0;
        if (!a) {
            doc_fail(c, line, "unknown anchor '%s'", name);
            rc = 1;
        } else if (ob_type(c->b, a->node) == TRELLIS_VALUE_MAP ||
                   ob_type(c->b, a->node) == TRELLIS_VALUE_LIST) {
            doc_fail(c, line, "a map key must be a scalar");
            rc = 1;
        } else {
            const char *text = ob_text(c->b, a->node);
            *key = ob_key(c->b, text, strlen(text));
        }
        yaml_event_delete(ev);
        return rc;
    }
    doc_fail(c, line, "a map key must be a scalar");
    int rc = skip_node(c, ev);
    yaml_event_delete(ev);
    return rc < 0 ? -1 : 1;
}

static int load_mapping(yctx *c, size_t mark, size_t *size, int depth)
{
    oref *merges = NULL;
    size_t n_merges = 0, cap_merges = 0;
    int rc = 0;
    for (;;) {
        yaml_event_t kev, vev;
        if (next_event(c, &kev) < 0) {
            rc = -1;
            break;
        }
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            break;
        }
        int kline = LINE(c, kev.start_mark);
        uint32_t key = 0;
        int merge;
        int krc = load_key(c, &kev, &key, &merge);
        if (krc < 0 || next_event(c, &vev) < 0) {
            rc = -1;
            break;
        }
        int vline = LINE(c, vev.start_mark);
        oref v;
        size_t vsize = 0;
        int record =
            depth == 0 && krc == 0 && !merge && strcmp(ob_key_text(c->b, key), "items") == 0;
        if (load_node(c, &vev, &v, &vsize, depth + 1, record) < 0) {
            rc = -1;
            break;
        }
        *size = sat_add(*size, vsize);
        if (krc > 0) {
            /* dropped */
        } else if (merge) {
            int is_seq = ob_type(c->b, v) == TRELLIS_VALUE_LIST;
            size_t n = is_seq ? ob_len(c->b, v) : 1;
            for (size_t i = 0; i < n; i++) {
                oref src = is_seq ? ob_at(c->b, v, i) : v;
                if (ob_type(c->b, src) != TRELLIS_VALUE_MAP) {
                    doc_fail(c, vline,
                             "merge key '<<' needs a map or a list "
                             "of maps");
                    break;
                }
                grow(&merges, &cap_merges, n_merges + 1, sizeof *merges);
                merges[n_merges++] = src;
            }
        } else if (ob_member_at(c->b, mark, key, v, 0)) {
            doc_fail(c, kline, "duplicate key '%s'", ob_key_text(c->b, key));
        }
    }
    /* keys written in the map win over merged ones, earlier merges over
     * later ones */
    for (size_t i = 0; i < n_merges && rc == 0; i++)
        ob_merge(c->b, mark, merges[i]);
    free(merges);
    return rc;
}

/* Build the node whose first event is *ev (consumed). On return 0, *out
 * holds the value and *size its expanded node count. */
static int load_node(yctx *c, yaml_event_t *ev, oref *out, size_t *size, int depth,
                     int record_items)
{
    int line = LINE(c, ev->start_mark);
    const char *anchor_name = NULL;
    int rc = 0;
    *out = OB_NONE;
    *size = 1;
    if (depth > MAX_DEPTH) {
        /* stop here: libyaml's scanner costs grow with the nesting, so
         * reading the rest would take minutes for 100,000 levels; the
         * caller skips to the next document in the text */
        doc_fail(c, line, "nesting deeper than %d levels", MAX_DEPTH);
        c->too_deep = 1;
        yaml_event_delete(ev);
        return -1;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        anchor_name = (const char *)ev->data.scalar.anchor;
        *out = resolve_scalar(c, ev);
        break;
    case YAML_ALIAS_EVENT: {
        anchor *a = find_anchor(c, (const char *)ev->data.alias.anchor);
        if (!a) {
            doc_fail(c, line, "unknown anchor '%s'", (const char *)ev->data.alias.anchor);
            *out = ob_null(c->b);
        } else {
            *out = a->node;
            *size = a->size;
        }
        break;
    }
    case YAML_SEQUENCE_START_EVENT: {
        anchor_name = (const char *)ev->data.sequence_start.anchor;
        size_t mark = ob_open(c->b);
        rc = load_sequence(c, size, depth, record_items);
        *out = ob_close_list(c->b, mark);
        break;
    }
    case YAML_MAPPING_START_EVENT: {
        anchor_name = (const char *)ev->data.mapping_start.anchor;
        size_t mark = ob_open(c->b);
        rc = load_mapping(c, mark, size, depth);
        *out = ob_close_map(c->b, mark);
        break;
    }
    default:
        doc_fail(c, line, "unexpected YAML event");
        *out = ob_null(c->b);
        break;
    }
    if (rc == 0 && anchor_name)
        set_anchor(c, anchor_name, *out, *size);
    yaml_event_delete(ev);
    return rc;
}

/* Message of a libyaml failure. */
static void syntax_error(yctx *c, manifest_set *s, int doc)
{
    yaml_parser_t *p = &c->parser;
    int line;
    char where[160] = "";
    if (p->error == YAML_MEMORY_ERROR) {
        add_error(s, c->file, 0, doc, "document %d: out of memory", doc);
        return;
    }
    if (p->error == YAML_READER_ERROR) {
        line_cursor lc = {c->text, 0, 1};
        size_t at = c->base + p->problem_offset;
        size_t off = at < c->len ? at : c->len;
        line = line_at(&lc, off);
        snprintf(where, sizeof where, " (byte %zu)", at);
    } else {
        line = LINE(c, p->problem_mark);
        if (p->context)
            snprintf(where, sizeof where, " at column %zu (%s at line %d)",
                     p->problem_mark.column + 1, p->context, LINE(c, p->context_mark));
        else
            snprintf(where, sizeof where, " at column %zu", p->problem_mark.column + 1);
    }
    add_error(s, c->file, line, doc, "document %d: syntax error: %s%s", doc,
              p->problem ? p->problem : "unknown problem", where);
}

/* Go on with a new parser from the first line at or after byte `from` of
 * the text (a line start) that starts a document ("---"): 1 when there is
 * one, 0 at the end of the text, -1 when out of memory. The scan is
 * linear. */
static int restart_from(yctx *c, size_t from)
{
    const char *t = c->text;
    size_t n = c->len, i = from;
    for (;;) {
        if (i >= n)
            return 0;
        if (n - i >= 3 && memcmp(t + i, "---", 3) == 0 &&
            (n - i == 3 || t[i + 3] == ' ' || t[i + 3] == '\t' || t[i + 3] == '\r' ||
             t[i + 3] == '\n'))
            break;
        while (i < n && t[i] != '\n')
            i++;
        i += i < n;
    }
    for (size_t k = c->base; k < i; k++)
        c->line_base += t[k] == '\n';
    c->base = i;
    c->too_deep = 0;
    yaml_parser_delete(&c->parser);
    if (!yaml_parser_initialize(&c->parser))
        return -1;
    yaml_parser_set_input_string(&c->parser, (const unsigned char *)t + i, n - i);
    return 1;
}

/* The start of the line after byte at. */
static size_t next_line(const yctx *c, size_t at)
{
    while (at < c->len && c->text[at] != '\n')
        at++;
    return at < c->len ? at + 1 : c->len;
}

/* After a document nested too deep, go on from the next line that starts
 * a document. */
static int restart_after_deep(yctx *c)
{
    return restart_from(c, next_line(c, c->base + c->parser.mark.index));
}

/* After a syntax error in document doc: report it, and go on from the
 * next line that starts a document, so that one error does not hide the
 * documents after it. The line of the error itself is where to go on when
 * it starts a document after doc_at (the offset where doc started): libyaml
 * often finds a document unfinished only at the next one's "---". 1 to go
 * on, 0 at the end of the text, -1 when out of memory. */
static int resume_after_error(yctx *c, manifest_set *s, int doc, size_t doc_at)
{
    syntax_error(c, s, doc);
    yaml_parser_t *p = &c->parser;
    if (p->error == YAML_MEMORY_ERROR)
        return -1;
    size_t at =
        c->base + (p->error == YAML_READER_ERROR ? p->problem_offset : p->problem_mark.index);
    if (at > c->len)
        at = c->len;
    size_t ls = at;
    while (ls > 0 && c->text[ls - 1] != '\n')
        ls--;
    clear_anchors(c);
    return restart_from(c, ls > doc_at && ls >= c->base ? ls : next_line(c, at));
}

/* raw: every document becomes one object of any shape (object_build_document).
 * stop_doc >= 0: stop where that document starts, its offset in *stop_at
 * (left alone when the text has no such document). */
static int parse_yaml_until(const char *file, const char *text, size_t len, manifest_set *s,
                            int raw, int stop_doc, size_t *stop_at)
{
    yctx c;
    memset(&c, 0, sizeof c);
    c.file = file;
    c.text = text;
    c.len = len;
    c.b = obuild_new();
    if (!yaml_parser_initialize(&c.parser)) {
        obuild_free(c.b);
        add_error(s, file, 0, 0, "document 0: out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
    int doc = -1, rc = 0, more = 1;
    size_t doc_at = 0; /* where the current document starts in the text */
    while (more > 0) {
        yaml_event_t ev;
        if (next_event(&c, &ev) < 0) {
            /* between documents: the error is the next one's, before it
             * started */
            more = resume_after_error(&c, s, ++doc, c.len);
            rc = -1;
            continue;
        }
        yaml_event_type_t type = ev.type;
        if (type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (type != YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        doc_at = c.base + ev.start_mark.index;
        yaml_event_delete(&ev);
        if (++doc == stop_doc) {
            *stop_at = doc_at;
            break;
        }
        c.err[0] = '\0';
        c.n_item_lines = 0;
        obuild_clear(c.b);
        if (next_event(&c, &ev) < 0) {
            more = resume_after_error(&c, s, doc, doc_at);
            rc = -1;
            continue;
        }
        int line = LINE(&c, ev.start_mark);
        oref root = OB_NONE;
        size_t size = 0;
        int lrc = load_node(&c, &ev, &root, &size, 0, 0);
        if (lrc < 0 && c.too_deep) {
            add_error(s, file, c.err_line, doc, "document %d: %s", doc, c.err);
            clear_anchors(&c);
            more = restart_after_deep(&c);
            if (more < 0) {
                add_error(s, file, 0, doc + 1, "document %d: out of memory", doc + 1);
                rc = -1;
            }
            continue;
        }
        if (lrc < 0 || next_event(&c, &ev) < 0) {
            more = resume_after_error(&c, s, doc, doc_at);
            rc = -1;
            continue;
        }
        yaml_event_delete(&ev); /* DOCUMENT-END */
        clear_anchors(&c);
        if (!c.err[0] && size > MAX_EXPANDED)
            doc_fail(&c, line, "more than %zu nodes once aliases are expanded", MAX_EXPANDED);
        if (c.err[0]) {
            add_error(s, file, c.err_line, doc, "document %d: %s", doc, c.err);
            continue;
        }
        if (raw)
            add_raw(s, c.b, file, doc, line, root);
        else
            add_document(s, c.b, file, doc, line, root, c.item_lines, c.n_item_lines);
    }
    obuild_free(c.b);
    clear_anchors(&c);
    free(c.anchors);
    free(c.item_lines);
    yaml_parser_delete(&c.parser);
    return rc;
}

static int parse_yaml(const char *file, const char *text, size_t len, manifest_set *s, int raw)
{
    return parse_yaml_until(file, text, len, s, raw, -1, NULL);
}

long manifest_doc_start(const char *text, size_t len, int doc)
{
    manifest_set s;
    manifest_set_init(&s);
    size_t at = (size_t)-1;
    parse_yaml_until("-", text, len, &s, 1, doc, &at);
    manifest_set_free(&s);
    return at == (size_t)-1 ? -1 : (long)at;
}

/* ---- JSON -------------------------------------------------------------- */

static int is_json_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The scanners below run over text json-c accepted, and over a document
 * it refused to find its items again; they do not validate, and stop at
 * the end of the text whatever happens. */
static size_t skip_json_ws(const char *t, size_t i, size_t n)
{
    while (i < n && is_json_space(t[i]))
        i++;
    return i;
}

/* A string ends at its quote, or (in broken text: a JSON string holds no
 * raw line break) at the end of its line. */
static size_t skip_json_string(const char *t, size_t i, size_t n)
{
    char q = t[i++];
    while (i < n && t[i] != q && t[i] != '\n')
        i += t[i] == '\\' ? 2 : 1;
    return i < n && t[i] == q ? i + 1 : i < n ? i : n;
}

static size_t skip_json_value(const char *t, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (t[i] == '"' || t[i] == '\'')
        return skip_json_string(t, i, n);
    if (t[i] != '{' && t[i] != '[') {
        while (i < n && !is_json_space(t[i]) && !strchr(",]}", t[i]))
            i++;
        return i;
    }
    size_t level = 0;
    while (i < n) {
        char ch = t[i];
        if (ch == '"' || ch == '\'') {
            i = skip_json_string(t, i, n);
            continue;
        }
        if (ch == '{' || ch == '[')
            level++;
        else if ((ch == '}' || ch == ']') && --level == 0)
            return i + 1;
        i++;
    }
    return n;
}

/* Offsets of the elements of the top-level "items" list of the object
 * starting at t[i], into *offs. */
static void json_item_offsets(const char *t, size_t i, size_t n, size_t **offs, size_t *n_offs,
                              size_t *cap)
{
    if (i >= n || t[i] != '{')
        return;
    i++;
    for (;;) {
        i = skip_json_ws(t, i, n);
        if (i >= n || t[i] == '}' || (t[i] != '"' && t[i] != '\''))
            return;
        size_t kstart = i;
        i = skip_json_string(t, i, n);
        int is_items = i - kstart == 7 && memcmp(t + kstart + 1, "items", 5) == 0;
        i = skip_json_ws(t, i, n);
        if (i >= n || t[i] != ':')
            return;
        i = skip_json_ws(t, i + 1, n);
        if (is_items && i < n && t[i] == '[') {
            *n_offs = 0; /* json-c keeps the last of duplicate keys */
            i++;
            for (;;) {
                i = skip_json_ws(t, i, n);
                if (i >= n || t[i] == ']') {
                    i++;
                    break;
                }
                grow(offs, cap, *n_offs + 1, sizeof **offs);
                (*offs)[(*n_offs)++] = i;
                size_t at = i;
                i = skip_json_value(t, i, n);
                if (i == at) /* broken text: a stray "}" or "," */
                    i++;
                i = skip_json_ws(t, i, n);
                if (i < n && t[i] == ',')
                    i++;
            }
        } else {
            i = skip_json_value(t, i, n);
        }
        i = skip_json_ws(t, i, n);
        if (i < n && t[i] == ',')
            i++;
    }
}

/* One document (or, item >= 0, that item of a List document) with
 * json-c, where the fast reader gave up: what json-c accepts is taken as it
 * built it, what it refuses is reported with its message (unless quiet).
 * Returns 0 and *used, or -1 with *used at the error. */
static int json_c_document(obuild *b, manifest_set *s, const char *file, const char *text,
                           size_t len, size_t pos, int doc, int item, int quiet, line_cursor *lc,
                           oref *root, size_t *used)
{
    char what[48];
    if (item >= 0)
        snprintf(what, sizeof what, "document %d, item %d", doc, item);
    else
        snprintf(what, sizeof what, "document %d", doc);
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
    if (!tok) {
        add_error(s, file, 0, doc, "%s: out of memory", what);
        *used = 0;
        return -1;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                    JSON_TOKENER_VALIDATE_UTF8);
    json_object *v = json_tokener_parse_ex(tok, text + pos, (int)(len - pos));
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    *used = json_tokener_get_parse_end(tok);
    if (!v && jerr == json_tokener_continue) {
        /* the value runs to the end of the text: a NUL ends it */
        v = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
        *used = len - pos;
    }
    json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        size_t at = pos + *used > len ? len : pos + *used;
        int line = line_at(lc, at);
        size_t ls = at;
        while (ls > 0 && text[ls - 1] != '\n')
            ls--;
        if (!quiet)
            add_error(s, file, line, doc, "%s: syntax error: %s at line %d, column %zu", what,
                      json_tokener_error_desc(jerr), line, at - ls + 1);
        json_object_put(v);
        *used = at - pos;
        return -1;
    }
    *root = v ? ob_json(b, v) : OB_NONE;
    json_object_put(v);
    ob_note_json_text(b, text + pos, *used);
    return 0;
}

/* The first line start after t[i] (a line break) that starts with "{" or
 * "[", or len. */
static size_t next_json_line(const char *t, size_t i, size_t len)
{
    for (; i + 1 < len; i++)
        if (t[i] == '\n' && (t[i + 1] == '{' || t[i + 1] == '['))
            return i + 1;
    return len;
}

/* Where the document after a broken one may start: a line after the
 * document's first line (pos) that starts with "{" or "[", the first one
 * from the line of the error (err) on (a missing brace shows where the
 * next document starts), else the first one before it (a document left
 * open runs to the end of the text). len when there is none. */
static size_t json_resync(const char *t, size_t pos, size_t err, size_t len)
{
    size_t i = pos, e = err < len ? err : len;
    while (i < len && t[i] != '\n')
        i++;
    while (e > 0 && t[e - 1] != '\n')
        e--;
    size_t at = e > i + 1 ? next_json_line(t, e - 1, len) : len;
    return at < len ? at : next_json_line(t, i, len);
}

/* Whether the object that starts at t[i] (up to n) says kind "List" or
 * "...List" at its top level (1) or another kind (0), read without
 * validating; -1 when the scan loses its way first (a brace missing in
 * the items, which kubectl writes before the kind). */
static int json_says_list(const char *t, size_t i, size_t n)
{
    if (i >= n || t[i] != '{')
        return 0;
    for (i++;;) {
        i = skip_json_ws(t, i, n);
        if (i >= n || t[i] != '"')
            return -1;
        size_t k = i;
        i = skip_json_ws(t, skip_json_string(t, i, n), n);
        int is_kind = i - k >= 6 && memcmp(t + k, "\"kind\"", 6) == 0;
        if (i >= n || t[i] != ':')
            return -1;
        i = skip_json_ws(t, i + 1, n);
        if (is_kind) {
            if (i >= n || t[i] != '"')
                return 0;
            size_t e = skip_json_string(t, i, n);
            return e - i >= 6 && memcmp(t + e - 5, "List\"", 5) == 0;
        }
        i = skip_json_ws(t, skip_json_value(t, i, n), n);
        if (i >= n || t[i] != ',')
            return -1;
        i++;
    }
}

/* A List document t[pos, end) json-c refused: each of its items read
 * alone, those that can be as objects, each that cannot reported. 1 when
 * an item could not be read (reported), 0 when every item could (the
 * error is elsewhere in the document), -1 when it is no List whose items
 * can be found. */
static int json_list_items(obuild *b, manifest_set *s, const char *file, const char *text,
                           size_t pos, size_t end, int doc, line_cursor *lc)
{
    size_t *offs = NULL, n = 0, cap = 0;
    if (json_says_list(text, pos, end) == 0)
        return -1;
    json_item_offsets(text, pos, end, &offs, &n, &cap);
    int bad = n ? 0 : -1;
    for (size_t i = 0; i < n; i++) {
        size_t stop = skip_json_value(text, offs[i], end), used;
        int line = line_at(lc, offs[i]);
        oref root = OB_NONE;
        obuild_clear(b);
        if (json_c_document(b, s, file, text, stop, offs[i], doc, (int)i, 0, lc, &root, &used) <
            0) {
            bad = 1;
            continue;
        }
        char err[512];
        trellis_object *o = object_build(b, root, err, sizeof err);
        if (!o) {
            add_error(s, file, line, doc, "document %d, item %zu: %s", doc, i, err);
            continue;
        }
        object_set_origin(o, file, doc, (int)i, line);
        add_object(s, o);
    }
    free(offs);
    return bad;
}

static int parse_json(const char *file, const char *text, size_t len, manifest_set *s)
{
    if (len > INT_MAX - 1) {
        add_error(s, file, 0, 0, "document 0: file too large");
        return -1;
    }
    line_cursor lc = {text, 0, 1};
    size_t pos = 0;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        pos = 3;
    int doc = 0, rc = 0;
    size_t *offs = NULL, n_offs = 0, cap_offs = 0;
    int *lines = NULL;
    size_t cap_lines = 0;
    obuild *b = obuild_new();
    for (;; doc++) {
        pos = skip_json_ws(text, pos, len);
        if (pos >= len)
            break;
        obuild_clear(b);
        oref root = OB_NONE;
        size_t used = ob_parse_json(b, text + pos, len - pos, &root);
        size_t next = skip_json_ws(text, pos + used, len);
        /* json-c checks the byte after a value as UTF-8 before it stops */
        if (used && next < len && (unsigned char)text[next] >= 0x80)
            used = 0;
        if (!used) {
            obuild_clear(b);
            if (json_c_document(b, s, file, text, len, pos, doc, -1, 1, &lc, &root, &used) < 0) {
                /* the rest of this document: its items, one by one, when it
                 * is a List; then on at the next document */
                size_t next_doc = json_resync(text, pos, pos + used, len);
                if (json_list_items(b, s, file, text, pos, next_doc, doc, &lc) <= 0) {
                    obuild_clear(b);
                    json_c_document(b, s, file, text, len, pos, doc, -1, 0, &lc, &root, &used);
                }
                rc = -1;
                pos = next_doc;
                continue;
            }
        }
        int line = line_at(&lc, pos);
        n_offs = 0;
        oref items;
        if (is_list(b, root, &items))
            json_item_offsets(text, pos, pos + used, &offs, &n_offs, &cap_offs);
        grow(&lines, &cap_lines, n_offs + 1, sizeof *lines);
        for (size_t i = 0; i < n_offs; i++)
            lines[i] = line_at(&lc, offs[i]);
        add_document(s, b, file, doc, line, root, lines, n_offs);
        if (used == 0)
            break;
        pos += used;
    }
    obuild_free(b);
    free(offs);
    free(lines);
    return rc;
}

/* ---- entry points ------------------------------------------------------ */

int manifest_parse(const char *file, const char *text, size_t len, manifest_set *s)
{
    if (!file)
        file = "-";
    if (!text) {
        text = "";
        len = 0;
    }
    if (str_endswith(file, ".json"))
        return parse_json(file, text, len, s);
    return parse_yaml(file, text, len, s, 0);
}

trellis_object *manifest_parse_document(const char *where, const char *text, size_t len, char *err,
                                        size_t errlen)
{
    manifest_set s;
    manifest_set_init(&s);
    /* JSON is read as YAML (a flow mapping): one reader, one set of limits */
    parse_yaml(where, text ? text : "", text ? len : 0, &s, 1);
    trellis_object *o = NULL;
    if (s.n_errors) {
        const manifest_error *e = &s.errors[0];
        errf(err, errlen, "%s%s%.0d: %s", e->file, e->line ? ":" : "", e->line, e->message);
    } else if (s.n_objects != 1) {
        errf(err, errlen, "%s: expected one YAML or JSON document, found %zu", where, s.n_objects);
    } else {
        o = object_ref(s.objects[0]);
    }
    manifest_set_free(&s);
    return o;
}

int manifest_load_file(const char *file, manifest_set *s)
{
    char err[512];
    size_t len;
    char *text = read_file(file, &len, err, sizeof err);
    if (!text) {
        add_error(s, file, 0, 0, "%s", err);
        return -1;
    }
    int rc = manifest_parse(file, text, len, s);
    free(text);
    return rc;
}
