/*
 * layout.c - the offsets of the SDK's two binary interfaces, one line
 * each: the host table and the plugin descriptor (and, since 1.7, the
 * preemption candidate a reviewer edits). tests/abi.sh builds it
 * against this header and against the frozen SDK 1.1 header and compares
 * both with sdk-1.layout: within a major an offset never changes, and
 * members are only ever added at the end.
 */
#include <stddef.h>
#include <stdio.h>

#include "trellis/plugin.h"

#define HOST(m) printf("trellis_host.%s %zu\n", #m, offsetof(trellis_host, m))
#define CAND(m) printf("trellis_candidate.%s %zu\n", #m, offsetof(trellis_candidate, m))
#define DESC(m) printf("trellis_plugin_desc.%s %zu\n", #m, offsetof(trellis_plugin_desc, m))

int main(void)
{
    HOST(size);
    HOST(sdk_major);
    HOST(sdk_minor);
    HOST(register_prepare_workload);
    HOST(register_prepare_target);
    HOST(register_release);
    HOST(declare_counters);
    HOST(register_queue_sort);
    HOST(register_pre_filter);
    HOST(register_filter);
    HOST(register_filter_batch);
    HOST(register_post_filter);
    HOST(register_pre_score);
    HOST(register_score);
    HOST(register_score_batch);
    HOST(register_normalize);
    HOST(register_reserve);
    HOST(register_unreserve);
    HOST(register_permit);
    HOST(register_pre_bind);
    HOST(register_bind);
    HOST(register_post_bind);
    HOST(set_private);
    HOST(get_private);
    HOST(profile_name);
    HOST(binding_field);
    HOST(log);
    HOST(status);
    HOST(arg_string);
    HOST(arg_int);
    HOST(arg_bool);
    HOST(arg_double);
    HOST(arg_list_len);
    HOST(arg_list_at);
    HOST(object_kind);
    HOST(object_api_version);
    HOST(object_namespace);
    HOST(object_name);
    HOST(object_uid);
    HOST(object_label);
    HOST(object_annotation);
    HOST(object_get);
    HOST(object_data);
    HOST(value_type);
    HOST(value_string);
    HOST(value_int);
    HOST(value_double);
    HOST(value_bool);
    HOST(value_len);
    HOST(value_at);
    HOST(value_get);
    HOST(value_path);
    HOST(value_foreach);
    HOST(target_object);
    HOST(target_name);
    HOST(target_workload_count);
    HOST(target_workload);
    HOST(target_counters);
    HOST(workload_counters);
    HOST(cycle_set);
    HOST(cycle_get);
    HOST(cycle_alloc);
    HOST(cycle_target_count);
    HOST(cycle_target);
    HOST(cycle_target_code);
    HOST(cycle_filter_without);
    HOST(evict);
    HOST(create_target);
    HOST(nominate);
    HOST(store_set_field);
    HOST(permit_allow);
    HOST(permit_reject);
#if TRELLIS_SDK_MINOR >= 1
    HOST(lookup_object);
    HOST(foreach_object);
    HOST(register_eviction_check);
#endif
#if TRELLIS_SDK_MINOR >= 2
    HOST(register_events);
#endif
#if TRELLIS_SDK_MINOR >= 3
    HOST(register_filter_span);
    HOST(register_score_span);
    HOST(cycle_target_data);
    HOST(declare_target_values);
    HOST(cycle_target_values);
    HOST(cycle_target_counter);
    HOST(register_equivalent);
#endif
#if TRELLIS_SDK_MINOR >= 4
    HOST(clock_now);
    HOST(time_parse);
    HOST(cycle_retry_at);
    HOST(target_key);
    HOST(store_patch);
    HOST(store_create);
    HOST(store_delete);
    HOST(register_pre_enqueue);
    HOST(register_finalize);
    HOST(arg_document);
    HOST(store_bind);
    HOST(register_target_lost);
    HOST(cycle_note);
    HOST(cycle_want);
    HOST(cycle_held_count);
    HOST(cycle_held);
    HOST(cycle_release);
    HOST(cycle_requeue_now);
    HOST(cycle_score);
    HOST(declare_kinds);
    HOST(arg_document_where);
#endif
#if TRELLIS_SDK_MINOR >= 5
    HOST(cycle_held_object);
    HOST(cycle_reconsider);
    HOST(store_bind_edits);
    HOST(register_decided);
    HOST(cycle_pick_count);
    HOST(cycle_pick);
    HOST(cycle_held_kept);
    HOST(cycle_target_status);
    HOST(name_counters);
    HOST(register_filter_feasible);
    HOST(cycle_reject);
#endif
#if TRELLIS_SDK_MINOR >= 7
    HOST(register_review_candidates);
    HOST(cycle_review_candidates);
    HOST(cycle_narrow);
#endif
    DESC(size);
    DESC(sdk_major);
    DESC(sdk_minor);
    DESC(name);
    DESC(version);
    DESC(description);
    DESC(args);
    DESC(init);
    DESC(fini);
#if TRELLIS_SDK_MINOR >= 7
    /* a struct a reviewer edits in place (1.7) */
    CAND(target);
    CAND(victims);
    CAND(n_victims);
    CAND(pdb_violations);
#endif
    return 0;
}
