/*
 * help.c - see help.h: the commands of trellis as a table (name,
 * arguments, what it does, the options that apply, examples), from which
 * the general usage and each command's --help are printed, and the edit
 * distance that turns a typing slip into a suggestion.
 */
#include "config.h"

#include "help.h"

#include <stdlib.h>
#include <string.h>

/* One option's line in a help text. */
typedef struct opt_help {
    const char *key; /* what a command lists: its long name */
    const char *text;
} opt_help;

static const opt_help OPTS[] = {
    {"config", "  -c, --config FILE       config file (default %s)\n"},
    {"state", "  -s, --state DIR         state directory of manifests (default: the config's\n"
              "                          store.path)\n"},
    {"output", "  -o, --output FORMAT     table or json (default: table on a terminal, else "
               "json)\n"},
    {"explain", "      --explain           show every candidate target with each plugin's "
                "verdict\n"},
    {"dry-run", "  -n, --dry-run           decide and print; write nothing\n"},
    {"parallelism", "  -j, --parallelism N     worker threads (default: config, else CPUs up "
                    "to 16)\n"},
    {"plugin-dir", "  -P, --plugin-dir DIR    search DIR for plugins first (repeatable; also\n"
                   "                          TRELLIS_PLUGIN_PATH, colon separated)\n"},
    {"describe", "      --describe NAME     with 'plugins': print a plugin's arguments;\n"
                 "                          'validate --describe profile': every profile "
                 "setting\n"},
    {"profile", "      --profile NAME      the profile to act in (default: the first)\n"},
    {"budget", "      --budget N          move at most N workloads (default 10)\n"},
    {"ignore-daemonsets",
     "      --ignore-daemonsets leave workloads of a daemon owner kind (DaemonSet)\n"
     "                          in place instead of refusing\n"},
    {"force", "      --force             drain workloads that declare no controller too\n"},
    {"delete-emptydir-data",
     "      --delete-emptydir-data\n"
     "                          drain workloads with emptyDir volumes too\n"},
    {"disable-eviction", "      --disable-eviction  evict without asking disruption budgets\n"},
    {"stats", "      --stats FILE        write timings and memory as JSON to FILE\n"},
    {"html", "      --html FILE         write the report as one self-contained HTML page\n"},
    {"listen", "      --listen ADDR:PORT  serve HTTP there instead of the config's http "
               "group\n"},
    {"now", "      --now TIME          decide as at TIME (RFC 3339, e.g. "
            "2026-01-31T12:00:00Z)\n"
            "                          instead of the system clock; run: the clock starts "
            "there\n"},
    {"verbose", "  -v, --verbose           log more (repeat for debug)\n"},
    {"log-level", "      --log-level LEVEL   error, warn, info or debug\n"},
    {"log-format", "      --log-format FMT    text or json\n"},
    {"help", "  -h, --help              show this help\n"},
};

/* The options every command takes, after its own. */
#define COMMON_OPTS "verbose", "log-level", "log-format", "help"

typedef struct cmd_help {
    const char *name;
    const char *args;    /* after the name in the usage line */
    const char *summary; /* the line of the general usage */
    const char *text;    /* what it does, for its own help */
    const char *opts[16];
    const char *examples;
} cmd_help;

