/*
 * scheduler.c - see scheduler.h: the sequencing of load, run once, step,
 * tick and close. The concepts it sequences live in their own files:
 * index.c (objects, prepare, release), framework.c (the scheduling
 * algorithm), bindcycle.c (the binding cycle), decision.c, events.c,
 * changes.c (store changes), evictions.c, deschedule.c, services.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scheduler.h"

#include "bindcycle.h"
#include "binding.h"
#include "changes.h"
#include "clock.h"
#include "deschedule.h"
#include "events.h"
#include "evictions.h"
#include "hostapi.h"
#include "log.h"
#include "metrics.h"
#include "ownwrites.h"
#include "placements.h"
#include "quarantine.h"
#include "routing.h"
#include "runtime.h"
#include "sched_impl.h"
#include "services.h"
#include "util.h"
#include "writers.h"

/* ---- open ---- */

/* The plugin search path: extra dirs, the config's, the installed one. */
static char **plugin_dirs(const cfg *c, char *const *extra, size_t n_extra, size_t *n)
{
    char **dirs = xcalloc(n_extra + c->n_plugin_dirs + 1, sizeof *dirs);
    size_t k = 0;
    for (size_t i = 0; i < n_extra; i++)
        dirs[k++] = extra[i];
    for (size_t i = 0; i < c->n_plugin_dirs; i++)
        dirs[k++] = c->plugin_dirs[i];
    dirs[k++] = (char *)TRELLIS_PLUGINDIR;
    *n = k;
    return dirs;
}

/* Every key of the profile's plugin_args is declared by one of its
 * plugins: a misspelt shared argument is an error, not silence. */
static int check_plugin_args(const sched *s, const profile *p, char *err, size_t errlen)
{
    const config_setting_t *g = p->cfg->plugin_args;
    for (int i = 0; g && i < config_setting_length(g); i++) {
        const config_setting_t *a = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(a);
        int found = 0;
        for (size_t j = 0; j < p->n_plugins && !found; j++)
            for (const trellis_arg_spec *sp = p->plugins[j]->mod->desc->args; sp && sp->key; sp++)
                found |= strcmp(sp->key, key) == 0;
        if (!found)
            return errf(err, errlen,
                        "%s:%d: profile '%s': plugin_args '%s' is an argument of none of its "
                        "plugins (see `trellis plugins --describe NAME`)",
                        s->cfg->file, config_setting_source_line(a), p->cfg->name, key);
    }
    return 0;
}

/* Load and instantiate the plugins of profile p, config order. */
static int load_plugins(sched *s, profile *p, char **dirs, size_t nd, char *err, size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    instance_ctx ctx = {p, pc, hostapi_table(), &s->svc, s->cfg->file};
    p->plugins = xcalloc(pc->n_plugins ? pc->n_plugins : 1, sizeof *p->plugins);
    for (size_t j = 0; j < pc->n_plugins; j++) {
        plugin_module *m;
        trellis_plugin *pl;
        const cfg_plugin *e = &pc->plugins[j];
        if (registry_load(&s->reg, e->name, e->path, dirs, nd, &m, err, errlen) < 0) {
            errprefix(err, errlen, "%s:%d: profile '%s'", s->cfg->file, e->line, pc->name);
            return -1;
        }
        if (registry_instantiate(&s->reg, m, e, &ctx, &pl, err, errlen) < 0)
            return -1;
        p->plugins[p->n_plugins++] = pl;
    }
    return check_plugin_args(s, p, err, errlen);
}

/* Group p's plugins, check what a profile needs, set up its queue and
 * snapshot. */
