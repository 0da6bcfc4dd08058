/*
 * memstore.c - see memstore.h.
 */
#include "config.h"

#include "memstore.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edit.h"
#include "hmap.h"
#include "util.h"

typedef struct entry {
    trellis_object *o; /* one reference */
    store_edit *edits; /* path and value owned */
    size_t n_edits;
    uint64_t read_version; /* the version the queued edits were made against */
    int remove;
    char *fail; /* memstore_fail_next */
} entry;

typedef struct event {
    store_event_type type;
    trellis_object *old_obj, *new_obj; /* one reference each */
} event;

typedef struct memstore {
    store base; /* first */
    pthread_mutex_t mu;
    hmap by_id; /* id (the object's, borrowed) -> entry */
    uint64_t version;
    trellis_object **created;
    size_t n_created, cap_created;
    event *events;
    size_t n_events, cap_events;
    int pipe[2];
    size_t writes;
    strbuf log;   /* memstore_log */
    char **kinds; /* set_kinds */
    size_t n_kinds;
} memstore;

static int ms_list(store *s, manifest_set *out, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&m->by_id, &i))) {
        entry *e = sl->val;
        grow(&out->objects, &out->cap_objects, out->n_objects + 1, sizeof *out->objects);
        out->objects[out->n_objects++] = object_ref(e->o);
    }
    pthread_mutex_unlock(&m->mu);
    return 0;
}

static trellis_object *ms_get(store *s, const char *kind, const char *ns, const char *name)
{
    char *id = xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
    trellis_object *o = memstore_get(s, id);
    free(id);
    return o;
}

static void queue_event(memstore *m, store_event_type type, trellis_object *old_obj,
                        trellis_object *new_obj)
{
    grow(&m->events, &m->cap_events, m->n_events + 1, sizeof *m->events);
    m->events[m->n_events++] = (event){type, old_obj, new_obj};
    char c = 1;
    ssize_t w = write(m->pipe[1], &c, 1);
    (void)w;
}

/* The entry of o for a write made against o as read: NULL with err when
 * it is not here or changed since; the version the first queued write was
 * made against is kept for the flush. */
static entry *as_read(memstore *m, const trellis_object *o, char *err, size_t errlen)
{
    entry *e = hmap_get(&m->by_id, o->id);
    if (!e) {
        errf(err, errlen, "%s %s: not in this store", o->kind, o->key);
        return NULL;
    }
    if (e->o->version != o->version) {
        errf(err, errlen, "%s %s changed since it was read", o->kind, o->key);
        return NULL;
    }
    if (!e->n_edits && !e->remove)
        e->read_version = o->version;
    return e;
}

