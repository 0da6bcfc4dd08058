/* A frozen copy of trellis/plugin.h as released with SDK 1.1: the
 * compatibility tests build plugins against it (tests/abi.sh). Never edit. */
/*
 * trellis/plugin.h - the trellis plugin SDK.
 *
 * This is the only header a trellis plugin includes. It declares opaque
 * handles for what the host owns (objects, targets, scheduling cycles), the
 * host function table through which a plugin reads and acts, and the
 * descriptor a plugin exports. It includes only libc headers: no type of a
 * third-party library ever appears here, and plugins never link against host
 * symbols, so a mock host table can drive a plugin in a unit test.
 *
 * VERSION RULE
 *   TRELLIS_SDK_MAJOR / TRELLIS_SDK_MINOR describe this header.
 *   - Adding anything (a host function at the end of trellis_host, a hook
 *     registration function, an enum value, a constant) bumps MINOR.
 *   - Removing or changing anything (a signature, a struct layout, a meaning)
 *     bumps MAJOR and resets MINOR to 0.
 *   The host loads a plugin only if plugin.major == host.major and
 *   plugin.minor <= host.minor, and refuses with a message that names both
 *   versions otherwise. The host function table only grows; a plugin built
 *   against a newer minor may test for a function with TRELLIS_HOST_HAS().
 *
 * CHANGELOG
 *   1.0  First stable SDK: descriptor, host table, hooks for every extension
 *        point of the scheduling and binding cycles, per-object prepared
 *        data, per-target counters, batch filter/score, typed arguments.
 *   1.1  lookup_object / foreach_object: read any object the store holds
 *        (e.g. a CloudProfile a Shoot names, a region ConfigMap);
 *        register_eviction_check: evict bound workloads from a target that
 *        no longer accepts them (NoExecute taints).
 *
 * LIFECYCLE (which hook runs when, and on which thread)
 *
 *   load:    dlopen -> trellis_plugin_entry() -> version check
 *   init:    init(self, host, args)            main thread, once per profile
 *                                              that names the plugin; hooks
 *                                              are registered here and only
 *                                              here
 *   objects: prepare_workload / prepare_target  main thread, once per object
 *            amounts                            add or change (not per cycle)
 *            release                            when the object goes away
 *
 *   eviction check:  eviction_check      main thread, for every workload bound
 *                                        to a target, before scheduling
 *
 *   scheduling cycle, one workload at a time:
 *     queue_sort.less                  main thread, when the queue reorders
 *     pre_filter                       main thread
 *     filter / filter_batch            WORKER threads, concurrently over
 *                                      disjoint blocks of targets
 *     post_filter                      main thread, only when no target fits
 *     pre_score                        main thread, with the feasible targets
 *     score / score_batch              WORKER threads, disjoint blocks
 *     normalize                        main thread, all feasible scores
 *     reserve                          main thread, after the host assumed
 *                                      the workload on its target(s)
 *     permit                           main thread
 *   binding cycle, per chosen target:
 *     pre_bind -> bind -> post_bind    binding thread; on any failure,
 *     unreserve                        unreserve runs and the host forgets
 *                                      the assumed workload and requeues it
 *   fini:    fini(self)                main thread, at exit. Plugins are never
 *                                      dlclose()d while the host runs.
 *
 * THREADING
 *   Objects, targets and prepared data are immutable while a cycle runs and
 *   may be read from any thread. Filter and score hooks must not write to
 *   shared state except per-target output slots the host hands them. Cycle
 *   state set in pre_filter/pre_score is read-only in filter/score.
 *
 * OWNERSHIP
 *   Every object, target and value handed to a hook is borrowed: valid until
 *   the hook returns (prepared data: until release). Strings returned by the
 *   host are owned by the host and valid as long as the handle they came
 *   from. Each function below states its ownership rule.
 */
#ifndef TRELLIS_PLUGIN_H
#define TRELLIS_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRELLIS_SDK_MAJOR 1
#define TRELLIS_SDK_MINOR 1

/* ---- opaque handles ---------------------------------------------------- */

/* A Kubernetes-shaped object (workload, target or any other kind). */
typedef struct trellis_object trellis_object;
/* A node in an object's tree: scalar, list or map. */
typedef struct trellis_value trellis_value;
/* A target as seen by the current cycle's snapshot: its object, the
 * workloads assigned to it (assumed ones included) and counter sums. */
