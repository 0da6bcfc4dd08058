/*
 * fx_provision.c - fixture: a post-filter that provisions a new target.
 *
 * When nothing fits, it creates a Node named "provisioned-<workload name>"
 * with the labels the workload's spec.nodeSelector asks for, through
 * host->create_target, and nominates nothing: the host retries the
 * workload, which then fits the new Node. Proves the openMCP-style path
 * (a post-filter answering a request with a new target) end to end: the
 * new target is in the decision's "created" list, written to the state as
 * a new file, and the binding names it.
 */
#include <stdio.h>
#include <string.h>

#include "trellis/plugin.h"

static const trellis_host *host;

static int visit(const char *key, const trellis_value *v, void *ud)
{
    char *buf = ud;
    size_t len = strlen(buf);
    const char *val = host->value_string(v);
    snprintf(buf + len, 1024 - len, "%s\"%s\": \"%s\"", len > 1 ? ", " : "", key, val ? val : "");
    return 0;
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       trellis_status *st)
{
    char labels[1024] = "{";
    const trellis_value *sel = host->object_get(w, "spec.nodeSelector");
    if (sel && host->value_type(sel) == TRELLIS_VALUE_MAP)
        host->value_foreach(sel, visit, labels);
    strncat(labels, "}", sizeof labels - strlen(labels) - 1);
    char json[2048], err[256];
    snprintf(json, sizeof json,
             "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": "
             "\"provisioned-%s\", \"labels\": %s}, \"status\": {\"allocatable\": {\"cpu\": "
             "\"4\", \"memory\": \"8Gi\", \"pods\": \"110\"}}}",
             host->object_name(w), labels);
    if (host->create_target(c, self, json, err, sizeof err) != 0)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "ProvisionFailed", "%s", err);
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    return h->register_post_filter(self, post_filter);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-provision",
    "0.0.1",
    "fixture: creates a Node for a workload nothing fits",
    NULL,
    init,
    NULL,
};
TRELLIS_PLUGIN(desc)
