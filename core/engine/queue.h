/*
 * queue.h - the scheduling queue of one profile.
 *
 * Three places, as in kube-scheduler: the active heap, ordered by the
 * profile's queue-sort hook (FIFO when it has none); the backoff heap,
 * ordered by the time a workload may be tried again, with a delay that
 * doubles per failed attempt from the profile's initial to its maximum
 * backoff; and the unschedulable pool, which holds workloads that did not
 * fit until something changes (queue_move_all) or until they have waited
 * the profile's maximum time there. Besides, the gated workloads: pending
 * ones a pre_enqueue plugin holds back (kube's PreEnqueue, its
 * "gated" pods), never popped, counted, until the workload changes and is
 * added again (queue_add) or goes (queue_delete). Times are passed in by the caller
 * (milliseconds of a monotonic clock), so tests drive the clock.
 */
#ifndef TRELLIS_QUEUE_H
#define TRELLIS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"
#include "object.h"

enum { Q_ACTIVE = 1, Q_BACKOFF, Q_UNSCHEDULABLE, Q_IN_FLIGHT, Q_GATED };
#define QUEUE_REJ_ANY (1ull << 63)

/* Entries into the queues, counted for kube-scheduler's
 * scheduler_queue_incoming_pods_total{queue,event}: by queue (QI_*) and
 * event (QE_*; queue_incoming_label names both). */
enum { QI_ACTIVE, QI_BACKOFF, QI_UNSCHEDULABLE, QI_GATED, QI_COUNT };
enum {
    QE_ADD,     /* PodAdd: a new pending workload */
    QE_UPDATE,  /* PodUpdate: a changed workload out of the pool or the gate */
    QE_FAILURE, /* ScheduleAttemptFailure: a failed attempt */
    QE_BACKOFF, /* BackoffComplete */
    QE_TIMEOUT, /* UnschedulableTimeout: waited its longest, or woken */
    QE_CHANGE,  /* ClusterEvent: a change that may help it (queueing hints) */
    QE_RETRY,   /* PostFilterRetry: a post-filter made room, tried at once */
    QE_COUNT
};

typedef struct qitem {
    trellis_object *w; /* one reference */
    const char *key;   /* the workload's id (w->id) */
    uint64_t seq;      /* first time queued, for FIFO order */
    unsigned attempts;
    uint64_t ready_ms;   /* backoff: may be retried from then */
    uint64_t unsched_ms; /* when it entered the unschedulable pool */
    uint64_t wake_ms;    /* unschedulable: tried again from then even when
                            nothing changes (queue_wake_at); 0: never */
    int state;
    int moved;         /* in backoff because something changed (queue_move_if) */
    unsigned released; /* times queue_release_moved took it back */
    size_t hidx;
    /* why it is unschedulable: bit i = the profile's plugin i rejected it
     * (QUEUE_REJ_ANY: anything may help), for queueing hints */
    uint64_t rejectors;
    /* the plugins it is counted under in n_rejected while in the pool */
    uint64_t counted;
    /* when it first entered the active queue (the scheduling SLI's
     * start: gated time is not counted), valid when queued is 1 */
    uint64_t first_ms;
    int queued;
} qitem;

/* A heap's order keys beside its items, so that a sift compares without
 * reaching into them (each a cache miss in a queue of many): the backoff
 * orders by (due, seq), the active queue without a sort hook by seq (due
 * 0). Taken when the item goes in; neither changes while it is there. */
typedef struct qkey {
    uint64_t due, seq;
} qkey;

typedef struct qheap {
    qitem **v;
    qkey *k;
    size_t n, cap, cap_k;
} qheap;

typedef struct queue {
    qheap active, backoff;
    hmap items; /* key -> qitem, every state */
    size_t n_unschedulable;
    size_t n_gated;
    /* unschedulable workloads plugin i (its index in the profile, < 63)
     * rejected, and the entries so far by queue and event */
    size_t n_rejected[63];
    uint64_t incoming[QI_COUNT][QE_COUNT];
    uint64_t next_seq;
    uint64_t backoff_initial_ms, backoff_max_ms, max_unschedulable_ms;
    /* queue order: nonzero when a goes before b */
    int (*less)(void *ud, const trellis_object *a, uint64_t as, const trellis_object *b,
                uint64_t bs);
    void *less_ud;
    /* called (with less_ud) around each sift of the active heap, the run
     * of comparisons that places w; NULL: nothing */
    void (*order_enter)(void *ud, const trellis_object *w);
    void (*order_leave)(void *ud);
} queue;

