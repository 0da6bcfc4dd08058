/*
 * run.h - `trellis run`: the long-running host.
 *
 * Loads the config, serves /healthz, /readyz, /configz and /metrics
 * (http.c), takes the state directory's lock (a second host waits as a
 * standby and takes over when the first exits), reads the store, and then
 * loops: finished bindings, store changes, timers, scheduling cycles, and
 * a poll on the store, the binder and the signals. SIGTERM and SIGINT
 * finish the bindings in flight and exit 0; SIGHUP reloads the config,
 * keeping the running one when the new one does not load.
 */
#ifndef TRELLIS_RUN_H
#define TRELLIS_RUN_H

#include <stddef.h>

typedef struct run_opts {
    const char *config;
    const char *state; /* NULL: the config's store path */
    char *const *dirs; /* extra plugin directories, searched first */
    size_t n_dirs;
    int parallelism;    /* 0: the config's */
    const char *listen; /* "ADDRESS:PORT" over the config's http group, or NULL */
    const char *now;    /* --now (RFC 3339): the clock starts there and runs; NULL: the system's */
} run_opts;

/* Exit status: 0 after SIGTERM/SIGINT, 2 when the host cannot start. */
int run_main(const run_opts *o);

#endif
