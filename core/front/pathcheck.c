/*
 * pathcheck.c - see pathcheck.h. The arguments are read from the config
 * as written (libconfig groups), so a default the plugin fills in is not
 * checked: only what an operator typed.
 */
#include "config.h"

#include "pathcheck.h"

#include <string.h>

#include "cfg.h"
#include "object.h"
#include "profile.h"
#include "util.h"

static int has_path(const trellis_object *o, void *ud)
{
    return object_get(o, ud) != NULL;
}

/* Whether the key names a field path: "field" or "..._field". */
static int is_field_key(const char *key)
{
    return strcmp(key, "field") == 0 || str_endswith(key, "_field");
}

/* The field arguments of one group (a plugin's args, the profile's
 * plugin_args): the number of warnings. */
static size_t check_group(const sched *s, const cfg_profile *pc, const config_setting_t *g,
                          const char *who, FILE *f)
{
    size_t warned = 0;
    for (int i = 0; g && i < config_setting_length(g); i++) {
        const config_setting_t *a = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(a);
        const char *path = config_setting_get_string(a);
        if (!key || !is_field_key(key) || !path || !*path)
            continue;
        if (sched_foreach(s, pc->workload_kind, NULL, has_path, (void *)path) ||
            sched_foreach(s, pc->target_kind, NULL, has_path, (void *)path))
            continue;
        const char *file = config_setting_source_file(a);
        fprintf(f,
                "trellis: %s:%d: warning: profile '%s': %s: %s = \"%s\": no %s or %s in the "
                "state has this field\n",
                file ? file : "-", config_setting_source_line(a), pc->name, who, key, path,
                pc->workload_kind, pc->target_kind);
        warned++;
    }
    return warned;
}

size_t pathcheck_run(const sched *s, const char *file, FILE *f)
{
    size_t warned = 0;
    for (size_t i = 0; i < sched_profile_count(s); i++) {
        const cfg_profile *pc = profile_cfg(sched_profile_at(s, i));
        warned += check_group(s, pc, pc->plugin_args, "plugin_args", f);
        for (size_t k = 0; k < pc->n_plugins; k++) {
            char who[160];
            snprintf(who, sizeof who, "plugin %s", pc->plugins[k].instance);
            warned += check_group(s, pc, pc->plugins[k].args, who, f);
        }
        if (pc->capacity_field) {
            /* operator.capacity_field: a target's field */
            if (!sched_foreach(s, pc->target_kind, NULL, has_path, pc->capacity_field)) {
                fprintf(f,
                        "trellis: %s:%d: warning: profile '%s': operator.capacity_field = "
                        "\"%s\": no %s in the state has this field\n",
                        file, pc->line, pc->name, pc->capacity_field, pc->target_kind);
                warned++;
            }
        }
    }
    return warned;
}
