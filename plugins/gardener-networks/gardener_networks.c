/*
 * gardener_networks.c - the gardener-networks plugin: shoot and seed
 * networks must be disjoint.
 *
 * The VPN between a seed and the control planes it hosts needs the shoot's
 * node, pod and service networks to be disjoint from the seed's. The shoot's
 * networks come from spec.networking and status.networking; a shoot
 * without pod or service network gets the seed's shootDefaults for it when
 * the address family is one of the shoot's ipFamilies. Every CIDR is parsed
 * once in prepare (common/gardener_math.c) and a malformed one is reported
 * there with its field. prepare_workload also lists the shoot networks
 * every seed is checked against and the roles for which a seed's default
 * applies, as integer prefixes (gm_net), so the batch filter is a few
 * integer comparisons per seed and allocates nothing; the plain filter,
 * which names the first overlap in the message, walks the networks in
 * their documented order. The `allow_ipv4_overlap` argument gives current
 * Gardener's behaviour, which only rejects IPv6 overlaps. A rejection is
 * UNRESOLVABLE: evicting shoots changes no network. Queueing hints: a
 * rejected shoot may fit after a seed appears or changes whose networks are
 * disjoint from its own.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "gardener_math.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    int allow_ipv4_overlap;
} config;

enum { NODES = 0, PODS, SERVICES, N_ROLES };

static const char *const role_names[N_ROLES] = {"nodes", "pods", "services"};

/* One network: its role, its prefix and its text as written. */
typedef struct network {
    int present;
    int role;
    gm_cidr cidr;
    gm_net net;
    char text[64];
} network;

/* Prepared data of shoots and seeds alike, because the host hands both to
 * the same release function. */
typedef struct prepared {
    /* seed only, for the batch filter: the present ones of spec (first, so
     * the filter reads one or two cache lines of a seed) */
    size_t n_nets;
    gm_net nets[N_ROLES];
    /* shoot only, for the batch filter: the networks checked on every
     * seed (its own and status ones, without IPv4 ones when those may
     * overlap), and the roles (bit 1 << role) it leaves to a seed's default
     * of an address family it uses */
    gm_net *checks;
    size_t n_checks;
    unsigned default_roles;
    int ipv4, ipv6;        /* spec.networking.ipFamilies */
    network spec[N_ROLES]; /* shoot spec.networking / seed spec.networks */
    /* shoot only */
    network *status; /* status.networking.{nodes,pods,services}[] */
    size_t n_status;
    /* seed only: spec.networks.shootDefaults (pods and services) */
    network defaults[N_ROLES];
} prepared;

static const trellis_arg_spec args_table[] = {
    {"allow_ipv4_overlap", TRELLIS_ARG_BOOL, "false",
     "let IPv4 shoot and seed networks overlap (current Gardener rejects only IPv6 overlaps)"},
    {NULL, 0, NULL, NULL},
};

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    free(p->status);
    free(p->checks);
    free(p);
}

/* The CIDR `text` found at `field` into *n. */
static int parse_network(const char *text, const char *field, int role, network *n, char *err,
                         size_t errlen)
{
    memset(n, 0, sizeof(*n));
    if (strlen(text) >= sizeof(n->text) || gm_cidr_parse(text, &n->cidr) < 0) {
        snprintf(err, errlen, "%s: invalid CIDR '%s'", field, text);
        return -1;
    }
    snprintf(n->text, sizeof(n->text), "%s", text);
    gm_net_from_cidr(&n->cidr, &n->net);
    n->role = role;
    n->present = 1;
    return 0;
}

/* An optional CIDR string at `path` of obj. */
static int read_single(const trellis_object *obj, const char *path, int role, network *n, char *err,
                       size_t errlen)
{
    const trellis_value *v = host->object_get(obj, path);
    int rc = values_expect(host, v, TRELLIS_VALUE_STRING, "a CIDR string", path, err, errlen);

    memset(n, 0, sizeof(*n));
    if (rc <= 0)
        return rc;
    if (host->value_string(v)[0] == '\0')
        return 0;
    return parse_network(host->value_string(v), path, role, n, err, errlen);
}

