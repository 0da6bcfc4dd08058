/*
 * bindcycle.c - see bindcycle.h.
 */
#include "config.h"

#include "bindcycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "changes.h"
#include "log.h"
#include "metrics.h"
#include "ownwrites.h"
#include "runtime.h"
#include "routing.h"
#include "placements.h"
#include "sched_impl.h"
#include "heldwrites.h"
#include "util.h"

/* A held patch written through the scheduler's patch service (on this
 * thread nothing is held now). */
static int write_held(void *ud, const trellis_object *o, const char *sub, const store_edit *edits,
                      size_t n, char *err, size_t errlen)
{
    sched *s = ud;
    return s->svc.patch(s->svc.ud, NULL, o, sub, edits, n, err, errlen);
}

/* What the cycle's decided hooks wrote (held back until its bindings
 * landed): written now, or dropped saying why_not. In `trellis run` a
 * flush is asked for, as these come after the binding's own. */
static void finish_held(sched *s, trellis_cycle *c, const char *why_not)
{
    if (!c->writes_held)
        return;
    held_writes_finish(c->writes_held, write_held, s, why_not);
    c->writes_held = NULL;
    if (!why_not && s->binder)
        binder_request_flush(s->binder);
}

/* Undo w's assumption on ct: the unreserve hooks, then the cache. */
static void undo_assumed(sched *s, profile *p, trellis_cycle *c, trellis_object *w,
                         cache_target *ct)
{
    run_unreserve(p, c, w, &ct->t);
    cache_forget_assumed(&s->cache, w, ct);
}

/* Undo an assumption after a failure in reserve, permit or binding, and
 * say so in the decision; the workload goes back to the queue. */
static void fail_assumed(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target *ct, dec_result r, const char *msg)
{
    undo_assumed(s, p, c, it->w, ct);
    decision_set_result(d, r, msg, NULL);
    queue_requeue(&p->q, it, r == DEC_UNSCHEDULABLE, s->now_ms);
}

/* A placed workload leaves the queue, or, in a profile that reconciles,
 * waits in the pool until a change may make it want or get other
 * targets (every plugin's queueing hint is asked). */
static void park(sched *s, profile *p, qitem *it)
{
    if (!p->cfg->reconcile && !p->placed) {
        queue_done(&p->q, it);
        return;
    }
    uint64_t all = 0;
    for (size_t i = 0; i < p->n_plugins && i < 63; i++)
        all |= 1ull << i;
    it->rejectors = all;
    queue_park(&p->q, it, s->now_ms);
}

/* The binding landed: the assumption becomes a binding. */
static void bind_done(sched *s, profile *p, decision *d, qitem *it, cache_target *ct)
{
    cache_finish_binding(&s->cache, it->w, ct);
    decision_set_result(d, DEC_SCHEDULED, NULL, ct->name);
    decision_nominate(d, NULL);
    changes_workload_placed(s, p, it->w);
    if (s->run_mode) {
        char msg[600];
        snprintf(msg, sizeof msg, "Successfully assigned %s to %s", it->w->key, ct->name);
        log_info("%s %s: bound to %s", it->w->kind, it->w->key, ct->name);
        routing_event(s, p, it->w, "Normal", "Scheduled", msg, NULL);
    }
    if (it->queued && s->now_ms >= it->first_ms)
        metrics_scheduled((double)(s->now_ms - it->first_ms) / 1e3, it->attempts + 1);
    queue_done(&p->q, it);
}

/* The binding cycle on the scheduling thread (a one-shot run). */
static void bind_here(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                      cache_target *ct)
{
    char msg[1024];
    if (run_bind(p, c, it->w, &ct->t, msg, sizeof msg) < 0) {
        finish_held(s, c, "the binding failed");
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
        return;
    }
    run_post_bind(p, c, it->w, &ct->t);
    finish_held(s, c, NULL);
    bind_done(s, p, d, it, ct);
}

/* A binding cycle handed to the binding thread: one workload's
 * bindings to n targets (one, or several with binding model "object").
 * The cycle's state (the plugins' slots and arena) moves with it, and the
 * targets are copies: the main thread goes on changing the cache. */