typedef struct trellis_target trellis_target;
/* The state of one workload's scheduling cycle. */
typedef struct trellis_cycle trellis_cycle;
/* The host's handle for one plugin instance (one plugin in one profile). */
typedef struct trellis_plugin trellis_plugin;
/* A plugin's validated arguments. */
typedef struct trellis_args trellis_args;

/* ---- status ------------------------------------------------------------ */

/* Codes follow kube-scheduler's framework. "This target does not fit" is
 * UNSCHEDULABLE with a reason, never ERROR. */
typedef enum trellis_code {
    TRELLIS_SUCCESS = 0,
    /* does not fit now; may fit after other workloads move (preemption) */
    TRELLIS_UNSCHEDULABLE = 1,
    /* does not fit, and evicting workloads would not help */
    TRELLIS_UNRESOLVABLE = 2,
    /* something is broken: the workload's decision is "error" */
    TRELLIS_ERROR = 3,
    /* this plugin has nothing to say about this workload */
    TRELLIS_SKIP = 4,
    /* permit only: hold the workload until allowed or timed out */
    TRELLIS_WAIT = 5
} trellis_code;

#define TRELLIS_REASON_MAX 64
#define TRELLIS_MESSAGE_MAX 256

/* A hook's verdict. The host adds the plugin's name. `reason` is a stable
 * CamelCase code (e.g. "TaintNotTolerated") that tools may match on;
 * `message` is for people. Fill it with host->status(). */
typedef struct trellis_status {
    int code; /* trellis_code */
    char reason[TRELLIS_REASON_MAX];
    char message[TRELLIS_MESSAGE_MAX];
} trellis_status;

/* Scores are 0..TRELLIS_MAX_SCORE per plugin after normalize; weights are
 * set in the profile. */
#define TRELLIS_MAX_SCORE 100

/* ---- values ------------------------------------------------------------ */

typedef enum trellis_value_type {
    TRELLIS_VALUE_NULL = 0, /* also: absent */
    TRELLIS_VALUE_BOOL,
    TRELLIS_VALUE_INT,
    TRELLIS_VALUE_DOUBLE,
    TRELLIS_VALUE_STRING,
    TRELLIS_VALUE_LIST,
    TRELLIS_VALUE_MAP
} trellis_value_type;

/* ---- plugin arguments -------------------------------------------------- */

typedef enum trellis_arg_type {
    TRELLIS_ARG_STRING = 1,
    TRELLIS_ARG_INT,
    TRELLIS_ARG_BOOL,
    TRELLIS_ARG_DOUBLE,
    TRELLIS_ARG_STRING_LIST
} trellis_arg_type;

/* One declared argument. `default_value` is the text form the host parses
 * with the same rules as the config ("10", "true", "a,b" for lists); NULL
 * means the argument is required. The table ends with an entry whose key is
 * NULL. */
typedef struct trellis_arg_spec {
    const char *key;
    trellis_arg_type type;
    const char *default_value;
    const char *doc;
} trellis_arg_spec;

/* ---- hooks ------------------------------------------------------------- */

/* Prepared data: computed once per object add/change, read in hot loops.
 * Return 0 with *data set (may be NULL), or -1 with err filled: the object
 * is malformed for this plugin. A malformed target is rejected by this
 * plugin's filter with reason "InvalidTarget"; a malformed workload gets the
 * decision "error". Ownership of *data transfers to the host, which hands it
 * back to `release`. */
typedef int (*trellis_prepare_fn)(trellis_plugin *self,
                                  const trellis_object *obj, void **data,
                                  char *err, size_t errlen);
typedef void (*trellis_release_fn)(trellis_plugin *self, void *data);

/* Counter amounts of a workload, called once per workload add/change after
 * prepare_workload: write `n` values (n as declared with declare_counters)
 * into out. The host keeps per-target sums over assigned and assumed
 * workloads, read with host->target_counters(). */
typedef void (*trellis_amounts_fn)(trellis_plugin *self,
                                   const trellis_object *workload,
                                   int64_t *out);

/* Queue order: nonzero when a goes before b. seq is the order in which
 * workloads were first queued (smaller is earlier). */
typedef int (*trellis_less_fn)(trellis_plugin *self, const trellis_object *a,
                               uint64_t a_seq, const trellis_object *b,
                               uint64_t b_seq);

