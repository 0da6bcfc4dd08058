/*
 * gardener_zones.c - the gardener-zones plugin: current Gardener's zone
 * rules, which the design document does not have.
 *
 * Two steps of Gardener's reconciler (pkg/scheduler/controller/shoot),
 * each switched by an argument:
 *   high_availability  a shoot whose control plane asks for failure
 *       tolerance `zone` (spec.controlPlane.highAvailability.
 *       failureTolerance.type) goes only to seeds with at least three
 *       entries in spec.provider.zones (filterSeedsForZonalShootControlPlanes);
 *   zone_selection  for every other shoot: when spec.controlPlane.zones is
 *       set, the seed's zones must hold all of them; otherwise a seed whose
 *       spec.settings.zoneSelection.mode is Enforce must share at least one
 *       zone with the shoot's worker pools (a shoot without worker zones is
 *       not constrained). Seeds in mode Prefer that share no zone are
 *       passed over when another seed remains (filterSeedsForZoneSelection).
 * The filter does the first two; the Prefer step is a score (100 for a seed
 * Gardener keeps, 0 for a Prefer seed without a shared zone) placed first
 * among the lexicographic scores, so among the feasible seeds the preferred
 * ones win. Gardener takes that preference earlier, before access
 * restrictions, domains, networks, taints, capacity and the strategy: a
 * Prefer seed it passes over there may be the only one those later steps
 * would have kept. doc/gardener.md names this difference.
 *
 * Zone names are interned in prepare (common/intern.h), shoots keep their
 * zones sorted and distinct, so filter and score compare small integer
 * arrays and allocate nothing. Rejections are UNRESOLVABLE: evicting shoots
 * changes no zone.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* Gardener's minimum for a control plane spread over zones. */
#define HA_MIN_ZONES 3

enum { MODE_NONE = 0, MODE_PREFER, MODE_ENFORCE };

typedef struct config {
    int high_availability;
    int zone_selection;
    intern zones; /* zone names; written in prepare only */
} config;

/* Prepared data of shoots and seeds alike (one release function). */
typedef struct prepared {
    /* shoot */
    int ha_zone;   /* failure tolerance type zone */
    int explicit_; /* zones are spec.controlPlane.zones */
    char *listing; /* the zones as Gardener prints them: "[a b]" */
    /* shoot: its zones, sorted, distinct; seed: spec.provider.zones as ids */
    int32_t *ids;
    size_t n_ids;
    /* seed */
    size_t n_zones; /* entries of spec.provider.zones, as Gardener counts */
    int mode;       /* MODE_* */
} prepared;

static const trellis_arg_spec args_table[] = {
    {"high_availability", TRELLIS_ARG_BOOL, "true",
     "a control plane with failure tolerance type zone needs a seed with at least 3 zones"},
    {"zone_selection", TRELLIS_ARG_BOOL, "true",
     "spec.controlPlane.zones must all be seed zones; seeds in zoneSelection mode Enforce must "
     "share a zone with the worker pools; Prefer seeds sharing one score higher"},
    {NULL, 0, NULL, NULL},
};

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    free(p->listing);
    free(p->ids);
    free(p);
}

