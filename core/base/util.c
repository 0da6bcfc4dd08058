/*
 * util.c - see util.h.
 */
#include "config.h"

#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fmt.h"

int errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int errprefix(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return -1;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t pl = strlen(prefix);
    size_t ml = strlen(err);
    if (pl + 2 >= errlen)
        return -1;
    if (pl + 2 + ml >= errlen)
        ml = errlen - pl - 3;
    memmove(err + pl + 2, err, ml);
    err[pl + 2 + ml] = '\0';
    memcpy(err, prefix, pl);
    err[pl] = ':';
    err[pl + 1] = ' ';
    return -1;
}

static void oom(void)
{
    fputs("trellis: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        oom();
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    char tmp[256]; /* one pass when it fits */
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_v(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom();
    char *s = xmalloc((size_t)n + 1);
    if ((size_t)n < sizeof tmp) {
        memcpy(s, tmp, (size_t)n + 1);
        return s;
    }
    va_start(ap, fmt);
    fmt_v(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void grow(void *pp, size_t *cap, size_t need, size_t size)
{
    void **p = pp;
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    *p = xrealloc(*p, c * size);
    *cap = c;
}

void sb_init(strbuf *b)
{
    b->s = NULL;
    b->len = b->cap = 0;
}

void sb_free(strbuf *b)
{
    free(b->s);
    sb_init(b);
}

void sb_reserve(strbuf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = b->len + n + 1;
        b->s = xrealloc(b->s, b->cap);
        b->s[b->len] = '\0';
    }
}

void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->len + n + 1)
            c *= 2;
        b->s = xrealloc(b->s, c);
        b->cap = c;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_puts(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_v(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        sb_add(b, tmp, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    fmt_v(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

char *sb_steal(strbuf *b)
{
    char *s = b->s ? b->s : xstrdup("");
    sb_init(b);
    return s;
}

char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    strbuf b;
    sb_init(&b);
    /* a regular file is read into a buffer of its size (doubling would
     * leave up to half of a big file's buffer unused); the loop still
     * takes whatever the file holds by then */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        sb_reserve(&b, (size_t)st.st_size);
    char chunk[65536];
    for (;;) {
        size_t n;
        if (b.cap > b.len + 1) {
            n = fread(b.s + b.len, 1, b.cap - b.len - 1, f);
            b.len += n;
            b.s[b.len] = '\0';
        } else {
            n = fread(chunk, 1, sizeof chunk, f);
            sb_add(&b, chunk, n);
        }
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        errf(err, errlen, "%s: read error: %s", path, strerror(errno));
        fclose(f);
        sb_free(&b);
        return NULL;
    }
    fclose(f);
    if (len)
        *len = b.len;
    return sb_steal(&b);
}

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int str_endswith(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int path_within(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 0 && root[n - 1] == '/')
        n--; /* "/" itself: every absolute path is below it */
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
