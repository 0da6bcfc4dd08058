/*
 * queue.c - see queue.h.
 */
#include "config.h"

#include "queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void queue_init(queue *q, uint64_t backoff_initial_ms, uint64_t backoff_max_ms,
                uint64_t max_unschedulable_ms)
{
    memset(q, 0, sizeof *q);
    hmap_init(&q->items);
    q->backoff_initial_ms = backoff_initial_ms;
    q->backoff_max_ms = backoff_max_ms;
    q->max_unschedulable_ms = max_unschedulable_ms;
}

static void free_item(qitem *it)
{
    object_unref(it->w);
    free(it);
}

void queue_free(queue *q)
{
    size_t i = 0;
    hmap_slot *s;
    while ((s = hmap_next(&q->items, &i)))
        free_item(s->val);
    hmap_free(&q->items);
    free(q->active.v);
    free(q->active.k);
    free(q->backoff.v);
    free(q->backoff.k);
    memset(q, 0, sizeof *q);
}

/* heap ordering: active uses the queue-sort hook, then (as the backoff,
 * by due time first) the order of first queueing */
static int before(const queue *q, const qheap *h, size_t i, size_t j)
{
    const qkey *a = &h->k[i], *b = &h->k[j];
    if (h == &q->active && q->less) {
        const qitem *x = h->v[i], *y = h->v[j];
        if (q->less(q->less_ud, x->w, x->seq, y->w, y->seq))
            return 1;
        if (q->less(q->less_ud, y->w, y->seq, x->w, x->seq))
            return 0;
    }
    if (a->due != b->due)
        return a->due < b->due;
    return a->seq < b->seq;
}

static void hswap(qheap *h, size_t i, size_t j)
{
    qitem *t = h->v[i];
    qkey tk = h->k[i];
    h->v[i] = h->v[j];
    h->k[i] = h->k[j];
    h->v[j] = t;
    h->k[j] = tk;
    h->v[i]->hidx = i;
    h->v[j]->hidx = j;
}

/* Around a sift of the active heap that asks the queue-sort hook. */
static int order_enter(const queue *q, const qheap *h, const qitem *it)
{
    if (h == &q->backoff || !q->less || !q->order_enter)
        return 0;
    q->order_enter(q->less_ud, it->w);
    return 1;
}

static void up(const queue *q, qheap *h, size_t i)
{
    int entered = i > 0 && order_enter(q, h, h->v[i]);
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(q, h, i, p))
            break;
        hswap(h, i, p);
        i = p;
    }
    if (entered)
        q->order_leave(q->less_ud);
}

static void down(const queue *q, qheap *h, size_t i)
{
    int entered = 2 * i + 1 < h->n && order_enter(q, h, h->v[i]);
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && before(q, h, l, m))
            m = l;
        if (r < h->n && before(q, h, r, m))
            m = r;
        if (m == i)
            break;
        hswap(h, i, m);
        i = m;
    }
    if (entered)
        q->order_leave(q->less_ud);
}

static void hpush(const queue *q, qheap *h, qitem *it)
{
    grow(&h->v, &h->cap, h->n + 1, sizeof *h->v);
    grow(&h->k, &h->cap_k, h->n + 1, sizeof *h->k);
    it->hidx = h->n;
    h->k[h->n] = (qkey){h == &q->backoff ? it->ready_ms : 0, it->seq};
    h->v[h->n++] = it;
    up(q, h, it->hidx);
}

static void hremove(const queue *q, qheap *h, qitem *it)
{
    size_t i = it->hidx;
    h->n--;
    if (i != h->n) {
        h->v[i] = h->v[h->n];
        h->k[i] = h->k[h->n];
        h->v[i]->hidx = i;
        down(q, h, i);
        up(q, h, i);
    }
}

static void to_active(queue *q, qitem *it, int ev)
{
    it->state = Q_ACTIVE;
    hpush(q, &q->active, it);
    q->incoming[QI_ACTIVE][ev]++;
}

static void to_backoff(queue *q, qitem *it, int ev)
{
    it->state = Q_BACKOFF;
    hpush(q, &q->backoff, it);
    q->incoming[QI_BACKOFF][ev]++;
}

/* the SLI's start, the first time it may be popped */
static void first_queued(qitem *it, uint64_t now_ms)
{
    if (!it->queued) {
        it->queued = 1;
        it->first_ms = now_ms;
    }
}

