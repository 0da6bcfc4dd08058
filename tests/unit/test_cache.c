/*
 * test_cache.c - the cache (assume / finish / forget, counters) and the
 * incremental snapshot.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "snapshot.h"
#include "testutil.h"

static trellis_object *node(const char *name)
{
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"}}", name);
    return tu_obj(buf);
}

static trellis_object *pod(const char *name, int64_t cpu)
{
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ns\"}}",
             name);
    trellis_object *o = tu_obj(buf);
    o->counters = calloc(2, sizeof *o->counters);
    o->counters[0] = cpu;
    o->counters[1] = 1;
    return o;
}

START_TEST(assume_finish_forget)
{
    cache c;
    cache_init(&c, 2);
    trellis_object *n1 = node("n1"), *p1 = pod("p1", 100), *p2 = pod("p2", 250);
    cache_target *t = cache_set_target(&c, n1);
    ck_assert_int_eq(cache_assume(&c, p1, t), 0);
    ck_assert_int_eq(cache_assume(&c, p1, t), -1); /* not twice on one target */
    ck_assert_uint_eq(c.n_assumed, 1);
    ck_assert_int_eq(cache_assume(&c, p2, t), 0);
    ck_assert_int_eq(t->t.sums[0], 350);
    ck_assert_int_eq(t->t.sums[1], 2);
    ck_assert_uint_eq(t->t.n_wl, 2);
    ck_assert_int_eq(cache_finish_binding(&c, p1, t), 0);
    ck_assert_uint_eq(c.n_assumed, 1);
    ck_assert_int_eq(cache_forget(&c, p2, t), 0);
    ck_assert_int_eq(t->t.sums[0], 100);
    ck_assert_uint_eq(t->t.n_wl, 1);
    ck_assert_uint_eq(c.n_assumed, 0);
    ck_assert_int_eq(cache_forget(&c, p2, t), -1);
    object_unref(n1);
    object_unref(p1);
    object_unref(p2);
    cache_free(&c);
}
END_TEST

START_TEST(bound_before_target_exists)
{
    cache c;
    cache_init(&c, 2);
    trellis_object *p1 = pod("p1", 100);
    ck_assert_int_eq(cache_add_bound(&c, p1, "Node", "n9"), 0);
    ck_assert_uint_eq(cache_count_targets(&c, "Node"), 0); /* placeholder only */
    trellis_object *n9 = node("n9");
    cache_target *t = cache_set_target(&c, n9);
    ck_assert_uint_eq(cache_count_targets(&c, "Node"), 1);
    ck_assert_uint_eq(t->t.n_wl, 1);
    ck_assert_int_eq(t->t.sums[0], 100);
    /* a target removed while workloads are on it stays as a placeholder */
    cache_remove_target(&c, "Node", "n9");
    ck_assert_uint_eq(cache_count_targets(&c, "Node"), 0);
    ck_assert_ptr_nonnull(cache_get_target(&c, "Node", "n9"));
    cache_remove_workload(&c, p1);
    ck_assert_ptr_null(cache_get_target(&c, "Node", "n9"));
    object_unref(p1);
    object_unref(n9);
    cache_free(&c);
}
END_TEST

START_TEST(multiple_targets_per_workload)
{
    cache c;
    cache_init(&c, 2);
    trellis_object *a = node("a"), *b = node("b"), *w = pod("crp", 1);
    cache_target *ta = cache_set_target(&c, a), *tb = cache_set_target(&c, b);
    cache_assume(&c, w, ta);
    cache_assume(&c, w, tb);
    cache_workload *cw = cache_get_workload(&c, w);
    ck_assert_uint_eq(cw->n_as, 2);
    cache_forget(&c, w, ta);
    ck_assert_uint_eq(cw->n_as, 1);
    ck_assert_ptr_eq(cw->as[0].target, tb);
    ck_assert_uint_eq(ta->t.n_wl, 0);
    ck_assert_uint_eq(tb->t.n_wl, 1);
    object_unref(a);
    object_unref(b);
    object_unref(w);
    cache_free(&c);
}
END_TEST

