/*
 * test_metrics.c - the metrics registry: the rendered text parses line by
 * line in the Prometheus text format 0.0.4, counters move, gauges are
 * replaced, histogram buckets are cumulative with _count equal to the +Inf
 * bucket, label values are escaped, nothing is recorded while disabled,
 * and four threads recording at once (through shared caches too) lose
 * nothing. kube-scheduler's families carry its names, labels, help texts
 * and bucket bounds; the process_* values are read from /proc/self.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "procstat.h"
#include "testutil.h"
#include "trellis/plugin.h"

/* 7 process_*, 12 scheduler_*, 10 trellis_* */
#define N_FAMILIES 29

static void setup(void)
{
    metrics_reset();
    metrics_enable(1);
}

static void teardown(void)
{
    metrics_enable(0);
    metrics_reset();
}

/* The value of the sample whose name and labels are exactly `series` (as
 * rendered); NAN when there is none. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, series, n) == 0 && l[n] == ' ')
            return strtod(l + n + 1, NULL);
    return NAN;
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t pl = strlen(prefix);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, pl) == 0)
            n++;
    return n;
}

static int name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* Check one sample line against the text format; returns its metric name
 * (in name, at most 128 bytes). */
static void parse_sample(const char *line, char *name)
{
    const char *p = line;
    size_t n = 0;
    ck_assert_msg(name_char((unsigned char)*p, 1), "bad metric name: %s", line);
    while (name_char((unsigned char)*p, 0) && n < 127)
        name[n++] = *p++;
    name[n] = '\0';
    if (*p == '{') {
        p++;
        while (*p != '}') {
            ck_assert_msg(isalpha((unsigned char)*p) || *p == '_', "bad label name: %s", line);
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            ck_assert_msg(p[0] == '=' && p[1] == '"', "label without =\": %s", line);
            p += 2;
            while (*p != '"') {
                ck_assert_msg(*p && *p != '\n', "unterminated label value: %s", line);
                if (*p == '\\') {
                    ck_assert_msg(p[1] == '\\' || p[1] == '"' || p[1] == 'n', "bad escape in: %s",
                                  line);
                    p++;
                }
                p++;
            }
            p++;
            ck_assert_msg(*p == ',' || *p == '}', "bad label separator: %s", line);
            if (*p == ',')
                p++;
        }
        p++;
    }
    ck_assert_msg(*p == ' ', "no space before the value: %s", line);
    p++;
    char *end;
    strtod(p, &end);
    ck_assert_msg(end != p && (*end == '\n' || *end == '\0'), "bad value: %s", line);
}

/* Every line of text: # HELP and # TYPE once per family, before its
 * samples, families in sorted order, each sample of the current family. */
static void check_format(const char *text)
{
    char family[128] = "", type[32] = "", prev[128] = "", name[128];
    int helped = 0;
    ck_assert_msg(*text && text[strlen(text) - 1] == '\n', "output must end with a newline");
    for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
        char line[4096];
        size_t len = (size_t)(strchr(l, '\n') - l);
        ck_assert_uint_lt(len, sizeof line);
        memcpy(line, l, len);
        line[len] = '\0';
        if (strncmp(line, "# HELP ", 7) == 0) {
            ck_assert_int_eq(sscanf(line + 7, "%127s", family), 1);
            ck_assert_msg(strcmp(prev, family) < 0, "families out of order: %s, %s", prev, family);
            ck_assert_msg(strncmp(family, "trellis_", 8) == 0 ||
                              strncmp(family, "scheduler_", 10) == 0 ||
                              strncmp(family, "process_", 8) == 0,
                          "%s", family);
            ck_assert_uint_gt(strlen(line), 8 + strlen(family)); /* some help text */
            snprintf(prev, sizeof prev, "%s", family);
            helped = 1;
            type[0] = '\0';
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            char tname[128];
            ck_assert_int_eq(sscanf(line + 7, "%127s %31s", tname, type), 2);
            ck_assert_msg(helped && strcmp(tname, family) == 0, "TYPE without HELP: %s", line);
            ck_assert_msg(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
                              strcmp(type, "histogram") == 0,
                          "%s", line);
            if (strcmp(type, "counter") == 0)
                ck_assert_msg(str_endswith(family, "_total"), "counter %s", family);
            helped = 0;
        } else {
            ck_assert_msg(line[0] != '#', "unexpected comment: %s", line);
            ck_assert_msg(type[0], "sample before TYPE: %s", line);
            parse_sample(line, name);
            if (strcmp(type, "histogram") == 0) {
                size_t fl = strlen(family);
                ck_assert_msg(strncmp(name, family, fl) == 0 &&
                                  (strcmp(name + fl, "_bucket") == 0 ||
                                   strcmp(name + fl, "_sum") == 0 ||
                                   strcmp(name + fl, "_count") == 0),
                              "%s in histogram %s", name, family);
            } else {
                ck_assert_str_eq(name, family);
            }
        }
    }
}