static int ms_patch(store *s, const trellis_object *o, const char *subresource,
                    const store_edit *edits, size_t n, char *err, size_t errlen)
{
    (void)subresource; /* the status lives in the object here too */
    memstore *m = (memstore *)s;
    for (size_t i = 0; i < n; i++)
        if (edit_check(o, &edits[i], err, errlen) < 0)
            return -1;
    pthread_mutex_lock(&m->mu);
    entry *e = as_read(m, o, err, errlen);
    int rc = e ? 0 : -1;
    for (size_t i = 0; e && i < n; i++) {
        e->edits = xrealloc(e->edits, (e->n_edits + 1) * sizeof *e->edits);
        e->edits[e->n_edits++] = (store_edit){
            xstrdup(edits[i].path), edits[i].value ? xstrdup(edits[i].value) : NULL, edits[i].op};
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static trellis_object *ms_create(store *s, trellis_object *o, char *err, size_t errlen)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    trellis_object *stored = NULL;
    int pending = 0;
    for (size_t i = 0; i < m->n_created; i++)
        pending |= strcmp(m->created[i]->id, o->id) == 0;
    if (hmap_get(&m->by_id, o->id) || pending) {
        errf(err, errlen, "%s %s already exists", o->kind, o->key);
    } else {
        grow(&m->created, &m->cap_created, m->n_created + 1, sizeof *m->created);
        m->created[m->n_created++] = object_ref(o);
        stored = object_ref(o);
    }
    pthread_mutex_unlock(&m->mu);
    return stored;
}

static int ms_remove(store *s, const trellis_object *o, char *err, size_t errlen)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    entry *e = as_read(m, o, err, errlen);
    int rc = e ? 0 : -1;
    if (e)
        e->remove = 1;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static void clear_pending(entry *e)
{
    for (size_t i = 0; i < e->n_edits; i++) {
        free((char *)e->edits[i].path);
        free((char *)e->edits[i].value);
    }
    free(e->edits);
    e->edits = NULL;
    e->n_edits = 0;
    e->remove = 0;
    free(e->fail);
    e->fail = NULL;
}

/* Make e's writes: 0, or -1 with why. */
static int write_entry(memstore *m, entry *e, char *why, size_t whylen)
{
    if (e->fail)
        return errf(why, whylen, "%s", e->fail);
    /* changed by another writer since the writes were made: a set or a
     * removal would undo the change, so it is refused; list edits are
     * resolved against the object as it is now */
    int guarded = e->remove;
    for (size_t i = 0; i < e->n_edits; i++)
        guarded |= e->edits[i].op < STORE_LIST_ADD;
    if (guarded && e->o->version != e->read_version)
        return errf(why, whylen, "%s %s changed since it was read", e->o->kind, e->o->key);
    if (e->remove) {
        hmap_del(&m->by_id, e->o->id);
        queue_event(m, STORE_DELETED, e->o, NULL);
        e->o = NULL;
        return 0;
    }
    trellis_object *o = edit_apply_object(e->o, e->edits, e->n_edits, why, whylen);
    if (!o)
        return -1;
    o->version = ++m->version;
    trellis_object *old = e->o;
    e->o = o;
    hmap_put(&m->by_id, o->id, e);
    queue_event(m, STORE_MODIFIED, old, object_ref(o));
    return 0;
}

static void add_entry(memstore *m, trellis_object *o)
{
    entry *e = xcalloc(1, sizeof *e);
    e->o = o;
    o->version = ++m->version;
    hmap_put(&m->by_id, o->id, e);
}

static int ms_flush(store *s, store_fail_cb failed, void *ud, char *err, size_t errlen)
{
    memstore *m = (memstore *)s;
    char why[512] = "";
    pthread_mutex_lock(&m->mu);
    int fenced =
        !m->base.dry_run && m->base.fence && !m->base.fence(m->base.fence_ud, why, sizeof why);
    strbuf problems;
    sb_init(&problems);
    size_t i = 0;
    hmap_slot *sl;
    entry **gone = NULL;
    size_t n_gone = 0, cap_gone = 0;
    while ((sl = hmap_next(&m->by_id, &i))) {
        entry *e = sl->val;
        if (!e->n_edits && !e->remove)
            continue;
        char w[512];
        const char *id = e->o->id;
        char *idc = xstrdup(id);
        int removal = e->remove;
        if (fenced || (!m->base.dry_run && write_entry(m, e, w, sizeof w) < 0)) {
            if (failed)
                failed(ud, idc, fenced ? why : w);
            sb_printf(&problems, "%s%s: %s", problems.len ? "; " : "", idc, fenced ? why : w);
        } else {
            m->writes++;
            sb_printf(&m->log, "%s %s; ", removal ? "remove" : "patch", idc);
        }
        free(idc);
        clear_pending(e);
        if (!e->o) {
            grow(&gone, &cap_gone, n_gone + 1, sizeof *gone);
            gone[n_gone++] = e;
        }
    }
    for (size_t k = 0; k < n_gone; k++)
        free(gone[k]);
    free(gone);
    for (size_t k = 0; k < m->n_created; k++) {
        trellis_object *o = m->created[k];
        if (fenced) {
            if (failed)
                failed(ud, o->id, why);
            object_unref(o);
        } else if (!m->base.dry_run) {
            add_entry(m, o);
            queue_event(m, STORE_ADDED, NULL, object_ref(o));
            m->writes++;
            sb_printf(&m->log, "create %s; ", o->id);
        } else {
            object_unref(o);
        }
    }
    m->n_created = 0;
    sb_puts(&m->log, "| ");
    pthread_mutex_unlock(&m->mu);
    int rc = problems.len ? errf(err, errlen, "%s", problems.s) : 0;
    sb_free(&problems);
    return rc;
}

static int ms_watch(store *s, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return ((memstore *)s)->pipe[0];
}

static size_t ms_dispatch(store *s, store_watch_cb cb, void *ud)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    event *v = m->events;
    size_t n = m->n_events;
    m->events = NULL;
    m->n_events = m->cap_events = 0;
    char buf[256];
    while (read(m->pipe[0], buf, sizeof buf) > 0)
        ;
    pthread_mutex_unlock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        cb(ud, v[i].type, v[i].old_obj, v[i].new_obj);
        object_unref(v[i].old_obj);
        object_unref(v[i].new_obj);
    }
    free(v);
    return n;
}

