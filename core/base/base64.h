/*
 * base64.h - base64 (RFC 4648, the standard alphabet; decoding also takes
 * the URL-safe one and text without padding): etcd's gateway carries keys
 * and values in it, kubeconfig files certificates and keys.
 */
#ifndef TRELLIS_BASE64_H
#define TRELLIS_BASE64_H

#include <stddef.h>

/* base64 of bytes as a new string (ownership transfers). */
char *base64_encode(const char *bytes, size_t n);
/* The bytes of a base64 text, NUL-terminated (*n excludes the NUL), or
 * NULL when it is not base64. Ownership transfers. */
char *base64_decode(const char *text, size_t len, size_t *n);

#endif
