/*
 * depends.c - see depends.h.
 *
 * One table from what was read to who read it. Keys: "=Kind/ns/name" for
 * a read by name, "*Kind/ns" for a walk of a namespace, "*Kind" for a walk
 * of every namespace. An object prepared again reads again: its id is
 * added once per key, and a stale entry (an object that no longer reads
 * it) costs one needless prepare, never a missed one.
 */
#include "config.h"

#include "depends.h"

#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "util.h"

typedef struct readers {
    char **ids;
    size_t n, cap;
} readers;

struct depends {
    hmap by_read;                    /* key -> readers */
    const trellis_object *preparing; /* borrowed for its prepare, or NULL */
};

depends *depends_new(void)
{
    depends *d = xcalloc(1, sizeof *d);
    hmap_init(&d->by_read);
    return d;
}

void depends_free(depends *d)
{
    if (!d)
        return;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&d->by_read, &i))) {
        readers *r = sl->val;
        for (size_t k = 0; k < r->n; k++)
            free(r->ids[k]);
        free(r->ids);
        free(r);
        free((char *)sl->key);
    }
    hmap_free(&d->by_read);
    free(d);
}

void depends_preparing(depends *d, const trellis_object *o)
{
    d->preparing = o;
}

void depends_read(depends *d, const char *kind, const char *ns, const char *name)
{
    if (!d->preparing || !kind)
        return;
    char *key = name ? xasprintf("=%s/%s/%s", kind, ns ? ns : "", name)
                : ns ? xasprintf("*%s/%s", kind, ns)
                     : xasprintf("*%s", kind);
    const char *id = d->preparing->id;
    if (key[0] == '=' && strcmp(key + 1, id) == 0) {
        free(key); /* an object reading itself depends on nothing new */
        return;
    }
    readers *r = hmap_get(&d->by_read, key);
    if (!r) {
        r = xcalloc(1, sizeof *r);
        hmap_put(&d->by_read, key, r);
    } else {
        free(key);
    }
    for (size_t k = 0; k < r->n; k++)
        if (strcmp(r->ids[k], id) == 0)
            return;
    grow(&r->ids, &r->cap, r->n + 1, sizeof *r->ids);
    r->ids[r->n++] = xstrdup(id);
}

static void collect(const depends *d, const char *key, const trellis_object *o, char ***out,
                    size_t *n, size_t *cap)
{
    const readers *r = hmap_get(&d->by_read, key);
    for (size_t k = 0; r && k < r->n; k++) {
        int seen = strcmp(r->ids[k], o->id) == 0;
        for (size_t j = 0; j < *n && !seen; j++)
            seen = strcmp((*out)[j], r->ids[k]) == 0;
        if (seen)
            continue;
        grow(out, cap, *n + 1, sizeof **out);
        (*out)[(*n)++] = xstrdup(r->ids[k]);
    }
}

size_t depends_on(const depends *d, const trellis_object *o, char ***out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    char *keys[3] = {xasprintf("=%s", o->id), xasprintf("*%s/%s", o->kind, o->namespace_),
                     xasprintf("*%s", o->kind)};
    for (int i = 0; i < 3; i++) {
        collect(d, keys[i], o, out, &n, &cap);
        free(keys[i]);
    }
    return n;
}
