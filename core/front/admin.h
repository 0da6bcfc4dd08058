/*
 * admin.h - operator commands that change targets and workloads through
 * the store: taint (add or remove a taint on a target), drain (cordon the
 * target and unbind every workload on it, so the next run places them
 * elsewhere; kubectl drain where the targets have a cordon field, see
 * drain.h) and uncordon. Like every other write, the change is a
 * format-preserving edit of the file the object came from. deschedule is
 * in the scheduler (it runs scheduling cycles).
 */
#ifndef TRELLIS_ADMIN_H
#define TRELLIS_ADMIN_H

#include <stdio.h>

#include "drain.h"
#include "scheduler.h"

/* spec: "key[=value][:Effect]" adds (replacing a taint with the same key
 * and effect), "key[:Effect]-" removes. Lines saying what changed go to
 * out. Buffered in the store: the caller flushes. 0 or -1 with err. */
int admin_taint(sched *s, profile *p, const char *target, const char *spec, FILE *out, char *err,
                size_t errlen);
/* With the profile's target.cordon_field: kubectl drain (drain.h, -2 when
 * refused after cordoning). Without: taint with the profile's
 * cordon_taint (NoSchedule) and unbind every workload whose binding field
 * names the target (f is not read). */
int admin_drain(sched *s, profile *p, const char *target, const drain_flags *f, FILE *out,
                char *err, size_t errlen);
/* Remove the cordon field, or the cordon taint. */
int admin_uncordon(sched *s, profile *p, const char *target, int dry_run, FILE *out, char *err,
                   size_t errlen);

#endif
