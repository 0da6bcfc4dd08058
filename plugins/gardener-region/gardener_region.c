/*
 * gardener_region.c - the gardener-region plugin: Gardener's candidate
 * determination strategies, as a filter and a score.
 *
 * The strategy is the `strategy` argument, or the one Gardener's own
 * SchedulerConfiguration file names (argument `config`, usually given once
 * in the profile's plugin_args; common/gardener_config.c), else SameRegion.
 * SameRegion keeps the seeds with the shoot's
 * provider type and region; a shoot with purpose "testing" only needs the
 * provider type. MinimalDistance filters nothing and scores each seed by
 * its distance to the shoot's region: an explicit distance from the
 * `distances` argument, else one from the region ConfigMap of the shoot's
 * CloudProfile (label scheduling.gardener.cloud/purpose=region-config,
 * annotation scheduling.gardener.cloud/cloudprofiles), else Gardener's
 * Levenshtein formula (common/gardener_math.c). Seeds with a table distance
 * always beat seeds without one, which the raw score encodes by putting the
 * formula's distances above 2^32; normalize gives the nearest seeds 100 and
 * every other seed less, so the lexicographic score mode keeps exactly the
 * seeds at minimal distance. Provider types and regions are interned
 * (common/intern.h) in prepare, so the filter compares integers; the
 * shoot's distance table is built in prepare with region ids, and with
 * MinimalDistance the formula's distance between every two regions the
 * plugin has seen is computed once, when the second of them first appears,
 * so score looks distances up and allocates nothing. Queueing hints: a
 * rejected shoot may fit after a seed appears or changes so that it passes
 * the filter; the region ConfigMaps only move scores, so their changes undo
 * no rejection.
 */
/* the oldest host it runs on: SDK 1.4, for the document argument `config`
 * (newer functions than 1.0 it calls it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 4

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "gardener.h"
#include "gardener_config.h"
#include "gardener_math.h"
#include "intern.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define PURPOSE_LABEL "scheduling.gardener.cloud/purpose"
#define PURPOSE_REGION_CONFIG "region-config"
#define CLOUDPROFILES_ANNOTATION "scheduling.gardener.cloud/cloudprofiles"

/* Raw scores of seeds without a table distance start here. */
#define FORMULA_BASE ((int64_t)1 << 32)
/* Table distances stay below FORMULA_BASE. */
#define MAX_TABLE_DISTANCE ((int64_t)1 << 31)

/* One explicit distance from the `distances` argument. */
typedef struct explicit_distance {
    char *shoot_region;
    char *seed_region;
    int64_t dist;
} explicit_distance;

typedef struct config {
    int minimal_distance; /* strategy = "MinimalDistance" */
    explicit_distance *distances;
    size_t n_distances;
    int region_config;
    const char *region_config_namespace; /* host-owned */
    /* written in prepare only (main thread), read in filter and score */
    intern providers;
    intern regions;
    /* MinimalDistance: the formula's distance between regions a and b at
     * formula[a * formula_cap + b], for every a, b below formula_n; -1 when
     * a region is too long for the formula (such a region is never a
     * shoot's or a seed's: prepare refuses it) */
    int64_t *formula;
    uint32_t formula_n, formula_cap;
} config;

/* One entry of a shoot's distance table: seed region -> distance. */
typedef struct table_entry {
    char *region;
    int32_t region_id;
    int64_t dist;
} table_entry;

/* Prepared data of shoots and seeds alike, because the host hands both to
 * the same release function. */
typedef struct prepared {
    char *provider; /* spec.provider.type, "" when absent */
    char *region;   /* shoot spec.region / seed spec.provider.region */
    int32_t provider_id, region_id;
    /* shoot only */
    int testing;        /* spec.purpose == "testing" */
    table_entry *table; /* distances from the shoot's region */
    size_t n_table;
} prepared;

