/*
 * metrics.c - see metrics.h. The families are a fixed table, sorted by
 * name; each holds its series in a hash map keyed by the label values
 * (length-prefixed, so no value can forge another's key). The key of a
 * lookup is built in a stack buffer, so recording into an existing series
 * allocates nothing. Histograms keep per-bucket counts and make them
 * cumulative only when rendered.
 */
#include "config.h"

#include "metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "util.h"

#define MAX_LABELS 3

/* kube-scheduler's exponential buckets: 10us, doubling, up to ~5.2s. */
static const double bounds[] = {0.00001, 0.00002, 0.00004, 0.00008, 0.00016, 0.00032, 0.00064,
                                0.00128, 0.00256, 0.00512, 0.01024, 0.02048, 0.04096, 0.08192,
                                0.16384, 0.32768, 0.65536, 1.31072, 2.62144, 5.24288};
#define NBUCKETS (sizeof bounds / sizeof *bounds)

enum kind { COUNTER, GAUGE, HISTOGRAM };

typedef struct series {
    char *key; /* the hash map's key (owned here) */
    char *values[MAX_LABELS];
    int n;        /* label values */
    double value; /* counters and gauges */
    double sum;   /* histograms: */
    uint64_t count;
    uint64_t buckets[NBUCKETS]; /* per bucket, not cumulative; +Inf is count */
} series;

typedef struct family {
    const char *name, *help;
    enum kind kind;
    const char *labels[MAX_LABELS + 1]; /* NULL-terminated */
    hmap series;
} family;

/* Indexes into families[]; the table itself is sorted by name. */
enum {
    F_BIND_ERRORS,
    F_BINDING_DURATION,
    F_BUILD_INFO,
    F_CACHE_SIZE,
    F_CONFIG_RELOADS,
    F_EVENTS_WRITTEN,
    F_EXTENSION_POINT_DURATION,
    F_LEADER,
    F_PENDING,
    F_PLUGIN_ABANDONED,
    F_PLUGIN_DURATION,
    F_READY,
    F_ATTEMPTS,
    F_ATTEMPT_DURATION,
    F_STORE_EVENTS,
    F_COUNT
};

#define FAMILY(id, n, k, h, ...) [id] = {.name = n, .kind = k, .help = h, .labels = {__VA_ARGS__}}
static family families[F_COUNT] = {
    FAMILY(F_BIND_ERRORS, "trellis_bind_errors_total", COUNTER,
           "Binding cycles that failed, by profile.", "profile"),
    FAMILY(F_BINDING_DURATION, "trellis_binding_duration_seconds", HISTOGRAM,
           "Duration of the binding cycle (pre-bind, bind, post-bind).", "profile", "result"),
    FAMILY(F_BUILD_INFO, "trellis_build_info", GAUGE, "The version of trellis; always 1.",
           "version"),
    FAMILY(F_CACHE_SIZE, "trellis_cache_size", GAUGE, "Objects in the scheduler cache, by type.",
           "type"),
    FAMILY(F_CONFIG_RELOADS, "trellis_config_reloads_total", COUNTER,
           "Configuration reloads, by result.", "result"),
    FAMILY(F_EVENTS_WRITTEN, "trellis_events_written_total", COUNTER,
           "Event objects written, by reason.", "reason"),
    FAMILY(F_EXTENSION_POINT_DURATION, "trellis_framework_extension_point_duration_seconds",
           HISTOGRAM, "Duration of one extension point of one scheduling cycle.", "profile",
           "extension_point", "status"),
    FAMILY(F_LEADER, "trellis_leader", GAUGE,
           "1 while this process holds the state lock, 0 on standby.", NULL),
    FAMILY(F_PENDING, "trellis_pending_workloads", GAUGE,
           "Workloads waiting to be scheduled, by queue (active, backoff, unschedulable; gated: "
           "held back by a pre_enqueue plugin).",
           "profile", "queue"),
    FAMILY(F_PLUGIN_ABANDONED, "trellis_plugin_calls_abandoned_total", COUNTER,
           "Calls of an ignorable plugin cut short at their deadline; the plugin is skipped "
           "for the rest of that cycle.",
           "plugin", "extension_point"),
    FAMILY(F_PLUGIN_DURATION, "trellis_plugin_execution_duration_seconds", HISTOGRAM,
           "Duration of one plugin at one extension point.", "plugin", "extension_point", "status"),
    FAMILY(F_READY, "trellis_ready", GAUGE, "1 when the scheduler is ready to schedule, else 0.",
           NULL),
    FAMILY(F_ATTEMPTS, "trellis_schedule_attempts_total", COUNTER,
           "Scheduling attempts, by result.", "profile", "result"),
    FAMILY(F_ATTEMPT_DURATION, "trellis_scheduling_attempt_duration_seconds", HISTOGRAM,
           "Duration of one scheduling attempt, from pop to decision.", "profile", "result"),
    FAMILY(F_STORE_EVENTS, "trellis_store_events_total", COUNTER,
           "Object changes seen from the store.", "type"),
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int enabled;

void metrics_enable(int on)
{
    atomic_store_explicit(&enabled, on ? 1 : 0, memory_order_relaxed);
}

int metrics_enabled(void)
{
    return atomic_load_explicit(&enabled, memory_order_relaxed);
}

static int nlabels(const family *f)
{
    int n = 0;
    while (f->labels[n])
        n++;
    return n;
}

/* "<len>:<value>" for each value, "" for none; returns the length it
 * needs. */
static size_t build_key(char *buf, size_t cap, const char *const *v, int n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%zu:%s",
                         strlen(v[i]), v[i]);
        len += (size_t)w;
    }
    return len;
}

