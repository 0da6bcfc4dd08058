/*
 * podres.h - a Pod's requests and a Node's allocatable over every resource
 * name, as kube-scheduler computes them.
 *
 * resources.h counts a fixed list of resources; kube-scheduler's
 * NodeResourcesFit checks every resource a Pod requests (extended ones
 * such as nvidia.com/gpu, hugepages-*), so this module reads whole maps:
 * each resource name is interned (intern.h) and an amount list holds
 * (id, amount) pairs. The first ids are always cpu, memory,
 * ephemeral-storage and pods (podres_intern_init), so code may name them
 * by constant. A Pod's requests follow k8s.io/component-helpers
 * resource.PodRequests: the sum over containers, at least the largest init
 * container (plus the sidecars, restartPolicy Always, started before it;
 * sidecars also add to the sum), plus spec.overhead; a container's limit
 * stands for a missing request, as the API server's defaulting makes it.
 * With `nonzero`, a container without a cpu or memory request counts
 * 100m and 200Mi (kube's NonMissingContainerRequests, for scoring only).
 * Everything runs in prepare; hot loops read the lists.
 */
#ifndef TRELLIS_PLUGINS_PODRES_H
#define TRELLIS_PLUGINS_PODRES_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "resources.h"
#include "trellis/plugin.h"

/* Distinct resources in one Pod's requests or one Node's allocatable. */
#define PODRES_MAX 32

/* The ids podres_intern_init gives. */
enum { PODRES_CPU = 0, PODRES_MEMORY, PODRES_EPHEMERAL, PODRES_PODS, PODRES_WELL_KNOWN };

/* kube's defaults for a container without a request (scoring only). */
#define PODRES_DEFAULT_MILLI_CPU 100
#define PODRES_DEFAULT_MEMORY (INT64_C(200) * 1024 * 1024)

typedef struct podres_list {
    uint32_t n;
    int32_t id[PODRES_MAX];
    int64_t v[PODRES_MAX];
} podres_list;

/* Where the fields are. Host-owned strings. */
typedef struct podres_fields {
    const char *containers;
    const char *init_containers;
    const char *overhead;
    const char *allocatable;
    const char *phase;
} podres_fields;

/* What a plugin reading Pods and Nodes this way sets up in init: the
 * resource names interned with cpu, memory, ephemeral-storage and pods
 * first, in this order (their ids are the PODRES_* constants), and the
 * field arguments (RES_FIELD_ARGS and "phase_field") read. 0, or -1 with
 * err. */
int podres_setup(const trellis_host *h, const trellis_args *a, intern *t, podres_fields *f,
                 char *err, size_t errlen);

/* The Pod's requests into *out (see above). -1 with err naming the field. */
int podres_requests(const trellis_host *h, const podres_fields *f, const trellis_object *pod,
                    intern *t, int nonzero, podres_list *out, char *err, size_t errlen);

/* The Node's allocatable into *out. -1 with err naming the field. */
int podres_allocatable(const trellis_host *h, const podres_fields *f, const trellis_object *node,
                       intern *t, podres_list *out, char *err, size_t errlen);

/* Whether the Pod's phase is Succeeded or Failed: it holds no room. */
int podres_terminal(const trellis_host *h, const podres_fields *f, const trellis_object *pod);

/* The amount of id in l, 0 when absent; whether l holds id. */
int64_t podres_get(const podres_list *l, int32_t id);
int podres_has(const podres_list *l, int32_t id);

/* kube's v1helper.IsExtendedResourceName: a name with a domain outside
 * kubernetes.io that is not a quota "requests." name. */
int podres_is_extended(const char *name);
/* kube's IsScalarResourceName: extended, hugepages-*, or kubernetes.io/
 * prefixed (attachable volumes). */
int podres_is_scalar(const char *name);

#endif
