/*
 * httpc.c - see httpc.h.
 */
#include "config.h"

#include "httpc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct httpc {
    char *ca_file, *cert_file, *key_file;
    char *ca_pem, *cert_pem, *key_pem;
    int insecure;
    uint32_t timeout_ms;
    struct curl_slist *headers;
    int n_conns;
    struct conn {
        pthread_mutex_t mu;
        CURL *h;
    } conns[HTTPC_MAX_CONNS];
    atomic_uint next_conn;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

httpc *httpc_new(const httpc_opts *o, char *err, size_t errlen)
{
    pthread_once(&curl_once, curl_init);
    httpc *c = xcalloc(1, sizeof *c);
    c->ca_file = dup_or_null(o->ca_file);
    c->cert_file = dup_or_null(o->cert_file);
    c->key_file = dup_or_null(o->key_file);
    c->ca_pem = dup_or_null(o->ca_pem);
    c->cert_pem = dup_or_null(o->cert_pem);
    c->key_pem = dup_or_null(o->key_pem);
    c->insecure = o->insecure;
    c->timeout_ms = o->timeout_ms ? o->timeout_ms : 5000;
    int ok = 1;
    for (const char *const *h = o->headers; h && *h; h++) {
        struct curl_slist *n = curl_slist_append(c->headers, *h);
        ok &= n != NULL;
        if (n)
            c->headers = n;
    }
    c->n_conns = o->conns <= 0 ? 4 : o->conns > HTTPC_MAX_CONNS ? HTTPC_MAX_CONNS : o->conns;
    for (int i = 0; i < c->n_conns; i++) {
        pthread_mutex_init(&c->conns[i].mu, NULL);
        c->conns[i].h = curl_easy_init();
        ok &= c->conns[i].h != NULL;
    }
    if (!ok) {
        httpc_free(c);
        errf(err, errlen, "cannot start libcurl");
        return NULL;
    }
    return c;
}

void httpc_free(httpc *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_conns; i++) {
        if (c->conns[i].h)
            curl_easy_cleanup(c->conns[i].h);
        pthread_mutex_destroy(&c->conns[i].mu);
    }
    curl_slist_free_all(c->headers);
    free(c->ca_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    free(c);
}

uint32_t httpc_timeout_ms(const httpc *c)
{
    return c->timeout_ms;
}

/* What one reply, or one line of a stream, may hold: a server that sends
 * more is cut off rather than let the host's memory grow without end. */
#define MAX_BODY ((size_t)1 << 30)
#define MAX_LINE ((size_t)256 << 20)

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    strbuf *b = ud;
    if (b->len + size * n > MAX_BODY)
        return 0; /* curl ends the transfer with a write error */
    sb_add(b, p, size * n);
    return size * n;
}

static void blob(CURL *h, CURLoption opt, const char *pem)
{
    struct curl_blob b = {(void *)pem, strlen(pem), CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &b);
}

/* The options every request and stream shares. hdrs: the client's
 * headers and the content type. */