typedef struct bind_job {
    profile *p;
    decision *d;
    qitem *it;
    trellis_cycle c;
    size_t n;
    cache_target **ct;
    struct trellis_target *t;
    char **written; /* the id of the object each binding writes */
    unsigned char *failed;
    unsigned char *refresh; /* a held target picked again: already counted */
    char (*msg)[1024];
    int many;        /* finish with finish_many (binding model "object") */
    int requeue_now; /* a plugin asked for another cycle at once */
    uint32_t want;   /* how many targets the workload wants in all */
    uint64_t t0;
    /* releases of the same decision, written once its bindings are */
    binding_release_w *late;
    size_t n_late;
    char *failed_before; /* a pick that failed before binding (NULL: none) */
} bind_job;

static bind_job *job_new(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target **ct, const unsigned char *refresh, size_t n)
{
    bind_job *j = xcalloc(1, sizeof *j);
    j->p = p;
    j->d = d;
    j->it = it;
    j->n = n;
    j->many = p->placed != NULL;
    j->requeue_now = c->requeue_now;
    j->want = c->want;
    cycle_init(&j->c);
    j->c.p = p;
    j->c.w = it->w;
    cycle_move_state(&j->c, c);
    j->ct = xcalloc(n, sizeof *j->ct);
    j->t = xcalloc(n, sizeof *j->t);
    j->written = xcalloc(n, sizeof *j->written);
    j->failed = xcalloc(n, 1);
    j->refresh = xcalloc(n, 1);
    if (refresh)
        memcpy(j->refresh, refresh, n);
    j->msg = xcalloc(n, sizeof *j->msg);
    for (size_t k = 0; k < n; k++) {
        j->ct[k] = ct[k];
        struct trellis_target *t = &j->t[k];
        t->obj = ct[k]->t.obj ? object_ref(ct[k]->t.obj) : NULL;
        t->name = xstrdup(ct[k]->name);
        if (s->cache.n_counters) {
            t->sums = xcalloc((size_t)s->cache.n_counters, sizeof *t->sums);
            memcpy(t->sums, ct[k]->t.sums, (size_t)s->cache.n_counters * sizeof *t->sums);
        }
        t->gen = ct[k]->t.gen;
        char id[PLACEMENTS_ID_MAX];
        j->written[k] = xstrdup(binding_written_id(p, it->w, t->name, id, sizeof id));
    }
    j->t0 = now_ns();
    return j;
}

static void job_free(bind_job *j)
{
    held_writes_finish(j->c.writes_held, NULL, NULL, "the host stopped"); /* collected: none */
    cycle_free(&j->c);
    for (size_t k = 0; k < j->n; k++) {
        if (j->t[k].obj)
            object_unref(j->t[k].obj);
        free((char *)j->t[k].name);
        free(j->t[k].sums);
        free(j->written[k]);
    }
    free(j->ct);
    free(j->t);
    free(j->written);
    free(j->failed);
    free(j->refresh);
    free(j->msg);
    free(j->failed_before);
    for (size_t k = 0; k < j->n_late; k++)
        binding_release_forget(&j->late[k]);
    free(j->late);
    free(j);
}

/* Bind here, or hand the binding to the binder. */
static void bind_now(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                     cache_target *ct)
{
    if (s->binder) {
        decision_set_result(d, DEC_PENDING, "binding", NULL);
        binder_push(s->binder, job_new(s, p, c, d, it, &ct, NULL, 1));
    } else {
        bind_here(s, p, c, d, it, ct);
    }
}

typedef struct job_batch {
    bind_job **v;
    size_t n;
} job_batch;

/* The store could not write the object id: the binding that wrote it
 * failed. */
static void job_not_written(void *ud, const char *id, const char *why)
{
    job_batch *jb = ud;
    for (size_t i = 0; i < jb->n; i++) {
        bind_job *j = jb->v[i];
        for (size_t k = 0; k < j->n; k++) {
            if (!j->failed[k] && strcmp(j->written[k], id) == 0) {
                j->failed[k] = 1;
                snprintf(j->msg[k], sizeof j->msg[k], "binding not written: %.900s", why);
            }
        }
    }
}

