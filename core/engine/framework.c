/*
 * framework.c - see framework.h.
 */
#include "config.h"

#include "framework.h"

#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "nominator.h"
#include "pool.h"
#include "profile_impl.h"
#include "runtime.h"
#include "util.h"

/* Targets are filtered in blocks of whole bitmap words. */
#define FILTER_BLOCK RT_BLOCK
#define SCORE_BLOCK RT_BLOCK

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

/* ---- nominated workloads (kube's RunFilterPluginsWithNominatedPods) ---- */

typedef struct nom_pick {
    uint32_t target;
    const trellis_object *w;
} nom_pick;

static int by_target(const void *a, const void *b)
{
    const nom_pick *x = a, *y = b;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* kube's addGENominatedPods for every target at once: the workloads other
 * than w nominated to a target of the snapshot whose priority is at least
 * w's (rt_outranks_or_equals) are added to a copy of that target, their
 * counters to its sums. Only a cycle that meets a nomination pays: with
 * none anywhere this reads a count. Main thread; the copies live in the
 * arena. -1 when it is exhausted. */
static int nominated_overlay(profile *p, trellis_cycle *c, const trellis_object *w)
{
    const nominator *m = c->nominations;
    size_t nn = m ? nominator_count(m) : 0, np = 0, nt = 0;
    if (!nn || !c->n)
        return 0;
    nom_pick *v = cycle_alloc(c, nn * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < nn; i++) {
        const nomination *e = nominator_at(m, i);
        if (strcmp(e->kind, p->snap.kind) != 0 || strcmp(e->w->id, w->id) == 0)
            continue;
        const struct trellis_target *t = snapshot_find(&p->snap, e->target);
        if (!t || !rt_outranks_or_equals(p, e->w, w))
            continue;
        v[np].target = snapshot_pos(&p->snap, t);
        v[np++].w = e->w;
    }
    if (!np)
        return 0;
    qsort(v, np, sizeof *v, by_target);
    for (size_t i = 0; i < np; i++)
        nt += i == 0 || v[i].target != v[i - 1].target;
    int nc = p->snap.n_counters;
    c->nom_bits = cycle_alloc(c, ((c->n + 63) / 64) * sizeof *c->nom_bits);
    c->nom_idx = cycle_alloc(c, nt * sizeof *c->nom_idx);
    c->nom_with = cycle_alloc(c, nt * sizeof *c->nom_with);
    if (!c->nom_bits || !c->nom_idx || !c->nom_with)
        return -1;
    for (size_t i = 0, k = 0; i < np; k++) {
        size_t j = i;
        while (j < np && v[j].target == v[i].target)
            j++;
        const struct trellis_target *t = c->targets[v[i].target];
        struct trellis_target *x = cycle_alloc(c, sizeof *x);
        trellis_object **wl = cycle_alloc(c, (t->n_wl + j - i) * sizeof *wl);
        int64_t *sums = cycle_alloc(c, (size_t)(nc ? nc : 1) * sizeof *sums);
        if (!x || !wl || !sums)
            return -1;
        *x = *t;
        if (t->n_wl)
            memcpy(wl, t->wl, t->n_wl * sizeof *wl);
        if (nc)
            memcpy(sums, t->sums, (size_t)nc * sizeof *sums);
        x->n_wl = x->cap_wl = t->n_wl;
        for (size_t l = i; l < j; l++) {
            wl[x->n_wl++] = (trellis_object *)v[l].w;
            for (int q = 0; v[l].w->counters && q < nc; q++)
                sums[q] += v[l].w->counters[q];
        }
        x->wl = wl;
        x->sums = sums;
        c->nom_idx[k] = v[i].target;
        c->nom_with[k] = x;
        c->nom_bits[v[i].target / 64] |= 1ull << (v[i].target % 64);
        c->n_nom++;
        i = j;
    }
    return 0;
}

/* The copy of target i with the nominated workloads, NULL when none. */
static const struct trellis_target *nominated_copy(const trellis_cycle *c, size_t i)
{
    if (!c->nom_bits || i >= c->n || !(c->nom_bits[i / 64] & (1ull << (i % 64))))
        return NULL;
    size_t lo = 0, hi = c->n_nom;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->nom_idx[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n_nom && c->nom_idx[lo] == i ? c->nom_with[lo] : NULL;
}

/* The plain filters in order on t (a copy of target i): TRELLIS_SUCCESS,
 * or the first rejection's code with *k its filter and st its status. */
static int filter_copy(trellis_cycle *c, const struct trellis_target *t, size_t *k,
                       trellis_status *st)
{
    profile *p = c->p;
    for (*k = 0; *k < p->filter.n; (*k)++) {
        trellis_plugin *pl = p->filter.v[*k];
        if (c->skip_filter[pl->index] || cycle_abandoned(c, pl->index))
            continue;
        memset(st, 0, sizeof *st);
        int rc = cycle_filter_code(run_filter(c, pl, t, st));
        if (rc != TRELLIS_SUCCESS)
            return rc;
    }
    return TRELLIS_SUCCESS;
}

/* The targets of [b, e) with nominated workloads are filtered again with
 * them, kube's first pass (the pass without them has run): both must
 * pass, and when the first fails its rejection is the one recorded, as
 * kube reports it (framework_explain asks in the same order). A target
 * rejected before any filter ran (a failed prepare, excluded) stays as
 * it is. Worker threads: the words are the block's own. */
static void filter_nominated(trellis_cycle *c, size_t b, size_t e)
{
    for (size_t wi = b / 64; wi < (e + 63) / 64; wi++) {
        uint64_t m = wi * 64 + 64 <= e ? ~0ull : (1ull << (e % 64)) - 1;
        if (c->narrowed)
            m &= c->narrow[wi];
        uint64_t bits = m & c->nom_bits[wi];
        while (bits) {
            size_t i = wi * 64 + (size_t)__builtin_ctzll(bits), k;
            bits &= bits - 1;
            if (!(c->pass[wi] & (1ull << (i % 64))) &&
                (c->cands[i].rej < 0 || c->cands[i].code == TRELLIS_ERROR))
                continue;
            trellis_status st;
            int rc = filter_copy(c, nominated_copy(c, i), &k, &st);
            if (rc != TRELLIS_SUCCESS)
                cycle_reject(c, i, (int)k, rc);
        }
    }
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
        if (c->narrowed) /* only the targets a pre-filter left in */
            m &= c->narrow[wi];
        uint64_t bad = invalid[wi] & m;
        pass[wi] = m;
        while (bad) { /* failed some plugin's prepare: this profile's? */
            size_t i = wi * 64 + (size_t)__builtin_ctzll(bad);
            bad &= bad - 1;
            if (invalid_for(p, c->targets[i]->obj))
                cycle_reject(c, i, REJ_INVALID, TRELLIS_UNRESOLVABLE);
        }
        live |= pass[wi];
    }
    if (c->exclude_idx >= b && c->exclude_idx < e &&
        (pass[c->exclude_idx / 64] & (1ull << (c->exclude_idx % 64))))
        cycle_reject(c, c->exclude_idx, REJ_EXCLUDED, TRELLIS_UNRESOLVABLE);
    for (size_t k = 0; k < p->filter.n && live; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index] || cycle_abandoned(c, pl->index))
            continue;
        run_filter_block(c, k, b, e);
        live = 0;
        for (size_t wi = w0; wi < w0 + nw; wi++)
            live |= pass[wi];
    }
    if (c->nom_bits)
        filter_nominated(c, b, e);
}

