/*
 * fuzz_cidr.c - CIDR parsing and overlap as gardener-networks does them
 * (gardener_math.c).
 *
 * The input is one CIDR, or two separated by a newline. A CIDR the parser
 * takes must be an address inet_pton(3) takes followed by a decimal prefix
 * within the family's bits, with the host bits cleared; an address
 * inet_pton takes with such a prefix must be taken. The formatted result
 * parses back to the same value, overlap is symmetric, and the integer
 * form (gm_net) agrees with the byte form. The plugin helper is not part
 * of the core library, so its source is included.
 */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "fuzz.h"

#include "../../plugins/common/gardener_math.c"

/* The reference: inet_pton for the address, digits for the prefix. */
static int reference_parse(const char *text, gm_cidr *out)
{
    const char *slash = strchr(text, '/');
    char addr[64];
    size_t alen;
    int max, bits = 0;

    memset(out, 0, sizeof *out);
    if (!slash || (alen = (size_t)(slash - text)) >= sizeof addr)
        return -1;
    memcpy(addr, text, alen);
    addr[alen] = '\0';
    if (inet_pton(AF_INET, addr, out->addr) == 1) {
        out->family = 4;
        max = 32;
    } else if (inet_pton(AF_INET6, addr, out->addr) == 1) {
        out->family = 6;
        max = 128;
    } else {
        return -1;
    }
    const char *p = slash + 1;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        bits = bits * 10 + (*p - '0');
        if (bits > max)
            return -1;
    }
    out->bits = bits;
    for (int b = bits; b < max; b++)
        out->addr[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
    return 0;
}

static int same_cidr(const gm_cidr *a, const gm_cidr *b)
{
    return a->family == b->family && a->bits == b->bits && memcmp(a->addr, b->addr, 16) == 0;
}

/* Parse one CIDR and check it on its own; 0 when it parsed. */
static int check_one(const char *text, gm_cidr *c)
{
    gm_cidr ref;
    int rc = gm_cidr_parse(text, c);
    int rrc = reference_parse(text, &ref);

    FUZZ_CHECK(rc == rrc, "'%s': parser %d, inet_pton %d", text, rc, rrc);
    if (rc < 0)
        return -1;
    FUZZ_CHECK(same_cidr(c, &ref), "'%s': parser and inet_pton read different networks", text);

    char addr[INET6_ADDRSTRLEN], again[INET6_ADDRSTRLEN + 8];
    gm_cidr back;
    FUZZ_CHECK(inet_ntop(c->family == 4 ? AF_INET : AF_INET6, c->addr, addr, sizeof addr),
               "inet_ntop");
    snprintf(again, sizeof again, "%s/%d", addr, c->bits);
    FUZZ_CHECK(gm_cidr_parse(again, &back) == 0 && same_cidr(c, &back),
               "'%s' printed as '%s' does not read back", text, again);
    FUZZ_CHECK(gm_cidr_overlap(c, c), "'%s' does not overlap itself", text);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    char *second = strchr(text, '\n');
    gm_cidr a, b;

    if (second)
        *second++ = '\0';
    int ok_a = check_one(text, &a) == 0;
    int ok_b = second && check_one(second, &b) == 0;
    if (ok_a && ok_b) {
        gm_net na, nb;
        int o = gm_cidr_overlap(&a, &b);

        gm_net_from_cidr(&a, &na);
        gm_net_from_cidr(&b, &nb);
        FUZZ_CHECK(o == gm_cidr_overlap(&b, &a), "overlap is not symmetric");
        FUZZ_CHECK(o == gm_net_overlap(&na, &nb) && o == gm_net_overlap(&nb, &na),
                   "gm_net_overlap says %d, gm_cidr_overlap %d", gm_net_overlap(&na, &nb), o);
    }
    free(text);
    return 0;
}
