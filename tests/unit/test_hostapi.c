/*
 * test_hostapi.c - the host table's phase checks and its services
 * interface: a write (store_set_field, evict, create_target) is refused
 * outside the post-filter and the binding cycle, an object read
 * (lookup_object, foreach_object) from a binding hook, a registration
 * outside init; each refusal names the function and the hook, and
 * nothing reaches the scheduler's services. Allowed calls reach them.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cycle.h"
#include "guard.h"
#include "hostapi.h"
#include "log.h"
#include "object.h"
#include "plugin.h"
#include "review.h"
#include "runtime.h"
#include "services.h"
#include "testutil.h"

static int writes, reads;
static const trellis_object *the_object;

static const trellis_object *svc_lookup(void *ud, const char *kind, const char *ns,
                                        const char *name)
{
    reads++;
    return the_object;
}

static int svc_permit(void *ud, const char *ns, const char *name, int allow, const char *reason)
{
    return 0;
}

static int patches;
static int svc_patch(void *ud, const trellis_plugin *pl, const trellis_object *o,
                     const char *subresource, const store_edit *edits, size_t n, char *err,
                     size_t errlen)
{
    if (n == 1 && edits[0].op == STORE_SET && !subresource) {
        writes++; /* store_set_field: one string set on the object */
        return 0;
    }
    /* the SDK's ops became the store's: a removal is a JSON set of nothing */
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(edits[0].op, STORE_LIST_ADD);
    ck_assert_int_eq(edits[1].op, STORE_SET_JSON);
    ck_assert_ptr_null(edits[1].value);
    ck_assert_int_eq(edits[2].op, STORE_SET);
    ck_assert_str_eq(subresource, "status");
    patches++;
    return 0;
}

static int64_t svc_now(void *ud)
{
    return 1767225600000;
}

static const host_services svc = {
    .permit = svc_permit, .lookup = svc_lookup, .now = svc_now, .patch = svc_patch};

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    return TRELLIS_SUCCESS;
}

/* Call fn inside hook, as the runtime would. */
#define IN_HOOK(pl, hook, stmt)                                                                    \
    do {                                                                                           \
        guard_prev gp;                                                                             \
        guard_enter(&gp, (pl), (hook), "Pod/ns/p", 0);                                             \
        stmt;                                                                                      \
        guard_leave(&gp);                                                                          \
    } while (0)

