/*
 * framework.c - see framework.h.
 */
#include "config.h"

#include "framework.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/* Targets are filtered in blocks of whole bitmap words. */
#define FILTER_BLOCK 256
#define SCORE_BLOCK 256

static void plist_add(plist *l, trellis_plugin *pl)
{
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = pl;
}

void framework_build(profile *p)
{
    for (size_t i = 0; i < p->n_plugins; i++) {
        trellis_plugin *pl = p->plugins[i];
        const plugin_hooks *h = &pl->h;
        unsigned pt = pl->points;
        pl->index = (int)i;
        if (h->less && (pt & PT_QUEUE_SORT) && !p->queue_sort)
            p->queue_sort = pl;
        if (h->prepare_workload || h->amounts)
            plist_add(&p->prepare_workload, pl);
        if (h->prepare_target)
            plist_add(&p->prepare_target, pl);
        if (h->pre_filter && (pt & PT_PRE_FILTER))
            plist_add(&p->pre_filter, pl);
        if (h->filter && (pt & PT_FILTER))
            plist_add(&p->filter, pl);
        if (h->post_filter && (pt & PT_POST_FILTER))
            plist_add(&p->post_filter, pl);
        if (h->pre_score && (pt & PT_PRE_SCORE))
            plist_add(&p->pre_score, pl);
        if (h->score && (pt & PT_SCORE))
            plist_add(&p->score, pl);
        if ((h->reserve || h->unreserve) && (pt & PT_RESERVE))
            plist_add(&p->reserve, pl);
        if (h->permit && (pt & PT_PERMIT))
            plist_add(&p->permit, pl);
        if (h->pre_bind && (pt & PT_PRE_BIND))
            plist_add(&p->pre_bind, pl);
        if (h->bind && (pt & PT_BIND))
            plist_add(&p->bind, pl);
        if (h->post_bind && (pt & PT_POST_BIND))
            plist_add(&p->post_bind, pl);
        if (h->eviction_check)
            plist_add(&p->eviction, pl);
    }
    /* the equivalence cache needs every plugin that filters or scores */
    p->equivalent = p->cfg->equivalence_cache;
    const plist *judges[] = {&p->pre_filter, &p->filter, &p->pre_score, &p->score};
    for (size_t k = 0; k < sizeof judges / sizeof *judges; k++)
        for (size_t i = 0; i < judges[k]->n; i++)
            if (!judges[k]->v[i]->h.equivalent)
                p->equivalent = 0;
}

void framework_profile_free(profile *p)
{
    equiv_cache *q = &p->eq;
    for (size_t k = 0; k < EQ_ENTRIES; k++) {
        equiv_entry *e = &q->e[k];
        if (e->w)
            object_unref(e->w);
        free(e->pass);
        free(e->cands);
        free(e->raw);
        free(e->skip_filter);
        free(e->skip_score);
    }
    free(q->changed);
    memset(q, 0, sizeof *q);
}

#define ARENA_CHUNK (64 * 1024)

/* The arena is a list of chunks kept across cycles; the first word of each
 * chunk points to the previous one. */
void *framework_cycle_alloc(trellis_cycle *c, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > (size_t)1 << 30)
        return NULL;
    if (!c->arena || c->arena_used + size > c->arena_cap) {
        size_t cap = size + 16 > ARENA_CHUNK ? size + 16 : ARENA_CHUNK;
        char *chunk = xmalloc(cap);
        *(char **)chunk = c->arena;
        c->arena = chunk;
        c->arena_cap = cap;
        c->arena_used = 16;
    }
    void *p = c->arena + c->arena_used;
    c->arena_used += size;
    memset(p, 0, size);
    return p;
}

/* Free the arena's older chunks; keep the newest one for the next cycle
 * when keep is set. */
static void arena_release(trellis_cycle *c, int keep)
{
    char *chunk = c->arena;
    if (!chunk)
        return;
    char *old = *(char **)chunk;
    while (old) {
        char *next = *(char **)old;
        free(old);
        old = next;
    }
    *(char **)chunk = NULL;
    if (keep) {
        c->arena_used = 16;
        return;
    }
    free(chunk);
    c->arena = NULL;
    c->arena_cap = c->arena_used = 0;
}

void cycle_init(trellis_cycle *c)
{
    memset(c, 0, sizeof *c);
}

void cycle_free(trellis_cycle *c)
{
    free(c->slots);
    free(c->skip_filter);
    free(c->skip_score);
    arena_release(c, 0);
    free(c->pass);
    free(c->cands);
    free(c->feasible);
    free(c->feasible_idx);
    free(c->scores);
    free(c->totals);
    memset(c, 0, sizeof *c);
}

/* Size the buffers for this profile and snapshot; they only grow, so a
 * steady state allocates nothing. */
void framework_cycle_reset(trellis_cycle *c, profile *p, trellis_object *w)
{
    c->p = p;
    c->w = w;
    if (p->n_plugins > c->cap_plugins) {
        c->cap_plugins = p->n_plugins;
        c->slots = xrealloc(c->slots, c->cap_plugins * sizeof *c->slots);
        c->skip_filter = xrealloc(c->skip_filter, c->cap_plugins);
        c->skip_score = xrealloc(c->skip_score, c->cap_plugins);
    }
    memset(c->slots, 0, p->n_plugins * sizeof *c->slots);
    memset(c->skip_filter, 0, p->n_plugins);
    memset(c->skip_score, 0, p->n_plugins);
    arena_release(c, 1);
    c->targets = p->snap.targets;
    c->n = p->snap.n;
    if (c->n > c->cap_targets) {
        size_t cap = c->n + 64;
        c->pass = xrealloc(c->pass, ((cap + 63) / 64) * sizeof *c->pass);
        c->cands = xrealloc(c->cands, cap * sizeof *c->cands);
        c->feasible = xrealloc(c->feasible, cap * sizeof *c->feasible);
        c->feasible_idx = xrealloc(c->feasible_idx, cap * sizeof *c->feasible_idx);
        c->totals = xrealloc(c->totals, cap * sizeof *c->totals);
        c->cap_targets = cap;
    }
    c->n_feasible = 0;
    c->scored = 0;
    c->filtered = 0;
    c->pre_plugin = -1;
    c->exclude_idx = SIZE_MAX;
    memset(&c->pre_status, 0, sizeof c->pre_status);
    c->in_post_filter = 0;
    c->changed = 0;
    c->failed = 0;
    atomic_store_explicit(&c->abandoned, 0, memory_order_relaxed);
    c->error_plugin = NULL;
    memset(&c->error_status, 0, sizeof c->error_status);
}