/* Every record function at least once. */
static void record_each(void)
{
    metrics_attempt(NULL, "default-scheduler", MR_SCHEDULED, 0.002);
    metrics_attempt(NULL, "default-scheduler", MR_UNSCHEDULABLE, 0.004);
    metrics_extension_point(NULL, "default-scheduler", MP_FILTER, TRELLIS_SUCCESS, 0.0001);
    metrics_plugin(NULL, "taint-toleration", MP_FILTER, TRELLIS_UNSCHEDULABLE, 0.00003);
    metrics_preemption(0);
    metrics_preemption(3);
    metrics_scheduled(0.05, 1);
    const char *pl[] = {"node-affinity"};
    size_t cnt[] = {2};
    metrics_set_unschedulable("default-scheduler", pl, cnt, 1);
    metrics_set_incoming("active", "PodAdd", 7);
    metrics_binding("default-scheduler", "success", 0.01);
    metrics_bind_error("default-scheduler");
    metrics_set_queue("default-scheduler", 3, 2, 1, 4);
    metrics_set_cache(10, 20, 1);
    metrics_store_event("added");
    metrics_event_written("FailedScheduling");
    metrics_set_leader(1);
    metrics_set_ready(0);
    metrics_config_reload(1);
    metrics_config_reload(0);
    metrics_plugin_abandoned("slow-extender", "score");
}

START_TEST(disabled_records_nothing)
{
    metrics_enable(0);
    ck_assert_int_eq(metrics_enabled(), 0);
    record_each();
    char *t = metrics_render();
    check_format(t);
    /* only the build info and the process, which are not recorded, and
     * kube's metrics without labels, at 0 */
    int samples = 0;
    for (const char *l = t; *l; l = strchr(l, '\n') + 1) {
        if (*l == '#' || strncmp(l, "process_", 8) == 0)
            continue;
        if (strncmp(l, "scheduler_preemption_", 21) == 0 ||
            strncmp(l, "scheduler_pod_scheduling_attempts_", 34) == 0) {
            const char *e = strchr(l, '\n');
            ck_assert_msg(e[-1] == '0' && e[-2] == ' ', "%.*s", (int)(e - l), l);
            continue;
        }
        ck_assert_msg(strncmp(l, "trellis_build_info{", 19) == 0, "%s", l);
        samples++;
    }
    ck_assert_int_eq(samples, 1);
    ck_assert_int_eq(count_lines(t, "# TYPE "), N_FAMILIES);
    free(t);
}
END_TEST

