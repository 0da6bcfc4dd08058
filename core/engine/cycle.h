/*
 * cycle.h - the state of one scheduling cycle.
 *
 * A trellis_cycle is what the SDK's cycle handle points at: the workload,
 * its profile's snapshot of targets, the per-plugin slots (cycle_set /
 * cycle_get) and the arena behind cycle_alloc, the filter verdicts (a
 * pass bitmap and, for rejected targets, who rejected them and why), the
 * feasible targets and their scores. Its buffers only grow, so a steady
 * state allocates nothing. One cycle is reused for every workload a host
 * schedules; a binding cycle handed to the binding thread takes the
 * slots and the arena with it (bindcycle.c).
 */
#ifndef TRELLIS_CYCLE_H
#define TRELLIS_CYCLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trellis/plugin.h"

struct profile;
struct decision;
struct nominator;
/* Per-target verdict in a cycle. */
typedef struct cand {
    int16_t rej;  /* index into profile->filter of the first rejecting plugin, -1 */
    uint8_t code; /* trellis_code; CODE_UNKNOWN until explained */
} cand;

#define CODE_UNKNOWN 0xff
#define REJ_PRE_FILTER (-2)    /* rejected by a pre_filter for every target */
#define REJ_INVALID (-3)       /* the target's object failed a plugin's prepare */
#define REJ_EXCLUDED (-4)      /* the caller excluded it (the target being left) */
#define REJ_NOT_EVALUATED (-5) /* enough feasible targets were found before it */
#define REJ_HELD (-6)          /* the workload holds it already (cycle_want) */
#define REJ_LATE (-7)          /* a filter_feasible plugin rejected it: see late_of */
#define REJ_NARROWED (-8)      /* a pre_filter left it out of the cycle (cycle_narrow) */

/* The plugins whose cycle_narrow a cycle keeps by name, for the messages. */
#define NARROW_NAMED 4

/* A rejection by a filter_feasible plugin (cycle_reject): who and why. */
typedef struct cycle_late {
    const trellis_plugin *pl;
    trellis_status st;
} cycle_late;

