/*
 * pool.h - a fixed pool of worker threads for parallel loops.
 *
 * Filter and score run over blocks of targets on the pool. The calling
 * thread takes part, so a pool of one worker runs everything inline, and
 * so does a loop of a few blocks (waking workers would cost more).
 * Blocks are claimed with an atomic counter; each block writes only its own
 * output slots, so results do not depend on the number of workers. A
 * worker that finished spins up to 50 us for the next job before it
 * sleeps, and so does the caller waiting for the workers: a cycle's jobs
 * come microseconds apart, and waking a sleeping thread costs tens of them.
 */
#ifndef TRELLIS_POOL_H
#define TRELLIS_POOL_H

#include <stddef.h>

typedef struct pool pool;
/* fn(ctx, begin, end) handles items [begin, end). */
typedef void (*pool_fn)(void *ctx, size_t begin, size_t end);

/* n_workers counts the caller: 1 means no extra thread. */
pool *pool_new(int n_workers);
void pool_free(pool *p);
int pool_size(const pool *p);
/* Run fn over [0, n) in blocks of `block` items (never a larger range,
 * whatever the number of workers); returns when all are done. Not
 * reentrant. */
void pool_run(pool *p, size_t n, size_t block, pool_fn fn, void *ctx);
/* The same over [begin, end): the blocks start at begin, begin + block,
 * ... (a caller whose blocks own words of a bitmap passes a multiple of
 * the word). */
void pool_run_range(pool *p, size_t begin, size_t end, size_t block, pool_fn fn, void *ctx);

#endif
