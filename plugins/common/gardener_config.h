/*
 * gardener_config.h - Gardener's own scheduler configuration file
 * (SchedulerConfiguration, scheduler.config.gardener.cloud/v1alpha1) as
 * the Gardener profile reads it.
 *
 * An operator names the file they already run gardener-scheduler with
 * once, in the profile's plugin_args (`config`), and the plugins that take
 * something from it (gardener-region: the strategy) load it in init with
 * gardener_config_parse. Of the file, only
 * schedulers.shoot.candidateDeterminationStrategy decides placements; the
 * rest tunes the controller process (client connection, leader election,
 * logging, servers, profiling, feature gates, worker counts) and is
 * accepted and listed as ignored. Retries have no field: Gardener's
 * controller backs off per shoot (5 ms doubling up to 1000 s), which is the
 * profile's `backoff`. A key the file format does not have is an error
 * naming its path: Gardener's own decoder would drop it silently, and a
 * misspelt strategy would then quietly fall back to SameRegion.
 */
#ifndef TRELLIS_PLUGINS_GARDENER_CONFIG_H
#define TRELLIS_PLUGINS_GARDENER_CONFIG_H

#include <stddef.h>

#include "trellis/plugin.h"

#define GARDENER_CONFIG_API_VERSION "scheduler.config.gardener.cloud/v1alpha1"
#define GARDENER_CONFIG_KIND "SchedulerConfiguration"

/* the deepest key of the format is three levels down */
#define GARDENER_CONFIG_DEPTH 4

enum { GARDENER_STRATEGY_UNSET = -1, GARDENER_SAME_REGION = 0, GARDENER_MINIMAL_DISTANCE };

/* The argument a plugin declares to read the file; its default, an empty
 * map, stands for no file (gardener_config_given). */
#define GARDENER_CONFIG_ARG                                                                        \
    {                                                                                              \
        "config", TRELLIS_ARG_DOCUMENT, "{}",                                                      \
            "Gardener's SchedulerConfiguration (scheduler.config.gardener.cloud/v1alpha1 YAML), "  \
            "relative to the config file: the strategy, and what else maps; {} (the default): "    \
            "none"                                                                                 \
    }

typedef struct gardener_config {
    /* schedulers.shoot.candidateDeterminationStrategy, UNSET when absent */
    int strategy;
    /* the keys present that only tune the controller, comma separated, in
     * file order ("" when none): "clientConnection, leaderElection, ..." */
    char ignored[512];
    /* after an error: the keys leading to the member it is about (borrowed
     * from the document), for host->arg_document_where; depth 0: the
     * document as a whole */
    const char *err_path[GARDENER_CONFIG_DEPTH];
    size_t err_depth;
} gardener_config;

/* Whether doc (the argument's value) names a file: anything but the
 * default empty map. */
int gardener_config_given(const trellis_host *h, const trellis_value *doc);

/* Check the document (the parsed file) and fill c. 0, or -1 with err
 * naming the path of what is wrong ("schedulers.shoot.strategy: unknown key
 * (this level has: concurrentSyncs, candidateDeterminationStrategy)") and
 * c->err_path holding the keys that lead to it.
 * Ownership of doc is retained by the caller. */
int gardener_config_parse(const trellis_host *h, const trellis_value *doc, gardener_config *c,
                          char *err, size_t errlen);

/* The name of a strategy ("SameRegion", "MinimalDistance"). */
const char *gardener_strategy_name(int strategy);

#endif
