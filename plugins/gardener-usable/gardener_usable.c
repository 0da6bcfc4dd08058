/*
 * gardener_usable.c - the gardener-usable plugin: only seeds that Gardener
 * considers usable take shoots.
 *
 * Gardener's scheduler first reduces the seeds to the usable ones: not being
 * deleted, visible for scheduling, with a last operation and a ready
 * gardenlet, and with ready backup buckets when the seed has a backup. This
 * filter is that step, first in the Gardener profile. Whether a seed is
 * usable depends on the seed alone, so prepare_target decides it once per
 * seed change and stores a pointer into a constant table of verdicts (no
 * allocation, nothing to release); the filter only reads it. The `visible`
 * and `ready` arguments switch the visibility and readiness requirements
 * off. `emergency_stop` adds current Gardener's later step that drops seeds
 * whose operator stopped shoot reconciliations with an annotation (the
 * document predates it). Every rejection is UNRESOLVABLE: evicting shoots
 * never makes a seed usable. Queueing hints: a rejected shoot may fit after a usable seed
 * appears or a seed turns usable.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define EMERGENCY_STOP_ANNOTATION "shoot.gardener.cloud/emergency-stop-reconciliations"

typedef struct config {
    int require_visible;
    int require_ready;
    int emergency_stop;
} config;

/* Why a seed is not usable; prepared data points at one of these (NULL:
 * usable). */
typedef struct verdict {
    const char *reason;
    const char *message;
} verdict;

enum {
    V_DELETING = 0,
    V_INVISIBLE,
    V_NO_LAST_OPERATION,
    V_GARDENLET_NOT_READY,
    V_BACKUP_NOT_READY,
    V_RECONCILIATIONS_STOPPED
};

static const verdict verdicts[] = {
    [V_DELETING] = {"SeedDeleting", "seed is being deleted"},
    [V_INVISIBLE] = {"SeedInvisible", "seed is not visible for scheduling"},
    [V_NO_LAST_OPERATION] = {"SeedNotReady", "seed is not ready: no last operation"},
    [V_GARDENLET_NOT_READY] = {"SeedNotReady",
                               "seed is not ready: condition GardenletReady is not True"},
    [V_BACKUP_NOT_READY] = {"SeedNotReady",
                            "seed is not ready: condition BackupBucketsReady is not True"},
    /* Gardener's words: "none of the N seeds have enabled shoot
     * reconciliations currently" */
    [V_RECONCILIATIONS_STOPPED] = {"ShootReconciliationsDisabled",
                                   "seed does not have enabled shoot reconciliations currently "
                                   "(annotation " EMERGENCY_STOP_ANNOTATION ": \"true\")"},
};

static const trellis_arg_spec args_table[] = {
    {"visible", TRELLIS_ARG_BOOL, "true", "require spec.settings.scheduling.visible to be true"},
    {"ready", TRELLIS_ARG_BOOL, "true",
     "require status.lastOperation and the GardenletReady (and, with a backup, "
     "BackupBucketsReady) conditions to be True"},
    {"emergency_stop", TRELLIS_ARG_BOOL, "false",
     "current Gardener: exclude seeds annotated " EMERGENCY_STOP_ANNOTATION ": \"true\""},
    {NULL, 0, NULL, NULL},
};

static int present(const trellis_value *v)
{
    return v && host->value_type(v) != TRELLIS_VALUE_NULL;
}

/* Whether the seed is visible for scheduling; -1 with err when the field is
 * not a boolean. Absent means not visible, as in Gardener. */
static int visible(const trellis_object *seed, char *err, size_t errlen)
{
    static const char path[] = "spec.settings.scheduling.visible";
    const trellis_value *v = host->object_get(seed, path);
    int b;

    if (!present(v))
        return 0;
    if (host->value_bool(v, &b) < 0) {
        snprintf(err, errlen, "%s: expected a boolean, got %s", path,
                 values_type_name(host->value_type(v)));
        return -1;
    }
    return b;
}

