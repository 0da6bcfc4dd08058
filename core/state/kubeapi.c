/*
 * kubeapi.c - see kubeapi.h.
 *
 * Discovery reads /api/v1 and, for each group /apis lists, its preferred
 * version; a version asked for by name is read when first asked. A
 * subresource "<plural>/status" marks the status subresource;
 * "<plural>/binding" the binding one, of kind Binding (a Binding object
 * is posted) or of the kind itself (it is patched).
 */
#include "config.h"

#include "kubeapi.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "kubeconfig.h"
#include "util.h"

#define REDISCOVER_MS 5000

struct kubeapi {
    kubeconfig kc;
    httpc *http;
    pthread_mutex_t mu; /* the table and what was read */
    kube_resource **res;
    size_t n_res, cap_res;
    char **read_gv; /* group versions read */
    size_t n_gv, cap_gv;
    int discovered;
    uint64_t discovered_ms;
    /* the group versions of resources named in store.resources asked,
     * and when: each is asked again apart from the others */
    struct gv_try {
        char *gv;
        uint64_t ms;
    } * tried;
    size_t n_tried, cap_tried;
};

static void split_gv(const char *gv, char **group, char **version)
{
    const char *slash = strchr(gv, '/');
    *group = slash ? xasprintf("%.*s", (int)(slash - gv), gv) : xstrdup("");
    *version = xstrdup(slash ? slash + 1 : gv);
}

static kube_resource *add_res(kubeapi *k, const char *kind, const char *gv, const char *plural,
                              int namespaced)
{
    kube_resource *r = xcalloc(1, sizeof *r);
    r->kind = xstrdup(kind);
    r->api_version = xstrdup(gv);
    split_gv(gv, &r->group, &r->version);
    r->plural = xstrdup(plural);
    r->namespaced = namespaced;
    grow(&k->res, &k->cap_res, k->n_res + 1, sizeof *k->res);
    k->res[k->n_res++] = r;
    return r;
}

kubeapi *kubeapi_new(const cfg_store *sc, char *err, size_t errlen)
{
    kubeapi *k = xcalloc(1, sizeof *k);
    char e[1024];
    if (kubeconfig_load(sc->kubeconfig, sc->context, &k->kc, e, sizeof e) < 0) {
        errf(err, errlen, "%s:%d: the Kubernetes API store: %s", sc->file ? sc->file : "", sc->line,
             e);
        free(k);
        return NULL;
    }
    char *auth = k->kc.token ? xasprintf("Authorization: Bearer %s", k->kc.token) : NULL;
    const char *headers[] = {auth, NULL};
    httpc_opts o = {.ca_file = k->kc.ca_file,
                    .cert_file = k->kc.cert_file,
                    .key_file = k->kc.key_file,
                    .ca_pem = k->kc.ca_pem,
                    .cert_pem = k->kc.cert_pem,
                    .key_pem = k->kc.key_pem,
                    .insecure = k->kc.insecure,
                    .headers = headers,
                    .timeout_ms = sc->timeout_ms ? sc->timeout_ms : 10000,
                    .conns = KUBEAPI_CONNS};
    k->http = httpc_new(&o, err, errlen);
    free(auth);
    if (!k->http) {
        kubeconfig_free(&k->kc);
        free(k);
        return NULL;
    }
    pthread_mutex_init(&k->mu, NULL);
    for (size_t i = 0; i < sc->n_resources; i++) {
        const cfg_kube_resource *cr = &sc->resources[i];
        kube_resource *r = add_res(k, cr->kind, cr->api_version, cr->plural, cr->namespaced);
        r->preferred = r->configured = 1;
    }
    return k;
}

void kubeapi_free(kubeapi *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n_res; i++) {
        kube_resource *r = k->res[i];
        free(r->kind);
        free(r->group);
        free(r->version);
        free(r->api_version);
        free(r->plural);
        free(r);
    }
    free(k->res);
    for (size_t i = 0; i < k->n_gv; i++)
        free(k->read_gv[i]);
    free(k->read_gv);
    for (size_t i = 0; i < k->n_tried; i++)
        free(k->tried[i].gv);
    free(k->tried);
    httpc_free(k->http);
    kubeconfig_free(&k->kc);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