/* The binding thread: pre-bind and bind every job, one store flush for
 * the batch, then post-bind for those that landed. */
static void run_jobs(void *ud, void **jobs, size_t n)
{
    sched *s = ud;
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        for (size_t k = 0; k < j->n; k++)
            j->failed[k] =
                run_bind(j->p, &j->c, j->it->w, &j->t[k], j->msg[k], sizeof j->msg[k]) < 0;
    }
    char err[1024];
    job_batch jb = {(bind_job **)jobs, n};
    if (own_flush(s, job_not_written, &jb, err, sizeof err) < 0)
        log_error("store: %s", err);
    /* then what these decisions released: never before the bindings
     * that replace it */
    size_t late = 0;
    for (size_t i = 0; i < n; i++)
        late += ((bind_job *)jobs[i])->n_late;
    if (late) {
        binding_release_w *rw = xcalloc(late, sizeof *rw);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            bind_job *j = jobs[i];
            if (j->n_late)
                memcpy(rw + m, j->late, j->n_late * sizeof *rw);
            m += j->n_late;
            free(j->late);
            j->late = NULL;
            j->n_late = 0;
        }
        if (bindcycle_flush_releases(s, rw, m, err, sizeof err) < 0)
            log_error("store: releases: %s", err);
        free(rw);
    }
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        for (size_t k = 0; k < j->n; k++)
            if (!j->failed[k])
                run_post_bind(j->p, &j->c, j->it->w, &j->t[k]);
    }
}

/* Hold the assumed workload until a permit allows or rejects it. */
static void wait_on_permit(sched *s, profile *p, decision *d, qitem *it, cache_target *ct,
                           uint64_t wait_ms)
{
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
    decision_set_result(d, DEC_PENDING, "waiting on permit", NULL);
}

void bindcycle_run(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                   const struct trellis_target *best)
{
    cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, best->name);
    char msg[1024];
    if (!ct) {
        decision_set_result(d, DEC_ERROR, "the chosen target is not in the cache", NULL);
        queue_requeue(&p->q, it, 0, s->now_ms);
        return;
    }
    cache_assume(&s->cache, it->w, ct);
    if (run_reserve(p, c, it->w, best, msg, sizeof msg) < 0) {
        finish_held(s, c, "reserve failed");
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
        return;
    }
    uint64_t wait_ms;
    int rc = run_permit(p, c, it->w, best, &wait_ms, msg, sizeof msg);
    if (rc == TRELLIS_UNSCHEDULABLE) {
        finish_held(s, c, "permit refused the binding");
        fail_assumed(s, p, c, d, it, ct, DEC_UNSCHEDULABLE, msg);
    } else if (rc == TRELLIS_WAIT) {
        finish_held(s, c, NULL); /* the waiting binding takes no cycle state along */
        wait_on_permit(s, p, d, it, ct, wait_ms);
    } else {
        bind_now(s, p, c, d, it, ct);
    }
}

void bindcycle_shortfall(const decision *d, uint32_t want, char *msg, size_t len)
{
    snprintf(msg, len, "holds %u of the %u targets it wants: no other target is feasible",
             d->n_targets, want);
}

/* The bindings of a decision of several targets are done: its result,
 * then another cycle at once (a plugin asked, and something landed), the
 * backoff (a binding failed: the rest is tried again), or park. */
