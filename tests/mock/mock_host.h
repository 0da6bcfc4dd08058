/*
 * mock_host.h - a second implementation of the trellis host table, over
 * in-memory objects, to unit-test one plugin alone.
 *
 * The mock loads a plugin's .so the way the host does (descriptor checks
 * first, then init with typed arguments), keeps objects parsed from JSON
 * text, and runs a plugin's hooks on them the way a cycle would: prepare
 * once per object, then pre-filter and filter (plain, batch and span,
 * which must agree), or pre-score, score and normalize. It links neither
 * the trellis core nor anything but libc, json-c and libdl, so a plugin
 * author can copy it next to their plugin. It pretends to be a host of
 * any SDK 1.x minor (mock_new), so a plugin that declares an older minor
 * can be shown to run on an older host.
 *
 * Everything returned is owned by the mock and valid until mock_free.
 * Not thread-safe; hooks run on the calling thread.
 */
#ifndef TRELLIS_MOCK_HOST_H
#define TRELLIS_MOCK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "trellis/plugin.h"

typedef struct mock mock;

/* A host of SDK 1.<minor>: its table holds the functions up to that minor
 * (size and sdk_minor say so). minor outside 0..TRELLIS_SDK_MINOR: the
 * header's. */
mock *mock_new(int minor);
void mock_free(mock *m);
const trellis_host *mock_table(const mock *m);

/* Load the plugin `name` (<name>.so in the directories of
 * TRELLIS_PLUGIN_PATH, colon separated, or a path ending in .so) with
 * arguments from a JSON object text (NULL: none), as profile `profile`
 * whose binding field is `binding_field` (NULL: "spec.nodeName"). NULL with
 * err naming the cause: no file, a descriptor this host refuses, bad
 * arguments, or init failing (its message). At most 8 plugins. */
trellis_plugin *mock_load(mock *m, const char *name, const char *args_json, char *err,
                          size_t errlen);
/* Whether pl registered the hook: "prepare_workload", "prepare_target",
 * "release", "counters", "target_values", "queue_sort", "pre_filter",
 * "filter", "filter_batch", "filter_span", "post_filter", "pre_score",
 * "score", "score_batch", "score_span", "normalize", "reserve",
 * "unreserve", "permit", "pre_bind", "bind", "post_bind",
 * "eviction_check", "equivalent", "pre_enqueue", "finalize", "events",
 * "filter_feasible", "review_candidates". */
int mock_registered(const trellis_plugin *pl, const char *hook);
/* The events mask pl registered (0 when none). */
unsigned mock_events(const trellis_plugin *pl);

/* An object from JSON text (apiVersion, kind, metadata.name ...); NULL with
 * err. The store of lookup_object and foreach_object holds it from now on.
 * Every loaded plugin prepares it as a workload (as_workload 1) or a target
 * (0); a failed prepare is recorded (mock_prepare_error). With -1 it is
 * only in the store (a CloudProfile, a ConfigMap). */
trellis_object *mock_object(mock *m, const char *json, int as_workload, char *err, size_t errlen);
/* pl's prepare error for o ("" when it prepared o). */
const char *mock_prepare_error(const trellis_object *o, const trellis_plugin *pl);
/* Counter k of pl as it named it (name_counters, SDK 1.5), with its
 * unit; NULL when not named. */
const char *mock_counter_name(const trellis_plugin *pl, int k, trellis_unit *unit);
/* What target t holds and can hold of each of pl's counters, as the
 * host's views ask (the allocated hook over the workloads assigned with
 * mock_assign): n_counters amounts into each. */
void mock_allocated(trellis_plugin *pl, const trellis_object *t, int64_t *used,
                    int64_t *allocatable);
/* Count workload w on target t (its counters add to t's sums). */
void mock_assign(mock *m, trellis_object *t, trellis_object *w);

/* One cycle of pl for w over targets[0..n): pre-filter, then the plain
 * filter on every target the pre-filter did not reject, and the batch or
 * span filter over all of them. codes[i] gets target i's code
 * (TRELLIS_SUCCESS, TRELLIS_UNSCHEDULABLE, ...; the pre-filter's code for
 * all when it rejected the workload), st[i] (may be NULL) its status. 0;
 * -1 with err when the batch or span verdicts disagree with the plain
 * filter, or a hook failed. */
int mock_filter(mock *m, trellis_plugin *pl, const trellis_object *w,
                trellis_object *const *targets, size_t n, int *codes, trellis_status *st, char *err,
                size_t errlen);
/* pl's filter_feasible (SDK 1.6) for w over the feasible targets[0..n):
 * codes[i] TRELLIS_SUCCESS, or the code of its rejection of target i
 * (cycle_reject, or the hook's own UNSCHEDULABLE / UNRESOLVABLE for all
 * left), st[i] (may be NULL) its status. All SUCCESS when pl registered
 * none. 0; -1 with err when the hook returned ERROR. */