/* Whether condition `type` in the list `conds` has status True (a YAML
 * `status: True` without quotes reads as a boolean). */
static int condition_true(const trellis_value *conds, const char *type)
{
    if (!conds)
        return 0;
    for (size_t i = 0; i < host->value_len(conds); i++) {
        const trellis_value *c = host->value_at(conds, i);
        const trellis_value *st;
        const char *t;
        int b;

        if (host->value_type(c) != TRELLIS_VALUE_MAP)
            continue;
        t = values_scalar_text(host, host->value_get(c, "type"));
        if (!t || strcmp(t, type) != 0)
            continue;
        st = host->value_get(c, "status");
        if (st && host->value_type(st) == TRELLIS_VALUE_BOOL)
            return host->value_bool(st, &b) == 0 && b;
        t = values_scalar_text(host, st);
        return t && strcmp(t, "True") == 0;
    }
    return 0;
}

/* The readiness verdict of a seed into *data (left NULL when ready); -1
 * with err when status.conditions is not a list. */
static int readiness(const trellis_object *obj, void **data, char *err, size_t errlen)
{
    const trellis_value *conds;

    if (!present(host->object_get(obj, "status.lastOperation"))) {
        *data = (void *)&verdicts[V_NO_LAST_OPERATION];
        return 0;
    }
    conds = host->object_get(obj, "status.conditions");
    if (values_expect(host, conds, TRELLIS_VALUE_LIST, "a list", "status.conditions", err, errlen) <
        0)
        return -1;
    if (!present(conds))
        conds = NULL;
    if (!condition_true(conds, "GardenletReady"))
        *data = (void *)&verdicts[V_GARDENLET_NOT_READY];
    else if (present(host->object_get(obj, "spec.backup")) &&
             !condition_true(conds, "BackupBucketsReady"))
        *data = (void *)&verdicts[V_BACKUP_NOT_READY];
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const config *cfg = host->get_private(self);
    int rc;

    *data = NULL;
    if (present(host->object_get(obj, "metadata.deletionTimestamp"))) {
        *data = (void *)&verdicts[V_DELETING];
        return 0;
    }
    if (cfg->require_visible) {
        rc = visible(obj, err, errlen);
        if (rc < 0)
            return -1;
        if (!rc) {
            *data = (void *)&verdicts[V_INVISIBLE];
            return 0;
        }
    }
    if (cfg->require_ready && readiness(obj, data, err, errlen) < 0)
        return -1;
    /* Gardener drops stopped seeds only after the usable ones are known */
    if (!*data && cfg->emergency_stop) {
        const char *stop = host->object_annotation(obj, EMERGENCY_STOP_ANNOTATION);
        if (stop && strcmp(stop, "true") == 0)
            *data = (void *)&verdicts[V_RECONCILIATIONS_STOPPED];
    }
    return 0;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const verdict *v = host->object_data(self, host->target_object(target));

    if (!v)
        return TRELLIS_SUCCESS;
    host->status(st, TRELLIS_UNRESOLVABLE, v->reason, "%s", v->message);
    return TRELLIS_UNRESOLVABLE;
}

static int batch_rejects(const void *cfg, const void *data, const void *seed)
{
    return seed != NULL;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    trellis_batch_clear_rejected_prepared(host, self, NULL, NULL, targets, n, pass, batch_rejects);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *seed)
{
    return host->object_data(self, seed) != NULL;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
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
    cfg->require_visible = h->arg_bool(args, "visible");
    cfg->require_ready = h->arg_bool(args, "ready");
    cfg->emergency_stop = h->arg_bool(args, "emergency_stop");
    h->set_private(self, cfg, free);

    /* no release hook: prepared data points into a constant table */
    if (h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        trellis_register_equivalent(h, self, trellis_equal_always) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "gardener-usable",
    "1.1.0",
    "keeps the seeds Gardener considers usable: not deleting, visible, ready",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, gardener_usable)