START_TEST(phases)
{
    const trellis_host *h = hostapi_table();
    trellis_plugin pl;
    memset(&pl, 0, sizeof pl);
    pl.name = "phase-test";
    pl.slot = -1;
    pl.svc = &svc;
    the_object = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
    char err[512];
    int rc;

    /* a write from a filter (a worker thread, a snapshot): refused */
    writes = 0;
    IN_HOOK(&pl, "filter",
            rc = h->store_set_field(&pl, the_object, "spec.x", "1", err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(writes, 0);
    ck_assert_msg(strstr(err, "store_set_field called from filter: refused"), "%s", err);
    IN_HOOK(&pl, "prepare_workload",
            rc = h->store_set_field(&pl, the_object, "spec.x", "1", err, sizeof err));
    ck_assert_int_eq(rc, -1);
    /* the same write from bind reaches the scheduler */
    IN_HOOK(&pl, "bind", rc = h->store_set_field(&pl, the_object, "spec.x", "1", err, sizeof err));
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(writes, 1);

    /* reads: fine in prepare and the scheduling cycle, refused in bind */
    reads = 0;
    const trellis_object *got;
    IN_HOOK(&pl, "prepare_workload", got = h->lookup_object(&pl, "Pod", "", "p"));
    ck_assert_ptr_eq(got, the_object);
    IN_HOOK(&pl, "post_bind", got = h->lookup_object(&pl, "Pod", "", "p"));
    ck_assert_ptr_null(got);
    ck_assert_int_eq(reads, 1);

    /* the clock: the scheduler's, from any hook; times parsed by the host */
    int64_t now = 0, ms = 0;
    IN_HOOK(&pl, "filter", now = h->clock_now(&pl));
    ck_assert_int_eq(now, 1767225600000);
    IN_HOOK(&pl, "post_bind", now = h->clock_now(&pl));
    ck_assert_int_eq(now, 1767225600000);
    ck_assert_int_eq(h->time_parse("2026-01-01T00:00:01Z", &ms), 0);
    ck_assert_int_eq(ms, 1767225601000);
    ck_assert_int_eq(h->time_parse("tomorrow", &ms), -1);
    ck_assert_int_eq(ms, 1767225601000); /* untouched */
    ck_assert_int_eq(h->time_parse(NULL, &ms), -1);

    /* plugin writes: from the binding cycle, not from a filter; edits checked */
    trellis_edit ed[3] = {{TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", "a.io/b"},
                          {TRELLIS_EDIT_REMOVE, "status.old", NULL},
                          {TRELLIS_EDIT_SET, "status.phase", "Ready"}};
    patches = 0;
    IN_HOOK(&pl, "filter", rc = h->store_patch(&pl, the_object, "status", ed, 3, err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "store_patch called from filter: refused"), "%s", err);
    IN_HOOK(&pl, "reserve", rc = h->store_patch(&pl, the_object, "status", ed, 3, err, sizeof err));
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(patches, 1);
    trellis_edit bad = {TRELLIS_EDIT_SET, "status.phase", NULL};
    IN_HOOK(&pl, "reserve", rc = h->store_patch(&pl, the_object, NULL, &bad, 1, err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "edit 0: unknown op or no value"), "%s", err);
    IN_HOOK(&pl, "reserve",
            rc = h->store_patch(&pl, the_object, NULL, ed, TRELLIS_EDITS_MAX + 1, err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(patches, 1);

    /* permits from any hook (a post-bind allowing the next of a gang) */
    IN_HOOK(&pl, "post_bind", rc = h->permit_allow(&pl, "ns", "other"));
    ck_assert_int_eq(rc, 0);

    /* registration outside init: refused, and said with the plugin's name */
    char logf[] = "/tmp/trellis-hostapi-XXXXXX";
    int fd = mkstemp(logf);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    ck_assert_int_eq(h->register_filter(&pl, filter), -1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char said[1024] = "";
    ssize_t got_n = pread(fd, said, sizeof said - 1, 0);
    close(fd);
    unlink(logf);
    ck_assert_int_gt(got_n, 0);
    ck_assert_msg(strstr(said, "phase-test") && strstr(said, "called outside init"), "%s", said);
    pl.in_init = 1;
    ck_assert_int_eq(h->register_filter(&pl, filter), 0);
    ck_assert_int_eq(h->register_filter(&pl, filter), -1); /* once per hook */

    /* no services (a listing's probe): refused with a reason */
    pl.svc = NULL;
    IN_HOOK(&pl, "bind", rc = h->store_set_field(&pl, the_object, "spec.x", "1", err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "not available here"), "%s", err);
    object_unref((trellis_object *)the_object);
}
END_TEST

static void two(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    out[0] = 1;
    out[1] = 2;
}

/* The views' hook: counter 0 can hold 10, and holds 5 more than the
 * placed workloads say. */
static void allocated(trellis_plugin *self, const trellis_object *t,
                      const trellis_object *const *placed, size_t n, int64_t *used,
                      int64_t *allocatable)
{
    ck_assert_int_eq(used[0], 3 * (int64_t)n);
    allocatable[0] = 10;
    used[0] += 5;
}

/* name_counters (SDK 1.5): refused outside init, before declare_counters,
 * with a name that is not one, a unit this host does not know, and a
 * second time; the names are copied; the runtime sums the placed
 * workloads' counters and lets the hook correct them. */
START_TEST(named_counters)
{
    const trellis_host *h = hostapi_table();
    trellis_plugin pl;
    memset(&pl, 0, sizeof pl);
    pl.name = "counter-test";
    pl.slot = -1;
    char name[] = "cpu";
    const char *names[] = {name, NULL};
    trellis_unit units[] = {TRELLIS_UNIT_MILLI, TRELLIS_UNIT_COUNT};

    ck_assert(TRELLIS_HOST_HAS(h, name_counters));
    ck_assert_int_eq(h->name_counters(&pl, names, units, allocated), -1); /* outside init */
    pl.in_init = 1;
    ck_assert_int_eq(h->name_counters(&pl, names, units, allocated), -1); /* no counters */
    ck_assert_int_eq(h->declare_counters(&pl, 2, two), 0);
    const char *bad[] = {"cpu count", NULL};
    ck_assert_int_eq(h->name_counters(&pl, bad, units, allocated), -1);
    const char *empty[] = {"", NULL};
    ck_assert_int_eq(h->name_counters(&pl, empty, units, allocated), -1);
    trellis_unit odd[] = {(trellis_unit)7, TRELLIS_UNIT_COUNT};
    ck_assert_int_eq(h->name_counters(&pl, names, odd, allocated), -1);
    ck_assert_int_eq(h->name_counters(&pl, names, units, allocated), 0);
    ck_assert_int_eq(h->name_counters(&pl, names, units, allocated), -1); /* once */
    name[0] = 'x';                                                        /* copied */
    trellis_unit u = TRELLIS_UNIT_BYTES;
    ck_assert_int_eq(plugin_counter_count(&pl), 2);
    ck_assert_str_eq(plugin_counter_name(&pl, 0, &u), "cpu");
    ck_assert_int_eq(u, TRELLIS_UNIT_MILLI);
    ck_assert_ptr_null(plugin_counter_name(&pl, 1, &u)); /* not shown */
    ck_assert_ptr_null(plugin_counter_name(&pl, 2, &u));

    /* two workloads of counters {3, 4} on a target */
    trellis_object *w =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w\"}}");
    int64_t counters[2] = {3, 4};
    w->counters = counters;
    const trellis_object *placed[] = {w, w};
    int64_t used[2], alloc[2];
    run_allocated(&pl, w, placed, 2, used, alloc);
    ck_assert_int_eq(used[0], 11);
    ck_assert_int_eq(used[1], 8);
    ck_assert_int_eq(alloc[0], 10);
    ck_assert_int_eq(alloc[1], -1);
    /* no hook: the sums, no limits */
    pl.h.allocated = NULL;
    run_allocated(&pl, w, placed, 1, used, alloc);
    ck_assert_int_eq(used[0], 3);
    ck_assert_int_eq(alloc[0], -1);
    w->counters = NULL;
    object_unref(w);
    pl.in_init = 0;
    for (int i = 0; i < pl.n_counters; i++)
        free(pl.counter_names[i]);
    free(pl.counter_names);
    free(pl.counter_units);
}
END_TEST

static int reviewer(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                    trellis_candidate *cands, size_t *n, trellis_status *st)
{
    return TRELLIS_SKIP;
}

#define REVIEW_POD(n) "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" n "\"}}"

/* cycle_review_candidates (SDK 1.7): a post-filter's own call, refused
 * elsewhere and inside a review; and the check of a reviewer's answer
 * (review.c): only targets it was given, each once, victims on them. */
START_TEST(review)
{
    const trellis_host *h = hostapi_table();
    trellis_plugin pl;
    memset(&pl, 0, sizeof pl);
    pl.name = "review-test";
    pl.slot = -1;
    trellis_cycle c;
    memset(&c, 0, sizeof c);
    trellis_candidate none[1];
    trellis_status st;
    size_t n = 1;
    int rc;
    IN_HOOK(&pl, "pre_score", rc = h->cycle_review_candidates(&c, &pl, none, &n, &st));
    ck_assert_int_eq(rc, TRELLIS_ERROR);
    ck_assert_msg(strstr(st.message, "refused"), "%s", st.message);
    c.in_post_filter = 1;
    c.in_review = 1; /* a reviewer asking for a review */
    IN_HOOK(&pl, "review_candidates", rc = h->cycle_review_candidates(&c, &pl, none, &n, &st));
    ck_assert_int_eq(rc, TRELLIS_ERROR);
    IN_HOOK(&pl, "post_filter", rc = h->cycle_review_candidates(&c, &pl, none, &n, &st));
    ck_assert_int_eq(rc, TRELLIS_ERROR);
    c.in_review = 0;
    n = 0; /* nothing to review: nothing to do */
    IN_HOOK(&pl, "post_filter", rc = h->cycle_review_candidates(&c, &pl, none, &n, &st));
    ck_assert_int_eq(rc, TRELLIS_SUCCESS);
    n = 1;
    IN_HOOK(&pl, "post_filter", rc = h->cycle_review_candidates(&c, &pl, NULL, &n, &st));
    ck_assert_int_eq(rc, TRELLIS_ERROR);
    pl.in_init = 1;
    ck_assert_int_eq(h->register_review_candidates(&pl, reviewer), 0);
    ck_assert_int_eq(h->register_review_candidates(&pl, reviewer), -1);

    trellis_object *a = tu_obj(REVIEW_POD("a")), *b = tu_obj(REVIEW_POD("b"));
    trellis_object *x = tu_obj(REVIEW_POD("x"));
    trellis_object *on1[] = {a, b}, *on2[] = {x};
    struct trellis_target t1, t2, t3;
    memset(&t1, 0, sizeof t1);
    memset(&t2, 0, sizeof t2);
    memset(&t3, 0, sizeof t3);
    t1.name = "n1";
    t1.wl = on1;
    t1.n_wl = 2;
    t2.name = "n2";
    t2.wl = on2;
    t2.n_wl = 1;
    t3.name = "n3";
    const trellis_object *va[] = {a, b}, *vb[] = {b}, *vx[] = {x}, *vaa[] = {a, a};
    const trellis_candidate given[2] = {{&t1, va, 2, 1}, {&t2, vx, 1, 0}};
    char why[256];
    /* n1 with b alone, answered after n2: kept in the order given */
    trellis_candidate ans[3] = {{&t2, vx, 1, 0}, {&t1, vb, 1, 0}};
    ck_assert_int_eq(review_check(given, 2, ans, 2, why, sizeof why), 0);
    ck_assert_ptr_eq(ans[0].target, &t1);
    ck_assert_ptr_eq(ans[0].victims, vb);
    ck_assert_ptr_eq(ans[1].target, &t2);
    ck_assert_int_eq(review_check(given, 2, ans, 0, why, sizeof why), 0);
    ck_assert_int_eq(review_check(given, 2, ans, 3, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "more than the 2"), "%s", why);
    trellis_candidate stray[1] = {{&t3, vx, 1, 0}};
    ck_assert_int_eq(review_check(given, 2, stray, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "a target it was not given"), "%s", why);
    trellis_candidate twice[2] = {{&t1, va, 2, 1}, {&t1, vb, 1, 0}};
    ck_assert_int_eq(review_check(given, 2, twice, 2, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "target n1 is listed twice"), "%s", why);
    trellis_candidate foreign[1] = {{&t1, vx, 1, 0}};
    ck_assert_int_eq(review_check(given, 2, foreign, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "target n1: victim 0 is not a workload on it"), "%s", why);
    trellis_candidate empty[1] = {{&t2, NULL, 0, 0}};
    ck_assert_int_eq(review_check(given, 2, empty, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "target n2: no victims"), "%s", why);
    trellis_candidate dup[1] = {{&t1, vaa, 2, 0}};
    ck_assert_int_eq(review_check(given, 2, dup, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "is listed twice"), "%s", why);
    trellis_candidate neg[1] = {{&t2, vx, 1, -1}};
    ck_assert_int_eq(review_check(given, 2, neg, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "-1 disruption budget violations"), "%s", why);
    object_unref(a);
    object_unref(b);
    object_unref(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostapi");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, phases);
    tcase_add_test(tc, named_counters);
    tcase_add_test(tc, review);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
