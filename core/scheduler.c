/*
 * scheduler.c - see scheduler.h.
 */
#include "config.h"

#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "guard.h"
#include "quarantine.h"
#include "metrics.h"
#include "util.h"

static int less_adapter(void *ud, const trellis_object *a, uint64_t as,
                        const trellis_object *b, uint64_t bs)
{
    trellis_plugin *pl = ud;
    int r;
    GUARD(pl, "queue_sort", a->id, pl->hook_deadline_ms,
          r = pl->h.less(pl, a, as, b, bs));
    return r;
}

static int kind_matches(const trellis_object *o, const char *kind, const char *api)
{
    return strcmp(o->kind, kind) == 0 && (!api || strcmp(o->api_version, api) == 0);
}

profile *sched_profile_for(const sched *s, const trellis_object *w)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        const cfg_profile *pc = p->cfg;
        if (!kind_matches(w, pc->workload_kind, pc->workload_api_version))
            continue;
        if (!pc->scheduler_name_field)
            return p;
        const char *name = value_string(object_get(w, pc->scheduler_name_field));
        if (!name || !*name) {
            if (pc->is_default || strcmp(pc->name, "default-scheduler") == 0)
                return p;
        } else if (strcmp(name, pc->name) == 0) {
            return p;
        }
    }
    return NULL;
}

/* The profile whose binding field places w, for counting bound workloads:
 * its own scheduler's, else the first profile of its kind. */
static profile *owner_for(const sched *s, const trellis_object *w)
{
    profile *p = sched_profile_for(s, w);
    if (p)
        return p;
    for (size_t i = 0; i < s->n_profiles; i++)
        if (kind_matches(w, s->profiles[i].cfg->workload_kind,
                         s->profiles[i].cfg->workload_api_version))
            return &s->profiles[i];
    return NULL;
}

int sched_open(sched *s, cfg *c, char *const *extra_dirs, size_t n_extra, int parallelism,
               char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->cfg = c;
    s->max_attempts = 5;
    registry_init(&s->reg);
    hmap_init(&s->dec_by_key);
    hmap_init(&s->by_id);
    cycle_init(&s->cycle);
    /* recursive: a post-bind run from process_waiting may allow another
     * waiting workload */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->wait_mu, &ma);
    pthread_mutexattr_destroy(&ma);
    size_t nd = n_extra + c->n_plugin_dirs + 1;
    char **dirs = xcalloc(nd, sizeof *dirs);
    size_t k = 0;
    for (size_t i = 0; i < n_extra; i++)
        dirs[k++] = extra_dirs[i];
    for (size_t i = 0; i < c->n_plugin_dirs; i++)
        dirs[k++] = c->plugin_dirs[i];
    dirs[k++] = (char *)TRELLIS_PLUGINDIR;

    int par = parallelism > 0 ? parallelism : c->parallelism;
    if (par <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        par = n > 0 ? (int)(n < 16 ? n : 16) : 1;
    }
    s->pool = pool_new(par);

    s->n_profiles = c->n_profiles;
    s->profiles = xcalloc(c->n_profiles, sizeof *s->profiles);
    int rc = 0;
    for (size_t i = 0; i < c->n_profiles && rc == 0; i++) {
        profile *p = &s->profiles[i];
        const cfg_profile *pc = &c->profiles[i];
        p->cfg = pc;
        p->sched = s;
        p->index = (int)i;
        p->sched_pool = s->pool;
        p->plugins = xcalloc(pc->n_plugins ? pc->n_plugins : 1, sizeof *p->plugins);
        for (size_t j = 0; j < pc->n_plugins; j++) {
            plugin_module *m;
            trellis_plugin *pl;
            const cfg_plugin *e = &pc->plugins[j];
            if (registry_load(&s->reg, e->name, e->path, dirs, k, &m, err, errlen) < 0) {
                errprefix(err, errlen, "%s:%d: profile '%s'", c->file, e->line, pc->name);
                rc = -1;
                break;
            }
            if (registry_instantiate(&s->reg, m, p, pc, e, c->file, &pl, err, errlen) < 0) {
                rc = -1;
                break;
            }
            p->plugins[p->n_plugins++] = pl;
        }
    }
    free(dirs);
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        const cfg_profile *pc = p->cfg;
        framework_build(p);
        size_t n_sort = 0;
        for (size_t j = 0; j < p->n_plugins; j++)
            if (p->plugins[j]->h.less && (p->plugins[j]->points & PT_QUEUE_SORT))
                n_sort++;
        if (n_sort > 1)
            return errf(err, errlen,
                        "%s:%d: profile '%s': %zu plugins sort the queue; exactly one may "
                        "(restrict the others with points = [...])",
                        c->file, pc->line, pc->name, n_sort);
        if (p->bind.n == 0)
            return errf(err, errlen,
                        "%s:%d: profile '%s': no plugin binds workloads (add default-binder)",
                        c->file, pc->line, pc->name);
        queue_init(&p->q, pc->backoff_initial_ms, pc->backoff_max_ms,
                   pc->max_unschedulable_ms);
        if (p->queue_sort) {
            p->q.less = less_adapter;
            p->q.less_ud = p->queue_sort;
        }
        snapshot_init(&p->snap, pc->target_kind, s->reg.n_counters, s->reg.n_slots,
                      s->reg.n_tvalues);
    }
    cache_init(&s->cache, s->reg.n_counters);
    return 0;
}

/* Let the plugins of the profiles concerned prepare o. */
static void prepare(sched *s, trellis_object *o, int as_workload)
{
    size_t nc = as_workload && !o->counters ? (size_t)s->reg.n_counters : 0;
    if (!o->aux && s->reg.n_slots) {
        /* a workload's counters share the slots' allocation (object_unref
         * knows) */
        size_t ns = (size_t)s->reg.n_slots;
        o->aux = xcalloc(1, ns * sizeof *o->aux + nc * sizeof *o->counters);
        o->naux = ns;
        if (nc) {
            o->counters = (int64_t *)(void *)(o->aux + ns);
            nc = 0;
        }
    }
    if (nc)
        o->counters = xcalloc(nc, sizeof *o->counters);
    if (!as_workload && !o->tvalues && s->reg.n_tvalues)
        o->tvalues = xcalloc((size_t)s->reg.n_tvalues, sizeof *o->tvalues);
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        const cfg_profile *pc = p->cfg;
        if (as_workload ? !kind_matches(o, pc->workload_kind, pc->workload_api_version)
                        : !kind_matches(o, pc->target_kind, pc->target_api_version))
            continue;
        plist *l = as_workload ? &p->prepare_workload : &p->prepare_target;
        for (size_t k = 0; k < l->n; k++) {
            trellis_plugin *pl = l->v[k];
            trellis_prepare_fn fn = as_workload ? pl->h.prepare_workload : pl->h.prepare_target;
            if (fn && pl->slot >= 0) {
                char perr[512] = "";
                void *data = NULL;
                int prc;
                GUARD(pl, as_workload ? "prepare_workload" : "prepare_target", o->id,
                      pl->hook_deadline_ms, prc = fn(pl, o, &data, perr, sizeof perr));
                if (prc != 0) {
                    char who[256];
                    log_warn("%s:%d: %s: plugin %s: %s", o->file ? o->file : "-", o->line,
                             object_describe(o, who, sizeof who), pl->name,
                             perr[0] ? perr : "malformed");
                    if (!o->failed)
                        o->failed = xcalloc(o->naux, 1);
                    o->failed[pl->slot] = 1;
                    if (o->prepare_failed_slot < 0) {
                        o->prepare_failed_slot = pl->slot;
                        o->prepare_error = xasprintf("plugin %s: %s", pl->name,
                                                     perr[0] ? perr : "malformed object");
                    }
                }
                o->aux[pl->slot] = data;
            }
            if (as_workload && pl->h.amounts)
                GUARD(pl, "amounts", o->id, pl->hook_deadline_ms,
                      pl->h.amounts(pl, o, o->counters + pl->counter_off));
            if (!as_workload && pl->h.target_values &&
                !(pl->slot >= 0 && o->failed && o->failed[pl->slot]))
                GUARD(pl, "target_values", o->id, pl->hook_deadline_ms,
                      pl->h.target_values(pl, o, o->tvalues + pl->tvalue_off));
        }
    }
    grow(&s->prepared, &s->cap_prepared, s->n_prepared + 1, sizeof *s->prepared);
    s->prepared[s->n_prepared++] = object_ref(o);
}

static int is_target_kind(const sched *s, const trellis_object *o)
{
    for (size_t i = 0; i < s->n_profiles; i++)
        if (kind_matches(o, s->profiles[i].cfg->target_kind,
                         s->profiles[i].cfg->target_api_version))
            return 1;
    return 0;
}

