/*
 * pick.h - the arithmetic of kube-scheduler's DefaultPreemption, apart
 * from the host: how many candidate nodes a preemption looks for
 * (minCandidateNodesPercentage / minCandidateNodesAbsolute), the order of
 * importance of victims (util.MoreImportantPod), a PodDisruptionBudget
 * counted down as victims are chosen (filterPodsWithPDBViolation), and the
 * choice among the candidates (pickOneNodeForPreemption). libc only, so
 * the unit tests drive it without a host.
 */
#ifndef TRELLIS_PREEMPTION_PICK_H
#define TRELLIS_PREEMPTION_PICK_H

#include <stddef.h>
#include <stdint.h>

/* What pickOneNodeForPreemption compares about one candidate node. */
typedef struct pick_summary {
    int64_t pdb_violations; /* victims whose budget they would overdraw */
    int64_t highest;        /* priority of the most important victim */
    int64_t sum;            /* sum over the victims of (priority + 2^31) */
    size_t victims;         /* how many */
    int64_t earliest_ms;    /* earliest start among the victims of priority `highest` */
} pick_summary;

/* kube's calculateNumCandidates: nodes * percentage / 100 (integer
 * division), at least `absolute`, at most `nodes`. */
uint32_t pick_candidates_wanted(uint32_t nodes, int64_t percentage, int64_t absolute);

/* MoreImportantPod: the higher priority, then the earlier start. 1 when
 * (pa, sa) is more important than (pb, sb), 0 otherwise. */
int pick_more_important(int64_t pa, int64_t sa, int64_t pb, int64_t sb);

/* One term of the sum above: priority + MaxInt32 + 1, so that a node with
 * a few victims of negative priority does not win over one with fewer
 * victims of the same priority. Priorities are int32 in kube; larger
 * values are clamped to that range first. */
int64_t pick_sum_term(int64_t priority);

/* The candidate pickOneNodeForPreemption chooses among c[0..n) (n > 0):
 * the fewest PDB violations, then the lowest highest victim priority,
 * then the smallest sum, then the fewest victims, then the latest
 * earliest start of the highest-priority victims, then the first in the
 * order given. Its index. Ownership of c is retained by the caller. */
size_t pick_one(const pick_summary *c, size_t n);

/* A victim covered by budgets allowed[match[0..nmatch)]: each is counted
 * down by one; 1 when one of them went below zero (evicting the victim
 * would violate that budget), else 0. Ownership of both arrays is
 * retained by the caller. */
int pick_budget_take(int64_t *allowed, const size_t *match, size_t nmatch);

#endif