static void finish_many(sched *s, profile *p, decision *d, qitem *it, int requeue_now,
                        uint32_t want, cache_target *const *landed_on, size_t landed,
                        const char *failure)
{
    /* the decision's targets: those kept (bindcycle_release), then these */
    const char **all = xcalloc(d->n_targets + landed + 1, sizeof *all);
    for (uint32_t i = 0; i < d->n_targets; i++)
        all[i] = d->targets[i];
    for (size_t k = 0; k < landed; k++) {
        cache_finish_binding(&s->cache, it->w, landed_on[k]);
        all[d->n_targets + k] = landed_on[k]->name;
    }
    decision_add_added(d, all + d->n_targets, landed);
    decision_set_targets(d, all, d->n_targets + landed);
    free(all);
    char msg[1200] = "";
    if (failure)
        snprintf(msg, sizeof msg, "%s%.1100s",
                 landed ? "placed on some of the targets picked; " : "", failure);
    else if (want != TRELLIS_WANT_ALL && d->n_targets < want && !requeue_now)
        bindcycle_shortfall(d, want, msg, sizeof msg);
    /* a binding that failed makes it an error, as with one target (what
     * landed stays in targets); fewer than it wants, unschedulable */
    dec_result r = failure || !d->n_targets ? DEC_ERROR
                   : msg[0]                 ? DEC_UNSCHEDULABLE
                                            : DEC_SCHEDULED;
    free(d->message);
    d->message = msg[0] ? xstrdup(msg) : NULL;
    d->result = r;
    if (s->run_mode && landed) {
        strbuf m;
        sb_init(&m);
        sb_printf(&m, "Successfully assigned %s to", it->w->key);
        for (size_t k = 0; k < landed; k++)
            sb_printf(&m, " %s", landed_on[k]->name);
        log_info("%s %s: %s", it->w->kind, it->w->key, m.s);
        routing_event(s, p, it->w, "Normal", "Scheduled", m.s, NULL);
        sb_free(&m);
    }
    if (failure)
        queue_requeue(&p->q, it, 0, s->now_ms);
    else if (requeue_now && landed) {
        d->continued = 1; /* the next cycle's notes follow this one's */
        queue_retry_now(&p->q, it);
    } else
        park(s, p, it);
}

/* Whether the cycle picked the target of key. */
static int picked(const trellis_cycle *c, const char *key)
{
    for (size_t i = 0; i < c->n_picks; i++)
        if (strcmp(c->picks[i]->name, key) == 0)
            return 1;
    return 0;
}

/* A release the store refused: the host, which let it go when it
 * decided, sees it again as the store has it (was: as it was read). */
static void release_refused(sched *s, trellis_object *was, const char *why)
{
    log_error("%s %s: cannot release it: %s; it stays as the store has it", was->kind, was->key,
              why);
    own_note(s, was, 0);
}

size_t bindcycle_write_releases(sched *s, binding_release_w *rw, size_t n, trellis_object **was)
{
    size_t written = 0;
    for (size_t k = 0; k < n; k++) {
        char err[1024];
        trellis_object *o = object_ref(rw[k].o);
        if (binding_release_write(s->st, &rw[k], err, sizeof err) < 0) {
            release_refused(s, o, err);
            object_unref(o);
        } else if (was) {
            was[written++] = o;
        } else {
            object_unref(o);
            written++;
        }
    }
    return written;
}

typedef struct late_flush {
    sched *s;
    trellis_object **was;
    size_t n;
} late_flush;

static void late_not_written(void *ud, const char *id, const char *why)
{
    late_flush *lf = ud;
    for (size_t k = 0; k < lf->n; k++)
        if (strcmp(lf->was[k]->id, id) == 0)
            release_refused(lf->s, lf->was[k], why);
}

int bindcycle_flush_releases(sched *s, binding_release_w *rw, size_t n, char *err, size_t errlen)
{
    late_flush lf = {s, xcalloc(n ? n : 1, sizeof *lf.was), 0};
    lf.n = bindcycle_write_releases(s, rw, n, lf.was);
    int rc = lf.n ? own_flush(s, late_not_written, &lf, err, errlen) : 0;
    for (size_t k = 0; k < lf.n; k++)
        object_unref(lf.was[k]);
    free(lf.was);
    return rc;
}

/* Release what the cycle's plugins gave up, and set the decision's
 * targets to those the workload keeps. With late, the store writes are
 * handed back (*late, the number returned) to be made after the
 * decision's new bindings; the host's view changes at once. */