const char *kubeapi_server(const kubeapi *k)
{
    return k->kc.server;
}

uint32_t kubeapi_timeout_ms(const kubeapi *k)
{
    return httpc_timeout_ms(k->http);
}

const char *kubeapi_message(json_object *reply)
{
    json_object *m;
    if (reply && json_object_object_get_ex(reply, "message", &m) &&
        json_object_is_type(m, json_type_string))
        return json_object_get_string(m);
    return "no message";
}

int kubeapi_call(kubeapi *k, const char *method, const char *path, const char *body,
                 const char *content_type, long *status, json_object **reply, char *err,
                 size_t errlen)
{
    char *url = xasprintf("%s%s", k->kc.server, path);
    strbuf out;
    sb_init(&out);
    *reply = NULL;
    int rc = httpc_request(k->http, method, url, body, content_type, status, &out, err, errlen);
    free(url);
    if (rc == HTTPC_ANSWERED && out.len) {
        json_tokener *tok = json_tokener_new();
        json_object *j = json_tokener_parse_ex(tok, out.s, (int)out.len);
        if (j && json_tokener_get_error(tok) == json_tokener_success &&
            json_object_is_type(j, json_type_object))
            *reply = j;
        else
            json_object_put(j);
        json_tokener_free(tok);
        if (!*reply)
            errf(err, errlen, "HTTP %ld: not a JSON reply: %.200s", *status, out.s);
    }
    sb_free(&out);
    return rc;
}

int kubeapi_stream(kubeapi *k, const char *path, uint32_t idle_ms, atomic_int *stop,
                   httpc_line_fn line, void *ud, long *status, char *err, size_t errlen)
{
    char *url = xasprintf("%s%s", k->kc.server, path);
    int rc = httpc_stream(k->http, "GET", url, NULL, idle_ms, stop, line, ud, status, err, errlen);
    free(url);
    return rc;
}

