/*
 * shake.c - see shake.h. Keccak-f[1600] as FIPS 202 specifies it. A name
 * is hashed once per created object (openMCP's Clusters: a tenth of the
 * requests in its benchmark), so the rounds are written out: the loop form
 * with its tables took nearly four times as many instructions.
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

#define ROL(x, n) (((x) << (n)) | ((x) >> (64 - (n))))

/* Keccak-f[1600], a round in straight lines: theta's column parities and
 * their effects d0..d4, rho and pi together (lane x + 5y, rotated by its
 * offset, goes to y + 5 * ((2x + 3y) mod 5)), chi row by row, iota. */
static void keccak_f(uint64_t a[25])
{
    for (int r = 0; r < 24; r++) {
        uint64_t c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
        uint64_t c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
        uint64_t c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
        uint64_t c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
        uint64_t c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
        uint64_t d0 = c4 ^ ROL(c1, 1), d1 = c0 ^ ROL(c2, 1), d2 = c1 ^ ROL(c3, 1);
        uint64_t d3 = c2 ^ ROL(c4, 1), d4 = c3 ^ ROL(c0, 1);
        uint64_t b[25];
        b[0] = a[0] ^ d0;
        b[1] = ROL(a[6] ^ d1, 44);
        b[2] = ROL(a[12] ^ d2, 43);
        b[3] = ROL(a[18] ^ d3, 21);
        b[4] = ROL(a[24] ^ d4, 14);
        b[5] = ROL(a[3] ^ d3, 28);
        b[6] = ROL(a[9] ^ d4, 20);
        b[7] = ROL(a[10] ^ d0, 3);
        b[8] = ROL(a[16] ^ d1, 45);
        b[9] = ROL(a[22] ^ d2, 61);
        b[10] = ROL(a[1] ^ d1, 1);
        b[11] = ROL(a[7] ^ d2, 6);
        b[12] = ROL(a[13] ^ d3, 25);
        b[13] = ROL(a[19] ^ d4, 8);
        b[14] = ROL(a[20] ^ d0, 18);
        b[15] = ROL(a[4] ^ d4, 27);
        b[16] = ROL(a[5] ^ d0, 36);
        b[17] = ROL(a[11] ^ d1, 10);
        b[18] = ROL(a[17] ^ d2, 15);
        b[19] = ROL(a[23] ^ d3, 56);
        b[20] = ROL(a[2] ^ d2, 62);
        b[21] = ROL(a[8] ^ d3, 55);
        b[22] = ROL(a[14] ^ d4, 39);
        b[23] = ROL(a[15] ^ d0, 41);
        b[24] = ROL(a[21] ^ d1, 2);
        for (int y = 0; y < 25; y += 5) {
            a[y] = b[y] ^ (~b[y + 1] & b[y + 2]);
            a[y + 1] = b[y + 1] ^ (~b[y + 2] & b[y + 3]);
            a[y + 2] = b[y + 2] ^ (~b[y + 3] & b[y + 4]);
            a[y + 3] = b[y + 3] ^ (~b[y + 4] & b[y]);
            a[y + 4] = b[y + 4] ^ (~b[y] & b[y + 1]);
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
