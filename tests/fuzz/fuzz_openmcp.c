/*
 * fuzz_openmcp.c - the openMCP scheduler configuration
 * (plugins/common/openmcp.c) as the openmcp-* plugins read it.
 *
 * The input is the YAML of the operator's file (`scheduler:` at its
 * root); it is placed under `spec` of an object and read with the
 * manifest reader, so the parser sees the values the host would hand it.
 * A refusal must carry a message. A configuration that parses is used as
 * the plugins use it: the same object stands in for a Cluster (its
 * purposes, its request count) and for a request of every configured
 * purpose, whose new Cluster is named (a name of at most 63 characters,
 * or an error) and written as a manifest that must read back as an object
 * of that name. The plugin helpers are not part of the core library, so
 * their sources are included.
 */
#include "config.h"

#include "fuzz.h"
#include "hostapi.h"
#include "manifest.h"

#include "../../plugins/common/intern.c"
#include "../../plugins/common/k8sname.c"
#include "../../plugins/common/openmcp.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/shake.c"
#include "../../plugins/common/values.c"

static const char head[] = "apiVersion: v1\nkind: Fuzz\nmetadata:\n  name: s\n  namespace: n\n"
                           "  uid: 0000-1111\nspec:\n";

static void use(const trellis_host *h, const omcp_config *c, const trellis_object *o)
{
    static const char *const fins[] = {"request.clusters.openmcp.cloud/0000-1111",
                                       "request.clusters.openmcp.cloud/\"quoted\""};
    (void)omcp_cluster_purposes(c, o);
    FUZZ_CHECK(omcp_cluster_requests(h, o) >= 0, "a negative request count");
    (void)omcp_request_selected(c, o);
    for (size_t i = 0; i < c->n_purposes; i++) {
        const omcp_purpose *p = &c->purposes[i];
        char name[OMCP_NAME_MAX + 1], err[512] = "";

        FUZZ_CHECK(omcp_purpose_index(c, p->name) == (int)i, "purpose %zu not found", i);
        if (omcp_new_name(p, h, o, 1, name, sizeof name, err, sizeof err) < 0) {
            FUZZ_CHECK(err[0], "a naming error without a message");
            continue;
        }
        char *json = omcp_cluster_manifest(c, p, o, "clusters.openmcp.cloud/v1alpha1", "Cluster",
                                           omcp_new_namespace(p, h, o), name, fins, 2);
        FUZZ_CHECK(json, "no manifest");
        trellis_object *back = object_from_json(json, err, sizeof err);
        /* a name the template gives may be anything the YAML holds; the
         * manifest must still be JSON the host reads, or refuses with a
         * message */
        FUZZ_CHECK(back || err[0], "manifest refused without a message: %s", json);
        if (back) {
            FUZZ_CHECK(strcmp(back->name, name) == 0, "manifest names %s, not %s", back->name,
                       name);
            object_unref(back);
        }
        free(json);
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
        for (int k = 0; k < 2; k++) {
            omcp_config c;
            char err[512] = "";
            int rc = omcp_config_parse(h, object_get(o, "spec"), k ? "Cluster" : "Namespaced", &c,
                                       err, sizeof err);
            if (rc < 0)
                FUZZ_CHECK(err[0], "a refusal without a message");
            else
                use(h, &c, o);
            omcp_config_free(&c);
        }
    }
    manifest_set_free(&set);
    free(text);
    return 0;
}