static char *id_key(const char *kind, const char *ns, const char *name)
{
    return xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
}

/* by_id entry: the object's place in s->objects; the key is that
 * object's id */
typedef struct idx_entry {
    const char *key;
    size_t pos;
} idx_entry;

/* Add o to the index, or put it in the place of the object of the same
 * identity. */
static void index_set(sched *s, trellis_object *o)
{
    idx_entry *e = hmap_get(&s->by_id, o->id);
    if (e) {
        trellis_object *old = s->objects[e->pos];
        s->objects[e->pos] = object_ref(o);
        e->key = o->id;
        hmap_put(&s->by_id, e->key, e);
        object_unref(old);
        s->n_replaced++;
        return;
    }
    e = xcalloc(1, sizeof *e);
    e->key = o->id;
    e->pos = s->n_objects;
    hmap_put(&s->by_id, e->key, e);
    grow(&s->objects, &s->cap_objects, s->n_objects + 1, sizeof *s->objects);
    s->objects[s->n_objects++] = object_ref(o);
}

/* Drop the object of o's identity; the others keep store order. */
static void index_del(sched *s, const trellis_object *o)
{
    idx_entry *e = hmap_del(&s->by_id, o->id);
    if (!e)
        return;
    object_unref(s->objects[e->pos]);
    s->n_replaced++;
    memmove(s->objects + e->pos, s->objects + e->pos + 1,
            (s->n_objects - e->pos - 1) * sizeof *s->objects);
    s->n_objects--;
    for (size_t i = e->pos; i < s->n_objects; i++) {
        idx_entry *me = hmap_get(&s->by_id, s->objects[i]->id);
        if (me)
            me->pos = i;
    }
    free(e);
}

const trellis_object *sched_lookup(const sched *s, const char *kind, const char *ns,
                                   const char *name)
{
    char *k = id_key(kind, ns, name);
    const idx_entry *e = hmap_get(&s->by_id, k);
    free(k);
    return e ? s->objects[e->pos] : NULL;
}

int sched_foreach(const sched *s, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud)
{
    for (size_t i = 0; i < s->n_objects; i++) {
        const trellis_object *o = s->objects[i];
        if (strcmp(o->kind, kind) != 0 || (ns && strcmp(o->namespace_, ns) != 0))
            continue;
        int rc = cb(o, ud);
        if (rc)
            return rc;
    }
    return 0;
}

/* Every target name a bound workload counts on: its binding field and the
 * profile's also_counts fields, without repeats. */
static void add_assignments(sched *s, profile *own, trellis_object *o)
{
    const cfg_profile *pc = own->cfg;
    const char *seen[8];
    size_t n_seen = 0;
    for (size_t k = 0; k <= pc->n_also_counts && n_seen < 8; k++) {
        const char *field = k == 0 ? pc->binding_field : pc->also_counts[k - 1];
        const char *t = value_string(object_get(o, field));
        if (!t || !*t)
            continue;
        int dup = 0;
        for (size_t j = 0; j < n_seen; j++)
            dup |= strcmp(seen[j], t) == 0;
        if (dup)
            continue;
        seen[n_seen++] = t;
        cache_add_bound(&s->cache, o, pc->target_kind, t);
    }
}

static void evict_bound(sched *s, profile *p, trellis_object *w, cache_target *ct,
                        const trellis_plugin *pl, const trellis_status *st);

/* Eviction checks (NoExecute and the like) over every bound workload,
 * before anything is scheduled. */
static void run_eviction_checks(sched *s)
{
    typedef struct hit {
        trellis_object *w;
        cache_target *t;
        const trellis_plugin *pl;
        trellis_status st;
    } hit;
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        if (!p->eviction.n)
            continue;
        /* collect first: evicting changes the lists being walked */
        hit *hits = NULL;
        size_t n = 0, cap = 0, it = 0;
        hmap_slot *sl;
        while ((sl = hmap_next(&s->cache.targets, &it))) {
            cache_target *ct = sl->val;
            if (!ct->t.obj || strcmp(ct->kind, p->cfg->target_kind) != 0)
                continue;
            for (size_t j = 0; j < ct->t.n_wl; j++) {
                trellis_object *w = ct->t.wl[j];
                const char *b = value_string(object_get(w, p->cfg->binding_field));
                if (owner_for(s, w) != p || !b || strcmp(b, ct->name) != 0)
                    continue;
                for (size_t k = 0; k < p->eviction.n; k++) {
                    trellis_plugin *pl = p->eviction.v[k];
                    trellis_status st;
                    memset(&st, 0, sizeof st);
                    int erc;
                    GUARD(pl, "eviction_check", w->id, pl->hook_deadline_ms,
                          erc = pl->h.eviction_check(pl, w, &ct->t, &st));
                    if (erc == TRELLIS_SUCCESS)
                        continue;
                    grow(&hits, &cap, n + 1, sizeof *hits);
                    hits[n].w = object_ref(w);
                    hits[n].t = ct;
                    hits[n].pl = pl;
                    hits[n].st = st;
                    n++;
                    break;
                }
            }
        }
        /* in name order, so the output and the requeue order are stable */
        for (size_t a = 1; a < n; a++)
            for (size_t b2 = a; b2 > 0 && strcmp(hits[b2 - 1].w->key, hits[b2].w->key) > 0;
                 b2--) {
                hit tmp = hits[b2];
                hits[b2] = hits[b2 - 1];
                hits[b2 - 1] = tmp;
            }
        for (size_t j = 0; j < n; j++) {
            evict_bound(s, p, hits[j].w, hits[j].t, hits[j].pl, &hits[j].st);
            object_unref(hits[j].w);
        }
        free(hits);
    }
}

/* For the one-shot report. */
static void record_eviction(sched *s, const trellis_object *w, const cache_target *ct,
                            const trellis_plugin *pl, const trellis_status *st)
{
    s->evictions = xrealloc(s->evictions, (s->n_evictions + 1) * sizeof *s->evictions);
    eviction *ev = &s->evictions[s->n_evictions++];
    ev->workload.kind = xstrdup(w->kind);
    ev->workload.namespace_ = xstrdup(w->namespace_);
    ev->workload.name = xstrdup(w->name);
    ev->target = xstrdup(ct->name);
    ev->plugin = xstrdup(pl->name);
    ev->code = xstrdup(st->reason);
    ev->reason = xstrdup(st->message);
}

/* Clear a bound workload's binding, take it off every target it counts on
 * and queue it again. */
static void evict_bound(sched *s, profile *p, trellis_object *w, cache_target *ct,
                        const trellis_plugin *pl, const trellis_status *st)
{
    char err[512];
    store_edit e = {p->cfg->binding_field, NULL, 0};
    if (s->st->ops->patch(s->st, w, &e, 1, err, sizeof err) < 0) {
        log_error("cannot evict %s %s from %s: %s", w->kind, w->key, ct->name, err);
        return;
    }
    log_info("plugin %s: evicted %s %s from %s: %s", pl->name, w->kind, w->key, ct->name,
             st->message);
    if (!s->run_mode)
        record_eviction(s, w, ct, pl, st);
    cache_workload *cw = cache_get_workload(&s->cache, w);
    if (cw) {
        for (size_t i = 0; i < cw->n_as;) {
            /* only the binding goes; an also_counts field (a status the
             * scheduler does not own) keeps counting */
            cache_target *t = cw->as[i].target;
            const char *b = value_string(object_get(w, p->cfg->binding_field));
            if (b && strcmp(b, t->name) == 0)
                cache_forget(&s->cache, w, t);
            else
                i++;
        }
    }
    profile *sp = sched_profile_for(s, w);
    if (sp) {
        queue_add(&sp->q, w, s->now_ms);
        s->n_pending++;
    }
}

void sched_set_quarantine(sched *s, const char *path, int read_only)
{
    quarantine_free(s->quarantine);
    s->quarantine = path ? quarantine_open(path, read_only) : NULL;
}

static const char *plugin_ident(void *ud, const char *name)
{
    const sched *s = ud;
    for (size_t i = 0; i < s->reg.n_inst; i++)
        if (strcmp(s->reg.inst[i]->name, name) == 0)
            return s->reg.inst[i]->mod->ident;
    return NULL;
}

static void record_event(sched *s, profile *p, const trellis_object *w, const char *type,
                         const char *reason, const char *message, const char *codes);
static decision *decision_for(sched *s, trellis_object *w, profile *p);
static void set_result(decision *d, dec_result r, const char *msg, const char *target);

/* Whether o is quarantined; a workload gets its error decision and Event
 * (o is kept by the decision), a target is only reported. */
