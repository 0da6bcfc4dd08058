/*
 * runtime.c - see runtime.h.
 */
#include "config.h"

#include "runtime.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fieldline.h"
#include "guard.h"
#include "log.h"
#include "metrics.h"
#include "object.h"
#include "plugin.h"
#include "profile_impl.h"
#include "review.h"
#include "util.h"

/* ---- timing and wording ---- */

uint64_t rt_clock(void)
{
    return metrics_enabled() ? now_ns() : 0;
}

void rt_time_point(const profile *p, int point, int rc, uint64_t t0)
{
    if (t0)
        metrics_extension_point(p->mcache, p->cfg->name, point, metrics_status_of(rc),
                                (double)(now_ns() - t0) / 1e9);
}

/* kube-scheduler times plugins in a sampled share of its cycles: a start
 * time when this call is to be timed (sample: the cycle's draw), else 0. */
static uint64_t plugin_clock(int sample)
{
    return sample ? now_ns() : 0;
}

static void time_plugin(const trellis_plugin *pl, int point, int rc, uint64_t t0)
{
    if (t0)
        metrics_plugin(pl->mcache, pl->name, point, metrics_status_of(rc),
                       (double)(now_ns() - t0) / 1e9);
}

/* "plugin NAME: WHAT: MESSAGE", without ": MESSAGE" when it is empty. */
static void fail_message(char *msg, size_t msglen, const trellis_plugin *pl, const char *what,
                         const trellis_status *st)
{
    snprintf(msg, msglen, "plugin %s: %s%s%s", pl ? pl->name : "?", what,
             st && st->message[0] ? ": " : "", st ? st->message : "");
}

void rt_fail(trellis_cycle *c, const trellis_plugin *pl, const trellis_status *st, const char *what,
             char *msg, size_t msglen)
{
    c->failed = 1;
    c->error_plugin = pl;
    if (st)
        c->error_status = *st;
    fail_message(msg, msglen, pl, what, st);
}

/* One hook call of pl on object `what`, guarded, and timed as extension
 * point mp when sample is nonzero: the statement is run between the two. */
#define CALL(pl, point, mp, sample, what, deadline, rc, stmt)                                      \
    do {                                                                                           \
        uint64_t t0_ = plugin_clock(sample);                                                       \
        GUARD((pl), (point), (what), (deadline), stmt);                                            \
        time_plugin((pl), (mp), (rc), t0_);                                                        \
    } while (0)

/* ---- objects ---- */

/* The line a prepare error is about: the field's own when the message
 * starts with a path the object has ("spec.priority: expected ..."),
 * else the object's first line. */
static int error_line(const trellis_object *o, const char *perr)
{
    const char *colon = strstr(perr, ": ");
    char path[256];
    if (!o->file || !colon || (size_t)(colon - perr) >= sizeof path)
        return o->line;
    snprintf(path, sizeof path, "%.*s", (int)(colon - perr), perr);
    int line = object_get(o, path) ? fieldline_find(o->file, o->doc, o->item, path) : 0;
    return line > 0 ? line : o->line;
}

/* A failed prepare: logged (unless logged is 0: another plugin said the
 * same of this object already), and recorded on o for the cycles
 * (InvalidTarget, a malformed workload) and the queueing hints. */
static void prepare_failed(trellis_plugin *pl, trellis_object *o, const char *perr, int logged)
{
    char who[256];
    if (logged)
        log_warn("%s:%d: %s: plugin %s: %s", o->file ? o->file : "-", error_line(o, perr),
                 object_describe(o, who, sizeof who), pl->name, perr[0] ? perr : "malformed");
    if (!o->failed)
        o->failed = xcalloc(o->naux, 1);
    o->failed[pl->slot] = 1;
    if (o->prepare_failed_slot < 0) {
        o->prepare_failed_slot = pl->slot;
        o->prepare_error =
            xasprintf("plugin %s: %s", pl->name, perr[0] ? perr : "malformed object");
    }
}

