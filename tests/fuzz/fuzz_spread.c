/*
 * fuzz_spread.c - topology spread constraints (plugins/common/spread.c) as
 * the pod-topology-spread plugin reads them.
 *
 * The input is YAML with `constraints` (a Pod's
 * topologySpreadConstraints), `defaults` (the defaultConstraints of
 * PodTopologySpreadArgs) and `labels` (the Pod's labels, for
 * matchLabelKeys and the self match); it is placed under `spec` of an
 * object and read with the manifest reader, so the parser sees the values
 * the host would hand it. A refusal must carry a message; a parsed
 * constraint must have maxSkew and minDomains of at least 1, sit in the
 * list its whenUnsatisfiable names, never share its key with another of
 * that list, and match its own Pod exactly when self_match says so; the
 * defaults take a selector as a Pod's would. The plugin helpers are not
 * part of the core library, so their sources are included.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/intern.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/spread.c"
#include "../../plugins/common/values.c"

static const char head[] = "apiVersion: v1\nkind: Fuzz\nmetadata:\n  name: s\nspec:\n";

static void check_list(const spread_list *l, int anyway, const label_set *own)
{
    for (size_t i = 0; i < l->n; i++) {
        const spread_constraint *c = &l->v[i];

        FUZZ_CHECK(c->max_skew >= 1 && c->min_domains >= 1, "maxSkew or minDomains below 1");
        FUZZ_CHECK(c->schedule_anyway == anyway, "constraint %zu in the wrong list", i);
        FUZZ_CHECK(c->match != SPREAD_MATCH_SELECTOR || c->sel.n > 0, "an empty selector kept");
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(l->v[j].key != c->key, "two constraints with one key");
        if (own && c->match == SPREAD_MATCH_SELECTOR)
            FUZZ_CHECK(c->self_match == spread_counts(c, own), "self_match disagrees");
        if (c->match != SPREAD_MATCH_SELECTOR)
            FUZZ_CHECK(!own || !spread_counts(c, own), "an empty selector counts a Pod");
    }
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
        spread_list hard, soft, dhard, dsoft, mine = {NULL, 0};
        char err[512] = "";
        label_set own;
        intern t;
        int rc;

        intern_init(&t);
        FUZZ_CHECK(label_set_read(h, object_get(o, "spec.labels"), &t, &own) == 0,
                   "label_set_read");
        rc = spread_parse(h, object_get(o, "spec.constraints"), "spec.constraints", &own, &t, &hard,
                          &soft, err, sizeof err);
        if (rc < 0) {
            FUZZ_CHECK(err[0], "a refusal without a message");
        } else {
            check_list(&hard, 0, &own);
            check_list(&soft, 1, &own);
        }
        spread_clear(&hard);
        spread_clear(&soft);
        err[0] = '\0';
        rc = spread_parse_defaults(h, object_get(o, "spec.defaults"), "spec.defaults", &t, &dhard,
                                   &dsoft, err, sizeof err);
        if (rc < 0) {
            FUZZ_CHECK(err[0], "a refusal of defaults without a message");
        } else {
            selector *s = NULL;
            selector_req r = {(char *)"app", SELECTOR_EQUALS, NULL, 0};
            char *v = (char *)"web";

            r.values = &v;
            r.nvalues = 1;
            check_list(&dhard, 0, NULL);
            check_list(&dsoft, 1, NULL);
            FUZZ_CHECK(spread_selector_add(&s, &r) == 0, "spread_selector_add");
            FUZZ_CHECK(spread_with_selector(&dsoft, s, &t, &own, &mine) == 0,
                       "spread_with_selector");
            FUZZ_CHECK(mine.n == dsoft.n, "defaults lost in the copy");
            check_list(&mine, 1, &own);
            selector_free(s);
        }
        spread_clear(&mine);
        spread_clear(&dhard);
        spread_clear(&dsoft);
        label_set_clear(&own);
        intern_free(&t);
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
