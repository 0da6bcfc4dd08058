/*
 * docline.c - see docline.h. libyaml's event stream (JSON is YAML too)
 * with a stack of the containers entered: a map records whether its next
 * scalar is a key and whether the last key was on the path; a container
 * is on the path when every map above it was entered through the key the
 * path names at that depth.
 */
#include "config.h"

#include "docline.h"

#include <string.h>

#include <yaml.h>

/* deeper than any path a plugin asks for; below it nothing matches */
#define DOCLINE_DEPTH 64

typedef struct level {
    int map;       /* a map (else a sequence) */
    int want_key;  /* map: the next node is a key */
    int on_path;   /* every map above was entered through the path's key */
    int key_match; /* map: the last key is path[depth of this map - 1] */
} level;

typedef struct walk {
    level st[DOCLINE_DEPTH];
    size_t n; /* containers entered */
    const char *const *path;
    size_t depth;
} walk;

/* A node (scalar, alias or container) has started inside the top
 * container: whether it is a key that matches, as a line, or 0. */
static int scalar(walk *w, const yaml_event_t *ev)
{
    level *top = w->n && w->n <= DOCLINE_DEPTH ? &w->st[w->n - 1] : NULL;

    if (!top || !top->map)
        return 0;
    if (!top->want_key) {
        top->want_key = 1; /* a value: the next node is a key again */
        return 0;
    }
    top->want_key = 0;
    top->key_match = top->on_path && w->n <= w->depth && ev->type == YAML_SCALAR_EVENT &&
                     strcmp((const char *)ev->data.scalar.value, w->path[w->n - 1]) == 0;
    if (top->key_match && w->n == w->depth)
        return (int)ev->start_mark.line + 1;
    return 0;
}

static void enter(walk *w, int map)
{
    level *up = w->n && w->n <= DOCLINE_DEPTH ? &w->st[w->n - 1] : NULL;
    int on_path = !w->n || (up && up->on_path && up->map && !up->want_key && up->key_match);

    if (up && up->map)
        up->want_key = !up->want_key ? 1 : 0; /* a key or a value of the map above */
    if (w->n < DOCLINE_DEPTH) {
        level *l = &w->st[w->n];
        l->map = map;
        l->want_key = 1;
        l->on_path = on_path;
        l->key_match = 0;
    }
    w->n++;
}

int docline_find(const char *text, size_t len, const char *const *path, size_t depth)
{
    yaml_parser_t p;
    yaml_event_t ev;
    walk w;
    int line = 0, done = 0;

    memset(&w, 0, sizeof(w));
    w.path = path;
    w.depth = depth;
    if (!text || !yaml_parser_initialize(&p))
        return 0;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done && !line && yaml_parser_parse(&p, &ev)) {
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (!depth)
                line = (int)ev.start_mark.line + 1;
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            enter(&w, ev.type == YAML_MAPPING_START_EVENT);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            w.n--;
            break;
        case YAML_SCALAR_EVENT:
        case YAML_ALIAS_EVENT:
            line = scalar(&w, &ev);
            break;
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return line;
}
