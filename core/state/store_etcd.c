/*
 * store_etcd.c - see store_etcd.h.
 *
 * Reading: list ranges over each kind's prefix at one revision, in pages;
 * a watch thread then follows <prefix>/o/ from the next revision, queues
 * what it reads and wakes the run loop through a pipe; dispatch (the main
 * thread) turns the queue into changes against the objects it delivered
 * last (the "held" map), so a resumed stream that repeats an event, or a
 * list made again after a compaction, gives the host exactly the
 * differences.
 *
 * Writing: patch, create and remove are queued; flush sends them in
 * transactions of at most 127 writes (with the fence's compare: etcd
 * allows 128) and about 1 MiB (etcd refuses requests over 1.5 MiB), up to
 * ETCD_CONNS of them at once (etcd commits concurrent ones together). Each
 * write compares the key's mod_revision with the version it was made
 * against (a creation: that the key does not exist); the fence compares
 * the create revision of the leader's candidate key. A refused
 * transaction reads every key back in its failure branch: the writes
 * whose compare failed are reported, the others go again. A call that
 * ends without a reply (a timeout, a reset) is resolved by reading the
 * keys back: the transaction was made if the first key holds what it
 * wrote.
 */
#include "config.h"

#include "store_etcd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "edit.h"
#include "base64.h"
#include "etcdclient.h"
#include "hmap.h"
#include "log.h"
#include "util.h"
#include "verchain.h"
#include "wqueue.h"

#define TXN_MAX_WRITES 127
#define TXN_MAX_BYTES (1024 * 1024)
#define LIST_PAGE 1000
#define REBASE_TRIES 3

enum { Q_PUT, Q_DELETE, Q_RESYNC };
typedef struct qitem {
    int type;
    etcd_kv kv;   /* Q_PUT, Q_DELETE */
    etcd_kv *all; /* Q_RESYNC: every key at one revision */
    size_t n_all;
} qitem;

typedef struct etcd_store {
    store base;   /* first */
    verchain *vc; /* the mod_revisions its own writes made */
    etcd_client *cl;
    char *okey;     /* "<prefix>/o/" */
    char *okey_end; /* its range_end */
    uint32_t watch_idle_ms;
    pthread_mutex_t mu; /* the queued writes, the kinds, the counts */
    wqueue pend;        /* the writes queued */
    char **kinds;
    size_t n_kinds;
    size_t writes, txns;
    /* following */
    int want_watch, listed;
    int64_t list_rev;
    pthread_t thr;
    int thr_on;
    atomic_int stop;
    int pipe[2];
    pthread_mutex_t qmu; /* the queue */
    pthread_cond_t qcv;  /* the thread's backoff, cut short by stop */
    qitem *q;
    size_t n_q, cap_q;
    /* the main thread's: what dispatch delivered last */
    hmap held; /* id (the object's) -> trellis_object, one reference */
} etcd_store;

/* ---- keys and objects ---- */

static char *obj_key(const etcd_store *e, const char *id)
{
    return xasprintf("%s%s", e->okey, id);
}

/* The id of a key under <prefix>/o/, or NULL; borrowed from key. */
static const char *key_id(const etcd_store *e, const char *key)
{
    size_t n = strlen(e->okey);
    return strncmp(key, e->okey, n) == 0 ? key + n : NULL;
}

static int kind_wanted(const etcd_store *e, const char *id)
{
    if (!e->n_kinds)
        return 1;
    const char *slash = strchr(id, '/');
    size_t n = slash ? (size_t)(slash - id) : strlen(id);
    for (size_t i = 0; i < e->n_kinds; i++)
        if (strlen(e->kinds[i]) == n && strncmp(e->kinds[i], id, n) == 0)
            return 1;
    return 0;
}

/* The object a key-value holds, its resourceVersion and version the key's
 * mod_revision. NULL with err when the value is not an object of that
 * key. */
static trellis_object *kv_object(const etcd_store *e, const etcd_kv *kv, char *err, size_t errlen)
{
    const char *id = key_id(e, kv->key);
    if (!id)
        return errf(err, errlen, "not under %s", e->okey), NULL;
    json_tokener *tok = json_tokener_new();
    json_object *j = json_tokener_parse_ex(tok, kv->value, (int)kv->value_len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!j || je != json_tokener_success || used != kv->value_len ||
        !json_object_is_type(j, json_type_object)) {
        json_object_put(j);
        errf(err, errlen, "the value is not a JSON object%s%s",
             je != json_tokener_success ? ": " : "",
             je != json_tokener_success ? json_tokener_error_desc(je) : "");
        return NULL;
    }
    json_object *md;
    if (json_object_object_get_ex(j, "metadata", &md) &&
        json_object_is_type(md, json_type_object)) {
        char rv[24];
        snprintf(rv, sizeof rv, "%lld", (long long)kv->mod_revision);
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    }
    trellis_object *o = object_new(j, err, errlen);
    if (!o)
        return NULL;
    if (strcmp(o->id, id) != 0) {
        errf(err, errlen, "the key names %s but the object is %s", id, o->id);
        object_unref(o);
        return NULL;
    }
    o->version = (uint64_t)kv->mod_revision;
    return o;
}