static int add_status(prepared *p, const char *text, const char *field, int role, char *err,
                      size_t errlen)
{
    network *s = realloc(p->status, (p->n_status + 1) * sizeof(*s));

    if (!s) {
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    p->status = s;
    if (parse_network(text, field, role, &s[p->n_status], err, errlen) < 0)
        return -1;
    p->n_status++;
    return 0;
}

/* status.networking.<role>: a list of CIDRs (a single string is taken as a
 * list of one). */
static int read_status(const trellis_object *obj, int role, prepared *p, char *err, size_t errlen)
{
    char path[64], item[96];
    const trellis_value *v;
    trellis_value_type t;

    snprintf(path, sizeof(path), "status.networking.%s", role_names[role]);
    v = host->object_get(obj, path);
    t = v ? host->value_type(v) : TRELLIS_VALUE_NULL;
    if (t == TRELLIS_VALUE_NULL)
        return 0;
    if (t == TRELLIS_VALUE_STRING)
        return add_status(p, host->value_string(v), path, role, err, errlen);
    if (t != TRELLIS_VALUE_LIST) {
        snprintf(err, errlen, "%s: expected a list of CIDRs, got %s", path, values_type_name(t));
        return -1;
    }
    for (size_t i = 0; i < host->value_len(v); i++) {
        const trellis_value *e = host->value_at(v, i);

        snprintf(item, sizeof(item), "%s[%zu]", path, i);
        if (host->value_type(e) != TRELLIS_VALUE_STRING) {
            snprintf(err, errlen, "%s: expected a CIDR string, got %s", item,
                     values_type_name(host->value_type(e)));
            return -1;
        }
        if (add_status(p, host->value_string(e), item, role, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* spec.networking.ipFamilies, ["IPv4"] when absent or empty. */
static int read_families(const trellis_object *obj, prepared *p, char *err, size_t errlen)
{
    static const char path[] = "spec.networking.ipFamilies";
    const trellis_value *v = host->object_get(obj, path);
    int rc = values_expect(host, v, TRELLIS_VALUE_LIST, "a list", path, err, errlen);

    if (rc < 0)
        return -1;
    for (size_t i = 0; rc > 0 && i < host->value_len(v); i++) {
        const char *f = values_scalar_text(host, host->value_at(v, i));

        if (f && strcmp(f, "IPv4") == 0) {
            p->ipv4 = 1;
        } else if (f && strcmp(f, "IPv6") == 0) {
            p->ipv6 = 1;
        } else {
            snprintf(err, errlen, "%s[%zu]: expected IPv4 or IPv6, got '%s'", path, i, f ? f : "");
            return -1;
        }
    }
    if (!p->ipv4 && !p->ipv6)
        p->ipv4 = 1;
    return 0;
}

/* Whether shoot network n is checked at all. */
static int checked(const config *cfg, const gm_net *n)
{
    return !(cfg->allow_ipv4_overlap && n->family == 4);
}

/* The shoot's checks and default_roles (see prepared). */
static int list_checks(const config *cfg, prepared *p)
{
    p->checks = calloc(N_ROLES + p->n_status, sizeof(*p->checks));
    if (!p->checks)
        return -1;
    for (int r = 0; r < N_ROLES; r++) {
        if (!p->spec[r].present)
            p->default_roles |= 1u << r;
        else if (checked(cfg, &p->spec[r].net))
            p->checks[p->n_checks++] = p->spec[r].net;
    }
    for (size_t i = 0; i < p->n_status; i++) {
        if (checked(cfg, &p->status[i].net))
            p->checks[p->n_checks++] = p->status[i].net;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    prepared *p = calloc(1, sizeof(*p));
    char path[64];

    *data = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < N_ROLES; r++) {
        snprintf(path, sizeof(path), "spec.networking.%s", role_names[r]);
        if (read_single(obj, path, r, &p->spec[r], err, errlen) < 0)
            goto fail;
    }
    for (int r = 0; r < N_ROLES; r++) {
        if (read_status(obj, r, p, err, errlen) < 0)
            goto fail;
    }
    if (read_families(obj, p, err, errlen) < 0)
        goto fail;
    if (list_checks(host->get_private(self), p) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    *data = p;
    return 0;
fail:
    release(self, p);
    return -1;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    prepared *p = calloc(1, sizeof(*p));
    char path[64];

    *data = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < N_ROLES; r++) {
        snprintf(path, sizeof(path), "spec.networks.%s", role_names[r]);
        if (read_single(obj, path, r, &p->spec[r], err, errlen) < 0)
            goto fail;
    }
    for (int r = PODS; r <= SERVICES; r++) {
        snprintf(path, sizeof(path), "spec.networks.shootDefaults.%s", role_names[r]);
        if (read_single(obj, path, r, &p->defaults[r], err, errlen) < 0)
            goto fail;
    }
    for (int r = 0; r < N_ROLES; r++) {
        if (p->spec[r].present)
            p->nets[p->n_nets++] = p->spec[r].net;
    }
    *data = p;
    return 0;
fail:
    release(self, p);
    return -1;
}

/* The seed network that s overlaps, or NULL. */
static const network *overlapping(const config *cfg, const network *s, const prepared *seed)
{
    if (cfg->allow_ipv4_overlap && s->cidr.family == 4)
        return NULL;
    for (int r = 0; r < N_ROLES; r++) {
        const network *n = &seed->spec[r];

        if (n->present && gm_net_overlap(&s->net, &n->net))
            return n;
    }
    return NULL;
}

/* The shoot's network of `role` as used on this seed: its own, else the
 * seed's default for shoots when the family is one the shoot uses. */
static const network *effective(const prepared *shoot, const prepared *seed, int role)
{
    const network *d = &seed->defaults[role];

    if (shoot->spec[role].present)
        return &shoot->spec[role];
    if (d->present &&
        ((d->cidr.family == 4 && shoot->ipv4) || (d->cidr.family == 6 && shoot->ipv6)))
        return d;
    return NULL;
}

/* The first overlap of a shoot network (*sn) with a seed network (the
 * return value), shoot networks in the order nodes, pods, services, then
 * the status ones; NULL when the networks are disjoint. */
static const network *first_overlap(const config *cfg, const prepared *shoot, const prepared *seed,
                                    const network **sn)
{
    const network *hit;

    if (!shoot || !seed)
        return NULL;
    for (int r = 0; r < N_ROLES; r++) {
        const network *s = effective(shoot, seed, r);

        if (s && (hit = overlapping(cfg, s, seed))) {
            *sn = s;
            return hit;
        }
    }
    for (size_t i = 0; i < shoot->n_status; i++) {
        if ((hit = overlapping(cfg, &shoot->status[i], seed))) {
            *sn = &shoot->status[i];
            return hit;
        }
    }
    return NULL;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const network *sn = NULL, *hit;

    hit = first_overlap(host->get_private(self), host->object_data(self, workload),
                        host->object_data(self, host->target_object(target)), &sn);
    if (!hit)
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNRESOLVABLE, "NetworksOverlap",
                 "shoot %s network %s overlaps seed %s network %s", role_names[sn->role], sn->text,
                 role_names[hit->role], hit->text);
    return TRELLIS_UNRESOLVABLE;
}

/* Whether n overlaps any of the seed's networks. */
static int hits_seed(const gm_net *n, const prepared *seed)
{
    for (size_t i = 0; i < seed->n_nets; i++) {
        if (gm_net_overlap(n, &seed->nets[i]))
            return 1;
    }
    return 0;
}

/* first_overlap(...) != NULL, from the shoot's precomputed checks. */
static int overlaps(const config *cfg, const prepared *shoot, const prepared *seed)
{
    if (!shoot || !seed)
        return 0;
    for (size_t i = 0; i < shoot->n_checks; i++) {
        if (hits_seed(&shoot->checks[i], seed))
            return 1;
    }
    for (unsigned roles = shoot->default_roles; roles; roles &= roles - 1) {
        const network *d = &seed->defaults[__builtin_ctz(roles)];

        if (d->present &&
            ((d->net.family == 4 && shoot->ipv4) || (d->net.family == 6 && shoot->ipv6)) &&
            checked(cfg, &d->net) && hits_seed(&d->net, seed))
            return 1;
    }
    return 0;
}

static int batch_rejects(const void *cfg, const void *shoot, const void *seed)
{
    return overlaps(cfg, shoot, seed);
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const prepared *shoot = host->object_data(self, workload);

    if (shoot)
        trellis_batch_clear_rejected_prepared(host, self, host->get_private(self), shoot, targets,
                                              n, pass, batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    const network *sn;

    return first_overlap(host->get_private(self), host->object_data(self, workload),
                         host->object_data(self, seed), &sn) != NULL;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

static int same_net(const gm_net *x, const gm_net *y)
{
    return x->hi == y->hi && x->lo == y->lo && x->family == y->family && x->bits == y->bits;
}

static int same_network(const network *x, const network *y)
{
    return x->present == y->present && x->role == y->role && same_net(&x->net, &y->net);
}

/* Shoots with the same networks get the same verdicts on every seed (SDK
 * 1.3, the host's equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    if (x->ipv4 != y->ipv4 || x->ipv6 != y->ipv6 || x->default_roles != y->default_roles ||
        x->n_status != y->n_status || x->n_checks != y->n_checks)
        return 0;
    for (size_t r = 0; r < N_ROLES; r++) {
        if (!same_network(&x->spec[r], &y->spec[r]))
            return 0;
    }
    for (size_t i = 0; i < x->n_status; i++) {
        if (!same_network(&x->status[i], &y->status[i]))
            return 0;
    }
    for (size_t i = 0; i < x->n_checks; i++) {
        if (!same_net(&x->checks[i], &y->checks[i]))
            return 0;
    }
    return 1;
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
    cfg->allow_ipv4_overlap = h->arg_bool(args, "allow_ipv4_overlap");
    h->set_private(self, cfg, free);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-networks",
    "1.1.0",
    "keeps seeds whose networks are disjoint from the shoot's",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_networks)
