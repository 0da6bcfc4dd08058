/*
 * openmcp_requests.c - the openmcp-requests plugin: which ClusterRequests
 * the openMCP scheduler answers, and that their purpose is configured.
 *
 * pre_enqueue leaves a request alone (no decision, no Event) when it is
 * annotated openmcp.cloud/operation: ignore or its labels do not match
 * the configuration's selectors.requests. pre_filter makes a request whose
 * spec.purpose has no purposeMappings entry an `error` decision naming the
 * purpose and the configured ones (openMCP: "no cluster definition found
 * for purpose ..."), and one without metadata.uid an error too: its
 * finalizer on a Cluster (request.clusters.openmcp.cloud/<uid>) could not
 * be told apart from another request's.
 *
 * Arguments: config (the openMCP scheduler configuration); ignore
 * (default true: honour the ignore annotation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openmcp.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"

static const trellis_host *host;

typedef struct conf {
    omcp_config c;
    int ignore;
} conf;

static int pre_enqueue(trellis_plugin *self, const trellis_object *w)
{
    const conf *cf = host->get_private(self);
    return omcp_request_left_alone(&cf->c, w, cf->ignore) ? TRELLIS_SKIP : TRELLIS_SUCCESS;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    (void)c;
    const conf *cf = host->get_private(self);
    const char *purpose = omcp_request_purpose(host, w);
    if (omcp_purpose_index(&cf->c, purpose) < 0)
        return host->status(st, TRELLIS_ERROR, "UnknownPurpose",
                            "no cluster definition found for purpose '%s' (purposeMappings "
                            "has: %s)",
                            purpose, cf->c.purpose_names);
    const char *uid = host->object_uid(w);
    char fin[OMCP_FINALIZER_MAX];
    if (!uid || !*uid)
        return host->status(st, TRELLIS_ERROR, "NoUID",
                            "the request has no metadata.uid: its finalizer on a Cluster could "
                            "not be told apart from another request's");
    if (omcp_request_finalizer(host, w, fin, sizeof fin) < 0)
        return host->status(st, TRELLIS_ERROR, "UIDTooLong",
                            "metadata.uid is %zu characters long; a finalizer holds at most %zu",
                            strlen(uid), sizeof fin - sizeof OMCP_CLUSTER_FINALIZER_PREFIX);
    return TRELLIS_SKIP; /* no filter to run */
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    (void)self;
    return strcmp(omcp_request_purpose(host, a), omcp_request_purpose(host, b)) == 0 &&
           !*host->object_uid(a) == !*host->object_uid(b);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, "Namespaced", NULL, err, errlen);
    if (!cf)
        return -1;
    cf->ignore = h->arg_bool(args, "ignore");
    if (h->register_pre_enqueue(self, pre_enqueue) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0)
        return snprintf(err, errlen, "cannot register hooks"), -1;
    return 0;
}

static const trellis_arg_spec args[] = {
    OMCP_CONFIG_ARG,
    {"ignore", TRELLIS_ARG_BOOL, "true",
     "leave requests annotated openmcp.cloud/operation: ignore alone"},
    {NULL, 0, NULL, NULL}};

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "openmcp-requests",
    "1.0",
    "openMCP: the ClusterRequests the scheduler answers (request selector, ignore annotation, "
    "configured purpose)",
    args,
    init,
    NULL};
TRELLIS_PLUGIN_AS(desc, openmcp_requests)
