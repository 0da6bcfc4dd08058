/*
 * framework.h - the scheduling algorithm.
 *
 * framework_schedule runs one workload's scheduling algorithm against the
 * snapshot: pre-filter, filter over all targets in parallel blocks (batch
 * hooks where offered), post-filter when nothing fits, pre-score, score in
 * parallel, normalize, weighted totals, and selection. The highest total
 * wins; equal totals go to the smallest target name (tie_break = "name") or
 * the largest ("name-desc"), so the result never depends on the number of
 * workers. Reasons for rejections are not collected in the hot loop: when
 * they are needed (an unschedulable workload, --explain, post-filter) the
 * plain filters are run again for the rejected targets only.
 */
#ifndef TRELLIS_FRAMEWORK_H
#define TRELLIS_FRAMEWORK_H

#include <stddef.h>
#include <stdint.h>

#include "cycle.h"
#include "profile_impl.h"

/* FW_SATISFIED: the workload holds as many targets as it wants (its
 * plugins may have released some): nothing to pick. */
typedef enum { FW_SCHEDULED = 0, FW_UNSCHEDULABLE, FW_ERROR, FW_SATISFIED } fw_result;

/* What a caller asks of framework_schedule. */
enum {
    FW_EXPLAIN = 1u << 0,        /* filter every target (no sampling, no equivalence
                                    cache) and score even when only one fits */
    FW_NO_POST_FILTER = 1u << 1, /* do not run the post-filters (nothing may be evicted
                                    or created) */
};

/* Run the algorithm for w: find the feasible targets, post-filter when
 * there are none, prioritise, select. On FW_SCHEDULED *best is the
 * chosen target, and c->picks[0..n_picks) the targets chosen when the
 * workload wants several (cycle_want; the targets it holds are never
 * candidates). On FW_UNSCHEDULABLE, post-filters have run unless
 * FW_NO_POST_FILTER (c->changed tells whether one made room). On FW_ERROR,
 * msg says why. flags: FW_*. */
fw_result framework_schedule(profile *p, trellis_cycle *c, trellis_object *w, unsigned flags,
                             const struct trellis_target **best, char *msg, size_t msglen);
/* How many more targets the workload of c wants after its pre-filters:
 * 0 when it holds enough, SIZE_MAX for every feasible one. */
size_t framework_more_wanted(const trellis_cycle *c);

/* After filtering: -1 when target i is feasible, else the index into
 * p->filter of the filter that rejected it or a REJ_* code. */
int framework_rej(const trellis_cycle *c, size_t i);
/* Target i's verdict code (TRELLIS_SUCCESS when feasible or not
 * evaluated); asks the plain filter when a batch filter rejected it. */
int framework_code(trellis_cycle *c, size_t i);
/* The first rejection of target i, with its status (runs plain filters). */
int framework_explain(trellis_cycle *c, size_t i, const trellis_plugin **who, trellis_status *st);
/* The profile's reviewers on a post-filter's candidates
 * (run_review_candidates, runtime.h): post-filter support. */
int framework_review(trellis_cycle *c, const trellis_plugin *caller, trellis_candidate *cands,
                     size_t *n, trellis_status *st);
/* Filters over t as if victims were gone (post-filter support). */
int framework_filter_without(trellis_cycle *c, const struct trellis_target *t,
                             const trellis_object *const *victims, size_t n, trellis_status *st);
/* "0/N targets are available: 2 TaintNotTolerated, 1 InsufficientResources." */
char *framework_unschedulable_message(trellis_cycle *c);

/* Filter plugin k (an index into the profile's filter list) alone on
 * target i, in the cycle framework_schedule has just run for c->w, so its
 * pre-filter state is there: every filter's verdict for `trellis explain`,
 * not only the first rejection. When a pre-filter rejected the workload the
 * filters never ran and its status is returned; a target whose object
 * failed a plugin's prepare is InvalidTarget (filters never see it); a
 * filter its pre-filter told to skip is TRELLIS_SKIP. */
int framework_filter_one(trellis_cycle *c, size_t k, size_t i, trellis_status *st);

#endif