/* Filter target i alone, as filter_block would: a batch hook gets a
 * block of one, a span hook the target's word with only its bit set. */
static void filter_target(trellis_cycle *c, size_t i)
{
    profile *p = c->p;
    uint64_t bit = 1ull << (i % 64);
    if (!cycle_in_set(c, i)) {
        c->pass[i / 64] &= ~bit; /* left out: framework_rej says so */
        return;
    }
    c->pass[i / 64] |= bit;
    if ((p->snap.invalid[i / 64] & bit) && invalid_for(p, c->targets[i]->obj)) {
        cycle_reject(c, i, REJ_INVALID, TRELLIS_UNRESOLVABLE);
        return;
    }
    for (size_t k = 0; k < p->filter.n; k++) {
        if (c->skip_filter[p->filter.v[k]->index])
            continue;
        int rc = run_filter_at(c, k, i);
        if (rc != TRELLIS_SUCCESS) {
            cycle_reject(c, i, (int)k, rc);
            return;
        }
    }
}

int framework_rej(const trellis_cycle *c, size_t i)
{
    if (c->pre_plugin >= 0)
        return REJ_PRE_FILTER;
    if (!cycle_in_set(c, i))
        return REJ_NARROWED;
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
    if (rej == REJ_NARROWED) /* always, whatever the narrowing plugin says why */
        return TRELLIS_UNRESOLVABLE;
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

static void score_block(void *ctx, size_t b, size_t e)
{
    trellis_cycle *c = ctx;
    profile *p = c->p;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++) {
        trellis_plugin *pl = p->score.v[k];
        int64_t *out = &c->scores[k * nf];
        if (c->skip_score[pl->index] || cycle_abandoned(c, pl->index)) {
            for (size_t j = b; j < e; j++)
                out[j] = 0;
            continue;
        }
        run_score_block(c, k, out, b, e);
    }
}