static int build_profile(sched *s, profile *p, char *err, size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    profile_build(p);
    size_t n_sort = 0;
    for (size_t j = 0; j < p->n_plugins; j++)
        if (p->plugins[j]->h.less && (p->plugins[j]->points & PT_QUEUE_SORT))
            n_sort++;
    if (n_sort > 1)
        return errf(err, errlen,
                    "%s:%d: profile '%s': %zu plugins sort the queue; exactly one may "
                    "(restrict the others with points = [...])",
                    s->cfg->file, pc->line, pc->name, n_sort);
    if (p->bind.n == 0)
        return errf(err, errlen,
                    "%s:%d: profile '%s': no plugin binds workloads (add default-binder)",
                    s->cfg->file, pc->line, pc->name);
    queue_init(&p->q, pc->backoff_initial_ms, pc->backoff_max_ms, pc->max_unschedulable_ms);
    if (p->queue_sort) {
        p->order = rt_order_new(p->queue_sort);
        p->q.less = rt_order_less;
        p->q.order_enter = rt_order_enter;
        p->q.order_leave = rt_order_leave;
        p->q.less_ud = p->order;
    }
    if (pc->binding_model == BINDING_OBJECT)
        p->placed = placements_new(pc);
    snapshot_init(&p->snap, pc->target_kind, s->reg.n_counters, s->reg.n_slots, s->reg.n_tvalues);
    return 0;
}

static int workers(const cfg *c, int parallelism)
{
    int par = parallelism > 0 ? parallelism : c->parallelism;
    if (par <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        par = n > 0 ? (int)(n < 16 ? n : 16) : 1;
    }
    return par;
}

sched *sched_open(cfg *c, char *const *extra_dirs, size_t n_extra, int parallelism, char *err,
                  size_t errlen)
{
    sched *s = xcalloc(1, sizeof *s);
    s->cfg = c;
    s->max_attempts = 5;
    s->wall_ms = c->now ? c->now_ms : clock_wall_ms();
    registry_init(&s->reg);
    cycle_init(&s->cycle);
    s->cycle.now_ms = s->wall_ms;
    s->cycle.nominations = &s->cache.nom;
    services_init(s, &s->svc);
    s->dec = decisions_new(1);
    /* recursive: a post-bind run from bindcycle_process_waiting may allow
     * another waiting workload */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->wait_mu, &ma);
    pthread_mutex_init(&s->own_mu, NULL);
    pthread_mutexattr_destroy(&ma);
    s->pool = pool_new(workers(c, parallelism));
    s->n_profiles = c->n_profiles;
    s->profiles = xcalloc(c->n_profiles ? c->n_profiles : 1, sizeof *s->profiles);
    size_t nd;
    char **dirs = plugin_dirs(c, extra_dirs, n_extra, &nd);
    int rc = 0;
    for (size_t i = 0; i < c->n_profiles && rc == 0; i++) {
        profile *p = &s->profiles[i];
        p->cfg = &c->profiles[i];
        p->index = (int)i;
        p->sched_pool = s->pool;
        rc = load_plugins(s, p, dirs, nd, err, errlen);
    }
    free(dirs);
    for (size_t i = 0; i < s->n_profiles && rc == 0; i++)
        rc = build_profile(s, &s->profiles[i], err, errlen);
    if (rc < 0) {
        sched_close(s);
        return NULL;
    }
    cache_init(&s->cache, s->reg.n_counters);
    s->ix = index_new(&s->reg, s->profiles, s->n_profiles);
    return s;
}

void sched_set_explain(sched *s, int on)
{
    s->explain = on;
}

void sched_set_progress(sched *s, int on)
{
    s->progress = on;
}

void sched_set_long_running(sched *s)
{
    s->run_mode = 1;
    decisions_keep_all(s->dec, 0);
}

/* ---- load ---- */

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
    profile *p = routing_profile_for(s, o);
    if (p) {
        decision *d = decisions_for(s->dec, o, p);
        decision_set_result(d, DEC_ERROR, why, NULL);
        routing_event(s, p, o, "Warning", "FailedScheduling", why, NULL);
    }
    return 1;
}

/* Drop what a plugin crashed or hung on from ms: it is not given to the
 * plugins again. */
static void drop_quarantined(sched *s, manifest_set *ms)
{
    size_t k = 0;
    for (size_t i = 0; i < ms->n_objects; i++) {
        if (quarantined(s, ms->objects[i]))
            object_unref(ms->objects[i]);
        else
            ms->objects[k++] = ms->objects[i];
    }
    ms->n_objects = k;
    char qerr[512];
    if (quarantine_save(s->quarantine, 1, qerr, sizeof qerr) < 0)
        log_warn("%s", qerr);
}

