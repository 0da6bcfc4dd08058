/*
 * etcdclient.c - see etcdclient.h. The requests and streams go through
 * httpc.c (several threads may call at once: a flush sends its
 * transactions side by side).
 */
#include "config.h"

#include "base64.h"
#include "etcdclient.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "httpc.h"
#include "util.h"

struct etcd_client {
    char **endpoints;
    size_t n_endpoints;
    atomic_size_t current; /* the endpoint in use */
    char *prefix;
    httpc *http;
};

etcd_client *etcd_client_new(const cfg_store *sc, char *err, size_t errlen)
{
    if (!sc->n_endpoints) {
        errf(err, errlen, "%s:%d: an etcd store needs endpoints = [ \"http://127.0.0.1:2379\" ]",
             sc->file ? sc->file : "", sc->line);
        return NULL;
    }
    static const char *const headers[] = {"Grpc-Metadata-Hasleader: true", NULL};
    httpc_opts o = {.ca_file = sc->tls_ca,
                    .cert_file = sc->tls_cert,
                    .key_file = sc->tls_key,
                    .headers = headers,
                    .timeout_ms = sc->timeout_ms,
                    .conns = ETCD_CONNS};
    httpc *http = httpc_new(&o, err, errlen);
    if (!http)
        return NULL;
    etcd_client *c = xcalloc(1, sizeof *c);
    c->endpoints = xcalloc(sc->n_endpoints, sizeof *c->endpoints);
    for (size_t i = 0; i < sc->n_endpoints; i++)
        c->endpoints[i] = xstrdup(sc->endpoints[i]);
    c->n_endpoints = sc->n_endpoints;
    c->prefix = xstrdup(sc->prefix ? sc->prefix : "/trellis");
    c->http = http;
    return c;
}

void etcd_client_free(etcd_client *c)
{
    if (!c)
        return;
    httpc_free(c->http);
    for (size_t i = 0; i < c->n_endpoints; i++)
        free(c->endpoints[i]);
    free(c->endpoints);
    free(c->prefix);
    free(c);
}

const char *etcd_client_prefix(const etcd_client *c)
{
    return c->prefix;
}

const char *etcd_client_endpoint(const etcd_client *c)
{
    return c->endpoints[atomic_load(&((etcd_client *)c)->current) % c->n_endpoints];
}

static void rotate(etcd_client *c, size_t from)
{
    size_t want = from;
    atomic_compare_exchange_strong(&c->current, &want, (from + 1) % c->n_endpoints);
}

const char *etcd_reply_error(json_object *reply)
{
    json_object *e;
    if (!reply || !json_object_object_get_ex(reply, "error", &e))
        return NULL;
    if (json_object_is_type(e, json_type_string))
        return json_object_get_string(e);
    json_object *m;
    if (json_object_object_get_ex(e, "message", &m) && json_object_is_type(m, json_type_string))
        return json_object_get_string(m);
    return json_object_to_json_string(e);
}

/* gRPC codes a member answers with when it cannot serve now: another
 * member may. */
static int unavailable(json_object *reply)
{
    json_object *code;
    int64_t v = 0;
    if (!reply || !json_object_object_get_ex(reply, "code", &code))
        return 0;
    v = json_object_get_int64(code);
    return v == 14 /* unavailable */ || v == 4 /* deadline exceeded */;
}

json_object *etcd_call(etcd_client *c, const char *path, json_object *req, int idempotent,
                       int *ambiguous, char *err, size_t errlen)
{
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    if (ambiguous)
        *ambiguous = 0;
    strbuf out;
    sb_init(&out);
    json_object *reply = NULL;
    for (size_t tries = 0; tries < c->n_endpoints + 1; tries++) {
        size_t at = atomic_load(&c->current) % c->n_endpoints;
        char *url = xasprintf("%s/v3/%s", c->endpoints[at], path);
        long status = 0;
        char why[256];
        out.len = 0;
        int rc = httpc_request(c->http, "POST", url, body, NULL, &status, &out, why, sizeof why);
        free(url);
        if (rc != HTTPC_ANSWERED) {
            errf(err, errlen, "etcd %s: %s", c->endpoints[at], why);
            rotate(c, at);
            if (idempotent || rc == HTTPC_NOT_SENT)
                continue;
            if (ambiguous)
                *ambiguous = 1;
            break;
        }
        json_tokener *tok = json_tokener_new();
        reply = out.len ? json_tokener_parse_ex(tok, out.s, (int)out.len) : NULL;
        int complete = reply && json_tokener_get_error(tok) == json_tokener_success;
        json_tokener_free(tok);
        if (!complete || !json_object_is_type(reply, json_type_object)) {
            json_object_put(reply);
            reply = NULL;
            errf(err, errlen, "etcd %s: HTTP %ld: not a JSON reply: %.200s", c->endpoints[at],
                 status, out.len ? out.s : "(empty)");
            rotate(c, at);
            if (idempotent)
                continue;
            if (ambiguous)
                *ambiguous = 1;
            break;
        }
        const char *e = etcd_reply_error(reply);
        if (e || status != 200) {
            errf(err, errlen, "etcd %s: HTTP %ld: %s", c->endpoints[at], status,
                 e ? e : "no error text");
            int retry = unavailable(reply);
            json_object_put(reply);
            reply = NULL;
            if (retry) {
                rotate(c, at);
                if (idempotent)
                    continue;
                if (ambiguous)
                    *ambiguous = 1;
            }
            break;
        }
        break;
    }
    sb_free(&out);
    return reply;
}

