/*
 * resources.h - Kubernetes resource accounting shared by resources-fit and
 * least-allocated.
 *
 * A profile lists the resources it counts ("cpu,memory,pods"); their order
 * gives each one its index in the counters the host keeps per target. This
 * module parses Kubernetes quantities ("100m", "1.5", "512Mi", "1e3") into
 * int64 (cpu in millicores, everything else in plain units, rounded up as
 * Kubernetes does), computes a workload's effective request (containers,
 * init and sidecar containers, overhead) and reads a target's allocatable.
 * Both are done once per object, in prepare; hot paths read the arrays.
 */
#ifndef TRELLIS_PLUGINS_RESOURCES_H
#define TRELLIS_PLUGINS_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

/* The host keeps at most 16 counters per plugin. */
#define RES_MAX 16

/* How a resource is counted and printed. */
typedef enum res_unit {
    RES_UNIT_COUNT = 0, /* pods, GPUs, extended resources: plain integers */
    RES_UNIT_MILLI,     /* cpu: millicores, printed "500m" or "2" */
    RES_UNIT_BYTES      /* memory, storage, hugepages: printed "512Mi" */
} res_unit;

/* Quantity parse results. */
enum {
    RES_OK = 0,
    RES_ESYNTAX = -1,  /* not a quantity */
    RES_ERANGE = -2,   /* does not fit in int64 */
    RES_ENEGATIVE = -3 /* below zero */
};

typedef struct res_config {
    size_t n;
    const char *names[RES_MAX]; /* host-owned argument strings */
    res_unit unit[RES_MAX];
    int pods_index; /* index of "pods", -1 when not counted */
    const char *containers_field;
    const char *init_containers_field;
    const char *overhead_field;
    const char *allocatable_field;
} res_config;

/* A workload's requests or a target's allocatable, by resource index; v
 * holds cfg->n amounts. (Hot loops read targets' allocatable from target
 * values, see res_target_values.) */
typedef struct res_amounts {
    uint32_t has; /* allocatable: bit i set when the target declares resource i */
    uint32_t n;   /* elements of v */
    int64_t v[];
} res_amounts;

/* Whether resource i is declared (allocatable) or counted (requests). */
static inline int res_has(const res_amounts *a, size_t i)
{
    return (int)((a->has >> i) & 1);
}

/* x / d rounded down, for 0 <= x < 2^52, 0 < d and a quotient below
 * 2^20 (a score, an average of scores), given recip = 1.0 / d: the double
 * product is then within far less than one of x / d, so truncating it is
 * off by at most one and one correction step makes it exact. A 64-bit
 * division costs tens of cycles; this costs a multiplication and two
 * compares. */
#define RES_DIV_EXACT (INT64_C(1) << 52)

static inline int64_t res_div(int64_t x, int64_t d, double recip)
{
    int64_t q = (int64_t)((double)x * recip);

    if (q * d > x)
        q--;
    else if ((q + 1) * d <= x)
        q++;
    return q;
}

/* Argument specs common to every plugin built on this module. */
/* clang-format off */
#define RES_FIELD_ARGS                                                       \
    {"containers_field", TRELLIS_ARG_STRING, "spec.containers",              \
     "dotted path of the workload's containers list"},                       \
    {"init_containers_field", TRELLIS_ARG_STRING, "spec.initContainers",     \
     "dotted path of the workload's init containers list"},                  \
    {"overhead_field", TRELLIS_ARG_STRING, "spec.overhead",                  \
     "dotted path of the workload's overhead map"},                          \
    {"allocatable_field", TRELLIS_ARG_STRING, "status.allocatable",          \
     "dotted path of the target's allocatable map"}
/* clang-format on */

/* Read the field arguments and the resource list argument `list_key`.
 * 0, or -1 with err naming the argument. */
int res_config_read(const trellis_host *h, const trellis_args *a, const char *list_key,
                    res_config *cfg, char *err, size_t errlen);

/* Parse a quantity's text into units (unit RES_UNIT_MILLI: thousandths),
 * rounding any fraction up. Returns RES_OK or an RES_E* code. */
int res_quantity_parse(const char *text, res_unit unit, int64_t *out);

/* A quantity as Kubernetes' resource.Quantity holds it, for comparing
 * exactly: any sign and size (a decimal exponent up to 400), its
 * magnitude rounded up to the nano, a binary-suffixed one capped at
 * 2^63 - 1 (ParseQuantity's rules). The value is
 * sign x 0.dig[0]dig[1]...dig[nd-1] x 10^point; zero has sign 0. */
