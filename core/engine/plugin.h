/*
 * plugin.h - the plugin loader and registry.
 *
 * Loads the .so of each plugin a profile names (and only those), checks the
 * descriptor's size and SDK version before calling anything else in it,
 * creates one instance per (profile, plugin entry) with its validated
 * arguments, runs init, and records the hooks init registered. Instances
 * that prepare per-object data get a slot in every object's aux array;
 * instances that declare counters get a range of the per-workload counter
 * vector. Modules are never dlclose()d while the host runs. The loader
 * does not implement the host table: it is handed one (hostapi.h) and
 * gives it to each plugin's init.
 */
#ifndef TRELLIS_PLUGIN_REGISTRY_H
#define TRELLIS_PLUGIN_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "cfg.h"
#include "services.h"
#include "trellis/plugin.h"

struct profile;

typedef struct plugin_module {
    char *path; /* the file it came from */
    /* the file's device, inode, size and modification time: a rebuilt
     * plugin is a changed plugin (quarantine.h) */
    char ident[96];
    void *dl;
    const trellis_plugin_desc *desc; /* the plugin's, or desc_copy */
    trellis_plugin_desc *desc_copy;  /* an older, shorter descriptor widened; owned */
} plugin_module;

typedef struct plugin_hooks {
    trellis_prepare_fn prepare_workload, prepare_target;
    trellis_release_fn release;
    trellis_amounts_fn amounts;
    trellis_amounts_fn target_values;
    trellis_less_fn less;
    trellis_pre_filter_fn pre_filter;
    trellis_filter_fn filter;
    trellis_filter_batch_fn filter_batch;
    trellis_filter_span_fn filter_span;
    trellis_filter_feasible_fn filter_feasible;
    trellis_post_filter_fn post_filter;
    trellis_pre_score_fn pre_score;
    trellis_score_fn score;
    trellis_score_batch_fn score_batch;
    trellis_score_span_fn score_span;
    trellis_normalize_fn normalize;
    trellis_reserve_fn reserve;
    trellis_unreserve_fn unreserve;
    trellis_permit_fn permit;
    trellis_bind_fn pre_bind, bind;
    trellis_post_bind_fn post_bind;
    trellis_eviction_fn eviction_check;
    trellis_equivalent_fn equivalent;
    trellis_pre_enqueue_fn pre_enqueue;
    trellis_finalize_fn finalize;
    trellis_target_lost_fn target_lost;
    trellis_decided_fn decided;
    trellis_review_candidates_fn review_candidates;
    trellis_allocated_fn allocated;
    /* queueing hints: has_events is 0 until register_events is called (the
     * plugin is then concerned by every event); events is the OR of the
     * registered masks, hint the last function given (NULL: always) */
    unsigned events;
    int has_events;
    trellis_hint_fn hint;
} plugin_hooks;

struct trellis_plugin {
    plugin_module *mod;
    const char *name; /* instance name, owned by the config */
    struct profile *profile;
    /* what the host table may ask of the scheduler (NULL: nothing) */
    const host_services *svc;
    const cfg_plugin *cfg;
    int weight;
    unsigned points; /* PT_* the config allows */
    trellis_args *args;
    void *priv;
    void (*priv_free)(void *);
    int index;       /* position in the profile's plugin list */
    int slot;        /* aux slot in objects, -1 when none */
    int counter_off; /* offset in the workload counter vector */
    int n_counters;
    int tvalue_off; /* offset in the target value vector */
    int n_tvalues;
    int in_init;
    /* how long one call may run (guard.h; 0: no limit): the scheduling
     * cycle's hooks and prepare; init and the binding cycle's hooks */
    uint32_t hook_deadline_ms, bind_deadline_ms;
    /* the profile entry's `ignorable`: a filter or score call past its
     * deadline is cut short and the plugin sits out the cycle */
    int ignorable;
    /* set after fini: the host table refuses this plugin's calls (its own
     * threads may outlive it); the struct itself is kept until exit */
    atomic_int retired;
    atomic_int retired_warned;
    plugin_hooks h;
    /* declare_kinds: the other kinds it reads (owned) */
    char **kinds;
    size_t n_kinds;
    /* name_counters: n_counters names (owned; NULL: not shown) and units;
     * NULL when the plugin named none */
    char **counter_names;
    trellis_unit *counter_units;
    /* its series of scheduler_plugin_execution_duration_seconds, owned;
     * freed with the struct (after retirement: threads may still time) */
    struct metrics_cache *mcache;
};

