/*
 * cfg.h - the host configuration (libconfig).
 *
 * Global settings (plugin directories, store, parallelism, logging, the
 * HTTP endpoint of `trellis run`) and the profiles: which workload kind a
 * profile schedules and which scheduler name it answers to, the target
 * kind, the binding field, queue timings, tie-breaking, and the ordered
 * plugin list with weights and arguments.
 * Nothing about a kind is hard-coded in the core: it all comes from here.
 * Every error names the file and line. Plugin arguments are checked against
 * each plugin's declared schema later, by the loader (args.c), which is why
 * the libconfig tree stays alive with the config.
 */
#ifndef TRELLIS_CFG_H
#define TRELLIS_CFG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libconfig.h>

/* extension points a plugin entry may be restricted to */
enum {
    PT_QUEUE_SORT = 1u << 0,
    PT_PRE_FILTER = 1u << 1,
    PT_FILTER = 1u << 2,
    PT_POST_FILTER = 1u << 3,
    PT_PRE_SCORE = 1u << 4,
    PT_SCORE = 1u << 5,
    PT_RESERVE = 1u << 6,
    PT_PERMIT = 1u << 7,
    PT_PRE_BIND = 1u << 8,
    PT_BIND = 1u << 9,
    PT_POST_BIND = 1u << 10,
    PT_PRE_ENQUEUE = 1u << 11,
    PT_FINALIZE = 1u << 12,
    PT_TARGET_LOST = 1u << 13,
    PT_DECIDED = 1u << 14,
    PT_ALL = (1u << 15) - 1
};
/* Name of an extension point bit ("filter"); NULL if unknown. */
const char *config_point_name(unsigned bit);
/* Parse a point name; 0 if unknown. */
unsigned config_point_parse(const char *name);

typedef struct cfg_plugin {
    char *name;                   /* plugin name (the .so is <name>.so) */
    char *instance;               /* name within the profile: `as`, default = name */
    char *path;                   /* explicit file, or NULL to search the directories */
    int weight;                   /* score weight, default 1 */
    unsigned points;              /* PT_* mask the entry may take part in */
    int ignorable;                /* a filter or score call past its deadline is cut short */
    const config_setting_t *args; /* group or NULL; owned by the config */
    int line;
} cfg_plugin;

/* score_mode: add weighted normalized scores; let each score plugin in
 * turn keep its best targets; or rank by raw signed scores, plugin by
 * plugin (Fleet). */
enum { SCORE_WEIGHTED = 0, SCORE_LEXICOGRAPHIC, SCORE_TUPLE };

enum { BINDING_FIELD = 0, BINDING_OBJECT };

