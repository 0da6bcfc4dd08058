/*
 * test_kube.c - what the Kubernetes API store reads without a server: a
 * kubeconfig (contexts, *-data and files relative to the kubeconfig,
 * tokens, the errors an operator meets), watch events, resource paths,
 * and the store group of a config. The store against a real API server
 * is tests/kube.sh.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cfg.h"
#include "manifest.h"
#include "store.h"
#include "testutil.h"
#ifdef HAVE_ETCD
#include "kubeapi.h"
#include "kubeconfig.h"
#include "store_kube.h"
#endif

static char dir[64];

static int load(const char *text, cfg_store *sc, char *err, size_t errlen)
{
    tu_write(dir, "s.cfg", text);
    char path[128];
    snprintf(path, sizeof path, "%s/s.cfg", dir);
    return config_load_store(path, sc, err, errlen);
}

START_TEST(store_group)
{
    char err[1024];
    cfg_store sc;
    tu_mkdtemp(dir, "kubecfg");
    tu_write(dir, "kc", "apiVersion: v1\n");
    ck_assert_int_eq(load("store = { type = \"kubernetes\"; kubeconfig = \"kc\";\n"
                          "  kinds = [ \"Pod\", \"Node\" ];\n"
                          "  resources = ( { kind = \"Shoot\"; api_version = "
                          "\"core.gardener.cloud/v1beta1\"; plural = \"shoots\"; } ); };\n",
                          &sc, err, sizeof err),
                     0);
    ck_assert_str_eq(sc.type, "kubernetes");
    ck_assert_msg(strstr(sc.kubeconfig, "/kc") && sc.kubeconfig[0] == '/', "%s", sc.kubeconfig);
    ck_assert_str_eq(sc.lease_namespace, "kube-system");
    ck_assert_str_eq(sc.lease_name, "trellis");
    ck_assert_uint_eq(sc.lease_ttl_s, 15);
    ck_assert_uint_eq(sc.n_kinds, 2);
    ck_assert_uint_eq(sc.n_resources, 1);
    ck_assert_int_eq(sc.resources[0].namespaced, 1);
    config_store_free(&sc);
    ck_assert_int_eq(
        load("store = { type = \"kubernetes\"; kubeconfig = \"nope\"; };\n", &sc, err, sizeof err),
        -1);
    ck_assert_msg(strstr(err, "s.cfg:1: store.kubeconfig: cannot read"), "%s", err);
    ck_assert_int_eq(
        load("store = { type = \"kubernetes\"; prefix = \"/x\"; };\n", &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "store.prefix is a setting of the etcd store"), "%s", err);
    ck_assert_int_eq(
        load("store = { type = \"kubernetes\";\n  resources = ( { kind = \"X\"; } ); };\n", &sc,
             err, sizeof err),
        -1);
    ck_assert_msg(strstr(err, "s.cfg:2:"), "%s", err);
    ck_assert_int_eq(
        load("store = { type = \"file\"; lease_name = \"x\"; };\n", &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "store.lease_name is a setting of the Kubernetes API store"), "%s",
                  err);
    tu_rmtree(dir);
}
END_TEST

#ifdef HAVE_ETCD
static const char *KC =
    "apiVersion: v1\n"
    "kind: Config\n"
    "clusters:\n"
    "- name: a\n"
    "  cluster:\n"
    "    server: https://10.0.0.1:6443/\n"
    "    certificate-authority: pki/ca.crt\n"
    "- name: b\n"
    "  cluster:\n"
    "    server: https://b.example:443\n"
    "    certificate-authority-data: "
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnh4Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K\n"
    "- name: insecure\n"
    "  cluster:\n"
    "    server: https://i.example:443\n"
    "    insecure-skip-tls-verify: true\n"
    "- name: insecure-with-ca\n"
    "  cluster:\n"
    "    server: https://i.example:443\n"
    "    certificate-authority: pki/ca.crt\n"
    "    insecure-skip-tls-verify: true\n"
    "users:\n"
    "- name: both\n"
    "  user:\n"
    "    client-certificate: c.crt\n"
    "    client-key: c.key\n"
    "    token: t0k\n"
    "- name: nothing\n"
    "  user:\n"
    "- name: cert\n"
    "  user:\n"
    "    client-certificate: /abs/c.crt\n"
    "    client-key: c.key\n"
    "- name: tok\n"
    "  user:\n"
    "    token: s3cret\n"
    "- name: tokfile\n"
    "  user:\n"
    "    tokenFile: token.txt\n"
    "- name: half\n"
    "  user:\n"
    "    client-certificate: c.crt\n"
    "- name: badpem\n"
    "  user:\n"
    "    client-certificate-data: bm90IGEgcGVt\n"
    "    client-key-data: bm90IGEgcGVt\n"
    "contexts:\n"
    "- name: one\n"
    "  context: {cluster: a, user: cert}\n"
    "- name: two\n"
    "  context: {cluster: b, user: tok}\n"
    "- name: three\n"
    "  context: {cluster: b, user: tokfile}\n"
    "- name: four\n"
    "  context: {cluster: a, user: half}\n"
    "- name: five\n"
    "  context: {cluster: a, user: badpem}\n"
    "- name: six\n"
    "  context: {cluster: nowhere, user: tok}\n"
    "- name: seven\n"
    "  context: {cluster: insecure, user: both}\n"
    "- name: eight\n"
    "  context: {cluster: insecure-with-ca, user: nothing}\n"
    "- name: nine\n"
    "  context: {cluster: a}\n"
    "current-context: one\n";

static int parse(const char *ctx, kubeconfig *kc, char *err, size_t errlen)
{
    return kubeconfig_parse("kc.yaml", dir, KC, strlen(KC), ctx, kc, err, errlen);
}

START_TEST(kubeconfig_contexts)
{
    char err[1024];
    kubeconfig kc;
    tu_mkdtemp(dir, "kubeconfig");
    ck_assert_int_eq(parse(NULL, &kc, err, sizeof err), 0);
    ck_assert_str_eq(kc.context, "one");
    ck_assert_str_eq(kc.server, "https://10.0.0.1:6443"); /* the slash dropped */
    char want[256];
    snprintf(want, sizeof want, "%s/pki/ca.crt", dir);
    ck_assert_str_eq(kc.ca_file, want);
    ck_assert_str_eq(kc.cert_file, "/abs/c.crt");
    snprintf(want, sizeof want, "%s/c.key", dir);
    ck_assert_str_eq(kc.key_file, want);
    ck_assert_ptr_null(kc.token);
    ck_assert_int_eq(kc.insecure, 0);
    kubeconfig_free(&kc);

    ck_assert_int_eq(parse("two", &kc, err, sizeof err), 0);
    ck_assert_str_eq(kc.token, "s3cret");
    ck_assert_int_eq(kc.insecure, 0);
    ck_assert_str_eq(kc.ca_pem, "-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n");
    ck_assert_ptr_null(kc.ca_file);
    kubeconfig_free(&kc);

    /* odd but valid: a client certificate and a token together (both
     * sent, as client-go does), no CA with insecure-skip-tls-verify, a
     * user with nothing in it, a context with no user */
    ck_assert_int_eq(parse("seven", &kc, err, sizeof err), 0);
    ck_assert_str_eq(kc.token, "t0k");
    ck_assert_ptr_nonnull(kc.cert_file);
    ck_assert_ptr_nonnull(kc.key_file);
    ck_assert_int_eq(kc.insecure, 1);
    ck_assert_ptr_null(kc.ca_file);
    kubeconfig_free(&kc);
    ck_assert_int_eq(parse("nine", &kc, err, sizeof err), 0);
    ck_assert_ptr_null(kc.token);
    ck_assert_ptr_null(kc.cert_file);
    kubeconfig_free(&kc);

    tu_write(dir, "token.txt", "from-a-file\n");
    ck_assert_int_eq(parse("three", &kc, err, sizeof err), 0);
    ck_assert_str_eq(kc.token, "from-a-file"); /* the newline dropped */
    kubeconfig_free(&kc);

    /* KUBECONFIG as a list: the first file in it that exists */
    tu_write(dir, "kc.yaml", KC);
    char list[256];
    snprintf(list, sizeof list, "%s/missing.yaml:%s/kc.yaml", dir, dir);
    setenv("KUBECONFIG", list, 1);
    ck_assert_int_eq(kubeconfig_load(NULL, "two", &kc, err, sizeof err), 0);
    ck_assert_str_eq(kc.server, "https://b.example:443");
    kubeconfig_free(&kc);
    snprintf(list, sizeof list, "%s/missing.yaml:%s/gone.yaml", dir, dir);
    setenv("KUBECONFIG", list, 1);
    ck_assert_int_eq(kubeconfig_load(NULL, NULL, &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "missing.yaml"), "%s", err);
    setenv("KUBECONFIG", "::", 1);
    ck_assert_int_eq(kubeconfig_load(NULL, NULL, &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "KUBECONFIG names no file"), "%s", err);
    unsetenv("KUBECONFIG");
    tu_rmtree(dir);
}
END_TEST

