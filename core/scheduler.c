/*
 * scheduler.c - see scheduler.h.
 */
#include "config.h"

#include "scheduler.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static int less_adapter(void *ud, const trellis_object *a, uint64_t as,
                        const trellis_object *b, uint64_t bs)
{
    trellis_plugin *pl = ud;
    return pl->h.less(pl, a, as, b, bs);
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
            if (registry_instantiate(&s->reg, m, p, e, c->file, &pl, err, errlen) < 0) {
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
        snapshot_init(&p->snap, pc->target_kind, s->reg.n_counters);
    }
    cache_init(&s->cache, s->reg.n_counters);
    return 0;
}

/* Let the plugins of the profiles concerned prepare o. */
static void prepare(sched *s, trellis_object *o, int as_workload)
{
    if (!o->aux && s->reg.n_slots) {
        o->aux = xcalloc((size_t)s->reg.n_slots, sizeof *o->aux);
        o->naux = (size_t)s->reg.n_slots;
    }
    if (as_workload && !o->counters && s->reg.n_counters)
        o->counters = xcalloc((size_t)s->reg.n_counters, sizeof *o->counters);
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
                if (fn(pl, o, &data, perr, sizeof perr) != 0) {
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
                pl->h.amounts(pl, o, o->counters + pl->counter_off);
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

const trellis_object *sched_lookup(const sched *s, const char *kind, const char *ns,
                                   const char *name)
{
    char *k = id_key(kind, ns, name);
    const trellis_object *o = hmap_get(&s->by_id, k);
    free(k);
    return o;
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
                    if (pl->h.eviction_check(pl, w, &ct->t, &st) == TRELLIS_SUCCESS)
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
    s->evictions = xrealloc(s->evictions, (s->n_evictions + 1) * sizeof *s->evictions);
    eviction *ev = &s->evictions[s->n_evictions++];
    ev->workload.kind = xstrdup(w->kind);
    ev->workload.namespace_ = xstrdup(w->namespace_);
    ev->workload.name = xstrdup(w->name);
    ev->target = xstrdup(ct->name);
    ev->plugin = xstrdup(pl->name);
    ev->code = xstrdup(st->reason);
    ev->reason = xstrdup(st->message);
    log_info("plugin %s: evicted %s %s from %s: %s", pl->name, w->kind, w->key, ct->name,
             st->message);
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
        queue_add(&sp->q, w, 0);
        s->n_pending++;
    }
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
        log_warn("%s:%d: %s (skipped)", e->file, e->line, e->message);
    }
    s->n_manifest_errors = ms.n_errors;
    /* every object can be looked up by the plugins while they prepare */
    for (size_t i = 0; i < ms.n_objects; i++) {
        trellis_object *o = ms.objects[i];
        char *k = id_key(o->kind, o->namespace_, o->name);
        if (hmap_get(&s->by_id, k)) {
            free(k);
            continue;
        }
        hmap_put(&s->by_id, k, o);
        grow(&s->objects, &s->cap_objects, s->n_objects + 1, sizeof *s->objects);
        s->objects[s->n_objects++] = object_ref(o);
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
        profile *own = owner_for(s, o);
        if (!own)
            continue;
        prepare(s, o, 1);
        s->n_workloads_loaded++;
        add_assignments(s, own, o);
        const char *bound = value_string(object_get(o, own->cfg->binding_field));
        if (bound && *bound)
            continue;
        profile *p = sched_profile_for(s, o);
        if (p) {
            queue_add(&p->q, o, 0);
            s->n_pending++;
        }
    }
    manifest_set_free(&ms);
    s->load_ns = now_ns() - t0;
    return 0;
}

static char *dec_key(const trellis_object *w)
{
    return xasprintf("%s/%s", w->kind, w->key);
}