/* A workload read: prepared, counted where it is placed, else queued. */
static void load_workload(sched *s, trellis_object *o)
{
    profile *p = routing_profile_for(s, o);
    profile *own = p ? p : routing_owner_for(s, o);
    if (!own)
        return;
    index_prepare(s->ix, o, 1);
    s->n_workloads_loaded++;
    routing_count_placements(s, own, o);
    routing_nominations(s, own, NULL, o);
    if (object_being_deleted(o))
        routing_finalize(s, own, o); /* it still counts where it is until it is gone */
    else if (p && routing_wants_cycle(p, o)) {
        if (run_pre_enqueue(p, o, NULL))
            routing_enqueue(s, p, o);
        else
            routing_gate(s, p, o);
    }
}

static void add_kind(const char ***v, size_t *n, size_t *cap, const char *k)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], k) == 0)
            return;
    grow(v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = k;
}

size_t sched_kinds(const sched *s, const char ***kinds)
{
    const char **v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n_profiles; i++) {
        const cfg_profile *pc = s->profiles[i].cfg;
        add_kind(&v, &n, &cap, pc->workload_kind);
        add_kind(&v, &n, &cap, pc->target_kind);
        if (pc->binding_model == BINDING_OBJECT)
            add_kind(&v, &n, &cap, pc->bobj_kind);
        if (pc->events)
            add_kind(&v, &n, &cap, "Event");
    }
    for (size_t i = 0; i < s->reg.n_inst; i++)
        for (size_t k = 0; k < s->reg.inst[i]->n_kinds; k++)
            add_kind(&v, &n, &cap, s->reg.inst[i]->kinds[k]);
    *kinds = v;
    return n;
}

int sched_load(sched *s, store *st, char *err, size_t errlen)
{
    uint64_t t0 = now_ns();
    s->st = st;
    if (st->ops->set_kinds) {
        const char **kinds;
        size_t nk = sched_kinds(s, &kinds);
        st->ops->set_kinds(st, kinds, nk);
        free(kinds);
    }
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
    if (s->quarantine)
        drop_quarantined(s, &ms);
    /* every object can be looked up by the plugins while they prepare */
    for (size_t i = 0; i < ms.n_objects; i++)
        index_set(s->ix, ms.objects[i]);
    /* targets first, so bound workloads find them */
    for (size_t i = 0; i < ms.n_objects; i++) {
        trellis_object *o = ms.objects[i];
        if (!routing_is_target(s, o))
            continue;
        index_prepare(s->ix, o, 0);
        cache_set_target(&s->cache, o);
        s->n_targets_loaded++;
    }
    /* then the binding objects, so workloads find their placements */
    for (size_t i = 0; i < ms.n_objects; i++) {
        profile *bp = routing_binding_owner(s, ms.objects[i]);
        char ids[2][PLACEMENTS_ID_MAX];
        if (bp) {
            placements_update(bp->placed, NULL, ms.objects[i], ids);
            binding_clean_up(bp, s->st, ms.objects[i]); /* written with the run's writes */
        }
    }
    for (size_t i = 0; i < ms.n_objects; i++)
        load_workload(s, ms.objects[i]);
    manifest_set_free(&ms);
    s->load_ns = now_ns() - t0;
    return 0;
}

/* ---- one scheduling cycle ---- */

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
        else if (r == REJ_LATE)
            idx = (int)cycle_late_of(c, i)->pl->index;
        else if (r == REJ_NARROWED && c->n_narrow_by <= NARROW_NAMED) {
            /* a change the narrowing plugins hear of may let it in */
            for (size_t k = 0; k + 1 < c->n_narrow_by; k++)
                if (c->narrow_by[k] < 63)
                    m |= 1ull << c->narrow_by[k];
            idx = c->narrow_by[c->n_narrow_by - 1];
        }
        if (idx >= 0 && idx < 63)
            m |= 1ull << idx;
        else if (r != REJ_EXCLUDED && r != REJ_HELD)
            m |= QUEUE_REJ_ANY;
    }
    return m;
}

/* Nothing fits: try again at once when a post-filter made room (up to
 * max_attempts), else a FailedScheduling Event and the unschedulable
 * pool. */