typedef struct cfg_profile {
    char *name;     /* the scheduler name this profile answers to */
    int is_default; /* also takes workloads with an empty scheduler name */
    char *workload_kind, *workload_api_version; /* api_version may be NULL */
    char *scheduler_name_field;                 /* may be NULL: every workload of the kind */
    /* a workload whose finished_field holds one of finished_values has run
     * to its end (a Pod in phase Succeeded or Failed): it counts on no
     * target and gets no cycle; NULL and 0: none finishes */
    char *finished_field;
    char **finished_values;
    size_t n_finished_values;
    /* the field naming the target a preemption nominated the workload to
     * (status.nominatedNodeName), preferred when it fits; NULL: only the
     * nominations of the run */
    char *nominated_field;
    char *target_kind, *target_api_version;
    /* a boolean field of the target that cordons it (spec.unschedulable):
     * drain sets it and works as kubectl drain; NULL: the cordon taint */
    char *cordon_field;
    /* the binding model: BINDING_FIELD (the target's name in a field of
     * the workload) or BINDING_OBJECT (one object per placement) */
    int binding_model;
    char *binding_field; /* e.g. "spec.nodeName"; NULL with BINDING_OBJECT */
    /* where the target's namespace goes (openMCP: status.cluster.namespace;
     * binding_field then holds the name alone); NULL: binding_field holds
     * the target's key, namespace/name for a namespaced target */
    char *binding_namespace_field;
    int binding_subresource; /* 0: the object, 1: its status, 2: its binding */
    /* more fields whose target name counts a workload on that target
     * (Gardener counts status.seedName too); never written */
    char **also_counts;
    size_t n_also_counts;
    /* BINDING_OBJECT: the binding objects' kind and apiVersion, the field
     * naming their workload (in their namespace) and their target, their
     * state, the states that count as placed (none: every object), the
     * state a new one gets and the state a released one gets (NULL: a
     * released binding object is deleted) */
    char *bobj_kind, *bobj_api_version;
    char *bobj_workload_field, *bobj_target_field, *bobj_state_field;
    char **bobj_placed_states;
    size_t n_bobj_placed_states;
    char *bobj_initial_state, *bobj_release_state;
    /* a finalizer every binding object the host creates carries, removed
     * by the host once the object is being deleted; the annotation a
     * released binding keeps its state in, restored when it places again */
    char *bobj_finalizer, *bobj_previous_state_annotation;
    /* keep placed workloads under watch: they get a cycle again when a
     * change may make them want, or get, other targets */
    int reconcile;
    int tie_break_desc; /* 0: smallest name wins a tie, 1: largest */
    int score_mode;     /* SCORE_WEIGHTED, SCORE_LEXICOGRAPHIC or SCORE_TUPLE */
    /* stop filtering once this share of the targets was found feasible:
     * 100 = all (default), 0 = kube-scheduler's adaptive share */
    int percentage_to_score;
    int equivalence_cache;  /* reuse verdicts for equivalent workloads */
    int per_target_message; /* unschedulable_message: 0 summary, 1 per-target */
    char *target_noun;      /* in messages, default "target" */
    int events;             /* write an Event for unschedulable workloads */
    /* operator commands (taint, drain, uncordon, deschedule): the group
     * operator { }, Kubernetes' and Gardener's shape of taints */
    char *taints_field;   /* the targets' taint list, default "spec.taints" */
    char **taint_effects; /* the effects a taint may have */
    size_t n_taint_effects;
    char *cordon_taint; /* drain/uncordon taint key */
    /* drain with cordon_field (kubectl drain's filters): owner kinds of
     * the workloads it leaves (DaemonSet), the annotation of mirror
     * workloads, the disruption budgets' kind, the list of volumes (a
     * member emptyDir is local storage) */
    char **daemon_owner_kinds;
    size_t n_daemon_owner_kinds;
    char *mirror_annotation, *budget_kind, *volumes_field;
    char *capacity_field; /* deschedule: how many workloads a target takes */
    uint64_t backoff_initial_ms, backoff_max_ms, max_unschedulable_ms;
    /* how long one plugin call may run before the run ends (guard.h), 0
     * for no limit: the hooks of a scheduling cycle and prepare; init and
     * the binding cycle's hooks */
    uint32_t hook_deadline_ms, bind_deadline_ms;
    cfg_plugin *plugins;
    size_t n_plugins;
    /* plugin_args { }: arguments every plugin of the profile takes for
     * the keys it declares, unless its own args set them (one setting for
     * what several plugins read, openMCP's scheduler configuration); group
     * or NULL, owned by the config */
    const config_setting_t *plugin_args;
    int line;
} cfg_profile;

/* store = { ... }: where the state lives (store.h). The file store reads
 * type and path; a network store (etcd) its endpoints, prefix and TLS
 * files, paths resolved against the config's directory. */
/* store.resources: where the Kubernetes API serves a kind, when its
 * discovery should not decide (a kind served by several groups). */
typedef struct cfg_kube_resource {
    char *kind;
    char *api_version; /* "v1", "apps/v1", "core.gardener.cloud/v1beta1" */
    char *plural;      /* "pods", "shoots" */
    int namespaced;
} cfg_kube_resource;