static decision *decision_for(sched *s, trellis_object *w, profile *p)
{
    char *k = dec_key(w);
    decision *d = hmap_get(&s->dec_by_key, k);
    if (d) {
        free(k);
        if (d->w != w) {
            object_unref(d->w);
            d->w = object_ref(w);
        }
        d->p = p;
        return d;
    }
    d = xcalloc(1, sizeof *d);
    d->w = object_ref(w);
    d->p = p;
    grow(&s->decisions, &s->cap_dec, s->n_dec + 1, sizeof *s->decisions);
    s->decisions[s->n_dec++] = d;
    /* the key is owned by the map entry; freed in sched_close */
    hmap_put(&s->dec_by_key, k, d);
    return d;
}

static void set_result(decision *d, dec_result r, const char *msg, const char *target)
{
    d->result = r;
    free(d->message);
    d->message = msg ? xstrdup(msg) : NULL;
    for (size_t i = 0; i < d->n_targets; i++)
        free(d->targets[i]);
    free(d->targets);
    d->targets = NULL;
    d->n_targets = 0;
    if (target) {
        d->targets = xcalloc(1, sizeof *d->targets);
        d->targets[0] = xstrdup(target);
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
            pl->h.unreserve(pl, c, w, t);
    }
}

/* Undo an assumption after a failure in reserve, permit or binding. */
static void fail_assumed(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target *ct, dec_result r, const char *msg)
{
    unreserve_all(p, c, it->w, &ct->t);
    cache_forget_assumed(&s->cache, it->w, ct);
    set_result(d, r, msg, NULL);
    queue_requeue(&p->q, it, r == DEC_UNSCHEDULABLE, 0);
}

static void bind_cycle(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                       cache_target *ct)
{
    trellis_status st;
    char msg[1024];
    const struct trellis_target *t = &ct->t;
    for (size_t k = 0; k < p->pre_bind.n; k++) {
        trellis_plugin *pl = p->pre_bind.v[k];
        memset(&st, 0, sizeof st);
        if (pl->h.pre_bind(pl, c, it->w, t, &st) != TRELLIS_SUCCESS) {
            snprintf(msg, sizeof msg, "plugin %s: pre-bind failed: %s", pl->name, st.message);
            fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
            return;
        }
    }
    int handled = 0;
    for (size_t k = 0; k < p->bind.n && !handled; k++) {
        trellis_plugin *pl = p->bind.v[k];
        memset(&st, 0, sizeof st);
        int rc = pl->h.bind(pl, c, it->w, t, &st);
        if (rc == TRELLIS_SKIP)
            continue;
        if (rc != TRELLIS_SUCCESS) {
            snprintf(msg, sizeof msg, "plugin %s: bind failed: %s", pl->name, st.message);
            fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
            return;
        }
        handled = 1;
    }
    if (!handled) {
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, "no bind plugin handled the workload");
        return;
    }
    for (size_t k = 0; k < p->post_bind.n; k++) {
        trellis_plugin *pl = p->post_bind.v[k];
        pl->h.post_bind(pl, c, it->w, t);
    }
    cache_finish_binding(&s->cache, it->w, ct);
    set_result(d, DEC_SCHEDULED, NULL, ct->name);
    free(d->nominated);
    d->nominated = NULL;
    queue_done(&p->q, it);
}

static void assume_and_bind(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                            const struct trellis_target *best)
{
    cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, best->name);
    trellis_status st;
    char msg[1024];
    if (!ct) {
        set_result(d, DEC_ERROR, "the chosen target is not in the cache", NULL);
        queue_requeue(&p->q, it, 0, 0);
        return;
    }
    cache_assume(&s->cache, it->w, ct);
    for (size_t k = 0; k < p->reserve.n; k++) {
        trellis_plugin *pl = p->reserve.v[k];
        if (!pl->h.reserve)
            continue;
        memset(&st, 0, sizeof st);
        if (pl->h.reserve(pl, c, it->w, best, &st) != TRELLIS_SUCCESS) {
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
        int rc = pl->h.permit(pl, c, it->w, best, &to, &st);
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
        grow(&s->waiting, &s->cap_waiting, s->n_waiting + 1, sizeof *s->waiting);
        waiting *wt = &s->waiting[s->n_waiting++];
        memset(wt, 0, sizeof *wt);
        wt->d = d;
        wt->p = p;
        wt->it = it;
        wt->target = &ct->t;
        wt->deadline_ms = wait_ms;
        set_result(d, DEC_PENDING, "waiting on permit", NULL);
        return;
    }
    bind_cycle(s, p, c, d, it, ct);
}