static size_t release_held(sched *s, profile *p, trellis_cycle *c, decision *d,
                           binding_release_w **late)
{
    const char **kept = xcalloc(c->n_held ? c->n_held : 1, sizeof *kept);
    size_t nk = 0, nl = 0;
    binding_change ch;
    binding_release_w rw;
    if (late)
        *late = xcalloc(c->n_held ? c->n_held : 1, sizeof **late);
    for (size_t i = 0; i < c->n_held; i++) {
        int released = 0;
        for (size_t k = 0; k < c->n_released && !released; k++)
            released = c->released[k] == c->held[i];
        /* put to the vote: kept when picked again, released when not */
        if (!released && cycle_reconsidered(c, c->held[i]))
            released = !picked(c, c->held[i]);
        char err[1024];
        if (!released) {
            kept[nk++] = c->held[i];
        } else if (late ? binding_release_plan(p, c->w, c->held[i], &rw, &ch, err, sizeof err)
                        : binding_release(p, s->st, c->w, c->held[i], &ch, err, sizeof err)) {
            log_error("%s %s: cannot release %s: %s", c->w->kind, c->w->key, c->held[i], err);
            decision_add_note(d, "host", err);
            kept[nk++] = c->held[i];
        } else {
            if (late)
                (*late)[nl++] = rw;
            cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, c->held[i]);
            if (ct)
                cache_forget(&s->cache, c->w, ct);
            own_note_binding(s, &ch); /* the host sees it released */
            decision_add_released(d, c->held[i]);
            log_info("%s %s: released %s", c->w->kind, c->w->key, c->held[i]);
        }
    }
    if ((c->n_released || c->n_reconsidered) && s->binder && !late)
        binder_request_flush(s->binder); /* late: once they are written */
    decision_set_targets(d, kept, nk);
    free(kept);
    return nl;
}

void bindcycle_release(sched *s, profile *p, trellis_cycle *c, decision *d)
{
    release_held(s, p, c, d, NULL);
}

void bindcycle_satisfied(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it)
{
    bindcycle_release(s, p, c, d);
    free(d->message);
    d->message = NULL;
    d->result = DEC_SCHEDULED;
    park(s, p, it);
}

void bindcycle_run_many(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                        const struct trellis_target *const *picks, size_t n)
{
    binding_release_w *late;
    size_t n_late = release_held(s, p, c, d, &late);
    cache_target **cts = xcalloc(n, sizeof *cts);
    size_t m = 0;
    char msg[1024], failure[1024] = "";
    unsigned char *refresh = xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) {
        cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, picks[i]->name);
        if (!ct) {
            snprintf(failure, sizeof failure, "%s is not in the cache", picks[i]->name);
            continue;
        }
        if (cycle_reconsidered(c, picks[i]->name)) {
            /* held and picked again: counted already, its binding is
             * written again (reserve lets a binder see the scores) */
            if (run_reserve(p, c, it->w, picks[i], msg, sizeof msg) < 0) {
                snprintf(failure, sizeof failure, "%s: %.900s", picks[i]->name, msg);
            } else {
                refresh[m] = 1;
                cts[m++] = ct;
            }
            continue;
        }
        cache_assume(&s->cache, it->w, ct);
        uint64_t wait_ms;
        int rc = run_reserve(p, c, it->w, picks[i], msg, sizeof msg) < 0
                     ? TRELLIS_ERROR
                     : run_permit(p, c, it->w, picks[i], &wait_ms, msg, sizeof msg);
        if (rc == TRELLIS_WAIT)
            snprintf(msg, sizeof msg,
                     "permit: WAIT is not supported for a decision of several targets");
        if (rc != TRELLIS_SUCCESS) {
            undo_assumed(s, p, c, it->w, ct);
            snprintf(failure, sizeof failure, "%s: %.900s", picks[i]->name, msg);
            continue;
        }
        cts[m++] = ct;
    }
    int requeue_now = c->requeue_now;
    if (m && s->binder) {
        free(d->message);
        d->message = xstrdup("binding");
        d->result = DEC_PENDING;
        bind_job *j = job_new(s, p, c, d, it, cts, refresh, m);
        j->late = late;
        j->n_late = n_late;
        j->failed_before = failure[0] ? xstrdup(failure) : NULL;
        binder_push(s->binder, j);
        free(cts);
        free(refresh);
        return;
    }
    size_t landed = 0;
    for (size_t k = 0; k < m; k++) {
        if (run_bind(p, c, it->w, &cts[k]->t, msg, sizeof msg) < 0) {
            if (!refresh[k])
                undo_assumed(s, p, c, it->w, cts[k]);
            snprintf(failure, sizeof failure, "binding to %s failed: %.900s", cts[k]->name, msg);
            continue;
        }
        run_post_bind(p, c, it->w, &cts[k]->t);
        if (!refresh[k]) /* a refreshed one is among the targets kept */
            cts[landed++] = cts[k];
    }
    finish_held(s, c, failure[0] ? "a binding failed" : NULL);
    finish_many(s, p, d, it, requeue_now, c->want, cts, landed, failure[0] ? failure : NULL);
    free(cts);
    free(refresh);
    if (s->binder) { /* nothing to bind: nothing to wait for */
        if (bindcycle_write_releases(s, late, n_late, NULL))
            binder_request_flush(s->binder);
        free(late);
    } else if (n_late) { /* a one-shot run: after its flush (sched_run_once) */
        grow(&s->late, &s->cap_late, s->n_late + n_late, sizeof *s->late);
        memcpy(s->late + s->n_late, late, n_late * sizeof *late);
        s->n_late += n_late;
        free(late);
    } else {
        free(late);
    }
}

