/*
 * store_kube.c - see store_kube.h.
 *
 * The watch threads parse what they read into objects and queue them,
 * waking the run loop through a pipe; dispatch (the main thread) turns
 * the queue into changes against what it delivered last (the "held" map),
 * so a watch opened again that repeats an object, or a list made again
 * after 410 Gone, gives the host exactly the differences.
 */
#include "config.h"

#include "store_kube.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "edit.h"
#include "hmap.h"
#include "kubeapi.h"
#include "log.h"
#include "util.h"
#include "verchain.h"
#include "wqueue.h"

#define LIST_PAGE 500
#define REBASE_TRIES 3

/* A queued write (wqueue.h); its state: 0 to write, 1 written, 2
 * failed (why says). */
typedef wq_write kwrite;

enum { Q_PUT, Q_DELETE, Q_RESYNC };
typedef struct qitem {
    int type;
    trellis_object *o;    /* Q_PUT, Q_DELETE */
    char *kind;           /* Q_RESYNC: every object of kind, listed again */
    trellis_object **all; /* one reference each */
    size_t n_all;
} qitem;

struct kube_store;
typedef struct kwatch {
    struct kube_store *s;
    char *kind;
    const kube_resource *r;
    char *rv; /* where the watch resumes */
    pthread_t thr;
    int thr_on;
    int gone; /* 410: list again */
    char error[512];
    long said; /* the kind of trouble logged as a warning (not repeated while it
                * lasts): an HTTP status, TROUBLE_NO_ANSWER or TROUBLE_UNSERVED; 0 none */
} kwatch;

typedef struct kube_store {
    store base; /* first */
    kubeapi *api;
    uint32_t watch_timeout_ms;
    atomic_uint_fast64_t next_version;
    pthread_mutex_t mu; /* the queued writes, the kinds, the counts */
    wqueue pend;        /* the writes queued */
    verchain *vc;       /* the resourceVersions its own patches made */
    char **kinds;
    size_t n_kinds;
    size_t writes, requests;
    /* following */
    int want_watch, listed;
    kwatch *w;
    size_t n_w;
    atomic_int stop;
    int pipe[2];
    pthread_mutex_t qmu; /* the queue */
    pthread_cond_t qcv;  /* the threads' backoff, cut short by stop */
    qitem *q;
    size_t n_q, cap_q;
    /* the main thread's: what dispatch delivered last */
    hmap held; /* id -> trellis_object, one reference */
} kube_store;

/* ---- objects ---- */

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static const char *rv_of(const trellis_object *o)
{
    const char *rv = value_string(object_get(o, "metadata.resourceVersion"));
    return rv ? rv : "";
}

/* The object j holds (one reference of j is taken over), its kind and
 * apiVersion filled in from r when a list left them out. NULL with err. */
static trellis_object *to_object(kube_store *s, json_object *j, const kube_resource *r, char *err,
                                 size_t errlen)
{
    if (!json_object_is_type(j, json_type_object)) {
        json_object_put(j);
        errf(err, errlen, "not a JSON object");
        return NULL;
    }
    if (r && !jstr(j, "kind"))
        json_object_object_add(j, "kind", json_object_new_string(r->kind));
    if (r && !jstr(j, "apiVersion"))
        json_object_object_add(j, "apiVersion", json_object_new_string(r->api_version));
    trellis_object *o = object_new(j, err, errlen);
    if (o)
        o->version = atomic_fetch_add(&s->next_version, 1) + 1;
    return o;
}

/* ---- reading ---- */

static int qs_escape_char(char ch)
{
    return !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '-' || ch == '_' || ch == '.' || ch == '~');
}

/* s escaped for a query string, appended to b. */
static void sb_query(strbuf *b, const char *s)
{
    for (; *s; s++) {
        if (qs_escape_char(*s))
            sb_printf(b, "%%%02X", (unsigned char)*s);
        else
            sb_add(b, s, 1);
    }
}

/* Every object of r in pages; *rv the list's resourceVersion (new string).
 * 0, or -1 with err. Objects that are not readable are logged and left
 * out. */
static int list_kind(kube_store *s, const kube_resource *r, trellis_object ***objs, size_t *n,
                     char **rv, manifest_set *errors, long *failed, char *err, size_t errlen)
{
    size_t cap = 0;
    char *cont = NULL;
    *objs = NULL;
    *n = 0;
    *rv = NULL;
    char *base = kubeapi_path(r, NULL, NULL, NULL);
    int rc = 0, restarts = 0;
    for (;;) {
        strbuf p;
        sb_init(&p);
        sb_printf(&p, "%s?limit=%d", base, LIST_PAGE);
        if (cont) {
            sb_puts(&p, "&continue=");
            sb_query(&p, cont);
        }
        long status;
        json_object *reply;
        int hr = kubeapi_call(s->api, "GET", p.s, NULL, NULL, &status, &reply, err, errlen);
        sb_free(&p);
        if (hr != HTTPC_ANSWERED || !reply || status != 200) {
            if (hr == HTTPC_ANSWERED && status == 410 && cont && restarts++ < REBASE_TRIES) {
                /* the continue token expired: start over (a few times: a
                 * list that always outlasts the token would never end) */
                json_object_put(reply);
                free(cont);
                cont = NULL;
                for (size_t i = 0; i < *n; i++)
                    object_unref((*objs)[i]);
                *n = 0;
                continue;
            }
            const char *hint =
                status == 404 ? " (the API server does not serve it: is its "
                                "CustomResourceDefinition installed?)"
                : status == 410 && cont
                    ? " (its continue token expired again and again: the list takes longer "
                      "than the server keeps it)"
                    : "";
            if (hr == HTTPC_ANSWERED && reply)
                errf(err, errlen, "GET %s: HTTP %ld: %s%s", base, status, kubeapi_message(reply),
                     hint);
            else if (hr == HTTPC_ANSWERED && !reply)
                errf(err, errlen, "GET %s: HTTP %ld%s", base, status, hint);
            json_object_put(reply);
            if (failed)
                *failed = hr == HTTPC_ANSWERED ? status : 0;
            rc = -1;
            break;
        }
        json_object *md, *items;
        json_object_object_get_ex(reply, "metadata", &md);
        const char *lrv = jstr(md, "resourceVersion"), *next = jstr(md, "continue");
        if (lrv) {
            free(*rv);
            *rv = xstrdup(lrv);
        }
        size_t ni = json_object_object_get_ex(reply, "items", &items) &&
                            json_object_is_type(items, json_type_array)
                        ? json_object_array_length(items)
                        : 0;
        for (size_t i = 0; i < ni; i++) {
            json_object *it = json_object_get(json_object_array_get_idx(items, i));
            char why[512];
            trellis_object *o = to_object(s, it, r, why, sizeof why);
            if (!o) {
                char where[512];
                snprintf(where, sizeof where, "%s (%s, item %zu)", kubeapi_server(s->api), base, i);
                if (errors)
                    manifest_add_error(errors, where, 0, 0, xstrdup(why));
                else
                    log_warn("kubernetes store: %s: %s; skipped", where, why);
                continue;
            }
            grow(objs, &cap, *n + 1, sizeof **objs);
            (*objs)[(*n)++] = o;
        }
        free(cont);
        cont = next && *next ? xstrdup(next) : NULL;
        json_object_put(reply);
        if (!cont)
            break;
    }
    free(cont);
    free(base);
    if (rc < 0) {
        for (size_t i = 0; i < *n; i++)
            object_unref((*objs)[i]);
        free(*objs);
        *objs = NULL;
        *n = 0;
        free(*rv);
        *rv = NULL;
    }
    return rc;
}

