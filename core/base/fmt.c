/*
 * fmt.c - see fmt.h.
 */
#include "config.h"

#include "fmt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The output so far: n counts every byte, those past the room too. */
typedef struct out {
    char *buf;
    size_t len, n;
} out;

static void put(out *o, const char *s, size_t k)
{
    if (o->n + 1 < o->len) {
        size_t room = o->len - 1 - o->n;
        memcpy(o->buf + o->n, s, k < room ? k : room);
    }
    o->n += k;
}

static void put_num(out *o, unsigned long long v, int neg)
{
    char d[24];
    size_t i = sizeof d;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg)
        d[--i] = '-';
    put(o, d + i, sizeof d - i);
}

int fmt_v(char *buf, size_t len, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    out o = {buf, len, 0};
    const char *p = fmt;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            put(&o, p, strlen(p));
            break;
        }
        put(&o, p, (size_t)(pct - p));
        p = pct + 1;
        int lmod = 0; /* 1: l, 2: ll, 3: z */
        if (p[0] == 'l' && p[1] == 'l') {
            lmod = 2;
            p += 2;
        } else if (p[0] == 'l') {
            lmod = 1;
            p++;
        } else if (p[0] == 'z') {
            lmod = 3;
            p++;
        }
        char conv = *p++;
        if (conv == '%' && !lmod) {
            put(&o, "%", 1);
        } else if (conv == 's' && !lmod) {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            put(&o, s, strlen(s));
        } else if (conv == 'c' && !lmod) {
            char ch = (char)va_arg(ap, int);
            put(&o, &ch, 1);
        } else if (conv == 'd' || conv == 'i') {
            long long v = lmod == 2   ? va_arg(ap, long long)
                          : lmod == 1 ? va_arg(ap, long)
                          : lmod == 3 ? (long long)(ptrdiff_t)va_arg(ap, size_t) /* %zd */
                                      : va_arg(ap, int);
            put_num(&o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
        } else if (conv == 'u') {
            unsigned long long v = lmod == 2   ? va_arg(ap, unsigned long long)
                                   : lmod == 1 ? va_arg(ap, unsigned long)
                                   : lmod == 3 ? va_arg(ap, size_t)
                                               : va_arg(ap, unsigned);
            put_num(&o, v, 0);
        } else {
            /* flags, width, precision or another conversion: the C
             * library's, from the start */
            int r = vsnprintf(buf, len, fmt, again);
            va_end(again);
            return r;
        }
    }
    va_end(again);
    if (len)
        buf[o.n < len ? o.n : len - 1] = '\0';
    if (o.n > INT_MAX) { /* vsnprintf's answer to a text an int cannot count */
        errno = EOVERFLOW;
        return -1;
    }
    return (int)o.n;
}

int fmt_s(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_v(buf, len, fmt, ap);
    va_end(ap);
    return n;
}