typedef struct registry {
    plugin_module **mods;
    size_t n_mods;
    trellis_plugin **inst;
    size_t n_inst;
    int n_slots;
    int n_counters;
    int n_tvalues;
} registry;

/* An instance's name and score weight (front-ends). */
const char *plugin_name(const trellis_plugin *pl);
int plugin_weight(const trellis_plugin *pl);
/* Its counters (declare_counters), and counter k's name and unit as the
 * plugin named them (name_counters): NULL when it is not named. Borrowed
 * from the instance. */
int plugin_counter_count(const trellis_plugin *pl);
const char *plugin_counter_name(const trellis_plugin *pl, int k, trellis_unit *unit);

void registry_init(registry *r);
/* fini every instance, free private data; modules stay loaded. The
 * instances' handles stay valid (retired: the host table refuses them)
 * until registry_release_retired. */
void registry_free(registry *r);
/* Free the handles of every retired instance; call when no plugin thread
 * can run any more (at exit). */
void registry_release_retired(void);

/* Find and load the module for a plugin name (or an explicit path). The
 * search order is dirs[0..n). An already loaded module of that name is
 * returned again. 0, or -1 with err naming the file and the cause. */
int registry_load(registry *r, const char *name, const char *path, char *const *dirs, size_t n_dirs,
                  plugin_module **out, char *err, size_t errlen);
/* Register a plugin linked into the host (see trellis/embed.h): its
 * descriptor is checked as a loaded one's; a profile naming it gets it
 * before any .so of that name. 0, or -1 with err. Main thread, before the
 * profiles load. */
int registry_add_builtin(trellis_plugin_entry_fn entry, char *err, size_t errlen);
/* The i-th built-in plugin's descriptor, or NULL past the last. */
const trellis_plugin_desc *registry_builtin(size_t i);

/* Check a descriptor before using anything else in it: the SDK major,
 * the oldest minor it needs, its size (an older, shorter one is widened
 * into *copy, owned by the caller; a longer, newer one is used as it is),
 * its name, init and argument types. *use is the descriptor to read. 0, or
 * -1 with err naming path and both versions. */
int registry_check_desc(const trellis_plugin_desc *d, const char *path,
                        const trellis_plugin_desc **use, trellis_plugin_desc **copy, char *err,
                        size_t errlen);
/* Open one file and check it (used by `trellis plugins` to list a
 * directory). The module is not registered: registry_close_file frees what
 * it holds. */
int registry_open_file(const char *path, plugin_module *m, char *err, size_t errlen);
void registry_close_file(plugin_module *m);
/* Where a new instance belongs and what it is given. */
typedef struct instance_ctx {
    struct profile *profile;  /* may be NULL */
    const cfg_profile *prof;  /* the deadlines of its calls; may be NULL */
    const trellis_host *host; /* the table init receives */
    const host_services *svc; /* may be NULL */
    const char *cfg_file;
} instance_ctx;

/* Create an instance of m for the config entry pc and run its init. 0, or
 * -1 with err. */
int registry_instantiate(registry *r, plugin_module *m, const cfg_plugin *pc,
                         const instance_ctx *ctx, trellis_plugin **out, char *err, size_t errlen);
/* Run m's init with its default arguments against host (no services) to
 * learn which hooks it registers (registry_hook_names), then its fini:
 * `trellis plugins`. 0; -1 with hooks saying why not. */
int registry_probe_hooks(plugin_module *m, const trellis_host *host, char *hooks, size_t len);
/* Names of the hooks an instance registered, comma separated, into buf;
 * registered events last, as "events(target-add,target-update)". */
const char *registry_hook_names(const trellis_plugin *pl, char *buf, size_t len);

#endif