/* The JSON text an object is stored as: without resourceVersion. */
static char *stored_text(json_object *j)
{
    json_object *md;
    if (json_object_object_get_ex(j, "metadata", &md) && json_object_is_type(md, json_type_object))
        json_object_object_del(md, "resourceVersion");
    return xstrdup(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static json_object *jstr_b64(const char *s, size_t n)
{
    char *b = base64_encode(s, n);
    json_object *j = json_object_new_string(b);
    free(b);
    return j;
}

static json_object *jint(int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return json_object_new_string(buf);
}

/* ---- reading ---- */

/* Every key in [key, end) at revision *rev (0: the current one, then set),
 * in pages, appended to kvs. 0, or -1 with err. */
static int range_all(etcd_store *e, const char *key, const char *end, int64_t *rev, etcd_kv **kvs,
                     size_t *n, size_t *cap, char *err, size_t errlen)
{
    char *from = xstrdup(key);
    size_t from_len = strlen(key);
    int rc = 0;
    for (;;) {
        json_object *req = json_object_new_object();
        json_object_object_add(req, "key", jstr_b64(from, from_len));
        json_object_object_add(req, "range_end", jstr_b64(end, strlen(end)));
        json_object_object_add(req, "limit", jint(LIST_PAGE));
        if (*rev)
            json_object_object_add(req, "revision", jint(*rev));
        json_object *reply = etcd_call(e->cl, "kv/range", req, 1, NULL, err, errlen);
        json_object_put(req);
        if (!reply) {
            rc = -1;
            break;
        }
        int64_t r = 0;
        int more = 0;
        size_t before = *n;
        rc = etcd_parse_range(reply, kvs, n, cap, &r, &more, err, errlen);
        json_object_put(reply);
        if (rc < 0)
            break;
        if (!*rev)
            *rev = r;
        if (!more || *n == before)
            break;
        /* the next page starts just past the last key */
        const etcd_kv *last = &(*kvs)[*n - 1];
        free(from);
        from = xmalloc(last->key_len + 2);
        memcpy(from, last->key, last->key_len);
        from[last->key_len] = '\0';
        from_len = last->key_len + 1;
    }
    free(from);
    return rc;
}

/* Every object of the kinds told (all under <prefix>/o/ when none) at
 * one revision. */
static int list_kvs(etcd_store *e, int64_t *rev, etcd_kv **kvs, size_t *n, char *err, size_t errlen)
{
    size_t cap = 0;
    *kvs = NULL;
    *n = 0;
    *rev = 0;
    pthread_mutex_lock(&e->mu);
    size_t nk = e->n_kinds;
    char **kinds = xcalloc(nk ? nk : 1, sizeof *kinds);
    for (size_t i = 0; i < nk; i++)
        kinds[i] = xasprintf("%s%s/", e->okey, e->kinds[i]);
    pthread_mutex_unlock(&e->mu);
    int rc = 0;
    if (!nk) {
        rc = range_all(e, e->okey, e->okey_end, rev, kvs, n, &cap, err, errlen);
    } else {
        for (size_t i = 0; i < nk && rc == 0; i++) {
            char *end = etcd_prefix_end(kinds[i]);
            rc = range_all(e, kinds[i], end, rev, kvs, n, &cap, err, errlen);
            free(end);
        }
    }
    for (size_t i = 0; i < nk; i++)
        free(kinds[i]);
    free(kinds);
    if (rc < 0) {
        for (size_t i = 0; i < *n; i++)
            etcd_kv_free(&(*kvs)[i]);
        free(*kvs);
        *kvs = NULL;
        *n = 0;
    }
    return rc;
}

static void start_watch(etcd_store *e);

static void held_clear(etcd_store *e)
{
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&e->held, &i)))
        object_unref(sl->val);
    hmap_free(&e->held);
    hmap_init(&e->held);
}

static int es_list(store *s, manifest_set *out, char *err, size_t errlen)
{
    etcd_store *e = (etcd_store *)s;
    etcd_kv *kvs;
    size_t n;
    int64_t rev;
    if (list_kvs(e, &rev, &kvs, &n, err, errlen) < 0)
        return errprefix(err, errlen, "etcd store %s: cannot list", e->okey);
    held_clear(e);
    for (size_t i = 0; i < n; i++) {
        char why[512];
        trellis_object *o = kv_object(e, &kvs[i], why, sizeof why);
        if (!o) {
            manifest_add_error(out, kvs[i].key, 0, 0, xstrdup(why));
        } else {
            grow(&out->objects, &out->cap_objects, out->n_objects + 1, sizeof *out->objects);
            out->objects[out->n_objects++] = o;
            object_unref(hmap_put(&e->held, o->id, object_ref(o)));
        }
        etcd_kv_free(&kvs[i]);
    }
    free(kvs);
    e->list_rev = rev;
    e->listed = 1;
    if (e->want_watch)
        start_watch(e);
    return 0;
}

