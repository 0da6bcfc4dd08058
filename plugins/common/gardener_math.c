/*
 * gardener_math.c - region distances and CIDR overlap for the Gardener
 * plugins.
 *
 * The region distance follows Gardener's MinimalDistance strategy to the
 * letter, including its quirks (an orientation is found anywhere in the
 * name, so "ap-southeast-1" counts as south). Addresses are parsed here
 * rather than with inet_pton so that the module needs nothing beyond C11 and
 * accepts exactly what a CIDR field may hold. See gardener_math.h.
 */
#include "gardener_math.h"

#include <string.h>

/* ---- region distance --------------------------------------------------- */

static const char *const orientations[] = {"north", "south", "east", "west", "central"};

int gm_region_split(const char *region, gm_orientation *orientation, char *base, size_t baselen)
{
    size_t n = strlen(region);

    *orientation = GM_ORIENT_NONE;
    for (size_t i = 0; i < sizeof(orientations) / sizeof(orientations[0]); i++) {
        const char *at = strstr(region, orientations[i]);
        size_t pre, olen, post;

        if (!at)
            continue;
        *orientation = (gm_orientation)i;
        pre = (size_t)(at - region);
        olen = strlen(orientations[i]);
        post = n - pre - olen;
        if (pre + 1 + post + 1 > baselen) {
            if (baselen)
                base[0] = '\0';
            return -1;
        }
        memcpy(base, region, pre);
        base[pre] = ':';
        memcpy(base + pre + 1, at + olen, post);
        base[pre + 1 + post] = '\0';
        return 0;
    }
    if (n + 1 > baselen) {
        if (baselen)
            base[0] = '\0';
        return -1;
    }
    memcpy(base, region, n + 1);
    return 0;
}

size_t gm_levenshtein(const char *a, const char *b)
{
    size_t row[GM_REGION_MAX + 1];
    size_t na = strlen(a), nb = strlen(b);

    /* the DP row runs over the shorter string */
    if (na > nb) {
        const char *t = a;
        size_t tn = na;

        a = b;
        na = nb;
        b = t;
        nb = tn;
    }
    if (na > GM_REGION_MAX)
        return SIZE_MAX;
    for (size_t i = 0; i <= na; i++)
        row[i] = i;
    for (size_t j = 1; j <= nb; j++) {
        size_t diag = row[0]; /* row[i-1] of the previous row */

        row[0] = j;
        for (size_t i = 1; i <= na; i++) {
            size_t up = row[i]; /* previous row, same column */
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);

            if (up + 1 < best)
                best = up + 1;
            if (row[i - 1] + 1 < best)
                best = row[i - 1] + 1;
            diag = up;
            row[i] = best;
        }
    }
    return row[na];
}

int64_t gm_split_distance(const char *base_a, gm_orientation orient_a, const char *base_b,
                          gm_orientation orient_b)
{
    size_t d = gm_levenshtein(base_a, base_b);
    int64_t correction;

    if (d == SIZE_MAX)
        return -1;
    if (orient_a == orient_b)
        correction = 0;
    else if (orient_a == GM_ORIENT_NONE || orient_b == GM_ORIENT_NONE)
        correction = 1;
    else
        correction = 2;
    return 2 * (int64_t)d + correction;
}

int64_t gm_region_distance(const char *a, const char *b)
{
    char base_a[GM_REGION_MAX + 2], base_b[GM_REGION_MAX + 2];
    gm_orientation oa, ob;

    if (strlen(a) > GM_REGION_MAX || strlen(b) > GM_REGION_MAX)
        return -1;
    if (gm_region_split(a, &oa, base_a, sizeof(base_a)) < 0 ||
        gm_region_split(b, &ob, base_b, sizeof(base_b)) < 0)
        return -1;
    return gm_split_distance(base_a, oa, base_b, ob);
}

/* ---- networks ---------------------------------------------------------- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Dotted quad s[0..n) into out[0..4). Octets have no leading zeros, which
 * some parsers would read as octal. */
