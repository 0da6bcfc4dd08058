/*
 * gardener_seed_selector.c - the gardener-seed-selector plugin: a shoot goes
 * only to seeds that its CloudProfile's and its own seed selectors accept,
 * and that run an allowed provider.
 *
 * Gardener matches seed labels against two label selectors, the
 * spec.seedSelector of the shoot's CloudProfile and the shoot's own
 * spec.seedSelector, and then restricts the seed provider types through the
 * selectors' providerTypes. The CloudProfile is looked up with the host's
 * lookup_object in prepare_workload, where both selectors are parsed
 * (common/selector.c) and the allowed provider types resolved. Everything
 * the filter compares is interned once per object (common/intern.h) in the
 * plugin's own table: a shoot keeps its compiled selectors and allowed
 * provider ids, a seed its provider id and its labels as (key id, value
 * id) pairs, so the filter compares integers and calls the host only for
 * the seed's prepared data. The `provider_types` argument picks the rule of
 * the scheduler document ("document": the shoot's providerTypes, else the
 * CloudProfile's, else the shoot's provider) or of current Gardener
 * ("current": only the CloudProfile's, else the shoot's provider). Every
 * rejection is UNRESOLVABLE: evicting shoots never changes a seed's labels
 * or provider. Queueing hints: a rejected shoot may fit after a seed appears
 * or changes so that it passes, or after its CloudProfile changes.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "gardener.h"
#include "intern.h"
#include "selector.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    int current;  /* provider_types = "current" */
    intern names; /* provider types, label keys and values */
} config;

/* The host hands shoots' and seeds' prepared data to the same release
 * function: the first member of each tells which it is. */
enum { SHOOT_DATA = 1, SEED_DATA };

/* A seed's prepared data. */
typedef struct seed_data {
    int kind; /* SEED_DATA */
    int32_t provider_id;
    label_set labels;     /* metadata.labels */
    const char *provider; /* spec.provider.type, borrowed from the seed */
} seed_data;

/* A shoot's prepared data. */
typedef struct prepared {
    int kind;                 /* SHOOT_DATA */
    char *cloud_profile;      /* its name; NULL when the shoot names none */
    selector_ids profile_sel; /* the CloudProfile's spec.seedSelector */
    selector_ids shoot_sel;   /* the shoot's spec.seedSelector */
    gardener_strings allowed; /* allowed seed provider types, for messages */
    int32_t *allowed_ids;     /* ... and as ids */
    size_t n_allowed;
    int allow_all; /* allowed holds "*" */
} prepared;

static const trellis_arg_spec args_table[] = {
    {"provider_types", TRELLIS_ARG_STRING, "document",
     "whose providerTypes count: document (the shoot's, else the CloudProfile's) or current "
     "(only the CloudProfile's); without any, the shoot's own provider type"},
    {NULL, 0, NULL, NULL},
};

/* Members of a Gardener seedSelector beside matchLabels and
 * matchExpressions. */
static const char *const seed_selector_extra[] = {"providerTypes", NULL};

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p)
        return;
    if (p->kind == SEED_DATA) {
        seed_data *sp = data;

        label_set_clear(&sp->labels);
        free(sp);
        return;
    }
    free(p->cloud_profile);
    selector_ids_clear(&p->profile_sel);
    selector_ids_clear(&p->shoot_sel);
    gardener_strings_clear(&p->allowed);
    free(p->allowed_ids);
    free(p);
}

static void free_config(void *data)
{
    config *cfg = data;

    if (!cfg)
        return;
    intern_free(&cfg->names);
    free(cfg);
}

/* The seed selector at `sel` (found at `field`), compiled against names,
 * into *out and its providerTypes into *types. */
