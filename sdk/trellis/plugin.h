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
 *     registration function, an enum value, a constant, a field at the end
 *     of trellis_plugin_desc) bumps MINOR.
 *   - Removing or changing anything (a signature, a struct layout, a meaning)
 *     bumps MAJOR and resets MINOR to 0.
 *   A plugin's descriptor carries the SDK major it was built against and
 *   the oldest host minor it runs on: TRELLIS_PLUGIN_MIN_MINOR, this
 *   header's minor unless the plugin defines it lower before including
 *   this header. The host loads a plugin only if plugin.major == host.major
 *   and plugin.min_minor <= host.minor, and refuses with a message that
 *   names both versions otherwise. A plugin that declares an older minor
 *   tests for each newer host function it uses with TRELLIS_HOST_HAS() and
 *   does without it on an older host. The host accepts a descriptor shorter
 *   than its own (built against an older header): the fields it lacks read
 *   as zero. Within a major, the offsets of trellis_host and
 *   trellis_plugin_desc never change (the test suite checks them).
 *
 * CHANGELOG (one symbol per line: grep for a symbol to learn its minor)
 *   1.0  trellis_plugin_desc
 *   1.0  TRELLIS_PLUGIN
 *   1.0  TRELLIS_DESC_HEADER
 *   1.0  TRELLIS_HOST_HAS
 *   1.0  trellis_code
 *   1.0  trellis_status
 *   1.0  trellis_value_type
 *   1.0  trellis_arg_type
 *   1.0  trellis_arg_spec
 *   1.0  trellis_log_level
 *   1.0  trellis_prepare_fn
 *   1.0  trellis_release_fn
 *   1.0  trellis_amounts_fn
 *   1.0  trellis_less_fn
 *   1.0  trellis_pre_filter_fn
 *   1.0  trellis_filter_fn
 *   1.0  trellis_filter_batch_fn
 *   1.0  trellis_post_filter_fn
 *   1.0  trellis_pre_score_fn
 *   1.0  trellis_score_fn
 *   1.0  trellis_score_batch_fn
 *   1.0  trellis_normalize_fn
 *   1.0  trellis_reserve_fn
 *   1.0  trellis_unreserve_fn
 *   1.0  trellis_permit_fn
 *   1.0  trellis_bind_fn
 *   1.0  trellis_post_bind_fn
 *   1.0  TRELLIS_MAX_SCORE
 *   1.0  TRELLIS_REASON_MAX
 *   1.0  TRELLIS_MESSAGE_MAX
 *   1.0  trellis_host.register_prepare_workload
 *   1.0  trellis_host.register_prepare_target
 *   1.0  trellis_host.register_release
 *   1.0  trellis_host.declare_counters
 *   1.0  trellis_host.register_queue_sort
 *   1.0  trellis_host.register_pre_filter
 *   1.0  trellis_host.register_filter
 *   1.0  trellis_host.register_filter_batch
 *   1.0  trellis_host.register_post_filter
 *   1.0  trellis_host.register_pre_score
 *   1.0  trellis_host.register_score
 *   1.0  trellis_host.register_score_batch
 *   1.0  trellis_host.register_normalize
 *   1.0  trellis_host.register_reserve
 *   1.0  trellis_host.register_unreserve
 *   1.0  trellis_host.register_permit
 *   1.0  trellis_host.register_pre_bind
 *   1.0  trellis_host.register_bind
 *   1.0  trellis_host.register_post_bind
 *   1.0  trellis_host.set_private
 *   1.0  trellis_host.get_private
 *   1.0  trellis_host.profile_name
 *   1.0  trellis_host.binding_field
 *   1.0  trellis_host.log
 *   1.0  trellis_host.status
 *   1.0  trellis_host.arg_string
 *   1.0  trellis_host.arg_int
 *   1.0  trellis_host.arg_bool
 *   1.0  trellis_host.arg_double
 *   1.0  trellis_host.arg_list_len
 *   1.0  trellis_host.arg_list_at
 *   1.0  trellis_host.object_kind
 *   1.0  trellis_host.object_api_version
 *   1.0  trellis_host.object_namespace
 *   1.0  trellis_host.object_name
 *   1.0  trellis_host.object_uid
 *   1.0  trellis_host.object_label
 *   1.0  trellis_host.object_annotation
 *   1.0  trellis_host.object_get
 *   1.0  trellis_host.object_data
 *   1.0  trellis_host.value_type
 *   1.0  trellis_host.value_string
 *   1.0  trellis_host.value_int
 *   1.0  trellis_host.value_double
 *   1.0  trellis_host.value_bool
 *   1.0  trellis_host.value_len
 *   1.0  trellis_host.value_at
 *   1.0  trellis_host.value_get
 *   1.0  trellis_host.value_path
 *   1.0  trellis_host.value_foreach
 *   1.0  trellis_host.target_object
 *   1.0  trellis_host.target_name
 *   1.0  trellis_host.target_workload_count
 *   1.0  trellis_host.target_workload
 *   1.0  trellis_host.target_counters
 *   1.0  trellis_host.workload_counters
 *   1.0  trellis_host.cycle_set
 *   1.0  trellis_host.cycle_get
 *   1.0  trellis_host.cycle_alloc
 *   1.0  trellis_host.cycle_target_count
 *   1.0  trellis_host.cycle_target
 *   1.0  trellis_host.cycle_target_code
 *   1.0  trellis_host.cycle_filter_without
 *   1.0  trellis_host.evict
 *   1.0  trellis_host.create_target
 *   1.0  trellis_host.nominate
 *   1.0  trellis_host.store_set_field
 *   1.0  trellis_host.permit_allow
 *   1.0  trellis_host.permit_reject
 *   1.1  trellis_host.lookup_object                 read any object the store holds
 *   1.1  trellis_host.foreach_object                visit every object of a kind
 *   1.1  trellis_host.register_eviction_check       evict bound workloads (NoExecute)
 *   1.1  trellis_eviction_fn
 *   1.2  trellis_host.register_events               queueing hints
 *   1.2  trellis_hint_fn
 *   1.2  TRELLIS_EV_TARGET_ADD
 *   1.2  TRELLIS_EV_TARGET_UPDATE
 *   1.2  TRELLIS_EV_TARGET_DELETE
 *   1.2  TRELLIS_EV_WORKLOAD_GONE
 *   1.2  TRELLIS_EV_WORKLOAD_UPDATE
 *   1.2  TRELLIS_EV_OTHER
 *   1.2  TRELLIS_EV_ALL
 *   1.2  TRELLIS_QUEUE
 *   1.2  TRELLIS_QUEUE_SKIP
 *   1.3  trellis_host.register_filter_span          columnar filter over snapshot indices
 *   1.3  trellis_host.register_score_span           columnar score
 *   1.3  trellis_host.cycle_target_data             prepared data of every target, as an array
 *   1.3  trellis_host.declare_target_values         int64 values per target change
 *   1.3  trellis_host.cycle_target_values           target values as a column
 *   1.3  trellis_host.cycle_target_counter          counter sums as a column
 *   1.3  trellis_host.register_equivalent           reuse verdicts for equivalent workloads
 *   1.3  trellis_filter_span_fn
 *   1.3  trellis_score_span_fn
 *   1.3  trellis_equivalent_fn
 *   1.3  trellis_host.cycle_target_count            (changed) works in every hook of a cycle
 *   1.3  trellis_host.cycle_target                  (changed) works in every hook of a cycle
 *   1.4  TRELLIS_PLUGIN_MIN_MINOR                   the oldest host minor a plugin runs on
 *   1.4  trellis_plugin_desc.sdk_minor              (changed) that oldest minor, not the build's
 *   1.4  TRELLIS_PLUGIN_AS                          a plugin that can also be built in
 *   1.4  TRELLIS_BUILTIN
 *   1.4  trellis/helpers.h                          batch/span loops, hints, equality, score range
 *   1.4  trellis_host.clock_now                     the run's wall clock (never time())
 *   1.4  trellis_host.time_parse                    RFC 3339 text to milliseconds
 *   1.4  trellis_host.cycle_retry_at                try again when a verdict expires
 *   1.4  trellis_host.target_key                    namespace/name of a namespaced target
 *   1.4  trellis_host.store_patch                   edits of any object, list edits, subresources
 *   1.4  trellis_host.store_create                  create any object
 *   1.4  trellis_host.store_delete                  delete an object
 *   1.4  trellis_edit
 *   1.4  trellis_edit_op
 *   1.4  TRELLIS_EDITS_MAX
 *   1.4  trellis_host.register_pre_enqueue          workloads a profile leaves alone
 *   1.4  trellis_host.register_finalize             release what a deleted workload holds
 *   1.4  trellis_pre_enqueue_fn
 *   1.4  trellis_finalize_fn
 *   1.4  TRELLIS_ARG_DOCUMENT                       structured arguments (YAML or JSON)
 *   1.4  trellis_host.arg_document
 *   1.4  trellis_host.store_bind                    a placement as the binding model says
 *   1.4  trellis_host.register_target_lost          a workload bound to a target that is gone
 *   1.4  trellis_target_lost_fn
 *   1.4  trellis_host.cycle_note                    how a decision was reached, in the decision
 *   1.4  trellis_host.cycle_want                    a decision of several (or all) targets
 *   1.4  TRELLIS_WANT_ALL
 *   1.4  trellis_host.cycle_held_count              the targets a workload holds already
 *   1.4  trellis_host.cycle_held
 *   1.4  trellis_host.cycle_release                 give a held target up (scale-down)
 *   1.4  trellis_host.cycle_requeue_now             another cycle at once (not a failure)
 *   1.4  trellis_host.cycle_score                   the score another plugin gave a target
 *   1.4  trellis_host.declare_kinds                 the kinds a plugin reads (stores list them)
 *   1.4  trellis_host.arg_document_where            file and line of a document argument's member
 *   1.5  trellis_host.cycle_held_object             the binding object of a held target
 *   1.5  trellis_host.cycle_reconsider              put a held target to the vote again
 *   1.5  trellis_host.store_bind_edits              a placement with the binder's own fields
 *   1.5  trellis_host.register_decided              what the outcome of a cycle was
 *   1.5  trellis_decided_fn
 *   1.5  trellis_host.cycle_pick_count              the targets a cycle picked
 *   1.5  trellis_host.cycle_pick
 *   1.5  trellis_host.cycle_held_kept               whether a held target stays
 *   1.5  trellis_host.cycle_target_status           a target's verdict with its status
 *   1.5  trellis_host.name_counters                 counters by name, unit and allocatable (views)
 *   1.5  trellis_allocated_fn
 *   1.5  trellis_unit
 *   1.5  TRELLIS_UNIT_COUNT
 *   1.5  TRELLIS_UNIT_MILLI
 *   1.5  TRELLIS_UNIT_BYTES
 *   1.6  trellis_host.register_filter_feasible      once per cycle over the feasible targets
 *   1.6  trellis_filter_feasible_fn
 *   1.6  trellis_host.cycle_reject                  reject a feasible target (filter_feasible)
 *   1.6  TRELLIS_EV_WORKLOAD_PLACED                 a workload placed (kube's AssignedPod add)
 *   1.7  trellis_candidate                          a preemption candidate: target, victims
 *   1.7  trellis_review_candidates_fn
 *   1.7  trellis_host.register_review_candidates    review a post-filter's candidates (extenders)
 *   1.7  trellis_host.cycle_review_candidates       have the candidates reviewed before the pick
 *   1.7  trellis_host.cycle_narrow                  the targets a cycle looks at (PreFilterResult)
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
 *   pre_enqueue                          main thread, when a pending workload
 *                                        is read or changes: SKIP leaves it
 *                                        alone (no decision, no Event)
 *   finalize                             main thread, when a workload being
 *                                        deleted is read or one is deleted;
 *                                        may write
 *   target_lost                          main thread, when a workload is read
 *                                        bound to a target the store does not
 *                                        hold, and when its target is
 *                                        deleted; may write
 *
 *   queueing hints (long-running host):
 *     hint                             main thread, when a store change
 *                                      arrives (after the changed object was
 *                                      prepared), once for each workload in
 *                                      the unschedulable pool that this
 *                                      plugin's pre_filter or filter
 *                                      rejected, for the events the plugin
 *                                      registered; TRELLIS_QUEUE moves the
 *                                      workload back to the active queue
 *
 *   scheduling cycle, one workload at a time:
 *     queue_sort.less                  main thread, when the queue reorders
 *     pre_filter                       main thread
 *     filter_span / filter_batch /     WORKER threads, concurrently over
 *     filter                           disjoint blocks of targets (the first
 *                                      of the three a plugin registered)
 *     filter_feasible                  main thread, once, after every filter,
 *                                      with the feasible targets (1.6)
 *     post_filter                      main thread, only when no target fits
 *       review_candidates              main thread, inside a post_filter's
 *                                      cycle_review_candidates call: the
 *                                      profile's other plugins review its
 *                                      preemption candidates (1.7)
 *     pre_score                        main thread, with the feasible targets
 *     score_span / score_batch / score WORKER threads, disjoint blocks
 *     normalize                        main thread, all feasible scores
 *     reserve                          main thread, after the host assumed
 *                                      the workload on its target(s)
 *     permit                           main thread
 *   binding cycle, per chosen target:
 *     pre_bind -> bind -> post_bind    binding thread; on any failure,
 *     unreserve                        unreserve runs and the host forgets
 *                                      the assumed workload and requeues it
 *                                      (unreserve: main thread)
 *     In `trellis run` the binding cycle runs on its own thread while the
 *     main thread schedules the next workload. The cycle's state (cycle_set,
 *     cycle_alloc) moves with it; the target handle is a copy taken at the
 *     decision: its name, object and counters, but no workload list
 *     (target_workload_count is 0). post_bind runs once the store write
 *     of the binding succeeded. The one-shot `schedule` binds in the
 *     main thread and writes the store at the end: there post_bind runs
 *     right after bind.
 *   fini:    fini(self)                main thread, at exit. Plugins are never
 *                                      dlclose()d while the host runs.
 *            A plugin stops every thread of its own in fini: once fini has
 *            returned, calling the host is forbidden. The host refuses (a
 *            NULL, -1 or "" answer, and one error logged) every function
 *            that takes the plugin's handle; the others may touch objects
 *            that are gone.
 *
 *   deadlines and crashes: a hook that runs longer than the profile's
 *            hook_deadline_ms (bind_deadline_ms for init and the binding
 *            cycle) ends the run; a hook that crashes kills the host, which
 *            names the plugin, the hook and the object, and the next start
 *            does not give that object to the plugin again until one of
 *            them changes (trellis(1), "Plugins that crash or hang").
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
#define TRELLIS_SDK_MINOR 7

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
    TRELLIS_ARG_STRING_LIST,
    /* a YAML or JSON document, read once at start and handed over as a
     * value tree (arg_document): in the config a file name (relative to
     * the config file) or { inline = "..."; } (libconfig cannot spell
     * Kubernetes label keys; a document can). 1.4 */
    TRELLIS_ARG_DOCUMENT
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
typedef int (*trellis_prepare_fn)(trellis_plugin *self, const trellis_object *obj, void **data,
                                  char *err, size_t errlen);