/* Nominations: one per workload, replaced when nominated elsewhere,
 * refreshed to a newer version of the object, dropped when the workload
 * is assumed or read bound. */
START_TEST(nominations_follow_the_workload)
{
    cache c;
    cache_init(&c, 2);
    trellis_object *n1 = node("n1"), *n2 = node("n2");
    trellis_object *p1 = pod("p1", 100), *p2 = pod("p2", 200), *p3 = pod("p3", 300);
    cache_target *t1 = cache_set_target(&c, n1);
    cache_set_target(&c, n2);
    nominator *m = &c.nom;
    ck_assert_uint_eq(nominator_count(m), 0);
    ck_assert_ptr_null(nominator_get(m, p1));
    nominator_drop(m, p1); /* nothing to drop */
    uint64_t g = m->gen;
    nominator_set(m, p1, "Node", "n1");
    nominator_set(m, p2, "Node", "n1");
    nominator_set(m, p3, "Node", "n2");
    ck_assert_uint_eq(nominator_count(m), 3);
    ck_assert_uint_gt(m->gen, g);
    ck_assert_str_eq(nominator_get(m, p1)->target, "n1");
    /* the same nomination again changes nothing */
    g = m->gen;
    nominator_set(m, p1, "Node", "n1");
    ck_assert_uint_eq(m->gen, g);
    /* elsewhere: replaced, still one */
    nominator_set(m, p1, "Node", "n2");
    ck_assert_uint_eq(nominator_count(m), 3);
    ck_assert_str_eq(nominator_get(m, p1)->target, "n2");
    /* a newer version of p2 (same id) takes the entry's place */
    trellis_object *p2b = pod("p2", 250);
    nominator_refresh(m, p2b);
    ck_assert_ptr_eq(nominator_get(m, p2)->w, p2b);
    ck_assert_str_eq(nominator_get(m, p2)->target, "n1");
    /* assumed: dropped (kube's DeleteNominatedPodIfExists) */
    ck_assert_int_eq(cache_assume(&c, p2b, t1), 0);
    ck_assert_ptr_null(nominator_get(m, p2));
    ck_assert_uint_eq(nominator_count(m), 2);
    /* read bound: dropped */
    ck_assert_int_eq(cache_add_bound(&c, p3, "Node", "n2"), 0);
    ck_assert_ptr_null(nominator_get(m, p3));
    /* what is left is reachable by position */
    ck_assert_uint_eq(nominator_count(m), 1);
    ck_assert_ptr_eq(nominator_at(m, 0)->w, p1);
    nominator_drop(m, p1);
    ck_assert_uint_eq(nominator_count(m), 0);
    object_unref(n1);
    object_unref(n2);
    object_unref(p1);
    object_unref(p2);
    object_unref(p2b);
    object_unref(p3);
    cache_free(&c);
}
END_TEST

