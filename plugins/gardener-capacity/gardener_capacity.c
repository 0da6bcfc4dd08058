/*
 * gardener_capacity.c - the gardener-capacity plugin: a seed takes no more
 * shoots than its status.allocatable.shoots.
 *
 * Gardener counts on a seed every shoot whose spec.seedName or
 * status.seedName names it; the host keeps that count per target (the
 * profile's binding field plus also_counts, shoots assumed in this run
 * included), so the filter compares it with the allocatable number parsed
 * once per seed in prepare_target (a Kubernetes quantity, common/resources.c;
 * absent means no limit). A full seed is UNSCHEDULABLE rather than
 * UNRESOLVABLE: moving shoots away would make room. Queueing hints: a
 * rejected shoot may fit after a seed with room for a shoot appears, after a
 * seed's allocatable shoots grow (or its limit goes), or after a shoot goes
 * away. On a host of SDK 1.5 it names one counter, "shoots", with the
 * seed's allocatable, so that `trellis targets` shows a seed's shoots
 * against its limit.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "resources.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define ALLOCATABLE_FIELD "status.allocatable.shoots"

/* Prepared data of a seed with a limit (none: no prepared data). */
typedef struct prepared {
    int64_t allocatable;
} prepared;

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const trellis_value *v = host->object_get(obj, ALLOCATABLE_FIELD);
    trellis_value_type t = v ? host->value_type(v) : TRELLIS_VALUE_NULL;
    const char *text;
    prepared *p;
    int64_t n;

    *data = NULL;
    if (t == TRELLIS_VALUE_NULL)
        return 0;
    text = t == TRELLIS_VALUE_INT || t == TRELLIS_VALUE_STRING || t == TRELLIS_VALUE_DOUBLE
               ? host->value_string(v)
               : NULL;
    if (!text) {
        snprintf(err, errlen, "%s: expected a quantity, got %s", ALLOCATABLE_FIELD,
                 values_type_name(t));
        return -1;
    }
    switch (res_quantity_parse(text, RES_UNIT_COUNT, &n)) {
    case RES_OK:
        break;
    case RES_ENEGATIVE:
        snprintf(err, errlen, "%s: expected a quantity of at least 0, got '%s'", ALLOCATABLE_FIELD,
                 text);
        return -1;
    default:
        snprintf(err, errlen, "%s: expected a quantity, got '%s'", ALLOCATABLE_FIELD, text);
        return -1;
    }
    p = malloc(sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->allocatable = n;
    *data = p;
    return 0;
}

static int full(const trellis_plugin *self, const trellis_target *t, size_t *count,
                int64_t *allocatable)
{
    const prepared *p = host->object_data(self, host->target_object(t));

    if (!p)
        return 0;
    *count = host->target_workload_count(t);
    *allocatable = p->allocatable;
    return (int64_t)*count >= p->allocatable;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    size_t count;
    int64_t allocatable;

    if (!full(self, target, &count, &allocatable))
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNSCHEDULABLE, "SeedFull",
                 "seed has no capacity for more shoots (%zu/%lld)", count, (long long)allocatable);
    return TRELLIS_UNSCHEDULABLE;
}

static int batch_rejects(trellis_plugin *self, const void *cfg, const void *data,
                         const trellis_target *t)
{
    size_t count;
    int64_t allocatable;

    return full(self, t, &count, &allocatable);
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    trellis_batch_clear_rejected(self, NULL, NULL, targets, n, pass, batch_rejects);
}

/* Whether a seed change may make room. The number of shoots on a seed is
 * not part of the seed object, so only the limits are compared; a seed
 * without a limit (NULL) has room. `added`: there was no seed before. */
static int limit_grew(int added, const prepared *before, const prepared *after)
{
    if (added)
        return !after || after->allocatable > 0;
    if (!before) /* no limit then: this plugin did not reject there */
        return 0;
    return !after || after->allocatable > before->allocatable;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    if ((event == TRELLIS_EV_TARGET_ADD || event == TRELLIS_EV_TARGET_UPDATE) && new_obj)
        return limit_grew(old_obj == NULL, old_obj ? host->object_data(self, old_obj) : NULL,
                          host->object_data(self, new_obj))
                   ? TRELLIS_QUEUE
                   : TRELLIS_QUEUE_SKIP;
    return TRELLIS_QUEUE; /* a shoot went away: its seed has room */
}

/* One counter, the shoots placed on a seed, for the operator's views
 * (trellis targets, the report): the filter counts the host's workload
 * list, which also holds the shoots a seed hosts by status.seedName. */
static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    out[0] = 1;
}

static void allocated(trellis_plugin *self, const trellis_object *target,
                      const trellis_object *const *placed, size_t n, int64_t *used,
                      int64_t *allocatable)
{
    const prepared *p = host->object_data(self, target);

    if (p)
        allocatable[0] = p->allocatable;
}

/* On a host that can show them (SDK 1.5); an older one gets no counter. */
static int name_counters(trellis_plugin *self, const trellis_host *h)
{
    static const char *const names[] = {"shoots"};
    static const trellis_unit units[] = {TRELLIS_UNIT_COUNT};

    if (!TRELLIS_HOST_HAS(h, name_counters))
        return 0;
    return h->declare_counters(self, 1, amounts) < 0 ||
                   h->name_counters(self, names, units, allocated) < 0
               ? -1
               : 0;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, trellis_equal_always) < 0 ||
        name_counters(self, h) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(
        h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE | TRELLIS_EV_WORKLOAD_GONE, hint,
        err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-capacity",
    "1.1.0",
    "keeps seeds with fewer shoots than status.allocatable.shoots",
    NULL,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_capacity)
