/*
 * test_extender_reply.c - the http-extender plugin's reader of extender
 * answers (plugins/http-extender/extender_reply.c) as kube-scheduler's Go
 * decoder reads them: keys without regard to case, the last of two
 * wins, null fields left nil, what follows the first value not read,
 * values of the wrong type refused. The plugin is not part of the core
 * library: its source is included.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../../plugins/http-extender/extender_reply.c"

static int filter(const char *body, ext_filter_result *r, char *err)
{
    return ext_parse_filter(body, strlen(body), r, err, 256);
}

START_TEST(filter_results)
{
    ext_filter_result r;
    char err[256];
    ck_assert_int_eq(filter("{\"NodeNames\":[\"a\"],\"nodenames\":[\"b\",\"c\"],"
                            "\"failedNodes\":{\"x\":\"lacks gpu\",\"y\":\"full\"},"
                            "\"FailedAndUnresolvableNodes\":{\"x\":\"gone\"}} trailing text",
                            &r, err),
                     0);
    ck_assert(r.has_names);
    ck_assert_uint_eq(r.n_names, 2); /* the last of the two keys */
    ck_assert_str_eq(r.names[1], "c");
    ck_assert(!r.has_nodes);
    ck_assert_uint_eq(r.n_failed, 2); /* x once: unresolvable wins */
    ck_assert_str_eq(r.failed[0].node, "x");
    ck_assert_str_eq(r.failed[0].message, "gone");
    ck_assert(r.failed[0].unresolvable);
    ck_assert_str_eq(r.failed[1].message, "full");
    ck_assert(!r.failed[1].unresolvable);
    ck_assert_ptr_null(r.error);
    ext_filter_result_free(&r);

    ck_assert_int_eq(filter("{\"nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\"}},{}]},"
                            "\"error\":\"\"}",
                            &r, err),
                     0);
    ck_assert(r.has_nodes);
    ck_assert_uint_eq(r.n_nodes, 2);
    ck_assert_str_eq(r.nodes[0], "n1");
    ck_assert_str_eq(r.nodes[1], ""); /* Go leaves the name empty */
    ck_assert_ptr_null(r.error);      /* an empty error is no error */
    ext_filter_result_free(&r);

    ck_assert_int_eq(filter(" null ", &r, err), 0); /* nothing kept */
    ck_assert(!r.has_names && !r.has_nodes && !r.n_failed);
    ck_assert_int_eq(filter("{\"nodenames\":null,\"error\":\"down\"}", &r, err), 0);
    ck_assert(!r.has_names);
    ck_assert_str_eq(r.error, "down");
    ext_filter_result_free(&r);

    ck_assert_int_eq(filter("", &r, err), -1);
    ck_assert_msg(strstr(err, "empty") != NULL, "%s", err);
    ck_assert_int_eq(filter("<html>", &r, err), -1);
    ck_assert_msg(strstr(err, "not JSON") != NULL, "%s", err);
    ck_assert_int_eq(filter("[]", &r, err), -1);
    ck_assert_msg(strstr(err, "ExtenderFilterResult") != NULL, "%s", err);
    ck_assert_int_eq(filter("{\"nodenames\":[\"a\",1]}", &r, err), -1);
    ck_assert_str_eq(err, "nodenames[1]: expected a string");
    ck_assert_int_eq(filter("{\"failedNodes\":{\"a\":true}}", &r, err), -1);
    ck_assert_str_eq(err, "failedNodes[\"a\"]: expected a string");
    ck_assert_int_eq(filter("{\"nodes\":{\"items\":[{\"metadata\":{\"name\":7}}]}}", &r, err), -1);
    ck_assert_str_eq(err, "nodes.items[0].metadata.name: expected a string");
    ck_assert_uint_eq(r.n_nodes, 0); /* nothing left behind */
}
END_TEST

START_TEST(priorities_and_bindings)
{
    ext_priority *p;
    size_t n;
    char err[256], *e;
    const char *list = "[{\"host\":\"n1\",\"score\":2},{\"Host\":\"n3\",\"SCORE\":7},{}]";
    ck_assert_int_eq(ext_parse_priorities(list, strlen(list), &p, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(p[1].host, "n3");
    ck_assert_int_eq(p[1].score, 7);
    ck_assert_str_eq(p[2].host, "");
    ck_assert_int_eq(p[2].score, 0);
    ext_priorities_free(p, n);
    ck_assert_int_eq(ext_parse_priorities("null", 4, &p, &n, err, sizeof err), 0);
    ck_assert(!p && !n);
    const char *frac = "[{\"host\":\"n1\",\"score\":2.5}]";
    ck_assert_int_eq(ext_parse_priorities(frac, strlen(frac), &p, &n, err, sizeof err), -1);
    ck_assert_str_eq(err, "[0].score: expected an integer");
    ck_assert_int_eq(ext_parse_priorities("{}", 2, &p, &n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "HostPriorityList") != NULL, "%s", err);

    ck_assert_int_eq(ext_parse_binding("{}", 2, &e, err, sizeof err), 0);
    ck_assert_ptr_null(e);
    const char *refused = "{\"Error\":\"no room\"}";
    ck_assert_int_eq(ext_parse_binding(refused, strlen(refused), &e, err, sizeof err), 0);
    ck_assert_str_eq(e, "no room");
    free(e);
    ck_assert_int_eq(ext_parse_binding("{\"error\":1}", 11, &e, err, sizeof err), -1);
    ck_assert_str_eq(err, "error: expected a string");
    /* the length is the body's: a number cut by it is not read further */
    ck_assert_int_eq(ext_parse_priorities("[1]99", 3, &p, &n, err, sizeof err), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("extender_reply");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, filter_results);
    tcase_add_test(tc, priorities_and_bindings);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