/* pre_filter: once per cycle before filters. SUCCESS continues; SKIP skips
 * this plugin's filter for this cycle; UNSCHEDULABLE/UNRESOLVABLE rejects
 * every target; ERROR ends the cycle with an error. */
typedef int (*trellis_pre_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload,
                                     trellis_status *st);

/* filter: does `workload` fit `target`? Return SUCCESS, or UNSCHEDULABLE /
 * UNRESOLVABLE with st filled. Runs on worker threads. */
typedef int (*trellis_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                 const trellis_object *workload,
                                 const trellis_target *target,
                                 trellis_status *st);

/* filter_batch: the same decision over a block of n targets. `pass` is a
 * bitmap (bit i of pass[i/64]) of targets still feasible; clear the bits of
 * those that do not fit, leave the others. Reasons are not collected here:
 * when the host needs them (explain, unschedulable message) it calls the
 * plain filter for the rejected targets, so a plugin that registers a batch
 * filter must register the plain one too and both must agree. */
typedef void (*trellis_filter_batch_fn)(trellis_plugin *self,
                                        trellis_cycle *c,
                                        const trellis_object *workload,
                                        const trellis_target *const *targets,
                                        size_t n, uint64_t *pass);

/* post_filter: runs when no target fits. It may evict workloads
 * (host->evict), create a target (host->create_target) or nominate one.
 * Return SUCCESS when it changed something that lets the workload be
 * retried at once, UNSCHEDULABLE otherwise. */
typedef int (*trellis_post_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                      const trellis_object *workload,
                                      trellis_status *st);

/* pre_score: once, with the feasible targets. */
typedef int (*trellis_pre_score_fn)(trellis_plugin *self, trellis_cycle *c,
                                    const trellis_object *workload,
                                    const trellis_target *const *feasible,
                                    size_t n, trellis_status *st);

/* score: raw score of one feasible target into *score. */
typedef int (*trellis_score_fn)(trellis_plugin *self, trellis_cycle *c,
                                const trellis_object *workload,
                                const trellis_target *target, int64_t *score,
                                trellis_status *st);

/* score_batch: raw scores of n feasible targets into scores[0..n). */
typedef void (*trellis_score_batch_fn)(trellis_plugin *self, trellis_cycle *c,
                                       const trellis_object *workload,
                                       const trellis_target *const *targets,
                                       size_t n, int64_t *scores);

/* normalize: rewrite scores[0..n) in place into 0..TRELLIS_MAX_SCORE.
 * A score plugin without normalize must produce 0..100 itself; the host
 * rejects anything outside with an error naming the plugin. */
typedef int (*trellis_normalize_fn)(trellis_plugin *self, trellis_cycle *c,
                                    const trellis_object *workload,
                                    const trellis_target *const *targets,
                                    size_t n, int64_t *scores,
                                    trellis_status *st);

/* reserve / unreserve: the workload was assumed on target (reserve), or
 * the cycle failed after reserve and the assumption is being undone
 * (unreserve, which must be idempotent). */
typedef int (*trellis_reserve_fn)(trellis_plugin *self, trellis_cycle *c,
                                  const trellis_object *workload,
                                  const trellis_target *target,
                                  trellis_status *st);
typedef void (*trellis_unreserve_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload,
                                     const trellis_target *target);

/* permit: SUCCESS, UNSCHEDULABLE (reject), or WAIT with *timeout_ms set:
 * the workload's binding waits until some plugin calls host->permit_allow
 * for it, or the timeout passes (then it is rejected). */
typedef int (*trellis_permit_fn)(trellis_plugin *self, trellis_cycle *c,
                                 const trellis_object *workload,
                                 const trellis_target *target,
                                 uint64_t *timeout_ms, trellis_status *st);

/* pre_bind / bind / post_bind. bind returns SKIP when it does not handle
 * this workload; the first bind plugin that does not skip does the bind.
 * post_bind is informational. */
typedef int (*trellis_bind_fn)(trellis_plugin *self, trellis_cycle *c,
                               const trellis_object *workload,
                               const trellis_target *target,
                               trellis_status *st);
typedef void (*trellis_post_bind_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload,
                                     const trellis_target *target);

/* eviction check (since 1.1): a workload is bound to target. Return
 * TRELLIS_SUCCESS to let it stay, or TRELLIS_UNSCHEDULABLE with st filled to
 * evict it: the host clears its binding through the store and queues it to
 * be scheduled again. */
