/*
 * test_gardener_math.c - the host-free arithmetic of the Gardener plugins:
 * Levenshtein distance, region orientation and base names, the
 * MinimalDistance formula with Gardener's worked examples, and CIDR parsing
 * and overlap for IPv4 and IPv6, and the integer form of CIDRs (gm_net)
 * agreeing with the byte form. The module is compiled into this test
 * directly (it is a plugin helper, not part of the core library).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/common/gardener_math.c"

START_TEST(levenshtein_basics)
{
    ck_assert_uint_eq(gm_levenshtein("", ""), 0);
    ck_assert_uint_eq(gm_levenshtein("abc", ""), 3);
    ck_assert_uint_eq(gm_levenshtein("", "abc"), 3);
    ck_assert_uint_eq(gm_levenshtein("kitten", "sitting"), 3);
    ck_assert_uint_eq(gm_levenshtein("sitting", "kitten"), 3);
    ck_assert_uint_eq(gm_levenshtein("flaw", "lawn"), 2);
    ck_assert_uint_eq(gm_levenshtein("eu-:-1", "us-:-1"), 2);
    ck_assert_uint_eq(gm_levenshtein("same", "same"), 0);
}
END_TEST

START_TEST(levenshtein_long)
{
    char a[GM_REGION_MAX + 2], b[GM_REGION_MAX + 2];

    memset(a, 'a', sizeof(a) - 1);
    a[sizeof(a) - 1] = '\0';
    memset(b, 'a', sizeof(b) - 1);
    b[sizeof(b) - 1] = '\0';
    /* both longer than the DP row: refused */
    ck_assert_uint_eq(gm_levenshtein(a, b), SIZE_MAX);
    /* one short enough: fine */
    ck_assert_uint_eq(gm_levenshtein(a, "ab"), GM_REGION_MAX + 1 - 1);
    ck_assert_int_eq(gm_region_distance(a, "eu-west-1"), -1);
}
END_TEST

