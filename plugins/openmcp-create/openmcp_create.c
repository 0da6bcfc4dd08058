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
#include "values.h"
#include "trellis/plugin.h"

static const trellis_host *host;

typedef struct conf {
    omcp_config c;
    uint64_t seed;
    const char *api_version, *kind;
    /* Clusters created again ("ns/name") at the run's clock
     * recreated_at: the other requests bound to one, asked in the same
     * pass (the host reads its clock once a turn), do not create it twice
     * before the store reports it; a later pass finds it in the store, or
     * gone again, to be created again */
    char **recreated;
    size_t n_recreated;
    int64_t recreated_at;
} conf;

static void forget_recreated(conf *cf)
{
    for (size_t i = 0; i < cf->n_recreated; i++)
        free(cf->recreated[i]);
    cf->n_recreated = 0;
}

static void more_free(void *p)
{
    conf *cf = p;
    forget_recreated(cf);
    free(cf->recreated);
}

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

/* The request finalizers on o other than fin: a live request's makes
 * *owner that request; the dead ones go into *dead (malloc'd, the strings
 * borrowed from o; the caller frees it), *n_dead of them. -1 when out of
 * memory. */
static int other_requests(const trellis_plugin *self, const trellis_object *o, const char *fin,
                          const char *kind, const trellis_object **owner, const char ***dead,
                          size_t *n_dead)
{
    static const size_t plen = sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1;
    const trellis_value *f = host->object_get(o, "metadata.finalizers");
    size_t n = f ? host->value_len(f) : 0;
    *owner = NULL;
    *n_dead = 0;
    if (!(*dead = malloc((n ? n : 1) * sizeof **dead)))
        return -1;
    for (size_t i = 0; i < n && !*owner; i++) {
        const char *s = host->value_string(host->value_at(f, i));
        if (!s || strcmp(s, fin) == 0 || strncmp(s, OMCP_CLUSTER_FINALIZER_PREFIX, plen) != 0)
            continue;
        owner_ctx x = {s + plen, NULL};
        host->foreach_object(self, kind, NULL, has_uid, &x);
        if (x.found)
            *owner = x.found;
        else
            (*dead)[(*n_dead)++] = s;
    }
    return 0;
}

/* Dead requests' finalizers removed one list edit each, up to this many;
 * more are written as the whole list (one write, whatever their number:
 * a patch holds at most TRELLIS_EDITS_MAX edits). */
#define DEAD_EDITS 16

/* Take over have, a Cluster of the new Cluster's name that no live
 * request holds: the dead requests' finalizers go, this request's comes,
 * and the spec, labels and annotations become the template's (openMCP
 * updates it so). The request is placed on it once the store reports the
 * update. */