START_TEST(kubeconfig_errors)
{
    char err[1024];
    kubeconfig kc;
    tu_mkdtemp(dir, "kubeconfig");
    ck_assert_int_eq(parse("nope", &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "kc.yaml: no context named 'nope'"), "%s", err);
    ck_assert_int_eq(parse("three", &kc, err, sizeof err), -1); /* no token.txt */
    ck_assert_msg(strstr(err, "user 'tokfile': tokenFile:"), "%s", err);
    ck_assert_int_eq(parse("four", &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "a client certificate needs its key"), "%s", err);
    ck_assert_int_eq(parse("five", &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "client-certificate-data: expected the base64 of a PEM text"), "%s",
                  err);
    /* a CA and insecure-skip-tls-verify together: client-go refuses this
     * ("specifying a root certificates file with the insecure flag is not
     * allowed"); trellis did not verify the server and said nothing */
    ck_assert_int_eq(parse("eight", &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "kc.yaml: cluster 'insecure-with-ca': insecure-skip-tls-verify and "
                              "certificate-authority together"),
                  "%s", err);
    ck_assert_int_eq(parse("six", &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "names cluster 'nowhere', which clusters does not hold"), "%s", err);
    const char *nocur = "apiVersion: v1\nkind: Config\n";
    ck_assert_int_eq(kubeconfig_parse("x", dir, nocur, strlen(nocur), NULL, &kc, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "no current-context"), "%s", err);
    const char *broken = "clusters: [\n";
    ck_assert_int_eq(kubeconfig_parse("x", dir, broken, strlen(broken), NULL, &kc, err, sizeof err),
                     -1);
    const char *noserver = "clusters:\n- name: a\n  cluster: {server: ftp://x}\n"
                           "contexts:\n- name: c\n  context: {cluster: a}\ncurrent-context: c\n";
    ck_assert_int_eq(
        kubeconfig_parse("x", dir, noserver, strlen(noserver), NULL, &kc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "expected server: https://HOST:PORT"), "%s", err);
    tu_rmtree(dir);
}
END_TEST

