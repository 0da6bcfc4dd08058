/*
 * store_file.c - see store_file.h.
 *
 * Each file read is an fs_file with the hash of its content and the
 * objects it holds; every object is indexed by "Kind/namespace/name". One
 * routine (load_text) turns a file's text into objects for the first read,
 * for a change seen by inotify and for the store's own writes: objects
 * whose content is unchanged are kept (only their version and position
 * move), changed ones become new objects, and the differences are queued as
 * events for dispatch. A mutex guards everything, since the binding thread
 * patches and flushes while the main thread dispatches.
 */
#include "config.h"

#include "store_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hmap.h"
#include "log.h"
#include "util.h"
#include "atomicfile.h"
#include "edit.h"
#include "treewalk.h"
#include "writeback.h"

/* A pending field edit. The path is a pooled string (see pool_get): fifty
 * thousand bindings name a few paths. A value is copied to the end of its
 * file's value text (fs_file.vals, cleared with the edits): looking it up
 * in a pool cost a miss or two for each of thousands of target names,
 * copying it costs its bytes. A list edit's whole list is owned, with what
 * edits it in place (a hundred thousand edits of a run are not lists). */
typedef struct fs_edit {
    int doc, item;
    const char *path;
    size_t value;    /* offset in the file's vals; NO_VALUE: remove */
    int raw;         /* the value is JSON text */
    uint32_t prev;   /* the object's edit before this one: index + 1, 0 = none */
    edit_text *list; /* a list edit's result (owned: the value), or NULL */
} fs_edit;

#define NO_VALUE SIZE_MAX

static void list_free(edit_text *t)
{
    if (t)
        edit_text_free(t);
    free(t);
}

/* A pending removal of the document (item -1) or List item. */
typedef struct fs_del {
    int doc, item;
} fs_del;

typedef struct fs_file {
    char *path;
    uint64_t hash; /* of the content as last read or written */
    fs_edit *edits;
    size_t n_edits, cap_edits;
    fs_del *dels; /* removals, made after the edits */
    size_t n_dels, cap_dels;
    /* each edited object's last edit by (doc, item): index + 1, 0 = empty;
     * its earlier ones follow prev (a patch of several fields finds its
     * object once) */
    uint32_t *eslots;
    size_t cap_eslots, n_eobjs;
    trellis_object **objs; /* in file order; the index holds the references */
    size_t n_objs, cap_objs;
    /* this store's last write of the file, when it kept the objects as
     * read (no watch, no removal): the version before it, and the
     * places of the objects it edited; every other object is still as
     * read at prev_hash (current()) */
    uint64_t prev_hash;
    fs_del *touched;
    size_t n_touched, cap_touched;
    char *vals; /* the edits' values, each with its NUL */
    size_t n_vals, cap_vals;
} fs_file;

/* Edit e's value: NULL (remove), its list's text, or its copy in vals. */
static const char *edit_value(const fs_file *f, const fs_edit *e)
{
    return e->list ? e->list->s : e->value == NO_VALUE ? NULL : f->vals + e->value;
}

/* A copy of s at the end of f's values: its offset, NO_VALUE for NULL. */
static size_t keep_value(fs_file *f, const char *s)
{
    if (!s)
        return NO_VALUE;
    size_t len = strlen(s) + 1, at = f->n_vals;
    grow(&f->vals, &f->cap_vals, at + len, 1);
    memcpy(f->vals + at, s, len);
    f->n_vals += len;
    return at;
}

/* an indexed object, keyed by its id; the entry holds one reference */
typedef struct fs_entry {
    trellis_object *o;
    fs_file *f;       /* NULL for a created object not written yet */
    uint32_t claim;   /* the load_parsed call that last found it in its file */
    uint32_t created; /* its place in the store's created + 1 until written, else 0 */
} fs_entry;

/* An object created in this run and not written yet. The list edits made
 * of it while no watch reads the store wait in `lists` and are made all at
 * once when it is read or written: a Cluster created in a run that then
 * takes a thousand requests is copied once, not once a request. */
typedef struct fs_created {
    trellis_object *o; /* one reference (the entry's object); NULL once removed */
    fs_entry *en;
    store_edit *lists; /* copies (store_edit_copy), in the order made */
    size_t n_lists, cap_lists;
    const char **paths; /* the distinct paths of lists (pointers into them) */
    size_t n_paths, cap_paths;
} fs_created;

typedef struct fs_event {
    store_event_type type;
    trellis_object *old_obj, *new_obj; /* one reference each, or NULL */
} fs_event;

typedef struct fs_watch {
    int wd;
    char *dir;
    dev_t dev; /* of the directory, so a link to it is not walked again */
    ino_t ino;
} fs_wd;

typedef struct file_store {
    store base;
    pthread_mutex_t mu;
    char *dir;
    char *root; /* dir's real path: nothing outside it is read or written */
    fs_file **files;
    size_t n_files, cap_files;
    hmap by_path;   /* path -> fs_file */
    hmap objects;   /* "Kind/ns/name" -> fs_entry */
    uint32_t epoch; /* load_parsed calls so far */
    fs_created *created;
    size_t n_created, cap_created;
    fs_event *events; /* waiting for dispatch */
    size_t n_events, cap_events;
    manifest_set errors; /* malformed documents seen since the last dispatch */
    int ino;             /* inotify descriptor, -1 when not watching */
    fs_wd *watches;
    size_t n_watches, cap_watches;
    hmap pool; /* text -> pstr, the paths pending edits share */
    /* files with a definition ignored as defined before elsewhere: read
     * again when an object goes (theirs may be the one left); `dropped`:
     * an object went since they were last read again */
    char **shadowed;
    size_t n_shadowed, cap_shadowed;
    int dropped;
} file_store;

/* A pooled string, counted by the edits that hold it; h: its hash_mem
 * (the pool lives in this process only). */
typedef struct pstr {
    uint64_t h;
    size_t refs;
    char s[];
} pstr;

static const char *pool_get(file_store *fs, const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s);
    uint64_t h = hash_mem(s, len);
    int found;
    hmap_slot *sl = hmap_slot_h(&fs->pool, s, h, &found);
    pstr *p = sl->val;
    if (!found) {
        p = xmalloc(sizeof *p + len + 1);
        p->h = h;
        p->refs = 0;
        memcpy(p->s, s, len + 1);
        sl->key = p->s;
        sl->val = p;
    }
    p->refs++;
    return p->s;
}

static void pool_put(file_store *fs, const char *s)
{
    if (!s)
        return;
    pstr *p = (pstr *)(void *)(s - offsetof(pstr, s));
    if (--p->refs == 0) {
        hmap_del_h(&fs->pool, p->s, p->h);
        free(p);
    }
}

/* The slot of the object (doc, item) in f's edit index: where its last
 * edit is, or the empty slot it would take. */
static size_t edit_slot(const fs_file *f, int doc, int item)
{
    uint64_t h = ((uint64_t)(uint32_t)doc * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)(uint32_t)item * 0xbf58476d1ce4e5b9ull);
    h ^= h >> 29;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    size_t mask = f->cap_eslots - 1;
    size_t i = h & mask;
    for (; f->eslots[i]; i = (i + 1) & mask) {
        const fs_edit *e = &f->edits[f->eslots[i] - 1];
        if (e->doc == doc && e->item == item)
            break;
    }
    return i;
}

/* The pending edit of path (pooled) of the object at slot, or NULL. */
static fs_edit *edit_of(const fs_file *f, size_t slot, const char *path)
{
    for (uint32_t k = f->eslots[slot]; k; k = f->edits[k - 1].prev)
        if (f->edits[k - 1].path == path)
            return &f->edits[k - 1];
    return NULL;
}

/* Room in f's edit index for one more object: the index, rebuilt from the
 * edits in order when it grows, holds each object's last edit. */
