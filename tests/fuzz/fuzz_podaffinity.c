/*
 * fuzz_podaffinity.c - a Pod's pod affinity and anti-affinity terms as the
 * inter-pod-affinity plugin reads them (prepare_pod: the four lists of
 * terms, label selectors, matchLabelKeys, namespaces, namespaceSelector).
 *
 * The input is YAML placed under `spec` of a Pod in namespace `ns` with
 * labels app=web and tier=db (so `affinity:` at its top is the Pod's
 * affinity). Only running out of memory may refuse a Pod; a term kube
 * cannot parse drops its list and leaves a message. Every term kept has a
 * topology key, a weight of 1-100 exactly when it is preferred, and a
 * namespace rule; the Pod's own terms are then matched against itself, as
 * the filter does for the first Pod of a series. The plugin's source is
 * included, as the plugin helpers are not part of the core library.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/intern.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/values.c"
/* the plugin names the oldest host it runs on; hostapi.h's plugin.h said
 * this host's */
#undef TRELLIS_PLUGIN_MIN_MINOR
#include "../../plugins/inter-pod-affinity/inter_pod_affinity.c"

static const char head[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n"
                           "  labels: {app: web, tier: db}\nspec:\n";

static void check(const pod *p)
{
    size_t matched = 0;

    FUZZ_CHECK(!p->error || p->error[0], "an empty parse error");
    for (int l = 0; l < NLISTS; l++) {
        for (size_t i = 0; i < p->n[l]; i++) {
            const term *t = &p->t[l][i];
            view v = {t, NULL, 0};

            FUZZ_CHECK(t->key >= 0, "list %d term %zu: no topology key", l, i);
            FUZZ_CHECK(l >= PREF_AFF ? t->weight >= 1 && t->weight <= 100 : t->weight == 0,
                       "list %d term %zu: weight %d", l, i, (int)t->weight);
            FUZZ_CHECK(t->nns || t->ns_all || t->ns_sel, "list %d term %zu: no namespace rule", l,
                       i);
            FUZZ_CHECK(!(t->ns_all && t->ns_sel), "list %d term %zu: both every and some", l, i);
            matched += (size_t)view_matches(&v, p);
        }
    }
    if (p->n[REQ_AFF]) {
        view *v = calloc(p->n[REQ_AFF], sizeof(*v));
        size_t each = 0;

        if (!v)
            abort();
        for (size_t i = 0; i < p->n[REQ_AFF]; i++) {
            v[i].t = &p->t[REQ_AFF][i];
            each += (size_t)view_matches(&v[i], p);
        }
        FUZZ_CHECK(all_match(v, p->n[REQ_AFF], p) == (each == p->n[REQ_AFF]),
                   "all_match disagrees with its terms");
        free(v);
    }
    (void)matched;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len;
    char *text = fuzz_under_spec(head, data, size, &len);
    manifest_set set;

    host = hostapi_table();
    manifest_set_init(&set);
    manifest_parse("fuzz.yaml", text, len, &set);
    for (size_t i = 0; i < set.n_objects; i++) {
        config cfg;
        char err[512] = "";
        pod *p = NULL;

        memset(&cfg, 0, sizeof(cfg));
        cfg.affinity_field = "spec.affinity";
        cfg.phase_field = "spec.phase";
        cfg.hard_weight = 1;
        if (prepare_pod(&cfg, set.objects[i], &p, err, sizeof err) < 0) {
            FUZZ_CHECK(err[0] && !p, "a refusal without a message");
        } else {
            FUZZ_CHECK(p != NULL, "no Pod and no refusal");
            check(p);
            pod_free(p);
        }
        intern_free(&cfg.ids);
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
