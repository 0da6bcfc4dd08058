/*
 * openmcp.h - the openMCP cluster scheduler's configuration and rules,
 * shared by the openmcp-* plugins.
 *
 * An operator points every openmcp-* plugin at the configuration they
 * already have, the openMCP operator's YAML with `scheduler:` at its root
 * (scope, strategy, selectors, purposeMappings), as one document argument
 * (`config`, usually given once in the profile's plugin_args). Each plugin
 * loads it in init with omcp_config_load, which checks it as the operator
 * does and names the offending field in its error. The rules every plugin
 * needs (which purposes a Cluster serves, its tenancy count, the request's
 * finalizer, the name of a new Cluster) live here, so that the plugins
 * agree by construction.
 */
#ifndef TRELLIS_PLUGINS_OPENMCP_H
#define TRELLIS_PLUGINS_OPENMCP_H

#include <stddef.h>
#include <stdint.h>

#include "selector.h"
#include "trellis/plugin.h"

/* The finalizer that records a request on its Cluster: prefix + uid. */
#define OMCP_CLUSTER_FINALIZER_PREFIX "request.clusters.openmcp.cloud/"
/* The finalizer the scheduler keeps on a request it answered. */
#define OMCP_REQUEST_FINALIZER "clusters.openmcp.cloud/request"
#define OMCP_DELETE_LABEL "clusters.openmcp.cloud/delete-without-requests"
#define OMCP_RANDOMIZE_LABEL "clusters.openmcp.cloud/randomize-cluster-name"
#define OMCP_OPERATION_ANNOTATION "openmcp.cloud/operation"
/* labels and annotations of a request an Exclusive Cluster inherits */
#define OMCP_METADATA_PREFIX "metadata.open-control-plane.io/"
/* request.clusters.openmcp.cloud/<uid> with room for any uid a request
 * may carry (Kubernetes' are 36 characters); a longer uid is an error */
#define OMCP_FINALIZER_MAX 320
/* Kubernetes' longest object name */
#define OMCP_NAME_MAX 63
/* purposes a configuration may map: one bit each in a Cluster's mask */
#define OMCP_PURPOSES_MAX 64

enum { OMCP_BALANCED = 0, OMCP_SIMPLE, OMCP_RANDOM };

/* The argument every openmcp-* plugin declares. */
#define OMCP_CONFIG_ARG                                                                            \
    {                                                                                              \
        "config", TRELLIS_ARG_DOCUMENT, NULL,                                                      \
            "the openMCP operator's scheduler configuration (YAML with `scheduler:` at its "       \
            "root), "                                                                              \
            "relative to the config file"                                                          \
    }

typedef struct omcp_purpose {
    char *name;
    int exclusive;         /* template.spec.tenancy: Exclusive (1) or Shared (0) */
    int64_t tenancy_count; /* Shared: requests per Cluster, 0 unlimited */
    /* the purpose's selector without the matchLabels keys the global
     * selector also sets (the global value wins, as openMCP merges them);
     * NULL: none */
    selector *local;
    /* the template, borrowed from the document (valid until fini) */
    const trellis_value *labels, *annotations, *spec;
    const char *namespace_, *name_, *generate_name; /* NULL when not set */
} omcp_purpose;

typedef struct omcp_config {
    const trellis_host *h;
    int namespaced;                /* scope: Namespaced (1) or Cluster (0) */
    int strategy;                  /* OMCP_* */
    selector *clusters, *requests; /* selectors.*; NULL: everything */
    omcp_purpose *purposes;        /* in document order */
    size_t n_purposes;
    char *purpose_names; /* "mcp, platform, workload" for messages */
} omcp_config;

/* Load and check the document of argument `config`. default_scope is the
 * scope when the document sets none ("Namespaced", as openMCP's document
 * says, or "Cluster", as its current code defaults). 0, or -1 with err
 * naming the field ("scheduler.purposeMappings[mcp].template.spec.tenancy:
 * required (Exclusive or Shared)"); *c needs omcp_config_free either way. */
int omcp_config_load(const trellis_host *h, const trellis_args *args, const char *default_scope,
                     omcp_config *c, char *err, size_t errlen);
/* The same from the document itself (the fuzz target's way in). */
int omcp_config_parse(const trellis_host *h, const trellis_value *doc, const char *default_scope,
                      omcp_config *c, char *err, size_t errlen);
void omcp_config_free(omcp_config *c);

/* What every openmcp-* plugin's init does first: a zeroed private struct
 * of `size` bytes whose first member is an omcp_config, attached with
 * set_private (freed after fini: `more`, when not NULL, frees what else it
 * holds, then the configuration and the struct go), and the configuration
 * loaded from the argument `config`. The struct, or NULL with err filled. */
void *omcp_plugin_setup(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                        size_t size, const char *default_scope, void (*more)(void *conf), char *err,
                        size_t errlen);

/* The purpose mapped under name, or -1. */
int omcp_purpose_index(const omcp_config *c, const char *name);

/* A request's spec.purpose ("" when absent; borrowed from w). */
const char *omcp_request_purpose(const trellis_host *h, const trellis_object *w);

/* Whether the request's labels match selectors.requests. */
int omcp_request_selected(const omcp_config *c, const trellis_object *w);

/* Whether the scheduler leaves request w alone altogether (openMCP's
 * event filter): annotated openmcp.cloud/operation: ignore (when
 * honour_ignore), or not matching selectors.requests. Such a request is
 * neither placed nor released: another scheduler may own it. */
