/*
 * equivalence.h - the equivalence cache (see trellis_equivalent_fn).
 *
 * After a cycle that filtered every target, the profile keeps the verdicts
 * (pass bitmap and cands) and, once scored, the raw scores by target
 * position, with the workload and the snapshot generation, in one of
 * EQ_ENTRIES entries: one per class of equivalent workloads, the least
 * recently used replaced. A later cycle reuses an entry when its workload
 * is equivalent to the entry's for every plugin, its pre-filters skipped
 * the same plugins, the targets are the same set, and at most
 * EQ_MAX_CHANGED targets changed since (the snapshot's generation column
 * tells which): then only the changed targets are filtered again, and only
 * the changed feasible ones scored. Normalize, the totals and the
 * selection always run (framework.c).
 */
#ifndef TRELLIS_EQUIVALENCE_H
#define TRELLIS_EQUIVALENCE_H

#include <stddef.h>
#include <stdint.h>

#include "cycle.h"

struct profile;

/* One class of equivalent workloads: a cycle's verdicts and raw scores by
 * target position, with a workload of the class and the snapshot
 * generation they belong to. */
#define EQ_ENTRIES 16
typedef struct equiv_entry {
    int valid;         /* pass and cands hold every target's verdict at gen */
    int scored;        /* raw holds the raw score of every target feasible at gen */
    trellis_object *w; /* one reference */
    uint64_t gen, set_gen;
    uint64_t used; /* for least-recently-used replacement */
    uint64_t *pass;
    cand *cands;
    int64_t *raw; /* [score plugin k][target i], k * cap + i */
    unsigned char *skip_filter, *skip_score;
    size_t cap;
    /* the feasible targets of the class's last cycle and their raw scores
     * by feasible position ([k][j], k * nf + j): a cycle with the same
     * feasible set copies them whole instead of gathering from raw */
    uint32_t *fidx;
    int64_t *byf;
    size_t nf, cap_f;
} equiv_entry;

typedef struct equiv_cache {
    equiv_entry e[EQ_ENTRIES];
    equiv_entry *cur;  /* the entry this cycle reuses or fills; NULL: none */
    uint32_t *changed; /* targets changed since cur's gen, ascending */
    size_t n_changed, cap_changed;
    uint64_t clock;
    /* what it saved, for `make bench` and the tests */
    uint64_t hits, score_hits, targets_reevaluated;
} equiv_cache;

void equiv_free(equiv_cache *q);
/* Pick the entry of w's class for cycle c (q->cur) and say whether it
 * can serve it; without one, the least recently used entry is the one
 * to fill. */
int equiv_lookup(struct profile *p, trellis_cycle *c, const trellis_object *w);
/* The entry's verdicts into c; refilter(c, i) is then called for each
 * target changed since. */
void equiv_filter(struct profile *p, trellis_cycle *c,
                  void (*refilter)(trellis_cycle *c, size_t i));
/* Keep this cycle's verdicts in the current entry. Its raw scores stay
 * valid only through equiv_score in this cycle: until the cycle scores,
 * the entry says it has none. */
void equiv_save_filter(struct profile *p, trellis_cycle *c, trellis_object *w);
/* Raw scores from the entry into c; rescore(c, j) is called for each
 * changed feasible target j, whose scores go back into the entry. */
void equiv_score(struct profile *p, trellis_cycle *c, void (*rescore)(trellis_cycle *c, size_t j));
void equiv_save_scores(struct profile *p, trellis_cycle *c);

#endif
