/*
 * metrics.c - see metrics.h. The families are a fixed table, rendered in
 * name order; each holds its series in a hash map keyed by the label
 * values (length-prefixed, so no value can forge another's key), found
 * and created under one mutex. A series' numbers are atomics, so a
 * caller that holds the series (a metrics_cache cell) records without the
 * lock. Histograms keep per-bucket counts and make them cumulative only
 * when rendered; their bucket bounds are computed as the Go client's
 * ExponentialBuckets computes them (start, times factor, again), so the
 * le labels read exactly as kube-scheduler's.
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
#include "procstat.h"
#include "util.h"

#define MAX_LABELS 3
#define MAX_BUCKETS 20

enum kind { COUNTER, GAUGE, HISTOGRAM };

typedef struct series {
    char *key; /* the hash map's key (owned here) */
    char *values[MAX_LABELS];
    int n;                                 /* label values */
    _Atomic uint64_t count;                /* counters; histograms: observations */
    _Atomic uint64_t bits;                 /* gauges: the value's bits; histograms: the sum's */
    _Atomic uint64_t buckets[MAX_BUCKETS]; /* per bucket, not cumulative */
} series;

typedef struct family {
    const char *name, *help;
    enum kind kind;
    const char *labels[MAX_LABELS + 1]; /* NULL-terminated, sorted by name */
    double start, factor;               /* histograms: ExponentialBuckets */
    int nb;
    double bounds[MAX_BUCKETS];
    hmap series;
} family;

/* Indexes into families[] (rendered sorted by name: order[]). */
enum {
    F_EXTENSION_POINT_DURATION,
    F_PENDING_PODS,
    F_PLUGIN_DURATION,
    F_POD_ATTEMPTS,
    F_SLI_DURATION,
    F_PREEMPTION_ATTEMPTS,
    F_PREEMPTION_VICTIMS,
    F_QUEUE_INCOMING,
    F_ATTEMPTS,
    F_ATTEMPT_DURATION,
    F_CACHE_SIZE,
    F_UNSCHEDULABLE_PODS,
    F_BIND_ERRORS,
    F_BINDING_DURATION,
    F_BUILD_INFO,
    F_CONFIG_RELOADS,
    F_EVENTS_WRITTEN,
    F_LEADER,
    F_PENDING,
    F_PLUGIN_ABANDONED,
    F_READY,
    F_STORE_EVENTS,
    F_COUNT
};

