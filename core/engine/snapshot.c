/*
 * snapshot.c - see snapshot.h.
 */
#include "config.h"

#include "snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void snapshot_init(snapshot *s, const char *kind, int n_counters, int n_slots, int n_tvalues)
{
    memset(s, 0, sizeof *s);
    s->kind = xstrdup(kind);
    s->n_counters = n_counters;
    s->n_slots = n_slots;
    s->n_tvalues = n_tvalues;
    hmap_init(&s->by_name);
}

static void clear_copy(struct trellis_target *t)
{
    for (size_t i = 0; i < t->n_wl; i++)
        object_unref(t->wl[i]);
    t->n_wl = 0;
    if (t->obj)
        object_unref(t->obj);
    t->obj = NULL;
}

static void free_copy(struct trellis_target *t)
{
    clear_copy(t);
    free(t->wl);
    free(t->sums);
    free(t);
}

void snapshot_free(snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        free_copy(s->targets[i]);
    if (s->tgen) { /* the blocks start off elements before the columns */
        free(s->targets - s->off);
        free(s->counters - s->off);
        free(s->tvalues - s->off);
        free(s->data - s->off);
        free(s->tgen - s->off);
        free(s->id_at - s->off);
    }
    free(s->invalid);
    free(s->pos);
    hmap_free(&s->by_name);
    free(s->kind);
    memset(s, 0, sizeof *s);
}

/* Copy src's object and workloads into dst; references are taken before
 * the old ones are dropped so that by_name, keyed by the name inside the
 * object, never points at a released object. */
static void copy_into(snapshot *s, struct trellis_target *dst, const struct trellis_target *src)
{
    trellis_object *old_obj = dst->obj;
    size_t old_n = dst->n_wl;
    dst->obj = object_ref(src->obj);
    dst->name = src->obj->key;
    /* A target changes mostly by a workload added at the end of its list:
     * the references of the part both lists share stay as they are
     * (touching each workload's count is a cache miss per workload, and
     * a target holds thousands), the rest are taken, then the old ones
     * dropped. With no workload gone since the last copy (the same cut),
     * the old list is the new one's start, unread. */
    size_t same = 0;
    if (dst->wl_cut == src->wl_cut && old_n <= src->n_wl)
        same = old_n;
    while (same < old_n && same < src->n_wl && dst->wl[same] == src->wl[same])
        same++;
    dst->wl_cut = src->wl_cut;
    for (size_t i = same; i < src->n_wl; i++)
        object_ref(src->wl[i]);
    for (size_t i = same; i < old_n; i++)
        object_unref(dst->wl[i]);
    grow(&dst->wl, &dst->cap_wl, src->n_wl ? src->n_wl : 1, sizeof *dst->wl);
    if (src->n_wl > same)
        memcpy(dst->wl + same, src->wl + same, (src->n_wl - same) * sizeof *dst->wl);
    dst->n_wl = src->n_wl;
    if (!dst->sums)
        dst->sums = xcalloc((size_t)(s->n_counters ? s->n_counters : 1), sizeof(int64_t));
    if (s->n_counters)
        memcpy(dst->sums, src->sums, (size_t)s->n_counters * sizeof(int64_t));
    dst->gen = src->gen;
    if (old_obj && old_obj != dst->obj)
        hmap_put(&s->by_name, dst->name, dst);
    if (old_obj)
        object_unref(old_obj);
}

/* Bring target i's column entries up to date from its copy. */
static void fill_columns(snapshot *s, size_t i)
{
    struct trellis_target *t = s->targets[i];
    const trellis_object *o = t->obj;
    size_t cap = s->cap_cols;
    s->id_at[i] = t->snap_id;
    s->pos[t->snap_id] = (uint32_t)(i + s->off);
    for (int k = 0; k < s->n_counters; k++)
        s->counters[(size_t)k * cap + i] = t->sums[k];
    for (int k = 0; k < s->n_tvalues; k++)
        s->tvalues[(size_t)k * cap + i] = o->tvalues ? o->tvalues[k] : 0;
    for (int k = 0; k < s->n_slots; k++)
        s->data[(size_t)k * cap + i] = (size_t)k < o->naux ? o->aux[k] : NULL;
    s->tgen[i] = t->gen;
    if (o->prepare_failed_slot >= 0)
        s->invalid[i / 64] |= 1ull << (i % 64);
    else
        s->invalid[i / 64] &= ~(1ull << (i % 64));
}

/* Snapshot order: by namespace, then name (cluster-scoped targets have
 * namespace ""), so that "a/x" comes before "a-b/x" as namespaces sort. */
static int by_name(const void *a, const void *b)
{
    const struct trellis_target *x = *(struct trellis_target *const *)a;
    const struct trellis_target *y = *(struct trellis_target *const *)b;
    int r = strcmp(x->obj->namespace_, y->obj->namespace_);
    return r ? r : strcmp(x->obj->name, y->obj->name);
}