/* The profile plugin whose prepare failed on o, or NULL. */
static const trellis_plugin *invalid_for(const profile *p, const trellis_object *o)
{
    if (o->prepare_failed_slot < 0 || !o->failed)
        return NULL;
    for (size_t i = 0; i < p->n_plugins; i++) {
        int slot = p->plugins[i]->slot;
        if (slot >= 0 && (size_t)slot < o->naux && o->failed[slot])
            return p->plugins[i];
    }
    return NULL;
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

/* A plain filter's return as a cycle counts it: anything but success or a
 * rejection is an error. */
static int filter_code(int rc)
{
    return rc == TRELLIS_SUCCESS || rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE
               ? rc
               : TRELLIS_ERROR;
}

static void reject(trellis_cycle *c, size_t i, int rej, int code)
{
    if (code == TRELLIS_ERROR) /* the cycle looks for it after filtering */
        atomic_store_explicit(&c->filter_error, 1, memory_order_relaxed);
    c->pass[i / 64] &= ~(1ull << (i % 64));
    c->cands[i].rej = (int16_t)rej;
    c->cands[i].code = (uint8_t)code;
}

/* An ignorable plugin cut short at its deadline sits out the rest of the
 * cycle (guard.h); worker threads note it here, the main thread turns it
 * into skip_filter / skip_score once the blocks are done. */
static void abandon(trellis_cycle *c, const trellis_plugin *pl)
{
    if (pl->index < 64)
        atomic_fetch_or_explicit(&c->abandoned, 1ull << pl->index, memory_order_relaxed);
}

static int abandoned(const trellis_cycle *c, const trellis_plugin *pl)
{
    return pl->index < 64 &&
           (atomic_load_explicit(&c->abandoned, memory_order_relaxed) & (1ull << pl->index));
}

/* After a pool run: what was cut short is skipped from now on (explain,
 * the equivalence cache and the changed targets see it too). */
static void settle_abandoned(trellis_cycle *c, unsigned char *skip)
{
    uint64_t m = atomic_load_explicit(&c->abandoned, memory_order_relaxed);
    for (; m; m &= m - 1)
        skip[__builtin_ctzll(m)] = 1;
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
                int rc = filter_code(pl->h.filter(pl, c, c->w, c->targets[i], &st));
                if (rc != TRELLIS_SUCCESS)
                    reject(c, i, (int)bc->k, rc);
            }
        }
    }
}

/* Filter plugin pl (k-th of the profile's filters) over targets [b, e)
 * of filter_block. */
static void filter_plugin_block(trellis_cycle *c, trellis_plugin *pl, size_t k, size_t b,
                                size_t e)
{
    uint64_t *pass = c->pass;
    size_t w0 = b / 64, nw = (e - b + 63) / 64;
    uint64_t before[FILTER_BLOCK / 64];
    memcpy(before, &pass[w0], nw * sizeof *pass);
    block_call bc = {c, pl, k, b, e, NULL};
    guard_prev gp;
    guard_enter(&gp, pl, "filter", c->w->id, pl->hook_deadline_ms);
    if (!pl->ignorable) {
        filter_call(&bc);
    } else if (armed(&gp, filter_call, &bc)) {
        /* as if it had passed every target of the block */
        guard_abandoned(&gp);
        memcpy(&pass[w0], before, nw * sizeof *pass);
        abandon(c, pl);
        return;
    }
    guard_leave(&gp);
    if (pl->h.filter_span || pl->h.filter_batch)
        note_cleared(c, k, before, &pass[w0], w0, nw);
}

/* Filter targets [b, e); b is a multiple of 64, so a block owns its words
 * of the pass bitmap. Only rejected targets get a cands[] entry. */
static void filter_block(void *ctx, size_t b, size_t e)
{
    trellis_cycle *c = ctx;
    profile *p = c->p;
    uint64_t *pass = c->pass;
    const uint64_t *invalid = p->snap.invalid;
    size_t w0 = b / 64, nw = (e - b + 63) / 64;
    uint64_t live = 0;
    for (size_t wi = w0; wi < w0 + nw; wi++) {
        uint64_t m = wi * 64 + 64 <= e ? ~0ull : (1ull << (e % 64)) - 1;
        uint64_t bad = invalid[wi] & m;
        pass[wi] = m;
        while (bad) { /* failed some plugin's prepare: this profile's? */
            size_t i = wi * 64 + (size_t)__builtin_ctzll(bad);
            bad &= bad - 1;
            if (invalid_for(p, c->targets[i]->obj))
                reject(c, i, REJ_INVALID, TRELLIS_UNRESOLVABLE);
        }
        live |= pass[wi];
    }
    if (c->exclude_idx >= b && c->exclude_idx < e &&
        (pass[c->exclude_idx / 64] & (1ull << (c->exclude_idx % 64))))
        reject(c, c->exclude_idx, REJ_EXCLUDED, TRELLIS_UNRESOLVABLE);
    for (size_t k = 0; k < p->filter.n && live; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index] || abandoned(c, pl))
            continue;
        filter_plugin_block(c, pl, k, b, e);
        live = 0;
        for (size_t wi = w0; wi < w0 + nw; wi++)
            live |= pass[wi];
    }
}

/* Filter target i alone, as filter_block would: a batch hook gets a
 * block of one, a span hook the target's word with only its bit set. */
