/*
 * equal.h - deep equality of two values, for `equivalent` hooks (SDK 1.3).
 *
 * A plugin whose filter and score read a few fields of the workload can
 * tell the host that two workloads are equivalent for it when those fields
 * are equal: equal_values compares two value trees through the host table
 * (same types, same scalar text, lists element by element, maps member by
 * member whatever their order). Absent and null are equal. It runs once
 * per cycle on the main thread, never in a hot loop.
 */
#ifndef TRELLIS_PLUGINS_EQUAL_H
#define TRELLIS_PLUGINS_EQUAL_H

#include "trellis/plugin.h"

/* Nonzero when a and b (either may be NULL: absent) are equal. */
int equal_values(const trellis_host *h, const trellis_value *a, const trellis_value *b);

/* equal_values of the values at `path` in objects a and b. */
int equal_fields(const trellis_host *h, const trellis_object *a, const trellis_object *b,
                 const char *path);

/* The equivalent hook of a plugin whose verdicts or scores never depend on
 * the workload (only on the target): every two workloads are equivalent.
 * Header-only, so such a plugin needs no other part of this module. */
static inline int equal_always(trellis_plugin *self, const trellis_object *a,
                               const trellis_object *b)
{
    (void)self;
    (void)a;
    (void)b;
    return 1;
}

#endif
