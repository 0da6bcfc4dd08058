/*
 * test_extender_reply.c - the http-extender plugin's reader of extender
 * answers (plugins/http-extender/extender_reply.c) as kube-scheduler's Go
 * decoder reads them: keys without regard to case, the last of two
 * wins, null fields left nil, what follows the first value not read,
 * values of the wrong type refused, in the Go field names a Go extender
 * answers with and in the lower camelCase of the API before 1.17; and the
 * requests (extender_request.c) with the Go field names today's
 * kube-scheduler sends. The plugin is not part of the core library: its
 * sources are included.
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
    ck_assert_str_eq(err, "NodeNames[1]: expected a string");
    ck_assert_int_eq(filter("{\"failedNodes\":{\"a\":true}}", &r, err), -1);
    ck_assert_str_eq(err, "FailedNodes[\"a\"]: expected a string");
    ck_assert_int_eq(filter("{\"nodes\":{\"items\":[{\"metadata\":{\"name\":7}}]}}", &r, err), -1);
    ck_assert_str_eq(err, "Nodes.items[0].metadata.name: expected a string");
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
    ck_assert_str_eq(err, "[0].Score: expected an integer");
    ck_assert_int_eq(ext_parse_priorities("{}", 2, &p, &n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "HostPriorityList") != NULL, "%s", err);

    ck_assert_int_eq(ext_parse_binding("{}", 2, &e, err, sizeof err), 0);
    ck_assert_ptr_null(e);
    const char *refused = "{\"Error\":\"no room\"}";
    ck_assert_int_eq(ext_parse_binding(refused, strlen(refused), &e, err, sizeof err), 0);
    ck_assert_str_eq(e, "no room");
    free(e);
    ck_assert_int_eq(ext_parse_binding("{\"error\":1}", 11, &e, err, sizeof err), -1);
    ck_assert_str_eq(err, "Error: expected a string");
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
        {"{\"nodeNameToMetaVictims\":[]}", "NodeNameToMetaVictims: expected a map"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":1}}", "NodeNameToMetaVictims[\"n1\"]: expected"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":{}}}}", "n1\"].Pods: expected a list"},
        {"{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[1]}}}", "Pods[0]: expected a MetaPod"},
        {"{\"nodeNameToMetaVictims\":{\"a\":{},\"n1\":{\"pods\":[{\"uid\":7}]}}}",
         "n1\"].Pods[0].UID: expected a string"},
        {"{\"nodeNameToMetaVictims\":{\"n1\":{\"numPDBViolations\":1.5}}}",
         "NumPDBViolations: expected an integer"},
        {"", "the answer is empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_int_eq(
            ext_parse_preemption(bad[i][0], strlen(bad[i][0]), &v, &n, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: %s", bad[i][0], err);
        ck_assert(!v && !n);
    }

    /* the request: Pods whole, or their UIDs (nodeCacheCapable), with the
     * Go field names, the map not used null, the Nodes sorted by name */
    const char *pods1[] = {"{\"metadata\":{\"name\":\"a\"}}", "{\"metadata\":{\"name\":\"b\"}}"};
    const char *uids2[] = {"u\"x"};
    ext_victims cands[2] = {{"n1", pods1, 2, 1}, {"n\"2", uids2, 1, 0}};
    size_t len;
    char *body = ext_preemption_body("{\"metadata\":{\"name\":\"p\"}}", cands, 1, 0, &len);
    ck_assert_str_eq(body, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToVictims\":{\"n1\":"
                           "{\"Pods\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":"
                           "\"b\"}}],\"NumPDBViolations\":1}},\"NodeNameToMetaVictims\":null}");
    ck_assert_uint_eq(len, strlen(body));
    free(body);
    body = ext_preemption_body("{}", cands + 1, 1, 1, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                           "\"n\\\"2\":{\"Pods\":[{\"UID\":\"u\\\"x\"}],\"NumPDBViolations\":0}}}");
    free(body);
    body = ext_preemption_body("{}", NULL, 0, 1, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{}}");
    free(body);
    body = ext_preemption_body("{}", NULL, 0, 0, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"NodeNameToVictims\":{},\"NodeNameToMetaVictims\":null}");
    free(body);
    /* candidates found n3, n1, n10: Go writes the map's keys sorted */
    const char *no_pods[] = {NULL};
    ext_victims three[3] = {{"n3", uids2, 1, 0}, {"n1", no_pods, 0, 2}, {"n10", uids2, 1, 0}};
    body = ext_preemption_body("{}", three, 3, 1, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                           "\"n1\":{\"Pods\":[],\"NumPDBViolations\":2},"
                           "\"n10\":{\"Pods\":[{\"UID\":\"u\\\"x\"}],\"NumPDBViolations\":0},"
                           "\"n3\":{\"Pods\":[{\"UID\":\"u\\\"x\"}],\"NumPDBViolations\":0}}}");
    ck_assert_uint_eq(len, strlen(body));
    free(body);
}
END_TEST