/* Why target i was left out of the cycle by cycle_narrow: the narrowing
 * plugins' plain filters say (in the order they narrowed; never on a
 * target some plugin could not prepare), else kube-scheduler's words for a
 * node outside the PreFilterResult. The code is UNRESOLVABLE whatever the
 * filter said, as kube marks an absent node: no eviction can bring it into
 * this cycle. Nothing is kept: a left-out target has no cands[] entry. */
static int narrowed_out(trellis_cycle *c, size_t i, const trellis_plugin **who, trellis_status *st)
{
    profile *p = c->p;
    size_t named = c->n_narrow_by < NARROW_NAMED ? c->n_narrow_by : NARROW_NAMED;
    int valid = !invalid_for(p, c->targets[i]->obj);
    for (size_t k = 0; k < named && valid; k++) {
        trellis_plugin *pl = p->plugins[c->narrow_by[k]];
        if (!pl->h.filter || c->skip_filter[pl->index])
            continue;
        memset(st, 0, sizeof *st);
        int rc = cycle_filter_code(run_filter(c, pl, c->targets[i], st));
        if (rc == TRELLIS_SUCCESS)
            continue;
        *who = pl;
        st->code = TRELLIS_UNRESOLVABLE;
        if (!st->reason[0])
            snprintf(st->reason, sizeof st->reason, "Rejected");
        return st->code;
    }
    memset(st, 0, sizeof *st);
    *who = p->plugins[c->narrow_by[0]];
    st->code = TRELLIS_UNRESOLVABLE;
    snprintf(st->reason, sizeof st->reason, "NotInPreFilterResult");
    strbuf b;
    sb_init(&b);
    for (size_t k = 0; k < named; k++)
        sb_printf(&b, "%s%s", k ? ", " : "", p->plugins[c->narrow_by[k]]->name);
    if (c->n_narrow_by > named)
        sb_puts(&b, ", ...");
    snprintf(st->message, sizeof st->message, "didn't satisfy plugin(s) [%s]%s", b.s ? b.s : "",
             c->n_narrow_by > 1 ? " simultaneously" : "");
    sb_free(&b);
    return st->code;
}