static void held_clear(kube_store *s)
{
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&s->held, &i)))
        object_unref(sl->val);
    hmap_free(&s->held);
    hmap_init(&s->held);
}

static void start_watches(kube_store *s);

static void watches_free(kube_store *s)
{
    for (size_t i = 0; i < s->n_w; i++) {
        free(s->w[i].kind);
        free(s->w[i].rv);
    }
    free(s->w);
    s->w = NULL;
    s->n_w = 0;
}

static int ks_list(store *st, manifest_set *out, char *err, size_t errlen)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    size_t nk = s->n_kinds;
    char **kinds = xcalloc(nk ? nk : 1, sizeof *kinds);
    for (size_t i = 0; i < nk; i++)
        kinds[i] = xstrdup(s->kinds[i]);
    pthread_mutex_unlock(&s->mu);
    int rc = 0;
    if (!nk)
        rc = errf(err, errlen,
                  "the Kubernetes API store %s reads only the kinds it is told: name them in "
                  "store.kinds = [ \"Pod\", \"Node\" ] (trellis run and schedule tell it "
                  "their profiles' kinds)",
                  kubeapi_server(s->api));
    held_clear(s);
    kwatch *w = xcalloc(nk ? nk : 1, sizeof *w);
    size_t nw = 0;
    for (size_t i = 0; i < nk && rc == 0; i++) {
        char e[1024];
        const kube_resource *r = kubeapi_resource(s->api, NULL, kinds[i], e, sizeof e);
        if (!r) {
            if (strstr(e, "cannot read")) {
                rc = errf(err, errlen, "%s", e);
                break;
            }
            if (!s->want_watch) {
                log_warn("kubernetes store: %s; nothing of kind %s is read", e, kinds[i]);
                continue;
            }
            /* followed: its watch finds it once it is served (a CRD
             * installed after the host started), and says so meanwhile */
            w[nw++] = (kwatch){.s = s, .kind = xstrdup(kinds[i])};
            continue;
        }
        trellis_object **objs;
        size_t n;
        char *rv;
        if (list_kind(s, r, &objs, &n, &rv, out, NULL, e, sizeof e) < 0) {
            rc = errf(err, errlen, "the Kubernetes API store %s: cannot list %s: %s",
                      kubeapi_server(s->api), kinds[i], e);
            break;
        }
        for (size_t k = 0; k < n; k++) {
            grow(&out->objects, &out->cap_objects, out->n_objects + 1, sizeof *out->objects);
            out->objects[out->n_objects++] = objs[k];
            object_unref(hmap_put(&s->held, objs[k]->id, object_ref(objs[k])));
        }
        free(objs);
        w[nw++] = (kwatch){.s = s, .kind = xstrdup(kinds[i]), .r = r, .rv = rv};
    }
    for (size_t i = 0; i < nk; i++)
        free(kinds[i]);
    free(kinds);
    if (rc < 0) {
        for (size_t i = 0; i < nw; i++) {
            free(w[i].kind);
            free(w[i].rv);
        }
        free(w);
        return -1;
    }
    if (!s->n_w) { /* the first list: these are what the watches follow */
        s->w = w;
        s->n_w = nw;
    } else {
        for (size_t i = 0; i < nw; i++) {
            free(w[i].kind);
            free(w[i].rv);
        }
        free(w);
    }
    s->listed = 1;
    if (s->want_watch)
        start_watches(s);
    return 0;
}

/* The object as the server has it, or NULL (*gone when the server said
 * 404, not for another failure, which is logged). */
static trellis_object *get_object(kube_store *s, const char *kind, const char *ns, const char *name,
                                  int *gone)
{
    char err[1024];
    *gone = 0;
    const kube_resource *r = kubeapi_resource(s->api, NULL, kind, err, sizeof err);
    if (!r) {
        log_warn("kubernetes store: get %s %s: %s", kind, name, err);
        return NULL;
    }
    char *path = kubeapi_path(r, ns, name, NULL);
    long status;
    json_object *reply;
    int hr = kubeapi_call(s->api, "GET", path, NULL, NULL, &status, &reply, err, sizeof err);
    trellis_object *o = NULL;
    if (hr == HTTPC_ANSWERED && status == 200 && reply) {
        o = to_object(s, reply, r, err, sizeof err);
        reply = NULL;
        if (!o)
            log_warn("kubernetes store: GET %s: %s; skipped", path, err);
    } else if (hr == HTTPC_ANSWERED && status == 404) {
        *gone = 1;
    } else {
        log_warn("kubernetes store: GET %s: %s", path,
                 hr == HTTPC_ANSWERED ? kubeapi_message(reply) : err);
    }
    json_object_put(reply);
    free(path);
    return o;
}

static trellis_object *ks_get(store *st, const char *kind, const char *ns, const char *name)
{
    int gone;
    return get_object((kube_store *)st, kind, ns, name, &gone);
}

/* ---- queued writes ---- */

static int ks_patch(store *st, const trellis_object *o, const char *sub, const store_edit *edits,
                    size_t n, char *err, size_t errlen)
{
    kube_store *s = (kube_store *)st;
    /* metadata.deletionTimestamp is the server's to set: a patch that
     * sets it (a plugin marks an object deleted, as a directory of
     * manifests keeps that) is a DELETE after the patch's other edits,
     * and the server marks the object so while finalizers hold it */
    size_t k = n;
    for (size_t i = 0; i < n && !sub; i++)
        if (edits[i].op == STORE_SET && edits[i].value &&
            strcmp(edits[i].path, "metadata.deletionTimestamp") == 0)
            k = i;
    store_edit *rest = NULL;
    if (k < n) {
        rest = xcalloc(n, sizeof *rest);
        memcpy(rest, edits, k * sizeof *rest);
        memcpy(rest + k, edits + k + 1, (n - k - 1) * sizeof *rest);
    }
    pthread_mutex_lock(&s->mu);
    int rc = k == n  ? wqueue_patch(&s->pend, o, sub, edits, n, 1, err, errlen)
             : n > 1 ? wqueue_patch(&s->pend, o, sub, rest, n - 1, 1, err, errlen)
                     : 0;
    if (rc == 0 && k < n)
        rc = wqueue_add(&s->pend, o, WQ_REMOVE, 1, err, errlen);
    pthread_mutex_unlock(&s->mu);
    free(rest);
    return rc;
}

