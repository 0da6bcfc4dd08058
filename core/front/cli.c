/*
 * cli.c - see cli.h: the trellis command line.
 *
 * Parses options, loads the config, opens the store and the scheduler,
 * and prints decisions. Exit status: 0 when every decision was made and
 * written (unschedulable workloads included), 1 for bad usage, 2 when the
 * run cannot start (config, plugin, store), 3 when decisions were made but
 * some are error (not written back, or a plugin failed on the workload).
 */
#include "config.h"

#include <dirent.h>
#include <getopt.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#include "admin.h"
#include "args.h"
#include "cfg.h"
#include "clock.h"
#include "explain.h"
#include "fleet.h"
#include "guard.h"
#include "help.h"
#include "hostapi.h"
#include "log.h"
#include "output.h"
#include "pathcheck.h"
#include "plugin.h"
#include "quarantine.h"
#include "election.h"
#include "report.h"
#include "run.h"
#include "scheduler.h"
#include "store.h"
#include "storecopy.h"
#include "util.h"

#define DEFAULT_CONFIG TRELLIS_SYSCONFDIR "/trellis.cfg"

static void usage(FILE *f)
{
    help_usage(f, DEFAULT_CONFIG, TRELLIS_PLUGINDIR);
}

typedef struct opts {
    const char *cmd;
    const char *config;
    const char *state;
    const char *output;
    const char *describe;
    const char *profile;
    const char *stats;
    const char *listen;
    const char *now;  /* --now: overrides the config's */
    const char *html; /* report --html FILE */
    long budget;
    char *pos[4]; /* positional arguments after the command */
    size_t n_pos;
    int explain, dry_run, parallelism;
    drain_flags drain; /* drain: kubectl drain's flags */
    char **dirs;
    size_t n_dirs;
    char *env_path; /* owned copy of TRELLIS_PLUGIN_PATH */
} opts;

static void add_dir(opts *o, char *d)
{
    o->dirs = xrealloc(o->dirs, (o->n_dirs + 1) * sizeof *o->dirs);
    o->dirs[o->n_dirs++] = d;
}

enum {
    OPT_EXPLAIN = 256,
    OPT_DESCRIBE,
    OPT_LOG_LEVEL,
    OPT_LOG_FORMAT,
    OPT_PROFILE,
    OPT_BUDGET,
    OPT_STATS,
    OPT_LISTEN,
    OPT_NOW,
    OPT_HTML,
    OPT_IGNORE_DAEMONSETS,
    OPT_FORCE,
    OPT_DELETE_EMPTYDIR,
    OPT_DISABLE_EVICTION
};

/* --now TIME: 0, or -1 after saying what is wrong. */
static int take_now(opts *o, const char *arg)
{
    int64_t ms;
    if (clock_parse(arg, &ms) < 0) {
        fprintf(stderr,
                "trellis: --now: expected an RFC 3339 time such as 2026-01-31T12:00:00Z, "
                "got '%s'\n",
                arg);
        return -1;
    }
    o->now = arg;
    return 0;
}

/* An unknown command, with the nearest one when it looks like a slip. */
static void unknown_command(const char *cmd)
{
    const char *near = help_nearest_command(cmd);
    fprintf(stderr, "trellis: unknown command '%s'", cmd);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, "\nTry 'trellis --help'.\n");
}

/* getopt_long's '?' (unknown option) or ':' (no argument for it), with
 * the nearest long option to an unknown one. */
static void bad_option(int ch, char **argv, const struct option *longopts, const char *cmd)
{
    const char *arg = argv[optind - 1];
    if (ch == ':') {
        if (strncmp(arg, "--", 2) == 0)
            fprintf(stderr, "trellis: option '%.*s' needs an argument\n", (int)strcspn(arg, "="),
                    arg);
        else
            fprintf(stderr, "trellis: option '-%c' needs an argument\n", optopt);
    } else if (optopt) {
        fprintf(stderr, "trellis: unknown option '-%c'\n", optopt);
    } else {
        char word[64];
        const char *names[32];
        size_t n = 0;
        snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        for (; longopts[n].name && n < sizeof names / sizeof *names - 1; n++)
            names[n] = longopts[n].name;
        names[n] = NULL;
        const char *near = help_nearest(word, names);
        fprintf(stderr, "trellis: unknown option '%s'", arg);
        if (near)
            fprintf(stderr, "; did you mean '--%s'?", near);
        fputc('\n', stderr);
    }
    if (cmd && help_is_command(cmd))
        fprintf(stderr, "Try 'trellis %s --help'.\n", cmd);
    else
        fprintf(stderr, "Try 'trellis --help'.\n");
}

