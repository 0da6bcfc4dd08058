/*
 * httpc.h - HTTP requests and line streams over libcurl: the transport the
 * etcd client (etcdclient.c) and the Kubernetes API client (kubeapi.c)
 * share.
 *
 * A client keeps a few curl handles (their connections are reused) for
 * requests, so that several threads may ask at once; a stream takes a
 * handle of its own for as long as it lasts. TLS: a CA, a client
 * certificate and key, each a file or a PEM text; verification is on
 * unless the client was made insecure.
 */
#ifndef TRELLIS_HTTPC_H
#define TRELLIS_HTTPC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef struct httpc httpc;
/* The most requests a client makes at once (its connections). */
#define HTTPC_MAX_CONNS 32

typedef struct httpc_opts {
    /* TLS (each may be NULL): a file, or a PEM text used instead */
    const char *ca_file, *cert_file, *key_file;
    const char *ca_pem, *cert_pem, *key_pem;
    int insecure; /* do not verify the server (kubeconfig's insecure-skip-tls-verify) */
    /* extra headers every request carries ("Name: value"), NULL-ended */
    const char *const *headers;
    uint32_t timeout_ms; /* one request, 0: 5000 */
    int conns;           /* requests at once, 1..HTTPC_MAX_CONNS (0: 4); more wait */
} httpc_opts;

/* A client with opts (copied). NULL with err. */
httpc *httpc_new(const httpc_opts *opts, char *err, size_t errlen);
void httpc_free(httpc *c);
uint32_t httpc_timeout_ms(const httpc *c);

/* What became of a request. */
enum {
    HTTPC_ANSWERED = 0, /* the server answered (any status) */
    HTTPC_NOT_SENT = 1, /* it never reached the server (connect, TLS, resolve) */
    HTTPC_FAILED = 2,   /* it may have reached the server (timeout, reset) */
};

/* One request: method ("GET", "POST", "PATCH", "PUT", "DELETE") on url,
 * with body (NULL: none) of content_type (NULL: application/json). The
 * reply's status and body (appended to out, NUL-terminated). HTTPC_* ;
 * err says why when not answered. Any thread. */
int httpc_request(httpc *c, const char *method, const char *url, const char *body,
                  const char *content_type, long *status, strbuf *out, char *err, size_t errlen);

/* A stream of newline-terminated messages: method on url (body as above),
 * then line(ud, text, len) for each until line returns non-zero, the
 * server ends the stream, nothing arrives for idle_ms, or *stop becomes
 * non-zero (looked at about once a second). *status is the reply's. 0 when
 * line or stop ended it; 1 when the server ended it (a last unterminated
 * line is passed too); -1 with err when it broke. Any thread. */
typedef int (*httpc_line_fn)(void *ud, const char *text, size_t len);
int httpc_stream(httpc *c, const char *method, const char *url, const char *body, uint32_t idle_ms,
                 atomic_int *stop, httpc_line_fn line, void *ud, long *status, char *err,
                 size_t errlen);

#endif