static trellis_object *ks_create(store *st, trellis_object *o, char *err, size_t errlen)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    int rc = wqueue_add(&s->pend, o, WQ_CREATE, 1, err, errlen);
    pthread_mutex_unlock(&s->mu);
    return rc == 0 ? object_ref(o) : NULL;
}

static int ks_remove(store *st, const trellis_object *o, char *err, size_t errlen)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    int rc = wqueue_add(&s->pend, o, WQ_REMOVE, 1, err, errlen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* ---- flush ---- */

static void fail(kwrite *w, const char *fmt, ...) UTIL_PRINTF(2, 3);
static void fail(kwrite *w, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    w->state = 2;
    free(w->why);
    w->why = xstrdup(buf);
}

/* The JSON merge patch (RFC 7386) that turns a into b: a new object. */
static json_object *merge_diff(json_object *a, json_object *b)
{
    json_object *d = json_object_new_object();
    json_object_object_foreach(b, key, bv)
    {
        json_object *av = NULL;
        int had = json_object_object_get_ex(a, key, &av);
        if (had && json_object_equal(av, bv))
            continue;
        if (had && json_object_is_type(av, json_type_object) &&
            json_object_is_type(bv, json_type_object))
            json_object_object_add(d, key, merge_diff(av, bv));
        else
            json_object_object_add(d, key, json_object_get(bv));
    }
    json_object_object_foreach(a, akey, av2)
    {
        (void)av2;
        if (!json_object_object_get_ex(b, akey, NULL))
            json_object_object_add(d, akey, NULL);
    }
    return d;
}

static char *jtext(json_object *j)
{
    return xstrdup(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* The merge patch of edits[0..n) made on base: the changes, restricted to
 * status for the status subresource, with base's resourceVersion as the
 * precondition. NULL with err. */
static char *patch_body(const store_edit *edits, size_t n, const trellis_object *base,
                        int status_only, char *err, size_t errlen)
{
    trellis_object *nw = edit_apply_object(base, edits, n, err, errlen);
    if (!nw)
        return NULL;
    json_object *a = object_to_json(base), *b = object_to_json(nw);
    object_unref(nw);
    json_object *d = merge_diff(a, b);
    if (status_only) {
        json_object *st = NULL;
        json_object_object_get_ex(d, "status", &st);
        json_object *only = json_object_new_object();
        if (st)
            json_object_object_add(only, "status", json_object_get(st));
        json_object_put(d);
        d = only;
    }
    json_object *md;
    if (!json_object_object_get_ex(d, "metadata", &md)) {
        md = json_object_new_object();
        json_object_object_add(d, "metadata", md);
    }
    const char *rv = rv_of(base);
    if (*rv)
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    char *text = jtext(d);
    json_object_put(a);
    json_object_put(b);
    json_object_put(d);
    return text;
}

static void count_request(kube_store *s)
{
    pthread_mutex_lock(&s->mu);
    s->requests++;
    pthread_mutex_unlock(&s->mu);
}

/* A request of a write; 0 answered (status, reply set), -1 failed w.
 * The fence is asked before each one, not once a flush: a flush of
 * thousands of writes lasts longer than a Lease, and a host that lost
 * its Lease meanwhile sends nothing more. */
static int send(kube_store *s, kwrite *w, const char *method, const char *path, const char *body,
                const char *ctype, long *status, json_object **reply)
{
    char err[512];
    *status = 0;
    *reply = NULL;
    if (s->base.fence && !s->base.fence(s->base.fence_ud, err, sizeof err)) {
        fail(w, "%s", err);
        return -1;
    }
    count_request(s);
    int hr = kubeapi_call(s->api, method, path, body, ctype, status, reply, err, sizeof err);
    if (hr == HTTPC_ANSWERED)
        return 0;
    fail(w, "%s %s: %s%s", method, path, err,
         hr == HTTPC_FAILED ? " (it may have been made: the watch will tell)" : "");
    return -1;
}

static const char *MERGE = "application/merge-patch+json";

/* Bind a Pod: a Binding posted to its binding subresource. The edit that
 * sets a string outside metadata names the target; annotation edits go
 * into the Binding (the API server copies them onto the Pod). */
static void remove_as(kube_store *s, kwrite *w, const kube_resource *r, const trellis_object *o);

static void bind_object(kube_store *s, kwrite *w, const kube_resource *r)
{
    const trellis_object *o = w->o;
    const char *target = NULL;
    json_object *ann = json_object_new_object();
    for (size_t i = 0; i < w->n_edits; i++) {
        const store_edit *e = &w->edits[i];
        const char *key = NULL;
        if (strncmp(e->path, "metadata.annotations[\"", 22) == 0)
            key = e->path + 22;
        else if (strncmp(e->path, "metadata.annotations.", 21) == 0)
            key = e->path + 21;
        if (key && e->op == STORE_SET && e->value) {
            size_t kl = strcspn(key, "\"");
            char *k = xasprintf("%.*s", (int)kl, key);
            json_object_object_add(ann, k, json_object_new_string(e->value));
            free(k);
        } else if (!key && e->op == STORE_SET && !target) {
            target = e->value;
            if (!target) {
                /* a binding cannot be undone through the API: the
                 * workload is deleted (its controller makes a new one),
                 * as kube-scheduler deletes a preemption victim */
                json_object_put(ann);
                remove_as(s, w, r, w->o);
                return;
            }
        } else {
            json_object_put(ann);
            fail(w, "%s %s: %s cannot be written with a Binding (only the target and annotations)",
                 o->kind, o->key, e->path);
            return;
        }
    }
    if (!target) {
        json_object_put(ann);
        fail(w, "%s %s: a binding names no target", o->kind, o->key);
        return;
    }
    json_object *b = json_object_new_object(), *md = json_object_new_object(),
                *t = json_object_new_object();
    json_object_object_add(b, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(b, "kind", json_object_new_string("Binding"));
    json_object_object_add(md, "name", json_object_new_string(o->name));
    if (*o->namespace_)
        json_object_object_add(md, "namespace", json_object_new_string(o->namespace_));
    const char *uid = value_string(object_get(o, "metadata.uid"));
    if (uid)
        json_object_object_add(md, "uid", json_object_new_string(uid));
    if (json_object_object_length(ann))
        json_object_object_add(md, "annotations", ann);
    else
        json_object_put(ann);
    json_object_object_add(b, "metadata", md);
    json_object_object_add(t, "name", json_object_new_string(target));
    json_object_object_add(b, "target", t);
    char *body = jtext(b);
    json_object_put(b);
    char *path = kubeapi_path(r, o->namespace_, o->name, "binding");
    long status;
    json_object *reply;
    if (send(s, w, "POST", path, body, NULL, &status, &reply) == 0) {
        if (status == 200 || status == 201)
            w->state = 1;
        else
            fail(w, "%s %s: bind to %s: HTTP %ld: %s", o->kind, o->key, target, status,
                 kubeapi_message(reply));
        json_object_put(reply);
    }
    free(body);
    free(path);
}

/* Whether every edit of edits[0..n) is a list edit (made again against
 * the object as it is now when the server refuses the version). */
static int list_edits_only(const store_edit *edits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (edits[i].op < STORE_LIST_ADD)
            return 0;
    return n > 0;
}

/* Whether every edit of edits[0..n) takes an item off a list: nothing
 * is left to do on an object that is gone. */
static int removals_only(const store_edit *edits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (edits[i].op != STORE_LIST_REMOVE)
            return 0;
    return n > 0;
}

/* After a 409 on a write made on version rv of o: the object as the
 * server has it now when the write may be made again on it (any change,
 * with lists_only: a patch of list edits; else only this host's own
 * writes since rv), else NULL: *gone when the server says it is no more
 * (not when it could not be read). */
static trellis_object *again_on(kube_store *s, const trellis_object *o, const char *rv,
                                int lists_only, int *gone)
{
    trellis_object *cur = get_object(s, o->kind, o->namespace_, o->name, gone);
    if (cur && !lists_only && !verchain_own_between(s->vc, o->id, rv, rv_of(cur))) {
        object_unref(cur);
        cur = NULL;
    }
    return cur;
}

/* One PATCH of edits[0..n) made on base, of the object or its
 * subresource sub ("status": the changes to the status alone); with
 * after, the object as the server answered (a reference, or NULL when the
 * patch only took items off lists of an object that is gone). 0, or -1
 * with w failed. */
static int patch_part(kube_store *s, kwrite *w, const kube_resource *r, const char *sub,
                      const store_edit *edits, size_t n, const trellis_object *base_in,
                      trellis_object **after)
{
    const trellis_object *o = w->o;
    int status_only = sub && strcmp(sub, "status") == 0, rc = -1;
    char *path = kubeapi_path(r, o->namespace_, o->name, sub);
    trellis_object *base = object_ref((trellis_object *)base_in);
    for (int tries = 0;; tries++) {
        char err[512];
        const char *rv = rv_of(base);
        char *body = patch_body(edits, n, base, status_only, err, sizeof err);
        if (!body) {
            fail(w, "%s %s: %s", o->kind, o->key, err);
            break;
        }
        long status;
        json_object *reply;
        int sent = send(s, w, "PATCH", path, body, MERGE, &status, &reply);
        free(body);
        if (sent < 0)
            break;
        trellis_object *cur;
        int gone = 0;
        if (status == 200 || status == 201) {
            rc = 0;
            json_object *rmd;
            if (reply && json_object_object_get_ex(reply, "metadata", &rmd) &&
                jstr(rmd, "resourceVersion"))
                verchain_wrote(s->vc, o->id, rv, jstr(rmd, "resourceVersion"));
            if (after) {
                *after = reply ? to_object(s, json_object_get(reply), r, err, sizeof err) : NULL;
                if (!*after) {
                    rc = -1;
                    fail(w, "%s %s: patched, but the API server's answer is no object: %s", o->kind,
                         o->key, err);
                }
            }
        } else if (status == 409 && tries < REBASE_TRIES &&
                   (cur = again_on(s, o, rv, list_edits_only(edits, n), &gone))) {
            /* made again on the object as it is now: a patch of lists
             * (added to or taken from), or one whose object changed
             * only by this host's own writes since the copy it was made
             * on (the watch had not brought them yet) */
            json_object_put(reply);
            object_unref(base);
            base = cur;
            continue;
        } else if (status == 409 && gone) {
            fail(w, "%s %s: it is gone", o->kind, o->key);
        } else if (status == 404 && removals_only(edits, n)) {
            /* gone (an earlier write took its last finalizer off): nothing
             * left to take off; *after stays NULL */
            rc = 0;
        } else if (status == 409) {
            fail(w, "%s %s changed in the API server since it was read (HTTP 409: %s)", o->kind,
                 o->key, kubeapi_message(reply));
        } else if (status == 422 && sub && strcmp(sub, "binding") == 0) {
            fail(w, "%s %s: HTTP 422: %s", o->kind, o->key, kubeapi_message(reply));
        } else if (status == 422) {
            fail(w, "%s %s: the API server refused the patch (HTTP 422: %s)%s", o->kind, o->key,
                 kubeapi_message(reply),
                 r->binding == KUBE_BINDING_OBJECT
                     ? "; a "
                       "bound field of this kind is written through its binding "
                       "subresource: set binding.subresource = \"binding\" in the profile"
                     : "");
        } else {
            fail(w, "%s %s: HTTP %ld: %s", o->kind, o->key, status, kubeapi_message(reply));
        }
        json_object_put(reply);
        break;
    }
    object_unref(base);
    free(path);
    return rc;
}

/* Whether an edit of edits[0..n) that went through the status
 * subresource (in_status[i], or all when in_status is NULL) is outside
 * the status, which is all the server takes through it: w failed, saying
 * what would be lost rather than reporting it written. */
static int outside_status(kwrite *w, const store_edit *edits, const unsigned char *in_status,
                          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = edits[i].path;
        if ((!in_status || in_status[i]) &&
            (strncmp(p, "status", 6) != 0 || (p[6] && p[6] != '.' && p[6] != '['))) {
            fail(w,
                 "%s %s: %s is outside the status, which is all the status subresource "
                 "writes: patch it without the subresource",
                 w->o->kind, w->o->key, p);
            return 1;
        }
    }
    return 0;
}

/* A patch of the object and one of its status queued together: the
 * object's edits first, then the status's made on the object the server
 * answered (its resourceVersion the precondition), two requests in that
 * order, as a controller sends them. */
static void patch_both(kube_store *s, kwrite *w, const kube_resource *r)
{
    if (outside_status(w, w->edits, w->in_status, w->n_edits))
        return;
    store_edit *v = xcalloc(w->n_edits, sizeof *v);
    size_t nm = 0;
    for (size_t i = 0; i < w->n_edits; i++) /* the object's, in order */
        if (!w->in_status[i])
            v[nm++] = w->edits[i];
    for (size_t i = 0, k = nm; i < w->n_edits; i++) /* then the status's */
        if (w->in_status[i])
            v[k++] = w->edits[i];
    trellis_object *after = NULL;
    if (patch_part(s, w, r, NULL, v, nm, w->o, &after) == 0) {
        if (!after)
            fail(w, "%s %s: it is gone", w->o->kind, w->o->key);
        else if (patch_part(s, w, r, "status", v + nm, w->n_edits - nm, after, NULL) == 0)
            w->state = 1;
    }
    if (after)
        object_unref(after);
    free(v);
}

static void patch_one(kube_store *s, kwrite *w, const kube_resource *r)
{
    size_t in_status = 0;
    for (size_t i = 0; i < w->n_edits; i++)
        in_status += w->in_status[i];
    if (r->has_status && in_status && in_status < w->n_edits) {
        patch_both(s, w, r);
        return;
    }
    const char *sub = NULL;
    if (w->sub && strcmp(w->sub, "status") == 0 && r->has_status) {
        if (outside_status(w, w->edits, NULL, w->n_edits))
            return;
        sub = "status";
    } else if (w->sub && strcmp(w->sub, "binding") == 0 && r->binding == KUBE_BINDING_OBJECT) {
        bind_object(s, w, r);
        return;
    } else if (w->sub && strcmp(w->sub, "binding") == 0 && r->binding == KUBE_BINDING_PATCH) {
        sub = "binding";
    }
    if (patch_part(s, w, r, sub, w->edits, w->n_edits, w->o, NULL) == 0)
        w->state = 1;
}

static void create_one(kube_store *s, kwrite *w, const kube_resource *r)
{
    const trellis_object *o = w->o;
    json_object *j = object_to_json(o), *md, *st = NULL;
    if (json_object_object_get_ex(j, "metadata", &md)) {
        static const char *const server_owned[] = {
            "resourceVersion", "uid", "creationTimestamp", "managedFields", "selfLink", NULL};
        for (const char *const *k = server_owned; *k; k++)
            json_object_object_del(md, *k);
    }
    if (r->has_status && json_object_object_get_ex(j, "status", &st))
        st = json_object_get(st);
    char *body = jtext(j);
    json_object_put(j);
    char *path = kubeapi_path(r, o->namespace_, NULL, NULL);
    long status;
    json_object *reply;
    if (send(s, w, "POST", path, body, NULL, &status, &reply) == 0) {
        if (status == 200 || status == 201) {
            w->state = 1;
        } else if (status == 409) {
            fail(w, "%s %s exists already in the API server", o->kind, o->key);
        } else if (status == 404 && *o->namespace_ && reply &&
                   strstr(kubeapi_message(reply), "namespaces \"")) {
            fail(w, "%s %s: HTTP 404: %s (create the Namespace %s first)", o->kind, o->key,
                 kubeapi_message(reply), o->namespace_);
        } else if (status == 404) {
            /* the kind's resource is gone: its CRD deleted since it was read */
            fail(w,
                 "%s %s: HTTP 404: the API server %s no longer serves %s (was its "
                 "CustomResourceDefinition deleted?)",
                 o->kind, o->key, kubeapi_server(s->api), path);
        } else {
            fail(w, "%s %s: HTTP %ld: %s", o->kind, o->key, status, kubeapi_message(reply));
        }
        /* the status, which a creation leaves out, through its subresource */
        json_object *rmd;
        if (w->state == 1 && st && reply && json_object_object_get_ex(reply, "metadata", &rmd)) {
            json_object *p = json_object_new_object(), *pmd = json_object_new_object();
            json_object_object_add(p, "status", json_object_get(st));
            const char *rv = jstr(rmd, "resourceVersion");
            if (rv)
                json_object_object_add(pmd, "resourceVersion", json_object_new_string(rv));
            json_object_object_add(p, "metadata", pmd);
            char *sbody = jtext(p);
            json_object_put(p);
            char *spath = kubeapi_path(r, o->namespace_, o->name, "status");
            long sst;
            json_object *sreply;
            if (send(s, w, "PATCH", spath, sbody, MERGE, &sst, &sreply) == 0 && sst != 200)
                fail(w, "%s %s: created, but its status was not written: HTTP %ld: %s", o->kind,
                     o->key, sst, kubeapi_message(sreply));
            json_object_put(sreply);
            free(sbody);
            free(spath);
        }
        /* an object being deleted is deleted once made, so that the
         * server marks it so (it stays while its finalizers do) */
        if (w->state == 1 && object_being_deleted(o)) {
            const char *uid = NULL;
            if (reply && json_object_object_get_ex(reply, "metadata", &rmd))
                uid = jstr(rmd, "uid");
            char *dbody = uid ? xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\","
                                          "\"preconditions\":{\"uid\":\"%s\"}}",
                                          uid)
                              : NULL;
            char *dpath = kubeapi_path(r, o->namespace_, o->name, NULL);
            long dst;
            json_object *dreply;
            if (send(s, w, "DELETE", dpath, dbody, NULL, &dst, &dreply) == 0 && dst != 200 &&
                dst != 202)
                fail(w, "%s %s: created, but not marked as being deleted: HTTP %ld: %s", o->kind,
                     o->key, dst, kubeapi_message(dreply));
            json_object_put(dreply);
            free(dbody);
            free(dpath);
        }
        json_object_put(reply);
    }
    json_object_put(st);
    free(body);
    free(path);
}

/* Delete the object, o as last seen (its resourceVersion and uid the
 * preconditions); made again on the object as it is now when it changed
 * only by this host's own writes since. */
static void remove_as(kube_store *s, kwrite *w, const kube_resource *r, const trellis_object *o_in)
{
    trellis_object *o = object_ref((trellis_object *)o_in);
    char *path = kubeapi_path(r, o->namespace_, o->name, NULL);
    for (int tries = 0;; tries++) {
        json_object *d = json_object_new_object(), *pre = json_object_new_object();
        json_object_object_add(d, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(d, "kind", json_object_new_string("DeleteOptions"));
        const char *rv = rv_of(o), *uid = value_string(object_get(o, "metadata.uid"));
        if (*rv)
            json_object_object_add(pre, "resourceVersion", json_object_new_string(rv));
        if (uid)
            json_object_object_add(pre, "uid", json_object_new_string(uid));
        json_object_object_add(d, "preconditions", pre);
        char *body = jtext(d);
        json_object_put(d);
        long status;
        json_object *reply;
        int sent = send(s, w, "DELETE", path, body, NULL, &status, &reply);
        free(body);
        if (sent < 0)
            break;
        trellis_object *cur;
        int gone = 0;
        if (status == 200 || status == 202 || status == 404) {
            w->state = 1; /* 404: gone already */
        } else if (status == 409 && tries < REBASE_TRIES && (cur = again_on(s, o, rv, 0, &gone))) {
            json_object_put(reply);
            object_unref(o);
            o = cur;
            continue;
        } else if (status == 409 && gone) {
            w->state = 1; /* gone meanwhile */
        } else if (status == 409) {
            fail(w, "%s %s changed in the API server since it was read (HTTP 409: %s)", o->kind,
                 o->key, kubeapi_message(reply));
        } else {
            fail(w, "%s %s: HTTP %ld: %s", o->kind, o->key, status, kubeapi_message(reply));
        }
        json_object_put(reply);
        break;
    }
    object_unref(o);
    free(path);
}

/* A patch, then a removal of the object: the patch (every edit, the
 * object's), then the DELETE made on what the server answered, so that
 * a finalizer taken off is off before the object goes (with it on, the
 * server would keep the object, being deleted, for good). */
static void patch_then_remove(kube_store *s, kwrite *w, const kube_resource *r)
{
    trellis_object *after = NULL;
    if (patch_part(s, w, r, NULL, w->edits, w->n_edits, w->o, &after) == 0 && !after)
        w->state = 1; /* gone already */
    else if (after)
        remove_as(s, w, r, after);
    if (after)
        object_unref(after);
}

static void write_one(kube_store *s, kwrite *w)
{
    char err[1024];
    const trellis_object *o = w->o;
    const kube_resource *r = kubeapi_resource(s->api, o->api_version, o->kind, err, sizeof err);
    if (!r) {
        fail(w, "%s", err);
        return;
    }
    if (w->op == WQ_CREATE)
        create_one(s, w, r);
    else if (w->op == WQ_REMOVE)
        remove_as(s, w, r, w->o);
    else if (w->then_remove)
        patch_then_remove(s, w, r);
    else
        patch_one(s, w, r);
}

/* The phase of a write, the highest first: creations of cluster-scoped
 * objects (Namespaces, Nodes, CRDs), as a namespaced object cannot be made
 * before its Namespace (2); then the other writes (1); Bindings last (0),
 * after a status patch of the same Pod, whose resourceVersion
 * precondition a binding would break. */
static int first_phase(kube_store *s, const kwrite *w)
{
    if (wq_write_is_binding(w))
        return 0;
    if (w->op != WQ_CREATE)
        return 1;
    char err[512];
    const kube_resource *r =
        kubeapi_resource(s->api, w->o->api_version, w->o->kind, err, sizeof err);
    return r && !r->namespaced ? 2 : 1;
}

typedef struct round {
    kube_store *s;
    kwrite *w;
    size_t n;
    int phase; /* first_phase of the writes of this round */
    atomic_size_t next;
} round;

static void *round_worker(void *arg)
{
    round *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n)
            break;
        if (first_phase(r->s, &r->w[i]) == r->phase)
            write_one(r->s, &r->w[i]);
    }
    return NULL;
}

static int ks_flush(store *st, store_fail_cb failed, void *ud, char *err, size_t errlen)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    size_t n;
    kwrite *w = wqueue_take(&s->pend, &n);
    pthread_mutex_unlock(&s->mu);
    if (!n)
        return 0;
    char why[512] = "";
    int blocked = s->base.dry_run ? 2 : 0;
    if (!blocked && s->base.fence && !s->base.fence(s->base.fence_ud, why, sizeof why))
        blocked = 1;
    for (int phase = 2; phase >= 0 && !blocked; phase--) {
        round r = {.s = s, .w = w, .n = n, .phase = phase};
        pthread_t t[KUBEAPI_CONNS];
        size_t nt = 0;
        while (nt + 1 < KUBEAPI_CONNS && nt + 1 < n &&
               pthread_create(&t[nt], NULL, round_worker, &r) == 0)
            nt++;
        round_worker(&r);
        for (size_t i = 0; i < nt; i++)
            pthread_join(t[i], NULL);
    }
    strbuf problems;
    sb_init(&problems);
    /* a Pod bound in this flush is bound, whatever became of a status
     * patch of it beside the Binding (both name the Pod's id) */
    hmap bound;
    hmap_init(&bound);
    for (size_t i = 0; i < n; i++)
        if (w[i].state == 1 && strcmp(w[i].ix, w[i].id) != 0)
            hmap_put(&bound, w[i].id, &w[i]);
    for (size_t i = 0; i < n; i++) {
        if (w[i].state == 0 && blocked == 1)
            fail(&w[i], "%s", why);
        if (w[i].state == 2) {
            if (failed && !(strcmp(w[i].ix, w[i].id) == 0 && hmap_get(&bound, w[i].id)))
                failed(ud, w[i].id, w[i].why);
            if (problems.len < 4096)
                sb_printf(&problems, "%s%s: %s", problems.len ? "; " : "", w[i].id, w[i].why);
        }
        if (w[i].state == 1) {
            pthread_mutex_lock(&s->mu);
            s->writes++;
            pthread_mutex_unlock(&s->mu);
        }
        wq_write_free(&w[i]);
    }
    hmap_free(&bound);
    free(w);
    int rc = problems.len ? errf(err, errlen, "%s", problems.s) : 0;
    sb_free(&problems);
    return rc;
}

