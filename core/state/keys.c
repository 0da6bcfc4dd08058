/*
 * keys.c - see keys.h.
 */
#include "config.h"

#include "keys.h"

#include <pthread.h>
#include <stdint.h>

#include "hmap.h"
#include "util.h"

/* Map keys are interned for the process: a few hundred distinct keys
 * (apiVersion, metadata, labels, label keys...) make up most of the bytes
 * of small manifests. A key is a 32-bit id; its text lives in chunks that
 * never move, so readers need no lock: an id reaches another thread only
 * with an object, after the entry was written. Keys are never freed. */
#define KCHUNK_BITS 12
#define KCHUNK ((uint32_t)1 << KCHUNK_BITS)
#define KCHUNKS 4096

static const char **kchunks[KCHUNKS];
static uint32_t kcount;
static hmap kmap; /* text -> id + 1 */
static pthread_mutex_t kmu = PTHREAD_MUTEX_INITIALIZER;

const char *object_key_text(uint32_t id)
{
    return kchunks[id >> KCHUNK_BITS][id & (KCHUNK - 1)];
}

/* The id of key (NUL-terminated), added when new; UINT32_MAX when the
 * table is full. */
uint32_t object_key_id(const char *key)
{
    pthread_mutex_lock(&kmu);
    uintptr_t v = (uintptr_t)hmap_get(&kmap, key);
    uint32_t id;
    if (v) {
        id = (uint32_t)(v - 1);
    } else if (kcount >= KCHUNK * KCHUNKS) {
        id = UINT32_MAX;
    } else {
        id = kcount;
        if (!kchunks[id >> KCHUNK_BITS])
            kchunks[id >> KCHUNK_BITS] = xcalloc(KCHUNK, sizeof **kchunks);
        char *text = xstrdup(key);
        kchunks[id >> KCHUNK_BITS][id & (KCHUNK - 1)] = text;
        hmap_put(&kmap, text, (void *)(uintptr_t)(id + 1));
        kcount++;
    }
    pthread_mutex_unlock(&kmu);
    return id;
}