static const cmd_help CMDS[] = {
    {"schedule",
     "[OPTIONS]",
     "schedule every pending workload once and write the bindings back",
     "Read the state, schedule every pending workload once, write the bindings\n"
     "back and print the decisions. Exit status 3 when some decisions are error\n"
     "(not written, a plugin failed, a malformed workload).\n",
     {"config", "state", "output", "explain", "dry-run", "parallelism", "plugin-dir", "stats",
      "now", COMMON_OPTS},
     "  trellis schedule --config /etc/trellis/kube.cfg --state ./cluster --dry-run\n"
     "  trellis schedule -c kube.cfg -s ./cluster -o json --explain\n"},
    {"run",
     "[OPTIONS]",
     "run as a service: follow the state directory, schedule what is\n"
     "              pending, bind, retry; serve /healthz /readyz /configz /metrics",
     "Run as a service: follow the state directory, schedule what is pending,\n"
     "bind, retry; serve /healthz /readyz /configz /metrics. SIGHUP reloads the\n"
     "config, SIGTERM finishes the bindings in flight and exits 0.\n",
     {"config", "state", "listen", "parallelism", "plugin-dir", "now", COMMON_OPTS},
     "  trellis run -c /etc/trellis/trellis.cfg --listen 127.0.0.1:10259\n"
     "  trellis run -c kube.cfg -s ./cluster --log-format json --log-level info\n"},
    {"validate",
     "[FILE] [OPTIONS]",
     "check a config: syntax, plugins, their arguments",
     "Check a config (FILE, or --config, or the default): its syntax and\n"
     "settings, that every plugin it names loads, that their arguments match\n"
     "their tables and that their init succeeds. With --state DIR, also read\n"
     "the state and warn about every field path an argument names (field,\n"
     "..._field) that no object of the profile's kinds has: a typo there\n"
     "silently turns a filter off.\n",
     {"config", "state", "plugin-dir", "describe", COMMON_OPTS},
     "  trellis validate /etc/trellis/kube.cfg\n"
     "  trellis validate kube.cfg --state ./cluster\n"
     "  trellis validate --describe profile\n"},
    {"plugins",
     "[OPTIONS]",
     "list the plugins found in the plugin directories",
     "List the plugins found in the plugin directories (-P, TRELLIS_PLUGIN_PATH,\n"
     "the config's plugin_dirs, then the built-in directory): name, version,\n"
     "SDK, hooks and file; --describe NAME prints one plugin's arguments.\n",
     {"plugin-dir", "config", "describe", COMMON_OPTS},
     "  trellis plugins\n"
     "  trellis plugins --describe taint-toleration\n"},
    {"taint",
     "TARGET key[=value][:Effect] [OPTIONS]",
     "add a taint to a target (key[:Effect]- removes it)",
     "Add a taint to a target, or remove it with key[:Effect]-, as the profile's\n"
     "operator group says taints are kept.\n",
     {"config", "state", "profile", "dry-run", "plugin-dir", COMMON_OPTS},
     "  trellis taint -c kube.cfg -s ./cluster worker-a dedicated=gpu:NoSchedule\n"
     "  trellis taint -c kube.cfg -s ./cluster worker-a dedicated:NoSchedule-\n"},
    {"drain",
     "TARGET [OPTIONS]",
     "cordon a target and unbind every workload on it",
     "Cordon a target and unbind every workload on it; the next run places\n"
     "them elsewhere. Where the profile's targets have a cordon field\n"
     "(target.cordon_field, spec.unschedulable) it works as kubectl drain:\n"
     "DaemonSet-managed and mirror workloads stay, local storage and\n"
     "workloads without a controller need a flag, disruption budgets are\n"
     "respected, finished workloads are left alone.\n",
     {"config", "state", "profile", "dry-run", "ignore-daemonsets", "force", "delete-emptydir-data",
      "disable-eviction", "plugin-dir", COMMON_OPTS},
     "  trellis drain -c gardener.cfg -s ./garden aws-eu-1\n"
     "  trellis drain -c kube.cfg -s ./cluster worker-a --ignore-daemonsets\n"},
    {"uncordon",
     "TARGET [OPTIONS]",
     "remove the cordon taint or field",
     "Remove the cordon taint from a target, or its cordon field: what drain\n"
     "added, nothing else.\n",
     {"config", "state", "profile", "dry-run", "plugin-dir", COMMON_OPTS},
     "  trellis uncordon -c gardener.cfg -s ./garden aws-eu-1\n"},
    {"deschedule",
     "[OPTIONS]",
     "move workloads off targets holding more than their capacity",
     "Move workloads off targets holding more than the profile's capacity\n"
     "(operator.capacity_field), through ordinary scheduling cycles.\n",
     {"config", "state", "profile", "budget", "dry-run", "parallelism", "plugin-dir", COMMON_OPTS},
     "  trellis deschedule -c gardener.cfg -s ./garden --budget 5 --dry-run\n"},
    {"explain",
     "[KIND/][NAMESPACE/]NAME [OPTIONS]",
     "why a workload goes where it goes, or nowhere: every plugin's\n"
     "              verdict on every target; writes nothing",
     "Why a workload goes where it goes, or nowhere: every plugin's verdict on\n"
     "every target, as a matrix or JSON. Writes nothing.\n",
     {"config", "state", "profile", "output", "parallelism", "plugin-dir", "now", COMMON_OPTS},
     "  trellis explain -c kube.cfg -s ./cluster shop/search-indexer-0\n"
     "  trellis explain -c kube.cfg -s ./cluster -o json Pod/shop/payments-0\n"},
    {"targets",
     "[OPTIONS]",
     "every target with its workloads, taints, cordon and capacity",
     "Every target of each profile (or of --profile) with the workloads placed\n"
     "on it, its taints and whether it is cordoned (the profile's operator\n"
     "group), its capacity (operator.capacity_field) and whether a plugin\n"
     "refused it; then the pending workloads and those placed on a target that\n"
     "does not exist. Writes nothing.\n",
     {"config", "state", "profile", "output", "plugin-dir", "now", COMMON_OPTS},
     "  trellis targets -c kube.cfg -s ./cluster\n"
     "  trellis targets -c gardener.cfg -s ./garden -o json\n"},
    {"report",
     "--html FILE [OPTIONS]",
     "the state after a dry run as one HTML page",
     "Schedule as a dry run (nothing is written) and write the state after it\n"
     "as one self-contained HTML page: per target a bar of how full it is (of\n"
     "its capacity, operator.capacity_field, else of the fullest target), the\n"
     "workloads on it, where each workload of the run went, and the\n"
     "unschedulable ones grouped by the reason codes that rejected them.\n",
     {"html", "config", "state", "parallelism", "plugin-dir", "now", COMMON_OPTS},
     "  trellis report --html fleet.html -c kube.cfg -s ./cluster\n"},
    {"store",
     "copy SRC DST",
     "copy every object of one store into another (seed an etcd store\n"
     "              from manifests, export it back to a directory)",
     "Copy every object of the store SRC into the store DST. Each side is a\n"
     "state directory (the file store; DST is made when missing) or a config\n"
     "file whose store group names a store, such as store = { type = \"etcd\";\n"
     "endpoints = [ ... ]; } (nothing else of that file is read). Objects are\n"
     "written as they are, versions aside; one that DST holds already is not\n"
     "written and is named. Exit status 1 when some object was not copied, 2\n"
     "when a store cannot be opened or read.\n",
     {COMMON_OPTS},
     "  trellis store copy ./cluster etcd.cfg\n"
     "  trellis store copy etcd.cfg ./backup\n"},
    {"config",
     "convert FILE",
     "print a KubeSchedulerConfiguration as the trellis config it is\n"
     "              loaded as",
     "trellis reads kube-scheduler's configuration file (a YAML or JSON\n"
     "KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1) wherever it\n"
     "takes a config (-c): its profiles, plugins, weights, pluginConfig,\n"
     "extenders and queue settings, as kube-scheduler applies them. config\n"
     "convert FILE prints the trellis config FILE is translated into (libconfig,\n"
     "with a comment naming FILE); given with -c, it decides exactly as FILE\n"
     "does. A key trellis has no equivalent for is an error naming its line.\n"
     "Exit status 1 when FILE is a trellis config already, 2 when it does not\n"
     "load.\n",
     {COMMON_OPTS},
     "  trellis config convert kube-scheduler.yaml > kube-scheduler.cfg\n"
     "  trellis schedule -c kube-scheduler.yaml -s ./cluster --dry-run\n"},
    {"help",
     "[COMMAND]",
     "show this help, or a command's",
     "Show the general help, or the help of COMMAND.\n",
     {NULL},
     "  trellis help schedule\n"},
};