struct trellis_target *snapshot_find(const snapshot *s, const char *name)
{
    return hmap_get(&s->by_name, name);
}

/* The snapshot's copy of cached target ct, or NULL. */
static struct trellis_target *copy_of(const snapshot *s, const cache_target *ct)
{
    return hmap_get_h(&s->by_name, ct->name, ct->name_hash);
}

/* Whether ct is a target of s's kind that s has no copy of. */
static int is_new(const snapshot *s, const cache_target *ct)
{
    return ct->t.obj && strcmp(ct->kind, s->kind) == 0 && !copy_of(s, ct);
}

/* The k columns (one when k is 0) of elements of size sz at stride cap in
 * old (its block starting off elements before it; NULL: none yet), moved
 * to stride ncap in a block with noff free elements before them, the first
 * `keep` elements of each kept. Returns where the new columns start. */
static void *regrid(void *old, size_t off, int k, size_t cap, size_t ncap, size_t noff, size_t keep,
                    size_t sz)
{
    size_t rows = (size_t)(k ? k : 1);
    char *nw = (char *)xcalloc(noff + rows * ncap, sz) + noff * sz;
    for (size_t r = 0; old && r < rows && keep; r++)
        memcpy(nw + r * ncap * sz, (char *)old + r * cap * sz, keep * sz);
    if (old)
        free((char *)old - off * sz);
    return nw;
}

/* Room in every column for at least n targets, the first `keep` entries
 * of each kept (columns only grow), and a quarter of that free before the
 * columns for additions in the first half of the order. */
static void grow_columns(snapshot *s, size_t n, size_t keep)
{
    size_t cap = s->cap_cols, ncap = n + n / 4 + 64, off = s->off, noff = ncap / 4;
    s->targets = regrid(s->targets, off, 1, cap, ncap, noff, keep, sizeof *s->targets);
    s->counters = regrid(s->counters, off, s->n_counters, cap, ncap, noff, keep, sizeof(int64_t));
    s->tvalues = regrid(s->tvalues, off, s->n_tvalues, cap, ncap, noff, keep, sizeof(int64_t));
    s->data = regrid(s->data, off, s->n_slots, cap, ncap, noff, keep, sizeof *s->data);
    s->tgen = regrid(s->tgen, off, 1, cap, ncap, noff, keep, sizeof *s->tgen);
    s->id_at = regrid(s->id_at, off, 1, cap, ncap, noff, keep, sizeof *s->id_at);
    s->pos = regrid(s->pos, 0, 1, cap, ncap, 0, keep, sizeof *s->pos);
    s->invalid = regrid(s->invalid, 0, 1, (cap + 63) / 64, (ncap + 63) / 64, 0, (keep + 63) / 64,
                        sizeof *s->invalid);
    s->cap_cols = ncap;
    s->off = noff;
    for (size_t i = 0; i < keep; i++) /* the kept targets' places in the new blocks */
        s->pos[s->id_at[i]] = (uint32_t)(i + noff);
}

static void rebuild(snapshot *s, const cache *c)
{
    for (size_t i = 0; i < s->n; i++)
        free_copy(s->targets[i]);
    s->n = 0;
    hmap_free(&s->by_name);
    hmap_init(&s->by_name);
    size_t i = 0, n = 0, cap = 0;
    struct trellis_target **v = NULL;
    hmap_slot *sl;
    while ((sl = hmap_next(&c->targets, &i))) {
        const cache_target *ct = sl->val;
        if (!ct->t.obj || strcmp(ct->kind, s->kind) != 0)
            continue;
        struct trellis_target *t = xcalloc(1, sizeof *t);
        copy_into(s, t, &ct->t);
        grow(&v, &cap, n + 1, sizeof *v);
        v[n++] = t;
    }
    if (n)
        qsort(v, n, sizeof *v, by_name);
    if (n > s->cap_cols || !s->invalid)
        grow_columns(s, n, 0); /* positions follow the new order */
    if (n)
        memcpy(s->targets, v, n * sizeof *v);
    free(v);
    s->n = n;
    for (size_t k = 0; k < s->n; k++) {
        s->targets[k]->snap_id = (uint32_t)k;
        fill_columns(s, k);
        hmap_put(&s->by_name, s->targets[k]->name, s->targets[k]);
    }
    s->set_gen = c->set_gen;
    s->removals = c->removals;
}

