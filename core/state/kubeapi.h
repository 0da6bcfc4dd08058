/*
 * kubeapi.h - a client of one Kubernetes API server: its kubeconfig's
 * server and credentials, the resources it serves (found by discovery, as
 * kubectl finds them, or named in the config), and requests and watch
 * streams over httpc.c. What the Kubernetes API store and its Lease
 * election share.
 */
#ifndef TRELLIS_KUBEAPI_H
#define TRELLIS_KUBEAPI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cfg.h"
#include "httpc.h"

typedef struct kubeapi kubeapi;
/* How many requests a client makes at once: the API server answers each
 * write after its own etcd commit, so writes go side by side. */
#define KUBEAPI_CONNS 32

/* How a kind is bound through its binding subresource. */
enum {
    KUBE_BINDING_NONE = 0,
    KUBE_BINDING_OBJECT, /* POST a Binding (core/v1 pods/binding) */
    KUBE_BINDING_PATCH,  /* a patch of the kind itself (Gardener's shoots/binding) */
};

/* Where the API serves a kind; owned by the client, valid while it lives. */
typedef struct kube_resource {
    char *kind;
    char *group;       /* "" for the core group */
    char *version;     /* "v1" */
    char *api_version; /* "v1", "apps/v1" */
    char *plural;      /* "pods" */
    int namespaced;
    int has_status; /* a status subresource */
    int binding;    /* KUBE_BINDING_* */
    int preferred;  /* from the group's preferred version, or named in the config */
    int configured; /* named in store.resources */
} kube_resource;

/* A client of the server sc's kubeconfig names. NULL with err (the
 * kubeconfig cannot be read). Nothing is asked of the server yet. */
kubeapi *kubeapi_new(const cfg_store *sc, char *err, size_t errlen);
void kubeapi_free(kubeapi *k);
/* The server's URL, for messages; borrowed. */
const char *kubeapi_server(const kubeapi *k);
uint32_t kubeapi_timeout_ms(const kubeapi *k);

/* The resource that serves kind in api_version (NULL: the one to read the
 * kind through: store.resources, else the core group, else the only
 * group serving it). Discovery runs on first use and again, at most every
 * few seconds, when a kind is not found (a CRD created meanwhile). NULL
 * with err: unknown, ambiguous, or the server cannot be asked. Any
 * thread. */
const kube_resource *kubeapi_resource(kubeapi *k, const char *api_version, const char *kind,
                                      char *err, size_t errlen);
/* The path of r: its collection in ns (NULL or "": every namespace, or
 * the kind is cluster-scoped), one object (name), a subresource (sub).
 * A new string. */
char *kubeapi_path(const kube_resource *r, const char *ns, const char *name, const char *sub);

/* One request to path (with its query) with body (NULL: none) of
 * content_type (NULL: JSON). *reply: the reply's JSON (NULL when it is
 * none; ownership transfers), *status its HTTP status. HTTPC_* as
 * httpc_request, err saying why when not answered. Any thread. */
int kubeapi_call(kubeapi *k, const char *method, const char *path, const char *body,
                 const char *content_type, long *status, json_object **reply, char *err,
                 size_t errlen);
/* A watch stream (GET path); as httpc_stream. */
int kubeapi_stream(kubeapi *k, const char *path, uint32_t idle_ms, atomic_int *stop,
                   httpc_line_fn line, void *ud, long *status, char *err, size_t errlen);

/* A watch event's type. */
enum {
    KUBE_EV_ADDED = 1,
    KUBE_EV_MODIFIED,
    KUBE_EV_DELETED,
    KUBE_EV_BOOKMARK,
    KUBE_EV_ERROR, /* obj is a Status */
};
/* One line of a watch stream ({"type": ..., "object": {...}}): its type
 * and object (a new reference). 0, or -1 with err. */
int kubeapi_parse_event(const char *text, size_t len, int *type, json_object **obj, char *err,
                        size_t errlen);

/* The message of a Status reply, or what there is; borrowed from reply
 * (a fallback text when there is none). */
const char *kubeapi_message(json_object *reply);

#endif
