/*
 * prefer-label.c - an out-of-tree trellis plugin: prefer (or require) the
 * targets that carry a given label.
 *
 * Score: a target whose label `label` equals `value` scores 100, any other
 * target 0; the score is already in 0..100, so there is no normalize. With
 * `required = true` the plugin also filters: a target without the label (or
 * with another value) is rejected with reason "LabelMissing", as
 * UNRESOLVABLE because evicting workloads never changes a target's labels.
 * Whether a target matches is decided once per target, in prepare_target,
 * so filter and score only read the prepared answer. A filtering instance
 * also gives a queueing hint (SDK 1.2): of all the changes a long-running
 * host sees, only a target that appears with the label, or gains it, can
 * undo a rejection.
 *
 * It is built with nothing but `pkg-config trellis-plugin` (see Makefile
 * and README.md), which is what makes it an example: everything a plugin
 * needs comes from trellis/plugin.h and the host function table. It runs
 * on any 1.x host: it declares SDK 1.0 as the oldest it needs, and tests
 * for the queueing hints of 1.2 before it registers them.
 */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trellis/plugin.h>

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

/* One per plugin instance, kept by the host (set_private). */
typedef struct config {
    const char *label; /* host-owned, valid until fini */
    const char *value; /* host-owned, valid until fini */
} config;

static const trellis_arg_spec args_table[] = {
    {"label", TRELLIS_ARG_STRING, NULL, "label key the preferred targets carry (required)"},
    {"value", TRELLIS_ARG_STRING, "true", "value the label must have"},
    {"required", TRELLIS_ARG_BOOL, "false",
     "also reject targets without the label (reason LabelMissing)"},
    {NULL, 0, NULL, NULL},
};

/* The prepared data of a target is only a yes or no: non-NULL (the
 * instance's config, which the host owns) when the target matches, NULL
 * when it does not. Nothing is allocated, so there is no release hook. */
static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    const char *v = host->object_label(obj, cfg->label);

    *data = v && strcmp(v, cfg->value) == 0 ? cfg : NULL;
    return 0;
}

static int target_matches(const trellis_plugin *self, const trellis_target *t)
{
    return host->object_data(self, host->target_object(t)) != NULL;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const config *cfg;

    if (target_matches(self, target))
        return TRELLIS_SUCCESS;
    cfg = host->get_private(self);
    return host->status(st, TRELLIS_UNRESOLVABLE, "LabelMissing", "target has no label %s=%s",
                        cfg->label, cfg->value);
}

/* Queueing hint: a workload this plugin rejected may fit when a target
 * appears with the label (old_obj NULL) or gains it (old_obj without it).
 * Both objects are prepared, so the answer is their prepared data. */
static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    if (!new_obj || !host->object_data(self, new_obj))
        return TRELLIS_QUEUE_SKIP;
    return !old_obj || !host->object_data(self, old_obj) ? TRELLIS_QUEUE : TRELLIS_QUEUE_SKIP;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    *out = target_matches(self, target) ? TRELLIS_MAX_SCORE : 0;
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = malloc(sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->label = h->arg_string(args, "label");
    cfg->value = h->arg_string(args, "value");
    h->set_private(self, cfg, free);
    if (!cfg->label || !*cfg->label) {
        snprintf(err, errlen, "argument 'label' must not be empty");
        return -1;
    }
    if (!cfg->value)
        cfg->value = "";

    if (h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_score(self, score) < 0 ||
        (h->arg_bool(args, "required") && h->register_filter(self, filter) < 0)) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    /* register_events came with SDK 1.2. Test for it as for anything newer
     * than the oldest host the plugin should run on: a host without it asks
     * no hints and requeues on every change. */
    if (h->arg_bool(args, "required") && TRELLIS_HOST_HAS(h, register_events) &&
        h->register_events(self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint) < 0) {
        snprintf(err, errlen, "cannot register the queueing hint");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "prefer-label",
    "1.0.0",
    "prefers (or requires) targets carrying a given label",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
