/*
 * ownwrites.c - see ownwrites.h.
 */
#include "config.h"

#include "ownwrites.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

void own_note(sched *s, trellis_object *o, int deleted)
{
    pthread_mutex_lock(&s->own_mu);
    grow(&s->own, &s->cap_own, s->n_own + 1, sizeof *s->own);
    s->own[s->n_own++] = (struct own_write){object_ref(o), deleted};
    pthread_mutex_unlock(&s->own_mu);
}

uint64_t own_pending(sched *s, trellis_object *before, trellis_object *after)
{
    pthread_mutex_lock(&s->own_mu);
    grow(&s->pend, &s->cap_pend, s->n_pend + 1, sizeof *s->pend);
    uint64_t gen = ++s->own_gen;
    s->pend[s->n_pend++] =
        (struct own_pending){before ? object_ref(before) : NULL, object_ref(after), gen};
    pthread_mutex_unlock(&s->own_mu);
    return gen;
}

static void pending_free(struct own_pending *p)
{
    if (p->before)
        object_unref(p->before);
    object_unref(p->after);
}

void own_pending_drop(sched *s, uint64_t gen)
{
    pthread_mutex_lock(&s->own_mu);
    for (size_t i = 0; i < s->n_pend; i++) {
        if (s->pend[i].gen == gen) { /* the order stays: earliest first */
            pending_free(&s->pend[i]);
            memmove(&s->pend[i], &s->pend[i + 1], (s->n_pend - i - 1) * sizeof *s->pend);
            s->n_pend--;
            break;
        }
    }
    pthread_mutex_unlock(&s->own_mu);
}

typedef struct own_flushing {
    sched *s;
    /* the writes noted up to here: in this flush (one handed to the
     * store while it ran may miss it; then it is followed no further) */
    uint64_t gen;
    store_fail_cb failed;
    void *ud;
} own_flushing;

/* The store did not write id: a plugin's write of it noted in this flush
 * is undone in the host's view (the earliest one's before: a store takes
 * or refuses an object's writes of one flush together). */
static void not_written(void *ud, const char *id, const char *why)
{
    own_flushing *f = ud;
    sched *s = f->s;
    trellis_object *before = NULL, *after = NULL;
    int found = 0;
    pthread_mutex_lock(&s->own_mu);
    for (size_t i = 0; i < s->n_pend && !found; i++) {
        struct own_pending *p = &s->pend[i];
        if (p->gen <= f->gen && strcmp(p->after->id, id) == 0) {
            found = 1;
            before = p->before ? object_ref(p->before) : NULL;
            after = object_ref(p->after);
        }
    }
    pthread_mutex_unlock(&s->own_mu);
    if (found) {
        log_error("%s %s: a plugin's write was not made: %s; it stays as the store has it",
                  after->kind, after->key, why);
        own_note(s, before ? before : after, before == NULL); /* a creation: gone */
        if (before)
            object_unref(before);
        object_unref(after);
    }
    if (f->failed)
        f->failed(f->ud, id, why);
}

int own_flush(sched *s, store_fail_cb failed, void *ud, char *err, size_t errlen)
{
    own_flushing f = {s, 0, failed, ud};
    pthread_mutex_lock(&s->own_mu);
    f.gen = s->own_gen;
    pthread_mutex_unlock(&s->own_mu);
    int rc = s->st->ops->flush(s->st, not_written, &f, err, errlen);
    /* taken or refused: no longer pending */
    pthread_mutex_lock(&s->own_mu);
    size_t k = 0;
    for (size_t i = 0; i < s->n_pend; i++) {
        if (s->pend[i].gen <= f.gen)
            pending_free(&s->pend[i]);
        else
            s->pend[k++] = s->pend[i];
    }
    s->n_pend = k;
    pthread_mutex_unlock(&s->own_mu);
    return rc;
}

void own_note_binding(sched *s, binding_change *ch)
{
    if (!ch->obj)
        return;
    own_note(s, ch->obj, ch->deleted);
    object_unref(ch->obj);
    ch->obj = NULL;
}

void own_forget(sched *s, const char *id)
{
    pthread_mutex_lock(&s->own_mu);
    size_t k = 0;
    for (size_t i = 0; i < s->n_own; i++) {
        if (strcmp(s->own[i].o->id, id) == 0)
            object_unref(s->own[i].o);
        else
            s->own[k++] = s->own[i];
    }
    s->n_own = k;
    pthread_mutex_unlock(&s->own_mu);
}

struct own_write *own_take(sched *s, size_t *n)
{
    pthread_mutex_lock(&s->own_mu);
    struct own_write *v = s->own;
    *n = s->n_own;
    s->own = NULL;
    s->n_own = s->cap_own = 0;
    pthread_mutex_unlock(&s->own_mu);
    return v;
}

void own_free(sched *s)
{
    size_t n;
    struct own_write *v = own_take(s, &n);
    for (size_t k = 0; k < n; k++)
        object_unref(v[k].o);
    free(v);
    for (size_t i = 0; i < s->n_pend; i++)
        pending_free(&s->pend[i]);
    free(s->pend);
    s->pend = NULL;
    s->n_pend = s->cap_pend = 0;
}
