/*
 * nominator.c - see nominator.h.
 */
#include "config.h"

#include "nominator.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void nominator_init(nominator *m)
{
    memset(m, 0, sizeof *m);
    hmap_init(&m->by_id);
}

static void free_entry(nomination *e)
{
    object_unref(e->w);
    free(e->kind);
    free(e->target);
    free(e);
}

void nominator_free(nominator *m)
{
    for (size_t i = 0; i < m->n; i++)
        free_entry(m->v[i]);
    free(m->v);
    hmap_free(&m->by_id);
    memset(m, 0, sizeof *m);
}

const nomination *nominator_get(const nominator *m, const trellis_object *w)
{
    return m->n ? hmap_get(&m->by_id, w->id) : NULL;
}

void nominator_drop(nominator *m, const trellis_object *w)
{
    if (!m->n)
        return;
    nomination *e = hmap_del(&m->by_id, w->id);
    if (!e)
        return;
    m->v[e->pos] = m->v[--m->n];
    m->v[e->pos]->pos = e->pos;
    free_entry(e);
    m->gen++;
}

/* Point the entry at w (the map's key is w's id). */
static void hold(nominator *m, nomination *e, trellis_object *w)
{
    if (e->w == w)
        return;
    trellis_object *old = e->w;
    e->w = object_ref(w);
    hmap_put(&m->by_id, w->id, e);
    if (old)
        object_unref(old);
}

void nominator_set(nominator *m, trellis_object *w, const char *kind, const char *name)
{
    nomination *e = hmap_get(&m->by_id, w->id);
    if (e && strcmp(e->kind, kind) == 0 && strcmp(e->target, name) == 0) {
        hold(m, e, w);
        return;
    }
    if (!e) {
        e = xcalloc(1, sizeof *e);
        grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
        e->pos = m->n;
        m->v[m->n++] = e;
    }
    free(e->kind);
    free(e->target);
    e->kind = xstrdup(kind);
    e->target = xstrdup(name);
    hold(m, e, w);
    m->gen++;
}

void nominator_refresh(nominator *m, trellis_object *w)
{
    nomination *e = m->n ? hmap_get(&m->by_id, w->id) : NULL;
    if (e && e->w != w) {
        hold(m, e, w);
        m->gen++; /* its counters may have changed */
    }
}