int kubeapi_parse_event(const char *text, size_t len, int *type, json_object **obj, char *err,
                        size_t errlen)
{
    static const char *const names[] = {NULL, "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    *obj = NULL;
    *type = 0;
    if (len > INT32_MAX)
        return errf(err, errlen, "a watch event of %zu bytes", len);
    json_tokener *tok = json_tokener_new();
    json_object *ev = json_tokener_parse_ex(tok, text, (int)len);
    int ok = ev && json_tokener_get_error(tok) == json_tokener_success &&
             json_tokener_get_parse_end(tok) == len && json_object_is_type(ev, json_type_object);
    json_tokener_free(tok);
    json_object *o = NULL, *t = NULL;
    if (!ok || !json_object_object_get_ex(ev, "type", &t) ||
        !json_object_is_type(t, json_type_string) || !json_object_object_get_ex(ev, "object", &o) ||
        !json_object_is_type(o, json_type_object)) {
        json_object_put(ev);
        return errf(err, errlen, "an unreadable watch event: %.200s", text);
    }
    for (int i = KUBE_EV_ADDED; i <= KUBE_EV_ERROR; i++)
        if (strcmp(json_object_get_string(t), names[i]) == 0)
            *type = i;
    if (!*type) {
        errf(err, errlen, "an unknown watch event type %.40s", json_object_get_string(t));
        json_object_put(ev);
        return -1;
    }
    *obj = json_object_get(o);
    json_object_put(ev);
    return 0;
}

/* ---- discovery ---- */

static int gv_read(const kubeapi *k, const char *gv)
{
    for (size_t i = 0; i < k->n_gv; i++)
        if (strcmp(k->read_gv[i], gv) == 0)
            return 1;
    return 0;
}

/* Whether the group version gv of a resource named in store.resources
 * may be asked now (never asked, or not within REDISCOVER_MS); marks it
 * asked. Each group version has its own time: one read does not hold
 * back another group's (k->mu held). */
static int may_ask(kubeapi *k, const char *gv)
{
    uint64_t now = clock_mono_ms();
    for (size_t i = 0; i < k->n_tried; i++) {
        if (strcmp(k->tried[i].gv, gv) != 0)
            continue;
        if (now - k->tried[i].ms < REDISCOVER_MS)
            return 0;
        k->tried[i].ms = now;
        return 1;
    }
    grow(&k->tried, &k->cap_tried, k->n_tried + 1, sizeof *k->tried);
    k->tried[k->n_tried++] = (struct gv_try){xstrdup(gv), now};
    return 1;
}

static kube_resource *find(const kubeapi *k, const char *gv, const char *plural)
{
    for (size_t i = 0; i < k->n_res; i++)
        if (strcmp(k->res[i]->api_version, gv) == 0 && strcmp(k->res[i]->plural, plural) == 0)
            return k->res[i];
    return NULL;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

/* Read one group version's resources (k->mu held). 0, or -1 with err. */
static int read_gv(kubeapi *k, const char *gv, int preferred, char *err, size_t errlen)
{
    if (gv_read(k, gv))
        return 0;
    char *path = strchr(gv, '/') ? xasprintf("/apis/%s", gv) : xasprintf("/api/%s", gv);
    long status;
    json_object *reply;
    int rc = kubeapi_call(k, "GET", path, NULL, NULL, &status, &reply, err, errlen);
    free(path);
    if (rc != HTTPC_ANSWERED || !reply || status != 200) {
        if (rc == HTTPC_ANSWERED)
            errf(err, errlen, "HTTP %ld: %s", status, kubeapi_message(reply));
        json_object_put(reply);
        return -1;
    }
    json_object *list;
    size_t n = json_object_object_get_ex(reply, "resources", &list) &&
                       json_object_is_type(list, json_type_array)
                   ? json_object_array_length(list)
                   : 0;
    /* the resources first, then their subresources */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            json_object *r = json_object_array_get_idx(list, i), *ns;
            const char *name = jstr(r, "name"), *kind = jstr(r, "kind");
            if (!name || !kind)
                continue;
            const char *slash = strchr(name, '/');
            if (pass == 0 && !slash) {
                kube_resource *had = find(k, gv, name);
                if (had) {
                    had->preferred |= preferred; /* read before as a version asked for */
                    continue;
                }
                kube_resource *kr = add_res(k, kind, gv, name,
                                            json_object_object_get_ex(r, "namespaced", &ns) &&
                                                json_object_get_boolean(ns));
                kr->preferred = preferred;
            } else if (pass == 1 && slash) {
                char *plural = xasprintf("%.*s", (int)(slash - name), name);
                kube_resource *kr = find(k, gv, plural);
                free(plural);
                if (!kr)
                    continue;
                if (strcmp(slash + 1, "status") == 0)
                    kr->has_status = 1;
                else if (strcmp(slash + 1, "binding") == 0)
                    kr->binding =
                        strcmp(kind, kr->kind) == 0 ? KUBE_BINDING_PATCH : KUBE_BINDING_OBJECT;
            }
        }
    json_object_put(reply);
    grow(&k->read_gv, &k->cap_gv, k->n_gv + 1, sizeof *k->read_gv);
    k->read_gv[k->n_gv++] = xstrdup(gv);
    return 0;
}

/* Read /api/v1 and each group's preferred version (k->mu held). */
static int discover(kubeapi *k, char *err, size_t errlen)
{
    k->discovered_ms = clock_mono_ms();
    /* what was read is read again: a CRD may have gained a version */
    for (size_t i = 0; i < k->n_gv; i++)
        free(k->read_gv[i]);
    k->n_gv = 0;
    if (read_gv(k, "v1", 1, err, errlen) < 0)
        return -1;
    long status;
    json_object *reply;
    int rc = kubeapi_call(k, "GET", "/apis", NULL, NULL, &status, &reply, err, errlen);
    if (rc != HTTPC_ANSWERED || !reply || status != 200) {
        if (rc == HTTPC_ANSWERED)
            errf(err, errlen, "HTTP %ld: %s", status, kubeapi_message(reply));
        json_object_put(reply);
        return -1;
    }
    json_object *groups;
    size_t n = json_object_object_get_ex(reply, "groups", &groups) &&
                       json_object_is_type(groups, json_type_array)
                   ? json_object_array_length(groups)
                   : 0;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
        json_object *g = json_object_array_get_idx(groups, i), *pv;
        const char *gv =
            json_object_object_get_ex(g, "preferredVersion", &pv) ? jstr(pv, "groupVersion") : NULL;
        if (gv)
            r = read_gv(k, gv, 1, err, errlen);
    }
    json_object_put(reply);
    if (r == 0)
        k->discovered = 1;
    return r;
}