static void filter_target(trellis_cycle *c, size_t i)
{
    profile *p = c->p;
    uint64_t bit = 1ull << (i % 64);
    c->pass[i / 64] |= bit;
    if ((p->snap.invalid[i / 64] & bit) && invalid_for(p, c->targets[i]->obj)) {
        reject(c, i, REJ_INVALID, TRELLIS_UNRESOLVABLE);
        return;
    }
    trellis_status st;
    for (size_t k = 0; k < p->filter.n; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index])
            continue;
        int rc = TRELLIS_SUCCESS;
        guard_prev gp;
        guard_enter(&gp, pl, "filter", c->w->id, pl->hook_deadline_ms);
        if (pl->h.filter_span) {
            size_t first = i & ~(size_t)63;
            uint64_t word = bit;
            pl->h.filter_span(pl, c, c->w, first, c->n - first < 64 ? c->n - first : 64, &word);
            rc = word & bit ? TRELLIS_SUCCESS : CODE_UNKNOWN;
        } else if (pl->h.filter_batch) {
            uint64_t word = 1;
            pl->h.filter_batch(pl, c, c->w, (const trellis_target *const *)&c->targets[i], 1,
                               &word);
            rc = word & 1 ? TRELLIS_SUCCESS : CODE_UNKNOWN;
        } else {
            rc = filter_code(pl->h.filter(pl, c, c->w, c->targets[i], &st));
        }
        guard_leave(&gp);
        if (rc != TRELLIS_SUCCESS) {
            reject(c, i, (int)k, rc);
            return;
        }
    }
}

int framework_rej(const trellis_cycle *c, size_t i)
{
    if (c->pre_plugin >= 0)
        return REJ_PRE_FILTER;
    if (c->pass[i / 64] & (1ull << (i % 64)))
        return -1;
    if (c->eval_len < c->n && (i + c->n - c->eval_begin) % c->n >= c->eval_len)
        return REJ_NOT_EVALUATED;
    return c->cands[i].rej;
}

int framework_code(trellis_cycle *c, size_t i)
{
    int rej = framework_rej(c, i);
    if (rej == -1 || rej == REJ_NOT_EVALUATED)
        return TRELLIS_SUCCESS;
    if (rej == REJ_PRE_FILTER)
        return c->pre_status.code;
    if (c->cands[i].code == CODE_UNKNOWN) {
        const trellis_plugin *who;
        trellis_status st;
        return framework_explain(c, i, &who, &st);
    }
    return c->cands[i].code;
}

/* How many feasible targets to look for among n, as kube-scheduler's
 * percentageOfNodesToScore: all below 100 targets; otherwise pct percent
 * (0: adaptive, 50 - n/125, at least 5), and never fewer than 100. */
static size_t feasible_to_find(int pct, size_t n)
{
    if (pct >= 100 || n <= 100)
        return n;
    long eff = pct;
    if (eff <= 0) {
        eff = 50 - (long)(n / 125);
        if (eff < 5)
            eff = 5;
    }
    size_t want = n * (size_t)eff / 100;
    return want < 100 ? 100 : want;
}

typedef struct window {
    trellis_cycle *c;
    size_t base;
} window;

static void filter_window(void *ctx, size_t b, size_t e)
{
    window *w = ctx;
    filter_block(w->c, w->base + b, w->base + e);
}

/* Filter windows of targets in order from the profile's rotating start
 * until `want` feasible ones are found; the rest are not evaluated. The
 * windows are filtered in parallel but counted in order, so which targets
 * are kept never depends on the number of workers. */
static void filter_sampled(profile *p, trellis_cycle *c, size_t want)
{
    size_t n = c->n, start = p->next_start < n ? p->next_start : 0;
    size_t processed = 0, found = 0;
    while (processed < n && found < want) {
        size_t b = (start + processed) % n;
        /* as many whole blocks as targets are still wanted: if they all
         * fit, one window is enough */
        size_t chunk = ((want - found + FILTER_BLOCK - 1) / FILTER_BLOCK) * FILTER_BLOCK;
        size_t left = n - processed; /* never look at a target twice */
        size_t e = b + (chunk < left ? chunk : left);
        if (e > n)
            e = n;
        window w = {c, b};
        pool_run(p->sched_pool, e - b, FILTER_BLOCK, filter_window, &w);
        size_t i = b;
        for (; i < e && found < want; i++)
            if (c->pass[i / 64] & (1ull << (i % 64)))
                found++;
        /* targets evaluated after the last one needed are dropped: they
         * count as not evaluated (outside eval_begin + eval_len) */
        for (size_t j = i; j < e; j++)
            c->pass[j / 64] &= ~(1ull << (j % 64));
        processed += i - b;
    }
    c->eval_begin = start;
    c->eval_len = processed;
    /* next time start after what was looked at, on a bitmap word */
    p->next_start = ((start + processed) % n) & ~(size_t)63;
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

/* Score plugin pl over feasible targets [b, e) into out (its row). */
static void score_plugin_block(trellis_cycle *c, trellis_plugin *pl, int64_t *out, size_t b,
                               size_t e)
{
    block_call bc = {c, pl, 0, b, e, out};
    guard_prev gp;
    guard_enter(&gp, pl, "score", c->w->id, pl->hook_deadline_ms);
    if (!pl->ignorable) {
        score_call(&bc);
    } else if (armed(&gp, score_call, &bc)) {
        guard_abandoned(&gp);
        for (size_t j = b; j < e; j++)
            out[j] = 0;
        abandon(c, pl);
        return;
    }
    guard_leave(&gp);
}

static void score_block(void *ctx, size_t b, size_t e)
{
    trellis_cycle *c = ctx;
    profile *p = c->p;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++) {
        trellis_plugin *pl = p->score.v[k];
        int64_t *out = &c->scores[k * nf];
        if (c->skip_score[pl->index] || abandoned(c, pl)) {
            for (size_t j = b; j < e; j++)
                out[j] = 0;
            continue;
        }
        score_plugin_block(c, pl, out, b, e);
    }
}

