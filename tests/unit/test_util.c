/*
 * test_util.c - the small pieces: hash map, worker pool, error buffers,
 * string builder.
 */
#include "config.h"

#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "pool.h"
#include "testutil.h"
#include "util.h"

START_TEST(hmap_basics)
{
    hmap m;
    hmap_init(&m);
    char keys[2000][16];
    for (int i = 0; i < 2000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        ck_assert_ptr_null(hmap_put(&m, keys[i], (void *)(intptr_t)(i + 1)));
    }
    ck_assert_uint_eq(m.len, 2000);
    for (int i = 0; i < 2000; i += 2)
        ck_assert_int_eq((intptr_t)hmap_del(&m, keys[i]), i + 1);
    ck_assert_uint_eq(m.len, 1000);
    for (int i = 0; i < 2000; i++)
        ck_assert_int_eq((intptr_t)hmap_get(&m, keys[i]), i % 2 ? i + 1 : 0);
    ck_assert_int_eq((intptr_t)hmap_put(&m, keys[1], (void *)7), 2);
    size_t it = 0, n = 0;
    while (hmap_next(&m, &it))
        n++;
    ck_assert_uint_eq(n, 1000);
    ck_assert_ptr_null(hmap_get(&m, "absent"));
    hmap_free(&m);
}
END_TEST

typedef struct sum_ctx {
    int *out;
    atomic_int calls;
} sum_ctx;

static void square(void *ctx, size_t b, size_t e)
{
    sum_ctx *c = ctx;
    ck_assert_uint_le(e - b, 64); /* never more than one block */
    ck_assert_uint_eq(b % 64, 0);
    atomic_fetch_add(&c->calls, 1);
    for (size_t i = b; i < e; i++)
        c->out[i] = (int)(i * i);
}

START_TEST(pool_covers_every_item_once)
{
    for (int workers = 1; workers <= 4; workers++) {
        pool *p = pool_new(workers);
        ck_assert_int_eq(pool_size(p), workers);
        for (int round = 0; round < 20; round++) {
            size_t n = 1000 + (size_t)round * 37;
            sum_ctx c = {calloc(n, sizeof(int)), 0};
            for (size_t i = 0; i < n; i++)
                c.out[i] = -1;
            pool_run(p, n, 64, square, &c);
            for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(c.out[i], (int)(i * i));
            ck_assert_int_eq(atomic_load(&c.calls), (int)((n + 63) / 64));
            free(c.out);
        }
        pool_run(p, 0, 64, square, NULL); /* nothing to do */
        pool_free(p);
    }
}
END_TEST

START_TEST(error_buffers)
{
    char err[64];
    ck_assert_int_eq(errf(err, sizeof err, "bad CIDR '%s'", "10.0.0/8"), -1);
    errprefix(err, sizeof err, "plugin %s", "network-disjoint");
    errprefix(err, sizeof err, "profile gardener");
    ck_assert_str_eq(err, "profile gardener: plugin network-disjoint: bad CIDR '10.0.0/8'");
    char small[16];
    errf(small, sizeof small, "abcdefghij");
    errprefix(small, sizeof small, "ctx");
    ck_assert_uint_lt(strlen(small), sizeof small);
    ck_assert(strncmp(small, "ctx: abc", 8) == 0);
    ck_assert_int_eq(errf(NULL, 0, "x"), -1);
}
END_TEST

START_TEST(strbuf_and_strings)
{
    strbuf b;
    sb_init(&b);
    for (int i = 0; i < 100; i++)
        sb_printf(&b, "%d,", i);
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sb_printf(&b, "%s", big);
    ck_assert_uint_eq(b.len, strlen(b.s));
    ck_assert(strncmp(b.s, "0,1,2,", 6) == 0);
    char *s = sb_steal(&b);
    ck_assert_ptr_null(b.s);
    free(s);
    ck_assert(str_endswith("a.yaml", ".yaml"));
    ck_assert(!str_endswith("yaml", ".yaml"));
    char *a = xasprintf("%s-%d", "n", 3);
    ck_assert_str_eq(a, "n-3");
    free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hmap_basics);
    tcase_add_test(tc, pool_covers_every_item_once);
    tcase_add_test(tc, error_buffers);
    tcase_add_test(tc, strbuf_and_strings);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