static void unschedulable(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it)
{
    if (c->changed && d->attempts < s->max_attempts) {
        /* the retry decides; the reasons of every target are not needed */
        decision_set_result(d, DEC_UNSCHEDULABLE, "retried: a post-filter made room", NULL);
        d->continued = 1;
        queue_retry_now(&p->q, it);
        return;
    }
    char *m = framework_unschedulable_message(c);
    decision_set_result(d, DEC_UNSCHEDULABLE, m, NULL);
    free(m);
    if (s->run_mode)
        log_info("%s %s: unschedulable: %s", it->w->kind, it->w->key, d->message);
    if (p->cfg->events) {
        char *codes = events_reason_codes(c);
        routing_event(s, p, it->w, "Warning", "FailedScheduling", d->message, codes);
        free(codes);
    }
    it->rejectors = rejectors(c);
    queue_requeue(&p->q, it, 1, s->now_ms);
    int64_t at = atomic_load(&c->retry_at);
    if (at != INT64_MAX) {
        /* the wall clock's instant on the loop's monotonic clock */
        d->retry_at = at;
        queue_wake_at(&p->q, it, s->now_ms + (uint64_t)(at - s->wall_ms));
    }
}

/* One scheduling cycle; the result for the metrics (a workload assumed
 * and handed to binding counts as scheduled). */
static dec_result cycle_one(sched *s, profile *p, qitem *it)
{
    decision *d = decisions_for(s->dec, it->w, p);
    d->attempts++;
    d->retry_at = 0;
    if (p->placed && strlen(it->w->id) >= PLACEMENTS_ID_MAX) {
        /* its binding objects could not be found again: it would be
         * placed again on every start */
        free(d->message);
        d->message = xasprintf("its id (kind/namespace/name) is %zu bytes; binding model "
                               "\"object\" supports at most %d: shorten its name",
                               strlen(it->w->id), PLACEMENTS_ID_MAX - 1);
        d->result = DEC_ERROR;
        log_warn("%s %s: %s", it->w->kind, it->w->key, d->message);
        queue_done(&p->q, it);
        return DEC_ERROR;
    }
    if (!s->run_mode && d->attempts > s->max_attempts + p->snap.n + 32) {
        /* every cycle changed something and asked for another: never settles */
        char msg[256];
        snprintf(msg, sizeof msg,
                 "gave up after %u cycles in this run: its placements do not settle (a binding "
                 "that does not read back as placed?)",
                 d->attempts - 1);
        free(d->message);
        d->message = xstrdup(msg);
        d->result = DEC_ERROR;
        queue_done(&p->q, it);
        return DEC_ERROR;
    }
    if (!d->continued)
        decision_clear_notes(d);
    else
        decision_notes_again(d);
    d->continued = 0;
    snapshot_update(&p->snap, &s->cache);
    trellis_cycle *c = &s->cycle;
    c->d = d;
    /* this run's nomination, else the one the workload carries */
    c->nominated_name = d->nominated ? d->nominated : profile_workload_nominated(p, it->w);
    routing_set_held(s, p, c, it->w);
    char msg[1024];
    const struct trellis_target *best = NULL;
    fw_result r =
        framework_schedule(p, c, it->w, s->explain ? FW_EXPLAIN : 0, &best, msg, sizeof msg);
    c->nominated_name = NULL;
    if (c->nominated_to) /* counted there for lower-priority workloads from now on */
        nominator_set(&s->cache.nom, it->w, p->cfg->target_kind, c->nominated_to->name);
    if (s->explain)
        decision_record_candidates(d, c);
    if (r == FW_ERROR) {
        decision_set_result(d, DEC_ERROR, msg, NULL);
        if (s->run_mode) /* as kube-scheduler logs an error, then retries */
            log_warn("%s %s: error (tried again after its backoff): %s", it->w->kind, it->w->key,
                     msg);
        queue_requeue(&p->q, it, 0, s->now_ms);
        return DEC_ERROR;
    }
    if (r == FW_SATISFIED) {
        run_decided(p, c, it->w, 0);
        bindcycle_satisfied(s, p, c, d, it);
        return DEC_SCHEDULED;
    }
    if (r == FW_UNSCHEDULABLE) {
        run_decided(p, c, it->w, 0);
        unschedulable(s, p, c, d, it);
        if (p->placed || c->n_released) /* it keeps what it holds */
            bindcycle_release(s, p, c, d);
        if (d->n_targets && c->want != TRELLIS_WANT_ALL) { /* as when the last one landed */
            char m[256];
            bindcycle_shortfall(d, c->want, m, sizeof m);
            free(d->message);
            d->message = xstrdup(m);
        }
        return DEC_UNSCHEDULABLE;
    }
    if (!c->n_picks && (c->picks = cycle_alloc(c, sizeof *c->picks))) {
        c->picks[0] = best; /* one pick: what bindcycle_release and decided ask about */
        c->n_picks = 1;
    }
    /* with binding objects, what decided writes goes out once they
     * landed, and not when one failed (KubeFleet writes a policy
     * snapshot's status after the bindings it made); otherwise in the
     * same flush as the binding (kube's preemption clears a Pod's
     * nomination beside its Binding) */
    if (p->placed)
        services_hold();
    run_decided(p, c, it->w, c->requeue_now);
    c->writes_held = services_held();
    if (p->placed) {
        bindcycle_run_many(s, p, c, d, it, c->n_picks ? c->picks : &best,
                           c->n_picks ? c->n_picks : 1);
    } else {
        if (c->n_released) /* a reconciled field: cleared, then set again */
            bindcycle_release(s, p, c, d);
        bindcycle_run(s, p, c, d, it, best);
    }
    return d->result == DEC_ERROR || d->result == DEC_UNSCHEDULABLE ? d->result : DEC_SCHEDULED;
}