static int quarantined(sched *s, trellis_object *o)
{
    const char *why = NULL;
    if (!quarantine_check(s->quarantine, o, plugin_ident, s, &why))
        return 0;
    s->n_quarantined++;
    char who[256];
    log_warn("%s: %s", object_describe(o, who, sizeof who), why);
    profile *p = sched_profile_for(s, o);
    if (p) {
        decision *d = decision_for(s, o, p);
        set_result(d, DEC_ERROR, why, NULL);
        if (p->cfg->events)
            record_event(s, p, o, "Warning", "FailedScheduling", why, NULL);
    }
    return 1;
}

int sched_load(sched *s, store *st, char *err, size_t errlen)
{
    uint64_t t0 = now_ns();
    s->st = st;
    manifest_set ms;
    manifest_set_init(&ms);
    if (st->ops->list(st, &ms, err, errlen) < 0) {
        manifest_set_free(&ms);
        return -1;
    }
    for (size_t i = 0; i < ms.n_errors; i++) {
        const manifest_error *e = &ms.errors[i];
        log_skipped(e->file, e->line, e->message);
    }
    s->n_manifest_errors = ms.n_errors;
    /* what a plugin crashed or hung on is not given to it again */
    if (s->quarantine) {
        size_t k = 0;
        for (size_t i = 0; i < ms.n_objects; i++) {
            if (quarantined(s, ms.objects[i]))
                object_unref(ms.objects[i]);
            else
                ms.objects[k++] = ms.objects[i];
        }
        ms.n_objects = k;
        char qerr[512];
        if (quarantine_save(s->quarantine, 1, qerr, sizeof qerr) < 0)
            log_warn("%s", qerr);
    }
    /* every object can be looked up by the plugins while they prepare */
    for (size_t i = 0; i < ms.n_objects; i++) {
        index_set(s, ms.objects[i]);
    }
    /* targets first, so bound workloads find them */
    for (size_t i = 0; i < ms.n_objects; i++) {
        trellis_object *o = ms.objects[i];
        if (!is_target_kind(s, o))
            continue;
        prepare(s, o, 0);
        cache_set_target(&s->cache, o);
        s->n_targets_loaded++;
    }
    for (size_t i = 0; i < ms.n_objects; i++) {
        trellis_object *o = ms.objects[i];
        profile *p = sched_profile_for(s, o);
        profile *own = p ? p : owner_for(s, o);
        if (!own)
            continue;
        prepare(s, o, 1);
        s->n_workloads_loaded++;
        add_assignments(s, own, o);
        const char *bound = value_string(object_get(o, own->cfg->binding_field));
        if (bound && *bound)
            continue;
        if (p) {
            queue_add(&p->q, o, s->now_ms);
            s->n_pending++;
        }
    }
    manifest_set_free(&ms);
    s->load_ns = now_ns() - t0;
    return 0;
}

static decision *decision_for(sched *s, trellis_object *w, profile *p)
{
    decision *d = hmap_get(&s->dec_by_key, w->id);
    if (d) {
        if (d->w != w) {
            trellis_object *old = d->w;
            d->w = object_ref(w);
            hmap_put(&s->dec_by_key, w->id, d); /* the key is d->w's id */
            object_unref(old);
        }
        d->p = p;
        return d;
    }
    d = xcalloc(1, sizeof *d);
    d->w = object_ref(w);
    d->p = p;
    if (!s->run_mode) {
        /* a one-shot run reports every decision at the end; a long
         * run keeps one only while its workload is not placed */
        grow(&s->decisions, &s->cap_dec, s->n_dec + 1, sizeof *s->decisions);
        s->decisions[s->n_dec++] = d;
    }
    /* the key is the workload's id, alive while d->w is */
    hmap_put(&s->dec_by_key, w->id, d);
    return d;
}

static void set_result(decision *d, dec_result r, const char *msg, const char *target)
{
    d->result = r;
    free(d->message);
    d->message = msg ? xstrdup(msg) : NULL;
    free(d->targets);
    d->targets = NULL;
    d->n_targets = 0;
    if (target) {
        size_t len = strlen(target) + 1;
        char **t = xmalloc(sizeof *t + len);
        t[0] = (char *)(t + 1);
        memcpy(t[0], target, len);
        d->targets = t;
        d->n_targets = 1;
    }
}

static void free_cands(decision *d)
{
    for (size_t i = 0; i < d->n_cands; i++) {
        dec_cand *c = &d->cands[i];
        free(c->target);
        free(c->plugin);
        free(c->code);
        free(c->reason);
        free(c->scores);
    }
    free(d->cands);
    d->cands = NULL;
    d->n_cands = 0;
}

static void record_candidates(trellis_cycle *c, decision *d)
{
    free_cands(d);
    if (!c->filtered)
        return; /* the cycle ended before filtering: there are no verdicts */
    d->n_cands = c->n;
    d->cands = xcalloc(c->n ? c->n : 1, sizeof *d->cands);
    size_t j = 0; /* index among feasible targets, which keep snapshot order */
    for (size_t i = 0; i < c->n; i++) {
        dec_cand *dc = &d->cands[i];
        dc->target = xstrdup(c->targets[i]->name);
        const trellis_plugin *who;
        trellis_status st;
        int code = framework_explain(c, i, &who, &st);
        dc->feasible = code == TRELLIS_SUCCESS;
        if (!dc->feasible) {
            dc->plugin = xstrdup(who ? who->name : "-");
            dc->code = xstrdup(st.reason);
            dc->reason = xstrdup(st.message);
            continue;
        }
        if (c->scored && j < c->n_feasible && c->feasible_idx[j] == i) {
            dc->has_score = 1;
            dc->score = c->totals[j];
            size_t ns = c->p->score.n;
            dc->scores = xcalloc(ns ? ns : 1, sizeof *dc->scores);
            for (size_t k = 0; k < ns; k++)
                dc->scores[k] = c->scores[k * c->n_feasible + j];
        }
        j++;
    }
}

static void unreserve_all(profile *p, trellis_cycle *c, trellis_object *w,
                          const struct trellis_target *t)
{
    for (size_t k = p->reserve.n; k-- > 0;) {
        trellis_plugin *pl = p->reserve.v[k];
        if (pl->h.unreserve)
            GUARD(pl, "unreserve", w->id, pl->bind_deadline_ms, pl->h.unreserve(pl, c, w, t));
    }
}

/* Undo an assumption after a failure in reserve, permit or binding. */
static void fail_assumed(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target *ct, dec_result r, const char *msg)
{
    unreserve_all(p, c, it->w, &ct->t);
    cache_forget_assumed(&s->cache, it->w, ct);
    set_result(d, r, msg, NULL);
    queue_requeue(&p->q, it, r == DEC_UNSCHEDULABLE, s->now_ms);
}

/* pre-bind and bind (and post-bind when post is set) for w on t. 0, or
 * -1 with msg. Runs on the binding thread in the long-running host. */
static int bind_hooks(profile *p, trellis_cycle *c, trellis_object *w,
                      const struct trellis_target *t, int post, char *msg, size_t msglen)
{
    trellis_status st;
    uint64_t on = metrics_enabled(), tp = on ? now_ns() : 0;
    for (size_t k = 0; k < p->pre_bind.n; k++) {
        trellis_plugin *pl = p->pre_bind.v[k];
        memset(&st, 0, sizeof st);
        uint64_t t0 = on ? now_ns() : 0;
        int rc;
        GUARD(pl, "pre_bind", w->id, pl->bind_deadline_ms,
              rc = pl->h.pre_bind(pl, c, w, t, &st));
        framework_time_plugin(pl, "pre_bind", rc, t0);
        if (rc != TRELLIS_SUCCESS) {
            framework_time_point(p, "pre_bind", rc, tp);
            return errf(msg, msglen, "plugin %s: pre-bind failed: %s", pl->name, st.message);
        }
    }
    if (p->pre_bind.n)
        framework_time_point(p, "pre_bind", TRELLIS_SUCCESS, tp);
    tp = on ? now_ns() : 0;
    int handled = 0;
    for (size_t k = 0; k < p->bind.n && !handled; k++) {
        trellis_plugin *pl = p->bind.v[k];
        memset(&st, 0, sizeof st);
        uint64_t t0 = on ? now_ns() : 0;
        int rc;
        GUARD(pl, "bind", w->id, pl->bind_deadline_ms, rc = pl->h.bind(pl, c, w, t, &st));
        framework_time_plugin(pl, "bind", rc, t0);
        if (rc == TRELLIS_SKIP)
            continue;
        if (rc != TRELLIS_SUCCESS) {
            framework_time_point(p, "bind", rc, tp);
            return errf(msg, msglen, "plugin %s: bind failed: %s", pl->name, st.message);
        }
        handled = 1;
    }
    framework_time_point(p, "bind", handled ? TRELLIS_SUCCESS : TRELLIS_ERROR, tp);
    if (!handled)
        return errf(msg, msglen, "no bind plugin handled the workload");
    for (size_t k = 0; post && k < p->post_bind.n; k++) {
        trellis_plugin *pl = p->post_bind.v[k];
        GUARD(pl, "post_bind", w->id, pl->bind_deadline_ms, pl->h.post_bind(pl, c, w, t));
    }
    return 0;
}

