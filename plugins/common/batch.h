/*
 * batch.h - the loop of a filter_batch hook.
 *
 * A plugin's filter_batch gets a block of n targets and a bitmap `pass`
 * (bit i of pass[i / 64]) of the ones still feasible, and clears the bit of
 * every feasible target its predicate rejects; targets already rejected are
 * not looked at again. batch_clear_rejected is that loop. It is the hot
 * path, so it is a static inline function: called with a static predicate
 * of the plugin, the compiler inlines both and no indirect call remains. It
 * walks the set bits of each word only, so a block that earlier filters
 * mostly rejected costs little, and it allocates nothing. `cfg` and `data`
 * are what the predicate needs that does not depend on the target, looked
 * up once per block by the caller: usually the plugin's private config and
 * the workload's prepared data (either may be NULL when the predicate has
 * no use for it).
 *
 * Most predicates need only the target's prepared data:
 * batch_clear_rejected_prepared fetches it (two host calls per feasible
 * target) and hands the predicate that alone, so the predicate is a pure
 * function of prepared data, shared with the plain filter and the hint.
 */
#ifndef TRELLIS_PLUGINS_BATCH_H
#define TRELLIS_PLUGINS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* Nonzero when target t is infeasible for the workload cfg and data
 * describe. */
typedef int (*batch_reject_fn)(trellis_plugin *self, const void *cfg, const void *data,
                               const trellis_target *t);

/* Clears the bit of each target in targets[0..n) whose bit is set in pass
 * and that rejects(self, cfg, data, target) rejects. */
static inline void batch_clear_rejected(trellis_plugin *self, const void *cfg, const void *data,
                                        const trellis_target *const *targets, size_t n,
                                        uint64_t *pass, batch_reject_fn rejects)
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
typedef int (*batch_reject_prepared_fn)(const void *cfg, const void *data, const void *tdata);

/* batch_clear_rejected for a predicate of the target's prepared data: h is
 * the host table, self the plugin whose prepared data is read. */
static inline void batch_clear_rejected_prepared(const trellis_host *h, trellis_plugin *self,
                                                 const void *cfg, const void *data,
                                                 const trellis_target *const *targets, size_t n,
                                                 uint64_t *pass, batch_reject_prepared_fn rejects)
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

#endif
