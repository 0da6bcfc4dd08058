/*
 * test_queue.c - the scheduling queue: order, backoff, unschedulable pool.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "queue.h"
#include "testutil.h"

static trellis_object *pod(const char *name, int prio)
{
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"priority\":%d}}",
             name, prio);
    return tu_obj(buf);
}

static int by_prio(void *ud, const trellis_object *a, uint64_t as, const trellis_object *b,
                   uint64_t bs)
{
    (void)ud;
    int64_t pa = 0, pb = 0;
    value_int(object_get(a, "spec.priority"), &pa);
    value_int(object_get(b, "spec.priority"), &pb);
    if (pa != pb)
        return pa > pb;
    return as < bs;
}

static void add(queue *q, const char *name, int prio)
{
    trellis_object *o = pod(name, prio);
    queue_add(q, o, 0);
    object_unref(o);
}

START_TEST(fifo_without_sort)
{
    queue q;
    queue_init(&q, 1000, 10000, 300000);
    add(&q, "a", 1);
    add(&q, "b", 9);
    add(&q, "c", 5);
    const char *want[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        qitem *it = queue_pop(&q, 0);
        ck_assert_ptr_nonnull(it);
        ck_assert_str_eq(it->w->name, want[i]);
        queue_done(&q, it);
    }
    ck_assert_ptr_null(queue_pop(&q, 0));
    queue_free(&q);
}
END_TEST

START_TEST(sort_hook_orders_active)
{
    queue q;
    queue_init(&q, 1000, 10000, 300000);
    q.less = by_prio;
    add(&q, "a", 1);
    add(&q, "b", 9);
    add(&q, "c", 5);
    add(&q, "d", 9);
    const char *want[] = {"b", "d", "c", "a"};
    for (int i = 0; i < 4; i++) {
        qitem *it = queue_pop(&q, 0);
        ck_assert_str_eq(it->w->name, want[i]);
        queue_done(&q, it);
    }
    queue_free(&q);
}
END_TEST

/* The heaps order by keys kept beside the items: the backoff by due time,
 * then by when each was first queued; back in the active queue, by when
 * first queued again, not by when each came back. Many items, so that a
 * sift crosses several levels. */
START_TEST(backoff_and_active_order_by_due_then_first_queued)
{
    queue q;
    queue_init(&q, 1000, 10000, 300000);
    enum { N = 40 };
    char name[N][16];
    qitem *it[N];
    for (int i = 0; i < N; i++) {
        snprintf(name[i], sizeof name[i], "w%02d", i);
        add(&q, name[i], 0);
    }
    for (int i = 0; i < N; i++) {
        it[i] = queue_pop(&q, 0);
        ck_assert_str_eq(it[i]->w->name, name[i]);
    }
    /* requeued last to first; the even ones fail at 500 (due 1500), the
     * odd ones at 0 (due 1000) */
    for (int i = N - 1; i >= 0; i--)
        queue_requeue(&q, it[i], 0, i % 2 ? 0 : 500);
    ck_assert_uint_eq(queue_next_due(&q), 1000);
    ck_assert_ptr_null(queue_pop(&q, 999));
    for (int i = 1; i < N; i += 2) { /* at 1200: the odd ones, in first order */
        qitem *x = queue_pop(&q, 1200);
        ck_assert_ptr_nonnull(x);
        ck_assert_str_eq(x->w->name, name[i]);
        queue_done(&q, x);
    }
    ck_assert_ptr_null(queue_pop(&q, 1200));
    ck_assert_uint_eq(queue_next_due(&q), 1500);
    for (int i = 0; i < N; i += 2) {
        qitem *x = queue_pop(&q, 1500);
        ck_assert_ptr_nonnull(x);
        ck_assert_str_eq(x->w->name, name[i]);
        queue_done(&q, x);
    }
    ck_assert_uint_eq(queue_next_due(&q), UINT64_MAX);
    queue_free(&q);
}
END_TEST

