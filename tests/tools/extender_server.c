/*
 * extender_server.c - a kube-scheduler HTTP extender for the tests
 * (extender.sh): it speaks the extender protocol v1 on 127.0.0.1 and
 * behaves as its arguments say, so each test starts the extender it
 * needs.
 *
 *   extender-server --port-file F [--record F] [--tls CERT KEY] [OPTION]...
 *
 * It plays an extender written in Go on the types of
 * k8s.io/kube-scheduler/extender/v1, which have no json tags: it reads a
 * request as Go's decoder does (keys matched without regard to ASCII
 * case, null as absent; label keys, a map's, exactly) and answers as
 * json.Marshal writes those types, every field under its Go name
 * ({"Nodes":..,"NodeNames":..,"FailedNodes":..,
 * "FailedAndUnresolvableNodes":..,"Error":""}, [{"Host":..,"Score":..}],
 * {"NodeNameToMetaVictims":{N:{"Pods":[{"UID":..}],"NumPDBViolations":..}}},
 * {"Error":""}), nil ones as null.
 *
 * It listens on a port the system picks and writes the number to F once
 * it serves (a rename: F is whole when it appears). Every request is
 * appended to the record file as one line, "VERB BODY" (the body as
 * received); a binding adds "BOUND namespace/name uid node".
 *   --label K=V        filter: Nodes with label K=V pass, the others are
 *                      failed with "node lacks label K=V"
 *   --unresolvable     ... in FailedAndUnresolvableNodes instead
 *   --pass-names A,B   filter with NodeNames (node-cache-capable): these
 *                      names pass, the others fail
 *   --drop NAME        filter: NAME is neither kept nor failed
 *   --stray NAME       filter: claim NAME passes (a Node it was not sent)
 *   --score-label K    prioritize: each Node scores its label K's value
 *   --error MSG        filter and bind answer with Error MSG
 *   preempt: every candidate Node is answered with its victims' UIDs
 *   and violations (NodeNameToMetaVictims), as sent, unless
 *   --preempt-drop NAME      NAME is left out (repeatable as A,B)
 *   --preempt-victims N=U,.. Node N's victims become the Pods of UIDs U
 *                            (none: N=)
 *   --preempt-stray NAME     NAME is answered too (not a candidate)
 *   --preempt-none           no candidates: {"NodeNameToMetaVictims":null}
 *   --slow-ms N        every answer waits N ms first (past the client's
 *                      timeout: what a slow extender looks like)
 *   --old-keys         answer with the lower camelCase keys of the
 *                      scheduler API before Kubernetes 1.17 ("nodenames",
 *                      "failedNodes", "host", "nodeNameToMetaVictims",
 *                      "pods", "uid", "error", ...) instead, and record
 *                      each answer too, as "ANSWER VERB BODY"
 *   --status N         every answer has HTTP status N
 *   --garbage          every answer is not JSON
 * Stops on SIGTERM or SIGINT.
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static struct {
    const char *record, *label, *pass_names, *drop, *stray, *score_label, *error;
    const char *preempt_drop, *preempt_victims, *preempt_stray;
    int unresolvable, garbage, status, preempt_none, old_keys;
    long slow_ms;
} opt = {.status = 200};

static pthread_mutex_t record_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void record(const char *verb, const char *text)
{
    if (!opt.record)
        return;
    pthread_mutex_lock(&record_mu);
    FILE *f = fopen(opt.record, "a");
    if (f) {
        fprintf(f, "%s %s\n", verb, text);
        fclose(f);
    }
    pthread_mutex_unlock(&record_mu);
}

/* The member of o named name without regard to ASCII case, the last one
 * when several are (Go decodes each in turn into the same field); NULL
 * when there is none, when it is null or when o is no object. */
static json_object *get(json_object *o, const char *name)
{
    json_object *found = NULL;
    if (!json_object_is_type(o, json_type_object))
        return NULL;
    json_object_object_foreach(o, k, v)
    {
        if (strcasecmp(k, name) == 0)
            found = v;
    }
    return found;
}