#define L(...) .labels = {__VA_ARGS__}
#define HIST(s, f, n) .start = s, .factor = f, .nb = n
static family families[F_COUNT] = {
    /* kube-scheduler's (pkg/scheduler/metrics/metrics.go), with its help
     * texts and the stability level component-base puts before them */
    [F_EXTENSION_POINT_DURATION] = {"scheduler_framework_extension_point_duration_seconds",
                                    "[STABLE] Latency for running all plugins of a specific "
                                    "extension point.",
                                    HISTOGRAM, L("extension_point", "profile", "status"),
                                    HIST(0.0001, 2, 12)},
    [F_PENDING_PODS] = {"scheduler_pending_pods",
                        "[STABLE] Number of pending pods, by the queue type. 'active' means "
                        "number of pods in activeQ; 'backoff' means number of pods in backoffQ; "
                        "'unschedulable' means number of pods in unschedulablePods that the "
                        "scheduler attempted to schedule and failed; 'gated' is the number of "
                        "unschedulable pods that the scheduler never attempted to schedule "
                        "because they are gated.",
                        GAUGE, L("queue")},
    [F_PLUGIN_DURATION] = {"scheduler_plugin_execution_duration_seconds",
                           "[ALPHA] Duration for running a plugin at a specific extension point.",
                           HISTOGRAM, L("extension_point", "plugin", "status"),
                           HIST(0.00001, 1.5, 20)},
    [F_POD_ATTEMPTS] = {"scheduler_pod_scheduling_attempts",
                        "[STABLE] Number of attempts to successfully schedule a pod.", HISTOGRAM,
                        L(NULL), HIST(1, 2, 5)},
    [F_SLI_DURATION] = {"scheduler_pod_scheduling_sli_duration_seconds",
                        "[BETA] E2e latency for a pod being scheduled, from the time the pod "
                        "enters the scheduling queue an d might involve multiple scheduling "
                        "attempts.",
                        HISTOGRAM, L("attempts"), HIST(0.01, 2, 20)},
    [F_PREEMPTION_ATTEMPTS] = {"scheduler_preemption_attempts_total",
                               "[STABLE] Total preemption attempts in the cluster till now",
                               COUNTER, L(NULL)},
    [F_PREEMPTION_VICTIMS] = {"scheduler_preemption_victims",
                              "[STABLE] Number of selected preemption victims", HISTOGRAM, L(NULL),
                              HIST(1, 2, 7)},
    [F_QUEUE_INCOMING] = {"scheduler_queue_incoming_pods_total",
                          "[STABLE] Number of pods added to scheduling queues by event and queue "
                          "type.",
                          COUNTER, L("event", "queue")},
    [F_ATTEMPTS] = {"scheduler_schedule_attempts_total",
                    "[STABLE] Number of attempts to schedule pods, by the result. "
                    "'unschedulable' means a pod could not be scheduled, while 'error' means an "
                    "internal scheduler problem.",
                    COUNTER, L("profile", "result")},
    [F_ATTEMPT_DURATION] = {"scheduler_scheduling_attempt_duration_seconds",
                            "[STABLE] Scheduling attempt latency in seconds (scheduling "
                            "algorithm + binding)",
                            HISTOGRAM, L("profile", "result"), HIST(0.001, 2, 15)},
    [F_CACHE_SIZE] = {"scheduler_scheduler_cache_size",
                      "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler "
                      "cache.",
                      GAUGE, L("type")},
    [F_UNSCHEDULABLE_PODS] = {"scheduler_unschedulable_pods",
                              "[ALPHA] The number of unschedulable pods broken down by plugin "
                              "name. A pod will increment the gauge for all plugins that caused "
                              "it to not schedule and so this metric have meaning only when "
                              "broken down by plugin.",
                              GAUGE, L("plugin", "profile")},
    /* trellis's own: no kube-scheduler counterpart */
    [F_BIND_ERRORS] = {"trellis_bind_errors_total", "Binding cycles that failed, by profile.",
                       COUNTER, L("profile")},
    [F_BINDING_DURATION] = {"trellis_binding_duration_seconds",
                            "Duration of the binding cycle (pre-bind, bind, post-bind).", HISTOGRAM,
                            L("profile", "result"), HIST(0.00001, 2, 20)},
    [F_BUILD_INFO] = {"trellis_build_info", "The version of trellis; always 1.", GAUGE,
                      L("version")},
    [F_CONFIG_RELOADS] = {"trellis_config_reloads_total", "Configuration reloads, by result.",
                          COUNTER, L("result")},
    [F_EVENTS_WRITTEN] = {"trellis_events_written_total", "Event objects written, by reason.",
                          COUNTER, L("reason")},
    [F_LEADER] = {"trellis_leader", "1 while this process holds the state lock, 0 on standby.",
                  GAUGE, L(NULL)},
    [F_PENDING] = {"trellis_pending_workloads",
                   "Workloads waiting to be scheduled, by profile and queue (active, backoff, "
                   "unschedulable; gated: held back by a pre_enqueue plugin).",
                   GAUGE, L("profile", "queue")},
    [F_PLUGIN_ABANDONED] = {"trellis_plugin_calls_abandoned_total",
                            "Calls of an ignorable plugin cut short at their deadline; the plugin "
                            "is skipped for the rest of that cycle.",
                            COUNTER, L("extension_point", "plugin")},
    [F_READY] = {"trellis_ready", "1 when the scheduler is ready to schedule, else 0.", GAUGE,
                 L(NULL)},
    [F_STORE_EVENTS] = {"trellis_store_events_total", "Object changes seen from the store.",
                        COUNTER, L("type")},
};