typedef struct cfg_store {
    char *type;       /* "file" (default), "etcd" or "kubernetes" */
    char *path;       /* the file store's directory; may be NULL */
    char **endpoints; /* etcd: "http://127.0.0.1:2379", ... */
    size_t n_endpoints;
    char *prefix;                      /* etcd: every key starts with it, default "/trellis" */
    char *tls_ca, *tls_cert, *tls_key; /* tls { ca; cert; key; }: NULL when not given */
    uint32_t lease_ttl_s;              /* the election's lease, default 15 */
    uint32_t timeout_ms;               /* one request, default 5000 */
    /* a watch stream that brings nothing for this long is dropped and
     * opened again (etcd sends progress notifications every
     * --experimental-watch-progress-notify-interval, 10 min by default) */
    uint32_t watch_timeout_ms;
    /* the Kubernetes API store: a kubeconfig file (resolved; NULL: the
     * KUBECONFIG variable, then ~/.kube/config, read when the store
     * opens), its context (NULL: current-context), the Lease of the
     * election, the kinds store copy exports, and resources as above */
    char *kubeconfig, *context;
    char *lease_namespace, *lease_name;
    char **kinds;
    size_t n_kinds;
    cfg_kube_resource *resources;
    size_t n_resources;
    char *file; /* where the group is, for messages ("" when absent) */
    int line;
} cfg_store;

typedef struct cfg {
    char *file;         /* path as given */
    char *dir;          /* directory of the file, for relative plugin_dirs */
    char **plugin_dirs; /* resolved against dir */
    size_t n_plugin_dirs;
    int parallelism;
    /* trellis run logs a summary line this often; 0: never (default 60000) */
    uint32_t summary_interval_ms;
    /* `now`: the wall-clock time a run decides at (RFC 3339, clock.h);
     * NULL: the system clock */
    char *now;
    int64_t now_ms;
    cfg_store store;
    /* the HTTP endpoint of `trellis run` (http.h): group http { } */
    int http_enabled;   /* default 1 */
    char *http_address; /* an IPv4 address, default "127.0.0.1" */
    int http_port;      /* 0..65535 (0: the kernel chooses), default 10259 */
    /* /healthz fails when the scheduling loop has not turned for this
     * long (default 30000) */
    uint32_t liveness_timeout_ms;
    /* the share of scheduling cycles whose plugin calls are timed for
     * scheduler_plugin_execution_duration_seconds, 0..100 (default 10,
     * kube-scheduler's) */
    int plugin_metrics_sample_percent;
    cfg_profile *profiles;
    size_t n_profiles;
    /* the file was a KubeSchedulerConfiguration (kubesched.h): lc holds
     * its translation, which `trellis config convert` writes out */
    int kube_config;
    /* what the translation left out, for the operator (NULL: nothing) */
    char *notice;
    config_t lc;
} cfg;

/* Load and check a config: a trellis (libconfig) file, or a
 * KubeSchedulerConfiguration (YAML or JSON) translated first
 * (kubesched.h). 0, or -1 with err "file:line: what". On error nothing
 * needs freeing. */
int config_load(const char *file, cfg *c, char *err, size_t errlen);
void config_free(cfg *c);
/* Only the store group of file (a config that may hold nothing else):
 * what `trellis store copy` opens. 0, or -1 with err; free sc with
 * config_store_free. */
int config_load_store(const char *file, cfg_store *sc, char *err, size_t errlen);
void config_store_free(cfg_store *sc);
/* config_load, then `now` replaced by a command line's --now (NULL: the
 * file's stays), as /configz shows it. */
int config_load_at(const char *file, const char *now, cfg *c, char *err, size_t errlen);
/* Every profile setting: key, type, default, meaning. */
void config_describe_profile(FILE *f);

/* The effective configuration as pretty-printed JSON, every default filled
 * in, under the names the config file uses (served at /configz). Plugin
 * args are converted from the libconfig tree: groups become objects, lists
 * and arrays arrays. Ownership of the malloc'd text transfers to the
 * caller. */
char *config_to_json(const cfg *c);

#endif
