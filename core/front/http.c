/*
 * http.c - see http.h. The listening socket is opened here rather than by
 * libmicrohttpd, so a failure names its cause ("Address already in use")
 * and port 0 can be read back; libmicrohttpd then serves it on its own
 * polling thread. Every route answers a small body built per request.
 */
#include "config.h"

#include "http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "util.h"

#define ALLOWED "GET, HEAD"

/* Connections: an idle or half-sent one is closed after IDLE_TIMEOUT_S
 * seconds, one client (IP address) holds at most PER_CLIENT of them and
 * all clients MAX_CONNECTIONS, so a client that opens many and sends
 * nothing cannot keep a supervisor's /healthz out for long: from another
 * address it is answered at once, from the same one within the timeout.
 * (129 idle half-sent requests kept /healthz out for 17 s with a limit of
 * 64 and a timeout of 10 s.) */
#define IDLE_TIMEOUT_S 2
#define PER_CLIENT 32
#define MAX_CONNECTIONS 256

struct http_server {
    struct MHD_Daemon *d;
    http_handlers h;
    int fd;
    int port;
};

/* What a route answers: status, content type, body (malloc'd). */
typedef struct reply {
    unsigned status;
    const char *type;
    char *body;
} reply;

static const char text_type[] = "text/plain; charset=utf-8";

static void text(reply *r, unsigned status, const char *body)
{
    r->status = status;
    r->type = text_type;
    r->body = xstrdup(body);
}

static void route_healthz(const http_server *s, reply *r)
{
    char why[512] = "";
    if (!s->h.healthy || s->h.healthy(s->h.ud, why, sizeof why) == 1) {
        text(r, MHD_HTTP_OK, "ok\n");
        return;
    }
    r->status = MHD_HTTP_SERVICE_UNAVAILABLE;
    r->type = text_type;
    r->body = xasprintf("unhealthy: %s\n", why[0] ? why : "unknown");
}

static void route_readyz(const http_server *s, reply *r)
{
    char why[256] = "";
    if (!s->h.ready || s->h.ready(s->h.ud, why, sizeof why) == 1) {
        text(r, MHD_HTTP_OK, "ok\n");
        return;
    }
    r->status = MHD_HTTP_SERVICE_UNAVAILABLE;
    r->type = text_type;
    r->body = xasprintf("not ready: %s\n", why[0] ? why : "unknown");
}

static void route_configz(const http_server *s, reply *r)
{
    if (!s->h.configz) {
        text(r, MHD_HTTP_NOT_FOUND, "not found\n");
        return;
    }
    char *json = s->h.configz(s->h.ud);
    if (!json) {
        text(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render the configuration\n");
        return;
    }
    r->status = MHD_HTTP_OK;
    r->type = "application/json";
    r->body = json;
}

static void route_metrics(const http_server *s, reply *r)
{
    (void)s;
    r->status = MHD_HTTP_OK;
    r->type = "text/plain; version=0.0.4; charset=utf-8";
    r->body = metrics_render();
}

static const struct route {
    const char *path;
    void (*fn)(const http_server *s, reply *r);
} routes[] = {{"/healthz", route_healthz},
              {"/readyz", route_readyz},
              {"/configz", route_configz},
              {"/metrics", route_metrics}};

static enum MHD_Result send_reply(struct MHD_Connection *conn, reply *r, int allow)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(r->body), r->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(r->body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, ALLOWED);
    enum MHD_Result ret = MHD_queue_response(conn, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* libmicrohttpd decodes %XX in the path; "%00" would cut the path short
 * ("/healthz%00x" read as "/healthz"). Decode here and mark a NUL, so that
 * such a request is refused. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *uri)
{
    (void)cls;
    (void)conn;
    char *w = uri;
    for (const char *r = uri; *r;) {
        if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
            char hex[3] = {r[1], r[2], 0};
            long v = strtol(hex, NULL, 16);
            *w++ = v == 0 ? '\x7f' : (char)v; /* DEL stands for the NUL */
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - uri);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    static int seen;
    (void)version;
    (void)upload;
    /* The first call only announces the request; answer once any body
     * has been read (and dropped: no route takes one). */
    if (!*con_cls) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    http_server *s = cls;
    reply r = {0};
    if (strchr(url, '\x7f')) {
        text(&r, MHD_HTTP_BAD_REQUEST, "bad request: a NUL (%00) in the path\n");
        return send_reply(conn, &r, 0);
    }
    const struct route *rt = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
        if (strcmp(url, routes[i].path) == 0)
            rt = &routes[i];
    if (!rt) {
        text(&r, MHD_HTTP_NOT_FOUND, "not found\n");
        return send_reply(conn, &r, 0);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        text(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
        return send_reply(conn, &r, 1);
    }
    /* for HEAD, libmicrohttpd sends the headers of this reply, no body */
    rt->fn(s, &r);
    return send_reply(conn, &r, 0);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    log_debug("http: %s", msg);
}

/* A listening IPv4 socket on address:port; -1 with err filled. */
static int listen_on(const char *address, int port, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (!address || inet_pton(AF_INET, address, &sa.sin_addr) != 1)
        return errf(err, errlen, "cannot listen on '%s': expected an IPv4 address like 127.0.0.1",
                    address ? address : "");
    if (port < 0 || port > 65535)
        return errf(err, errlen, "cannot listen on %s:%d: expected a port in 0..65535", address,
                    port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errf(err, errlen, "cannot listen on %s:%d: %s", address, port, strerror(errno));
    int one = 1;
    /* restarting right after a stop must not wait for TIME_WAIT; two
     * listeners on one port still fail with EADDRINUSE */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
        errf(err, errlen, "cannot listen on %s:%d: %s", address, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

http_server *http_start(const char *address, int port, const http_handlers *h, char *err,
                        size_t errlen)
{
    int fd = listen_on(address, port, err, errlen);
    if (fd < 0)
        return NULL;
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        errf(err, errlen, "cannot listen on %s:%d: %s", address, port, strerror(errno));
        close(fd);
        return NULL;
    }
    http_server *s = xcalloc(1, sizeof *s);
    if (h)
        s->h = *h;
    s->fd = fd;
    s->port = ntohs(sa.sin_port);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        flags |= MHD_USE_POLL;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
                            NULL, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_CLIENT,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
    if (!s->d) {
        errf(err, errlen, "cannot serve HTTP on %s:%d: libmicrohttpd did not start", address,
             s->port);
        close(fd);
        free(s);
        return NULL;
    }
    return s;
}

int http_port(const http_server *s)
{
    return s ? s->port : 0;
}

void http_stop(http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d); /* joins its thread and closes the listening socket */
    free(s);
}