static dec_result schedule_one(sched *s, profile *p, qitem *it)
{
    dec_result r = cycle_one(s, p, it);
    s->cycle.held = NULL; /* explain and deschedule hold nothing */
    s->cycle.n_held = 0;
    return r;
}

/* ---- run once ---- */

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

/* A binding object of d's was not written: d holds what it held, the
 * decision says so and is an error. */
static void binding_not_written(decision *d, const char *target, int released, const char *why)
{
    char msg[1200], *t = xstrdup(target);
    snprintf(msg, sizeof msg, "%s %s not written: %.1000s", released ? "release of" : "binding to",
             t, why);
    decision_unrecord(d, t, released);
    free(d->message);
    d->message = xstrdup(msg);
    d->result = DEC_ERROR;
    free(t);
}

/* A flush's failures: the writers of its objects, found at the first. */
typedef struct not_written {
    sched *s;
    writers *w;
} not_written;

/* The store could not write the object id: a decision that placed it (or
 * whose binding object it is), or whose post-filter created it (the
 * workload would be bound to a target that does not exist), is an error,
 * with the store's reason. */
static void decision_not_written(void *ud, const char *id, const char *why)
{
    not_written *nw = ud;
    decision *d = decisions_get(nw->s->dec, id);
    const char *bound = NULL;
    int released = 0;
    if (!d && !nw->w)
        nw->w = writers_new(nw->s->dec);
    if (!d && (d = writers_take_binding(nw->w, id, &bound, &released)) != NULL) {
        binding_not_written(d, bound, released, why);
        return;
    }
    int created = !d;
    if (created)
        d = writers_creator(nw->w, id);
    if (!d || d->result != DEC_SCHEDULED)
        return;
    char msg[1200];
    const char *on = d->n_targets ? d->targets[0] : "?";
    if (created)
        snprintf(msg, sizeof msg,
                 "%s, the target created for it, not written: %.900s; its binding names it "
                 "(fix the cause and run again)",
                 on, why);
    else
        snprintf(msg, sizeof msg, "binding to %s not written: %.1000s", on, why);
    decision_set_result(d, DEC_ERROR, msg, NULL);
}

/* One cycle of p's next workload, timed for --stats; 0 when p's queue is
 * empty. */
static int run_next(sched *s, profile *p)
{
    qitem *it = queue_pop(&p->q, 0);
    if (!it)
        return 0;
    uint64_t c0 = now_ns();
    schedule_one(s, p, it);
    changes_apply_own(s);
    uint64_t dt = now_ns() - c0;
    grow(&s->cycle_ns, &s->cap_cycles, s->n_cycles + 1, sizeof *s->cycle_ns);
    s->cycle_ns[s->n_cycles++] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
    if (s->n_waiting)
        bindcycle_process_waiting(s, 0);
    return 1;
}