typedef int (*trellis_eviction_fn)(trellis_plugin *self, const trellis_object *workload,
                                   const trellis_target *target, trellis_status *st);

typedef enum trellis_log_level {
    TRELLIS_LOG_ERROR = 0,
    TRELLIS_LOG_WARN,
    TRELLIS_LOG_INFO,
    TRELLIS_LOG_DEBUG
} trellis_log_level;

/* ---- the host function table ------------------------------------------- */

/*
 * Reached through the pointer handed to init; valid, immutable and
 * process-global until the host exits, so a plugin may keep it in a static.
 * Append-only: new functions are added at the end, so `size` tells which
 * exist (see TRELLIS_HOST_HAS).
 */
typedef struct trellis_host {
    size_t size; /* sizeof(trellis_host) as the host was built */
    int sdk_major, sdk_minor;

    /* -- registration (only during init; -1 afterwards or on a second call
     *    for the same hook) -- */
    int (*register_prepare_workload)(trellis_plugin *self,
                                     trellis_prepare_fn fn);
    int (*register_prepare_target)(trellis_plugin *self,
                                   trellis_prepare_fn fn);
    int (*register_release)(trellis_plugin *self, trellis_release_fn fn);
    /* Declare n int64 counters per workload (n <= 16) and the function that
     * computes them. */
    int (*declare_counters)(trellis_plugin *self, int n,
                            trellis_amounts_fn fn);
    int (*register_queue_sort)(trellis_plugin *self, trellis_less_fn fn);
    int (*register_pre_filter)(trellis_plugin *self,
                               trellis_pre_filter_fn fn);
    int (*register_filter)(trellis_plugin *self, trellis_filter_fn fn);
    int (*register_filter_batch)(trellis_plugin *self,
                                 trellis_filter_batch_fn fn);
    int (*register_post_filter)(trellis_plugin *self,
                                trellis_post_filter_fn fn);
    int (*register_pre_score)(trellis_plugin *self, trellis_pre_score_fn fn);
    int (*register_score)(trellis_plugin *self, trellis_score_fn fn);
    int (*register_score_batch)(trellis_plugin *self,
                                trellis_score_batch_fn fn);
    int (*register_normalize)(trellis_plugin *self, trellis_normalize_fn fn);
    int (*register_reserve)(trellis_plugin *self, trellis_reserve_fn fn);
    int (*register_unreserve)(trellis_plugin *self, trellis_unreserve_fn fn);
    int (*register_permit)(trellis_plugin *self, trellis_permit_fn fn);
    int (*register_pre_bind)(trellis_plugin *self, trellis_bind_fn fn);
    int (*register_bind)(trellis_plugin *self, trellis_bind_fn fn);
    int (*register_post_bind)(trellis_plugin *self, trellis_post_bind_fn fn);

    /* -- plugin instance -- */
    /* Attach private data; free_fn (may be NULL) runs after fini. Ownership
     * of data transfers to the host. */
    void (*set_private)(trellis_plugin *self, void *data,
                        void (*free_fn)(void *));
    /* The data set above; owned by the host. */
    void *(*get_private)(const trellis_plugin *self);
    /* Name of the profile this instance belongs to; host-owned. */
    const char *(*profile_name)(const trellis_plugin *self);
    /* The profile's binding field path (e.g. "spec.nodeName"); host-owned. */
    const char *(*binding_field)(const trellis_plugin *self);
    /* Log one line prefixed with the plugin's name. */
    void (*log)(const trellis_plugin *self, trellis_log_level level,
                const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
    /* Fill a status. reason is copied; fmt may be NULL. */
    int (*status)(trellis_status *st, trellis_code code, const char *reason,
                  const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 4, 5)))