/* Record a Kubernetes Event for a workload that could not be scheduled.
 * The name is derived from the workload and the message, so the same
 * failure read again in a later run is the same Event and is not written
 * twice. Reason codes per target go into an annotation for tools. */
static void write_event(sched *s, profile *p, trellis_cycle *c, const trellis_object *w,
                        const char *message)
{
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char basis[1024];
    snprintf(basis, sizeof basis, "%s/%s/%s", w->kind, w->key, message);
    char name[320];
    snprintf(name, sizeof name, "%s.%016llx", w->name,
             (unsigned long long)hmap_hash(basis));
    strbuf codes;
    sb_init(&codes);
    for (size_t i = 0; i < c->n; i++) {
        const trellis_plugin *who;
        trellis_status st;
        framework_explain(c, i, &who, &st);
        sb_printf(&codes, "%s%s=%s", i ? "," : "", c->targets[i]->name, st.reason);
    }
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(ev, "kind", json_object_new_string("Event"));
    json_object *md = json_object_new_object();
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(md, "namespace",
                           json_object_new_string(*w->namespace_ ? w->namespace_ : "default"));
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, "trellis.io/reasons",
                           json_object_new_string(codes.s ? codes.s : ""));
    json_object_object_add(md, "annotations", ann);
    json_object_object_add(ev, "metadata", md);
    json_object *inv = json_object_new_object();
    json_object_object_add(inv, "apiVersion", json_object_new_string(w->api_version));
    json_object_object_add(inv, "kind", json_object_new_string(w->kind));
    json_object_object_add(inv, "namespace", json_object_new_string(w->namespace_));
    json_object_object_add(inv, "name", json_object_new_string(w->name));
    json_object_object_add(inv, "uid", json_object_new_string(w->uid));
    json_object_object_add(ev, "involvedObject", inv);
    json_object_object_add(ev, "reason", json_object_new_string("FailedScheduling"));
    json_object_object_add(ev, "message", json_object_new_string(message));
    json_object_object_add(ev, "type", json_object_new_string("Warning"));
    json_object *src = json_object_new_object();
    json_object_object_add(src, "component", json_object_new_string(p->cfg->name));
    json_object_object_add(ev, "source", src);
    json_object_object_add(ev, "reportingComponent", json_object_new_string("trellis"));
    json_object_object_add(ev, "count", json_object_new_int(1));
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(ts));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(ts));
    sb_free(&codes);
    char err[512];
    trellis_object *o = object_new(ev, err, sizeof err);
    if (!o) {
        log_error("event for %s %s: %s", w->kind, w->key, err);
        return;
    }
    if (sched_lookup(s, "Event", o->namespace_, o->name)) {
        object_unref(o); /* recorded by an earlier run */
        return;
    }
    if (s->st->ops->create(s->st, o, err, sizeof err) < 0)
        log_warn("event for %s %s not written: %s", w->kind, w->key, err);
    object_unref(o);
}

static void schedule_one(sched *s, profile *p, qitem *it)
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
        queue_requeue(&p->q, it, 0, 0);
        return;
    }
    if (r == FW_UNSCHEDULABLE) {
        char *m = framework_unschedulable_message(c);
        set_result(d, DEC_UNSCHEDULABLE, m, NULL);
        free(m);
        if (c->changed && d->attempts < s->max_attempts) {
            queue_retry_now(&p->q, it);
        } else {
            if (p->cfg->events)
                write_event(s, p, c, it->w, d->message);
            queue_requeue(&p->q, it, 1, 0);
        }
        return;
    }
    assume_and_bind(s, p, c, d, it, best);
}