static void record_event(sched *s, profile *p, const trellis_object *w, const char *type,
                         const char *reason, const char *message, const char *codes);

/* The binding landed: the assumption becomes a binding. */
static void bind_done(sched *s, profile *p, decision *d, qitem *it, cache_target *ct)
{
    cache_finish_binding(&s->cache, it->w, ct);
    set_result(d, DEC_SCHEDULED, NULL, ct->name);
    free(d->nominated);
    d->nominated = NULL;
    if (s->run_mode) {
        char msg[600];
        snprintf(msg, sizeof msg, "Successfully assigned %s to %s", it->w->key, ct->name);
        log_info("%s %s: bound to %s", it->w->kind, it->w->key, ct->name);
        if (p->cfg->events)
            record_event(s, p, it->w, "Normal", "Scheduled", msg, NULL);
    }
    queue_done(&p->q, it);
}

static void bind_cycle(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                       cache_target *ct)
{
    char msg[1024];
    if (bind_hooks(p, c, it->w, &ct->t, 1, msg, sizeof msg) < 0)
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
    else
        bind_done(s, p, d, it, ct);
}

/* A binding cycle handed to the binding thread. The cycle's state (the
 * plugins' slots and arena) moves with it, and the target is a copy:
 * the main thread goes on changing the cache. */
typedef struct bind_job {
    sched *s;
    profile *p;
    decision *d;
    qitem *it;
    cache_target *ct;
    trellis_cycle c;
    struct trellis_target t;
    int failed;
    char msg[1024];
    uint64_t t0;
} bind_job;

static bind_job *job_new(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target *ct)
{
    bind_job *j = xcalloc(1, sizeof *j);
    j->s = s;
    j->p = p;
    j->d = d;
    j->it = it;
    j->ct = ct;
    cycle_init(&j->c);
    j->c.p = p;
    j->c.w = it->w;
    j->c.slots = c->slots;
    j->c.cap_plugins = c->cap_plugins;
    j->c.arena = c->arena;
    j->c.arena_cap = c->arena_cap;
    j->c.arena_used = c->arena_used;
    c->slots = xcalloc(c->cap_plugins ? c->cap_plugins : 1, sizeof *c->slots);
    c->arena = NULL;
    c->arena_cap = c->arena_used = 0;
    j->t.obj = ct->t.obj ? object_ref(ct->t.obj) : NULL;
    j->t.name = xstrdup(ct->name);
    if (s->cache.n_counters) {
        j->t.sums = xcalloc((size_t)s->cache.n_counters, sizeof *j->t.sums);
        memcpy(j->t.sums, ct->t.sums, (size_t)s->cache.n_counters * sizeof *j->t.sums);
    }
    j->t.gen = ct->t.gen;
    j->t0 = now_ns();
    return j;
}

static void job_free(bind_job *j)
{
    cycle_free(&j->c);
    if (j->t.obj)
        object_unref(j->t.obj);
    free((char *)j->t.name);
    free(j->t.sums);
    free(j);
}

typedef struct job_batch {
    bind_job **v;
    size_t n;
} job_batch;

/* The store could not write the object id: its job failed. */
static void job_not_written(void *ud, const char *id, const char *why)
{
    job_batch *jb = ud;
    for (size_t i = 0; i < jb->n; i++) {
        bind_job *j = jb->v[i];
        if (!j->failed && strcmp(j->it->w->id, id) == 0) {
            j->failed = 1;
            snprintf(j->msg, sizeof j->msg, "binding not written: %.900s", why);
        }
    }
}

/* The binding thread: pre-bind and bind every job, one store flush for
 * the batch, then post-bind for those that landed. When the flush fails,
 * a job landed if the store now holds its workload bound there. */
static void run_jobs(void *ud, void **jobs, size_t n)
{
    sched *s = ud;
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        j->failed = bind_hooks(j->p, &j->c, j->it->w, &j->t, 0, j->msg, sizeof j->msg) < 0;
    }
    char err[1024];
    job_batch jb = {(bind_job **)jobs, n};
    if (s->st->ops->flush(s->st, job_not_written, &jb, err, sizeof err) < 0)
        log_error("store: %s", err);
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        for (size_t k = 0; !j->failed && k < j->p->post_bind.n; k++) {
            trellis_plugin *pl = j->p->post_bind.v[k];
            GUARD(pl, "post_bind", j->it->w->id, pl->bind_deadline_ms,
                  pl->h.post_bind(pl, &j->c, j->it->w, &j->t));
        }
    }
}

static void assume_and_bind(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                            const struct trellis_target *best)
{
    cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, best->name);
    trellis_status st;
    char msg[1024];
    if (!ct) {
        set_result(d, DEC_ERROR, "the chosen target is not in the cache", NULL);
        queue_requeue(&p->q, it, 0, s->now_ms);
        return;
    }
    cache_assume(&s->cache, it->w, ct);
    for (size_t k = 0; k < p->reserve.n; k++) {
        trellis_plugin *pl = p->reserve.v[k];
        if (!pl->h.reserve)
            continue;
        memset(&st, 0, sizeof st);
        int rrc;
        GUARD(pl, "reserve", it->w->id, pl->hook_deadline_ms,
              rrc = pl->h.reserve(pl, c, it->w, best, &st));
        if (rrc != TRELLIS_SUCCESS) {
            snprintf(msg, sizeof msg, "plugin %s: reserve failed: %s", pl->name, st.message);
            fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
            return;
        }
    }
    uint64_t wait_ms = 0;
    int wait = 0;
    for (size_t k = 0; k < p->permit.n; k++) {
        trellis_plugin *pl = p->permit.v[k];
        memset(&st, 0, sizeof st);
        uint64_t to = 0;
        int rc;
        GUARD(pl, "permit", it->w->id, pl->hook_deadline_ms,
              rc = pl->h.permit(pl, c, it->w, best, &to, &st));
        if (rc == TRELLIS_SUCCESS)
            continue;
        if (rc == TRELLIS_WAIT) {
            wait = 1;
            if (to > wait_ms)
                wait_ms = to;
            continue;
        }
        snprintf(msg, sizeof msg, "plugin %s: permit rejected: %s%s%s", pl->name, st.reason,
                 st.message[0] ? ": " : "", st.message);
        fail_assumed(s, p, c, d, it, ct, DEC_UNSCHEDULABLE, msg);
        return;
    }
    if (wait) {
        pthread_mutex_lock(&s->wait_mu);
        grow(&s->waiting, &s->cap_waiting, s->n_waiting + 1, sizeof *s->waiting);
        waiting *wt = &s->waiting[s->n_waiting++];
        memset(wt, 0, sizeof *wt);
        wt->d = d;
        wt->p = p;
        wt->it = it;
        wt->target = &ct->t;
        wt->deadline_ms = wait_ms ? s->now_ms + wait_ms : UINT64_MAX;
        pthread_mutex_unlock(&s->wait_mu);
        set_result(d, DEC_PENDING, "waiting on permit", NULL);
        return;
    }
    if (s->binder) {
        set_result(d, DEC_PENDING, "binding", NULL);
        binder_push(s->binder, job_new(s, p, c, d, it, ct));
    } else {
        bind_cycle(s, p, c, d, it, ct);
    }
}

/* Record a Kubernetes Event about w. The name is derived from the
 * workload, the reason and the message, so the same event again (in this
 * run or a later one) is the same Event: its count goes up and its
 * lastTimestamp moves, as kubectl shows it. codes (may be NULL) goes into
 * an annotation for tools: the reason code per target. */