static trellis_object *es_get(store *s, const char *kind, const char *ns, const char *name)
{
    etcd_store *e = (etcd_store *)s;
    char *key = xasprintf("%s%s/%s/%s", e->okey, kind, ns ? ns : "", name);
    json_object *req = json_object_new_object();
    json_object_object_add(req, "key", jstr_b64(key, strlen(key)));
    char err[512];
    json_object *reply = etcd_call(e->cl, "kv/range", req, 1, NULL, err, sizeof err);
    json_object_put(req);
    trellis_object *o = NULL;
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t rev;
    int more;
    if (!reply)
        log_warn("etcd store: get %s: %s", key, err);
    else if (etcd_parse_range(reply, &kvs, &n, &cap, &rev, &more, err, sizeof err) < 0)
        log_warn("etcd store: get %s: %s", key, err);
    else if (n && !(o = kv_object(e, &kvs[0], err, sizeof err)))
        log_warn("etcd store: %s: %s; skipped", key, err);
    for (size_t i = 0; i < n; i++)
        etcd_kv_free(&kvs[i]);
    free(kvs);
    json_object_put(reply);
    free(key);
    return o;
}

/* ---- queued writes ---- */

static int es_patch(store *s, const trellis_object *o, const char *subresource,
                    const store_edit *edits, size_t n, char *err, size_t errlen)
{
    (void)subresource; /* the status and the binding live in the object */
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    int rc = wqueue_patch(&e->pend, o, NULL, edits, n, 0, err, errlen);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

static trellis_object *es_create(store *s, trellis_object *o, char *err, size_t errlen)
{
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    int rc = wqueue_add(&e->pend, o, WQ_CREATE, 0, err, errlen);
    pthread_mutex_unlock(&e->mu);
    return rc == 0 ? object_ref(o) : NULL;
}

static int es_remove(store *s, const trellis_object *o, char *err, size_t errlen)
{
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    int rc = wqueue_add(&e->pend, o, WQ_REMOVE, 0, err, errlen);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* ---- flush ---- */

typedef struct wprep {
    wq_write *p;
    char *key;
    char *value; /* NULL: delete */
    int64_t rev; /* 0: the key must not exist */
    int state;   /* 0 to write, 1 written, 2 failed */
    char *why;   /* failed: the reason */
    int tries;
    size_t bytes; /* about what it adds to a request */
} wprep;

typedef struct flush_ctx {
    etcd_store *e;
    char fkey[512];
    int64_t fver;
    int fenced; /* has a fence key */
} flush_ctx;

/* w failed; the reasons are reported after the transactions (on the
 * caller's thread). */
static void fail(flush_ctx *f, wprep *w, const char *why)
{
    (void)f;
    w->state = 2;
    free(w->why);
    w->why = xstrdup(why);
}

/* The text a queued write stores: 0, or -1 with err. */
static int prepare(wprep *w, char *err, size_t errlen)
{
    wq_write *p = w->p;
    /* the mod_revision it was made against */
    w->rev = p->op == WQ_CREATE ? 0 : (int64_t)p->o->version;
    if (p->op == WQ_REMOVE)
        return 0;
    json_object *j;
    if (p->op == WQ_CREATE) {
        j = object_to_json(p->o);
    } else {
        trellis_object *o2 = edit_apply_object(p->o, p->edits, p->n_edits, err, errlen);
        if (!o2)
            return -1;
        j = object_to_json(o2);
        object_unref(o2);
    }
    w->value = stored_text(j);
    json_object_put(j);
    return 0;
}

static json_object *compare_of(const char *key, int create, int64_t rev)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "key", jstr_b64(key, strlen(key)));
    json_object_object_add(c, "target", json_object_new_string(create ? "CREATE" : "MOD"));
    json_object_object_add(c, "result", json_object_new_string("EQUAL"));
    json_object_object_add(c, create ? "create_revision" : "mod_revision", jint(rev));
    return c;
}

static json_object *range_of(const char *key)
{
    json_object *op = json_object_new_object(), *r = json_object_new_object();
    json_object_object_add(r, "key", jstr_b64(key, strlen(key)));
    json_object_object_add(op, "request_range", r);
    return op;
}

/* The key-value a txn's response_range holds (kv->key NULL: the key does
 * not exist). 0, or -1. */