int sched_run_once(sched *s, char *err, size_t errlen)
{
    uint64_t t0 = now_ns(), last = t0;
    evictions_check(s);
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < s->n_profiles; i++) {
            if (!run_next(s, &s->profiles[i]))
                continue;
            progress = 1;
            if (s->progress && (s->n_cycles & 255) == 0)
                show_progress(s, s->n_cycles, t0, &last);
        }
        /* this run's clock does not move: what its own writes moved back
         * is tried again now, not after a backoff (16 times at most) */
        for (size_t i = 0; i < s->n_profiles && !progress; i++)
            progress = queue_release_moved(&s->profiles[i].q, 16) > 0;
    }
    bindcycle_process_waiting(s, 1);
    s->schedule_ns = now_ns() - t0;
    if (s->progress && s->n_cycles >= 256)
        show_progress(s, SIZE_MAX, t0, &last);
    decisions_sort(s->dec);
    uint64_t w0 = now_ns();
    not_written nw = {s, NULL};
    int rc = s->st ? own_flush(s, decision_not_written, &nw, err, errlen) : 0;
    writers_free(nw.w);
    /* then what the decisions released: never before the bindings that
     * replace it */
    char lerr[1024];
    if (s->n_late && bindcycle_flush_releases(s, s->late, s->n_late, lerr, sizeof lerr) < 0) {
        log_error("store: releases: %s", lerr);
        if (rc == 0)
            rc = errf(err, errlen, "releases: %s", lerr);
    }
    s->n_late = 0;
    s->write_ns = now_ns() - w0;
    return rc < 0 ? -1 : 0;
}

/* ---- the long-running host ---- */

void sched_check_bound(sched *s)
{
    evictions_check(s);
}

int sched_start(sched *s, char *err, size_t errlen)
{
    sched_set_long_running(s);
    return bindcycle_start(s, err, errlen);
}

void sched_set_now(sched *s, uint64_t now_ms)
{
    s->now_ms = now_ms;
}

void sched_set_wall_clock(sched *s, int64_t wall_ms)
{
    s->wall_ms = wall_ms;
    s->cycle.now_ms = wall_ms;
}

int sched_step(sched *s)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        qitem *it = queue_pop(&p->q, s->now_ms);
        if (!it)
            continue;
        uint64_t c0 = now_ns(), w0 = services_writes_here();
        dec_result r = schedule_one(s, p, it);
        /* what its plugins wrote on this thread (a policy snapshot's
         * status, a created target) goes out now, not with the next
         * binding's flush, which a cycle that binds nothing never asks */
        if (s->binder && services_writes_here() != w0)
            binder_request_flush(s->binder);
        metrics_attempt(p->mcache, p->cfg->name,
                        r == DEC_SCHEDULED       ? MR_SCHEDULED
                        : r == DEC_UNSCHEDULABLE ? MR_UNSCHEDULABLE
                                                 : MR_ERROR,
                        (double)(now_ns() - c0) / 1e9);
        return 1;
    }
    return 0;
}

void sched_collect(sched *s)
{
    if (bindcycle_collect(s)) {
        changes_apply_own(s);
        changes_apply_deferred(s);
    }
}

void sched_on_change(void *ud, store_event_type type, trellis_object *old_obj,
                     trellis_object *new_obj)
{
    changes_apply(ud, type, old_obj, new_obj);
}

void sched_after_changes(sched *s)
{
    changes_settle(s);
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
        bindcycle_process_waiting(s, 0);
        changes_apply_deferred(s);
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
    return bindcycle_next_due(s, due);
}

int sched_binder_fd(const sched *s)
{
    return s->binder ? binder_fd(s->binder) : -1;
}

void sched_stop(sched *s)
{
    bindcycle_stop(s);
}

int sched_deschedule(sched *s, profile *p, size_t budget, desched_fn report, void *ud, char *err,
                     size_t errlen)
{
    return deschedule_run(s, p, budget, report, ud, err, errlen);
}

