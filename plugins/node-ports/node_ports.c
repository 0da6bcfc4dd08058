/*
 * node_ports.c - the node-ports plugin: kube-scheduler's NodePorts.
 *
 * A Pod that asks for host ports (containers[].ports[].hostPort > 0, and
 * those of its sidecar init containers, restartPolicy Always) fits a Node
 * only when no Pod there holds the same (protocol, port) on a conflicting
 * address, by kube's HostPortInfo rules: an empty hostIP is 0.0.0.0, an
 * empty protocol TCP; 0.0.0.0 conflicts with the same protocol and port on
 * any address, and a specific address with itself and with 0.0.0.0. A
 * conflict is UNSCHEDULABLE: evicting the Pod that holds the port frees
 * it. Pods in phase Succeeded or Failed hold no port.
 *
 * Each Pod's host ports are read once (prepare); a Pod without any skips
 * the filter in pre_filter, so the usual Pod costs nothing. The filter
 * walks the Pods of the Node, which only Pods with host ports pay for.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct host_port {
    char ip[64];   /* "0.0.0.0" when not given */
    char proto[8]; /* TCP, UDP or SCTP */
    int32_t port;  /* 1..65535 */
} host_port;

/* A Pod's host ports; NULL prepared data when it has none and is not
 * terminal. */
typedef struct ports {
    size_t n;
    int terminal; /* phase Succeeded or Failed: holds nothing */
    host_port p[];
} ports;

typedef struct config {
    const char *containers_field; /* host-owned until fini */
    const char *init_containers_field;
    const char *phase_field;
} config;

static const trellis_arg_spec args_table[] = {
    {"containers_field", TRELLIS_ARG_STRING, "spec.containers",
     "dotted path of the workload's containers"},
    {"init_containers_field", TRELLIS_ARG_STRING, "spec.initContainers",
     "dotted path of the workload's init containers (sidecars hold ports)"},
    {"phase_field", TRELLIS_ARG_STRING, "status.phase",
     "dotted path of the workload's phase: Succeeded and Failed hold no port"},
    {NULL, 0, NULL, NULL},
};

