/*
 * extender_request.h - the bodies kube-scheduler POSTs to an HTTP
 * extender (k8s.io/kube-scheduler/extender/v1), built from the objects
 * the host hands the plugin.
 *
 * The types of extender/v1 have no json tags, so kube-scheduler's
 * json.Marshal names their fields as Go does ("Pod", "NodeNames",
 * "NumPDBViolations", ...), writes every field (the one not in use as
 * null) and a map's keys sorted; the bodies here are written the same
 * way. (The lower camelCase keys of the scheduler API before Kubernetes
 * 1.17 are not sent; Go extenders match keys without regard to case
 * and read both.) An object goes out as the JSON of its whole tree (the
 * manifest as the store holds it, with its own API keys); ExtenderArgs
 * carries the Pod and either the Nodes as a NodeList or only their names
 * (nodeCacheCapable); ExtenderPreemptionArgs carries the Pod and, per
 * candidate Node, its victims (the Pods, or only their UIDs when
 * nodeCacheCapable) and budget violations; ExtenderBindingArgs names the
 * Pod and the Node. Strings returned are malloc'd and the caller's; NULL
 * means out of memory (or, for ext_object_json, an object the host cannot
 * show whole).
 */
#ifndef TRELLIS_EXTENDER_REQUEST_H
#define TRELLIS_EXTENDER_REQUEST_H

#include <stddef.h>

#include "trellis/plugin.h"

/* The JSON text of o. Ownership of o is retained by the caller. */
char *ext_object_json(const trellis_host *h, const trellis_object *o);

/* {"Pod":POD,"Nodes":{"metadata":{},"items":[ITEMS]},"NodeNames":null}
 * when names is 0 (items[i]: a Node's JSON text),
 * {"Pod":POD,"Nodes":null,"NodeNames":[ITEMS]} when it is 1 (items[i]: a
 * Node's name, quoted here). *len gets the length.
 * Ownership of pod_json and items is retained by the caller. */
char *ext_args_body(const char *pod_json, const char *const *items, size_t n, int names,
                    size_t *len);

/* One candidate Node of a preemption: its victims, as Pods' JSON texts
 * (NodeNameToVictims) or as UIDs (NodeNameToMetaVictims). */
typedef struct ext_victims {
    const char *node;
    const char *const *pods;
    size_t n_pods;
    int64_t pdb_violations;
} ext_victims;

/* ExtenderPreemptionArgs: {"Pod":POD,"NodeNameToVictims":{NODE:{"Pods":
 * [POD,...],"NumPDBViolations":N},...},"NodeNameToMetaVictims":null} when
 * meta is 0 (pods[i]: a Pod's JSON text), {"Pod":POD,"NodeNameToVictims":
 * null,"NodeNameToMetaVictims":{NODE:{"Pods":[{"UID":UID},...],
 * "NumPDBViolations":N},...}} when it is 1 (pods[i]: a UID, quoted here);
 * the Nodes sorted by name, as Go writes a map. *len the length; NULL when
 * out of memory. Ownership of pod_json and v is retained by the caller. */
char *ext_preemption_body(const char *pod_json, const ext_victims *v, size_t n, int meta,
                          size_t *len);

/* {"PodName":..,"PodNamespace":..,"PodUID":..,"Node":..}; *len the
 * length. The strings are the caller's. */
char *ext_binding_body(const char *pod_name, const char *pod_namespace, const char *pod_uid,
                       const char *node, size_t *len);

#endif
