/*
 * test_base.c - the base layer's small modules: the string map (hmap.c),
 * the message formatter (fmt.c), the worker pool (pool.c) and systemd
 * notifications (notify.c, against a real datagram socket).
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "fmt.h"
#include "hmap.h"
#include "labelsel.h"
#include "notify.h"
#include "pool.h"
#include "testutil.h"

START_TEST(clock_parses_rfc3339)
{
    int64_t ms = 0;
    ck_assert_int_eq(clock_parse("1970-01-01T00:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 0);
    ck_assert_int_eq(clock_parse("2026-01-01T00:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 1767225600000); /* date -d 2026-01-01T00:00:00Z +%s */
    /* offsets, a fraction, lower case, a space instead of T */
    ck_assert_int_eq(clock_parse("2026-01-01T01:30:00+01:30", &ms), 0);
    ck_assert_int_eq(ms, 1767225600000);
    ck_assert_int_eq(clock_parse("2025-12-31T19:00:00-05:00", &ms), 0);
    ck_assert_int_eq(ms, 1767225600000);
    ck_assert_int_eq(clock_parse("2026-01-01t00:00:00.250z", &ms), 0);
    ck_assert_int_eq(ms, 1767225600250);
    ck_assert_int_eq(clock_parse("2026-01-01 00:00:00.123456789Z", &ms), 0);
    ck_assert_int_eq(ms, 1767225600123);
    /* leap days */
    ck_assert_int_eq(clock_parse("2024-02-29T00:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 1709164800000);
    ck_assert_int_eq(clock_parse("2000-02-29T12:00:00Z", &ms), 0);
    ck_assert_int_eq(ms, 951825600000);
    /* what is not one */
    static const char *const bad[] = {"",
                                      "2026-01-01",
                                      "2026-01-01T00:00:00",
                                      "2026-02-29T00:00:00Z",
                                      "1900-02-29T00:00:00Z",
                                      "2026-13-01T00:00:00Z",
                                      "2026-01-01T24:00:00Z",
                                      "2026-01-01T00:60:00Z",
                                      "2026-01-01T00:00:00.Z",
                                      "2026-01-01T00:00:00+0100",
                                      "2026-01-01T00:00:00Z ",
                                      "26-01-01T00:00:00Z",
                                      "yesterday"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(clock_parse(bad[i], &ms) < 0, "'%s' parsed", bad[i]);
    ck_assert_int_eq(clock_parse(NULL, &ms), -1);
}
END_TEST

START_TEST(clock_formats_whole_seconds)
{
    char b[CLOCK_TEXT_MAX];
    clock_format(1767225600999, b, sizeof b);
    ck_assert_str_eq(b, "2026-01-01T00:00:00Z");
    clock_format(0, b, sizeof b);
    ck_assert_str_eq(b, "1970-01-01T00:00:00Z");
    int64_t ms;
    ck_assert_int_eq(clock_parse("2031-07-15T08:09:10Z", &ms), 0);
    clock_format(ms, b, sizeof b);
    ck_assert_str_eq(b, "2031-07-15T08:09:10Z");      /* a round trip */
    ck_assert_int_gt(clock_wall_ms(), 1767225600000); /* after this code was written */
}
END_TEST

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

/* hmap_slot_h is a lookup and an insert in one probe. A deleted key put
 * back takes its tombstone (on its probe before any empty slot): the same
 * slot, nothing more used; a present key is found under another pointer to
 * its text; keys made while the table grows are all found after. */
START_TEST(hmap_slot_is_put_in_one_probe)
{
    hmap m;
    hmap_init(&m);
    enum { N = 600 };
    char *keys[N], *twins[N];
    size_t at[N];
    for (int i = 0; i < N; i++) {
        keys[i] = xasprintf("k%d", i);
        twins[i] = xstrdup(keys[i]); /* the same text elsewhere */
        int found;
        hmap_slot *s = hmap_slot_h(&m, twins[i], hmap_hash(keys[i]), &found);
        ck_assert_int_eq(found, 0);
        ck_assert_ptr_eq(s->key, twins[i]);
        ck_assert_ptr_null(s->val);
        s->key = keys[i];
        s->val = (void *)(intptr_t)(i + 1);
    }
    ck_assert_uint_eq(m.len, N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq((int)(intptr_t)hmap_get(&m, keys[i]), i + 1);
    size_t it = 0;
    hmap_slot *s;
    while ((s = hmap_next(&m, &it)))
        at[(int)(intptr_t)s->val - 1] = it - 1;
    /* one deleted at a time: put back into its own slot */
    size_t used = m.used;
    for (int i = 0; i < N; i += 3) {
        hmap_del(&m, keys[i]);
        int found;
        s = hmap_slot_h(&m, twins[i], hmap_hash(keys[i]), &found);
        ck_assert_int_eq(found, 0);
        ck_assert_uint_eq((size_t)(s - m.slots), at[i]);
        s->key = keys[i];
        s->val = (void *)(intptr_t)(i + 1);
    }
    /* a third deleted, then put back: each into a tombstone */
    for (int i = 0; i < N; i += 3)
        hmap_del(&m, keys[i]);
    for (int i = 0; i < N; i++) {
        int found;
        s = hmap_slot_h(&m, twins[i], hmap_hash(keys[i]), &found);
        ck_assert_int_eq(found, i % 3 != 0);
        ck_assert_ptr_eq(s->key, found ? keys[i] : twins[i]);
        if (found)
            ck_assert_uint_eq((size_t)(s - m.slots), at[i]);
        else
            s->val = (void *)(intptr_t)(i + 1);
    }
    ck_assert_uint_eq(m.used, used);
    ck_assert_uint_eq(m.len, N);
    hmap_free(&m);
    for (int i = 0; i < N; i++) {
        free(keys[i]);
        free(twins[i]);
    }
}
END_TEST

/* fmt_v against the C library's vsnprintf: the same text and return value
 * for every buffer size from none to more than enough, over the
 * conversions it writes itself and some it hands over (width, precision,
 * flags, %x, %f, %p). */
static void both(size_t len, const char *fmt, ...)
{
    char a[128], b[128];
    memset(a, 'x', sizeof a);
    memset(b, 'x', sizeof b);
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int ra = fmt_v(a, len, fmt, ap);
    int rb = vsnprintf(b, len, fmt, aq);
    va_end(aq);
    va_end(ap);
    ck_assert_msg(ra == rb, "'%s' in %zu bytes: %d, vsnprintf %d", fmt, len, ra, rb);
    ck_assert_msg(memcmp(a, b, sizeof a) == 0, "'%s' in %zu bytes: '%.*s', vsnprintf '%.*s'", fmt,
                  len, (int)(len < sizeof a ? len : sizeof a), a,
                  (int)(len < sizeof b ? len : sizeof b), b);
}

START_TEST(fmt_writes_what_vsnprintf_writes)
{
    for (size_t len = 0; len <= 70; len++) {
        both(len, "plain text, no conversion");
        both(len, "%s held the fewest requests (%lld) of %zu candidates", "ns/c-1", (long long)-42,
             (size_t)250);
        both(len, "%d %i %u %ld %lu %lld %llu %zd %zu", -2147483647 - 1, 7, 4294967295u,
             -9223372036854775807L - 1, 18446744073709551615UL, -9223372036854775807LL - 1,
             18446744073709551615ULL, (ptrdiff_t)-5, (size_t)0);
        both(len, "%c%c %% %s|%s|", 'a', 'z', "", (const char *)NULL);
        both(len, "%5d|%-3s|%.2s|%x|%08.3f|%+d|%p", 42, "ab", "abc", 255u, 3.14159, 9,
             (void *)&len);
        both(len, "a %s then %lx", "b", 255ul);
        both(len, "%s%s%s%s", "one", "two", "three", "four");
    }
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
        pool_run(p, 0, 256, add_range, seen);                /* nothing to do */
        pool_run_range(p, 512, 10007, 256, add_range, seen); /* from 512 on */
        for (size_t i = 0; i < 10007; i++)
            ck_assert_int_eq(seen[i], i < 512 ? 1 : 2);
        pool_run_range(p, 700, 700, 256, add_range, seen); /* an empty range */
        pool_run_range(p, 9000, 700, 256, add_range, seen);
        ck_assert_int_eq(seen[700], 2);
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

/* A LabelSelector against labels, as drain asks a disruption budget. */
static int sel(const char *selector, const char *labels, char *err, size_t errlen)
{
    json_object *s = json_tokener_parse(selector), *l = json_tokener_parse(labels);
    int r = labelsel_match(s, l, err, errlen);
    json_object_put(s);
    json_object_put(l);
    return r;
}

START_TEST(labelsel_matches_as_kubernetes)
{
    char err[256];
    const char *web = "{\"app\": \"web\", \"zone\": \"a\"}";
    ck_assert_int_eq(sel("{\"matchLabels\": {\"app\": \"web\"}}", web, err, sizeof err), 1);
    ck_assert_int_eq(sel("{\"matchLabels\": {\"app\": \"db\"}}", web, err, sizeof err), 0);
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"app\", \"operator\": \"In\", "
                         "\"values\": [\"db\", \"web\"]}, {\"key\": \"canary\", \"operator\": "
                         "\"DoesNotExist\"}]}",
                         web, err, sizeof err),
                     1);
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"NotIn\", "
                         "\"values\": [\"a\"]}]}",
                         web, err, sizeof err),
                     0);
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"Exists\"}]}",
                         web, err, sizeof err),
                     1);
    /* NotIn matches a label that is absent */
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"tier\", \"operator\": \"NotIn\", "
                         "\"values\": [\"db\"]}]}",
                         "{}", err, sizeof err),
                     1);
    /* empty or absent: nothing (a budget without a selector covers no Pod) */
    ck_assert_int_eq(sel("{}", web, err, sizeof err), 0);
    ck_assert_int_eq(labelsel_match(NULL, NULL, err, sizeof err), 0);
    /* malformed: the member is named */
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"app\", \"operator\": \"Equals\", "
                         "\"values\": [\"web\"]}]}",
                         web, err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "matchExpressions[0].operator: expected In, NotIn, Exists or "
                              "DoesNotExist, got 'Equals'") != NULL,
                  "%s", err);
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"app\", \"operator\": \"In\"}]}", web,
                         err, sizeof err),
                     -1);
    ck_assert_msg(strstr(err, "In needs at least one value") != NULL, "%s", err);
    ck_assert_int_eq(sel("{\"matchLabels\": [1]}", web, err, sizeof err), -1);
    ck_assert_int_eq(sel("[1]", web, err, sizeof err), -1);
    ck_assert_int_eq(sel("{\"matchExpressions\": [{\"key\": \"a\", \"operator\": \"Exists\", "
                         "\"values\": [\"x\"]}]}",
                         web, err, sizeof err),
                     -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, clock_parses_rfc3339);
    tcase_add_test(tc, labelsel_matches_as_kubernetes);
    tcase_add_test(tc, clock_formats_whole_seconds);
    tcase_add_test(tc, hmap_put_get_del_grow);
    tcase_add_test(tc, hmap_slot_is_put_in_one_probe);
    tcase_add_test(tc, fmt_writes_what_vsnprintf_writes);
    tcase_add_test(tc, pool_covers_every_index_once);
    tcase_add_test(tc, notify_sends_to_the_socket);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
