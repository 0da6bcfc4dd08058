/*
 * priority.h - a workload's scheduling priority.
 *
 * Kubernetes resolves a Pod's priorityClassName into spec.priority, an
 * int32; trellis reads that integer from a configurable field, absent
 * meaning 0. Shared by priority-sort (queue order) and preemption (who may
 * evict whom), which each parse it once per workload in prepare.
 */
#ifndef TRELLIS_PLUGINS_PRIORITY_H
#define TRELLIS_PLUGINS_PRIORITY_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* The priority at `field` of w into *out (0 when absent or null). -1 with
 * err ("spec.priority: expected an integer, got 'high'") when it is not an
 * integer in the int32 range. */
int priority_read(const trellis_host *h, const trellis_object *w, const char *field, int64_t *out,
                  char *err, size_t errlen);

#endif
