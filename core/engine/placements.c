/*
 * placements.c - see placements.h.
 */
#include "config.h"

#include "placements.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "fmt.h"
#include "hmap.h"
#include "log.h"
#include "util.h"

typedef struct entry {
    trellis_object *b;  /* the binding object, one reference */
    const char *target; /* borrowed from b */
    int placed;         /* 1: its state places the workload; 0: released; -1:
                           being deleted (neither places nor is placed again) */
    int again;          /* placed, but an earlier entry places on the same target:
                           two bindings of one target are one placement */
} entry;

/* The binding objects naming one workload. */
typedef struct wl_entries {
    char *id; /* the workload's id, the map's key */
    entry *v;
    size_t n, cap;
} wl_entries;

/* The scheduling thread changes and reads the index; a binder on the
 * binding thread looks up a released binding to place again
 * (placements_binding_ref): mu guards the map. */
struct placements {
    const cfg_profile *pc;
    pthread_mutex_t mu;
    hmap by_workload; /* workload id -> wl_entries */
};

placements *placements_new(const cfg_profile *pc)
{
    placements *pl = xcalloc(1, sizeof *pl);
    pl->pc = pc;
    pthread_mutex_init(&pl->mu, NULL);
    hmap_init(&pl->by_workload);
    return pl;
}

void placements_free(placements *pl)
{
    if (!pl)
        return;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&pl->by_workload, &i))) {
        wl_entries *we = sl->val;
        for (size_t k = 0; k < we->n; k++)
            object_unref(we->v[k].b);
        free(we->v);
        free(we->id);
        free(we);
    }
    hmap_free(&pl->by_workload);
    pthread_mutex_destroy(&pl->mu);
    free(pl);
}

int placements_claims(const placements *pl, const trellis_object *o)
{
    const cfg_profile *pc = pl->pc;
    return strcmp(o->kind, pc->bobj_kind) == 0 &&
           (!pc->bobj_api_version || strcmp(o->api_version, pc->bobj_api_version) == 0);
}

/* Whether b, which names a target, places its workload: its state is a
 * placed one (or no state is configured): 1; 0 when released; -1 when it
 * is being deleted. */
static int places(const cfg_profile *pc, const trellis_object *b)
{
    if (object_being_deleted(b))
        return -1;
    if (!pc->bobj_state_field || !pc->n_bobj_placed_states)
        return 1;
    const char *st = value_string(object_get(b, pc->bobj_state_field));
    for (size_t i = 0; st && i < pc->n_bobj_placed_states; i++)
        if (strcmp(st, pc->bobj_placed_states[i]) == 0)
            return 1;
    return 0;
}

/* The id of the workload b names into id; 0, or -1 when it names none. */
/* The id of the workload binding object b names into id: 0; -1 when it
 * names none; -2 when that id is too long for the index (said once per
 * object, naming it: a long id is refused, never cut). */
static int workload_id(const cfg_profile *pc, const trellis_object *b, char *id, size_t len)
{
    const char *w = value_string(object_get(b, pc->bobj_workload_field));
    if (!w || !*w)
        return -1;
    int n = fmt_s(id, len, "%s/%s/%s", pc->workload_kind, b->namespace_, w);
    if (n > 0 && (size_t)n < len)
        return 0;
    id[0] = '\0';
    return -2;
}

/* A binding object whose workload's id does not fit: it places nothing. */
static void warn_too_long(const cfg_profile *pc, const trellis_object *b)
{
    const char *w = value_string(object_get(b, pc->bobj_workload_field));
    log_warn("%s:%d: %s %s names workload %s/%s/%.40s... whose id (kind/namespace/name) is %zu "
             "bytes; binding model \"object\" supports at most %d: it places nothing (shorten "
             "the workload's name)",
             b->file ? b->file : "(created)", b->line, b->kind, b->key, pc->workload_kind,
             b->namespace_, w ? w : "",
             strlen(pc->workload_kind) + strlen(b->namespace_) + (w ? strlen(w) : 0) + 2,
             PLACEMENTS_ID_MAX - 1);
}

/* The first entry of we from k on that places on target, or we->n. */
static size_t placing_from(const wl_entries *we, size_t k, const char *target)
{
    for (; k < we->n; k++)
        if (we->v[k].placed == 1 && strcmp(we->v[k].target, target) == 0)
            return k;
    return we->n;
}

static void drop(placements *pl, const trellis_object *b, const char *id)
{
    wl_entries *we = hmap_get(&pl->by_workload, id);
    for (size_t k = 0; we && k < we->n; k++) {
        if (strcmp(we->v[k].b->id, b->id) != 0)
            continue;
        if (we->v[k].placed == 1 && !we->v[k].again) {
            /* the next binding of the same target is the placement now */
            size_t j = placing_from(we, k + 1, we->v[k].target);
            if (j < we->n)
                we->v[j].again = 0;
        }
        object_unref(we->v[k].b);
        memmove(&we->v[k], &we->v[k + 1], (we->n - k - 1) * sizeof *we->v);
        if (--we->n == 0) {
            hmap_del(&pl->by_workload, we->id);
            free(we->v);
            free(we->id);
            free(we);
        }
        return;
    }
}

static void add(placements *pl, trellis_object *b, const char *id)
{
    const char *t = value_string(object_get(b, pl->pc->bobj_target_field));
    if (!t || !*t)
        return;
    wl_entries *we = hmap_get(&pl->by_workload, id);
    if (!we) {
        we = xcalloc(1, sizeof *we);
        we->id = xstrdup(id);
        hmap_put(&pl->by_workload, we->id, we);
    }
    grow(&we->v, &we->cap, we->n + 1, sizeof *we->v);
    int placed = places(pl->pc, b);
    int again = placed == 1 && placing_from(we, 0, t) < we->n;
    we->v[we->n++] = (entry){object_ref(b), t, placed, again};
}