typedef void (*trellis_release_fn)(trellis_plugin *self, void *data);

/* Counter amounts of a workload, called once per workload add/change after
 * prepare_workload: write `n` values (n as declared with declare_counters)
 * into out. The host keeps per-target sums over assigned and assumed
 * workloads, read with host->target_counters(). */
typedef void (*trellis_amounts_fn)(trellis_plugin *self, const trellis_object *workload,
                                   int64_t *out);

/* How a counter's amounts read (since 1.5): what `trellis targets` and
 * the report print them as. */
typedef enum trellis_unit {
    TRELLIS_UNIT_COUNT = 0, /* plain integers: pods, shoots, requests */
    TRELLIS_UNIT_MILLI = 1, /* thousandths (cpu in millicores): "1500m", "4" */
    TRELLIS_UNIT_BYTES = 2  /* bytes: "512Mi", "1G" */
} trellis_unit;

/* allocated (since 1.5): what target holds and can hold of each counter,
 * for the operator's views (`trellis targets`, the report), not for
 * scheduling: `kubectl describe nodes`' "Allocated resources". placed[0..n)
 * are the workloads placed on it in the view. Before the call the host
 * sets used[i] to the sum of their counter i (what amounts gave them) and
 * allocatable[i] to -1 (no limit known); the plugin sets allocatable[i]
 * in the counter's unit and corrects used[i] when the target holds more
 * than its workloads say (openMCP counts a Cluster's request finalizers).
 * Main thread, outside any cycle; target and placed are prepared and
 * borrowed for the call. */
