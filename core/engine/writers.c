/*
 * writers.c - see writers.h.
 */
#include "config.h"

#include "writers.h"

#include <stdio.h>
#include <stdlib.h>

#include "binding.h"
#include "hmap.h"
#include "placements.h"
#include "profile_impl.h"
#include "util.h"

typedef struct wrote {
    char *id; /* the key */
    decision *d;
    char *target; /* NULL: a created target */
    int released;
    struct wrote *next; /* the next decision (or list) found with the same id */
} wrote;

struct writers {
    hmap bindings, created; /* id -> wrote */
    char *last;             /* the target writers_take_binding gave last */
};

/* Note that d wrote id, after the writers of id noted before it (in the
 * order a search of the decisions finds them: a decision's placements
 * before its releases); with only_first, none when one is noted. */
static void note(hmap *m, const char *id, decision *d, const char *target, int released,
                 int only_first)
{
    wrote *first = hmap_get(m, id);
    if (first && only_first)
        return;
    wrote *e = xcalloc(1, sizeof *e);
    e->id = xstrdup(id);
    e->d = d;
    e->target = target ? xstrdup(target) : NULL;
    e->released = released;
    if (!first) {
        hmap_put(m, e->id, e);
        return;
    }
    while (first->next)
        first = first->next;
    first->next = e;
}

writers *writers_new(const decisions *ds)
{
    writers *w = xcalloc(1, sizeof *w);
    hmap_init(&w->bindings);
    hmap_init(&w->created);
    for (size_t i = 0; i < decisions_count(ds); i++) {
        decision *d = decisions_at(ds, i);
        for (int r = 0; d->p && d->p->placed && r < 2; r++) {
            char **v = r ? d->released : d->added;
            for (uint32_t k = 0; k < (r ? d->n_released : d->n_added); k++) {
                char buf[PLACEMENTS_ID_MAX];
                note(&w->bindings, binding_written_id(d->p, d->w, v[k], buf, sizeof buf), d, v[k],
                     r, 0);
            }
        }
        for (size_t k = 0; k < d->n_created; k++) {
            const obj_id *c = &d->created[k];
            char *id = xasprintf("%s/%s/%s", c->kind, c->namespace_, c->name);
            note(&w->created, id, d, NULL, 0, 1);
            free(id);
        }
    }
    return w;
}

static void free_wrote(wrote *e)
{
    free(e->id);
    free(e->target);
    free(e);
}

decision *writers_take_binding(writers *w, const char *id, const char **target, int *released)
{
    wrote *e = hmap_del(&w->bindings, id);
    if (!e)
        return NULL;
    if (e->next) /* the next one is found by the next report */
        hmap_put(&w->bindings, e->next->id, e->next);
    decision *d = e->d;
    free(w->last);
    w->last = e->target; /* kept for the caller until the next call */
    e->target = NULL;
    *target = w->last;
    *released = e->released;
    free_wrote(e);
    return d;
}

decision *writers_creator(const writers *w, const char *id)
{
    const wrote *e = hmap_get(&w->created, id);
    return e ? e->d : NULL;
}

static void free_map(hmap *m)
{
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(m, &i)))
        for (wrote *e = sl->val, *next; e; e = next) {
            next = e->next;
            free_wrote(e);
        }
    hmap_free(m);
}

void writers_free(writers *w)
{
    if (!w)
        return;
    free_map(&w->bindings);
    free_map(&w->created);
    free(w->last);
    free(w);
}