static const char *const point_names[MP_COUNT] = {
    [MP_PRE_ENQUEUE] = "PreEnqueue",
    [MP_PRE_FILTER] = "PreFilter",
    [MP_FILTER] = "Filter",
    [MP_POST_FILTER] = "PostFilter",
    [MP_PRE_SCORE] = "PreScore",
    [MP_SCORE] = "Score",
    [MP_NORMALIZE] = "ScoreExtensionNormalize",
    [MP_RESERVE] = "Reserve",
    [MP_UNRESERVE] = "Unreserve",
    [MP_PERMIT] = "Permit",
    [MP_PRE_BIND] = "PreBind",
    [MP_BIND] = "Bind",
    [MP_POST_BIND] = "PostBind",
    [MP_EVICTION_CHECK] = "EvictionCheck",
    [MP_TARGET_LOST] = "TargetLost",
    [MP_FINALIZE] = "Finalize",
    [MP_DECIDED] = "Decided",
    [MP_FILTER_FEASIBLE] = "FilterFeasible",
};
/* by TRELLIS_* code (plugin.h: SUCCESS 0 .. WAIT 5) */
#define N_STATUS 6
static const char *const status_names[N_STATUS] = {
    "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error", "Skip", "Wait"};
static const char *const result_names[] = {"scheduled", "unschedulable", "error"};
#define N_RESULTS 3

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int enabled;
static atomic_uint generation = 1; /* bumped by metrics_reset: caches re-resolve */
static atomic_uint_fast64_t sample_seq;
static atomic_int sample_percent = METRICS_PLUGIN_SAMPLE_PERCENT;
static int order[F_COUNT]; /* families[] by name */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int cmp_family(const void *a, const void *b)
{
    return strcmp(families[*(const int *)a].name, families[*(const int *)b].name);
}

static void init_tables(void)
{
    for (int f = 0; f < F_COUNT; f++) {
        family *fa = &families[f];
        double b = fa->start;
        for (int i = 0; i < fa->nb; i++) {
            fa->bounds[i] = b;
            b *= fa->factor;
        }
        order[f] = f;
    }
    qsort(order, F_COUNT, sizeof *order, cmp_family);
}

static void init(void)
{
    pthread_once(&once, init_tables);
}

void metrics_enable(int on)
{
    init();
    atomic_store_explicit(&enabled, on ? 1 : 0, memory_order_relaxed);
}

int metrics_enabled(void)
{
    return atomic_load_explicit(&enabled, memory_order_relaxed);
}

int metrics_sample(void)
{
    if (!metrics_enabled())
        return 0;
    int pct = atomic_load_explicit(&sample_percent, memory_order_relaxed);
    if (pct >= 100 || pct <= 0)
        return pct >= 100;
    /* splitmix64 of a counter: deterministic, spread, thread-safe */
    uint64_t z =
        atomic_fetch_add_explicit(&sample_seq, 1, memory_order_relaxed) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (int)(z % 100) < atomic_load_explicit(&sample_percent, memory_order_relaxed);
}

void metrics_set_sample_percent(int percent)
{
    atomic_store_explicit(&sample_percent,
                          percent < 0     ? 0
                          : percent > 100 ? 100
                                          : percent,
                          memory_order_relaxed);
}

int metrics_status_of(int rc)
{
    return rc >= 0 && rc < N_STATUS ? rc : 3 /* Error */;
}

