/*
 * equivalence.c - see equivalence.h.
 */
#include "config.h"

#include "equivalence.h"

#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"
#include "runtime.h"
#include "util.h"

void equiv_free(equiv_cache *q)
{
    for (size_t k = 0; k < EQ_ENTRIES; k++) {
        equiv_entry *e = &q->e[k];
        if (e->w)
            object_unref(e->w);
        free(e->pass);
        free(e->cands);
        free(e->raw);
        free(e->skip_filter);
        free(e->skip_score);
        free(e->fidx);
        free(e->byf);
    }
    free(q->changed);
    memset(q, 0, sizeof *q);
}

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
        if (!run_equivalent(p->plugins[k], e->w, w))
            return 0;
    }
    return 1;
}

int equiv_lookup(profile *p, trellis_cycle *c, const trellis_object *w)
{
    equiv_cache *q = &p->eq;
    equiv_entry *victim = &q->e[0];
    q->cur = NULL;
    if (!p->equivalent || c->exclude_name || c->n_held)
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

void equiv_filter(profile *p, trellis_cycle *c, void (*refilter)(trellis_cycle *c, size_t i))
{
    equiv_cache *q = &p->eq;
    equiv_entry *e = q->cur;
    memcpy(c->pass, e->pass, (c->n + 63) / 64 * sizeof *c->pass);
    memcpy(c->cands, e->cands, c->n * sizeof *c->cands);
    q->hits++;
    for (size_t k = 0; k < q->n_changed; k++)
        refilter(c, q->changed[k]);
    q->targets_reevaluated += q->n_changed;
}

void equiv_save_filter(profile *p, trellis_cycle *c, trellis_object *w)
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

/* Keep c's feasible targets and their scores in e, by feasible position. */
static void keep_feasible(equiv_entry *e, const trellis_cycle *c, size_t ns)
{
    size_t nf = c->n_feasible;
    if (nf > e->cap_f) {
        e->cap_f = nf + 64;
        e->fidx = xrealloc(e->fidx, e->cap_f * sizeof *e->fidx);
        e->byf = xrealloc(e->byf, (ns ? ns : 1) * e->cap_f * sizeof *e->byf);
    }
    if (nf)
        memcpy(e->fidx, c->feasible_idx, nf * sizeof *e->fidx);
    if (ns && nf)
        memcpy(e->byf, c->scores, ns * nf * sizeof *e->byf);
    e->nf = nf;
}

void equiv_score(profile *p, trellis_cycle *c, void (*rescore)(trellis_cycle *c, size_t j))
{
    equiv_cache *q = &p->eq;
    equiv_entry *e = q->cur;
    size_t nf = c->n_feasible;
    size_t ns = p->score.n;
    int same = e->nf == nf && e->fidx &&
               (!nf || memcmp(e->fidx, c->feasible_idx, nf * sizeof *e->fidx) == 0);
    if (same) {
        /* the same feasible targets as last time (rows of skipped plugins
         * hold zeros there already): read where they are, or copied for
         * what changes them (a normalize that runs, or another score
         * mode's rounds) */
        int in_place = p->cfg->score_mode == SCORE_WEIGHTED;
        for (size_t k = 0; k < ns && nf; k++) {
            const trellis_plugin *pl = p->score.v[k];
            if (in_place && (!pl->h.normalize || c->skip_score[pl->index]))
                c->rows[k] = &e->byf[k * nf];
            else
                memcpy(c->rows[k], &e->byf[k * nf], nf * sizeof *c->scores);
        }
    } else {
        for (size_t k = 0; k < ns; k++) {
            int64_t *out = &c->scores[k * nf];
            const int64_t *raw = &e->raw[k * e->cap];
            if (c->skip_score[p->score.v[k]->index]) {
                memset(out, 0, nf * sizeof *out);
                continue;
            }
            for (size_t j = 0; j < nf; j++)
                out[j] = raw[c->feasible_idx[j]];
        }
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
        rescore(c, lo);
        for (size_t k = 0; k < ns; k++) {
            e->raw[k * e->cap + i] = c->scores[k * nf + lo];
            if (same)
                e->byf[k * nf + lo] = c->scores[k * nf + lo];
        }
    }
    if (!same)
        keep_feasible(e, c, ns);
    e->scored = 1;
    q->score_hits++;
}

void equiv_save_scores(profile *p, trellis_cycle *c)
{
    equiv_entry *e = p->eq.cur;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++)
        for (size_t j = 0; j < nf; j++)
            e->raw[k * e->cap + c->feasible_idx[j]] = c->scores[k * nf + j];
    memcpy(e->skip_score, c->skip_score, p->n_plugins);
    keep_feasible(e, c, p->score.n);
    e->scored = 1;
}
