/*
 * openmcp_binder.c - the openmcp-binder plugin: records a ClusterRequest's
 * placement as openMCP does, and releases it when the request goes.
 *
 * bind: the request's finalizer request.clusters.openmcp.cloud/<uid> is
 * added to the Cluster (a list edit, so a concurrent addition is kept);
 * the request gets the finalizer clusters.openmcp.cloud/request, and
 * through its status subresource status.cluster.{name,namespace} (the
 * profile's binding), status.phase Granted and status.observedGeneration.
 *
 * finalize (a request being deleted, or gone; not one the scheduler
 * leaves alone: annotated ignore, or outside selectors.requests): its
 * finalizer is removed
 * from every Cluster (in any namespace) that matches selectors.clusters
 * and carries it; a Cluster left without request finalizers that is
 * labelled clusters.openmcp.cloud/delete-without-requests: "true" is
 * deleted (marked with metadata.deletionTimestamp while other finalizers
 * hold it, as the API server does); then the request's own finalizer goes, so that its deletion
 * can complete.
 *
 * Arguments: config; kind (of the Clusters).
 */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "openmcp.h"
#include "trellis/plugin.h"

static const trellis_host *host;

typedef struct conf {
    omcp_config c;
    const char *kind;
    int ignore;
} conf;

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                const trellis_target *t, trellis_status *st)
{
    (void)c;
    char fin[OMCP_FINALIZER_MAX], err[512], gen[32] = "0";
    if (omcp_request_finalizer(host, w, fin, sizeof fin) < 0)
        return host->status(st, TRELLIS_ERROR, "NoUID", "the request has no metadata.uid");
    const trellis_object *cluster = host->target_object(t);
    const trellis_edit onc = {TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", fin};
    if (!omcp_has_finalizer(host, cluster, fin) &&
        host->store_patch(self, cluster, NULL, &onc, 1, err, sizeof err) < 0) {
        /* named once: most of the store's errors name the object first */
        char who[OMCP_FINALIZER_MAX + 64];
        snprintf(who, sizeof who, "%s %s:", host->object_kind(cluster), host->target_key(t));
        return strncmp(err, who, strlen(who)) == 0
                   ? host->status(st, TRELLIS_ERROR, "BindFailed", "%s", err)
                   : host->status(st, TRELLIS_ERROR, "BindFailed", "%s %s: %s",
                                  host->object_kind(cluster), host->target_key(t), err);
    }
    const trellis_edit onr = {TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", OMCP_REQUEST_FINALIZER};
    if (!omcp_has_finalizer(host, w, OMCP_REQUEST_FINALIZER) &&
        host->store_patch(self, w, NULL, &onr, 1, err, sizeof err) < 0)
        return host->status(st, TRELLIS_ERROR, "BindFailed", "%s", err);
    const trellis_value *g = host->object_get(w, "metadata.generation");
    int64_t gv;
    if (g && host->value_int(g, &gv) == 0)
        snprintf(gen, sizeof gen, "%lld", (long long)gv);
    /* status.cluster (the binding field) and the phase in one write: the
     * phase lives beside the binding, so it goes where the binding goes */
    const trellis_edit status[2] = {{TRELLIS_EDIT_SET, "status.phase", "Granted"},
                                    {TRELLIS_EDIT_SET_JSON, "status.observedGeneration", gen}};
    if (host->store_bind_edits(self, w, t, status, 2, err, sizeof err) < 0)
        return host->status(st, TRELLIS_ERROR, "BindFailed", "%s", err);
    return TRELLIS_SUCCESS;
}

typedef struct release_ctx {
    const conf *cf;
    const trellis_plugin *self;
    const char *fin;
    int failed;
    char err[512];
} release_ctx;

static const char *label_lookup(const void *ud, const char *key)
{
    return host->object_label(ud, key);
}

/* Whether o carries any finalizer but fin (a controller's clean-up). */
static int other_finalizers(const trellis_object *o, const char *fin)
{
    const trellis_value *f = host->object_get(o, "metadata.finalizers");
    for (size_t i = 0; f && i < host->value_len(f); i++) {
        const char *s = host->value_string(host->value_at(f, i));
        if (!s || strcmp(s, fin) != 0)
            return 1;
    }
    return 0;
}

static int release_one(const trellis_object *o, void *ud)
{
    release_ctx *x = ud;
    if (!omcp_has_finalizer(host, o, x->fin) ||
        selector_first_mismatch(x->cf->c.clusters, label_lookup, o) >= 0)
        return 0;
    const char *del = host->object_label(o, OMCP_DELETE_LABEL);
    int last = omcp_cluster_requests(host, o) == 1 && del && strcmp(del, "true") == 0;
    /* a Cluster that other finalizers still hold is marked deleted, as the
     * API server does, and goes once they are gone; one that nothing
     * holds goes now */
    char now[40];
    time_t secs = (time_t)(host->clock_now(x->self) / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int mark = last && other_finalizers(o, x->fin) && !omcp_being_deleted(host, o);
    const trellis_edit e[2] = {{TRELLIS_EDIT_LIST_REMOVE, "metadata.finalizers", x->fin},
                               {TRELLIS_EDIT_SET, "metadata.deletionTimestamp", now}};
    int rc = host->store_patch(x->self, o, NULL, e, mark ? 2 : 1, x->err, sizeof x->err);
    if (rc == 0 && last && !other_finalizers(o, x->fin))
        rc = host->store_delete(x->self, o, x->err, sizeof x->err);
    if (rc < 0) {
        host->log(x->self, TRELLIS_LOG_ERROR, "%s", x->err);
        x->failed = 1;
    }
    return 0;
}

static int finalize(trellis_plugin *self, const trellis_object *w, trellis_status *st)
{
    const conf *cf = host->get_private(self);
    char fin[OMCP_FINALIZER_MAX], err[512];
    if (omcp_request_finalizer(host, w, fin, sizeof fin) < 0 ||
        omcp_request_left_alone(&cf->c, w, cf->ignore))
        return TRELLIS_SUCCESS; /* it holds nothing of ours, or is not ours */
    release_ctx x = {cf, self, fin, 0, ""};
    host->foreach_object(self, cf->kind, NULL, release_one, &x);
    if (x.failed)
        return host->status(st, TRELLIS_ERROR, "ReleaseFailed",
                            "the request's finalizer could not be removed from every Cluster: "
                            "its own finalizer stays");
    const trellis_edit e = {TRELLIS_EDIT_LIST_REMOVE, "metadata.finalizers",
                            OMCP_REQUEST_FINALIZER};
    if (omcp_being_deleted(host, w) && omcp_has_finalizer(host, w, OMCP_REQUEST_FINALIZER) &&
        host->store_patch(self, w, NULL, &e, 1, err, sizeof err) < 0)
        return host->status(st, TRELLIS_ERROR, "ReleaseFailed", "%s", err);
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, "Namespaced", NULL, err, errlen);
    if (!cf)
        return -1;
    cf->kind = h->arg_string(args, "kind");
    cf->ignore = h->arg_bool(args, "ignore");
    if (h->register_bind(self, bind) < 0 || h->register_finalize(self, finalize) < 0)
        return snprintf(err, errlen, "cannot register hooks"), -1;
    return 0;
}

static const trellis_arg_spec args[] = {
    OMCP_CONFIG_ARG,
    {"kind", TRELLIS_ARG_STRING, "Cluster", "kind of the Clusters"},
    {"ignore", TRELLIS_ARG_BOOL, "true",
     "a request annotated openmcp.cloud/operation: ignore is not released when deleted"},
    {NULL, 0, NULL, NULL}};

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "openmcp-binder",
    "1.0",
    "openMCP: the request's finalizer on its Cluster and status Granted; released on deletion",
    args,
    init,
    NULL};
TRELLIS_PLUGIN_AS(desc, openmcp_binder)
