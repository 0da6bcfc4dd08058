/*
 * test_columns.c - the plugin-side helpers of the SDK 1.3 hot paths:
 * res_div (the division-free integer quotient least-allocated uses with a
 * stored reciprocal) against plain integer division, and trellis_equal_values
 * / trellis_equal_fields of trellis/helpers.h (what the `equivalent` hooks
 * of label-selector compare) through the real host table.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "trellis/helpers.h"
#include "../../plugins/common/resources.h"
#include "hostapi.h"
#include "testutil.h"

static void check_div(int64_t x, int64_t d)
{
    int64_t q = res_div(x, d, 1.0 / (double)d);

    ck_assert_msg(q == x / d, "res_div(%lld, %lld) = %lld, want %lld", (long long)x, (long long)d,
                  (long long)q, (long long)(x / d));
}

START_TEST(res_div_small_exhaustive)
{
    /* every quotient a score can have, for every small divisor */
    for (int64_t d = 1; d <= 2000; d++)
        for (int64_t x = 0; x <= 100 * d; x += (d < 50 ? 1 : d / 7 + 1))
            check_div(x, d);
}
END_TEST

START_TEST(res_div_exact_multiples_and_neighbours)
{
    /* the cases a rounded product gets wrong: k * d and k * d - 1, for
     * real allocatable amounts (millicores, bytes) up to the limit */
    static const int64_t ds[] = {
        3, 7, 1000, 4000, 96000, 34359738368, 549755813888, 1099511627775, (INT64_C(1) << 46) - 1};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++)
        for (int64_t k = 0; k <= 100; k++) {
            int64_t d = ds[i];
            if (k * d < RES_DIV_EXACT) {
                check_div(k * d, d);
                if (k)
                    check_div(k * d - 1, d);
                check_div(k * d + d / 2, d);
            }
        }
}
END_TEST

START_TEST(res_div_random)
{
    uint64_t s = 88172645463325252ull;
    for (int n = 0; n < 200000; n++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int64_t d = (int64_t)(s % (UINT64_C(1) << 46)) + 1;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int64_t free_amount = (int64_t)(s % (uint64_t)d);
        check_div(free_amount * 100, d);
    }
}
END_TEST

START_TEST(equal_values_deep)
{
    const trellis_host *h = hostapi_table();
    trellis_object *a = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                               "\"a\"},\"spec\":{\"nodeSelector\":{\"zone\":\"z1\",\"disk\":"
                               "\"ssd\"},\"tolerations\":[{\"key\":\"k\"},{\"key\":\"l\"}],"
                               "\"n\":1,\"x\":null}}");
    trellis_object *b = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                               "\"b\"},\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\",\"zone\":"
                               "\"z1\"},\"tolerations\":[{\"key\":\"l\"},{\"key\":\"k\"}],"
                               "\"n\":\"1\"}}");
    /* maps in another member order are equal */
    ck_assert(trellis_equal_fields(h, a, b, "spec.nodeSelector"));
    /* lists are ordered */
    ck_assert(!trellis_equal_fields(h, a, b, "spec.tolerations"));
    /* a number is not a string with the same text */
    ck_assert(!trellis_equal_fields(h, a, b, "spec.n"));
    /* absent and null are the same; absent and a map are not */
    ck_assert(trellis_equal_fields(h, a, b, "spec.x"));
    ck_assert(trellis_equal_fields(h, a, b, "spec.nothing"));
    ck_assert(!trellis_equal_fields(h, a, b, "metadata"));
    ck_assert(trellis_equal_fields(h, a, a, "spec"));
    object_unref(a);
    object_unref(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("columns");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, res_div_small_exhaustive);
    tcase_add_test(tc, res_div_exact_multiples_and_neighbours);
    tcase_add_test(tc, res_div_random);
    tcase_add_test(tc, equal_values_deep);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
