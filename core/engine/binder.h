/*
 * binder.h - the binding thread of the long-running host.
 *
 * Seed 004's binding cycle runs apart from the scheduling cycle: once a
 * workload is assumed on its target, the main thread hands a job to the
 * binder and goes on with the next workload. The binder runs the jobs in
 * batches on its own thread through a callback (the scheduler's pre-bind,
 * bind, post-bind and one store flush per batch) and hands finished jobs
 * back; an eventfd becomes readable when some are waiting, so the main
 * loop polls it with the store and the signals. Jobs are opaque here.
 */
#ifndef TRELLIS_BINDER_H
#define TRELLIS_BINDER_H

#include <stddef.h>

typedef struct binder binder;

/* run(ud, jobs, n) runs on the binding thread for each batch, n >= 0 (0
 * when only a flush was asked for). */
typedef void (*binder_run_fn)(void *ud, void **jobs, size_t n);

binder *binder_start(binder_run_fn run, void *ud, char *err, size_t errlen);
/* Queue a job (main thread). */
void binder_push(binder *b, void *job);
/* Ask for a batch even without jobs (a store write made elsewhere). */
void binder_request_flush(binder *b);
/* Readable when finished jobs wait to be taken. */
int binder_fd(const binder *b);
/* Take the finished jobs, in the order they finished: a malloc'd array
 * the caller frees, or NULL when none. */
void **binder_take_done(binder *b, size_t *n);
/* Jobs queued or running. */
size_t binder_busy(binder *b);
/* Finish every queued job, then stop the thread. Finished jobs stay for
 * binder_take_done; binder_free frees the rest. */
void binder_stop(binder *b);
void binder_free(binder *b);

#endif
