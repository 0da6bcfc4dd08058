/*
 * least_utilized.c - the least-utilized plugin: prefer the targets that run
 * the fewest workloads.
 *
 * The raw score is the number of workloads the host counts on the target,
 * assumed ones included, so workloads placed earlier in the same run spread
 * the later ones. normalize maps the emptiest target to 100 and the fullest
 * to 0, linearly in between (Gardener's "least utilised seed" choice, as a
 * score that other plugins can be weighed against). It has no arguments and
 * no state.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = (int64_t)host->target_workload_count(target);
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    for (size_t i = 0; i < n; i++)
        scores[i] = (int64_t)host->target_workload_count(targets[i]);
}

static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    int64_t min, max;

    trellis_scores_min_max(scores, n, &min, &max);
    for (size_t i = 0; i < n; i++)
        scores[i] =
            max == min ? TRELLIS_MAX_SCORE : TRELLIS_MAX_SCORE * (max - scores[i]) / (max - min);
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_score(self, score) < 0 || h->register_score_batch(self, score_batch) < 0 ||
        trellis_register_equivalent(h, self, trellis_equal_always) < 0 ||
        h->register_normalize(self, normalize) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "least-utilized",
    "1.0.0",
    "prefers targets with the fewest assigned workloads",
    NULL,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, least_utilized)
