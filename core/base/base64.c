/*
 * base64.c - see base64.h.
 */
#include "config.h"

#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

#include "util.h"

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const char *bytes, size_t n)
{
    const unsigned char *p = (const unsigned char *)bytes;
    char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = b64chars[v >> 18];
        *o++ = b64chars[(v >> 12) & 63];
        *o++ = b64chars[(v >> 6) & 63];
        *o++ = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = b64chars[v >> 18];
        *o++ = b64chars[(v >> 12) & 63];
        *o++ = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int b64val(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

char *base64_decode(const char *text, size_t len, size_t *n)
{
    while (len && text[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return NULL;
    char *out = xmalloc(len / 4 * 3 + 3), *o = out;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64val((unsigned char)text[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (char)((acc >> bits) & 0xff);
        }
    }
    *o = '\0';
    *n = (size_t)(o - out);
    return out;
}
