/*
 * metrics.h - the process-wide Prometheus metrics registry of `trellis run`.
 *
 * The families carry kube-scheduler's names, labels, help texts (with its
 * stability level) and bucket layouts where kube-scheduler has the same
 * measurement (scheduler_*, for every profile: they are the generic
 * scheduler names, and a profile's name is its `profile` label), the
 * Prometheus client's process_* metrics (read from /proc/self when
 * rendered, procstat.h), and trellis_* for what kube-scheduler has no
 * counterpart of (bindings, the store, Events, leadership, reloads, the
 * queues per profile).
 *
 * The scheduler records here; the HTTP endpoint (http.c) serves
 * metrics_render() at /metrics. Recording is thread-safe and costs nothing
 * until metrics_enable(1): the one-shot `schedule` command never enables
 * it, so every record function returns at once there. A series' numbers
 * are atomics: once a caller's metrics_cache holds the series, recording
 * into it is a few atomic adds, without a lock or an allocation (the
 * scheduling cycle's hot path: attempts, extension points, plugins). The
 * other record functions take one mutex and find their series by its
 * label values; once the series exists they allocate nothing either.
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
/* Free every series (tests, reload). The enabled flag is kept. No record
 * function may run at the same time; caches (below) re-resolve after it. */
void metrics_reset(void);

/* kube-scheduler measures plugin durations in a sampled share of its
 * scheduling cycles (pluginMetricsSamplePercent, 10): 1 for that share
 * of the calls, from a deterministic sequence, 0 always while recording
 * is off. */
#define METRICS_PLUGIN_SAMPLE_PERCENT 10
int metrics_sample(void);
/* The share metrics_sample draws, 0..100 (the config's
 * http.plugin_metrics_sample_percent; METRICS_PLUGIN_SAMPLE_PERCENT until
 * set). */
void metrics_set_sample_percent(int percent);

/* Extension points, labelled as kube-scheduler labels them (PreFilter,
 * Filter, ...; trellis's own points in the same style). */
enum metrics_point {
    MP_PRE_ENQUEUE,
    MP_PRE_FILTER,
    MP_FILTER,
    MP_POST_FILTER,
    MP_PRE_SCORE,
    MP_SCORE,
    MP_NORMALIZE,
    MP_RESERVE,
    MP_UNRESERVE,
    MP_PERMIT,
    MP_PRE_BIND,
    MP_BIND,
    MP_POST_BIND,
    MP_EVICTION_CHECK,
    MP_TARGET_LOST,
    MP_FINALIZE,
    MP_DECIDED,
    MP_FILTER_FEASIBLE,
    MP_COUNT
};
/* The status label of a TRELLIS_* return code (Success, Unschedulable,
 * UnschedulableAndUnresolvable, Error, Skip, Wait: kube's status codes);
 * an unknown code is Error. */
int metrics_status_of(int rc);
/* A scheduling attempt's result. */
enum metrics_result { MR_SCHEDULED, MR_UNSCHEDULABLE, MR_ERROR };

/* The series one caller records into, resolved once per label set: one
 * per plugin instance and one per profile. Its cells are filled on first
 * use (under the lock) and read with atomic loads afterwards, from any
 * thread. Ownership of the cache transfers to the caller; free it with
 * metrics_cache_free (NULL is fine) once no thread records into it. */
typedef struct metrics_cache metrics_cache;
metrics_cache *metrics_cache_new(void);
void metrics_cache_free(metrics_cache *mc);

/* One scheduling attempt of one workload: counts it in
 * scheduler_schedule_attempts_total and observes its duration. mc: the
 * profile's cache (NULL: looked up under the lock). */
void metrics_attempt(metrics_cache *mc, const char *profile, int result, double seconds);
/* One extension point of one cycle, status from metrics_status_of. */
void metrics_extension_point(metrics_cache *mc, const char *profile, int point, int status,
                             double seconds);
/* One plugin's call at one extension point (plugin: its instance name);
 * callers record the sampled calls only (metrics_sample). mc: the
 * plugin's cache. */
void metrics_plugin(metrics_cache *mc, const char *plugin, int point, int status, double seconds);
/* One call of an ignorable plugin cut short at its deadline. */
void metrics_plugin_abandoned(const char *plugin, const char *point);
/* One run of a profile's post-filter plugins (kube's preemption
 * attempt), and the workloads it evicted when it made room (victims > 0
 * observes scheduler_preemption_victims). */
void metrics_preemption(size_t victims);
/* A workload bound: seconds since it first entered the active queue
 * (scheduler_pod_scheduling_sli_duration_seconds) and the attempts it
 * took, this one included (scheduler_pod_scheduling_attempts). */
void metrics_scheduled(double seconds, unsigned attempts);
/* One binding cycle: result "success" or "error". */
void metrics_binding(const char *profile, const char *result, double seconds);
void metrics_bind_error(const char *profile);
/* Workloads waiting in each queue of a profile (gauges, replaced); gated:
 * those a pre_enqueue plugin holds back. scheduler_pending_pods{queue} is
 * the sum over the profiles. */
void metrics_set_queue(const char *profile, size_t active, size_t backoff, size_t unschedulable,
                       size_t gated);
/* The workloads of a profile's unschedulable queue that plugin[i]
 * rejected, count[i] (gauges, replaced), n plugins. */
void metrics_set_unschedulable(const char *profile, const char *const *plugin, const size_t *count,
                               size_t n);
/* Queue entries: the running total of workloads that entered queue
 * ("active", "backoff", "unschedulable", "gated") for event, over every
 * profile (replaced: the caller keeps the totals). */
void metrics_set_incoming(const char *queue, const char *event, double total);
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
 * series sorted by label values, so the output is deterministic (but for
 * the process_* values). process_* and trellis_build_info are always
 * there. Ownership of the malloc'd text transfers to the caller. */
char *metrics_render(void);

#endif
