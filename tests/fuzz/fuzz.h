/*
 * fuzz.h - what every libFuzzer target here shares: the entry point's
 * prototype, a NUL-terminated copy of the input (the readers take text as
 * the file loader hands it over, terminated) and an assertion that stays
 * on in every build, so that a broken property is a crash libFuzzer
 * records with its input.
 */
#ifndef TRELLIS_FUZZ_H
#define TRELLIS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0..size) and a terminating NUL in a new allocation, exactly
 * size + 1 bytes so that ASan sees any read past the end. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);

    if (!t)
        abort();
    if (size)
        memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

/* head (a document's first lines, ending in "spec:\n") and the input
 * indented under it, so that the input becomes the value of spec (a
 * document marker in it is then text of the value, not a new document).
 * *len gets the text's length. */
static inline char *fuzz_under_spec(const char *head, const uint8_t *data, size_t size, size_t *len)
{
    size_t hlen = strlen(head);
    char *t = malloc(hlen + 3 * size + 3), *p = t;

    if (!t)
        abort();
    memcpy(p, head, hlen);
    p += hlen;
    *p++ = ' ';
    *p++ = ' ';
    for (size_t i = 0; i < size; i++) {
        *p++ = (char)data[i];
        if (data[i] == '\n') {
            *p++ = ' ';
            *p++ = ' ';
        }
    }
    *p = '\0';
    *len = (size_t)(p - t);
    return t;
}

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