START_TEST(everything_renders_in_format)
{
    record_each();
    char *t = metrics_render();
    check_format(t);
    ck_assert_int_eq(count_lines(t, "# HELP "), N_FAMILIES);
    ck_assert_double_eq(sample(t, "trellis_plugin_calls_abandoned_total{extension_point=\"score\","
                                  "plugin=\"slow-extender\"}"),
                        1);
    ck_assert_double_eq(sample(t, "trellis_build_info{version=\"" PACKAGE_VERSION "\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_pending_workloads{profile=\"default-scheduler\","
                                  "queue=\"active\"}"),
                        3);
    ck_assert_double_eq(sample(t, "trellis_pending_workloads{profile=\"default-scheduler\","
                                  "queue=\"unschedulable\"}"),
                        1);
    ck_assert_double_eq(sample(t, "trellis_pending_workloads{profile=\"default-scheduler\","
                                  "queue=\"gated\"}"),
                        4);
    ck_assert_double_eq(sample(t, "scheduler_scheduler_cache_size{type=\"assumed_pods\"}"), 1);
    ck_assert_double_eq(sample(t, "scheduler_scheduler_cache_size{type=\"nodes\"}"), 10);
    ck_assert_double_eq(sample(t, "scheduler_scheduler_cache_size{type=\"pods\"}"), 20);
    ck_assert_double_eq(sample(t, "scheduler_pending_pods{queue=\"gated\"}"), 4);
    ck_assert_double_eq(sample(t, "scheduler_preemption_attempts_total"), 2);
    ck_assert_double_eq(sample(t, "scheduler_preemption_victims_bucket{le=\"4\"}"), 1);
    ck_assert_double_eq(sample(t, "scheduler_preemption_victims_bucket{le=\"2\"}"), 0);
    ck_assert_double_eq(sample(t, "scheduler_preemption_victims_sum"), 3);
    ck_assert_double_eq(
        sample(t,
               "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"1\",le=\"0.08\"}"),
        1);
    ck_assert_double_eq(sample(t, "scheduler_pod_scheduling_attempts_bucket{le=\"1\"}"), 1);
    ck_assert_double_eq(sample(t, "scheduler_unschedulable_pods{plugin=\"node-affinity\","
                                  "profile=\"default-scheduler\"}"),
                        2);
    ck_assert_double_eq(
        sample(t, "scheduler_queue_incoming_pods_total{event=\"PodAdd\",queue=\"active\"}"), 7);
    ck_assert_ptr_nonnull(strstr(t, "# HELP scheduler_schedule_attempts_total [STABLE] "));
    ck_assert_ptr_nonnull(strstr(t, "# HELP scheduler_plugin_execution_duration_seconds [ALPHA] "));
    ck_assert_ptr_nonnull(strstr(t, "# TYPE process_cpu_seconds_total counter\n"));
    ck_assert_double_eq(sample(t, "trellis_leader"), 1);
    ck_assert_double_eq(sample(t, "trellis_ready"), 0);
    ck_assert_double_eq(sample(t, "trellis_config_reloads_total{result=\"failure\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_config_reloads_total{result=\"success\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_store_events_total{type=\"added\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_events_written_total{reason=\"FailedScheduling\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_bind_errors_total{profile=\"default-scheduler\"}"), 1);
    ck_assert_double_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{"
                                  "extension_point=\"Filter\",plugin=\"taint-toleration\","
                                  "status=\"Unschedulable\"}"),
                        1);
    ck_assert_double_eq(sample(t, "scheduler_framework_extension_point_duration_seconds_bucket{"
                                  "extension_point=\"Filter\",profile=\"default-scheduler\","
                                  "status=\"Success\",le=\"0.0001\"}"),
                        1);
    /* series of a family sorted by label values */
    const char *a = strstr(t, "scheduler_schedule_attempts_total{profile=\"default-scheduler\","
                              "result=\"scheduled\"}");
    const char *b = strstr(t, "scheduler_schedule_attempts_total{profile=\"default-scheduler\","
                              "result=\"unschedulable\"}");
    ck_assert(a && b && a < b);
    /* deterministic, but for the process_* values, which come first */
    char *again = metrics_render();
    ck_assert_int_eq(strcmp(strstr(t, "# HELP scheduler_"), strstr(again, "# HELP scheduler_")), 0);
    free(again);
    free(t);
}
END_TEST

START_TEST(counters_move_gauges_replace)
{
    char *t = metrics_render();
    ck_assert(
        isnan(sample(t, "scheduler_schedule_attempts_total{profile=\"p\",result=\"error\"}")));
    free(t);
    metrics_attempt(NULL, "p", MR_ERROR, 0.1);
    t = metrics_render();
    ck_assert_double_eq(
        sample(t, "scheduler_schedule_attempts_total{profile=\"p\",result=\"error\"}"), 1);
    free(t);
    metrics_attempt(NULL, "p", MR_ERROR, 0.1);
    metrics_attempt(NULL, NULL, MR_ERROR, 0.1);
    metrics_set_queue("p", 5, 0, 0, 0);
    metrics_set_queue("p", 2, 0, 0, 0);
    t = metrics_render();
    ck_assert_double_eq(
        sample(t, "scheduler_schedule_attempts_total{profile=\"p\",result=\"error\"}"), 2);
    ck_assert_double_eq(
        sample(t, "scheduler_schedule_attempts_total{profile=\"\",result=\"error\"}"), 1);
    ck_assert_double_eq(sample(t, "trellis_pending_workloads{profile=\"p\",queue=\"active\"}"), 2);
    free(t);
    metrics_reset();
    t = metrics_render();
    ck_assert(
        isnan(sample(t, "scheduler_schedule_attempts_total{profile=\"p\",result=\"error\"}")));
    free(t);
}
END_TEST