static int nlabels(const family *f)
{
    int n = 0;
    while (n < MAX_LABELS && f->labels[n])
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

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* The count first, then the bucket: a render that reads the buckets and
 * then the count never sees more in the buckets than in +Inf. */
static void observe(const family *f, series *s, double x)
{
    if (!(x >= 0)) /* negative or NaN: a clock hiccup, not data */
        x = 0;
    atomic_fetch_add(&s->count, 1);
    for (int i = 0; i < f->nb; i++)
        if (x <= f->bounds[i]) {
            atomic_fetch_add(&s->buckets[i], 1);
            break;
        }
    uint64_t old = atomic_load(&s->bits);
    while (!atomic_compare_exchange_weak(&s->bits, &old, to_bits(from_bits(old) + x)))
        ;
}

enum op { ADD, SET, OBSERVE };

static void apply(int fam, series *s, enum op op, double x)
{
    if (op == ADD)
        atomic_fetch_add(&s->count, (uint64_t)x);
    else if (op == SET && families[fam].kind == COUNTER)
        atomic_store(&s->count, (uint64_t)x);
    else if (op == SET)
        atomic_store(&s->bits, to_bits(x));
    else
        observe(&families[fam], s, x);
}

/* Record into the series of family fam with up to three label values.
 * Called locked. */
static void update(int fam, enum op op, double x, const char *a, const char *b, const char *c)
{
    const char *v[MAX_LABELS] = {a ? a : "", b ? b : "", c ? c : ""};
    apply(fam, lookup(&families[fam], v), op, x);
}

static void record(int fam, enum op op, double x, const char *a, const char *b, const char *c)
{
    pthread_mutex_lock(&mu);
    update(fam, op, x, a, b, c);
    pthread_mutex_unlock(&mu);
}

/* ---- caches: the hot path ---- */

typedef struct cell {
    _Atomic(series *) s;
    atomic_uint gen; /* the generation s belongs to; 0: empty */
} cell;

#define CELLS_POINTS (MP_COUNT * N_STATUS)
struct metrics_cache {
    cell points[CELLS_POINTS]; /* extension point or plugin, by point and status */
    cell results[N_RESULTS];   /* attempts: the counter's series, */
    cell latency[N_RESULTS];   /* and the histogram's */
};

metrics_cache *metrics_cache_new(void)
{
    return xcalloc(1, sizeof(metrics_cache));
}

void metrics_cache_free(metrics_cache *mc)
{
    free(mc);
}

/* The series in cell c, resolved (locked) when c is empty or from before
 * a reset. Every thread that resolves a cell in one generation stores
 * the same series, so a reader that sees the current generation may use
 * whatever series it then reads. */
static series *cached(cell *c, int fam, const char *a, const char *b, const char *d)
{
    unsigned g = atomic_load_explicit(&generation, memory_order_relaxed);
    if (c && atomic_load_explicit(&c->gen, memory_order_acquire) == g)
        return atomic_load_explicit(&c->s, memory_order_relaxed);
    const char *v[MAX_LABELS] = {a ? a : "", b ? b : "", d ? d : ""};
    pthread_mutex_lock(&mu);
    series *s = lookup(&families[fam], v);
    pthread_mutex_unlock(&mu);
    if (c) {
        atomic_store_explicit(&c->s, s, memory_order_relaxed);
        atomic_store_explicit(&c->gen, g, memory_order_release);
    }
    return s;
}

void metrics_attempt(metrics_cache *mc, const char *profile, int result, double seconds)
{
    if (!metrics_enabled() || result < 0 || result >= N_RESULTS)
        return;
    const char *r = result_names[result];
    series *s = cached(mc ? &mc->results[result] : NULL, F_ATTEMPTS, profile, r, NULL);
    atomic_fetch_add(&s->count, 1);
    s = cached(mc ? &mc->latency[result] : NULL, F_ATTEMPT_DURATION, profile, r, NULL);
    observe(&families[F_ATTEMPT_DURATION], s, seconds);
}

void metrics_extension_point(metrics_cache *mc, const char *profile, int point, int status,
                             double seconds)
{
    if (!metrics_enabled() || point < 0 || point >= MP_COUNT)
        return;
    status = metrics_status_of(status);
    series *s =
        cached(mc ? &mc->points[point * N_STATUS + status] : NULL, F_EXTENSION_POINT_DURATION,
               point_names[point], profile, status_names[status]);
    observe(&families[F_EXTENSION_POINT_DURATION], s, seconds);
}

void metrics_plugin(metrics_cache *mc, const char *plugin, int point, int status, double seconds)
{
    if (!metrics_enabled() || point < 0 || point >= MP_COUNT)
        return;
    status = metrics_status_of(status);
    series *s = cached(mc ? &mc->points[point * N_STATUS + status] : NULL, F_PLUGIN_DURATION,
                       point_names[point], plugin, status_names[status]);
    observe(&families[F_PLUGIN_DURATION], s, seconds);
}

/* The process-wide series of the per-decision families whose label
 * values are few and known: cached here as a profile's are there. */
static cell preemption_attempts, preemption_victims, pod_attempts, sli[16];

void metrics_preemption(size_t victims)
{
    if (!metrics_enabled())
        return;
    atomic_fetch_add(&cached(&preemption_attempts, F_PREEMPTION_ATTEMPTS, NULL, NULL, NULL)->count,
                     1);
    if (victims)
        observe(&families[F_PREEMPTION_VICTIMS],
                cached(&preemption_victims, F_PREEMPTION_VICTIMS, NULL, NULL, NULL),
                (double)victims);
}

void metrics_scheduled(double seconds, unsigned attempts)
{
    if (!metrics_enabled())
        return;
    /* kube-scheduler's attempts label, capped against cardinality */
    static const char *const labels[16] = {"0", "1", "2",  "3",  "4",  "5",  "6",  "7",
                                           "8", "9", "10", "11", "12", "13", "14", "15+"};
    unsigned i = attempts >= 15 ? 15 : attempts;
    observe(&families[F_SLI_DURATION], cached(&sli[i], F_SLI_DURATION, labels[i], NULL, NULL),
            seconds);
    observe(&families[F_POD_ATTEMPTS], cached(&pod_attempts, F_POD_ATTEMPTS, NULL, NULL, NULL),
            (double)attempts);
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
    update(F_BIND_ERRORS, ADD, 0, profile, NULL, NULL); /* there, at 0, from the start */
    update(F_PENDING, SET, (double)active, profile, "active", NULL);
    update(F_PENDING, SET, (double)backoff, profile, "backoff", NULL);
    update(F_PENDING, SET, (double)unschedulable, profile, "unschedulable", NULL);
    update(F_PENDING, SET, (double)gated, profile, "gated", NULL);
    pthread_mutex_unlock(&mu);
}

void metrics_set_unschedulable(const char *profile, const char *const *plugin, const size_t *count,
                               size_t n)
{
    if (!metrics_enabled())
        return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++)
        update(F_UNSCHEDULABLE_PODS, SET, (double)count[i], plugin[i], profile, NULL);
    pthread_mutex_unlock(&mu);
}

