/*
 * trellis/embed.h - build a scheduler of your own on the trellis core.
 *
 * libtrellis (pkg-config trellis) is the host the trellis binary runs:
 * config, stores, queue, cache, cycles, plugin loader, HTTP service. A
 * custom scheduler links it, registers the plugins it carries inside its
 * own binary (built-in plugins, declared with TRELLIS_PLUGIN_AS and
 * compiled with TRELLIS_BUILTIN; see trellis/plugin.h), and then either
 * hands its command line to trellis_main, so it behaves as `trellis`
 * does, or drives one run itself with trellis_open / trellis_run_once.
 * A built-in plugin has the same descriptor, the same version checks and
 * the same listing in `plugins` as a loaded one; a profile naming it gets
 * it before any .so of that name.
 *
 * It includes only libc and trellis/plugin.h. Every function runs on the
 * main thread.
 */
#ifndef TRELLIS_EMBED_H
#define TRELLIS_EMBED_H

#include <stdio.h>

#include "trellis/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the trellis core ("0.1.0"). */
const char *trellis_version(void);

/* Register a plugin linked into this program, by the entry function
 * TRELLIS_PLUGIN_AS defines (trellis_builtin_<id>). Before anything loads
 * a config. 0, or -1 with err (a descriptor this host refuses, a name
 * registered twice). */
int trellis_register_builtin(trellis_plugin_entry_fn entry, char *err, size_t errlen);

/* The trellis command line on argv (argv[0] is the program's name); the
 * exit status trellis(1) documents. */
int trellis_main(int argc, char **argv);

/* A scheduler over a config file and a state directory (the file store;
 * NULL: the config's store.path), its plugins loaded (from
 * TRELLIS_PLUGIN_PATH first, then the config's plugin_dirs and the
 * installed plugin directory) and the state read.
 * dry_run: decide, write nothing. NULL with err naming the cause. */
typedef struct trellis_scheduler trellis_scheduler;
trellis_scheduler *trellis_open(const char *config_file, const char *state_dir, int dry_run,
                                char *err, size_t errlen);
/* Schedule every pending workload once and write the bindings back, as
 * `trellis schedule` does; the decisions go to out as `trellis schedule -o
 * json` prints them (out may be NULL). 0 when every decision was made and
 * written, 3 when some could not be written (err says why). */
int trellis_run_once(trellis_scheduler *s, FILE *out, char *err, size_t errlen);
/* How many workloads the last run placed, found unschedulable, failed. */
void trellis_counts(const trellis_scheduler *s, size_t *scheduled, size_t *unschedulable,
                    size_t *errors);
void trellis_close(trellis_scheduler *s);

/* Run as a service (`trellis run`): follow the state, schedule, bind,
 * serve HTTP on listen ("ADDRESS:PORT"; NULL: the config's http group)
 * until SIGTERM. The exit status. */
int trellis_serve(const char *config_file, const char *state_dir, const char *listen);

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_EMBED_H */