/* --help, and exit: trellis COMMAND --help prints that command's. */
_Noreturn static void show_help(const char *cmd)
{
    if (cmd && help_command(stdout, cmd, DEFAULT_CONFIG) < 0) {
        unknown_command(cmd);
        exit(1);
    }
    if (!cmd)
        usage(stdout);
    exit(0);
}

/* One option of getopt_long: 0, or -1 after saying what is wrong. --help
 * and --version print and exit. */
static int take_option(opts *o, int ch)
{
    switch (ch) {
    case 'c':
        o->config = optarg;
        break;
    case 's':
        o->state = optarg;
        break;
    case 'o':
        if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0) {
            log_fatal("--output: expected table or json, got '%s'", optarg);
            return -1;
        }
        o->output = optarg;
        break;
    case OPT_EXPLAIN:
        o->explain = 1;
        break;
    case 'n':
        o->dry_run = 1;
        break;
    case 'j': {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v < 1 || v > 256) {
            log_fatal("--parallelism: expected 1..256, got '%s'", optarg);
            return -1;
        }
        o->parallelism = (int)v;
        break;
    }
    case 'P':
        add_dir(o, optarg);
        break;
    case OPT_DESCRIBE:
        o->describe = optarg;
        break;
    case OPT_PROFILE:
        o->profile = optarg;
        break;
    case OPT_STATS:
        o->stats = optarg;
        break;
    case OPT_LISTEN:
        o->listen = optarg;
        break;
    case OPT_NOW:
        return take_now(o, optarg);
    case OPT_HTML:
        o->html = optarg;
        break;
    case OPT_IGNORE_DAEMONSETS:
        o->drain.ignore_daemonsets = 1;
        break;
    case OPT_FORCE:
        o->drain.force = 1;
        break;
    case OPT_DELETE_EMPTYDIR:
        o->drain.delete_emptydir_data = 1;
        break;
    case OPT_DISABLE_EVICTION:
        o->drain.disable_eviction = 1;
        break;
    case OPT_BUDGET: {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v < 0) {
            log_fatal("--budget: expected a number >= 0, got '%s'", optarg);
            return -1;
        }
        o->budget = v;
        break;
    }
    case 'v':
        if (log_get_level() < TRELLIS_LOG_DEBUG)
            log_set_level(log_get_level() + 1);
        break;
    case OPT_LOG_LEVEL: {
        int l = log_parse_level(optarg);
        if (l < 0) {
            fprintf(stderr,
                    "trellis: --log-level: expected error, warn, info or debug, "
                    "got '%s'\n",
                    optarg);
            return -1;
        }
        log_set_level((trellis_log_level)l);
        break;
    }
    case OPT_LOG_FORMAT:
        if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0) {
            log_fatal("--log-format: expected text or json, got '%s'", optarg);
            return -1;
        }
        log_set_json(strcmp(optarg, "json") == 0);
        break;
    case 'h':
        show_help(o->cmd);
    case 'V':
        printf("trellis %s (plugin SDK %d.%d; stores: file%s)\n", PACKAGE_VERSION,
               TRELLIS_SDK_MAJOR, TRELLIS_SDK_MINOR,
               store_type_built("etcd") ? " etcd kubernetes" : "");
        exit(0);
    default:
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"state", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"dry-run", no_argument, NULL, 'n'},
        {"parallelism", required_argument, NULL, 'j'},
        {"plugin-dir", required_argument, NULL, 'P'},
        {"describe", required_argument, NULL, OPT_DESCRIBE},
        {"profile", required_argument, NULL, OPT_PROFILE},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"stats", required_argument, NULL, OPT_STATS},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"now", required_argument, NULL, OPT_NOW},
        {"html", required_argument, NULL, OPT_HTML},
        {"ignore-daemonsets", no_argument, NULL, OPT_IGNORE_DAEMONSETS},
        {"force", no_argument, NULL, OPT_FORCE},
        {"delete-emptydir-data", no_argument, NULL, OPT_DELETE_EMPTYDIR},
        {"disable-eviction", no_argument, NULL, OPT_DISABLE_EVICTION},
        {"verbose", no_argument, NULL, 'v'},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    int ch;
    opterr = 0; /* bad_option says it, with a suggestion */
    while ((ch = getopt_long(argc, argv, "+:c:s:o:nj:P:vhV", longopts, NULL)) != -1) {
        if (ch == '?' || ch == ':') {
            bad_option(ch, argv, longopts, o->cmd);
            return -1;
        }
        if (take_option(o, ch) < 0)
            return -1;
    }
    /* the command, then options and positional arguments in any order */
    if (optind < argc && !o->cmd)
        o->cmd = argv[optind++];
    while (optind < argc && argv[optind][0] != '-') {
        if (o->n_pos == sizeof o->pos / sizeof *o->pos) {
            fprintf(stderr, "trellis: unexpected argument '%s'\nTry 'trellis --help'.\n",
                    argv[optind]);
            return -1;
        }
        o->pos[o->n_pos++] = argv[optind++];
    }
    if (optind < argc) {
        int rest = argc - optind + 1;
        char **sub = argv + optind - 1;
        optind = 1;
        return parse(rest, sub, o);
    }
    if (o->cmd && strcmp(o->cmd, "validate") == 0 && !o->config && o->n_pos) {
        o->config = o->pos[0];
        memmove(o->pos, o->pos + 1, --o->n_pos * sizeof *o->pos);
    }
    const char *env = getenv("TRELLIS_PLUGIN_PATH");
    if (env && *env && !o->env_path) {
        o->env_path = xstrdup(env);
        for (char *tok = strtok(o->env_path, ":"); tok; tok = strtok(NULL, ":"))
            add_dir(o, tok);
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* --stats: what a benchmark needs, measured inside the process so reading
 * the manifests and scheduling are reported apart. */
static int write_stats(const char *file, sched *s)
{
    FILE *f = strcmp(file, "-") == 0 ? stderr : fopen(file, "w");
    if (!f) {
        log_fatal("--stats %s: %m", file);
        return -1;
    }
    size_t n;
    const uint32_t *times = sched_cycle_times(s, &n);
    uint32_t *v = xmalloc((n ? n : 1) * sizeof *v);
    if (n)
        memcpy(v, times, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_u32);
    double p50 = n ? v[(n - 1) / 2] / 1e3 : 0, p99 = n ? v[(n - 1) * 99 / 100] / 1e3 : 0;
    free(v);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    sched_stats ss;
    sched_get_stats(s, &ss);
    double sched_s = (double)ss.schedule_ns / 1e9;
    fprintf(f,
            "{\"targets\": %zu, \"workloads\": %zu, \"pending\": %zu, \"decisions\": %zu, "
            "\"cycles\": %zu, \"workers\": %d, \"load_s\": %.6f, \"schedule_s\": %.6f, "
            "\"write_s\": %.6f, "
            "\"decisions_per_s\": %.1f, \"p50_us\": %.2f, \"p99_us\": %.2f, "
            "\"equivalence_hits\": %llu, \"equivalence_score_hits\": %llu, "
            "\"equivalence_targets_reevaluated\": %llu, "
            "\"peak_rss_kib\": %ld}\n",
            ss.targets_loaded, ss.workloads_loaded, ss.pending, ss.decisions, n, (int)ss.workers,
            (double)ss.load_ns / 1e9, sched_s, (double)ss.write_ns / 1e9,
            sched_s > 0 ? (double)ss.decisions / sched_s : 0.0, p50, p99,
            (unsigned long long)ss.eq_hits, (unsigned long long)ss.eq_score_hits,
            (unsigned long long)ss.eq_reevaluated, ru.ru_maxrss);
    if (f != stderr)
        fclose(f);
    return 0;
}

/* Commands that place workloads (schedule, deschedule) write only while
 * they hold the state lock: a second scheduler on the same state would
 * book the same capacity twice. Taints, drains and uncordons edit the
 * state as any client does (a file changed meanwhile is never
 * overwritten) and need no lock. 0 with the lock held (or nothing to
 * hold: a dry run), or -1 after saying why. */
/* validate --describe profile: every profile setting. */
static int describe_settings(const char *what)
{
    if (strcmp(what, "profile") != 0) {
        log_fatal("validate --describe: expected 'profile', got '%s'", what);
        return 1;
    }
    printf("Settings of a profile (profiles = ( { ... } ); in the config file):\n");
    config_describe_profile(stdout);
    return 0;
}

/* Read the state, schedule once, print the decisions; the exit status. */
static int schedule_and_print(const opts *o, sched *s, store *st, const char *dir)
{
    char err[2048];
    int rc = 0;
    sched_stats ss;
    if (sched_load(s, st, err, sizeof err) < 0) {
        log_fatal("%s", err);
        rc = 2;
    } else {
        sched_get_stats(s, &ss);
        log_info("loaded %zu targets and %zu workloads (%zu pending) from %s in %.1f ms",
                 ss.targets_loaded, ss.workloads_loaded, ss.pending, dir, (double)ss.load_ns / 1e6);
        if (sched_run_once(s, err, sizeof err) < 0) {
            log_fatal("not written: %s", err);
            rc = 3;
        }
        sched_get_stats(s, &ss);
        log_info("scheduled in %.1f ms", (double)ss.schedule_ns / 1e6);
        if (o->html) {
            char title[1024];
            snprintf(title, sizeof title, "%s on %s", o->config ? o->config : DEFAULT_CONFIG, dir);
            if (report_write_html(o->html, s, title, err, sizeof err) < 0) {
                log_fatal("report: %s", err);
                return 2;
            }
            printf("%s: the state after a dry run of %s\n", o->html, title);
            return rc;
        }
        int json = o->output ? strcmp(o->output, "json") == 0 : !isatty(STDOUT_FILENO);
        size_t errors = json ? output_json(stdout, s) : output_table(stdout, s);
        /* an error decision is a workload not placed for a reason that
         * is not "nothing fits": a script must not take it for success */
        if (errors && rc == 0)
            rc = 3;
        if (ss.manifest_errors)
            log_fatal("%zu malformed document%s skipped (see above)", ss.manifest_errors,
                      ss.manifest_errors == 1 ? "" : "s");
        if (o->stats)
            write_stats(o->stats, s); /* says why it failed; the run itself is done */
    }
    return rc;
}

/* validate: the config has loaded into s; with --state, its field paths
 * are checked against that state's objects too. The exit status. */
static int validate_state(const opts *o, const cfg *c, sched *s, const char *file)
{
    char err[2048];
    size_t n = 0, warned = 0;
    for (size_t i = 0; i < c->n_profiles; i++)
        n += c->profiles[i].n_plugins;
    if (o->state) {
        store *st = store_open(&c->store, o->state, 1, err, sizeof err);
        if (!st || sched_load(s, st, err, sizeof err) < 0) {
            log_fatal("%s", err);
            if (st)
                st->ops->destroy(st);
            return 2;
        }
        warned = pathcheck_run(s, file, stderr);
        st->ops->destroy(st);
    }
    printf("%s: ok (%zu profile%s, %zu plugin instance%s", file, c->n_profiles,
           c->n_profiles == 1 ? "" : "s", n, n == 1 ? "" : "s");
    if (o->state)
        printf("; %zu field path%s no object in %s has", warned, warned == 1 ? "" : "s", o->state);
    printf(")\n");
    if (c->notice)
        printf("note: %s\n", c->notice);
    return 0;
}

static int cmd_schedule(opts *o, int validate_only)
{
    if (validate_only && o->describe)
        return describe_settings(o->describe);
    char err[2048];
    cfg c;
    const char *file = o->config ? o->config : DEFAULT_CONFIG;
    if (config_load_at(file, o->now, &c, err, sizeof err) < 0) {
        log_fatal("%s", err);
        return 2;
    }
    const char *dir = store_dir(&c.store, o->state);
    int have_store = dir || strcmp(c.store.type, "file") != 0;
    char *qpath = dir && !validate_only ? xasprintf("%s/%s", dir, QUARANTINE_FILE) : NULL;
    /* a plugin that crashes or hangs is named; a dry run records nothing */
    guard_install(o->dry_run ? NULL : qpath);
    guard_watch(NULL, NULL, 0);
    sched *s = sched_open(&c, o->dirs, o->n_dirs, o->parallelism, err, sizeof err);
    if (!s) {
        log_fatal("%s", err);
        config_free(&c);
        free(qpath);
        return 2;
    }
    if (validate_only) {
        int rc = validate_state(o, &c, s, file);
        sched_close(s);
        config_free(&c);
        return rc;
    }
    if (!have_store) {
        log_fatal("no state directory: give --state DIR or store.path in %s", file);
        sched_close(s);
        config_free(&c);
        return 1;
    }
    store *st = store_open(&c.store, o->state, o->dry_run, err, sizeof err);
    if (!st) {
        log_fatal("%s", err);
        sched_close(s);
        config_free(&c);
        free(qpath);
        return 2;
    }
    sched_set_quarantine(s, qpath, o->dry_run);
    free(qpath);
    election *lead = election_hold(&c.store, o->state, o->dry_run, st, err, sizeof err);
    if (!lead) {
        log_fatal("%s", err);
        sched_close(s);
        st->ops->destroy(st);
        config_free(&c);
        return 2;
    }
    sched_set_explain(s, o->explain);
    sched_set_progress(s, isatty(STDERR_FILENO));
    int rc = schedule_and_print(o, s, st, dir);
    sched_close(s);
    st->ops->destroy(st);
    election_free(lead);
    config_free(&c);
    return rc;
}

static void report_move(void *ud, const trellis_object *w, const char *from, const char *to,
                        const char *why)
{
    int dry = *(int *)ud;
    if (to)
        printf("%s/%s: %s -> %s%s\n", w->kind, w->key, from, to, dry ? " (dry run)" : "");
    else
        printf("%s/%s: stays on %s: %s\n", w->kind, w->key, from, why ? why : "");
}

/* --profile NAME's profile, or the first; NULL when there is no such. */
static profile *pick_profile(const sched *s, const char *name)
{
    if (!name)
        return sched_profile_at(s, 0);
    for (size_t i = 0; i < sched_profile_count(s); i++)
        if (strcmp(profile_name(sched_profile_at(s, i)), name) == 0)
            return sched_profile_at(s, i);
    return NULL;
}

/* taint, drain, uncordon or deschedule on the loaded state; the exit
 * status. */
static int admin_command(opts *o, sched *s, profile *p, store *st)
{
    char err[2048];
    const char *cmd = o->cmd;
    int r;
    if (strcmp(cmd, "taint") == 0)
        r = admin_taint(s, p, o->pos[0], o->pos[1], stdout, err, sizeof err);
    else if (strcmp(cmd, "drain") == 0) {
        o->drain.dry_run = o->dry_run;
        r = admin_drain(s, p, o->pos[0], &o->drain, stdout, err, sizeof err);
    } else if (strcmp(cmd, "uncordon") == 0)
        r = admin_uncordon(s, p, o->pos[0], o->dry_run, stdout, err, sizeof err);
    else {
        r = sched_deschedule(s, p, o->budget >= 0 ? (size_t)o->budget : 10, report_move,
                             &o->dry_run, err, sizeof err);
        if (r < 0) {
            log_fatal("deschedule: not written: %s", err);
            return 3;
        }
        printf("%d moved%s\n", r, o->dry_run ? " (dry run: nothing written)" : "");
        return 0;
    }
    if (r == -2) {
        /* refused after the cordon, which stands (kubectl's way) */
        char ferr[1024];
        if (st->ops->flush(st, NULL, NULL, ferr, sizeof ferr) < 0)
            log_fatal("not written: %s", ferr);
        log_fatal("%s: %s", cmd, err);
        return 2;
    }
    if (r < 0) {
        log_fatal("%s: %s", cmd, err);
        return 2;
    }
    if (st->ops->flush(st, NULL, NULL, err, sizeof err) < 0) {
        log_fatal("not written: %s", err);
        return 3;
    }
    return 0;
}

/* taint, drain, uncordon, deschedule: load the state, change it, flush. */
static int cmd_admin(opts *o)
{
    const char *cmd = o->cmd;
    int deschedule = strcmp(cmd, "deschedule") == 0;
    size_t need = strcmp(cmd, "taint") == 0 ? 2 : deschedule ? 0 : 1;
    if (o->n_pos != need) {
        fprintf(stderr, "trellis: %s: expected %s\nTry 'trellis %s --help'.\n", cmd,
                need == 2 ? "TARGET and a taint (key[=value][:Effect] or key[:Effect]-)"
                : need    ? "one TARGET"
                          : "no positional argument",
                cmd);
        return 1;
    }
    char err[2048];
    cfg c;
    const char *file = o->config ? o->config : DEFAULT_CONFIG;
    if (config_load_at(file, o->now, &c, err, sizeof err) < 0) {
        log_fatal("%s", err);
        return 2;
    }
    int rc = 0;
    store *st = NULL;
    election *lead = NULL;
    sched *s = sched_open(&c, o->dirs, o->n_dirs, o->parallelism, err, sizeof err);
    if (!s) {
        log_fatal("%s", err);
        rc = 2;
        goto out;
    }
    profile *p = pick_profile(s, o->profile);
    if (!p) {
        log_fatal("no profile named '%s' in %s", o->profile, file);
        rc = 1;
        goto out;
    }
    if (deschedule && !profile_cfg(p)->capacity_field) {
        log_fatal("deschedule: profile '%s' in %s has no capacity_field", profile_name(p), file);
        rc = 1;
        goto out;
    }
    if (!store_dir(&c.store, o->state) && strcmp(c.store.type, "file") == 0) {
        log_fatal("no state directory: give --state DIR or store.path in %s", file);
        rc = 1;
        goto out;
    }
    st = store_open(&c.store, o->state, o->dry_run, err, sizeof err);
    if (!st) {
        log_fatal("%s", err);
        rc = 2;
        goto out;
    }
    if (deschedule &&
        !(lead = election_hold(&c.store, o->state, o->dry_run, st, err, sizeof err))) {
        log_fatal("%s", err);
        rc = 2;
        goto out;
    }
    if (sched_load(s, st, err, sizeof err) < 0) {
        log_fatal("%s", err);
        rc = 2;
        goto out;
    }
    rc = admin_command(o, s, p, st);
out:
    sched_close(s);
    if (st)
        st->ops->destroy(st);
    election_free(lead);
    config_free(&c);
    return rc;
}

/* A read-only look at the state (explain, targets): the config, the
 * scheduler and the state read through a dry-run store, in *v. 0, or the
 * exit status after saying why (everything opened is closed then). */
typedef struct look {
    cfg c;
    sched *s;
    store *st;
} look;

static void look_close(look *v)
{
    sched_close(v->s);
    if (v->st)
        v->st->ops->destroy(v->st);
    config_free(&v->c);
}

static int look_open(const opts *o, look *v)
{
    char err[2048];
    const char *file = o->config ? o->config : DEFAULT_CONFIG;
    memset(v, 0, sizeof *v);
    if (config_load_at(file, o->now, &v->c, err, sizeof err) < 0) {
        log_fatal("%s", err);
        return 2;
    }
    int have_store = store_dir(&v->c.store, o->state) || strcmp(v->c.store.type, "file") != 0;
    int rc = 0;
    v->s = sched_open(&v->c, o->dirs, o->n_dirs, o->parallelism, err, sizeof err);
    if (!v->s || (have_store && !(v->st = store_open(&v->c.store, o->state, 1, err, sizeof err))) ||
        (v->st && sched_load(v->s, v->st, err, sizeof err) < 0)) {
        log_fatal("%s", err);
        rc = 2;
    } else if (!have_store) {
        log_fatal("no state directory: give --state DIR or store.path in %s", file);
        rc = 1;
    }
    if (rc)
        look_close(v);
    return rc;
}

/* -o json, or JSON when standard output is no terminal */
static int want_json(const opts *o)
{
    return o->output ? strcmp(o->output, "json") == 0 : !isatty(STDOUT_FILENO);
}

/* explain: load the state as schedule does, through a dry-run store, and
 * evaluate one workload against every target (explain.c). */
static int cmd_explain(opts *o)
{
    if (o->n_pos != 1) {
        fprintf(stderr, "trellis: explain: expected one workload: NAME, NAMESPACE/NAME, "
                        "KIND/NAME or KIND/NAMESPACE/NAME\nTry 'trellis explain --help'.\n");
        return 1;
    }
    char err[2048];
    look v;
    int rc = look_open(o, &v);
    if (rc)
        return rc;
    trellis_object *w;
    profile *p;
    if (explain_find(v.s, o->pos[0], o->profile, &w, &p, err, sizeof err) < 0) {
        log_fatal("explain: %s", err);
        rc = 1;
    } else {
        explain_result r;
        explain_run(v.s, p, w, &r);
        if (want_json(o))
            explain_print_json(stdout, &r);
        else
            explain_print_table(stdout, &r);
        explain_free(&r);
    }
    look_close(&v);
    return rc;
}

/* report --html FILE: a dry run with every verdict recorded, as a page
 * (report.c). */
static int cmd_report(opts *o)
{
    if (!o->html || o->n_pos) {
        fprintf(stderr, "trellis: report: expected --html FILE and no other argument\n"
                        "Try 'trellis report --help'.\n");
        return 1;
    }
    o->dry_run = 1;
    o->explain = 1;
    return cmd_schedule(o, 0);
}

/* targets: every target with what is placed on it (fleet.c). */
static int cmd_targets(opts *o)
{
    if (o->n_pos) {
        fprintf(stderr,
                "trellis: targets: unexpected argument '%s'\n"
                "Try 'trellis targets --help'.\n",
                o->pos[0]);
        return 1;
    }
    look v;
    int rc = look_open(o, &v);
    if (rc)
        return rc;
    profile *p = o->profile ? pick_profile(v.s, o->profile) : NULL;
    if (o->profile && !p) {
        log_fatal("no profile named '%s' in %s", o->profile, v.c.file);
        rc = 1;
    } else {
        fleet_print(stdout, v.s, p, want_json(o));
    }
    look_close(&v);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One plugin of `trellis plugins`: its row (and arguments), or, with
 * --describe NAME and that name, its description; *found is set then. */
static void show_plugin(const opts *o, plugin_module *m, int *found)
{
    const trellis_plugin_desc *ds = m->desc;
    char hooks[512];
    /* run init with default arguments to learn the hooks */
    registry_probe_hooks(m, hostapi_table(), hooks, sizeof hooks);
    if (o->describe) {
        if (strcmp(o->describe, ds->name) != 0)
            return;
        *found = 1;
        printf("%s %s (runs on SDK %d.%d and newer) - %s\n", ds->name,
               ds->version ? ds->version : "", ds->sdk_major, ds->sdk_minor,
               ds->description ? ds->description : "");
        printf("file:  %s\nhooks: %s\n", m->path, hooks);
        printf("arguments:\n");
        if (!ds->args || !ds->args[0].key)
            printf("  (none)\n");
        for (const trellis_arg_spec *as = ds->args; as && as->key; as++)
            printf("  %-22s %-12s default %-18s %s\n", as->key, args_type_name(as->type),
                   as->default_value ? (*as->default_value ? as->default_value : "\"\"")
                                     : "(required)",
                   as->doc ? as->doc : "");
        return;
    }
    char sdk[16];
    snprintf(sdk, sizeof sdk, "%d.%d", ds->sdk_major, ds->sdk_minor);
    printf("%-20s %-8s %-5s %-60s %s\n", ds->name, ds->version ? ds->version : "", sdk, hooks,
           m->path);
    strbuf ab;
    sb_init(&ab);
    for (const trellis_arg_spec *as = ds->args; as && as->key; as++)
        sb_printf(&ab, "%s%s (%s%s%s)", ab.len ? ", " : "", as->key, args_type_name(as->type),
                  as->default_value ? " = " : ", required",
                  as->default_value ? as->default_value : "");
    printf("%-20s args: %s\n", "", ab.len ? ab.s : "none");
    sb_free(&ab);
}

/* The plugins names already shown, with where they came from. */
typedef struct seen_list {
    char **v; /* name, origin, name, origin, ... */
    size_t n;
} seen_list;

static const char *seen_before(const seen_list *s, const char *name)
{
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->v[2 * k], name) == 0)
            return s->v[2 * k + 1];
    return NULL;
}