void metrics_set_incoming(const char *queue, const char *event, double total)
{
    if (metrics_enabled())
        record(F_QUEUE_INCOMING, SET, total, event, queue, NULL);
}

void metrics_set_cache(size_t targets, size_t workloads, size_t assumed)
{
    if (!metrics_enabled())
        return;
    pthread_mutex_lock(&mu);
    update(F_CACHE_SIZE, SET, (double)targets, "nodes", NULL, NULL);
    update(F_CACHE_SIZE, SET, (double)workloads, "pods", NULL, NULL);
    update(F_CACHE_SIZE, SET, (double)assumed, "assumed_pods", NULL, NULL);
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
        record(F_PLUGIN_ABANDONED, ADD, 1, point, plugin, NULL);
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
    atomic_fetch_add(&generation, 1);
    pthread_mutex_unlock(&mu);
}

/* ---- rendering ---- */

/* The shortest text that reads back as v, as the Go client writes it
 * (strconv 'g', -1): the fewest digits that round-trip, in exponent form
 * when the exponent is below -4 or at least 6 (so 20000, 16.384,
 * 1.5000000000000002e-05, 1e+06); t holds 40 bytes. */
static const char *fmt_double(char *t, double v)
{
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    if (isnan(v))
        return "NaN";
    int p = 1;
    for (; p < 17; p++) {
        snprintf(t, 40, "%.*e", p - 1, v);
        if (strtod(t, NULL) == v)
            break;
    }
    snprintf(t, 40, "%.*e", p - 1, v);
    int exp = atoi(strchr(t, 'e') + 1);
    if (v != 0 && (exp < -4 || exp >= 6))
        return t;
    snprintf(t, 40, "%.*f", p - 1 - exp > 0 ? p - 1 - exp : 0, v);
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

static void put_series(strbuf *b, const family *f, series *s)
{
    char t[40];
    if (f->kind == COUNTER) {
        put_name(b, f, "", s, NULL);
        sb_printf(b, " %llu\n", (unsigned long long)atomic_load(&s->count));
        return;
    }
    if (f->kind == GAUGE) {
        put_name(b, f, "", s, NULL);
        sb_printf(b, " %s\n", fmt_double(t, from_bits(atomic_load(&s->bits))));
        return;
    }
    uint64_t cum = 0;
    for (int i = 0; i < f->nb; i++) {
        cum += atomic_load(&s->buckets[i]);
        put_name(b, f, "_bucket", s, fmt_double(t, f->bounds[i]));
        sb_printf(b, " %llu\n", (unsigned long long)cum);
    }
    uint64_t count = atomic_load(&s->count);
    if (count < cum) /* not possible by the order of observe; never render less */
        count = cum;
    put_name(b, f, "_bucket", s, "+Inf");
    sb_printf(b, " %llu\n", (unsigned long long)count);
    put_name(b, f, "_sum", s, NULL);
    sb_printf(b, " %s\n", fmt_double(t, from_bits(atomic_load(&s->bits))));
    put_name(b, f, "_count", s, NULL);
    sb_printf(b, " %llu\n", (unsigned long long)count);
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

/* The value of every series of family fi whose label k is v, summed
 * (counters and gauges). Called locked. */
static double sum_where(int fi, int k, const char *v)
{
    const family *f = &families[fi];
    double total = 0;
    size_t it = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&f->series, &it))) {
        series *s = sl->val;
        if (k < s->n && strcmp(s->values[k], v) == 0)
            total += f->kind == HISTOGRAM ? (double)atomic_load(&s->count)
                     : f->kind == COUNTER ? (double)atomic_load(&s->count)
                                          : from_bits(atomic_load(&s->bits));
    }
    return total;
}

