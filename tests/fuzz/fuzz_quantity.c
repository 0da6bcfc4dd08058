/*
 * fuzz_quantity.c - Kubernetes quantities ("100m", "1.5Gi", "1e3") as
 * resources.c parses them for resources-fit, least-allocated and
 * gardener-capacity.
 *
 * The parser works on decimal digit arrays, so the properties are exact:
 * whether a text is a quantity does not depend on the unit; a count is the
 * millicount rounded up to whole units (both round fractions up); and what
 * res_format prints for an amount parses back to that amount. The plugin
 * helper is not part of the core library, so its source is included.
 */
#include "config.h"

#include "fuzz.h"

#include "../../plugins/common/resources.c"
#include "../../plugins/common/values.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    static const res_unit units[] = {RES_UNIT_COUNT, RES_UNIT_MILLI, RES_UNIT_BYTES};
    int64_t v[3];
    int rc[3];

    for (int u = 0; u < 3; u++) {
        v[u] = -1;
        rc[u] = res_quantity_parse(text, units[u], &v[u]);
        FUZZ_CHECK(rc[u] == RES_OK || rc[u] == RES_ESYNTAX || rc[u] == RES_ERANGE ||
                       rc[u] == RES_ENEGATIVE,
                   "unit %d: rc %d", u, rc[u]);
        if (rc[u] != RES_OK)
            continue;
        FUZZ_CHECK(v[u] >= 0, "unit %d: '%s' is %lld", u, text, (long long)v[u]);

        char buf[64];
        int64_t back = -1;
        res_format(v[u], units[u], buf, sizeof buf);
        FUZZ_CHECK(res_quantity_parse(buf, units[u], &back) == RES_OK && back == v[u],
                   "unit %d: '%s' is %lld, printed '%s', read back %lld", u, text, (long long)v[u],
                   buf, (long long)back);
    }
    /* counts and bytes are the same plain units */
    FUZZ_CHECK(rc[0] == rc[2] && (rc[0] != RES_OK || v[0] == v[2]), "'%s': count and bytes differ",
               text);
    /* the unit only scales: syntax and sign do not depend on it */
    FUZZ_CHECK((rc[0] == RES_ESYNTAX) == (rc[1] == RES_ESYNTAX), "'%s': syntax %d vs %d", text,
               rc[0], rc[1]);
    FUZZ_CHECK((rc[0] == RES_ENEGATIVE) == (rc[1] == RES_ENEGATIVE), "'%s': sign %d vs %d", text,
               rc[0], rc[1]);
    if (rc[1] == RES_OK) {
        /* ceil(ceil(1000 x) / 1000) == ceil(x) */
        int64_t whole = v[1] / 1000 + (v[1] % 1000 != 0);
        FUZZ_CHECK(rc[0] == RES_OK && v[0] == whole, "'%s': %lld units but %lld milli-units", text,
                   (long long)v[0], (long long)v[1]);
    }
    /* the exact reading (KubeFleet's comparisons) agrees on syntax, lies
     * in the millicount's thousandth ((v - 1)m < x <= vm: both round
     * magnitudes up), and its negation is the same digits */
    res_exact x, y;
    int rx = res_exact_parse(text, &x);
    FUZZ_CHECK(rx == RES_OK || rx == RES_ESYNTAX || rx == RES_ERANGE, "'%s': exact rc %d", text,
               rx);
    FUZZ_CHECK((rx == RES_ESYNTAX) == (rc[1] == RES_ESYNTAX), "'%s': syntax %d vs exact %d", text,
               rc[1], rx);
    if (rx == RES_OK && rc[1] == RES_OK) {
        char m[32];
        snprintf(m, sizeof m, "%lldm", (long long)v[1]);
        FUZZ_CHECK(res_exact_parse(m, &y) == RES_OK && res_exact_cmp(&x, &y) <= 0,
                   "'%s' is above its millicount %s", text, m);
        snprintf(m, sizeof m, "%lldm", (long long)v[1] - 1);
        FUZZ_CHECK(v[1] == 0 || (res_exact_parse(m, &y) == RES_OK && res_exact_cmp(&x, &y) > 0),
                   "'%s' is not above %s", text, m);
    }
    size_t len = strlen(text);
    if (rx == RES_OK && (text[0] == '.' || (text[0] >= '0' && text[0] <= '9'))) {
        char *neg = malloc(len + 2);
        neg[0] = '-';
        memcpy(neg + 1, text, len + 1);
        FUZZ_CHECK(res_exact_parse(neg, &y) == RES_OK && y.sign == -x.sign && y.nd == x.nd &&
                       y.point == x.point && memcmp(y.dig, x.dig, x.nd) == 0 &&
                       res_exact_cmp(&y, &x) == (x.sign ? -1 : 0),
                   "'%s': its negation is not its mirror", text);
        free(neg);
    }
    free(text);
    return 0;
}