START_TEST(region_split)
{
    char base[64];
    gm_orientation o;

    ck_assert_int_eq(gm_region_split("ap-southeast-1", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_SOUTH);
    ck_assert_str_eq(base, "ap-:east-1");
    ck_assert_int_eq(gm_region_split("eu-west-1", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_WEST);
    ck_assert_str_eq(base, "eu-:-1");
    ck_assert_int_eq(gm_region_split("eu-central-1", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_CENTRAL);
    ck_assert_str_eq(base, "eu-:-1");
    ck_assert_int_eq(gm_region_split("northeurope", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_NORTH);
    ck_assert_str_eq(base, ":europe");
    ck_assert_int_eq(gm_region_split("asia-1", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_ORIENT_NONE);
    ck_assert_str_eq(base, "asia-1");
    /* north comes before east in Gardener's list, wherever it occurs */
    ck_assert_int_eq(gm_region_split("eastnorth", &o, base, sizeof(base)), 0);
    ck_assert_int_eq(o, GM_NORTH);
    ck_assert_str_eq(base, "east:");
    /* too small a buffer */
    ck_assert_int_eq(gm_region_split("eu-west-1", &o, base, 6), -1);
    ck_assert_int_eq(gm_region_split("eu-west-1", &o, base, 7), 0);
    ck_assert_int_eq(gm_region_split("asia-1", &o, base, 6), -1);
}
END_TEST

START_TEST(region_distance_examples)
{
    ck_assert_int_eq(gm_region_distance("eu-west-1", "eu-west-1"), 0);
    /* same base, different orientation */
    ck_assert_int_eq(gm_region_distance("eu-west-1", "eu-central-1"), 2);
    /* bases differ by 2, different orientation */
    ck_assert_int_eq(gm_region_distance("eu-west-1", "us-east-1"), 6);
    /* bases differ by 2, same orientation */
    ck_assert_int_eq(gm_region_distance("eu-west-1", "us-west-1"), 4);
    /* one without orientation: 2d + 1 */
    ck_assert_int_eq(gm_region_distance("asia-1", "eu-west-1"),
                     2 * (int64_t)gm_levenshtein("asia-1", "eu-:-1") + 1);
    ck_assert_int_eq(gm_region_distance("eu-west-1", "asia-1"),
                     2 * (int64_t)gm_levenshtein("asia-1", "eu-:-1") + 1);
    /* both without: 2d */
    ck_assert_int_eq(gm_region_distance("asia-1", "asia-2"), 2);
    /* south-east counts as south */
    ck_assert_int_eq(gm_region_distance("ap-southeast-1", "ap-southeast-2"), 2);
    ck_assert_int_eq(gm_region_distance("ap-southeast-1", "ap-northeast-1"), 2);
    ck_assert_int_eq(gm_split_distance("x", GM_EAST, "x", GM_ORIENT_NONE), 1);
    ck_assert_int_eq(gm_split_distance("x", GM_ORIENT_NONE, "x", GM_ORIENT_NONE), 0);
}
END_TEST

static gm_cidr cidr(const char *text)
{
    gm_cidr c;

    ck_assert_msg(gm_cidr_parse(text, &c) == 0, "cannot parse %s", text);
    return c;
}

START_TEST(cidr_parse_ipv4)
{
    gm_cidr c = cidr("10.250.0.0/16");

    ck_assert_int_eq(c.family, 4);
    ck_assert_int_eq(c.bits, 16);
    ck_assert_int_eq(c.addr[0], 10);
    ck_assert_int_eq(c.addr[1], 250);
    /* host bits are cleared */
    c = cidr("10.1.2.3/8");
    ck_assert_int_eq(c.addr[1], 0);
    ck_assert_int_eq(c.addr[3], 0);
    c = cidr("100.64.0.0/10");
    ck_assert_int_eq(c.addr[1], 64);
    c = cidr("100.127.255.255/10");
    ck_assert_int_eq(c.addr[1], 64);
    ck_assert_int_eq(c.addr[2], 0);
    c = cidr("0.0.0.0/0");
    ck_assert_int_eq(c.bits, 0);
    c = cidr("192.168.1.1/32");
    ck_assert_int_eq(c.addr[3], 1);

    static const char *const bad[] = {
        "",          "10.0.0.0",     "10.0.0/8",    "10.0.0.0/33", "10.0.0.256/8",
        "10.0.0.0/", "/8",           "10.0.0.0/8x", "010.0.0.0/8", "10..0.0/8",
        "a.b.c.d/8", "10.0.0.0.0/8", "10.0.0.0/-1", " 10.0.0.0/8", "10.0.0.0 /8",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(gm_cidr_parse(bad[i], &c) < 0, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(cidr_parse_ipv6)
{
    gm_cidr c = cidr("2001:db8::/32");

    ck_assert_int_eq(c.family, 6);
    ck_assert_int_eq(c.bits, 32);
    ck_assert_int_eq(c.addr[0], 0x20);
    ck_assert_int_eq(c.addr[1], 0x01);
    ck_assert_int_eq(c.addr[2], 0x0d);
    ck_assert_int_eq(c.addr[3], 0xb8);
    c = cidr("::/0");
    ck_assert_int_eq(c.bits, 0);
    c = cidr("::1/128");
    ck_assert_int_eq(c.addr[15], 1);
    c = cidr("fd00:10:96::/112");
    ck_assert_int_eq(c.addr[0], 0xfd);
    ck_assert_int_eq(c.addr[3], 0x10);
    ck_assert_int_eq(c.addr[5], 0x96);
    c = cidr("1:2:3:4:5:6:7:8/128");
    ck_assert_int_eq(c.addr[14], 0);
    ck_assert_int_eq(c.addr[15], 8);
    c = cidr("1::/16");
    ck_assert_int_eq(c.addr[1], 1);
    c = cidr("::ffff:10.0.0.0/104");
    ck_assert_int_eq(c.addr[10], 0xff);
    ck_assert_int_eq(c.addr[12], 10);
    c = cidr("2001:DB8:0:0:1::ABCD/128");
    ck_assert_int_eq(c.addr[8], 0);
    ck_assert_int_eq(c.addr[9], 1);
    ck_assert_int_eq(c.addr[14], 0xab);
    /* host bits cleared */
    c = cidr("2001:db8:ffff::/33");
    ck_assert_int_eq(c.addr[4], 0x80);
    ck_assert_int_eq(c.addr[5], 0);

    static const char *const bad[] = {
        "2001:db8::",           "2001:db8::/129", "2001:db8:::/32",   ":1::/16", "1::2::3/64",
        "1:2:3:4:5:6:7:8:9/64", "12345::/16",     "1:2:3:4:5:6:7/64", "g::/16",  "1:/16",
        "1:2:3:4:5:6:7:8::/64", "::1.2.3/96",     "::1.2.3.4:5/96",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(gm_cidr_parse(bad[i], &c) < 0, "accepted '%s'", bad[i]);
}
END_TEST

static int overlap(const char *a, const char *b)
{
    gm_cidr x = cidr(a), y = cidr(b);

    ck_assert_int_eq(gm_cidr_overlap(&x, &y), gm_cidr_overlap(&y, &x));
    return gm_cidr_overlap(&x, &y);
}

START_TEST(cidr_overlap)
{
    /* IPv4 */
    ck_assert(overlap("10.0.0.0/8", "10.250.0.0/16"));
    ck_assert(overlap("10.250.0.0/16", "10.250.0.0/16"));
    ck_assert(!overlap("10.250.0.0/16", "10.251.0.0/16"));
    ck_assert(overlap("100.96.0.0/11", "100.100.0.0/16"));
    ck_assert(!overlap("100.96.0.0/11", "100.64.0.0/11"));
    ck_assert(!overlap("100.96.0.0/11", "100.128.0.0/11"));
    ck_assert(overlap("0.0.0.0/0", "192.168.0.0/24"));
    ck_assert(overlap("192.168.0.0/23", "192.168.1.0/24"));
    ck_assert(!overlap("192.168.0.0/24", "192.168.1.0/24"));
    ck_assert(overlap("10.0.0.1/32", "10.0.0.0/31"));
    ck_assert(!overlap("10.0.0.2/32", "10.0.0.0/31"));
    /* IPv6 */
    ck_assert(overlap("2001:db8::/32", "2001:db8:1::/48"));
    ck_assert(!overlap("2001:db8::/32", "2001:db9::/32"));
    ck_assert(overlap("fd00:10:96::/112", "fd00:10::/32"));
    ck_assert(!overlap("fd00:10:96::/112", "fd00:10:97::/112"));
    ck_assert(overlap("::/0", "fe80::/10"));
    ck_assert(!overlap("2001:db8:8000::/33", "2001:db8::/33"));
    ck_assert(overlap("2001:db8:8000::/33", "2001:db8:c000::/34"));
    /* different families never overlap, not even ::ffff:0:0/96 */
    ck_assert(!overlap("10.0.0.0/8", "::/0"));
    ck_assert(!overlap("10.0.0.0/8", "::ffff:10.0.0.0/104"));
}
END_TEST

/* gm_net_overlap agrees with gm_cidr_overlap: prefixes of every length
 * around a few addresses, both families, and the two families mixed. */
START_TEST(net_overlap_matches_cidr)
{
    static const char *const addrs[] = {"10.0.0.0",   "10.0.64.0",         "10.1.0.0",
                                        "100.64.0.0", "0.0.0.0",           "255.255.255.255",
                                        "2001:db8::", "2001:db8:8000::",   "fd00:1::",
                                        "::",         "2001:db8::1:0:0:1", "::ffff:10.0.0.0"};
    enum { N = sizeof(addrs) / sizeof(addrs[0]) };
    char text[64];

    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < N; j++) {
            int maxi = strchr(addrs[i], ':') ? 128 : 32;
            int maxj = strchr(addrs[j], ':') ? 128 : 32;

            for (int bi = 0; bi <= maxi; bi += (bi < 8 || bi > maxi - 8) ? 1 : 7) {
                for (int bj = 0; bj <= maxj; bj += (bj < 8 || bj > maxj - 8) ? 1 : 5) {
                    gm_cidr a, b;
                    gm_net na, nb;

                    snprintf(text, sizeof(text), "%s/%d", addrs[i], bi);
                    ck_assert_int_eq(gm_cidr_parse(text, &a), 0);
                    snprintf(text, sizeof(text), "%s/%d", addrs[j], bj);
                    ck_assert_int_eq(gm_cidr_parse(text, &b), 0);
                    gm_net_from_cidr(&a, &na);
                    gm_net_from_cidr(&b, &nb);
                    ck_assert_int_eq(gm_net_overlap(&na, &nb), gm_cidr_overlap(&a, &b));
                    ck_assert_int_eq(gm_net_overlap(&nb, &na), gm_cidr_overlap(&a, &b));
                }
            }
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gardener_math");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, levenshtein_basics);
    tcase_add_test(tc, levenshtein_long);
    tcase_add_test(tc, region_split);
    tcase_add_test(tc, region_distance_examples);
    tcase_add_test(tc, cidr_parse_ipv4);
    tcase_add_test(tc, cidr_parse_ipv6);
    tcase_add_test(tc, cidr_overlap);
    tcase_add_test(tc, net_overlap_matches_cidr);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