static int read_seed_selector(intern *names, const trellis_value *sel, const char *field,
                              selector_ids *out, gardener_strings *types, char *err, size_t errlen)
{
    selector *parsed;
    char path[128];
    int rc;

    memset(out, 0, sizeof(*out));
    if (!sel || host->value_type(sel) == TRELLIS_VALUE_NULL)
        return 0;
    if (selector_parse_with(host, sel, SELECTOR_FORMAT_SELECTOR, seed_selector_extra, field,
                            &parsed, err, errlen) < 0)
        return -1;
    rc = selector_compile(parsed, names, out);
    selector_free(parsed);
    if (rc < 0) {
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    snprintf(path, sizeof(path), "%s.providerTypes", field);
    return gardener_strings_read(host, host->value_get(sel, "providerTypes"), path, types, err,
                                 errlen);
}

/* p->allowed as ids, and whether it holds "*". */
static int intern_allowed(intern *names, prepared *p)
{
    p->allow_all = gardener_strings_has(&p->allowed, "*");
    if (p->allowed.n == 0)
        return 0;
    p->allowed_ids = calloc(p->allowed.n, sizeof(*p->allowed_ids));
    if (!p->allowed_ids)
        return -1;
    for (size_t i = 0; i < p->allowed.n; i++) {
        int32_t id = intern_id(names, p->allowed.v[i]);

        if (id < 0)
            return -1;
        p->allowed_ids[p->n_allowed++] = id;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    gardener_strings shoot_types = {NULL, 0}, profile_types = {NULL, 0};
    const gardener_strings *source;
    const char *name = gardener_cloud_profile_name(host, obj);
    prepared *p;

    *data = NULL;
    p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->kind = SHOOT_DATA;
    if (name) {
        const trellis_object *cp = host->lookup_object(self, "CloudProfile", "", name);
        char why[TRELLIS_MESSAGE_MAX];

        if (!cp) {
            snprintf(err, errlen, "CloudProfile '%s' not found", name);
            goto fail;
        }
        p->cloud_profile = values_strdup(name);
        if (!p->cloud_profile) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (read_seed_selector(&cfg->names, host->object_get(cp, "spec.seedSelector"),
                               "spec.seedSelector", &p->profile_sel, &profile_types, why,
                               sizeof(why)) < 0) {
            snprintf(err, errlen, "CloudProfile '%s': %s", name, why);
            goto fail;
        }
    }
    if (read_seed_selector(&cfg->names, host->object_get(obj, "spec.seedSelector"),
                           "spec.seedSelector", &p->shoot_sel, &shoot_types, err, errlen) < 0)
        goto fail;

    if (cfg->current)
        source = &profile_types;
    else
        source = shoot_types.n ? &shoot_types : &profile_types;
    if (source->n) {
        for (size_t i = 0; i < source->n; i++) {
            if (gardener_strings_add(&p->allowed, source->v[i]) < 0) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
        }
    } else {
        const char *own = values_scalar_text(host, host->object_get(obj, "spec.provider.type"));

        if (own && own[0] != '\0' && gardener_strings_add(&p->allowed, own) < 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    if (intern_allowed(&cfg->names, p) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    gardener_strings_clear(&shoot_types);
    gardener_strings_clear(&profile_types);
    *data = p;
    return 0;
fail:
    gardener_strings_clear(&shoot_types);
    gardener_strings_clear(&profile_types);
    release(self, p);
    return -1;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *v = host->object_get(obj, "spec.provider.type");
    seed_data *p;

    *data = NULL;
    if (values_expect(host, v, TRELLIS_VALUE_STRING, "a string", "spec.provider.type", err,
                      errlen) < 0)
        return -1;
    p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->kind = SEED_DATA;
    /* borrowed from the seed, which outlives its prepared data */
    p->provider = values_scalar_text(host, v);
    if (!p->provider)
        p->provider = "";
    p->provider_id = intern_id(&cfg->names, p->provider);
    if (p->provider_id < 0 || label_set_read(host, host->object_get(obj, "metadata.labels"),
                                             &cfg->names, &p->labels) < 0) {
        snprintf(err, errlen, "out of memory");
        release(self, p);
        return -1;
    }
    *data = p;
    return 0;
}

static const char *seed_provider(const seed_data *sp)
{
    return sp && sp->provider ? sp->provider : "";
}

static int allowed(const prepared *p, int32_t provider)
{
    for (size_t i = 0; i < p->n_allowed; i++) {
        if (p->allowed_ids[i] == provider)
            return 1;
    }
    return 0;
}

/* 0 when the seed (its prepared data sp) passes; otherwise which check
 * failed (1 CloudProfile selector, 2 shoot selector, 3 provider), the order
 * of Gardener's scheduler. A seed without prepared data (its prepare
 * failed, and the host rejects it anyway) has no labels and no provider. */
static int check(const prepared *p, const seed_data *sp)
{
    static const label_set none = {NULL, 0};
    const label_set *labels = sp ? &sp->labels : &none;

    if (!p)
        return 0;
    if (p->profile_sel.n && selector_ids_first_mismatch(&p->profile_sel, labels) >= 0)
        return 1;
    if (p->shoot_sel.n && selector_ids_first_mismatch(&p->shoot_sel, labels) >= 0)
        return 2;
    if (!p->allow_all && !(sp && allowed(p, sp->provider_id)))
        return 3;
    return 0;
}

static const seed_data *seed_of(const trellis_plugin *self, const trellis_object *seed)
{
    return host->object_data(self, seed);
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const prepared *p = host->object_data(self, workload);
    const seed_data *sp = seed_of(self, host->target_object(target));
    char list[160];

    switch (check(p, sp)) {
    case 0:
        return TRELLIS_SUCCESS;
    case 1:
        host->status(st, TRELLIS_UNRESOLVABLE, "CloudProfileSelectorMismatch",
                     "seed labels do not match the seed selector of CloudProfile %s",
                     p->cloud_profile);
        break;
    case 2:
        host->status(st, TRELLIS_UNRESOLVABLE, "ShootSelectorMismatch",
                     "seed labels do not match the shoot's seed selector");
        break;
    default:
        gardener_strings_join(&p->allowed, ", ", list, sizeof(list));
        host->status(st, TRELLIS_UNRESOLVABLE, "ProviderNotAllowed",
                     "seed provider %s is not allowed (allowed: %s)", seed_provider(sp), list);
        break;
    }
    return TRELLIS_UNRESOLVABLE;
}

static int batch_rejects(const void *cfg, const void *p, const void *sp)
{
    return check(p, sp) != 0;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    const prepared *p = host->object_data(self, workload);

    if (p)
        trellis_batch_clear_rejected_prepared(host, self, NULL, p, targets, n, pass, batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return check(host->object_data(self, workload), seed_of(self, seed)) != 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    const prepared *p = host->object_data(self, workload);
    const trellis_object *o = new_obj ? new_obj : old_obj;

    if (event != TRELLIS_EV_OTHER)
        return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
    /* of all other objects, only the shoot's own CloudProfile holds a
     * selector the shoot is checked against */
    if (!p || !o)
        return TRELLIS_QUEUE;
    return p->cloud_profile && strcmp(host->object_kind(o), "CloudProfile") == 0 &&
                   strcmp(host->object_name(o), p->cloud_profile) == 0
               ? TRELLIS_QUEUE
               : TRELLIS_QUEUE_SKIP;
}

static int same_selector(const selector_ids *x, const selector_ids *y)
{
    if (x->n != y->n)
        return 0;
    for (size_t i = 0; i < x->n; i++) {
        const selector_idreq *p = &x->reqs[i], *q = &y->reqs[i];

        if (p->key != q->key || p->op != q->op || p->nvalues != q->nvalues)
            return 0;
        for (uint32_t v = 0; v < p->nvalues; v++) {
            if (x->values[p->first + v] != y->values[q->first + v])
                return 0;
        }
    }
    return 1;
}

/* Shoots with the same selectors and provider types get the same verdicts
 * on every seed (SDK 1.3, the host's equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    if (x->allow_all != y->allow_all || x->n_allowed != y->n_allowed ||
        !same_selector(&x->profile_sel, &y->profile_sel) ||
        !same_selector(&x->shoot_sel, &y->shoot_sel))
        return 0;
    for (size_t i = 0; i < x->n_allowed; i++) {
        if (x->allowed_ids[i] != y->allowed_ids[i])
            return 0;
    }
    return 1;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    const char *mode;
    config *cfg;

    host = h;
    if (!TRELLIS_HOST_HAS(h, lookup_object) || !h->lookup_object) {
        snprintf(err, errlen, "the host has SDK %d.%d; this plugin needs 1.1 (lookup_object)",
                 h->sdk_major, h->sdk_minor);
        return -1;
    }
    mode = h->arg_string(args, "provider_types");
    if (!mode || (strcmp(mode, "document") != 0 && strcmp(mode, "current") != 0)) {
        snprintf(err, errlen, "provider_types: expected document or current, got '%s'",
                 mode ? mode : "");
        return -1;
    }
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->current = strcmp(mode, "current") == 0;
    intern_init(&cfg->names);
    h->set_private(self, cfg, free_config);

    static const char *const kinds[] = {"CloudProfile", NULL}; /* read in prepare */
    if ((TRELLIS_HOST_HAS(h, declare_kinds) && h->declare_kinds &&
         h->declare_kinds(self, kinds) < 0) ||
        h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(
        h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE | TRELLIS_EV_OTHER, hint, err,
        errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-seed-selector",
    "1.1.0",
    "keeps seeds matching the CloudProfile's and the shoot's seed selectors and provider types",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_seed_selector)
