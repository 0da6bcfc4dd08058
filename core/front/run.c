/*
 * run.c - see run.h.
 */
#include "config.h"

#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cfg.h"
#include "clock.h"
#include "guard.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "quarantine.h"
#include "election.h"
#include "scheduler.h"
#include "store.h"
#include "util.h"

/* Cycles run between two looks at the signals, the store and the binder. */
#define STEPS_PER_TURN 128
/* The loop turns at least this often, idle or not: it checks the state
 * lock, and a turn is what /healthz and the systemd watchdog watch. */
#define MAX_IDLE_MS 1000

typedef struct host {
    const run_opts *o;
    cfg *c;
    sched *s;
    store *st;
    int store_fd;
    /* who writes the state (the fence reads it from the binding thread) */
    election *el;
    char *quarantine_path;
    /* read by the HTTP thread */
    pthread_mutex_t mu;
    int ready;
    char why[256];
    char *configz;
    char fatal[512];              /* why the host must be restarted, "" when live */
    atomic_int looping;           /* 1 while the scheduling loop runs */
    atomic_uint_fast64_t turn_ms; /* when the loop last turned */
    atomic_uint liveness_ms;      /* the config's http.liveness_timeout_ms */
    uint64_t watchdog_ms, last_ping_ms;
    uint64_t start_ms;    /* clock_mono_ms() at start: a fixed `now` runs from then */
    uint64_t summary_ms;  /* when the last summary line was logged */
    double summary_bound; /* bindings done by then */
    char *http_address;   /* where HTTP is served (NULL: it is not) */
    int http_port;        /* the port bound, --listen ADDR:0 included */
    int led;              /* it has been active: a state that goes is waited for */
} host;

static void set_ready(host *h, int ready, const char *why)
{
    pthread_mutex_lock(&h->mu);
    h->ready = ready;
    snprintf(h->why, sizeof h->why, "%s", why ? why : "");
    pthread_mutex_unlock(&h->mu);
    metrics_set_ready(ready);
}

static int ready_cb(void *ud, char *why, size_t whylen)
{
    host *h = ud;
    pthread_mutex_lock(&h->mu);
    int r = h->ready;
    snprintf(why, whylen, "%s", h->why);
    pthread_mutex_unlock(&h->mu);
    return r;
}

static int healthy_cb(void *ud, char *why, size_t whylen)
{
    host *h = ud;
    pthread_mutex_lock(&h->mu);
    int ok = !h->fatal[0];
    if (!ok)
        snprintf(why, whylen, "%s", h->fatal);
    pthread_mutex_unlock(&h->mu);
    if (!ok)
        return 0;
    if (atomic_load(&h->looping)) {
        uint64_t last = atomic_load(&h->turn_ms), now = clock_mono_ms(),
                 limit = atomic_load(&h->liveness_ms);
        if (now > last && now - last > limit) {
            snprintf(why, whylen,
                     "the scheduling loop has not turned for %.1f s (liveness_timeout_ms = "
                     "%llu)",
                     (double)(now - last) / 1000.0, (unsigned long long)limit);
            return 0;
        }
    }
    return 1;
}

/* A plugin call overran its deadline (guard.h): the process ends soon. */
static void fatal_cb(void *ud, const char *message)
{
    host *h = ud;
    pthread_mutex_lock(&h->mu);
    snprintf(h->fatal, sizeof h->fatal, "%s", message);
    pthread_mutex_unlock(&h->mu);
    set_ready(h, 0, "a plugin is stuck");
    notify_send("STATUS=%s", message);
}

static char *configz_cb(void *ud)
{
    host *h = ud;
    pthread_mutex_lock(&h->mu);
    char *s = xstrdup(h->configz ? h->configz : "{}");
    pthread_mutex_unlock(&h->mu);
    return s;
}

/* The command line's overrides of the config, in force: set in the
 * config's group (store.path, http, parallelism, now) and named under
 * "command_line". */
