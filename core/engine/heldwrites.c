/*
 * heldwrites.c - see heldwrites.h.
 */
#include "config.h"

#include "heldwrites.h"

#include <stdlib.h>

#include "edit.h"
#include "log.h"
#include "util.h"

typedef struct held_patch {
    char *plugin; /* its name (a copy: the instance may be reloaded before) */
    trellis_object *o;
    char *sub;
    store_edit *edits;
    size_t n;
} held_patch;

struct held_writes {
    held_patch *v;
    size_t n, cap;
};

void held_writes_add(held_writes **hp, const char *plugin, const trellis_object *o, const char *sub,
                     const store_edit *edits, size_t n)
{
    if (!*hp)
        *hp = xcalloc(1, sizeof **hp);
    held_writes *h = *hp;
    grow(&h->v, &h->cap, h->n + 1, sizeof *h->v);
    held_patch *p = &h->v[h->n++];
    p->plugin = xstrdup(plugin);
    p->o = object_ref((trellis_object *)o);
    p->sub = sub ? xstrdup(sub) : NULL;
    p->edits = xcalloc(n ? n : 1, sizeof *p->edits);
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->edits[i] = store_edit_copy(&edits[i]);
}

void held_writes_finish(held_writes *h, held_write_fn write, void *ud, const char *why_not)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        held_patch *p = &h->v[i];
        char err[1024];
        if (why_not)
            log_warn("plugin %s: %s %s: not written: %s", p->plugin, p->o->kind, p->o->key,
                     why_not);
        else if (write(ud, p->o, p->sub, p->edits, p->n, err, sizeof err) < 0)
            log_warn("plugin %s: %s %s: not written: %s", p->plugin, p->o->kind, p->o->key, err);
        free(p->plugin);
        object_unref(p->o);
        free(p->sub);
        for (size_t k = 0; k < p->n; k++)
            store_edit_free(&p->edits[k]);
        free(p->edits);
    }
    free(h->v);
    free(h);
}