/* ---- following ---- */

static void enqueue(kube_store *s, qitem *it)
{
    pthread_mutex_lock(&s->qmu);
    grow(&s->q, &s->cap_q, s->n_q + 1, sizeof *s->q);
    s->q[s->n_q++] = *it;
    pthread_mutex_unlock(&s->qmu);
    char c = 1;
    ssize_t wr = write(s->pipe[1], &c, 1);
    (void)wr;
}

static void set_rv(kwatch *w, const char *rv)
{
    if (!rv || !*rv)
        return;
    free(w->rv);
    w->rv = xstrdup(rv);
}

/* Kinds of a watch's trouble besides an HTTP status. */
enum { TROUBLE_NO_ANSWER = -1, TROUBLE_UNSERVED = -2 };

/* A watch's trouble, logged as a warning once while trouble of its kind
 * lasts (at debug level after that: a watch retried every few seconds
 * for hours would otherwise fill the log). The kind, not the words,
 * decides: a resource no longer served answers the watch and the list
 * with different 404s, and its texts change as the API server forgets
 * it; that is one trouble. */
static void watch_trouble(kwatch *w, long what, const char *fmt, ...) UTIL_PRINTF(3, 4);
static void watch_trouble(kwatch *w, long what, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (w->said == what) {
        log_debug("kubernetes store: %s", buf);
        return;
    }
    w->said = what;
    log_warn("kubernetes store: %s (said once while it lasts; tried again every few seconds)", buf);
}