#endif
        ;

    /* -- arguments (valid during init; strings owned by the host and valid
     *    until fini) -- */
    const char *(*arg_string)(const trellis_args *a, const char *key);
    int64_t (*arg_int)(const trellis_args *a, const char *key);
    int (*arg_bool)(const trellis_args *a, const char *key);
    double (*arg_double)(const trellis_args *a, const char *key);
    size_t (*arg_list_len)(const trellis_args *a, const char *key);
    const char *(*arg_list_at)(const trellis_args *a, const char *key,
                               size_t i);

    /* -- objects (strings host-owned, valid while the object is) -- */
    const char *(*object_kind)(const trellis_object *o);
    const char *(*object_api_version)(const trellis_object *o);
    const char *(*object_namespace)(const trellis_object *o); /* "" if none */
    const char *(*object_name)(const trellis_object *o);
    const char *(*object_uid)(const trellis_object *o); /* "" if none */
    /* Label / annotation value, or NULL when absent. */
    const char *(*object_label)(const trellis_object *o, const char *key);
    const char *(*object_annotation)(const trellis_object *o,
                                     const char *key);
    /* The value at a path such as "spec.provider.type", "spec.taints[0]" or
     * 'metadata.labels["topology.kubernetes.io/zone"]'; NULL when absent.
     * Parses the path on every call: resolve paths in prepare, not in
     * filter. */
    const trellis_value *(*object_get)(const trellis_object *o,
                                       const char *path);
    /* Prepared data of this plugin for an object (NULL if none). */
    void *(*object_data)(const trellis_plugin *self, const trellis_object *o);

    /* -- values (borrowed from their object) -- */
    trellis_value_type (*value_type)(const trellis_value *v);
    /* Text of a scalar of any type ("3", "true"); NULL for null, list, map.*/
    const char *(*value_string)(const trellis_value *v);
    /* 0 and *out set when v is an int (or an integral string for
     * value_int), -1 otherwise. */
    int (*value_int)(const trellis_value *v, int64_t *out);
    int (*value_double)(const trellis_value *v, double *out);
    int (*value_bool)(const trellis_value *v, int *out);
    /* Elements of a list, members of a map; 0 for scalars. */
    size_t (*value_len)(const trellis_value *v);
    const trellis_value *(*value_at)(const trellis_value *list, size_t i);
    const trellis_value *(*value_get)(const trellis_value *map,
                                      const char *key);
    /* Relative path lookup from v, same syntax as object_get. */
    const trellis_value *(*value_path)(const trellis_value *v,
                                       const char *path);
    /* Visit map members in document order; stops when cb returns nonzero
     * and returns that value. */
    int (*value_foreach)(const trellis_value *map,
                         int (*cb)(const char *key, const trellis_value *v,
                                   void *ud),
                         void *ud);

    /* -- targets in the snapshot (borrowed for the cycle) -- */
    const trellis_object *(*target_object)(const trellis_target *t);
    const char *(*target_name)(const trellis_target *t);
    /* Workloads assigned to the target, assumed ones included. */
    size_t (*target_workload_count)(const trellis_target *t);
    const trellis_object *(*target_workload)(const trellis_target *t,
                                             size_t i);
    /* This plugin's counter sums over the target's workloads; NULL if the
     * plugin declared none. */
    const int64_t *(*target_counters)(const trellis_plugin *self,
                                      const trellis_target *t);
    /* This plugin's counters for one workload. */
    const int64_t *(*workload_counters)(const trellis_plugin *self,
                                        const trellis_object *w);

    /* -- cycle state -- */
    /* Per-plugin slot, reset at the start of each cycle. Set it on the main
     * thread (pre_filter, pre_score); filter and score only read it. */
    void (*cycle_set)(trellis_cycle *c, const trellis_plugin *self,
                      void *data);
    void *(*cycle_get)(const trellis_cycle *c, const trellis_plugin *self);
    /* Zeroed memory from the cycle's arena, freed when the cycle ends;
     * NULL on exhaustion. Never call free() on it. Main thread only
     * (pre_filter, post_filter, pre_score, normalize, reserve, permit):
     * filter and score hooks run on workers and must not call it. */
    void *(*cycle_alloc)(trellis_cycle *c, size_t size);
    /* All targets of the snapshot and the filter verdict of each
     * (post_filter only; TRELLIS_SUCCESS for feasible ones). */
    size_t (*cycle_target_count)(const trellis_cycle *c);
    const trellis_target *(*cycle_target)(const trellis_cycle *c, size_t i);
    int (*cycle_target_code)(const trellis_cycle *c, size_t i);
    /* Run the profile's filters against t as if `victims` were not on it
     * (post_filter only). Returns the code; st gets the first rejection. */
    int (*cycle_filter_without)(trellis_cycle *c, const trellis_target *t,
                                const trellis_object *const *victims,
                                size_t n, trellis_status *st);
    /* post_filter actions. evict: unbind the victim (its binding field is
     * cleared through the store) and requeue it; reason is copied.
     * create_target: add a new target from a JSON manifest (copied);
     * nominate: prefer t when the workload is retried. 0 or -1 with err. */
    int (*evict)(trellis_cycle *c, const trellis_plugin *self,
                 const trellis_object *victim, const char *reason,
                 char *err, size_t errlen);
    int (*create_target)(trellis_cycle *c, const trellis_plugin *self,
                         const char *manifest_json, char *err, size_t errlen);
    int (*nominate)(trellis_cycle *c, const trellis_target *t);

    /* -- binding -- */
    /* Write a string (value != NULL) or remove the field (value == NULL) at
     * path in the workload through the store. 0, or -1 with err. */
    int (*store_set_field)(const trellis_plugin *self,
                           const trellis_object *o, const char *path,
                           const char *value, char *err, size_t errlen);
    /* Release a workload held by permit WAIT (allow) or fail it (reject). */
    int (*permit_allow)(const trellis_plugin *self, const char *namespace_,
                        const char *name);
    int (*permit_reject)(const trellis_plugin *self, const char *namespace_,
                         const char *name, const char *reason);

    /* -- since 1.1 -- */
    /* Any object the store holds, by kind, namespace ("" when cluster
     * scoped) and name; NULL when absent. Borrowed: valid until the hook
     * returns (in prepare: until the prepared data is released). */
    const trellis_object *(*lookup_object)(const trellis_plugin *self, const char *kind,
                                           const char *namespace_, const char *name);
    /* Visit every object of a kind (in namespace_, or all when NULL) in store
     * order; stops when cb returns nonzero and returns that value. Objects
     * are borrowed as with lookup_object. */
    int (*foreach_object)(const trellis_plugin *self, const char *kind, const char *namespace_,
                          int (*cb)(const trellis_object *o, void *ud), void *ud);
    /* Registration (init only): see trellis_eviction_fn. */
    int (*register_eviction_check)(trellis_plugin *self, trellis_eviction_fn fn);
} trellis_host;

