/*
 * ownwrites.c - see ownwrites.h.
 */
#include "config.h"

#include "ownwrites.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* own_note with an undo's condition (0: none). */
static void note(sched *s, trellis_object *o, int deleted, int undo, trellis_object *expect)
{
    pthread_mutex_lock(&s->own_mu);
    grow(&s->own, &s->cap_own, s->n_own + 1, sizeof *s->own);
    s->own[s->n_own++] =
        (struct own_write){object_ref(o), deleted, undo, expect ? object_ref(expect) : NULL};
    pthread_mutex_unlock(&s->own_mu);
}

void own_note(sched *s, trellis_object *o, int deleted)
{
    note(s, o, deleted, 0, NULL);
}

void own_note_patched(sched *s, trellis_object *o, trellis_object *base)
{
    note(s, o, 0, OWN_IF_VERSION, base);
}

uint64_t own_pending(sched *s, int op, trellis_object *before, trellis_object *after)
{
    pthread_mutex_lock(&s->own_mu);
    grow(&s->pend, &s->cap_pend, s->n_pend + 1, sizeof *s->pend);
    uint64_t gen = ++s->own_gen;
    s->pend[s->n_pend++] =
        (struct own_pending){op, before ? object_ref(before) : NULL, object_ref(after), gen, 0};
    pthread_mutex_unlock(&s->own_mu);
    return gen;
}

void own_pending_queued(sched *s, uint64_t gen, trellis_object *now)
{
    pthread_mutex_lock(&s->own_mu);
    for (size_t i = 0; i < s->n_pend; i++) {
        if (s->pend[i].gen == gen) {
            s->pend[i].queued = 1;
            if (now != s->pend[i].after) {
                object_unref(s->pend[i].after);
                s->pend[i].after = object_ref(now);
            }
            break;
        }
    }
    pthread_mutex_unlock(&s->own_mu);
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
    /* the writes noted before it began: the store had taken them (or
     * refused them at once), so they are in it, but for one handed to
     * the store while this flush ran, whose refusal in the next is then
     * not undone */
    uint64_t gen;
    store_fail_cb failed;
    void *ud;
} own_flushing;

/* The store did not write id: the plugins' writes of it the store took
 * are undone in the host's view (a store takes or refuses an object's
 * writes of one flush together): the earliest one's before is seen again
 * (a creation: the object is seen gone), on the condition that the host
 * still holds what the latest made it see; when another change came
 * meanwhile (the watch), the host keeps it. */
static void not_written(void *ud, const char *id, const char *why)
{
    own_flushing *f = ud;
    sched *s = f->s;
    trellis_object *before = NULL, *after = NULL;
    int first = -1, last = -1;
    pthread_mutex_lock(&s->own_mu);
    for (size_t i = 0; i < s->n_pend; i++) {
        struct own_pending *p = &s->pend[i];
        if (!p->queued || strcmp(p->after->id, id) != 0)
            continue;
        if (first < 0) {
            first = p->op;
            before = p->before ? object_ref(p->before) : NULL;
        }
        if (after)
            object_unref(after);
        after = object_ref(p->after);
        last = p->op;
    }
    pthread_mutex_unlock(&s->own_mu);
    if (after) {
        log_error("%s %s: a plugin's write was not made: %s; it stays as the store has it",
                  after->kind, after->key, why);
        int undo = last == OWN_DELETE   ? OWN_IF_ABSENT
                   : last == OWN_CREATE ? OWN_IF_SAME
                                        : OWN_IF_HELD;
        note(s, before ? before : after, before == NULL, undo, last == OWN_DELETE ? NULL : after);
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
    /* taken or refused: no longer pending (a write the store took while
     * this flush ran stays for the next) */
    pthread_mutex_lock(&s->own_mu);
    size_t k = 0;
    for (size_t i = 0; i < s->n_pend; i++) {
        if (s->pend[i].queued && s->pend[i].gen <= f.gen)
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
    for (size_t k = 0; k < n; k++) {
        object_unref(v[k].o);
        if (v[k].expect)
            object_unref(v[k].expect);
    }
    free(v);
    for (size_t i = 0; i < s->n_pend; i++)
        pending_free(&s->pend[i]);
    free(s->pend);
    s->pend = NULL;
    s->n_pend = s->cap_pend = 0;
}