START_TEST(histogram_buckets_cumulative)
{
    const double obs[] = {0.000005, 0.00001, 0.001, 0.5, 10, 0.001};
    double sum = 0;
    for (size_t i = 0; i < sizeof obs / sizeof *obs; i++) {
        metrics_binding("p", "success", obs[i]);
        sum += obs[i];
    }
    char *t = metrics_render();
    check_format(t);
    const char *prefix = "trellis_binding_duration_seconds_bucket{profile=\"p\",result=\"success\","
                         "le=\"";
    double prev = -1, last = -1;
    int buckets = 0, inf_seen = 0;
    double prev_le = 0;
    for (const char *l = strstr(t, prefix); l && strncmp(l, prefix, strlen(prefix)) == 0;
         l = strchr(l, '\n') + 1) {
        const char *le = l + strlen(prefix);
        double v = strtod(strchr(le, ' ') + 1, NULL);
        ck_assert_msg(v >= prev, "bucket counts must not decrease: %.*s",
                      (int)(strchr(l, '\n') - l), l);
        prev = v;
        if (strncmp(le, "+Inf\"", 5) == 0) {
            inf_seen = 1;
            last = v;
        } else {
            double bound = strtod(le, NULL);
            ck_assert(bound > prev_le);
            prev_le = bound;
            ck_assert(!inf_seen);
        }
        buckets++;
    }
    ck_assert_int_ge(buckets, 16);
    ck_assert(inf_seen);
    ck_assert_double_eq(last, 6);
    ck_assert_double_eq(sample(t, "trellis_binding_duration_seconds_bucket{profile=\"p\","
                                  "result=\"success\",le=\"1e-05\"}"),
                        2); /* le is inclusive */
    ck_assert_double_eq(sample(t, "trellis_binding_duration_seconds_count{profile=\"p\","
                                  "result=\"success\"}"),
                        last);
    double s = sample(t, "trellis_binding_duration_seconds_sum{profile=\"p\",result=\"success\"}");
    ck_assert_double_eq_tol(s, sum, 1e-9);
    /* 10 s is past the last finite bucket: only +Inf counts it */
    ck_assert_double_eq(sample(t, "trellis_binding_duration_seconds_bucket{profile=\"p\","
                                  "result=\"success\",le=\"5.24288\"}"),
                        5);
    free(t);
}
END_TEST

START_TEST(label_values_escaped)
{
    metrics_event_written("a\"b\\c\nd");
    metrics_store_event("plain");
    char *t = metrics_render();
    check_format(t);
    ck_assert_double_eq(sample(t, "trellis_events_written_total{reason=\"a\\\"b\\\\c\\nd\"}"), 1);
    ck_assert_ptr_null(strstr(t, "c\nd"));
    free(t);
}
END_TEST

#define THREADS 4
#define ROUNDS 10000

/* the caches every thread shares, as worker threads share a plugin's */
static metrics_cache *shared_profile, *shared_plugin;

static void *hammer(void *arg)
{
    const char *profile = arg;
    for (int i = 0; i < ROUNDS; i++) {
        metrics_attempt(shared_profile, "shared", MR_SCHEDULED, 0.0001);
        metrics_attempt(NULL, profile, MR_SCHEDULED, 0.0001);
        metrics_plugin(shared_plugin, "x", MP_SCORE, TRELLIS_SUCCESS, 0.00002);
        metrics_store_event("modified");
        if (i % 1000 == 0)
            free(metrics_render());
    }
    return NULL;
}