typedef void (*trellis_allocated_fn)(trellis_plugin *self, const trellis_object *target,
                                     const trellis_object *const *placed, size_t n, int64_t *used,
                                     int64_t *allocatable);

/* Queue order: nonzero when a goes before b. seq is the order in which
 * workloads were first queued (smaller is earlier). The host also asks
 * with a_seq == b_seq (both 0) whether a ranks before b on its own merit:
 * a workload nominated to a target counts there for b unless b ranks
 * before it so (kube: for Pods of equal or lower priority). Main thread. */
typedef int (*trellis_less_fn)(trellis_plugin *self, const trellis_object *a, uint64_t a_seq,
                               const trellis_object *b, uint64_t b_seq);

/* pre_filter: once per cycle before filters. SUCCESS continues; SKIP skips
 * this plugin's filter for this cycle; UNSCHEDULABLE/UNRESOLVABLE rejects
 * every target; ERROR ends the cycle with an error. */
typedef int (*trellis_pre_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload, trellis_status *st);

/* filter: does `workload` fit `target`? Return SUCCESS, or UNSCHEDULABLE /
 * UNRESOLVABLE with st filled. Runs on worker threads. */
typedef int (*trellis_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                 const trellis_object *workload, const trellis_target *target,
                                 trellis_status *st);

/* filter_batch: the same decision over a block of n targets. `pass` is a
 * bitmap (bit i of pass[i/64]) of targets still feasible; clear the bits of
 * those that do not fit, leave the others. Reasons are not collected here:
 * when the host needs them (explain, unschedulable message) it calls the
 * plain filter for the rejected targets, so a plugin that registers a batch
 * filter must register the plain one too and both must agree. */
typedef void (*trellis_filter_batch_fn)(trellis_plugin *self, trellis_cycle *c,
                                        const trellis_object *workload,
                                        const trellis_target *const *targets, size_t n,
                                        uint64_t *pass);

/* filter_span (since 1.3): filter_batch addressed by snapshot index. The
 * block is the cycle's targets first .. first + n - 1 (cycle_target(c,
 * first + j)); `first` is a multiple of 64 and bit j of pass[j / 64] stands
 * for target first + j. Clear the bits of those that do not fit. Read the
 * per-target columns (cycle_target_data, cycle_target_values,
 * cycle_target_counter) once per call and index them with first + j: no
 * host call per target. As with
 * filter_batch, the plain filter must be registered too and agree. */
typedef void (*trellis_filter_span_fn)(trellis_plugin *self, trellis_cycle *c,
                                       const trellis_object *workload, size_t first, size_t n,
                                       uint64_t *pass);

/* filter_feasible (since 1.6): once per cycle, after every filter ran,
 * with the targets that passed them all, feasible[0..n) (n >= 1, in
 * snapshot order): what kube-scheduler asks its extenders' filter verb,
 * one request for the whole list. Reject a target with
 * host->cycle_reject(c, self, feasible[j], st); the targets left go to
 * the next filter_feasible plugin (profile order), then to post_filter
 * when none is left, else to pre_score. Return SUCCESS (or SKIP: nothing
 * to say); UNSCHEDULABLE or UNRESOLVABLE rejects every target still
 * feasible with st; ERROR ends the cycle with st (the decision is an
 * error naming the plugin). Main thread; the plugin's rejections show in
 * `trellis explain` and in the unschedulable message like a filter's.
 * A profile in which a plugin registers it does not use the equivalence
 * cache (the verdicts may depend on anything). Runs only when the
 * profile entry takes part in the filter point. */
typedef int (*trellis_filter_feasible_fn)(trellis_plugin *self, trellis_cycle *c,
                                          const trellis_object *workload,
                                          const trellis_target *const *feasible, size_t n,
                                          trellis_status *st);

/* post_filter: runs when no target fits. It may evict workloads
 * (host->evict), create a target (host->create_target) or nominate one.
 * Return SUCCESS when it changed something that lets the workload be
 * retried at once, UNSCHEDULABLE otherwise. */
typedef int (*trellis_post_filter_fn)(trellis_plugin *self, trellis_cycle *c,
                                      const trellis_object *workload, trellis_status *st);

/* pre_score: once, with the feasible targets. */
typedef int (*trellis_pre_score_fn)(trellis_plugin *self, trellis_cycle *c,
                                    const trellis_object *workload,
                                    const trellis_target *const *feasible, size_t n,
                                    trellis_status *st);

/* score: raw score of one feasible target into *score. */
typedef int (*trellis_score_fn)(trellis_plugin *self, trellis_cycle *c,
                                const trellis_object *workload, const trellis_target *target,
                                int64_t *score, trellis_status *st);

/* score_batch: raw scores of n feasible targets into scores[0..n). */
typedef void (*trellis_score_batch_fn)(trellis_plugin *self, trellis_cycle *c,
                                       const trellis_object *workload,
                                       const trellis_target *const *targets, size_t n,
                                       int64_t *scores);

/* score_span (since 1.3): raw scores of the feasible targets whose
 * snapshot indices are idx[0..n) (ascending) into scores[0..n). Index the
 * columns (cycle_target_data, cycle_target_values, cycle_target_counter)
 * with idx[j]. A plugin
 * that registers it must register the plain score too (the host calls it
 * to report a failure); both must agree. */
typedef void (*trellis_score_span_fn)(trellis_plugin *self, trellis_cycle *c,
                                      const trellis_object *workload, const uint32_t *idx, size_t n,
                                      int64_t *scores);

/* equivalent (since 1.3): nonzero when this plugin's pre_filter, filter,
 * pre_score and score answer exactly the same for workloads a and b on
 * every target, whatever the targets' state (typically: the fields the
 * plugin reads from a workload, or its prepared data, are equal). By
 * registering it a plugin also promises that its filter verdict and score
 * on a target depend only on the workload and on that target (its object,
 * prepared data, target values, counters and workloads), never on other
 * targets, other objects or anything pre_score gathers across targets.
 * When every plugin of a profile that filters or scores registered it and
 * all say a workload is equivalent to one of a recent cycle, the host
 * reuses that cycle's verdicts and raw scores for every target that did not
 * change since, and runs filter and score only on the targets that did
 * (normalize and the selection run as always). This is kube-scheduler's
 * old equivalence cache, with exact target generations; a replica set's
 * pods are the common case. Main thread; a and b are prepared. */
typedef int (*trellis_equivalent_fn)(trellis_plugin *self, const trellis_object *a,
                                     const trellis_object *b);

/* normalize: rewrite scores[0..n) in place into 0..TRELLIS_MAX_SCORE.
 * A score plugin without normalize must produce 0..100 itself; the host
 * rejects anything outside with an error naming the plugin. */
typedef int (*trellis_normalize_fn)(trellis_plugin *self, trellis_cycle *c,
                                    const trellis_object *workload,
                                    const trellis_target *const *targets, size_t n, int64_t *scores,
                                    trellis_status *st);

/* reserve / unreserve: the workload was assumed on target (reserve), or
 * the cycle failed after reserve and the assumption is being undone
 * (unreserve, which must be idempotent). */
typedef int (*trellis_reserve_fn)(trellis_plugin *self, trellis_cycle *c,
                                  const trellis_object *workload, const trellis_target *target,
                                  trellis_status *st);
