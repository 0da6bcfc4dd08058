/*
 * verchain.c - see verchain.h.
 */
#include "config.h"

#include "verchain.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "util.h"

/* the replaced versions kept per object: a host writes an object a few
 * times within the watch's lag; a write made on a version older than
 * these stays refused */
#define VC_KEEP 8

typedef struct chain {
    char *id;     /* the key in the map */
    uint64_t seq; /* when it started: the oldest is dropped first */
    char *latest; /* made by the last write */
    char *prev[VC_KEEP];
    size_t n_prev, next; /* prev fills, then wraps at next */
} chain;

struct verchain {
    pthread_mutex_t mu;
    hmap by_id; /* id -> chain */
    size_t max;
    uint64_t seq;
    /* the ids in the order their chains started (a ring of max; an id
     * whose chain ended or started again is skipped when its turn comes) */
    char **order;
    uint64_t *order_seq;
    size_t head, n_order;
};

verchain *verchain_new(size_t max)
{
    verchain *v = xcalloc(1, sizeof *v);
    v->max = max ? max : VERCHAIN_MAX;
    v->order = xcalloc(v->max, sizeof *v->order);
    v->order_seq = xcalloc(v->max, sizeof *v->order_seq);
    pthread_mutex_init(&v->mu, NULL);
    hmap_init(&v->by_id);
    return v;
}

static void chain_free(chain *c)
{
    for (size_t i = 0; i < c->n_prev; i++)
        free(c->prev[i]);
    free(c->latest);
    free(c->id);
    free(c);
}

void verchain_free(verchain *v)
{
    if (!v)
        return;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&v->by_id, &i)))
        chain_free(sl->val);
    hmap_free(&v->by_id);
    for (size_t k = 0; k < v->n_order; k++)
        free(v->order[(v->head + k) % v->max]);
    free(v->order);
    free(v->order_seq);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

static int in_chain(const chain *c, const char *version)
{
    if (strcmp(c->latest, version) == 0)
        return 1;
    for (size_t i = 0; i < c->n_prev; i++)
        if (strcmp(c->prev[i], version) == 0)
            return 1;
    return 0;
}

int verchain_own_between(verchain *v, const char *id, const char *from, const char *to)
{
    if (strcmp(from, to) == 0)
        return 1;
    if (!*from || !*to)
        return 0;
    pthread_mutex_lock(&v->mu);
    const chain *c = hmap_get(&v->by_id, id);
    int own = c && in_chain(c, from) && in_chain(c, to);
    pthread_mutex_unlock(&v->mu);
    return own;
}

static void keep_prev(chain *c, const char *version)
{
    if (c->n_prev < VC_KEEP) {
        c->prev[c->n_prev++] = xstrdup(version);
        return;
    }
    free(c->prev[c->next]);
    c->prev[c->next] = xstrdup(version);
    c->next = (c->next + 1) % VC_KEEP;
}

static void drop(verchain *v, chain *c)
{
    hmap_del(&v->by_id, c->id);
    chain_free(c);
}

/* Room for one more chain: the oldest entries of the ring go, and with
 * them the chain each started when it is still that one. */
static void make_room(verchain *v)
{
    while (v->n_order == v->max || (v->n_order && v->by_id.len >= v->max)) {
        char *id = v->order[v->head];
        uint64_t seq = v->order_seq[v->head];
        v->head = (v->head + 1) % v->max;
        v->n_order--;
        chain *c = hmap_get(&v->by_id, id);
        if (c && c->seq == seq)
            drop(v, c);
        free(id);
    }
}

void verchain_wrote(verchain *v, const char *id, const char *sent, const char *made)
{
    if (!*sent || !*made || strcmp(sent, made) == 0)
        return;
    pthread_mutex_lock(&v->mu);
    chain *c = hmap_get(&v->by_id, id);
    if (c && strcmp(c->latest, sent) != 0) { /* not from its latest: start again */
        drop(v, c);
        c = NULL;
    }
    if (!c) {
        make_room(v);
        c = xcalloc(1, sizeof *c);
        c->id = xstrdup(id);
        c->latest = xstrdup(sent);
        c->seq = ++v->seq;
        hmap_put(&v->by_id, c->id, c);
        size_t at = (v->head + v->n_order++) % v->max;
        v->order[at] = xstrdup(id);
        v->order_seq[at] = c->seq;
    }
    keep_prev(c, c->latest);
    free(c->latest);
    c->latest = xstrdup(made);
    pthread_mutex_unlock(&v->mu);
}

void verchain_forget(verchain *v, const char *id)
{
    pthread_mutex_lock(&v->mu);
    chain *c = hmap_get(&v->by_id, id);
    if (c)
        drop(v, c);
    pthread_mutex_unlock(&v->mu);
}

size_t verchain_count(verchain *v)
{
    pthread_mutex_lock(&v->mu);
    size_t n = v->by_id.len;
    pthread_mutex_unlock(&v->mu);
    return n;
}