int etcd_stream(etcd_client *c, const char *path, json_object *req, uint32_t idle_ms,
                atomic_int *stop, etcd_line_fn line, void *ud, char *err, size_t errlen)
{
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    size_t at = atomic_load(&c->current) % c->n_endpoints;
    char *url = xasprintf("%s/v3/%s", c->endpoints[at], path);
    long status = 0;
    char why[256];
    int rc =
        httpc_stream(c->http, "POST", url, body, idle_ms, stop, line, ud, &status, why, sizeof why);
    free(url);
    if (rc == 0)
        return 0;
    if (rc < 0)
        errf(err, errlen, "etcd %s: %s", c->endpoints[at], why);
    else
        errf(err, errlen, "etcd %s: HTTP %ld: the stream ended", c->endpoints[at], status);
    rotate(c, at);
    return -1;
}

/* ---- the gateway's JSON ---- */

char *etcd_prefix_end(const char *prefix)
{
    char *end = xstrdup(prefix);
    size_t n = strlen(end);
    /* prefixes here end in a printable byte: one more is never 0xff */
    if (n)
        end[n - 1] = (char)(end[n - 1] + 1);
    return end;
}

int etcd_int64(json_object *j, const char *field, int64_t *out)
{
    json_object *v;
    *out = 0;
    if (!j || !json_object_object_get_ex(j, field, &v) || !v)
        return 0;
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_int64(v);
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return -1;
    const char *s = json_object_get_string(v);
    char *end;
    if (!*s)
        return -1;
    long long x = strtoll(s, &end, 10);
    if (*end)
        return -1;
    *out = x;
    return 0;
}

void etcd_kv_free(etcd_kv *kv)
{
    free(kv->key);
    free(kv->value);
    memset(kv, 0, sizeof *kv);
}

/* A base64 field, absent meaning empty. */
static int b64_field(json_object *j, const char *field, char **out, size_t *n)
{
    json_object *v;
    if (!json_object_object_get_ex(j, field, &v) || !v) {
        *out = xstrdup("");
        *n = 0;
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return -1;
    *out = base64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), n);
    return *out ? 0 : -1;
}

int etcd_parse_kv(json_object *j, etcd_kv *kv, char *err, size_t errlen)
{
    memset(kv, 0, sizeof *kv);
    if (!j || !json_object_is_type(j, json_type_object))
        return errf(err, errlen, "a key-value is not a JSON object");
    if (b64_field(j, "key", &kv->key, &kv->key_len) < 0) {
        etcd_kv_free(kv);
        return errf(err, errlen, "a key-value's key is not base64");
    }
    if (b64_field(j, "value", &kv->value, &kv->value_len) < 0) {
        errf(err, errlen, "%.200s: the value is not base64", kv->key);
        etcd_kv_free(kv);
        return -1;
    }
    if (etcd_int64(j, "create_revision", &kv->create_revision) < 0 ||
        etcd_int64(j, "mod_revision", &kv->mod_revision) < 0 ||
        etcd_int64(j, "version", &kv->version) < 0 || etcd_int64(j, "lease", &kv->lease) < 0) {
        errf(err, errlen, "%.200s: a revision is not an integer", kv->key);
        etcd_kv_free(kv);
        return -1;
    }
    return 0;
}

static int header_revision(json_object *j, int64_t *rev)
{
    json_object *h;
    *rev = 0;
    if (!json_object_object_get_ex(j, "header", &h))
        return 0;
    if (!json_object_is_type(h, json_type_object))
        return -1;
    return etcd_int64(h, "revision", rev);
}