static void set_error(trellis_cycle *c, const trellis_plugin *pl, const trellis_status *st,
                      char *msg, size_t msglen, const char *what)
{
    c->failed = 1;
    c->error_plugin = pl;
    if (st)
        c->error_status = *st;
    snprintf(msg, msglen, "plugin %s: %s%s%s", pl ? pl->name : "?", what,
             st && st->message[0] ? ": " : "", st ? st->message : "");
}

int framework_explain(trellis_cycle *c, size_t i, const trellis_plugin **who,
                      trellis_status *st)
{
    profile *p = c->p;
    cand *cd = &c->cands[i];
    int rej = framework_rej(c, i);
    memset(st, 0, sizeof *st);
    *who = NULL;
    if (rej == -1)
        return TRELLIS_SUCCESS;
    if (rej == REJ_PRE_FILTER) {
        *st = c->pre_status;
        *who = p->plugins[c->pre_plugin];
        return st->code;
    }
    if (rej == REJ_NOT_EVALUATED)
        return TRELLIS_SUCCESS; /* never looked at: nothing to explain */
    if (rej == REJ_EXCLUDED) {
        st->code = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "CurrentTarget");
        snprintf(st->message, sizeof st->message, "the workload is being moved off this target");
        return st->code;
    }
    if (rej == REJ_INVALID) {
        const trellis_object *o = c->targets[i]->obj;
        *who = invalid_for(p, o);
        st->code = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "InvalidTarget");
        snprintf(st->message, sizeof st->message, "%s",
                 o->prepare_error ? o->prepare_error : "the target is malformed");
        return st->code;
    }
    /* rerun the plain filters in order; the first rejection is the one */
    for (size_t k = 0; k < p->filter.n; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index])
            continue;
        int rc;
        GUARD(pl, "filter", c->w->id, pl->hook_deadline_ms,
              rc = pl->h.filter(pl, c, c->w, c->targets[i], st));
        if (rc != TRELLIS_SUCCESS) {
            *who = pl;
            st->code = rc;
            if (!st->reason[0])
                snprintf(st->reason, sizeof st->reason, "Rejected");
            cd->code = (uint8_t)rc;
            return rc;
        }
    }
    /* the batch filter rejected a target its plain filter accepts */
    *who = p->filter.v[cd->rej];
    st->code = TRELLIS_ERROR;
    snprintf(st->reason, sizeof st->reason, "InconsistentFilter");
    snprintf(st->message, sizeof st->message,
             "the batch filter rejected this target but the plain filter accepts it");
    cd->code = TRELLIS_ERROR;
    return TRELLIS_ERROR;
}

int framework_filter_without(trellis_cycle *c, const struct trellis_target *t,
                             const trellis_object *const *victims, size_t n,
                             trellis_status *st)
{
    profile *p = c->p;
    int nc = p->snap.n_counters;
    struct trellis_target tmp = *t;
    tmp.n_wl = 0;
    tmp.cap_wl = 0;
    /* the copy lives in the cycle's arena: nothing to free */
    trellis_object **wl = framework_cycle_alloc(c, (t->n_wl ? t->n_wl : 1) * sizeof *wl);
    int64_t *sums = framework_cycle_alloc(c, (size_t)(nc ? nc : 1) * sizeof *sums);
    if (!wl || !sums)
        return TRELLIS_ERROR;
    if (nc)
        memcpy(sums, t->sums, (size_t)nc * sizeof *sums);
    for (size_t i = 0; i < t->n_wl; i++) {
        int gone = 0;
        for (size_t j = 0; j < n && !gone; j++)
            gone = victims[j] == t->wl[i] ||
                   (strcmp(victims[j]->key, t->wl[i]->key) == 0 &&
                    strcmp(victims[j]->kind, t->wl[i]->kind) == 0);
        if (gone) {
            if (t->wl[i]->counters)
                for (int k = 0; k < nc; k++)
                    sums[k] -= t->wl[i]->counters[k];
        } else {
            wl[tmp.n_wl++] = t->wl[i];
        }
    }
    tmp.wl = wl;
    tmp.sums = sums;
    int rc = TRELLIS_SUCCESS;
    memset(st, 0, sizeof *st);
    if (invalid_for(p, t->obj)) {
        rc = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "InvalidTarget");
    }
    for (size_t k = 0; k < p->filter.n && rc == TRELLIS_SUCCESS; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index])
            continue;
        GUARD(pl, "filter", c->w->id, pl->hook_deadline_ms,
              rc = pl->h.filter(pl, c, c->w, &tmp, st));
    }
    st->code = rc;
    return rc;
}

typedef struct tally {
    char reason[TRELLIS_REASON_MAX];
    size_t count;
} tally;

static int by_count(const void *a, const void *b)
{
    const tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->reason, y->reason);
}

/* "0/3 seed cluster candidate(s) are eligible for scheduling: {a => ..., b
 * => ...}", the form of Gardener's scheduler, targets in name order. */
static char *per_target_message(trellis_cycle *c)
{
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "0/%zu %s candidate(s) are eligible for scheduling: {", c->n,
              c->p->cfg->target_noun);
    for (size_t i = 0; i < c->n; i++) {
        const trellis_plugin *who;
        trellis_status st;
        framework_explain(c, i, &who, &st);
        sb_printf(&b, "%s%s => %s", i ? ", " : "", c->targets[i]->name,
                  st.message[0] ? st.message : st.reason);
    }
    sb_puts(&b, "}");
    return sb_steal(&b);
}

char *framework_unschedulable_message(trellis_cycle *c)
{
    if (c->p->cfg->per_target_message)
        return per_target_message(c);
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "0/%zu targets are available", c->n);
    if (c->n == 0) {
        sb_printf(&b, ": no %s exists.", c->p->cfg->target_kind);
        return sb_steal(&b);
    }
    tally *t = xcalloc(c->n, sizeof *t);
    size_t nt = 0;
    for (size_t i = 0; i < c->n; i++) {
        const trellis_plugin *who;
        trellis_status st;
        framework_explain(c, i, &who, &st);
        size_t k;
        for (k = 0; k < nt; k++)
            if (strcmp(t[k].reason, st.reason) == 0)
                break;
        if (k == nt) {
            snprintf(t[nt].reason, sizeof t[nt].reason, "%s", st.reason);
            nt++;
        }
        t[k].count++;
    }
    qsort(t, nt, sizeof *t, by_count);
    for (size_t k = 0; k < nt; k++)
        sb_printf(&b, "%s %zu %s", k ? "," : ":", t[k].count, t[k].reason);
    sb_puts(&b, ".");
    free(t);
    return sb_steal(&b);
}