static void add_overrides(const host *h, const cfg *c, json_object *root)
{
    const run_opts *o = h->o;
    json_object *cl = json_object_new_object(), *g;
    if (o->state && json_object_object_get_ex(root, "store", &g)) {
        json_object_object_add(g, "path", json_object_new_string(o->state));
        json_object_object_add(cl, "state", json_object_new_string(o->state));
    }
    if (h->http_address && json_object_object_get_ex(root, "http", &g)) {
        json_object_object_add(g, "enabled", json_object_new_boolean(1));
        json_object_object_add(g, "address", json_object_new_string(h->http_address));
        json_object_object_add(g, "port", json_object_new_int(h->http_port));
    }
    if (o->listen)
        json_object_object_add(cl, "listen", json_object_new_string(o->listen));
    if (o->parallelism > 0) {
        json_object_object_add(root, "parallelism", json_object_new_int(o->parallelism));
        json_object_object_add(cl, "parallelism", json_object_new_int(o->parallelism));
    }
    if (o->now) {
        json_object_object_add(root, "now", json_object_new_string(o->now));
        json_object_object_add(cl, "now", json_object_new_string(o->now));
    }
    json_object *dirs = json_object_new_array();
    for (size_t i = 0; i < o->n_dirs; i++)
        json_object_array_add(dirs, json_object_new_string(o->dirs[i]));
    if (o->n_dirs)
        json_object_object_add(cl, "plugin_dirs", json_object_get(dirs));
    json_object_object_add(root, "command_line", cl);
    /* where plugins are looked for, in order: -P and TRELLIS_PLUGIN_PATH,
     * the config's plugin_dirs, the built-in directory */
    for (size_t i = 0; i < c->n_plugin_dirs; i++)
        json_object_array_add(dirs, json_object_new_string(c->plugin_dirs[i]));
    json_object_array_add(dirs, json_object_new_string(TRELLIS_PLUGINDIR));
    json_object_object_add(root, "plugin_search_path", dirs);
    json_object *log = json_object_new_object();
    json_object_object_add(log, "level", json_object_new_string(log_level_name(log_get_level())));
    json_object_object_add(log, "format", json_object_new_string(log_get_json() ? "json" : "text"));
    json_object_object_add(root, "log", log);
}

/* /configz: the effective configuration, the file's settings with the
 * command line's overrides in force. */