static void edit_room(fs_file *f)
{
    if ((f->n_eobjs + 1) * 2 <= f->cap_eslots)
        return;
    free(f->eslots);
    f->cap_eslots = f->cap_eslots ? f->cap_eslots * 2 : 16;
    f->eslots = xcalloc(f->cap_eslots, sizeof *f->eslots);
    for (size_t j = 0; j < f->n_edits; j++) {
        const fs_edit *x = &f->edits[j];
        f->eslots[edit_slot(f, x->doc, x->item)] = (uint32_t)(j + 1);
    }
}

/* Drop a file's pending edits and their index. */
static void clear_edits(file_store *fs, fs_file *f)
{
    for (size_t j = 0; j < f->n_edits; j++) {
        pool_put(fs, f->edits[j].path);
        list_free(f->edits[j].list);
    }
    f->n_edits = 0;
    f->n_vals = 0;
    f->n_dels = 0;
    free(f->eslots);
    f->eslots = NULL;
    f->cap_eslots = 0;
    f->n_eobjs = 0;
}

/* The content hash of a file (its version): eight bytes a step, four
 * independent lanes, so that hashing a file costs little next to parsing
 * it. Only ever compared with itself. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h[4] = {n, m, ~(uint64_t)n, m ^ 0xbf58476d1ce4e5b9ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, s + i + 8 * k, 8);
            h[k] = (h[k] ^ w) * m;
            h[k] ^= h[k] >> 29;
        }
    }
    uint64_t t = 0;
    for (; i < n; i++)
        t = (t ^ (unsigned char)s[i]) * 1099511628211ull;
    uint64_t r = t;
    for (int k = 0; k < 4; k++) {
        r = (r ^ h[k]) * 0x94d049bb133111ebull;
        r ^= r >> 31;
    }
    return r;
}

static char *obj_key(const char *kind, const char *ns, const char *name)
{
    return xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
}

static void push_event(file_store *fs, store_event_type type, trellis_object *old_obj,
                       trellis_object *new_obj)
{
    grow(&fs->events, &fs->cap_events, fs->n_events + 1, sizeof *fs->events);
    fs_event *ev = &fs->events[fs->n_events++];
    ev->type = type;
    ev->old_obj = old_obj;
    ev->new_obj = new_obj;
}

static fs_file *file_get(file_store *fs, const char *path)
{
    fs_file *f = hmap_get(&fs->by_path, path);
    if (f)
        return f;
    f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    grow(&fs->files, &fs->cap_files, fs->n_files + 1, sizeof *fs->files);
    fs->files[fs->n_files++] = f;
    hmap_put(&fs->by_path, f->path, f);
    return f;
}

static void file_free(file_store *fs, fs_file *f)
{
    clear_edits(fs, f);
    free(f->edits);
    free(f->dels);
    free(f->touched);
    free(f->vals);
    free(f->objs);
    free(f->path);
    free(f);
}

static void entry_drop(file_store *fs, fs_entry *e)
{
    hmap_del_h(&fs->objects, e->o->id, e->o->id_hash);
    free(e);
}

/*
 * Make f hold what text says (text NULL: the file is gone). Unchanged
 * objects are kept with their new version and position; the differences
 * are queued as events. When the text has malformed documents, objects no
 * longer found are kept rather than deleted: the malformed document may be
 * one of them. Errors go to errs.
 */
static void load_parsed(file_store *fs, fs_file *f, manifest_set ms, uint64_t hash, int present,
                        manifest_set *errs);

static void load_text(file_store *fs, fs_file *f, const char *text, size_t len, manifest_set *errs)
{
    manifest_set ms;
    manifest_set_init(&ms);
    uint64_t hash = 0;
    if (text) {
        hash = hash_bytes(text, len);
        manifest_parse(f->path, text, len, &ms);
    }
    load_parsed(fs, f, ms, hash, text != NULL, errs);
}

/* load_text with the text parsed already (into ms, which this consumes). */
static void load_parsed(file_store *fs, fs_file *f, manifest_set ms, uint64_t hash, int present,
                        manifest_set *errs)
{
    for (size_t i = 0; i < ms.n_errors; i++) {
        grow(&errs->errors, &errs->cap_errors, errs->n_errors + 1, sizeof *errs->errors);
        errs->errors[errs->n_errors++] = ms.errors[i];
    }
    int malformed = ms.n_errors > 0;
    ms.n_errors = 0;
    /* entries found in the new text are claimed by this call */
    uint32_t epoch = ++fs->epoch;
    trellis_object **objs = NULL, **replaced = NULL;
    size_t n = 0, cap = 0, n_replaced = 0, cap_replaced = 0;
    for (size_t i = 0; i < ms.n_objects; i++) {
        trellis_object *o = ms.objects[i];
        const char *k = o->id;
        fs_entry *e = hmap_get_h(&fs->objects, k, o->id_hash);
        fs_entry *first = e && (e->f != f || e->claim == epoch) ? e : NULL;
        if (first) {
            const trellis_object *prev = first->o;
            manifest_add_error(
                errs, f->path, o->line, o->doc,
                xasprintf("document %d: %s %s%s%s is defined twice (first at %s:%d); "
                          "this one is ignored",
                          o->doc, o->kind, o->namespace_, *o->namespace_ ? "/" : "", o->name,
                          prev->file ? prev->file : "(created)", prev->line));
            object_unref(o);
            size_t at = 0;
            while (at < fs->n_shadowed && strcmp(fs->shadowed[at], f->path) != 0)
                at++;
            if (at == fs->n_shadowed) {
                grow(&fs->shadowed, &fs->cap_shadowed, fs->n_shadowed + 1, sizeof *fs->shadowed);
                fs->shadowed[fs->n_shadowed++] = xstrdup(f->path);
            }
            continue;
        }
        o->version = hash;
        if (!e) {
            e = xcalloc(1, sizeof *e);
            e->o = object_ref(o);
            e->f = f;
            hmap_put_h(&fs->objects, k, o->id_hash, e);
            push_event(fs, STORE_ADDED, NULL, o);
        } else if (object_same_content(e->o, o)) {
            /* the same object: only where it is and its version moved.
             * The new reading takes the entry's place, without an event:
             * the one the host holds is never changed in place (another
             * thread may be reading it), and a write made against it
             * finds this one (current()) */
            grow(&replaced, &cap_replaced, n_replaced + 1, sizeof *replaced);
            replaced[n_replaced++] = e->o; /* f->objs still names it below */
            e->o = o;
            hmap_put_h(&fs->objects, o->id, o->id_hash, e);
        } else {
            push_event(fs, STORE_MODIFIED, e->o, o);
            e->o = object_ref(o);
            hmap_put_h(&fs->objects, o->id, o->id_hash, e); /* the old object goes with the event */
        }
        e->claim = epoch;
        grow(&objs, &cap, n + 1, sizeof *objs);
        objs[n++] = e->o;
    }
    for (size_t i = 0; i < f->n_objs; i++) {
        trellis_object *old = f->objs[i];
        fs_entry *e = hmap_get_h(&fs->objects, old->id, old->id_hash);
        if (!e || e->claim == epoch)
            continue;
        if (malformed && present) {
            grow(&objs, &cap, n + 1, sizeof *objs);
            objs[n++] = old;
            continue;
        }
        push_event(fs, STORE_DELETED, e->o, NULL);
        entry_drop(fs, e);
        fs->dropped = 1;
    }
    free(f->objs);
    f->objs = objs;
    f->n_objs = n;
    f->cap_objs = cap;
    f->hash = hash;
    f->prev_hash = 0;
    f->n_touched = 0;
    for (size_t i = 0; i < n_replaced; i++)
        object_unref(replaced[i]);
    free(replaced);
    ms.n_objects = 0; /* each reference went to an event, an entry or was dropped */
    manifest_set_free(&ms);
}

static void drop_events(file_store *fs)
{
    for (size_t i = 0; i < fs->n_events; i++) {
        if (fs->events[i].old_obj)
            object_unref(fs->events[i].old_obj);
        if (fs->events[i].new_obj)
            object_unref(fs->events[i].new_obj);
    }
    fs->n_events = 0;
}

