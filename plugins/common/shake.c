/*
 * shake.c - see shake.h. Keccak-f[1600] as FIPS 202 specifies it, in its
 * plain form: the names it hashes are short and hashed once per created
 * object, never in a hot loop.
 */
#include "shake.h"

#include <string.h>

static const uint64_t round_consts[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

/* rho offsets and pi positions, in the order of the lane walk */
static const unsigned rho[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                                 27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
static const unsigned pi[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                                15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

static uint64_t rotl(uint64_t x, unsigned n)
{
    return (x << n) | (x >> (64 - n));
}

static void keccak_f(uint64_t a[25])
{
    for (int r = 0; r < 24; r++) {
        uint64_t c[5];
        for (int x = 0; x < 5; x++)
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (int x = 0; x < 5; x++) {
            uint64_t d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
            for (int y = 0; y < 25; y += 5)
                a[y + x] ^= d;
        }
        uint64_t t = a[1];
        for (int i = 0; i < 24; i++) {
            uint64_t u = a[pi[i]];
            a[pi[i]] = rotl(t, rho[i]);
            t = u;
        }
        for (int y = 0; y < 25; y += 5) {
            uint64_t row[5];
            for (int x = 0; x < 5; x++)
                row[x] = a[y + x];
            for (int x = 0; x < 5; x++)
                a[y + x] = row[x] ^ (~row[(x + 1) % 5] & row[(x + 2) % 5]);
        }
        a[0] ^= round_consts[r];
    }
}

/* XOR byte b into the state at byte offset i (lanes are little-endian). */
static void xor_byte(uint64_t a[25], size_t i, uint8_t b)
{
    a[i / 8] ^= (uint64_t)b << (8 * (i % 8));
}

void shake128(const void *in, size_t inlen, uint8_t *out, size_t outlen)
{
    enum { RATE = 168 };
    uint64_t a[25];
    memset(a, 0, sizeof a);
    const uint8_t *p = in;
    size_t pos = 0;
    for (size_t i = 0; i < inlen; i++) {
        xor_byte(a, pos++, p[i]);
        if (pos == RATE) {
            keccak_f(a);
            pos = 0;
        }
    }
    xor_byte(a, pos, 0x1f); /* SHAKE's domain bits and the first pad bit */
    xor_byte(a, RATE - 1, 0x80);
    keccak_f(a);
    for (size_t o = 0, k = 0; o < outlen; o++, k++) {
        if (k == RATE) {
            keccak_f(a);
            k = 0;
        }
        out[o] = (uint8_t)(a[k / 8] >> (8 * (k % 8)));
    }
}

void base32_lower(const uint8_t *in, size_t n, char *out)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | in[i];
        bits += 8;
        while (bits >= 5) {
            out[o++] = alphabet[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out[o++] = alphabet[(acc << (5 - bits)) & 31];
    out[o] = '\0';
}