static const trellis_arg_spec args_table[] = {
    {"strategy", TRELLIS_ARG_STRING, "",
     "SameRegion: same provider and region; MinimalDistance: score by region distance; empty: "
     "the one `config` names, else SameRegion"},
    GARDENER_CONFIG_ARG,
    {"distances", TRELLIS_ARG_STRING_LIST, "",
     "explicit distances \"shootRegion:seedRegion=N\"; they win over the region ConfigMap"},
    {"region_config", TRELLIS_ARG_BOOL, "true",
     "read distances from the region ConfigMap of the shoot's CloudProfile"},
    {"region_config_namespace", TRELLIS_ARG_STRING, "garden", "namespace of the region ConfigMaps"},
    {NULL, 0, NULL, NULL},
};

/* ---- configuration ----------------------------------------------------- */

static void free_config(void *data)
{
    config *cfg = data;

    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_distances; i++) {
        free(cfg->distances[i].shoot_region);
        free(cfg->distances[i].seed_region);
    }
    free(cfg->distances);
    intern_free(&cfg->providers);
    intern_free(&cfg->regions);
    free(cfg->formula);
    free(cfg);
}

/* Give every region interned since the last call its formula distances to
 * all regions (MinimalDistance only). -1 when out of memory. */
static int update_formula(config *cfg)
{
    uint32_t n = intern_count(&cfg->regions);

    if (!cfg->minimal_distance || n == cfg->formula_n)
        return 0;
    if (n > cfg->formula_cap) {
        uint32_t cap = cfg->formula_cap ? cfg->formula_cap : 16;
        int64_t *m;

        while (cap < n)
            cap *= 2;
        m = malloc((size_t)cap * cap * sizeof(*m));
        if (!m)
            return -1;
        for (uint32_t a = 0; a < cfg->formula_n; a++)
            memcpy(&m[(size_t)a * cap], &cfg->formula[(size_t)a * cfg->formula_cap],
                   cfg->formula_n * sizeof(*m));
        free(cfg->formula);
        cfg->formula = m;
        cfg->formula_cap = cap;
    }
    for (uint32_t b = cfg->formula_n; b < n; b++) {
        for (uint32_t a = 0; a <= b; a++) {
            int64_t d = gm_region_distance(intern_str(&cfg->regions, (int32_t)a),
                                           intern_str(&cfg->regions, (int32_t)b));

            cfg->formula[(size_t)a * cfg->formula_cap + b] = d;
            cfg->formula[(size_t)b * cfg->formula_cap + a] = d;
        }
    }
    cfg->formula_n = n;
    return 0;
}

/* Digits only, below `limit`. */
static int parse_distance(const char *s, size_t n, int64_t limit, int64_t *out)
{
    int64_t v = 0;

    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v >= limit)
            return -1;
    }
    *out = v;
    return 0;
}

static char *copy_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* "shootRegion:seedRegion=N" into d. */
static int parse_explicit(const char *text, explicit_distance *d)
{
    const char *colon = strchr(text, ':');
    const char *eq = strrchr(text, '=');

    memset(d, 0, sizeof(*d));
    if (!colon || !eq || colon == text || eq < colon + 2 ||
        parse_distance(eq + 1, strlen(eq + 1), MAX_TABLE_DISTANCE, &d->dist) < 0)
        return -1;
    d->shoot_region = copy_n(text, (size_t)(colon - text));
    d->seed_region = copy_n(colon + 1, (size_t)(eq - colon - 1));
    if (!d->shoot_region || !d->seed_region) {
        free(d->shoot_region);
        free(d->seed_region);
        return -1;
    }
    return 0;
}

/* ---- prepared data ----------------------------------------------------- */

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    free(p->provider);
    free(p->region);
    for (size_t i = 0; i < p->n_table; i++)
        free(p->table[i].region);
    free(p->table);
    free(p);
}