/* Whether the host table has a given member (for plugins built against a
 * newer minor than the running host). */
#define TRELLIS_HOST_HAS(host, member)                                       \
    ((host)->size >= offsetof(trellis_host, member) + sizeof((host)->member))

/* ---- the descriptor ---------------------------------------------------- */

/* What a plugin exports. The first three fields protect the rest: the host
 * reads them before anything else and refuses the plugin if they do not
 * match. */
typedef struct trellis_plugin_desc {
    size_t size; /* sizeof(trellis_plugin_desc) the plugin was built with */
    int sdk_major;
    int sdk_minor;
    const char *name;        /* unique, [a-z0-9-]+ */
    const char *version;     /* the plugin's own version */
    const char *description; /* one line */
    const trellis_arg_spec *args; /* NULL-key terminated; may be NULL */
    /* Register hooks and read args. Return 0, or -1 with err filled; the
     * host stops start-up with that message. */
    int (*init)(trellis_plugin *self, const trellis_host *host,
                const trellis_args *args, char *err, size_t errlen);
    void (*fini)(trellis_plugin *self); /* may be NULL */
} trellis_plugin_desc;

#define TRELLIS_PLUGIN_ENTRY "trellis_plugin_entry"
typedef const trellis_plugin_desc *(*trellis_plugin_entry_fn)(void);

#if defined(__GNUC__)
#define TRELLIS_EXPORT __attribute__((visibility("default")))
#else
#define TRELLIS_EXPORT
#endif

/* Declare the plugin's one exported symbol:
 *   static const trellis_plugin_desc desc = { TRELLIS_DESC_HEADER, ... };
 *   TRELLIS_PLUGIN(desc)
 */
#define TRELLIS_DESC_HEADER                                                  \
    sizeof(trellis_plugin_desc), TRELLIS_SDK_MAJOR, TRELLIS_SDK_MINOR
#define TRELLIS_PLUGIN(desc)                                                 \
    TRELLIS_EXPORT const trellis_plugin_desc *trellis_plugin_entry(void);    \
    TRELLIS_EXPORT const trellis_plugin_desc *trellis_plugin_entry(void)     \
    {                                                                        \
        return &(desc);                                                      \
    }

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_PLUGIN_H */