struct trellis_cycle {
    struct profile *p;
    trellis_object *w;
    struct decision *d;
    /* per plugin of the profile (by index) */
    void **slots;
    unsigned char *skip_filter, *skip_score;
    size_t cap_plugins;
    /* the arena behind cycle_alloc */
    char *arena;
    size_t arena_cap, arena_used;
    /* what its decided hooks wrote, held until its bindings landed
     * (heldwrites.h; the binding cycle writes or drops it) */
    struct held_writes *writes_held;
    /* the snapshot this cycle looks at */
    struct trellis_target **targets;
    size_t n;
    uint64_t *pass; /* bitmap over targets */
    cand *cands;    /* valid for targets whose pass bit is clear: see framework_rej */
    /* the targets filters looked at: eval_len of them from eval_begin on,
     * wrapping around (all of them unless scoring was sampled) */
    size_t eval_begin, eval_len;
    size_t exclude_idx;      /* exclude_name's index, SIZE_MAX when none */
    atomic_int filter_error; /* a plain filter returned ERROR this cycle */
    /* ignorable plugins cut short this cycle: a bit per plugin index */
    atomic_uint_fast64_t abandoned;
    size_t cap_targets;
    /* feasible targets and scores */
    const struct trellis_target **feasible;
    uint32_t *feasible_idx;
    size_t n_feasible;
    int64_t *scores; /* [score plugin][feasible] */
    /* [score plugin]: where that plugin's scores of the feasible targets
     * are read (set by prioritise): its row of scores, or the equivalence
     * cache's row when the cache serves it as it is (never one a
     * normalize changes); valid while scored */
    int64_t **rows;
    int64_t *totals;
    size_t cap_scores, cap_rows;
    int scored;
    int filtered; /* cands[] holds this cycle's verdicts */
    /* pre_filter rejection for all targets */
    trellis_status pre_status;
    int pre_plugin;
    /* post_filter */
    int in_post_filter;
    int in_review;              /* a cycle_review_candidates call runs its reviewers */
    const char *nominated_name; /* set by the caller: prefer this target */
    const char *exclude_name;   /* set by the caller: never this target */
    int changed;                /* a post_filter evicted or created something */
    const struct trellis_target *nominated_to; /* a post_filter nominated it (host->nominate) */
    size_t n_evicted;                          /* workloads evicted this cycle (the metrics) */
    /* this cycle's plugin calls are timed for the metrics (kube's sampled
     * share, metrics_sample); the binding cycle keeps the draw */
    int sample;
    /* the earliest time a plugin said a verdict changes by itself
     * (cycle_retry_at), INT64_MAX when none; now_ms: the cycle's clock */
    _Atomic int64_t retry_at;
    int64_t now_ms;
    /* several targets (cycle_want): how many the workload wants in all,
     * the keys it holds (set by the caller, like nominated_name, and kept
     * by cycle_reset: never candidates), those a plugin released, and the
     * targets picked (the best first) */
    uint32_t want;
    const char **held;
    size_t n_held;
    const char **released;
    size_t n_released;
    const char **reconsidered; /* held, and candidates again (cycle_reconsider) */
    size_t n_reconsidered;
    const struct trellis_target **picks;
    size_t n_picks;
    /* filter_feasible: the plugin running it (cycle_reject answers only
     * it), the rejections it made (late, n_late) and, for each target
     * whose cands[].rej is REJ_LATE, its entry in late (late_of; sized
     * cap_late_of, allocated at the first rejection) */
    const trellis_plugin *in_filter_feasible;
    cycle_late *late;
    size_t n_late, cap_late;
    uint32_t *late_of;
    size_t cap_late_of;
    /* nominated workloads counted while filtering (kube's
     * RunFilterPluginsWithNominatedPods): the host's nominations (set once
     * by the owner of the cycle; NULL: none) and, per cycle, the targets
     * some of them count on for this workload: a bitmap over targets
     * (NULL when there are none: the filters look at nothing else), and
     * for each (n_nom of them, by ascending index nom_idx) a copy with the
     * nominated workloads added after the target's own */
    const struct nominator *nominations;
    uint64_t *nom_bits;
    uint32_t *nom_idx;
    struct trellis_target **nom_with;
    size_t n_nom;
    /* cycle_narrow: whether a pre_filter narrowed the cycle, the targets
     * it left in (a bitmap sized like pass; narrow_tmp: a second one for
     * the intersection) and how many, and the plugins (by profile index)
     * that narrowed it, the first NARROW_NAMED of n_narrow_by */
    int narrowed;
    uint64_t *narrow, *narrow_tmp;
    size_t n_narrow, cap_narrow;
    /* the words of narrow that may have a bit set: [narrow_lo, narrow_hi)
     * (every word outside is 0), so that filtering a narrowed cycle walks
     * only them */
    size_t narrow_lo, narrow_hi;
    int narrow_by[NARROW_NAMED];
    size_t n_narrow_by;
    int requeue_now; /* cycle_requeue_now */
    int failed;      /* an ERROR status ended the cycle */
    trellis_status error_status;
    const trellis_plugin *error_plugin;
};

/* Zeroed memory from the cycle's arena, released when the next cycle
 * starts (behind the SDK's cycle_alloc); NULL when size is absurd. Main
 * thread only. */
void *cycle_alloc(trellis_cycle *c, size_t size);
/* cycle_alloc, not zeroed: for what the host writes whole before reading. */
void *cycle_alloc_raw(trellis_cycle *c, size_t size);
void cycle_init(trellis_cycle *c);
/* Start a cycle for w: clear the per-plugin slots and the arena, size the
 * buffers to the profile's snapshot. */
void cycle_reset(trellis_cycle *c, struct profile *p, trellis_object *w);
/* Hand the slots, the arena and the held writes of from to to (a binding
 * cycle taking the scheduling cycle's state along); from gets fresh ones. */
void cycle_move_state(trellis_cycle *to, trellis_cycle *from);
void cycle_free(trellis_cycle *c);