static void record_event(sched *s, profile *p, const trellis_object *w, const char *type,
                         const char *reason, const char *message, const char *codes)
{
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char basis[1024];
    snprintf(basis, sizeof basis, "%s/%s/%s/%s", w->kind, w->key, reason, message);
    char name[320];
    snprintf(name, sizeof name, "%s.%016llx", w->name, (unsigned long long)hmap_hash(basis));
    const char *ns = *w->namespace_ ? w->namespace_ : "default";
    char err[512];
    trellis_object *old = s->st->ops->get(s->st, "Event", ns, name);
    if (old) {
        int64_t count = 1;
        value_int(object_get(old, "count"), &count);
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%lld", (long long)count + 1);
        store_edit e[2] = {{"count", cnt, 1}, {"lastTimestamp", ts, 0}};
        if (s->st->ops->patch(s->st, old, e, 2, err, sizeof err) < 0)
            log_debug("event %s/%s: count not updated: %s", ns, name, err);
        object_unref(old);
        if (s->binder)
            binder_request_flush(s->binder);
        metrics_event_written(reason);
        return;
    }
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(ev, "kind", json_object_new_string("Event"));
    json_object *md = json_object_new_object();
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(md, "namespace", json_object_new_string(ns));
    if (codes) {
        json_object *ann = json_object_new_object();
        json_object_object_add(ann, "trellis.io/reasons", json_object_new_string(codes));
        json_object_object_add(md, "annotations", ann);
    }
    json_object_object_add(ev, "metadata", md);
    json_object *inv = json_object_new_object();
    json_object_object_add(inv, "apiVersion", json_object_new_string(w->api_version));
    json_object_object_add(inv, "kind", json_object_new_string(w->kind));
    json_object_object_add(inv, "namespace", json_object_new_string(w->namespace_));
    json_object_object_add(inv, "name", json_object_new_string(w->name));
    json_object_object_add(inv, "uid", json_object_new_string(w->uid));
    json_object_object_add(ev, "involvedObject", inv);
    json_object_object_add(ev, "reason", json_object_new_string(reason));
    json_object_object_add(ev, "message", json_object_new_string(message));
    json_object_object_add(ev, "type", json_object_new_string(type));
    json_object *src = json_object_new_object();
    json_object_object_add(src, "component", json_object_new_string(p->cfg->name));
    json_object_object_add(ev, "source", src);
    json_object_object_add(ev, "reportingComponent", json_object_new_string("trellis"));
    json_object_object_add(ev, "count", json_object_new_int(1));
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(ts));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(ts));
    trellis_object *o = object_new(ev, err, sizeof err);
    if (!o) {
        log_error("event for %s %s: %s", w->kind, w->key, err);
        return;
    }
    if (s->st->ops->create(s->st, o, err, sizeof err) < 0)
        log_warn("event for %s %s not written: %s", w->kind, w->key, err);
    else
        metrics_event_written(reason);
    object_unref(o);
    if (s->binder)
        binder_request_flush(s->binder);
}

/* FailedScheduling, with the reason code per target. */
static void event_unschedulable(sched *s, profile *p, trellis_cycle *c, const trellis_object *w,
                                const char *message)
{
    strbuf codes;
    sb_init(&codes);
    for (size_t i = 0; i < c->n; i++) {
        const trellis_plugin *who;
        trellis_status st;
        framework_explain(c, i, &who, &st);
        sb_printf(&codes, "%s%s=%s", i ? "," : "", c->targets[i]->name, st.reason);
    }
    record_event(s, p, w, "Warning", "FailedScheduling", message, codes.s ? codes.s : "");
    sb_free(&codes);
}

/* Which plugins rejected the workload of an unschedulable cycle, for the
 * queueing hints: a bit per plugin index, QUEUE_REJ_ANY when a change of
 * any kind may help (no target at all, a target whose object a plugin
 * could not read, more plugins than bits). */
static uint64_t rejectors(const trellis_cycle *c)
{
    const profile *p = c->p;
    uint64_t m = c->n ? 0 : QUEUE_REJ_ANY;
    for (size_t i = 0; i < c->n; i++) {
        int r = framework_rej(c, i);
        int idx = -1;
        if (r >= 0 && (size_t)r < p->filter.n)
            idx = p->filter.v[r]->index;
        else if (r == REJ_PRE_FILTER)
            idx = c->pre_plugin;
        if (idx >= 0 && idx < 63)
            m |= 1ull << idx;
        else if (r != REJ_EXCLUDED)
            m |= QUEUE_REJ_ANY;
    }
    return m;
}

/* One scheduling cycle; the result for the metrics (a workload assumed
 * and handed to binding counts as scheduled). */
static dec_result schedule_one(sched *s, profile *p, qitem *it)
{
    decision *d = decision_for(s, it->w, p);
    d->attempts++;
    snapshot_update(&p->snap, &s->cache);
    trellis_cycle *c = &s->cycle;
    c->d = d;
    c->nominated_name = d->nominated;
    char msg[1024];
    const struct trellis_target *best = NULL;
    fw_result r = framework_schedule(p, c, it->w, s->explain, &best, msg, sizeof msg);
    c->nominated_name = NULL;
    if (s->explain)
        record_candidates(c, d);
    if (r == FW_ERROR) {
        set_result(d, DEC_ERROR, msg, NULL);
        queue_requeue(&p->q, it, 0, s->now_ms);
        return DEC_ERROR;
    }
    if (r == FW_UNSCHEDULABLE) {
        char *m = framework_unschedulable_message(c);
        set_result(d, DEC_UNSCHEDULABLE, m, NULL);
        free(m);
        if (c->changed && d->attempts < s->max_attempts) {
            queue_retry_now(&p->q, it);
        } else {
            if (s->run_mode)
                log_info("%s %s: unschedulable: %s", it->w->kind, it->w->key, d->message);
            if (p->cfg->events)
                event_unschedulable(s, p, c, it->w, d->message);
            it->rejectors = rejectors(c);
            queue_requeue(&p->q, it, 1, s->now_ms);
        }
        return DEC_UNSCHEDULABLE;
    }
    assume_and_bind(s, p, c, d, it, best);
    return d->result == DEC_ERROR || d->result == DEC_UNSCHEDULABLE ? d->result
                                                                      : DEC_SCHEDULED;
}

/* Bind workloads whose permit wait ended; with `final`, every wait ends
 * (a one-shot run has no later moment to allow them). */
static void process_waiting(sched *s, int final)
{
    pthread_mutex_lock(&s->wait_mu);
    size_t k = 0;
    for (size_t i = 0; i < s->n_waiting; i++) {
        waiting *wt = &s->waiting[i];
        cache_target *ct = (cache_target *)wt->target;
        trellis_cycle *c = &s->cycle;
        int timed_out = final || (s->run_mode && s->now_ms >= wt->deadline_ms);
        if (wt->allowed) {
            framework_cycle_reset(c, wt->p, wt->it->w);
            c->d = wt->d;
            if (s->binder)
                binder_push(s->binder, job_new(s, wt->p, c, wt->d, wt->it, ct));
            else
                bind_cycle(s, wt->p, c, wt->d, wt->it, ct);
        } else if (wt->rejected || timed_out) {
            char msg[512];
            if (wt->rejected)
                snprintf(msg, sizeof msg, "rejected while waiting on permit: %s",
                         wt->reject_reason ? wt->reject_reason : "");
            else if (final)
                snprintf(msg, sizeof msg, "PermitTimeout: still waiting on permit when the "
                                          "run ended");
            else
                snprintf(msg, sizeof msg, "PermitTimeout: still waiting on permit after its "
                                          "timeout");
            framework_cycle_reset(c, wt->p, wt->it->w);
            fail_assumed(s, wt->p, c, wt->d, wt->it, ct, DEC_UNSCHEDULABLE, msg);
        } else {
            s->waiting[k++] = *wt;
            continue;
        }
        free(wt->reject_reason);
        wt->reject_reason = NULL;
        wt->allowed = wt->rejected = 0;
        wt->it = NULL; /* handled: sched_permit_set skips it */
    }
    s->n_waiting = k;
    pthread_mutex_unlock(&s->wait_mu);
}

/* "1234/50000 workloads, 8123/s" on stderr, at most five times a second;
 * done = SIZE_MAX ends the line. */
static void show_progress(sched *s, size_t done, uint64_t t0, uint64_t *last)
{
    uint64_t t = now_ns();
    if (done != SIZE_MAX && t - *last < 200000000ull)
        return;
    *last = t;
    double secs = (double)(t - t0) / 1e9;
    size_t n = done == SIZE_MAX ? s->n_cycles : done;
    fprintf(stderr, "\r%zu/%zu workloads, %.0f/s ", n, s->n_pending,
            secs > 0 ? (double)n / secs : 0.0);
    if (done == SIZE_MAX)
        fputc('\n', stderr);
    fflush(stderr);
}

/* The store could not write the object id: a decision that placed it
 * is an error, with the store's reason. */