/* A score plugin's raw score that failed, or one out of range after
 * normalize: the message names the plugin and the target. */
static int check_scores(trellis_cycle *c, const trellis_plugin *pl,
                        const struct trellis_target *const *ts, const int64_t *sc, size_t n,
                        char *msg, size_t msglen)
{
    for (size_t j = 0; j < n; j++) {
        if (sc[j] < 0 || sc[j] > TRELLIS_MAX_SCORE) {
            snprintf(msg, msglen, "plugin %s: score %lld for target %s is outside 0..%d",
                     pl->name, (long long)sc[j], ts[j]->name, TRELLIS_MAX_SCORE);
            c->failed = 1;
            return -1;
        }
    }
    return 0;
}

/* Whether a raw score failed (INT64_MIN); then msg says which and why,
 * from the plain score's status. */
static int score_failed(trellis_cycle *c, const trellis_plugin *pl, const int64_t *sc, size_t nf,
                        char *msg, size_t msglen)
{
    for (size_t j = 0; j < nf; j++) {
        if (sc[j] != INT64_MIN)
            continue;
        trellis_status st;
        int64_t v;
        memset(&st, 0, sizeof st);
        GUARD(pl, "score", c->w->id, pl->hook_deadline_ms,
              pl->h.score((trellis_plugin *)pl, c, c->w, c->feasible[j], &v, &st));
        snprintf(msg, msglen, "plugin %s: score failed for target %s%s%s", pl->name,
                 c->feasible[j]->name, st.message[0] ? ": " : "", st.message);
        c->failed = 1;
        return 1;
    }
    return 0;
}

/* score_mode = "lexicographic": each score plugin in turn keeps only the
 * targets with its best score, normalizing over the targets still in the
 * running; what is left after the last plugin ties, and the tie-break
 * decides. Raw scores were computed for every feasible target already, so
 * this is a pass over arrays on the main thread. totals[j] ends as the
 * number of plugins target j stayed in the running for, for --explain. */
static fw_result select_lexicographic(profile *p, trellis_cycle *c, trellis_object *w,
                                      const struct trellis_target **best, char *msg,
                                      size_t msglen)
{
    size_t nf = c->n_feasible;
    /* live[] holds the indices (into feasible) still in the running */
    uint32_t *live = framework_cycle_alloc(c, nf * sizeof *live);
    const struct trellis_target **ts = framework_cycle_alloc(c, nf * sizeof *ts);
    int64_t *sc = framework_cycle_alloc(c, nf * sizeof *sc);
    size_t nl = nf;
    for (size_t j = 0; j < nf; j++)
        live[j] = (uint32_t)j;
    trellis_status st;
    fw_result r = FW_SCHEDULED;
    for (size_t k = 0; k < p->score.n && nl > 1; k++) {
        trellis_plugin *pl = p->score.v[k];
        if (c->skip_score[pl->index])
            continue;
        int64_t *raw = &c->scores[k * nf];
        for (size_t j = 0; j < nl; j++) {
            if (raw[live[j]] == INT64_MIN) {
                snprintf(msg, msglen, "plugin %s: score failed for target %s", pl->name,
                         c->feasible[live[j]]->name);
                c->failed = 1;
                r = FW_ERROR;
                goto out;
            }
            ts[j] = c->feasible[live[j]];
            sc[j] = raw[live[j]];
        }
        if (pl->h.normalize) {
            memset(&st, 0, sizeof st);
            int nrc;
            GUARD(pl, "normalize", w->id, pl->hook_deadline_ms,
                  nrc = pl->h.normalize(pl, c, w, (const trellis_target *const *)ts, nl, sc,
                                        &st));
            if (nrc != TRELLIS_SUCCESS) {
                set_error(c, pl, &st, msg, msglen, "normalize failed");
                r = FW_ERROR;
                goto out;
            }
        }
        if (check_scores(c, pl, ts, sc, nl, msg, msglen) < 0) {
            r = FW_ERROR;
            goto out;
        }
        int64_t top = -1;
        for (size_t j = 0; j < nl; j++) {
            raw[live[j]] = sc[j]; /* the normalized score, for --explain */
            if (sc[j] > top)
                top = sc[j];
        }
        size_t keep = 0;
        for (size_t j = 0; j < nl; j++) {
            c->totals[live[j]]++;
            if (sc[j] == top)
                live[keep++] = live[j];
        }
        nl = keep;
    }
    /* live[] is in name order: tie-break by name */
    *best = c->feasible[p->cfg->tie_break_desc ? live[nl - 1] : live[0]];
    if (c->nominated_name)
        for (size_t j = 0; j < nl; j++)
            if (strcmp(c->feasible[live[j]]->name, c->nominated_name) == 0)
                *best = c->feasible[live[j]];
    c->scored = 1;
out:
    return r;
}

/* ---- the equivalence cache (see trellis_equivalent_fn) ------------------
 *
 * After a cycle that filtered every target, the profile keeps the verdicts
 * (pass bitmap and cands) and, once scored, the raw scores by target
 * position, with the workload and the snapshot generation, in one of
 * EQ_ENTRIES entries: one per class of equivalent workloads, the least
 * recently used replaced. A later cycle reuses an entry when its workload
 * is equivalent to the entry's for every plugin, its pre-filters skipped
 * the same plugins, the targets are the same set, and at most
 * EQ_MAX_CHANGED targets changed since (the snapshot's generation column
 * tells which): then only the changed targets are filtered again, and only
 * the changed feasible ones scored.
 * Normalize, the totals and the selection always run. */

