/*
 * extender_http.h - POST to an HTTP extender through libcurl, as
 * kube-scheduler's HTTPExtender.send does: the URL is the prefix without
 * its trailing slashes, "/" and the verb; the body is JSON; any status
 * but 200 is a failure naming the verb, the URL and the code; the whole
 * exchange is bounded by the timeout. TLS as kube's TLSClientConfig has
 * it (CA, client certificate and key, from files or PEM text, the server
 * name to verify, or no verification at all).
 *
 * One connection per client, reused; a client may be called from any
 * thread (calls are serialised on it).
 */
#ifndef TRELLIS_EXTENDER_HTTP_H
#define TRELLIS_EXTENDER_HTTP_H

#include <stddef.h>

typedef struct ext_http ext_http;

typedef struct ext_tls {
    int insecure;            /* no verification of the server's certificate */
    const char *server_name; /* the name to verify (and to send as SNI), NULL: the URL's host */
    const char *ca_file, *cert_file, *key_file;
    const char *ca_data, *cert_data, *key_data; /* PEM text */
} ext_tls;

/* A client of url_prefix ("http://host:port/path" or https) with a
 * timeout for each call. NULL with err. The strings are copied. */
ext_http *ext_http_new(const char *url_prefix, long timeout_ms, const ext_tls *tls, char *err,
                       size_t errlen);
void ext_http_free(ext_http *h);

/* POST body[0..len) to prefix/verb. 0 with *reply (malloc'd,
 * NUL-terminated, the caller's) and *reply_len on status 200; -1 with
 * err otherwise ("failed filter with extender at URL U, code 500",
 * "POST U: timed out after 300 ms (http_timeout_ms)"). */
int ext_http_post(ext_http *h, const char *verb, const char *body, size_t len, char **reply,
                  size_t *reply_len, char *err, size_t errlen);

#endif
