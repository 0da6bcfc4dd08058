/*
 * test_etcd.c - the etcd gateway's JSON as etcdclient.c reads it (proto3:
 * base64 bytes, int64 as strings, zero fields left out) and the store
 * group of a config as cfg.c reads it for an etcd store. No server: the
 * store against a real etcd is tests/etcd.sh.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "store.h"
#include "testutil.h"
#ifdef HAVE_ETCD
#include "base64.h"
#include "etcdclient.h"
#endif

static char dir[64];

/* The store group of a config holding text: 0 or -1 (err). */
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
    tu_mkdtemp(dir, "etcdcfg");
    ck_assert_int_eq(load("store = { type = \"etcd\"; endpoints = [ \"http://a:1\", "
                          "\"https://b:2\" ]; };\n",
                          &sc, err, sizeof err),
                     0);
    ck_assert_str_eq(sc.type, "etcd");
    ck_assert_uint_eq(sc.n_endpoints, 2);
    ck_assert_str_eq(sc.endpoints[1], "https://b:2");
    ck_assert_str_eq(sc.prefix, "/trellis");
    ck_assert_uint_eq(sc.lease_ttl_s, 15);
    ck_assert_uint_eq(sc.timeout_ms, 5000);
    ck_assert_ptr_null(sc.path);
    char buf[256];
    ck_assert_str_eq(store_where(&sc, NULL, buf, sizeof buf), "etcd http://a:1,... /trellis");
    ck_assert_ptr_null(store_dir(&sc, NULL));
    ck_assert_str_eq(store_dir(&sc, "/x"), "/x"); /* --state: the file store there */
    config_store_free(&sc);
    /* TLS files resolved against the config's directory and readable */
    tu_write(dir, "ca.pem", "x");
    ck_assert_int_eq(load("store = { type = \"etcd\"; endpoints = [ \"https://a:1\" ];\n"
                          "  prefix = \"/p/q\"; lease_ttl_s = 5; tls = { ca = \"ca.pem\"; }; };\n",
                          &sc, err, sizeof err),
                     0);
    ck_assert_ptr_nonnull(strstr(sc.tls_ca, "/ca.pem"));
    ck_assert_int_eq(sc.tls_ca[0], '/');
    ck_assert_str_eq(sc.prefix, "/p/q");
    ck_assert_uint_eq(sc.lease_ttl_s, 5);
    config_store_free(&sc);
    /* errors: file and line, what was expected */
    ck_assert_int_eq(load("store = { type = \"etcd\";\n tls = { ca = \"missing.pem\"; };\n"
                          " endpoints = [ \"http://a:1\" ]; };\n",
                          &sc, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "s.cfg:2: store.tls.ca: cannot read"), "%s", err);
    ck_assert_int_eq(
        load("store = { type = \"etcd\"; endpoints = [ ];\n};\n", &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "non-empty list"), "%s", err);
    ck_assert_int_eq(load("store = { type = \"etcd\"; endpoints = [ \"http://a:1/v3\" ]; };\n", &sc,
                          err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "no path"), "%s", err);
    ck_assert_int_eq(load("store = { type = \"etcd\"; endpoints = [ \"http://a:1\" ];\n"
                          " lease_ttl_s = 1; };\n",
                          &sc, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "s.cfg:2: 'lease_ttl_s' must be between 2"), "%s", err);
    ck_assert_int_eq(load("store = { type = \"etcd\"; endpoints = [ \"http://a:1\" ];\n"
                          " path = \"/x\"; };\n",
                          &sc, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "has none"), "%s", err);
    ck_assert_int_eq(load("store = { type = \"zookeeper\"; };\n", &sc, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "expected \"file\", \"etcd\" or \"kubernetes\""), "%s", err);
    /* a file without a store group: the file store without a path */
    ck_assert_int_eq(load("parallelism = 2;\n", &sc, err, sizeof err), 0);
    ck_assert_str_eq(sc.type, "file");
    ck_assert_ptr_null(sc.path);
    config_store_free(&sc);
    tu_rmtree(dir);
}
END_TEST

#ifdef HAVE_ETCD
START_TEST(base64)
{
    const char *cases[] = {"", "a", "ab", "abc", "abcd", "/trellis/o/Node//n1"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *b = base64_encode(cases[i], strlen(cases[i]));
        size_t n;
        char *back = base64_decode(b, strlen(b), &n);
        ck_assert_ptr_nonnull(back);
        ck_assert_uint_eq(n, strlen(cases[i]));
        ck_assert_str_eq(back, cases[i]);
        free(back);
        free(b);
    }
    char *b = base64_encode("ab", 2);
    ck_assert_str_eq(b, "YWI=");
    free(b);
    size_t n;
    ck_assert_ptr_null(base64_decode("Y*I=", 4, &n));
    ck_assert_ptr_null(base64_decode("Y", 1, &n));
    /* bytes with a NUL in them survive */
    b = base64_encode("a\0b", 3);
    char *back = base64_decode(b, strlen(b), &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(back, "a\0b", 3), 0);
    free(back);
    free(b);
    char *end = etcd_prefix_end("/t/o/");
    ck_assert_str_eq(end, "/t/o0");
    free(end);
}
END_TEST