typedef void (*trellis_unreserve_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload, const trellis_target *target);

/* permit: SUCCESS, UNSCHEDULABLE (reject), or WAIT with *timeout_ms set:
 * the workload's binding waits until some plugin calls host->permit_allow
 * for it, or the timeout passes (then it is rejected). */
typedef int (*trellis_permit_fn)(trellis_plugin *self, trellis_cycle *c,
                                 const trellis_object *workload, const trellis_target *target,
                                 uint64_t *timeout_ms, trellis_status *st);

/* pre_bind / bind / post_bind. bind returns SKIP when it does not handle
 * this workload; the first bind plugin that does not skip does the bind.
 * post_bind is informational. */
typedef int (*trellis_bind_fn)(trellis_plugin *self, trellis_cycle *c,
                               const trellis_object *workload, const trellis_target *target,
                               trellis_status *st);
typedef void (*trellis_post_bind_fn)(trellis_plugin *self, trellis_cycle *c,
                                     const trellis_object *workload, const trellis_target *target);

/* eviction check (since 1.1): a workload is bound to target. Return
 * TRELLIS_SUCCESS to let it stay, or TRELLIS_UNSCHEDULABLE with st filled to
 * evict it: the host clears its binding through the store and queues it to
 * be scheduled again. */
typedef int (*trellis_eviction_fn)(trellis_plugin *self, const trellis_object *workload,
                                   const trellis_target *target, trellis_status *st);

/* ---- queueing hints (since 1.2) ----------------------------------------
 *
 * A host that keeps running keeps the workloads that fit nowhere in an
 * unschedulable pool, remembering which pre_filter / filter plugins
 * rejected each. When the store changes it asks only those plugins whether
 * the change may let the workload fit, and requeues the workload when one
 * says TRELLIS_QUEUE. A plugin declares the changes that concern it with
 * register_events; one that never calls it is concerned by every change
 * (safe, and what a 1.0 or 1.1 plugin gets). */

/* What changed in the store: one bit per kind of change. */
enum {
    TRELLIS_EV_TARGET_ADD = 1u << 0,      /* a target appeared */
    TRELLIS_EV_TARGET_UPDATE = 1u << 1,   /* a target changed (old and new given) */
    TRELLIS_EV_TARGET_DELETE = 1u << 2,   /* a target went away */
    TRELLIS_EV_WORKLOAD_GONE = 1u << 3,   /* an assigned workload was deleted or
                                             unbound: its target has room */
    TRELLIS_EV_WORKLOAD_UPDATE = 1u << 4, /* the unschedulable workload itself
                                             changed (always requeues, without
                                             asking; listed for completeness) */
    TRELLIS_EV_OTHER = 1u << 5,           /* any other object changed (a
                                             CloudProfile, a ConfigMap) */
    TRELLIS_EV_WORKLOAD_PLACED = 1u << 6, /* (since 1.6) a workload was placed
                                             on a target (its binding field
                                             set, by this host or another):
                                             kube's AssignedPod add, which
                                             pod affinity and spread wait for */
    TRELLIS_EV_ALL = (1u << 7) - 1        /* 1.2 to 1.5: (1u << 6) - 1 */
};

/* A hint's answer. */
enum { TRELLIS_QUEUE_SKIP = 0, TRELLIS_QUEUE = 1 };

/* May this change let `workload`, which this plugin rejected, fit now?
 * `event` is one TRELLIS_EV_* bit; old_obj / new_obj are the changed object
 * before and after: old_obj is NULL on an add, new_obj NULL on a delete;
 * for TRELLIS_EV_WORKLOAD_GONE old_obj is the workload that went away and
 * new_obj is NULL. The workload and changed targets and workloads are
 * prepared (object_data works on them; other objects have no prepared
 * data); all are borrowed until the hint returns. Main thread. Return
 * TRELLIS_QUEUE when unsure: a wrong TRELLIS_QUEUE_SKIP leaves a workload
 * waiting that would fit, a wrong TRELLIS_QUEUE only costs a cycle. A
 * target whose prepare failed for this plugin before the change is always
 * a concern; the host does not ask. */
typedef int (*trellis_hint_fn)(trellis_plugin *self, const trellis_object *workload, unsigned event,
                               const trellis_object *old_obj, const trellis_object *new_obj);

typedef enum trellis_log_level {
    TRELLIS_LOG_ERROR = 0,
    TRELLIS_LOG_WARN,
    TRELLIS_LOG_INFO,
    TRELLIS_LOG_DEBUG
} trellis_log_level;

/* Whether this profile takes the pending workload w at all (1.4):
 * TRELLIS_SUCCESS queues it; TRELLIS_SKIP leaves it alone: no decision, no
 * Event, nothing queued (openMCP's request selector, an "ignore"
 * annotation). Asked when a pending workload is read and whenever it
 * changes. Main thread. Any other code counts as SUCCESS and is logged. */
typedef int (*trellis_pre_enqueue_fn)(trellis_plugin *self, const trellis_object *w);
/* w is being deleted (metadata.deletionTimestamp is set) or is gone from
 * the store (1.4): release what it holds (a finalizer on its target,
 * objects created for it) with store_patch / store_delete. Called when a
 * run reads such a workload and when the store reports the deletion, so a
 * plugin makes it idempotent; a workload being deleted is not scheduled.
 * Main thread; may read and write. TRELLIS_SUCCESS, or TRELLIS_ERROR with
 * st filled (logged with the workload). */
typedef int (*trellis_finalize_fn)(trellis_plugin *self, const trellis_object *w,
                                   trellis_status *st);

/* w is bound (by the profile's binding) to a target the store does not
 * hold: namespace_ ("" when cluster-scoped) and name are the binding's
 * (1.4). The target was deleted, or never created. TRELLIS_SUCCESS: the
 * plugin repaired it (openMCP creates a request's deleted Cluster again,
 * with store_create); TRELLIS_UNSCHEDULABLE with st filled: the placement
 * is cleared and w queued again, as an eviction; TRELLIS_SKIP: nothing to
 * say (the next plugin is asked). Called when a run reads such a workload
 * and, in `trellis run`, when the target is deleted; make it idempotent.
 * Main thread; may read and write. */
typedef int (*trellis_target_lost_fn)(trellis_plugin *self, const trellis_object *w,
                                      const char *namespace_, const char *name, trellis_status *st);

/* decided (1.5): the scheduling cycle of w is over and its outcome known:
 * the targets picked (cycle_pick_count, cycle_pick: about to be bound),
 * the held targets it keeps (cycle_held_kept), every target's verdict
 * (cycle_target_status) and the scores (cycle_score). again: the
 * workload gets another cycle at once (cycle_requeue_now), so this one is
 * not the last word. What a plugin records about the outcome goes here:
 * Fleet's policy snapshot status, its decisions and Scheduled condition.
 * Its store_patch calls are written with the bindings; with binding
 * objects (binding model "object") they are held back until the cycle's
 * bindings were made (in `trellis run`: written by the store; in a
 * one-shot run: taken by it, written in the same flush) and dropped when
 * one failed, as KubeFleet writes the status only after the bindings it
 * made. Called
 * for every cycle that reached the filters or found the workload holding
 * what it wants, not for an error. Main thread; may read and write. */
typedef void (*trellis_decided_fn)(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                                   int again);

/* ---- reviewing preemption candidates (1.7) ------------------------------- */

/* One way a post_filter found to make room for the workload (kube's
 * preemption candidate: a Node and its Victims): evict victims[0..n_victims)
 * from target, which overdraws pdb_violations disruption budgets. Every
 * pointer is borrowed for the cycle: target is one of the cycle's
 * targets, each victim a workload assigned to it (target_workload), the
 * victims array the cycle's (cycle_alloc) or the target's own. */
typedef struct trellis_candidate {
    const trellis_target *target;
    const trellis_object *const *victims;
    size_t n_victims;
    int64_t pdb_violations;
} trellis_candidate;