/* Where a target named like t goes in the sorted array. */
static size_t sorted_position(const snapshot *s, const struct trellis_target *t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_name(&s->targets[mid], &t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Open a gap at position at of every column by moving the entries before
 * it down one place, into the room before the columns (one place less of
 * it). */
static void open_gap_below(snapshot *s, size_t at)
{
    size_t cap = s->cap_cols;
    s->off--;
    s->targets--;
    s->counters--;
    s->tvalues--;
    s->data--;
    s->tgen--;
    s->id_at--;
    /* column k's window now starts one place lower, where column k - 1's
     * last (unused: n < cap) place was, or the room before column 0 */
    memmove(&s->targets[0], &s->targets[1], at * sizeof *s->targets);
    for (int k = 0; k < s->n_counters; k++)
        memmove(&s->counters[(size_t)k * cap], &s->counters[(size_t)k * cap + 1],
                at * sizeof *s->counters);
    for (int k = 0; k < s->n_tvalues; k++)
        memmove(&s->tvalues[(size_t)k * cap], &s->tvalues[(size_t)k * cap + 1],
                at * sizeof *s->tvalues);
    for (int k = 0; k < s->n_slots; k++)
        memmove(&s->data[(size_t)k * cap], &s->data[(size_t)k * cap + 1], at * sizeof *s->data);
    memmove(&s->tgen[0], &s->tgen[1], at * sizeof *s->tgen);
    memmove(&s->id_at[0], &s->id_at[1], at * sizeof *s->id_at);
    for (size_t i = 0; i < at; i++) /* their places in the block moved */
        s->pos[s->id_at[i]] = (uint32_t)(i + s->off);
}

/* Open a gap at position at of every column (the entries from at on
 * move one place up, or those before it down when they are fewer and
 * there is room) and of the target array. */
static void open_gap(snapshot *s, size_t at)
{
    size_t cap = s->cap_cols, tail = s->n - at;
    if (at < tail && s->off > 0) {
        open_gap_below(s, at);
    } else {
        memmove(&s->targets[at + 1], &s->targets[at], tail * sizeof *s->targets);
        for (int k = 0; k < s->n_counters; k++)
            memmove(&s->counters[(size_t)k * cap + at + 1], &s->counters[(size_t)k * cap + at],
                    tail * sizeof *s->counters);
        for (int k = 0; k < s->n_tvalues; k++)
            memmove(&s->tvalues[(size_t)k * cap + at + 1], &s->tvalues[(size_t)k * cap + at],
                    tail * sizeof *s->tvalues);
        for (int k = 0; k < s->n_slots; k++)
            memmove(&s->data[(size_t)k * cap + at + 1], &s->data[(size_t)k * cap + at],
                    tail * sizeof *s->data);
        memmove(&s->tgen[at + 1], &s->tgen[at], tail * sizeof *s->tgen);
        memmove(&s->id_at[at + 1], &s->id_at[at], tail * sizeof *s->id_at);
        for (size_t i = at + 1; i <= s->n; i++)
            s->pos[s->id_at[i]] = (uint32_t)(i + s->off);
    }
    /* the invalid bits from at on, one place up, a word at a time (bit
     * at itself is set by fill_columns; the top word's bits past n are
     * never read): a bitmap is not worth its own room below */
    uint64_t *inv = s->invalid;
    size_t lo = at / 64;
    for (size_t w = s->n / 64; w > lo; w--)
        inv[w] = (inv[w] << 1) | (inv[w - 1] >> 63);
    uint64_t keep = (1ull << (at % 64)) - 1;
    inv[lo] = (inv[lo] & keep) | ((inv[lo] << 1) & ~keep);
}

/* Targets were only added since the last update (a post-filter created
 * one): each goes into its place, the columns before or after it move by
 * one, and nothing is copied or sorted again. */
static void add_new(snapshot *s, const cache *c)
{
    size_t n_new = 0;
    for (const cache_target *ct = c->mru; ct && ct->t.gen > s->gen; ct = ct->next)
        n_new += (size_t)is_new(s, ct);
    if (s->n + n_new > s->cap_cols)
        grow_columns(s, s->n + n_new, s->n);
    for (const cache_target *ct = c->mru; ct && ct->t.gen > s->gen; ct = ct->next) {
        if (!is_new(s, ct))
            continue;
        struct trellis_target *t = xcalloc(1, sizeof *t);
        copy_into(s, t, &ct->t);
        size_t at = sorted_position(s, t);
        open_gap(s, at);
        t->snap_id = (uint32_t)s->n; /* ids stay 0..n-1: only additions */
        s->targets[at] = t;
        s->n++;
        fill_columns(s, at);
        hmap_put(&s->by_name, t->name, t);
    }
    s->set_gen = c->set_gen;
}

void snapshot_update(snapshot *s, const cache *c)
{
    if (s->set_gen != c->set_gen && s->removals == c->removals && s->gen != 0)
        add_new(s, c); /* only additions: placed; the loop below updates what changed */
    if (s->set_gen != c->set_gen || (s->gen == 0 && c->gen != 0)) {
        rebuild(s, c);
    } else {
        for (const cache_target *ct = c->mru; ct && ct->t.gen > s->gen; ct = ct->next) {
            if (!ct->t.obj || strcmp(ct->kind, s->kind) != 0)
                continue;
            struct trellis_target *t = copy_of(s, ct);
            if (t) {
                copy_into(s, t, &ct->t);
                fill_columns(s, snapshot_pos(s, t));
            }
        }
    }
    s->gen = c->gen;
}