static void put_process(strbuf *b)
{
    procstat ps;
    procstat_read(&ps);
    char t[40];
    struct {
        const char *name, *type, *help;
        int have;
        double v;
    } m[] = {
        {"process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         ps.have_stat, ps.cpu_seconds},
        {"process_max_fds", "gauge", "Maximum number of open file descriptors.", ps.have_limits,
         ps.max_fds},
        {"process_open_fds", "gauge", "Number of open file descriptors.", ps.have_fds, ps.open_fds},
        {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", ps.have_stat,
         ps.resident_bytes},
        {"process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.", ps.have_stat,
         ps.start_time_seconds},
        {"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", ps.have_stat,
         ps.virtual_bytes},
        {"process_virtual_memory_max_bytes", "gauge",
         "Maximum amount of virtual memory available in bytes.", ps.have_limits,
         ps.virtual_max_bytes},
    };
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", m[i].name, m[i].help, m[i].name, m[i].type);
        if (m[i].have)
            sb_printf(b, "%s %s\n", m[i].name, fmt_double(t, m[i].v));
    }
}

char *metrics_render(void)
{
    init();
    strbuf b;
    sb_init(&b);
    put_process(&b);
    series **list = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&mu);
    for (int oi = 0; oi < F_COUNT; oi++) {
        int fi = order[oi];
        family *f = &families[fi];
        sb_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
                  kind_names[f->kind]);
        if (fi == F_BUILD_INFO) {
            series info = {.n = 1, .values = {(char *)PACKAGE_VERSION}};
            atomic_store(&info.bits, to_bits(1));
            put_series(&b, f, &info);
            continue;
        }
        if (fi == F_PENDING_PODS) { /* kube has one queue: the profiles' sum */
            if (!families[F_PENDING].series.len)
                continue;
            static const char *const queues[] = {"active", "backoff", "gated", "unschedulable"};
            for (size_t q = 0; q < 4; q++) {
                series sum = {.n = 1, .values = {(char *)queues[q]}};
                atomic_store(&sum.bits, to_bits(sum_where(F_PENDING, 1, queues[q])));
                put_series(&b, f, &sum);
            }
            continue;
        }
        if (!f->series.len && f->labels[0] == NULL && strncmp(f->name, "scheduler_", 10) == 0) {
            /* kube's metrics without labels are there from the start, at 0 */
            series zero = {.n = 0};
            put_series(&b, f, &zero);
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