/* review_candidates (1.7): a post_filter that found candidates
 * (preemption) has them reviewed with cycle_review_candidates before it
 * picks one: what kube-scheduler asks its extenders' preempt verb. Each
 * reviewer of the profile (profile order) gets what the one before left,
 * cands[0..*n) (n >= 1), in a copy it may edit: remove candidates (move
 * the others up and lower *n; 0: none may be used), change a candidate's
 * victims (workloads on its target, in an array from cycle_alloc) and
 * its pdb_violations; never add a target or list one twice. Return
 * TRELLIS_SUCCESS: the host checks the edits and takes them (an edit it
 * may not make fails the review, naming the plugin); TRELLIS_SKIP (not
 * interested, or a failure the plugin may ignore): the candidates stay as
 * they were, edits dropped; TRELLIS_ERROR with st: the review fails and
 * the post_filter is told (kube: an extender that is not ignorable).
 * Main thread, inside the post_filter's call: the reviewer may read (the
 * cycle's targets, target_workload, lookup_object), note (cycle_note)
 * and allocate (cycle_alloc), not write or evict. Ownership of cands
 * stays with the host; the victims arrays a reviewer sets must live for
 * the cycle. */
typedef int (*trellis_review_candidates_fn)(trellis_plugin *self, trellis_cycle *c,
                                            const trellis_object *workload,
                                            trellis_candidate *cands, size_t *n,
                                            trellis_status *st);

/* ---- writes (1.4) -------------------------------------------------------- */

/* What an edit of store_patch does to the field at its path. */
typedef enum {
    TRELLIS_EDIT_SET = 0,     /* value: the new string */
    TRELLIS_EDIT_SET_JSON,    /* value: a JSON text (a list, a map, a number...) */
    TRELLIS_EDIT_REMOVE,      /* the field goes (value unused) */
    TRELLIS_EDIT_LIST_ADD,    /* add the string value to a list of strings unless it is
                                 there; the list is created when the field is absent */
    TRELLIS_EDIT_LIST_REMOVE, /* remove the string value from a list of strings */
} trellis_edit_op;

/* One edit. path: dotted keys, a key with dots or slashes in brackets
 * (metadata.labels["kubernetes-fleet.io/parent-CRP"]). List edits are
 * resolved against the object as the store holds it when the write is
 * made, so a concurrent addition is not lost. Borrowed for the call. */
typedef struct trellis_edit {
    int op; /* trellis_edit_op */
    const char *path;
    const char *value;
} trellis_edit;