START_TEST(backoff_doubles_and_caps)
{
    queue q;
    queue_init(&q, 1000, 10000, 300000);
    ck_assert_uint_eq(queue_backoff_ms(&q, 1), 1000);
    ck_assert_uint_eq(queue_backoff_ms(&q, 2), 2000);
    ck_assert_uint_eq(queue_backoff_ms(&q, 4), 8000);
    ck_assert_uint_eq(queue_backoff_ms(&q, 5), 10000);
    ck_assert_uint_eq(queue_backoff_ms(&q, 60), 10000);
    add(&q, "a", 0);
    qitem *it = queue_pop(&q, 0);
    queue_requeue(&q, it, 0, 100); /* error: backoff until 1100 */
    ck_assert_ptr_null(queue_pop(&q, 1099));
    ck_assert_uint_eq(queue_next_due(&q), 1100);
    it = queue_pop(&q, 1100);
    ck_assert_ptr_nonnull(it);
    queue_requeue(&q, it, 0, 2000); /* second failure: 2000 ms */
    ck_assert_ptr_null(queue_pop(&q, 3999));
    it = queue_pop(&q, 4000);
    ck_assert_ptr_nonnull(it);
    queue_done(&q, it);
    ck_assert_uint_eq(queue_len(&q), 0);
    queue_free(&q);
}
END_TEST

START_TEST(unschedulable_pool_moves)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    add(&q, "a", 0);
    add(&q, "b", 0);
    qitem *a = queue_pop(&q, 0);
    qitem *b = queue_pop(&q, 0);
    queue_requeue(&q, a, 1, 0);
    queue_requeue(&q, b, 1, 0);
    ck_assert_uint_eq(q.n_unschedulable, 2);
    /* nothing happens by itself before the maximum time */
    ck_assert_ptr_null(queue_pop(&q, 50000));
    queue_flush_unschedulable(&q, 59999);
    ck_assert_uint_eq(q.n_unschedulable, 2);
    /* a change moves them: backoff (1 s) has passed at 5000 -> active */
    queue_move_all(&q, 5000);
    ck_assert_uint_eq(q.n_unschedulable, 0);
    qitem *it = queue_pop(&q, 5000);
    ck_assert_ptr_nonnull(it);
    queue_requeue(&q, it, 1, 5000);
    /* the maximum time in the pool moves it too */
    queue_flush_unschedulable(&q, 5000 + 60000);
    ck_assert_uint_eq(q.n_unschedulable, 0);
    queue_free(&q);
}
END_TEST

START_TEST(one_shot_release_of_moved)
{
    /* a one-shot run's clock stays at 0: what a change moved into
     * backoff is taken back (queue_release_moved), what failed with an
     * error stays in backoff, and one workload is taken back at most
     * `most` times */
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    add(&q, "moved", 0);
    add(&q, "failed", 0);
    qitem *m = queue_pop(&q, 0);
    qitem *f = queue_pop(&q, 0);
    queue_requeue(&q, m, 1, 0); /* unschedulable */
    queue_requeue(&q, f, 0, 0); /* an error: backoff */
    queue_move_all(&q, 0);      /* a change: backoff until 1000 */
    ck_assert_ptr_null(queue_pop(&q, 0));
    ck_assert_uint_eq(queue_release_moved(&q, 2), 1);
    qitem *it = queue_pop(&q, 0);
    ck_assert_str_eq(it->w->name, "moved");
    ck_assert_ptr_null(queue_pop(&q, 0)); /* "failed" waits for its time */
    for (int round = 0; round < 3; round++) {
        queue_requeue(&q, it, 1, 0);
        queue_move_all(&q, 0);
        if (round == 0) { /* taken back a second time, then never again */
            ck_assert_uint_eq(queue_release_moved(&q, 2), 1);
            it = queue_pop(&q, 0);
            ck_assert_ptr_nonnull(it);
        } else {
            ck_assert_uint_eq(queue_release_moved(&q, 2), 0);
            break;
        }
    }
    queue_free(&q);
}
END_TEST