static int parse_ipv4(const char *s, size_t n, unsigned char *out)
{
    size_t i = 0;

    for (int part = 0; part < 4; part++) {
        unsigned v = 0;
        size_t start = i;

        if (part > 0) {
            if (i >= n || s[i] != '.')
                return -1;
            start = ++i;
        }
        while (i < n && is_digit(s[i]) && i - start < 3)
            v = v * 10 + (unsigned)(s[i++] - '0');
        if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
            return -1;
        out[part] = (unsigned char)v;
    }
    return i == n ? 0 : -1;
}

/* RFC 4291 text form s[0..n) into out[0..16): hex groups, at most one
 * "::" standing for one or more zero groups, optionally a dotted IPv4
 * tail. */
static int parse_ipv6(const char *s, size_t n, unsigned char *out)
{
    unsigned char groups[16];
    int ng = 0;   /* 16-bit groups read */
    int gap = -1; /* group index where "::" stands */
    size_t i = 0;

    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    } else if (n >= 1 && s[0] == ':') {
        return -1;
    }
    while (i < n) {
        size_t j = i;
        unsigned v = 0;

        while (j < n && s[j] != ':')
            j++;
        if (memchr(s + i, '.', j - i)) {
            /* IPv4 tail: the last 32 bits */
            if (j != n || ng > 6 || parse_ipv4(s + i, j - i, groups + 2 * ng) < 0)
                return -1;
            ng += 2;
            break;
        }
        if (j == i || j - i > 4 || ng >= 8)
            return -1;
        for (size_t k = i; k < j; k++) {
            int h = hex_value(s[k]);

            if (h < 0)
                return -1;
            v = v * 16 + (unsigned)h;
        }
        groups[2 * ng] = (unsigned char)(v >> 8);
        groups[2 * ng + 1] = (unsigned char)(v & 0xff);
        ng++;
        if (j == n)
            break;
        if (j + 1 < n && s[j + 1] == ':') {
            if (gap >= 0)
                return -1;
            gap = ng;
            i = j + 2;
        } else {
            i = j + 1;
            if (i == n)
                return -1; /* a trailing single colon */
        }
    }
    if (gap < 0) {
        if (ng != 8)
            return -1;
        memcpy(out, groups, 16);
        return 0;
    }
    if (ng > 7)
        return -1;
    memset(out, 0, 16);
    memcpy(out, groups, (size_t)gap * 2);
    memcpy(out + 16 - (size_t)(ng - gap) * 2, groups + gap * 2, (size_t)(ng - gap) * 2);
    return 0;
}

int gm_cidr_parse(const char *text, gm_cidr *out)
{
    const char *slash = strchr(text, '/');
    size_t alen;
    int bits = 0, max;
    const char *p;

    memset(out, 0, sizeof(*out));
    if (!slash || slash == text)
        return -1;
    alen = (size_t)(slash - text);
    if (memchr(text, ':', alen)) {
        if (parse_ipv6(text, alen, out->addr) < 0)
            return -1;
        out->family = 6;
        max = 128;
    } else {
        if (parse_ipv4(text, alen, out->addr) < 0)
            return -1;
        out->family = 4;
        max = 32;
    }
    p = slash + 1;
    if (!is_digit(*p))
        return -1;
    for (; is_digit(*p); p++) {
        bits = bits * 10 + (*p - '0');
        if (bits > max)
            return -1;
    }
    if (*p != '\0')
        return -1;
    out->bits = bits;
    /* clear the host bits */
    for (int b = bits; b < max; b++)
        out->addr[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
    return 0;
}

int gm_cidr_overlap(const gm_cidr *a, const gm_cidr *b)
{
    int bits = a->bits < b->bits ? a->bits : b->bits;
    int whole = bits / 8, rest = bits % 8;

    if (a->family != b->family)
        return 0;
    if (memcmp(a->addr, b->addr, (size_t)whole) != 0)
        return 0;
    if (rest) {
        unsigned char mask = (unsigned char)(0xffu << (8 - rest));

        if ((a->addr[whole] & mask) != (b->addr[whole] & mask))
            return 0;
    }
    return 1;
}

void gm_net_from_cidr(const gm_cidr *c, gm_net *out)
{
    out->hi = out->lo = 0;
    for (int i = 0; i < 8; i++) {
        out->hi = out->hi << 8 | c->addr[i];
        out->lo = out->lo << 8 | c->addr[8 + i];
    }
    out->family = c->family;
    out->bits = c->bits;
}
