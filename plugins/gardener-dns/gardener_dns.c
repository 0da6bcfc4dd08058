/*
 * gardener_dns.c - the gardener-dns plugin: a shoot that needs DNS does not
 * go to a seed that cannot serve it.
 *
 * Two rules, chosen with the `mode` argument. "document" (the scheduler
 * document's): a seed tainted seed.gardener.cloud/disable-dns takes only
 * shoots without spec.dns.domain that use the unmanaged DNS provider (the
 * profile then tells taint-toleration to ignore that taint). "current"
 * (today's Gardener): the taint is left to taint-toleration, and a shoot
 * whose domain lies under some seed's default domain
 * (spec.dns.defaults[].domain) may only go to a seed whose default domain D
 * gives exactly "<shoot>.<project>.<D>". The project is the namespace
 * without "garden-", or (`project = "object"`, current Gardener) the
 * Project whose spec.namespace is the shoot's namespace, read with
 * foreach_object so that a Project change prepares the shoot again; a shoot
 * no Project claims is an error then, as in Gardener. Whether any seed's default domain
 * matches is a question about all seeds, so prepare_workload answers it
 * with the host's foreach_object; prepared data of seeds holds their taint
 * flag and default domains. Default domains, and the one a restricted
 * shoot's domain needs, are interned in prepare (common/intern.h), so the
 * filter compares integers. Rejections are UNRESOLVABLE: evicting shoots
 * changes neither taints nor domains.
 *
 * Queueing hints: a rejected shoot may fit after a seed appears or changes
 * so that it passes. In "current" mode the restriction itself comes from
 * all seeds, so a seed that loses (or takes away, when deleted) a default
 * domain the shoot's domain lies under may lift it.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "gardener.h"
#include "intern.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define DISABLE_DNS_TAINT "seed.gardener.cloud/disable-dns"

typedef struct config {
    int current;        /* mode = "current" */
    int project_object; /* project = "object" */
    intern domains;     /* default domains; written in prepare only */
} config;

/* Prepared data of shoots and seeds alike, because the host hands both to
 * the same release function. */
typedef struct prepared {
    /* shoot, document mode: rejected by seeds with the disable-dns taint */
    int needs_dns;
    /* shoot, current mode: some seed's default domain is a suffix of the
     * domain, so only seeds with the matching default domain fit */
    int restricted;
    char *domain; /* spec.dns.domain */
    char *prefix; /* "<shoot name>.<project>." */
    /* the default domain D with domain == prefix + D, -1 when the domain
     * does not start with the prefix (no seed fits) */
    int32_t wanted;
    /* seed */
    int disable_dns;           /* tainted seed.gardener.cloud/disable-dns */
    gardener_strings defaults; /* spec.dns.defaults[].domain */
    int32_t *default_ids;      /* ... as ids */
} prepared;

static const trellis_arg_spec args_table[] = {
    {"mode", TRELLIS_ARG_STRING, "document",
     "document: the disable-dns taint rejects shoots that need DNS; current: shoots under a "
     "seed default domain go only to seeds with that default domain"},
    {"project", TRELLIS_ARG_STRING, "namespace",
     "namespace: a shoot's project is its namespace without garden-; object (current "
     "Gardener): the Project whose spec.namespace is the shoot's namespace, an error when none"},
    {NULL, 0, NULL, NULL},
};

/* The prepared data of every seed in mode document: whether it has the
 * disable-dns taint is all the filter reads, so seeds share these two
 * records (never freed, never written), which stay in cache. */
static const prepared seed_with_dns = {0};
static const prepared seed_without_dns = {.disable_dns = 1};

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p || p == &seed_with_dns || p == &seed_without_dns)
        return;
    free(p->domain);
    free(p->prefix);
    gardener_strings_clear(&p->defaults);
    free(p->default_ids);
    free(p);
}

static void free_config(void *data)
{
    config *cfg = data;

    if (!cfg)
        return;
    intern_free(&cfg->domains);
    free(cfg);
}

/* The id of the default domain a restricted shoot needs: domain ==
 * prefix + D. -1 when there is none, -2 when out of memory. */
static int32_t wanted_default(intern *domains, const char *domain, const char *prefix)
{
    size_t n = strlen(domain), m = strlen(prefix);
    int32_t id;

    if (n <= m || strncmp(domain, prefix, m) != 0)
        return -1;
    id = intern_id(domains, domain + m);
    return id < 0 ? -2 : id;
}

/* Whether s ends with "." + suffix. */
static int under_domain(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return m > 0 && n > m + 1 && s[n - m - 1] == '.' && strcmp(s + n - m, suffix) == 0;
}

/* A seed's default domains into l. */
static int read_defaults(const trellis_object *seed, gardener_strings *l, char *err, size_t errlen)
{
    static const char field[] = "spec.dns.defaults";
    const trellis_value *v = host->object_get(seed, field);
    int rc = values_expect(host, v, TRELLIS_VALUE_LIST, "a list", field, err, errlen);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < host->value_len(v); i++) {
        const trellis_value *item = host->value_at(v, i);
        const char *d;

        if (host->value_type(item) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s[%zu]: expected a map with domain, got %s", field, i,
                     values_type_name(host->value_type(item)));
            return -1;
        }
        d = values_scalar_text(host, host->value_get(item, "domain"));
        if (!d || d[0] == '\0')
            continue;
        if (gardener_strings_add(l, d) < 0) {
            snprintf(err, errlen, "%s: out of memory", field);
            return -1;
        }
    }
    return 0;
}