static int response_kv(json_object *resp, etcd_kv *kv)
{
    json_object *r;
    memset(kv, 0, sizeof *kv);
    if (!resp || !json_object_object_get_ex(resp, "response_range", &r))
        return -1;
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t rev;
    int more;
    char err[256];
    if (etcd_parse_range(r, &kvs, &n, &cap, &rev, &more, err, sizeof err) < 0)
        return -1;
    if (n)
        *kv = kvs[0];
    for (size_t i = 1; i < n; i++)
        etcd_kv_free(&kvs[i]);
    free(kvs);
    return 0;
}

/* The decimal text of a revision (buf of at least 24 bytes). */
static const char *rev_text(int64_t rev, char *buf, size_t len)
{
    snprintf(buf, len, "%lld", (long long)rev);
    return buf;
}

/* A patch of list edits only (store.h), or one whose key changed only by
 * this store's own writes since the version it was made on, is made
 * against the object as it is now: rebuild its text from cur. 0, or -1
 * when it cannot be. */
static int rebase(etcd_store *e, wprep *w, const etcd_kv *cur)
{
    wq_write *p = w->p;
    if (p->op != WQ_PATCH || !cur->key || w->tries >= REBASE_TRIES)
        return -1;
    char from[24], to[24];
    int lists = 1;
    for (size_t i = 0; i < p->n_edits; i++)
        lists &= p->edits[i].op >= STORE_LIST_ADD;
    if (!lists && !verchain_own_between(e->vc, p->id, rev_text(w->rev, from, sizeof from),
                                        rev_text(cur->mod_revision, to, sizeof to)))
        return -1;
    json_object *j = json_tokener_parse(cur->value);
    if (!j || !json_object_is_type(j, json_type_object)) {
        json_object_put(j);
        return -1;
    }
    char err[256];
    for (size_t i = 0; i < p->n_edits; i++)
        if (edit_apply_json(j, &p->edits[i], err, sizeof err) < 0) {
            json_object_put(j);
            return -1;
        }
    free(w->value);
    w->value = stored_text(j);
    json_object_put(j);
    w->rev = cur->mod_revision;
    w->bytes = strlen(w->key) * 2 + strlen(w->value) * 4 / 3 + 200;
    w->tries++;
    return 0;
}

/* After an ambiguous call: whether the transaction of b[0..n) was made,
 * read back. 1 made, 0 not, -1 cannot tell (err). */
static int was_made(flush_ctx *f, wprep **b, size_t n, char *err, size_t errlen)
{
    json_object *req = json_object_new_object(), *succ = json_object_new_array();
    json_object_array_add(succ, range_of(b[0]->key));
    json_object_object_add(req, "success", succ);
    json_object *reply = etcd_call(f->e->cl, "kv/txn", req, 1, NULL, err, errlen);
    json_object_put(req);
    if (!reply)
        return -1;
    json_object *resps;
    etcd_kv kv;
    int rc = -1;
    if (json_object_object_get_ex(reply, "responses", &resps) &&
        response_kv(json_object_array_get_idx(resps, 0), &kv) == 0) {
        if (!b[0]->value)
            rc = kv.key == NULL;
        else
            rc = kv.key && kv.value_len == strlen(b[0]->value) &&
                 memcmp(kv.value, b[0]->value, kv.value_len) == 0 && kv.mod_revision != b[0]->rev;
        etcd_kv_free(&kv);
    } else {
        errf(err, errlen, "etcd: an unreadable reply to a read-back");
    }
    json_object_put(reply);
    (void)n;
    return rc;
}

/* One transaction of b[0..n). Each write ends written, failed, or left
 * to go again (a compare of another write failed). 0, or -1 when the
 * fence refused (every write after this fails too). */
