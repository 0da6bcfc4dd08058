/*
 * pool.c - see pool.h.
 */
#include "config.h"

#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util.h"

/* below this many blocks a loop runs on the calling thread */
#define POOL_MIN_BLOCKS 4
/* A worker that finished a job, and the caller waiting for the workers,
 * spin this long before they sleep: the next job of a cycle comes within
 * microseconds, and waking a sleeping thread costs tens of them. */
#define POOL_SPIN_NS 50000

struct pool {
    int n;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    atomic_uint_fast64_t round; /* bumped for each job; publishes it */
    atomic_int busy;            /* workers still on the current job */
    atomic_int sleepers;        /* workers waiting on `start` */
    atomic_int caller_waits;    /* the caller waits on `done` */
    atomic_int stop;
    /* current job, written before `round` moves */
    pool_fn fn;
    void *ctx;
    size_t end, block; /* items [next, end), block by block */
    atomic_size_t next;
};

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void work(pool *p)
{
    for (;;) {
        size_t b = atomic_fetch_add(&p->next, p->block);
        if (b >= p->end)
            return;
        size_t e = b + p->block < p->end ? b + p->block : p->end;
        p->fn(p->ctx, b, e);
    }
}

/* Wait until the round moves past `seen` or the pool stops: spin a while,
 * then sleep. The sleeper count and the round are both sequentially
 * consistent, so pool_run either sees the sleeper and wakes it, or the
 * sleeper sees the new round before it waits. */
static void wait_round(pool *p, uint64_t seen)
{
    uint64_t t0 = now_ns();
    for (unsigned spins = 1; atomic_load(&p->round) == seen && !atomic_load(&p->stop); spins++) {
        if (spins % 256 == 0 && now_ns() - t0 > POOL_SPIN_NS) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while (atomic_load(&p->round) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->start, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
            return;
        }
        relax();
    }
}

static void *worker(void *arg)
{
    pool *p = arg;
    uint64_t seen = 0;
    for (;;) {
        wait_round(p, seen);
        if (atomic_load(&p->stop))
            break;
        seen = atomic_load(&p->round);
        work(p);
        if (atomic_fetch_sub(&p->busy, 1) == 1 && atomic_load(&p->caller_waits)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

pool *pool_new(int n_workers)
{
    pool *p = xcalloc(1, sizeof *p);
    p->n = n_workers < 1 ? 1 : n_workers;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    p->th = xcalloc((size_t)p->n, sizeof *p->th);
    for (int i = 1; i < p->n; i++)
        if (pthread_create(&p->th[i], NULL, worker, p) != 0) {
            p->n = i; /* run with what we have */
            break;
        }
    return p;
}

void pool_free(pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}

int pool_size(const pool *p)
{
    return p->n;
}

void pool_run(pool *p, size_t n, size_t block, pool_fn fn, void *ctx)
{
    pool_run_range(p, 0, n, block, fn, ctx);
}

void pool_run_range(pool *p, size_t begin, size_t end, size_t block, pool_fn fn, void *ctx)
{
    if (block == 0)
        block = 1;
    if (end <= begin)
        return;
    /* waking the workers costs more than a few blocks of filtering */
    if (p->n == 1 || end - begin <= block * POOL_MIN_BLOCKS) {
        /* inline, but still block by block: callers size per-block
         * buffers by `block` */
        for (size_t b = begin; b < end; b += block)
            fn(ctx, b, end - b > block ? b + block : end);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->end = end;
    p->block = block;
    atomic_store(&p->next, begin);
    atomic_store(&p->busy, p->n - 1);
    atomic_fetch_add(&p->round, 1);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->mu);
    }
    work(p);
    /* the same spin, then sleep, for the workers to finish */
    uint64_t t0 = now_ns();
    for (unsigned spins = 1; atomic_load(&p->busy) > 0; spins++) {
        if (spins % 256 == 0 && now_ns() - t0 > POOL_SPIN_NS) {
            pthread_mutex_lock(&p->mu);
            atomic_store(&p->caller_waits, 1);
            while (atomic_load(&p->busy) > 0)
                pthread_cond_wait(&p->done, &p->mu);
            atomic_store(&p->caller_waits, 0);
            pthread_mutex_unlock(&p->mu);
            break;
        }
        relax();
    }
}
