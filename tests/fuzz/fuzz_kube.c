/*
 * fuzz_kube.c - what the Kubernetes API store parses from outside: a
 * kubeconfig (kubeconfig.c) and a watch stream's line (kubeapi.c).
 *
 * Properties: no input crashes or leaks a parser; a kubeconfig that
 * parses has a server starting with http:// or https:// and without a
 * trailing slash, and a client certificate only with its key; a watch
 * event that parses has a known type and an object.
 */
#include "config.h"

#include "fuzz.h"

#include <string.h>

#include "kubeapi.h"
#include "kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    char err[1024];
    kubeconfig kc;
    if (kubeconfig_parse("fuzz", NULL, text, size, NULL, &kc, err, sizeof err) == 0) {
        size_t n = strlen(kc.server);
        FUZZ_CHECK(strncmp(kc.server, "http://", 7) == 0 || strncmp(kc.server, "https://", 8) == 0,
                   "server %s", kc.server);
        FUZZ_CHECK(n <= 8 || kc.server[n - 1] != '/', "server %s ends in a slash", kc.server);
        FUZZ_CHECK(!(kc.cert_pem || kc.cert_file) == !(kc.key_pem || kc.key_file),
                   "a certificate without its key");
        kubeconfig_free(&kc);
    }
    int type;
    json_object *o;
    if (kubeapi_parse_event(text, size, &type, &o, err, sizeof err) == 0) {
        FUZZ_CHECK(type >= KUBE_EV_ADDED && type <= KUBE_EV_ERROR, "type %d", type);
        FUZZ_CHECK(o && json_object_is_type(o, json_type_object), "no object");
        json_object_put(o);
    }
    free(text);
    return 0;
}