START_TEST(watch_events)
{
    char err[512];
    int type;
    json_object *o;
    const char *add =
        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}}";
    ck_assert_int_eq(kubeapi_parse_event(add, strlen(add), &type, &o, err, sizeof err), 0);
    ck_assert_int_eq(type, KUBE_EV_ADDED);
    json_object_put(o);
    const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}";
    ck_assert_int_eq(kubeapi_parse_event(gone, strlen(gone), &type, &o, err, sizeof err), 0);
    ck_assert_int_eq(type, KUBE_EV_ERROR);
    json_object_put(o);
    const char *bad[] = {"{\"type\":\"ADDED\"}", "{\"type\":\"SOMETHING\",\"object\":{}}",
                         "{\"type\":\"ADDED\",\"object\":{}} trailing", "[1]", "{"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_int_eq(kubeapi_parse_event(bad[i], strlen(bad[i]), &type, &o, err, sizeof err),
                         -1);
}
END_TEST

START_TEST(resource_paths)
{
    kube_resource pods = {.kind = "Pod",
                          .group = "",
                          .version = "v1",
                          .api_version = "v1",
                          .plural = "pods",
                          .namespaced = 1};
    kube_resource shoots = {.kind = "Shoot",
                            .group = "core.gardener.cloud",
                            .version = "v1beta1",
                            .api_version = "core.gardener.cloud/v1beta1",
                            .plural = "shoots",
                            .namespaced = 1};
    kube_resource nodes = {
        .kind = "Node", .group = "", .version = "v1", .api_version = "v1", .plural = "nodes"};
    char *p = kubeapi_path(&pods, "shop", "web-0", "binding");
    ck_assert_str_eq(p, "/api/v1/namespaces/shop/pods/web-0/binding");
    free(p);
    p = kubeapi_path(&pods, NULL, NULL, NULL);
    ck_assert_str_eq(p, "/api/v1/pods");
    free(p);
    p = kubeapi_path(&shoots, "garden-a", "s", "status");
    ck_assert_str_eq(p, "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s/status");
    free(p);
    p = kubeapi_path(&nodes, "ignored", "n1", NULL);
    ck_assert_str_eq(p, "/api/v1/nodes/n1");
    free(p);
}
END_TEST

