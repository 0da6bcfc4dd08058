/*
 * test_http.c - the HTTP endpoint, over real sockets: a server on
 * 127.0.0.1 with a port the kernel chooses, a small blocking client (a
 * receive timeout bounds every request; nothing sleeps), the four routes,
 * HEAD, 404 and 405, /readyz following the ready callback, and a second
 * server on a port in use failing with a message that says so.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "metrics.h"
#include "testutil.h"

typedef struct response {
    int status;
    char *head; /* status line and headers */
    char *body;
} response;

/* One request on a fresh connection; reads until the server closes it. */
static response do_request(int port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = {.tv_sec = 10};
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char req[512];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     "Content-Length: 0\r\n\r\n",
                     method, path);
    ck_assert_int_eq(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    strbuf b;
    sb_init(&b);
    char chunk[4096];
    ssize_t got;
    while ((got = recv(fd, chunk, sizeof chunk, 0)) > 0)
        sb_add(&b, chunk, (size_t)got);
    ck_assert_msg(got == 0, "%s %s: no complete answer within the timeout", method, path);
    close(fd);
    char *all = sb_steal(&b);
    response r = {0};
    ck_assert_msg(sscanf(all, "HTTP/1.1 %d", &r.status) == 1, "bad status line: %s", all);
    char *sep = strstr(all, "\r\n\r\n");
    ck_assert_ptr_nonnull(sep);
    r.body = xstrdup(sep + 4);
    sep[2] = '\0';
    r.head = all;
    return r;
}

static void response_free(response *r)
{
    free(r->head);
    free(r->body);
}

/* The value of a header (case-insensitive name), or NULL; into buf. */
static const char *header(const response *r, const char *name, char *buf, size_t len)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\r\n%s:", name);
    const char *h = strcasestr(r->head, needle);
    if (!h)
        return NULL;
    h += strlen(needle);
    while (*h == ' ')
        h++;
    size_t n = strcspn(h, "\r\n");
    snprintf(buf, len, "%.*s", (int)n, h);
    return buf;
}

/* A request whose status and body are all there is to check. */
static void expect(int port, const char *method, const char *path, int status, const char *body)
{
    response r = do_request(port, method, path);
    ck_assert_msg(r.status == status, "%s %s: %d, expected %d", method, path, r.status, status);
    if (body)
        ck_assert_str_eq(r.body, body);
    response_free(&r);
}

static atomic_int is_ready;

static int ready_cb(void *ud, char *why, size_t whylen)
{
    ck_assert_ptr_eq(ud, &is_ready);
    if (atomic_load(&is_ready))
        return 1;
    snprintf(why, whylen, "cache not synced");
    return 0;
}

static char *configz_cb(void *ud)
{
    (void)ud;
    return xstrdup("{ \"parallelism\": 2 }\n");
}

static atomic_int is_healthy = 1;

static int healthy_cb(void *ud, char *why, size_t whylen)
{
    (void)ud;
    if (atomic_load(&is_healthy))
        return 1;
    snprintf(why, whylen, "the scheduling loop has not turned for 31.0 s");
    return 0;
}

static const http_handlers handlers = {ready_cb, configz_cb, &is_ready, healthy_cb};

static http_server *start(void)
{
    char err[256];
    http_server *s = http_start("127.0.0.1", 0, &handlers, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_gt(http_port(s), 0);
    return s;
}

START_TEST(routes_answer)
{
    http_server *s = start();
    int port = http_port(s);
    char buf[256];

    response r = do_request(port, "GET", "/healthz");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "ok\n");
    ck_assert_str_eq(header(&r, "Content-Type", buf, sizeof buf), "text/plain; charset=utf-8");
    response_free(&r);

    r = do_request(port, "GET", "/configz");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{ \"parallelism\": 2 }\n");
    ck_assert_str_eq(header(&r, "Content-Type", buf, sizeof buf), "application/json");
    response_free(&r);

    metrics_reset();
    metrics_enable(1);
    metrics_set_ready(1);
    r = do_request(port, "GET", "/metrics?x=1");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(header(&r, "Content-Type", buf, sizeof buf),
                     "text/plain; version=0.0.4; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body, "# TYPE trellis_build_info gauge\n"));
    ck_assert_ptr_nonnull(strstr(r.body, "\ntrellis_ready 1\n"));
    char len[32];
    snprintf(len, sizeof len, "%zu", strlen(r.body));
    ck_assert_str_eq(header(&r, "Content-Length", buf, sizeof buf), len);
    response_free(&r);
    metrics_enable(0);
    metrics_reset();

    r = do_request(port, "HEAD", "/healthz");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "");
    ck_assert_str_eq(header(&r, "Content-Length", buf, sizeof buf), "3");
    response_free(&r);

    expect(port, "GET", "/nope", 404, "not found\n");

    r = do_request(port, "POST", "/metrics");
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(header(&r, "Allow", buf, sizeof buf), "GET, HEAD");
    response_free(&r);

    expect(port, "DELETE", "/healthz", 405, "method not allowed\n");
    http_stop(s);
}
END_TEST