static void setup(httpc *c, CURL *h, const char *method, const char *url, const char *body,
                  struct curl_slist *hdrs)
{
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(c->timeout_ms < 2000 ? c->timeout_ms : 2000));
    if (c->ca_pem)
        blob(h, CURLOPT_CAINFO_BLOB, c->ca_pem);
    else if (c->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->cert_pem)
        blob(h, CURLOPT_SSLCERT_BLOB, c->cert_pem);
    else if (c->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
    if (c->key_pem)
        blob(h, CURLOPT_SSLKEY_BLOB, c->key_pem);
    else if (c->key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

/* The client's headers and a Content-Type (a new list). */
static struct curl_slist *headers_for(const httpc *c, const char *body, const char *content_type)
{
    struct curl_slist *l = NULL, *n;
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        if ((n = curl_slist_append(l, h->data)))
            l = n;
    if (body) {
        char ct[160];
        snprintf(ct, sizeof ct, "Content-Type: %s",
                 content_type ? content_type : "application/json");
        if ((n = curl_slist_append(l, ct)))
            l = n;
    }
    if ((n = curl_slist_append(l, "Accept: application/json")))
        l = n;
    return l;
}

/* Whether curl failed before the request could reach the server. */
static int not_sent(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
           rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
           rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CACERT_BADFILE;
}

int httpc_request(httpc *c, const char *method, const char *url, const char *body,
                  const char *content_type, long *status, strbuf *out, char *err, size_t errlen)
{
    /* a free connection, else the next one in turn */
    struct conn *cn = NULL;
    for (int i = 0; i < c->n_conns && !cn; i++)
        if (pthread_mutex_trylock(&c->conns[i].mu) == 0)
            cn = &c->conns[i];
    if (!cn) {
        cn = &c->conns[atomic_fetch_add(&c->next_conn, 1) % (unsigned)c->n_conns];
        pthread_mutex_lock(&cn->mu);
    }
    CURL *h = cn->h;
    struct curl_slist *hdrs = headers_for(c, body, content_type);
    curl_easy_reset(h);
    setup(c, h, method, url, body, hdrs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    pthread_mutex_unlock(&cn->mu);
    curl_slist_free_all(hdrs);
    sb_add(out, "", 0);
    if (rc == CURLE_OK)
        return HTTPC_ANSWERED;
    errf(err, errlen, "%s", curl_easy_strerror(rc));
    return not_sent(rc) ? HTTPC_NOT_SENT : HTTPC_FAILED;
}

typedef struct stream_ctx {
    CURL *h;
    long code;      /* the reply's status, once its headers are in */
    strbuf refusal; /* a reply that is not 2xx: its body (not lines), bounded */
    strbuf buf;
    httpc_line_fn line;
    void *ud;
    int ended;    /* line asked to stop */
    int too_long; /* a line passed MAX_LINE */
    atomic_int *stop;
} stream_ctx;

static size_t on_stream(char *p, size_t size, size_t n, void *ud)
{
    stream_ctx *sc = ud;
    if (!sc->code)
        curl_easy_getinfo(sc->h, CURLINFO_RESPONSE_CODE, &sc->code);
    if (sc->code >= 300) {
        /* a Status or an error page, not a stream of messages */
        if (sc->refusal.len < 4096)
            sb_add(&sc->refusal, p, size * n < 4096 ? size * n : 4096);
        return size * n;
    }
    if (sc->buf.len + size * n > MAX_LINE) {
        sc->too_long = 1;
        return 0;
    }
    sb_add(&sc->buf, p, size * n);
    size_t start = 0;
    for (size_t i = 0; i < sc->buf.len && !sc->ended; i++) {
        if (sc->buf.s[i] != '\n')
            continue;
        if (i > start && sc->line(sc->ud, sc->buf.s + start, i - start))
            sc->ended = 1;
        start = i + 1;
    }
    memmove(sc->buf.s, sc->buf.s + start, sc->buf.len - start);
    sc->buf.len -= start;
    return sc->ended ? 0 : size * n; /* 0 ends the transfer */
}

/* What a refused stream's reply says: a Status's (or an etcd error's)
 * message, else its first line; "no reply body" when empty. */
static const char *refusal_text(strbuf *b)
{
    sb_add(b, "", 0);
    char *m = b->len ? strstr(b->s, "\"message\"") : NULL;
    if (m && (m = strchr(m + 9, '"'))) {
        m++;
        size_t n = 0;
        while (m[n] && m[n] != '"' && !(m[n] == '\\' && m[n + 1]))
            n++;
        memmove(b->s, m, n);
        b->s[n] = '\0';
        b->len = n;
    } else if (b->len) {
        b->s[strcspn(b->s, "\r\n")] = '\0';
    }
    return b->len && b->s[0] ? b->s : "no reply body";
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    stream_ctx *sc = ud;
    return atomic_load(sc->stop) ? 1 : 0;
}

int httpc_stream(httpc *c, const char *method, const char *url, const char *body, uint32_t idle_ms,
                 atomic_int *stop, httpc_line_fn line, void *ud, long *status, char *err,
                 size_t errlen)
{
    CURL *h = curl_easy_init();
    *status = 0;
    if (!h)
        return errf(err, errlen, "cannot start libcurl");
    stream_ctx sc = {.h = h, .line = line, .ud = ud, .stop = stop};
    sb_init(&sc.buf);
    sb_init(&sc.refusal);
    struct curl_slist *hdrs = headers_for(c, body, NULL);
    setup(c, h, method, url, body, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sc);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &sc);
    /* a server that stops (SIGSTOP, a cut network) sends nothing: drop it */
    long idle_s = (long)((idle_ms + 999) / 1000);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, idle_s > 0 ? idle_s : 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    int result;
    if (sc.too_long) {
        result = errf(err, errlen, "a line of the stream is longer than %zu MiB: cut off",
                      MAX_LINE >> 20);
    } else if (sc.ended || atomic_load(stop)) {
        result = 0;
    } else if (*status >= 300) {
        result = errf(err, errlen, "HTTP %ld: %s", *status, refusal_text(&sc.refusal));
    } else if (rc != CURLE_OK) {
        result = errf(err, errlen, "%s", curl_easy_strerror(rc));
    } else {
        /* the server ended the stream: what it said last, if anything */
        if (sc.buf.len)
            line(ud, sc.buf.s, sc.buf.len);
        result = 1;
    }
    sb_free(&sc.buf);
    sb_free(&sc.refusal);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return result;
}
