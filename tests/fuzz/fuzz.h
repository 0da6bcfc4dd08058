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