static void ms_destroy(store *s)
{
    memstore *m = (memstore *)s;
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&m->by_id, &i))) {
        entry *e = sl->val;
        clear_pending(e);
        object_unref(e->o);
        free(e);
    }
    hmap_free(&m->by_id);
    sb_free(&m->log);
    for (size_t k = 0; k < m->n_created; k++)
        object_unref(m->created[k]);
    free(m->created);
    for (size_t k = 0; k < m->n_events; k++) {
        object_unref(m->events[k].old_obj);
        object_unref(m->events[k].new_obj);
    }
    free(m->events);
    close(m->pipe[0]);
    close(m->pipe[1]);
    pthread_mutex_destroy(&m->mu);
    for (size_t k = 0; k < m->n_kinds; k++)
        free(m->kinds[k]);
    free(m->kinds);
    free(m);
}

static void ms_set_kinds(store *s, const char *const *kinds, size_t n)
{
    memstore *m = (memstore *)s;
    for (size_t i = 0; i < m->n_kinds; i++)
        free(m->kinds[i]);
    free(m->kinds);
    m->kinds = xcalloc(n ? n : 1, sizeof *m->kinds);
    for (size_t i = 0; i < n; i++)
        m->kinds[i] = xstrdup(kinds[i]);
    m->n_kinds = n;
}

const char *memstore_kind(store *s, size_t i)
{
    memstore *m = (memstore *)s;
    return i < m->n_kinds ? m->kinds[i] : NULL;
}

static const store_ops mem_ops = {
    .name = "memory",
    .list = ms_list,
    .get = ms_get,
    .patch = ms_patch,
    .create = ms_create,
    .remove = ms_remove,
    .flush = ms_flush,
    .watch = ms_watch,
    .dispatch = ms_dispatch,
    .destroy = ms_destroy,
    .set_kinds = ms_set_kinds,
};

store *memstore_new(void)
{
    memstore *m = xcalloc(1, sizeof *m);
    m->base.ops = &mem_ops;
    pthread_mutex_init(&m->mu, NULL);
    hmap_init(&m->by_id);
    sb_init(&m->log);
    if (pipe2(m->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
        abort();
    return &m->base;
}

void memstore_put(store *s, trellis_object *o)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    entry *e = hmap_get(&m->by_id, o->id);
    object_ref(o);
    if (!e) {
        add_entry(m, o);
        queue_event(m, STORE_ADDED, NULL, object_ref(o));
    } else {
        trellis_object *old = e->o;
        o->version = ++m->version;
        e->o = o;
        hmap_put(&m->by_id, o->id, e);
        queue_event(m, STORE_MODIFIED, old, object_ref(o));
    }
    pthread_mutex_unlock(&m->mu);
}

void memstore_del(store *s, const char *id)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    entry *e = hmap_del(&m->by_id, id);
    if (e) {
        clear_pending(e);
        queue_event(m, STORE_DELETED, e->o, NULL);
        free(e);
    }
    pthread_mutex_unlock(&m->mu);
}

trellis_object *memstore_get(store *s, const char *id)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    entry *e = hmap_get(&m->by_id, id);
    trellis_object *o = e ? object_ref(e->o) : NULL;
    pthread_mutex_unlock(&m->mu);
    return o;
}

void memstore_fail_next(store *s, const char *id, const char *message)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    entry *e = hmap_get(&m->by_id, id);
    if (e) {
        free(e->fail);
        e->fail = xstrdup(message);
    }
    pthread_mutex_unlock(&m->mu);
}

const char *memstore_log(store *s)
{
    memstore *m = (memstore *)s;
    return m->log.len ? m->log.s : "";
}

size_t memstore_writes(store *s)
{
    memstore *m = (memstore *)s;
    pthread_mutex_lock(&m->mu);
    size_t n = m->writes;
    pthread_mutex_unlock(&m->mu);
    return n;
}