static void seen_add(seen_list *s, const char *name, const char *origin)
{
    s->v = xrealloc(s->v, (s->n + 1) * 2 * sizeof *s->v);
    s->v[2 * s->n] = xstrdup(name);
    s->v[2 * s->n + 1] = xstrdup(origin);
    s->n++;
}

/* Every .so of dir, in name order; 2 when one is broken (listing only). */
static int list_dir(const opts *o, const char *dir, seen_list *seen, int *found)
{
    char err[2048];
    int rc = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    char **files = NULL;
    size_t nf = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (str_endswith(e->d_name, ".so")) {
            files = xrealloc(files, (nf + 1) * sizeof *files);
            files[nf++] = xasprintf("%s/%s", dir, e->d_name);
        }
    closedir(dp);
    if (nf)
        qsort(files, nf, sizeof *files, cmp_str);
    for (size_t i = 0; i < nf; i++) {
        plugin_module m;
        if (registry_open_file(files[i], &m, err, sizeof err) < 0) {
            /* a broken file is worth an error when listing, not when
             * describing another plugin */
            if (!o->describe) {
                log_fatal("%s", err);
                rc = 2;
            }
        } else if (seen_before(seen, m.desc->name)) {
            /* the first one found is the one a profile would load */
            if (!o->describe)
                fprintf(stderr,
                        "trellis: %s: plugin name '%s' is declared by %s "
                        "already; this file is not used\n",
                        files[i], m.desc->name, seen_before(seen, m.desc->name));
            registry_close_file(&m);
        } else {
            seen_add(seen, m.desc->name, files[i]);
            show_plugin(o, &m, found);
            registry_close_file(&m);
        }
        free(files[i]);
    }
    free(files);
    return rc;
}