/* The watch delivers again: say so when its trouble was said. */
static void watch_well(kwatch *w)
{
    if (!w->said)
        return;
    w->said = 0;
    log_info("kubernetes store: the watch of %s works again", w->kind);
}

static int on_watch_line(void *ud, const char *text, size_t len)
{
    kwatch *w = ud;
    int type;
    json_object *obj, *md = NULL;
    if (kubeapi_parse_event(text, len, &type, &obj, w->error, sizeof w->error) < 0)
        return 1; /* open the watch again rather than lose track */
    json_object_object_get_ex(obj, "metadata", &md);
    int stop = 0;
    if (type != KUBE_EV_ERROR)
        watch_well(w);
    if (type == KUBE_EV_BOOKMARK) {
        set_rv(w, jstr(md, "resourceVersion"));
    } else if (type == KUBE_EV_ERROR) {
        json_object *code;
        if (json_object_object_get_ex(obj, "code", &code) && json_object_get_int(code) == 410)
            w->gone = 1;
        snprintf(w->error, sizeof w->error, "the watch reported: %s", kubeapi_message(obj));
        stop = 1;
    } else {
        set_rv(w, jstr(md, "resourceVersion"));
        char why[512];
        trellis_object *o = to_object(w->s, json_object_get(obj), w->r, why, sizeof why);
        if (!o) {
            log_warn("kubernetes store: an event of the watch of %s: %s; skipped (the object "
                     "held before stays)",
                     w->kind, why);
        } else {
            qitem it = {.type = type == KUBE_EV_DELETED ? Q_DELETE : Q_PUT, .o = o};
            enqueue(w->s, &it);
        }
    }
    json_object_put(obj);
    return stop;
}

