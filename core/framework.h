/*
 * framework.h - a profile's plugins and the scheduling algorithm.
 *
 * A profile is the runtime side of a config profile: its plugin instances
 * grouped per extension point in config order, its queue and its snapshot.
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

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "plugin.h"
#include "pool.h"
#include "queue.h"
#include "snapshot.h"

struct sched;
struct decision;

typedef struct plist {
    trellis_plugin **v;
    size_t n;
} plist;

/* Per-target verdict in a cycle. */
typedef struct cand {
    int16_t rej;   /* index into profile->filter of the first rejecting plugin, -1 */
    uint8_t code;  /* trellis_code; CODE_UNKNOWN until explained */
} cand;

/* The equivalence cache (see trellis_equivalent_fn): for each of the last
 * few classes of equivalent workloads, a cycle's verdicts and raw scores by
 * target position, with a workload of the class and the snapshot
 * generation they belong to. */
#define EQ_ENTRIES 16
typedef struct equiv_entry {
    int valid;  /* pass and cands hold every target's verdict at gen */
    int scored; /* raw holds the raw score of every target feasible at gen */
    trellis_object *w; /* one reference */
    uint64_t gen, set_gen;
    uint64_t used; /* for least-recently-used replacement */
    uint64_t *pass;
    cand *cands;
    int64_t *raw; /* [score plugin k][target i], k * cap + i */
    unsigned char *skip_filter, *skip_score;
    size_t cap;
} equiv_entry;

typedef struct equiv_cache {
    equiv_entry e[EQ_ENTRIES];
    equiv_entry *cur; /* the entry this cycle reuses or fills; NULL: none */
    uint32_t *changed; /* targets changed since cur's gen, ascending */
    size_t n_changed, cap_changed;
    uint64_t clock;
    /* what it saved, for `make bench` and the tests */
    uint64_t hits, targets_reevaluated;
} equiv_cache;

typedef struct profile {
    const cfg_profile *cfg;
    struct sched *sched;
    int index;
    trellis_plugin **plugins; /* config order */
    size_t n_plugins;
    trellis_plugin *queue_sort;
    plist pre_filter, filter, post_filter, pre_score, score, reserve, permit, pre_bind, bind,
        post_bind, prepare_workload, prepare_target, eviction;
    queue q;
    snapshot snap;
    struct pool *sched_pool;
    size_t next_start; /* where the next sampled filter pass begins */
    int equivalent; /* every filter and score plugin registered `equivalent` */
    equiv_cache eq;
} profile;
#define CODE_UNKNOWN 0xff
#define REJ_PRE_FILTER (-2) /* rejected by a pre_filter for every target */
#define REJ_INVALID (-3)    /* the target's object failed a plugin's prepare */
#define REJ_EXCLUDED (-4)   /* the caller excluded it (the target being left) */
#define REJ_NOT_EVALUATED (-5) /* enough feasible targets were found before it */

struct trellis_cycle {
    profile *p;
    trellis_object *w;
    struct decision *d;
    /* per plugin of the profile (by index) */
    void **slots;
    unsigned char *skip_filter, *skip_score;
    size_t cap_plugins;
    /* the arena behind cycle_alloc */
    char *arena;
    size_t arena_cap, arena_used;
    /* the snapshot this cycle looks at */
    struct trellis_target **targets;
    size_t n;
    uint64_t *pass; /* bitmap over targets */
    cand *cands;    /* valid for targets whose pass bit is clear: see framework_rej */
    /* the targets filters looked at: eval_len of them from eval_begin on,
     * wrapping around (all of them unless scoring was sampled) */
    size_t eval_begin, eval_len;
    size_t exclude_idx;       /* exclude_name's index, SIZE_MAX when none */
    atomic_int filter_error; /* a plain filter returned ERROR this cycle */
    /* ignorable plugins cut short this cycle: a bit per plugin index */
    atomic_uint_fast64_t abandoned;
    size_t cap_targets;
    /* feasible targets and scores */
    const struct trellis_target **feasible;
    uint32_t *feasible_idx;
    size_t n_feasible;
    int64_t *scores; /* [score plugin][feasible] */
    int64_t *totals;
    size_t cap_scores;
    int scored;
    int filtered; /* cands[] holds this cycle's verdicts */
    /* pre_filter rejection for all targets */
    trellis_status pre_status;
    int pre_plugin;
    /* post_filter */
    int in_post_filter;
    const char *nominated_name; /* set by the caller: prefer this target */
    const char *exclude_name;   /* set by the caller: never this target */
    int changed; /* a post_filter evicted or created something */
    int failed;  /* an ERROR status ended the cycle */
    trellis_status error_status;
    const trellis_plugin *error_plugin;
};

/* Zeroed memory from the cycle's arena, released when the next cycle
 * starts (behind the SDK's cycle_alloc). Main thread only. */
void *framework_cycle_alloc(trellis_cycle *c, size_t size);
/* Build a profile's plugin lists from its instances. */
void framework_build(profile *p);
/* Free what framework_build and the cycles left in a profile. */
void framework_profile_free(profile *p);
void cycle_init(trellis_cycle *c);
/* Start a cycle for w: clear the per-plugin slots and the arena, size the
 * buffers to the profile's snapshot. */
void framework_cycle_reset(trellis_cycle *c, profile *p, trellis_object *w);
void cycle_free(trellis_cycle *c);

typedef enum { FW_SCHEDULED = 0, FW_UNSCHEDULABLE, FW_ERROR } fw_result;

/* Run the algorithm for w. On FW_SCHEDULED *best is the chosen target.
 * On FW_UNSCHEDULABLE, post-filters have run (c->changed tells whether one
 * made room). On FW_ERROR, msg says why. explain: score every feasible
 * target even when only one fits. */
fw_result framework_schedule(profile *p, trellis_cycle *c, trellis_object *w, int explain,
                             const struct trellis_target **best, char *msg, size_t msglen);

/* After filtering: -1 when target i is feasible, else the index into
 * p->filter of the filter that rejected it or a REJ_* code. */
int framework_rej(const trellis_cycle *c, size_t i);
/* Target i's verdict code (TRELLIS_SUCCESS when feasible or not
 * evaluated); asks the plain filter when a batch filter rejected it. */
int framework_code(trellis_cycle *c, size_t i);
/* The first rejection of target i, with its status (runs plain filters). */
int framework_explain(trellis_cycle *c, size_t i, const trellis_plugin **who,
                      trellis_status *st);
/* Filters over t as if victims were gone (post-filter support). */
int framework_filter_without(trellis_cycle *c, const struct trellis_target *t,
                             const trellis_object *const *victims, size_t n,
                             trellis_status *st);
/* Record an extension point's or a plugin's latency (and its status,
 * from the hook's return code) since t0 for /metrics; t0 == 0: off. */
void framework_time_point(const profile *p, const char *point, int rc, uint64_t t0);
void framework_time_plugin(const trellis_plugin *pl, const char *point, int rc, uint64_t t0);

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