static int cmd_plugins(opts *o)
{
    char err[2048];
    cfg c;
    int have_cfg = 0;
    if (o->config) {
        if (config_load_at(o->config, o->now, &c, err, sizeof err) < 0) {
            log_fatal("%s", err);
            return 2;
        }
        have_cfg = 1;
    }
    char **dirs = xcalloc(o->n_dirs + (have_cfg ? c.n_plugin_dirs : 0) + 1, sizeof *dirs);
    size_t nd = 0;
    for (size_t i = 0; i < o->n_dirs; i++)
        dirs[nd++] = o->dirs[i];
    for (size_t i = 0; have_cfg && i < c.n_plugin_dirs; i++)
        dirs[nd++] = c.plugin_dirs[i];
    dirs[nd++] = (char *)TRELLIS_PLUGINDIR;

    int rc = 0, found = 0;
    if (!o->describe)
        printf("%-20s %-8s %-5s %-60s %s\n", "NAME", "VERSION", "SDK", "HOOKS", "FILE");
    seen_list seen = {NULL, 0};
    /* plugins linked into this binary come first: a profile gets them */
    const trellis_plugin_desc *bd;
    for (size_t i = 0; (bd = registry_builtin(i)); i++) {
        plugin_module m = {.path = "(built-in)", .desc = bd};
        seen_add(&seen, bd->name, "(built-in)");
        show_plugin(o, &m, &found);
    }
    for (size_t d = 0; d < nd; d++)
        if (list_dir(o, dirs[d], &seen, &found))
            rc = 2;
    for (size_t k = 0; k < 2 * seen.n; k++)
        free(seen.v[k]);
    free(seen.v);
    free(dirs);
    if (have_cfg)
        config_free(&c);
    if (o->describe && !found) {
        log_fatal("plugin '%s' not found", o->describe);
        return 2;
    }
    return rc;
}