/* The resource of kind among those read (k->mu held); *ambiguous names
 * the second group when the kind is served by several and none is
 * preferred by the rules. */
static const kube_resource *pick(const kubeapi *k, const char *api_version, const char *kind,
                                 const kube_resource **other)
{
    const kube_resource *best = NULL;
    int best_rank = -1;
    *other = NULL;
    for (size_t i = 0; i < k->n_res; i++) {
        const kube_resource *r = k->res[i];
        if (strcmp(r->kind, kind) != 0)
            continue;
        if (api_version) {
            if (strcmp(r->api_version, api_version) == 0)
                return r;
            continue;
        }
        int rank = r->configured ? 3 : !*r->group && r->preferred ? 2 : r->preferred ? 1 : 0;
        if (rank > best_rank) {
            best = r;
            best_rank = rank;
            *other = NULL;
        } else if (rank == best_rank && rank == 1 && strcmp(r->group, best->group) != 0) {
            *other = r;
        }
    }
    return best;
}

const kube_resource *kubeapi_resource(kubeapi *k, const char *api_version, const char *kind,
                                      char *err, size_t errlen)
{
    pthread_mutex_lock(&k->mu);
    const kube_resource *other, *r = pick(k, api_version, kind, &other);
    char e[512] = "";
    if (r && r->configured && !gv_read(k, r->api_version) && may_ask(k, r->api_version)) {
        /* named in store.resources: its subresources (status, binding)
         * are still the server's to say, or a status would be written
         * into the object, where the server drops it */
        char e2[512];
        read_gv(k, r->api_version, 0, e2, sizeof e2);
    }
    if (!r || other) {
        if (!k->discovered || clock_mono_ms() - k->discovered_ms >= REDISCOVER_MS)
            discover(k, e, sizeof e);
        if (api_version && !gv_read(k, api_version) && !e[0])
            read_gv(k, api_version, 0, e, sizeof e);
        r = pick(k, api_version, kind, &other);
    }
    pthread_mutex_unlock(&k->mu);
    if (r && other) {
        errf(err, errlen,
             "the API server %s serves kind %s in groups %s and %s: name the one to use in "
             "store.resources",
             k->kc.server, kind, r->group, other->group);
        return NULL;
    }
    if (!r && e[0])
        errf(err, errlen, "the API server %s: cannot read which resources it serves: %s",
             k->kc.server, e);
    else if (!r)
        errf(err, errlen,
             "the API server %s serves no kind %s%s%s (is its CustomResourceDefinition "
             "installed? or name it in store.resources)",
             k->kc.server, kind, api_version ? " in " : "", api_version ? api_version : "");
    return r;
}

char *kubeapi_path(const kube_resource *r, const char *ns, const char *name, const char *sub)
{
    strbuf b;
    sb_init(&b);
    if (*r->group)
        sb_printf(&b, "/apis/%s", r->api_version);
    else
        sb_printf(&b, "/api/%s", r->version);
    if (r->namespaced && ns && *ns)
        sb_printf(&b, "/namespaces/%s", ns);
    sb_printf(&b, "/%s", r->plural);
    if (name)
        sb_printf(&b, "/%s", name);
    if (name && sub)
        sb_printf(&b, "/%s", sub);
    return sb_steal(&b);
}