/* A fence that lets the flush start and then says the Lease is lost. */
static atomic_int fence_calls; /* asked from the flush's threads */
static int fence_once(void *ud, char *why, size_t whylen)
{
    (void)ud;
    if (atomic_fetch_add(&fence_calls, 1) == 0)
        return 1;
    snprintf(why, whylen, "the Lease is held by another host");
    return 0;
}

static int n_failed, n_fenced;
static void on_failed(void *ud, const char *id, const char *message)
{
    (void)ud;
    (void)id;
    n_failed++;
    n_fenced += strstr(message, "the Lease is held by another host") != NULL;
}

/* The fence is asked before every request a flush sends, not once a
 * flush: a host that loses its Lease while a long flush runs sends no
 * more writes (the server here is never reached: nothing listens). */
START_TEST(fence_each_write)
{
    char err[1024];
    cfg_store sc;
    tu_mkdtemp(dir, "kubefence");
    tu_write(dir, "kc",
             "apiVersion: v1\nclusters:\n- name: c\n  cluster: { server: https://127.0.0.1:1 }\n"
             "contexts:\n- name: x\n  context: { cluster: c }\ncurrent-context: x\n");
    ck_assert_int_eq(
        load("store = { type = \"kubernetes\"; kubeconfig = \"kc\"; timeout_ms = 500;\n"
             "  resources = ( { kind = \"Thing\"; api_version = \"example.com/v1\";\n"
             "    plural = \"things\"; namespaced = true; } ); };\n",
             &sc, err, sizeof err),
        0);
    store *st = store_open(&sc, NULL, 0, err, sizeof err);
    ck_assert_msg(st != NULL, "%s", err);
    st->fence = fence_once;
    for (int i = 0; i < 8; i++) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Thing\",\"metadata\":{"
                 "\"name\":\"t%d\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"}}",
                 i);
        trellis_object *o = tu_obj(json);
        ck_assert_int_eq(st->ops->remove(st, o, err, sizeof err), 0);
        object_unref(o);
    }
    atomic_store(&fence_calls, 0);
    n_failed = n_fenced = 0;
    ck_assert_int_eq(st->ops->flush(st, on_failed, NULL, err, sizeof err), -1);
    size_t writes, requests;
    store_kube_counts(st, &writes, &requests);
    ck_assert_uint_eq(requests, 0);
    ck_assert_uint_eq(writes, 0);
    ck_assert_int_eq(n_failed, 8);
    ck_assert_int_eq(n_fenced, 8);
    st->ops->destroy(st);
    config_store_free(&sc);
    tu_rmtree(dir);
}
END_TEST

