/*
 * wqueue.c - see wqueue.h.
 */
#include "config.h"

#include "wqueue.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "util.h"

void wqueue_init(wqueue *q)
{
    memset(q, 0, sizeof *q);
    hmap_init(&q->ix);
}

static int is_binding(const char *sub)
{
    return sub && strcmp(sub, "binding") == 0;
}

static int is_status(const char *sub)
{
    return sub && strcmp(sub, "status") == 0;
}

/* The error of a write (op) of o that the queued w stands in the way of. */
static void queued_already(const trellis_object *o, int op, const wq_write *w, char *err,
                           size_t errlen)
{
    errf(err, errlen, "%s %s: a %s is queued already", o->kind, o->key,
         w->op == WQ_CREATE   ? "creation"
         : w->op == WQ_REMOVE ? "removal"
         : op == WQ_PATCH     ? "patch of another part"
                              : "patch");
}

/* The write of o's part queued, or a new one; NULL with err when another
 * write of o stands in the way. */
static wq_write *write_for(wqueue *q, const trellis_object *o, int op, const char *sub, int beside,
                           char *err, size_t errlen)
{
    int bind = beside && op == WQ_PATCH && is_binding(sub);
    char *ix = bind ? xasprintf("%s\037binding", o->id) : xstrdup(o->id);
    uintptr_t at = (uintptr_t)hmap_get(&q->ix, ix);
    if (beside) { /* the other part queued for the object: a status patch beside a Binding */
        char *other = bind ? xstrdup(o->id) : xasprintf("%s\037binding", o->id);
        uintptr_t ot = (uintptr_t)hmap_get(&q->ix, other);
        free(other);
        const wq_write *w = ot ? &q->v[ot - 1] : NULL;
        if (w &&
            !(bind ? w->op == WQ_PATCH && is_status(w->sub) : op == WQ_PATCH && is_status(sub))) {
            free(ix);
            queued_already(o, op, w, err, errlen);
            return NULL;
        }
    }
    if (at) {
        free(ix);
        wq_write *w = &q->v[at - 1];
        int same = !w->sub == !sub && (!sub || strcmp(sub, w->sub) == 0);
        /* the object and its status: parts of one write (beside) */
        int parts = beside && (!w->sub || is_status(w->sub)) && (!sub || is_status(sub));
        if (op == WQ_REMOVE && w->op == WQ_PATCH && !w->then_remove) {
            if (beside) {
                w->then_remove = 1;
            } else { /* the object goes: its edits with it */
                for (size_t i = 0; i < w->n_edits; i++)
                    store_edit_free(&w->edits[i]);
                w->n_edits = 0;
                w->op = WQ_REMOVE;
            }
            return w;
        }
        if (w->op != op || op != WQ_PATCH || w->then_remove || !(same || parts)) {
            queued_already(o, op, w, err, errlen);
            return NULL;
        }
        return w;
    }
    grow(&q->v, &q->cap, q->n + 1, sizeof *q->v);
    wq_write *w = &q->v[q->n++];
    memset(w, 0, sizeof *w);
    w->id = xstrdup(o->id);
    w->ix = ix;
    w->op = op;
    w->o = object_ref((trellis_object *)o);
    w->sub = sub ? xstrdup(sub) : NULL;
    /* the index keeps positions: v may move */
    hmap_put(&q->ix, w->ix, (void *)(uintptr_t)q->n);
    return w;
}

int wqueue_add(wqueue *q, const trellis_object *o, int op, int beside, char *err, size_t errlen)
{
    return write_for(q, o, op, NULL, beside, err, errlen) ? 0 : -1;
}

int wqueue_patch(wqueue *q, const trellis_object *o, const char *sub, const store_edit *edits,
                 size_t n, int beside, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (edit_check(o, &edits[i], err, errlen) < 0)
            return -1;
    wq_write *w = write_for(q, o, WQ_PATCH, sub, beside, err, errlen);
    if (!w)
        return -1;
    w->edits = xrealloc(w->edits, (w->n_edits + n + 1) * sizeof *w->edits);
    w->in_status = xrealloc(w->in_status, w->n_edits + n + 1);
    for (size_t i = 0; i < n; i++) {
        w->in_status[w->n_edits] = (unsigned char)is_status(sub);
        w->edits[w->n_edits++] = store_edit_copy(&edits[i]);
    }
    return 0;
}

wq_write *wqueue_take(wqueue *q, size_t *n)
{
    wq_write *v = q->v;
    *n = q->n;
    hmap_free(&q->ix);
    wqueue_init(q);
    return v;
}

int wq_write_is_binding(const wq_write *w)
{
    return w->op == WQ_PATCH && is_binding(w->sub);
}

void wq_write_free(wq_write *w)
{
    for (size_t i = 0; i < w->n_edits; i++)
        store_edit_free(&w->edits[i]);
    free(w->edits);
    free(w->in_status);
    object_unref(w->o);
    free(w->id);
    free(w->ix);
    free(w->sub);
    free(w->why);
}

void wqueue_clear(wqueue *q)
{
    size_t n;
    wq_write *v = wqueue_take(q, &n);
    for (size_t i = 0; i < n; i++)
        wq_write_free(&v[i]);
    free(v);
}