START_TEST(snapshot_copies_only_changes)
{
    cache c;
    cache_init(&c, 2);
    trellis_object *n[3] = {node("c"), node("a"), node("b")};
    cache_target *t[3];
    for (int i = 0; i < 3; i++)
        t[i] = cache_set_target(&c, n[i]);
    snapshot s;
    snapshot_init(&s, "Node", 2, 0, 0);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_str_eq(s.targets[0]->name, "a"); /* sorted by name */
    ck_assert_str_eq(s.targets[2]->name, "c");
    struct trellis_target *sa = snapshot_find(&s, "a"), *sb = snapshot_find(&s, "b");
    uint64_t gen_b = sb->gen;

    trellis_object *p = pod("p", 500);
    cache_assume(&c, p, t[1]); /* on "a" */
    snapshot_update(&s, &c);
    ck_assert_ptr_eq(snapshot_find(&s, "a"), sa); /* same copy, updated */
    ck_assert_uint_eq(sa->n_wl, 1);
    ck_assert_int_eq(sa->sums[0], 500);
    ck_assert_uint_eq(sb->gen, gen_b); /* untouched */
    /* the columns follow: counter 0 of target 0 ("a"), by position */
    ck_assert_uint_eq(snapshot_pos(&s, sa), 0);
    ck_assert_uint_eq(snapshot_pos(&s, sb), 1);
    ck_assert_int_eq(snapshot_counter(&s, 0)[0], 500);
    ck_assert_int_eq(snapshot_counter(&s, 0)[1], 0);

    /* the snapshot is a copy: later cache changes do not show until update */
    cache_forget(&c, p, t[1]);
    ck_assert_uint_eq(sa->n_wl, 1);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(sa->n_wl, 0);

    /* a replaced target object is picked up, and a new target rebuilds */
    trellis_object *a2 = node("a");
    cache_set_target(&c, a2);
    snapshot_update(&s, &c);
    ck_assert_ptr_eq(snapshot_find(&s, "a"), sa);
    ck_assert_ptr_eq(sa->obj, a2);
    trellis_object *d = node("d");
    cache_set_target(&c, d);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_ptr_eq(snapshot_find(&s, "a")->obj, a2);
    ck_assert_str_eq(s.targets[3]->name, "d");
    cache_remove_target(&c, "Node", "b");
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_ptr_null(snapshot_find(&s, "b"));
    /* positions and columns follow the rebuilt order */
    for (uint32_t i = 0; i < 3; i++)
        ck_assert_uint_eq(snapshot_pos(&s, s.targets[i]), i);
    ck_assert_str_eq(s.targets[1]->name, "c");
    ck_assert_int_eq(snapshot_counter(&s, 1)[1], s.targets[1]->sums[1]);

    snapshot_free(&s);
    for (int i = 0; i < 3; i++)
        object_unref(n[i]);
    object_unref(p);
    object_unref(a2);
    object_unref(d);
    cache_free(&c);
}
END_TEST

START_TEST(snapshot_other_kinds_ignored)
{
    cache c;
    cache_init(&c, 0);
    trellis_object *n1 = node("n1");
    trellis_object *seed = tu_obj("{\"apiVersion\":\"core.gardener.cloud/v1beta1\","
                                  "\"kind\":\"Seed\",\"metadata\":{\"name\":\"s1\"}}");
    cache_set_target(&c, n1);
    cache_set_target(&c, seed);
    snapshot s;
    snapshot_init(&s, "Seed", 0, 0, 0);
    snapshot_update(&s, &c);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.targets[0]->name, "s1");
    snapshot_free(&s);
    object_unref(n1);
    object_unref(seed);
    cache_free(&c);
}
END_TEST

/* Targets added between cycles (a post-filter creates them) go into
 * their sorted places, the columns moving with them: the snapshot is the
 * one a rebuild from scratch gives, position by position. */