/* ---- a fake API server (plain HTTP on 127.0.0.1): what it answers to a
 * request line is the test's; it logs every request line it got ---- */
typedef struct fake {
    int fd, port;
    pthread_t thr;
    pthread_mutex_t mu;
    char log[8192];
    /* the reply to "METHOD PATH": status and body */
    void (*answer)(const char *line, int *status, const char **body);
} fake;

static void *fake_run(void *arg)
{
    fake *f = arg;
    for (;;) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char req[16384];
        size_t n = 0;
        ssize_t r;
        /* the headers, then a body of Content-Length */
        while (n < sizeof req - 1 && (r = read(c, req + n, sizeof req - 1 - n)) > 0) {
            n += (size_t)r;
            req[n] = '\0';
            char *end = strstr(req, "\r\n\r\n");
            if (!end)
                continue;
            char *cl = strstr(req, "Content-Length: ");
            size_t want = (size_t)(end + 4 - req) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
            if (n >= want)
                break;
        }
        req[n] = '\0';
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(req, "\r"), req);
        char *http = strstr(line, " HTTP/");
        if (http)
            *http = '\0';
        pthread_mutex_lock(&f->mu);
        if (strlen(f->log) + strlen(line) + 2 < sizeof f->log) {
            strcat(f->log, line);
            strcat(f->log, "\n");
        }
        pthread_mutex_unlock(&f->mu);
        int status = 404;
        const char *body = "{\"kind\":\"Status\",\"code\":404,\"message\":\"not here\"}";
        f->answer(line, &status, &body);
        char head[256];
        snprintf(head, sizeof head,
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n\r\n",
                 status, strlen(body));
        ssize_t w1 = write(c, head, strlen(head)), w2 = write(c, body, strlen(body));
        (void)w1;
        (void)w2;
        close(c);
    }
}

static void fake_start(fake *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(f->fd, 64), 0);
    socklen_t al = sizeof a;
    getsockname(f->fd, (struct sockaddr *)&a, &al);
    f->port = ntohs(a.sin_port);
    pthread_create(&f->thr, NULL, fake_run, f);
}

static void fake_stop(fake *f)
{
    shutdown(f->fd, SHUT_RDWR);
    close(f->fd);
    pthread_join(f->thr, NULL);
    pthread_mutex_destroy(&f->mu);
}

/* A store of Things (example.com/v1, named in store.resources) at f. */
static store *fake_store(fake *f, cfg_store *sc)
{
    char err[1024], kc[512];
    tu_mkdtemp(dir, "kubefake");
    snprintf(kc, sizeof kc,
             "apiVersion: v1\nclusters:\n- name: c\n  cluster: { server: http://127.0.0.1:%d }\n"
             "contexts:\n- name: x\n  context: { cluster: c }\ncurrent-context: x\n",
             f->port);
    tu_write(dir, "kc", kc);
    ck_assert_int_eq(
        load("store = { type = \"kubernetes\"; kubeconfig = \"kc\"; timeout_ms = 2000;\n"
             "  kinds = [ \"Thing\" ];\n"
             "  resources = ( { kind = \"Thing\"; api_version = \"example.com/v1\";\n"
             "    plural = \"things\"; namespaced = true; } ); };\n",
             sc, err, sizeof err),
        0);
    store *st = store_open(sc, NULL, 0, err, sizeof err);
    ck_assert_msg(st != NULL, "%s", err);
    return st;
}

static const char *DISCOVERY =
    "{\"kind\":\"APIResourceList\",\"groupVersion\":\"example.com/v1\",\"resources\":["
    "{\"name\":\"things\",\"kind\":\"Thing\",\"namespaced\":true},"
    "{\"name\":\"things/status\",\"kind\":\"Thing\",\"namespaced\":true}]}";