START_TEST(range_and_kv)
{
    char err[512];
    json_object *r = json_tokener_parse(
        "{\"header\":{\"revision\":\"9\"},\"more\":true,\"count\":\"3\",\"kvs\":["
        "{\"key\":\"YQ==\",\"create_revision\":\"2\",\"mod_revision\":\"7\",\"version\":\"3\","
        "\"value\":\"Yg==\"},{\"key\":\"Yw==\",\"mod_revision\":5}]}");
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t rev;
    int more;
    ck_assert_int_eq(etcd_parse_range(r, &kvs, &n, &cap, &rev, &more, err, sizeof err), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(rev, 9);
    ck_assert_int_eq(more, 1);
    ck_assert_str_eq(kvs[0].key, "a");
    ck_assert_str_eq(kvs[0].value, "b");
    ck_assert_int_eq(kvs[0].create_revision, 2);
    ck_assert_int_eq(kvs[0].mod_revision, 7);
    /* proto3 leaves zero fields out: no value is the empty value */
    ck_assert_str_eq(kvs[1].value, "");
    ck_assert_int_eq(kvs[1].create_revision, 0);
    ck_assert_int_eq(kvs[1].mod_revision, 5);
    for (size_t i = 0; i < n; i++)
        etcd_kv_free(&kvs[i]);
    json_object_put(r);
    /* a reply without kvs is an empty range */
    r = json_tokener_parse("{\"header\":{\"revision\":\"4\"}}");
    n = 0;
    ck_assert_int_eq(etcd_parse_range(r, &kvs, &n, &cap, &rev, &more, err, sizeof err), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(rev, 4);
    json_object_put(r);
    /* wrong shapes are errors, not crashes */
    const char *bad[] = {"{\"kvs\":{}}", "{\"kvs\":[{\"key\":\"*\"}]}",
                         "{\"kvs\":[{\"key\":\"YQ==\",\"mod_revision\":\"x\"}]}", "{\"header\":[]}",
                         "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = json_tokener_parse(bad[i]);
        n = 0;
        ck_assert_msg(etcd_parse_range(r, &kvs, &n, &cap, &rev, &more, err, sizeof err) < 0, "%s",
                      bad[i]);
        json_object_put(r);
    }
    free(kvs);
}
END_TEST

START_TEST(watch_messages)
{
    char err[512];
    etcd_watch_msg m;
    const char *ev = "{\"result\":{\"header\":{\"revision\":\"4\"},\"events\":[{\"kv\":{\"key\":"
                     "\"YQ==\",\"mod_revision\":\"3\",\"value\":\"Yw==\"}},{\"type\":\"DELETE\","
                     "\"kv\":{\"key\":\"YQ==\",\"mod_revision\":\"4\"}}]}}";
    ck_assert_int_eq(etcd_parse_watch(ev, strlen(ev), &m, err, sizeof err), 0);
    ck_assert_uint_eq(m.n_events, 2);
    ck_assert_int_eq(m.events[0].deleted, 0);
    ck_assert_str_eq(m.events[0].kv.value, "c");
    ck_assert_int_eq(m.events[1].deleted, 1);
    ck_assert_int_eq(m.events[1].kv.mod_revision, 4);
    ck_assert_int_eq(m.revision, 4);
    etcd_watch_msg_free(&m);
    const char *compacted = "{\"result\":{\"header\":{\"raft_term\":\"2\"},\"canceled\":true,"
                            "\"compact_revision\":\"3\"}}";
    ck_assert_int_eq(etcd_parse_watch(compacted, strlen(compacted), &m, err, sizeof err), 0);
    ck_assert_int_eq(m.canceled, 1);
    ck_assert_int_eq(m.compact_revision, 3);
    etcd_watch_msg_free(&m);
    const char *gw = "{\"error\":{\"grpc_code\":14,\"message\":\"etcdserver: no leader\"}}";
    ck_assert_int_eq(etcd_parse_watch(gw, strlen(gw), &m, err, sizeof err), 0);
    ck_assert_int_eq(m.canceled, 1);
    ck_assert_str_eq(m.error, "etcdserver: no leader");
    etcd_watch_msg_free(&m);
    const char *bad[] = {"",
                         "{",
                         "{\"result\":[]}",
                         "{\"result\":{\"events\":[{\"type\":\"X\","
                         "\"kv\":{}}]}}",
                         "{\"result\":{\"events\":[{}]}}",
                         "{}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(etcd_parse_watch(bad[i], strlen(bad[i]), &m, err, sizeof err) < 0, "%s",
                      bad[i]);
}
END_TEST

START_TEST(int64_fields)
{
    json_object *j =
        json_tokener_parse("{\"a\":\"12\",\"b\":7,\"c\":\"\",\"d\":true,\"e\":\"9x\"}");
    int64_t v;
    ck_assert_int_eq(etcd_int64(j, "a", &v), 0);
    ck_assert_int_eq(v, 12);
    ck_assert_int_eq(etcd_int64(j, "b", &v), 0);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(etcd_int64(j, "missing", &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(etcd_int64(j, "c", &v), -1);
    ck_assert_int_eq(etcd_int64(j, "d", &v), -1);
    ck_assert_int_eq(etcd_int64(j, "e", &v), -1);
    json_object_put(j);
}
END_TEST
#else
START_TEST(etcd_not_built)
{
    char err[512];
    cfg_store sc = {.type = (char *)"etcd"};
    ck_assert_ptr_null(store_open(&sc, NULL, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "built without the etcd store"), "%s", err);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("etcd");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, store_group);
#ifdef HAVE_ETCD
    tcase_add_test(tc, base64);
    tcase_add_test(tc, range_and_kv);
    tcase_add_test(tc, watch_messages);
    tcase_add_test(tc, int64_fields);
#else
    tcase_add_test(tc, etcd_not_built);
#endif
    suite_add_tcase(s, tc);
    return tu_run(s);
}
