/*
 * trellis/helpers.h - helpers for plugin authors, on top of trellis/plugin.h.
 *
 * The loops and small rules the in-tree plugins share, for out-of-tree
 * plugins too: everything here is a static inline function over the host
 * table, includes only libc and trellis/plugin.h, links against nothing
 * and allocates nothing. Using it is optional; it is installed beside
 * trellis/plugin.h and follows the same version rule (a helper that needs
 * a newer host function says so and tests for it).
 *
 *   trellis_batch_clear_rejected          the loop of a filter_batch hook
 *   trellis_batch_clear_rejected_prepared the same over prepared data
 *   trellis_span_clear_rejected           the loop of a filter_span hook (1.3)
 *   trellis_hint_target_turned            the usual queueing hint (1.2)
 *   trellis_hints_register                register_events where the host has it
 *   trellis_equal_values                  deep equality, for equivalent hooks
 *   trellis_equal_fields                  the same on a field of two objects
 *   trellis_equal_always                  an equivalent hook for target-only
 *                                         plugins
 *   trellis_register_equivalent           register_equivalent where the host
 *                                         has it
 *   trellis_scores_min_max                the range of raw scores (normalize)
 *   trellis_cycle_own_target              the cycle's target a copy stands for
 *                                         (1.3)
 *   trellis_target_holds                  whether a target holds a workload
 */
#ifndef TRELLIS_HELPERS_H
#define TRELLIS_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trellis/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- filter_batch ------------------------------------------------------
 * A plugin's filter_batch gets a block of n targets and a bitmap `pass`
 * (bit i of pass[i / 64]) of the ones still feasible, and clears the bit of
 * every feasible target its predicate rejects; targets already rejected are
 * not looked at again. Called with a static predicate of the plugin, the
 * compiler inlines both and no indirect call remains. It walks the set bits
 * of each word only and allocates nothing. `cfg` and `data` are what the
 * predicate needs that does not depend on the target, looked up once per
 * block by the caller: usually the plugin's private config and the
 * workload's prepared data (either may be NULL). */

/* Nonzero when target t is infeasible for the workload cfg and data
 * describe. */
typedef int (*trellis_batch_reject_fn)(trellis_plugin *self, const void *cfg, const void *data,
                                       const trellis_target *t);

/* Clears the bit of each target in targets[0..n) whose bit is set in pass
 * and that rejects(self, cfg, data, target) rejects. */
static inline void trellis_batch_clear_rejected(trellis_plugin *self, const void *cfg,
                                                const void *data,
                                                const trellis_target *const *targets, size_t n,
                                                uint64_t *pass, trellis_batch_reject_fn rejects)
{
    for (size_t w = 0; w * 64 < n; w++) {
        uint64_t bits = pass[w], keep = bits;

        while (bits) {
            unsigned j = (unsigned)__builtin_ctzll(bits);
            size_t i = w * 64 + j;

            if (i >= n) /* bits past the block belong to no target here */
                break;
            bits &= bits - 1;
            if (rejects(self, cfg, data, targets[i]))
                keep &= ~(UINT64_C(1) << j);
        }
        pass[w] = keep;
    }
}

/* Nonzero when the target whose prepared data (of the calling plugin) is
 * `tdata` rejects the workload cfg and data describe. */
typedef int (*trellis_batch_reject_prepared_fn)(const void *cfg, const void *data,
                                                const void *tdata);

/* trellis_batch_clear_rejected for a predicate of the target's prepared
 * data (two host calls per feasible target): h is the host table, self
 * the plugin whose prepared data is read. */
static inline void trellis_batch_clear_rejected_prepared(const trellis_host *h,
                                                         trellis_plugin *self, const void *cfg,
                                                         const void *data,
                                                         const trellis_target *const *targets,
                                                         size_t n, uint64_t *pass,
                                                         trellis_batch_reject_prepared_fn rejects)
{
    for (size_t w = 0; w * 64 < n; w++) {
        const trellis_target *const *base = targets + w * 64;
        uint64_t bits = pass[w], keep = bits;

        if (n - w * 64 < 64) /* bits past the block belong to no target here */
            bits &= (UINT64_C(1) << (n - w * 64)) - 1;
        for (; bits; bits &= bits - 1) {
            unsigned j = (unsigned)__builtin_ctzll(bits);

            if (rejects(cfg, data, h->object_data(self, h->target_object(base[j]))))
                keep &= ~(UINT64_C(1) << j);
        }
        pass[w] = keep;
    }
}

