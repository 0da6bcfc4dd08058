/*
 * fuzz_clock.c - RFC 3339 times as clock.c parses them (the config's
 * `now`, --now, and every time a plugin parses through time_parse).
 *
 * Properties: a text that parses names an instant between the years 0000
 * and 9999 (give or take a day of offset); formatting it in whole seconds
 * and parsing that again gives the same instant without its milliseconds;
 * and the parse reads no byte past the terminating NUL.
 */
#include "config.h"

#include "fuzz.h"

#include "clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    int64_t ms = 0;
    if (clock_parse(text, &ms) == 0) {
        const int64_t lo = -62167219200000 - 86400000; /* 0000-01-01, a day's offset */
        const int64_t hi = 253402300800000 + 86400000; /* 10000-01-01 */
        FUZZ_CHECK(ms >= lo && ms < hi, "'%s' is %lld", text, (long long)ms);
        if (ms >= 0 && ms < 253402300800000) {
            char buf[CLOCK_TEXT_MAX];
            int64_t back = -1;
            clock_format(ms, buf, sizeof buf);
            FUZZ_CHECK(clock_parse(buf, &back) == 0 && back == ms - ms % 1000,
                       "'%s' is %lld, printed '%s', read back %lld", text, (long long)ms, buf,
                       (long long)back);
        }
    }
    free(text);
    return 0;
}
