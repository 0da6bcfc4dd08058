/*
 * intern.c - the string -> id table of intern.h.
 *
 * An array of owned strings indexed by id and an open-addressing hash of
 * ids (FNV-1a over the bytes, linear probing, at most half full). Lookups
 * happen in prepare only, so the table favours simplicity over speed.
 */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

void intern_init(intern *t)
{
    memset(t, 0, sizeof(*t));
}

/* Eight bytes a step (request finalizers run to seventy), mixed at the
 * end: the low bits pick the slot, the high ones are the slot's tag. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ n, w;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 32;
    }
    w = 0;
    if (n > i)
        memcpy(&w, s + i, n - i);
    h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
    return h ^ (h >> 29);
}

/* A slot: the id + 1 in the low half (0: empty), the hash's high half
 * above it, so that a probe compares strings only when both match. */
#define SLOT_ID(v) ((uint32_t)(v))
#define SLOT_OF(h, id) (((h) & ~UINT64_C(0xffffffff)) | (uint64_t)((id) + 1))

/* Whether the stored string equals the n bytes at s. */
static int same(const char *stored, const char *s, size_t n)
{
    return strncmp(stored, s, n) == 0 && stored[n] == '\0';
}

/* The slot holding s, or the empty slot where it would go. nslots > 0. */
static size_t probe(const intern *t, const char *s, size_t n, uint64_t h)
{
    size_t mask = t->nslots - 1, i = (size_t)h & mask;
    uint64_t tag = h & ~UINT64_C(0xffffffff);

    while (t->slots[i] && ((t->slots[i] & ~UINT64_C(0xffffffff)) != tag ||
                           !same(t->strs[SLOT_ID(t->slots[i]) - 1], s, n)))
        i = (i + 1) & mask;
    return i;
}

static int grow_slots(intern *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 16;
    uint64_t *slots = calloc(nslots, sizeof(*slots));
    intern old = *t;

    if (!slots)
        return -1;
    t->slots = slots;
    t->nslots = nslots;
    for (uint32_t id = 0; id < t->n; id++) {
        const char *s = t->strs[id];
        size_t n = strlen(s);
        uint64_t h = hash_bytes(s, n);

        t->slots[probe(t, s, n, h)] = SLOT_OF(h, id);
    }
    free(old.slots);
    return 0;
}

int32_t intern_id_n(intern *t, const char *s, size_t n)
{
    uint64_t h = hash_bytes(s, n);
    size_t i;
    char *copy;

    if (t->nslots) {
        i = probe(t, s, n, h);
        if (t->slots[i])
            return (int32_t)(SLOT_ID(t->slots[i]) - 1);
    }
    if (t->n >= INT32_MAX - 1)
        return -1;
    if ((t->n + 1) * 2 > t->nslots) {
        if (grow_slots(t) < 0)
            return -1;
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        char **strs = realloc(t->strs, cap * sizeof(*strs));

        if (!strs)
            return -1;
        t->strs = strs;
        t->cap = cap;
    }
    copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    t->strs[t->n] = copy;
    t->slots[probe(t, s, n, h)] = SLOT_OF(h, t->n);
    return (int32_t)t->n++;
}

int32_t intern_id(intern *t, const char *s)
{
    return intern_id_n(t, s, strlen(s));
}

int32_t intern_find(const intern *t, const char *s)
{
    size_t n = strlen(s), i;

    if (!t->nslots)
        return -1;
    i = probe(t, s, n, hash_bytes(s, n));
    return t->slots[i] ? (int32_t)(SLOT_ID(t->slots[i]) - 1) : -1;
}

const char *intern_str(const intern *t, int32_t id)
{
    return id >= 0 && (uint32_t)id < t->n ? t->strs[id] : NULL;
}

uint32_t intern_count(const intern *t)
{
    return t->n;
}

void intern_free(intern *t)
{
    for (uint32_t id = 0; id < t->n; id++)
        free(t->strs[id]);
    free(t->strs);
    free(t->slots);
    intern_init(t);
}
