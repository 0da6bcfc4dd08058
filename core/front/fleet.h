/*
 * fleet.h - `trellis targets`: every target of a profile with the
 * workloads placed on it, its taints and cordon (the profile's operator
 * group), its capacity (operator.capacity_field) and whether a plugin
 * refused it, as a table or JSON. What `kubectl describe nodes` shows of
 * a Node's assignments, for any profile: the host knows placements and the
 * operator group, nothing about a kind.
 */
#ifndef TRELLIS_FLEET_H
#define TRELLIS_FLEET_H

#include <stdio.h>

#include "profile.h"
#include "scheduler.h"

/* The targets of profile p (NULL: every profile of s) of the state s has
 * loaded, as JSON (json 1) or a table. Ownership of everything is retained
 * by the caller. */
void fleet_print(FILE *f, const sched *s, const profile *p, int json);

#endif
