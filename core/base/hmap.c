/*
 * hmap.c - see hmap.h.
 */
#include "config.h"

#include "hmap.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char tomb_marker[] = "";
#define HMAP_TOMB tomb_marker

void hmap_init(hmap *m)
{
    memset(m, 0, sizeof *m);
}

void hmap_free(hmap *m)
{
    free(m->slots);
    free(m->hashes);
    hmap_init(m);
}

uint64_t hmap_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h | 1;
}

uint64_t hash_mem(const void *s, size_t n)
{
    const unsigned char *p = s;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    if (n > i)
        memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static hmap_slot *find(const hmap *m, const char *key, uint64_t h)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        hmap_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key == key ||
            (s->key != HMAP_TOMB && m->hashes[i] == (uint32_t)h && strcmp(s->key, key) == 0))
            return s;
    }
}

void *hmap_get(const hmap *m, const char *key)
{
    return hmap_get_h(m, key, hmap_hash(key));
}

void *hmap_get_h(const hmap *m, const char *key, uint64_t h)
{
    hmap_slot *s = find(m, key, h);
    return s ? s->val : NULL;
}

/* Move every entry to a table of cap slots (at most 2^32: the low bits of
 * the hash place an entry); keys are unique, so each goes to the first free
 * slot of its probe, the slot hmap_put would choose, so iteration order
 * does not depend on how the table grew. */
static void rehash(hmap *m, size_t cap)
{
    hmap_slot *old = m->slots;
    uint32_t *oldh = m->hashes;
    size_t oldcap = m->cap;
    m->slots = xcalloc(cap, sizeof *m->slots);
    m->hashes = xcalloc(cap, sizeof *m->hashes);
    m->cap = cap;
    m->used = m->len;
    size_t mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i].key || old[i].key == HMAP_TOMB)
            continue;
        size_t j = oldh[i] & mask;
        while (m->slots[j].key)
            j = (j + 1) & mask;
        m->slots[j] = old[i];
        m->hashes[j] = oldh[i];
    }
    free(old);
    free(oldh);
}

void *hmap_put(hmap *m, const char *key, void *val)
{
    return hmap_put_h(m, key, hmap_hash(key), val);
}

void *hmap_put_h(hmap *m, const char *key, uint64_t h, void *val)
{
    int found;
    hmap_slot *s = hmap_slot_h(m, key, h, &found);
    void *prev = found ? s->val : NULL;
    s->key = key;
    s->val = val;
    return prev;
}

hmap_slot *hmap_slot_h(hmap *m, const char *key, uint64_t h, int *found)
{
    /* one probe: the key's slot, else the first free one on the way (a
     * tombstone first), hmap_put's choice */
    size_t mask = m->cap - 1, i = h & mask;
    hmap_slot *free_slot = NULL;
    for (; m->cap; i = (i + 1) & mask) {
        hmap_slot *s = &m->slots[i];
        if (!s->key)
            break;
        if (s->key == HMAP_TOMB) {
            if (!free_slot)
                free_slot = s;
        } else if (s->key == key || (m->hashes[i] == (uint32_t)h && strcmp(s->key, key) == 0)) {
            *found = 1;
            return s;
        }
    }
    *found = 0;
    if ((m->used + 1) * 4 >= m->cap * 3) {
        rehash(m, m->cap ? (m->len * 2 >= m->cap ? m->cap * 2 : m->cap) : 16);
        mask = m->cap - 1;
        free_slot = NULL;
        for (i = h & mask; m->slots[i].key; i = (i + 1) & mask)
            ; /* no tombstone after a rehash */
    }
    if (!free_slot) {
        free_slot = &m->slots[i];
        m->used++;
    }
    free_slot->key = key;
    free_slot->val = NULL;
    m->hashes[free_slot - m->slots] = (uint32_t)h;
    m->len++;
    return free_slot;
}

const char *hmap_key(const hmap *m, const char *key)
{
    hmap_slot *s = find(m, key, hmap_hash(key));
    return s ? s->key : NULL;
}

void *hmap_del(hmap *m, const char *key)
{
    return hmap_del_h(m, key, hmap_hash(key));
}

void *hmap_del_h(hmap *m, const char *key, uint64_t h)
{
    hmap_slot *s = find(m, key, h);
    if (!s)
        return NULL;
    void *v = s->val;
    s->key = HMAP_TOMB;
    s->val = NULL;
    m->len--;
    return v;
}

hmap_slot *hmap_next(const hmap *m, size_t *i)
{
    for (; *i < m->cap; (*i)++) {
        hmap_slot *s = &m->slots[*i];
        if (s->key && s->key != HMAP_TOMB) {
            (*i)++;
            return s;
        }
    }
    return NULL;
}