static void decision_not_written(void *ud, const char *id, const char *why)
{
    sched *s = ud;
    decision *d = hmap_get(&s->dec_by_key, id);
    if (!d || d->result != DEC_SCHEDULED)
        return;
    char msg[1200];
    snprintf(msg, sizeof msg, "binding to %s not written: %.1000s",
             d->n_targets ? d->targets[0] : "?", why);
    set_result(d, DEC_ERROR, msg, NULL);
}

int sched_run_once(sched *s, char *err, size_t errlen)
{
    uint64_t t0 = now_ns(), last = t0;
    run_eviction_checks(s);
    for (;;) {
        int progress = 0;
        for (size_t i = 0; i < s->n_profiles; i++) {
            profile *p = &s->profiles[i];
            qitem *it = queue_pop(&p->q, 0);
            if (!it)
                continue;
            progress = 1;
            uint64_t c0 = now_ns();
            schedule_one(s, p, it);
            uint64_t dt = now_ns() - c0;
            grow(&s->cycle_ns, &s->cap_cycles, s->n_cycles + 1, sizeof *s->cycle_ns);
            s->cycle_ns[s->n_cycles++] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
            if (s->n_waiting)
                process_waiting(s, 0);
            if (s->progress && (s->n_cycles & 255) == 0)
                show_progress(s, s->n_cycles, t0, &last);
        }
        if (!progress)
            break;
    }
    process_waiting(s, 1);
    s->schedule_ns = now_ns() - t0;
    if (s->progress && s->n_cycles >= 256)
        show_progress(s, SIZE_MAX, t0, &last);
    if (s->st && s->st->ops->flush(s->st, decision_not_written, s, err, errlen) < 0)
        return -1;
    return 0;
}

static int by_key_desc(const void *a, const void *b)
{
    const trellis_object *x = *(trellis_object *const *)a, *y = *(trellis_object *const *)b;
    return -strcmp(x->key, y->key);
}

int sched_deschedule(sched *s, profile *p, size_t budget, desched_fn report, void *ud,
                     char *err, size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    size_t moved = 0;
    snapshot_update(&p->snap, &s->cache);
    /* the snapshot's targets are in name order; copy the names, since
     * moving workloads updates the snapshot */
    size_t nt = p->snap.n;
    char **names = xcalloc(nt ? nt : 1, sizeof *names);
    for (size_t i = 0; i < nt; i++)
        names[i] = xstrdup(p->snap.targets[i]->name);
    for (size_t i = 0; i < nt && moved < budget; i++) {
        cache_target *ct = cache_get_target(&s->cache, pc->target_kind, names[i]);
        int64_t cap;
        if (!ct || !ct->t.obj || value_int(object_get(ct->t.obj, pc->capacity_field), &cap) < 0)
            continue;
        trellis_object **on = NULL;
        size_t n = 0, ncap = 0;
        for (size_t k = 0; k < s->n_objects; k++) {
            trellis_object *w = s->objects[k];
            const char *b = owner_for(s, w) == p ? value_string(object_get(w, pc->binding_field))
                                                 : NULL;
            if (b && strcmp(b, names[i]) == 0) {
                grow(&on, &ncap, n + 1, sizeof *on);
                on[n++] = w;
            }
        }
        if ((int64_t)n > cap && n > 1)
            qsort(on, n, sizeof *on, by_key_desc);
        int64_t over = (int64_t)n - cap;
        for (size_t k = 0; k < n && over > 0 && moved < budget; k++) {
            trellis_object *w = on[k];
            cache_forget(&s->cache, w, ct);
            snapshot_update(&p->snap, &s->cache);
            decision *d = decision_for(s, w, p);
            d->attempts++;
            trellis_cycle *c = &s->cycle;
            c->d = d;
            c->exclude_name = names[i];
            char msg[1024];
            const struct trellis_target *best = NULL;
            fw_result r = framework_schedule(p, c, w, 0, &best, msg, sizeof msg);
            c->exclude_name = NULL;
            qitem *it = queue_take(&p->q, w, s->now_ms);
            if (r == FW_SCHEDULED && it) {
                assume_and_bind(s, p, c, d, it, best);
                if (d->result == DEC_SCHEDULED) {
                    report(ud, w, names[i], d->targets[0], NULL);
                    moved++;
                    over--;
                    continue;
                }
                snprintf(msg, sizeof msg, "%s", d->message ? d->message : "binding failed");
            } else if (r == FW_UNSCHEDULABLE) {
                char *m = framework_unschedulable_message(c);
                snprintf(msg, sizeof msg, "%s", m);
                free(m);
            }
            /* no other target takes it: it stays where it is */
            cache_add_bound(&s->cache, w, pc->target_kind, names[i]);
            if (it && it->state == Q_IN_FLIGHT)
                queue_done(&p->q, it);
            else if (it)
                queue_delete(&p->q, w);
            set_result(d, DEC_UNSCHEDULABLE, msg, names[i]);
            report(ud, w, names[i], NULL, msg);
        }
        free(on);
    }
    for (size_t i = 0; i < nt; i++)
        free(names[i]);
    free(names);
    if (s->st && s->st->ops->flush(s->st, NULL, NULL, err, errlen) < 0)
        return -1;
    return (int)moved;
}

int sched_evict(trellis_cycle *c, const trellis_plugin *pl, const trellis_object *victim,
                const char *reason, char *err, size_t errlen)
{
    sched *s = c->p->sched;
    if (!c->in_post_filter)
        return errf(err, errlen, "evict is only allowed in a post-filter");
    cache_workload *cw = cache_get_workload(&s->cache, victim);
    if (!cw || !cw->n_as)
        return errf(err, errlen, "%s %s is not assigned to any target", victim->kind,
                    victim->key);
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].assumed)
            return errf(err, errlen, "%s %s is being bound (assumed on %s); it cannot be evicted",
                        victim->kind, victim->key, cw->as[i].target->name);
    trellis_object *v = object_ref(cw->obj);
    profile *vp = owner_for(s, v);
    store_edit e = {vp ? vp->cfg->binding_field : c->p->cfg->binding_field, NULL, 0};
    if (s->st->ops->patch(s->st, v, &e, 1, err, errlen) < 0) {
        object_unref(v);
        return -1;
    }
    strbuf from;
    sb_init(&from);
    /* only the binding goes: a status field counting it elsewhere stays */
    const char *bound = value_string(object_get(v, e.path));
    for (size_t i = 0; i < cw->n_as;) {
        cache_target *t = cw->as[i].target;
        if (bound && strcmp(bound, t->name) == 0) {
            sb_printf(&from, "%s%s", from.len ? "," : "", t->name);
            cache_forget(&s->cache, v, t);
        } else {
            i++;
        }
    }
    decision *d = c->d;
    d->evicted = xrealloc(d->evicted, (d->n_evicted + 1) * sizeof *d->evicted);
    obj_id *id = &d->evicted[d->n_evicted++];
    id->kind = xstrdup(v->kind);
    id->namespace_ = xstrdup(v->namespace_);
    id->name = xstrdup(v->name);
    log_info("plugin %s: evicted %s %s from %s: %s", pl->name, v->kind, v->key, from.s,
             reason ? reason : "");
    sb_free(&from);
    profile *sp = sched_profile_for(s, v);
    if (sp)
        queue_add(&sp->q, v, s->now_ms);
    object_unref(v);
    c->changed = 1;
    return 0;
}

int sched_create_target(trellis_cycle *c, const trellis_plugin *pl, const char *json,
                        char *err, size_t errlen)
{
    sched *s = c->p->sched;
    if (!c->in_post_filter)
        return errf(err, errlen, "create_target is only allowed in a post-filter");
    trellis_object *o = object_from_json(json, err, errlen);
    if (!o)
        return -1;
    const cfg_profile *pc = c->p->cfg;
    if (!kind_matches(o, pc->target_kind, pc->target_api_version)) {
        errf(err, errlen, "a created target must be of kind %s, not %s", pc->target_kind,
             o->kind);
        object_unref(o);
        return -1;
    }
    if (cache_get_target(&s->cache, o->kind, o->name) &&
        cache_get_target(&s->cache, o->kind, o->name)->t.obj) {
        errf(err, errlen, "%s %s exists already", o->kind, o->name);
        object_unref(o);
        return -1;
    }
    if (s->st->ops->create(s->st, o, err, errlen) < 0) {
        object_unref(o);
        return -1;
    }
    prepare(s, o, 0);
    cache_set_target(&s->cache, o);
    index_set(s, o);
    decision *d = c->d;
    d->created = xrealloc(d->created, (d->n_created + 1) * sizeof *d->created);
    obj_id *id = &d->created[d->n_created++];
    id->kind = xstrdup(o->kind);
    id->namespace_ = xstrdup(o->namespace_);
    id->name = xstrdup(o->name);
    log_info("plugin %s: created %s %s", pl->name, o->kind, o->key);
    object_unref(o);
    c->changed = 1;
    return 0;
}