int mock_filter_feasible(mock *m, trellis_plugin *pl, const trellis_object *w,
                         trellis_object *const *targets, size_t n, int *codes, trellis_status *sts,
                         char *err, size_t errlen);
/* A preemption candidate for mock_review_candidates: targets[target]
 * and its victims (workloads assigned to it with mock_assign). */
#define MOCK_VICTIMS 16
typedef struct mock_candidate {
    size_t target;
    const trellis_object *victims[MOCK_VICTIMS];
    size_t n_victims;
    int64_t pdb_violations;
} mock_candidate;
/* pl's review_candidates (SDK 1.7) for w over cands[0..*n), whose
 * targets are targets[0..nt): the hook's code (TRELLIS_SKIP when pl
 * registered none), st its status; on TRELLIS_SUCCESS cands[0..*n) as
 * it answered (not checked: the host's checks are the host's).
 * Ownership of everything is retained by the caller. */
int mock_review_candidates(mock *m, trellis_plugin *pl, const trellis_object *w,
                           trellis_object *const *targets, size_t nt, mock_candidate *cands,
                           size_t *n, trellis_status *st);
/* Pre-filter (run first, as in the host's cycle: what a plugin counts
 * there it may score by), pre-score, score (plain, and batch or span,
 * which must agree) and normalize of pl for w over targets[0..n) into
 * scores. 0; -1 with err. */
int mock_score(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *const *targets,
               size_t n, int64_t *scores, char *err, size_t errlen);
/* pl's queueing hint (TRELLIS_QUEUE when it registered no function). */
int mock_hint(mock *m, trellis_plugin *pl, const trellis_object *w, unsigned event,
              const trellis_object *old_obj, const trellis_object *new_obj);
/* pl's equivalent hook (1 when it has none). */
int mock_equivalent(trellis_plugin *pl, const trellis_object *a, const trellis_object *b);
/* pl's pre_enqueue of w (TRELLIS_SUCCESS when it registered none). */
int mock_pre_enqueue(trellis_plugin *pl, const trellis_object *w);
/* pl's finalize of w: the code, st filled (TRELLIS_SUCCESS when none);
 * what it wrote is read back with mock_written. */
int mock_finalize(trellis_plugin *pl, const trellis_object *w, trellis_status *st);
/* pl's queue order: nonzero when a goes before b. */
int mock_less(trellis_plugin *pl, const trellis_object *a, const trellis_object *b);
/* pl's eviction check of w on target t: the code, st filled. */
int mock_eviction_check(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *t,
                        trellis_status *st);
/* pl's bind of w on t: the code; the fields the plugin wrote through
 * store_set_field are read back with mock_written. */
int mock_bind(mock *m, trellis_plugin *pl, const trellis_object *w, trellis_object *t,
              trellis_status *st);
/* The value written last to path of the object named ns/name through
 * store_set_field or store_patch ("" for a removal, "+v" / "-v" for a list
 * edit adding or removing v), or NULL. Path "(created)" holds the JSON of
 * an object store_create made, "(deleted)" "" when store_delete deleted
 * it. */
const char *mock_written(const mock *m, const char *ns, const char *name, const char *path);
/* The clock plugins read (clock_now), ms since the epoch; 0 until set. */
void mock_set_now(mock *m, int64_t ms);
/* How many targets the pre_filter of the last mock_filter left in the
 * cycle (cycle_narrow), -1 when it did not narrow. A target left out is
 * UNRESOLVABLE with the plain filter's reason, or NotInPreFilterResult
 * when the plain filter passes it, as the host words it. */
long mock_narrowed(const mock *m);
/* The earliest retry time a plugin asked for (cycle_retry_at) in the last
 * mock_filter or mock_score, 0 when none. */
int64_t mock_retry_at(const mock *m);
/* The targets the workload of the next cycles holds (cycle_held); keys
 * borrowed until changed. */
void mock_set_held(mock *m, const char *const *keys, size_t n);
/* The same with the binding object of each (cycle_held_object; objs
 * NULL: none), borrowed until changed. */
void mock_set_held_objects(mock *m, const char *const *keys, const trellis_object *const *objs,
                           size_t n);
/* What the last cycle's plugin said: how many targets it wants (1 unless
 * cycle_want), the i-th target it released (NULL past the end), whether
 * it asked for another cycle at once, its i-th cycle_note. */
uint32_t mock_want(const mock *m);
const char *mock_released(const mock *m, size_t i);
/* The i-th target the last cycle's plugin put to the vote again
 * (cycle_reconsider), NULL past the end. */
const char *mock_reconsidered(const mock *m, size_t i);
int mock_requeue_now(const mock *m);
const char *mock_note(const mock *m, size_t i);
/* How many lines plugins logged at `level` or worse so far. */
size_t mock_logged(const mock *m, trellis_log_level level);

#endif