/* Why a wait ended without an allow. */
static void wait_failed(const waiting *wt, int final, char *msg, size_t len)
{
    if (wt->rejected)
        snprintf(msg, len, "rejected while waiting on permit: %s",
                 wt->reject_reason ? wt->reject_reason : "");
    else if (final)
        snprintf(msg, len, "PermitTimeout: still waiting on permit when the run ended");
    else
        snprintf(msg, len, "PermitTimeout: still waiting on permit after its timeout");
}

void bindcycle_process_waiting(sched *s, int final)
{
    pthread_mutex_lock(&s->wait_mu);
    size_t k = 0;
    for (size_t i = 0; i < s->n_waiting; i++) {
        waiting *wt = &s->waiting[i];
        cache_target *ct = (cache_target *)wt->target;
        trellis_cycle *c = &s->cycle;
        int timed_out = final || (s->run_mode && s->now_ms >= wt->deadline_ms);
        if (wt->allowed) {
            cycle_reset(c, wt->p, wt->it->w);
            c->d = wt->d;
            bind_now(s, wt->p, c, wt->d, wt->it, ct);
        } else if (wt->rejected || timed_out) {
            char msg[512];
            wait_failed(wt, final, msg, sizeof msg);
            cycle_reset(c, wt->p, wt->it->w);
            fail_assumed(s, wt->p, c, wt->d, wt->it, ct, DEC_UNSCHEDULABLE, msg);
        } else {
            s->waiting[k++] = *wt;
            continue;
        }
        free(wt->reject_reason);
        wt->reject_reason = NULL;
        wt->allowed = wt->rejected = 0;
        wt->it = NULL; /* handled: bindcycle_permit skips it */
    }
    s->n_waiting = k;
    pthread_mutex_unlock(&s->wait_mu);
}

