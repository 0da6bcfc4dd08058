/*
 * test_cycle.c - a cycle's state (cycle.c: the arena, buffers sized to
 * the snapshot, state handed to a binding job), the snapshot (snapshot.c:
 * targets by name, only what changed copied) and Events (events.c: the
 * same event again is the same object, its count up), on real objects
 * and a real file store.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cycle.h"
#include "events.h"
#include "profile_impl.h"
#include "snapshot.h"
#include "store_file.h"
#include "testutil.h"

static trellis_object *node(const char *name)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"}}", name);
    return tu_obj(json);
}

START_TEST(snapshot_sorted_and_incremental)
{
    cache c;
    cache_init(&c, 0);
    trellis_object *n[3] = {node("c"), node("a"), node("b")};
    for (int i = 0; i < 3; i++)
        cache_set_target(&c, n[i]);
    snapshot s;
    snapshot_init(&s, "Node", 0, 0, 0);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_str_eq(s.targets[0]->name, "a");
    ck_assert_str_eq(s.targets[2]->name, "c");
    ck_assert_ptr_eq(snapshot_find(&s, "b"), s.targets[1]);
    uint64_t gen_a = s.tgen[0], set_gen = s.set_gen;
    /* one target changes: only it gets a new generation, the set is the same */
    trellis_object *b2 = node("b");
    cache_set_target(&c, b2);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.tgen[0], gen_a);
    ck_assert_uint_gt(s.tgen[1], gen_a);
    ck_assert_uint_eq(s.set_gen, set_gen);
    ck_assert_ptr_eq(s.targets[1]->obj, b2);
    /* one goes: the set changes */
    cache_remove_target(&c, "Node", "a");
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_uint_ne(s.set_gen, set_gen);
    ck_assert_str_eq(s.targets[0]->name, "b");
    snapshot_free(&s);
    cache_free(&c);
    for (int i = 0; i < 3; i++)
        object_unref(n[i]);
    object_unref(b2);
}
END_TEST

START_TEST(cycle_arena_and_handover)
{
    profile p;
    memset(&p, 0, sizeof p);
    p.n_plugins = 3;
    snapshot_init(&p.snap, "Node", 0, 0, 0);
    trellis_cycle c, job;
    cycle_init(&c);
    cycle_init(&job);
    trellis_object *w = node("w");
    cycle_reset(&c, &p, w);
    ck_assert_uint_ge(c.cap_plugins, 3);
    char *a = cycle_alloc(&c, 100);
    ck_assert_ptr_nonnull(a);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(a[i], 0);       /* zeroed */
    char *big = cycle_alloc(&c, 200000); /* more than a chunk */
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_null(cycle_alloc(&c, (size_t)1 << 31)); /* absurd */
    c.slots[1] = a;
    /* a binding job takes the slots and the arena along */
    cycle_move_state(&job, &c);
    ck_assert_ptr_eq(job.slots[1], a);
    ck_assert_ptr_null(c.slots[1]);
    ck_assert_ptr_null(c.arena);
    cycle_reset(&c, &p, w); /* the scheduling cycle goes on with fresh state */
    ck_assert_ptr_nonnull(cycle_alloc(&c, 8));
    a[99] = 'x'; /* still the job's memory */
    cycle_free(&job);
    cycle_free(&c);
    snapshot_free(&p.snap);
    object_unref(w);
}
END_TEST

/* cycle_narrow: a set of positions, intersected by later calls; a
 * position out of range changes nothing; the next cycle starts whole. */