int framework_explain(trellis_cycle *c, size_t i, const trellis_plugin **who, trellis_status *st)
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
    if (rej == REJ_NARROWED)
        return narrowed_out(c, i, who, st);
    if (rej == REJ_EXCLUDED || rej == REJ_HELD) {
        st->code = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "%s", rej == REJ_HELD ? "Held" : "CurrentTarget");
        snprintf(st->message, sizeof st->message, "%s",
                 rej == REJ_HELD ? "the workload holds this target already"
                                 : "the workload is being moved off this target");
        return st->code;
    }
    if (rej == REJ_LATE) {
        const cycle_late *l = cycle_late_of(c, i);
        *who = l->pl;
        *st = l->st;
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
    /* with nominated workloads first, as kube's first pass */
    const struct trellis_target *with = nominated_copy(c, i);
    size_t wk;
    int wrc = with ? filter_copy(c, with, &wk, st) : TRELLIS_SUCCESS;
    if (wrc != TRELLIS_SUCCESS) {
        *who = p->filter.v[wk];
        st->code = wrc;
        if (!st->reason[0])
            snprintf(st->reason, sizeof st->reason, "Rejected");
        return wrc;
    }
    /* rerun the plain filters in order; the first rejection is the one */
    for (size_t k = 0; k < p->filter.n; k++) {
        trellis_plugin *pl = p->filter.v[k];
        if (c->skip_filter[pl->index])
            continue;
        int rc = run_filter(c, pl, c->targets[i], st);
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

int framework_review(trellis_cycle *c, const trellis_plugin *caller, trellis_candidate *cands,
                     size_t *n, trellis_status *st)
{
    return run_review_candidates(c, caller, cands, n, st);
}

/* The filters over t without the victims (a trial of preemption). */
static int filter_trial(trellis_cycle *c, const struct trellis_target *t,
                        const trellis_object *const *victims, size_t n, trellis_status *st)
{
    profile *p = c->p;
    int nc = p->snap.n_counters;
    struct trellis_target tmp = *t;
    tmp.n_wl = 0;
    tmp.cap_wl = 0;
    /* the copy lives in the cycle's arena: nothing to free */
    trellis_object **wl = cycle_alloc(c, (t->n_wl ? t->n_wl : 1) * sizeof *wl);
    int64_t *sums = cycle_alloc(c, (size_t)(nc ? nc : 1) * sizeof *sums);
    if (!wl || !sums)
        return TRELLIS_ERROR;
    if (nc)
        memcpy(sums, t->sums, (size_t)nc * sizeof *sums);
    for (size_t i = 0; i < t->n_wl; i++) {
        int gone = 0;
        for (size_t j = 0; j < n && !gone; j++)
            gone = victims[j] == t->wl[i] || (strcmp(victims[j]->key, t->wl[i]->key) == 0 &&
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
        rc = run_filter(c, pl, &tmp, st);
    }
    st->code = rc;
    return rc;
}

int framework_filter_without(trellis_cycle *c, const struct trellis_target *t,
                             const trellis_object *const *victims, size_t n, trellis_status *st)
{
    size_t ti = cycle_pos(c, t);
    int ours = ti != SIZE_MAX;
    if (ours && !cycle_in_set(c, ti)) {
        /* left out by a pre-filter: no eviction brings it into the cycle */
        memset(st, 0, sizeof *st);
        st->code = TRELLIS_UNRESOLVABLE;
        snprintf(st->reason, sizeof st->reason, "NotInPreFilterResult");
        snprintf(st->message, sizeof st->message, "the pre-filter left the target out");
        return TRELLIS_UNRESOLVABLE;
    }
    /* kube's SelectVictimsOnNode filters with the nominated workloads too:
     * with them, then (if that passes) without */
    const struct trellis_target *with = ours ? nominated_copy(c, ti) : NULL;
    int rc = filter_trial(c, with ? with : t, victims, n, st);
    if (rc == TRELLIS_SUCCESS && with)
        rc = filter_trial(c, t, victims, n, st);
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
            snprintf(msg, msglen, "plugin %s: score %lld for target %s is outside 0..%d", pl->name,
                     (long long)sc[j], ts[j]->name, TRELLIS_MAX_SCORE);
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
        run_score(c, (trellis_plugin *)pl, c->feasible[j], &v, &st);
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
                                      const struct trellis_target **best, char *msg, size_t msglen)
{
    size_t nf = c->n_feasible;
    /* live[] holds the indices (into feasible) still in the running */
    uint32_t *live = cycle_alloc(c, nf * sizeof *live);
    const struct trellis_target **ts = cycle_alloc(c, nf * sizeof *ts);
    int64_t *sc = cycle_alloc(c, nf * sizeof *sc);
    size_t nl = nf;
    for (size_t j = 0; j < nf; j++)
        live[j] = (uint32_t)j;
    fw_result r = FW_SCHEDULED;
    for (size_t k = 0; k < p->score.n && nl > 1; k++) {
        trellis_plugin *pl = p->score.v[k];
        if (c->skip_score[pl->index])
            continue;
        int64_t *raw = c->rows[k];
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
        if (pl->h.normalize &&
            run_normalize(c, pl, (const trellis_target *const *)ts, nl, sc, msg, msglen) < 0) {
            r = FW_ERROR;
            goto out;
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

/* Whether feasible targets a and b have the same raw score from every
 * score plugin that ran. */
static int same_scores(const profile *p, const trellis_cycle *c, uint32_t a, uint32_t b)
{
    for (size_t k = 0; k < p->score.n; k++)
        if (!c->skip_score[p->score.v[k]->index] && c->rows[k][a] != c->rows[k][b])
            return 0;
    return 1;
}

/* Whether feasible target a ranks before b: by the weighted total
 * (score_mode weighted), else by the raw scores of the score plugins in
 * profile order, larger first (tuple; lexicographic ranks the same way
 * when its normalizations keep the order); then the tie-break (snapshot
 * order, or its reverse). */
static int rank_before(const profile *p, const trellis_cycle *c, uint32_t a, uint32_t b)
{
    if (p->cfg->score_mode == SCORE_WEIGHTED && c->totals[a] != c->totals[b])
        return c->totals[a] > c->totals[b];
    for (size_t k = 0; k < p->score.n && p->cfg->score_mode != SCORE_WEIGHTED; k++) {
        if (c->skip_score[p->score.v[k]->index])
            continue;
        int64_t x = c->rows[k][a], y = c->rows[k][b];
        if (x != y)
            return x > y;
    }
    return p->cfg->tie_break_desc ? a > b : a < b;
}

/* Merge sort of idx[0..n) by rank_before (tmp: n slots). */
static void rank_sort(const profile *p, const trellis_cycle *c, uint32_t *idx, uint32_t *tmp,
                      size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    rank_sort(p, c, idx, tmp, h);
    rank_sort(p, c, idx + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = rank_before(p, c, idx[j], idx[i]) ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* Score rows a tuple's first is found with at hand (more: rank_before). */
#define TUPLE_ROWS_MAX 16

/* score_mode = "tuple" (Fleet): raw signed scores, no normalize, compared
 * plugin by plugin in profile order, then the tie-break; the first is
 * picked, or the nominated target when it ties with the first. With
 * --explain a full ranking: totals[j] ends as how many targets rank below
 * j; otherwise one pass finds the first. */
static fw_result select_tuple(profile *p, trellis_cycle *c, unsigned flags,
                              const struct trellis_target **best, char *msg, size_t msglen)
{
    size_t nf = c->n_feasible;
    /* one score plugin in play (the usual tuple: a strategy): its row
     * alone, as rank_before would compare it, then the tie-break; the
     * pass that finds the first also finds a failed score */
    size_t active = 0, row = 0;
    for (size_t k = 0; k < p->score.n; k++)
        if (!c->skip_score[p->score.v[k]->index])
            active++, row = k;
    uint32_t top = 0;
    if (active == 1 && !(flags & FW_EXPLAIN)) {
        const int64_t *sc = c->rows[row];
        int64_t first = nf ? sc[0] : 0, low = first; /* low: INT64_MIN when one failed */
        int desc = p->cfg->tie_break_desc;
        for (uint32_t j = 1; j < nf; j++) {
            int64_t v = sc[j];
            low = v < low ? v : low;
            if (v > first || (desc && v == first))
                first = v, top = j;
        }
        if (low == INT64_MIN && score_failed(c, p->score.v[row], sc, nf, msg, msglen))
            return FW_ERROR;
    } else {
        for (size_t k = 0; k < p->score.n; k++) {
            trellis_plugin *pl = p->score.v[k];
            if (!c->skip_score[pl->index] && score_failed(c, pl, c->rows[k], nf, msg, msglen))
                return FW_ERROR;
        }
    }
    if (!(flags & FW_EXPLAIN)) {
        const int64_t *act[TUPLE_ROWS_MAX]; /* the rows in play, in profile order */
        size_t na = 0;
        for (size_t k = 0; active > 1 && active <= TUPLE_ROWS_MAX && k < p->score.n; k++)
            if (!c->skip_score[p->score.v[k]->index])
                act[na++] = c->rows[k];
        if (na) {
            /* rank_before(j, top) with the rows at hand; j comes after top
             * in name order, so a tie goes to j only with name-desc */
            int desc = p->cfg->tie_break_desc;
            for (uint32_t j = 1; j < nf; j++) {
                size_t q = 0;
                while (q < na && act[q][j] == act[q][top])
                    q++;
                if (q < na ? act[q][j] > act[q][top] : desc)
                    top = j;
            }
        } else if (active != 1) {
            for (uint32_t j = 1; j < nf; j++)
                if (rank_before(p, c, j, top))
                    top = j;
        }
        *best = c->feasible[top];
        for (uint32_t j = 0; c->nominated_name && j < nf; j++)
            if (same_scores(p, c, top, j) && strcmp(c->feasible[j]->name, c->nominated_name) == 0)
                *best = c->feasible[j];
        c->scored = 1;
        return FW_SCHEDULED;
    }
    uint32_t *idx = cycle_alloc_raw(c, nf * sizeof *idx);
    uint32_t *tmp = cycle_alloc_raw(c, nf * sizeof *tmp);
    for (size_t j = 0; j < nf; j++)
        idx[j] = (uint32_t)j;
    rank_sort(p, c, idx, tmp, nf);
    for (size_t r = 0; r < nf; r++)
        c->totals[idx[r]] = (int64_t)(nf - 1 - r);
    *best = c->feasible[idx[0]];
    for (size_t r = 0; c->nominated_name && r < nf && same_scores(p, c, idx[0], idx[r]); r++)
        if (strcmp(c->feasible[idx[r]]->name, c->nominated_name) == 0)
            *best = c->feasible[idx[r]];
    c->scored = 1;
    return FW_SCHEDULED;
}

/* The targets the workload holds are never candidates (the equivalence
 * cache is not used when it holds any). */
static void exclude_held(const profile *p, trellis_cycle *c)
{
    for (size_t i = 0; i < c->n_held; i++) {
        if (cycle_reconsidered(c, c->held[i]))
            continue; /* a candidate again */
        const struct trellis_target *x = snapshot_find(&p->snap, c->held[i]);
        size_t xi = x ? snapshot_pos(&p->snap, x) : 0;
        if (x && (c->pass[xi / 64] & (1ull << (xi % 64))))
            cycle_reject(c, xi, REJ_HELD, TRELLIS_UNRESOLVABLE);
    }
}

/* Picks of at most this many, not explained, are found pass by pass. */
#define PICK_BY_PASSES 8

/* The best k feasible targets, the best first, into c->picks. Explained,
 * or many, from the whole ranking (totals[j]: how many j outranks, which
 * --explain shows); otherwise k passes, each the first by rank_before of
 * those left (a total order: the same as the ranking's first k). */
static fw_result select_many(profile *p, trellis_cycle *c, unsigned flags, size_t k, char *msg,
                             size_t msglen)
{
    size_t nf = c->n_feasible;
    for (size_t s = 0; s < p->score.n && p->cfg->score_mode != SCORE_WEIGHTED; s++) {
        trellis_plugin *pl = p->score.v[s];
        if (!c->skip_score[pl->index] && score_failed(c, pl, c->rows[s], nf, msg, msglen))
            return FW_ERROR;
    }
    int passes = !(flags & FW_EXPLAIN) && k <= PICK_BY_PASSES;
    uint32_t *idx = cycle_alloc_raw(c, nf * sizeof *idx);
    uint32_t *tmp = passes ? NULL : cycle_alloc_raw(c, nf * sizeof *tmp);
    c->picks = cycle_alloc_raw(c, k * sizeof *c->picks);
    if (!idx || (!passes && !tmp) || !c->picks) {
        snprintf(msg, msglen, "%zu targets are too many to rank", nf);
        return FW_ERROR;
    }
    for (size_t j = 0; j < nf; j++)
        idx[j] = (uint32_t)j;
    if (passes) {
        for (size_t r = 0; r < k; r++) {
            size_t first = r;
            for (size_t j = r + 1; j < nf; j++)
                if (rank_before(p, c, idx[j], idx[first]))
                    first = j;
            uint32_t x = idx[r];
            idx[r] = idx[first];
            idx[first] = x;
            c->picks[r] = c->feasible[idx[r]];
        }
        c->n_picks = k;
        c->scored = 1;
        return FW_SCHEDULED;
    }
    rank_sort(p, c, idx, tmp, nf);
    for (size_t r = 0; r < k; r++)
        c->picks[r] = c->feasible[idx[r]];
    if (p->cfg->score_mode != SCORE_WEIGHTED) /* as select_tuple: how many it outranks */
        for (size_t r = 0; r < nf; r++)
            c->totals[idx[r]] = (int64_t)(nf - 1 - r);
    c->n_picks = k;
    c->scored = 1;
    return FW_SCHEDULED;
}

/* Filter every target (or, sampling, enough of them) into c->pass, from
 * the equivalence cache where it serves; then the feasible list. Whether
 * the cache's raw scores may serve this cycle goes to *scores_usable.
 * FW_ERROR with msg when a filter failed. */
static fw_result find_feasible(profile *p, trellis_cycle *c, trellis_object *w, unsigned flags,
                               int all_rejected, int *scores_usable, char *msg, size_t msglen)
{
    int reused = 0;
    uint64_t tp = rt_clock();
    size_t words = (c->n + 63) / 64;
    memset(c->pass, 0, words * sizeof *c->pass);
    c->eval_begin = 0;
    c->eval_len = c->n;
    atomic_store_explicit(&c->filter_error, 0, memory_order_relaxed);
    p->eq.cur = NULL;
    if (!all_rejected) {
        int explain = (flags & FW_EXPLAIN) != 0;
        /* a decision of several targets looks at every one: a sample
         * would hide what it wants */
        size_t in_set = c->narrowed ? c->n_narrow : c->n;
        size_t want = explain || framework_more_wanted(c) > 1
                          ? in_set
                          : feasible_to_find(p->cfg->percentage_to_score, in_set);
        c->exclude_idx = SIZE_MAX;
        if (c->exclude_name) {
            const struct trellis_target *x = snapshot_find(&p->snap, c->exclude_name);
            if (x)
                c->exclude_idx = snapshot_pos(&p->snap, x);
        }
        /* a narrowed cycle looks at its set alone (the cache's bookkeeping
         * walks every target); verdicts with nominated workloads are this
         * workload's alone */
        if (!explain && want == c->n && !c->narrowed && !c->nom_bits)
            reused = equiv_lookup(p, c, w);
        if (want < in_set)
            filter_sampled(p, c, want);
        else if (reused)
            equiv_filter(p, c, filter_target);
        else if (c->narrowed) /* its words alone: pass is 0 elsewhere */
            pool_run_range(p->sched_pool, c->narrow_lo * 64,
                           c->narrow_hi * 64 < c->n ? c->narrow_hi * 64 : c->n, FILTER_BLOCK,
                           filter_block, c);
        else
            pool_run(p->sched_pool, c->n, FILTER_BLOCK, filter_block, c);
        cycle_settle_abandoned(c, c->skip_filter);
        exclude_held(p, c);
    }
    equiv_entry *entry = p->eq.cur;
    *scores_usable = 0;
    if (entry) {
        /* until this cycle's verdicts are saved below; the plugins that
         * skip scoring are compared once pre-score has said (prioritise) */
        *scores_usable = reused && entry->scored;
        entry->valid = entry->scored = 0;
    }
    c->filtered = 1;
    size_t w_lo = 0, w_hi = words; /* the words pass may have bits in */
    if (c->narrowed) {
        w_lo = c->narrow_lo;
        w_hi = c->narrow_hi;
    }
    for (size_t wi = w_lo; wi < w_hi; wi++) {
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
            if (framework_rej(c, i) >= 0 && c->cands[i].code == TRELLIS_ERROR) {
                const trellis_plugin *who;
                trellis_status st;
                framework_explain(c, i, &who, &st);
                rt_fail(c, who, &st, "filter failed", msg, msglen);
                return FW_ERROR;
            }
        }
    }
    if (entry && atomic_load(&c->retry_at) == INT64_MAX) /* verdicts that expire are not kept */
        equiv_save_filter(p, c, w);
    else if (entry) { /* nor their scores: the entry stays as it was, not valid */
        p->eq.cur = NULL;
        *scores_usable = 0;
    }
    rt_time_point(p, MP_FILTER, c->n_feasible ? TRELLIS_SUCCESS : TRELLIS_UNSCHEDULABLE, tp);
    return FW_SCHEDULED;
}

/* Nothing fits: the post-filters may make room (evictions, a created
 * target). A rejection's code (unschedulable or unresolvable: where
 * evicting could help) is worked out when a post-filter asks for it
 * (cycle_target_code), from the cycle's snapshot: a post-filter that
 * creates a target never pays for the reasons of every other one. */
static fw_result post_filter(trellis_cycle *c, unsigned flags, char *msg, size_t msglen)
{
    if ((flags & FW_NO_POST_FILTER) || !c->p->post_filter.n)
        return FW_UNSCHEDULABLE;
    return run_post_filter(c, msg, msglen) == TRELLIS_ERROR ? FW_ERROR : FW_UNSCHEDULABLE;
}

static void rescore(trellis_cycle *c, size_t j)
{
    score_block(c, j, j + 1);
}

/* Score the feasible targets: raw scores into c->scores (from the
 * equivalence cache where it serves), normalized and weighted into
 * c->totals. FW_ERROR with msg when a plugin failed or a score is out of
 * range. */
static fw_result prioritise(profile *p, trellis_cycle *c, int scores_usable, char *msg,
                            size_t msglen)
{
    size_t nf = c->n_feasible;
    size_t need = p->score.n * nf;
    if (need > c->cap_scores) {
        c->cap_scores = need + 64;
        c->scores = xrealloc(c->scores, c->cap_scores * sizeof *c->scores);
    }
    if (p->score.n > c->cap_rows) {
        c->cap_rows = p->score.n;
        c->rows = xrealloc(c->rows, c->cap_rows * sizeof *c->rows);
    }
    for (size_t k = 0; k < p->score.n; k++)
        c->rows[k] = &c->scores[k * nf];
    if (scores_usable && memcmp(p->eq.cur->skip_score, c->skip_score, p->n_plugins) != 0)
        scores_usable = 0; /* another plugin skips scoring this time */
    if (scores_usable) {
        equiv_score(p, c, rescore);
    } else {
        if (p->score.n)
            pool_run(p->sched_pool, nf, SCORE_BLOCK, score_block, c);
        cycle_settle_abandoned(c, c->skip_score);
        if (p->eq.cur)
            equiv_save_scores(p, c);
    }
    /* summed (weighted), counted (lexicographic); tuple writes them whole
     * when it ranks them all (--explain), and reads them only then */
    if (p->cfg->score_mode != SCORE_TUPLE)
        memset(c->totals, 0, nf * sizeof *c->totals);
    if (p->cfg->score_mode != SCORE_WEIGHTED)
        return FW_SCHEDULED; /* normalized round by round, or raw */
    for (size_t k = 0; k < p->score.n; k++) {
        trellis_plugin *pl = p->score.v[k];
        int64_t *sc = c->rows[k];
        if (c->skip_score[pl->index])
            continue;
        if (pl->h.normalize && (score_failed(c, pl, sc, nf, msg, msglen) ||
                                run_normalize(c, pl, (const trellis_target *const *)c->feasible, nf,
                                              sc, msg, msglen) < 0))
            return FW_ERROR;
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
    return FW_SCHEDULED;
}

/* The highest total; feasible targets are in name order, so the first
 * maximum is the smallest name and the last maximum the largest. A
 * target a post-filter nominated wins. */
static const struct trellis_target *select_best(const profile *p, const trellis_cycle *c)
{
    size_t nf = c->n_feasible, bi = 0;
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
    return c->feasible[bi];
}

size_t framework_more_wanted(const trellis_cycle *c)
{
    if (c->want == TRELLIS_WANT_ALL)
        return SIZE_MAX;
    size_t kept = cycle_kept(c);
    return c->want > kept ? c->want - kept : 0;
}

/* A decision of several targets: every feasible one (no scoring), or the
 * best `more` of the ranking. */
static fw_result schedule_many(profile *p, trellis_cycle *c, unsigned flags, size_t more,
                               int scores_usable, char *msg, size_t msglen)
{
    size_t nf = c->n_feasible;
    if (more == SIZE_MAX) {
        c->picks = c->feasible;
        c->n_picks = nf;
        return FW_SCHEDULED;
    }
    if (run_pre_score(c, msg, msglen) == TRELLIS_ERROR ||
        prioritise(p, c, scores_usable, msg, msglen) == FW_ERROR)
        return FW_ERROR;
    return select_many(p, c, flags, more < nf ? more : nf, msg, msglen);
}

fw_result framework_schedule(profile *p, trellis_cycle *c, trellis_object *w, unsigned flags,
                             const struct trellis_target **best, char *msg, size_t msglen)
{
    cycle_reset(c, p, w);
    *best = NULL;
    msg[0] = '\0';
    if (invalid_for(p, w)) {
        snprintf(msg, msglen, "%s", w->prepare_error ? w->prepare_error : "malformed workload");
        return FW_ERROR;
    }
    int pre = run_pre_filter(c, msg, msglen);
    if (pre == TRELLIS_ERROR)
        return FW_ERROR;
    size_t more = framework_more_wanted(c);
    if (!more)
        return FW_SATISFIED;
    int all_rejected = pre == TRELLIS_UNSCHEDULABLE, scores_usable;
    if (!all_rejected && nominated_overlay(p, c, w) < 0) {
        snprintf(msg, msglen, "the cycle's arena is exhausted (nominated workloads)");
        return FW_ERROR;
    }
    if (find_feasible(p, c, w, flags, all_rejected, &scores_usable, msg, msglen) == FW_ERROR)
        return FW_ERROR;
    if (p->filter_feasible.n && c->n_feasible &&
        run_filter_feasible(c, msg, msglen) == TRELLIS_ERROR)
        return FW_ERROR;
    if (c->n_feasible == 0 && c->want == TRELLIS_WANT_ALL && cycle_kept(c))
        return FW_SATISFIED; /* it holds every feasible target */
    if (c->n_feasible == 0)
        return post_filter(c, flags, msg, msglen);
    if (more > 1)
        return schedule_many(p, c, flags, more, scores_usable, msg, msglen);
    if (c->n_feasible == 1 && !(flags & FW_EXPLAIN)) {
        *best = c->feasible[0];
        return FW_SCHEDULED;
    }
    if (run_pre_score(c, msg, msglen) == TRELLIS_ERROR)
        return FW_ERROR;
    uint64_t tp = rt_clock();
    if (prioritise(p, c, scores_usable, msg, msglen) == FW_ERROR)
        return FW_ERROR;
    if (p->cfg->score_mode == SCORE_LEXICOGRAPHIC)
        return select_lexicographic(p, c, w, best, msg, msglen);
    if (p->cfg->score_mode == SCORE_TUPLE)
        return select_tuple(p, c, flags, best, msg, msglen);
    rt_time_point(p, MP_SCORE, TRELLIS_SUCCESS, tp);
    *best = select_best(p, c);
    return FW_SCHEDULED;
}

int framework_filter_one(trellis_cycle *c, size_t k, size_t i, trellis_status *st)
{
    profile *p = c->p;
    memset(st, 0, sizeof *st);
    if (k >= p->filter.n || i >= c->n) {
        st->code = TRELLIS_ERROR;
        snprintf(st->reason, sizeof st->reason, "NoSuchFilter");
        snprintf(st->message, sizeof st->message, "filter %zu on target %zu is out of range", k, i);
        return st->code;
    }
    if (c->pre_plugin >= 0) {
        *st = c->pre_status; /* the filters never ran */
        return st->code;
    }
    if (!cycle_in_set(c, i)) { /* left out: no filter ran on it */
        const trellis_plugin *who;
        return narrowed_out(c, i, &who, st);
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
    int rc = cycle_filter_code(run_filter(c, pl, c->targets[i], st));
    if (rc != TRELLIS_SUCCESS && !st->reason[0])
        snprintf(st->reason, sizeof st->reason, "Rejected");
    st->code = rc;
    return rc;
}
