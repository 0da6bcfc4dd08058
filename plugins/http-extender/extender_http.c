/*
 * extender_http.c - see extender_http.h.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "extender_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An answer larger than this is refused (a NodeList of 20,000 Nodes is
 * far below it). */
#define REPLY_MAX (256u << 20)

struct ext_http {
    pthread_mutex_t mu;
    CURL *curl;
    char *prefix;  /* without trailing slashes */
    char *connect; /* CURLOPT_CONNECT_TO entry for tls server_name, or NULL */
    struct curl_slist *headers, *connect_to;
    long timeout_ms;
    char *ca_data, *cert_data, *key_data;
};

static char *dup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

typedef struct reply {
    char *s;
    size_t len, cap;
    int too_large;
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    reply *r = ud;
    size_t add = size * n;
    if (r->len + add + 1 > REPLY_MAX) {
        r->too_large = 1;
        return 0;
    }
    if (r->len + add + 1 > r->cap) {
        size_t cap = (r->len + add + 1) * 2;
        char *g = realloc(r->s, cap);
        if (!g)
            return 0;
        r->s = g;
        r->cap = cap;
    }
    memcpy(r->s + r->len, p, add);
    r->len += add;
    r->s[r->len] = '\0';
    return add;
}

/* The prefix's host and port, for server_name: the URL is rewritten to
 * name server_name and curl connects to the real host (CONNECT_TO), so
 * that SNI and the certificate check use server_name. */
static int setup_server_name(ext_http *h, const char *server_name, char *err, size_t errlen)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *url = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, h->prefix, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        snprintf(err, errlen, "url_prefix '%s' is not a URL", h->prefix);
        goto out;
    }
    size_t n = strlen(server_name) + strlen(host) + 2 * strlen(port) + 4;
    h->connect = malloc(n);
    if (!h->connect)
        goto out;
    snprintf(h->connect, n, "%s:%s:%s:%s", server_name, port, host, port);
    if (curl_url_set(u, CURLUPART_HOST, server_name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        snprintf(err, errlen, "tls_server_name '%s' is not a host name", server_name);
        goto out;
    }
    free(h->prefix);
    h->prefix = strdup(url);
    /* curl writes an empty path as "/": the verb's slash is added later */
    for (size_t k = h->prefix ? strlen(h->prefix) : 0; k && h->prefix[k - 1] == '/';)
        h->prefix[--k] = '\0';
    h->connect_to = curl_slist_append(NULL, h->connect);
    rc = h->prefix && h->connect_to ? 0 : -1;
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return rc;
}

static void blob(CURL *c, CURLoption opt, char *pem)
{
    struct curl_blob b = {pem, strlen(pem), CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, opt, &b);
}

ext_http *ext_http_new(const char *url_prefix, long timeout_ms, const ext_tls *tls, char *err,
                       size_t errlen)
{
    curl_global_init(CURL_GLOBAL_DEFAULT); /* counted; undone in ext_http_free */
    ext_http *h = calloc(1, sizeof *h);
    if (!h || !(h->prefix = strdup(url_prefix)) || !(h->curl = curl_easy_init())) {
        snprintf(err, errlen, "cannot set up an HTTP client");
        goto fail;
    }
    pthread_mutex_init(&h->mu, NULL);
    size_t n = strlen(h->prefix);
    while (n && h->prefix[n - 1] == '/')
        h->prefix[--n] = '\0';
    h->timeout_ms = timeout_ms;
    if (tls->server_name && tls->server_name[0] &&
        setup_server_name(h, tls->server_name, err, errlen) < 0)
        goto fail;
    h->headers = curl_slist_append(NULL, "Content-Type: application/json");
    h->ca_data = dup_or_null(tls->ca_data);
    h->cert_data = dup_or_null(tls->cert_data);
    h->key_data = dup_or_null(tls->key_data);
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    if (h->connect_to)
        curl_easy_setopt(c, CURLOPT_CONNECT_TO, h->connect_to);
    if (tls->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (tls->ca_file && tls->ca_file[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, tls->ca_file);
    if (h->ca_data)
        blob(c, CURLOPT_CAINFO_BLOB, h->ca_data);
    if (tls->cert_file && tls->cert_file[0])
        curl_easy_setopt(c, CURLOPT_SSLCERT, tls->cert_file);
    if (h->cert_data)
        blob(c, CURLOPT_SSLCERT_BLOB, h->cert_data);
    if (tls->key_file && tls->key_file[0])
        curl_easy_setopt(c, CURLOPT_SSLKEY, tls->key_file);
    if (h->key_data)
        blob(c, CURLOPT_SSLKEY_BLOB, h->key_data);
    return h;
fail:
    ext_http_free(h);
    return NULL;
}

void ext_http_free(ext_http *h)
{
    if (h) {
        if (h->curl) {
            curl_easy_cleanup(h->curl);
            pthread_mutex_destroy(&h->mu);
        }
        curl_slist_free_all(h->headers);
        curl_slist_free_all(h->connect_to);
        free(h->prefix);
        free(h->connect);
        free(h->ca_data);
        free(h->cert_data);
        free(h->key_data);
        free(h);
    }
    curl_global_cleanup();
}

int ext_http_post(ext_http *h, const char *verb, const char *body, size_t len, char **out,
                  size_t *out_len, char *err, size_t errlen)
{
    size_t ul = strlen(h->prefix) + strlen(verb) + 2;
    char *url = malloc(ul);
    reply r = {0};
    int rc = -1;
    *out = NULL;
    *out_len = 0;
    if (!url) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(url, ul, "%s/%s", h->prefix, verb);
    pthread_mutex_lock(&h->mu);
    CURL *c = h->curl;
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, NULL);
    pthread_mutex_unlock(&h->mu);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        snprintf(err, errlen, "POST %s: timed out after %ld ms (http_timeout_ms)", url,
                 h->timeout_ms);
    else if (r.too_large)
        snprintf(err, errlen, "POST %s: the answer is larger than %u bytes", url, REPLY_MAX);
    else if (cc != CURLE_OK)
        snprintf(err, errlen, "POST %s: %s", url, cerr[0] ? cerr : curl_easy_strerror(cc));
    else if (code != 200)
        snprintf(err, errlen, "failed %s with extender at URL %s, code %ld", verb, url, code);
    else
        rc = 0;
    free(url);
    if (rc == 0 && !r.s && !(r.s = calloc(1, 1))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc < 0) {
        free(r.s);
        return -1;
    }
    *out = r.s;
    *out_len = r.len;
    return 0;
}
