/*
 * store_file.c - see store_file.h.
 */
#include "config.h"

#include "store_file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hmap.h"
#include "util.h"
#include "writeback.h"

typedef struct fs_edit {
    int doc, item;
    char *path;
    char *value; /* NULL = remove */
    int raw;     /* value is JSON text */
} fs_edit;

typedef struct fs_file {
    char *path;
    uint64_t hash; /* of the content as read */
    int read_ok;
    fs_edit *edits;
    size_t n_edits, cap_edits;
} fs_file;

typedef struct file_store {
    store base;
    char *dir;
    fs_file **files;
    size_t n_files, cap_files;
    hmap by_path;  /* path -> fs_file */
    hmap objects;  /* "Kind/ns/name" -> trellis_object (reference) */
    trellis_object **created;
    size_t n_created, cap_created;
} file_store;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect manifest files below dir, sorted. */
static int walk(const char *dir, char ***out, size_t *n, size_t *cap, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return errf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
    char **names = NULL;
    size_t nn = 0, nc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        grow(&names, &nc, nn + 1, sizeof *names);
        names[nn++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < nn; i++) {
        char *p = xasprintf("%s/%s", dir, names[i]);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (rc == 0 && walk(p, out, n, cap, err, errlen) < 0)
                rc = -1;
            free(p);
        } else if (stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
                   manifest_is_manifest_name(names[i])) {
            grow(out, cap, *n + 1, sizeof **out);
            (*out)[(*n)++] = p;
        } else {
            free(p);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static char *obj_key(const char *kind, const char *ns, const char *name)
{
    return xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
}

static int fs_list(store *s, manifest_set *out, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    char **paths = NULL;
    size_t n = 0, cap = 0;
    if (walk(fs->dir, &paths, &n, &cap, err, errlen) < 0) {
        for (size_t i = 0; i < n; i++)
            free(paths[i]);
        free(paths);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        fs_file *f = xcalloc(1, sizeof *f);
        f->path = paths[i];
        grow(&fs->files, &fs->cap_files, fs->n_files + 1, sizeof *fs->files);
        fs->files[fs->n_files++] = f;
        hmap_put(&fs->by_path, f->path, f);
        size_t len;
        char rerr[512];
        char *text = read_file(f->path, &len, rerr, sizeof rerr);
        size_t before = out->n_objects;
        if (!text) {
            grow(&out->errors, &out->cap_errors, out->n_errors + 1, sizeof *out->errors);
            manifest_error *me = &out->errors[out->n_errors++];
            me->file = xstrdup(f->path);
            me->line = 0;
            me->doc = 0;
            me->message = xstrdup(rerr);
            continue;
        }
        f->hash = hash_bytes(text, len);
        f->read_ok = 1;
        manifest_parse(f->path, text, len, out);
        free(text);
        /* index the new objects; a second object with the same identity is
         * an error, reported and skipped (the first one stays) */
        size_t w = before;
        for (size_t j = before; j < out->n_objects; j++) {
            trellis_object *o = out->objects[j];
            char *k = obj_key(o->kind, o->namespace_, o->name);
            trellis_object *prev = hmap_get(&fs->objects, k);
            if (prev) {
                grow(&out->errors, &out->cap_errors, out->n_errors + 1, sizeof *out->errors);
                manifest_error *me = &out->errors[out->n_errors++];
                me->file = xstrdup(o->file ? o->file : f->path);
                me->line = o->line;
                me->doc = o->doc;
                me->message = xasprintf("document %d: %s %s%s%s is defined twice (first at "
                                        "%s:%d); this one is ignored",
                                        o->doc, o->kind, o->namespace_,
                                        *o->namespace_ ? "/" : "", o->name, prev->file,
                                        prev->line);
                free(k);
                object_unref(o);
                continue;
            }
            /* the key string lives in the map: keep it with the object */
            hmap_put(&fs->objects, k, object_ref(o));
            o->version = f->hash;
            out->objects[w++] = o;
        }
        out->n_objects = w;
    }
    free(paths);
    return 0;
}

static trellis_object *fs_get(store *s, const char *kind, const char *ns, const char *name)
{
    file_store *fs = (file_store *)s;
    char *k = obj_key(kind, ns, name);
    trellis_object *o = hmap_get(&fs->objects, k);
    free(k);
    return o ? object_ref(o) : NULL;
}

/* A field edit must be placeable: every parent on the path a map (or
 * absent, then it is created) and the field itself a scalar or absent.
 * Checked when the patch is made, so that a bind fails at once instead of
 * at flush. */
static int check_edit(const trellis_object *o, const char *path, int raw, char *err,
                      size_t errlen)
{
    char prefix[512];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof prefix)
        return errf(err, errlen, "bad field path '%s'", path);
    for (size_t i = 0; i <= len; i++) {
        if (path[i] != '.' && path[i] != '\0')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        const trellis_value *v = object_get(o, prefix);
        if (!v)
            return 0; /* created from here on */
        trellis_value_type t = value_type(v);
        if (i < len && t != TRELLIS_VALUE_MAP && t != TRELLIS_VALUE_NULL)
            return errf(err, errlen, "%s %s: cannot set %s: '%s' is not a map", o->kind,
                        o->key, path, prefix);
        if (i == len && !raw && (t == TRELLIS_VALUE_MAP || t == TRELLIS_VALUE_LIST))
            return errf(err, errlen, "%s %s: cannot set %s: it is a %s, not a scalar", o->kind,
                        o->key, path, t == TRELLIS_VALUE_MAP ? "map" : "list");
    }
    return 0;
}

static int fs_patch(store *s, const trellis_object *o, const store_edit *edits, size_t n,
                    char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (check_edit(o, edits[i].path, edits[i].raw, err, errlen) < 0)
            return -1;
    file_store *fs = (file_store *)s;
    fs_file *f = o->file ? hmap_get(&fs->by_path, o->file) : NULL;
    if (!f) {
        /* created in this run: patch the object before it is written */
        for (size_t i = 0; i < fs->n_created; i++)
            if (fs->created[i] == o)
                return errf(err, errlen, "patching a created object is not supported yet");
        return errf(err, errlen, "%s %s: not read from this store", o->kind, o->key);
    }
    if (o->version != f->hash)
        return errf(err, errlen, "%s: %s %s changed since it was read", f->path, o->kind,
                    o->key);
    for (size_t i = 0; i < n; i++) {
        fs_edit *e = NULL;
        /* a later patch of the same field replaces an earlier one */
        for (size_t j = 0; j < f->n_edits; j++)
            if (f->edits[j].doc == o->doc && f->edits[j].item == o->item &&
                strcmp(f->edits[j].path, edits[i].path) == 0)
                e = &f->edits[j];
        if (!e) {
            grow(&f->edits, &f->cap_edits, f->n_edits + 1, sizeof *f->edits);
            e = &f->edits[f->n_edits++];
            e->doc = o->doc;
            e->item = o->item;
            e->path = xstrdup(edits[i].path);
        } else {
            free(e->value);
        }
        e->value = edits[i].value ? xstrdup(edits[i].value) : NULL;
        e->raw = edits[i].raw;
    }
    return 0;
}

static int fs_create(store *s, trellis_object *o, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    char *k = obj_key(o->kind, o->namespace_, o->name);
    if (hmap_get(&fs->objects, k)) {
        free(k);
        return errf(err, errlen, "%s %s already exists", o->kind, o->key);
    }
    hmap_put(&fs->objects, k, object_ref(o));
    grow(&fs->created, &fs->cap_created, fs->n_created + 1, sizeof *fs->created);
    fs->created[fs->n_created++] = object_ref(o);
    return 0;
}

static char *created_path(const file_store *fs, const trellis_object *o)
{
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "%s/", fs->dir);
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

static int fs_flush(store *s, char *err, size_t errlen)
{
    file_store *fs = (file_store *)s;
    strbuf problems;
    sb_init(&problems);
    for (size_t i = 0; i < fs->n_files; i++) {
        fs_file *f = fs->files[i];
        if (!f->n_edits)
            continue;
        char e[1024];
        size_t len;
        char *text = read_file(f->path, &len, e, sizeof e);
        int ok = 0;
        if (!text) {
            /* e says why */
        } else if (hash_bytes(text, len) != f->hash) {
            snprintf(e, sizeof e,
                     "%s: changed on disk since it was read; %zu change(s) not written",
                     f->path, f->n_edits);
        } else {
            wb_edit *we = xcalloc(f->n_edits, sizeof *we);
            for (size_t j = 0; j < f->n_edits; j++) {
                we[j].doc = f->edits[j].doc;
                we[j].item = f->edits[j].item;
                we[j].path = f->edits[j].path;
                we[j].value = f->edits[j].value;
                we[j].raw = f->edits[j].raw;
            }
            char *outp = NULL;
            size_t outlen = 0;
            if (writeback_apply(text, len, str_endswith(f->path, ".json"), we, f->n_edits,
                                &outp, &outlen, e, sizeof e) < 0) {
                errprefix(e, sizeof e, "%s", f->path);
            } else if (s->dry_run) {
                ok = 1;
            } else if (writeback_write_atomic(f->path, outp, outlen, e, sizeof e) == 0) {
                f->hash = hash_bytes(outp, outlen);
                ok = 1;
            }
            free(outp);
            free(we);
        }
        free(text);
        if (!ok)
            sb_printf(&problems, "%s%s", problems.len ? "; " : "", e);
        for (size_t j = 0; j < f->n_edits; j++) {
            free(f->edits[j].path);
            free(f->edits[j].value);
        }
        f->n_edits = 0;
    }
    for (size_t i = 0; i < fs->n_created; i++) {
        trellis_object *o = fs->created[i];
        char *p = created_path(fs, o);
        const char *js = json_object_to_json_string_ext(
            o->root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                         JSON_C_TO_STRING_NOSLASHESCAPE);
        char e[1024];
        if (access(p, F_OK) == 0) {
            sb_printf(&problems, "%s%s: exists already; %s %s not written",
                      problems.len ? "; " : "", p, o->kind, o->key);
        } else if (!s->dry_run) {
            char *text = xasprintf("%s\n", js);
            if (writeback_write_atomic(p, text, strlen(text), e, sizeof e) < 0)
                sb_printf(&problems, "%s%s", problems.len ? "; " : "", e);
            else
                object_set_origin(o, p, 0, -1, 1);
            free(text);
        }
        free(p);
        object_unref(o);
    }
    fs->n_created = 0;
    if (problems.len) {
        errf(err, errlen, "%s", problems.s);
        sb_free(&problems);
        return -1;
    }
    return 0;
}

static void fs_destroy(store *s)
{
    file_store *fs = (file_store *)s;
    for (size_t i = 0; i < fs->n_files; i++) {
        fs_file *f = fs->files[i];
        for (size_t j = 0; j < f->n_edits; j++) {
            free(f->edits[j].path);
            free(f->edits[j].value);
        }
        free(f->edits);
        free(f->path);
        free(f);
    }
    free(fs->files);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&fs->objects, &i))) {
        object_unref(sl->val);
        free((char *)sl->key);
    }
    hmap_free(&fs->objects);
    hmap_free(&fs->by_path);
    for (size_t j = 0; j < fs->n_created; j++)
        object_unref(fs->created[j]);
    free(fs->created);
    free(fs->dir);
    free(fs);
}

static const store_ops file_ops = {
    .name = "file",
    .list = fs_list,
    .get = fs_get,
    .patch = fs_patch,
    .create = fs_create,
    .flush = fs_flush,
    .watch = NULL,
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
        errf(err, errlen, "%s: not a directory (the file store needs a directory of "
                          "manifests)",
             dir);
        return NULL;
    }
    file_store *fs = xcalloc(1, sizeof *fs);
    fs->base.ops = &file_ops;
    fs->base.dry_run = dry_run;
    fs->dir = xstrdup(dir);
    size_t l = strlen(fs->dir);
    while (l > 1 && fs->dir[l - 1] == '/')
        fs->dir[--l] = '\0';
    hmap_init(&fs->by_path);
    hmap_init(&fs->objects);
    return &fs->base;
}
