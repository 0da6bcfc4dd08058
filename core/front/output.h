/*
 * output.h - printing decisions.
 *
 * The JSON form is a stable contract (see trellis(1)):
 *   {"decisions": [{"workload": {"kind", "namespace", "name"}, "profile",
 *     "result": "scheduled" | "unschedulable" | "error", "targets": [names],
 *     "message", "evicted": [ids], "created": [ids],
 *     "candidates": [{"target", "verdict": "feasible" | "rejected", "plugin",
 *                     "code", "reason", "score", "scores": {plugin: n}}]}],
 *    "summary": {"scheduled", "unschedulable", "error"}}
 * with "candidates" only under --explain. The table form is for people.
 */
#ifndef TRELLIS_OUTPUT_H
#define TRELLIS_OUTPUT_H

#include <stdio.h>

#include "scheduler.h"

/* Both return the number of error decisions (the exit status says
 * whether there were any). */
size_t output_json(FILE *f, sched *s);
size_t output_table(FILE *f, sched *s);

#endif
