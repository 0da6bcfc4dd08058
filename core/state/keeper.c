/*
 * keeper.c - see keeper.h.
 */
#include "config.h"

#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "util.h"

struct keeper {
    keeper_tick_fn tick;
    void *ud;
    pthread_mutex_t mu; /* the election's lock, and stop below */
    pthread_cond_t cv;  /* the pause between rounds, cut short by a poke or stop */
    pthread_t thr;
    int thr_on, stop;
    int poked;   /* a poke since the current round began: the pause is skipped */
    int pipe[2]; /* the run loop's wake-up */
};

keeper *keeper_new(keeper_tick_fn tick, void *ud, char *err, size_t errlen)
{
    keeper *k = xcalloc(1, sizeof *k);
    if (pipe2(k->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        errf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        free(k);
        return NULL;
    }
    k->tick = tick;
    k->ud = ud;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    return k;
}

static void *run(void *arg)
{
    keeper *k = arg;
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        k->poked = 0;
        pthread_mutex_unlock(&k->mu);
        uint32_t pause_ms = k->tick(k->ud);
        pthread_mutex_lock(&k->mu);
        struct timespec ts;
        clock_deadline(&ts, pause_ms);
        /* a poke made while the round ran is kept, not lost: it was made
         * before this thread waits, and a broadcast then would wake no one */
        while (!k->stop && !k->poked)
            if (pthread_cond_timedwait(&k->cv, &k->mu, &ts) == ETIMEDOUT)
                break;
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

int keeper_start(keeper *k)
{
    pthread_mutex_lock(&k->mu);
    if (!k->thr_on && !k->stop && pthread_create(&k->thr, NULL, run, k) == 0)
        k->thr_on = 1;
    int on = k->thr_on;
    pthread_mutex_unlock(&k->mu);
    return on ? 0 : -1;
}

void keeper_lock(keeper *k)
{
    pthread_mutex_lock(&k->mu);
}

void keeper_unlock(keeper *k)
{
    pthread_mutex_unlock(&k->mu);
}

void keeper_poke(keeper *k)
{
    k->poked = 1;
    pthread_cond_broadcast(&k->cv);
}

void keeper_wake(keeper *k, char c)
{
    ssize_t w = write(k->pipe[1], &c, 1);
    (void)w; /* a full pipe holds a wake-up already */
}

int keeper_fd(const keeper *k)
{
    return k->pipe[0];
}

char keeper_drain(keeper *k)
{
    char c = 'n', buf[16];
    ssize_t r;
    while ((r = read(k->pipe[0], buf, sizeof buf)) > 0)
        c = buf[r - 1];
    return c;
}

void keeper_stop(keeper *k)
{
    pthread_mutex_lock(&k->mu);
    int on = k->thr_on;
    k->stop = 1;
    k->thr_on = 0;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    if (on)
        pthread_join(k->thr, NULL);
}

void keeper_free(keeper *k)
{
    if (!k)
        return;
    keeper_stop(k);
    close(k->pipe[0]);
    close(k->pipe[1]);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
}