START_TEST(concurrent_totals_exact)
{
    pthread_t th[THREADS];
    char names[THREADS][16];
    shared_profile = metrics_cache_new();
    shared_plugin = metrics_cache_new();
    for (int i = 0; i < THREADS; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        ck_assert_int_eq(pthread_create(&th[i], NULL, hammer, names[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    char *t = metrics_render();
    check_format(t);
    ck_assert_double_eq(
        sample(t, "scheduler_schedule_attempts_total{profile=\"shared\",result=\"scheduled\"}"),
        THREADS * ROUNDS);
    ck_assert_double_eq(sample(t, "scheduler_scheduling_attempt_duration_seconds_count{profile="
                                  "\"shared\",result=\"scheduled\"}"),
                        THREADS * ROUNDS);
    ck_assert_double_eq(sample(t, "scheduler_scheduling_attempt_duration_seconds_bucket{profile="
                                  "\"shared\",result=\"scheduled\",le=\"+Inf\"}"),
                        THREADS * ROUNDS);
    for (int i = 0; i < THREADS; i++) {
        char s[128];
        snprintf(s, sizeof s,
                 "scheduler_schedule_attempts_total{profile=\"%s\",result=\"scheduled\"}",
                 names[i]);
        ck_assert_double_eq(sample(t, s), ROUNDS);
    }
    ck_assert_double_eq(sample(t, "scheduler_plugin_execution_duration_seconds_count{"
                                  "extension_point=\"Score\",plugin=\"x\",status=\"Success\"}"),
                        THREADS * ROUNDS);
    metrics_cache_free(shared_profile);
    metrics_cache_free(shared_plugin);
    ck_assert_double_eq(sample(t, "trellis_store_events_total{type=\"modified\"}"),
                        THREADS * ROUNDS);
    free(t);
}
END_TEST

/* The le labels read exactly as kube-scheduler's (the Go client's
 * ExponentialBuckets, its float formatting). */
START_TEST(kube_bucket_bounds)
{
    metrics_plugin(NULL, "p", MP_FILTER, TRELLIS_SUCCESS, 1);
    metrics_attempt(NULL, "p", MR_SCHEDULED, 1);
    metrics_scheduled(1, 20);
    metrics_extension_point(NULL, "p", MP_BIND, TRELLIS_ERROR, 1);
    char *t = metrics_render();
    check_format(t);
    const char *want[] = {
        "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
        "plugin=\"p\",status=\"Success\",le=\"1e-05\"}",
        "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
        "plugin=\"p\",status=\"Success\",le=\"1.5000000000000002e-05\"}",
        "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
        "plugin=\"p\",status=\"Success\",le=\"2.2500000000000005e-05\"}",
        "scheduler_plugin_execution_duration_seconds_bucket{extension_point=\"Filter\","
        "plugin=\"p\",status=\"Success\",le=\"0.02216837820053101\"}",
        "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"p\",result=\"scheduled\","
        "le=\"0.001\"}",
        "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"p\",result=\"scheduled\","
        "le=\"16.384\"}",
        "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"15+\",le=\"0.01\"}",
        "scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts=\"15+\",le=\"5242.88\"}",
        "scheduler_pod_scheduling_attempts_bucket{le=\"16\"}",
        "scheduler_framework_extension_point_duration_seconds_bucket{extension_point=\"Bind\","
        "profile=\"p\",status=\"Error\",le=\"0.2048\"}",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(!isnan(sample(t, want[i])), "missing %s", want[i]);
    /* 20 finite buckets and +Inf for plugins, 15 for attempts, 12 points */
    ck_assert_int_eq(count_lines(t, "scheduler_plugin_execution_duration_seconds_bucket{"), 21);
    ck_assert_int_eq(count_lines(t, "scheduler_scheduling_attempt_duration_seconds_bucket{"), 16);
    ck_assert_int_eq(count_lines(t, "scheduler_framework_extension_point_duration_seconds_bucket{"),
                     13);
    /* kube's 1 to 64 victims, there at 0 before any preemption */
    ck_assert_int_eq(count_lines(t, "scheduler_preemption_victims_bucket{"), 8);
    ck_assert_double_eq(sample(t, "scheduler_preemption_victims_bucket{le=\"64\"}"), 0);
    ck_assert_double_eq(sample(t, "scheduler_preemption_victims_count"), 0);
    free(t);
}
END_TEST

/* kube's 10 percent, from a fixed sequence; nothing while disabled. */
START_TEST(plugin_sampling)
{
    int n = 0;
    for (int i = 0; i < 10000; i++)
        n += metrics_sample();
    ck_assert_int_gt(n, 900);
    ck_assert_int_lt(n, 1100);
    metrics_enable(0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(metrics_sample(), 0);
}
END_TEST

/* A cache resolved before a reset records into the new series after it. */
START_TEST(cache_survives_reset)
{
    metrics_cache *mc = metrics_cache_new();
    metrics_attempt(mc, "p", MR_ERROR, 0.1);
    metrics_reset();
    metrics_attempt(mc, "p", MR_ERROR, 0.1);
    metrics_attempt(mc, "p", MR_ERROR, 0.1);
    char *t = metrics_render();
    ck_assert_double_eq(
        sample(t, "scheduler_schedule_attempts_total{profile=\"p\",result=\"error\"}"), 2);
    free(t);
    metrics_cache_free(mc);
}
END_TEST

/* The process_* values are there and plausible: this process started in
 * the past, holds memory, has descriptors open below its limit. */
START_TEST(process_metrics)
{
    char *t = metrics_render();
    check_format(t);
    ck_assert_double_ge(sample(t, "process_cpu_seconds_total"), 0);
    ck_assert_double_gt(sample(t, "process_resident_memory_bytes"), 1024 * 1024);
    ck_assert_double_ge(sample(t, "process_virtual_memory_bytes"),
                        sample(t, "process_resident_memory_bytes"));
    double open = sample(t, "process_open_fds"), max = sample(t, "process_max_fds");
    ck_assert_double_ge(open, 3);
    ck_assert_double_gt(max, open);
    double start = sample(t, "process_start_time_seconds"), now = (double)time(NULL);
    ck_assert_double_gt(start, now - 3600);
    ck_assert_double_le(start, now + 1);
    ck_assert(!isnan(sample(t, "process_virtual_memory_max_bytes")));
    free(t);
}
END_TEST

/* /proc/<pid>/stat: the name may hold spaces and parentheses; the fields
 * read are unsigned decimals; a short or strange line is refused. */
START_TEST(procstat_parses_stat)
{
    procstat ps;
    memset(&ps, 0, sizeof ps);
    const char *line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 37 0 0 20 "
                       "0 9 0 123456 2147483648 5120 18446744073709551615 1 1 0 0\n";
    ck_assert_int_eq(procstat_parse_stat(line, 100, 4096, 1000, &ps), 0);
    ck_assert_double_eq_tol(ps.cpu_seconds, 1.87, 1e-9);           /* (150 + 37) / 100 */
    ck_assert_double_eq_tol(ps.start_time_seconds, 2234.56, 1e-9); /* 1000 + 123456 / 100 */
    ck_assert_double_eq(ps.virtual_bytes, 2147483648.0);
    ck_assert_double_eq(ps.resident_bytes, 5120.0 * 4096);
    const char *bad[] = {
        "",
        "4242 name S 1",
        "4242 (x) S 1 2 3\n",
        "4242 (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 -150 37 0 0 20 0 9 0 123456 1 1\n",
        "4242 (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 37 0 0 20 0 9 0 123456 1\n",
        "4242 (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 37 0 0 20 0 9 0 123456 1 "
        "99999999999999999999999\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        procstat before = ps;
        ck_assert_msg(procstat_parse_stat(bad[i], 100, 4096, 1000, &ps) == -1, "%s", bad[i]);
        ck_assert(memcmp(&before, &ps, sizeof ps) == 0);
    }
    ck_assert_int_eq(procstat_parse_stat(line, 0, 4096, 1000, &ps), -1);
}
END_TEST

START_TEST(long_label_values)
{
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    metrics_bind_error(big);
    metrics_bind_error(big);
    char *t = metrics_render();
    check_format(t);
    char *want = xasprintf("trellis_bind_errors_total{profile=\"%s\"}", big);
    ck_assert_double_eq(sample(t, want), 2);
    free(want);
    free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, disabled_records_nothing);
    tcase_add_test(tc, everything_renders_in_format);
    tcase_add_test(tc, counters_move_gauges_replace);
    tcase_add_test(tc, histogram_buckets_cumulative);
    tcase_add_test(tc, label_values_escaped);
    tcase_add_test(tc, concurrent_totals_exact);
    tcase_add_test(tc, long_label_values);
    tcase_add_test(tc, kube_bucket_bounds);
    tcase_add_test(tc, plugin_sampling);
    tcase_add_test(tc, cache_survives_reset);
    tcase_add_test(tc, process_metrics);
    tcase_add_test(tc, procstat_parses_stat);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
