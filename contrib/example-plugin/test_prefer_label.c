/*
 * test_prefer_label.c - prefer-label alone, through the trellis mock host.
 *
 * The mock host (mock_host.h, installed by trellis; pkg-config gives its
 * directory as `mockdir`) loads ./prefer-label.so as trellis would and
 * runs its hooks on objects written as JSON. `make check` builds and runs
 * this; it needs Check and json-c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"

#define NODE(name, labels)                                                                         \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name                      \
    "\",\"labels\":{" labels "}}}"
#define POD "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}"

static trellis_plugin *load(mock *m, const char *args)
{
    char err[512];
    trellis_plugin *pl = mock_load(m, "./prefer-label.so", args, err, sizeof err);
    ck_assert_msg(pl != NULL, "%s", err);
    return pl;
}

static trellis_object *obj(mock *m, int as_workload, const char *json)
{
    char err[512];
    trellis_object *o = mock_object(m, json, as_workload, err, sizeof err);
    ck_assert_msg(o != NULL, "%s", err);
    return o;
}

START_TEST(scores_the_labelled_targets)
{
    mock *m = mock_new(-1);
    trellis_plugin *pl = load(m, "{\"label\":\"gpu\"}");
    trellis_object *t[] = {obj(m, 0, NODE("a", "\"gpu\":\"true\"")),
                           obj(m, 0, NODE("b", "\"gpu\":\"false\"")), obj(m, 0, NODE("c", ""))};
    int64_t sc[3];
    char err[512];
    ck_assert_msg(mock_score(m, pl, obj(m, 1, POD), t, 3, sc, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sc[0], 100);
    ck_assert_int_eq(sc[1], 0);
    ck_assert_int_eq(sc[2], 0);
    ck_assert(!mock_registered(pl, "filter"));
    mock_free(m);
}
END_TEST

START_TEST(required_filters_and_hints)
{
    mock *m = mock_new(-1);
    trellis_plugin *pl = load(m, "{\"label\":\"gpu\",\"required\":true}");
    trellis_object *w = obj(m, 1, POD);
    trellis_object *t[] = {obj(m, 0, NODE("a", "\"gpu\":\"true\"")), obj(m, 0, NODE("b", ""))};
    int codes[2];
    trellis_status st[2];
    char err[512];
    ck_assert_msg(mock_filter(m, pl, w, t, 2, codes, st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "LabelMissing");
    /* b gains the label: the rejected workload may fit now */
    trellis_object *b2 = obj(m, 0, NODE("b", "\"gpu\":\"true\""));
    ck_assert_int_eq(mock_hint(m, pl, w, TRELLIS_EV_TARGET_UPDATE, t[1], b2), TRELLIS_QUEUE);
    ck_assert_int_eq(mock_hint(m, pl, w, TRELLIS_EV_TARGET_UPDATE, b2, t[0]), TRELLIS_QUEUE_SKIP);
    mock_free(m);
}
END_TEST

START_TEST(runs_on_an_sdk_1_0_host)
{
    mock *m = mock_new(0);
    trellis_plugin *pl = load(m, "{\"label\":\"gpu\",\"required\":true}");
    ck_assert(mock_registered(pl, "filter"));
    ck_assert(!mock_registered(pl, "events")); /* register_events is 1.2 */
    mock_free(m);
}
END_TEST

START_TEST(label_is_required)
{
    mock *m = mock_new(-1);
    char err[512];
    ck_assert_ptr_null(mock_load(m, "./prefer-label.so", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "'label' is required") != NULL, "%s", err);
    mock_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prefer-label");
    TCase *tc = tcase_create("mock host");
    tcase_add_test(tc, scores_the_labelled_targets);
    tcase_add_test(tc, required_filters_and_hints);
    tcase_add_test(tc, runs_on_an_sdk_1_0_host);
    tcase_add_test(tc, label_is_required);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