/* ---- filter_span (SDK 1.3) ---------------------------------------------
 * A plugin's filter_span gets the targets first .. first + n - 1 of the
 * cycle's snapshot and a bitmap `pass` (bit j of pass[j / 64] for target
 * first + j) of the ones still feasible. trellis_span_clear_rejected is
 * that loop for a predicate over the target's prepared data (the column
 * from host->cycle_target_data): it visits only set bits and makes no host
 * call per target. A predicate over plain numbers is better written over
 * target values and counter columns, a word of 64 targets at a time. */

/* Nonzero when the target with prepared data tdata (may be NULL) is
 * infeasible for the workload cfg and data describe. */
typedef int (*trellis_span_reject_fn)(const void *cfg, const void *data, const void *tdata);

static inline void trellis_span_clear_rejected(void *const *tdata, const void *cfg,
                                               const void *data, size_t first, size_t n,
                                               uint64_t *pass, trellis_span_reject_fn rejects)
{
    for (size_t w = 0; w < (n + 63) / 64; w++) {
        uint64_t bits = pass[w];

        while (bits) {
            size_t j = w * 64 + (size_t)__builtin_ctzll(bits);

            bits &= bits - 1;
            if (j < n && rejects(cfg, data, tdata ? tdata[first + j] : NULL))
                pass[w] &= ~(UINT64_C(1) << (j % 64));
        }
    }
}

/* ---- queueing hints (SDK 1.2) ------------------------------------------
 * Most filters decide from the workload and one target alone; for them a
 * target change concerns a rejected workload exactly when the new target
 * passes and the old one did not (or did not exist). */

/* Nonzero when `target`, a prepared target object, rejects `workload`. */
typedef int (*trellis_hint_rejects_fn)(trellis_plugin *self, const trellis_object *workload,
                                       const trellis_object *target);

/* For TRELLIS_EV_TARGET_ADD / _UPDATE: TRELLIS_QUEUE when new_obj passes and
 * old_obj is NULL or rejects, TRELLIS_QUEUE_SKIP otherwise. Any other event:
 * TRELLIS_QUEUE. Ownership of every argument is retained by the caller. */
static inline int trellis_hint_target_turned(trellis_plugin *self, const trellis_object *workload,
                                             unsigned event, const trellis_object *old_obj,
                                             const trellis_object *new_obj,
                                             trellis_hint_rejects_fn rejects)
{
    if (event != TRELLIS_EV_TARGET_ADD && event != TRELLIS_EV_TARGET_UPDATE)
        return TRELLIS_QUEUE;
    if (!new_obj)
        return TRELLIS_QUEUE; /* not what the host promises: unsure */
    if (rejects(self, workload, new_obj))
        return TRELLIS_QUEUE_SKIP;
    return !old_obj || rejects(self, workload, old_obj) ? TRELLIS_QUEUE : TRELLIS_QUEUE_SKIP;
}

/* In init: register `events` with `fn` when the host has register_events
 * (SDK 1.2); on an older host, which requeues every workload on every
 * change, do nothing. 0, or -1 with err filled. */
static inline int trellis_hints_register(const trellis_host *h, trellis_plugin *self,
                                         unsigned events, trellis_hint_fn fn, char *err,
                                         size_t errlen)
{
    if (!TRELLIS_HOST_HAS(h, register_events) || !h->register_events)
        return 0;
    if (h->register_events(self, events, fn) < 0) {
        snprintf(err, errlen, "cannot register queueing hints");
        return -1;
    }
    return 0;
}

/* ---- equivalence (SDK 1.3) ---------------------------------------------
 * A plugin whose filter and score read a few fields of the workload tells
 * the host that two workloads are equivalent for it when those fields are
 * equal. trellis_equal_values compares two value trees through the host
 * table: same types, same scalar text, lists element by element, maps
 * member by member whatever their order. Absent and null are equal. It
 * runs once per cycle on the main thread, never in a hot loop. */

static inline int trellis_equal_values(const trellis_host *h, const trellis_value *a,
                                       const trellis_value *b);

typedef struct trellis_equal_member_ {
    const trellis_host *h;
    const trellis_value *other;
} trellis_equal_member_;

/* value_foreach callback: nonzero (stop) when the member differs in b. */
static inline int trellis_equal_member_differs_(const char *key, const trellis_value *v, void *ud)
{
    const trellis_equal_member_ *m = (const trellis_equal_member_ *)ud;

    return !trellis_equal_values(m->h, v, m->h->value_get(m->other, key));
}

