/*
 * util.h - small helpers shared by every core module: error buffers that
 * each layer prefixes with its context, checked allocation, growable
 * arrays and string builders, file reading, monotonic time.
 */
#ifndef TRELLIS_UTIL_H
#define TRELLIS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define UTIL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define UTIL_PRINTF(a, b)
#endif

/* Write a message into err (may be NULL); returns -1 so callers can
 * `return errf(err, len, "...")`. */
int errf(char *err, size_t errlen, const char *fmt, ...) UTIL_PRINTF(3, 4);
/* Prefix the message already in err with "context: ". Returns -1. */
int errprefix(char *err, size_t errlen, const char *fmt, ...) UTIL_PRINTF(3, 4);

/* Allocation that aborts on exhaustion (a scheduler without memory cannot
 * make a safe decision). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) UTIL_PRINTF(1, 2);

/* Grow *p (of element size `size`) so that it holds at least `need`
 * elements; *cap is updated. */
void grow(void *pp, size_t *cap, size_t need, size_t size);

/* A growable byte buffer, always NUL-terminated. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;
void sb_init(strbuf *b);
void sb_free(strbuf *b);
void sb_add(strbuf *b, const char *s, size_t n);
/* Make room for n more bytes at once (one allocation, no doubling past
 * what is known to come). */
void sb_reserve(strbuf *b, size_t n);
void sb_puts(strbuf *b, const char *s);
void sb_printf(strbuf *b, const char *fmt, ...) UTIL_PRINTF(2, 3);
/* Detach the string (ownership transfers to the caller). */
char *sb_steal(strbuf *b);

/* Read a whole file (NUL-terminated, *len without the NUL). NULL with err
 * filled on failure. Ownership of the result transfers to the caller. */
char *read_file(const char *path, size_t *len, char *err, size_t errlen);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/* 1 when s ends with suffix. */
int str_endswith(const char *s, const char *suffix);

/* 1 when the absolute path is root or below it (both without "..",
 * links resolved, as realpath gives them). */
int path_within(const char *root, const char *path);

#endif