void run_prepare(profile *p, trellis_object *o, int as_workload)
{
    const plist *l = as_workload ? &p->prepare_workload : &p->prepare_target;
    const char *point = as_workload ? "prepare_workload" : "prepare_target";
    /* several plugins read the same field: each message once per object */
    char said[4][512];
    size_t n_said = 0;
    for (size_t k = 0; k < l->n; k++) {
        trellis_plugin *pl = l->v[k];
        trellis_prepare_fn fn = as_workload ? pl->h.prepare_workload : pl->h.prepare_target;
        if (fn && pl->slot >= 0) {
            char perr[512] = "";
            void *data = NULL;
            int rc;
            GUARD(pl, point, o->id, pl->hook_deadline_ms, rc = fn(pl, o, &data, perr, sizeof perr));
            if (rc != 0) {
                size_t i = 0;
                while (i < n_said && strcmp(said[i], perr) != 0)
                    i++;
                int repeat = i < n_said && perr[0];
                if (!repeat && n_said < sizeof said / sizeof *said)
                    memcpy(said[n_said++], perr, sizeof perr);
                prepare_failed(pl, o, perr, !repeat);
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

void run_release(trellis_plugin *pl, trellis_object *o)
{
    if (pl->slot < 0 || (size_t)pl->slot >= o->naux || !o->aux[pl->slot])
        return;
    if (pl->h.release)
        GUARD(pl, "release", o->id, pl->hook_deadline_ms, pl->h.release(pl, o->aux[pl->slot]));
    o->aux[pl->slot] = NULL;
}

struct rt_order {
    trellis_plugin *pl;
    guard_prev gp; /* the sift under way (main thread; sifts never nest) */
};

rt_order *rt_order_new(trellis_plugin *pl)
{
    rt_order *o = xcalloc(1, sizeof *o);
    o->pl = pl;
    return o;
}

void rt_order_free(rt_order *o)
{
    free(o);
}

int rt_order_less(void *ud, const trellis_object *a, uint64_t as, const trellis_object *b,
                  uint64_t bs)
{
    rt_order *o = ud;
    return o->pl->h.less(o->pl, a, as, b, bs);
}

void rt_order_enter(void *ud, const trellis_object *w)
{
    rt_order *o = ud;
    guard_enter(&o->gp, o->pl, "queue_sort", w->id, o->pl->hook_deadline_ms);
}

void rt_order_leave(void *ud)
{
    rt_order *o = ud;
    guard_leave(&o->gp);
}

int rt_outranks_or_equals(const profile *p, const trellis_object *a, const trellis_object *b)
{
    trellis_plugin *pl = p->queue_sort;
    int before = 0;
    if (!pl)
        return 1;
    GUARD(pl, "queue_sort", b->id, pl->hook_deadline_ms, before = pl->h.less(pl, b, 0, a, 0));
    return !before;
}

void run_allocated(trellis_plugin *pl, const trellis_object *t, const trellis_object *const *placed,
                   size_t n, int64_t *used, int64_t *allocatable)
{
    for (int k = 0; k < pl->n_counters; k++) {
        used[k] = 0;
        allocatable[k] = -1;
    }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; placed[i]->counters && k < pl->n_counters; k++)
            used[k] += placed[i]->counters[pl->counter_off + k];
    if (pl->h.allocated && !(pl->slot >= 0 && t->failed && t->failed[pl->slot]))
        GUARD(pl, "allocated", t->id, pl->hook_deadline_ms,
              pl->h.allocated(pl, t, placed, n, used, allocatable));
}

int run_equivalent(trellis_plugin *pl, const trellis_object *a, const trellis_object *b)
{
    int same = 1;
    if (pl->h.equivalent)
        GUARD(pl, "equivalent", b->id, pl->hook_deadline_ms, same = pl->h.equivalent(pl, a, b));
    return same != 0;
}

int run_eviction_check(profile *p, trellis_object *w, struct trellis_target *t,
                       const trellis_plugin **who, trellis_status *st)
{
    for (size_t k = 0; k < p->eviction.n; k++) {
        trellis_plugin *pl = p->eviction.v[k];
        memset(st, 0, sizeof *st);
        int rc;
        CALL(pl, "eviction_check", MP_EVICTION_CHECK, metrics_sample(), w->id, pl->hook_deadline_ms,
             rc, rc = pl->h.eviction_check(pl, w, t, st));
        if (rc != TRELLIS_SUCCESS) {
            *who = pl;
            return 1;
        }
    }
    return 0;
}

/* Whether o's prepare failed for pl: the plugin then rejected o as a target
 * (InvalidTarget) or as a workload, whatever the change. */
static int failed_for(const trellis_plugin *pl, const trellis_object *o)
{
    return o && o->failed && pl->slot >= 0 && (size_t)pl->slot < o->naux && o->failed[pl->slot];
}

int run_hint(const trellis_plugin *pl, const trellis_object *w, unsigned event,
             const trellis_object *old_obj, const trellis_object *new_obj)
{
    const plugin_hooks *h = &pl->h;
    if (!h->has_events)
        return 1;
    /* one known bit; the workload's own change always requeues it */
    if (event == 0 || (event & (event - 1)) || (event & ~(unsigned)TRELLIS_EV_ALL) ||
        event == TRELLIS_EV_WORKLOAD_UPDATE)
        return 1;
    if (!(h->events & event))
        return 0;
    /* a malformed object the change may have repaired: the plugin's
     * prepared data cannot tell "rejected" from "absent" there */
    if (failed_for(pl, w) || failed_for(pl, old_obj))
        return 1;
    if (!h->hint)
        return 1;
    int r;
    GUARD(pl, "hint", w->id, pl->hook_deadline_ms,
          r = h->hint((trellis_plugin *)pl, w, event, old_obj, new_obj));
    return r != TRELLIS_QUEUE_SKIP;
}

/* ---- the scheduling cycle ---- */

int run_pre_filter(trellis_cycle *c, char *msg, size_t msglen)
{
    profile *p = c->p;
    trellis_object *w = c->w;
    trellis_status st;
    int result = TRELLIS_SUCCESS;
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->pre_filter.n && result == TRELLIS_SUCCESS; k++) {
        trellis_plugin *pl = p->pre_filter.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "pre_filter", MP_PRE_FILTER, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.pre_filter(pl, c, w, &st));
        if (rc == TRELLIS_SUCCESS)
            continue;
        if (rc == TRELLIS_SKIP) {
            c->skip_filter[pl->index] = 1;
        } else if (rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE) {
            st.code = rc;
            if (!st.reason[0])
                snprintf(st.reason, sizeof st.reason, "PreFilterRejected");
            c->pre_status = st;
            c->pre_plugin = pl->index;
            result = TRELLIS_UNSCHEDULABLE;
        } else {
            rt_fail(c, pl, &st, "pre-filter failed", msg, msglen);
            result = TRELLIS_ERROR;
        }
    }
    if (p->pre_filter.n)
        rt_time_point(p, MP_PRE_FILTER, result, tp);
    return result;
}

/* Record that filter k rejected the targets whose bits went from `before`
 * to clear in pass[0..nw): a batch or span filter says no more than that,
 * framework_explain asks the plain filter why when someone wants to know. A
 * batch filter may only clear bits. */
static void note_cleared(trellis_cycle *c, size_t k, const uint64_t *before, uint64_t *pass,
                         size_t w0, size_t nw)
{
    for (size_t wi = 0; wi < nw; wi++) {
        uint64_t gone = before[wi] & ~pass[wi];
        pass[wi] &= before[wi];
        while (gone) {
            size_t i = (w0 + wi) * 64 + (size_t)__builtin_ctzll(gone);
            gone &= gone - 1;
            c->cands[i].rej = (int16_t)k;
            c->cands[i].code = CODE_UNKNOWN;
        }
    }
}

/* Run fn(arg) with the call armed (guard.h): 1 when the watchdog cut it
 * short. The jump point is in this small frame, which stays while the
 * plugin runs and holds nothing to read after the jump. The signal mask
 * is saved and restored by the jump (a system call per armed call, for
 * ignorable plugins only): a handler run under a sanitizer's wrapper may
 * leave the signal blocked otherwise, and the next call could not be cut. */
static int armed(guard_prev *gp, void (*fn)(void *), void *arg)
{
    if (sigsetjmp(gp->jump, 1) != 0)
        return 1;
    guard_arm(gp);
    fn(arg);
    return 0;
}

/* One plugin's filter or score over one block of targets. */
typedef struct block_call {
    trellis_cycle *c;
    trellis_plugin *pl;
    size_t k, b, e;
    int64_t *out; /* score: the plugin's row */
} block_call;

static void filter_call(void *arg)
{
    const block_call *bc = arg;
    trellis_cycle *c = bc->c;
    trellis_plugin *pl = bc->pl;
    uint64_t *pass = c->pass;
    size_t b = bc->b, e = bc->e, w0 = b / 64, nw = (e - b + 63) / 64;
    if (pl->h.filter_span) {
        pl->h.filter_span(pl, c, c->w, b, e - b, &pass[w0]);
    } else if (pl->h.filter_batch) {
        pl->h.filter_batch(pl, c, c->w, (const trellis_target *const *)&c->targets[b], e - b,
                           &pass[w0]);
    } else {
        trellis_status st;
        for (size_t wi = w0; wi < w0 + nw; wi++) {
            uint64_t bits = pass[wi];
            while (bits) {
                size_t i = wi * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                int rc = cycle_filter_code(pl->h.filter(pl, c, c->w, c->targets[i], &st));
                if (rc != TRELLIS_SUCCESS)
                    cycle_reject(c, i, (int)bc->k, rc);
            }
        }
    }
}

void run_filter_block(trellis_cycle *c, size_t k, size_t b, size_t e)
{
    trellis_plugin *pl = c->p->filter.v[k];
    uint64_t *pass = c->pass;
    size_t w0 = b / 64, nw = (e - b + 63) / 64;
    uint64_t before[RT_BLOCK / 64];
    memcpy(before, &pass[w0], nw * sizeof *pass);
    block_call bc = {c, pl, k, b, e, NULL};
    guard_prev gp;
    uint64_t t0 = plugin_clock(c->sample);
    guard_enter(&gp, pl, "filter", c->w->id, pl->hook_deadline_ms);
    if (!pl->ignorable) {
        filter_call(&bc);
    } else if (armed(&gp, filter_call, &bc)) {
        /* as if it had passed every target of the block */
        guard_abandoned(&gp);
        memcpy(&pass[w0], before, nw * sizeof *pass);
        cycle_abandon(c, pl->index);
        return;
    }
    guard_leave(&gp);
    if (t0) /* one observation per call, a block of targets: rejected any? */
        time_plugin(pl, MP_FILTER,
                    memcmp(before, &pass[w0], nw * sizeof *pass) ? TRELLIS_UNSCHEDULABLE
                                                                 : TRELLIS_SUCCESS,
                    t0);
    if (pl->h.filter_span || pl->h.filter_batch)
        note_cleared(c, k, before, &pass[w0], w0, nw);
}

int run_filter_at(trellis_cycle *c, size_t k, size_t i)
{
    trellis_plugin *pl = c->p->filter.v[k];
    uint64_t bit = 1ull << (i % 64);
    trellis_status st;
    int rc;
    guard_prev gp;
    guard_enter(&gp, pl, "filter", c->w->id, pl->hook_deadline_ms);
    if (pl->h.filter_span) {
        size_t first = i & ~(size_t)63;
        uint64_t word = bit;
        pl->h.filter_span(pl, c, c->w, first, c->n - first < 64 ? c->n - first : 64, &word);
        rc = word & bit ? TRELLIS_SUCCESS : CODE_UNKNOWN;
    } else if (pl->h.filter_batch) {
        uint64_t word = 1;
        pl->h.filter_batch(pl, c, c->w, (const trellis_target *const *)&c->targets[i], 1, &word);
        rc = word & 1 ? TRELLIS_SUCCESS : CODE_UNKNOWN;
    } else {
        rc = cycle_filter_code(pl->h.filter(pl, c, c->w, c->targets[i], &st));
    }
    guard_leave(&gp);
    return rc;
}

int run_filter(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *t,
               trellis_status *st)
{
    int rc;
    GUARD(pl, "filter", c->w->id, pl->hook_deadline_ms, rc = pl->h.filter(pl, c, c->w, t, st));
    return rc;
}

/* Drop the targets a feasible filter rejected from c->feasible (their
 * pass bits are clear); the order stays the snapshot's. */
static void compact_feasible(trellis_cycle *c)
{
    size_t kept = 0;
    for (size_t j = 0; j < c->n_feasible; j++) {
        uint32_t i = c->feasible_idx[j];
        if (!(c->pass[i / 64] & (1ull << (i % 64))))
            continue;
        c->feasible_idx[kept] = i;
        c->feasible[kept++] = c->feasible[j];
    }
    c->n_feasible = kept;
}

int run_filter_feasible(trellis_cycle *c, char *msg, size_t msglen)
{
    profile *p = c->p;
    trellis_object *w = c->w;
    trellis_status st;
    int result = TRELLIS_SUCCESS;
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->filter_feasible.n && c->n_feasible && result == TRELLIS_SUCCESS;
         k++) {
        trellis_plugin *pl = p->filter_feasible.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        c->in_filter_feasible = pl;
        CALL(pl, "filter_feasible", MP_FILTER_FEASIBLE, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.filter_feasible(pl, c, w, (const trellis_target *const *)c->feasible,
                                        c->n_feasible, &st));
        c->in_filter_feasible = NULL;
        if (rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE) {
            st.code = rc;
            if (!st.reason[0])
                snprintf(st.reason, sizeof st.reason, "Rejected");
            for (size_t j = 0; j < c->n_feasible; j++) {
                uint32_t i = c->feasible_idx[j];
                if (c->pass[i / 64] & (1ull << (i % 64)))
                    cycle_reject_late(c, pl, i, &st);
            }
        } else if (rc != TRELLIS_SUCCESS && rc != TRELLIS_SKIP) {
            rt_fail(c, pl, &st, "filter failed", msg, msglen);
            result = TRELLIS_ERROR;
        }
        compact_feasible(c);
    }
    rt_time_point(p, MP_FILTER_FEASIBLE, result, tp);
    return result;
}

