/*
 * cache.c - see cache.h.
 */
#include "config.h"

#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void cache_init(cache *c, int n_counters)
{
    memset(c, 0, sizeof *c);
    hmap_init(&c->targets);
    hmap_init(&c->workloads);
    nominator_init(&c->nom);
    c->n_counters = n_counters;
}

static void free_target(cache_target *t)
{
    for (size_t i = 0; i < t->t.n_wl; i++)
        object_unref(t->t.wl[i]);
    free(t->t.wl);
    free(t->t.sums);
    if (t->t.obj)
        object_unref(t->t.obj);
    free(t->key);
    free(t->name);
    free(t);
}

void cache_free(cache *c)
{
    size_t i = 0;
    hmap_slot *s;
    while ((s = hmap_next(&c->workloads, &i))) {
        cache_workload *w = s->val;
        object_unref(w->obj); /* the map does not read its keys again */
        free(w->as);
        free(w);
    }
    i = 0;
    while ((s = hmap_next(&c->targets, &i)))
        free_target(s->val);
    hmap_free(&c->targets);
    hmap_free(&c->workloads);
    nominator_free(&c->nom);
    memset(c, 0, sizeof *c);
}

static void touch(cache *c, cache_target *t)
{
    t->t.gen = ++c->gen;
    if (c->mru == t)
        return;
    if (t->prev)
        t->prev->next = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->prev = NULL;
    t->next = c->mru;
    if (c->mru)
        c->mru->prev = t;
    c->mru = t;
}

static char *target_key(const char *kind, const char *name)
{
    return xasprintf("%s/%s", kind, name);
}

cache_target *cache_get_target(const cache *c, const char *kind, const char *name)
{
    /* asked once or more per binding: the key on the stack when it fits */
    char buf[256];
    size_t kl = strlen(kind), nl = strlen(name);
    if (kl + nl + 2 > sizeof buf) {
        char *k = target_key(kind, name);
        cache_target *t = hmap_get(&c->targets, k);
        free(k);
        return t;
    }
    memcpy(buf, kind, kl);
    buf[kl] = '/';
    memcpy(buf + kl + 1, name, nl + 1);
    return hmap_get(&c->targets, buf);
}

static cache_target *ensure_target(cache *c, const char *kind, const char *name)
{
    cache_target *t = cache_get_target(c, kind, name);
    if (t)
        return t;
    size_t kl = strlen(kind);
    t = xcalloc(1, sizeof *t + kl + 1);
    memcpy(t->kind, kind, kl + 1);
    t->key = target_key(kind, name);
    t->name = xstrdup(name);
    t->name_hash = hmap_hash(t->name);
    t->t.name = t->name;
    t->t.sums = xcalloc((size_t)(c->n_counters ? c->n_counters : 1), sizeof(int64_t));
    t->t.wl_cut = ++c->cuts;
    hmap_put(&c->targets, t->key, t);
    touch(c, t);
    return t;
}

cache_target *cache_set_target(cache *c, trellis_object *o)
{
    cache_target *t = ensure_target(c, o->kind, o->key);
    if (!t->t.obj)
        c->set_gen++;
    if (t->t.obj)
        object_unref(t->t.obj);
    t->t.obj = object_ref(o);
    touch(c, t);
    return t;
}

static void unlink_target(cache *c, cache_target *t)
{
    if (t->prev)
        t->prev->next = t->next;
    if (t->next)
        t->next->prev = t->prev;
    if (c->mru == t)
        c->mru = t->next;
    hmap_del(&c->targets, t->key);
    free_target(t);
}

void cache_remove_target(cache *c, const char *kind, const char *name)
{
    cache_target *t = cache_get_target(c, kind, name);
    if (!t || !t->t.obj)
        return;
    object_unref(t->t.obj);
    t->t.obj = NULL;
    c->set_gen++;
    c->removals++;
    if (t->t.n_wl == 0)
        unlink_target(c, t);
    else
        touch(c, t);
}

size_t cache_count_targets(const cache *c, const char *kind)
{
    size_t n = 0, i = 0;
    hmap_slot *s;
    while ((s = hmap_next(&c->targets, &i))) {
        const cache_target *t = s->val;
        if (t->t.obj && strcmp(t->kind, kind) == 0)
            n++;
    }
    return n;
}

/* Workloads are keyed by their object's id, which the entry borrows from
 * cw->obj: a new version of the object re-keys the entry before the old
 * one is released. */
cache_workload *cache_get_workload(const cache *c, const trellis_object *w)
{
    return hmap_get_h(&c->workloads, w->id, w->id_hash);
}

