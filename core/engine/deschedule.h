/*
 * deschedule.h - move workloads off targets holding more than their
 * capacity, through the normal scheduling and binding cycles.
 */
#ifndef TRELLIS_DESCHEDULE_H
#define TRELLIS_DESCHEDULE_H

#include <stddef.h>

#include "object.h"
#include "profile.h"

struct sched;

/* Called for each workload tried: to is NULL when it stayed (why says
 * why). */
typedef void (*desched_fn)(void *ud, const trellis_object *w, const char *from, const char *to,
                           const char *why);
/* See sched_deschedule. */
int deschedule_run(struct sched *s, profile *p, size_t budget, desched_fn report, void *ud,
                   char *err, size_t errlen);

#endif
