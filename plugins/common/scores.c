/*
 * scores.c - helpers for normalize hooks (see scores.h).
 */
#include "scores.h"

void scores_min_max(const int64_t *scores, size_t n, int64_t *min, int64_t *max)
{
    int64_t lo, hi;

    if (n == 0) {
        *min = *max = 0;
        return;
    }
    lo = hi = scores[0];
    for (size_t i = 1; i < n; i++) {
        if (scores[i] < lo)
            lo = scores[i];
        if (scores[i] > hi)
            hi = scores[i];
    }
    *min = lo;
    *max = hi;
}