void queue_init(queue *q, uint64_t backoff_initial_ms, uint64_t backoff_max_ms,
                uint64_t max_unschedulable_ms);
void queue_free(queue *q);
/* Add a pending workload, or replace the object of a queued one; a changed
 * workload in the unschedulable pool, or a gated one, goes to active. */
void queue_add(queue *q, trellis_object *w, uint64_t now_ms);
/* Hold the pending workload w back (a pre_enqueue plugin gates it): it
 * waits in the gated set, wherever it was (not in flight), until
 * queue_add takes it in or queue_delete drops it. */
void queue_gate(queue *q, trellis_object *w);
/* How many workloads are gated. */
size_t queue_gated(const queue *q);
/* Pop the next workload to schedule (moving due backoff items first), or
 * NULL. The item is in flight until queue_done or a requeue. */
qitem *queue_pop(queue *q, uint64_t now_ms);
/* The in-flight item was scheduled (or given up): forget it. */
void queue_done(queue *q, qitem *it);
/* The attempt failed: unschedulable -> pool, otherwise -> backoff. */
void queue_requeue(queue *q, qitem *it, int unschedulable, uint64_t now_ms);
/* A workload placed as it wants, which a profile that reconciles keeps
 * for later changes: unschedulable-pool bookkeeping without a failed
 * attempt, so that a change moves it to the active queue at once. */
void queue_park(queue *q, qitem *it, uint64_t now_ms);
/* An item just put in the unschedulable pool is moved out at at_ms
 * (by queue_flush_unschedulable) even when nothing changes. */
void queue_wake_at(queue *q, qitem *it, uint64_t at_ms);
/* Put an in-flight item back in active at once (after a post-filter made
 * room for it). */
void queue_retry_now(queue *q, qitem *it);
/* Something changed: unschedulable workloads go to backoff, or to active
 * when their backoff has passed. */
void queue_move_all(queue *q, uint64_t now_ms);
/* Move the unschedulable workloads pred accepts (all when pred is NULL)
 * to backoff, or to active when their backoff has passed; the number
 * moved. */
size_t queue_move_if(queue *q, uint64_t now_ms, int (*pred)(void *ud, qitem *it), void *ud);
/* A one-shot run, whose clock does not move: the workloads in backoff
 * because something changed go to active now (not those in backoff after
 * an error), each at most `most` times a run (plugins whose writes never
 * settle cannot keep a run going); the number moved. */
size_t queue_release_moved(queue *q, unsigned most);
/* The item of w in any state, or NULL. */
qitem *queue_find(const queue *q, const trellis_object *w);
void queue_counts(const queue *q, size_t *active, size_t *backoff, size_t *unschedulable);
/* Move workloads that waited longer than max_unschedulable_ms, or whose
 * wake time has come. */
void queue_flush_unschedulable(queue *q, uint64_t now_ms);
/* Queue w if needed and take exactly its item out, in flight (for
 * callers that schedule one given workload, like deschedule); NULL when it
 * is in flight already. */
qitem *queue_take(queue *q, trellis_object *w, uint64_t now_ms);
/* Remove a workload wherever it is (not in flight). */
void queue_delete(queue *q, const trellis_object *w);
/* Backoff delay after `attempts` failures. */
uint64_t queue_backoff_ms(const queue *q, unsigned attempts);
/* Earliest time a backoff item becomes due, or UINT64_MAX. */
uint64_t queue_next_due(const queue *q);
size_t queue_len(const queue *q);
/* The labels of incoming[qi][ev]: the queue's and the event's. */
void queue_incoming_label(int qi, int ev, const char **queue_name, const char **event);

#endif
