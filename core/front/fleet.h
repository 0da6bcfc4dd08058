/*
 * fleet.h - `trellis targets`: every target of a profile with the
 * workloads placed on it, its taints and cordon (the profile's operator
 * group), its capacity (operator.capacity_field), what is used of each
 * counter the plugins named and what it can hold, and whether a plugin
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

/* The view itself, for other pages of it (report.c): the targets of one
 * profile in name order, and what is placed on each. */
typedef struct fleet_view fleet_view;
/* Built from the objects s loaded; freed with fleet_free. */
fleet_view *fleet_build(const sched *s, const profile *p);
void fleet_free(fleet_view *v);
/* Place w on the target with key `target` too (a decision of a run that
 * did not write it); 0, or -1 when there is no such target. */
int fleet_place(fleet_view *v, const char *target, const trellis_object *w);
/* Take the workload kind/namespace/name off whatever target it is on
 * (an eviction of a run that did not write it). */
void fleet_unplace(fleet_view *v, const char *kind, const char *ns, const char *name);
size_t fleet_count(const fleet_view *v);
const trellis_object *fleet_target(const fleet_view *v, size_t i);
size_t fleet_placed_count(const fleet_view *v, size_t i);
const trellis_object *fleet_placed_at(const fleet_view *v, size_t i, size_t k);
/* The counters the profile's plugins named (name_counters), each name
 * once: counter c's name; on target i, what it holds of it (its placed
 * workloads' amounts, as the plugin counts them) and what it can hold
 * (-1: no limit known), and both as text:
 * "1500m/4 (37%)", "3/0", or "2" alone without a limit, into buf. The
 * text returns the share in percent rounded down (kubectl describe
 * nodes), or -1 when there is none. */
size_t fleet_counter_count(const fleet_view *v);
const char *fleet_counter_name(const fleet_view *v, size_t c);
int64_t fleet_counter_used(fleet_view *v, size_t i, size_t c);
int64_t fleet_counter_allocatable(fleet_view *v, size_t i, size_t c);
int fleet_counter_text(fleet_view *v, size_t i, size_t c, char *buf, size_t len);
/* Its operator.capacity_field, or -1; whether the cordon taint is on it. */
int64_t fleet_capacity(const fleet_view *v, size_t i);
int fleet_cordoned(const fleet_view *v, size_t i);

#endif
