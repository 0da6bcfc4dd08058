/*
 * fuzz_extender.c - the answers of a kube-scheduler HTTP extender as the
 * http-extender plugin reads them (plugins/http-extender/extender_reply.c):
 * ExtenderFilterResult, HostPriorityList, ExtenderBindingResult and
 * ExtenderPreemptionResult.
 *
 * The first byte picks the reader (its value modulo 4), the rest is the
 * answer's body, handed over with its length and no terminating NUL (the
 * HTTP layer keeps the length; the reader must not read past it). A
 * refusal must carry a message and leave nothing behind; a filter result
 * must name each failed node once, with a message, and keep every node
 * name it lists; a priority list must give every entry a host; a binding
 * error is never empty; a preemption result names each node once, every
 * victim with a uid (maybe ""), and has victims only where pods were
 * given. The plugin is not part of the core library, so
 * the reader's source is included.
 */
#include "config.h"

#include "fuzz.h"

#include "../../plugins/http-extender/extender_reply.c"

static void check_filter(const ext_filter_result *r)
{
    FUZZ_CHECK(r->has_names || r->n_names == 0, "names without nodenames");
    FUZZ_CHECK(r->has_nodes || r->n_nodes == 0, "nodes without a NodeList");
    for (size_t i = 0; i < r->n_names; i++)
        FUZZ_CHECK(r->names[i] != NULL, "nodenames[%zu] lost", i);
    for (size_t i = 0; i < r->n_nodes; i++)
        FUZZ_CHECK(r->nodes[i] != NULL, "nodes[%zu] lost", i);
    for (size_t i = 0; i < r->n_failed; i++) {
        FUZZ_CHECK(r->failed[i].node && r->failed[i].message, "failed node %zu lost", i);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(r->failed[i].node, r->failed[j].node) != 0, "node %s failed twice",
                       r->failed[i].node);
    }
    FUZZ_CHECK(!r->error || r->error[0], "an empty error kept");
}

static void check_preemption(const ext_meta_victims *v, size_t n)
{
    FUZZ_CHECK(v || n == 0, "nodes without a list");
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(v[i].node != NULL, "node %zu lost", i);
        FUZZ_CHECK(v[i].has_pods || v[i].n_uids == 0, "victims of %s without pods", v[i].node);
        for (size_t j = 0; j < v[i].n_uids; j++)
            FUZZ_CHECK(v[i].uids[j] != NULL, "uid %zu of %s lost", j, v[i].node);
        for (size_t j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(v[i].node, v[j].node) != 0, "node %s named twice", v[i].node);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int which = data[0] % 4;
    size_t len = size - 1;
    /* exactly len bytes: ASan sees a read past the end */
    char *body = malloc(len ? len : 1);
    if (!body)
        abort();
    if (len)
        memcpy(body, data + 1, len);
    char err[256] = "";
    if (which == 0) {
        ext_filter_result r;
        if (ext_parse_filter(body, len, &r, err, sizeof err) == 0)
            check_filter(&r);
        else
            FUZZ_CHECK(err[0] && !r.n_names && !r.n_nodes && !r.n_failed && !r.error,
                       "a refused filter result without a message or with leftovers");
        ext_filter_result_free(&r);
    } else if (which == 1) {
        ext_priority *p;
        size_t n;
        if (ext_parse_priorities(body, len, &p, &n, err, sizeof err) == 0) {
            for (size_t i = 0; i < n; i++)
                FUZZ_CHECK(p[i].host != NULL, "entry %zu without a host", i);
            ext_priorities_free(p, n);
        } else {
            FUZZ_CHECK(err[0] && !p && !n, "a refused priority list without a message");
        }
    } else if (which == 3) {
        ext_meta_victims *v;
        size_t n;
        if (ext_parse_preemption(body, len, &v, &n, err, sizeof err) == 0) {
            check_preemption(v, n);
            ext_meta_victims_free(v, n);
        } else {
            FUZZ_CHECK(err[0] && !v && !n, "a refused preemption result without a message");
        }
    } else {
        char *e;
        if (ext_parse_binding(body, len, &e, err, sizeof err) == 0)
            FUZZ_CHECK(!e || e[0], "an empty binding error kept");
        else
            FUZZ_CHECK(err[0] && !e, "a refused binding result without a message");
        free(e);
    }
    free(body);
    return 0;
}
