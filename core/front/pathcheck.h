/*
 * pathcheck.h - `trellis validate --state DIR`: the field paths a config
 * names, checked against the objects of a state. A plugin argument that
 * names a field (the key "field" or one ending in "_field") with a path no
 * object of the profile's workload or target kind has is most often a
 * typo (spec.nodeSelectr), and a typo there silently turns a filter off.
 */
#ifndef TRELLIS_PATHCHECK_H
#define TRELLIS_PATHCHECK_H

#include <stdio.h>

#include "scheduler.h"

/* Check every field path the profiles of s and their plugins' arguments
 * name (as written in the config file, whose name is file) against the
 * objects s has loaded; one warning on f per path no object has, naming
 * the file and line. The number of warnings. */
size_t pathcheck_run(const sched *s, const char *file, FILE *f);

#endif
