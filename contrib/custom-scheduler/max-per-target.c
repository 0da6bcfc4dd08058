/*
 * max-per-target.c - the built-in plugin of the custom scheduler: a
 * target holding `max` workloads already (assumed ones included) takes no
 * more (reason TargetFull). Declared with TRELLIS_PLUGIN_AS, so the same
 * file builds as a loadable .so too; compiled with TRELLIS_BUILTIN it
 * defines trellis_builtin_max_per_target for main.c to register.
 */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdint.h>
#include <stdio.h>

#include <trellis/plugin.h>

static const trellis_host *host;

static const trellis_arg_spec args_table[] = {
    {"max", TRELLIS_ARG_INT, "1", "how many workloads a target takes at most"},
    {NULL, 0, NULL, NULL},
};

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    const int64_t *max = host->get_private(self);
    size_t n = host->target_workload_count(target);
    (void)c;
    (void)workload;
    if ((int64_t)n < *max)
        return TRELLIS_SUCCESS;
    return host->status(st, TRELLIS_UNSCHEDULABLE, "TargetFull",
                        "the target holds %zu workload(s), max %lld", n, (long long)*max);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    static int64_t max; /* one instance is enough for this example */
    host = h;
    max = h->arg_int(args, "max");
    if (max < 0) {
        snprintf(err, errlen, "max must not be negative");
        return -1;
    }
    h->set_private(self, &max, NULL);
    if (h->register_filter(self, filter) < 0) {
        snprintf(err, errlen, "cannot register the filter");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "max-per-target",
    "1.0.0",
    "a target takes at most `max` workloads",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN_AS(desc, max_per_target)