static int txn(flush_ctx *f, wprep **b, size_t n)
{
    json_object *req = json_object_new_object();
    json_object *cmp = json_object_new_array(), *succ = json_object_new_array(),
                *fail_ops = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        wprep *w = b[i];
        json_object_array_add(cmp, compare_of(w->key, w->rev == 0, w->rev));
        json_object *op = json_object_new_object(), *r = json_object_new_object();
        json_object_object_add(r, "key", jstr_b64(w->key, strlen(w->key)));
        if (w->value) {
            json_object_object_add(r, "value", jstr_b64(w->value, strlen(w->value)));
            json_object_object_add(op, "request_put", r);
        } else {
            json_object_object_add(op, "request_delete_range", r);
        }
        json_object_array_add(succ, op);
        json_object_array_add(fail_ops, range_of(w->key));
    }
    if (f->fenced) {
        json_object_array_add(cmp, compare_of(f->fkey, 1, f->fver));
        json_object_array_add(fail_ops, range_of(f->fkey));
    }
    json_object_object_add(req, "compare", cmp);
    json_object_object_add(req, "success", succ);
    json_object_object_add(req, "failure", fail_ops);
    char err[1024];
    int ambiguous = 0, rc = 0;
    json_object *reply = etcd_call(f->e->cl, "kv/txn", req, 0, &ambiguous, err, sizeof err);
    json_object_put(req);
    pthread_mutex_lock(&f->e->mu);
    f->e->txns++;
    pthread_mutex_unlock(&f->e->mu);
    if (!reply) {
        if (ambiguous) {
            char err2[1024];
            int made = was_made(f, b, n, err2, sizeof err2);
            if (made == 1) {
                for (size_t i = 0; i < n; i++)
                    b[i]->state = 1;
                return 0;
            }
            if (made == 0) { /* not made: each goes again, at most a few times */
                for (size_t i = 0; i < n; i++)
                    if (++b[i]->tries > REBASE_TRIES)
                        fail(f, b[i], err);
                return 0;
            }
            char why[2200];
            snprintf(why, sizeof why, "%s; cannot tell whether it was written: %s", err, err2);
            for (size_t i = 0; i < n; i++)
                fail(f, b[i], why);
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            fail(f, b[i], err);
        return 0;
    }
    json_object *sv, *resps = NULL;
    int succeeded =
        json_object_object_get_ex(reply, "succeeded", &sv) && json_object_get_boolean(sv);
    json_object_object_get_ex(reply, "responses", &resps);
    if (succeeded) {
        /* each key written has the transaction's revision */
        json_object *h;
        int64_t made = 0;
        char from[24], to[24];
        if (json_object_object_get_ex(reply, "header", &h))
            etcd_int64(h, "revision", &made);
        for (size_t i = 0; i < n; i++) {
            b[i]->state = 1;
            if (made > 0 && b[i]->p->op != WQ_REMOVE) /* patches; creations from 0 */
                verchain_wrote(f->e->vc, b[i]->p->id, rev_text(b[i]->rev, from, sizeof from),
                               rev_text(made, to, sizeof to));
        }
    } else {
        size_t nr = resps && json_object_is_type(resps, json_type_array)
                        ? json_object_array_length(resps)
                        : 0;
        etcd_kv fk;
        if (f->fenced && (nr <= n || response_kv(json_object_array_get_idx(resps, n), &fk) < 0 ||
                          !fk.key || fk.create_revision != f->fver)) {
            if (nr > n)
                etcd_kv_free(&fk);
            char why[700];
            snprintf(why, sizeof why,
                     "etcd refused the write: this host no longer leads (its election key %s "
                     "is gone: the lease expired)",
                     f->fkey);
            for (size_t i = 0; i < n; i++)
                fail(f, b[i], why);
            rc = -1;
        } else {
            if (f->fenced)
                etcd_kv_free(&fk);
            for (size_t i = 0; i < n; i++) {
                etcd_kv cur;
                if (i >= nr || response_kv(json_object_array_get_idx(resps, i), &cur) < 0) {
                    fail(f, b[i], "etcd refused the transaction and its reply is unreadable");
                    continue;
                }
                wprep *w = b[i];
                int exists = cur.key != NULL;
                int holds = w->rev == 0 ? !exists : exists && cur.mod_revision == w->rev;
                if (!holds && rebase(f->e, w, &cur) < 0) {
                    char why[256];
                    if (w->rev == 0)
                        snprintf(why, sizeof why, "already exists in etcd");
                    else if (!exists)
                        snprintf(why, sizeof why, "no longer exists in etcd");
                    else
                        snprintf(why, sizeof why,
                                 "changed since it was read (etcd mod_revision %lld, read at "
                                 "%lld)",
                                 (long long)cur.mod_revision, (long long)w->rev);
                    fail(f, w, why);
                }
                etcd_kv_free(&cur);
            }
        }
    }
    json_object_put(reply);
    return rc;
}

/* One round's transactions, sent side by side. */
typedef struct round {
    flush_ctx *f;
    wprep ***batches;
    size_t *sizes, n;
    atomic_size_t next;
    atomic_int refused; /* the fence refused: send no more */
} round;

static void *round_worker(void *arg)
{
    round *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n || atomic_load(&r->refused))
            break;
        if (txn(r->f, r->batches[i], r->sizes[i]) < 0)
            atomic_store(&r->refused, 1);
    }
    return NULL;
}

/* Send the transactions of one round; 0, or -1 when the fence refused. */
static int send_round(round *r)
{
    pthread_t t[ETCD_CONNS];
    size_t nt = 0;
    while (nt + 1 < ETCD_CONNS && nt + 1 < r->n &&
           pthread_create(&t[nt], NULL, round_worker, r) == 0)
        nt++;
    round_worker(r);
    for (size_t i = 0; i < nt; i++)
        pthread_join(t[i], NULL);
    return atomic_load(&r->refused) ? -1 : 0;
}

