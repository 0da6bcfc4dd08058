/*
 * metrics.h - the process-wide Prometheus metrics registry of `trellis run`.
 *
 * The scheduler records attempts, extension points, plugin calls, bindings,
 * queue and cache sizes, store events and leadership here; the HTTP
 * endpoint (http.c) serves metrics_render() at /metrics. Recording is
 * thread-safe (one mutex; the main thread, the binding thread and the HTTP
 * thread all call in) and costs nothing until metrics_enable(1): the
 * one-shot `schedule` command never enables it, so every record function
 * returns at once there without taking the lock. Once a series (a family
 * and one set of label values) exists, recording into it allocates
 * nothing.
 *
 * String arguments are label values: they are copied when a series is
 * created, so ownership is retained by the caller. NULL stands for "".
 * Durations are in seconds (base units, as Prometheus wants them).
 */
#ifndef TRELLIS_METRICS_H
#define TRELLIS_METRICS_H

#include <stddef.h>

/* Turn recording on (1) or off (0). Off by default. Turning it off keeps
 * what was recorded; metrics_reset() drops it. */
void metrics_enable(int on);
/* 1 when recording is on: lets a caller skip reading the clock. */
int metrics_enabled(void);
/* Free every series (tests, reload). The enabled flag is kept. */
void metrics_reset(void);

/* One scheduling attempt of one workload: result is "scheduled",
 * "unschedulable" or "error". Counts it and observes its duration. */
void metrics_attempt(const char *profile, const char *result, double seconds);
/* One extension point of one cycle: point is "pre_filter", "filter",
 * "post_filter", "pre_score", "score", "reserve", "permit", "pre_bind",
 * "bind" or "post_bind"; status "success", "unschedulable" or "error". */
void metrics_extension_point(const char *profile, const char *point, const char *status,
                             double seconds);
/* One plugin's part in one extension point (plugin: its instance name). */
void metrics_plugin(const char *plugin, const char *point, const char *status, double seconds);
/* One call of an ignorable plugin cut short at its deadline. */
void metrics_plugin_abandoned(const char *plugin, const char *point);
/* One binding cycle: result "success" or "error". */
void metrics_binding(const char *profile, const char *result, double seconds);
void metrics_bind_error(const char *profile);
/* Workloads waiting in each queue of a profile (gauges, replaced); gated:
 * those a pre_enqueue plugin holds back. */
void metrics_set_queue(const char *profile, size_t active, size_t backoff, size_t unschedulable,
                       size_t gated);
/* What the cache holds (gauges, replaced). */
void metrics_set_cache(size_t targets, size_t workloads, size_t assumed);
/* One change seen from the store: "added", "modified" or "deleted". */
void metrics_store_event(const char *type);
/* One Event object written, by its reason ("FailedScheduling", ...). */
void metrics_event_written(const char *reason);
/* 1 while this process holds the state lock, 0 on standby. */
void metrics_set_leader(int active);
void metrics_set_ready(int ready);
/* One configuration reload: ok 1 counts "success", 0 "failure". */
void metrics_config_reload(int ok);

/* What the service's periodic summary line reports, summed over the
 * profiles: the queues' sizes (the last metrics_set_queue), scheduling
 * attempts by result and binding cycles that succeeded, since start. */
typedef struct metrics_totals {
    double active, backoff, unschedulable, gated;
    double scheduled, unschedulable_attempts, errors, bound;
} metrics_totals;
void metrics_get_totals(metrics_totals *t);

/* Everything recorded, in the Prometheus text exposition format 0.0.4:
 * every family with its # HELP and # TYPE lines, families sorted by name,
 * series sorted by label values, so the output is deterministic.
 * trellis_build_info is always there. Ownership of the malloc'd text
 * transfers to the caller. */
char *metrics_render(void);

#endif