/* One file of the first read, read and parsed by a worker. */
typedef struct parse_job {
    const char *path;
    manifest_set ms;
    uint64_t hash;
    char *read_error; /* NULL when it was read */
} parse_job;

typedef struct parse_pool {
    parse_job *jobs;
    size_t n;
    atomic_size_t next;
} parse_pool;

static void parse_one(parse_job *j)
{
    size_t len;
    char rerr[512];
    char *text = read_file(j->path, &len, rerr, sizeof rerr);
    manifest_set_init(&j->ms);
    if (!text) {
        j->read_error = xstrdup(rerr);
        return;
    }
    j->hash = hash_bytes(text, len);
    manifest_parse(j->path, text, len, &j->ms);
    free(text);
}

static void *parse_worker(void *arg)
{
    parse_pool *pp = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&pp->next, 1);
        if (i >= pp->n)
            return NULL;
        parse_one(&pp->jobs[i]);
    }
}

/* Files are independent until their objects are indexed: read and parse
 * them on one thread per processor (parsing is most of the first read),
 * then take the results in path order, so the outcome is the same as
 * reading them one by one. */
static void parse_all(char **paths, size_t n, parse_job *jobs)
{
    parse_pool pp = {jobs, n, 0};
    for (size_t i = 0; i < n; i++)
        jobs[i].path = paths[i];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cpus > 1 ? (size_t)cpus : 1;
    if (nt > 8)
        nt = 8;
    if (nt > n)
        nt = n;
    pthread_t th[8];
    size_t started = 0;
    for (size_t i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, parse_worker, &pp) == 0)
            started++;
    parse_worker(&pp);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

static int fs_list(store *s, manifest_set *out, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    char **paths = NULL;
    size_t n = 0, cap = 0;
    walker wk;
    treewalk_init(&wk, fs->root, out);
    wk.want_dirs = !fs->base.dry_run;
    int rc = treewalk_state(&wk, fs->dir, &paths, &n, &cap, err, errlen);
    /* a host killed while writing leaves its temporary file behind */
    size_t stale = 0;
    for (size_t i = 0; i < wk.n_dirs; i++)
        stale += atomicfile_clean_temps(wk.dirs[i]);
    if (stale)
        log_info("%s: removed %zu stale temporary file(s) of an interrupted write", fs->dir, stale);
    treewalk_free(&wk);
    parse_job *jobs = xcalloc(n ? n : 1, sizeof *jobs);
    if (rc == 0)
        parse_all(paths, n, jobs);
    pthread_mutex_lock(&fs->mu);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (jobs[i].read_error) {
            manifest_add_error(out, paths[i], 0, 0, jobs[i].read_error);
            continue;
        }
        load_parsed(fs, file_get(fs, paths[i]), jobs[i].ms, jobs[i].hash, 1, out);
    }
    free(jobs);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    /* the first read: everything is an addition, in store order */
    for (size_t i = 0; i < fs->n_events; i++) {
        fs_event *ev = &fs->events[i];
        if (ev->type == STORE_ADDED) {
            grow(&out->objects, &out->cap_objects, out->n_objects + 1, sizeof *out->objects);
            out->objects[out->n_objects++] = ev->new_obj;
            ev->new_obj = NULL;
        }
    }
    drop_events(fs);
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

/* Forget the list edits waiting on cr. */
static void created_lists_free(fs_created *cr)
{
    for (size_t k = 0; k < cr->n_lists; k++)
        store_edit_free(&cr->lists[k]);
    free(cr->lists);
    free(cr->paths);
    cr->lists = NULL;
    cr->paths = NULL;
    cr->n_lists = cr->cap_lists = cr->n_paths = cr->cap_paths = 0;
}

/* Forget every created object (written, failed or dropped): the entries
 * of those not written stay, as objects of no file. */
static void created_clear(file_store *fs)
{
    for (size_t i = 0; i < fs->n_created; i++) {
        fs_created *cr = &fs->created[i];
        if (cr->en)
            cr->en->created = 0;
        created_lists_free(cr);
        if (cr->o)
            object_unref(cr->o);
    }
    fs->n_created = 0;
}

/* cr's object is c now (its reference taken over). */
static void created_becomes(file_store *fs, fs_created *cr, trellis_object *c)
{
    trellis_object *o = cr->o;
    fs_entry *en = cr->en;
    if (en->o == o) {
        en->o = object_ref(c);
        hmap_put_h(&fs->objects, c->id, c->id_hash, en);
        /* a watching host holds o: it learns of the new content as of any
         * change (the entry's reference goes with the event) */
        if (fs->ino >= 0)
            push_event(fs, STORE_MODIFIED, o, object_ref(c));
        else
            object_unref(o);
    }
    cr->o = c; /* the record's reference moves to the new object */
    object_unref(o);
}

/* Make the list edits waiting on cr: each path's list worked out in
 * place, then the object made once. 0, or -1 with err (they are dropped:
 * can_wait let none wait that could fail here). */
static int created_settle(file_store *fs, fs_created *cr, char *err, size_t errlen)
{
    if (!cr->n_lists)
        return 0;
    store_edit *sets = xcalloc(cr->n_paths, sizeof *sets);
    store_edit *same = xcalloc(cr->n_lists, sizeof *same);
    size_t m = 0;
    int rc = 0;
    for (size_t p = 0; p < cr->n_paths && rc == 0; p++) {
        size_t k = 0;
        for (size_t j = 0; j < cr->n_lists; j++)
            if (strcmp(cr->lists[j].path, cr->paths[p]) == 0)
                same[k++] = cr->lists[j];
        char *text = edit_lists_result(cr->o, same, k, err, errlen);
        if (!text)
            rc = -1;
        else
            sets[m++] = (store_edit){cr->paths[p], text, STORE_SET_JSON};
    }
    trellis_object *c = rc == 0 ? edit_apply_object(cr->o, sets, m, err, errlen) : NULL;
    if (c)
        created_becomes(fs, cr, c);
    for (size_t p = 0; p < m; p++)
        free((char *)sets[p].value);
    free(sets);
    free(same);
    created_lists_free(cr);
    return c ? 0 : -1;
}

/* Make what waits on every created object (none of it can fail: a
 * failure is logged). */
static void created_settle_all(file_store *fs)
{
    char err[512];
    for (size_t i = 0; i < fs->n_created; i++)
        if (fs->created[i].o && created_settle(fs, &fs->created[i], err, sizeof err) < 0)
            log_error("store: %s", err);
}

/* Whether a list edit of path may wait: a plain path (keys joined by
 * dots, none empty, no brackets: one way to write it, so that its edits
 * are told apart by their text) that names no field of what an object is
 * (kind, apiVersion, metadata other than its finalizers). */
static int plain_list_path(const char *path)
{
    static const char *const own[] = {"kind", "apiVersion", "metadata"};
    if (strcmp(path, "metadata.finalizers") == 0)
        return 1;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        size_t n = strlen(own[i]);
        if (strncmp(path, own[i], n) == 0 && (path[n] == '\0' || path[n] == '.'))
            return 0;
    }
    for (const char *p = path;; p++) {
        if (*p == '.' || *p == '\0') {
            if (p == path || p[-1] == '.')
                return 0; /* an empty key */
            if (!*p)
                return 1;
        } else if (*p == '[' || *p == ']' || *p == '"' || *p == '\'' || *p == '\\') {
            return 0;
        }
    }
}

/* Whether path a names a field inside the one b names, or b one inside a. */
static int nested(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    const char *s = la < lb ? a : b, *l = la < lb ? b : a;
    size_t n = la < lb ? la : lb;
    return la != lb && strncmp(s, l, n) == 0 && (l[n] == '.' || l[n] == '[');
}

