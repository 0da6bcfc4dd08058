/*
 * gardener_math.h - the arithmetic of the Gardener plugins, free of the host.
 *
 * Two things Gardener's scheduler computes are plain functions of strings:
 * the MinimalDistance region distance (a Levenshtein distance over region
 * base names plus an orientation and provider correction) and the
 * disjointness of shoot and seed networks (CIDR overlap for IPv4 and IPv6).
 * They live here, without any trellis_host, so gardener-region and
 * gardener-networks share one implementation that a unit test can drive
 * directly. Nothing here allocates: every function may run in a filter or
 * score hook on a worker thread. A CIDR parsed once (gm_cidr) converts to
 * a gm_net, whose overlap test is a few integer operations.
 */
#ifndef TRELLIS_PLUGINS_GARDENER_MATH_H
#define TRELLIS_PLUGINS_GARDENER_MATH_H

#include <stddef.h>
#include <stdint.h>

/* ---- region distance --------------------------------------------------- */

/* The longest string gm_levenshtein works on (the shorter of its two
 * arguments must not be longer): its one DP row lives on the stack. */
#define GM_REGION_MAX 255

/* Orientations in the order Gardener looks for them: the first of these
 * that occurs anywhere in a region name is its orientation. */
typedef enum gm_orientation {
    GM_ORIENT_NONE = -1,
    GM_NORTH = 0,
    GM_SOUTH,
    GM_EAST,
    GM_WEST,
    GM_CENTRAL
} gm_orientation;

/* Split a region name into its orientation and its base name: the name with
 * the first occurrence of that orientation replaced by ":" ("ap-southeast-1"
 * -> GM_SOUTH, "ap-:east-1"); without an orientation the base is the name.
 * base must hold strlen(region) + 1 bytes. 0, or -1 (base truncated) when
 * it does not. */
int gm_region_split(const char *region, gm_orientation *orientation, char *base, size_t baselen);

/* Levenshtein distance (insert, delete, substitute each cost 1). SIZE_MAX
 * when both strings are longer than GM_REGION_MAX. */
size_t gm_levenshtein(const char *a, const char *b);

/* Gardener's MinimalDistance formula over split names, without the provider
 * term: 2 * Levenshtein(base_a, base_b) plus 0 when both orientations are
 * equal (both absent included), 1 when exactly one is absent, 2 when they
 * differ. -1 when the bases are too long (see gm_levenshtein). */
int64_t gm_split_distance(const char *base_a, gm_orientation orient_a, const char *base_b,
                          gm_orientation orient_b);

/* gm_split_distance of two whole region names: distance("eu-west-1",
 * "eu-central-1") is 2, distance("eu-west-1", "us-east-1") is 6. -1 when a
 * name is longer than GM_REGION_MAX. */
int64_t gm_region_distance(const char *a, const char *b);

/* ---- networks ---------------------------------------------------------- */

/* A parsed CIDR, its address masked to the prefix. */
typedef struct gm_cidr {
    int family;             /* 4 or 6 */
    unsigned char addr[16]; /* network byte order; IPv4 uses addr[0..3] */
    int bits;               /* prefix length */
} gm_cidr;

/* Parse "10.250.0.0/16" or "2001:db8::/32" (dotted IPv4 tails such as
 * "::ffff:10.0.0.0/104" included). Host bits are allowed and cleared, as
 * Go's net.ParseCIDR does. 0, or -1 when text is not a CIDR. */
int gm_cidr_parse(const char *text, gm_cidr *out);

/* Whether two CIDRs share an address: same family and equal on the shorter
 * of the two prefixes (one contains the other). */
int gm_cidr_overlap(const gm_cidr *a, const gm_cidr *b);

/* A parsed CIDR as integers, for overlap tests in filter loops: the
 * address left-aligned in 128 bits (hi holds the first 8 bytes; IPv4 uses
 * the top 32 bits of hi), host bits clear. */
typedef struct gm_net {
    uint64_t hi, lo;
    int family; /* 4 or 6 */
    int bits;   /* prefix length */
} gm_net;

/* c as a gm_net. */
void gm_net_from_cidr(const gm_cidr *c, gm_net *out);

/* gm_cidr_overlap over gm_nets: a few integer operations. */
static inline int gm_net_overlap(const gm_net *a, const gm_net *b)
{
    int m = a->bits < b->bits ? a->bits : b->bits;

    if (a->family != b->family)
        return 0;
    if (m == 0)
        return 1;
    if (m <= 64)
        return ((a->hi ^ b->hi) >> (64 - m)) == 0;
    return a->hi == b->hi && ((a->lo ^ b->lo) >> (128 - m)) == 0;
}

#endif
