/*
 * bindcycle.c - see bindcycle.h.
 */
#include "config.h"

#include "bindcycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "runtime.h"
#include "routing.h"
#include "sched_impl.h"
#include "util.h"

/* Undo an assumption after a failure in reserve, permit or binding. */
static void fail_assumed(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                         cache_target *ct, dec_result r, const char *msg)
{
    run_unreserve(p, c, it->w, &ct->t);
    cache_forget_assumed(&s->cache, it->w, ct);
    decision_set_result(d, r, msg, NULL);
    queue_requeue(&p->q, it, r == DEC_UNSCHEDULABLE, s->now_ms);
}

/* The binding landed: the assumption becomes a binding. */
static void bind_done(sched *s, profile *p, decision *d, qitem *it, cache_target *ct)
{
    cache_finish_binding(&s->cache, it->w, ct);
    decision_set_result(d, DEC_SCHEDULED, NULL, ct->name);
    decision_nominate(d, NULL);
    if (s->run_mode) {
        char msg[600];
        snprintf(msg, sizeof msg, "Successfully assigned %s to %s", it->w->key, ct->name);
        log_info("%s %s: bound to %s", it->w->kind, it->w->key, ct->name);
        routing_event(s, p, it->w, "Normal", "Scheduled", msg, NULL);
    }
    queue_done(&p->q, it);
}

/* The binding cycle on the scheduling thread (a one-shot run). */
static void bind_here(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                      cache_target *ct)
{
    char msg[1024];
    if (run_bind(p, c, it->w, &ct->t, msg, sizeof msg) < 0) {
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
        return;
    }
    run_post_bind(p, c, it->w, &ct->t);
    bind_done(s, p, d, it, ct);
}

/* A binding cycle handed to the binding thread. The cycle's state (the
 * plugins' slots and arena) moves with it, and the target is a copy:
 * the main thread goes on changing the cache. */
typedef struct bind_job {
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
    j->p = p;
    j->d = d;
    j->it = it;
    j->ct = ct;
    cycle_init(&j->c);
    j->c.p = p;
    j->c.w = it->w;
    cycle_move_state(&j->c, c);
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

/* Bind here, or hand the binding to the binder. */
static void bind_now(sched *s, profile *p, trellis_cycle *c, decision *d, qitem *it,
                     cache_target *ct)
{
    if (s->binder) {
        decision_set_result(d, DEC_PENDING, "binding", NULL);
        binder_push(s->binder, job_new(s, p, c, d, it, ct));
    } else {
        bind_here(s, p, c, d, it, ct);
    }
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
 * the batch, then post-bind for those that landed. */
static void run_jobs(void *ud, void **jobs, size_t n)
{
    sched *s = ud;
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        j->failed = run_bind(j->p, &j->c, j->it->w, &j->t, j->msg, sizeof j->msg) < 0;
    }
    char err[1024];
    job_batch jb = {(bind_job **)jobs, n};
    if (s->st->ops->flush(s->st, job_not_written, &jb, err, sizeof err) < 0)
        log_error("store: %s", err);
    for (size_t i = 0; i < n; i++) {
        bind_job *j = jobs[i];
        if (!j->failed)
            run_post_bind(j->p, &j->c, j->it->w, &j->t);
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
        fail_assumed(s, p, c, d, it, ct, DEC_ERROR, msg);
        return;
    }
    uint64_t wait_ms;
    int rc = run_permit(p, c, it->w, best, &wait_ms, msg, sizeof msg);
    if (rc == TRELLIS_UNSCHEDULABLE)
        fail_assumed(s, p, c, d, it, ct, DEC_UNSCHEDULABLE, msg);
    else if (rc == TRELLIS_WAIT)
        wait_on_permit(s, p, d, it, ct, wait_ms);
    else
        bind_now(s, p, c, d, it, ct);
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

static size_t collect_from(sched *s, binder *b)
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
            decisions_drop(s->dec, w);
            object_unref(w);
            s->n_bound_total++;
        } else {
            metrics_binding(pname, "error", secs);
            metrics_bind_error(pname);
            s->n_bind_errors++;
            log_warn("%s %s: binding to %s failed: %s", j->it->w->kind, j->it->w->key, j->t.name,
                     j->msg);
            fail_assumed(s, j->p, &j->c, j->d, j->it, j->ct, DEC_ERROR, j->msg);
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
    if (s->st && s->st->ops->flush(s->st, NULL, NULL, err, sizeof err) < 0)
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
}
