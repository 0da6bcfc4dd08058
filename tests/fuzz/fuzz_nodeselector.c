/*
 * fuzz_nodeselector.c - node selector terms (plugins/common/nodeselector.c)
 * as the node-affinity plugin reads them.
 *
 * The input is YAML with `required` (a v1.NodeSelector), `preferred` (a
 * list of PreferredSchedulingTerms), `labels` and `name` (a node); it is
 * placed under `spec` of an object and read with the manifest reader, so
 * the parser sees the values the host would hand it. A refusal must carry
 * a message; a parsed selector must match term by term as a whole does,
 * score within the sum of its weights, and describe a mismatch within the
 * buffer it is given. The plugin helpers are not part of the core library,
 * so their sources are included.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/intern.c"
#include "../../plugins/common/nodeselector.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/values.c"

static const char head[] = "apiVersion: v1\nkind: Fuzz\nmetadata:\n  name: s\nspec:\n";

static const char *lookup(const void *ud, const char *key)
{
    return value_string(value_get(ud, key));
}

static void check(const trellis_host *h, const node_selector *s, intern *t,
                  const trellis_value *labels, const trellis_value *name)
{
    char small[8], big[512];
    label_set ls;
    ns_node node;
    int any = 0;
    int64_t weights = 0;
    const char *n = name ? value_string(name) : NULL;

    FUZZ_CHECK(label_set_read(h, labels, t, &ls) == 0, "label_set_read");
    node.labels = &ls;
    node.name = n ? intern_id(t, n) : -1;
    node.label = lookup;
    node.ud = labels && value_type(labels) == TRELLIS_VALUE_MAP ? labels : NULL;
    if (!node.ud)
        node.label = NULL;
    for (size_t i = 0; i < s->n; i++) {
        FUZZ_CHECK(s->terms[i].n > 0, "term %zu is empty but kept", i);
        any |= ns_term_matches(s, i, &node);
        weights += s->terms[i].weight;
    }
    FUZZ_CHECK(any == ns_matches(s, &node), "ns_matches disagrees with its terms");
    FUZZ_CHECK(ns_score(s, &node) >= 0 && ns_score(s, &node) <= weights, "score out of range");
    ns_describe_mismatch(s, t, &node, small, sizeof small);
    ns_describe_mismatch(s, t, &node, big, sizeof big);
    FUZZ_CHECK(strlen(small) < sizeof small, "describe overran");
    label_set_clear(&ls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const trellis_host *h = hostapi_table();
    size_t len;
    char *text = fuzz_under_spec(head, data, size, &len);
    manifest_set set;

    manifest_set_init(&set);
    manifest_parse("fuzz.yaml", text, len, &set);
    for (size_t i = 0; i < set.n_objects; i++) {
        const trellis_object *o = set.objects[i];
        const trellis_value *labels = object_get(o, "spec.labels");
        const trellis_value *name = object_get(o, "spec.name");

        for (int k = 0; k < 2; k++) {
            char err[512] = "";
            node_selector *s = NULL;
            intern t;
            int rc;

            intern_init(&t);
            rc = k == 0 ? ns_parse_required(h, object_get(o, "spec.required"), "spec.required", &t,
                                            &s, err, sizeof err)
                        : ns_parse_preferred(h, object_get(o, "spec.preferred"), "spec.preferred",
                                             &t, &s, err, sizeof err);
            if (rc < 0) {
                FUZZ_CHECK(err[0] && !s, "a refusal without a message");
            } else {
                FUZZ_CHECK(k == 1 || s, "a required selector parsed to nothing");
                if (s)
                    check(h, s, &t, labels, name);
                ns_free(s);
            }
            intern_free(&t);
        }
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
