/*
 * hmap.h - a string-keyed hash map (open addressing, linear probing).
 *
 * The cache and the file store index objects by key with it. Keys are
 * borrowed: the caller keeps them alive while they are in the map (they
 * usually point into the object they index).
 */
#ifndef TRELLIS_HMAP_H
#define TRELLIS_HMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hmap_slot {
    const char *key; /* NULL = empty; HMAP_TOMB = deleted */
    void *val;
} hmap_slot;

/* Slots are 16 bytes; the low 32 bits of each key's hash sit apart, so
 * that a probe compares keys only when they match and growing never hashes
 * a key again (the stores index tens of thousands of objects in several of
 * these). */
typedef struct hmap {
    hmap_slot *slots;
    uint32_t *hashes;
    size_t cap, len, used; /* used counts tombstones too */
} hmap;

void hmap_init(hmap *m);
void hmap_free(hmap *m);
uint64_t hmap_hash(const char *s);
/* A hash of the n bytes at s (s may be NULL when n is 0), eight bytes a
 * step and mixed at the end so that its low bits depend on every byte:
 * for tables that live in one process (never stored, never compared
 * across builds). */
uint64_t hash_mem(const void *s, size_t n);
void *hmap_get(const hmap *m, const char *key);
/* Insert or replace; returns the previous value or NULL. */
void *hmap_put(hmap *m, const char *key, void *val);
/* The key pointer stored for key (to free an owned key), or NULL. */
const char *hmap_key(const hmap *m, const char *key);
/* Remove; returns the removed value or NULL. */
void *hmap_del(hmap *m, const char *key);
/* The same with the key's hash given (h = hmap_hash(key), computed once
 * where a key is looked up in several maps: an object's id). */
void *hmap_get_h(const hmap *m, const char *key, uint64_t h);
void *hmap_put_h(hmap *m, const char *key, uint64_t h, void *val);
void *hmap_del_h(hmap *m, const char *key, uint64_t h);
/* The slot of key, found (*found = 1) or made for it in the same probe
 * (*found = 0: its value NULL, key stored; the caller sets the value, and
 * may set the key to another pointer to the same text): a lookup and an
 * insert for the price of one. */
hmap_slot *hmap_slot_h(hmap *m, const char *key, uint64_t h, int *found);
/* Iterate: i starts at 0; returns the next occupied slot or NULL. */
hmap_slot *hmap_next(const hmap *m, size_t *i);

#endif