/* Every answer in the Go field names a Go extender writes (json.Marshal
 * of extender/v1's untagged types: every field, nil ones null) and in
 * the lower camelCase of the API before 1.17 reads the same. */
START_TEST(both_spellings)
{
    char err[256], *e;
    static const char *const filters[][2] = {
        {"{\"Nodes\":null,\"NodeNames\":[\"n1\",\"n3\"],\"FailedNodes\":{\"n2\":\"lacks gpu\"},"
         "\"FailedAndUnresolvableNodes\":null,\"Error\":\"\"}",
         "{\"nodenames\":[\"n1\",\"n3\"],\"failedNodes\":{\"n2\":\"lacks gpu\"}}"},
        {"{\"Nodes\":{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"n1\"}},"
         "{\"metadata\":{\"name\":\"n3\"}}]},\"NodeNames\":null,\"FailedNodes\":null,"
         "\"FailedAndUnresolvableNodes\":{\"n2\":\"lacks gpu\"},\"Error\":\"\"}",
         "{\"nodes\":{\"items\":[{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{\"name\":"
         "\"n3\"}}]},\"failedAndUnresolvableNodes\":{\"n2\":\"lacks gpu\"}}"},
    };
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
        for (int k = 0; k < 2; k++) {
            ext_filter_result r;
            ck_assert_int_eq(filter(filters[i][k], &r, err), 0);
            ck_assert_int_eq(r.has_names, i == 0);
            ck_assert_int_eq(r.has_nodes, i == 1);
            char **kept = i == 0 ? r.names : r.nodes;
            ck_assert_uint_eq(i == 0 ? r.n_names : r.n_nodes, 2);
            ck_assert_str_eq(kept[0], "n1");
            ck_assert_str_eq(kept[1], "n3");
            ck_assert_uint_eq(r.n_failed, 1);
            ck_assert_str_eq(r.failed[0].node, "n2");
            ck_assert_str_eq(r.failed[0].message, "lacks gpu");
            ck_assert_int_eq(r.failed[0].unresolvable, i == 1);
            ck_assert_ptr_null(r.error);
            ext_filter_result_free(&r);
        }
    }
    static const char *const errors[] = {"{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":null,"
                                         "\"FailedAndUnresolvableNodes\":null,\"Error\":\"down\"}",
                                         "{\"error\":\"down\"}"};
    for (size_t i = 0; i < 2; i++) {
        ext_filter_result r;
        ck_assert_int_eq(filter(errors[i], &r, err), 0);
        ck_assert(!r.has_names && !r.has_nodes && !r.n_failed);
        ck_assert_str_eq(r.error, "down");
        ext_filter_result_free(&r);
    }

    static const char *const lists[] = {
        "[{\"Host\":\"n1\",\"Score\":2},{\"Host\":\"n3\",\"Score\":7}]",
        "[{\"host\":\"n1\",\"score\":2},{\"host\":\"n3\",\"score\":7}]"};
    for (size_t i = 0; i < 2; i++) {
        ext_priority *p;
        size_t n;
        ck_assert_int_eq(ext_parse_priorities(lists[i], strlen(lists[i]), &p, &n, err, sizeof err),
                         0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(p[0].host, "n1");
        ck_assert_int_eq(p[0].score, 2);
        ck_assert_str_eq(p[1].host, "n3");
        ck_assert_int_eq(p[1].score, 7);
        ext_priorities_free(p, n);
    }

    static const char *const bindings[][2] = {{"{\"Error\":\"\"}", NULL},
                                              {"{\"error\":\"\"}", NULL},
                                              {"{\"Error\":\"no room\"}", "no room"},
                                              {"{\"error\":\"no room\"}", "no room"}};
    for (size_t i = 0; i < 4; i++) {
        const char *b = bindings[i][0];
        ck_assert_int_eq(ext_parse_binding(b, strlen(b), &e, err, sizeof err), 0);
        if (bindings[i][1])
            ck_assert_str_eq(e, bindings[i][1]);
        else
            ck_assert_ptr_null(e);
        free(e);
    }

    static const char *const preempts[] = {
        "{\"NodeNameToMetaVictims\":{\"n1\":{\"Pods\":[{\"UID\":\"u1\"},{\"UID\":\"u2\"}],"
        "\"NumPDBViolations\":1}}}",
        "{\"nodeNameToMetaVictims\":{\"n1\":{\"pods\":[{\"uid\":\"u1\"},{\"uid\":\"u2\"}],"
        "\"numPDBViolations\":1}}}"};
    for (size_t i = 0; i < 2; i++) {
        ext_meta_victims *v;
        size_t n;
        ck_assert_int_eq(
            ext_parse_preemption(preempts[i], strlen(preempts[i]), &v, &n, err, sizeof err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(v[0].node, "n1");
        ck_assert(v[0].has_pods);
        ck_assert_uint_eq(v[0].n_uids, 2);
        ck_assert_str_eq(v[0].uids[0], "u1");
        ck_assert_str_eq(v[0].uids[1], "u2");
        ck_assert_int_eq(v[0].pdb_violations, 1);
        ext_meta_victims_free(v, n);
    }
    /* a Go extender's empty ExtenderPreemptionResult: no candidates */
    ext_meta_victims *v;
    size_t n;
    const char *none = "{\"NodeNameToMetaVictims\":null}";
    ck_assert_int_eq(ext_parse_preemption(none, strlen(none), &v, &n, err, sizeof err), 0);
    ck_assert(!v && !n);
}
END_TEST

/* ExtenderArgs and ExtenderBindingArgs as today's kube-scheduler marshals
 * them: the Go field names, the list not in use null. */
START_TEST(requests)
{
    size_t len;
    const char *nodes[] = {"{\"metadata\":{\"name\":\"n1\"}}", "{\"metadata\":{\"name\":\"n2\"}}"};
    char *body = ext_args_body("{\"metadata\":{\"name\":\"p\"}}", nodes, 2, 0, &len);
    ck_assert_str_eq(body, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"metadata\":{},"
                           "\"items\":[{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{\"name\":"
                           "\"n2\"}}]},\"NodeNames\":null}");
    ck_assert_uint_eq(len, strlen(body));
    free(body);
    const char *names[] = {"n1", "n\"2"};
    body = ext_args_body("{}", names, 2, 1, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[\"n1\",\"n\\\"2\"]}");
    ck_assert_uint_eq(len, strlen(body));
    free(body);
    body = ext_args_body("{}", NULL, 0, 1, &len);
    ck_assert_str_eq(body, "{\"Pod\":{},\"Nodes\":null,\"NodeNames\":[]}");
    free(body);
    body = ext_binding_body("p1", "default", "uid-\"1", "n1", &len);
    ck_assert_str_eq(body, "{\"PodName\":\"p1\",\"PodNamespace\":\"default\",\"PodUID\":"
                           "\"uid-\\\"1\",\"Node\":\"n1\"}");
    ck_assert_uint_eq(len, strlen(body));
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
    tcase_add_test(tc, both_spellings);
    tcase_add_test(tc, requests);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
