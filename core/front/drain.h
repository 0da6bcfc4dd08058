/*
 * drain.h - `trellis drain` and `uncordon` as kubectl does them, for a
 * profile whose targets have a cordon field (target.cordon_field, a Node's
 * spec.unschedulable): the field set to true and removed again, and
 * kubectl drain's filters over the workloads on the target (those of a
 * daemon owner kind stay with --ignore-daemonsets, mirror workloads stay,
 * local storage needs --delete-emptydir-data, workloads without a
 * controller need --force), the disruption budgets an eviction must not
 * overdraw (unless --disable-eviction), finished workloads left alone.
 * The kinds, the annotation and the fields are the profile's operator
 * settings, with kubectl's values as defaults. admin.c calls it; the
 * profile without a cordon field keeps the cordon taint.
 */
#ifndef TRELLIS_DRAIN_H
#define TRELLIS_DRAIN_H

#include <stdio.h>

#include "scheduler.h"

/* kubectl drain's flags. */
typedef struct drain_flags {
    int ignore_daemonsets;    /* --ignore-daemonsets */
    int force;                /* --force: workloads without a controller too */
    int delete_emptydir_data; /* --delete-emptydir-data */
    int disable_eviction;     /* --disable-eviction: no budget is asked */
    int dry_run;              /* --dry-run: the lines say so (the store writes nothing) */
} drain_flags;

/* Drain target t (of p's target kind). Lines as kubectl prints them go to
 * out (NULL: none). 0 when drained; -1 with err when nothing was queued;
 * -2 with err when the drain was refused after the cordon was queued
 * (kubectl leaves the node cordoned: the caller flushes, then fails).
 * Writes are buffered in the store. Ownership of everything is retained
 * by the caller. */
int drain_target(sched *s, profile *p, const trellis_object *t, const drain_flags *f, FILE *out,
                 char *err, size_t errlen);

/* Remove the cordon field of t when it is true ("already uncordoned"
 * otherwise: nothing is written). 0, or -1 with err. */
int drain_uncordon(sched *s, profile *p, const trellis_object *t, int dry_run, FILE *out, char *err,
                   size_t errlen);

#endif
