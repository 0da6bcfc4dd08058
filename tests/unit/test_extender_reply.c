/*
 * test_extender_reply.c - the http-extender plugin's reader of extender
 * answers (plugins/http-extender/extender_reply.c) as kube-scheduler's Go
 * decoder reads them: keys without regard to case, the last of two
 * wins, null fields left nil, what follows the first value not read,
 * values of the wrong type refused; and the preempt verb's request
 * (extender_request.c's ExtenderPreemptionArgs). The plugin is not part
 * of the core library: its sources are included.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../../plugins/http-extender/extender_reply.c"
#include "../../plugins/http-extender/extender_request.c"

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

START_TEST(preemption)
{
    ext_meta_victims *v;
    size_t n;
    char err[256];
    /* keys without regard to case, the last of a Node named twice, a pod
     * without a uid kept as "" (it is found on no Node) */
    const char *ok = "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"u1\"},{}],"
                     "\"numPDBViolations\":2},\"n2\":null,\"n3\":{\"pods\":[{\"uid\":\"x\"}]},"
                     "\"n3\":{\"pods\":[{\"uid\":\"u3\"}]}}} and more";
    ck_assert_int_eq(ext_parse_preemption(ok, strlen(ok), &v, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(v[0].node, "n1");
    ck_assert(v[0].has_pods);
    ck_assert_uint_eq(v[0].n_uids, 2);
    ck_assert_str_eq(v[0].uids[0], "u1");
    ck_assert_str_eq(v[0].uids[1], "");
    ck_assert_int_eq(v[0].pdb_violations, 2);
    ck_assert_str_eq(v[1].node, "n2"); /* null: no victims */
    ck_assert(!v[1].has_pods);
    ck_assert_uint_eq(v[1].n_uids, 0);
    ck_assert_str_eq(v[2].node, "n3");
    ck_assert_uint_eq(v[2].n_uids, 1);
    ck_assert_str_eq(v[2].uids[0], "u3");
    ext_meta_victims_free(v, n);
    /* no candidates: null, no map, an empty one */
    ck_assert_int_eq(ext_parse_preemption("null", 4, &v, &n, err, sizeof err), 0);
    ck_assert(!v && !n);
    ck_assert_int_eq(ext_parse_preemption("{}", 2, &v, &n, err, sizeof err), 0);
    ck_assert(!v && !n);
    const char *none = "{\"nodeNameToMetaVictims\":{}}";
    ck_assert_int_eq(ext_parse_preemption(none, strlen(none), &v, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 0);
    ext_meta_victims_free(v, n);
    /* refused, with nothing left behind */
    const char *bad[][2] = {
        {"[]", "expected an ExtenderPreemptionResult"},
        {"{\"nodeNameToMetaVictims\":[]}", "nodeNameToMetaVictims: expected a map"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":1}}", "nodeNameToMetaVictims[\"n1\"]: expected"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":{}}}}", "n1\"].pods: expected a list"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[1]}}}", "pods[0]: expected a MetaPod"},
        {"{\"nodeNameToMetaVictims\":{\"a\":{},\"n1\":{\"pods\":[{\"uid\":7}]}}}",
         "n1\"].pods[0].uid: expected a string"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":{\"numPDBViolations\":1.5}}}",
         "numPDBViolations: expected an integer"},
        {"", "the answer is empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_int_eq(
            ext_parse_preemption(bad[i][0], strlen(bad[i][0]), &v, &n, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: %s", bad[i][0], err);
        ck_assert(!v && !n);
    }

    /* the request: Pods whole, or their UIDs (nodeCacheCapable) */
    const char *pods1[] = {"{\"metadata\":{\"name\":\"a\"}}", "{\"metadata\":{\"name\":\"b\"}}"};
    const char *uids2[] = {"u\"x"};
    ext_victims cands[2] = {{"n1", pods1, 2, 1}, {"n\"2", uids2, 1, 0}};
    size_t len;
    char *body = ext_preemption_body("{\"metadata\":{\"name\":\"p\"}}", cands, 1, 0, &len);
    ck_assert_str_eq(body, "{\"pod\":{\"metadata\":{\"name\":\"p\"}},\"nodeNameToVictims\":{\"n1\":"
                           "{\"pods\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":"
                           "\"b\"}}],\"numPDBViolations\":1}}}");
    ck_assert_uint_eq(len, strlen(body));
    free(body);
    body = ext_preemption_body("{}", cands + 1, 1, 1, &len);
    ck_assert_str_eq(body, "{\"pod\":{},\"nodeNameToMetaVictims\":{\"n\\\"2\":{\"pods\":[{\"uid\":"
                           "\"u\\\"x\"}],\"numPDBViolations\":0}}}");
    free(body);
    body = ext_preemption_body("{}", NULL, 0, 1, &len);
    ck_assert_str_eq(body, "{\"pod\":{},\"nodeNameToMetaVictims\":{}}");
    free(body);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("extender_reply");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, filter_results);
    tcase_add_test(tc, priorities_and_bindings);
    tcase_add_test(tc, preemption);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
