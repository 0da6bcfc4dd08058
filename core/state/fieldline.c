/*
 * fieldline.c - see fieldline.h. libyaml's event stream is walked to the
 * document, then down the path: a map's keys are read until the one
 * named, every other value (a complex key's too) skipped; a sequence's
 * elements are skipped up to the index. A manifest's document is found as
 * manifest.c counts them, so a syntax error in an earlier document does
 * not hide the line. JSON is read the same way (YAML flow syntax covers
 * it). Text after the field may be broken: the walk stops at the field.
 */
#include "config.h"

#include "fieldline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "manifest.h"
#include "util.h"

#define MAX_FILE (4u << 20)
#define MAX_COMPS 32
/* deeper than any key path a plugin asks for; below it nothing matches */
#define MAX_KEYS 64

/* One step of a path: a map key, or (key NULL) a sequence index. */
typedef struct step {
    const char *key;
    long index;
} step;

/* Split object_get's path syntax into steps; -1 when it is not one. */
static int split_path(const char *p, step *st, size_t *n)
{
    *n = 0;
    while (*p && *n < MAX_COMPS) {
        if (*p == '[') {
            char *end;
            if (p[1] == '"') {
                const char *q = strchr(p + 2, '"');
                if (!q || q[1] != ']')
                    return -1;
                st[(*n)++] = (step){xasprintf("%.*s", (int)(q - p - 2), p + 2), 0};
                p = q + 2;
            } else {
                long v = strtol(p + 1, &end, 10);
                if (end == p + 1 || *end != ']' || v < 0)
                    return -1;
                st[(*n)++] = (step){NULL, v};
                p = end + 1;
            }
        } else {
            size_t len = strcspn(p, ".[");
            if (!len)
                return -1;
            st[(*n)++] = (step){xasprintf("%.*s", (int)len, p), 0};
            p += len;
        }
        if (*p == '.')
            p++;
    }
    return *p ? -1 : 0;
}

/* Consume the node whose first event is ev (deleted here); 0, or -1. */
static int skip_node(yaml_parser_t *y, yaml_event_t *ev)
{
    int depth = 0;
    for (;;) {
        yaml_event_type_t t = ev->type;
        yaml_event_delete(ev);
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT)
            depth++;
        else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
            depth--;
        if (depth == 0)
            return 0;
        if (!yaml_parser_parse(y, ev))
            return -1;
    }
}

/* Down the steps from the node whose first event is ev (deleted here):
 * the line of the last step, 0 when absent. */
static int descend(yaml_parser_t *y, yaml_event_t *ev, const step *st, size_t n)
{
    int line = 0;
    while (n > 0) {
        yaml_event_type_t want = st->key ? YAML_MAPPING_START_EVENT : YAML_SEQUENCE_START_EVENT;
        if (ev->type != want) {
            yaml_event_delete(ev);
            return 0;
        }
        yaml_event_delete(ev);
        for (long i = 0;; i++) {
            if (!yaml_parser_parse(y, ev))
                return 0;
            if (ev->type == YAML_MAPPING_END_EVENT || ev->type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(ev);
                return 0;
            }
            int hit = st->key ? ev->type == YAML_SCALAR_EVENT &&
                                    strcmp((const char *)ev->data.scalar.value, st->key) == 0
                              : i == st->index;
            if (hit) {
                line = (int)ev->start_mark.line + 1;
                if (n == 1) /* the field itself: what follows may be broken */
                    break;
                if (st->key) { /* the key's line; on to its value */
                    yaml_event_delete(ev);
                    if (!yaml_parser_parse(y, ev))
                        return 0;
                }
                break;
            }
            /* not this one: skip it (and a key's value) */
            int is_key = st->key != NULL;
            if (skip_node(y, ev) < 0 ||
                (is_key && (!yaml_parser_parse(y, ev) || skip_node(y, ev) < 0)))
                return 0;
        }
        st++;
        n--;
    }
    yaml_event_delete(ev);
    return line;
}

/* To the root node of the first document: its first event in ev, the
 * line where the document starts in *line. 0, or -1. */
static int first_doc(yaml_parser_t *y, yaml_event_t *ev, int *line)
{
    for (;;) {
        if (!yaml_parser_parse(y, ev))
            return -1;
        yaml_event_type_t t = ev->type;
        *line = (int)ev->start_mark.line + 1;
        yaml_event_delete(ev);
        if (t == YAML_STREAM_END_EVENT)
            return -1;
        if (t == YAML_DOCUMENT_START_EVENT)
            return yaml_parser_parse(y, ev) ? 0 : -1;
    }
}

/* The line of st[0..n) in the first document of text (n 0: where the
 * document starts), 0 when absent. */
static int line_in(const char *text, size_t len, const step *st, size_t n)
{
    yaml_parser_t y;
    yaml_event_t ev;
    int line = 0, start;
    if (!text || !yaml_parser_initialize(&y))
        return 0;
    yaml_parser_set_input_string(&y, (const unsigned char *)text, len);
    if (first_doc(&y, &ev, &start) == 0) {
        if (n)
            line = descend(&y, &ev, st, n);
        else {
            line = start;
            yaml_event_delete(&ev);
        }
    }
    yaml_parser_delete(&y);
    return line;
}

int fieldline_in_text(const char *text, size_t len, const char *const *keys, size_t depth)
{
    step st[MAX_KEYS];
    if (depth > MAX_KEYS || (depth && !keys))
        return 0;
    for (size_t i = 0; i < depth; i++) {
        if (!keys[i])
            return 0;
        st[i] = (step){keys[i], 0};
    }
    return line_in(text, len, st, depth);
}

/* The file's text (at most MAX_FILE bytes), or NULL. */
static char *read_text(const char *file, size_t *len)
{
    struct stat sb;
    FILE *f = stat(file, &sb) == 0 && sb.st_size <= MAX_FILE ? fopen(file, "rb") : NULL;
    if (!f)
        return NULL;
    char *text = xmalloc((size_t)sb.st_size + 1);
    *len = fread(text, 1, (size_t)sb.st_size, f);
    fclose(f);
    text[*len] = '\0';
    return text;
}

int fieldline_find(const char *file, int doc, int item, const char *path)
{
    size_t len;
    char *text = file && path ? read_text(file, &len) : NULL;
    if (!text)
        return 0;
    /* YAML: from where the document starts, numbered as manifest.c numbers
     * documents (a syntax error before it included); JSON: one value */
    long at =
        str_endswith(file, ".json") ? (doc == 0 ? 0 : -1) : manifest_doc_start(text, len, doc);
    step st[MAX_COMPS + 2];
    size_t n = 0, first = 0, rest = 0;
    if (item >= 0) { /* a List's item: items[item] first */
        st[n++] = (step){xstrdup("items"), 0};
        st[n++] = (step){NULL, item};
        first = n;
    }
    int line = 0;
    int ok = split_path(path, st + first, &rest) == 0;
    n += rest;
    if (ok && at >= 0) {
        line = line_in(text + at, len - (size_t)at, st, n);
        for (long k = 0; line > 0 && k < at; k++)
            line += text[k] == '\n';
    }
    for (size_t i = 0; i < n; i++)
        free((char *)st[i].key);
    free(text);
    return line;
}