static void set_configz(host *h, const cfg *c)
{
    char *js = config_to_json(c);
    json_object *root = json_tokener_parse(js);
    if (root) {
        add_overrides(h, c, root);
        free(js);
        js = xasprintf("%s\n", json_object_to_json_string_ext(
                                   root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                             JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(root);
    }
    pthread_mutex_lock(&h->mu);
    free(h->configz);
    h->configz = js;
    pthread_mutex_unlock(&h->mu);
}

/* Where the state is, for messages and to notice a reload that moves it. */
static const char *state_where(const host *h, const cfg *c, char *buf, size_t len)
{
    return store_where(&c->store, h->o->state, buf, len);
}

/* ---- leadership (the file store: the state lock) ---- */

/* Whether the store is a server that may be down for a while (etcd): its
 * errors are waited out; a file store's are the operator's to fix. */
static int store_is_remote(const host *h)
{
    return !store_dir(&h->c->store, h->o->state);
}

/* The state directory is not there (moved away, a mount replaced): what
 * a host that has led waits for; any other trouble with it is said. */
static int state_gone(const host *h)
{
    const char *d = store_dir(&h->c->store, h->o->state);
    struct stat st;
    return d && stat(d, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* The store cannot be reached: say why (on /readyz, and in the log when
 * the reason changes), then wait for the next try. The wait grows from
 * 100 ms to 5 s with each failure in a row (*tries). 1 when a signal
 * asked to stop meanwhile. */
static int wait_for_store(host *h, int sigfd, const char *why, unsigned *tries)
{
    char ready[sizeof h->why];
    snprintf(ready, sizeof ready, "waiting for the store: %.200s", why);
    pthread_mutex_lock(&h->mu);
    int same = strcmp(h->why, ready) == 0;
    pthread_mutex_unlock(&h->mu);
    uint64_t ms = 100u << (*tries < 6 ? *tries : 6);
    if (ms > 5000)
        ms = 5000;
    (*tries)++;
    if (!same || *tries % 20 == 0)
        log_warn("the store is not ready: %s; trying again in %.1f s (and on, up to every 5 s)",
                 why, (double)ms / 1000.0);
    set_ready(h, 0, ready);
    notify_send("STATUS=%s", ready);
    uint64_t end = clock_mono_ms() + ms;
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= end)
            return 0;
        struct pollfd pf = {sigfd, POLLIN, 0};
        int wait = (int)(end - now);
        if (h->watchdog_ms && wait > (int)(h->watchdog_ms / 2))
            wait = (int)(h->watchdog_ms / 2);
        if (poll(&pf, 1, wait) < 0 && errno != EINTR)
            return 0;
        if (h->watchdog_ms)
            notify_send("WATCHDOG=1");
        struct signalfd_siginfo si;
        if ((pf.revents & POLLIN) && read(sigfd, &si, sizeof si) == sizeof si &&
            si.ssi_signo != SIGHUP) {
            log_info("signal %u while waiting for the store: stopping", si.ssi_signo);
            return 1;
        }
    }
}

/* Lead, waiting as a standby while another host does. 1 when leading; 0
 * when a signal asked to stop while waiting; -1 with err. */
static int take_lead(host *h, int sigfd, char *err, size_t errlen)
{
    unsigned tries = 0;
    for (;;) {
        char holder[256];
        int rc = election_campaign(h->el, holder, sizeof holder, err, errlen);
        /* a state directory that was there and went (moved away, a mount
         * replaced) is waited for, as a store that does not answer; one
         * that never was is a mistake to say at once */
        if (rc < 0 && (store_is_remote(h) || (h->led && state_gone(h)))) {
            if (wait_for_store(h, sigfd, err, &tries))
                return 0;
            continue;
        }
        if (rc < 0)
            return -1;
        if (tries)
            log_info("the store answers again: %s", election_where(h->el));
        tries = 0;
        if (rc == 1) {
            metrics_set_leader(1);
            h->led = 1;
            return 1;
        }
        log_info("standby: %s is held by %s; taking over when it is released",
                 election_where(h->el), holder);
        metrics_set_leader(0);
        set_ready(h, 0, "standby: another trellis holds the state lock");
        int wfd = election_wait_fd(h->el, err, errlen);
        if (wfd < 0)
            return -1;
        for (rc = -2; rc == -2;) {
            struct pollfd pf[2] = {{wfd, POLLIN, 0}, {sigfd, POLLIN, 0}};
            /* a standby is alive too: it keeps the systemd watchdog fed */
            int pr = poll(pf, 2, h->watchdog_ms ? (int)(h->watchdog_ms / 2) : -1);
            if (pr < 0 && errno != EINTR)
                return errf(err, errlen, "poll: %s", strerror(errno));
            if (h->watchdog_ms)
                notify_send("WATCHDOG=1");
            if (pf[1].revents & POLLIN) {
                struct signalfd_siginfo si;
                if (read(sigfd, &si, sizeof si) == sizeof si && si.ssi_signo != SIGHUP) {
                    log_info("standby: signal %u: stopping", si.ssi_signo);
                    return 0;
                }
            }
            if (pf[0].revents & POLLIN)
                rc = election_wait_done(h->el, err, errlen);
        }
        if (rc < 0)
            return -1;
        if (rc == 1) {
            log_info("took over the state lock %s", election_where(h->el));
            metrics_set_leader(1);
            h->led = 1;
            return 1;
        }
    }
}

/* ---- scheduler and store ---- */

/* Load the plugins of c into a new scheduler; NULL with err. */
static sched *new_sched(host *h, cfg *c, char *err, size_t errlen)
{
    sched *s = sched_open(c, h->o->dirs, h->o->n_dirs, h->o->parallelism, err, errlen);
    if (s)
        sched_set_long_running(s);
    return s;
}

/* The scheduler's clocks: the monotonic one, and the wall clock plugins
 * see (the config's `now` moving on from the start), read once per turn. */
static void set_clocks(host *h, const cfg *c, sched *s)
{
    sched_set_now(s, clock_mono_ms());
    sched_set_wall_clock(s, c->now ? c->now_ms + (int64_t)(clock_mono_ms() - h->start_ms)
                                   : clock_wall_ms());
}

/* Give s (from new_sched) the store: read it and start following it.
 * s is consumed on failure. 0, or -1 with err. */
static int attach_store(host *h, cfg *c, sched *s, char *err, size_t errlen)
{
    char dir[512];
    state_where(h, c, dir, sizeof dir);
    store *st = store_open(&c->store, h->o->state, 0, err, errlen);
    if (!st) {
        sched_close(s);
        return -1;
    }
    /* write only while this host leads */
    election_fence(h->el, st);
    sched_set_quarantine(s, h->quarantine_path, 0);
    /* follow before reading: a change made meanwhile is not lost */
    int fd = st->ops->watch(st, err, errlen);
    if (fd < 0 || sched_load(s, st, err, errlen) < 0 || sched_start(s, err, errlen) < 0) {
        sched_close(s);
        st->ops->destroy(st);
        return -1;
    }
    h->s = s;
    h->st = st;
    h->store_fd = fd;
    /* what changed while no host ran: a bound workload's target gone (its
     * target-lost plugins repair it), one to evict, as a one-shot run
     * checks first */
    set_clocks(h, c, s);
    sched_check_bound(s);
    sched_stats ss;
    sched_get_stats(s, &ss);
    log_info("state %s: %zu targets, %zu workloads, %zu pending; %zu malformed document(s) "
             "skipped",
             dir, ss.targets_loaded, ss.workloads_loaded, ss.pending, ss.manifest_errors);
    return 0;
}

static void close_sched(host *h)
{
    if (!h->s)
        return;
    sched_stop(h->s); /* the bindings in flight are finished */
    sched_close(h->s);
    h->st->ops->destroy(h->st);
    h->s = NULL;
    h->st = NULL;
}

/* SIGHUP: the new config replaces the running one only when it loads and
 * its plugins start. */
static void reload(host *h)
{
    char err[2048];
    cfg *nc = xcalloc(1, sizeof *nc);
    log_info("SIGHUP: reloading %s", h->o->config);
    if (config_load_at(h->o->config, h->o->now, nc, err, sizeof err) < 0) {
        log_error("reload: %s; the running config stays in force", err);
        metrics_config_reload(0);
        free(nc);
        return;
    }
    char was[512], now[512];
    if (strcmp(state_where(h, nc, now, sizeof now), state_where(h, h->c, was, sizeof was)) != 0 ||
        strcmp(nc->store.type, h->c->store.type) != 0) {
        log_error("reload: %s: the store changed; restart trellis to use another state; the "
                  "running config stays in force",
                  h->o->config);
        config_free(nc);
        free(nc);
        metrics_config_reload(0);
        return;
    }
    const char *sd = store_dir(&nc->store, h->o->state);
    struct stat sst;
    int sok = sd ? stat(sd, &sst) : 0;
    if (sd && (sok != 0 || !S_ISDIR(sst.st_mode))) {
        /* the running scheduler is not closed for a state it cannot read */
        log_error("reload: %s: %s; the running config stays in force", sd,
                  sok != 0 ? strerror(errno) : "not a directory");
        config_free(nc);
        free(nc);
        metrics_config_reload(0);
        return;
    }
    sched *ns = new_sched(h, nc, err, sizeof err);
    if (!ns) {
        log_error("reload: %s; the running config stays in force", err);
        config_free(nc);
        free(nc);
        metrics_config_reload(0);
        return;
    }
    /* its plugins start: switch (the store is read again with them) */
    set_ready(h, 0, "reloading the config");
    close_sched(h);
    cfg *old = h->c;
    h->c = nc;
    if (attach_store(h, nc, ns, err, sizeof err) < 0) {
        /* the state is the problem: try to go on with the old config */
        log_error("reload: %s", err);
        h->c = old;
        config_free(nc);
        free(nc);
        metrics_config_reload(0);
        sched *os = new_sched(h, old, err, sizeof err);
        if (!os || attach_store(h, old, os, err, sizeof err) < 0) {
            log_error("cannot read the state again: %s", err);
            return;
        }
    } else {
        config_free(old);
        free(old);
        atomic_store(&h->liveness_ms, nc->liveness_timeout_ms);
        metrics_set_sample_percent(nc->plugin_metrics_sample_percent);
        metrics_config_reload(1);
        set_configz(h, nc);
        log_info("reload: %s is in force", h->o->config);
    }
    set_ready(h, 1, NULL);
}

static int parse_listen(const char *s, char **addr, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || colon[1] == '\0' || p < 0 || p > 65535)
        return -1;
    *addr = xasprintf("%.*s", (int)(colon - s), s);
    *port = (int)p;
    return 0;
}

/* The HTTP endpoint: --listen over the config's http group. 0 (http may
 * stay NULL: disabled), or -1 after saying why. */
static int start_http(host *h, http_server **http)
{
    char err[1024];
    const run_opts *o = h->o;
    char *addr = NULL;
    int port = h->c->http_port, http_on = h->c->http_enabled;
    *http = NULL;
    if (o->listen) {
        if (parse_listen(o->listen, &addr, &port) < 0) {
            log_fatal("--listen: expected ADDRESS:PORT, got '%s'", o->listen);
            return -1;
        }
        http_on = 1;
    }
    if (http_on) {
        http_handlers hh = {ready_cb, configz_cb, h, healthy_cb};
        *http = http_start(addr ? addr : h->c->http_address, port, &hh, err, sizeof err);
        if (!*http) {
            log_fatal("%s", err);
            free(addr);
            return -1;
        }
        h->http_address = xstrdup(addr ? addr : h->c->http_address);
        h->http_port = http_port(*http);
        log_info("serving /healthz /readyz /configz /metrics on http://%s:%d", h->http_address,
                 h->http_port);
    }
    free(addr);
    return 0;
}

/* Signals that arrived: SIGHUP reloads, SIGTERM and SIGINT stop (*rc 0);
 * a reload that leaves no scheduler stops with *rc 2. 1 to stop. */
static int take_signals(host *h, int sigfd, int *rc)
{
    struct signalfd_siginfo si;
    int stop = 0;
    while (read(sigfd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGHUP) {
            reload(h);
            if (!h->s) {
                *rc = 2;
                return 1;
            }
        } else {
            log_info("signal %u: finishing the bindings in flight, then exiting", si.ssi_signo);
            stop = 1;
            *rc = 0;
        }
    }
    return stop;
}

/* One turn of the active host: collect bindings, apply store changes,
 * timers, a few cycles, then wait for the next thing due. 1 to stop. */
static int turn(host *h, int sigfd, int *rc)
{
    sched *s = h->s;
    set_clocks(h, h->c, s);
    sched_collect(s);
    if (h->st->ops->dispatch(h->st, sched_on_change, s))
        sched_after_changes(s);
    sched_tick(s);
    int steps = 0;
    while (steps < STEPS_PER_TURN && sched_step(s)) {
        steps++;
        sched_set_now(s, clock_mono_ms());
    }
    sched_report_metrics(s);
    int timeout = 0;
    if (steps < STEPS_PER_TURN) {
        uint64_t due = sched_next_due(s), now = clock_mono_ms();
        timeout = due == UINT64_MAX ? MAX_IDLE_MS
                  : due <= now      ? 0
                                    : (int)(due - now < MAX_IDLE_MS ? due - now : MAX_IDLE_MS);
    }
    struct pollfd pf[3] = {
        {sigfd, POLLIN, 0}, {h->store_fd, POLLIN, 0}, {sched_binder_fd(s), POLLIN, 0}};
    if (poll(pf, 3, timeout) < 0 && errno != EINTR) {
        log_error("poll: %s", strerror(errno));
        return 1;
    }
    return take_signals(h, sigfd, rc);
}

/* Every summary_interval_ms, one line of what a long run has done: a
 * terminal shows progress, a journal this, at the default log level. */
static void summary(host *h, uint64_t now)
{
    uint32_t every = h->c->summary_interval_ms;
    if (!every || now - h->summary_ms < every)
        return;
    metrics_totals t;
    metrics_get_totals(&t);
    double secs = (double)(now - h->summary_ms) / 1e3;
    log_progress(
        "summary: %.0f bound (%.2f/s over the last %.0f s), %.0f unschedulable and %.0f error "
        "attempts; queues: %.0f active, %.0f backoff, %.0f unschedulable, %.0f gated",
        t.bound, secs > 0 ? (t.bound - h->summary_bound) / secs : 0.0, secs,
        t.unschedulable_attempts, t.errors, t.active, t.backoff, t.unschedulable, t.gated);
    h->summary_ms = now;
    h->summary_bound = t.bound;
}

/* While this host holds the lock: schedule until told to stop (1) or
 * the lock is lost (0: step down); -1 when the scheduler cannot start. */
static int be_active(host *h, const char *dir, int sigfd, int *rc)
{
    char err[2048];
    /* a plugin that hangs ends the run, with the reason on /healthz */
    guard_watch(fatal_cb, h, 2000);
    unsigned tries = 0;
    for (;;) {
        sched *first = new_sched(h, h->c, err, sizeof err);
        if (first && attach_store(h, h->c, first, err, sizeof err) == 0)
            break;
        if (!first || !store_is_remote(h)) {
            log_fatal("%s", err);
            return -1;
        }
        /* the store went away between the election and the first read */
        char why[512];
        if (!election_leading(h->el, why, sizeof why)) {
            log_error("%s: stepping down", why);
            return 0;
        }
        if (wait_for_store(h, sigfd, err, &tries)) {
            *rc = 0;
            return 1;
        }
    }
    if (tries)
        log_info("the store answers again: %s", dir);
    set_ready(h, 1, NULL);
    notify_send("STATUS=active: scheduling %s", dir);
    atomic_store(&h->turn_ms, clock_mono_ms());
    atomic_store(&h->looping, 1);
    int stop = 0, lost = 0;
    metrics_totals t0;
    metrics_get_totals(&t0);
    h->summary_ms = clock_mono_ms();
    h->summary_bound = t0.bound;
    while (!stop && !lost) {
        uint64_t now_turn = clock_mono_ms();
        atomic_store(&h->turn_ms, now_turn);
        summary(h, now_turn);
        if (h->watchdog_ms && now_turn - h->last_ping_ms >= h->watchdog_ms / 2) {
            notify_send("WATCHDOG=1");
            h->last_ping_ms = now_turn;
        }
        char why[512];
        if (!election_leading(h->el, why, sizeof why)) {
            log_error("%s: stepping down (no more bindings, not ready) and waiting for "
                      "the lock again",
                      why);
            lost = 1;
            break;
        }
        stop = turn(h, sigfd, rc);
    }
    atomic_store(&h->looping, 0);
    set_ready(h, 0, lost ? "stepped down: the state lock was lost" : "stopping");
    if (h->s) {
        /* the bindings in flight are finished first: they are counted */
        sched_stop(h->s);
        sched_stats ss;
        sched_get_stats(h->s, &ss);
        log_info("bound %zu workload(s); %zu binding error(s)", ss.bound_total, ss.bind_errors);
    }
    /* after a lost lock the fence refuses whatever is still in flight */
    close_sched(h);
    return lost ? 0 : 1;
}

/* Lead (waiting as a standby), be active, step down, wait again... until
 * stopped. The exit status. */
static int lead_loop(host *h, const char *dir, int sigfd)
{
    char err[2048];
    int rc = 2;
    for (;;) {
        int leading = take_lead(h, sigfd, err, sizeof err);
        if (leading < 0) {
            log_fatal("%s", err);
            return 2;
        }
        if (leading == 0)
            return 0;
        int r = be_active(h, dir, sigfd, &rc);
        if (r < 0)
            return 2;
        if (r == 1) {
            notify_send("STOPPING=1");
            return rc;
        }
        metrics_set_leader(0);
        notify_send("STATUS=stepped down: waiting for the state lock");
        election_resign(h->el);
    }
}

int run_main(const run_opts *o)
{
    char err[2048];
    host h;
    memset(&h, 0, sizeof h);
    h.o = o;
    pthread_mutex_init(&h.mu, NULL);
    h.store_fd = -1;
    /* every thread started from here on inherits the blocked signals */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    int rc = 2;
    http_server *http = NULL;
    if (sigfd < 0) {
        log_fatal("cannot create a signalfd: %s", strerror(errno));
        return 2;
    }
    h.start_ms = clock_mono_ms();
    h.c = xcalloc(1, sizeof *h.c);
    if (config_load_at(o->config, o->now, h.c, err, sizeof err) < 0) {
        log_fatal("%s", err);
        free(h.c);
        close(sigfd);
        return 2;
    }
    const char *sdir = store_dir(&h.c->store, o->state);
    if (!sdir && strcmp(h.c->store.type, "file") == 0) {
        log_fatal("no state directory: pass --state DIR or set store.path in %s", o->config);
        goto out;
    }
    char dir[512];
    state_where(&h, h.c, dir, sizeof dir);
    metrics_enable(1);
    metrics_set_sample_percent(h.c->plugin_metrics_sample_percent);
    metrics_set_ready(0);
    set_configz(&h, h.c);
    set_ready(&h, 0, "starting");
    if (start_http(&h, &http) < 0)
        goto out;
    set_configz(&h, h.c); /* with the address and port bound */
    atomic_store(&h.liveness_ms, h.c->liveness_timeout_ms);
    /* a network store has no directory: stuck plugins are not recorded */
    h.quarantine_path = sdir ? xasprintf("%s/%s", sdir, QUARANTINE_FILE) : NULL;
    guard_install(h.quarantine_path);
    h.watchdog_ms = notify_watchdog_ms();
    h.el = election_open(&h.c->store, o->state, err, sizeof err);
    if (!h.el) {
        log_fatal("%s", err);
        goto out;
    }
    notify_send("READY=1\nSTATUS=waiting for the state lock");
    rc = lead_loop(&h, dir, sigfd);
out:
    if (http)
        http_stop(http);
    election_free(h.el); /* releases the lock: a standby takes over */
    config_free(h.c);
    free(h.c);
    free(h.configz);
    free(h.http_address);
    free(h.quarantine_path);
    pthread_mutex_destroy(&h.mu);
    close(sigfd);
    metrics_reset();
    return rc;
}