/* A string field (absent: "") copied into *out. */
static int read_string(const trellis_object *obj, const char *path, char **out, char *err,
                       size_t errlen)
{
    const trellis_value *v = host->object_get(obj, path);
    const char *text;

    if (values_expect(host, v, TRELLIS_VALUE_STRING, "a string", path, err, errlen) < 0)
        return -1;
    text = values_scalar_text(host, v);
    *out = values_strdup(text ? text : "");
    if (!*out) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

/* Provider and region of a shoot or seed, interned. */
static prepared *prepare_common(config *cfg, const trellis_object *obj, const char *region_path,
                                char *err, size_t errlen)
{
    prepared *p = calloc(1, sizeof(*p));

    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (read_string(obj, "spec.provider.type", &p->provider, err, errlen) < 0 ||
        read_string(obj, region_path, &p->region, err, errlen) < 0)
        goto fail;
    if (strlen(p->region) > GM_REGION_MAX) {
        snprintf(err, errlen, "%s: longer than %d characters", region_path, GM_REGION_MAX);
        goto fail;
    }
    p->provider_id = intern_id(&cfg->providers, p->provider);
    p->region_id = intern_id(&cfg->regions, p->region);
    if (p->provider_id < 0 || p->region_id < 0 || update_formula(cfg) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    return p;
fail:
    release(NULL, p);
    return NULL;
}

static int table_has(const prepared *p, const char *region)
{
    for (size_t i = 0; i < p->n_table; i++) {
        if (strcmp(p->table[i].region, region) == 0)
            return 1;
    }
    return 0;
}

/* Add region -> dist unless the table has the region already (explicit
 * distances come first and win). n is the length of region. */
static int table_add(config *cfg, prepared *p, const char *region, size_t n, int64_t dist)
{
    table_entry *t;
    char *copy = copy_n(region, n);
    int32_t id;

    if (!copy)
        return -1;
    if (table_has(p, copy)) {
        free(copy);
        return 0;
    }
    id = intern_id(&cfg->regions, copy);
    t = id < 0 || update_formula(cfg) < 0 ? NULL : realloc(p->table, (p->n_table + 1) * sizeof(*t));
    if (!t) {
        free(copy);
        return -1;
    }
    p->table = t;
    t[p->n_table].region = copy;
    t[p->n_table].region_id = id;
    t[p->n_table].dist = dist;
    p->n_table++;
    return 0;
}

/* Whether the comma-separated list holds name (spaces around items are
 * ignored). */
static int list_contains(const char *list, const char *name)
{
    size_t n = strlen(name);

    while (*list) {
        const char *end = strchr(list, ',');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        const char *s = list;

        while (len && (*s == ' ' || *s == '\t')) {
            s++;
            len--;
        }
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        if (!end)
            break;
        list = end + 1;
    }
    return 0;
}

/* foreach_object state: the region ConfigMap with the smallest name. */
typedef struct find_config {
    const char *cloud_profile;
    const trellis_object *best;
} find_config;

static int consider_config_map(const trellis_object *o, void *ud)
{
    find_config *f = ud;
    const char *purpose = host->object_label(o, PURPOSE_LABEL);
    const char *profiles = host->object_annotation(o, CLOUDPROFILES_ANNOTATION);

    if (!purpose || strcmp(purpose, PURPOSE_REGION_CONFIG) != 0 || !profiles ||
        !list_contains(profiles, f->cloud_profile))
        return 0;
    if (!f->best || strcmp(host->object_name(o), host->object_name(f->best)) < 0)
        f->best = o;
    return 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
        (*n)--;
}

/* The YAML text of data[<shoot region>]: "seedRegion: N" lines, blank lines
 * and comments allowed. */
static int parse_region_lines(config *cfg, prepared *p, const char *text, const char *where,
                              char *err, size_t errlen)
{
    int line = 0;

    while (*text) {
        const char *end = strchr(text, '\n');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        const char *s = text, *colon, *hash, *val, *whole;
        size_t klen, vlen;
        int64_t dist;

        line++;
        text = end ? end + 1 : text + len;
        trim(&s, &len);
        if (len == 0 || s[0] == '#' || (len == 3 && strncmp(s, "---", 3) == 0))
            continue;
        whole = s;
        colon = memchr(s, ':', len);
        if (!colon)
            goto bad;
        klen = (size_t)(colon - s);
        val = colon + 1;
        vlen = len - klen - 1;
        hash = memchr(val, '#', vlen);
        if (hash)
            vlen = (size_t)(hash - val);
        trim(&s, &klen);
        trim(&val, &vlen);
        if (klen >= 2 && (s[0] == '"' || s[0] == '\'') && s[klen - 1] == s[0]) {
            s++;
            klen -= 2;
        }
        if (klen == 0 || parse_distance(val, vlen, MAX_TABLE_DISTANCE, &dist) < 0)
            goto bad;
        if (table_add(cfg, p, s, klen, dist) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        continue;
    bad:
        snprintf(err, errlen, "%s line %d: expected 'region: distance', got '%.*s'", where, line,
                 (int)(len > 60 ? 60 : len), whole);
        return -1;
    }
    return 0;
}

/* The shoot's distance table: explicit distances, then the region
 * ConfigMap of its CloudProfile, and its own region at 0 when the table has
 * anything but not that. */
static int build_table(config *cfg, trellis_plugin *self, const trellis_object *shoot, prepared *p,
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < cfg->n_distances; i++) {
        const explicit_distance *d = &cfg->distances[i];

        if (strcmp(d->shoot_region, p->region) == 0 &&
            table_add(cfg, p, d->seed_region, strlen(d->seed_region), d->dist) < 0)
            goto nomem;
    }
    if (cfg->region_config) {
        find_config f = {gardener_cloud_profile_name(host, shoot), NULL};

        if (f.cloud_profile)
            host->foreach_object(self, "ConfigMap", cfg->region_config_namespace,
                                 consider_config_map, &f);
        if (f.best) {
            const trellis_value *data = host->object_get(f.best, "data");
            const trellis_value *v = data && host->value_type(data) == TRELLIS_VALUE_MAP
                                         ? host->value_get(data, p->region)
                                         : NULL;
            char where[300];

            snprintf(where, sizeof(where), "ConfigMap %s/%s: data[\"%s\"]",
                     host->object_namespace(f.best), host->object_name(f.best), p->region);
            if (v && host->value_type(v) != TRELLIS_VALUE_NULL) {
                const char *text =
                    host->value_type(v) == TRELLIS_VALUE_STRING ? host->value_string(v) : NULL;

                if (!text) {
                    snprintf(err, errlen, "%s: expected a string, got %s", where,
                             values_type_name(host->value_type(v)));
                    return -1;
                }
                if (parse_region_lines(cfg, p, text, where, err, errlen) < 0)
                    return -1;
            }
        }
    }
    if (p->n_table && table_add(cfg, p, p->region, strlen(p->region), 0) < 0)
        goto nomem;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    const char *purpose;
    prepared *p;

    *data = NULL;
    p = prepare_common(cfg, obj, "spec.region", err, errlen);
    if (!p)
        return -1;
    purpose = values_scalar_text(host, host->object_get(obj, "spec.purpose"));
    p->testing = purpose && strcmp(purpose, "testing") == 0;
    if (cfg->minimal_distance && !p->testing && build_table(cfg, self, obj, p, err, errlen) < 0) {
        release(self, p);
        return -1;
    }
    *data = p;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    *data = prepare_common(host->get_private(self), obj, "spec.provider.region", err, errlen);
    return *data ? 0 : -1;
}

/* ---- filter ------------------------------------------------------------ */

enum { FIT = 0, PROVIDER_MISMATCH, REGION_MISMATCH };

static int check(const config *cfg, const prepared *shoot, const prepared *seed)
{
    if (!shoot || !seed)
        return FIT;
    if (!shoot->testing && cfg->minimal_distance)
        return FIT;
    if (seed->provider_id != shoot->provider_id)
        return PROVIDER_MISMATCH;
    if (!shoot->testing && seed->region_id != shoot->region_id)
        return REGION_MISMATCH;
    return FIT;
}

static const prepared *seed_data(const trellis_plugin *self, const trellis_target *t)
{
    return host->object_data(self, host->target_object(t));
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *p = host->object_data(self, workload);

    return cfg->minimal_distance && p && !p->testing ? TRELLIS_SKIP : TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *shoot = host->object_data(self, workload);
    const prepared *seed = seed_data(self, target);

    switch (check(cfg, shoot, seed)) {
    case PROVIDER_MISMATCH:
        host->status(st, TRELLIS_UNRESOLVABLE, "ProviderMismatch",
                     "seed provider %s differs from the shoot's %s", seed->provider,
                     shoot->provider);
        return TRELLIS_UNRESOLVABLE;
    case REGION_MISMATCH:
        host->status(st, TRELLIS_UNRESOLVABLE, "RegionMismatch",
                     "seed region %s differs from the shoot's region %s", seed->region,
                     shoot->region);
        return TRELLIS_UNRESOLVABLE;
    }
    return TRELLIS_SUCCESS;
}

static int batch_rejects(const void *cfg, const void *shoot, const void *seed)
{
    return check(cfg, shoot, seed) != FIT;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const config *cfg = host->get_private(self);
    const prepared *shoot = host->object_data(self, workload);

    if (shoot && (shoot->testing || !cfg->minimal_distance))
        trellis_batch_clear_rejected_prepared(host, self, cfg, shoot, targets, n, pass,
                                              batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return check(host->get_private(self), host->object_data(self, workload),
                 host->object_data(self, seed)) != FIT;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* ---- score ------------------------------------------------------------- */

/* Smaller is nearer: a table distance, or FORMULA_BASE plus Gardener's
 * formula (2 * Levenshtein of the bases, orientation correction, +2 for a
 * different provider). 0 for every seed when the strategy does not score. */
static int64_t raw_distance(const config *cfg, const prepared *shoot, const prepared *seed)
{
    int64_t d;

    if (!shoot || !seed || !cfg->minimal_distance || shoot->testing)
        return 0;
    for (size_t i = 0; i < shoot->n_table; i++) {
        if (shoot->table[i].region_id == seed->region_id)
            return shoot->table[i].dist;
    }
    d = cfg->formula[(size_t)seed->region_id * cfg->formula_cap + (size_t)shoot->region_id];
    if (d < 0) /* cannot happen: both regions were checked in prepare */
        d = MAX_TABLE_DISTANCE;
    if (seed->provider_id != shoot->provider_id)
        d += 2;
    return FORMULA_BASE + d;
}

/* Whether the strategy scores this shoot at all (raw_distance is 0 for
 * every seed otherwise). */
static int scores_shoot(const config *cfg, const prepared *shoot)
{
    return shoot && cfg->minimal_distance && !shoot->testing;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = raw_distance(host->get_private(self), host->object_data(self, workload),
                        seed_data(self, target));
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    const config *cfg = host->get_private(self);
    const prepared *shoot = host->object_data(self, workload);

    if (!scores_shoot(cfg, shoot)) {
        memset(scores, 0, n * sizeof(*scores));
        return;
    }
    for (size_t i = 0; i < n; i++)
        scores[i] = raw_distance(cfg, shoot, seed_data(self, targets[i]));
}

/* The nearest seeds get 100, every other seed strictly less, linearly in
 * the distance. */
static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    int64_t min, max;

    trellis_scores_min_max(scores, n, &min, &max);
    for (size_t i = 0; i < n; i++) {
        if (scores[i] == min)
            scores[i] = TRELLIS_MAX_SCORE;
        else
            scores[i] = (TRELLIS_MAX_SCORE - 1) * (max - scores[i]) / (max - min);
    }
    return TRELLIS_SUCCESS;
}

/* ---- init -------------------------------------------------------------- */

/* The strategy: the argument, or Gardener's own configuration file
 * (argument `config`, usually shared through plugin_args), or SameRegion,
 * Gardener's default. Both given must agree. Keys of the file that only
 * tune Gardener's controller are named once, at warning level, so that
 * `trellis validate` shows them. */
static int read_strategy(trellis_plugin *self, const trellis_host *h, const trellis_args *args,
                         config *cfg, char *err, size_t errlen)
{
    const char *strategy = h->arg_string(args, "strategy");
    const trellis_value *doc = h->arg_document(args, "config");
    gardener_config gc = {GARDENER_STRATEGY_UNSET, "", {NULL}, 0};
    int from_arg = GARDENER_STRATEGY_UNSET;

    if (gardener_config_given(h, doc) && gardener_config_parse(h, doc, &gc, err, errlen) < 0) {
        char why[512], where[400] = "";
        snprintf(why, sizeof(why), "%s", err);
        /* the file and line of the member, where the host can tell */
        if (TRELLIS_HOST_HAS(h, arg_document_where) && h->arg_document_where)
            h->arg_document_where(args, "config", gc.err_path, gc.err_depth, where, sizeof(where));
        snprintf(err, errlen, "config%s%s: %s", where[0] ? " " : "", where, why);
        return -1;
    }
    if (strategy && strcmp(strategy, "SameRegion") == 0) {
        from_arg = GARDENER_SAME_REGION;
    } else if (strategy && strcmp(strategy, "MinimalDistance") == 0) {
        from_arg = GARDENER_MINIMAL_DISTANCE;
    } else if (strategy && *strategy) {
        snprintf(err, errlen, "strategy: expected SameRegion or MinimalDistance, got '%s'",
                 strategy);
        return -1;
    }
    if (from_arg != GARDENER_STRATEGY_UNSET && gc.strategy != GARDENER_STRATEGY_UNSET &&
        from_arg != gc.strategy) {
        snprintf(err, errlen,
                 "strategy: '%s' here, but config sets "
                 "schedulers.shoot.candidateDeterminationStrategy: %s; set it in one place",
                 strategy, gardener_strategy_name(gc.strategy));
        return -1;
    }
    cfg->minimal_distance =
        (from_arg != GARDENER_STRATEGY_UNSET ? from_arg : gc.strategy) == GARDENER_MINIMAL_DISTANCE;
    if (gc.ignored[0])
        h->log(self, TRELLIS_LOG_WARN,
               "config: accepted and ignored (they tune only Gardener's controller): %s",
               gc.ignored);
    return 0;
}

static int read_config(trellis_plugin *self, const trellis_host *h, const trellis_args *args,
                       config *cfg, char *err, size_t errlen)
{
    size_t n = h->arg_list_len(args, "distances");

    if (read_strategy(self, h, args, cfg, err, errlen) < 0)
        return -1;
    cfg->region_config = h->arg_bool(args, "region_config");
    cfg->region_config_namespace = h->arg_string(args, "region_config_namespace");
    if (!cfg->region_config_namespace)
        cfg->region_config_namespace = "garden";
    if (n == 0)
        return 0;
    cfg->distances = calloc(n, sizeof(*cfg->distances));
    if (!cfg->distances) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *text = h->arg_list_at(args, "distances", i);

        if (!text || parse_explicit(text, &cfg->distances[i]) < 0) {
            snprintf(err, errlen,
                     "distances[%zu]: expected \"shootRegion:seedRegion=N\" with N a "
                     "non-negative integer below %lld, got '%s'",
                     i, (long long)MAX_TABLE_DISTANCE, text ? text : "");
            return -1;
        }
        cfg->n_distances++;
    }
    return 0;
}

/* Shoots of the same provider, region and purpose, with the same distance
 * table, get the same verdicts and distances (SDK 1.3, the host's
 * equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    if (x->provider_id != y->provider_id || x->region_id != y->region_id ||
        x->testing != y->testing || x->n_table != y->n_table)
        return 0;
    for (size_t i = 0; i < x->n_table; i++) {
        if (x->table[i].region_id != y->table[i].region_id || x->table[i].dist != y->table[i].dist)
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
    intern_init(&cfg->providers);
    intern_init(&cfg->regions);
    if (read_config(self, h, args, cfg, err, errlen) < 0) {
        free_config(cfg);
        return -1;
    }
    if (cfg->minimal_distance && cfg->region_config &&
        (!TRELLIS_HOST_HAS(h, foreach_object) || !h->foreach_object)) {
        snprintf(err, errlen,
                 "region_config: the host has SDK %d.%d; it needs 1.1 (foreach_object)",
                 h->sdk_major, h->sdk_minor);
        free_config(cfg);
        return -1;
    }
    h->set_private(self, cfg, free_config);

    static const char *const kinds[] = {"ConfigMap", NULL}; /* the region distances */
    if ((cfg->region_config && h->declare_kinds(self, kinds) < 0) ||
        h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_batch(self, score_batch) < 0 ||
        h->register_normalize(self, normalize) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-region",
    "1.1.0",
    "Gardener's SameRegion and MinimalDistance strategies: filter by provider and region, "
    "score by region distance",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_region)