/* Whether the edits may wait on cr: no watch reads the store (it would
 * learn of each change), and each is a list edit of a plain path that can
 * be made of the object as it is whatever waits already (its field a list
 * or absent on the object, no waiting edit of a field inside it or around
 * it): then none can fail when they are made. */
static int can_wait(const file_store *fs, const fs_created *cr, const store_edit *edits, size_t n)
{
    if (fs->ino >= 0)
        return 0;
    char e[256];
    for (size_t k = 0; k < n; k++) {
        if (edits[k].op < STORE_LIST_ADD || !plain_list_path(edits[k].path) ||
            edit_check(cr->o, &edits[k], e, sizeof e) < 0)
            return 0;
        for (size_t p = 0; p < cr->n_paths; p++)
            if (nested(cr->paths[p], edits[k].path))
                return 0;
        for (size_t j = 0; j < k; j++)
            if (nested(edits[j].path, edits[k].path))
                return 0;
    }
    return 1;
}

/* A patch of an object created in this run and not written yet: the
 * edits go to the object that will be written (read-your-writes), all or
 * none; list edits wait while they can (can_wait). */
static int patch_created(file_store *fs, fs_created *cr, const store_edit *edits, size_t n,
                         char *err, size_t errlen)
{
    if (can_wait(fs, cr, edits, n)) {
        grow(&cr->lists, &cr->cap_lists, cr->n_lists + n, sizeof *cr->lists);
        for (size_t k = 0; k < n; k++) {
            store_edit *w = &cr->lists[cr->n_lists++];
            *w = store_edit_copy(&edits[k]);
            size_t p = 0;
            while (p < cr->n_paths && strcmp(cr->paths[p], w->path) != 0)
                p++;
            if (p == cr->n_paths) {
                grow(&cr->paths, &cr->cap_paths, cr->n_paths + 1, sizeof *cr->paths);
                cr->paths[cr->n_paths++] = w->path;
            }
        }
        return 0;
    }
    if (created_settle(fs, cr, err, errlen) < 0)
        return -1;
    trellis_object *c = edit_apply_object(cr->o, edits, n, err, errlen);
    if (!c)
        return -1;
    created_becomes(fs, cr, c);
    return 0;
}

static trellis_object *fs_get(store *s, const char *kind, const char *ns, const char *name)
{
    file_store *fs = (file_store *)s;
    char *k = obj_key(kind, ns, name);
    pthread_mutex_lock(&fs->mu);
    fs_entry *e = hmap_get(&fs->objects, k);
    char err[512];
    if (e && e->created && created_settle(fs, &fs->created[e->created - 1], err, sizeof err) < 0)
        log_error("store: %s", err);
    trellis_object *o = e ? object_ref(e->o) : NULL;
    pthread_mutex_unlock(&fs->mu);
    free(k);
    return o;
}

/* The object a write made against o goes to, as this store holds it now:
 * o itself when its file is as o was read from; when the file changed
 * since (another object of the file was written), the store's object of
 * the same id when its content is still o's (only its place and version
 * moved: a version is the file's); o itself when only this store's own
 * last write changed the file, and not at o; NULL when o itself
 * changed. */
static const trellis_object *current(file_store *fs, const fs_file *f, const trellis_object *o)
{
    if (o->version == f->hash)
        return o;
    if (f->prev_hash && o->version == f->prev_hash) {
        /* only this store's own edits of other objects since */
        size_t j = 0;
        while (j < f->n_touched && (f->touched[j].doc != o->doc || f->touched[j].item != o->item))
            j++;
        if (j == f->n_touched)
            return o;
    }
    const fs_entry *en = hmap_get_h(&fs->objects, o->id, o->id_hash);
    return en && en->f == f && en->o->version == f->hash && object_same_content(en->o, o) ? en->o
                                                                                          : NULL;
}

static int patch_locked(file_store *fs, const trellis_object *o, const store_edit *edits, size_t n,
                        char *err, size_t errlen)
{
    fs_file *f = o->file ? hmap_get_h(&fs->by_path, o->file, object_file_hash(o)) : NULL;
    if (!f) {
        const fs_entry *en = hmap_get_h(&fs->objects, o->id, o->id_hash);
        if (en && en->created)
            return patch_created(fs, &fs->created[en->created - 1], edits, n, err, errlen);
        return errf(err, errlen, "%s %s: not read from this store", o->kind, o->key);
    }
    const trellis_object *cur = current(fs, f, o);
    if (!cur)
        return errf(err, errlen, "%s: %s %s changed since it was read", f->path, o->kind, o->key);
    o = cur;
    edit_room(f);
    size_t slot = edit_slot(f, o->doc, o->item);
    for (size_t i = 0; i < n; i++) {
        /* a later patch of the same field replaces an earlier one */
        const char *path = pool_get(fs, edits[i].path);
        fs_edit *q = edit_of(f, slot, path);
        const char *value = edits[i].value;
        int raw = edits[i].op == STORE_SET_JSON;
        char *list = NULL;
        if (edits[i].op >= STORE_LIST_ADD) {
            /* resolved now, against the object and what is queued for it */
            int unchanged;
            if (q && q->list) { /* a list edited before: edited where it is */
                edit_list_in_place(q->list, &edits[i]);
                pool_put(fs, path);
                continue;
            }
            edit_pending pending = {q ? edit_value(f, q) : NULL, q ? q->raw : 0};
            list = edit_list_result(o, q ? &pending : NULL, &edits[i], &unchanged, err, errlen);
            if (!list) {
                pool_put(fs, path);
                if (unchanged)
                    continue;
                return -1;
            }
            value = list;
            raw = 1;
        }
        fs_edit *e = q;
        if (e) {
            pool_put(fs, path);
            list_free(e->list);
        } else {
            grow(&f->edits, &f->cap_edits, f->n_edits + 1, sizeof *f->edits);
            e = &f->edits[f->n_edits++];
            e->doc = o->doc;
            e->item = o->item;
            e->path = path;
            e->prev = f->eslots[slot];
            f->n_eobjs += !e->prev;
            f->eslots[slot] = (uint32_t)f->n_edits;
        }
        e->list = NULL;
        if (list) { /* the list is the entry's now */
            e->list = xcalloc(1, sizeof *e->list);
            e->list->s = list;
            e->list->len = strlen(list);
            e->list->cap = e->list->len + 1;
        }
        e->value = list ? NO_VALUE : keep_value(f, value);
        e->raw = raw;
    }
    return 0;
}