/* foreach_object callback: 1 when a seed has a default domain that the
 * shoot domain `ud` lies under. Malformed seeds are skipped here; their own
 * prepare reports them. */
static int seed_matches_domain(const trellis_object *seed, void *ud)
{
    const char *domain = ud;
    const trellis_value *v = host->object_get(seed, "spec.dns.defaults");

    if (!v || host->value_type(v) != TRELLIS_VALUE_LIST)
        return 0;
    for (size_t i = 0; i < host->value_len(v); i++) {
        const trellis_value *item = host->value_at(v, i);
        const char *d;

        if (host->value_type(item) != TRELLIS_VALUE_MAP)
            continue;
        d = values_scalar_text(host, host->value_get(item, "domain"));
        if (d && under_domain(domain, d))
            return 1;
    }
    return 0;
}

/* Whether the shoot uses the unmanaged DNS provider: a provider of type
 * "unmanaged" that is primary, or the only provider, of that type. */
static int uses_unmanaged(const trellis_object *shoot)
{
    const trellis_value *v = host->object_get(shoot, "spec.dns.providers");
    size_t n;

    if (!v || host->value_type(v) != TRELLIS_VALUE_LIST)
        return 0;
    n = host->value_len(v);
    for (size_t i = 0; i < n; i++) {
        const trellis_value *item = host->value_at(v, i);
        const char *type;
        int primary = 0;

        if (host->value_type(item) != TRELLIS_VALUE_MAP)
            continue;
        type = values_scalar_text(host, host->value_get(item, "type"));
        if (!type || strcmp(type, "unmanaged") != 0)
            continue;
        if (n == 1)
            return 1;
        if (host->value_get(item, "primary") &&
            host->value_bool(host->value_get(item, "primary"), &primary) == 0 && primary)
            return 1;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *dv = host->object_get(obj, "spec.dns.domain");
    const char *domain;
    char project[256], prefix[600];
    prepared *p;
    int rc = 0;

    *data = NULL;
    if (values_expect(host, dv, TRELLIS_VALUE_STRING, "a string", "spec.dns.domain", err, errlen) <
        0)
        return -1;
    domain = values_scalar_text(host, dv);
    if (domain && domain[0] == '\0')
        domain = NULL;
    /* current Gardener looks the project up for every shoot, before any
     * seed is considered: a shoot without one is not scheduled */
    if (cfg->project_object)
        rc = gardener_project_object(host, self, host->object_namespace(obj), project,
                                     sizeof(project), err, errlen);
    else
        gardener_project(host->object_namespace(obj), project, sizeof(project));
    if (rc < 0)
        return -1;
    p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!cfg->current) {
        p->needs_dns = domain != NULL || !uses_unmanaged(obj);
    } else if (domain &&
               host->foreach_object(self, "Seed", NULL, seed_matches_domain, (void *)domain)) {
        p->restricted = 1;
        snprintf(prefix, sizeof(prefix), "%s.%s.", host->object_name(obj), project);
        p->domain = values_strdup(domain);
        p->prefix = values_strdup(prefix);
        p->wanted = wanted_default(&cfg->domains, domain, prefix);
        if (!p->domain || !p->prefix || p->wanted == -2) {
            release(self, p);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    *data = p;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    prepared *p;

    *data = NULL;
    if (!cfg->current) {
        const trellis_value *taints = host->object_get(obj, "spec.taints");
        int disable_dns = 0;

        if (taints && host->value_type(taints) == TRELLIS_VALUE_LIST) {
            for (size_t i = 0; i < host->value_len(taints); i++) {
                const trellis_value *t = host->value_at(taints, i);
                const char *key = host->value_type(t) == TRELLIS_VALUE_MAP
                                      ? values_scalar_text(host, host->value_get(t, "key"))
                                      : NULL;

                if (key && strcmp(key, DISABLE_DNS_TAINT) == 0)
                    disable_dns = 1;
            }
        }
        *data = (void *)(disable_dns ? &seed_without_dns : &seed_with_dns);
        return 0;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (read_defaults(obj, &p->defaults, err, errlen) < 0) {
        release(self, p);
        return -1;
    }
    if (p->defaults.n) {
        p->default_ids = calloc(p->defaults.n, sizeof(*p->default_ids));
        for (size_t i = 0; p->default_ids && i < p->defaults.n; i++) {
            p->default_ids[i] = intern_id(&cfg->domains, p->defaults.v[i]);
            if (p->default_ids[i] < 0) {
                free(p->default_ids);
                p->default_ids = NULL;
            }
        }
        if (!p->default_ids) {
            snprintf(err, errlen, "out of memory");
            release(self, p);
            return -1;
        }
    }
    *data = p;
    return 0;
}

/* Whether the seed has a default domain D with domain == prefix + D. */
static int has_default_for(const prepared *seed, const prepared *shoot)
{
    if (!seed || shoot->wanted < 0)
        return 0;
    for (size_t i = 0; i < seed->defaults.n; i++) {
        if (seed->default_ids[i] == shoot->wanted)
            return 1;
    }
    return 0;
}

/* Whether the seed (its prepared data sp) rejects the shoot. */
static int rejects_seed(const prepared *shoot, const prepared *sp)
{
    if (!shoot)
        return 0;
    if (shoot->restricted)
        return !has_default_for(sp, shoot);
    return shoot->needs_dns && sp && sp->disable_dns;
}

static int rejects(const trellis_plugin *self, const prepared *shoot, const trellis_object *seed)
{
    return rejects_seed(shoot, host->object_data(self, seed));
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const prepared *p = host->object_data(self, workload);

    return p && (p->needs_dns || p->restricted) ? TRELLIS_SUCCESS : TRELLIS_SKIP;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const prepared *p = host->object_data(self, workload);

    if (!rejects(self, p, host->target_object(target)))
        return TRELLIS_SUCCESS;
    if (p->restricted)
        host->status(st, TRELLIS_UNRESOLVABLE, "DomainNotSupported",
                     "seed does not support the domain %s", p->domain);
    else
        host->status(st, TRELLIS_UNRESOLVABLE, "DNSDisabled",
                     "seed has DNS disabled (taint " DISABLE_DNS_TAINT ") but the shoot needs DNS");
    return TRELLIS_UNRESOLVABLE;
}

static int batch_rejects(const void *cfg, const void *shoot, const void *seed)
{
    return rejects_seed(shoot, seed);
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const prepared *shoot = host->object_data(self, workload);

    if (shoot)
        trellis_batch_clear_rejected_prepared(host, self, NULL, shoot, targets, n, pass,
                                              batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return rejects(self, host->object_data(self, workload), seed);
}

/* Whether seed (prepared data, may be NULL) has a default domain that the
 * restricted shoot's domain lies under: one of those that restrict it. */
static int restricts(const prepared *seed, const prepared *shoot)
{
    if (!seed || !shoot->restricted)
        return 0;
    for (size_t i = 0; i < seed->defaults.n; i++) {
        if (under_domain(shoot->domain, seed->defaults.v[i]))
            return 1;
    }
    return 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    const prepared *shoot = host->object_data(self, workload);

    if (!shoot)
        return TRELLIS_QUEUE;
    if ((event == TRELLIS_EV_TARGET_UPDATE || event == TRELLIS_EV_TARGET_DELETE) && old_obj &&
        restricts(host->object_data(self, old_obj), shoot) &&
        !(new_obj && restricts(host->object_data(self, new_obj), shoot)))
        return TRELLIS_QUEUE;
    if (event == TRELLIS_EV_TARGET_DELETE)
        return TRELLIS_QUEUE_SKIP;
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Shoots with the same needs get the same verdicts on every seed (SDK 1.3,
 * the host's equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->needs_dns == y->needs_dns && x->restricted == y->restricted &&
           (!x->restricted || x->wanted == y->wanted);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    const char *mode, *project;
    config *cfg;

    host = h;
    mode = h->arg_string(args, "mode");
    if (!mode || (strcmp(mode, "document") != 0 && strcmp(mode, "current") != 0)) {
        snprintf(err, errlen, "mode: expected document or current, got '%s'", mode ? mode : "");
        return -1;
    }
    project = h->arg_string(args, "project");
    if (!project || (strcmp(project, "namespace") != 0 && strcmp(project, "object") != 0)) {
        snprintf(err, errlen, "project: expected namespace or object, got '%s'",
                 project ? project : "");
        return -1;
    }
    if ((strcmp(mode, "current") == 0 || strcmp(project, "object") == 0) &&
        (!TRELLIS_HOST_HAS(h, foreach_object) || !h->foreach_object)) {
        snprintf(err, errlen,
                 "mode %s, project %s: the host has SDK %d.%d; it needs 1.1 "
                 "(foreach_object)",
                 mode, project, h->sdk_major, h->sdk_minor);
        return -1;
    }
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->current = strcmp(mode, "current") == 0;
    cfg->project_object = project && strcmp(project, "object") == 0;
    intern_init(&cfg->domains);
    h->set_private(self, cfg, free_config);
    /* a store that reads only the kinds it is told of must read Projects */
    if (cfg->project_object && TRELLIS_HOST_HAS(h, declare_kinds) && h->declare_kinds) {
        static const char *const kinds[] = {"Project", NULL};
        if (h->declare_kinds(self, kinds) < 0) {
            snprintf(err, errlen, "cannot declare the kind Project");
            return -1;
        }
    }

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self,
                                  TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE |
                                      (cfg->current ? TRELLIS_EV_TARGET_DELETE : 0u),
                                  hint, err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-dns",
    "1.1.0",
    "keeps shoots that need DNS off seeds that cannot serve their domain",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_dns)