/* The series of f with values v, created when missing. Called locked. */
static series *lookup(family *f, const char *const *v)
{
    int n = nlabels(f);
    char stack[256], *key = stack;
    size_t need = build_key(stack, sizeof stack, v, n);
    if (need >= sizeof stack) { /* long label values: rare */
        key = xmalloc(need + 1);
        build_key(key, need + 1, v, n);
    }
    series *s = hmap_get(&f->series, key);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        s->key = key == stack ? xstrdup(key) : key;
        s->n = n;
        for (int i = 0; i < n; i++)
            s->values[i] = xstrdup(v[i]);
        hmap_put(&f->series, s->key, s);
    } else if (key != stack) {
        free(key);
    }
    return s;
}

static void observe_locked(series *s, double seconds)
{
    if (!(seconds >= 0)) /* negative or NaN: a clock hiccup, not data */
        seconds = 0;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (seconds <= bounds[i]) {
            s->buckets[i]++;
            break;
        }
    s->sum += seconds;
    s->count++;
}

enum op { ADD, SET, OBSERVE };

/* Record into the series of family fam with up to three label values.
 * Called locked. */
static void update(int fam, enum op op, double x, const char *a, const char *b, const char *c)
{
    const char *v[MAX_LABELS] = {a ? a : "", b ? b : "", c ? c : ""};
    series *s = lookup(&families[fam], v);
    if (op == ADD)
        s->value += x;
    else if (op == SET)
        s->value = x;
    else
        observe_locked(s, x);
}

static void record(int fam, enum op op, double x, const char *a, const char *b, const char *c)
{
    pthread_mutex_lock(&mu);
    update(fam, op, x, a, b, c);
    pthread_mutex_unlock(&mu);
}

void metrics_attempt(const char *profile, const char *result, double seconds)
{
    if (!metrics_enabled())
        return;
    pthread_mutex_lock(&mu);
    update(F_ATTEMPTS, ADD, 1, profile, result, NULL);
    update(F_ATTEMPT_DURATION, OBSERVE, seconds, profile, result, NULL);
    pthread_mutex_unlock(&mu);
}

void metrics_extension_point(const char *profile, const char *point, const char *status,
                             double seconds)
{
    if (metrics_enabled())
        record(F_EXTENSION_POINT_DURATION, OBSERVE, seconds, profile, point, status);
}