static int fs_patch(store *s, const trellis_object *o, const char *subresource,
                    const store_edit *edits, size_t n, char *err, size_t errlen)
{
    if (subresource && strcmp(subresource, "status") != 0 && strcmp(subresource, "binding") != 0)
        return errf(err, errlen, "%s %s: unknown subresource '%s' (expected status or binding)",
                    o->kind, o->key, subresource);
    for (size_t i = 0; i < n; i++)
        if (edit_check(o, &edits[i], err, errlen) < 0)
            return -1;
    file_store *fs = (file_store *)s;
    pthread_mutex_lock(&fs->mu);
    int rc = patch_locked(fs, o, edits, n, err, errlen);
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

static trellis_object *fs_create(store *s, trellis_object *o, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    const char *k = o->id;
    pthread_mutex_lock(&fs->mu);
    trellis_object *stored = NULL;
    if (hmap_get_h(&fs->objects, k, o->id_hash)) {
        errf(err, errlen, "%s %s already exists", o->kind, o->key);
    } else {
        fs_entry *e = xcalloc(1, sizeof *e);
        e->o = object_ref(o);
        hmap_put_h(&fs->objects, k, o->id_hash, e);
        grow(&fs->created, &fs->cap_created, fs->n_created + 1, sizeof *fs->created);
        fs->created[fs->n_created++] = (fs_created){.o = object_ref(o), .en = e};
        e->created = (uint32_t)fs->n_created;
        stored = object_ref(o);
    }
    pthread_mutex_unlock(&fs->mu);
    return stored;
}

static int remove_locked(file_store *fs, const trellis_object *o, char *err, size_t errlen)
{
    fs_entry *en = hmap_get_h(&fs->objects, o->id, o->id_hash);
    if (en && en->created) {
        /* created in this run, not written: forget it (its place stays,
         * empty: the others keep theirs) */
        fs_created *cr = &fs->created[en->created - 1];
        created_lists_free(cr);
        object_unref(cr->o);
        cr->o = NULL;
        cr->en = NULL;
        trellis_object *eo = en->o;
        entry_drop(fs, en);
        if (fs->ino >= 0)
            push_event(fs, STORE_DELETED, eo, NULL); /* a watching host drops it too */
        else
            object_unref(eo);
        return 0;
    }
    fs_file *f = o->file ? hmap_get_h(&fs->by_path, o->file, object_file_hash(o)) : NULL;
    if (!en || !f)
        return errf(err, errlen, "%s %s: not in this store", o->kind, o->key);
    const trellis_object *cur = current(fs, f, o);
    if (!cur)
        return errf(err, errlen, "%s: %s %s changed since it was read", f->path, o->kind, o->key);
    o = cur;
    for (size_t i = 0; i < f->n_dels; i++)
        if (f->dels[i].doc == o->doc && f->dels[i].item == o->item)
            return 0;
    grow(&f->dels, &f->cap_dels, f->n_dels + 1, sizeof *f->dels);
    f->dels[f->n_dels++] = (fs_del){o->doc, o->item};
    return 0;
}

static int fs_remove(store *s, const trellis_object *o, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    pthread_mutex_lock(&fs->mu);
    int rc = remove_locked(fs, o, err, errlen);
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

/* <dir>/<kind>-<namespace>-<name>.json; Events go to <dir>/events/. */
static char *created_path(const file_store *fs, const trellis_object *o)
{
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "%s/%s", fs->dir, strcmp(o->kind, "Event") == 0 ? "events/" : "");
    const char *parts[3] = {o->kind, o->namespace_, o->name};
    int first = 1;
    for (int i = 0; i < 3; i++) {
        if (!*parts[i])
            continue;
        if (!first)
            sb_puts(&b, "-");
        first = 0;
        for (const char *p = parts[i]; *p; p++) {
            char c = (char)tolower((unsigned char)*p);
            sb_add(&b, isalnum((unsigned char)c) || c == '.' || c == '-' ? &c : "_", 1);
        }
    }
    sb_puts(&b, ".json");
    return sb_steal(&b);
}

/* The object of f at (doc, item): f->objs is in file order. */
static const trellis_object *object_at(const fs_file *f, int doc, int item)
{
    size_t lo = 0, hi = f->n_objs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const trellis_object *o = f->objs[mid];
        if (o->doc < doc || (o->doc == doc && o->item < item))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < f->n_objs && f->objs[lo]->doc == doc && f->objs[lo]->item == item)
        return f->objs[lo];
    /* objects kept from before a malformed read sit at the end */
    for (size_t i = 0; i < f->n_objs; i++)
        if (f->objs[i]->doc == doc && f->objs[i]->item == item)
            return f->objs[i];
    return NULL;
}

/* Tell failed about every object whose edits or removal in f were not
 * made. */
static void report_failed(const fs_file *f, store_fail_cb failed, void *ud, const char *why)
{
    if (!failed)
        return;
    const trellis_object *last = NULL;
    for (size_t j = 0; j < f->n_edits; j++) {
        const trellis_object *o = object_at(f, f->edits[j].doc, f->edits[j].item);
        if (o && o != last)
            failed(ud, o->id, why);
        last = o;
    }
    for (size_t j = 0; j < f->n_dels; j++) {
        const trellis_object *o = object_at(f, f->dels[j].doc, f->dels[j].item);
        if (o)
            failed(ud, o->id, why);
    }
}

/* Later documents and items first: a cut leaves the indexes before it. */
static int del_later_first(const void *a, const void *b)
{
    const fs_del *x = a, *y = b;
    if (x->doc != y->doc)
        return x->doc < y->doc ? 1 : -1;
    return x->item < y->item ? 1 : x->item > y->item ? -1 : 0;
}

/* The file's text with its edits made and its removals cut: *out (NULL
 * when f has neither), *left the documents it still holds. 0, or -1 with
 * e. */
static int new_text(fs_file *f, const char *text, size_t len, char **out, size_t *outlen,
                    size_t *left, char *e, size_t elen)
{
    int json = str_endswith(f->path, ".json");
    *out = NULL;
    *left = 1;
    if (f->n_edits) {
        wb_edit *we = xcalloc(f->n_edits, sizeof *we);
        for (size_t j = 0; j < f->n_edits; j++) {
            we[j].doc = f->edits[j].doc;
            we[j].item = f->edits[j].item;
            we[j].path = f->edits[j].path;
            we[j].value = edit_value(f, &f->edits[j]);
            we[j].raw = f->edits[j].raw;
        }
        int rc = writeback_apply(text, len, json, we, f->n_edits, out, outlen, e, elen);
        free(we);
        if (rc < 0)
            return -1;
    }
    if (f->n_dels)
        qsort(f->dels, f->n_dels, sizeof *f->dels, del_later_first);
    for (size_t j = 0; j < f->n_dels; j++) {
        char *cut = NULL;
        size_t cutlen = 0;
        if (writeback_remove(*out ? *out : text, *out ? *outlen : len, json, f->dels[j].doc,
                             f->dels[j].item, &cut, &cutlen, left, e, elen) < 0) {
            free(*out);
            *out = NULL;
            return -1;
        }
        free(*out);
        *out = cut;
        *outlen = cutlen;
    }
    return 0;
}

/* Write one file's edits and removals; remove it when nothing is left. 0,
 * or -1 with e saying why. */
static int flush_file(file_store *fs, fs_file *f, store_fail_cb failed, void *ud, char *e,
                      size_t elen)
{
    size_t len;
    /* what is read is what is replaced: the file as it was before the
     * read must still be there at the rename (another writer's rename
     * over it in between is not undone) */
    struct stat was;
    int have_was = stat(f->path, &was) == 0;
    char *text = read_file(f->path, &len, e, elen);
    int rc = -1;
    char *outp = NULL;
    size_t outlen = 0, left = 1;
    struct stat lst;
    if (!text) {
        /* e says why */
    } else if (hash_bytes(text, len) != f->hash) {
        snprintf(e, elen, "%s: changed on disk since it was read; %zu change(s) not written",
                 f->path, f->n_edits + f->n_dels);
    } else if (new_text(f, text, len, &outp, &outlen, &left, e, elen) < 0) {
        errprefix(e, elen, "%s", f->path);
    } else if (fs->base.dry_run) {
        rc = 0;
    } else if (left == 0) {
        /* nothing left: the file goes (a link is not followed to it) */
        if (lstat(f->path, &lst) == 0 && S_ISLNK(lst.st_mode))
            snprintf(e, elen, "%s: a symbolic link; its last object is not removed", f->path);
        else if (unlink(f->path) < 0)
            snprintf(e, elen, "%s: cannot remove: %s", f->path, strerror(errno));
        else
            rc = 0;
        if (rc == 0)
            load_text(fs, f, NULL, 0, &fs->errors);
    } else if (atomicfile_write_unchanged(f->path, fs->root, outp, outlen, have_was ? &was : NULL,
                                          e, elen) == 0) {
        rc = 0;
        if (fs->ino >= 0 || f->n_dels) {
            /* what was written comes back as changes, like anyone's */
            load_text(fs, f, outp, outlen, &fs->errors);
        } else {
            f->prev_hash = f->hash;
            f->n_touched = 0;
            for (size_t j = 0; j < f->n_edits; j++) {
                grow(&f->touched, &f->cap_touched, f->n_touched + 1, sizeof *f->touched);
                f->touched[f->n_touched++] = (fs_del){f->edits[j].doc, f->edits[j].item};
            }
            f->hash = hash_bytes(outp, outlen);
        }
    }
    free(outp);
    free(text);
    if (rc < 0)
        report_failed(f, failed, ud, e);
    clear_edits(fs, f);
    return rc;
}