/* More changed targets than this: a full cycle is as cheap. */
#define EQ_MAX_CHANGED 64

/* The targets changed since generation gen into q->changed; 0 when more
 * than EQ_MAX_CHANGED. */
static int eq_collect_changed(equiv_cache *q, const snapshot *s, uint64_t gen)
{
    q->n_changed = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->tgen[i] <= gen)
            continue;
        if (q->n_changed == EQ_MAX_CHANGED)
            return 0;
        grow(&q->changed, &q->cap_changed, q->n_changed + 1, sizeof *q->changed);
        q->changed[q->n_changed++] = (uint32_t)i;
    }
    return 1;
}

static int eq_same_class(const profile *p, const equiv_entry *e, const trellis_cycle *c,
                         const trellis_object *w)
{
    if (!e->valid || e->set_gen != p->snap.set_gen ||
        memcmp(e->skip_filter, c->skip_filter, p->n_plugins) != 0)
        return 0;
    for (size_t k = 0; k < p->n_plugins && e->w != w; k++) {
        trellis_plugin *pl = p->plugins[k];
        int same = 1;
        if (pl->h.equivalent)
            GUARD(pl, "equivalent", w->id, pl->hook_deadline_ms,
                  same = pl->h.equivalent(pl, e->w, w));
        if (!same)
            return 0;
    }
    return 1;
}

/* Pick the entry of w's class and say whether it can serve this cycle;
 * without one, the least recently used entry is the one to fill. */
static int eq_lookup(profile *p, trellis_cycle *c, const trellis_object *w)
{
    equiv_cache *q = &p->eq;
    equiv_entry *victim = &q->e[0];
    q->cur = NULL;
    if (!p->equivalent || c->exclude_name)
        return 0;
    for (size_t k = 0; k < EQ_ENTRIES; k++) {
        equiv_entry *e = &q->e[k];
        if (eq_same_class(p, e, c, w)) {
            q->cur = e;
            e->used = ++q->clock;
            return eq_collect_changed(q, &p->snap, e->gen);
        }
        if (!e->valid ? victim->valid : victim->valid && e->used < victim->used)
            victim = e;
    }
    q->cur = victim;
    victim->used = ++q->clock;
    return 0;
}

/* The entry's verdicts, with the changed targets filtered again. */
static void eq_filter(profile *p, trellis_cycle *c)
{
    equiv_cache *q = &p->eq;
    equiv_entry *e = q->cur;
    memcpy(c->pass, e->pass, (c->n + 63) / 64 * sizeof *c->pass);
    memcpy(c->cands, e->cands, c->n * sizeof *c->cands);
    q->hits++;
    for (size_t k = 0; k < q->n_changed; k++)
        filter_target(c, q->changed[k]);
    q->targets_reevaluated += q->n_changed;
}

/* Keep this cycle's verdicts in the current entry. Its raw scores stay
 * valid only through eq_score in this cycle: until the cycle scores, the
 * entry says it has none. */
static void eq_save_filter(profile *p, trellis_cycle *c, trellis_object *w)
{
    equiv_entry *e = p->eq.cur;
    const snapshot *s = &p->snap;
    if (!e)
        return;
    if (e->cap < c->n || !e->skip_filter) {
        e->cap = c->cap_targets;
        free(e->pass);
        free(e->cands);
        free(e->raw);
        e->pass = xmalloc((e->cap + 63) / 64 * sizeof *e->pass);
        e->cands = xmalloc(e->cap * sizeof *e->cands);
        e->raw = xmalloc((p->score.n ? p->score.n : 1) * e->cap * sizeof *e->raw);
        if (!e->skip_filter) {
            e->skip_filter = xmalloc(p->n_plugins ? p->n_plugins : 1);
            e->skip_score = xmalloc(p->n_plugins ? p->n_plugins : 1);
        }
        e->scored = 0;
    }
    memcpy(e->pass, c->pass, (c->n + 63) / 64 * sizeof *c->pass);
    memcpy(e->cands, c->cands, c->n * sizeof *c->cands);
    memcpy(e->skip_filter, c->skip_filter, p->n_plugins);
    if (e->w != w) {
        object_ref(w);
        if (e->w)
            object_unref(e->w);
        e->w = w;
    }
    e->gen = s->gen;
    e->set_gen = s->set_gen;
    e->valid = 1;
}

/* Raw scores from the entry, the changed feasible targets scored again;
 * those go back into the entry. */
static void eq_score(profile *p, trellis_cycle *c)
{
    equiv_cache *q = &p->eq;
    equiv_entry *e = q->cur;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++) {
        int64_t *out = &c->scores[k * nf];
        const int64_t *raw = &e->raw[k * e->cap];
        if (c->skip_score[p->score.v[k]->index]) {
            memset(out, 0, nf * sizeof *out);
            continue;
        }
        for (size_t j = 0; j < nf; j++)
            out[j] = raw[c->feasible_idx[j]];
    }
    for (size_t m = 0; m < q->n_changed; m++) {
        uint32_t i = q->changed[m];
        size_t lo = 0, hi = nf; /* feasible_idx is ascending */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (c->feasible_idx[mid] < i)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nf || c->feasible_idx[lo] != i)
            continue;
        score_block(c, lo, lo + 1);
        for (size_t k = 0; k < p->score.n; k++)
            e->raw[k * e->cap + i] = c->scores[k * nf + lo];
    }
    e->scored = 1;
}

static void eq_save_scores(profile *p, trellis_cycle *c)
{
    equiv_entry *e = p->eq.cur;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++)
        for (size_t j = 0; j < nf; j++)
            e->raw[k * e->cap + c->feasible_idx[j]] = c->scores[k * nf + j];
    memcpy(e->skip_score, c->skip_score, p->n_plugins);
    e->scored = 1;
}

/* Latency for /metrics (only when the long-running host enabled them):
 * t0 is 0 when they are off. */
static uint64_t timer(void)
{
    return metrics_enabled() ? now_ns() : 0;
}

