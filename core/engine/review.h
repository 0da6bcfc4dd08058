/*
 * review.h - what a plugin reviewing a post-filter's preemption
 * candidates may answer (SDK 1.7, review_candidates): the candidates it
 * was given or fewer, each target once, each with victims that are
 * workloads on that target. The runtime (runtime.c) calls the reviewers;
 * this checks an answer and puts it in the order the candidates were
 * given, so that a reviewer cannot reorder the post-filter's ties.
 */
#ifndef TRELLIS_REVIEW_H
#define TRELLIS_REVIEW_H

#include <stddef.h>

#include "trellis/plugin.h"

/* Check a reviewer's answer after[0..n_after) against what it was given,
 * before[0..n_before): every target one of before's and none twice, at
 * least one victim each, every victim a workload assigned to its target
 * (compared by identity: nothing the reviewer hands over is read before
 * it is found) and none twice, pdb_violations not negative. 0 with
 * after[0..n_after) sorted into before's order; -1 with why, naming the
 * target and the victim, after unchanged. Ownership of every array is
 * retained by the caller. Main thread. */
int review_check(const trellis_candidate *before, size_t n_before, trellis_candidate *after,
                 size_t n_after, char *why, size_t whylen);

#endif
