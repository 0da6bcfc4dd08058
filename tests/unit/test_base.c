/*
 * test_base.c - the base layer's small modules: the string map (hmap.c),
 * the worker pool (pool.c) and systemd notifications (notify.c, against a
 * real datagram socket).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hmap.h"
#include "notify.h"
#include "pool.h"
#include "testutil.h"

START_TEST(hmap_put_get_del_grow)
{
    hmap m;
    hmap_init(&m);
    char *keys[2000];
    for (int i = 0; i < 2000; i++) {
        keys[i] = xasprintf("key-%d", i);
        ck_assert_ptr_null(hmap_put(&m, keys[i], (void *)(intptr_t)(i + 1)));
    }
    ck_assert_uint_eq(m.len, 2000);
    for (int i = 0; i < 2000; i += 2)
        ck_assert_int_eq((int)(intptr_t)hmap_del(&m, keys[i]), i + 1);
    ck_assert_uint_eq(m.len, 1000);
    for (int i = 0; i < 2000; i++)
        ck_assert_int_eq((int)(intptr_t)hmap_get(&m, keys[i]), i % 2 ? i + 1 : 0);
    /* a put on a present key replaces and returns the old value */
    ck_assert_int_eq((int)(intptr_t)hmap_put(&m, keys[1], (void *)7), 2);
    size_t it = 0, n = 0;
    while (hmap_next(&m, &it))
        n++;
    ck_assert_uint_eq(n, 1000);
    hmap_free(&m);
    for (int i = 0; i < 2000; i++)
        free(keys[i]);
}
END_TEST

static void add_range(void *ctx, size_t b, size_t e)
{
    int *seen = ctx;
    for (size_t i = b; i < e; i++)
        seen[i]++;
}

START_TEST(pool_covers_every_index_once)
{
    for (int workers = 1; workers <= 4; workers += 3) {
        pool *p = pool_new(workers);
        ck_assert_int_eq(pool_size(p), workers);
        int *seen = calloc(10007, sizeof *seen);
        pool_run(p, 10007, 256, add_range, seen);
        for (size_t i = 0; i < 10007; i++)
            ck_assert_int_eq(seen[i], 1);
        pool_run(p, 0, 256, add_range, seen); /* nothing to do */
        free(seen);
        pool_free(p);
    }
}
END_TEST

START_TEST(notify_sends_to_the_socket)
{
    char dir[64], path[128], buf[256];
    tu_mkdtemp(dir, "notify");
    snprintf(path, sizeof path, "%s/sock", dir);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, path, strlen(path) + 1); /* a /tmp path: short */
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    setenv("NOTIFY_SOCKET", path, 1);
    ck_assert_int_ge(notify_send("READY=1\nSTATUS=%s", "up"), 0);
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "READY=1\nSTATUS=up");
    setenv("WATCHDOG_USEC", "30000000", 1);
    unsetenv("WATCHDOG_PID");
    ck_assert_uint_eq(notify_watchdog_ms(), 30000);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    close(fd);
    tu_rmtree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hmap_put_get_del_grow);
    tcase_add_test(tc, pool_covers_every_index_once);
    tcase_add_test(tc, notify_sends_to_the_socket);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
