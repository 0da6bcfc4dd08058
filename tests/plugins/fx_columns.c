/*
 * fx_columns.c - fixture: the SDK 1.3 columnar hooks checked against the
 * per-target host calls they replace.
 *
 * A target's rank is its label `rank` (an integer, 0 when absent); each
 * workload counts its label `weight` (default 1) in the plugin's one
 * counter. Filter: a target passes when its rank is at least the workload's
 * label `min-rank`. Score: rank minus the weights already on the target,
 * clamped to 0..100. With `columns = true` (the default) the plugin
 * registers filter_span and score_span, which read the rank from target
 * values, the weights from the counter column and the prepared data from
 * the data column; with `columns = false` only the plain filter and score,
 * which read them through object_data and target_counters. Both must make
 * the same decisions. The span hooks also compare every column entry with
 * the per-target calls (cycle_target, object_data, target_counters): a
 * mismatch rejects the target in the span filter, which the plain filter
 * accepts, so the host reports the cycle as an error ("InconsistentFilter")
 * and the test sees it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static const trellis_arg_spec args_table[] = {
    {"columns", TRELLIS_ARG_BOOL, "true", "register the span hooks and target values"},
    {NULL, 0, NULL, NULL},
};

static int64_t label_int(const trellis_object *o, const char *key, int64_t dflt)
{
    const char *v = host->object_label(o, key);

    return v ? strtoll(v, NULL, 10) : dflt;
}

/* Prepared target data: the rank. */
static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    int64_t *rank = malloc(sizeof(*rank));

    (void)self;
    if (!rank) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *rank = label_int(obj, "rank", 0);
    *data = rank;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    free(data);
}

static void amounts(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    (void)self;
    out[0] = label_int(w, "weight", 1);
}

/* Target values: the rank, and ten times it (a second column). */
static void target_values(trellis_plugin *self, const trellis_object *t, int64_t *out)
{
    const int64_t *rank = host->object_data(self, t);

    out[0] = rank ? *rank : 0;
    out[1] = 10 * out[0];
}

static int64_t rank_of(const trellis_plugin *self, const trellis_target *t)
{
    const int64_t *rank = host->object_data(self, host->target_object(t));

    return rank ? *rank : 0;
}

static int64_t clamp_score(int64_t v)
{
    return v < 0 ? 0 : v > TRELLIS_MAX_SCORE ? TRELLIS_MAX_SCORE : v;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    int64_t min = label_int(workload, "min-rank", 0);

    (void)c;
    if (rank_of(self, target) >= min)
        return TRELLIS_SUCCESS;
    return host->status(st, TRELLIS_UNRESOLVABLE, "RankTooLow", "rank %lld is below %lld",
                        (long long)rank_of(self, target), (long long)min);
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    (void)c;
    (void)workload;
    (void)st;
    *out = clamp_score(rank_of(self, target) - host->target_counters(self, target)[0]);
    return TRELLIS_SUCCESS;
}

/* Whether every column entry of target i matches the per-target calls. */
static int columns_agree(const trellis_plugin *self, const trellis_cycle *c, size_t i)
{
    const trellis_target *t = host->cycle_target(c, i);
    void *const *data = host->cycle_target_data(c, self);
    const int64_t *v0 = host->cycle_target_values(c, self, 0);
    const int64_t *v1 = host->cycle_target_values(c, self, 1);
    const int64_t *used = host->cycle_target_counter(c, self, 0);

    if (!t || !data || !v0 || !v1 || !used || host->cycle_target_values(c, self, 2) ||
        host->cycle_target_counter(c, self, 1))
        return 0;
    return data[i] == host->object_data(self, host->target_object(t)) &&
           v0[i] == rank_of(self, t) && v1[i] == 10 * v0[i] &&
           used[i] == host->target_counters(self, t)[0];
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    const int64_t *rank = host->cycle_target_values(c, self, 0);
    int64_t min = label_int(workload, "min-rank", 0);

    for (size_t j = 0; j < n; j++) {
        uint64_t bit = UINT64_C(1) << (j % 64);

        if ((pass[j / 64] & bit) &&
            (!columns_agree(self, c, first + j) || !rank || rank[first + j] < min))
            pass[j / 64] &= ~bit;
    }
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const int64_t *rank = host->cycle_target_values(c, self, 0);
    const int64_t *used = host->cycle_target_counter(c, self, 0);

    (void)workload;
    for (size_t j = 0; j < n; j++)
        scores[j] =
            columns_agree(self, c, idx[j]) ? clamp_score(rank[idx[j]] - used[idx[j]]) : INT64_MIN;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->declare_counters(self, 1, amounts) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_score(self, score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    if (h->arg_bool(args, "columns") && (h->register_filter_span(self, filter_span) < 0 ||
                                         h->register_score_span(self, score_span) < 0 ||
                                         h->declare_target_values(self, 2, target_values) < 0)) {
        snprintf(err, errlen, "cannot register the span hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-columns",
    "1.0.0",
    "fixture: span hooks and columns against per-target calls",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN(desc)