#define TRELLIS_EDITS_MAX 64 /* edits in one store_patch call */

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
    int (*register_prepare_workload)(trellis_plugin *self, trellis_prepare_fn fn);
    int (*register_prepare_target)(trellis_plugin *self, trellis_prepare_fn fn);
    int (*register_release)(trellis_plugin *self, trellis_release_fn fn);
    /* Declare n int64 counters per workload (n <= 16) and the function that
     * computes them. */
    int (*declare_counters)(trellis_plugin *self, int n, trellis_amounts_fn fn);
    int (*register_queue_sort)(trellis_plugin *self, trellis_less_fn fn);
    int (*register_pre_filter)(trellis_plugin *self, trellis_pre_filter_fn fn);
    int (*register_filter)(trellis_plugin *self, trellis_filter_fn fn);
    int (*register_filter_batch)(trellis_plugin *self, trellis_filter_batch_fn fn);
    int (*register_post_filter)(trellis_plugin *self, trellis_post_filter_fn fn);
    int (*register_pre_score)(trellis_plugin *self, trellis_pre_score_fn fn);
    int (*register_score)(trellis_plugin *self, trellis_score_fn fn);
    int (*register_score_batch)(trellis_plugin *self, trellis_score_batch_fn fn);
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
    void (*set_private)(trellis_plugin *self, void *data, void (*free_fn)(void *));
    /* The data set above; owned by the host. */
    void *(*get_private)(const trellis_plugin *self);
    /* Name of the profile this instance belongs to; host-owned. */
    const char *(*profile_name)(const trellis_plugin *self);
    /* The profile's binding field path (e.g. "spec.nodeName"); host-owned. */
    const char *(*binding_field)(const trellis_plugin *self);
    /* Log one line prefixed with the plugin's name. */
    void (*log)(const trellis_plugin *self, trellis_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
    /* Fill a status. reason is copied; fmt may be NULL. */
    int (*status)(trellis_status *st, trellis_code code, const char *reason, const char *fmt, ...)
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
    const char *(*arg_list_at)(const trellis_args *a, const char *key, size_t i);

    /* -- objects (strings host-owned, valid while the object is) -- */
    const char *(*object_kind)(const trellis_object *o);
    const char *(*object_api_version)(const trellis_object *o);
    const char *(*object_namespace)(const trellis_object *o); /* "" if none */
    const char *(*object_name)(const trellis_object *o);
    const char *(*object_uid)(const trellis_object *o); /* "" if none */
    /* Label / annotation value, or NULL when absent. */
    const char *(*object_label)(const trellis_object *o, const char *key);
    const char *(*object_annotation)(const trellis_object *o, const char *key);
    /* The value at a path such as "spec.provider.type", "spec.taints[0]" or
     * 'metadata.labels["topology.kubernetes.io/zone"]'; NULL when absent.
     * Parses the path on every call: resolve paths in prepare, not in
     * filter. */
    const trellis_value *(*object_get)(const trellis_object *o, const char *path);
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
    const trellis_value *(*value_get)(const trellis_value *map, const char *key);
    /* Relative path lookup from v, same syntax as object_get. */
    const trellis_value *(*value_path)(const trellis_value *v, const char *path);
    /* Visit map members in document order; stops when cb returns nonzero
     * and returns that value. */
    int (*value_foreach)(const trellis_value *map,
                         int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud);

    /* -- targets in the snapshot (borrowed for the cycle) -- */
    const trellis_object *(*target_object)(const trellis_target *t);
    const char *(*target_name)(const trellis_target *t);
    /* Workloads assigned to the target, assumed ones included. */
    size_t (*target_workload_count)(const trellis_target *t);
    const trellis_object *(*target_workload)(const trellis_target *t, size_t i);
    /* This plugin's counter sums over the target's workloads; NULL if the
     * plugin declared none. */
    const int64_t *(*target_counters)(const trellis_plugin *self, const trellis_target *t);
    /* This plugin's counters for one workload. */
    const int64_t *(*workload_counters)(const trellis_plugin *self, const trellis_object *w);

    /* -- cycle state -- */
    /* Per-plugin slot, reset at the start of each cycle. Set it on the main
     * thread (pre_filter, filter_feasible, pre_score); filter and score
     * only read it. */
    void (*cycle_set)(trellis_cycle *c, const trellis_plugin *self, void *data);
    void *(*cycle_get)(const trellis_cycle *c, const trellis_plugin *self);
    /* Zeroed memory from the cycle's arena, freed when the cycle ends;
     * NULL on exhaustion. Never call free() on it. Main thread only
     * (pre_filter, filter_feasible, post_filter, pre_score, normalize,
     * reserve, permit): filter and score hooks run on workers and must
     * not call it. */
    void *(*cycle_alloc)(trellis_cycle *c, size_t size);
    /* All targets of the cycle's snapshot, in name order (every hook of a
     * cycle since 1.3; post_filter only before), and the filter verdict of
     * each (post_filter only; TRELLIS_SUCCESS for feasible ones). */
    size_t (*cycle_target_count)(const trellis_cycle *c);
    const trellis_target *(*cycle_target)(const trellis_cycle *c, size_t i);
    int (*cycle_target_code)(const trellis_cycle *c, size_t i);
    /* Run the profile's filters against t as if `victims` were not on it
     * (post_filter only; a target a pre-filter left out of the cycle is
     * TRELLIS_UNRESOLVABLE). Returns the code; st gets the first
     * rejection. */
    int (*cycle_filter_without)(trellis_cycle *c, const trellis_target *t,
                                const trellis_object *const *victims, size_t n, trellis_status *st);
    /* post_filter actions. evict: unbind the victim (its binding field is
     * cleared through the store) and requeue it; reason is copied.
     * create_target: add a new target from a JSON manifest (copied);
     * nominate: prefer t when the workload is retried (-1 for a target a
     * pre-filter left out of the cycle, cycle_narrow). 0 or -1 with err. */
    int (*evict)(trellis_cycle *c, const trellis_plugin *self, const trellis_object *victim,
                 const char *reason, char *err, size_t errlen);
    int (*create_target)(trellis_cycle *c, const trellis_plugin *self, const char *manifest_json,
                         char *err, size_t errlen);
    int (*nominate)(trellis_cycle *c, const trellis_target *t);

    /* -- binding -- */
    /* Write a string (value != NULL) or remove the field (value == NULL) at
     * path in the workload through the store. 0, or -1 with err. */
    int (*store_set_field)(const trellis_plugin *self, const trellis_object *o, const char *path,
                           const char *value, char *err, size_t errlen);
    /* Release a workload held by permit WAIT (allow) or fail it (reject). */
    int (*permit_allow)(const trellis_plugin *self, const char *namespace_, const char *name);
    int (*permit_reject)(const trellis_plugin *self, const char *namespace_, const char *name,
                         const char *reason);

    /* -- since 1.1 -- */
    /* Any object the store holds, by kind, namespace ("" when cluster
     * scoped) and name; NULL when absent. Borrowed: valid until the hook
     * returns (in prepare: until the prepared data is released). What a
     * prepare reads is prepared again when it changes, except when only
     * its status does. */
    const trellis_object *(*lookup_object)(const trellis_plugin *self, const char *kind,
                                           const char *namespace_, const char *name);
    /* Visit every object of a kind (in namespace_, or all when NULL) in store
     * order; stops when cb returns nonzero and returns that value. Objects
     * are borrowed as with lookup_object. */
    int (*foreach_object)(const trellis_plugin *self, const char *kind, const char *namespace_,
                          int (*cb)(const trellis_object *o, void *ud), void *ud);
    /* Registration (init only): see trellis_eviction_fn. */
    int (*register_eviction_check)(trellis_plugin *self, trellis_eviction_fn fn);

    /* -- since 1.2 -- */
    /* Registration (init only): the TRELLIS_EV_* bits in `events` concern
     * this plugin, and fn (NULL: every such event queues) tells for each
     * which rejected workloads to requeue; see trellis_hint_fn. May be
     * called more than once: the masks OR together and the last fn wins
     * (for every registered event). events 0 says no change but the
     * workload's own ever undoes this plugin's rejections. -1 outside init
     * or with bits outside TRELLIS_EV_ALL (logged). A plugin meant for
     * older hosts too (its descriptor declaring an older minor) tests for
     * it with TRELLIS_HOST_HAS(host, register_events). */
    int (*register_events)(trellis_plugin *self, unsigned events, trellis_hint_fn fn);

    /* -- since 1.3 -- */
    /* Registration (init only): see trellis_filter_span_fn and
     * trellis_score_span_fn. */
    int (*register_filter_span)(trellis_plugin *self, trellis_filter_span_fn fn);
    int (*register_score_span)(trellis_plugin *self, trellis_score_span_fn fn);
    /* This plugin's prepared data of every target of the cycle, indexed
     * like cycle_target: element i is object_data(self, target i's object)
     * (NULL when it has none). Host-owned, read-only, valid until the hook
     * returns; any thread. NULL when the plugin has no prepared data. */
    void *const *(*cycle_target_data)(const trellis_cycle *c, const trellis_plugin *self);
    /* Declare n int64 values per target (1 <= n <= 32), computed by fn
     * once per target add or change, after prepare_target succeeded (zeros
     * when it failed), and read in a cycle as columns with
     * cycle_target_values. For what a hot loop compares or multiplies
     * (allocatable amounts, capacities, priorities); a plugin may store
     * other bit patterns (a double) in them. Registration: init only. */
    int (*declare_target_values)(trellis_plugin *self, int n, trellis_amounts_fn fn);
    /* Column k (0 <= k < n declared) of this plugin's target values:
     * element i belongs to cycle_target(c, i). NULL when k is out of range.
     * Host-owned, read-only, valid until the hook returns; any thread. */
    const int64_t *(*cycle_target_values)(const trellis_cycle *c, const trellis_plugin *self,
                                          int k);
    /* Column k (0 <= k < n declared with declare_counters) of this
     * plugin's counter sums: element i is target_counters(self, target
     * i)[k]. NULL when k is out of range. Same lifetime as above. */
    const int64_t *(*cycle_target_counter)(const trellis_cycle *c, const trellis_plugin *self,
                                           int k);
    /* Registration (init only): see trellis_equivalent_fn. */
    int (*register_equivalent)(trellis_plugin *self, trellis_equivalent_fn fn);

    /* -- since 1.4 -- */
    /* The wall-clock time the host decides at, in milliseconds since the
     * Unix epoch: fixed for a one-shot run (--now, the config's `now`, or
     * the system clock when the run started), read once per loop turn by
     * `trellis run`. Plugins never call time(): the same state scheduled
     * at the same instant gets the same decisions. Any hook, any thread. */
    int64_t (*clock_now)(const trellis_plugin *self);
    /* Parse an RFC 3339 time ("2026-11-25T19:09:02Z", a fraction and a
     * numeric offset allowed) into *ms. 0, or -1 when text (borrowed) is
     * not one. Any hook, any thread. */
    int (*time_parse)(const char *text, int64_t *ms);
    /* A verdict of this cycle changes by itself at time ms (a heartbeat
     * that expires): if the workload stays unschedulable, it is tried
     * again then even when nothing else changes. The earliest time asked
     * for in a cycle wins; times not after clock_now are ignored. A plugin
     * whose verdicts depend on the clock must not register_equivalent.
     * pre_filter, filter, post_filter, pre_score, score; any thread. */
    void (*cycle_retry_at)(trellis_cycle *c, int64_t ms);
    /* The target's identity among its kind: "namespace/name" when it is
     * namespaced (two namespaces may hold targets of the same name), its
     * name when cluster-scoped; what a binding written without a separate
     * namespace field must hold, and what decisions print. Borrowed for
     * the cycle. target_name is the object's name alone. */
    const char *(*target_key)(const trellis_target *t);
    /* Writes, from the hooks that may write: post_filter, reserve,
     * unreserve, permit, pre_bind, bind, post_bind (refused, with a
     * logged error, elsewhere: a filter runs on a worker against a
     * snapshot). Writes are buffered and made when the host flushes the
     * store (after binding; at the end of a one-shot run); a write the
     * store then refuses is logged with the object. An object a plugin
     * created is in the host's view once the hook's cycle is over
     * (lookup_object finds it in later cycles of the same run), and so is
     * a patch or a deletion of an object that is not a workload, a target
     * or a binding object (the workloads it held back are tried again,
     * in a one-shot run too); a patch or a deletion of those once the
     * store reports it (`trellis run`: the watch), their bindings and
     * assumptions standing for them until then. What the host saw at once
     * of a write the store refuses at its flush goes back to the object
     * as the store has it (as it was read; a creation: gone).
     * 0, or -1 with err (NUL-terminated, errlen bytes at most).
     *
     * store_patch: edits[0..n) (n <= TRELLIS_EDITS_MAX) of o as read, or
     * of its subresource ("status", "binding"; NULL: the object);
     * refused when o changed in the store since it was read. o and the
     * edits are borrowed. */
    int (*store_patch)(const trellis_plugin *self, const trellis_object *o, const char *subresource,
                       const trellis_edit *edits, size_t n, char *err, size_t errlen);
    /* store_create: a new object from a JSON manifest (copied): apiVersion,
     * kind, metadata.name (and namespace when namespaced); refused when
     * it exists. */
    int (*store_create)(const trellis_plugin *self, const char *manifest_json, char *err,
                        size_t errlen);
    /* store_delete: o (borrowed), refused when it changed since it was
     * read. */
    int (*store_delete)(const trellis_plugin *self, const trellis_object *o, char *err,
                        size_t errlen);
    /* Registration (init only): see trellis_pre_enqueue_fn and
     * trellis_finalize_fn. */
    int (*register_pre_enqueue)(trellis_plugin *self, trellis_pre_enqueue_fn fn);
    int (*register_finalize)(trellis_plugin *self, trellis_finalize_fn fn);
    /* The document of a TRELLIS_ARG_DOCUMENT argument, read with the
     * value_* functions; NULL when key is not such an argument. Owned by
     * the host, valid until fini. */
    const trellis_value *(*arg_document)(const trellis_args *args, const char *key);
    /* Record w's placement on t as the profile's binding model says: t's
     * key into the binding field, or its name and namespace into the
     * field and the namespace field, through the configured subresource.
     * What a binder calls; a write like store_patch (same hooks, same
     * buffering). 0, or -1 with err. */
    int (*store_bind)(const trellis_plugin *self, const trellis_object *w, const trellis_target *t,
                      char *err, size_t errlen);
    /* Registration (init only): see trellis_target_lost_fn. */
    int (*register_target_lost)(trellis_plugin *self, trellis_target_lost_fn fn);
    /* One line on how this cycle's decision was reached (a placement
     * recovered, the strategy's pick and the seed of a random draw, a
     * target created), added to the decision under `notes` with the
     * plugin's name; what `trellis explain` shows first. text is copied
     * (at most TRELLIS_MESSAGE_MAX bytes kept; at most 64 notes per
     * decision, then one line says how many more there were). Main thread hooks of the
     * scheduling cycle: pre_filter, post_filter, pre_score, normalize,
     * reserve, permit, review_candidates (1.7); ignored elsewhere. */
    void (*cycle_note)(trellis_cycle *c, const trellis_plugin *self, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
    /* How many targets this workload wants in all (pre_filter): 1 (the
     * default), n (0: none, all it holds may go), or TRELLIS_WANT_ALL
     * (every feasible target: no scoring). The targets it holds already count: a workload holding
     * two that wants three gets one more, picked from the ranking (the
     * best first), never one it holds; one holding more than it wants
     * keeps them until a plugin releases some (cycle_release). More than
     * one needs a binding model that records several placements
     * (binding.model = "object"); with model "field" the host keeps 1.
     * The last call wins. */
    void (*cycle_want)(trellis_cycle *c, uint32_t n);
    /* The targets the workload holds when the cycle starts (its binding
     * objects, or its binding field), by key, in the order they were
     * read: never candidates of this cycle. Borrowed for the cycle. Any
     * hook of a scheduling cycle, any thread. */
    size_t (*cycle_held_count)(const trellis_cycle *c);
    const char *(*cycle_held)(const trellis_cycle *c, size_t i);
    /* Give up the held target of key target (pre_filter): after the
     * cycle its placement is released (the binding field cleared, or the
     * binding object put in its release state or deleted) and the
     * decision lists it under `released`, with reason in the log. 0, or
     * -1 when target is not held or is released already. */
    int (*cycle_release)(trellis_cycle *c, const trellis_plugin *self, const char *target,
                         const char *reason);
    /* After this cycle's placements are bound, the workload gets another
     * cycle at once, which does not count as a failed attempt (Fleet
     * places one cluster per cycle when topology spread constraints
     * apply). pre_filter, post_filter, pre_score, normalize, reserve,
     * permit. */
    void (*cycle_requeue_now)(trellis_cycle *c);
    /* The score the score plugin named plugin (its name in the profile,
     * `as`) gave target t in this cycle, as the ranking used it: raw in
     * score_mode tuple, normalized otherwise (what a binder records next
     * to a placement: Fleet's clusterScore). 0 and *out set, or -1 when
     * the cycle scored nothing (a single feasible target is not scored),
     * the plugin is not a score plugin of the profile or sat the cycle
     * out, or t was not scored. normalize (another plugin's, scored
     * before it), reserve, permit, decided (1.5); main thread. */
    int (*cycle_score)(const trellis_cycle *c, const char *plugin, const trellis_target *t,
                       int64_t *out);
    /* The kinds this plugin reads with lookup_object or foreach_object
     * besides its profile's workload and target kinds (Gardener's
     * CloudProfile, a ConfigMap): kinds[0..] up to a NULL, copied. A store
     * that lists and watches only what is asked for (etcd, the Kubernetes
     * API) reads them; the file store reads every manifest anyway. init
     * only; 0, or -1 (outside init, or a kind that is not a word). */
    int (*declare_kinds)(trellis_plugin *self, const char *const *kinds);
    /* Where a member of the document argument `key` stands in its source,
     * for messages: "file:line" into buf (the file as the config names it,
     * resolved, or "(inline)"), for the map member reached from the
     * document's root by the keys path[0..depth) (depth 0: the document's
     * first line). The line, or 0 when the host cannot tell (buf then
     * holds the file alone); -1 when key is not a document argument.
     * Ownership of every argument is retained by the caller; any thread. */
    int (*arg_document_where)(const trellis_args *args, const char *key, const char *const *path,
                              size_t depth, char *buf, size_t len);

    /* -- since 1.5 -- */
    /* The binding object that places the workload on held target i
     * (cycle_held(c, i); binding model "object"): what a plugin reads a
     * placement's own fields from (the policy snapshot it was made under,
     * the score recorded with it). NULL with model "field" or when i is
     * out of range. Borrowed for the cycle; any hook of a scheduling
     * cycle, any thread. */
    const trellis_object *(*cycle_held_object)(const trellis_cycle *c, size_t i);
    /* Put the held target of key target to the vote again (pre_filter):
     * it stops counting towards what the workload holds (cycle_want counts
     * without it) and is a candidate of this cycle like any other target.
     * Picked again, its placement is written again (store_bind_edits on
     * the binding it has: Fleet moves a binding of an older policy
     * snapshot to the new one) and stays in the decision's `targets`
     * without being `added`; not picked, it is released as with
     * cycle_release. reason (copied) goes to the decision's notes. 0, or
     * -1 when target is not held, or is released or reconsidered already,
     * or the binding model is "field" (one target, nothing to vote on). */
    int (*cycle_reconsider)(trellis_cycle *c, const trellis_plugin *self, const char *target,
                            const char *reason);
    /* store_bind, with edits[0..n) (n <= TRELLIS_EDITS_MAX; borrowed) made
     * in the same write: applied to a new binding object before it is
     * created, or patched into the binding that places again (model
     * "object"), or into the workload with the binding field (model
     * "field"). What a binder that records more than the placement calls
     * (Fleet's spec.schedulingPolicySnapshotName and spec.clusterDecision).
     * Same hooks and buffering as store_bind. 0, or -1 with err. */
    int (*store_bind_edits)(const trellis_plugin *self, const trellis_object *w,
                            const trellis_target *t, const trellis_edit *edits, size_t n, char *err,
                            size_t errlen);
    /* Registration (init only): see trellis_decided_fn. */
    int (*register_decided)(trellis_plugin *self, trellis_decided_fn fn);
    /* The targets this cycle picked, the best first (decided, and the
     * binding cycle's reserve and permit); borrowed for the cycle. */
    size_t (*cycle_pick_count)(const trellis_cycle *c);
    const trellis_target *(*cycle_pick)(const trellis_cycle *c, size_t i);
    /* Whether held target i (cycle_held) stays the workload's after this
     * cycle: not released, and, when put to the vote, picked again
     * (decided). */
    int (*cycle_held_kept)(const trellis_cycle *c, size_t i);
    /* Target i's (cycle_target) verdict in this cycle: TRELLIS_SUCCESS
     * when it was feasible or never looked at, else the code of the first
     * rejection with st filled: its reason and message (the host may run
     * the filters again to say it). st NULL: the verdict alone, at no
     * cost (TRELLIS_UNSCHEDULABLE for a rejection whose code a batch
     * filter did not say). post_filter and decided; main thread. */
    int (*cycle_target_status)(trellis_cycle *c, size_t i, trellis_status *st);
    /* Name the counters declared with declare_counters, so that the
     * operator's views show per target how much of each its workloads use
     * (the counter sums) and how much it can hold (what `kubectl describe
     * nodes` shows under "Allocated resources"): names[i] and units[i] for
     * each of the n counters declared (names[i] NULL: counter i is the
     * plugin's own business and not shown), and fn (NULL: the sums, no
     * limits) for what each target holds and can hold. init only, after declare_counters; names
     * are copied, ownership of both arrays is retained by the caller. 0,
     * or -1 (outside init, no counters declared, a second call, a name
     * not of letters, digits and ".-_/", a unit this host does not know). */
    int (*name_counters)(trellis_plugin *self, const char *const *names, const trellis_unit *units,
                         trellis_allocated_fn fn);

    /* -- since 1.6 -- */
    /* Registration (init only): see trellis_filter_feasible_fn. */
    int (*register_filter_feasible)(trellis_plugin *self, trellis_filter_feasible_fn fn);
    /* Reject feasible target t (one of those handed to this plugin's
     * filter_feasible, which is the only hook it works in) with st: its
     * code (TRELLIS_UNSCHEDULABLE or TRELLIS_UNRESOLVABLE), reason and
     * message, copied. The target leaves the cycle's feasible list when
     * the hook returns; the verdict is the target's first rejection in
     * the decision, `trellis explain` and the unschedulable message, with
     * this plugin's name. 0, or -1 (outside filter_feasible, t not
     * feasible any more, another code). Ownership of t and st is
     * retained by the caller. */
    int (*cycle_reject)(trellis_cycle *c, const trellis_plugin *self, const trellis_target *t,
                        const trellis_status *st);

    /* -- since 1.7 -- */
    /* Registration (init only): see trellis_review_candidates_fn. */
    int (*register_review_candidates)(trellis_plugin *self, trellis_review_candidates_fn fn);
    /* Have the profile's reviewers (every plugin that registered
     * review_candidates but self, in profile order) review
     * cands[0..*n), the candidates this post_filter found, before it
     * picks one. TRELLIS_SUCCESS: cands[0..*n) holds what they left, in
     * the order given (a victims array may now be a reviewer's, valid for
     * the cycle); *n 0: none may be used. TRELLIS_ERROR with st (its
     * message "plugin NAME: ..."): a reviewer failed, or answered what it
     * may not (a target it was not given or given twice, a victim not on
     * its target, no victims); cands[0..*n) is what the reviewers before
     * it left. Without reviewers: TRELLIS_SUCCESS, nothing changed.
     * post_filter only (TRELLIS_ERROR elsewhere, and inside a review).
     * Ownership of cands, its arrays and st is retained by the caller. */
    int (*cycle_review_candidates)(trellis_cycle *c, const trellis_plugin *self,
                                   trellis_candidate *cands, size_t *n, trellis_status *st);
    /* Narrow this cycle to the targets at positions idx[0..n) (cycle_target
     * positions; any order, repeats allowed), kube-scheduler's
     * PreFilterResult: filter and score hooks then run over those targets
     * only (a span or batch hook still gets whole blocks, with the bits of
     * the others clear). A second call, by this plugin or another,
     * intersects. n 0 leaves no target: the post-filters run. A target left
     * out is rejected without any filter running on it; when its verdict is
     * wanted (the decision's candidates, `trellis explain`, the
     * unschedulable message) the narrowing plugin's plain filter is asked
     * why, and without one, or when it passes the target, the reason is
     * NotInPreFilterResult, "didn't satisfy plugin(s) [name]" as kube
     * words it; its code is TRELLIS_UNRESOLVABLE either way (kube's absent
     * nodes: no eviction brings one into the cycle). A narrowed cycle
     * does not use the equivalence cache: the set is what keeps it short.
     * pre_filter only. Ownership of idx is retained by the caller (it is
     * read before the call returns). 0, or -1 (outside pre_filter, a
     * position out of range: nothing narrowed). */
    int (*cycle_narrow)(trellis_cycle *c, const trellis_plugin *self, const uint32_t *idx,
                        size_t n);
} trellis_host;

/* cycle_want: every feasible target. */
#define TRELLIS_WANT_ALL UINT32_MAX

/* Whether the host table has a given member (for plugins built against a
 * newer minor than the running host). */
#define TRELLIS_HOST_HAS(host, member)                                                             \
    ((host)->size >= offsetof(trellis_host, member) + sizeof((host)->member))

/* ---- the descriptor ---------------------------------------------------- */

/* What a plugin exports. The first three fields protect the rest: the host
 * reads them before anything else and refuses the plugin if they do not
 * match. */
typedef struct trellis_plugin_desc {
    size_t size;                  /* sizeof(trellis_plugin_desc) the plugin was built with */
    int sdk_major;                /* TRELLIS_SDK_MAJOR it was built against */
    int sdk_minor;                /* the oldest host minor it runs on (TRELLIS_PLUGIN_MIN_MINOR) */
    const char *name;             /* unique, [a-z0-9-]+ */
    const char *version;          /* the plugin's own version */
    const char *description;      /* one line */
    const trellis_arg_spec *args; /* NULL-key terminated; may be NULL */
    /* Register hooks and read args. Return 0, or -1 with err filled; the
     * host stops start-up with that message. */
    int (*init)(trellis_plugin *self, const trellis_host *host, const trellis_args *args, char *err,
                size_t errlen);
    void (*fini)(trellis_plugin *self); /* may be NULL */
} trellis_plugin_desc;

#define TRELLIS_PLUGIN_ENTRY "trellis_plugin_entry"
typedef const trellis_plugin_desc *(*trellis_plugin_entry_fn)(void);

#if defined(__GNUC__)
#define TRELLIS_EXPORT __attribute__((visibility("default")))
#else
#define TRELLIS_EXPORT
#endif

/* The oldest host minor (of TRELLIS_SDK_MAJOR) this plugin runs on. A
 * plugin that does without newer functions on an older host (testing for
 * them with TRELLIS_HOST_HAS) defines it before including this header:
 *   #define TRELLIS_PLUGIN_MIN_MINOR 1
 *   #include <trellis/plugin.h> */
#ifndef TRELLIS_PLUGIN_MIN_MINOR
#define TRELLIS_PLUGIN_MIN_MINOR TRELLIS_SDK_MINOR
#endif

/* Declare the plugin's one exported symbol:
 *   static const trellis_plugin_desc desc = { TRELLIS_DESC_HEADER, ... };
 *   TRELLIS_PLUGIN(desc)
 */
#define TRELLIS_DESC_HEADER sizeof(trellis_plugin_desc), TRELLIS_SDK_MAJOR, TRELLIS_PLUGIN_MIN_MINOR
#define TRELLIS_PLUGIN(desc)                                                                       \
    TRELLIS_EXPORT const trellis_plugin_desc *trellis_plugin_entry(void);                          \
    TRELLIS_EXPORT const trellis_plugin_desc *trellis_plugin_entry(void)                           \
    {                                                                                              \
        return &(desc);                                                                            \
    }

/* A plugin that may also be compiled into a host (a custom scheduler, see
 * trellis/embed.h) declares itself with TRELLIS_PLUGIN_AS(desc, id), id a
 * C identifier unique among the plugins of that host. Built as a .so it
 * is TRELLIS_PLUGIN(desc). Compiled with TRELLIS_BUILTIN defined it
 * defines `const trellis_plugin_desc *trellis_builtin_<id>(void)` instead,
 * which the host registers with trellis_register_builtin: the same
 * descriptor and the same version checks as a loaded plugin. */
#ifdef TRELLIS_BUILTIN
#define TRELLIS_PLUGIN_AS(desc, id)                                                                \
    const trellis_plugin_desc *trellis_builtin_##id(void);                                         \
    const trellis_plugin_desc *trellis_builtin_##id(void)                                          \
    {                                                                                              \
        return &(desc);                                                                            \
    }
#else
#define TRELLIS_PLUGIN_AS(desc, id) TRELLIS_PLUGIN(desc)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_PLUGIN_H */