void sched_report_metrics(const sched *s)
{
    if (!metrics_enabled())
        return;
    uint64_t incoming[QI_COUNT][QE_COUNT] = {{0}};
    for (size_t i = 0; i < s->n_profiles; i++) {
        const profile *p = &s->profiles[i];
        size_t a, b, u;
        queue_counts(&p->q, &a, &b, &u);
        metrics_set_queue(p->cfg->name, a, b, u, queue_gated(&p->q));
        /* the plugins that can reject: its pre-filters and filters */
        const char *names[63];
        size_t counts[63], n = 0;
        for (size_t k = 0; k < p->n_plugins && k < 63; k++) {
            const trellis_plugin *pl = p->plugins[k];
            if (pl->h.pre_filter || pl->h.filter || pl->h.filter_batch || pl->h.filter_span) {
                names[n] = pl->name;
                counts[n++] = p->q.n_rejected[k];
            }
        }
        metrics_set_unschedulable(p->cfg->name, names, counts, n);
        for (int qi = 0; qi < QI_COUNT; qi++)
            for (int ev = 0; ev < QE_COUNT; ev++)
                incoming[qi][ev] += p->q.incoming[qi][ev];
    }
    for (int qi = 0; qi < QI_COUNT; qi++)
        for (int ev = 0; ev < QE_COUNT; ev++)
            if (incoming[qi][ev]) {
                const char *qn, *en;
                queue_incoming_label(qi, ev, &qn, &en);
                metrics_set_incoming(qn, en, (double)incoming[qi][ev]);
            }
    metrics_set_cache(s->cache.targets.len, s->cache.workloads.len, s->cache.n_assumed);
}

/* ---- close ---- */

void sched_close(sched *s)
{
    if (!s)
        return;
    sched_stop(s);
    bindcycle_free(s);
    free(s->held);
    free(s->held_buf);
    quarantine_free(s->quarantine);
    changes_free(s);
    decisions_free(s->dec);
    for (size_t k = 0; k < s->n_profiles; k++) {
        rt_order_free(s->profiles[k].order);
        profile_free(&s->profiles[k]);
    }
    free(s->profiles);
    cache_free(&s->cache);
    cycle_free(&s->cycle);
    /* prepared data goes back to the plugins that made it, before fini */
    index_free(s->ix);
    free(s->cycle_ns);
    registry_free(&s->reg);
    pool_free(s->pool);
    pthread_mutex_destroy(&s->wait_mu);
    pthread_mutex_destroy(&s->own_mu);
    free(s);
}

/* ---- accessors ---- */

profile *sched_profile_for(const sched *s, const trellis_object *w)
{
    return routing_profile_for(s, w);
}

void sched_get_stats(const sched *s, sched_stats *out)
{
    memset(out, 0, sizeof *out);
    out->targets_loaded = s->n_targets_loaded;
    out->workloads_loaded = s->n_workloads_loaded;
    out->pending = s->n_pending;
    out->manifest_errors = s->n_manifest_errors;
    out->decisions = decisions_count(s->dec);
    out->cycles = s->n_cycles;
    out->bound_total = s->n_bound_total;
    out->bind_errors = s->n_bind_errors;
    out->workers = pool_size(s->pool);
    out->assumed = s->cache.n_assumed;
    out->load_ns = s->load_ns;
    out->schedule_ns = s->schedule_ns;
    out->write_ns = s->write_ns;
    for (size_t k = 0; k < s->n_profiles; k++) {
        out->eq_hits += s->profiles[k].eq.hits;
        out->eq_score_hits += s->profiles[k].eq.score_hits;
        out->eq_reevaluated += s->profiles[k].eq.targets_reevaluated;
    }
}

const uint32_t *sched_cycle_times(const sched *s, size_t *n)
{
    *n = s->n_cycles;
    return s->cycle_ns;
}

int sched_explaining(const sched *s)
{
    return s->explain;
}

size_t sched_gated(const sched *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_profiles; i++)
        n += queue_gated(&s->profiles[i].q);
    return n;
}

const decisions *sched_decisions(sched *s)
{
    return s->dec;
}

size_t sched_profile_count(const sched *s)
{
    return s->n_profiles;
}

profile *sched_profile_at(const sched *s, size_t i)
{
    return i < s->n_profiles ? &s->profiles[i] : NULL;
}

store *sched_store(const sched *s)
{
    return s->st;
}

const trellis_object *sched_lookup(const sched *s, const char *kind, const char *ns,
                                   const char *name)
{
    return index_lookup(s->ix, kind, ns, name);
}

int sched_foreach(const sched *s, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud)
{
    return index_foreach(s->ix, kind, ns, cb, ud);
}

size_t sched_object_count(const sched *s)
{
    return index_count(s->ix);
}

trellis_object *sched_object_at(const sched *s, size_t i)
{
    return index_at(s->ix, i);
}