int run_post_filter(trellis_cycle *c, char *msg, size_t msglen)
{
    profile *p = c->p;
    trellis_object *w = c->w;
    trellis_status st;
    int result = TRELLIS_UNSCHEDULABLE;
    uint64_t tp = rt_clock();
    size_t evicted0 = c->n_evicted;
    c->in_post_filter = 1;
    for (size_t k = 0; k < p->post_filter.n && result == TRELLIS_UNSCHEDULABLE; k++) {
        trellis_plugin *pl = p->post_filter.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "post_filter", MP_POST_FILTER, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.post_filter(pl, c, w, &st));
        if (rc == TRELLIS_SUCCESS) {
            c->changed = 1;
            result = TRELLIS_SUCCESS;
        } else if (rc == TRELLIS_ERROR) {
            rt_fail(c, pl, &st, "post-filter failed", msg, msglen);
            result = TRELLIS_ERROR;
        }
    }
    c->in_post_filter = 0;
    if (p->post_filter.n) {
        rt_time_point(p, MP_POST_FILTER, result, tp);
        /* kube's preemption attempt: the post-filter ran; its victims */
        metrics_preemption(result == TRELLIS_SUCCESS ? c->n_evicted - evicted0 : 0);
    }
    return result;
}

int run_review_candidates(trellis_cycle *c, const trellis_plugin *caller, trellis_candidate *cands,
                          size_t *n, trellis_status *st)
{
    profile *p = c->p;
    trellis_object *w = c->w;
    trellis_candidate *copy = NULL;
    int result = TRELLIS_SUCCESS;
    c->in_review = 1;
    for (size_t k = 0; k < p->review_candidates.n && *n && result == TRELLIS_SUCCESS; k++) {
        trellis_plugin *pl = p->review_candidates.v[k];
        if (pl == caller)
            continue;
        /* the reviewer edits a copy: a SKIP or a refused answer leaves
         * the candidates as they were */
        copy = xrealloc(copy, *n * sizeof *copy);
        memcpy(copy, cands, *n * sizeof *copy);
        size_t m = *n;
        trellis_status rs;
        char why[TRELLIS_MESSAGE_MAX];
        memset(&rs, 0, sizeof rs);
        int rc;
        CALL(pl, "review_candidates", MP_POST_FILTER, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.review_candidates(pl, c, w, copy, &m, &rs));
        if (rc == TRELLIS_SKIP)
            continue;
        if (rc == TRELLIS_SUCCESS) {
            if (review_check(cands, *n, copy, m, why, sizeof why) == 0) {
                memcpy(cands, copy, m * sizeof *copy);
                *n = m;
                continue;
            }
            snprintf(st->reason, sizeof st->reason, "ReviewRefused");
            snprintf(st->message, sizeof st->message, "plugin %s: review of the candidates: %.180s",
                     pl->name, why);
        } else {
            rs.reason[sizeof rs.reason - 1] = '\0';
            rs.message[sizeof rs.message - 1] = '\0';
            snprintf(st->reason, sizeof st->reason, "%s",
                     rs.reason[0] ? rs.reason : "ReviewFailed");
            if (rc == TRELLIS_ERROR)
                snprintf(st->message, sizeof st->message, "plugin %s: %.200s", pl->name,
                         rs.message[0] ? rs.message : "review of the candidates failed");
            else
                snprintf(st->message, sizeof st->message,
                         "plugin %s: review of the candidates answered code %d (expected "
                         "success, skip or error)",
                         pl->name, rc);
        }
        st->code = TRELLIS_ERROR;
        result = TRELLIS_ERROR;
    }
    c->in_review = 0;
    free(copy);
    return result;
}

