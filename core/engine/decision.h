/*
 * decision.h - what the host decided for each workload it looked at.
 *
 * A decision is the output record of one workload: its result, the
 * message, the target(s), what a post-filter evicted or created for it,
 * and, when asked (--explain), every target's verdict and scores. The
 * decisions table keeps them by workload id: a one-shot run reports every
 * decision at the end (in the order decisions_sort gives), a long-running
 * host keeps one only while its workload is not placed. Evictions made by
 * eviction checks before scheduling are recorded beside them.
 */
#ifndef TRELLIS_DECISION_H
#define TRELLIS_DECISION_H

#include <stddef.h>
#include <stdint.h>

#include "cycle.h"
#include "object.h"
#include "profile.h"

typedef enum { DEC_PENDING = 0, DEC_SCHEDULED, DEC_UNSCHEDULABLE, DEC_ERROR } dec_result;

typedef struct obj_id {
    char *kind, *namespace_, *name;
} obj_id;

typedef struct dec_cand {
    char *target;
    int feasible;
    char *plugin; /* first rejecting plugin, NULL when feasible */
    char *code;   /* its reason code */
    char *reason; /* its message */
    int has_score;
    int64_t score;   /* weighted total */
    int64_t *scores; /* per score plugin, normalized */
} dec_cand;

/* One per workload a run looked at (fifty thousand in a big run: the
 * counts are 32 bits to keep it small). */
typedef struct decision {
    trellis_object *w; /* one reference */
    profile *p;
    char **targets; /* one allocation with the names it points to */
    char *message;
    obj_id *evicted;
    obj_id *created;
    dec_cand *cands;
    char *nominated;
    /* how the decision was reached (cycle_note): "plugin: text" each, at
     * most DECISION_NOTES_MAX; beyond them one last entry "... and N more
     * notes" (notes_dropped: N, the most one attempt dropped;
     * notes_dropped_now: this attempt's) */
    char **notes;
    /* a decision of several targets (binding model "object"): the
     * targets placed and released by this run's cycles of the workload */
    char **added, **released;
    int64_t retry_at; /* unschedulable until a verdict expires then (ms); 0: none */
    dec_result result;
    uint32_t n_targets;
    uint32_t n_evicted;
    uint32_t n_created;
    uint32_t n_cands;
    uint32_t n_notes, notes_dropped, notes_dropped_now;
    uint32_t n_added, n_released;
    unsigned attempts;
    /* the next attempt continues this one (a post-filter changed
     * something): its notes stay */
    unsigned continued : 1;
} decision;

/* a bound workload evicted before scheduling (eviction checks) */
typedef struct eviction {
    obj_id workload;
    char *target, *plugin, *code, *reason;
} eviction;

/* "scheduled", "unschedulable" (a pending one too), "error". */
const char *decision_result_name(dec_result r);

/* Set d's result, message (copied; may be NULL) and target (copied; NULL
 * for none). */
void decision_set_result(decision *d, dec_result r, const char *msg, const char *target);
/* Set d's targets to names[0..n) (copied), keeping its result. */
void decision_set_targets(decision *d, const char *const *names, size_t n);
/* Note that this run placed d's workload on targets[0..n), or released
 * it from target (each name once, in the order first noted). */
void decision_add_added(decision *d, const char *const *targets, size_t n);
void decision_add_released(decision *d, const char *target);
/* Undo that note (the write did not land): an addition leaves targets
 * and added, a release leaves released and returns to targets. */
void decision_unrecord(decision *d, const char *target, int released);
/* Every target's verdict and scores from the cycle c just ran for d. */
void decision_record_candidates(decision *d, trellis_cycle *c);
/* Note that a post-filter evicted or created o for d. */
void decision_add_evicted(decision *d, const trellis_object *o);
void decision_add_created(decision *d, const trellis_object *o);
/* A note of plugin on how the decision was reached (copied; one said
 * already is not repeated); cleared at the start of an attempt that does
 * not continue the previous one. */
void decision_add_note(decision *d, const char *plugin, const char *text);
/* Notes kept per decision; a plugin noting in a loop does not grow it. */
#define DECISION_NOTES_MAX 64
/* Another attempt whose notes join these (a continued attempt, explain's
 * second pass): its notes already kept are not repeated, nor are those it
 * drops counted twice. */
void decision_notes_again(decision *d);
void decision_clear_notes(decision *d);
/* A post-filter made room on target for d's workload. */
void decision_nominate(decision *d, const char *target);
/* Free what d holds (d itself is not freed). */
void decision_clear(decision *d);
/* Free n ids and the array. */
void obj_ids_free(obj_id *ids, size_t n);

/* ---- the table ---- */
typedef struct decisions decisions;

/* keep_all: every decision is kept for the report (a one-shot run);
 * otherwise decisions_drop removes one when its workload is placed. */
decisions *decisions_new(int keep_all);
void decisions_free(decisions *ds);
/* The decision of w (by id), made for profile p when there is none. */
decision *decisions_for(decisions *ds, trellis_object *w, profile *p);
/* The decision of the workload with this id, or NULL. */
decision *decisions_get(const decisions *ds, const char *id);
/* Forget w's decision (a long-running host, once w is placed or gone). */
void decisions_drop(decisions *ds, const trellis_object *w);
/* Stop keeping every decision (a one-shot host turned long-running). */
void decisions_keep_all(decisions *ds, int keep_all);
/* The kept decisions, in the order of decisions_sort (by workload kind,
 * namespace, name) once it ran, else in the order first decided. */
void decisions_sort(decisions *ds);
size_t decisions_count(const decisions *ds);
decision *decisions_at(const decisions *ds, size_t i);
/* An eviction check's eviction, for the one-shot report. */
void decisions_add_eviction(decisions *ds, const trellis_object *w, const char *target,
                            const char *plugin, const trellis_status *st);
size_t decisions_eviction_count(const decisions *ds);
const eviction *decisions_eviction_at(const decisions *ds, size_t i);

#endif