#define N_CMDS (sizeof CMDS / sizeof *CMDS)

static const cmd_help *find_cmd(const char *name)
{
    for (size_t i = 0; name && i < N_CMDS; i++)
        if (strcmp(CMDS[i].name, name) == 0)
            return &CMDS[i];
    return NULL;
}

int help_is_command(const char *name)
{
    return find_cmd(name) != NULL;
}

/* One option's text; the config option names the default config. */
static void print_opt(FILE *f, const char *key, const char *default_config)
{
    for (size_t i = 0; i < sizeof OPTS / sizeof *OPTS; i++)
        if (strcmp(OPTS[i].key, key) == 0) {
            if (strcmp(key, "config") == 0)
                fprintf(f, OPTS[i].text, default_config);
            else
                fputs(OPTS[i].text, f);
            return;
        }
}

void help_usage(FILE *f, const char *default_config, const char *plugin_dir)
{
    fputs("Usage: trellis [--help] [--version] COMMAND [OPTIONS]\n"
          "\n"
          "Place workloads onto targets through plugins.\n"
          "\n"
          "Commands (trellis COMMAND --help for one):\n",
          f);
    for (size_t i = 0; i < N_CMDS; i++) {
        const cmd_help *c = &CMDS[i];
        int wide = strlen(c->name) > 10;
        fprintf(f, "  %-10s%s%s\n", c->name, wide ? "\n            " : "  ", c->summary);
    }
    fputs("\nOptions (which apply to which command: trellis COMMAND --help):\n", f);
    for (size_t i = 0; i < sizeof OPTS / sizeof *OPTS; i++)
        print_opt(f, OPTS[i].key, default_config);
    fputs("  -V, --version           show the version and SDK version\n", f);
    fprintf(f,
            "\nPlugins are searched in -P, TRELLIS_PLUGIN_PATH, the config's plugin_dirs,\n"
            "then %s.\n",
            plugin_dir);
    fputs("\nExamples:\n", f);
    for (size_t i = 0; i < N_CMDS; i++)
        if (strcmp(CMDS[i].name, "help") != 0)
            fputs(CMDS[i].examples, f);
    fputs("\nSee trellis(1).\n", f);
}

int help_command(FILE *f, const char *name, const char *default_config)
{
    const cmd_help *c = find_cmd(name);
    if (!c)
        return -1;
    fprintf(f, "Usage: trellis %s %s\n\n%s", c->name, c->args, c->text);
    if (c->opts[0]) {
        fputs("\nOptions:\n", f);
        for (size_t i = 0; i < sizeof c->opts / sizeof *c->opts && c->opts[i]; i++)
            print_opt(f, c->opts[i], default_config);
    }
    fprintf(f, "\nExamples:\n%s\nSee trellis(1), COMMANDS, %s.\n", c->examples, c->name);
    return 0;
}

/* Levenshtein distance, one row at a time; words are short. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

const char *help_nearest(const char *word, const char *const *candidates)
{
    /* a slip: at most a third of the word wrong (at least one letter) */
    size_t limit = strlen(word) / 3 > 1 ? strlen(word) / 3 : 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; candidates[i]; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

const char *help_nearest_command(const char *word)
{
    const char *names[N_CMDS + 1];
    for (size_t i = 0; i < N_CMDS; i++)
        names[i] = CMDS[i].name;
    names[N_CMDS] = NULL;
    return help_nearest(word, names);
}
