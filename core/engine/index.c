/*
 * index.c - see index.h.
 */
#include "config.h"

#include "index.h"

#include <stdlib.h>
#include <string.h>

#include "depends.h"
#include "hmap.h"
#include "profile_impl.h"
#include "runtime.h"
#include "util.h"

struct obj_index {
    const registry *reg;
    profile *profiles;
    size_t n_profiles;
    trellis_object **objects; /* every object read, in store order */
    size_t n_objects, cap_objects;
    hmap by_id;                /* "Kind/namespace/name" -> idx_entry */
    hmap by_kind;              /* kind -> kind_list: foreach visits one kind */
    trellis_object **prepared; /* every object the plugins prepared */
    size_t n_prepared, cap_prepared;
    size_t n_replaced; /* objects dropped since the last sweep */
    depends *deps;     /* what each prepare read */
};

/* by_id entry: the object's place in objects and in its kind's list;
 * the key is that object's id */
typedef struct idx_entry {
    const char *key;
    size_t pos, kpos;
} idx_entry;

/* The objects of one kind, in store order (borrowed from objects). */
typedef struct kind_list {
    char *kind; /* the map's key */
    trellis_object **v;
    size_t n, cap;
} kind_list;

static kind_list *kind_of(obj_index *ix, const char *kind)
{
    kind_list *k = hmap_get(&ix->by_kind, kind);
    if (!k) {
        k = xcalloc(1, sizeof *k);
        k->kind = xstrdup(kind);
        hmap_put(&ix->by_kind, k->kind, k);
    }
    return k;
}

obj_index *index_new(const registry *reg, profile *profiles, size_t n_profiles)
{
    obj_index *ix = xcalloc(1, sizeof *ix);
    ix->reg = reg;
    ix->profiles = profiles;
    ix->n_profiles = n_profiles;
    hmap_init(&ix->by_id);
    hmap_init(&ix->by_kind);
    ix->deps = depends_new();
    return ix;
}

/* Give o's prepared data back to the plugins and drop the reference the
 * prepared set held. */
static void unprepare(obj_index *ix, trellis_object *o)
{
    for (size_t j = 0; j < ix->reg->n_inst && o->aux; j++)
        run_release(ix->reg->inst[j], o);
    object_unref(o);
}

void index_free(obj_index *ix)
{
    if (!ix)
        return;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&ix->by_id, &i)))
        free(sl->val);
    hmap_free(&ix->by_id);
    i = 0;
    while ((sl = hmap_next(&ix->by_kind, &i))) {
        kind_list *k = sl->val;
        free(k->v);
        free(k->kind);
        free(k);
    }
    hmap_free(&ix->by_kind);
    for (size_t k = 0; k < ix->n_objects; k++)
        object_unref(ix->objects[k]);
    free(ix->objects);
    /* prepared data goes back to the plugins that made it, before fini */
    for (size_t k = 0; k < ix->n_prepared; k++)
        unprepare(ix, ix->prepared[k]);
    free(ix->prepared);
    depends_free(ix->deps);
    free(ix);
}

void index_set(obj_index *ix, trellis_object *o)
{
    idx_entry *e = hmap_get_h(&ix->by_id, o->id, o->id_hash);
    if (e) {
        trellis_object *old = ix->objects[e->pos];
        ix->objects[e->pos] = object_ref(o);
        kind_of(ix, o->kind)->v[e->kpos] = o;
        e->key = o->id;
        hmap_put_h(&ix->by_id, e->key, o->id_hash, e);
        object_unref(old);
        ix->n_replaced++;
        return;
    }
    e = xcalloc(1, sizeof *e);
    e->key = o->id;
    e->pos = ix->n_objects;
    kind_list *k = kind_of(ix, o->kind);
    e->kpos = k->n;
    grow(&k->v, &k->cap, k->n + 1, sizeof *k->v);
    k->v[k->n++] = o;
    hmap_put_h(&ix->by_id, e->key, o->id_hash, e);
    grow(&ix->objects, &ix->cap_objects, ix->n_objects + 1, sizeof *ix->objects);
    ix->objects[ix->n_objects++] = object_ref(o);
}

