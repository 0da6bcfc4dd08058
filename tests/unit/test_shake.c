/*
 * test_shake.c - SHAKE128 (openMCP's generated Cluster names) against
 * FIPS 202's published results: the empty message and the pangram of the
 * SHA-3 examples, and NIST's 1600-bit message of 0xA3 bytes, longer than
 * one 168-byte block, read past the first block of output; then
 * base32_lower, the name's alphabet (RFC 4648's, lowercase, no padding).
 * The module is compiled into this test directly (a plugin helper, not
 * part of the core library).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/common/shake.c"

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

START_TEST(shake128_published_results)
{
    uint8_t out[240];
    char h[2 * sizeof out + 1];
    shake128("", 0, out, 32);
    hex(out, 32, h);
    ck_assert_str_eq(h, "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26");
    const char *fox = "The quick brown fox jumps over the lazy dog";
    shake128(fox, strlen(fox), out, 32);
    hex(out, 32, h);
    ck_assert_str_eq(h, "f4202e3c5852f9182a0430fd8144f0a74b95e7417ecae17db0f8cfeed0e3e66e");
    uint8_t a3[200];
    memset(a3, 0xa3, sizeof a3);
    shake128(a3, sizeof a3, out, sizeof out);
    hex(out, 32, h);
    ck_assert_str_eq(h, "131ab8d2b594946b9c81333f9bb6e0ce75c3b93104fa3469d3917457385da037");
    hex(out + 168, 32, h); /* the second block of output */
    ck_assert_str_eq(h, "09ba9e94f7266122ed7ac24e5e266c42a82fa1bbefb7b8db0066e16a85e0493f");
}
END_TEST

START_TEST(base32_lowercase_unpadded)
{
    char s[16];
    base32_lower((const uint8_t *)"", 0, s);
    ck_assert_str_eq(s, "");
    base32_lower((const uint8_t *)"f", 1, s);
    ck_assert_str_eq(s, "my"); /* RFC 4648: "MY======" */
    base32_lower((const uint8_t *)"foobar", 6, s);
    ck_assert_str_eq(s, "mzxw6ytboi"); /* "MZXW6YTBOI======" */
    /* five bytes, eight characters: openMCP's name suffix */
    const uint8_t d[5] = {0xa4, 0x4b, 0xd8, 0xb4, 0xda};
    base32_lower(d, 5, s);
    ck_assert_str_eq(s, "urf5rng2");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shake");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, shake128_published_results);
    tcase_add_test(tc, base32_lowercase_unpadded);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
