/*
 * fuzz_gardener_config.c - Gardener's SchedulerConfiguration
 * (plugins/common/gardener_config.c) as gardener-region reads it.
 *
 * The input is the YAML of the file; it is placed under `spec` of an
 * object and read with the manifest reader, so the parser sees the values
 * the host would hand it. A refusal must carry a message; a file that
 * parses yields a known strategy (or none) and a list of ignored keys that
 * is a string. The plugin helpers are not part of the core library, so
 * their sources are included.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/gardener_config.c"
#include "../../plugins/common/values.c"

static const char head[] = "apiVersion: v1\nkind: Fuzz\nmetadata:\n  name: s\n  namespace: n\n"
                           "spec:\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const trellis_host *h = hostapi_table();
    size_t len;
    char *text = fuzz_under_spec(head, data, size, &len);
    manifest_set set;

    manifest_set_init(&set);
    manifest_parse("fuzz.yaml", text, len, &set);
    for (size_t i = 0; i < set.n_objects; i++) {
        const trellis_value *doc = object_get(set.objects[i], "spec");
        gardener_config c;
        char err[512] = "";

        if (!gardener_config_given(h, doc))
            continue;
        if (gardener_config_parse(h, doc, &c, err, sizeof err) < 0) {
            FUZZ_CHECK(err[0], "a refusal without a message");
            continue;
        }
        FUZZ_CHECK(c.strategy == GARDENER_STRATEGY_UNSET || c.strategy == GARDENER_SAME_REGION ||
                       c.strategy == GARDENER_MINIMAL_DISTANCE,
                   "strategy %d", c.strategy);
        FUZZ_CHECK(memchr(c.ignored, '\0', sizeof c.ignored) != NULL, "ignored not terminated");
        FUZZ_CHECK(gardener_strategy_name(c.strategy)[0], "a strategy without a name");
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