/* Wait ms unless told to stop: 1 when told. */
static int pause_ms(kube_store *s, uint32_t ms)
{
    struct timespec ts;
    clock_deadline(&ts, ms);
    pthread_mutex_lock(&s->qmu);
    while (!atomic_load(&s->stop))
        if (pthread_cond_timedwait(&s->qcv, &s->qmu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&s->qmu);
    return atomic_load(&s->stop);
}

static void *watch_thread(void *arg)
{
    kwatch *w = arg;
    kube_store *s = w->s;
    uint32_t backoff = 100;
    char *base = w->r ? kubeapi_path(w->r, NULL, NULL, NULL) : NULL;
    while (!atomic_load(&s->stop)) {
        if (!w->r) {
            /* a kind not served when the store was listed */
            char e[1024];
            const kube_resource *r = kubeapi_resource(s->api, NULL, w->kind, e, sizeof e);
            if (!r) {
                watch_trouble(w, TROUBLE_UNSERVED, "%s; %s is read once it is served", e, w->kind);
                if (pause_ms(s, 5000))
                    break;
                continue;
            }
            w->r = r;
            base = kubeapi_path(r, NULL, NULL, NULL);
            w->gone = 1; /* listed, and handed to the host as additions */
        }
        if (w->gone) {
            /* what was missed is gone: list again, dispatch diffs it */
            trellis_object **objs;
            size_t n;
            char *rv, err[1024];
            long failed;
            if (list_kind(s, w->r, &objs, &n, &rv, NULL, &failed, err, sizeof err) < 0) {
                watch_trouble(w, failed ? failed : TROUBLE_NO_ANSWER, "listing %s again: %s",
                              w->kind, err);
                if (pause_ms(s, backoff))
                    break;
                backoff = backoff < 5000 ? backoff * 2 : 5000;
                continue;
            }
            qitem it = {.type = Q_RESYNC, .kind = xstrdup(w->kind), .all = objs, .n_all = n};
            enqueue(s, &it);
            free(w->rv);
            w->rv = rv;
            w->gone = 0;
        }
        uint32_t timeout_s = s->watch_timeout_ms / 1000;
        strbuf p;
        sb_init(&p);
        sb_printf(&p, "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%u", base,
                  timeout_s ? timeout_s : 1);
        if (w->rv) {
            sb_puts(&p, "&resourceVersion=");
            sb_query(&p, w->rv);
        }
        char err[512];
        long status = 0;
        w->error[0] = '\0';
        char *before = w->rv ? xstrdup(w->rv) : NULL;
        int rc = kubeapi_stream(s->api, p.s, s->watch_timeout_ms + 30000, &s->stop, on_watch_line,
                                w, &status, err, sizeof err);
        sb_free(&p);
        if (atomic_load(&s->stop)) {
            free(before);
            break;
        }
        if (status == 410)
            w->gone = 1;
        if (status == 404) {
            /* the resource is no longer served (its CustomResourceDefinition
             * deleted): list it until it is again, and hand the host the
             * differences then */
            w->gone = 1;
            watch_trouble(w, 404,
                          "the watch of %s: %s: the API server %s no longer serves %s (was its "
                          "CustomResourceDefinition deleted?); %s is listed again once it does",
                          w->kind, err, kubeapi_server(s->api), base, w->kind);
            if (pause_ms(s, backoff))
                break;
            backoff = backoff < 5000 ? backoff * 2 : 5000;
            free(before);
            continue;
        }
        int progressed = !before != !w->rv || (before && strcmp(before, w->rv) != 0);
        free(before);
        if (rc == 1 && status == 200 && !w->error[0] && !w->gone) {
            backoff = 100;
            watch_well(w);
            continue; /* the server's timeout: watch on from where it was */
        }
        if (w->gone)
            log_info("kubernetes store: the watch of %s is too old (410 Gone): listing again",
                     w->kind);
        else if (rc < 0 || w->error[0])
            watch_trouble(w, status > 0 && status != 200 ? status : TROUBLE_NO_ANSWER,
                          "the watch of %s (%s) ended: %s; resuming from resourceVersion %s",
                          w->kind, base, rc < 0 ? err : w->error, w->rv ? w->rv : "(none)");
        else
            watch_trouble(w, status > 0 && status != 200 ? status : TROUBLE_NO_ANSWER,
                          "the watch of %s (%s) ended without a word (HTTP %ld); resuming from "
                          "resourceVersion %s",
                          w->kind, base, status, w->rv ? w->rv : "(none)");
        if (progressed)
            backoff = 100;
        if (!w->gone && pause_ms(s, backoff))
            break;
        if (!w->gone)
            backoff = backoff < 5000 ? backoff * 2 : 5000;
    }
    free(base);
    return NULL;
}

static void start_watches(kube_store *s)
{
    for (size_t i = 0; i < s->n_w; i++) {
        kwatch *w = &s->w[i];
        if (w->thr_on)
            continue;
        if (pthread_create(&w->thr, NULL, watch_thread, w) == 0)
            w->thr_on = 1;
        else
            log_error("kubernetes store: cannot start the watch of %s", w->kind);
    }
}

static int ks_watch(store *st, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    kube_store *s = (kube_store *)st;
    s->want_watch = 1;
    if (s->listed)
        start_watches(s);
    return s->pipe[0];
}

/* Deliver o as the change it is against what is held (o: one reference,
 * taken over). */
static size_t deliver(kube_store *s, trellis_object *o, int deleted, store_watch_cb cb, void *ud)
{
    trellis_object *old = hmap_get(&s->held, o->id);
    if (deleted) {
        verchain_forget(s->vc, o->id);
        object_unref(o);
        if (!old)
            return 0;
        hmap_del(&s->held, old->id);
        cb(ud, STORE_DELETED, old, NULL);
        object_unref(old);
        return 1;
    }
    if (old && strcmp(rv_of(old), rv_of(o)) == 0) {
        object_unref(o); /* seen already (a watch opened again repeats) */
        return 0;
    }
    hmap_put(&s->held, o->id, o);
    cb(ud, old ? STORE_MODIFIED : STORE_ADDED, old, o);
    object_unref(old);
    return 1;
}

/* A kind listed again: the differences with what is held of it. */
static size_t resync(kube_store *s, qitem *it, store_watch_cb cb, void *ud)
{
    size_t count = 0;
    hmap seen;
    hmap_init(&seen);
    for (size_t i = 0; i < it->n_all; i++)
        hmap_put(&seen, it->all[i]->id, it->all[i]);
    size_t nd = 0, capd = 0, at = 0;
    trellis_object **gone = NULL;
    hmap_slot *sl;
    while ((sl = hmap_next(&s->held, &at))) {
        trellis_object *h = sl->val;
        if (strcmp(h->kind, it->kind) == 0 && !hmap_get(&seen, sl->key)) {
            grow(&gone, &capd, nd + 1, sizeof *gone);
            gone[nd++] = h;
        }
    }
    for (size_t i = 0; i < nd; i++) {
        hmap_del(&s->held, gone[i]->id);
        verchain_forget(s->vc, gone[i]->id);
        cb(ud, STORE_DELETED, gone[i], NULL);
        object_unref(gone[i]);
        count++;
    }
    free(gone);
    hmap_free(&seen);
    for (size_t i = 0; i < it->n_all; i++)
        count += deliver(s, it->all[i], 0, cb, ud);
    free(it->all);
    free(it->kind);
    return count;
}

static size_t ks_dispatch(store *st, store_watch_cb cb, void *ud)
{
    kube_store *s = (kube_store *)st;
    char buf[256];
    while (read(s->pipe[0], buf, sizeof buf) > 0)
        ;
    pthread_mutex_lock(&s->qmu);
    qitem *q = s->q;
    size_t n = s->n_q;
    s->q = NULL;
    s->n_q = s->cap_q = 0;
    pthread_mutex_unlock(&s->qmu);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += q[i].type == Q_RESYNC ? resync(s, &q[i], cb, ud)
                                       : deliver(s, q[i].o, q[i].type == Q_DELETE, cb, ud);
    free(q);
    return count;
}

static void ks_set_kinds(store *st, const char *const *kinds, size_t n)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_kinds; i++)
        free(s->kinds[i]);
    free(s->kinds);
    s->kinds = xcalloc(n ? n : 1, sizeof *s->kinds);
    for (size_t i = 0; i < n; i++)
        s->kinds[i] = xstrdup(kinds[i]);
    s->n_kinds = n;
    pthread_mutex_unlock(&s->mu);
}