/* every continue token has expired */
static void answer_expired(const char *line, int *status, const char **body)
{
    if (strcmp(line, "GET /apis/example.com/v1") == 0) {
        *status = 200;
        *body = DISCOVERY;
    } else if (strstr(line, "GET /apis/example.com/v1/things?") && !strstr(line, "continue=")) {
        *status = 200;
        *body = "{\"kind\":\"ThingList\",\"metadata\":{\"resourceVersion\":\"5\",\"continue\":"
                "\"abc\"},\"items\":[{\"metadata\":{\"name\":\"t1\",\"namespace\":\"ns\","
                "\"resourceVersion\":\"5\"}}]}";
    } else if (strstr(line, "continue=abc")) {
        *status = 410;
        *body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\",\"message\":\"The "
                "provided continue parameter is too old\"}";
    }
}

/* A list whose continue token expires every time is given up, saying
 * why, rather than started over without end (the host hung at start). */
START_TEST(list_continue_expires)
{
    fake f;
    fake_start(&f);
    f.answer = answer_expired;
    cfg_store sc;
    store *st = fake_store(&f, &sc);
    manifest_set ms;
    manifest_set_init(&ms);
    char err[1024];
    ck_assert_int_eq(st->ops->list(st, &ms, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot list Thing") && strstr(err, "410"), "%s", err);
    manifest_set_free(&ms);
    st->ops->destroy(st);
    config_store_free(&sc);
    fake_stop(&f);
    tu_rmtree(dir);
}
END_TEST

static void answer_discovery(const char *line, int *status, const char **body)
{
    if (strcmp(line, "GET /apis/example.com/v1") == 0) {
        *status = 200;
        *body = DISCOVERY;
    } else if (strncmp(line, "PATCH ", 6) == 0) {
        *status = 200;
        *body = "{\"kind\":\"Thing\",\"metadata\":{\"name\":\"t1\",\"namespace\":\"ns\"}}";
    }
}

static char last_failure[1024];
static void keep_failure(void *ud, const char *id, const char *message)
{
    (void)ud;
    snprintf(last_failure, sizeof last_failure, "%s: %s", id, message);
}

/* A patch of the status subresource that also edits something outside
 * the status: the server would ignore that part, so the write fails
 * saying so instead of reporting it written. */
START_TEST(status_patch_outside_status)
{
    fake f;
    fake_start(&f);
    f.answer = answer_discovery;
    cfg_store sc;
    store *st = fake_store(&f, &sc);
    trellis_object *o =
        tu_obj("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Thing\",\"metadata\":{"
               "\"name\":\"t1\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"}}");
    char err[1024];
    store_edit ok[1] = {{"status.phase", "Ready", STORE_SET}};
    ck_assert_int_eq(st->ops->patch(st, o, "status", ok, 1, err, sizeof err), 0);
    ck_assert_int_eq(st->ops->flush(st, keep_failure, NULL, err, sizeof err), 0);
    ck_assert_msg(strstr(f.log, "PATCH /apis/example.com/v1/namespaces/ns/things/t1/status"), "%s",
                  f.log);
    f.log[0] = '\0';
    store_edit mixed[2] = {{"status.phase", "Ready", STORE_SET},
                           {"metadata.labels.tier", "gold", STORE_SET}};
    ck_assert_int_eq(st->ops->patch(st, o, "status", mixed, 2, err, sizeof err), 0);
    last_failure[0] = '\0';
    ck_assert_int_eq(st->ops->flush(st, keep_failure, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(last_failure, "metadata.labels.tier is outside the status"), "%s",
                  last_failure);
    ck_assert_msg(!strstr(f.log, "PATCH"), "%s", f.log);
    object_unref(o);
    st->ops->destroy(st);
    config_store_free(&sc);
    fake_stop(&f);
    tu_rmtree(dir);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("kube");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, store_group);
#ifdef HAVE_ETCD
    tcase_add_test(tc, kubeconfig_contexts);
    tcase_add_test(tc, kubeconfig_errors);
    tcase_add_test(tc, watch_events);
    tcase_add_test(tc, resource_paths);
    tcase_add_test(tc, fence_each_write);
    tcase_add_test(tc, list_continue_expires);
    tcase_add_test(tc, status_patch_outside_status);
#endif
    suite_add_tcase(s, tc);
    return tu_run(s);
}
