/*
 * storecopy.c - see storecopy.h. The source is read through a dry-run
 * store (it is never written); the destination is listed first (the file
 * store refuses a creation only for what it has read), then every object
 * is created and one flush commits them.
 */
#include "config.h"

#include "storecopy.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg.h"
#include "log.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

typedef struct side {
    cfg_store sc;
    const char *dir; /* a state directory, or NULL */
    store *st;
    char where[512];
} side;

/* Open one side: 0, or -1 after saying why. */
static int side_open(side *sd, const char *arg, int dry_run, int make_dir)
{
    char err[2048];
    struct stat stt;
    memset(sd, 0, sizeof *sd);
    if (stat(arg, &stt) < 0 && make_dir && errno == ENOENT && mkdir(arg, 0777) == 0)
        stat(arg, &stt);
    if (S_ISDIR(stt.st_mode)) {
        sd->dir = arg;
    } else if (config_load_store(arg, &sd->sc, err, sizeof err) < 0) {
        log_fatal("store copy: %s: expected a state directory or a config file with a store "
                  "group: %s",
                  arg, err);
        return -1;
    }
    store_where(&sd->sc, sd->dir, sd->where, sizeof sd->where);
    sd->st = store_open(&sd->sc, sd->dir, dry_run, err, sizeof err);
    if (!sd->st) {
        log_fatal("store copy: %s: %s", arg, err);
        config_store_free(&sd->sc);
        return -1;
    }
    return 0;
}

static void side_close(side *sd)
{
    if (sd->st)
        sd->st->ops->destroy(sd->st);
    config_store_free(&sd->sc);
}

/* o without metadata.resourceVersion (a version of the source store), as
 * a new object; o itself (a new reference) when it has none. */
static trellis_object *unversioned(trellis_object *o)
{
    if (!object_get(o, "metadata.resourceVersion"))
        return object_ref(o);
    json_object *j = object_to_json(o), *md;
    if (json_object_object_get_ex(j, "metadata", &md))
        json_object_object_del(md, "resourceVersion");
    char err[256];
    trellis_object *c = object_new(j, err, sizeof err);
    return c ? c : object_ref(o);
}

typedef struct fails {
    size_t n;
} fails;

static void on_fail(void *ud, const char *id, const char *message)
{
    fails *f = ud;
    f->n++;
    log_error("store copy: %s: not written: %s", id, message);
}

int storecopy_main(const char *src, const char *dst, FILE *out)
{
    side s, d;
    if (side_open(&s, src, 1, 0) < 0)
        return 2;
    if (side_open(&d, dst, 0, 1) < 0) {
        side_close(&s);
        return 2;
    }
    char err[4096];
    int rc = 0;
    manifest_set in, have;
    manifest_set_init(&in);
    manifest_set_init(&have);
    if (s.st->ops->list(s.st, &in, err, sizeof err) < 0) {
        log_fatal("store copy: reading %s: %s", s.where, err);
        rc = 2;
    } else if (d.st->ops->list(d.st, &have, err, sizeof err) < 0) {
        log_fatal("store copy: reading %s: %s", d.where, err);
        rc = 2;
    }
    size_t queued = 0, refused = 0;
    for (size_t i = 0; rc == 0 && i < in.n_errors; i++) {
        const manifest_error *e = &in.errors[i];
        log_error("store copy: %s:%d: %s; not copied", e->file, e->line, e->message);
        refused++;
    }
    for (size_t i = 0; rc == 0 && i < in.n_objects; i++) {
        trellis_object *o = unversioned(in.objects[i]);
        trellis_object *made = d.st->ops->create(d.st, o, err, sizeof err);
        if (made) {
            queued++;
            object_unref(made);
        } else {
            log_error("store copy: %s: not written: %s", o->id, err);
            refused++;
        }
        object_unref(o);
    }
    fails f = {0};
    if (rc == 0 && queued && d.st->ops->flush(d.st, on_fail, &f, err, sizeof err) < 0 && !f.n) {
        log_error("store copy: writing %s: %s", d.where, err);
        f.n = queued;
    }
    if (rc == 0) {
        fprintf(out, "copied %zu object(s) from %s to %s", queued - f.n, s.where, d.where);
        if (refused + f.n)
            fprintf(out, "; %zu not copied (named above)", refused + f.n);
        fprintf(out, "\n");
        rc = refused + f.n ? 1 : 0;
    }
    manifest_set_free(&in);
    manifest_set_free(&have);
    side_close(&s);
    side_close(&d);
    return rc;
}