/* into the pool; counted under the plugins that rejected it when count */
static void to_pool(queue *q, qitem *it, uint64_t now_ms, int count)
{
    it->state = Q_UNSCHEDULABLE;
    it->unsched_ms = now_ms;
    q->n_unschedulable++;
    it->counted = count ? it->rejectors & ~QUEUE_REJ_ANY : 0;
    for (uint64_t m = it->counted; m; m &= m - 1)
        q->n_rejected[__builtin_ctzll(m)]++;
}

/* take an item out of wherever it is */
static void detach(queue *q, qitem *it)
{
    if (it->state == Q_ACTIVE)
        hremove(q, &q->active, it);
    else if (it->state == Q_BACKOFF)
        hremove(q, &q->backoff, it);
    else if (it->state == Q_UNSCHEDULABLE) {
        q->n_unschedulable--;
        for (uint64_t m = it->counted; m; m &= m - 1)
            q->n_rejected[__builtin_ctzll(m)]--;
        it->counted = 0;
    } else if (it->state == Q_GATED)
        q->n_gated--;
    it->state = 0;
}

void queue_add(queue *q, trellis_object *w, uint64_t now_ms)
{
    qitem *it = hmap_get_h(&q->items, w->id, w->id_hash);
    if (it) {
        trellis_object *old = it->w;
        it->w = object_ref(w);
        it->key = w->id;
        hmap_put_h(&q->items, it->key, it->w->id_hash, it);
        object_unref(old);
        if (it->state == Q_UNSCHEDULABLE || it->state == Q_GATED) {
            detach(q, it);
            to_active(q, it, QE_UPDATE);
            first_queued(it, now_ms);
        } else if (it->state == Q_ACTIVE) {
            /* the order may depend on the object */
            hremove(q, &q->active, it);
            hpush(q, &q->active, it);
        }
        return;
    }
    it = xcalloc(1, sizeof *it);
    it->w = object_ref(w);
    it->key = w->id;
    it->seq = q->next_seq++;
    hmap_put_h(&q->items, it->key, it->w->id_hash, it);
    to_active(q, it, QE_ADD);
    first_queued(it, now_ms);
}

void queue_gate(queue *q, trellis_object *w)
{
    qitem *it = hmap_get_h(&q->items, w->id, w->id_hash);
    if (it && it->state == Q_IN_FLIGHT)
        return;
    q->incoming[QI_GATED][it ? QE_UPDATE : QE_ADD]++;
    if (it) {
        trellis_object *old = it->w;
        detach(q, it);
        it->w = object_ref(w);
        it->key = w->id;
        hmap_put_h(&q->items, it->key, it->w->id_hash, it);
        object_unref(old);
    } else {
        it = xcalloc(1, sizeof *it);
        it->w = object_ref(w);
        it->key = w->id;
        it->seq = q->next_seq++;
        hmap_put_h(&q->items, it->key, it->w->id_hash, it);
    }
    it->state = Q_GATED;
    q->n_gated++;
}

size_t queue_gated(const queue *q)
{
    return q->n_gated;
}

static void flush_backoff(queue *q, uint64_t now_ms)
{
    while (q->backoff.n && q->backoff.k[0].due <= now_ms) {
        qitem *it = q->backoff.v[0];
        detach(q, it);
        to_active(q, it, QE_BACKOFF);
    }
}

qitem *queue_pop(queue *q, uint64_t now_ms)
{
    flush_backoff(q, now_ms);
    if (!q->active.n)
        return NULL;
    qitem *it = q->active.v[0];
    detach(q, it);
    it->state = Q_IN_FLIGHT;
    it->moved = 0;
    return it;
}

void queue_done(queue *q, qitem *it)
{
    hmap_del_h(&q->items, it->key, it->w->id_hash);
    free_item(it);
}

uint64_t queue_backoff_ms(const queue *q, unsigned attempts)
{
    uint64_t d = q->backoff_initial_ms;
    for (unsigned i = 1; i < attempts && d < q->backoff_max_ms; i++)
        d *= 2;
    return d < q->backoff_max_ms ? d : q->backoff_max_ms;
}

void queue_requeue(queue *q, qitem *it, int unschedulable, uint64_t now_ms)
{
    it->attempts++;
    it->ready_ms = now_ms + queue_backoff_ms(q, it->attempts);
    it->wake_ms = 0;
    if (unschedulable) {
        to_pool(q, it, now_ms, 1);
        q->incoming[QI_UNSCHEDULABLE][QE_FAILURE]++;
    } else {
        to_backoff(q, it, QE_FAILURE);
    }
}