static int es_flush(store *s, store_fail_cb failed, void *ud, char *err, size_t errlen)
{
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    size_t n;
    wq_write *pend = wqueue_take(&e->pend, &n);
    pthread_mutex_unlock(&e->mu);
    if (!n)
        return 0;
    flush_ctx f = {.e = e};
    wprep *w = xcalloc(n, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        w[i].p = &pend[i];
        w[i].key = obj_key(e, pend[i].id);
    }
    char why[512] = "";
    int blocked = 0;
    if (e->base.dry_run) {
        blocked = 2;
    } else if (e->base.fence && !e->base.fence(e->base.fence_ud, why, sizeof why)) {
        blocked = 1;
    } else if (e->base.fence_key) {
        f.fenced = 1;
        if (!e->base.fence_key(e->base.fence_ud, f.fkey, sizeof f.fkey, &f.fver)) {
            snprintf(why, sizeof why, "this host does not lead: nothing is written");
            blocked = 1;
        }
    }
    for (size_t i = 0; i < n && !blocked; i++) {
        char perr[512];
        if (prepare(&w[i], perr, sizeof perr) < 0)
            fail(&f, &w[i], perr);
        else
            w[i].bytes = strlen(w[i].key) * 2 + (w[i].value ? strlen(w[i].value) * 4 / 3 : 0) + 200;
    }
    /* the writes still to make, in transactions; again while some are
     * left (the others of a refused transaction, rebased list edits) */
    wprep **slots = xcalloc(n, sizeof *slots);
    size_t nbat = n / TXN_MAX_WRITES + n + 1;
    wprep ***batches = xcalloc(nbat, sizeof *batches);
    size_t *sizes = xcalloc(nbat, sizeof *sizes);
    while (!blocked) {
        size_t nb = 0, used = 0;
        for (size_t i = 0; i < n;) {
            size_t k = 0, bytes = 0;
            batches[nb] = slots + used;
            for (; i < n && k < TXN_MAX_WRITES; i++) {
                if (w[i].state != 0)
                    continue;
                if (k && bytes + w[i].bytes > TXN_MAX_BYTES)
                    break;
                slots[used + k++] = &w[i];
                bytes += w[i].bytes;
            }
            if (k) {
                sizes[nb++] = k;
                used += k;
            }
        }
        if (!nb)
            break;
        round r = {.f = &f, .batches = batches, .sizes = sizes, .n = nb};
        if (send_round(&r) < 0) {
            blocked = 3;
            snprintf(why, sizeof why, "etcd refused the write: this host no longer leads");
        }
    }
    free(slots);
    free(batches);
    free(sizes);
    strbuf problems;
    sb_init(&problems);
    for (size_t i = 0; i < n; i++) {
        if (w[i].state == 0 && blocked != 2)
            fail(&f, &w[i], why[0] ? why : "not written");
        if (w[i].state == 2) {
            if (failed)
                failed(ud, w[i].p->id, w[i].why);
            if (problems.len < 4096)
                sb_printf(&problems, "%s%s: %s", problems.len ? "; " : "", w[i].p->id, w[i].why);
            free(w[i].why);
        }
        if (w[i].state == 1) {
            pthread_mutex_lock(&e->mu);
            e->writes++;
            pthread_mutex_unlock(&e->mu);
        }
        free(w[i].key);
        free(w[i].value);
        wq_write_free(&pend[i]);
    }
    free(w);
    free(pend);
    int rc = problems.len ? errf(err, errlen, "%s", problems.s) : 0;
    sb_free(&problems);
    return rc;
}

/* ---- following ---- */

static void enqueue(etcd_store *e, qitem *it)
{
    pthread_mutex_lock(&e->qmu);
    grow(&e->q, &e->cap_q, e->n_q + 1, sizeof *e->q);
    e->q[e->n_q++] = *it;
    pthread_mutex_unlock(&e->qmu);
    char c = 1;
    ssize_t wr = write(e->pipe[1], &c, 1);
    (void)wr;
}

typedef struct wctx {
    etcd_store *e;
    int64_t next;    /* the revision to resume from */
    int64_t compact; /* set when the stream was cancelled by a compaction */
    char error[512];
} wctx;

static int on_watch_line(void *ud, const char *text, size_t len)
{
    wctx *w = ud;
    etcd_watch_msg m;
    char err[512];
    if (etcd_parse_watch(text, len, &m, err, sizeof err) < 0) {
        snprintf(w->error, sizeof w->error, "%s", err);
        return 1; /* open the stream again rather than lose track */
    }
    for (size_t i = 0; i < m.n_events; i++) {
        qitem it = {m.events[i].deleted ? Q_DELETE : Q_PUT, m.events[i].kv, NULL, 0};
        if (it.kv.mod_revision >= w->next)
            w->next = it.kv.mod_revision + 1;
        memset(&m.events[i].kv, 0, sizeof m.events[i].kv);
        enqueue(w->e, &it);
    }
    int stop = 0;
    if (m.canceled) {
        w->compact = m.compact_revision ? m.compact_revision : -1;
        snprintf(w->error, sizeof w->error, "the watch was cancelled: %s",
                 m.error ? m.error : "compacted");
        stop = 1;
    }
    etcd_watch_msg_free(&m);
    return stop;
}