/* Whether the held target key was put to the vote again
 * (cycle_reconsider). */
static inline int cycle_reconsidered(const trellis_cycle *c, const char *key)
{
    for (size_t i = 0; i < c->n_reconsidered; i++)
        if (c->reconsidered[i] == key || strcmp(c->reconsidered[i], key) == 0)
            return 1;
    return 0;
}

/* How many held targets the workload keeps for sure: neither released
 * nor put to the vote. */
static inline size_t cycle_kept(const trellis_cycle *c)
{
    return c->n_held - c->n_released - c->n_reconsidered;
}

/* A plain filter's return as a cycle counts it: anything but success or a
 * rejection is an error. */
static inline int cycle_filter_code(int rc)
{
    return rc == TRELLIS_SUCCESS || rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE
               ? rc
               : TRELLIS_ERROR;
}

/* The position of t among the cycle's targets, or SIZE_MAX when t is not
 * one of them (a copy, a target of another kind). */
size_t cycle_pos(const trellis_cycle *c, const struct trellis_target *t);

/* Whether target i is in the cycle: not left out by cycle_narrow. */
static inline int cycle_in_set(const trellis_cycle *c, size_t i)
{
    return !c->narrowed || (c->narrow[i / 64] & (1ull << (i % 64)));
}

/* Narrow c to the targets at idx[0..n) (cycle_narrow), by the plugin of
 * profile index `by`: the first call sets the set, later ones intersect.
 * 0, or -1 when a position is out of range (nothing changes). Main
 * thread; allocates only when the snapshot outgrew the bitmaps. */
int cycle_narrow_to(trellis_cycle *c, int by, const uint32_t *idx, size_t n);

/* Target i is rejected by rej (a filter index or a REJ_* code) with code. */
static inline void cycle_reject(trellis_cycle *c, size_t i, int rej, int code)
{
    if (code == TRELLIS_ERROR) /* the cycle looks for it after filtering */
        atomic_store_explicit(&c->filter_error, 1, memory_order_relaxed);
    c->pass[i / 64] &= ~(1ull << (i % 64));
    c->cands[i].rej = (int16_t)rej;
    c->cands[i].code = (uint8_t)code;
}

/* An ignorable plugin (by profile index) cut short at its deadline sits
 * out the rest of the cycle (guard.h); worker threads note it here, the
 * main thread turns it into skip_filter / skip_score once the blocks are
 * done (cycle_settle_abandoned). */
static inline void cycle_abandon(trellis_cycle *c, int index)
{
    if (index < 64)
        atomic_fetch_or_explicit(&c->abandoned, 1ull << index, memory_order_relaxed);
}

static inline int cycle_abandoned(const trellis_cycle *c, int index)
{
    return index < 64 &&
           (atomic_load_explicit(&c->abandoned, memory_order_relaxed) & (1ull << index));
}

/* After a pool run: what was cut short is skipped from now on (explain,
 * the equivalence cache and the changed targets see it too). */
/* A plugin said a verdict changes by itself at ms: keep the earliest
 * time after the cycle's clock. Any thread. */
static inline void cycle_note_retry(trellis_cycle *c, int64_t ms)
{
    if (ms <= c->now_ms)
        return;
    int64_t cur = atomic_load(&c->retry_at);
    while (ms < cur && !atomic_compare_exchange_weak(&c->retry_at, &cur, ms))
        ;
}

void cycle_settle_abandoned(trellis_cycle *c, unsigned char *skip);

/* Feasible target i is rejected by the filter_feasible plugin pl with st
 * (its code UNSCHEDULABLE or UNRESOLVABLE, copied): kept in c->late for
 * the explanations. Main thread. */
void cycle_reject_late(trellis_cycle *c, const trellis_plugin *pl, size_t i,
                       const trellis_status *st);
/* The rejection of target i when its cands[].rej is REJ_LATE. */
static inline const cycle_late *cycle_late_of(const trellis_cycle *c, size_t i)
{
    return &c->late[c->late_of[i]];
}

#endif
