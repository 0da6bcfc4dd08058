/*
 * explain.h - `trellis explain`: why one workload goes where it goes, or
 * nowhere.
 *
 * Works on a scheduler loaded as `trellis schedule` loads it (sched_open,
 * sched_load) over a store opened with dry_run, so nothing is ever
 * written. A bound workload is first taken off its target in the cache, so
 * that it does not count against itself. Two passes follow. The first runs
 * framework_schedule with the post-filters held back and every target
 * scored, then asks every filter plugin about every target on its own
 * (framework_filter_one): the matrix of verdicts and scores. The second is
 * the real cycle, run the way scheduler.c runs it (explain off, post-filters
 * on, retried while a post-filter made room), so the pick, the message and
 * the victims a post-filter would evict are exactly what `trellis schedule`
 * decides for this workload against this state. The result is printed as a
 * matrix for people or as a JSON document (see trellis(1)).
 */
#ifndef TRELLIS_EXPLAIN_H
#define TRELLIS_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include "framework.h"
#include "scheduler.h"

/* One filter plugin's verdict on one target. */
typedef struct explain_verdict {
    int code;      /* trellis_code; TRELLIS_SKIP when told to skip */
    int ran;       /* 0 when a pre-filter rejected the workload first, or left
                      the target out of the cycle (cycle_narrow) */
    char *reason;  /* the reason code, "" on success; owned */
    char *message; /* owned */
} explain_verdict;

typedef struct explain_row {
    char *target; /* owned */
    int feasible;
    /* the first rejection, as the cycle sees it (pre-filter, invalid
     * target and filters in order) */
    char *rej_plugin, *rej_code, *rej_message; /* owned, NULL when feasible */
    explain_verdict *filters;                  /* [profile filter.n] */
    int scored;
    int64_t *scores;     /* [profile score.n] normalized; INT64_MIN: not in the running */
    int64_t total;       /* weighted: the weighted sum; lexicographic: rounds stayed in */
    const char *cut_by;  /* lexicographic: the score plugin that dropped it */
    unsigned char *kept; /* lexicographic: [score.n] it survived that round */
    int picked;
} explain_row;

typedef struct explain_result {
    trellis_object *w; /* one reference */
    profile *p;
    char *bound;         /* the target it is bound to, NULL when pending; owned; with
                            holds, every target it holds (comma-separated) */
    int holds;           /* the profile keeps held targets (several targets, reconcile) */
    char *note;          /* e.g. evaluated against a profile it does not ask for */
    size_t queued_ahead; /* pending workloads of the profile the queue pops first */
    char *pre_plugin;    /* the pre-filter that rejected it for every target */
    trellis_status pre_status;
    size_t n_targets; /* in the profile's snapshot */
    /* cycle_narrow: the pre-filters that narrowed the cycle ("a, b";
     * NULL when none did) and how many targets they left in */
    char *narrowed_by;
    size_t n_narrow;
    explain_row *rows; /* in snapshot order (by name); NULL when none was evaluated */
    size_t n_rows;
    int scored;                   /* the feasible targets have scores */
    unsigned char *score_skipped; /* [score.n] a pre-score said skip */
    unsigned char *narrowed;      /* lexicographic: [score.n] it had a round */
    /* the real cycle */
    fw_result result;
    char *picked; /* owned, NULL unless scheduled */
    char **picks; /* a decision of several targets: every target picked,
                     the best first (picked is the first); owned */
    size_t n_picks;
    int more_cycles; /* a plugin asked for another cycle at once */
    char *message;   /* what `trellis schedule` prints; owned */
    unsigned attempts;
    int post_filter_ran;
    int post_filter_evaluated;
    char *post_filter_note; /* why not evaluated; owned */
    obj_id *evicted, *created;
    size_t n_evicted, n_created;
    char **evicted_from; /* [n_evicted] the target each victim was on */
    char *nominated;
    size_t n_not_evaluated; /* targets the real cycle did not look at */
    char **notes;           /* how the real cycle decided (cycle_note); owned */
    size_t n_notes;
    char *skipped_by; /* the pre_enqueue plugin that leaves it alone; owned */
} explain_result;

/* Find the workload named by spec (NAME, NAMESPACE/NAME or
 * KIND/NAMESPACE/NAME) and its profile (profile_name, or the profile that
 * schedules it). 0, or -1 with err listing what matched (none or several). */
int explain_find(const sched *s, const char *spec, const char *profile_name, trellis_object **w,
                 profile **p, char *err, size_t errlen);

/* Evaluate w against every target of p (see above). The scheduler's cache
 * is changed (the workload's own assignment, a post-filter's evictions): the
 * scheduler is for this one call. The result is filled in every case;
 * release it with explain_free. */
void explain_run(sched *s, profile *p, trellis_object *w, explain_result *r);
void explain_free(explain_result *r);

void explain_print_table(FILE *f, const explain_result *r);
void explain_print_json(FILE *f, const explain_result *r);

#endif