int etcd_parse_range(json_object *reply, etcd_kv **kvs, size_t *n, size_t *cap, int64_t *revision,
                     int *more, char *err, size_t errlen)
{
    *more = 0;
    if (!reply || !json_object_is_type(reply, json_type_object))
        return errf(err, errlen, "a range reply is not a JSON object");
    if (header_revision(reply, revision) < 0)
        return errf(err, errlen, "a range reply's header is not one");
    json_object *m, *list;
    if (json_object_object_get_ex(reply, "more", &m))
        *more = json_object_get_boolean(m);
    if (!json_object_object_get_ex(reply, "kvs", &list) || !list)
        return 0;
    if (!json_object_is_type(list, json_type_array))
        return errf(err, errlen, "a range reply's kvs is not a list");
    size_t len = json_object_array_length(list);
    for (size_t i = 0; i < len; i++) {
        etcd_kv kv;
        if (etcd_parse_kv(json_object_array_get_idx(list, i), &kv, err, errlen) < 0)
            return -1;
        grow(kvs, cap, *n + 1, sizeof **kvs);
        (*kvs)[(*n)++] = kv;
    }
    return 0;
}

void etcd_watch_msg_free(etcd_watch_msg *m)
{
    for (size_t i = 0; i < m->n_events; i++)
        etcd_kv_free(&m->events[i].kv);
    free(m->events);
    free(m->error);
    memset(m, 0, sizeof *m);
}

static int parse_watch_result(json_object *r, etcd_watch_msg *m, char *err, size_t errlen)
{
    json_object *v;
    if (!json_object_is_type(r, json_type_object))
        return errf(err, errlen, "a watch result is not a JSON object");
    if (header_revision(r, &m->revision) < 0 ||
        etcd_int64(r, "compact_revision", &m->compact_revision) < 0)
        return errf(err, errlen, "a watch result's revision is not an integer");
    if (json_object_object_get_ex(r, "created", &v))
        m->created = json_object_get_boolean(v);
    if (json_object_object_get_ex(r, "canceled", &v))
        m->canceled = json_object_get_boolean(v);
    if (json_object_object_get_ex(r, "cancel_reason", &v) &&
        json_object_is_type(v, json_type_string))
        m->error = xstrdup(json_object_get_string(v));
    if (!json_object_object_get_ex(r, "events", &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return errf(err, errlen, "a watch result's events is not a list");
    size_t len = json_object_array_length(v);
    m->events = xcalloc(len ? len : 1, sizeof *m->events);
    for (size_t i = 0; i < len; i++) {
        json_object *ev = json_object_array_get_idx(v, i), *t, *kv;
        if (!ev || !json_object_is_type(ev, json_type_object))
            return errf(err, errlen, "a watch event is not a JSON object");
        etcd_event *e = &m->events[m->n_events];
        if (json_object_object_get_ex(ev, "type", &t)) {
            const char *ts = json_object_get_string(t);
            if (!ts || (strcmp(ts, "DELETE") != 0 && strcmp(ts, "PUT") != 0))
                return errf(err, errlen, "a watch event's type is neither PUT nor DELETE");
            e->deleted = strcmp(ts, "DELETE") == 0;
        }
        if (!json_object_object_get_ex(ev, "kv", &kv))
            return errf(err, errlen, "a watch event has no kv");
        if (etcd_parse_kv(kv, &e->kv, err, errlen) < 0)
            return -1;
        m->n_events++;
    }
    return 0;
}

int etcd_parse_watch(const char *text, size_t len, etcd_watch_msg *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    json_tokener *tok = json_tokener_new();
    json_object *j = json_tokener_parse_ex(tok, text, (int)(len > 0x7fffffff ? 0x7fffffff : len));
    int complete = j && json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    int rc;
    json_object *r;
    if (!complete || !json_object_is_type(j, json_type_object)) {
        rc = errf(err, errlen, "a watch message is not a JSON object: %.100s", text);
    } else if (etcd_reply_error(j)) {
        m->error = xstrdup(etcd_reply_error(j));
        m->canceled = 1;
        rc = 0;
    } else if (!json_object_object_get_ex(j, "result", &r) || !r) {
        rc = errf(err, errlen, "a watch message has no result");
    } else {
        rc = parse_watch_result(r, m, err, errlen);
    }
    json_object_put(j);
    if (rc < 0)
        etcd_watch_msg_free(m);
    return rc;
}
