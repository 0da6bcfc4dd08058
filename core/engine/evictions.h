/*
 * evictions.h - eviction checks over bound workloads (NoExecute taints
 * and the like): a plugin's eviction_check hook may say a bound workload
 * must leave its target; its placement is then cleared and it is queued
 * again.
 */
#ifndef TRELLIS_EVICTIONS_H
#define TRELLIS_EVICTIONS_H

#include "sched_impl.h"

/* Every profile's eviction checks over every bound workload. */
void evictions_check(sched *s);

#endif