int run_pre_score(trellis_cycle *c, char *msg, size_t msglen)
{
    profile *p = c->p;
    trellis_object *w = c->w;
    trellis_status st;
    int result = TRELLIS_SUCCESS;
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->pre_score.n && result == TRELLIS_SUCCESS; k++) {
        trellis_plugin *pl = p->pre_score.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "pre_score", MP_PRE_SCORE, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.pre_score(pl, c, w, (const trellis_target *const *)c->feasible,
                                  c->n_feasible, &st));
        if (rc == TRELLIS_SKIP) {
            c->skip_score[pl->index] = 1;
        } else if (rc != TRELLIS_SUCCESS) {
            rt_fail(c, pl, &st, "pre-score failed", msg, msglen);
            result = TRELLIS_ERROR;
        }
    }
    if (p->pre_score.n)
        rt_time_point(p, MP_PRE_SCORE, result, tp);
    return result;
}

static void score_call(void *arg)
{
    const block_call *bc = arg;
    trellis_cycle *c = bc->c;
    trellis_plugin *pl = bc->pl;
    size_t b = bc->b, e = bc->e;
    int64_t *out = bc->out;
    if (pl->h.score_span) {
        pl->h.score_span(pl, c, c->w, &c->feasible_idx[b], e - b, &out[b]);
    } else if (pl->h.score_batch) {
        pl->h.score_batch(pl, c, c->w, (const trellis_target *const *)&c->feasible[b], e - b,
                          &out[b]);
    } else {
        trellis_status st;
        for (size_t j = b; j < e; j++) {
            int64_t v = 0;
            if (pl->h.score(pl, c, c->w, c->feasible[j], &v, &st) != TRELLIS_SUCCESS)
                v = INT64_MIN; /* reported by the caller */
            out[j] = v;
        }
    }
}