START_TEST(wake_time_moves_one_item)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    add(&q, "a", 0);
    add(&q, "b", 0);
    qitem *a = queue_pop(&q, 0);
    qitem *b = queue_pop(&q, 0);
    queue_requeue(&q, a, 1, 0);
    queue_wake_at(&q, a, 20000); /* a verdict of a's cycle expires at 20 s */
    queue_requeue(&q, b, 1, 0);
    queue_flush_unschedulable(&q, 19999);
    ck_assert_uint_eq(q.n_unschedulable, 2);
    queue_flush_unschedulable(&q, 20000);
    ck_assert_uint_eq(q.n_unschedulable, 1); /* a, not b */
    qitem *it = queue_pop(&q, 20000);
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(it->key, a->key);
    /* requeued without a wake time, it waits for a change again */
    queue_requeue(&q, it, 1, 20000);
    queue_flush_unschedulable(&q, 50000);
    ck_assert_uint_eq(q.n_unschedulable, 2);
    queue_free(&q);
}
END_TEST

START_TEST(move_all_respects_backoff)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    add(&q, "a", 0);
    qitem *a = queue_pop(&q, 0);
    queue_requeue(&q, a, 1, 0);
    queue_move_all(&q, 10); /* still backing off: goes to backoff, not active */
    ck_assert_ptr_null(queue_pop(&q, 10));
    ck_assert_ptr_nonnull(queue_pop(&q, 1000));
    queue_free(&q);
}
END_TEST

START_TEST(update_and_delete)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    q.less = by_prio;
    add(&q, "a", 1);
    add(&q, "b", 2);
    add(&q, "a", 5); /* a changed: its new priority counts */
    qitem *it = queue_pop(&q, 0);
    ck_assert_str_eq(it->w->name, "a");
    queue_requeue(&q, it, 1, 0);
    add(&q, "a", 5); /* a changed while unschedulable: back to active */
    it = queue_pop(&q, 0);
    ck_assert_str_eq(it->w->name, "a");
    queue_done(&q, it);
    trellis_object *b = pod("b", 2);
    queue_delete(&q, b);
    object_unref(b);
    ck_assert_ptr_null(queue_pop(&q, 0));
    ck_assert_uint_eq(queue_len(&q), 0);
    queue_free(&q);
}
END_TEST

START_TEST(retry_now_goes_active)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    add(&q, "a", 0);
    qitem *it = queue_pop(&q, 0);
    queue_retry_now(&q, it);
    it = queue_pop(&q, 0);
    ck_assert_ptr_nonnull(it);
    ck_assert_uint_eq(it->attempts, 1);
    queue_done(&q, it);
    queue_free(&q);
}
END_TEST

START_TEST(gated_waits_until_added)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    trellis_object *g = pod("g", 9);
    queue_gate(&q, g); /* a pre_enqueue plugin holds it back */
    add(&q, "a", 1);
    ck_assert_uint_eq(queue_gated(&q), 1);
    size_t act, back, uns;
    queue_counts(&q, &act, &back, &uns);
    ck_assert_uint_eq(act, 1);
    qitem *it = queue_pop(&q, 0);
    ck_assert_str_eq(it->w->name, "a");
    queue_requeue(&q, it, 1, 0);
    ck_assert_ptr_null(queue_pop(&q, 0)); /* gated: never popped */
    queue_move_all(&q, 5000);             /* nor moved with the pool */
    it = queue_pop(&q, 5000);
    ck_assert_str_eq(it->w->name, "a");
    queue_done(&q, it);
    ck_assert_ptr_null(queue_pop(&q, 5000));
    /* gated again while gated: still one */
    queue_gate(&q, g);
    ck_assert_uint_eq(queue_gated(&q), 1);
    /* it changed and the plugin lets it in: active */
    queue_add(&q, g, 5000);
    ck_assert_uint_eq(queue_gated(&q), 0);
    it = queue_pop(&q, 5000);
    ck_assert_str_eq(it->w->name, "g");
    queue_done(&q, it);
    /* gated, then deleted */
    queue_gate(&q, g);
    queue_delete(&q, g);
    ck_assert_uint_eq(queue_gated(&q), 0);
    ck_assert_uint_eq(queue_len(&q), 0);
    object_unref(g);
    queue_free(&q);
}
END_TEST

