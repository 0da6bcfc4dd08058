/*
 * gardener_access.c - the gardener-access plugin: a shoot that asks for
 * access restrictions goes only to a seed that offers them all.
 *
 * Current Gardener (reconciler.go filterSeedsForAccessRestrictions, with
 * v1beta1helper.AccessRestrictionsAreSupported) keeps a seed when every
 * name in the shoot's spec.accessRestrictions[].name is among the seed's
 * spec.accessRestrictions[].name; a shoot that lists more restrictions
 * than the seed offers is refused before the names are compared, as
 * Gardener does (the same name twice counts twice). Options of a
 * restriction play no part in scheduling. The design document has no such
 * rule, so this plugin is only in the current profile.
 *
 * Names are interned in prepare (common/intern.h); the filter compares
 * small integer arrays and allocates nothing. Rejections are UNRESOLVABLE:
 * evicting shoots does not change what a seed offers.
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

#define FIELD "spec.accessRestrictions"

typedef struct config {
    intern names; /* restriction names; written in prepare only */
} config;

/* Prepared data of shoots (what they ask for) and seeds (what they offer):
 * the names as ids, in the order listed. */
typedef struct prepared {
    int32_t *ids;
    size_t n;
} prepared;

static const trellis_arg_spec args_table[] = {
    {NULL, 0, NULL, NULL},
};

/* Every seed and shoot without restrictions shares this record. */
static const prepared none = {0};

static void release(trellis_plugin *self, void *data)
{
    prepared *p = data;

    if (!p || p == &none)
        return;
    free(p->ids);
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

/* The names of spec.accessRestrictions of obj, for shoots and seeds alike.
 * -1 with err naming the item that is not a map with a name. */
static int prepare(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                   size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *v = host->object_get(obj, FIELD);
    int rc = values_expect(host, v, TRELLIS_VALUE_LIST, "a list", FIELD, err, errlen);
    size_t n = rc > 0 ? host->value_len(v) : 0;
    prepared *p;

    *data = (void *)&none;
    if (rc < 0)
        return -1;
    if (!n)
        return 0;
    p = calloc(1, sizeof(*p));
    if (!p || !(p->ids = calloc(n, sizeof(*p->ids)))) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_value *item = host->value_at(v, i);
        const char *name = item && host->value_type(item) == TRELLIS_VALUE_MAP
                               ? values_scalar_text(host, host->value_get(item, "name"))
                               : NULL;

        if (!name || !*name) {
            snprintf(err, errlen, "%s[%zu]: expected a map with a name", FIELD, i);
            release(self, p);
            return -1;
        }
        p->ids[i] = intern_id(&cfg->names, name);
        if (p->ids[i] < 0) {
            snprintf(err, errlen, "out of memory");
            release(self, p);
            return -1;
        }
    }
    p->n = n;
    *data = p;
    return 0;
}

/* -1 when the seed supports every restriction the shoot asks for, else
 * the index of the first one it lacks, or the shoot's count when the
 * shoot asks for more than the seed offers. */
static long unsupported(const prepared *shoot, const prepared *seed)
{
    if (!shoot || !shoot->n)
        return -1;
    if (!seed)
        seed = &none;
    for (size_t i = 0; i < shoot->n; i++)
        if (!intern_ids_has(seed->ids, seed->n, shoot->ids[i]))
            return (long)i;
    return shoot->n > seed->n ? (long)shoot->n : -1;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    const prepared *p = host->object_data(self, workload);

    return p && p->n ? TRELLIS_SUCCESS : TRELLIS_SKIP;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *shoot = host->object_data(self, workload);
    const prepared *seed = host->object_data(self, host->target_object(target));
    long i = unsupported(shoot, seed);

    if (i < 0)
        return TRELLIS_SUCCESS;
    /* Gardener's words ("none of the N seeds supports the access
     * restrictions configured in the shoot specification"), and which */
    if ((size_t)i < shoot->n)
        return host->status(st, TRELLIS_UNRESOLVABLE, "AccessRestrictionsUnsupported",
                            "seed does not support the access restrictions configured in the "
                            "shoot specification (%s is not offered)",
                            intern_str(&cfg->names, shoot->ids[i]));
    return host->status(st, TRELLIS_UNRESOLVABLE, "AccessRestrictionsUnsupported",
                        "seed does not support the access restrictions configured in the shoot "
                        "specification (%zu asked for, %zu offered)",
                        shoot->n, seed ? seed->n : 0);
}

static int batch_rejects(const void *cfg, const void *shoot, const void *seed)
{
    return unsupported(shoot, seed) >= 0;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    trellis_batch_clear_rejected_prepared(host, self, NULL, host->object_data(self, workload),
                                          targets, n, pass, batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return unsupported(host->object_data(self, workload), host->object_data(self, seed)) >= 0;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

/* Shoots asking for the same restrictions in the same order get the same
 * verdicts on every seed (SDK 1.3, the host's equivalence cache). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const prepared *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    return x->n == y->n && (!x->n || memcmp(x->ids, y->ids, x->n * sizeof(*x->ids)) == 0);
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
    intern_init(&cfg->names);
    h->set_private(self, cfg, free_config);

    if (h->register_prepare_workload(self, prepare) < 0 ||
        h->register_prepare_target(self, prepare) < 0 || h->register_release(self, release) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
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
    "gardener-access",
    "1.0.0",
    "keeps shoots with access restrictions on seeds that offer them all",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_access)