void run_score_block(trellis_cycle *c, size_t k, int64_t *out, size_t b, size_t e)
{
    trellis_plugin *pl = c->p->score.v[k];
    block_call bc = {c, pl, 0, b, e, out};
    guard_prev gp;
    uint64_t t0 = plugin_clock(c->sample);
    guard_enter(&gp, pl, "score", c->w->id, pl->hook_deadline_ms);
    if (!pl->ignorable) {
        score_call(&bc);
    } else if (armed(&gp, score_call, &bc)) {
        guard_abandoned(&gp);
        for (size_t j = b; j < e; j++)
            out[j] = 0;
        cycle_abandon(c, pl->index);
        return;
    }
    guard_leave(&gp);
    time_plugin(pl, MP_SCORE, TRELLIS_SUCCESS, t0);
}

int run_score(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *t, int64_t *v,
              trellis_status *st)
{
    int rc;
    GUARD(pl, "score", c->w->id, pl->hook_deadline_ms, rc = pl->h.score(pl, c, c->w, t, v, st));
    return rc;
}

int run_normalize(trellis_cycle *c, trellis_plugin *pl, const struct trellis_target *const *ts,
                  size_t n, int64_t *sc, char *msg, size_t msglen)
{
    trellis_status st;
    memset(&st, 0, sizeof st);
    int rc;
    CALL(pl, "normalize", MP_NORMALIZE, c->sample, c->w->id, pl->hook_deadline_ms, rc,
         rc = pl->h.normalize(pl, c, c->w, ts, n, sc, &st));
    if (rc == TRELLIS_SUCCESS)
        return 0;
    rt_fail(c, pl, &st, "normalize failed", msg, msglen);
    return -1;
}

