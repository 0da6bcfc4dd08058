/*
 * intern.h - small integer ids for strings, so hot loops compare integers.
 *
 * A plugin that compares the same few strings for every (workload, target)
 * pair (provider types, regions, label keys and values, DNS domains) gives
 * each distinct string an id once, in prepare_workload / prepare_target,
 * and keeps the ids in its prepared data; filter and score then compare
 * integers. Equal strings get equal ids and different strings different
 * ones for the life of the table, so an id prepared for a workload stays
 * comparable with one prepared for a target much later. Each plugin
 * instance owns its table (in its private data). The table is written only
 * in prepare hooks, which the host runs on the main thread and never while
 * a cycle's filter or score hooks run; those hooks read ids, never the
 * table. Ids are never reused: the table grows with the distinct strings it
 * has seen, which for the fields above is a small, slowly changing set.
 */
#ifndef TRELLIS_PLUGINS_INTERN_H
#define TRELLIS_PLUGINS_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct intern {
    char **strs;     /* id -> owned copy of the string */
    uint32_t n, cap; /* ids in use, capacity of strs */
    uint64_t *slots; /* open addressing: id + 1 and a hash tag (intern.c), 0 when empty */
    size_t nslots;   /* a power of two, or 0 */
} intern;

/* An empty table (a zeroed struct is one too). */
void intern_init(intern *t);

/* The id of s (0, 1, 2, ... in order of first appearance), adding a copy
 * of s when it is new. -1 when out of memory. Ownership of s is retained by
 * the caller. */
int32_t intern_id(intern *t, const char *s);

/* intern_id of the n bytes at s (no terminator needed). */
int32_t intern_id_n(intern *t, const char *s, size_t n);

/* The id of s, or -1 when the table has never seen it. Does not allocate. */
int32_t intern_find(const intern *t, const char *s);

/* The string of an id (owned by the table, valid until intern_free), or
 * NULL when id is not in use. */
const char *intern_str(const intern *t, int32_t id);

/* Number of ids in use. */
uint32_t intern_count(const intern *t);

/* Free everything; t is empty afterwards. */
void intern_free(intern *t);

/* Whether ids[0..n) holds id: the membership test of prepared id lists
 * (a seed's zones, its access restrictions), for the hot loop. */
static inline int intern_ids_has(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

#endif
