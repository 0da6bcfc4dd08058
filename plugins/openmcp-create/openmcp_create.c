/*
 * openmcp_create.c - the openmcp-create plugin: a new Cluster for a
 * ClusterRequest that no existing one fits, and a bound request's Cluster
 * created again when it was deleted.
 *
 * post_filter (nothing fits): the Cluster is named and placed as openMCP
 * does (openmcp.h, omcp_new_name): for Exclusive and limited Shared
 * purposes the template's generateName (else "<purpose>-") plus the hash
 * of the request's namespace/name, a random suffix instead when the
 * request is labelled clusters.openmcp.cloud/randomize-cluster-name:
 * "true"; for unlimited Shared ones the template's generateName hashed,
 * else its name, else the purpose; in the template's namespace, else the
 * request's. It carries the template's labels (with
 * clusters.openmcp.cloud/delete-without-requests: "true" unless the
 * template sets that label) and annotations, an Exclusive purpose's
 * metadata.open-control-plane.io/ labels and annotations of the request,
 * the request's finalizer, and the template's spec with the purpose in
 * spec.purposes. It becomes a target at once, so the request is placed
 * on it in the same run. A Cluster of that name that carries the finalizer
 * of another request that still exists is a conflict (an error that
 * suggests the randomize label); one that carries none is taken over: it
 * is updated from the template and given the request's finalizer, and the
 * request is placed on it once the store reports the update.
 *
 * target_lost (a bound request whose Cluster is gone): the Cluster is
 * created again with the same name and namespace.
 *
 * Arguments: config; seed (random names); api_version and kind of the
 * Clusters it creates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openmcp.h"
#include "trellis/plugin.h"

static const trellis_host *host;

typedef struct conf {
    omcp_config c;
    uint64_t seed;
    const char *api_version, *kind;
} conf;

static const omcp_purpose *purpose_of(const conf *cf, const trellis_object *w)
{
    int k = omcp_purpose_index(&cf->c, omcp_request_purpose(host, w));
    return k < 0 ? NULL : &cf->c.purposes[k];
}

typedef struct owner_ctx {
    const char *uid;
    const trellis_object *found;
} owner_ctx;

static int has_uid(const trellis_object *o, void *ud)
{
    owner_ctx *x = ud;
    if (strcmp(host->object_uid(o), x->uid) == 0) {
        x->found = o;
        return 1;
    }
    return 0;
}

/* The first request finalizer on o other than fin (NULL: none). */
static const char *other_request(const trellis_object *o, const char *fin)
{
    const trellis_value *f = host->object_get(o, "metadata.finalizers");
    for (size_t i = 0; f && i < host->value_len(f); i++) {
        const char *s = host->value_string(host->value_at(f, i));
        if (s && strcmp(s, fin) != 0 &&
            strncmp(s, OMCP_CLUSTER_FINALIZER_PREFIX, sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1) ==
                0)
            return s;
    }
    return NULL;
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       trellis_status *st)
{
    const conf *cf = host->get_private(self);
    const omcp_purpose *p = purpose_of(cf, w);
    char fin[128], name[OMCP_NAME_MAX + 1], err[512];
    if (!p || omcp_request_finalizer(host, w, fin, sizeof fin) < 0)
        return TRELLIS_UNSCHEDULABLE; /* openmcp-requests says why */
    if (omcp_new_name(p, host, w, cf->seed, name, sizeof name, err, sizeof err) < 0)
        return host->status(st, TRELLIS_ERROR, "InternalError",
                            "error initializing new cluster: %s", err);
    const char *ns = omcp_new_namespace(p, host, w);
    const trellis_object *have = host->lookup_object(self, cf->kind, ns, name);
    if (have) {
        const char *other = other_request(have, fin);
        owner_ctx x = {other ? other + sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1 : "", NULL};
        if (other)
            host->foreach_object(self, host->object_kind(w), NULL, has_uid, &x);
        if (x.found)
            return host->status(st, TRELLIS_ERROR, "ClusterConflict",
                                "cluster '%s/%s' already exists and is used by a different "
                                "ClusterRequest (%s/%s): label the request %s: \"true\" to "
                                "randomize the name and avoid this conflict",
                                ns, name, host->object_namespace(x.found),
                                host->object_name(x.found), OMCP_RANDOMIZE_LABEL);
        trellis_edit e[2];
        size_t n = 0;
        if (other)
            e[n++] = (trellis_edit){TRELLIS_EDIT_LIST_REMOVE, "metadata.finalizers", other};
        e[n++] = (trellis_edit){TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", fin};
        if (host->store_patch(self, have, NULL, e, n, err, sizeof err) < 0)
            return host->status(st, TRELLIS_ERROR, "PatchFailed", "Cluster %s/%s: %s", ns, name,
                                err);
        host->cycle_note(c, self, "took over Cluster %s/%s, which no live request holds", ns, name);
        return host->status(st, TRELLIS_UNSCHEDULABLE, "TakenOver",
                            "Cluster %s/%s exists and no live request holds it: it was given "
                            "this request's finalizer, and the request is placed on it once "
                            "the store reports that",
                            ns, name);
    }
    char *json = omcp_cluster_manifest(&cf->c, p, w, cf->api_version, cf->kind, ns, name, fin);
    if (!json)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    int rc = host->create_target(c, self, json, err, sizeof err);
    free(json);
    if (rc < 0)
        return host->status(st, TRELLIS_ERROR, "CreateFailed", "Cluster %s/%s: %s", ns, name, err);
    if (p->exclusive)
        host->cycle_note(c, self, "created Cluster %s/%s for purpose '%s' (Exclusive)", ns, name,
                         p->name);
    else
        host->cycle_note(c, self,
                         "created Cluster %s/%s for purpose '%s' (Shared, %lld requests per "
                         "Cluster%s): no existing Cluster fits",
                         ns, name, p->name, (long long)p->tenancy_count,
                         p->tenancy_count ? "" : " = unlimited");
    return TRELLIS_SUCCESS;
}

static int target_lost(trellis_plugin *self, const trellis_object *w, const char *ns,
                       const char *name, trellis_status *st)
{
    const conf *cf = host->get_private(self);
    if (omcp_being_deleted(host, w) || host->lookup_object(self, cf->kind, ns, name))
        return TRELLIS_SKIP;
    const omcp_purpose *p = purpose_of(cf, w);
    char fin[128], err[512];
    if (!p)
        return host->status(st, TRELLIS_ERROR, "UnknownPurpose",
                            "Cluster %s/%s is gone and purpose '%s' has no cluster definition "
                            "to create it again from (purposeMappings has: %s)",
                            ns, name, omcp_request_purpose(host, w), cf->c.purpose_names);
    if (omcp_request_finalizer(host, w, fin, sizeof fin) < 0)
        return host->status(st, TRELLIS_ERROR, "NoUID", "the request has no metadata.uid");
    char *json = omcp_cluster_manifest(&cf->c, p, w, cf->api_version, cf->kind, ns, name, fin);
    if (!json)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    int rc = host->store_create(self, json, err, sizeof err);
    free(json);
    if (rc < 0)
        return host->status(st, TRELLIS_ERROR, "CreateFailed", "Cluster %s/%s: %s", ns, name, err);
    return host->status(st, TRELLIS_SUCCESS, "Recreated",
                        "Cluster %s/%s was deleted: created again from purpose '%s''s template", ns,
                        name, p->name);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, "Namespaced", NULL, err, errlen);
    if (!cf)
        return -1;
    cf->seed = (uint64_t)h->arg_int(args, "seed");
    cf->api_version = h->arg_string(args, "api_version");
    cf->kind = h->arg_string(args, "kind");
    if (h->register_post_filter(self, post_filter) < 0 ||
        h->register_target_lost(self, target_lost) < 0)
        return snprintf(err, errlen, "cannot register hooks"), -1;
    return 0;
}

static const trellis_arg_spec args[] = {
    OMCP_CONFIG_ARG,
    {"seed", TRELLIS_ARG_INT, "0",
     "the seed of random name suffixes (requests labelled randomize-cluster-name)"},
    {"api_version", TRELLIS_ARG_STRING, "clusters.openmcp.cloud/v1alpha1",
     "apiVersion of the Clusters it creates"},
    {"kind", TRELLIS_ARG_STRING, "Cluster", "kind of the Clusters it creates"},
    {NULL, 0, NULL, NULL}};

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "openmcp-create",
    "1.0",
    "openMCP: a new Cluster from the purpose's template when none fits, and a deleted one again",
    args,
    init,
    NULL};
TRELLIS_PLUGIN_AS(desc, openmcp_create)