void queue_park(queue *q, qitem *it, uint64_t now_ms)
{
    /* placed as it wants: neither a failure nor unschedulable by anyone */
    it->attempts = 0; /* no backoff grows */
    it->ready_ms = now_ms;
    it->wake_ms = 0;
    to_pool(q, it, now_ms, 0);
}

void queue_wake_at(queue *q, qitem *it, uint64_t at_ms)
{
    (void)q;
    if (it->state == Q_UNSCHEDULABLE)
        it->wake_ms = at_ms ? at_ms : 1;
}

void queue_retry_now(queue *q, qitem *it)
{
    it->attempts++;
    to_active(q, it, QE_RETRY);
}

typedef struct deadline {
    uint64_t now_ms, max_ms;
} deadline;

static int expired(void *ud, qitem *it)
{
    const deadline *d = ud;
    return d->now_ms - it->unsched_ms >= d->max_ms || (it->wake_ms && d->now_ms >= it->wake_ms);
}

static size_t move_if(queue *q, uint64_t now_ms, int (*pred)(void *ud, qitem *it), void *ud, int ev)
{
    size_t i = 0, moved = 0;
    hmap_slot *s;
    while ((s = hmap_next(&q->items, &i))) {
        qitem *it = s->val;
        if (it->state != Q_UNSCHEDULABLE || (pred && !pred(ud, it)))
            continue;
        detach(q, it);
        moved++;
        if (it->ready_ms <= now_ms) {
            to_active(q, it, ev);
        } else {
            it->moved = 1;
            to_backoff(q, it, ev);
        }
    }
    return moved;
}

size_t queue_move_if(queue *q, uint64_t now_ms, int (*pred)(void *ud, qitem *it), void *ud)
{
    return move_if(q, now_ms, pred, ud, QE_CHANGE);
}

size_t queue_release_moved(queue *q, unsigned most)
{
    size_t n = 0;
    qitem **v = xmalloc((q->backoff.n ? q->backoff.n : 1) * sizeof *v);
    for (size_t i = 0; i < q->backoff.n; i++)
        if (q->backoff.v[i]->moved && q->backoff.v[i]->released < most)
            v[n++] = q->backoff.v[i];
    for (size_t i = 0; i < n; i++) {
        v[i]->released++;
        detach(q, v[i]);
        to_active(q, v[i], QE_BACKOFF);
    }
    free(v);
    return n;
}

void queue_move_all(queue *q, uint64_t now_ms)
{
    move_if(q, now_ms, NULL, NULL, QE_CHANGE);
}

void queue_flush_unschedulable(queue *q, uint64_t now_ms)
{
    deadline d = {now_ms, q->max_unschedulable_ms};
    move_if(q, now_ms, expired, &d, QE_TIMEOUT);
}

qitem *queue_find(const queue *q, const trellis_object *w)
{
    return hmap_get_h(&q->items, w->id, w->id_hash);
}

void queue_counts(const queue *q, size_t *active, size_t *backoff, size_t *unschedulable)
{
    *active = q->active.n;
    *backoff = q->backoff.n;
    *unschedulable = q->n_unschedulable;
}

qitem *queue_take(queue *q, trellis_object *w, uint64_t now_ms)
{
    queue_add(q, w, now_ms);
    qitem *it = hmap_get_h(&q->items, w->id, w->id_hash);
    if (it->state == Q_IN_FLIGHT)
        return NULL;
    detach(q, it);
    it->state = Q_IN_FLIGHT;
    return it;
}

void queue_delete(queue *q, const trellis_object *w)
{
    qitem *it = queue_find(q, w);
    if (!it || it->state == Q_IN_FLIGHT)
        return;
    detach(q, it);
    hmap_del_h(&q->items, it->key, it->w->id_hash);
    free_item(it);
}

uint64_t queue_next_due(const queue *q)
{
    return q->backoff.n ? q->backoff.k[0].due : UINT64_MAX;
}

size_t queue_len(const queue *q)
{
    return q->items.len;
}

void queue_incoming_label(int qi, int ev, const char **queue_name, const char **event)
{
    static const char *const queues[QI_COUNT] = {"active", "backoff", "unschedulable", "gated"};
    static const char *const events[QE_COUNT] = {"PodAdd",
                                                 "PodUpdate",
                                                 "ScheduleAttemptFailure",
                                                 "BackoffComplete",
                                                 "UnschedulableTimeout",
                                                 "ClusterEvent",
                                                 "PostFilterRetry"};
    *queue_name = qi >= 0 && qi < QI_COUNT ? queues[qi] : "";
    *event = ev >= 0 && ev < QE_COUNT ? events[ev] : "";
}
