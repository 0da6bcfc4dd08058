/*
 * binder.c - see binder.h.
 */
#include "config.h"

#include "binder.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util.h"

typedef struct jlist {
    void **v;
    size_t n, cap;
} jlist;

struct binder {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    jlist queued, done;
    size_t running;
    int flush_wanted, stopping, started;
    int efd;
    binder_run_fn run;
    void *ud;
};

static void jl_push(jlist *l, void *j)
{
    grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = j;
}

static void *loop(void *arg)
{
    binder *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->queued.n && !b->flush_wanted && !b->stopping)
            pthread_cond_wait(&b->cv, &b->mu);
        if (!b->queued.n && !b->flush_wanted && b->stopping)
            break;
        jlist batch = b->queued;
        memset(&b->queued, 0, sizeof b->queued);
        b->flush_wanted = 0;
        b->running = batch.n;
        pthread_mutex_unlock(&b->mu);
        b->run(b->ud, batch.v, batch.n);
        pthread_mutex_lock(&b->mu);
        for (size_t i = 0; i < batch.n; i++)
            jl_push(&b->done, batch.v[i]);
        b->running = 0;
        free(batch.v);
        if (batch.n) {
            uint64_t one = 1;
            ssize_t w = write(b->efd, &one, sizeof one);
            (void)w; /* the counter cannot overflow in practice */
        }
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

binder *binder_start(binder_run_fn run, void *ud, char *err, size_t errlen)
{
    binder *b = xcalloc(1, sizeof *b);
    b->run = run;
    b->ud = ud;
    b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (b->efd < 0) {
        errf(err, errlen, "cannot create the binder's eventfd: %s", strerror(errno));
        free(b);
        return NULL;
    }
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    int rc = pthread_create(&b->thread, NULL, loop, b);
    if (rc != 0) {
        errf(err, errlen, "cannot start the binding thread: %s", strerror(rc));
        binder_free(b);
        return NULL;
    }
    b->started = 1;
    return b;
}

void binder_push(binder *b, void *job)
{
    pthread_mutex_lock(&b->mu);
    jl_push(&b->queued, job);
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void binder_request_flush(binder *b)
{
    pthread_mutex_lock(&b->mu);
    b->flush_wanted = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

int binder_fd(const binder *b)
{
    return b->efd;
}

void **binder_take_done(binder *b, size_t *n)
{
    uint64_t v;
    ssize_t r = read(b->efd, &v, sizeof v);
    (void)r; /* EAGAIN: nothing was signalled, the list may still hold jobs */
    pthread_mutex_lock(&b->mu);
    void **jobs = b->done.v;
    *n = b->done.n;
    memset(&b->done, 0, sizeof b->done);
    pthread_mutex_unlock(&b->mu);
    return jobs;
}

size_t binder_busy(binder *b)
{
    pthread_mutex_lock(&b->mu);
    size_t n = b->queued.n + b->running;
    pthread_mutex_unlock(&b->mu);
    return n;
}

void binder_stop(binder *b)
{
    if (!b->started)
        return;
    pthread_mutex_lock(&b->mu);
    b->stopping = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    b->started = 0;
}

void binder_free(binder *b)
{
    if (!b)
        return;
    binder_stop(b);
    free(b->queued.v);
    free(b->done.v);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    close(b->efd);
    free(b);
}
