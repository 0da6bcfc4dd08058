/*
 * ownwrites.c - see ownwrites.h.
 */
#include "config.h"

#include "ownwrites.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void own_note(sched *s, trellis_object *o, int deleted)
{
    pthread_mutex_lock(&s->own_mu);
    grow(&s->own, &s->cap_own, s->n_own + 1, sizeof *s->own);
    s->own[s->n_own++] = (struct own_write){object_ref(o), deleted};
    pthread_mutex_unlock(&s->own_mu);
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
}
