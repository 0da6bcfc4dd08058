/*
 * fx_review.c - fixture: a reviewer of preemption candidates
 * (review_candidates, SDK 1.7), what an extender's preempt verb does.
 *
 * A candidate whose target is labelled fx-review=drop is dropped; one
 * whose target carries fx-review/only=NAME keeps the workload NAME on it
 * as its only victim (no budget violated). A workload labelled
 * fx-review=... makes it misbehave: "error" fails the review, "skip"
 * drops every candidate and answers SKIP (the host must ignore the
 * edits), "none" drops every candidate, "stray" answers a target that
 * was not a candidate and "foreign" gives the first candidate a victim
 * of the second's target (the host must refuse both). It checks the
 * host's guards as it goes: a reviewer may not evict, nominate or ask
 * for a review itself, and pre_score may not ask for one; a guard that
 * lets it through fails the review (or the cycle), which the decisions
 * show.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int is(const char *v, const char *want)
{
    return v && strcmp(v, want) == 0;
}

/* The guards a reviewer runs into: 0 when every one held. */
static int guards_hold(trellis_plugin *self, trellis_cycle *c, trellis_candidate *cands)
{
    char err[TRELLIS_MESSAGE_MAX];
    trellis_status st;
    size_t one = 1;
    if (host->evict(c, self, cands[0].victims[0], "a reviewer", err, sizeof err) == 0)
        return -1;
    if (host->nominate(c, cands[0].target) == 0)
        return -1;
    return host->cycle_review_candidates(c, self, cands, &one, &st) == TRELLIS_ERROR ? 0 : -1;
}

/* The workload named name on t, or NULL. */
static const trellis_object *on(const trellis_target *t, const char *name)
{
    for (size_t i = 0; i < host->target_workload_count(t); i++)
        if (strcmp(host->object_name(host->target_workload(t, i)), name) == 0)
            return host->target_workload(t, i);
    return NULL;
}

static int review(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  trellis_candidate *cands, size_t *n, trellis_status *st)
{
    const char *how = host->object_label(w, "fx-review");
    size_t given = *n, k = 0;
    if (guards_hold(self, c, cands) < 0) {
        host->status(st, TRELLIS_ERROR, "GuardMissing", "a reviewer's guard is missing");
        return TRELLIS_ERROR;
    }
    if (is(how, "error")) {
        host->status(st, TRELLIS_ERROR, "ReviewError", "fx-review was told to fail");
        return TRELLIS_ERROR;
    }
    if (is(how, "skip") || is(how, "none")) {
        *n = 0;
        return is(how, "skip") ? TRELLIS_SKIP : TRELLIS_SUCCESS;
    }
    if (is(how, "stray")) {
        for (size_t i = 0; i < host->cycle_target_count(c); i++) {
            int cand = 0;
            for (size_t j = 0; j < *n; j++)
                cand |= cands[j].target == host->cycle_target(c, i);
            if (!cand)
                cands[0].target = host->cycle_target(c, i);
        }
        return TRELLIS_SUCCESS;
    }
    if (is(how, "foreign") && *n >= 2) {
        cands[0].victims = cands[1].victims;
        cands[0].n_victims = 1;
        return TRELLIS_SUCCESS;
    }
    for (size_t j = 0; j < given; j++) {
        const trellis_object *t = host->target_object(cands[j].target);
        const char *only = host->object_label(t, "fx-review/only");
        if (is(host->object_label(t, "fx-review"), "drop"))
            continue;
        cands[k] = cands[j];
        if (only && on(cands[j].target, only)) {
            const trellis_object **v = host->cycle_alloc(c, sizeof *v);
            if (!v) {
                host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
                return TRELLIS_ERROR;
            }
            v[0] = on(cands[j].target, only);
            cands[k].victims = v;
            cands[k].n_victims = 1;
            cands[k].pdb_violations = 0;
        }
        k++;
    }
    *n = k;
    host->cycle_note(c, self, "kept %zu of %zu candidates", k, given);
    return TRELLIS_SUCCESS;
}

/* A review is the post_filter's to ask for. */
static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    trellis_status r;
    size_t none = 0;
    if (host->cycle_review_candidates(c, self, NULL, &none, &r) != TRELLIS_ERROR) {
        host->status(st, TRELLIS_ERROR, "GuardMissing", "a review worked in pre_score");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_review_candidates(self, review) < 0 ||
        h->register_pre_score(self, pre_score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-review",
    "0.0.1",
    "fixture: reviews preemption candidates by the label fx-review",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
