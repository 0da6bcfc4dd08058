/*
 * plugin.c - see plugin.h.
 */
#include "config.h"

#include "plugin.h"

#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "manifest.h"
#include "metrics.h"
#include "object.h"
#include "util.h"

const char *plugin_name(const trellis_plugin *pl)
{
    return pl->name;
}

int plugin_weight(const trellis_plugin *pl)
{
    return pl->weight;
}

int plugin_counter_count(const trellis_plugin *pl)
{
    return pl->n_counters;
}

const char *plugin_counter_name(const trellis_plugin *pl, int k, trellis_unit *unit)
{
    if (!pl->counter_names || k < 0 || k >= pl->n_counters || !pl->counter_names[k])
        return NULL;
    *unit = pl->counter_units[k];
    return pl->counter_names[k];
}

void registry_init(registry *r)
{
    memset(r, 0, sizeof *r);
}

/* Instances after their fini: a plugin thread may still hold the handle */
static pthread_mutex_t retired_mu = PTHREAD_MUTEX_INITIALIZER;
static trellis_plugin **retired_v;
static size_t n_retired, cap_retired;

/* What declare_kinds and name_counters kept. */
static void free_declared(trellis_plugin *pl)
{
    for (size_t i = 0; i < pl->n_kinds; i++)
        free(pl->kinds[i]);
    free(pl->kinds);
    pl->kinds = NULL;
    pl->n_kinds = 0;
    for (int i = 0; pl->counter_names && i < pl->n_counters; i++)
        free(pl->counter_names[i]);
    free(pl->counter_names);
    free(pl->counter_units);
    pl->counter_names = NULL;
    pl->counter_units = NULL;
}

static void retire(trellis_plugin *pl)
{
    atomic_store_explicit(&pl->retired, 1, memory_order_release);
    if (pl->priv_free)
        pl->priv_free(pl->priv);
    pl->priv = NULL;
    pl->priv_free = NULL;
    args_free(pl->args);
    pl->args = NULL;
    free_declared(pl);
    pthread_mutex_lock(&retired_mu);
    grow(&retired_v, &cap_retired, n_retired + 1, sizeof *retired_v);
    retired_v[n_retired++] = pl;
    pthread_mutex_unlock(&retired_mu);
}

void registry_release_retired(void)
{
    pthread_mutex_lock(&retired_mu);
    for (size_t i = 0; i < n_retired; i++) {
        metrics_cache_free(retired_v[i]->mcache);
        free(retired_v[i]);
    }
    free(retired_v);
    retired_v = NULL;
    n_retired = cap_retired = 0;
    pthread_mutex_unlock(&retired_mu);
}

void registry_free(registry *r)
{
    for (size_t i = r->n_inst; i-- > 0;) {
        trellis_plugin *pl = r->inst[i];
        if (pl->mod->desc->fini)
            GUARD(pl, "fini", "", 0, pl->mod->desc->fini(pl));
        retire(pl);
    }
    free(r->inst);
    for (size_t i = 0; i < r->n_mods; i++) {
        /* never dlclose: a plugin may have left callbacks registered in
         * libraries it uses, and there is no safe way to unhook them */
        registry_close_file(r->mods[i]);
        free(r->mods[i]);
    }
    free(r->mods);
    memset(r, 0, sizeof *r);
}

static int valid_name(const char *n)
{
    if (!n || !*n)
        return 0;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return 0;
    return 1;
}

/* A file or directory anyone but its owner may change, or whose owner is
 * neither root nor the user trellis runs as, could put code into the host:
 * refuse it, as ssh and PostgreSQL refuse unsafe key and data files. */
