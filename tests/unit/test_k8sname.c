/*
 * test_k8sname.c - the API server's rules for names, label keys and label
 * values (apimachinery's validation tests' cases), as plugins that write
 * objects check them. The module is compiled into this test directly (a
 * plugin helper, not part of the core library).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/common/k8sname.c"

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

START_TEST(dns_labels)
{
    ck_assert_ptr_null(k8s_dns_label("a"));
    ck_assert_ptr_null(k8s_dns_label("team-a"));
    ck_assert_ptr_null(k8s_dns_label("0"));
    ck_assert_ptr_nonnull(k8s_dns_label(""));
    ck_assert_ptr_nonnull(k8s_dns_label("-a"));
    ck_assert_ptr_nonnull(k8s_dns_label("a-"));
    ck_assert_ptr_nonnull(k8s_dns_label("Team"));
    ck_assert_ptr_nonnull(k8s_dns_label("a.b"));
    ck_assert_ptr_nonnull(k8s_dns_label("../x"));
    char *s = repeat('a', 63);
    ck_assert_ptr_null(k8s_dns_label(s));
    free(s);
    s = repeat('a', 64);
    ck_assert_ptr_nonnull(k8s_dns_label(s));
    free(s);
}
END_TEST

START_TEST(dns_subdomains_and_prefixes)
{
    ck_assert_ptr_null(k8s_dns_subdomain("mcp-qv7vav6k"));
    ck_assert_ptr_null(k8s_dns_subdomain("a.b.c"));
    ck_assert_ptr_nonnull(k8s_dns_subdomain("a..b"));
    ck_assert_ptr_nonnull(k8s_dns_subdomain(".a"));
    ck_assert_ptr_nonnull(k8s_dns_subdomain("a."));
    ck_assert_ptr_nonnull(k8s_dns_subdomain("My_Cluster"));
    ck_assert_ptr_nonnull(k8s_dns_subdomain("../../tmp/x"));
    char *s = repeat('a', 253);
    for (size_t i = 63; i < 253; i += 64)
        s[i] = '.';
    ck_assert_ptr_null(k8s_dns_subdomain(s));
    free(s);
    s = repeat('a', 100); /* a part may be longer than a label */
    ck_assert_ptr_null(k8s_dns_subdomain(s));
    free(s);
    s = repeat('a', 254);
    ck_assert_ptr_nonnull(k8s_dns_subdomain(s));
    free(s);
    ck_assert_ptr_null(k8s_name_prefix("mcp-"));
    ck_assert_ptr_null(k8s_name_prefix("a-"));
    ck_assert_ptr_nonnull(k8s_name_prefix("mcp.")); /* only a '-' is masked */
    ck_assert_ptr_null(k8s_name_prefix("a--x-"));
    ck_assert_ptr_null(k8s_name_prefix("mcp"));
    ck_assert_ptr_nonnull(k8s_name_prefix("-"));
    ck_assert_ptr_nonnull(k8s_name_prefix("My_Cluster."));
    ck_assert_ptr_nonnull(k8s_name_prefix(""));
    char *p = repeat('a', 254); /* 253 once its trailing '-' is masked */
    p[253] = '-';
    ck_assert_ptr_null(k8s_name_prefix(p));
    p[253] = 'a';
    ck_assert_ptr_nonnull(k8s_name_prefix(p));
    free(p);
}
END_TEST

START_TEST(qualified_names_and_values)
{
    ck_assert_ptr_null(k8s_qualified_name("landscape"));
    ck_assert_ptr_null(k8s_qualified_name("clusters.openmcp.cloud/delete-without-requests"));
    ck_assert_ptr_null(k8s_qualified_name("A_b.C"));
    ck_assert_ptr_nonnull(k8s_qualified_name(""));
    ck_assert_ptr_nonnull(k8s_qualified_name("c\\"));
    ck_assert_ptr_nonnull(k8s_qualified_name("a\"b"));
    ck_assert_ptr_nonnull(k8s_qualified_name("/a"));
    ck_assert_ptr_nonnull(k8s_qualified_name("a/"));
    ck_assert_ptr_nonnull(k8s_qualified_name("a/b/c"));
    ck_assert_ptr_nonnull(k8s_qualified_name("Example.com/a"));
    ck_assert_ptr_nonnull(k8s_qualified_name("_a"));
    ck_assert_ptr_null(k8s_annotation_key("Example.com/Owner")); /* checked lower-cased */
    ck_assert_ptr_nonnull(k8s_annotation_key("a/b/c"));
    ck_assert_ptr_null(k8s_label_value(""));
    ck_assert_ptr_null(k8s_label_value("true"));
    ck_assert_ptr_null(k8s_label_value("v1.2_x-Y"));
    ck_assert_ptr_nonnull(k8s_label_value("a b"));
    ck_assert_ptr_nonnull(k8s_label_value("a/b"));
    ck_assert_ptr_nonnull(k8s_label_value("-a"));
    char *s = repeat('a', 64);
    ck_assert_ptr_nonnull(k8s_label_value(s));
    free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("k8sname");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, dns_labels);
    tcase_add_test(tc, dns_subdomains_and_prefixes);
    tcase_add_test(tc, qualified_names_and_values);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