/* Created objects written in one batch: the store's, the objects
 * staged (by batch index) and their texts, for the bookkeeping after. */
typedef struct created_batch {
    file_store *fs;
    trellis_object **objs;
    char **paths, **texts;
    strbuf *problems;
    store_fail_cb failed;
    void *ud;
    hmap staged; /* the paths staged so far: two objects, one file */
} created_batch;

/* Stage a created object as a new file of b (which the store then owns).
 * 0, or -1 with e. */
static int stage_created(file_store *fs, atomicfile_batch *b, created_batch *cb, size_t *n,
                         trellis_object *o, char *e, size_t elen)
{
    char *p = created_path(fs, o);
    /* a file there already: a dry run asks, a write learns it as it
     * stages (one lookup, not two) */
    if (hmap_get(&cb->staged, p) || (fs->base.dry_run && access(p, F_OK) == 0)) {
        snprintf(e, elen, "%s: exists already; %s %s not written", p, o->kind, o->key);
        free(p);
        return -1;
    }
    if (fs->base.dry_run) {
        free(p);
        return 0;
    }
    if (strcmp(o->kind, "Event") == 0) {
        char *d = xasprintf("%s/events", fs->dir);
        if (mkdir(d, 0755) < 0 && errno != EEXIST)
            log_warn("%s: cannot create directory: %s", d, strerror(errno));
        free(d);
    }
    /* the text json-c would write, without building its tree */
    strbuf tb;
    sb_init(&tb);
    if (object_json_pretty(o, &tb) < 0) {
        json_object *tree = object_to_json(o);
        sb_puts(&tb, json_object_to_json_string_ext(tree, JSON_C_TO_STRING_PRETTY |
                                                              JSON_C_TO_STRING_SPACED |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(tree);
    }
    sb_add(&tb, "\n", 1);
    size_t jl = tb.len - 1;
    /* exactly its size: every created text is held until the batch is
     * committed */
    char *text = xrealloc(sb_steal(&tb), jl + 2);
    int rc = atomicfile_batch_add_new(b, p, text, jl + 1, e, elen);
    if (rc == -2)
        snprintf(e, elen, "%s: exists already; %s %s not written", p, o->kind, o->key);
    if (rc < 0) {
        free(text);
        free(p);
        return -1;
    }
    cb->objs[*n] = object_ref(o);
    cb->paths[*n] = p;
    hmap_put(&cb->staged, p, p);
    cb->texts[*n] = text;
    (*n)++;
    return 0;
}

/* A created object's file was written (or not): the store owns it now. */
static void created_done(void *ud, size_t i, const char *err)
{
    created_batch *cb = ud;
    file_store *fs = cb->fs;
    trellis_object *o = cb->objs[i];
    if (err) {
        sb_printf(cb->problems, "%s%s", cb->problems->len ? "; " : "", err);
        if (cb->failed)
            cb->failed(cb->ud, o->id, err);
        return;
    }
    const char *text = cb->texts[i];
    fs_file *f = file_get(fs, cb->paths[i]);
    object_set_origin(o, cb->paths[i], 0, -1, 1);
    f->hash = o->version = hash_bytes(text, strlen(text));
    grow(&f->objs, &f->cap_objs, f->n_objs + 1, sizeof *f->objs);
    f->objs[f->n_objs++] = o; /* borrowed, as every file's: the entry holds it */
    /* the file's watch sees it unchanged: say it here (a host that has
     * the object already ignores it) */
    if (fs->ino >= 0)
        push_event(fs, STORE_ADDED, NULL, object_ref(o));
    fs_entry *en = hmap_get_h(&fs->objects, o->id, o->id_hash);
    if (en)
        en->f = f;
}

/* Write every created object, each a new file, with one sync for all. */
static void flush_created(file_store *fs, store_fail_cb failed, void *ud, strbuf *problems)
{
    size_t n = 0, cap = fs->n_created ? fs->n_created : 1;
    created_batch cb = {.fs = fs,
                        .objs = xcalloc(cap, sizeof *cb.objs),
                        .paths = xcalloc(cap, sizeof *cb.paths),
                        .texts = xcalloc(cap, sizeof *cb.texts),
                        .problems = problems,
                        .failed = failed,
                        .ud = ud};
    hmap_init(&cb.staged);
    atomicfile_batch *b = atomicfile_batch_new(fs->root);
    char e[1024];
    for (size_t i = 0; i < fs->n_created; i++) {
        fs_created *cr = &fs->created[i];
        if (!cr->o)
            continue;        /* removed */
        cr->en->created = 0; /* written or not, no longer waiting */
        if (created_settle(fs, cr, e, sizeof e) < 0 ||
            stage_created(fs, b, &cb, &n, cr->o, e, sizeof e) < 0) {
            sb_printf(problems, "%s%s", problems->len ? "; " : "", e);
            if (failed)
                failed(ud, cr->o->id, e);
        }
    }
    if (n)
        atomicfile_batch_commit(b, created_done, &cb);
    atomicfile_batch_free(b);
    hmap_free(&cb.staged);
    for (size_t i = 0; i < n; i++) {
        object_unref(cb.objs[i]);
        free(cb.paths[i]);
        free(cb.texts[i]);
    }
    free(cb.objs);
    free(cb.paths);
    free(cb.texts);
    created_clear(fs);
}

static int fs_flush(store *s, store_fail_cb failed, void *ud, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    strbuf problems;
    sb_init(&problems);
    char e[1024];
    pthread_mutex_lock(&fs->mu);
    char why[512];
    if (!fs->base.dry_run && fs->base.fence &&
        !fs->base.fence(fs->base.fence_ud, why, sizeof why)) {
        /* another host may be active: write nothing */
        snprintf(e, sizeof e, "not written: %s", why);
        for (size_t i = 0; i < fs->n_files; i++) {
            fs_file *f = fs->files[i];
            if (!f->n_edits && !f->n_dels)
                continue;
            report_failed(f, failed, ud, e);
            clear_edits(fs, f);
        }
        for (size_t i = 0; i < fs->n_created; i++)
            if (failed && fs->created[i].o)
                failed(ud, fs->created[i].o->id, e);
        created_settle_all(fs); /* not written, their entries stay: with their edits */
        created_clear(fs);
        pthread_mutex_unlock(&fs->mu);
        return errf(err, errlen, "%s", e);
    }
    for (size_t i = 0; i < fs->n_files; i++) {
        fs_file *f = fs->files[i];
        if ((f->n_edits || f->n_dels) && flush_file(fs, f, failed, ud, e, sizeof e) < 0)
            sb_printf(&problems, "%s%s", problems.len ? "; " : "", e);
    }
    flush_created(fs, failed, ud, &problems);
    pthread_mutex_unlock(&fs->mu);
    if (problems.len) {
        errf(err, errlen, "%s", problems.s);
        sb_free(&problems);
        return -1;
    }
    return 0;
}

/* ---- following changes (inotify) ---- */

static void watch_dir(file_store *fs, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return;
    /* IN_ATTRIB: a file or directory that could not be read may be
     * readable again (chmod) */
    int wd = inotify_add_watch(fs->ino, dir,
                               IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
                                   IN_DELETE | IN_ATTRIB | IN_ONLYDIR);
    if (wd < 0) {
        log_warn("%s: cannot watch: %s", dir, strerror(errno));
        return;
    }
    for (size_t i = 0; i < fs->n_watches; i++) {
        fs_wd *w = &fs->watches[i];
        if (w->wd != wd)
            continue;
        /* the same directory by another path: a link to it (kept as
         * it is), or its new name when the one known is not it any more
         * (renamed while events were lost) */
        struct stat old;
        if (stat(w->dir, &old) != 0 || old.st_dev != w->dev || old.st_ino != w->ino) {
            free(w->dir);
            w->dir = xstrdup(dir);
        }
        return;
    }
    grow(&fs->watches, &fs->cap_watches, fs->n_watches + 1, sizeof *fs->watches);
    fs_wd *w = &fs->watches[fs->n_watches++];
    w->wd = wd;
    w->dir = xstrdup(dir);
    w->dev = st.st_dev;
    w->ino = st.st_ino;
}

/* Walk below dir (the root when top), the directories of the first
 * `known` watches left out, and watch every directory found; the manifest
 * files found are appended to *paths. */
static void walk_and_watch(file_store *fs, const char *dir, int top, size_t known, char ***paths,
                           size_t *np, size_t *cp)
{
    walker wk;
    treewalk_init(&wk, fs->root, &fs->errors);
    wk.want_dirs = 1;
    for (size_t i = 0; i < known; i++) {
        struct stat st = {0};
        st.st_dev = fs->watches[i].dev;
        st.st_ino = fs->watches[i].ino;
        treewalk_first_visit(&wk, &st);
    }
    char e[512];
    struct stat st;
    if (top || stat(dir, &st) != 0 || treewalk_first_visit(&wk, &st)) {
        if ((top ? treewalk_state(&wk, dir, paths, np, cp, e, sizeof e)
                 : treewalk_dir(&wk, dir, paths, np, cp, e, sizeof e)) < 0)
            log_warn("%s", e);
    }
    for (size_t i = 0; i < wk.n_dirs; i++)
        watch_dir(fs, wk.dirs[i]);
    treewalk_free(&wk);
}

static void free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* Walk below dir (the root when top), watching every directory (what is
 * watched already is not walked again); the manifest files found go to
 * *out unless out is NULL. A directory is walked before it is watched, so
 * a file made in it between the two is in no event: for *out the tree is
 * walked again once its directories are watched, until a walk finds no
 * directory to watch (at most 8 times more; a directory that appeared,
 * then a file written into it at once, was missed for good). */
static void watch_tree(file_store *fs, const char *dir, int top, char ***out, size_t *n,
                       size_t *cap)
{
    size_t known = fs->n_watches, np = 0, cp = 0;
    char **paths = NULL;
    walk_and_watch(fs, dir, top, known, &paths, &np, &cp);
    int settled = !out;
    for (int pass = 0; !settled && pass < 8; pass++) {
        size_t before = fs->n_watches;
        free_paths(paths, np);
        paths = NULL;
        np = cp = 0;
        walk_and_watch(fs, dir, top, known, &paths, &np, &cp);
        settled = fs->n_watches == before;
    }
    if (!settled)
        log_warn("%s: new directories kept appearing while it was watched; a file written "
                 "into one just made may be read only at its next change",
                 dir);
    for (size_t i = 0; i < np; i++) {
        if (out) {
            grow(out, cap, *n + 1, sizeof **out);
            (*out)[(*n)++] = paths[i];
        } else {
            free(paths[i]);
        }
    }
    free(paths);
}

static int fs_watch(store *s, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    if (fs->ino >= 0)
        return fs->ino;
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0)
        return errf(err, errlen, "%s: cannot watch: %s", fs->dir, strerror(errno));
    pthread_mutex_lock(&fs->mu);
    /* a watching host learns of each change: what waits is made first,
     * before there is anyone to tell */
    created_settle_all(fs);
    fs->ino = fd;
    watch_tree(fs, fs->dir, 1, NULL, NULL, NULL);
    pthread_mutex_unlock(&fs->mu);
    return fd;
}

/* Whether p is path (plen its length) or below it; strictly below only
 * when below is set. */
static int at_or_below(const char *p, const char *path, size_t plen, int below)
{
    return strncmp(p, path, plen) == 0 && (p[plen] == '/' || (!below && p[plen] == '\0'));
}

/* Stop watching the directories at or below path (plen its length). */
static void unwatch_below(file_store *fs, const char *path, size_t plen)
{
    for (size_t i = 0; i < fs->n_watches;) {
        if (at_or_below(fs->watches[i].dir, path, plen, 0)) {
            inotify_rm_watch(fs->ino, fs->watches[i].wd);
            free(fs->watches[i].dir);
            fs->watches[i] = fs->watches[--fs->n_watches];
        } else {
            i++;
        }
    }
}

/* Drop the files known at or below path (plen its length; below only,
 * when below): what a path that became something else held. */
static void drop_files(file_store *fs, const char *path, size_t plen, int below)
{
    for (size_t i = 0; i < fs->n_files;) {
        fs_file *g = fs->files[i];
        if (at_or_below(g->path, path, plen, below)) {
            load_text(fs, g, NULL, 0, &fs->errors);
            hmap_del(&fs->by_path, g->path);
            memmove(fs->files + i, fs->files + i + 1, (fs->n_files - i - 1) * sizeof *fs->files);
            fs->n_files--;
            file_free(fs, g);
        } else {
            i++;
        }
    }
}

/* Read path again (or drop it when it is gone or no manifest any more). */
static void reload_path(file_store *fs, const char *path)
{
    struct stat st;
    fs_file *f = hmap_get(&fs->by_path, path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) == 0 &&
        (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        walker wk;
        treewalk_init(&wk, fs->root, &fs->errors);
        int out = treewalk_leads_outside(&wk, path);
        treewalk_free(&wk);
        if (out)
            return;
    }
    int got = stat(path, &st);
    if (got != 0 && errno != ENOENT && errno != ENOTDIR) {
        /* there, but not to be looked at now (a directory made
         * unreadable): nothing read from it is dropped; a chmod that makes
         * it readable again reads it again (IN_ATTRIB) */
        log_warn("%s: %s (objects read earlier from it are kept; it is read again when it "
                 "can be)",
                 path, strerror(errno));
        return;
    }
    if (got == 0 && S_ISDIR(st.st_mode)) {
        /* a directory appeared: watch it and read what it holds (once);
         * one known already (its mode changed) has its files read again */
        char **paths = NULL;
        size_t n = 0, cap = 0, plen = strlen(path);
        if (f) /* a file replaced by a directory */
            drop_files(fs, path, plen, 0);
        for (size_t i = 0; i < fs->n_watches; i++) {
            fs_wd *w = &fs->watches[i];
            if (w->dev == st.st_dev && w->ino == st.st_ino && strcmp(w->dir, path) != 0) {
                struct stat old;
                if (stat(w->dir, &old) == 0 && old.st_dev == w->dev && old.st_ino == w->ino)
                    continue; /* reached by another path too (a link): both stand */
                /* renamed here, its old name not handled yet (it comes
                 * later in this batch, as gone): watched and read anew */
                char *was = xstrdup(w->dir);
                unwatch_below(fs, was, strlen(was));
                free(was);
                i = (size_t)-1; /* the list changed: from the start */
            }
        }
        watch_tree(fs, path, 0, &paths, &n, &cap);
        for (size_t i = 0; i < fs->n_files; i++) {
            if (at_or_below(fs->files[i]->path, path, plen, 1)) {
                grow(&paths, &cap, n + 1, sizeof *paths);
                paths[n++] = xstrdup(fs->files[i]->path);
            }
        }
        for (size_t i = 0; i < n; i++) {
            reload_path(fs, paths[i]);
            free(paths[i]);
        }
        free(paths);
        return;
    }
    if (got == 0 && S_ISREG(st.st_mode) && manifest_is_manifest_name(base)) {
        size_t len, plen = strlen(path);
        char e[512];
        for (size_t i = 0; i < fs->n_watches; i++) {
            if (strcmp(fs->watches[i].dir, path) == 0) {
                /* a directory replaced by a file: what it held went */
                drop_files(fs, path, plen, 1);
                unwatch_below(fs, path, plen);
                break;
            }
        }
        char *text = read_file(path, &len, e, sizeof e);
        if (!text) {
            log_warn("%s (objects read earlier from it are kept; it is read again when it "
                     "changes, or its mode does)",
                     e);
            return;
        }
        if (!f || hash_bytes(text, len) != f->hash)
            load_text(fs, f ? f : file_get(fs, path), text, len, &fs->errors);
        free(text);
        return;
    }
    /* gone: every file at or below path, and the watches of the
     * directories there (moved within the state, it is walked again
     * under its new name: its watch would keep the old one) */
    size_t plen = strlen(path);
    unwatch_below(fs, path, plen);
    drop_files(fs, path, plen, 0);
}

/* An object went: the files that had a definition of some object ignored
 * (defined before elsewhere) are read again, whatever their hash, so that
 * the definition left takes the place of the one that went; each that
 * still has one is listed again as it is read. */
static void reread_shadowed(file_store *fs)
{
    if (!fs->dropped || !fs->n_shadowed)
        return;
    fs->dropped = 0;
    char **v = fs->shadowed;
    size_t n = fs->n_shadowed;
    fs->shadowed = NULL;
    fs->n_shadowed = fs->cap_shadowed = 0;
    for (size_t i = 0; i < n; i++) {
        fs_file *f = hmap_get(&fs->by_path, v[i]);
        size_t len;
        char e[512];
        char *text = f ? read_file(v[i], &len, e, sizeof e) : NULL;
        if (text)
            load_text(fs, f, text, len, &fs->errors);
        free(text);
        free(v[i]);
    }
    free(v);
}

/* The kernel's queue of changes overflowed: some were lost, so every
 * file is read again (an unchanged one costs its hash), the new ones
 * found and the ones gone dropped, and every directory watched. */
static void rescan(file_store *fs)
{
    log_warn("%s: more changes at once than inotify queues (fs.inotify.max_queued_events): "
             "reading the whole state again",
             fs->dir);
    walker wk;
    treewalk_init(&wk, fs->root, &fs->errors);
    wk.want_dirs = 1;
    char **paths = NULL;
    size_t n = 0, cap = 0;
    char e[512];
    if (treewalk_state(&wk, fs->dir, &paths, &n, &cap, e, sizeof e) < 0)
        log_warn("%s", e);
    for (size_t i = 0; i < wk.n_dirs; i++)
        watch_dir(fs, wk.dirs[i]);
    treewalk_free(&wk);
    for (size_t i = 0; i < fs->n_files; i++) { /* the known ones too: those gone go */
        grow(&paths, &cap, n + 1, sizeof *paths);
        paths[n++] = xstrdup(fs->files[i]->path);
    }
    for (size_t i = 0; i < n; i++) {
        reload_path(fs, paths[i]);
        free(paths[i]);
    }
    free(paths);
}

/* Drain the inotify descriptor: the paths that changed, each once. */
static void read_inotify(file_store *fs)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int overflow = 0;
    for (;;) {
        ssize_t len = read(fs->ino, buf, sizeof buf);
        if (len <= 0)
            break;
        for (char *p = buf; p < buf + len;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                overflow = 1;
                continue;
            }
            if (ev->mask & IN_IGNORED) {
                for (size_t i = 0; i < fs->n_watches; i++)
                    if (fs->watches[i].wd == ev->wd) {
                        free(fs->watches[i].dir);
                        fs->watches[i] = fs->watches[--fs->n_watches];
                        break;
                    }
                continue;
            }
            if (!ev->len || ev->name[0] == '.')
                continue;
            const char *dir = NULL;
            for (size_t i = 0; i < fs->n_watches && !dir; i++)
                if (fs->watches[i].wd == ev->wd)
                    dir = fs->watches[i].dir;
            if (!dir)
                continue;
            char *path = xasprintf("%s/%s", dir, ev->name);
            struct stat lst;
            if ((ev->mask & IN_CREATE) && !(ev->mask & IN_ISDIR) &&
                !(lstat(path, &lst) == 0 &&
                  (S_ISLNK(lst.st_mode) || (S_ISREG(lst.st_mode) && lst.st_nlink > 1)))) {
                /* the content comes with IN_CLOSE_WRITE; a link, symbolic
                 * or hard, has none */
                free(path);
                continue;
            }
            int dup = 0;
            for (size_t i = 0; i < n && !dup; i++)
                dup = strcmp(paths[i], path) == 0;
            if (dup) {
                free(path);
                continue;
            }
            grow(&paths, &cap, n + 1, sizeof *paths);
            paths[n++] = path;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!overflow)
            reload_path(fs, paths[i]);
        free(paths[i]);
    }
    free(paths);
    if (overflow)
        rescan(fs);
    reread_shadowed(fs);
}

