/*
 * fmt.h - vsnprintf for the messages a scheduling cycle writes.
 *
 * A plugin's decision notes and rejection messages are formatted in every
 * cycle (openMCP's strategy notes each choice); the C library's vsnprintf
 * goes through its stream machinery and costs a few thousand instructions
 * a call. fmt_v writes the plain conversions itself: %s, %c and %%, and
 * %d, %i and %u with or without the length modifier l, ll or z, none with
 * flags, width or precision. Any other conversion hands the whole format
 * to vsnprintf. The result is vsnprintf's, byte for byte, return value
 * included (a NULL %s argument prints "(null)", as glibc does; a text
 * longer than INT_MAX gives -1 with errno EOVERFLOW).
 */
#ifndef TRELLIS_FMT_H
#define TRELLIS_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* vsnprintf(buf, len, fmt, ap): at most len - 1 bytes and a NUL (nothing
 * when len is 0); returns the length the whole text has, or -1 on an
 * encoding error of the fallback. ap is consumed, as vsnprintf does. */
int fmt_v(char *buf, size_t len, const char *fmt, va_list ap);

#if defined(__GNUC__)
#define FMT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FMT_PRINTF(a, b)
#endif

/* snprintf(buf, len, fmt, ...), through fmt_v. */
int fmt_s(char *buf, size_t len, const char *fmt, ...) FMT_PRINTF(3, 4);

#endif
