/*
 * scores.h - helpers for normalize hooks.
 *
 * Several plugins normalize "reversed": the lowest raw score (fewest
 * workloads, nearest region) gets TRELLIS_MAX_SCORE and the others less,
 * linearly between the lowest and the highest raw score. The exact mapping
 * differs per plugin (least-utilized gives the highest raw score 0 and
 * scales by 100; gardener-region scales the non-minimal ones by 99 so only
 * the minimal ones reach 100), so each plugin keeps its own formula; what
 * they share is the scan for the range of the raw scores, which lives here.
 * Nothing here allocates.
 */
#ifndef TRELLIS_PLUGINS_SCORES_H
#define TRELLIS_PLUGINS_SCORES_H

#include <stddef.h>
#include <stdint.h>

/* The smallest and the largest of scores[0..n) into *min and *max; both 0
 * when n is 0. */
void scores_min_max(const int64_t *scores, size_t n, int64_t *min, int64_t *max);

#endif
