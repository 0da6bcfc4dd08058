/*
 * embed.c - sdk/trellis/embed.h: the core as a library for custom
 * schedulers. A thin layer over the same modules the trellis binary uses.
 */
#include "config.h"

#include "trellis/embed.h"

#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "cli.h"
#include "guard.h"
#include "output.h"
#include "plugin.h"
#include "quarantine.h"
#include "run.h"
#include "scheduler.h"
#include "election.h"
#include "store.h"
#include "util.h"

struct trellis_scheduler {
    char *env_path; /* a copy of TRELLIS_PLUGIN_PATH, split in place */
    char *dirs[16];
    size_t n_dirs;
    cfg c;
    store *st;
    sched *s;
    election *lead; /* leading the state while it writes */
    char *dir;
    int dry_run;
};

const char *trellis_version(void)
{
    return PACKAGE_VERSION;
}

int trellis_register_builtin(trellis_plugin_entry_fn entry, char *err, size_t errlen)
{
    return registry_add_builtin(entry, err, errlen);
}

int trellis_main(int argc, char **argv)
{
    return cli_main(argc, argv);
}

trellis_scheduler *trellis_open(const char *config_file, const char *state_dir, int dry_run,
                                char *err, size_t errlen)
{
    trellis_scheduler *t = xcalloc(1, sizeof *t);
    t->dry_run = dry_run;
    if (config_load(config_file, &t->c, err, errlen) < 0) {
        free(t);
        return NULL;
    }
    const char *dir = store_dir(&t->c.store, state_dir);
    if (!dir && strcmp(t->c.store.type, "file") == 0) {
        errf(err, errlen, "no state directory: give one, or store.path in %s", config_file);
        goto fail;
    }
    t->dir = dir ? xstrdup(dir) : NULL;
    char *qpath = dir ? xasprintf("%s/%s", dir, QUARANTINE_FILE) : NULL;
    guard_install(dry_run ? NULL : qpath);
    /* TRELLIS_PLUGIN_PATH is searched first, as by the trellis binary */
    const char *env = getenv("TRELLIS_PLUGIN_PATH");
    if (env && *env) {
        t->env_path = xstrdup(env);
        char *save = NULL;
        for (char *d = strtok_r(t->env_path, ":", &save); d && t->n_dirs < 16;
             d = strtok_r(NULL, ":", &save))
            t->dirs[t->n_dirs++] = d;
    }
    t->s = sched_open(&t->c, t->dirs, t->n_dirs, 0, err, errlen);
    if (t->s)
        sched_set_quarantine(t->s, qpath, dry_run);
    free(qpath);
    if (!t->s || !(t->st = store_open(&t->c.store, state_dir, dry_run, err, errlen)) ||
        !(t->lead = election_hold(&t->c.store, state_dir, dry_run, t->st, err, errlen)) ||
        sched_load(t->s, t->st, err, errlen) < 0)
        goto fail;
    return t;
fail:
    trellis_close(t);
    return NULL;
}

int trellis_run_once(trellis_scheduler *t, FILE *out, char *err, size_t errlen)
{
    int rc = sched_run_once(t->s, err, errlen) < 0 ? 3 : 0;
    if (out)
        output_json(out, t->s);
    return rc;
}

void trellis_counts(const trellis_scheduler *t, size_t *scheduled, size_t *unschedulable,
                    size_t *errors)
{
    const decisions *ds = sched_decisions(t->s);
    *scheduled = *unschedulable = *errors = 0;
    for (size_t i = 0; i < decisions_count(ds); i++) {
        dec_result r = decisions_at(ds, i)->result;
        if (r == DEC_SCHEDULED)
            (*scheduled)++;
        else if (r == DEC_ERROR)
            (*errors)++;
        else
            (*unschedulable)++;
    }
}

void trellis_close(trellis_scheduler *t)
{
    if (!t)
        return;
    sched_close(t->s);
    if (t->st)
        t->st->ops->destroy(t->st);
    election_free(t->lead);
    config_free(&t->c);
    free(t->env_path);
    free(t->dir);
    free(t);
}

int trellis_serve(const char *config_file, const char *state_dir, const char *listen)
{
    run_opts ro = {config_file, state_dir, NULL, 0, 0, listen, NULL};
    return run_main(&ro);
}
