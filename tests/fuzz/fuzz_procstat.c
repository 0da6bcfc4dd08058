/*
 * fuzz_procstat.c - /proc/<pid>/stat text as procstat.c parses it for the
 * process_* metrics.
 *
 * Properties: a text that parses gives finite, non-negative values, the
 * start no earlier than the boot time; a text that does not parse leaves
 * the values as they were; and the parse reads no byte past the
 * terminating NUL.
 */
#include "config.h"

#include <math.h>

#include "fuzz.h"

#include "procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    procstat ps = {
        .cpu_seconds = -1, .start_time_seconds = -1, .resident_bytes = -1, .virtual_bytes = -1};
    const double boot = 1700000000;
    if (procstat_parse_stat(text, 100, 4096, boot, &ps) == 0) {
        FUZZ_CHECK(isfinite(ps.cpu_seconds) && ps.cpu_seconds >= 0, "cpu %g", ps.cpu_seconds);
        FUZZ_CHECK(isfinite(ps.start_time_seconds) && ps.start_time_seconds >= boot, "start %g",
                   ps.start_time_seconds);
        FUZZ_CHECK(isfinite(ps.resident_bytes) && ps.resident_bytes >= 0, "rss %g",
                   ps.resident_bytes);
        FUZZ_CHECK(isfinite(ps.virtual_bytes) && ps.virtual_bytes >= 0, "vsize %g",
                   ps.virtual_bytes);
    } else {
        FUZZ_CHECK(ps.cpu_seconds == -1 && ps.start_time_seconds == -1 && ps.resident_bytes == -1 &&
                       ps.virtual_bytes == -1,
                   "a refused text changed the values");
    }
    free(text);
    return 0;
}
