/*
 * span.h - the loop of a filter_span hook (SDK 1.3) over prepared data.
 *
 * A plugin's filter_span gets the targets first .. first + n - 1 of the
 * cycle's snapshot and a bitmap `pass` (bit j of pass[j / 64] for target
 * first + j) of the ones still feasible, and clears the bit of every
 * feasible target its predicate rejects. span_clear_rejected is that loop
 * for a predicate over the target's prepared data (the column from
 * host->cycle_target_data): it visits only set bits and makes no host call
 * per target. It is a static inline function, so called with a static
 * predicate the compiler inlines both. It allocates nothing. `cfg` and
 * `data` are what the predicate needs that does not depend on the target,
 * looked up once per call by the caller. A predicate over plain numbers is
 * better written over target values and counter columns, a word of 64
 * targets at a time (see resources-fit).
 */
#ifndef TRELLIS_PLUGINS_SPAN_H
#define TRELLIS_PLUGINS_SPAN_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* Nonzero when the target with prepared data tdata (may be NULL) is
 * infeasible for the workload cfg and data describe. */
typedef int (*span_reject_fn)(const void *cfg, const void *data, const void *tdata);

static inline void span_clear_rejected(void *const *tdata, const void *cfg, const void *data,
                                       size_t first, size_t n, uint64_t *pass,
                                       span_reject_fn rejects)
{
    for (size_t w = 0; w < (n + 63) / 64; w++) {
        uint64_t bits = pass[w];

        while (bits) {
            size_t j = w * 64 + (size_t)__builtin_ctzll(bits);

            bits &= bits - 1;
            if (j < n && rejects(cfg, data, tdata ? tdata[first + j] : NULL))
                pass[w] &= ~(UINT64_C(1) << (j % 64));
        }
    }
}

#endif