static size_t fs_dispatch(store *s, store_watch_cb cb, void *ud)
{
    file_store *fs = (file_store *)s;
    pthread_mutex_lock(&fs->mu);
    if (fs->ino >= 0)
        read_inotify(fs);
    fs_event *evs = fs->events;
    size_t n = fs->n_events;
    fs->events = NULL;
    fs->n_events = fs->cap_events = 0;
    manifest_set errs = fs->errors;
    manifest_set_init(&fs->errors);
    pthread_mutex_unlock(&fs->mu);
    for (size_t i = 0; i < errs.n_errors; i++)
        log_skipped(errs.errors[i].file, errs.errors[i].line, errs.errors[i].message);
    manifest_set_free(&errs);
    for (size_t i = 0; i < n; i++) {
        cb(ud, evs[i].type, evs[i].old_obj, evs[i].new_obj);
        if (evs[i].old_obj)
            object_unref(evs[i].old_obj);
        if (evs[i].new_obj)
            object_unref(evs[i].new_obj);
    }
    free(evs);
    return n;
}

static void fs_destroy(store *s)
{
    file_store *fs = (file_store *)s;
    drop_events(fs);
    free(fs->events);
    manifest_set_free(&fs->errors);
    for (size_t i = 0; i < fs->n_files; i++)
        file_free(fs, fs->files[i]);
    free(fs->files);
    created_clear(fs); /* before the entries it names go */
    free(fs->created);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&fs->objects, &i))) {
        fs_entry *e = sl->val;
        object_unref(e->o);
        free(e);
    }
    hmap_free(&fs->objects);
    hmap_free(&fs->by_path);
    hmap_free(&fs->pool); /* empty: every edit gave its strings back */
    for (size_t j = 0; j < fs->n_watches; j++)
        free(fs->watches[j].dir);
    free(fs->watches);
    for (size_t j = 0; j < fs->n_shadowed; j++)
        free(fs->shadowed[j]);
    free(fs->shadowed);
    if (fs->ino >= 0)
        close(fs->ino);
    pthread_mutex_destroy(&fs->mu);
    free(fs->dir);
    free(fs->root);
    free(fs);
}

static const store_ops file_ops = {
    .name = "file",
    .list = fs_list,
    .get = fs_get,
    .patch = fs_patch,
    .create = fs_create,
    .remove = fs_remove,
    .flush = fs_flush,
    .watch = fs_watch,
    .dispatch = fs_dispatch,
    .destroy = fs_destroy,
};

store *store_file_open(const char *dir, int dry_run, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        errf(err, errlen, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        errf(err, errlen,
             "%s: not a directory (the file store needs a directory of "
             "manifests)",
             dir);
        return NULL;
    }
    file_store *fs = xcalloc(1, sizeof *fs);
    fs->base.ops = &file_ops;
    fs->base.dry_run = dry_run;
    pthread_mutex_init(&fs->mu, NULL);
    fs->ino = -1;
    manifest_set_init(&fs->errors);
    fs->dir = xstrdup(dir);
    size_t l = strlen(fs->dir);
    while (l > 1 && fs->dir[l - 1] == '/')
        fs->dir[--l] = '\0';
    fs->root = realpath(fs->dir, NULL);
    if (!fs->root)
        fs->root = xstrdup(fs->dir);
    hmap_init(&fs->by_path);
    hmap_init(&fs->objects);
    hmap_init(&fs->pool);
    return &fs->base;
}