#define RES_EXACT_DIGITS 120
typedef struct res_exact {
    int8_t sign;
    uint8_t nd;
    int16_t point;
    unsigned char dig[RES_EXACT_DIGITS]; /* no trailing zero */
} res_exact;
/* RES_OK, RES_ESYNTAX or RES_ERANGE (an exponent above 400). */
int res_exact_parse(const char *text, res_exact *out);
/* -1, 0 or 1 as a is below, equal to or above b (Quantity.Cmp). */
int res_exact_cmp(const res_exact *a, const res_exact *b);
/* The nearest double (Quantity.AsApproximateFloat64; +-inf beyond). */
double res_exact_approx(const res_exact *q);

/* A workload's effective request per configured resource: the sum over
 * its containers, at least the largest init container (plus the sidecars
 * started before it), plus the overhead; requests default to limits as the
 * API server does. "pods" is always 1. -1 with err naming the field. */
int res_workload_requests(const trellis_host *h, const res_config *cfg, const trellis_object *w,
                          res_amounts *out, char *err, size_t errlen);
/* Both readers fill an `out` with room for cfg->n amounts in v. */

/* A target's allocatable per configured resource (has[i] = 0 when it does
 * not declare it). -1 with err naming the field. */
int res_target_allocatable(const trellis_host *h, const res_config *cfg, const trellis_object *t,
                           res_amounts *out, char *err, size_t errlen);

/* The unit of a resource by its name: cpu in thousandths, memory,
 * storage and hugepages in bytes, anything else a count. */
res_unit res_unit_of(const char *name);

/* A quantity written as text or as a YAML number (`cpu: 2`, `cpu: 0.5`)
 * at path into *out. -1 with err naming path. */
int res_value_quantity(const trellis_host *h, const trellis_value *v, res_unit unit,
                       const char *path, int64_t *out, char *err, size_t errlen);

/* Print an amount the way a manifest would say it ("3800m", "4", "512Mi"). */
void res_format(int64_t v, res_unit unit, char *buf, size_t len);

/* ---- what every plugin built on this module does the same way ----
 *
 * Its configuration is a res_config attached to the plugin instance, its
 * prepared data a res_amounts per workload (requests) and per target
 * (allocatable), and its counters a workload's requests. A hook has no
 * host parameter, so the plugin registers its own small hooks that call
 * these with the host it keeps. */

/* prepare_workload / prepare_target bodies: the amounts of obj into a new
 * res_amounts in *data. -1 with err naming the field. */
int res_prepare_workload(const trellis_host *h, trellis_plugin *self, const trellis_object *obj,
                         void **data, char *err, size_t errlen);
int res_prepare_target(const trellis_host *h, trellis_plugin *self, const trellis_object *obj,
                       void **data, char *err, size_t errlen);

/* The equivalent hook's body (SDK 1.3): workloads a and b request the same
 * amounts (both unreadable counts as the same). */
int res_equivalent(const trellis_host *h, const trellis_plugin *self, const trellis_object *a,
                   const trellis_object *b);

/* The release hook: frees a res_amounts. */
void res_release(trellis_plugin *self, void *data);

/* The counter amounts hook's body: the workload's requests, one pod. */
void res_counter_amounts(const trellis_host *h, trellis_plugin *self,
                         const trellis_object *workload, int64_t *out);

/* The allocated hook's part (SDK 1.5): target's allocatable amounts into
 * allocatable, -1 left where it declares none (what its workloads use is
 * the host's sum of their requests). */
void res_allocatable(const trellis_host *h, trellis_plugin *self, const trellis_object *target,
                     int64_t *allocatable);

/* Name the counters after the resources (cpu, memory, pods, ...) with
 * their units, and fn the allocated hook, on a host that has
 * name_counters (SDK 1.5; an older one shows no amounts). After
 * res_plugin_init; 0, or -1 with err filled. */
int res_name_counters(const trellis_host *h, trellis_plugin *self, trellis_allocated_fn fn,
                      char *err, size_t errlen);

/* The shared part of init: read the configuration with the resource list
 * argument `list_key`, attach it to self, and register the plugin's prepare
 * hooks, res_release and its counters (one per resource, computed by
 * amounts). 0, or -1 with err filled. */
int res_plugin_init(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                    const char *list_key, trellis_prepare_fn prepare_workload,
                    trellis_prepare_fn prepare_target, trellis_amounts_fn amounts, char *err,
                    size_t errlen);

#endif