START_TEST(snapshot_added_targets_in_place)
{
    static const char *const first[] = {"b", "d", "f", "h"};
    static const char *const later[] = {"a", "e", "i", "c", "g"};
    cache c;
    cache_init(&c, 2);
    trellis_object *objs[9], *pods[9];
    size_t no = 0;
    snapshot s;
    snapshot_init(&s, "Node", 2, 0, 0);
    for (size_t i = 0; i < 4; i++) {
        objs[no] = node(first[i]);
        cache_target *t = cache_set_target(&c, objs[no]);
        pods[no] = pod(first[i], 100 * (int64_t)(no + 1));
        cache_assume(&c, pods[no], t);
        no++;
    }
    snapshot_update(&s, &c);
    for (size_t i = 0; i < 5; i++) { /* one or two at a time */
        objs[no] = node(later[i]);
        cache_target *t = cache_set_target(&c, objs[no]);
        pods[no] = pod(later[i], 100 * (int64_t)(no + 1));
        cache_assume(&c, pods[no], t);
        no++;
        if (i % 2 == 0)
            snapshot_update(&s, &c);
    }
    snapshot_update(&s, &c);
    snapshot fresh;
    snapshot_init(&fresh, "Node", 2, 0, 0);
    snapshot_update(&fresh, &c);
    ck_assert_uint_eq(s.n, 9);
    ck_assert_uint_eq(fresh.n, 9);
    for (size_t i = 0; i < 9; i++) {
        ck_assert_str_eq(s.targets[i]->name, fresh.targets[i]->name);
        ck_assert_uint_eq(snapshot_pos(&s, s.targets[i]), i);
        ck_assert_ptr_eq(snapshot_find(&s, s.targets[i]->name), s.targets[i]);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(snapshot_counter(&s, k)[i], snapshot_counter(&fresh, k)[i]);
    }
    ck_assert_str_eq(s.targets[0]->name, "a");
    ck_assert_str_eq(s.targets[8]->name, "i");
    snapshot_free(&s);
    snapshot_free(&fresh);
    for (size_t i = 0; i < no; i++) {
        object_unref(objs[i]);
        object_unref(pods[i]);
    }
    cache_free(&c);
}
END_TEST

/* Many targets added one cycle at a time, each between others (a word of
 * the invalid bitmap, the columns' room and the room below them outgrown
 * on the way; the earlier or the later entries moved): positions,
 * counters, generations and the invalid bits are a fresh snapshot's,
 * position by position. */
START_TEST(snapshot_added_targets_outgrow_columns)
{
    enum { N = 300 };
    cache c;
    cache_init(&c, 2);
    trellis_object *objs[N], *pods[N];
    snapshot s;
    snapshot_init(&s, "Node", 2, 0, 0);
    for (size_t i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%03zu", (i * 7) % N); /* 7 and 300 coprime */
        objs[i] = node(name);
        if (i % 5 == 0)
            objs[i]->prepare_failed_slot = 0; /* some plugin could not prepare it */
        cache_target *t = cache_set_target(&c, objs[i]);
        pods[i] = pod(name, 10 * (int64_t)(i + 1));
        cache_assume(&c, pods[i], t);
        snapshot_update(&s, &c);
    }
    snapshot fresh;
    snapshot_init(&fresh, "Node", 2, 0, 0);
    snapshot_update(&fresh, &c);
    ck_assert_uint_eq(s.n, N);
    ck_assert_uint_eq(fresh.n, N);
    for (size_t i = 0; i < N; i++) {
        ck_assert_str_eq(s.targets[i]->name, fresh.targets[i]->name);
        ck_assert_uint_eq(snapshot_pos(&s, s.targets[i]), i);
        ck_assert_uint_eq((s.invalid[i / 64] >> (i % 64)) & 1,
                          (fresh.invalid[i / 64] >> (i % 64)) & 1);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(snapshot_counter(&s, k)[i], snapshot_counter(&fresh, k)[i]);
        ck_assert_uint_eq(s.tgen[i], fresh.tgen[i]);
        ck_assert_uint_eq(s.id_at[i], s.targets[i]->snap_id);
    }
    ck_assert_uint_eq(s.invalid[0] & 1, 1); /* n000, the first added */
    snapshot_free(&s);
    snapshot_free(&fresh);
    for (size_t i = 0; i < N; i++) {
        object_unref(objs[i]);
        object_unref(pods[i]);
    }
    cache_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, assume_finish_forget);
    tcase_add_test(tc, bound_before_target_exists);
    tcase_add_test(tc, multiple_targets_per_workload);
    tcase_add_test(tc, nominations_follow_the_workload);
    tcase_add_test(tc, snapshot_copies_only_changes);
    tcase_add_test(tc, snapshot_added_targets_in_place);
    tcase_add_test(tc, snapshot_added_targets_outgrow_columns);
    tcase_add_test(tc, snapshot_other_kinds_ignored);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