void metrics_plugin(const char *plugin, const char *point, const char *status, double seconds)
{
    if (metrics_enabled())
        record(F_PLUGIN_DURATION, OBSERVE, seconds, plugin, point, status);
}

void metrics_binding(const char *profile, const char *result, double seconds)
{
    if (metrics_enabled())
        record(F_BINDING_DURATION, OBSERVE, seconds, profile, result, NULL);
}

void metrics_bind_error(const char *profile)
{
    if (metrics_enabled())
        record(F_BIND_ERRORS, ADD, 1, profile, NULL, NULL);
}

void metrics_set_queue(const char *profile, size_t active, size_t backoff, size_t unschedulable,
                       size_t gated)
{
    if (!metrics_enabled())
        return;
    pthread_mutex_lock(&mu);
    update(F_PENDING, SET, (double)active, profile, "active", NULL);
    update(F_PENDING, SET, (double)backoff, profile, "backoff", NULL);
    update(F_PENDING, SET, (double)unschedulable, profile, "unschedulable", NULL);
    update(F_PENDING, SET, (double)gated, profile, "gated", NULL);
    pthread_mutex_unlock(&mu);
}

void metrics_set_cache(size_t targets, size_t workloads, size_t assumed)
{
    if (!metrics_enabled())
        return;
    pthread_mutex_lock(&mu);
    update(F_CACHE_SIZE, SET, (double)targets, "targets", NULL, NULL);
    update(F_CACHE_SIZE, SET, (double)workloads, "workloads", NULL, NULL);
    update(F_CACHE_SIZE, SET, (double)assumed, "assumed", NULL, NULL);
    pthread_mutex_unlock(&mu);
}

void metrics_store_event(const char *type)
{
    if (metrics_enabled())
        record(F_STORE_EVENTS, ADD, 1, type, NULL, NULL);
}

void metrics_plugin_abandoned(const char *plugin, const char *point)
{
    if (metrics_enabled())
        record(F_PLUGIN_ABANDONED, ADD, 1, plugin, point, NULL);
}

void metrics_event_written(const char *reason)
{
    if (metrics_enabled())
        record(F_EVENTS_WRITTEN, ADD, 1, reason, NULL, NULL);
}

void metrics_set_leader(int active)
{
    if (metrics_enabled())
        record(F_LEADER, SET, active ? 1 : 0, NULL, NULL, NULL);
}

void metrics_set_ready(int ready)
{
    if (metrics_enabled())
        record(F_READY, SET, ready ? 1 : 0, NULL, NULL, NULL);
}

void metrics_config_reload(int ok)
{
    if (metrics_enabled())
        record(F_CONFIG_RELOADS, ADD, 1, ok ? "success" : "failure", NULL, NULL);
}

void metrics_reset(void)
{
    pthread_mutex_lock(&mu);
    for (int f = 0; f < F_COUNT; f++) {
        size_t it = 0;
        hmap_slot *sl;
        while ((sl = hmap_next(&families[f].series, &it))) {
            series *s = sl->val;
            for (int i = 0; i < s->n; i++)
                free(s->values[i]);
            free(s->key);
            free(s);
        }
        hmap_free(&families[f].series);
    }
    pthread_mutex_unlock(&mu);
}

/* ---- rendering ---- */

/* The shortest text that reads back as v, as Prometheus clients write it;
 * t holds 32 bytes. */
static const char *fmt_double(char *t, double v)
{
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    if (isnan(v))
        return "NaN";
    for (int p = 1; p <= 17; p++) {
        snprintf(t, 32, "%.*g", p, v);
        if (strtod(t, NULL) == v)
            break;
    }
    return t;
}

static void put_escaped(strbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            sb_puts(b, "\\\\");
        else if (*s == '"')
            sb_puts(b, "\\\"");
        else if (*s == '\n')
            sb_puts(b, "\\n");
        else
            sb_add(b, s, 1);
    }
}