/* A binding object that names no workload or no target places nothing:
 * say so, where it is, once per change of it. */
static void warn_unusable(const cfg_profile *pc, const trellis_object *b, int has_workload)
{
    const char *t = value_string(object_get(b, pc->bobj_target_field));
    if (has_workload && t && *t)
        return;
    log_warn("%s:%d: %s %s names no %s (%s: expected a string): it places nothing",
             b->file ? b->file : "(created)", b->line, b->kind, b->key,
             has_workload ? "target" : "workload",
             has_workload ? pc->bobj_target_field : pc->bobj_workload_field);
}

size_t placements_update(placements *pl, const trellis_object *old_obj, trellis_object *new_obj,
                         char ids[2][PLACEMENTS_ID_MAX])
{
    size_t n = 0;
    pthread_mutex_lock(&pl->mu);
    if (old_obj && workload_id(pl->pc, old_obj, ids[n], PLACEMENTS_ID_MAX) == 0)
        drop(pl, old_obj, ids[n++]);
    int rc = new_obj ? workload_id(pl->pc, new_obj, ids[n], PLACEMENTS_ID_MAX) : -1;
    if (rc == 0) {
        /* a binding object read twice (a store that reports its own
         * creation) is one placement */
        drop(pl, new_obj, ids[n]);
        add(pl, new_obj, ids[n]);
        if (!(n == 1 && strcmp(ids[0], ids[1]) == 0))
            n++;
        warn_unusable(pl->pc, new_obj, 1);
    } else if (rc == -2) {
        warn_too_long(pl->pc, new_obj);
    } else if (new_obj) {
        warn_unusable(pl->pc, new_obj, 0);
    }
    pthread_mutex_unlock(&pl->mu);
    return n;
}

size_t placements_of(const placements *pl, const trellis_object *w, const char **out, size_t max)
{
    const wl_entries *we = hmap_get(&pl->by_workload, w->id);
    size_t n = 0;
    for (size_t k = 0; we && k < we->n; k++)
        if (we->v[k].placed == 1 && !we->v[k].again && n++ < max)
            out[n - 1] = we->v[k].target;
    return n;
}

const trellis_object *placements_binding(const placements *pl, const trellis_object *w,
                                         const char *target, int placed)
{
    const wl_entries *we = hmap_get(&pl->by_workload, w->id);
    for (size_t k = 0; we && k < we->n; k++)
        if (we->v[k].placed == placed && strcmp(we->v[k].target, target) == 0)
            return we->v[k].b;
    return NULL;
}

trellis_object *placements_binding_ref(placements *pl, const trellis_object *w, const char *target,
                                       int placed)
{
    pthread_mutex_lock(&pl->mu);
    trellis_object *b = (trellis_object *)placements_binding(pl, w, target, placed);
    if (b)
        object_ref(b);
    pthread_mutex_unlock(&pl->mu);
    return b;
}

const char *placements_object_name(const trellis_object *w, const char *target, char *buf,
                                   size_t len)
{
    char full[1024];
    int n = fmt_s(full, sizeof full, "%s-%s", w->name, target);
    for (char *q = full; *q; q++)
        if (*q == '/')
            *q = '-';
    if (n >= 0 && (size_t)n <= 200) {
        fmt_s(buf, len, "%s", full);
        return buf;
    }
    uint32_t h = 2166136261u; /* FNV-1a over the id and the key */
    for (const char *q = w->id; *q; q++)
        h = (h ^ (unsigned char)*q) * 16777619u;
    for (const char *q = target; *q; q++)
        h = (h ^ (unsigned char)*q) * 16777619u;
    snprintf(buf, len, "%.190s-%08x", full, h);
    return buf;
}

trellis_object *placements_manifest(const placements *pl, const trellis_object *w,
                                    const trellis_object *t, const store_edit *extra,
                                    size_t n_extra, char *err, size_t errlen)
{
    const cfg_profile *pc = pl->pc;
    char name[256];
    placements_object_name(w, t->key, name, sizeof name);
    /* the object's own fields, then what the binder adds (Fleet's
     * snapshot name and decision) */
    store_edit stack[16], *e = stack;
    size_t need = 8 + n_extra, ne = 0;
    if (need > sizeof stack / sizeof *stack)
        e = xmalloc(need * sizeof *e);
    e[ne++] =
        (store_edit){"apiVersion", pc->bobj_api_version ? pc->bobj_api_version : "v1", STORE_SET};
    e[ne++] = (store_edit){"kind", pc->bobj_kind, STORE_SET};
    e[ne++] = (store_edit){"metadata.name", name, STORE_SET};
    if (*w->namespace_)
        e[ne++] = (store_edit){"metadata.namespace", w->namespace_, STORE_SET};
    e[ne++] = (store_edit){pc->bobj_workload_field, w->name, STORE_SET};
    e[ne++] = (store_edit){pc->bobj_target_field, t->key, STORE_SET};
    if (pc->bobj_state_field && pc->bobj_initial_state)
        e[ne++] = (store_edit){pc->bobj_state_field, pc->bobj_initial_state, STORE_SET};
    if (pc->bobj_finalizer)
        e[ne++] = (store_edit){"metadata.finalizers", pc->bobj_finalizer, STORE_LIST_ADD};
    for (size_t i = 0; i < n_extra; i++)
        e[ne++] = extra[i];
    trellis_object *o = edit_build_object(e, ne, err, errlen);
    if (e != stack)
        free(e);
    return o;
}
