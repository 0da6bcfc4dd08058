/*
 * priority.h - a workload's scheduling priority and preemption policy.
 *
 * Kubernetes' Priority admission resolves a Pod's priorityClassName into
 * spec.priority (an int32) and spec.preemptionPolicy when the Pod is
 * created; kube-scheduler reads only those two. trellis reads the integer
 * from a configurable field, and, when the profile names a class field,
 * does admission's work for a workload that lacks it: the class of that
 * name (PriorityClass objects, scheduling.k8s.io/v1: value, globalDefault,
 * preemptionPolicy), or without a name the global default class (the
 * lowest value among several, as admission picks), else 0. The classes
 * Kubernetes creates in every cluster (system-cluster-critical,
 * system-node-critical) resolve even when the state does not hold them.
 * Shared by priority-sort (queue order) and preemption (who may evict
 * whom), which each resolve it once per workload in prepare (the host
 * prepares the workload again when a class it read changes).
 */
#ifndef TRELLIS_PLUGINS_PRIORITY_H
#define TRELLIS_PLUGINS_PRIORITY_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* The arguments a plugin reading priorities declares (after its
 * priority_field). */
/* clang-format off */
#define PRIORITY_CLASS_ARGS                                                  \
    {"priority_class_field", TRELLIS_ARG_STRING, "",                          \
     "dotted path of the workload's priority class name "                    \
     "(spec.priorityClassName), resolved through priority_class_kind when "  \
     "priority_field is absent; empty: no classes"},                         \
    {"priority_class_kind", TRELLIS_ARG_STRING, "PriorityClass",             \
     "the kind of the priority classes (value, globalDefault, "              \
     "preemptionPolicy)"}
/* clang-format on */

/* Where a plugin reads priorities; host-owned strings. */
typedef struct priority_source {
    const char *priority_field; /* spec.priority */
    const char *class_field;    /* spec.priorityClassName; NULL: no classes */
    const char *class_kind;     /* PriorityClass */
    const char *policy_field;   /* spec.preemptionPolicy; NULL: not read */
} priority_source;

/* Read the fields above from args (priority_field, PRIORITY_CLASS_ARGS;
 * policy_field when with_policy), check them, and declare the class kind
 * to the host (init only). 0, or -1 with err. */
int priority_setup(trellis_plugin *self, const trellis_host *h, const trellis_args *args,
                   int with_policy, priority_source *src, char *err, size_t errlen);

/* The priority of w into *prio and whether its preemption policy is
 * Never into *never (may be NULL): the fields, else its class, as above.
 * -1 with err naming the field when a value is not an integer in the
 * int32 range, the policy is neither PreemptLowerPriority nor Never, or
 * the class w names does not exist ("spec.priorityClassName: no
 * PriorityClass 'gold' ..."). */
int priority_resolve(const trellis_host *h, const trellis_plugin *self, const priority_source *src,
                     const trellis_object *w, int64_t *prio, int *never, char *err, size_t errlen);

/* The priority at `field` of w into *out (0 when absent or null). -1 with
 * err ("spec.priority: expected an integer, got 'high'") when it is not an
 * integer in the int32 range. */
int priority_read(const trellis_host *h, const trellis_object *w, const char *field, int64_t *out,
                  char *err, size_t errlen);

#endif
