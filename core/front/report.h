/*
 * report.h - `trellis report --html FILE`: the state after a run as one
 * self-contained HTML page (no script, no outside resource): per target
 * a bar of how full it is, where each workload went, and the
 * unschedulable workloads grouped by the reason codes that rejected them.
 * For operators who would rather look than read.
 */
#ifndef TRELLIS_REPORT_H
#define TRELLIS_REPORT_H

#include <stddef.h>

#include "scheduler.h"

/* Write the page of s after sched_run_once (its decisions, with every
 * candidate's verdict when sched_set_explain was on) to file; title names
 * the config and the state. 0, or -1 with err. Ownership of everything is
 * retained by the caller. */
int report_write_html(const char *file, sched *s, const char *title, char *err, size_t errlen);

#endif