/* ---- the binding cycle ---- */

int run_reserve(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
                char *msg, size_t msglen)
{
    trellis_status st;
    int result = TRELLIS_SUCCESS;
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->reserve.n && result == TRELLIS_SUCCESS; k++) {
        trellis_plugin *pl = p->reserve.v[k];
        if (!pl->h.reserve)
            continue;
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "reserve", MP_RESERVE, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.reserve(pl, c, w, t, &st));
        if (rc != TRELLIS_SUCCESS) {
            fail_message(msg, msglen, pl, "reserve failed", &st);
            result = TRELLIS_ERROR;
        }
    }
    if (p->reserve.n)
        rt_time_point(p, MP_RESERVE, result, tp);
    return result == TRELLIS_SUCCESS ? 0 : -1;
}

void run_unreserve(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t)
{
    for (size_t k = p->reserve.n; k-- > 0;) {
        trellis_plugin *pl = p->reserve.v[k];
        if (pl->h.unreserve)
            CALL(pl, "unreserve", MP_UNRESERVE, c->sample, w->id, pl->bind_deadline_ms,
                 TRELLIS_SUCCESS, pl->h.unreserve(pl, c, w, t));
    }
}

int run_permit(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
               uint64_t *wait_ms, char *msg, size_t msglen)
{
    trellis_status st;
    int result = TRELLIS_SUCCESS;
    uint64_t tp = rt_clock();
    *wait_ms = 0;
    for (size_t k = 0; k < p->permit.n && result != TRELLIS_UNSCHEDULABLE; k++) {
        trellis_plugin *pl = p->permit.v[k];
        memset(&st, 0, sizeof st);
        uint64_t to = 0;
        int rc;
        CALL(pl, "permit", MP_PERMIT, c->sample, w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.permit(pl, c, w, t, &to, &st));
        if (rc == TRELLIS_SUCCESS)
            continue;
        if (rc == TRELLIS_WAIT) {
            result = TRELLIS_WAIT;
            if (to > *wait_ms)
                *wait_ms = to;
            continue;
        }
        snprintf(msg, msglen, "plugin %s: permit rejected: %s%s%s", pl->name, st.reason,
                 st.message[0] ? ": " : "", st.message);
        result = TRELLIS_UNSCHEDULABLE;
    }
    if (p->permit.n)
        rt_time_point(p, MP_PERMIT, result, tp);
    return result;
}

