/*
 * cycle.c - see cycle.h.
 */
#include "config.h"

#include "cycle.h"

#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "profile_impl.h"
#include "util.h"

#define ARENA_CHUNK (64 * 1024)

/* The arena is a list of chunks kept across cycles; the first word of each
 * chunk points to the previous one. */
void *cycle_alloc(trellis_cycle *c, size_t size)
{
    void *p = cycle_alloc_raw(c, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void *cycle_alloc_raw(trellis_cycle *c, size_t size)
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
    free(c->rows);
    free(c->totals);
    free(c->late);
    free(c->late_of);
    free(c->narrow);
    free(c->narrow_tmp);
    memset(c, 0, sizeof *c);
}

/* Size the buffers for this profile and snapshot; they only grow, so a
 * steady state allocates nothing. */
void cycle_reset(trellis_cycle *c, profile *p, trellis_object *w)
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
    if (c->n > c->cap_targets || !c->pass) { /* allocated even for no target */
        /* with room to grow: a post-filter may add a target a cycle */
        size_t cap = c->n + c->n / 4 + 64;
        c->pass = xrealloc(c->pass, ((cap + 63) / 64) * sizeof *c->pass);
        c->cands = xrealloc(c->cands, cap * sizeof *c->cands);
        c->feasible = xrealloc(c->feasible, cap * sizeof *c->feasible);
        c->feasible_idx = xrealloc(c->feasible_idx, cap * sizeof *c->feasible_idx);
        c->totals = xrealloc(c->totals, cap * sizeof *c->totals);
        c->cap_targets = cap;
    }
    c->n_feasible = 0;
    atomic_store(&c->retry_at, INT64_MAX);
    c->scored = 0;
    c->filtered = 0;
    c->pre_plugin = -1;
    c->exclude_idx = SIZE_MAX;
    memset(&c->pre_status, 0, sizeof c->pre_status);
    c->in_post_filter = 0;
    c->in_review = 0;
    c->changed = 0;
    c->nominated_to = NULL;
    c->nom_bits = NULL; /* the arena's: gone */
    c->n_nom = 0;
    c->n_evicted = 0;
    c->sample = metrics_sample();
    c->failed = 0;
    c->want = 1;
    c->released = NULL;
    c->n_released = 0;
    c->reconsidered = NULL;
    c->n_reconsidered = 0;
    c->picks = NULL;
    c->n_picks = 0;
    c->n_late = 0;
    c->in_filter_feasible = NULL;
    c->requeue_now = 0;
    c->narrowed = 0;
    c->n_narrow = 0;
    c->narrow_lo = c->narrow_hi = 0;
    c->n_narrow_by = 0;
    atomic_store_explicit(&c->abandoned, 0, memory_order_relaxed);
    c->error_plugin = NULL;
    memset(&c->error_status, 0, sizeof c->error_status);
}

void cycle_move_state(trellis_cycle *to, trellis_cycle *from)
{
    to->sample = from->sample;
    to->slots = from->slots;
    to->cap_plugins = from->cap_plugins;
    to->arena = from->arena;
    to->arena_cap = from->arena_cap;
    to->arena_used = from->arena_used;
    to->writes_held = from->writes_held;
    from->writes_held = NULL;
    from->slots = xcalloc(from->cap_plugins ? from->cap_plugins : 1, sizeof *from->slots);
    from->arena = NULL;
    from->arena_cap = from->arena_used = 0;
}

void cycle_reject_late(trellis_cycle *c, const trellis_plugin *pl, size_t i,
                       const trellis_status *st)
{
    if (c->n_late == c->cap_late) {
        c->cap_late = c->cap_late ? 2 * c->cap_late : 16;
        c->late = xrealloc(c->late, c->cap_late * sizeof *c->late);
    }
    if (c->cap_late_of < c->cap_targets) {
        c->cap_late_of = c->cap_targets;
        c->late_of = xrealloc(c->late_of, c->cap_late_of * sizeof *c->late_of);
    }
    c->late[c->n_late].pl = pl;
    c->late[c->n_late].st = *st;
    c->late_of[i] = (uint32_t)c->n_late++;
    cycle_reject(c, i, REJ_LATE, st->code);
}

void cycle_settle_abandoned(trellis_cycle *c, unsigned char *skip)
{
    uint64_t m = atomic_load_explicit(&c->abandoned, memory_order_relaxed);
    for (; m; m &= m - 1)
        skip[__builtin_ctzll(m)] = 1;
}

size_t cycle_pos(const trellis_cycle *c, const struct trellis_target *t)
{
    size_t i = c->p ? snapshot_pos(&c->p->snap, t) : SIZE_MAX;
    return i < c->n && c->targets[i] == t ? i : SIZE_MAX;
}

int cycle_narrow_to(trellis_cycle *c, int by, const uint32_t *idx, size_t n)
{
    size_t words = (c->n + 63) / 64;
    if (words > c->cap_narrow || !c->narrow) {
        c->cap_narrow = (c->cap_targets + 63) / 64;
        if (c->cap_narrow < words)
            c->cap_narrow = words;
        c->narrow = xrealloc(c->narrow, (c->cap_narrow ? c->cap_narrow : 1) * sizeof *c->narrow);
        c->narrow_tmp =
            xrealloc(c->narrow_tmp, (c->cap_narrow ? c->cap_narrow : 1) * sizeof *c->narrow_tmp);
    }
    /* the set is built where it is not yet read: a place out of range
     * stops it half made, and the cycle is as it was */
    uint64_t *set = c->narrowed ? c->narrow_tmp : c->narrow;
    memset(set, 0, words * sizeof *set);
    uint32_t lo = UINT32_MAX, hi = 0; /* the places set, lowest and highest */
    for (size_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        if (i >= c->n)
            return -1;
        set[i / 64] |= 1ull << (i % 64);
        lo = i < lo ? i : lo;
        hi = i > hi ? i : hi;
    }
    size_t wlo = n ? lo / 64 : 0, whi = n ? hi / 64 + 1 : 0;
    if (c->narrowed) { /* a later one keeps what both leave in */
        for (size_t wi = c->narrow_lo; wi < c->narrow_hi; wi++)
            c->narrow[wi] &= set[wi];
        wlo = wlo > c->narrow_lo ? wlo : c->narrow_lo;
        whi = whi < c->narrow_hi ? whi : c->narrow_hi;
        whi = whi > wlo ? whi : wlo;
    }
    /* counted over the words the set spans (no more than the places
     * given, mostly: a purpose's Clusters lie together) */
    size_t count = 0;
    for (size_t wi = wlo; wi < whi; wi++)
        count += (size_t)__builtin_popcountll(c->narrow[wi]);
    c->narrowed = 1;
    c->n_narrow = count;
    c->narrow_lo = wlo;
    c->narrow_hi = whi;
    for (size_t k = 0; k < c->n_narrow_by && k < NARROW_NAMED; k++)
        if (c->narrow_by[k] == by)
            return 0;
    if (c->n_narrow_by < NARROW_NAMED)
        c->narrow_by[c->n_narrow_by] = by;
    c->n_narrow_by++;
    return 0;
}