/* Add the host ports of the containers in list (at path) to *out. */
static int read_list(const trellis_value *list, const char *path, int sidecars_only, ports **out,
                     size_t *cap, char *err, size_t errlen)
{
    size_t nc = host->value_len(list);

    for (size_t i = 0; i < nc; i++) {
        const trellis_value *c = host->value_at(list, i), *ps, *rp;
        const char *policy;

        if (host->value_type(c) != TRELLIS_VALUE_MAP)
            continue; /* resource plugins name a malformed container */
        if (sidecars_only) {
            rp = host->value_get(c, "restartPolicy");
            policy = rp ? host->value_string(rp) : NULL;
            if (!policy || strcmp(policy, "Always") != 0)
                continue;
        }
        ps = host->value_get(c, "ports");
        for (size_t k = 0; ps && k < host->value_len(ps); k++) {
            const trellis_value *p = host->value_at(ps, k), *hp, *ip, *pr;
            const char *ipt, *prt;
            int64_t port = 0;
            host_port *h;

            hp = host->value_get(p, "hostPort");
            if (!hp || host->value_type(hp) == TRELLIS_VALUE_NULL)
                continue;
            if (host->value_int(hp, &port) < 0 || port < 0 || port > 65535) {
                snprintf(err, errlen,
                         "%s[%zu].ports[%zu].hostPort: expected a port 0-65535, got "
                         "'%s'",
                         path, i, k, host->value_string(hp) ? host->value_string(hp) : "?");
                return -1;
            }
            if (port == 0)
                continue;
            if (!*out || (*out)->n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 4;
                ports *np = realloc(*out, sizeof(**out) + ncap * sizeof(host_port));

                if (!np) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    return -1;
                }
                if (!*out)
                    memset(np, 0, sizeof(*np));
                *out = np;
                *cap = ncap;
            }
            h = &(*out)->p[(*out)->n++];
            memset(h, 0, sizeof(*h)); /* equivalent compares whole entries */
            ip = host->value_get(p, "hostIP");
            pr = host->value_get(p, "protocol");
            ipt = ip ? host->value_string(ip) : NULL;
            prt = pr ? host->value_string(pr) : NULL;
            snprintf(h->ip, sizeof(h->ip), "%s", ipt && *ipt ? ipt : "0.0.0.0");
            snprintf(h->proto, sizeof(h->proto), "%s", prt && *prt ? prt : "TCP");
            h->port = (int32_t)port;
        }
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    const trellis_value *c = host->object_get(obj, cfg->containers_field);
    const trellis_value *ic = host->object_get(obj, cfg->init_containers_field);
    const trellis_value *ph = host->object_get(obj, cfg->phase_field);
    const char *phase = ph ? host->value_string(ph) : NULL;
    int terminal = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    ports *p = NULL;
    size_t cap = 0;

    *data = NULL;
    if ((c && host->value_type(c) == TRELLIS_VALUE_LIST &&
         read_list(c, cfg->containers_field, 0, &p, &cap, err, errlen) < 0) ||
        (ic && host->value_type(ic) == TRELLIS_VALUE_LIST &&
         read_list(ic, cfg->init_containers_field, 1, &p, &cap, err, errlen) < 0)) {
        free(p);
        return -1;
    }
    if (terminal && !p) {
        p = calloc(1, sizeof(*p));
        if (!p) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (p)
        p->terminal = terminal;
    *data = p;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

/* kube's HostPortInfo.CheckConflict of `want` against one port in use. */
static int conflicts(const host_port *want, const host_port *used)
{
    if (want->port != used->port || strcmp(want->proto, used->proto) != 0)
        return 0;
    return strcmp(want->ip, "0.0.0.0") == 0 || strcmp(used->ip, "0.0.0.0") == 0 ||
           strcmp(want->ip, used->ip) == 0;
}

/* The first of want's ports that a Pod on the target holds, NULL when
 * none. */
static const host_port *first_conflict(trellis_plugin *self, const ports *want,
                                       const trellis_target *t)
{
    size_t n = host->target_workload_count(t);

    for (size_t i = 0; i < n; i++) {
        const ports *used = host->object_data(self, host->target_workload(t, i));

        if (!used || used->terminal)
            continue;
        for (size_t a = 0; a < want->n; a++) {
            for (size_t b = 0; b < used->n; b++) {
                if (conflicts(&want->p[a], &used->p[b]))
                    return &want->p[a];
            }
        }
    }
    return NULL;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const ports *p = host->object_data(self, workload);

    return p && p->n ? TRELLIS_SUCCESS : TRELLIS_SKIP;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const ports *p = host->object_data(self, workload);
    const host_port *hp;

    if (!p || !p->n || !(hp = first_conflict(self, p, target)))
        return TRELLIS_SUCCESS;
    return host->status(st, TRELLIS_UNSCHEDULABLE, "NodePortsConflict",
                        "node(s) didn't have free ports for the requested pod ports: %s %s:%d "
                        "is taken",
                        hp->proto, hp->ip, (int)hp->port);
}

/* A rejected Pod may fit once a Pod that held a port goes away. */
static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    const ports *want = host->object_data(self, workload), *gone;

    if (event != TRELLIS_EV_WORKLOAD_GONE || !old_obj || !want)
        return TRELLIS_QUEUE;
    gone = host->object_data(self, old_obj);
    for (size_t a = 0; gone && a < want->n; a++) {
        for (size_t b = 0; b < gone->n; b++) {
            if (conflicts(&want->p[a], &gone->p[b]))
                return TRELLIS_QUEUE;
        }
    }
    return TRELLIS_QUEUE_SKIP;
}

static int same_ports(const ports *x, const ports *y)
{
    size_t nx = x ? x->n : 0, ny = y ? y->n : 0;

    return nx == ny && (nx == 0 || memcmp(x->p, y->p, nx * sizeof(host_port)) == 0);
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    return same_ports(host->object_data(self, a), host->object_data(self, b));
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, free);
    cfg->containers_field = h->arg_string(args, "containers_field");
    cfg->init_containers_field = h->arg_string(args, "init_containers_field");
    cfg->phase_field = h->arg_string(args, "phase_field");
    if (values_check_path("containers_field", cfg->containers_field, err, errlen) < 0 ||
        values_check_path("init_containers_field", cfg->init_containers_field, err, errlen) < 0 ||
        values_check_path("phase_field", cfg->phase_field, err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_WORKLOAD_GONE | TRELLIS_EV_TARGET_ADD, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "node-ports",
    "1.0.0",
    "kube-scheduler's NodePorts: host ports (protocol and hostIP aware) free on the target",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, node_ports)