int run_bind(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t,
             char *msg, size_t msglen)
{
    trellis_status st;
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->pre_bind.n; k++) {
        trellis_plugin *pl = p->pre_bind.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "pre_bind", MP_PRE_BIND, c->sample, w->id, pl->bind_deadline_ms, rc,
             rc = pl->h.pre_bind(pl, c, w, t, &st));
        if (rc != TRELLIS_SUCCESS) {
            rt_time_point(p, MP_PRE_BIND, rc, tp);
            fail_message(msg, msglen, pl, "pre-bind failed", &st);
            return -1;
        }
    }
    if (p->pre_bind.n)
        rt_time_point(p, MP_PRE_BIND, TRELLIS_SUCCESS, tp);
    tp = rt_clock();
    for (size_t k = 0; k < p->bind.n; k++) {
        trellis_plugin *pl = p->bind.v[k];
        memset(&st, 0, sizeof st);
        int rc;
        CALL(pl, "bind", MP_BIND, c->sample, w->id, pl->bind_deadline_ms, rc,
             rc = pl->h.bind(pl, c, w, t, &st));
        if (rc == TRELLIS_SKIP)
            continue;
        rt_time_point(p, MP_BIND, rc, tp);
        if (rc == TRELLIS_SUCCESS)
            return 0;
        fail_message(msg, msglen, pl, "bind failed", &st);
        return -1;
    }
    rt_time_point(p, MP_BIND, TRELLIS_ERROR, tp);
    snprintf(msg, msglen, "no bind plugin handled the workload");
    return -1;
}