/* trellis config convert FILE: a KubeSchedulerConfiguration as the
 * trellis config it is loaded as (kubesched.h), which, given with -c,
 * decides as FILE does. */
static int cmd_config(const opts *o)
{
    if (o->n_pos != 2 || strcmp(o->pos[0], "convert") != 0) {
        fprintf(stderr, "trellis: config: expected 'trellis config convert FILE'\n"
                        "Try 'trellis config --help'.\n");
        return 1;
    }
    char err[2048];
    cfg c;
    if (config_load(o->pos[1], &c, err, sizeof err) < 0) {
        log_fatal("%s", err);
        return 2;
    }
    if (!c.kube_config) {
        log_fatal("%s is a trellis config already: config convert reads a "
                  "KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1)",
                  o->pos[1]);
        config_free(&c);
        return 1;
    }
    printf("# trellis config converted by `trellis config convert` from the\n"
           "# KubeSchedulerConfiguration %s; loaded with -c it decides as that file does.\n",
           o->pos[1]);
    if (c.notice)
        printf("# %s\n", c.notice);
    printf("\n");
    fflush(stdout);
    config_write(&c.lc, stdout);
    config_free(&c);
    return 0;
}

/* trellis store copy SRC DST */
static int cmd_store(const opts *o)
{
    if (o->n_pos != 3 || strcmp(o->pos[0], "copy") != 0) {
        log_fatal("store: expected 'trellis store copy SRC DST' (each a state directory or a "
                  "config file with a store group); see trellis store --help");
        return 1;
    }
    return storecopy_main(o->pos[1], o->pos[2], stdout);
}