static cache_workload *ensure_workload(cache *c, trellis_object *w)
{
    int found;
    hmap_slot *sl = hmap_slot_h(&c->workloads, w->id, w->id_hash, &found);
    cache_workload *cw = sl->val;
    if (found) {
        if (cw->obj != w) {
            trellis_object *old = cw->obj;
            cw->obj = object_ref(w);
            cw->key = w->id;
            sl->key = cw->key;
            object_unref(old);
        }
        return cw;
    }
    cw = xcalloc(1, sizeof *cw);
    cw->obj = object_ref(w);
    cw->key = w->id;
    sl->val = cw;
    return cw;
}

static void add_sums(cache *c, cache_target *t, const trellis_object *w, int sign)
{
    if (!w->counters)
        return;
    for (int i = 0; i < c->n_counters; i++)
        t->t.sums[i] += sign * w->counters[i];
}

static int assign(cache *c, cache_workload *cw, cache_target *t, int assumed)
{
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].target == t)
            return -1; /* already there */
    cw->as = xrealloc(cw->as, (cw->n_as + 1) * sizeof *cw->as);
    cw->as[cw->n_as].target = t;
    cw->as[cw->n_as].assumed = assumed;
    cw->n_as++;
    grow(&t->t.wl, &t->t.cap_wl, t->t.n_wl + 1, sizeof *t->t.wl);
    t->t.wl[t->t.n_wl++] = object_ref(cw->obj);
    add_sums(c, t, cw->obj, +1);
    if (assumed)
        c->n_assumed++;
    touch(c, t);
    return 0;
}

int cache_add_bound(cache *c, trellis_object *w, const char *kind, const char *name)
{
    cache_workload *cw = ensure_workload(c, w);
    nominator_drop(&c->nom, w); /* placed: not a nomination any more */
    return assign(c, cw, ensure_target(c, kind, name), 0);
}

int cache_assume(cache *c, trellis_object *w, cache_target *t)
{
    nominator_drop(&c->nom, w); /* kube's DeleteNominatedPodIfExists on assume */
    return assign(c, ensure_workload(c, w), t, 1);
}

int cache_finish_binding(cache *c, const trellis_object *w, const cache_target *t)
{
    cache_workload *cw = cache_get_workload(c, w);
    if (!cw)
        return -1;
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].target == t && cw->as[i].assumed) {
            cw->as[i].assumed = 0;
            c->n_assumed--;
            return 0;
        }
    return -1;
}

static void unassign(cache *c, cache_workload *cw, size_t idx)
{
    cache_target *t = cw->as[idx].target;
    if (cw->as[idx].assumed)
        c->n_assumed--;
    for (size_t j = 0; j < t->t.n_wl; j++) {
        if (strcmp(t->t.wl[j]->key, cw->obj->key) == 0 &&
            strcmp(t->t.wl[j]->kind, cw->obj->kind) == 0) {
            add_sums(c, t, t->t.wl[j], -1);
            object_unref(t->t.wl[j]);
            memmove(&t->t.wl[j], &t->t.wl[j + 1], (t->t.n_wl - j - 1) * sizeof *t->t.wl);
            t->t.n_wl--;
            t->t.wl_cut = ++c->cuts;
            break;
        }
    }
    memmove(&cw->as[idx], &cw->as[idx + 1], (cw->n_as - idx - 1) * sizeof *cw->as);
    cw->n_as--;
    if (!t->t.obj && t->t.n_wl == 0)
        unlink_target(c, t);
    else
        touch(c, t);
}

int cache_forget(cache *c, const trellis_object *w, const cache_target *t)
{
    cache_workload *cw = cache_get_workload(c, w);
    if (!cw)
        return -1;
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].target == t) {
            unassign(c, cw, i);
            return 0;
        }
    return -1;
}

int cache_forget_assumed(cache *c, const trellis_object *w, const cache_target *t)
{
    cache_workload *cw = cache_get_workload(c, w);
    if (!cw)
        return -1;
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].target == t && cw->as[i].assumed) {
            unassign(c, cw, i);
            return 0;
        }
    return -1;
}

void cache_remove_workload(cache *c, const trellis_object *w)
{
    cache_workload *cw = cache_get_workload(c, w);
    if (!cw)
        return;
    while (cw->n_as)
        unassign(c, cw, cw->n_as - 1);
    hmap_del_h(&c->workloads, cw->key, cw->obj->id_hash);
    object_unref(cw->obj);
    free(cw->as);
    free(cw);
}
