/*
 * http.h - the HTTP endpoint of `trellis run` (libmicrohttpd): /healthz,
 * /readyz, /configz and /metrics, as kube-scheduler serves them on its
 * secure port. The server runs on one thread of its own, which libmicrohttpd
 * starts and stops; the scheduler hands it callbacks for what only it
 * knows (readiness, the effective configuration) and the metrics come from
 * metrics_render().
 *
 * Routes: GET or HEAD
 *   /healthz  200 "ok\n", or 503 "unhealthy: <why>\n" (see healthy below);
 *   /readyz   200 "ok\n", or 503 "not ready: <why>\n";
 *   /configz  200 application/json, the effective configuration;
 *   /metrics  200 text/plain; version=0.0.4, the Prometheus text format.
 * Any other method is 405 with an Allow header; any other path 404; a
 * path with a NUL (%00) 400. An idle or half-sent connection is closed
 * after 2 s, and one client address holds at most 32 of the 256
 * connections, so /healthz stays answerable under connection pressure.
 */
#ifndef TRELLIS_HTTP_H
#define TRELLIS_HTTP_H

#include <stddef.h>

/*
 * Threading: both callbacks are called on the HTTP server's thread, one
 * request at a time, concurrently with the scheduler's threads; they must
 * take whatever lock guards what they read. Either may be NULL: no ready
 * callback means always ready, no configz callback means /configz is 404.
 */
typedef struct http_handlers {
    /* 1 when ready; else 0 with a short reason written into why. */
    int (*ready)(void *ud, char *why, size_t whylen);
    /* The configuration as JSON text, or NULL on failure (then 500).
     * Ownership of the malloc'd text transfers to the server. */
    char *(*configz)(void *ud);
    void *ud; /* passed to every callback; ownership is retained by the caller */
    /* 1 while the process is live; else 0 with the reason written into
     * why (a scheduling loop that stopped turning, a stuck plugin). NULL:
     * live while the server answers. */
    int (*healthy)(void *ud, char *why, size_t whylen);
} http_handlers;

typedef struct http_server http_server;

/* Listen on address (an IPv4 address such as "127.0.0.1") and port (0:
 * the kernel chooses one; see http_port) and serve on a thread of its own.
 * *h is copied. NULL with err filled on failure, e.g. "cannot listen on
 * 127.0.0.1:10259: Address already in use". */
http_server *http_start(const char *address, int port, const http_handlers *h, char *err,
                        size_t errlen);
/* The port the server listens on (the real one when started with 0). */
int http_port(const http_server *s);
/* Stop serving, wait for the server's thread to finish, free s. When it
 * returns, no callback runs any more. NULL is a no-op. */
void http_stop(http_server *s);

#endif