static const char *rc_status(int rc)
{
    return rc == TRELLIS_SUCCESS || rc == TRELLIS_SKIP ? "success"
           : rc == TRELLIS_ERROR                       ? "error"
                                                       : "unschedulable";
}

void framework_time_point(const profile *p, const char *point, int rc, uint64_t t0)
{
    if (t0)
        metrics_extension_point(p->cfg->name, point, rc_status(rc),
                                (double)(now_ns() - t0) / 1e9);
}

void framework_time_plugin(const trellis_plugin *pl, const char *point, int rc, uint64_t t0)
{
    if (t0)
        metrics_plugin(pl->name, point, rc_status(rc), (double)(now_ns() - t0) / 1e9);
}

fw_result framework_schedule(profile *p, trellis_cycle *c, trellis_object *w, int explain,
                             const struct trellis_target **best, char *msg, size_t msglen)
{
    framework_cycle_reset(c, p, w);
    *best = NULL;
    msg[0] = '\0';
    const trellis_plugin *bad = invalid_for(p, w);
    if (bad) {
        snprintf(msg, msglen, "%s", w->prepare_error ? w->prepare_error : "malformed workload");
        return FW_ERROR;
    }

    /* pre-filter */
    trellis_status st;
    int all_rejected = 0;
    uint64_t t_point = timer();
    for (size_t k = 0; k < p->pre_filter.n; k++) {
        trellis_plugin *pl = p->pre_filter.v[k];
        memset(&st, 0, sizeof st);
        uint64_t t0 = timer();
        int rc;
        GUARD(pl, "pre_filter", w->id, pl->hook_deadline_ms,
              rc = pl->h.pre_filter(pl, c, w, &st));
        framework_time_plugin(pl, "pre_filter", rc, t0);
        if (rc == TRELLIS_SUCCESS)
            continue;
        if (rc == TRELLIS_SKIP) {
            c->skip_filter[pl->index] = 1;
            continue;
        }
        if (rc == TRELLIS_UNSCHEDULABLE || rc == TRELLIS_UNRESOLVABLE) {
            st.code = rc;
            if (!st.reason[0])
                snprintf(st.reason, sizeof st.reason, "PreFilterRejected");
            c->pre_status = st;
            c->pre_plugin = pl->index;
            all_rejected = 1;
            break;
        }
        set_error(c, pl, &st, msg, msglen, "pre-filter failed");
        framework_time_point(p, "pre_filter", TRELLIS_ERROR, t_point);
        return FW_ERROR;
    }
    if (p->pre_filter.n)
        framework_time_point(p, "pre_filter",
                             all_rejected ? TRELLIS_UNSCHEDULABLE : TRELLIS_SUCCESS, t_point);

    /* filter */
    int reused = 0, scores_usable = 0;
    t_point = timer();
    size_t words = (c->n + 63) / 64;
    memset(c->pass, 0, words * sizeof *c->pass);
    c->eval_begin = 0;
    c->eval_len = c->n;
    atomic_store_explicit(&c->filter_error, 0, memory_order_relaxed);
    p->eq.cur = NULL;
    if (!all_rejected) {
        size_t want = explain ? c->n : feasible_to_find(p->cfg->percentage_to_score, c->n);
        c->exclude_idx = SIZE_MAX;
        if (c->exclude_name) {
            const struct trellis_target *x = snapshot_find(&p->snap, c->exclude_name);
            if (x)
                c->exclude_idx = x->index;
        }
        if (!explain && want == c->n)
            reused = eq_lookup(p, c, w);
        if (want < c->n)
            filter_sampled(p, c, want);
        else if (reused)
            eq_filter(p, c);
        else
            pool_run(p->sched_pool, c->n, FILTER_BLOCK, filter_block, c);
        settle_abandoned(c, c->skip_filter);
    }
    equiv_entry *entry = p->eq.cur;
    if (entry) {
        /* until this cycle's verdicts are saved below */
        scores_usable = reused && entry->scored &&
                        memcmp(entry->skip_score, c->skip_score, p->n_plugins) == 0;
        entry->valid = entry->scored = 0;
    }
    c->filtered = 1;
    for (size_t wi = 0; wi < words; wi++) {
        uint64_t bits = c->pass[wi];
        while (bits) {
            size_t i = wi * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            c->feasible_idx[c->n_feasible] = (uint32_t)i;
            c->feasible[c->n_feasible++] = c->targets[i];
        }
    }
    if (atomic_load_explicit(&c->filter_error, memory_order_relaxed)) {
        for (size_t i = 0; i < c->n; i++) {
            int rej = framework_rej(c, i);
            if (rej >= 0 && c->cands[i].code == TRELLIS_ERROR) {
                const trellis_plugin *who;
                framework_explain(c, i, &who, &st);
                set_error(c, who, &st, msg, msglen, "filter failed");
                return FW_ERROR;
            }
        }
    }
    if (entry)
        eq_save_filter(p, c, w);

    framework_time_point(p, "filter", c->n_feasible ? TRELLIS_SUCCESS : TRELLIS_UNSCHEDULABLE,
                         t_point);

    if (c->n_feasible == 0) {
        t_point = timer();
        /* post-filter: every rejection needs its code (unschedulable or
         * unresolvable) so the plugin knows where evicting could help */
        for (size_t i = 0; i < c->n && !all_rejected; i++)
            framework_code(c, i);
        c->in_post_filter = 1;
        for (size_t k = 0; k < p->post_filter.n; k++) {
            trellis_plugin *pl = p->post_filter.v[k];
            memset(&st, 0, sizeof st);
            uint64_t t0 = timer();
            int rc;
            GUARD(pl, "post_filter", w->id, pl->hook_deadline_ms,
                  rc = pl->h.post_filter(pl, c, w, &st));
            framework_time_plugin(pl, "post_filter", rc, t0);
            if (rc == TRELLIS_SUCCESS) {
                c->changed = 1;
                break;
            }
            if (rc == TRELLIS_ERROR) {
                c->in_post_filter = 0;
                set_error(c, pl, &st, msg, msglen, "post-filter failed");
                framework_time_point(p, "post_filter", TRELLIS_ERROR, t_point);
                return FW_ERROR;
            }
        }
        c->in_post_filter = 0;
        if (p->post_filter.n)
            framework_time_point(p, "post_filter",
                                 c->changed ? TRELLIS_SUCCESS : TRELLIS_UNSCHEDULABLE, t_point);
        return FW_UNSCHEDULABLE;
    }

    if (c->n_feasible == 1 && !explain) {
        *best = c->feasible[0];
        return FW_SCHEDULED;
    }

    /* pre-score */
    t_point = timer();
    for (size_t k = 0; k < p->pre_score.n; k++) {
        trellis_plugin *pl = p->pre_score.v[k];
        memset(&st, 0, sizeof st);
        uint64_t t0 = timer();
        int rc;
        GUARD(pl, "pre_score", w->id, pl->hook_deadline_ms,
              rc = pl->h.pre_score(pl, c, w, (const trellis_target *const *)c->feasible,
                                   c->n_feasible, &st));
        framework_time_plugin(pl, "pre_score", rc, t0);
        if (rc == TRELLIS_SKIP)
            c->skip_score[pl->index] = 1;
        else if (rc != TRELLIS_SUCCESS) {
            set_error(c, pl, &st, msg, msglen, "pre-score failed");
            return FW_ERROR;
        }
    }

    if (p->pre_score.n)
        framework_time_point(p, "pre_score", TRELLIS_SUCCESS, t_point);

    /* score (with normalize and the weighted totals) */
    t_point = timer();
    size_t nf = c->n_feasible;
    size_t need = p->score.n * nf;
    if (need > c->cap_scores) {
        c->cap_scores = need + 64;
        c->scores = xrealloc(c->scores, c->cap_scores * sizeof *c->scores);
    }
    if (scores_usable) {
        eq_score(p, c);
    } else {
        if (p->score.n)
            pool_run(p->sched_pool, nf, SCORE_BLOCK, score_block, c);
        settle_abandoned(c, c->skip_score);
        if (entry)
            eq_save_scores(p, c);
    }
    memset(c->totals, 0, nf * sizeof *c->totals);
    if (p->cfg->lexicographic)
        return select_lexicographic(p, c, w, best, msg, msglen);
    for (size_t k = 0; k < p->score.n; k++) {
        trellis_plugin *pl = p->score.v[k];
        int64_t *sc = &c->scores[k * nf];
        if (c->skip_score[pl->index])
            continue;
        if (pl->h.normalize) {
            if (score_failed(c, pl, sc, nf, msg, msglen))
                return FW_ERROR;
            memset(&st, 0, sizeof st);
            int nrc;
            GUARD(pl, "normalize", w->id, pl->hook_deadline_ms,
                  nrc = pl->h.normalize(pl, c, w, (const trellis_target *const *)c->feasible,
                                        nf, sc, &st));
            if (nrc != TRELLIS_SUCCESS) {
                set_error(c, pl, &st, msg, msglen, "normalize failed");
                return FW_ERROR;
            }
        }
        /* one pass adds the weighted scores and notes any out of range
         * (a failed raw score, INT64_MIN, is one too) */
        uint64_t out_of_range = 0;
        int64_t weight = pl->weight;
        for (size_t j = 0; j < nf; j++) {
            out_of_range |= (uint64_t)sc[j] > TRELLIS_MAX_SCORE;
            c->totals[j] += weight * sc[j];
        }
        if (out_of_range && ((!pl->h.normalize && score_failed(c, pl, sc, nf, msg, msglen)) ||
                             check_scores(c, pl, c->feasible, sc, nf, msg, msglen) < 0))
            return FW_ERROR;
    }
    c->scored = 1;
    framework_time_point(p, "score", TRELLIS_SUCCESS, t_point);

    /* select: feasible targets are in name order, so the first maximum is
     * the smallest name and the last maximum the largest */
    size_t bi = 0;
    const int64_t *tot = c->totals;
    int64_t top = tot[0];
    if (p->cfg->tie_break_desc) {
        for (size_t j = 1; j < nf; j++)
            if (tot[j] >= top)
                top = tot[bi = j];
    } else {
        for (size_t j = 1; j < nf; j++)
            if (tot[j] > top)
                top = tot[bi = j];
    }
    if (c->nominated_name) {
        /* a post-filter made room there for this workload */
        for (size_t j = 0; j < nf; j++)
            if (strcmp(c->feasible[j]->name, c->nominated_name) == 0)
                bi = j;
    }
    *best = c->feasible[bi];
    return FW_SCHEDULED;
}