/* name{l1="v1",...,extra="x"}: extra (the le label) may be NULL. */
static void put_name(strbuf *b, const family *f, const char *suffix, const series *s,
                     const char *extra)
{
    sb_puts(b, f->name);
    sb_puts(b, suffix);
    if (s->n == 0 && !extra)
        return;
    sb_puts(b, "{");
    for (int i = 0; i < s->n; i++) {
        sb_printf(b, "%s%s=\"", i ? "," : "", f->labels[i]);
        put_escaped(b, s->values[i]);
        sb_puts(b, "\"");
    }
    if (extra)
        sb_printf(b, "%sle=\"%s\"", s->n ? "," : "", extra);
    sb_puts(b, "}");
}

static void put_series(strbuf *b, const family *f, const series *s)
{
    char t[32];
    if (f->kind != HISTOGRAM) {
        put_name(b, f, "", s, NULL);
        sb_printf(b, " %s\n", fmt_double(t, s->value));
        return;
    }
    uint64_t cum = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        cum += s->buckets[i];
        put_name(b, f, "_bucket", s, fmt_double(t, bounds[i]));
        sb_printf(b, " %llu\n", (unsigned long long)cum);
    }
    put_name(b, f, "_bucket", s, "+Inf");
    sb_printf(b, " %llu\n", (unsigned long long)s->count);
    put_name(b, f, "_sum", s, NULL);
    sb_printf(b, " %s\n", fmt_double(t, s->sum));
    put_name(b, f, "_count", s, NULL);
    sb_printf(b, " %llu\n", (unsigned long long)s->count);
}

static int cmp_series(const void *pa, const void *pb)
{
    const series *a = *(series *const *)pa, *b = *(series *const *)pb;
    for (int i = 0; i < a->n; i++) {
        int c = strcmp(a->values[i], b->values[i]);
        if (c)
            return c;
    }
    return 0;
}

static const char *const kind_names[] = {"counter", "gauge", "histogram"};

char *metrics_render(void)
{
    strbuf b;
    sb_init(&b);
    series **list = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&mu);
    for (int fi = 0; fi < F_COUNT; fi++) {
        family *f = &families[fi];
        sb_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
                  kind_names[f->kind]);
        if (fi == F_BUILD_INFO) {
            series info = {.n = 1, .value = 1, .values = {(char *)PACKAGE_VERSION}};
            put_series(&b, f, &info);
            continue;
        }
        size_t n = 0, it = 0;
        hmap_slot *sl;
        while ((sl = hmap_next(&f->series, &it))) {
            grow(&list, &cap, n + 1, sizeof *list);
            list[n++] = sl->val;
        }
        if (n > 1)
            qsort(list, n, sizeof *list, cmp_series);
        for (size_t i = 0; i < n; i++)
            put_series(&b, f, list[i]);
    }
    pthread_mutex_unlock(&mu);
    free(list);
    return sb_steal(&b);
}

/* The value of every series of family fi whose label k is v, summed
 * (histograms: their count). Called locked. */
static double sum_where(int fi, int k, const char *v)
{
    const family *f = &families[fi];
    double total = 0;
    size_t it = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&f->series, &it))) {
        const series *s = sl->val;
        if (k < s->n && strcmp(s->values[k], v) == 0)
            total += f->kind == HISTOGRAM ? (double)s->count : s->value;
    }
    return total;
}

void metrics_get_totals(metrics_totals *t)
{
    pthread_mutex_lock(&mu);
    t->active = sum_where(F_PENDING, 1, "active");
    t->backoff = sum_where(F_PENDING, 1, "backoff");
    t->unschedulable = sum_where(F_PENDING, 1, "unschedulable");
    t->gated = sum_where(F_PENDING, 1, "gated");
    t->scheduled = sum_where(F_ATTEMPTS, 1, "scheduled");
    t->unschedulable_attempts = sum_where(F_ATTEMPTS, 1, "unschedulable");
    t->errors = sum_where(F_ATTEMPTS, 1, "error");
    t->bound = sum_where(F_BINDING_DURATION, 1, "success");
    pthread_mutex_unlock(&mu);
}
