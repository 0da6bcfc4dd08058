/*
 * fuzz_selector.c - label selectors (plugins/common/selector.c) as the
 * label-selector and gardener-seed-selector plugins read them.
 *
 * The input is YAML with two members, `selector` (a nodeSelector map or a
 * LabelSelector) and `labels` (a target's labels); it is placed under
 * `spec` of an object and read with the manifest reader, so the selector
 * parser sees the values the host would hand it. Each selector that
 * parses in either shape is described, compiled against an intern table
 * and matched against the input's labels and against labels made from the
 * selector itself (its own first values, then other values): the string
 * matcher and the compiled id matcher must name the same first mismatch.
 * The plugin helpers are not part of the core library, so their sources
 * are included.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/intern.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/values.c"

static const char head[] = "apiVersion: v1\nkind: Fuzz\nmetadata:\n  name: s\nspec:\n";

static const char *lookup(const void *ud, const char *key)
{
    return value_string(value_get(ud, key));
}

/* A target's labels made from s: mode 0 gives each key its first value
 * ("x" when it has none), mode 1 gives each key a value no requirement
 * names. NULL when the object cannot be built. */
static trellis_object *labels_from(const selector *s, int mode)
{
    char err[256];
    obuild *b = obuild_new();
    size_t root = ob_open(b), meta = ob_open(b), labels = ob_open(b);

    for (size_t i = 0; s && i < s->n; i++) {
        const selector_req *r = &s->reqs[i];
        const char *v = mode == 0 && r->nvalues ? r->values[0] : mode == 0 ? "x" : "\x01other";

        ob_member(b, labels, r->key, strlen(r->key), ob_string(b, v, strlen(v)), 1);
    }
    oref l = ob_close_map(b, labels);
    ob_member(b, meta, "name", 4, ob_string(b, "t", 1), 0);
    ob_member(b, meta, "labels", 6, l, 0);
    oref m = ob_close_map(b, meta);
    ob_member(b, root, "apiVersion", 10, ob_string(b, "v1", 2), 0);
    ob_member(b, root, "kind", 4, ob_string(b, "Node", 4), 0);
    ob_member(b, root, "metadata", 8, m, 0);
    trellis_object *o = object_build(b, ob_close_map(b, root), err, sizeof err);
    obuild_free(b);
    return o;
}

/* Both matchers over one label map (NULL: no labels). */
static void check_match(const trellis_host *h, const selector *s, const selector_ids *ids,
                        intern *t, const trellis_value *labels)
{
    label_set ls;
    long by_id, by_string = -1;

    FUZZ_CHECK(label_set_read(h, labels, t, &ls) == 0, "label_set_read");
    by_id = selector_ids_first_mismatch(ids, &ls);
    if (s)
        by_string = selector_first_mismatch(s, lookup, labels);
    FUZZ_CHECK(by_id == by_string, "first mismatch: ids say %ld, strings %ld", by_id, by_string);
    label_set_clear(&ls);
}

static void check_selector(const trellis_host *h, const selector *s, const trellis_value *labels)
{
    char small[8], big[512];
    intern t;
    selector_ids ids;

    for (size_t i = 0; s && i < s->n; i++) {
        const selector_req *r = &s->reqs[i];

        FUZZ_CHECK(r->key, "requirement %zu has no key", i);
        FUZZ_CHECK(r->op != SELECTOR_EQUALS || r->nvalues == 1, "=: %zu values", r->nvalues);
        FUZZ_CHECK((r->op != SELECTOR_IN && r->op != SELECTOR_NOT_IN) || r->nvalues >= 1,
                   "in/notin without values");
        FUZZ_CHECK((r->op != SELECTOR_EXISTS && r->op != SELECTOR_DOES_NOT_EXIST) ||
                       r->nvalues == 0,
                   "exists with values");
        selector_describe(r, small, sizeof small);
        selector_describe(r, big, sizeof big);
        FUZZ_CHECK(strlen(small) < sizeof small, "describe overran");
        FUZZ_CHECK(strncmp(small, big, strlen(small)) == 0, "a cut description is not a prefix");
    }
    intern_init(&t);
    FUZZ_CHECK(selector_compile(s, &t, &ids) == 0, "selector_compile");
    FUZZ_CHECK(ids.n == (s ? s->n : 0), "compiled %zu of %zu", ids.n, s ? s->n : 0);
    check_match(h, s, &ids, &t, NULL);
    check_match(h, s, &ids, &t, labels);
    for (int mode = 0; mode < 2; mode++) {
        trellis_object *o = labels_from(s, mode);

        if (o) {
            check_match(h, s, &ids, &t, o->labels);
            object_unref(o);
        }
    }
    selector_ids_clear(&ids);
    intern_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const extra[] = {"providerTypes", NULL};
    const trellis_host *h = hostapi_table();
    size_t len;
    char *text = fuzz_under_spec(head, data, size, &len);
    manifest_set set;

    manifest_set_init(&set);
    manifest_parse("fuzz.yaml", text, len, &set);
    for (size_t i = 0; i < set.n_objects; i++) {
        const trellis_object *o = set.objects[i];
        const trellis_value *v = object_get(o, "spec.selector");
        const trellis_value *labels = object_get(o, "spec.labels");

        for (int k = 0; k < 3; k++) {
            char err[512] = "";
            selector *s = NULL;
            int rc = k == 0   ? selector_parse(h, v, SELECTOR_FORMAT_MAP, "spec.selector", &s, err,
                                               sizeof err)
                     : k == 1 ? selector_parse(h, v, SELECTOR_FORMAT_SELECTOR, "spec.selector", &s,
                                               err, sizeof err)
                              : selector_parse_with(h, v, SELECTOR_FORMAT_SELECTOR, extra,
                                                    "spec.selector", &s, err, sizeof err);

            if (rc < 0) {
                FUZZ_CHECK(err[0] && !s, "a refusal without a message");
                continue;
            }
            check_selector(h, s, labels);
            selector_free(s);
        }
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