void index_del(obj_index *ix, const trellis_object *o)
{
    idx_entry *e = hmap_del_h(&ix->by_id, o->id, o->id_hash);
    if (!e)
        return;
    kind_list *k = kind_of(ix, o->kind);
    memmove(k->v + e->kpos, k->v + e->kpos + 1, (k->n - e->kpos - 1) * sizeof *k->v);
    k->n--;
    for (size_t i = e->kpos; i < k->n; i++) {
        idx_entry *me = hmap_get_h(&ix->by_id, k->v[i]->id, k->v[i]->id_hash);
        if (me)
            me->kpos = i;
    }
    object_unref(ix->objects[e->pos]);
    ix->n_replaced++;
    memmove(ix->objects + e->pos, ix->objects + e->pos + 1,
            (ix->n_objects - e->pos - 1) * sizeof *ix->objects);
    ix->n_objects--;
    for (size_t i = e->pos; i < ix->n_objects; i++) {
        idx_entry *me = hmap_get_h(&ix->by_id, ix->objects[i]->id, ix->objects[i]->id_hash);
        if (me)
            me->pos = i;
    }
    free(e);
}

const trellis_object *index_lookup(const obj_index *ix, const char *kind, const char *ns,
                                   const char *name)
{
    depends_read(ix->deps, kind, ns, name);
    char *k = xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
    const trellis_object *o = index_lookup_id(ix, k);
    free(k);
    return o;
}

const trellis_object *index_lookup_id(const obj_index *ix, const char *id)
{
    const idx_entry *e = hmap_get(&ix->by_id, id);
    return e ? ix->objects[e->pos] : NULL;
}

size_t index_dependents(const obj_index *ix, const trellis_object *o, char ***ids)
{
    return depends_on(ix->deps, o, ids);
}

int index_foreach(const obj_index *ix, const char *kind, const char *ns,
                  int (*cb)(const trellis_object *o, void *ud), void *ud)
{
    depends_read(ix->deps, kind, ns, NULL);
    const kind_list *k = hmap_get(&ix->by_kind, kind);
    for (size_t i = 0; k && i < k->n; i++) {
        const trellis_object *o = k->v[i];
        if (ns && strcmp(o->namespace_, ns) != 0)
            continue;
        int rc = cb(o, ud);
        if (rc)
            return rc;
    }
    return 0;
}

size_t index_count(const obj_index *ix)
{
    return ix->n_objects;
}

trellis_object *index_at(const obj_index *ix, size_t i)
{
    return i < ix->n_objects ? ix->objects[i] : NULL;
}

/* o's aux slots, counters (a workload's share the slots' allocation:
 * object_unref knows) and target values, as the registry sizes them. */
static void allocate(const registry *reg, trellis_object *o, int as_workload)
{
    size_t nc = as_workload && !o->counters ? (size_t)reg->n_counters : 0;
    if (!o->aux && reg->n_slots) {
        size_t ns = (size_t)reg->n_slots;
        o->aux = xcalloc(1, ns * sizeof *o->aux + nc * sizeof *o->counters);
        o->naux = ns;
        if (nc) {
            o->counters = (int64_t *)(void *)(o->aux + ns);
            nc = 0;
        }
    }
    if (nc)
        o->counters = xcalloc(nc, sizeof *o->counters);
    if (!as_workload && !o->tvalues && reg->n_tvalues)
        o->tvalues = xcalloc((size_t)reg->n_tvalues, sizeof *o->tvalues);
}

void index_prepare(obj_index *ix, trellis_object *o, int as_workload)
{
    allocate(ix->reg, o, as_workload);
    for (size_t i = 0; i < ix->n_profiles; i++) {
        profile *p = &ix->profiles[i];
        if (as_workload ? profile_is_workload_kind(p, o) : profile_is_target_kind(p, o)) {
            depends_preparing(ix->deps, o);
            run_prepare(p, o, as_workload);
            depends_preparing(ix->deps, NULL);
        }
    }
    grow(&ix->prepared, &ix->cap_prepared, ix->n_prepared + 1, sizeof *ix->prepared);
    ix->prepared[ix->n_prepared++] = object_ref(o);
}

void index_sweep(obj_index *ix, int force)
{
    if (!force &&
        !(ix->n_replaced && (ix->n_replaced >= 1024 || ix->n_replaced * 4 >= ix->n_prepared)))
        return;
    size_t k = 0;
    for (size_t i = 0; i < ix->n_prepared; i++) {
        trellis_object *o = ix->prepared[i];
        if (atomic_load(&o->refs) == 1)
            unprepare(ix, o);
        else
            ix->prepared[k++] = o;
    }
    ix->n_prepared = k;
    ix->n_replaced = 0;
}