static void free_config(void *data)
{
    config *cfg = data;

    if (!cfg)
        return;
    intern_free(&cfg->zones);
    free(cfg);
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* Append the ids of the list of zone names v (at `field`) to p->ids. -1
 * with err when it is not a list of strings, or out of memory. */
static int add_zones(config *cfg, const trellis_value *v, const char *field, prepared *p, char *err,
                     size_t errlen)
{
    int rc = values_expect(host, v, TRELLIS_VALUE_LIST, "a list", field, err, errlen);
    size_t n;
    int32_t *ids;

    if (rc <= 0)
        return rc;
    n = host->value_len(v);
    ids = realloc(p->ids, (p->n_ids + n + 1) * sizeof(*ids));
    if (!ids) {
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    p->ids = ids;
    for (size_t i = 0; i < n; i++) {
        const trellis_value *z = host->value_at(v, i);

        if (!z || host->value_type(z) != TRELLIS_VALUE_STRING) {
            snprintf(err, errlen, "%s[%zu]: expected a zone name, got %s", field, i,
                     values_type_name(z ? host->value_type(z) : TRELLIS_VALUE_NULL));
            return -1;
        }
        p->ids[p->n_ids] = intern_id(&cfg->zones, host->value_string(z));
        if (p->ids[p->n_ids++] < 0) {
            snprintf(err, errlen, "%s: out of memory", field);
            return -1;
        }
    }
    return 0;
}

/* Sort the shoot's zone ids and drop repeats (worker pools share zones). */
static void sort_distinct(prepared *p)
{
    size_t k = 0;

    if (!p->n_ids)
        return;
    qsort(p->ids, p->n_ids, sizeof(*p->ids), cmp_id);
    for (size_t i = 1; i < p->n_ids; i++)
        if (p->ids[i] != p->ids[k])
            p->ids[++k] = p->ids[i];
    p->n_ids = k + 1;
}

/* "[a b]", the way Gardener's message prints the requested zones. */
static char *zone_listing(const config *cfg, const prepared *p)
{
    size_t len = 3;
    char *s;

    for (size_t i = 0; i < p->n_ids; i++)
        len += strlen(intern_str(&cfg->zones, p->ids[i])) + 1;
    s = malloc(len);
    if (!s)
        return NULL;
    strcpy(s, "[");
    for (size_t i = 0; i < p->n_ids; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, intern_str(&cfg->zones, p->ids[i]));
    }
    strcat(s, "]");
    return s;
}

/* The shoot's worker pool zones: spec.provider.workers[].zones. */
static int worker_zones(config *cfg, const trellis_object *obj, prepared *p, char *err,
                        size_t errlen)
{
    static const char field[] = "spec.provider.workers";
    const trellis_value *w = host->object_get(obj, field);
    char where[96];
    int rc = values_expect(host, w, TRELLIS_VALUE_LIST, "a list", field, err, errlen);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < host->value_len(w); i++) {
        const trellis_value *pool = host->value_at(w, i);

        if (!pool || host->value_type(pool) != TRELLIS_VALUE_MAP)
            continue;
        snprintf(where, sizeof(where), "%s[%zu].zones", field, i);
        if (add_zones(cfg, host->value_get(pool, "zones"), where, p, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const char *tol = values_scalar_text(
        host, host->object_get(obj, "spec.controlPlane.highAvailability.failureTolerance.type"));
    prepared *p = calloc(1, sizeof(*p));

    *data = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->ha_zone = tol && strcmp(tol, "zone") == 0;
    if (add_zones(cfg, host->object_get(obj, "spec.controlPlane.zones"), "spec.controlPlane.zones",
                  p, err, errlen) < 0)
        goto fail;
    p->explicit_ = p->n_ids > 0;
    if (!p->explicit_ && worker_zones(cfg, obj, p, err, errlen) < 0)
        goto fail;
    /* in the shoot's order, before sorting */
    if (p->explicit_ && !(p->listing = zone_listing(cfg, p))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    sort_distinct(p);
    *data = p;
    return 0;
fail:
    release(self, p);
    return -1;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    static const char mode_field[] = "spec.settings.zoneSelection.mode";
    config *cfg = host->get_private(self);
    const trellis_value *mv = host->object_get(obj, mode_field);
    const char *mode;
    prepared *p = calloc(1, sizeof(*p));

    *data = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (add_zones(cfg, host->object_get(obj, "spec.provider.zones"), "spec.provider.zones", p, err,
                  errlen) < 0 ||
        values_expect(host, mv, TRELLIS_VALUE_STRING, "Prefer or Enforce", mode_field, err,
                      errlen) < 0) {
        release(self, p);
        return -1;
    }
    p->n_zones = p->n_ids;
    mode = values_scalar_text(host, mv);
    if (mode && strcmp(mode, "Prefer") == 0) {
        p->mode = MODE_PREFER;
    } else if (mode && strcmp(mode, "Enforce") == 0) {
        p->mode = MODE_ENFORCE;
    } else if (mode && *mode) {
        snprintf(err, errlen, "%s: expected Prefer or Enforce, got '%s'", mode_field, mode);
        release(self, p);
        return -1;
    }
    *data = p;
    return 0;
}

static int shares_zone(const prepared *seed, const prepared *shoot)
{
    for (size_t i = 0; i < shoot->n_ids; i++)
        if (intern_ids_has(seed->ids, seed->n_ids, shoot->ids[i]))
            return 1;
    return 0;
}

static int holds_all(const prepared *seed, const prepared *shoot)
{
    for (size_t i = 0; i < shoot->n_ids; i++)
        if (!intern_ids_has(seed->ids, seed->n_ids, shoot->ids[i]))
            return 0;
    return 1;
}

enum { OK = 0, TOO_FEW_ZONES, MISSING_ZONES, NO_OVERLAP };

/* Which rule, if any, the seed breaks for the shoot. */
static int verdict(const config *cfg, const prepared *shoot, const prepared *seed)
{
    if (!shoot || !seed)
        return OK;
    if (shoot->ha_zone)
        return cfg->high_availability && seed->n_zones < HA_MIN_ZONES ? TOO_FEW_ZONES : OK;
    if (!cfg->zone_selection || !shoot->n_ids)
        return OK;
    if (shoot->explicit_)
        return holds_all(seed, shoot) ? OK : MISSING_ZONES;
    return seed->mode == MODE_ENFORCE && !shares_zone(seed, shoot) ? NO_OVERLAP : OK;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *p = host->object_data(self, workload);

    if (!p || (p->ha_zone ? !cfg->high_availability : !cfg->zone_selection || !p->n_ids))
        return TRELLIS_SKIP;
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const prepared *shoot = host->object_data(self, workload);

    switch (verdict(host->get_private(self), shoot,
                    host->object_data(self, host->target_object(target)))) {
    case TOO_FEW_ZONES:
        return host->status(st, TRELLIS_UNRESOLVABLE, "TooFewZones",
                            "seed does not have at least %d zones for hosting a shoot control "
                            "plane with failure tolerance type 'zone'",
                            HA_MIN_ZONES);
    case MISSING_ZONES:
        return host->status(st, TRELLIS_UNRESOLVABLE, "ControlPlaneZonesMissing",
                            "seed does not contain all requested control plane zones %s",
                            shoot->listing);
    case NO_OVERLAP:
        return host->status(st, TRELLIS_UNRESOLVABLE, "NoZoneOverlap",
                            "seed has no zone overlap with the shoot's worker pool zones (zone "
                            "selection mode: Enforce)");
    }
    return TRELLIS_SUCCESS;
}

static int batch_rejects(const void *cfg, const void *shoot, const void *seed)
{
    return verdict(cfg, shoot, seed) != OK;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    trellis_batch_clear_rejected_prepared(host, self, host->get_private(self),
                                          host->object_data(self, workload), targets, n, pass,
                                          batch_rejects);
}

/* 100 for a seed Gardener keeps after its Prefer step, 0 for a seed in
 * mode Prefer that shares no zone with the worker pools. */
static int64_t preference(const config *cfg, const prepared *shoot, const prepared *seed)
{
    if (!cfg->zone_selection || !shoot || !seed || shoot->ha_zone || shoot->explicit_ ||
        !shoot->n_ids || seed->mode != MODE_PREFER)
        return 100;
    return shares_zone(seed, shoot) ? 100 : 0;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = preference(host->get_private(self), host->object_data(self, workload),
                      host->object_data(self, host->target_object(target)));
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const prepared *shoot = host->object_data(self, workload);

    for (size_t i = 0; i < n; i++)
        scores[i] =
            preference(cfg, shoot, host->object_data(self, host->target_object(targets[i])));
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return verdict(host->get_private(self), host->object_data(self, workload),
                   host->object_data(self, seed)) != OK;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Shoots with the same zone needs get the same verdicts and scores on
 * every seed (SDK 1.3, the host's equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->ha_zone == y->ha_zone && x->explicit_ == y->explicit_ && x->n_ids == y->n_ids &&
           (!x->n_ids || memcmp(x->ids, y->ids, x->n_ids * sizeof(*x->ids)) == 0);
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
    cfg->high_availability = h->arg_bool(args, "high_availability");
    cfg->zone_selection = h->arg_bool(args, "zone_selection");
    intern_init(&cfg->zones);
    h->set_private(self, cfg, free_config);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_batch(self, score_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-zones",
    "1.0.0",
    "current Gardener's zone rules: zone-tolerant control planes, control plane zones, seed zone "
    "selection",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_zones)