/* a string member, or "" (Go's zero value) */
static const char *str(json_object *o, const char *name)
{
    json_object *v = get(o, name);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static const char *label_of(json_object *node, const char *key)
{
    json_object *labels = get(get(node, "metadata"), "labels"), *v;
    /* a map: its keys are matched exactly */
    if (json_object_is_type(labels, json_type_object) &&
        json_object_object_get_ex(labels, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

static const char *name_of(json_object *node)
{
    return str(get(node, "metadata"), "name");
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* An ExtenderFilterResult as json.Marshal writes it: every field, nil
 * ones null (each argument may be NULL; ownership passes here). */
static json_object *filter_result(json_object *nodes, json_object *names, json_object *failed,
                                  json_object *unresolvable, const char *error)
{
    json_object *out = json_object_new_object();
    json_object_object_add(out, "Nodes", nodes);
    json_object_object_add(out, "NodeNames", names);
    json_object_object_add(out, "FailedNodes", failed);
    json_object_object_add(out, "FailedAndUnresolvableNodes", unresolvable);
    json_object_object_add(out, "Error", json_object_new_string(error ? error : ""));
    return out;
}

/* The filter verb's answer to args. */
static json_object *filter(json_object *args)
{
    json_object *failed, *names = get(args, "NodeNames"), *items = get(get(args, "Nodes"), "items");
    char why[256];
    if (opt.error)
        return filter_result(NULL, NULL, NULL, NULL, opt.error);
    failed = json_object_new_object();
    if (json_object_is_type(names, json_type_array)) {
        json_object *kept = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(names); i++) {
            json_object *e = json_object_array_get_idx(names, i);
            const char *n =
                json_object_is_type(e, json_type_string) ? json_object_get_string(e) : "";
            if (opt.drop && strcmp(n, opt.drop) == 0)
                continue;
            if (in_list(opt.pass_names, n))
                json_object_array_add(kept, json_object_new_string(n));
            else
                json_object_object_add(failed, n,
                                       json_object_new_string("not in the cache's list"));
        }
        if (opt.stray)
            json_object_array_add(kept, json_object_new_string(opt.stray));
        return opt.unresolvable ? filter_result(NULL, kept, NULL, failed, NULL)
                                : filter_result(NULL, kept, failed, NULL, NULL);
    }
    json_object *list = NULL;
    if (json_object_is_type(items, json_type_array)) {
        json_object *kept = json_object_new_array();
        char key[128] = "", val[128] = "";
        if (opt.label)
            sscanf(opt.label, "%127[^=]=%127s", key, val);
        for (size_t i = 0; i < json_object_array_length(items); i++) {
            json_object *node = json_object_array_get_idx(items, i);
            const char *n = name_of(node), *v = label_of(node, key);
            if (opt.drop && strcmp(n, opt.drop) == 0)
                continue;
            if (!opt.label || (v && strcmp(v, val) == 0)) {
                json_object_array_add(kept, json_object_get(node));
                continue;
            }
            snprintf(why, sizeof why, "node lacks label %s", opt.label);
            json_object_object_add(failed, n, json_object_new_string(why));
        }
        if (opt.stray) {
            json_object *st = json_object_new_object(), *m = json_object_new_object();
            json_object_object_add(m, "name", json_object_new_string(opt.stray));
            json_object_object_add(st, "metadata", m);
            json_object_array_add(kept, st);
        }
        /* a v1.NodeList: its own API keys */
        list = json_object_new_object();
        json_object_object_add(list, "metadata", json_object_new_object());
        json_object_object_add(list, "items", kept);
    }
    return opt.unresolvable ? filter_result(list, NULL, NULL, failed, NULL)
                            : filter_result(list, NULL, failed, NULL, NULL);
}

/* The prioritize verb's answer: a HostPriorityList [{Host, Score}]. */
static json_object *prioritize(json_object *args)
{
    json_object *out = json_object_new_array(), *items = get(get(args, "Nodes"), "items");
    for (size_t i = 0;
         json_object_is_type(items, json_type_array) && i < json_object_array_length(items); i++) {
        json_object *node = json_object_array_get_idx(items, i), *hp = json_object_new_object();
        const char *v = opt.score_label ? label_of(node, opt.score_label) : NULL;
        json_object_object_add(hp, "Host", json_object_new_string(name_of(node)));
        json_object_object_add(hp, "Score", json_object_new_int64(v ? atoll(v) : 0));
        json_object_array_add(out, hp);
    }
    return out;
}

/* A MetaPod {"UID": uid}. */
static json_object *meta_pod(const char *uid, size_t len)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "UID", json_object_new_string_len(uid, (int)len));
    return m;
}

/* The MetaPods of a Victims' or MetaVictims' Pods: a whole Pod's
 * metadata.uid, or a MetaPod's UID. */
static json_object *uids_of(json_object *victims)
{
    json_object *out = json_object_new_array(), *pods = get(victims, "Pods");
    for (size_t i = 0;
         json_object_is_type(pods, json_type_array) && i < json_object_array_length(pods); i++) {
        json_object *p = json_object_array_get_idx(pods, i), *meta = get(p, "metadata");
        const char *uid = str(meta ? meta : p, "uid");
        json_object_array_add(out, meta_pod(uid, strlen(uid)));
    }
    return out;
}

/* --preempt-victims N=U,...: the MetaPods for node, or NULL when it is
 * not named. */
static json_object *victims_for(const char *node)
{
    const char *v = opt.preempt_victims;
    size_t n = strlen(node);
    if (!v || strncmp(v, node, n) != 0 || v[n] != '=')
        return NULL;
    json_object *out = json_object_new_array();
    for (const char *p = v + n + 1; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        json_object_array_add(out, meta_pod(p, len));
        p = e ? e + 1 : p + len;
    }
    return out;
}

/* The preempt verb's answer: an ExtenderPreemptionResult. */
static json_object *preempt(json_object *args)
{
    json_object *out = json_object_new_object(), *map, *in;
    if (opt.preempt_none) {
        json_object_object_add(out, "NodeNameToMetaVictims", NULL);
        return out;
    }
    /* whichever the request carries (the other is null) */
    in = get(args, "NodeNameToVictims");
    if (!json_object_is_type(in, json_type_object))
        in = get(args, "NodeNameToMetaVictims");
    map = json_object_new_object();
    if (json_object_is_type(in, json_type_object)) {
        json_object_object_foreach(in, node, victims)
        {
            json_object *mv, *chosen;
            if (in_list(opt.preempt_drop, node))
                continue;
            chosen = victims_for(node);
            mv = json_object_new_object();
            json_object_object_add(mv, "Pods", chosen ? chosen : uids_of(victims));
            json_object *pdb = get(victims, "NumPDBViolations");
            json_object_object_add(mv, "NumPDBViolations",
                                   json_object_new_int64(pdb ? json_object_get_int64(pdb) : 0));
            json_object_object_add(map, node, mv);
        }
    }
    if (opt.preempt_stray) {
        json_object *mv = json_object_new_object(), *pods = json_object_new_array();
        json_object_array_add(pods, meta_pod("uid-nobody", strlen("uid-nobody")));
        json_object_object_add(mv, "Pods", pods);
        json_object_object_add(mv, "NumPDBViolations", json_object_new_int64(0));
        json_object_object_add(map, opt.preempt_stray, mv);
    }
    json_object_object_add(out, "NodeNameToMetaVictims", map);
    return out;
}

/* The bind verb's answer: an ExtenderBindingResult. */
static json_object *binding(json_object *args)
{
    json_object *out = json_object_new_object();
    char line[512];
    json_object_object_add(out, "Error", json_object_new_string(opt.error ? opt.error : ""));
    if (opt.error)
        return out;
    snprintf(line, sizeof line, "%s/%s %s %s", str(args, "PodNamespace"), str(args, "PodName"),
             str(args, "PodUID"), str(args, "Node"));
    record("BOUND", line);
    return out;
}

/* --old-keys: the pre-1.17 json tag of a Go field name, or NULL */
static const char *old_key(const char *k)
{
    static const char *const map[][2] = {
        {"Nodes", "nodes"},
        {"NodeNames", "nodenames"},
        {"FailedNodes", "failedNodes"},
        {"FailedAndUnresolvableNodes", "failedAndUnresolvableNodes"},
        {"Error", "error"},
        {"Host", "host"},
        {"Score", "score"},
        {"NodeNameToMetaVictims", "nodeNameToMetaVictims"},
        {"Pods", "pods"},
        {"NumPDBViolations", "numPDBViolations"},
        {"UID", "uid"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(k, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* o with the Go field names of extender/v1 renamed to the old tags, at
 * the levels where they are fields (a NodeList's items and the map of
 * node names keep their keys). Ownership of o passes here. */
static json_object *with_old_keys(json_object *o, int map_of_victims)
{
    if (json_object_is_type(o, json_type_array)) {
        json_object *out = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(o); i++)
            json_object_array_add(
                out, with_old_keys(json_object_get(json_object_array_get_idx(o, i)), 0));
        json_object_put(o);
        return out;
    }
    if (!json_object_is_type(o, json_type_object))
        return o;
    json_object *out = json_object_new_object();
    json_object_object_foreach(o, k, v)
    {
        const char *old = map_of_victims ? NULL : old_key(k);
        json_object *val = json_object_get(v);
        if (map_of_victims || (old && (!strcmp(k, "NodeNameToMetaVictims") || !strcmp(k, "Pods"))))
            val = with_old_keys(val, old && !strcmp(k, "NodeNameToMetaVictims"));
        json_object_object_add(out, old ? old : k, val);
    }
    json_object_put(o);
    return out;
}

typedef struct upload {
    char *s;
    size_t len;
} upload;

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls)
{
    (void)cls;
    (void)version;
    upload *u = *con_cls;
    if (!u) {
        *con_cls = calloc(1, sizeof *u);
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*size) {
        char *g = realloc(u->s, u->len + *size + 1);
        if (!g)
            return MHD_NO;
        u->s = g;
        memcpy(u->s + u->len, data, *size);
        u->len += *size;
        u->s[u->len] = '\0';
        *size = 0;
        return MHD_YES;
    }
    const char *verb = url[0] == '/' ? url + 1 : url;
    record(verb, u->s ? u->s : "");
    if (opt.slow_ms) {
        struct timespec ts = {opt.slow_ms / 1000, (opt.slow_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (strcmp(method, "POST") != 0)
        return answer(conn, 405, "{}");
    if (opt.status != 200)
        return answer(conn, (unsigned)opt.status, "the extender failed");
    if (opt.garbage)
        return answer(conn, 200, "<html>this is not JSON</html>");
    json_object *args = json_tokener_parse(u->s ? u->s : "");
    json_object *out = NULL;
    if (strstr(verb, "preempt"))
        out = preempt(args);
    else if (strstr(verb, "filter"))
        out = filter(args);
    else if (strstr(verb, "prioritize"))
        out = prioritize(args);
    else if (strstr(verb, "bind"))
        out = binding(args);
    if (out && opt.old_keys) {
        out = with_old_keys(out, 0);
        char line[64];
        snprintf(line, sizeof line, "ANSWER %.40s", verb);
        record(line, json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
    }
    enum MHD_Result rc =
        out ? answer(conn, 200, json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN))
            : answer(conn, 404, "{}");
    json_object_put(out);
    json_object_put(args);
    return rc;
}

static void done(void *cls, struct MHD_Connection *conn, void **con_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    upload *u = *con_cls;
    if (u) {
        free(u->s);
        free(u);
    }
    *con_cls = NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            s = realloc(s, cap);
        }
        memcpy(s + len, chunk, n);
        len += n;
        s[len] = '\0';
    }
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL, *cert = NULL, *key = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name, dst)                                                                             \
    if (strcmp(a, name) == 0 && next) {                                                            \
        dst = next;                                                                                \
        i++;                                                                                       \
        continue;                                                                                  \
    }
        ARG("--port-file", port_file)
        ARG("--record", opt.record)
        ARG("--label", opt.label)
        ARG("--pass-names", opt.pass_names)
        ARG("--drop", opt.drop)
        ARG("--stray", opt.stray)
        ARG("--score-label", opt.score_label)
        ARG("--error", opt.error)
        ARG("--preempt-drop", opt.preempt_drop)
        ARG("--preempt-victims", opt.preempt_victims)
        ARG("--preempt-stray", opt.preempt_stray)
#undef ARG
        if (strcmp(a, "--tls") == 0 && i + 2 < argc) {
            cert = argv[++i];
            key = argv[++i];
        } else if (strcmp(a, "--slow-ms") == 0 && next) {
            opt.slow_ms = atol(argv[++i]);
        } else if (strcmp(a, "--status") == 0 && next) {
            opt.status = atoi(argv[++i]);
        } else if (strcmp(a, "--unresolvable") == 0) {
            opt.unresolvable = 1;
        } else if (strcmp(a, "--garbage") == 0) {
            opt.garbage = 1;
        } else if (strcmp(a, "--old-keys") == 0) {
            opt.old_keys = 1;
        } else if (strcmp(a, "--preempt-none") == 0) {
            opt.preempt_none = 1;
        } else {
            fprintf(stderr, "extender-server: unknown argument '%s'\n", a);
            return 2;
        }
    }
    if (!port_file) {
        fprintf(stderr, "usage: extender-server --port-file FILE [--record FILE] [OPTION]...\n");
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    char *cert_pem = cert ? slurp(cert) : NULL, *key_pem = key ? slurp(key) : NULL;
    if (cert && (!cert_pem || !key_pem)) {
        fprintf(stderr, "extender-server: cannot read %s or %s\n", cert, key);
        return 1;
    }
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | (cert ? MHD_USE_TLS : 0);
    struct MHD_Daemon *d =
        cert ? MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_HTTPS_MEM_CERT,
                                cert_pem, MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_END)
             : MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, &sa,
                                MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "extender-server: cannot start the HTTP server\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *f = fopen(tmp, "w");
    if (!f || !info || fprintf(f, "%u\n", (unsigned)info->port) < 0 || fclose(f) != 0 ||
        rename(tmp, port_file) != 0) {
        fprintf(stderr, "extender-server: cannot write %s\n", port_file);
        MHD_stop_daemon(d);
        return 1;
    }
    while (!stop)
        pause();
    MHD_stop_daemon(d);
    free(cert_pem);
    free(key_pem);
    return 0;
}