/* Nonzero when a and b (either may be NULL: absent) are equal. */
static inline int trellis_equal_values(const trellis_host *h, const trellis_value *a,
                                       const trellis_value *b)
{
    trellis_value_type ta = a ? h->value_type(a) : TRELLIS_VALUE_NULL;
    trellis_value_type tb = b ? h->value_type(b) : TRELLIS_VALUE_NULL;

    if (ta != tb)
        return 0;
    switch (ta) {
    case TRELLIS_VALUE_NULL:
        return 1;
    case TRELLIS_VALUE_LIST: {
        size_t n = h->value_len(a);

        if (n != h->value_len(b))
            return 0;
        for (size_t i = 0; i < n; i++) {
            if (!trellis_equal_values(h, h->value_at(a, i), h->value_at(b, i)))
                return 0;
        }
        return 1;
    }
    case TRELLIS_VALUE_MAP: {
        trellis_equal_member_ m = {h, b};

        return h->value_len(a) == h->value_len(b) &&
               !h->value_foreach(a, trellis_equal_member_differs_, &m);
    }
    default: {
        const char *sa = h->value_string(a), *sb = h->value_string(b);

        return sa && sb && strcmp(sa, sb) == 0;
    }
    }
}

/* trellis_equal_values of the values at `path` in objects a and b. */
static inline int trellis_equal_fields(const trellis_host *h, const trellis_object *a,
                                       const trellis_object *b, const char *path)
{
    return trellis_equal_values(h, h->object_get(a, path), h->object_get(b, path));
}

/* The equivalent hook of a plugin whose verdicts or scores never depend on
 * the workload (only on the target): every two workloads are equivalent. */
static inline int trellis_equal_always(trellis_plugin *self, const trellis_object *a,
                                       const trellis_object *b)
{
    (void)self;
    (void)a;
    (void)b;
    return 1;
}

/* In init: register fn as the equivalent hook when the host has
 * register_equivalent (SDK 1.3); an older host, which never reuses a
 * cycle's verdicts, needs none. 0, or -1 when the host refused. */
static inline int trellis_register_equivalent(const trellis_host *h, trellis_plugin *self,
                                              trellis_equivalent_fn fn)
{
    if (!TRELLIS_HOST_HAS(h, register_equivalent) || !h->register_equivalent)
        return 0;
    return h->register_equivalent(self, fn);
}

/* ---- normalize ---------------------------------------------------------
 * Several plugins normalize "reversed": the lowest raw score gets
 * TRELLIS_MAX_SCORE and the others less, linearly between the lowest and
 * the highest raw score; each keeps its own formula, and shares the scan
 * for the range. */

/* The smallest and the largest of scores[0..n) into *min and *max; both 0
 * when n is 0. */
static inline void trellis_scores_min_max(const int64_t *scores, size_t n, int64_t *min,
                                          int64_t *max)
{
    int64_t lo, hi;

    if (n == 0) {
        *min = *max = 0;
        return;
    }
    lo = hi = scores[0];
    for (size_t i = 1; i < n; i++) {
        if (scores[i] < lo)
            lo = scores[i];
        if (scores[i] > hi)
            hi = scores[i];
    }
    *min = lo;
    *max = hi;
}

/* ---- copies of targets -------------------------------------------------
 * A filter may be handed a copy of a target rather than the cycle's own:
 * the target with nominated workloads added, or a preemption trial's
 * target without its victims. A plugin that keeps per-target state in the
 * cycle by position finds the target the copy stands for here. */

/* The cycle's own target of t's namespace and name (the cycle's targets
 * are in namespace, name order: a binary search, then, for a host that
 * keeps another order, a walk by object), or NULL. cycle_target in every
 * hook of a cycle needs SDK 1.3. Borrowed, as cycle_target's. */
static inline const trellis_target *
trellis_cycle_own_target(const trellis_host *h, const trellis_cycle *c, const trellis_target *t)
{
    const trellis_object *o = h->target_object(t);
    const char *ns = h->object_namespace(o), *name = h->target_name(t);
    size_t lo = 0, hi = h->cycle_target_count(c), n = hi;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const trellis_target *m = h->cycle_target(c, mid);
        int r = strcmp(h->object_namespace(h->target_object(m)), ns);

        if (!r)
            r = strcmp(h->target_name(m), name);
        if (!r)
            return m;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_target *m = h->cycle_target(c, i);

        if (h->target_object(m) == o)
            return m;
    }
    return NULL;
}

/* Whether w is among the workloads t holds (t's own, or a copy's). */
static inline int trellis_target_holds(const trellis_host *h, const trellis_target *t,
                                       const trellis_object *w)
{
    size_t n = h->target_workload_count(t);

    for (size_t i = 0; i < n; i++)
        if (h->target_workload(t, i) == w)
            return 1;
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_HELPERS_H */