START_TEST(cycle_narrowed_to_a_set)
{
    profile p;
    memset(&p, 0, sizeof p);
    p.n_plugins = 5;
    snapshot_init(&p.snap, "Node", 0, 0, 0);
    trellis_cycle c;
    cycle_init(&c);
    trellis_object *w = node("w");
    cycle_reset(&c, &p, w);
    c.n = 130; /* three bitmap words; the set's bitmaps are sized to it */
    ck_assert(cycle_in_set(&c, 129));
    const uint32_t first[] = {129, 5, 70, 70};
    ck_assert_int_eq(cycle_narrow_to(&c, 2, first, 4), 0);
    ck_assert(c.narrowed);
    ck_assert_uint_eq(c.n_narrow, 3);
    ck_assert(cycle_in_set(&c, 5) && cycle_in_set(&c, 70) && cycle_in_set(&c, 129));
    ck_assert(!cycle_in_set(&c, 0) && !cycle_in_set(&c, 6) && !cycle_in_set(&c, 128));
    ck_assert_uint_eq(c.narrow_lo, 0); /* the words with a place set */
    ck_assert_uint_eq(c.narrow_hi, 3);
    const uint32_t out[] = {1, 130};
    ck_assert_int_eq(cycle_narrow_to(&c, 3, out, 2), -1);
    ck_assert_uint_eq(c.n_narrow, 3);
    ck_assert(!cycle_in_set(&c, 1));
    ck_assert_uint_eq(c.n_narrow_by, 1);
    const uint32_t second[] = {70, 1};
    ck_assert_int_eq(cycle_narrow_to(&c, 4, second, 2), 0); /* intersected */
    ck_assert_uint_eq(c.n_narrow, 1);
    ck_assert(cycle_in_set(&c, 70) && !cycle_in_set(&c, 1) && !cycle_in_set(&c, 5));
    ck_assert_uint_eq(c.n_narrow_by, 2);
    ck_assert_int_eq(c.narrow_by[0], 2);
    ck_assert_int_eq(c.narrow_by[1], 4);
    ck_assert_uint_eq(c.narrow_lo, 0); /* no wider than either set */
    ck_assert_uint_eq(c.narrow_hi, 2);
    ck_assert_int_eq(cycle_narrow_to(&c, 4, second, 1), 0); /* the same plugin is named once */
    ck_assert_uint_eq(c.n_narrow_by, 2);
    ck_assert_uint_eq(c.narrow_lo, 1);
    ck_assert_uint_eq(c.narrow_hi, 2);
    ck_assert_int_eq(cycle_narrow_to(&c, 2, NULL, 0), 0); /* nothing left */
    ck_assert_uint_eq(c.n_narrow, 0);
    ck_assert(!cycle_in_set(&c, 70));
    ck_assert_uint_eq(c.narrow_lo, c.narrow_hi);
    cycle_reset(&c, &p, w);
    c.n = 130;
    const uint32_t last[] = {129, 128};
    ck_assert_int_eq(cycle_narrow_to(&c, 2, last, 2), 0); /* the last word alone */
    ck_assert_uint_eq(c.narrow_lo, 2);
    ck_assert_uint_eq(c.narrow_hi, 3);
    ck_assert(c.narrow[0] == 0 && c.narrow[1] == 0 && c.narrow[2] == 3ull);
    cycle_reset(&c, &p, w);
    ck_assert(!c.narrowed);
    ck_assert(cycle_in_set(&c, 70));
    cycle_free(&c);
    snapshot_free(&p.snap);
    object_unref(w);
}
END_TEST

START_TEST(events_count_up)
{
    char dir[64], err[512];
    tu_mkdtemp(dir, "events");
    store *st = store_file_open(dir, 0, err, sizeof err);
    ck_assert_msg(st != NULL, "%s", err);
    manifest_set ms;
    manifest_set_init(&ms);
    ck_assert_int_eq(st->ops->list(st, &ms, err, sizeof err), 0); /* as a host starts */
    manifest_set_free(&ms);
    trellis_object *pod = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                                 "{\"name\":\"web\",\"namespace\":\"shop\",\"uid\":\"u1\"}}");
    /* stamped with the run's clock, not the system's */
    events_record(st, 1767225600000, "default-scheduler", pod, "Warning", "FailedScheduling",
                  "0/1 fit", "n1=TaintNotTolerated");
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    events_record(st, 1767225660000, "default-scheduler", pod, "Warning", "FailedScheduling",
                  "0/1 fit", NULL);
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    /* one Event object, counted twice, in the workload's namespace */
    int found = 0;
    trellis_object *ev = NULL;
    st->ops->destroy(st);
    st = store_file_open(dir, 1, err, sizeof err); /* what the next start reads */
    manifest_set_init(&ms);
    ck_assert_int_eq(st->ops->list(st, &ms, err, sizeof err), 0);
    for (size_t i = 0; i < ms.n_objects; i++)
        if (strcmp(ms.objects[i]->kind, "Event") == 0) {
            found++;
            ev = ms.objects[i];
        }
    ck_assert_msg(found == 1, "%d Events among %zu objects (%zu errors%s%s)", found, ms.n_objects,
                  ms.n_errors, ms.n_errors ? ": " : "", ms.n_errors ? ms.errors[0].message : "");
    int64_t count = 0;
    ck_assert_int_eq(value_int(object_get(ev, "count"), &count), 0);
    ck_assert_int_eq(count, 2);
    ck_assert_str_eq(ev->namespace_, "shop");
    ck_assert_str_eq(value_string(object_get(ev, "firstTimestamp")), "2026-01-01T00:00:00Z");
    ck_assert_str_eq(value_string(object_get(ev, "lastTimestamp")), "2026-01-01T00:01:00Z");
    ck_assert_str_eq(value_string(object_get(ev, "involvedObject.uid")), "u1");
    ck_assert_str_eq(value_string(object_get(ev, "metadata.annotations[\"trellis.io/reasons\"]")),
                     "n1=TaintNotTolerated");
    manifest_set_free(&ms);
    object_unref(pod);
    st->ops->destroy(st);
    tu_rmtree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cycle");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, snapshot_sorted_and_incremental);
    tcase_add_test(tc, cycle_arena_and_handover);
    tcase_add_test(tc, cycle_narrowed_to_a_set);
    tcase_add_test(tc, events_count_up);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