static int take_over(trellis_plugin *self, trellis_cycle *c, const conf *cf, const omcp_purpose *p,
                     const trellis_object *have, const char *fin, const char **dead, size_t n_dead,
                     trellis_status *st)
{
    trellis_edit e[TRELLIS_EDITS_MAX];
    size_t n = 0;
    char err[512];
    char *list = NULL;
    if (n_dead > DEAD_EDITS) {
        if (!(list = omcp_finalizers_json(host, have, dead, n_dead, fin)))
            return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
        e[n++] = (trellis_edit){TRELLIS_EDIT_SET_JSON, "metadata.finalizers", list};
    } else {
        for (size_t i = 0; i < n_dead; i++)
            e[n++] = (trellis_edit){TRELLIS_EDIT_LIST_REMOVE, "metadata.finalizers", dead[i]};
        e[n++] = (trellis_edit){TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", fin};
    }
    char *spec = omcp_spec_json(&cf->c, p);
    if (!spec) {
        free(list);
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    }
    e[n++] = (trellis_edit){TRELLIS_EDIT_SET_JSON, "spec", spec};
    char *paths[TRELLIS_EDITS_MAX];
    size_t np = omcp_template_label_edits(&cf->c, p, e + n, paths, TRELLIS_EDITS_MAX - n);
    n += np;
    int rc = host->store_patch(self, have, NULL, e, n, err, sizeof err);
    for (size_t i = 0; i < np; i++)
        free(paths[i]);
    free(spec);
    free(list);
    const char *ns = host->object_namespace(have), *name = host->object_name(have);
    if (rc < 0)
        return host->status(st, TRELLIS_ERROR, "PatchFailed", "Cluster %s/%s: %s", ns, name, err);
    host->cycle_note(c, self, "took over Cluster %s/%s, which no live request holds", ns, name);
    return host->status(st, TRELLIS_UNSCHEDULABLE, "TakenOver",
                        "Cluster %s/%s exists and no live request holds it: it was given this "
                        "request's finalizer and the template, and the request is placed on it "
                        "once the store reports that",
                        ns, name);
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                       trellis_status *st)
{
    const conf *cf = host->get_private(self);
    const omcp_purpose *p = purpose_of(cf, w);
    char fin[OMCP_FINALIZER_MAX], name[OMCP_NAME_MAX + 1], err[512];
    if (!p || omcp_request_finalizer(host, w, fin, sizeof fin) < 0)
        return TRELLIS_UNSCHEDULABLE; /* openmcp-requests says why */
    if (omcp_new_name(p, host, w, cf->seed, name, sizeof name, err, sizeof err) < 0)
        return host->status(st, TRELLIS_ERROR, "InternalError",
                            "error initializing new cluster: %s", err);
    const char *ns = omcp_new_namespace(p, host, w);
    const trellis_object *have = host->lookup_object(self, cf->kind, ns, name);
    if (have) {
        const trellis_object *owner;
        const char **dead;
        size_t n_dead;
        if (other_requests(self, have, fin, host->object_kind(w), &owner, &dead, &n_dead) < 0)
            return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
        if (!owner) {
            int rc = take_over(self, c, cf, p, have, fin, dead, n_dead, st);
            free(dead);
            return rc;
        }
        free(dead);
        return host->status(st, TRELLIS_ERROR, "ClusterConflict",
                            "cluster '%s/%s' already exists and is used by a different "
                            "ClusterRequest (%s/%s): label the request %s: \"true\" to "
                            "randomize the name and avoid this conflict",
                            ns, name, host->object_namespace(owner), host->object_name(owner),
                            OMCP_RANDOMIZE_LABEL);
    }
    const char *fins[1] = {fin};
    char *json = omcp_cluster_manifest(&cf->c, p, w, cf->api_version, cf->kind, ns, name, fins, 1);
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

typedef struct bound_ctx {
    const char *ns, *name;
    char **fins; /* malloc'd */
    size_t n, cap;
    int oom;
} bound_ctx;

/* Collect the finalizer of every request (not being deleted) bound to the
 * Cluster ns/name. */
static int bound_to(const trellis_object *r, void *ud)
{
    bound_ctx *x = ud;
    const char *n = values_scalar_text(host, host->object_get(r, "status.cluster.name"));
    const char *ns = values_scalar_text(host, host->object_get(r, "status.cluster.namespace"));
    char fin[OMCP_FINALIZER_MAX];
    if (!n || !ns || strcmp(n, x->name) != 0 || strcmp(ns, x->ns) != 0 ||
        omcp_being_deleted(host, r) || omcp_request_finalizer(host, r, fin, sizeof fin) < 0)
        return 0;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 8;
        char **f = realloc(x->fins, cap * sizeof *f);
        if (!f)
            return x->oom = 1;
        x->fins = f;
        x->cap = cap;
    }
    if (!(x->fins[x->n] = values_strdup(fin)))
        return x->oom = 1;
    x->n++;
    return 0;
}

/* A bound request's Cluster is gone: it is created again, same name and
 * namespace, with the finalizers of every request bound to it (once: the
 * other requests bound to it then find it created). */
static int target_lost(trellis_plugin *self, const trellis_object *w, const char *ns,
                       const char *name, trellis_status *st)
{
    conf *cf = host->get_private(self);
    if (omcp_being_deleted(host, w) || host->lookup_object(self, cf->kind, ns, name))
        return TRELLIS_SKIP;
    char key[2 * OMCP_NAME_MAX + 64], err[512];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    int64_t now = host->clock_now(self);
    if (now != cf->recreated_at) { /* an earlier pass's: seen since, or gone again */
        forget_recreated(cf);
        cf->recreated_at = now;
    }
    for (size_t i = 0; i < cf->n_recreated; i++)
        if (strcmp(cf->recreated[i], key) == 0)
            return TRELLIS_SKIP; /* created for another request bound to it */
    const omcp_purpose *p = purpose_of(cf, w);
    if (!p)
        return host->status(st, TRELLIS_ERROR, "UnknownPurpose",
                            "Cluster %s/%s is gone and purpose '%s' has no cluster definition "
                            "to create it again from (purposeMappings has: %s)",
                            ns, name, omcp_request_purpose(host, w), cf->c.purpose_names);
    if (!*ns)
        return host->status(st, TRELLIS_ERROR, "NoNamespace",
                            "Cluster %s is gone and status.cluster.namespace is empty: where to "
                            "create it again is not known",
                            name);
    bound_ctx x = {ns, name, NULL, 0, 0, 0};
    host->foreach_object(self, host->object_kind(w), NULL, bound_to, &x);
    char *json = x.oom ? NULL
                       : omcp_cluster_manifest(&cf->c, p, w, cf->api_version, cf->kind, ns, name,
                                               (const char *const *)x.fins, x.n);
    for (size_t i = 0; i < x.n; i++)
        free(x.fins[i]);
    free(x.fins);
    if (!json)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    int rc = host->store_create(self, json, err, sizeof err);
    free(json);
    if (rc < 0)
        return host->status(st, TRELLIS_ERROR, "CreateFailed", "Cluster %s/%s: %s", ns, name, err);
    char **r = realloc(cf->recreated, (cf->n_recreated + 1) * sizeof *r);
    if (r && (r[cf->n_recreated] = values_strdup(key))) {
        cf->recreated = r;
        cf->n_recreated++;
    } else if (r) {
        cf->recreated = r;
    }
    return host->status(st, TRELLIS_SUCCESS, "Recreated",
                        "Cluster %s/%s was deleted: created again from purpose '%s''s template "
                        "with the finalizers of the %zu request(s) bound to it",
                        ns, name, p->name, x.n);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, "Namespaced", more_free, err, errlen);
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