int sched_nominate(trellis_cycle *c, const struct trellis_target *t)
{
    if (!c->in_post_filter || !t)
        return -1;
    free(c->d->nominated);
    c->d->nominated = xstrdup(t->name);
    return 0;
}

int sched_store_set_field(const trellis_plugin *pl, const trellis_object *o, const char *path,
                          const char *value, char *err, size_t errlen)
{
    sched *s = pl->profile->sched;
    if (!s->st)
        return errf(err, errlen, "no store");
    store_edit e = {path, value, 0};
    return s->st->ops->patch(s->st, o, &e, 1, err, errlen);
}

int sched_permit_set(const trellis_plugin *pl, const char *ns, const char *name, int allow,
                     const char *reason)
{
    sched *s = pl->profile->sched;
    pthread_mutex_lock(&s->wait_mu);
    int rc = -1;
    for (size_t i = 0; i < s->n_waiting && rc < 0; i++) {
        waiting *wt = &s->waiting[i];
        if (!wt->it)
            continue;
        const trellis_object *w = wt->it->w;
        if (strcmp(w->namespace_, ns ? ns : "") == 0 && strcmp(w->name, name) == 0) {
            if (allow) {
                wt->allowed = 1;
            } else {
                wt->rejected = 1;
                free(wt->reject_reason);
                wt->reject_reason = xstrdup(reason ? reason : "");
            }
            rc = 0;
        }
    }
    pthread_mutex_unlock(&s->wait_mu);
    return rc;
}

static int dec_cmp(const void *a, const void *b)
{
    const decision *x = *(decision *const *)a, *y = *(decision *const *)b;
    int r = strcmp(x->w->kind, y->w->kind);
    if (!r)
        r = strcmp(x->w->namespace_, y->w->namespace_);
    if (!r)
        r = strcmp(x->w->name, y->w->name);
    return r;
}

void sched_sorted_decisions(sched *s)
{
    if (s->n_dec)
        qsort(s->decisions, s->n_dec, sizeof *s->decisions, dec_cmp);
}

void obj_ids_free(obj_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ids[i].kind);
        free(ids[i].namespace_);
        free(ids[i].name);
    }
    free(ids);
}

/* Give o's prepared data back to the plugins and drop the reference
 * s->prepared held. */
static void unprepare(sched *s, trellis_object *o)
{
    for (size_t j = 0; j < s->reg.n_inst && o->aux; j++) {
        trellis_plugin *pl = s->reg.inst[j];
        if (pl->slot >= 0 && (size_t)pl->slot < o->naux && o->aux[pl->slot]) {
            if (pl->h.release)
                GUARD(pl, "release", o->id, pl->hook_deadline_ms,
                      pl->h.release(pl, o->aux[pl->slot]));
            o->aux[pl->slot] = NULL;
        }
    }
    object_unref(o);
}

static void decision_free(decision *d)
{
    set_result(d, DEC_PENDING, NULL, NULL);
    free_cands(d);
    obj_ids_free(d->evicted, d->n_evicted);
    obj_ids_free(d->created, d->n_created);
    free(d->nominated);
    object_unref(d->w);
    free(d);
}

void sched_close(sched *s)
{
    for (size_t i = 0; i < s->n_waiting; i++)
        free(s->waiting[i].reject_reason);
    free(s->waiting);
    for (size_t i = 0; i < s->n_evictions; i++) {
        eviction *ev = &s->evictions[i];
        free(ev->workload.kind);
        free(ev->workload.namespace_);
        free(ev->workload.name);
        free(ev->target);
        free(ev->plugin);
        free(ev->code);
        free(ev->reason);
    }
    free(s->evictions);
    sched_stop(s);
    quarantine_free(s->quarantine);
    s->quarantine = NULL;
    for (size_t k = 0; k < s->n_deferred; k++) {
        if (s->deferred[k].old_obj)
            object_unref(s->deferred[k].old_obj);
        if (s->deferred[k].new_obj)
            object_unref(s->deferred[k].new_obj);
    }
    free(s->deferred);
    free(s->decisions);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&s->dec_by_key, &i)))
        decision_free(sl->val);
    hmap_free(&s->dec_by_key);
    i = 0;
    while ((sl = hmap_next(&s->by_id, &i))) {
        free(sl->val);
    }
    hmap_free(&s->by_id);
    for (size_t k = 0; k < s->n_objects; k++)
        object_unref(s->objects[k]);
    free(s->objects);
    for (size_t k = 0; k < s->n_profiles; k++) {
        profile *p = &s->profiles[k];
        queue_free(&p->q);
        snapshot_free(&p->snap);
        framework_profile_free(p);
        plist *lists[] = {&p->pre_filter, &p->filter,  &p->post_filter,      &p->pre_score,
                          &p->score,      &p->reserve, &p->permit,           &p->pre_bind,
                          &p->bind,       &p->post_bind, &p->prepare_workload,
                          &p->prepare_target, &p->eviction};
        for (size_t j = 0; j < sizeof lists / sizeof *lists; j++)
            free(lists[j]->v);
        free(p->plugins);
    }
    free(s->profiles);
    cache_free(&s->cache);
    cycle_free(&s->cycle);
    /* prepared data goes back to the plugins that made it, before fini */
    for (size_t k = 0; k < s->n_prepared; k++)
        unprepare(s, s->prepared[k]);
    free(s->prepared);
    free(s->cycle_ns);
    registry_free(&s->reg);
    pool_free(s->pool);
    pthread_mutex_destroy(&s->wait_mu);
    memset(s, 0, sizeof *s);
}

/* ---- the long-running host ---- */

static void drop_decision(sched *s, const trellis_object *w)
{
    decision *d = hmap_del(&s->dec_by_key, w->id);
    if (d)
        decision_free(d);
}

/* Release the prepared data of objects only s->prepared still holds. */
static void sweep(sched *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_prepared; i++) {
        trellis_object *o = s->prepared[i];
        if (atomic_load(&o->refs) == 1)
            unprepare(s, o);
        else
            s->prepared[k++] = o;
    }
    s->n_prepared = k;
    s->n_replaced = 0;
}

typedef struct hint_ctx {
    profile *p;
    unsigned event;
    const trellis_object *old_obj, *new_obj;
} hint_ctx;

/* May this change help the unschedulable workload of it? Asks the
 * plugins that rejected it (kube-scheduler's queueing hints). */
static int hint_pred(void *ud, qitem *it)
{
    const hint_ctx *h = ud;
    if (it->rejectors & QUEUE_REJ_ANY)
        return 1;
    for (size_t i = 0; i < h->p->n_plugins && i < 63; i++)
        if ((it->rejectors & (1ull << i)) &&
            plugin_event_concerns(h->p->plugins[i], it->w, h->event, h->old_obj, h->new_obj))
            return 1;
    return 0;
}

/* Move back what a change may help, in p or (p NULL) in every profile. */
static void move_on_event(sched *s, profile *only, unsigned event, const trellis_object *old_obj,
                          const trellis_object *new_obj)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        if ((only && p != only) || !p->q.n_unschedulable)
            continue;
        hint_ctx h = {p, event, old_obj, new_obj};
        size_t n = queue_move_if(&p->q, s->now_ms, hint_pred, &h);
        if (n) {
            const trellis_object *o = new_obj ? new_obj : old_obj;
            log_debug("profile %s: %s %s changed: %zu unschedulable workload(s) queued again",
                      p->cfg->name, o->kind, o->key, n);
        }
    }
}

static void apply_target(sched *s, trellis_object *old_obj, trellis_object *new_obj)
{
    const trellis_object *o = new_obj ? new_obj : old_obj;
    if (new_obj) {
        index_set(s, new_obj);
        prepare(s, new_obj, 0);
        cache_set_target(&s->cache, new_obj);
    } else {
        index_del(s, old_obj);
        cache_remove_target(&s->cache, old_obj->kind, old_obj->name);
    }
    s->targets_changed = 1;
    unsigned ev = !old_obj ? TRELLIS_EV_TARGET_ADD
                           : !new_obj ? TRELLIS_EV_TARGET_DELETE : TRELLIS_EV_TARGET_UPDATE;
    for (size_t i = 0; i < s->n_profiles; i++)
        if (kind_matches(o, s->profiles[i].cfg->target_kind,
                         s->profiles[i].cfg->target_api_version))
            move_on_event(s, &s->profiles[i], ev, old_obj, new_obj);
}

/* 0 when the workload is in flight (being bound, or waiting on permit):
 * the change waits until that ends. */