/* Bind workloads whose permit wait ended; with `final`, every wait ends
 * (a one-shot run has no later moment to allow them). */
static void process_waiting(sched *s, int final)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_waiting; i++) {
        waiting *wt = &s->waiting[i];
        cache_target *ct = (cache_target *)wt->target;
        trellis_cycle *c = &s->cycle;
        if (wt->allowed) {
            framework_cycle_reset(c, wt->p, wt->it->w);
            c->d = wt->d;
            bind_cycle(s, wt->p, c, wt->d, wt->it, ct);
        } else if (wt->rejected || final) {
            char msg[512];
            if (wt->rejected)
                snprintf(msg, sizeof msg, "rejected while waiting on permit: %s",
                         wt->reject_reason ? wt->reject_reason : "");
            else
                snprintf(msg, sizeof msg, "PermitTimeout: still waiting on permit when the "
                                          "run ended");
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
}

int sched_run_once(sched *s, char *err, size_t errlen)
{
    uint64_t t0 = now_ns();
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
        }
        if (!progress)
            break;
    }
    process_waiting(s, 1);
    s->schedule_ns = now_ns() - t0;
    if (s->st && s->st->ops->flush(s->st, err, errlen) < 0)
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
            qitem *it = queue_take(&p->q, w, 0);
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
    if (s->st && s->st->ops->flush(s->st, err, errlen) < 0)
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
        queue_add(&sp->q, v, 0);
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
    hmap_put(&s->by_id, id_key(o->kind, o->namespace_, o->name), o);
    grow(&s->objects, &s->cap_objects, s->n_objects + 1, sizeof *s->objects);
    s->objects[s->n_objects++] = object_ref(o);
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
    for (size_t i = 0; i < s->n_waiting; i++) {
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
            return 0;
        }
    }
    return -1;
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

static void free_ids(obj_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ids[i].kind);
        free(ids[i].namespace_);
        free(ids[i].name);
    }
    free(ids);
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
    for (size_t i = 0; i < s->n_dec; i++) {
        decision *d = s->decisions[i];
        set_result(d, DEC_PENDING, NULL, NULL);
        free_cands(d);
        free_ids(d->evicted, d->n_evicted);
        free_ids(d->created, d->n_created);
        free(d->nominated);
        object_unref(d->w);
        free(d);
    }
    free(s->decisions);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&s->dec_by_key, &i)))
        free((char *)sl->key);
    hmap_free(&s->dec_by_key);
    i = 0;
    while ((sl = hmap_next(&s->by_id, &i)))
        free((char *)sl->key);
    hmap_free(&s->by_id);
    for (size_t k = 0; k < s->n_objects; k++)
        object_unref(s->objects[k]);
    free(s->objects);
    for (size_t k = 0; k < s->n_profiles; k++) {
        profile *p = &s->profiles[k];
        queue_free(&p->q);
        snapshot_free(&p->snap);
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
    for (size_t k = 0; k < s->n_prepared; k++) {
        trellis_object *o = s->prepared[k];
        for (size_t j = 0; j < s->reg.n_inst && o->aux; j++) {
            trellis_plugin *pl = s->reg.inst[j];
            if (pl->slot >= 0 && (size_t)pl->slot < o->naux && o->aux[pl->slot]) {
                if (pl->h.release)
                    pl->h.release(pl, o->aux[pl->slot]);
                o->aux[pl->slot] = NULL;
            }
        }
        object_unref(o);
    }
    free(s->prepared);
    free(s->cycle_ns);
    registry_free(&s->reg);
    pool_free(s->pool);
    memset(s, 0, sizeof *s);
}