static void ks_destroy(store *st)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->qmu);
    atomic_store(&s->stop, 1);
    pthread_cond_broadcast(&s->qcv);
    pthread_mutex_unlock(&s->qmu);
    for (size_t i = 0; i < s->n_w; i++)
        if (s->w[i].thr_on)
            pthread_join(s->w[i].thr, NULL);
    watches_free(s);
    for (size_t i = 0; i < s->n_q; i++) {
        object_unref(s->q[i].o);
        for (size_t k = 0; k < s->q[i].n_all; k++)
            object_unref(s->q[i].all[k]);
        free(s->q[i].all);
        free(s->q[i].kind);
    }
    free(s->q);
    wqueue_clear(&s->pend);
    held_clear(s);
    hmap_free(&s->held);
    for (size_t i = 0; i < s->n_kinds; i++)
        free(s->kinds[i]);
    free(s->kinds);
    if (s->pipe[0] >= 0) {
        close(s->pipe[0]);
        close(s->pipe[1]);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->qmu);
    pthread_cond_destroy(&s->qcv);
    kubeapi_free(s->api);
    verchain_free(s->vc);
    free(s);
}

static const store_ops kube_ops = {
    .name = "kubernetes",
    .list = ks_list,
    .get = ks_get,
    .patch = ks_patch,
    .create = ks_create,
    .remove = ks_remove,
    .flush = ks_flush,
    .watch = ks_watch,
    .dispatch = ks_dispatch,
    .destroy = ks_destroy,
    .set_kinds = ks_set_kinds,
};

store *store_kube_open(const cfg_store *sc, int dry_run, char *err, size_t errlen)
{
    kubeapi *api = kubeapi_new(sc, err, errlen);
    if (!api)
        return NULL;
    kube_store *s = xcalloc(1, sizeof *s);
    s->base.ops = &kube_ops;
    s->base.dry_run = dry_run;
    s->api = api;
    s->watch_timeout_ms = sc->watch_timeout_ms ? sc->watch_timeout_ms : 300000;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->qmu, NULL);
    pthread_cond_init(&s->qcv, NULL);
    wqueue_init(&s->pend);
    s->vc = verchain_new(0);
    hmap_init(&s->held);
    s->pipe[0] = s->pipe[1] = -1;
    if (sc->n_kinds)
        ks_set_kinds(&s->base, (const char *const *)sc->kinds, sc->n_kinds);
    if (pipe2(s->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        errf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        ks_destroy(&s->base);
        return NULL;
    }
    return &s->base;
}

void store_kube_counts(store *st, size_t *writes, size_t *requests)
{
    kube_store *s = (kube_store *)st;
    pthread_mutex_lock(&s->mu);
    *writes = s->writes;
    *requests = s->requests;
    pthread_mutex_unlock(&s->mu);
}