int run_pre_enqueue(profile *p, trellis_object *w, const char **by)
{
    for (size_t k = 0; k < p->pre_enqueue.n; k++) {
        trellis_plugin *pl = p->pre_enqueue.v[k];
        int rc = TRELLIS_SUCCESS;
        CALL(pl, "pre_enqueue", MP_PRE_ENQUEUE, metrics_sample(), w->id, pl->hook_deadline_ms, rc,
             rc = pl->h.pre_enqueue(pl, w));
        if (rc == TRELLIS_SKIP) {
            log_debug("%s %s: left alone (plugin %s, pre_enqueue)", w->kind, w->key, pl->name);
            if (by)
                *by = pl->name;
            return 0;
        }
        if (rc != TRELLIS_SUCCESS)
            log_warn("%s %s: plugin %s: pre_enqueue returned %d (expected SUCCESS or SKIP); "
                     "the workload is queued",
                     w->kind, w->key, pl->name, rc);
    }
    return 1;
}

int run_target_lost(profile *p, trellis_object *w, const char *key, const trellis_plugin **by,
                    trellis_status *st)
{
    char ns[256] = "";
    const char *name = key, *slash = strchr(key, '/');
    if (slash && (size_t)(slash - key) < sizeof ns) {
        memcpy(ns, key, (size_t)(slash - key));
        ns[slash - key] = '\0';
        name = slash + 1;
    }
    for (size_t k = 0; k < p->target_lost.n; k++) {
        trellis_plugin *pl = p->target_lost.v[k];
        memset(st, 0, sizeof *st);
        int rc = TRELLIS_SKIP;
        CALL(pl, "target_lost", MP_TARGET_LOST, metrics_sample(), w->id, pl->bind_deadline_ms, rc,
             rc = pl->h.target_lost(pl, w, ns, name, st));
        if (rc == TRELLIS_SKIP)
            continue;
        if (rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE) {
            *by = pl;
            return 1;
        }
        if (rc == TRELLIS_SUCCESS)
            log_info("%s %s: plugin %s: %s is gone%s%s", w->kind, w->key, pl->name, key,
                     st->message[0] ? ": " : "", st->message);
        else
            log_error("%s %s: plugin %s: target_lost for %s failed: %s%s%s", w->kind, w->key,
                      pl->name, key, st->reason[0] ? st->reason : "error",
                      st->message[0] ? ": " : "", st->message);
        return 0;
    }
    return 0;
}

void run_finalize(profile *p, trellis_object *w)
{
    for (size_t k = 0; k < p->finalize.n; k++) {
        trellis_plugin *pl = p->finalize.v[k];
        trellis_status st;
        memset(&st, 0, sizeof st);
        int rc = TRELLIS_SUCCESS;
        CALL(pl, "finalize", MP_FINALIZE, metrics_sample(), w->id, pl->bind_deadline_ms, rc,
             rc = pl->h.finalize(pl, w, &st));
        if (rc != TRELLIS_SUCCESS)
            log_error("%s %s: plugin %s: finalize failed: %s%s%s", w->kind, w->key, pl->name,
                      st.reason[0] ? st.reason : "error", st.message[0] ? ": " : "", st.message);
    }
}

void run_decided(profile *p, trellis_cycle *c, trellis_object *w, int again)
{
    for (size_t k = 0; k < p->decided.n; k++) {
        trellis_plugin *pl = p->decided.v[k];
        CALL(pl, "decided", MP_DECIDED, c->sample, w->id, pl->hook_deadline_ms, TRELLIS_SUCCESS,
             pl->h.decided(pl, c, w, again));
    }
}

void run_post_bind(profile *p, trellis_cycle *c, trellis_object *w, const struct trellis_target *t)
{
    uint64_t tp = rt_clock();
    for (size_t k = 0; k < p->post_bind.n; k++) {
        trellis_plugin *pl = p->post_bind.v[k];
        CALL(pl, "post_bind", MP_POST_BIND, c->sample, w->id, pl->bind_deadline_ms, TRELLIS_SUCCESS,
             pl->h.post_bind(pl, c, w, t));
    }
    if (p->post_bind.n)
        rt_time_point(p, MP_POST_BIND, TRELLIS_SUCCESS, tp);
}
