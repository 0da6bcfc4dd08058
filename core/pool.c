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

struct pool {
    int n;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    uint64_t round; /* bumped for each job */
    int busy;       /* workers still on the current job */
    int stop;
    /* current job */
    pool_fn fn;
    void *ctx;
    size_t total, block;
    atomic_size_t next;
};

static void work(pool *p)
{
    for (;;) {
        size_t b = atomic_fetch_add(&p->next, p->block);
        if (b >= p->total)
            return;
        size_t e = b + p->block < p->total ? b + p->block : p->total;
        p->fn(p->ctx, b, e);
    }
}

static void *worker(void *arg)
{
    pool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->round == seen)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->stop)
            break;
        seen = p->round;
        pthread_mutex_unlock(&p->mu);
        work(p);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
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
    p->stop = 1;
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
    if (block == 0)
        block = 1;
    /* waking the workers costs more than a few blocks of filtering */
    if (p->n == 1 || n <= block * POOL_MIN_BLOCKS) {
        /* inline, but still block by block: callers size per-block
         * buffers by `block` */
        for (size_t b = 0; b < n; b += block)
            fn(ctx, b, b + block < n ? b + block : n);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->total = n;
    p->block = block;
    atomic_store(&p->next, 0);
    p->busy = p->n - 1;
    p->round++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