/* Wait ms unless told to stop: 1 when told. */
static int pause_ms(etcd_store *e, uint32_t ms)
{
    struct timespec ts;
    clock_deadline(&ts, ms);
    pthread_mutex_lock(&e->qmu);
    while (!atomic_load(&e->stop))
        if (pthread_cond_timedwait(&e->qcv, &e->qmu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&e->qmu);
    return atomic_load(&e->stop);
}

static void *watch_thread(void *arg)
{
    etcd_store *e = arg;
    wctx w = {.e = e, .next = e->list_rev + 1};
    uint32_t backoff = 100;
    while (!atomic_load(&e->stop)) {
        if (w.compact) {
            /* what was missed is gone: read everything again, dispatch
             * diffs it against what the host holds */
            etcd_kv *kvs;
            size_t n;
            int64_t rev;
            char err[512];
            if (list_kvs(e, &rev, &kvs, &n, err, sizeof err) < 0) {
                log_warn("etcd store: listing again after a compaction: %s", err);
                if (pause_ms(e, backoff))
                    break;
                backoff = backoff < 5000 ? backoff * 2 : 5000;
                continue;
            }
            qitem it = {.type = Q_RESYNC, .all = kvs, .n_all = n};
            enqueue(e, &it);
            w.next = rev + 1;
            w.compact = 0;
        }
        json_object *req = json_object_new_object(), *cr = json_object_new_object();
        json_object_object_add(cr, "key", jstr_b64(e->okey, strlen(e->okey)));
        json_object_object_add(cr, "range_end", jstr_b64(e->okey_end, strlen(e->okey_end)));
        json_object_object_add(cr, "start_revision", jint(w.next));
        json_object_object_add(cr, "progress_notify", json_object_new_boolean(1));
        json_object_object_add(req, "create_request", cr);
        char err[512];
        w.error[0] = '\0';
        int64_t before = w.next;
        int rc = etcd_stream(e->cl, "watch", req, e->watch_idle_ms, &e->stop, on_watch_line, &w,
                             err, sizeof err);
        json_object_put(req);
        if (atomic_load(&e->stop))
            break;
        if (w.compact)
            log_warn("etcd store: revision %lld was compacted: listing again",
                     (long long)w.compact);
        else
            log_warn("etcd store: the watch ended (%s); resuming from revision %lld at %s",
                     rc < 0       ? err
                     : w.error[0] ? w.error
                                  : "closed",
                     (long long)w.next, etcd_client_endpoint(e->cl));
        if (w.next > before)
            backoff = 100; /* it made progress */
        if (pause_ms(e, backoff))
            break;
        backoff = backoff < 5000 ? backoff * 2 : 5000;
    }
    return NULL;
}

static void start_watch(etcd_store *e)
{
    if (e->thr_on)
        return;
    if (pthread_create(&e->thr, NULL, watch_thread, e) == 0)
        e->thr_on = 1;
    else
        log_error("etcd store: cannot start the watch thread");
}

static int es_watch(store *s, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    etcd_store *e = (etcd_store *)s;
    e->want_watch = 1;
    if (e->listed)
        start_watch(e);
    return e->pipe[0];
}

/* Deliver kv as the change it is against what is held. */
static size_t deliver(etcd_store *e, const etcd_kv *kv, int deleted, store_watch_cb cb, void *ud)
{
    const char *id = key_id(e, kv->key);
    if (!id || !kind_wanted(e, id))
        return 0;
    trellis_object *old = hmap_get(&e->held, id);
    if (deleted) {
        verchain_forget(e->vc, id);
        if (!old)
            return 0;
        hmap_del(&e->held, id);
        cb(ud, STORE_DELETED, old, NULL);
        object_unref(old);
        return 1;
    }
    if (old && (int64_t)old->version >= kv->mod_revision)
        return 0; /* seen already (a resumed stream repeats) */
    char why[512];
    trellis_object *o = kv_object(e, kv, why, sizeof why);
    if (!o) {
        log_warn("etcd store: %s: %s; skipped (the object held before stays)", kv->key, why);
        return 0;
    }
    hmap_put(&e->held, o->id, o);
    cb(ud, old ? STORE_MODIFIED : STORE_ADDED, old, o);
    object_unref(old);
    return 1;
}

/* A list made again: the differences with what is held. */
static size_t resync(etcd_store *e, etcd_kv *all, size_t n, store_watch_cb cb, void *ud)
{
    size_t count = 0;
    hmap seen;
    hmap_init(&seen);
    for (size_t i = 0; i < n; i++) {
        const char *id = key_id(e, all[i].key);
        if (id)
            hmap_put(&seen, id, &all[i]);
    }
    /* deletions first: what is held and is no more */
    size_t nd = 0, capd = 0, it = 0;
    trellis_object **gone = NULL;
    hmap_slot *sl;
    while ((sl = hmap_next(&e->held, &it)))
        if (!hmap_get(&seen, sl->key)) {
            grow(&gone, &capd, nd + 1, sizeof *gone);
            gone[nd++] = sl->val;
        }
    for (size_t i = 0; i < nd; i++) {
        hmap_del(&e->held, gone[i]->id);
        verchain_forget(e->vc, gone[i]->id);
        cb(ud, STORE_DELETED, gone[i], NULL);
        object_unref(gone[i]);
        count++;
    }
    free(gone);
    hmap_free(&seen);
    for (size_t i = 0; i < n; i++)
        count += deliver(e, &all[i], 0, cb, ud);
    return count;
}

static size_t es_dispatch(store *s, store_watch_cb cb, void *ud)
{
    etcd_store *e = (etcd_store *)s;
    char buf[256];
    while (read(e->pipe[0], buf, sizeof buf) > 0)
        ;
    pthread_mutex_lock(&e->qmu);
    qitem *q = e->q;
    size_t n = e->n_q;
    e->q = NULL;
    e->n_q = e->cap_q = 0;
    pthread_mutex_unlock(&e->qmu);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (q[i].type == Q_RESYNC) {
            count += resync(e, q[i].all, q[i].n_all, cb, ud);
            for (size_t k = 0; k < q[i].n_all; k++)
                etcd_kv_free(&q[i].all[k]);
            free(q[i].all);
        } else {
            count += deliver(e, &q[i].kv, q[i].type == Q_DELETE, cb, ud);
            etcd_kv_free(&q[i].kv);
        }
    }
    free(q);
    return count;
}