int framework_filter_one(trellis_cycle *c, size_t k, size_t i, trellis_status *st)
{
    profile *p = c->p;
    memset(st, 0, sizeof *st);
    if (k >= p->filter.n || i >= c->n) {
        st->code = TRELLIS_ERROR;
        snprintf(st->reason, sizeof st->reason, "NoSuchFilter");
        snprintf(st->message, sizeof st->message, "filter %zu on target %zu is out of range",
                 k, i);
        return st->code;
    }
    if (c->pre_plugin >= 0) {
        *st = c->pre_status; /* the filters never ran */
        return st->code;
    }
    const trellis_object *o = c->targets[i]->obj;
    if (invalid_for(p, o)) {
        /* malformed objects are never shown to a filter */
        st->code = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "InvalidTarget");
        snprintf(st->message, sizeof st->message, "%s",
                 o->prepare_error ? o->prepare_error : "the target is malformed");
        return st->code;
    }
    trellis_plugin *pl = p->filter.v[k];
    if (c->skip_filter[pl->index]) {
        st->code = TRELLIS_SKIP;
        return st->code;
    }
    int rc;
    GUARD(pl, "filter", c->w->id, pl->hook_deadline_ms,
          rc = filter_code(pl->h.filter(pl, c, c->w, c->targets[i], st)));
    if (rc != TRELLIS_SUCCESS && !st->reason[0])
        snprintf(st->reason, sizeof st->reason, "Rejected");
    st->code = rc;
    return rc;
}
