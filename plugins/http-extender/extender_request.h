/*
 * extender_request.h - the bodies kube-scheduler POSTs to an HTTP
 * extender (k8s.io/kube-scheduler/extender/v1), built from the objects
 * the host hands the plugin.
 *
 * An object goes out as the JSON of its whole tree (the manifest as the
 * store holds it); ExtenderArgs carries the Pod and either the Nodes as
 * a NodeList or only their names (nodeCacheCapable); ExtenderBindingArgs
 * names the Pod and the Node. Strings returned are malloc'd and the
 * caller's; NULL means out of memory (or, for ext_object_json, an object
 * the host cannot show whole).
 */
#ifndef TRELLIS_EXTENDER_REQUEST_H
#define TRELLIS_EXTENDER_REQUEST_H

#include <stddef.h>

#include "trellis/plugin.h"

/* The JSON text of o. Ownership of o is retained by the caller. */
char *ext_object_json(const trellis_host *h, const trellis_object *o);

/* {"pod":POD,"nodes":{"metadata":{},"items":[ITEMS]}} when names is 0
 * (items[i]: a Node's JSON text), {"pod":POD,"nodenames":[ITEMS]} when it
 * is 1 (items[i]: a Node's name, quoted here). *len gets the length.
 * Ownership of pod_json and items is retained by the caller. */
char *ext_args_body(const char *pod_json, const char *const *items, size_t n, int names,
                    size_t *len);

/* {"podName":..,"podNamespace":..,"podUID":..,"node":..}; *len the
 * length. The strings are the caller's. */
char *ext_binding_body(const char *pod_name, const char *pod_namespace, const char *pod_uid,
                       const char *node, size_t *len);

#endif
