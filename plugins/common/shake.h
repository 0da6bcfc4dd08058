/*
 * shake.h - SHAKE128 (FIPS 202) and RFC 4648 base32, for names that must
 * come out exactly as another program derives them.
 *
 * openMCP names a Cluster it creates for a request by the lowercase,
 * unpadded base32 of the first 5 bytes of SHAKE128("<namespace>/<name>");
 * trellis must produce the very same name, so the hash is implemented here
 * (the SDK stays libc-only) and tested against the published vectors.
 */
#ifndef TRELLIS_PLUGINS_SHAKE_H
#define TRELLIS_PLUGINS_SHAKE_H

#include <stddef.h>
#include <stdint.h>

/* The first outlen bytes of SHAKE128 of in[0..inlen). */
void shake128(const void *in, size_t inlen, uint8_t *out, size_t outlen);

/* Base32 of in[0..n) with the alphabet abcdefghijklmnopqrstuvwxyz234567 and
 * no padding, NUL-terminated into out (8 characters per 5 bytes; out holds
 * at least (n * 8 + 4) / 5 + 1 bytes). */
void base32_lower(const uint8_t *in, size_t n, char *out);

#endif