/* What the metrics read: entries by queue and event, the unschedulable
 * pool by the plugins that rejected each workload (a parked one is
 * nobody's), and the SLI's start, the first time it may be popped (not
 * while gated). */
START_TEST(metrics_counts)
{
    queue q;
    queue_init(&q, 1000, 10000, 60000);
    trellis_object *a = pod("a", 0), *b = pod("b", 0), *g = pod("g", 0);
    queue_add(&q, a, 100);
    queue_add(&q, b, 100);
    queue_gate(&q, g);
    ck_assert_uint_eq(q.incoming[QI_ACTIVE][QE_ADD], 2);
    ck_assert_uint_eq(q.incoming[QI_GATED][QE_ADD], 1);
    qitem *it = queue_pop(&q, 200);
    ck_assert(it->queued && it->first_ms == 100);
    it->rejectors = (1ull << 2) | (1ull << 5) | QUEUE_REJ_ANY;
    queue_requeue(&q, it, 1, 200);
    ck_assert_uint_eq(q.incoming[QI_UNSCHEDULABLE][QE_FAILURE], 1);
    ck_assert_uint_eq(q.n_rejected[2], 1);
    ck_assert_uint_eq(q.n_rejected[5], 1);
    qitem *it2 = queue_pop(&q, 200);
    it2->rejectors = 1ull << 2;
    queue_requeue(&q, it2, 1, 200);
    ck_assert_uint_eq(q.n_rejected[2], 2);
    /* a change moves both out: nobody's any more */
    queue_move_all(&q, 5000);
    ck_assert_uint_eq(q.n_rejected[2], 0);
    ck_assert_uint_eq(q.n_rejected[5], 0);
    ck_assert_uint_eq(q.incoming[QI_ACTIVE][QE_CHANGE], 2);
    /* a failure to backoff, then its backoff ends */
    it = queue_pop(&q, 5000);
    queue_requeue(&q, it, 0, 5000);
    ck_assert_uint_eq(q.incoming[QI_BACKOFF][QE_FAILURE], 1);
    it = queue_pop(&q, 5000);
    queue_park(&q, it, 5000); /* placed: in the pool, counted under nobody */
    ck_assert_uint_eq(q.n_rejected[2], 0);
    ck_assert_uint_eq(q.incoming[QI_UNSCHEDULABLE][QE_FAILURE], 2); /* a and b, not this */
    ck_assert_ptr_nonnull(queue_pop(&q, 100000));
    ck_assert_uint_eq(q.incoming[QI_ACTIVE][QE_BACKOFF], 1);
    /* the gated one starts its SLI when it is let in */
    qitem *gi = queue_find(&q, g);
    ck_assert(!gi->queued);
    queue_add(&q, g, 7000);
    ck_assert(gi->queued && gi->first_ms == 7000);
    ck_assert_uint_eq(q.incoming[QI_ACTIVE][QE_UPDATE], 1);
    const char *qn, *en;
    queue_incoming_label(QI_UNSCHEDULABLE, QE_FAILURE, &qn, &en);
    ck_assert_str_eq(qn, "unschedulable");
    ck_assert_str_eq(en, "ScheduleAttemptFailure");
    object_unref(a);
    object_unref(b);
    object_unref(g);
    queue_free(&q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fifo_without_sort);
    tcase_add_test(tc, sort_hook_orders_active);
    tcase_add_test(tc, backoff_and_active_order_by_due_then_first_queued);
    tcase_add_test(tc, backoff_doubles_and_caps);
    tcase_add_test(tc, unschedulable_pool_moves);
    tcase_add_test(tc, move_all_respects_backoff);
    tcase_add_test(tc, update_and_delete);
    tcase_add_test(tc, retry_now_goes_active);
    tcase_add_test(tc, wake_time_moves_one_item);
    tcase_add_test(tc, gated_waits_until_added);
    tcase_add_test(tc, metrics_counts);
    tcase_add_test(tc, one_shot_release_of_moved);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