static void es_set_kinds(store *s, const char *const *kinds, size_t n)
{
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_kinds; i++)
        free(e->kinds[i]);
    free(e->kinds);
    e->kinds = xcalloc(n ? n : 1, sizeof *e->kinds);
    for (size_t i = 0; i < n; i++)
        e->kinds[i] = xstrdup(kinds[i]);
    e->n_kinds = n;
    pthread_mutex_unlock(&e->mu);
}

static void es_destroy(store *s)
{
    etcd_store *e = (etcd_store *)s;
    if (e->thr_on) {
        pthread_mutex_lock(&e->qmu);
        atomic_store(&e->stop, 1);
        pthread_cond_broadcast(&e->qcv);
        pthread_mutex_unlock(&e->qmu);
        pthread_join(e->thr, NULL);
    }
    for (size_t i = 0; i < e->n_q; i++) {
        etcd_kv_free(&e->q[i].kv);
        for (size_t k = 0; k < e->q[i].n_all; k++)
            etcd_kv_free(&e->q[i].all[k]);
        free(e->q[i].all);
    }
    free(e->q);
    wqueue_clear(&e->pend);
    held_clear(e);
    hmap_free(&e->held);
    verchain_free(e->vc);
    for (size_t i = 0; i < e->n_kinds; i++)
        free(e->kinds[i]);
    free(e->kinds);
    close(e->pipe[0]);
    close(e->pipe[1]);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->qmu);
    pthread_cond_destroy(&e->qcv);
    etcd_client_free(e->cl);
    free(e->okey);
    free(e->okey_end);
    free(e);
}

static const store_ops etcd_ops = {
    .name = "etcd",
    .list = es_list,
    .get = es_get,
    .patch = es_patch,
    .create = es_create,
    .remove = es_remove,
    .flush = es_flush,
    .watch = es_watch,
    .dispatch = es_dispatch,
    .destroy = es_destroy,
    .set_kinds = es_set_kinds,
};

store *store_etcd_open(const cfg_store *sc, int dry_run, char *err, size_t errlen)
{
    etcd_client *cl = etcd_client_new(sc, err, errlen);
    if (!cl)
        return NULL;
    etcd_store *e = xcalloc(1, sizeof *e);
    e->base.ops = &etcd_ops;
    e->base.dry_run = dry_run;
    e->cl = cl;
    e->okey = xasprintf("%s/o/", etcd_client_prefix(cl));
    e->okey_end = etcd_prefix_end(e->okey);
    e->watch_idle_ms = sc->watch_timeout_ms ? sc->watch_timeout_ms : 660000;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->qmu, NULL);
    pthread_cond_init(&e->qcv, NULL);
    wqueue_init(&e->pend);
    e->vc = verchain_new(0);
    hmap_init(&e->held);
    if (pipe2(e->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
        errf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        etcd_client_free(cl);
        free(e->okey);
        free(e->okey_end);
        free(e);
        return NULL;
    }
    return &e->base;
}

void store_etcd_counts(store *s, size_t *writes, size_t *txns)
{
    etcd_store *e = (etcd_store *)s;
    pthread_mutex_lock(&e->mu);
    *writes = e->writes;
    *txns = e->txns;
    pthread_mutex_unlock(&e->mu);
}