int cli_main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    o.budget = -1;
    if (parse(argc, argv, &o) < 0)
        return 1;
    int rc;
    if (!o.cmd) {
        usage(stderr);
        rc = 1;
    } else if (strcmp(o.cmd, "schedule") == 0) {
        rc = cmd_schedule(&o, 0);
    } else if (strcmp(o.cmd, "validate") == 0) {
        rc = cmd_schedule(&o, 1);
    } else if (strcmp(o.cmd, "plugins") == 0) {
        rc = cmd_plugins(&o);
    } else if (strcmp(o.cmd, "taint") == 0 || strcmp(o.cmd, "drain") == 0 ||
               strcmp(o.cmd, "uncordon") == 0 || strcmp(o.cmd, "deschedule") == 0) {
        rc = cmd_admin(&o);
    } else if (strcmp(o.cmd, "run") == 0) {
        run_opts ro = {o.config ? o.config : DEFAULT_CONFIG,
                       o.state,
                       o.dirs,
                       o.n_dirs,
                       o.parallelism,
                       o.listen,
                       o.now};
        rc = run_main(&ro);
    } else if (strcmp(o.cmd, "explain") == 0) {
        rc = cmd_explain(&o);
    } else if (strcmp(o.cmd, "targets") == 0) {
        rc = cmd_targets(&o);
    } else if (strcmp(o.cmd, "report") == 0) {
        rc = cmd_report(&o);
    } else if (strcmp(o.cmd, "store") == 0) {
        rc = cmd_store(&o);
    } else if (strcmp(o.cmd, "config") == 0) {
        rc = cmd_config(&o);
    } else if (strcmp(o.cmd, "help") == 0) {
        /* trellis help COMMAND: that command's */
        rc = 0;
        if (!o.n_pos)
            usage(stdout);
        else if (help_command(stdout, o.pos[0], DEFAULT_CONFIG) < 0) {
            unknown_command(o.pos[0]);
            rc = 1;
        }
    } else {
        unknown_command(o.cmd);
        rc = 1;
    }
    free(o.dirs);
    free(o.env_path);
    guard_unwatch();
    registry_release_retired();
    return rc;
}