START_TEST(readyz_follows_callback)
{
    atomic_store(&is_ready, 0);
    http_server *s = start();
    expect(http_port(s), "GET", "/readyz", 503, "not ready: cache not synced\n");
    atomic_store(&is_ready, 1);
    expect(http_port(s), "GET", "/readyz", 200, "ok\n");
    atomic_store(&is_ready, 0);
    expect(http_port(s), "HEAD", "/readyz", 503, "");
    http_stop(s);
}
END_TEST

START_TEST(no_handlers)
{
    char err[256];
    http_server *s = http_start("127.0.0.1", 0, NULL, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    expect(http_port(s), "GET", "/readyz", 200, "ok\n");
    expect(http_port(s), "GET", "/configz", 404, "not found\n");
    http_stop(s);
    http_stop(NULL);
}
END_TEST

START_TEST(port_in_use)
{
    http_server *s = start();
    int port = http_port(s);
    char err[256], want[128];
    ck_assert_ptr_null(http_start("127.0.0.1", port, &handlers, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on 127.0.0.1:%d: Address already in use", port);
    ck_assert_str_eq(err, want);
    http_stop(s);
    /* the listening socket is closed: the port can be taken again */
    s = http_start("127.0.0.1", port, &handlers, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_int_eq(http_port(s), port);
    expect(port, "GET", "/healthz", 200, "ok\n");
    http_stop(s);
}
END_TEST

START_TEST(bad_address_and_port)
{
    char err[256];
    ck_assert_ptr_null(http_start("localhost", 0, &handlers, err, sizeof err));
    ck_assert_msg(strstr(err, "'localhost'") && strstr(err, "IPv4"), "%s", err);
    ck_assert_ptr_null(http_start("127.0.0.1", 70000, &handlers, err, sizeof err));
    ck_assert_msg(strstr(err, "127.0.0.1:70000") && strstr(err, "0..65535"), "%s", err);
}
END_TEST

START_TEST(healthz_follows_callback)
{
    http_server *s = start();
    atomic_store(&is_healthy, 0);
    expect(http_port(s), "GET", "/healthz", 503,
           "unhealthy: the scheduling loop has not turned for 31.0 s\n");
    atomic_store(&is_healthy, 1);
    expect(http_port(s), "GET", "/healthz", 200, "ok\n");
    http_stop(s);
}
END_TEST

/* "/healthz%00x" was read as "/healthz": a NUL in the path is refused;
 * other escapes still decode. */
START_TEST(nul_in_path_refused)
{
    http_server *s = start();
    int port = http_port(s);
    expect(port, "GET", "/healthz%00x", 400, "bad request: a NUL (%00) in the path\n");
    expect(port, "GET", "/healthz%00", 400, "bad request: a NUL (%00) in the path\n");
    expect(port, "GET", "/heal%74hz", 200, "ok\n");
    http_stop(s);
}
END_TEST

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = {.tv_sec = 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The status of GET /healthz on a new connection, -1 when the server
 * closed it or did not answer within a second. */
static int try_healthz(int port)
{
    int fd = connect_to(port);
    if (fd < 0)
        return -1;
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int status = -1;
    char buf[512];
    ssize_t n = 0;
    if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)sizeof req - 1)
        n = recv(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
        buf[n] = '\0';
        if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
            status = -1;
    }
    close(fd);
    return status;
}

/* 129 connections that send half a request and wait kept /healthz out
 * for 17 s: they are closed after the idle timeout and one client holds
 * only so many, so /healthz answers within a few seconds. */
START_TEST(healthz_under_connection_pressure)
{
    http_server *s = start();
    int port = http_port(s);
    int idle[129];
    size_t n = 0;
    for (size_t i = 0; i < 129; i++) {
        int fd = connect_to(port);
        if (fd < 0)
            continue;
        static const char half[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
        if (send(fd, half, sizeof half - 1, MSG_NOSIGNAL) < 0) {
            close(fd);
            continue;
        }
        idle[n++] = fd;
    }
    /* polled, for at most ten seconds: the idle ones go after the idle
     * timeout (two seconds) */
    int status = -1;
    struct timespec t0, now, pause = {0, 50 * 1000000L};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double waited = 0;
    while (status != 200 && waited < 10.0) {
        status = try_healthz(port);
        if (status != 200)
            nanosleep(&pause, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        waited = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
    }
    ck_assert_msg(status == 200, "no answer from /healthz within %.1f s", waited);
    for (size_t i = 0; i < n; i++)
        close(idle[i]);
    http_stop(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, routes_answer);
    tcase_add_test(tc, readyz_follows_callback);
    tcase_add_test(tc, no_handlers);
    tcase_add_test(tc, port_in_use);
    tcase_add_test(tc, bad_address_and_port);
    tcase_add_test(tc, healthz_follows_callback);
    tcase_add_test(tc, nul_in_path_refused);
    tcase_add_test(tc, healthz_under_connection_pressure);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