int bindcycle_permit(sched *s, const char *ns, const char *name, int allow, const char *reason)
{
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

int bindcycle_start(sched *s, char *err, size_t errlen)
{
    s->binder = binder_start(run_jobs, s, err, errlen);
    if (!s->binder)
        return -1;
    /* what the load wrote (finalize releasing a deleted workload's hold)
     * is written now, not with the first binding */
    binder_request_flush(s->binder);
    return 0;
}

/* A finished job of several targets: what landed becomes bindings. */
static void collect_many(sched *s, bind_job *j)
{
    size_t landed = 0;
    /* as a decision bound on this thread says it: the last pick that
     * failed, before binding (reserve, permit) or in it */
    char failure[1100] = "";
    if (j->failed_before)
        snprintf(failure, sizeof failure, "%.1000s", j->failed_before);
    int bind_failed = 0;
    cache_target **on = xcalloc(j->n, sizeof *on);
    for (size_t k = 0; k < j->n; k++) {
        if (j->failed[k]) {
            bind_failed = 1;
            own_forget(s, j->written[k]); /* not written: not the host's to see */
            if (!j->refresh[k])
                undo_assumed(s, j->p, &j->c, j->it->w, j->ct[k]);
            snprintf(failure, sizeof failure, "binding to %s failed: %.1000s", j->t[k].name,
                     j->msg[k]);
            log_warn("%s %s: %s", j->it->w->kind, j->it->w->key, failure);
            s->n_bind_errors++;
        } else if (!j->refresh[k]) { /* a refreshed one is among the targets kept */
            on[landed++] = j->ct[k];
            s->n_bound_total++;
        }
    }
    metrics_binding(j->p->cfg->name, bind_failed ? "error" : "success",
                    (double)(now_ns() - j->t0) / 1e9);
    finish_held(s, &j->c, failure[0] ? "a binding failed" : NULL);
    trellis_object *w = object_ref(j->it->w);
    finish_many(s, j->p, j->d, j->it, j->requeue_now, j->want, on, landed,
                failure[0] ? failure : NULL);
    free(on);
    if (!failure[0])
        decisions_drop(s->dec, w);
    object_unref(w);
}

static size_t collect_from(sched *s, binder *b)
{
    size_t n;
    void **jobs = binder_take_done(b, &n);
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        const char *pname = j->p->cfg->name;
        double secs = (double)(now_ns() - j->t0) / 1e9;
        if (j->many) {
            collect_many(s, j);
        } else if (!j->failed[0]) {
            finish_held(s, &j->c, NULL);
            metrics_binding(pname, "success", secs);
            trellis_object *w = object_ref(j->it->w);
            bind_done(s, j->p, j->d, j->it, j->ct[0]);
            decisions_drop(s->dec, w);
            object_unref(w);
            s->n_bound_total++;
        } else {
            finish_held(s, &j->c, "the binding failed");
            metrics_binding(pname, "error", secs);
            metrics_bind_error(pname);
            s->n_bind_errors++;
            log_warn("%s %s: binding to %s failed: %s", j->it->w->kind, j->it->w->key, j->t[0].name,
                     j->msg[0]);
            fail_assumed(s, j->p, &j->c, j->d, j->it, j->ct[0], DEC_ERROR, j->msg[0]);
        }
        job_free(j);
    }
    free(jobs);
    return n;
}

size_t bindcycle_collect(sched *s)
{
    return s->binder ? collect_from(s, s->binder) : 0;
}

void bindcycle_stop(sched *s)
{
    binder *b = s->binder;
    if (!b)
        return;
    binder_stop(b); /* the bindings queued are finished */
    s->binder = NULL;
    collect_from(s, b);
    binder_free(b);
    char err[1024];
    if (s->st && own_flush(s, NULL, NULL, err, sizeof err) < 0)
        log_error("store: %s", err);
}

uint64_t bindcycle_next_due(const sched *s, uint64_t due)
{
    for (size_t i = 0; i < s->n_waiting; i++) {
        if (s->waiting[i].allowed || s->waiting[i].rejected)
            return s->now_ms;
        if (s->waiting[i].deadline_ms < due)
            due = s->waiting[i].deadline_ms;
    }
    return due;
}

void bindcycle_free(sched *s)
{
    for (size_t i = 0; i < s->n_waiting; i++)
        free(s->waiting[i].reject_reason);
    free(s->waiting);
    s->waiting = NULL;
    s->n_waiting = s->cap_waiting = 0;
    for (size_t k = 0; k < s->n_late; k++)
        binding_release_forget(&s->late[k]);
    free(s->late);
    s->late = NULL;
    s->n_late = s->cap_late = 0;
}