static int apply_workload(sched *s, profile *own, trellis_object *old_obj,
                          trellis_object *new_obj)
{
    trellis_object *o = new_obj ? new_obj : old_obj;
    for (size_t i = 0; i < s->n_profiles; i++) {
        qitem *it = queue_find(&s->profiles[i].q, o);
        if (it && it->state == Q_IN_FLIGHT)
            return 0;
    }
    int gone = 0; /* a target lost this workload: it has room now */
    if (old_obj) {
        cache_workload *cw = cache_get_workload(&s->cache, old_obj);
        if (cw) {
            for (size_t i = 0; i < cw->n_as && !gone; i++) {
                const char *t = cw->as[i].target->name;
                int kept = 0;
                const cfg_profile *pc = own->cfg;
                for (size_t k = 0; new_obj && k <= pc->n_also_counts && !kept; k++) {
                    const char *b = value_string(
                        object_get(new_obj, k ? pc->also_counts[k - 1] : pc->binding_field));
                    kept = b && strcmp(b, t) == 0;
                }
                gone = !kept;
            }
            cache_remove_workload(&s->cache, old_obj);
        }
    }
    if (new_obj) {
        index_set(s, new_obj);
        prepare(s, new_obj, 1);
        add_assignments(s, own, new_obj);
        const char *bound = value_string(object_get(new_obj, own->cfg->binding_field));
        profile *sp = sched_profile_for(s, new_obj);
        for (size_t i = 0; i < s->n_profiles; i++)
            if ((bound && *bound) || &s->profiles[i] != sp)
                queue_delete(&s->profiles[i].q, new_obj);
        if (bound && *bound)
            drop_decision(s, new_obj);
        else if (sp)
            queue_add(&sp->q, new_obj, s->now_ms);
    } else {
        index_del(s, old_obj);
        for (size_t i = 0; i < s->n_profiles; i++)
            queue_delete(&s->profiles[i].q, old_obj);
        drop_decision(s, old_obj);
    }
    if (gone)
        move_on_event(s, own, TRELLIS_EV_WORKLOAD_GONE, old_obj, NULL);
    return 1;
}

void sched_on_change(void *ud, store_event_type type, trellis_object *old_obj,
                     trellis_object *new_obj)
{
    sched *s = ud;
    static const char *const names[] = {"", "added", "modified", "deleted"};
    metrics_store_event(names[type]);
    trellis_object *o = new_obj ? new_obj : old_obj;
    char who[256];
    log_debug("store: %s %s", object_describe(o, who, sizeof who), names[type]);
    if (s->quarantine && quarantine_count(s->quarantine)) {
        /* a changed or deleted object may be tried again */
        quarantine_forget(s->quarantine, o->id);
        char qerr[512];
        if (quarantine_save(s->quarantine, 0, qerr, sizeof qerr) < 0)
            log_warn("%s", qerr);
    }
    if (is_target_kind(s, o)) {
        apply_target(s, old_obj, new_obj);
        return;
    }
    profile *own = owner_for(s, o);
    if (own) {
        if (!apply_workload(s, own, old_obj, new_obj)) {
            grow(&s->deferred, &s->cap_deferred, s->n_deferred + 1, sizeof *s->deferred);
            struct change *c = &s->deferred[s->n_deferred++];
            c->type = type;
            c->old_obj = old_obj ? object_ref(old_obj) : NULL;
            c->new_obj = new_obj ? object_ref(new_obj) : NULL;
        }
        return;
    }
    if (new_obj)
        index_set(s, new_obj);
    else
        index_del(s, old_obj);
    /* the host's own Events never help a workload fit */
    if (strcmp(o->kind, "Event") != 0)
        move_on_event(s, NULL, TRELLIS_EV_OTHER, old_obj, new_obj);
}

/* Changes that waited for a workload in flight, in order. */
static void apply_deferred(sched *s)
{
    struct change *v = s->deferred;
    size_t n = s->n_deferred;
    if (!n)
        return;
    s->deferred = NULL;
    s->n_deferred = s->cap_deferred = 0;
    for (size_t i = 0; i < n; i++) {
        sched_on_change(s, v[i].type, v[i].old_obj, v[i].new_obj);
        if (v[i].old_obj)
            object_unref(v[i].old_obj);
        if (v[i].new_obj)
            object_unref(v[i].new_obj);
    }
    free(v);
}

void sched_after_changes(sched *s)
{
    if (s->targets_changed) {
        s->targets_changed = 0;
        run_eviction_checks(s);
    }
    if (s->n_replaced && (s->n_replaced >= 1024 || s->n_replaced * 4 >= s->n_prepared))
        sweep(s);
}

int sched_start(sched *s, char *err, size_t errlen)
{
    s->run_mode = 1;
    s->binder = binder_start(run_jobs, s, err, errlen);
    return s->binder ? 0 : -1;
}

int sched_step(sched *s)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        qitem *it = queue_pop(&p->q, s->now_ms);
        if (!it)
            continue;
        uint64_t c0 = now_ns();
        dec_result r = schedule_one(s, p, it);
        metrics_attempt(p->cfg->name,
                        r == DEC_SCHEDULED       ? "scheduled"
                        : r == DEC_UNSCHEDULABLE ? "unschedulable"
                                                 : "error",
                        (double)(now_ns() - c0) / 1e9);
        return 1;
    }
    return 0;
}

static void collect_from(sched *s, binder *b)
{
    size_t n;
    void **jobs = binder_take_done(b, &n);
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        const char *pname = j->p->cfg->name;
        double secs = (double)(now_ns() - j->t0) / 1e9;
        if (!j->failed) {
            metrics_binding(pname, "success", secs);
            trellis_object *w = object_ref(j->it->w);
            bind_done(s, j->p, j->d, j->it, j->ct);
            drop_decision(s, w);
            object_unref(w);
            s->n_bound_total++;
        } else {
            metrics_binding(pname, "error", secs);
            metrics_bind_error(pname);
            s->n_bind_errors++;
            log_warn("%s %s: binding to %s failed: %s", j->it->w->kind, j->it->w->key,
                     j->t.name, j->msg);
            fail_assumed(s, j->p, &j->c, j->d, j->it, j->ct, DEC_ERROR, j->msg);
        }
        job_free(j);
    }
    free(jobs);
    if (n)
        apply_deferred(s);
}

void sched_collect(sched *s)
{
    if (s->binder)
        collect_from(s, s->binder);
}

void sched_tick(sched *s)
{
    /* the pool scan walks every queued item: once a second at most (or
     * as often as the shortest limit needs), not once per loop turn */
    if (s->now_ms >= s->next_pool_scan_ms) {
        uint64_t step = 1000;
        for (size_t i = 0; i < s->n_profiles; i++) {
            queue *q = &s->profiles[i].q;
            queue_flush_unschedulable(q, s->now_ms);
            if (q->max_unschedulable_ms < step)
                step = q->max_unschedulable_ms;
        }
        s->next_pool_scan_ms = s->now_ms + step;
    }
    if (s->n_waiting) {
        process_waiting(s, 0);
        apply_deferred(s);
    }
}

uint64_t sched_next_due(const sched *s)
{
    uint64_t due = UINT64_MAX;
    for (size_t i = 0; i < s->n_profiles; i++) {
        const queue *q = &s->profiles[i].q;
        if (q->active.n)
            return s->now_ms;
        uint64_t d = queue_next_due(q);
        if (d < due)
            due = d;
        if (q->n_unschedulable && s->next_pool_scan_ms < due)
            due = s->next_pool_scan_ms;
    }
    for (size_t i = 0; i < s->n_waiting; i++) {
        if (s->waiting[i].allowed || s->waiting[i].rejected)
            return s->now_ms;
        if (s->waiting[i].deadline_ms < due)
            due = s->waiting[i].deadline_ms;
    }
    return due;
}

void sched_stop(sched *s)
{
    binder *b = s->binder;
    if (!b)
        return;
    binder_stop(b); /* the bindings queued are finished */
    s->binder = NULL;
    collect_from(s, b);
    binder_free(b);
    char err[1024];
    if (s->st && s->st->ops->flush(s->st, NULL, NULL, err, sizeof err) < 0)
        log_error("store: %s", err);
}

void sched_report_metrics(const sched *s)
{
    if (!metrics_enabled())
        return;
    for (size_t i = 0; i < s->n_profiles; i++) {
        size_t a, b, u;
        queue_counts(&s->profiles[i].q, &a, &b, &u);
        metrics_set_queue(s->profiles[i].cfg->name, a, b, u);
    }
    metrics_set_cache(s->cache.targets.len, s->cache.workloads.len, s->cache.n_assumed);
}