static int unsafe(const char *path, const char *what, const char *file, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    if (st.st_uid != 0 && st.st_uid != geteuid())
        return errf(err, errlen,
                    "%s: refused: the %s %s is owned by uid %ld, neither root nor the user "
                    "trellis runs as (uid %ld); chown it to one of them",
                    file, what, path, (long)st.st_uid, (long)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return errf(err, errlen,
                    "%s: refused: the %s %s is writable by %s (mode %04o), so others could "
                    "put code into trellis; run: chmod go-w %s",
                    file, what, path,
                    (st.st_mode & S_IWOTH)
                        ? ((st.st_mode & S_IWGRP) ? "group and others" : "others")
                        : "its group",
                    (unsigned)(st.st_mode & 07777), path);
    return 0;
}

/* The plugin file and the directory that holds it (links resolved). */
static int check_ownership(const char *path, char *err, size_t errlen)
{
    char *real = realpath(path, NULL);
    if (!real)
        return errf(err, errlen, "%s: cannot load: %s", path, strerror(errno));
    char *dir = xstrdup(real);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    int rc = unsafe(real, "file", path, err, errlen);
    if (rc == 0)
        rc = unsafe(dir, "directory", path, err, errlen);
    free(dir);
    free(real);
    return rc;
}

/* The 1.0 descriptor: every field up to fini. */
#define DESC_MIN_SIZE (offsetof(trellis_plugin_desc, fini) + sizeof(void (*)(trellis_plugin *)))

int registry_check_desc(const trellis_plugin_desc *d, const char *path,
                        const trellis_plugin_desc **use, trellis_plugin_desc **copy, char *err,
                        size_t errlen)
{
    *use = NULL;
    *copy = NULL;
    /* the first three fields protect the rest: read nothing else first */
    if (d->sdk_major != TRELLIS_SDK_MAJOR)
        return errf(err, errlen,
                    "%s: incompatible SDK: plugin built against SDK %d.%d, host has SDK %d.%d "
                    "(major version differs: rebuild the plugin against this host's "
                    "trellis/plugin.h)",
                    path, d->sdk_major, d->sdk_minor, TRELLIS_SDK_MAJOR, TRELLIS_SDK_MINOR);
    if (d->sdk_minor > TRELLIS_SDK_MINOR)
        return errf(err, errlen,
                    "%s: incompatible SDK: plugin needs SDK %d.%d, host has SDK %d.%d (plugin "
                    "needs a newer host: minor %d > %d; or build it with "
                    "TRELLIS_PLUGIN_MIN_MINOR %d if it can do without the newer functions)",
                    path, d->sdk_major, d->sdk_minor, TRELLIS_SDK_MAJOR, TRELLIS_SDK_MINOR,
                    d->sdk_minor, TRELLIS_SDK_MINOR, TRELLIS_SDK_MINOR);
    if (d->sdk_minor < 0 || d->size < DESC_MIN_SIZE)
        return errf(err, errlen,
                    "%s: descriptor is %zu bytes with minor %d; SDK %d.0 already needs %zu: "
                    "the plugin was not built with TRELLIS_DESC_HEADER (rebuild it)",
                    path, d->size, d->sdk_minor, d->sdk_major, DESC_MIN_SIZE);
    if (d->size < sizeof(trellis_plugin_desc)) {
        /* built against an older header: the fields it lacks read as zero */
        *copy = xcalloc(1, sizeof **copy);
        memcpy(*copy, d, d->size);
        d = *copy;
    }
    /* a longer descriptor (a newer header) keeps its fields past ours
     * unread */
    *use = d;
    if (!valid_name(d->name) || !d->init) {
        errf(err, errlen,
             !d->init ? "%s: plugin '%s' has no init function"
                      : "%s: plugin name '%s' is not valid (expected [a-z0-9-]+)",
             path, d->name ? d->name : "(null)");
        free(*copy);
        *copy = NULL;
        return -1;
    }
    for (const trellis_arg_spec *a = d->args; a && a->key; a++)
        if (a->type < TRELLIS_ARG_STRING || a->type > TRELLIS_ARG_DOCUMENT) {
            errf(err, errlen, "%s: plugin '%s': argument '%s' has unknown type %d", path, d->name,
                 a->key, (int)a->type);
            free(*copy);
            *copy = NULL;
            return -1;
        }
    return 0;
}

void registry_close_file(plugin_module *m)
{
    free(m->path);
    free(m->desc_copy);
    m->path = NULL;
    m->desc_copy = NULL;
}

/* Plugins linked into the host (trellis_register_builtin): registered
 * before any profile loads, from the main thread, and never removed. */
#define MAX_BUILTINS 64
static const trellis_plugin_desc *builtins[MAX_BUILTINS];
static size_t n_builtins;

int registry_add_builtin(trellis_plugin_entry_fn entry, char *err, size_t errlen)
{
    const trellis_plugin_desc *d = entry ? entry() : NULL;
    const trellis_plugin_desc *use;
    trellis_plugin_desc *copy;
    if (!d)
        return errf(err, errlen, "built-in plugin: its entry returned no descriptor");
    if (registry_check_desc(d, "built-in plugin", &use, &copy, err, errlen) < 0)
        return -1;
    free(copy); /* built into this host: never older than its header */
    for (size_t i = 0; i < n_builtins; i++)
        if (strcmp(builtins[i]->name, d->name) == 0)
            return errf(err, errlen, "built-in plugin '%s' is registered twice", d->name);
    if (n_builtins == MAX_BUILTINS)
        return errf(err, errlen, "more than %d built-in plugins", MAX_BUILTINS);
    builtins[n_builtins++] = d;
    return 0;
}

const trellis_plugin_desc *registry_builtin(size_t i)
{
    return i < n_builtins ? builtins[i] : NULL;
}

/* The built-in plugin of that name as a module, or -1. */
static int open_builtin(const char *name, plugin_module *m)
{
    for (size_t i = 0; i < n_builtins; i++)
        if (strcmp(builtins[i]->name, name) == 0) {
            memset(m, 0, sizeof *m);
            m->path = xasprintf("(built-in)");
            m->desc = builtins[i];
            snprintf(m->ident, sizeof m->ident, "builtin:%s:%s", builtins[i]->name,
                     builtins[i]->version ? builtins[i]->version : "");
            return 0;
        }
    return -1;
}

int registry_open_file(const char *path, plugin_module *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (check_ownership(path, err, errlen) < 0)
        return -1;
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return errf(err, errlen, "%s: cannot load: %s", path, dlerror());
    trellis_plugin_entry_fn entry;
    *(void **)&entry = dlsym(dl, TRELLIS_PLUGIN_ENTRY);
    if (!entry)
        return errf(err, errlen,
                    "%s: no symbol '%s': not a trellis plugin (declare it with TRELLIS_PLUGIN())",
                    path, TRELLIS_PLUGIN_ENTRY);
    const trellis_plugin_desc *d = entry();
    if (!d)
        return errf(err, errlen, "%s: %s() returned NULL", path, TRELLIS_PLUGIN_ENTRY);
    if (registry_check_desc(d, path, &m->desc, &m->desc_copy, err, errlen) < 0)
        return -1;
    m->path = xstrdup(path);
    m->dl = dl;
    struct stat st;
    if (stat(path, &st) == 0)
        snprintf(m->ident, sizeof m->ident, "%llx:%llx:%lld:%lld.%09ld",
                 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    return 0;
}

int registry_load(registry *r, const char *name, const char *path, char *const *dirs, size_t n_dirs,
                  plugin_module **out, char *err, size_t errlen)
{
    char *found = NULL;
    if (path) {
        found = xstrdup(path);
    } else {
        for (size_t i = 0; i < r->n_mods; i++)
            if (strcmp(r->mods[i]->desc->name, name) == 0) {
                *out = r->mods[i];
                return 0;
            }
        plugin_module bm;
        if (open_builtin(name, &bm) == 0) {
            /* linked into this host: it is the one a profile gets */
            plugin_module *pm = xmalloc(sizeof *pm);
            *pm = bm;
            r->mods = xrealloc(r->mods, (r->n_mods + 1) * sizeof *r->mods);
            r->mods[r->n_mods++] = pm;
            *out = pm;
            return 0;
        }
        for (size_t i = 0; i < n_dirs && !found; i++) {
            char *cand = xasprintf("%s/%s.so", dirs[i], name);
            if (access(cand, F_OK) == 0)
                found = cand;
            else
                free(cand);
        }
        if (!found) {
            strbuf b;
            sb_init(&b);
            for (size_t i = 0; i < n_dirs; i++)
                sb_printf(&b, "%s%s", i ? ", " : "", dirs[i]);
            errf(err, errlen, "plugin '%s': %s.so not found in %s", name, name,
                 n_dirs ? b.s : "(no plugin directory configured)");
            sb_free(&b);
            return -1;
        }
    }
    for (size_t i = 0; i < r->n_mods; i++)
        if (strcmp(r->mods[i]->path, found) == 0) {
            free(found);
            *out = r->mods[i];
            return 0;
        }
    plugin_module m;
    if (registry_open_file(found, &m, err, errlen) < 0) {
        free(found);
        return -1;
    }
    if (!path && strcmp(m.desc->name, name) != 0) {
        errf(err, errlen, "%s: declares the name '%s', expected '%s'", found, m.desc->name, name);
        registry_close_file(&m);
        free(found);
        return -1;
    }
    for (size_t i = 0; i < r->n_mods; i++)
        if (strcmp(r->mods[i]->desc->name, m.desc->name) == 0) {
            errf(err, errlen, "%s: duplicate plugin name '%s': %s declares it already", found,
                 m.desc->name, r->mods[i]->path);
            registry_close_file(&m);
            free(found);
            return -1;
        }
    free(found);
    plugin_module *pm = xmalloc(sizeof *pm);
    *pm = m;
    r->mods = xrealloc(r->mods, (r->n_mods + 1) * sizeof *r->mods);
    r->mods[r->n_mods++] = pm;
    *out = pm;
    return 0;
}

static void doc_unref(void *o)
{
    object_unref(o);
}

/* Read and parse every document argument (TRELLIS_ARG_DOCUMENT) of a,
 * from its file or its inline text. 0, or -1 with err naming the config
 * line, the plugin, the argument and the line of the document that is
 * wrong. */
static int read_documents(trellis_args *a, const char *plugin, char *err, size_t errlen)
{
    for (size_t i = 0; i < a->n; i++) {
        arg_value *v = &a->v[i];
        if (v->spec->type != TRELLIS_ARG_DOCUMENT || (!v->path && !v->s))
            continue;
        char e[512];
        size_t len = 0;
        char *text = v->path ? read_file(v->path, &len, e, sizeof e) : xstrdup(v->s);
        if (!text)
            return errf(err, errlen, "%s: plugin '%s': argument '%s': %s", v->where, plugin,
                        v->spec->key, e);
        if (!v->path)
            len = strlen(text);
        trellis_object *doc =
            manifest_parse_document(v->path ? v->path : "(inline)", text, len, e, sizeof e);
        if (!doc) {
            free(text);
            return errf(err, errlen, "%s: plugin '%s': argument '%s': %s", v->where, plugin,
                        v->spec->key, e);
        }
        v->doc = doc;
        v->doc_free = doc_unref;
        v->text = text; /* for arg_document_where */
        v->text_len = len;
    }
    return 0;
}

int registry_instantiate(registry *r, plugin_module *m, const cfg_plugin *pc,
                         const instance_ctx *ctx, trellis_plugin **out, char *err, size_t errlen)
{
    const cfg_profile *prof = ctx->prof;
    const char *cfg_file = ctx->cfg_file;
    trellis_plugin *pl = xcalloc(1, sizeof *pl);
    pl->mcache = metrics_cache_new();
    if (prof) {
        pl->hook_deadline_ms = prof->hook_deadline_ms;
        pl->bind_deadline_ms = prof->bind_deadline_ms;
    }
    pl->ignorable = pc->ignorable;
    pl->mod = m;
    pl->name = pc->instance;
    pl->profile = ctx->profile;
    pl->svc = ctx->svc;
    pl->cfg = pc;
    pl->weight = pc->weight;
    pl->points = pc->points;
    pl->slot = -1;
    pl->args =
        args_build(m->desc->args, pc->args, prof ? prof->plugin_args : NULL, cfg_file, err, errlen);
    if (!pl->args || read_documents(pl->args, pl->name, err, errlen) < 0) {
        args_free(pl->args);
        metrics_cache_free(pl->mcache);
        free(pl);
        return -1;
    }
    pl->in_init = 1;
    char ierr[512] = "";
    char where[512];
    snprintf(where, sizeof where, "%s:%d", cfg_file, pc->line);
    int rc;
    GUARD(pl, "init", where, pl->bind_deadline_ms,
          rc = m->desc->init(pl, ctx->host, pl->args, ierr, sizeof ierr));
    pl->in_init = 0;
    if (rc != 0) {
        errf(err, errlen, "%s:%d: plugin '%s' (%s): init failed: %s", cfg_file, pc->line, pl->name,
             m->path, ierr[0] ? ierr : "(no message)");
        if (m->desc->fini)
            m->desc->fini(pl);
        retire(pl);
        return -1;
    }
    if ((pl->h.filter_batch || pl->h.filter_span) && !pl->h.filter) {
        errf(err, errlen,
             "%s:%d: plugin '%s' registered a batch filter without the plain filter that "
             "explains its rejections",
             cfg_file, pc->line, pl->name);
        goto undo;
    }
    if ((pl->h.score_batch || pl->h.score_span) && !pl->h.score) {
        errf(err, errlen, "%s:%d: plugin '%s' registered a batch score without the plain score",
             cfg_file, pc->line, pl->name);
        goto undo;
    }
    if (pl->h.prepare_workload || pl->h.prepare_target)
        pl->slot = r->n_slots++;
    if (pl->n_tvalues) {
        pl->tvalue_off = r->n_tvalues;
        r->n_tvalues += pl->n_tvalues;
    }
    if (pl->n_counters) {
        pl->counter_off = r->n_counters;
        r->n_counters += pl->n_counters;
    }
    r->inst = xrealloc(r->inst, (r->n_inst + 1) * sizeof *r->inst);
    r->inst[r->n_inst++] = pl;
    *out = pl;
    return 0;
undo:
    if (m->desc->fini)
        m->desc->fini(pl);
    retire(pl);
    return -1;
}

const char *registry_hook_names(const trellis_plugin *pl, char *buf, size_t len)
{
    strbuf b;
    sb_init(&b);
    const plugin_hooks *h = &pl->h;
#define HOOK(f, n)                                                                                 \
    if (h->f)                                                                                      \
        sb_printf(&b, "%s%s", b.len ? "," : "", n);
    HOOK(prepare_workload, "prepare-workload")
    HOOK(prepare_target, "prepare-target")
    HOOK(amounts, "counters")
    HOOK(target_values, "target-values")
    HOOK(less, "queue-sort")
    HOOK(pre_filter, "pre-filter")
    HOOK(filter, "filter")
    HOOK(filter_batch, "filter-batch")
    HOOK(filter_span, "filter-span")
    HOOK(filter_feasible, "filter-feasible")
    HOOK(post_filter, "post-filter")
    HOOK(pre_score, "pre-score")
    HOOK(score, "score")
    HOOK(score_batch, "score-batch")
    HOOK(score_span, "score-span")
    HOOK(normalize, "normalize")
    HOOK(reserve, "reserve")
    HOOK(unreserve, "unreserve")
    HOOK(permit, "permit")
    HOOK(pre_bind, "pre-bind")
    HOOK(bind, "bind")
    HOOK(post_bind, "post-bind")
    HOOK(eviction_check, "eviction-check")
    HOOK(equivalent, "equivalent")
    HOOK(pre_enqueue, "pre-enqueue")
    HOOK(finalize, "finalize")
    HOOK(target_lost, "target-lost")
    HOOK(decided, "decided")
    HOOK(review_candidates, "review-candidates")
#undef HOOK
    if (h->has_events) {
        static const char *const ev_names[] = {"target-add",     "target-update",   "target-delete",
                                               "workload-gone",  "workload-update", "other",
                                               "workload-placed"};
        int any = 0;

        sb_printf(&b, "%sevents(", b.len ? "," : "");
        for (size_t i = 0; i < sizeof ev_names / sizeof *ev_names; i++)
            if (h->events & (1u << i)) {
                sb_printf(&b, "%s%s", any ? "," : "", ev_names[i]);
                any = 1;
            }
        sb_printf(&b, "%s)", any ? "" : "none");
    }
    snprintf(buf, len, "%s", b.s ? b.s : "-");
    sb_free(&b);
    return buf;
}

int registry_probe_hooks(plugin_module *m, const trellis_host *host, char *hooks, size_t len)
{
    const trellis_plugin_desc *ds = m->desc;
    char err[512];
    trellis_args *a = args_build(ds->args, NULL, NULL, "-", err, sizeof err);
    if (!a) {
        snprintf(hooks, len, "(needs arguments)");
        return -1;
    }
    trellis_plugin pl;
    memset(&pl, 0, sizeof pl);
    pl.mod = m;
    pl.name = ds->name;
    pl.slot = -1;
    pl.args = a;
    pl.in_init = 1;
    char ierr[512] = "";
    int rc = ds->init(&pl, host, a, ierr, sizeof ierr);
    pl.in_init = 0;
    if (rc == 0)
        registry_hook_names(&pl, hooks, len);
    else
        snprintf(hooks, len, "(init with defaults failed: %.400s)", ierr);
    if (ds->fini)
        ds->fini(&pl);
    if (pl.priv_free)
        pl.priv_free(pl.priv);
    free_declared(&pl);
    args_free(a);
    return rc == 0 ? 0 : -1;
}