int omcp_request_left_alone(const omcp_config *c, const trellis_object *w, int honour_ignore);

/* Bit i set when the Cluster serves purpose i: its spec.purposes names
 * it and its labels match selectors.clusters and the purpose's selector. */
uint64_t omcp_cluster_purposes(const omcp_config *c, const trellis_object *cluster);

/* The distinct request uids among a Cluster's finalizers (its tenancy
 * count). */
int64_t omcp_cluster_requests(const trellis_host *h, const trellis_object *cluster);

/* The counter of a request (declare_counters(self, 1, ...)): 1 unless it
 * is bound (the profile's binding field is set) when read. Its sum over a
 * Cluster's requests is the requests assumed on it in this run, whose
 * finalizers are not on the Cluster yet: a Cluster holds its request
 * finalizers plus those (openMCP's tenancy count). One column, so that a
 * hot loop reads one place per Cluster for it. */
void omcp_request_counters(const trellis_host *h, const trellis_plugin *self,
                           const trellis_object *w, int64_t out[1]);

/* The requests a Cluster holds in a run (its tenancy count): the request
 * finalizers on it plus the requests placed on it and not bound when read
 * (assumed in this run), less those of them whose finalizer it carries
 * already (recovered, or created for them: counted by reserve). */
static inline int64_t omcp_held(int64_t finalizers, int64_t assumed, int64_t carried)
{
    return finalizers + assumed - carried;
}

/* Whether cluster already carries request w's finalizer: a request
 * placed on the Cluster it recovered, or that was created for it, is
 * counted there by the finalizer already; a plugin that also counts the
 * requests assumed in this run takes such a one back (reserve). */
int omcp_carries_own(const trellis_host *h, const trellis_object *w, const trellis_object *cluster);

/* Whether the object's metadata.finalizers holds fin. */
int omcp_has_finalizer(const trellis_host *h, const trellis_object *o, const char *fin);

/* Whether metadata.deletionTimestamp is set. */
int omcp_being_deleted(const trellis_host *h, const trellis_object *o);

/* request.clusters.openmcp.cloud/<uid> of request w into buf (len:
 * OMCP_FINALIZER_MAX); -1 when the request has no uid (its finalizer could
 * not be told apart) or one that does not fit. */
int omcp_request_finalizer(const trellis_host *h, const trellis_object *w, char *buf, size_t len);

/* Where a new Cluster for request w of purpose p goes: the template's
 * namespace, else the request's. Borrowed. */
const char *omcp_new_namespace(const omcp_purpose *p, const trellis_host *h,
                               const trellis_object *w);

/* The namespace a Namespaced scope searches for p's Clusters (the same as
 * omcp_new_namespace). */
#define omcp_scope_namespace omcp_new_namespace

/* The name of a new Cluster for request w of purpose p, as openMCP names
 * it: Exclusive and limited Shared purposes get prefix + the first 8
 * base32 characters of SHAKE128("<namespace>/<name>") (prefix: the
 * template's generateName, else "<purpose>-"); unlimited Shared ones the
 * template's generateName hashed the same way, else its name, else the
 * purpose. When the request is labelled randomize-cluster-name "true",
 * a generateName prefix gets a random suffix instead, drawn from seed and
 * the request's uid (replayable). 0, or -1 with err. */
int omcp_new_name(const omcp_purpose *p, const trellis_host *h, const trellis_object *w,
                  uint64_t seed, char *out, size_t len, char *err, size_t errlen);

/* The JSON manifest of a new Cluster named ns/name for request w of
 * purpose p: apiVersion and kind of `like` (the profile's target kind),
 * the template's labels (plus delete-without-requests "true" unless the
 * template sets it) and annotations, an Exclusive purpose's inherited
 * metadata.open-control-plane.io/ labels and annotations of the request,
 * the finalizers fins[0..n_fins) (the request's; those of every request
 * bound to a Cluster created again), and the template's spec with the
 * purpose added to spec.purposes. malloc'd (caller frees), NULL when out of
 * memory. */
char *omcp_cluster_manifest(const omcp_config *c, const omcp_purpose *p, const trellis_object *w,
                            const char *api_version, const char *kind, const char *ns,
                            const char *name, const char *const *fins, size_t n_fins);

/* The template's spec with the purpose in spec.purposes, as a JSON
 * object (malloc'd; NULL when out of memory). */
char *omcp_spec_json(const omcp_config *c, const omcp_purpose *p);

/* o's metadata.finalizers as a JSON list without drop[0..n_drop) and
 * with add (NULL: none) at the end, once; non-strings are left out. The
 * caller frees it; NULL when out of memory. */
char *omcp_finalizers_json(const trellis_host *h, const trellis_object *o, const char *const *drop,
                           size_t n_drop, const char *add);

/* Edits that set the template's labels (with delete-without-requests
 * "true" unless it sets that label) and annotations on an existing
 * Cluster, into e[0..max); paths[i] is the malloc'd path of e[i], which
 * the caller frees after the patch. Their number. */
size_t omcp_template_label_edits(const omcp_config *c, const omcp_purpose *p, trellis_edit *e,
                                 char **paths, size_t max);

/* splitmix64: the draws of the Random strategy and of random names. */
uint64_t omcp_mix(uint64_t x);
/* FNV-1a of a string, to seed a draw with an object's identity. */
uint64_t omcp_hash(const char *s, uint64_t h);

#endif
