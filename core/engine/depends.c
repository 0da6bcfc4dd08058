/*
 * depends.c - see depends.h.
 *
 * One table from what was read to who read it. Keys: "=Kind/ns/name" for
 * a read by name, "*Kind/ns" for a walk of a namespace, "*Kind" for a walk
 * of every namespace; each maps to the set of ids of the objects whose
 * prepare made that read (a hundred thousand Shoots read one CloudProfile:
 * sets, not lists). An object prepared again reads again; a stale entry
 * (an object that no longer reads it) costs one needless prepare, never a
 * missed one. A read builds its key on the stack: nothing is allocated
 * unless the read is new.
 */
#include "config.h"

#include "depends.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "util.h"

struct depends {
    hmap by_read;                    /* key (owned) -> hmap of ids (owned keys) */
    const trellis_object *preparing; /* borrowed for its prepare, or NULL */
    pthread_t preparer;              /* the thread running that prepare */
};

depends *depends_new(void)
{
    depends *d = xcalloc(1, sizeof *d);
    hmap_init(&d->by_read);
    return d;
}

static void free_ids(hmap *ids)
{
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(ids, &i)))
        free((char *)sl->key);
    hmap_free(ids);
    free(ids);
}

void depends_free(depends *d)
{
    if (!d)
        return;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&d->by_read, &i))) {
        free_ids(sl->val);
        free((char *)sl->key);
    }
    hmap_free(&d->by_read);
    free(d);
}

void depends_preparing(depends *d, const trellis_object *o)
{
    d->preparer = pthread_self();
    d->preparing = o;
}

/* The key of a read into buf (len bytes); NULL when it does not fit. */
static const char *read_key(char *buf, size_t len, const char *kind, const char *ns,
                            const char *name)
{
    int n = name ? snprintf(buf, len, "=%s/%s/%s", kind, ns ? ns : "", name)
            : ns ? snprintf(buf, len, "*%s/%s", kind, ns)
                 : snprintf(buf, len, "*%s", kind);
    return n >= 0 && (size_t)n < len ? buf : NULL;
}

void depends_read(depends *d, const char *kind, const char *ns, const char *name)
{
    /* a plugin's own thread reading meanwhile is not the prepare */
    if (!d->preparing || !kind || !pthread_equal(pthread_self(), d->preparer))
        return;
    char buf[512];
    char *big = NULL;
    const char *key = read_key(buf, sizeof buf, kind, ns, name);
    if (!key)
        key = big = name ? xasprintf("=%s/%s/%s", kind, ns ? ns : "", name)
                    : ns ? xasprintf("*%s/%s", kind, ns)
                         : xasprintf("*%s", kind);
    const char *id = d->preparing->id;
    if (key[0] != '=' || strcmp(key + 1, id) != 0) { /* reading itself is no dependency */
        hmap *ids = hmap_get(&d->by_read, key);
        if (!ids) {
            ids = xcalloc(1, sizeof *ids);
            hmap_init(ids);
            hmap_put(&d->by_read, big ? big : xstrdup(key), ids);
            big = NULL;
        }
        if (!hmap_get(ids, id)) {
            char *c = xstrdup(id);
            hmap_put(ids, c, c);
        }
    }
    free(big);
}

size_t depends_on(const depends *d, const trellis_object *o, char ***out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    hmap seen;
    hmap_init(&seen);
    char *keys[3] = {xasprintf("=%s", o->id), xasprintf("*%s/%s", o->kind, o->namespace_),
                     xasprintf("*%s", o->kind)};
    for (int k = 0; k < 3; k++) {
        const hmap *ids = hmap_get(&d->by_read, keys[k]);
        size_t i = 0;
        hmap_slot *sl;
        while (ids && (sl = hmap_next(ids, &i))) {
            if (strcmp(sl->key, o->id) == 0 || hmap_get(&seen, sl->key))
                continue;
            grow(out, &cap, n + 1, sizeof **out);
            (*out)[n] = xstrdup(sl->key);
            hmap_put(&seen, (*out)[n], (*out)[n]);
            n++;
        }
        free(keys[k]);
    }
    hmap_free(&seen);
    return n;
}
