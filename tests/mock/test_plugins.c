/*
 * test_plugins.c - every in-tree plugin alone, through the mock host
 * (mock_host.h): one Check suite per plugin, no trellis core linked.
 *
 * Each suite loads the plugin's .so from TRELLIS_PLUGIN_PATH (as `make
 * check` sets it), feeds it objects written as JSON and checks its
 * verdicts, scores, hints and equivalences. mock_filter and mock_score
 * also check that a plugin's batch or span hook agrees with its plain
 * hook on every target. The last suite shows the SDK's compatibility
 * promise: a plugin that declares an older minor runs on an older host and
 * uses the newer functions only where the host has them.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"
#include "pick.h"

static mock *m;

static void setup(void)
{
    m = mock_new(-1);
}

static void teardown(void)
{
    mock_free(m);
    m = NULL;
}

static trellis_plugin *load(const char *name, const char *args)
{
    char err[1024];
    trellis_plugin *pl = mock_load(m, name, args, err, sizeof err);
    ck_assert_msg(pl != NULL, "%s", err);
    return pl;
}

static trellis_object *obj(int as_workload, const char *json)
{
    char err[1024];
    trellis_object *o = mock_object(m, json, as_workload, err, sizeof err);
    ck_assert_msg(o != NULL, "%s", err);
    return o;
}

#define WORKLOAD(json) obj(1, json)
#define TARGET(json) obj(0, json)

/* Filter w against targets; the codes into codes, the statuses into st. */
static void filter(trellis_plugin *pl, const trellis_object *w, trellis_object *const *t, size_t n,
                   int *codes, trellis_status *st)
{
    char err[1024];
    ck_assert_msg(mock_filter(m, pl, w, t, n, codes, st, err, sizeof err) == 0, "%s", err);
}

static void score(trellis_plugin *pl, const trellis_object *w, trellis_object *const *t, size_t n,
                  int64_t *out)
{
    char err[1024];
    ck_assert_msg(mock_score(m, pl, w, t, n, out, err, sizeof err) == 0, "%s", err);
}

#define NODE(name, extra)                                                                          \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"" extra "}"
#define POD(name, spec)                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"default\"},\"spec\":{" spec "}}"

/* ---- default-binder ---------------------------------------------------- */

START_TEST(binder_writes_the_binding_field)
{
    trellis_plugin *pl = load("default-binder", NULL);
    trellis_object *w = WORKLOAD(POD("web", "\"containers\":[]"));
    trellis_object *n = TARGET(NODE("n1", "") "}");
    trellis_status st;
    ck_assert_int_eq(mock_bind(m, pl, w, n, &st), TRELLIS_SUCCESS);
    ck_assert_str_eq(mock_written(m, "default", "web", "spec.nodeName"), "n1");
}
END_TEST

START_TEST(binder_field_argument)
{
    trellis_plugin *pl = load("default-binder", "{\"field\":\"spec.host\"}");
    trellis_object *w = WORKLOAD(POD("web", ""));
    trellis_object *n = TARGET(NODE("n2", "") "}");
    trellis_status st;
    ck_assert_int_eq(mock_bind(m, pl, w, n, &st), TRELLIS_SUCCESS);
    ck_assert_str_eq(mock_written(m, "default", "web", "spec.host"), "n2");
    ck_assert_ptr_null(mock_written(m, "default", "web", "spec.nodeName"));
}
END_TEST

/* ---- priority-sort ----------------------------------------------------- */

START_TEST(priority_sort_orders_by_priority)
{
    trellis_plugin *pl = load("priority-sort", NULL);
    trellis_object *hi = WORKLOAD(POD("hi", "\"priority\":1000"));
    trellis_object *lo = WORKLOAD(POD("lo", "\"priority\":10"));
    trellis_object *none = WORKLOAD(POD("none", ""));
    ck_assert(mock_registered(pl, "queue_sort"));
    ck_assert_int_ne(mock_less(pl, hi, lo), 0);
    ck_assert_int_eq(mock_less(pl, lo, hi), 0);
    /* no priority is priority 0 */
    ck_assert_int_ne(mock_less(pl, lo, none), 0);
}
END_TEST

#define PCLASS(name, body)                                                                         \
    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"  \
    "\"" name "\"}," body "}"

START_TEST(priority_sort_resolves_priority_classes)
{
    char err[1024];
    obj(-1, PCLASS("gold", "\"value\":1000"));
    obj(-1, PCLASS("dflt-high", "\"value\":50,\"globalDefault\":true"));
    obj(-1, PCLASS("dflt-low", "\"value\":7,\"globalDefault\":true"));
    obj(-1, PCLASS("broken", "\"value\":\"lots\""));
    trellis_plugin *pl =
        load("priority-sort", "{\"priority_class_field\":\"spec.priorityClassName\"}");
    trellis_object *gold = WORKLOAD(POD("gold", "\"priorityClassName\":\"gold\""));
    trellis_object *dflt = WORKLOAD(POD("dflt", ""));
    trellis_object *eight = WORKLOAD(POD("eight", "\"priority\":8"));
    trellis_object *crit =
        WORKLOAD(POD("crit", "\"priorityClassName\":\"system-cluster-critical\""));
    /* spec.priority, when admission set it, is what counts */
    trellis_object *admitted =
        WORKLOAD(POD("admitted", "\"priority\":1,\"priorityClassName\":\"gone\""));
    ck_assert_int_ne(mock_less(pl, gold, dflt), 0);
    ck_assert_int_ne(mock_less(pl, crit, gold), 0);
    /* the default is the lower of the two global defaults: 7 < 8 */
    ck_assert_int_ne(mock_less(pl, eight, dflt), 0);
    ck_assert_int_ne(mock_less(pl, dflt, admitted), 0);
    trellis_object *typo = WORKLOAD(POD("typo", "\"priorityClassName\":\"glod\""));
    ck_assert_msg(strstr(mock_prepare_error(typo, pl), "no PriorityClass 'glod'") != NULL, "%s",
                  mock_prepare_error(typo, pl));
    trellis_object *bad = WORKLOAD(POD("bad", "\"priorityClassName\":\"broken\""));
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "PriorityClass broken: value") != NULL, "%s",
                  mock_prepare_error(bad, pl));
    /* without priority_class_field classes are not read */
    trellis_plugin *plain = load("priority-sort", NULL);
    ck_assert_str_eq(mock_prepare_error(typo, plain), "");
    ck_assert_ptr_null(mock_load(m, "priority-sort",
                                 "{\"priority_class_field\":\"spec.priorityClassName\","
                                 "\"priority_class_kind\":\"\"}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "priority_class_kind") != NULL, "%s", err);
}
END_TEST

/* ---- label-selector ---------------------------------------------------- */

START_TEST(label_selector_matches_node_labels)
{
    trellis_plugin *pl = load("label-selector", NULL);
    trellis_object *w = WORKLOAD(POD("db", "\"nodeSelector\":{\"disk\":\"ssd\"}"));
    trellis_object *t[] = {
        TARGET(NODE("ssd", ",\"labels\":{\"disk\":\"ssd\"}") "}"),
        TARGET(NODE("hdd", ",\"labels\":{\"disk\":\"hdd\"}") "}"),
        TARGET(NODE("bare", "") "}"),
    };
    int codes[3];
    trellis_status st[3];
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "SelectorMismatch");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
}
END_TEST

START_TEST(label_selector_equivalence_and_hint)
{
    trellis_plugin *pl = load("label-selector", NULL);
    trellis_object *a = WORKLOAD(POD("a", "\"nodeSelector\":{\"disk\":\"ssd\"}"));
    trellis_object *b = WORKLOAD(POD("b", "\"nodeSelector\":{\"disk\":\"ssd\"}"));
    trellis_object *c = WORKLOAD(POD("c", "\"nodeSelector\":{\"disk\":\"hdd\"}"));
    ck_assert_int_ne(mock_equivalent(pl, a, b), 0);
    ck_assert_int_eq(mock_equivalent(pl, a, c), 0);
    trellis_object *old = TARGET(NODE("n", ",\"labels\":{\"disk\":\"hdd\"}") "}");
    trellis_object *now = TARGET(NODE("n", ",\"labels\":{\"disk\":\"ssd\"}") "}");
    ck_assert(mock_events(pl) & TRELLIS_EV_TARGET_UPDATE);
    /* the node gained the label a asks for: a may fit now, c not */
    ck_assert_int_eq(mock_hint(m, pl, a, TRELLIS_EV_TARGET_UPDATE, old, now), TRELLIS_QUEUE);
    ck_assert_int_eq(mock_hint(m, pl, c, TRELLIS_EV_TARGET_UPDATE, old, now), TRELLIS_QUEUE_SKIP);
}
END_TEST

/* ---- taint-toleration -------------------------------------------------- */

#define TAINTED(name, taints) NODE(name, "") ",\"spec\":{\"taints\":[" taints "]}}"

START_TEST(taints_filter_score_and_evict)
{
    trellis_plugin *pl = load("taint-toleration", NULL);
    trellis_object *plain = WORKLOAD(POD("plain", ""));
    trellis_object *tol =
        WORKLOAD(POD("tol", "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}]"));
    trellis_object *t[] = {
        TARGET(TAINTED("gpu", "{\"key\":\"gpu\",\"value\":\"a100\",\"effect\":\"NoSchedule\"}")),
        TARGET(TAINTED("soft", "{\"key\":\"busy\",\"effect\":\"PreferNoSchedule\"}")),
        TARGET(TAINTED("clean", "")),
    };
    int codes[3];
    trellis_status st[3];
    filter(pl, plain, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "TaintNotTolerated");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    filter(pl, tol, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* fewer untolerated PreferNoSchedule taints score higher */
    int64_t sc[2];
    score(pl, plain, &t[1], 2, sc);
    ck_assert_int_lt(sc[0], sc[1]);
    /* a NoExecute taint evicts a bound workload that does not tolerate it */
    trellis_object *noexec =
        TARGET(TAINTED("drain", "{\"key\":\"maint\",\"effect\":\"NoExecute\"}"));
    trellis_status es;
    ck_assert_int_ne(mock_eviction_check(m, pl, plain, noexec, &es), TRELLIS_SUCCESS);
    ck_assert_str_eq(es.reason, "TaintNoExecute");
    ck_assert_int_eq(mock_eviction_check(m, pl, plain, t[2], &es), TRELLIS_SUCCESS);
}
END_TEST

/* ---- resources-fit, least-allocated ------------------------------------ */

#define SIZED(name, cpu, mem)                                                                      \
    NODE(name, "")                                                                                 \
    ",\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\",\"pods\":\"110\"}}}"
#define ASKS(name, cpu, mem)                                                                       \
    POD(name, "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu        \
              "\",\"memory\":\"" mem "\"}}}]")

START_TEST(resources_fit_counts_assigned_workloads)
{
    trellis_plugin *pl = load("resources-fit", NULL);
    trellis_object *big = TARGET(SIZED("big", "4", "8Gi"));
    trellis_object *small = TARGET(SIZED("small", "1", "2Gi"));
    trellis_object *busy = TARGET(SIZED("busy", "4", "8Gi"));
    mock_assign(m, busy, WORKLOAD(ASKS("running", "3500m", "1Gi")));
    trellis_object *w = WORKLOAD(ASKS("new", "2", "1Gi"));
    trellis_object *t[] = {big, small, busy};
    int codes[3];
    trellis_status st[3];
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* more than the target has at all: evicting would not help */
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "InsufficientResources");
    /* taken by a workload on it: evicting could help */
    ck_assert_int_eq(codes[2], TRELLIS_UNSCHEDULABLE);
    ck_assert_msg(strstr(st[2].message, "cpu") != NULL, "%s", st[2].message);
}
END_TEST

/* SDK 1.5: the counters are named after the resources, with their units;
 * what a node holds is its pods' requests, what it can hold its
 * allocatable (none for a resource it does not declare). */
START_TEST(resources_fit_names_its_counters)
{
    trellis_plugin *pl =
        load("resources-fit", "{\"resources\":[\"cpu\",\"memory\",\"pods\",\"nvidia.com/gpu\"]}");
    trellis_object *n = TARGET(SIZED("n", "4", "8Gi"));
    mock_assign(m, n, WORKLOAD(ASKS("a", "1500m", "1Gi")));
    mock_assign(m, n, WORKLOAD(ASKS("b", "500m", "512Mi")));
    static const char *const names[] = {"cpu", "memory", "pods", "nvidia.com/gpu"};
    static const trellis_unit units[] = {TRELLIS_UNIT_MILLI, TRELLIS_UNIT_BYTES, TRELLIS_UNIT_COUNT,
                                         TRELLIS_UNIT_COUNT};
    for (int k = 0; k < 4; k++) {
        trellis_unit u;
        ck_assert_str_eq(mock_counter_name(pl, k, &u), names[k]);
        ck_assert_int_eq(u, units[k]);
    }
    int64_t used[4], alloc[4];
    mock_allocated(pl, n, used, alloc);
    ck_assert_int_eq(used[0], 2000);
    ck_assert_int_eq(alloc[0], 4000);
    ck_assert_int_eq(used[1], (INT64_C(3) << 29));
    ck_assert_int_eq(alloc[1], (INT64_C(8) << 30));
    ck_assert_int_eq(used[2], 2);
    ck_assert_int_eq(alloc[2], 110);
    ck_assert_int_eq(used[3], 0);
    ck_assert_int_eq(alloc[3], -1);
}
END_TEST

START_TEST(least_allocated_prefers_the_emptier_target)
{
    trellis_plugin *pl = load("least-allocated", NULL);
    trellis_object *empty = TARGET(SIZED("empty", "4", "8Gi"));
    trellis_object *half = TARGET(SIZED("half", "4", "8Gi"));
    mock_assign(m, half, WORKLOAD(ASKS("running", "2", "4Gi")));
    trellis_object *w = WORKLOAD(ASKS("new", "1", "1Gi"));
    trellis_object *t[] = {empty, half};
    int64_t sc[2];
    score(pl, w, t, 2, sc);
    ck_assert_int_gt(sc[0], sc[1]);
    ck_assert_int_le(sc[0], TRELLIS_MAX_SCORE);
    ck_assert_int_ge(sc[1], 0);
}
END_TEST

/* ---- least-utilized ---------------------------------------------------- */

START_TEST(least_utilized_prefers_fewer_workloads)
{
    trellis_plugin *pl = load("least-utilized", NULL);
    trellis_object *a = TARGET(NODE("a", "") "}");
    trellis_object *b = TARGET(NODE("b", "") "}");
    mock_assign(m, b, WORKLOAD(POD("x", "")));
    mock_assign(m, b, WORKLOAD(POD("y", "")));
    trellis_object *t[] = {a, b};
    int64_t sc[2];
    score(pl, WORKLOAD(POD("new", "")), t, 2, sc);
    ck_assert_int_eq(sc[0], TRELLIS_MAX_SCORE);
    ck_assert_int_lt(sc[1], sc[0]);
}
END_TEST

/* ---- preemption -------------------------------------------------------- */

START_TEST(preemption_registers_a_post_filter)
{
    trellis_plugin *pl = load("preemption", NULL);
    ck_assert(mock_registered(pl, "post_filter"));
    ck_assert(!mock_registered(pl, "filter"));
    char err[256];
    ck_assert_ptr_null(mock_load(m, "preemption", "{\"no_such\":1}", err, sizeof err));
    ck_assert_msg(strstr(err, "unknown argument 'no_such'") != NULL, "%s", err);
    /* kube's ValidateDefaultPreemptionArgs */
    ck_assert_ptr_null(
        mock_load(m, "preemption", "{\"min_candidate_nodes_percentage\":101}", err, sizeof err));
    ck_assert_msg(strstr(err, "not in valid range [0, 100], got 101") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "preemption",
                                 "{\"min_candidate_nodes_percentage\":0,"
                                 "\"min_candidate_nodes_absolute\":0}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "both cannot be zero") != NULL, "%s", err);
    ck_assert_ptr_null(
        mock_load(m, "preemption", "{\"min_candidate_nodes_absolute\":-1}", err, sizeof err));
    ck_assert_msg(strstr(err, "[0, inf), got -1") != NULL, "%s", err);
}
END_TEST

/* kube's calculateNumCandidates: 10% of the nodes, at least 100, at most all */
START_TEST(preemption_candidates_wanted)
{
    ck_assert_uint_eq(pick_candidates_wanted(5000, 10, 100), 500);
    ck_assert_uint_eq(pick_candidates_wanted(500, 10, 100), 100);
    ck_assert_uint_eq(pick_candidates_wanted(40, 10, 100), 40);
    ck_assert_uint_eq(pick_candidates_wanted(7, 50, 0), 3); /* 7 * 50 / 100 = 3 */
    ck_assert_uint_eq(pick_candidates_wanted(0, 10, 100), 0);
}
END_TEST

/* pickOneNodeForPreemption, one criterion deciding at a time */
START_TEST(preemption_pick_one_in_kube_order)
{
    /* fewest PDB violations beats a lower priority */
    pick_summary a[] = {{1, 10, 0, 1, 0}, {0, 50, 0, 1, 0}};
    ck_assert_uint_eq(pick_one(a, 2), 1);
    /* lowest highest priority beats fewer victims */
    pick_summary b[] = {{0, 85, pick_sum_term(85), 1, 0},
                        {0, 80, pick_sum_term(80) + pick_sum_term(70), 2, 0}};
    ck_assert_uint_eq(pick_one(b, 2), 1);
    /* the sum with 2^31 added per victim: fewer victims of a negative priority win */
    pick_summary c[] = {{0, -5, 2 * pick_sum_term(-5), 2, 0}, {0, -5, pick_sum_term(-5), 1, 0}};
    ck_assert_uint_eq(pick_one(c, 2), 1);
    ck_assert_int_eq(pick_sum_term(-5), 2147483643LL);
    ck_assert_int_eq(pick_sum_term(INT64_MAX), 4294967295LL); /* clamped to int32 */
    /* the latest start of the highest-priority victims */
    pick_summary d[] = {{0, 10, 5, 1, 1000}, {0, 10, 5, 1, 3000}, {0, 10, 5, 1, 2000}};
    ck_assert_uint_eq(pick_one(d, 3), 1);
    /* all equal: the first; one candidate: it */
    pick_summary e[] = {{0, 10, 5, 1, 1000}, {0, 10, 5, 1, 1000}};
    ck_assert_uint_eq(pick_one(e, 2), 0);
    ck_assert_uint_eq(pick_one(e, 1), 0);
    /* a tie on the first criteria among a subset: the rest never comes back */
    pick_summary f[] = {{0, 20, 5, 1, 9000}, {0, 10, 7, 2, 1000}, {0, 10, 7, 2, 2000}};
    ck_assert_uint_eq(pick_one(f, 3), 2);
}
END_TEST

/* MoreImportantPod and the budget counted down per victim */
START_TEST(preemption_importance_and_budgets)
{
    ck_assert(pick_more_important(10, 5, 9, 1));
    ck_assert(pick_more_important(10, 1, 10, 5)); /* the older first */
    ck_assert(!pick_more_important(10, 5, 10, 5));
    int64_t allowed[] = {1, 0};
    size_t only_first[] = {0}, both[] = {0, 1};
    ck_assert_int_eq(pick_budget_take(allowed, only_first, 1), 0); /* 1 -> 0 */
    ck_assert_int_eq(pick_budget_take(allowed, only_first, 1), 1); /* 0 -> -1 */
    ck_assert_int_eq(pick_budget_take(allowed, both, 2), 1);
    ck_assert_int_eq(allowed[0], -2);
    ck_assert_int_eq(allowed[1], -1);
    ck_assert_int_eq(pick_budget_take(allowed, NULL, 0), 0);
}
END_TEST

/* ---- the Gardener plugins ---------------------------------------------- */

#define SEED(name, provider, region, extra)                                                        \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{"             \
    "\"name\":\"" name "\"},\"spec\":{\"provider\":{\"type\":\"" provider                          \
    "\",\"region\":\"" region "\"},\"networks\":{\"nodes\":\"10.242.0.0/16\",\"pods\":"            \
    "\"10.243.0.0/16\",\"services\":\"10.244.0.0/16\"},\"settings\":{\"scheduling\":{"             \
    "\"visible\":true}}},\"status\":{\"lastOperation\":{\"type\":\"Reconcile\",\"state\":"         \
    "\"Succeeded\"},\"conditions\":[{\"type\":\"GardenletReady\",\"status\":\"True\"},"            \
    "{\"type\":\"BackupBucketsReady\",\"status\":\"True\"}],\"allocatable\":{\"shoots\":"          \
    "2}}" extra "}"
#define SHOOT(name, provider, region, nodes)                                                       \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Shoot\",\"metadata\":{"            \
    "\"name\":\"" name "\",\"namespace\":\"garden-dev\"},\"spec\":{\"cloudProfileName\":"          \
    "\"" provider "\",\"region\":\"" region "\",\"provider\":{\"type\":\"" provider "\"},"         \
    "\"networking\":{\"nodes\":\"" nodes "\"}}}"
#define CLOUD_PROFILE(name)                                                                        \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"CloudProfile\","                   \
    "\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"type\":\"" name "\"}}"

START_TEST(gardener_usable_needs_a_ready_visible_seed)
{
    trellis_plugin *pl = load("gardener-usable", NULL);
    trellis_object *t[] = {
        TARGET(SEED("ok", "aws", "eu-west-1", "")),
        TARGET("{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\","
               "\"metadata\":{\"name\":\"gone\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},"
               "\"spec\":{\"settings\":{\"scheduling\":{\"visible\":true}}},\"status\":{"
               "\"lastOperation\":{\"state\":\"Succeeded\"},\"conditions\":[{\"type\":"
               "\"GardenletReady\",\"status\":\"True\"}]}}"),
        TARGET("{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\","
               "\"metadata\":{\"name\":\"new\"},\"spec\":{\"settings\":{\"scheduling\":{"
               "\"visible\":true}}}}"),
    };
    int codes[3];
    trellis_status st[3];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16")), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "SeedDeleting");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "SeedNotReady");
}
END_TEST

START_TEST(fleet_eligibility_follows_the_clock)
{
    trellis_plugin *pl = load("fleet-eligibility", "{\"heartbeat_timeout_s\":60}");
    trellis_object *t[] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m1\"},\"status\":{\"agentStatus\":[{\"type\":\"MemberAgent\","
               "\"lastReceivedHeartbeat\":\"2026-01-01T00:00:00Z\",\"conditions\":[{\"type\":"
               "\"Joined\",\"status\":\"True\"},{\"type\":\"Healthy\",\"status\":\"True\"}]}]}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m2\"}}"),
    };
    trellis_object *w = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{"
                                 "\"name\":\"p\"}}");
    int codes[2];
    trellis_status st[2];
    mock_set_now(m, 1767225600000 + 30000); /* 30 s after the heartbeat */
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(mock_retry_at(m), 1767225600000 + 60001); /* when it goes stale */
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].message,
                     "cluster is not connected to the fleet: member agent not online yet");
    /* the last instant it is eligible, and the first it is not: the span
     * (one instant per cluster, compared with the clock) agrees with the
     * plain verdict at both */
    mock_set_now(m, 1767225600000 + 60000);
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    mock_set_now(m, 1767225600000 + 60001);
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    mock_set_now(m, 1767225600000 + 90000); /* 1.5 minutes */
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].message, "cluster is not connected to the fleet: no recent heartbeat "
                                    "signals (last received 1.50 minutes ago)");
    char err[512];
    ck_assert_ptr_null(
        mock_load(m, "fleet-eligibility", "{\"health_timeout_s\":0}", err, sizeof err));
    ck_assert_msg(strstr(err, "health_timeout_s: expected 1..2592000 seconds, got 0"), "%s", err);
}
END_TEST

START_TEST(fleet_policy_from_the_latest_snapshot)
{
    trellis_plugin *pl = load("fleet-policy", NULL);
    /* objects of other kinds the plugin reads: the policy snapshots */
    obj(-1, "{\"apiVersion\":\"v1\",\"kind\":\"ClusterSchedulingPolicySnapshot\",\"metadata\":"
            "{\"name\":\"p-0\",\"labels\":{\"kubernetes-fleet.io/parent-CRP\":\"p\","
            "\"kubernetes-fleet.io/is-latest-snapshot\":\"false\"}},\"spec\":{\"policy\":{"
            "\"placementType\":\"PickAll\"}}}");
    obj(-1, "{\"apiVersion\":\"v1\",\"kind\":\"ClusterSchedulingPolicySnapshot\",\"metadata\":"
            "{\"name\":\"p-1\",\"labels\":{\"kubernetes-fleet.io/parent-CRP\":\"p\","
            "\"kubernetes-fleet.io/is-latest-snapshot\":\"true\"},\"annotations\":{"
            "\"kubernetes-fleet.io/number-of-clusters\":\"4\"}},\"spec\":{\"policy\":{"
            "\"placementType\":\"PickN\",\"numberOfClusters\":2}}}");
    trellis_object *t[1] = {TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\","
                                   "\"metadata\":{\"name\":\"m1\"}}")};
    int codes[1];
    trellis_status st[1];
    filter(pl,
           WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                    "\"metadata\":{\"name\":\"p\"}}"),
           t, 1, codes, st);
    ck_assert_uint_eq(mock_want(m), 4); /* the latest snapshot's annotation */
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* PickFixed in the placement itself (no snapshot names it) */
    filter(pl,
           WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                    "\"metadata\":{\"name\":\"q\"},\"spec\":{\"policy\":{\"placementType\":"
                    "\"PickFixed\",\"clusterNames\":[\"m2\",\"m9\"]}}}"),
           t, 1, codes, st);
    ck_assert_uint_eq(mock_want(m), 2);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "NotInClusterNames");
    ck_assert_str_eq(mock_note(m, 1), "Specified cluster \"m2\" is not found");
    /* an unknown placement type is the workload's error */
    trellis_object *bad = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                                   "\"metadata\":{\"name\":\"r\"},\"spec\":{\"policy\":{"
                                   "\"placementType\":\"PickSome\"}}}");
    ck_assert_msg(strstr(mock_prepare_error(bad, pl),
                         "expected PickAll, PickN or PickFixed, got \"PickSome\""),
                  "%s", mock_prepare_error(bad, pl));
}
END_TEST

START_TEST(gardener_usable_emergency_stop)
{
    trellis_plugin *plain = load("gardener-usable", NULL);
    trellis_plugin *pl = load("gardener-usable", "{\"emergency_stop\":true}");
    trellis_object *t[] = {
        TARGET(SEED("stopped", "aws", "eu-west-1",
                    ",\"metadata\":{\"name\":\"stopped\",\"annotations\":{\"shoot.gardener."
                    "cloud/emergency-stop-reconciliations\":\"true\"}}")),
        TARGET(SEED("running", "aws", "eu-west-1",
                    ",\"metadata\":{\"name\":\"running\",\"annotations\":{\"shoot.gardener."
                    "cloud/emergency-stop-reconciliations\":\"false\"}}")),
    };
    trellis_object *w = WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16"));
    int codes[2];
    trellis_status st[2];
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "ShootReconciliationsDisabled");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* the document's rule (the default) does not know the annotation */
    filter(plain, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
}
END_TEST

START_TEST(fleet_taints_match_as_kubefleet)
{
    trellis_plugin *pl = load("fleet-taints", NULL);
    trellis_object *t[] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m1\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":"
               "\"NoSchedule\"}]}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m2\"}}"),
    };
    int codes[2];
    trellis_status st[2];
    /* no operator: no toleration (Kubernetes would read Equal) */
    filter(pl,
           WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"a\"},"
                    "\"spec\":{\"policy\":{\"tolerations\":[{\"key\":\"k\",\"value\":\"v\"}]}}}"),
           t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].message, "taint &{Key:k Value:v Effect:NoSchedule} cannot be tolerated");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* Exists with no key and no effect: every taint */
    filter(pl,
           WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"b\"},"
                    "\"spec\":{\"policy\":{\"tolerations\":[{\"operator\":\"Exists\"}]}}}"),
           t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
}
END_TEST

#define MEMBER(name, labels)                                                                       \
    "{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":\"" name             \
    "\",\"labels\":{" labels "}}}"
#define BINDING(crp, cluster, snapshot, state)                                                     \
    "{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourceBinding\",\"metadata\":{\"name\":\"" crp     \
    "-" cluster "\",\"labels\":{\"kubernetes-fleet.io/parent-CRP\":\"" crp "\"}},\"spec\":{"       \
    "\"targetCluster\":\"" cluster "\",\"state\":\"" state "\","                                   \
    "\"schedulingPolicySnapshotName\":\"" snapshot "\"}}"

START_TEST(fleet_topology_spread_counts_domains)
{
    /* KubeFleet's willViolate: region a holds 0 bindings, region b one
     * (on b1): counts [0, 1], skew 1. One more in a: the only smallest,
     * skew 0 (fine); in b: the largest, skew 2 > maxSkew 1 (rejected);
     * x has no region: no skew. */
    trellis_plugin *pl = load("fleet-topology-spread", NULL);
    trellis_object *t[] = {
        TARGET(MEMBER("a1", "\"region\":\"a\"")), TARGET(MEMBER("a2", "\"region\":\"a\"")),
        TARGET(MEMBER("b1", "\"region\":\"b\"")), TARGET(MEMBER("b2", "\"region\":\"b\"")),
        TARGET(MEMBER("x", "\"zone\":\"z\"")),
    };
    const char *held[] = {"b1"};
    const trellis_object *objs[] = {obj(-1, BINDING("p", "b1", "", "Scheduled"))};
    mock_set_held_objects(m, held, objs, 1);
    int codes[5];
    trellis_status st[5];
    filter(pl,
           WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                    "\"metadata\":{\"name\":\"p\"},\"spec\":{\"policy\":{\"placementType\":"
                    "\"PickN\",\"numberOfClusters\":3,\"topologySpreadConstraints\":[{"
                    "\"topologyKey\":\"region\"}]}}}"),
           t, 5, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[3], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[3].message,
                     "violated doNotSchedule topology spread constraint \"region\" (max skew 1)");
    ck_assert_int_eq(codes[4], TRELLIS_SUCCESS);
    /* one cluster per cycle: holds 1 of 3, wants 2 now, and another cycle */
    ck_assert_uint_eq(mock_want(m), 2);
    ck_assert_int_eq(mock_requeue_now(m), 1);
    /* a maxSkew of 0 is refused with the field */
    trellis_object *bad = WORKLOAD(
        "{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\",\"metadata\":{\"name\":"
        "\"q\"},\"spec\":{\"policy\":{\"placementType\":\"PickN\",\"numberOfClusters\":1,"
        "\"topologySpreadConstraints\":[{\"topologyKey\":\"region\",\"maxSkew\":0}]}}}");
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "maxSkew: expected an integer of at least 1"),
                  "%s", mock_prepare_error(bad, pl));
    mock_set_held(m, NULL, 0);
}
END_TEST

START_TEST(fleet_topology_spread_applies_do_not_schedule_first)
{
    /* b1 (region b, zone z1) holds a binding. region: a 0, b 1 (a +1, b
     * violates); zone: z1 1, z2 0 (z2 +1, z1 violates); rack, listed
     * first but ScheduleAnyway, so applied last: r1 0, r2 0 (b1 has no
     * rack), every domain equal: -1. b2 violates region and zone: the
     * first DoNotSchedule one, region, is the one said; a3 only zone.
     * a1: 1 + 1 - 1 = 1; c1 (no zone): 1 + 0 - 1 = 0. */
    trellis_plugin *pl = load("fleet-topology-spread", NULL);
    trellis_object *t[] = {
        TARGET(MEMBER("a1", "\"region\":\"a\",\"zone\":\"z2\",\"rack\":\"r1\"")),
        TARGET(MEMBER("a3", "\"region\":\"a\",\"zone\":\"z1\",\"rack\":\"r1\"")),
        TARGET(MEMBER("b1", "\"region\":\"b\",\"zone\":\"z1\"")),
        TARGET(MEMBER("b2", "\"region\":\"b\",\"zone\":\"z1\"")),
        TARGET(MEMBER("c1", "\"region\":\"a\",\"rack\":\"r2\"")),
    };
    const char *held[] = {"b1"};
    const trellis_object *objs[] = {obj(-1, BINDING("p", "b1", "", "Scheduled"))};
    mock_set_held_objects(m, held, objs, 1);
    trellis_object *w = WORKLOAD(
        "{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\",\"metadata\":{\"name\":"
        "\"p\"},\"spec\":{\"policy\":{\"placementType\":\"PickN\",\"numberOfClusters\":3,"
        "\"topologySpreadConstraints\":[{\"topologyKey\":\"rack\",\"whenUnsatisfiable\":"
        "\"ScheduleAnyway\"},{\"topologyKey\":\"region\"},{\"topologyKey\":\"zone\"}]}}}");
    int codes[5];
    trellis_status st[5];
    filter(pl, w, t, 5, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[1].message,
                     "violated doNotSchedule topology spread constraint \"zone\" (max skew 1)");
    ck_assert_int_eq(codes[3], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[3].message,
                     "violated doNotSchedule topology spread constraint \"region\" (max skew 1)");
    ck_assert_int_eq(codes[4], TRELLIS_SUCCESS);
    int64_t sc[5];
    score(pl, w, t, 5, sc);
    ck_assert_msg(sc[0] == 1 && sc[4] == 0, "%lld %lld %lld %lld %lld", (long long)sc[0],
                  (long long)sc[1], (long long)sc[2], (long long)sc[3], (long long)sc[4]);
    mock_set_held(m, NULL, 0);
}
END_TEST

START_TEST(fleet_same_placement_scores_older_bindings)
{
    trellis_plugin *pl = load("fleet-same-placement", NULL);
    obj(-1, "{\"apiVersion\":\"v1\",\"kind\":\"ClusterSchedulingPolicySnapshot\",\"metadata\":"
            "{\"name\":\"p-1\",\"labels\":{\"kubernetes-fleet.io/parent-CRP\":\"p\","
            "\"kubernetes-fleet.io/is-latest-snapshot\":\"true\"},\"annotations\":{"
            "\"kubernetes-fleet.io/number-of-clusters\":\"2\"}},\"spec\":{\"policy\":{"
            "\"placementType\":\"PickN\"}}}");
    trellis_object *t[] = {TARGET(MEMBER("m1", "")), TARGET(MEMBER("m2", "")),
                           TARGET(MEMBER("m3", ""))};
    /* m1's binding is of p-0 (older), m3's of p-1 */
    const char *held[] = {"m1", "m3"};
    const trellis_object *objs[] = {obj(-1, BINDING("p", "m1", "p-0", "Bound")),
                                    obj(-1, BINDING("p", "m3", "p-1", "Scheduled"))};
    mock_set_held_objects(m, held, objs, 2);
    int64_t s[3];
    score(pl,
          WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                   "\"metadata\":{\"name\":\"p\"}}"),
          t, 3, s);
    ck_assert_int_eq(s[0], 1);
    ck_assert_int_eq(s[1], 0);
    ck_assert_int_eq(s[2], 0);
    mock_set_held(m, NULL, 0);
}
END_TEST

START_TEST(fleet_binder_writes_the_cluster_decision)
{
    trellis_plugin *pl = load("fleet-binder", NULL);
    trellis_object *t = TARGET(MEMBER("m1", ""));
    trellis_status st;
    trellis_object *w = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                                 "\"metadata\":{\"name\":\"p\"},\"spec\":{\"policy\":{"
                                 "\"placementType\":\"PickN\",\"numberOfClusters\":1}}}");
    ck_assert_int_eq(mock_bind(m, pl, w, t, &st), TRELLIS_SUCCESS);
    /* not reserved in a cycle that scored: KubeFleet's zero scores */
    ck_assert_str_eq(mock_written(m, "", "p", "spec.clusterDecision"),
                     "{\"clusterName\":\"m1\",\"selected\":true,\"clusterScore\":{"
                     "\"affinityScore\":0,\"priorityScore\":0},\"reason\":\"Successfully scheduled "
                     "resources for placement in \\\"m1\\\" (affinity score: 0, topology spread "
                     "score: 0): picked by scheduling policy\"}");
    /* no snapshot: no snapshot name */
    ck_assert_ptr_null(mock_written(m, "", "p", "spec.schedulingPolicySnapshotName"));
    trellis_object *f = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterResourcePlacement\","
                                 "\"metadata\":{\"name\":\"f\"},\"spec\":{\"policy\":{"
                                 "\"placementType\":\"PickFixed\",\"clusterNames\":[\"m1\"]}}}");
    ck_assert_int_eq(mock_bind(m, pl, f, t, &st), TRELLIS_SUCCESS);
    ck_assert_str_eq(mock_written(m, "", "f", "spec.clusterDecision"),
                     "{\"clusterName\":\"m1\",\"selected\":true,\"clusterScore\":null,"
                     "\"reason\":\"Successfully scheduled resources for placement in \\\"m1\\\": "
                     "picked by scheduling policy\"}");
}
END_TEST

START_TEST(fleet_affinity_properties)
{
    trellis_plugin *pl = load("fleet-affinity", NULL);
    trellis_object *t[] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m1\"},\"status\":{\"properties\":{\"kubernetes-fleet.io/node-count\":{"
               "\"value\":\"3\"}},\"resourceUsage\":{\"available\":{\"memory\":\"2Gi\"}}}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m2\"}}"),
    };
    int codes[2];
    trellis_status st[2];
    filter(
        pl,
        WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"a\"},"
                 "\"spec\":{\"policy\":{\"affinity\":{\"clusterAffinity\":{"
                 "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"clusterSelectorTerms\":[{"
                 "\"propertySelector\":{\"matchExpressions\":[{\"name\":"
                 "\"resources.kubernetes-fleet.io/available-memory\",\"operator\":\"Ge\","
                 "\"values\":[\"2048Mi\"]}]}}]}}}}}}"),
        t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);      /* 2Gi >= 2048Mi */
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE); /* no reading: no match */
    ck_assert_str_eq(st[1].reason, "AffinityMismatch");
    /* a reading that is no quantity matters only to a policy that names
     * it (KubeFleet parses a property when an expression or a sorter
     * reads it): the cluster is prepared, and matches other policies */
    trellis_object *odd[] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":"
               "\"m3\"},\"status\":{\"properties\":{\"x\":{\"value\":\"lots\"},"
               "\"cost\":{\"value\":\"0.0012\"},\"debt\":{\"value\":\"-5\"}},"
               "\"resourceUsage\":{\"capacity\":{\"ephemeral-storage\":\"10Pi\"}}}}"),
    };
    ck_assert_str_eq(mock_prepare_error(odd[0], pl), "");
#define FLEET_EXPR(name, op, value)                                                                \
    WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"e\"},"              \
             "\"spec\":{\"policy\":{\"affinity\":{\"clusterAffinity\":{"                           \
             "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"clusterSelectorTerms\":[{"     \
             "\"propertySelector\":{\"matchExpressions\":[{\"name\":\"" name "\",\"operator\":"    \
             "\"" op "\",\"values\":[\"" value "\"]}]}}]}}}}}}")
    /* exact comparisons (Quantity.Cmp): thousandths rounded up made
     * 0.0012 equal to 0.0015 */
    filter(pl, FLEET_EXPR("cost", "Lt", "0.0015"), odd, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl, FLEET_EXPR("cost", "Eq", "0.0015"), odd, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    filter(pl, FLEET_EXPR("cost", "Eq", "1.2m"), odd, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl, FLEET_EXPR("debt", "Lt", "-4"), odd, 1, codes, st); /* negative readings */
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl,
           FLEET_EXPR("resources.kubernetes-fleet.io/total-ephemeral-storage", "Gt",
                      "11258999068426239"),
           odd, 1, codes, st); /* 10Pi = 11258999068426240, beyond thousandths in an int64 */
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl,
           FLEET_EXPR("resources.kubernetes-fleet.io/total-ephemeral-storage", "Gt",
                      "11258999068426240"),
           odd, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    filter(pl, FLEET_EXPR("x", "Gt", "1"), odd, 1, codes, st); /* named: passed over, and why */
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "PropertyNotAQuantity");
    ck_assert_str_eq(st[0].message,
                     "value lots of property x from cluster m3 is not a valid quantity");
    /* only a reading the walk reaches counts: a term whose labels do not
     * match never reads it */
    filter(
        pl,
        WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"f\"},"
                 "\"spec\":{\"policy\":{\"affinity\":{\"clusterAffinity\":{"
                 "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"clusterSelectorTerms\":[{"
                 "\"labelSelector\":{\"matchLabels\":{\"env\":\"dev\"}},"
                 "\"propertySelector\":{\"matchExpressions\":[{\"name\":\"x\",\"operator\":"
                 "\"Gt\",\"values\":[\"1\"]}]}}]}}}}}}"),
        odd, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "AffinityMismatch");
#undef FLEET_EXPR
    /* a sorter over a property some cluster reports as no quantity fails
     * the cycle, as KubeFleet's PreScore does */
    int64_t sc[1];
    char err[512];
    ck_assert_int_eq(
        mock_score(m, pl,
                   WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":"
                            "\"s\"},\"spec\":{\"policy\":{\"placementType\":\"PickN\","
                            "\"numberOfClusters\":1,\"affinity\":{\"clusterAffinity\":{"
                            "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":"
                            "100,\"preference\":{\"propertySorter\":{\"name\":\"x\","
                            "\"sortOrder\":\"Ascending\"}}}]}}}}}"),
                   odd, 1, sc, err, sizeof err),
        -1);
    ck_assert_msg(strstr(err, "value lots of property x from cluster m3 is not a valid quantity"),
                  "%s", err);
}
END_TEST

/* Preferred scores are kept across cycles (and placements with the same
 * terms) only while the clusters are the same: a cluster replaced moves
 * the extremes, and every score with them. node-count Descending, weight
 * 100: round(100 x (v - min) / (max - min)). */
#define COUNTED(name, count)                                                                       \
    TARGET(                                                                                        \
        "{\"apiVersion\":\"v1\",\"kind\":\"MemberCluster\",\"metadata\":{\"name\":\"" name         \
        "\"},\"status\":{\"properties\":{\"kubernetes-fleet.io/node-count\":{\"value\":\"" count   \
        "\"}}}}")
#define BY_COUNT(name)                                                                             \
    WORKLOAD(                                                                                      \
        "{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{\"name\":\"" name "\"},"            \
        "\"spec\":{\"policy\":{\"placementType\":\"PickN\",\"numberOfClusters\":1,"                \
        "\"affinity\":{\"clusterAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"  \
        "[{\"weight\":100,\"preference\":{\"propertySorter\":{\"name\":"                           \
        "\"kubernetes-fleet.io/node-count\",\"sortOrder\":\"Descending\"}}}]}}}}}")
START_TEST(fleet_affinity_scores_follow_the_clusters)
{
    trellis_plugin *pl = load("fleet-affinity", NULL);
    trellis_object *t[] = {COUNTED("m1", "3"), COUNTED("m2", "5"), COUNTED("m3", "4")};
    int64_t s[3];
    score(pl, BY_COUNT("a"), t, 3, s); /* min 3, max 5: m3 (4 - 3) / 2 */
    ck_assert_int_eq(s[0], 0);
    ck_assert_int_eq(s[1], 100);
    ck_assert_int_eq(s[2], 50);
    score(pl, BY_COUNT("b"), t, 3, s); /* the same terms and clusters */
    ck_assert_int_eq(s[2], 50);
    t[1] = COUNTED("m2", "9"); /* max 9: m3 (4 - 3) / 6 = 16.7 */
    score(pl, BY_COUNT("c"), t, 3, s);
    ck_assert_int_eq(s[0], 0);
    ck_assert_int_eq(s[1], 100);
    ck_assert_int_eq(s[2], 17);
    score(pl, BY_COUNT("a"), t, 2, s); /* m1 and m2 alone */
    ck_assert_int_eq(s[0], 0);
    ck_assert_int_eq(s[1], 100);
}
END_TEST
#undef COUNTED
#undef BY_COUNT

/* openmcp-clusters narrows a request's cycle to its purpose's Clusters
 * and keeps the positions for the next request of the purpose while no
 * Cluster changed: a Cluster that comes to serve the purpose (the same
 * number of targets) is in the next narrowing. */
#define OMCP_CLUSTER(name, purposes)                                                               \
    TARGET("{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\",\"kind\":\"Cluster\","             \
           "\"metadata\":{\"name\":\"" name                                                        \
           "\",\"namespace\":\"ns\"},\"spec\":{\"purposes\":" purposes "}}")
#define OMCP_REQUEST(name)                                                                         \
    WORKLOAD("{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\",\"kind\":\"ClusterRequest\","    \
             "\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":\"u-" name "\"},"   \
             "\"spec\":{\"purpose\":\"mcp\"}}")
START_TEST(openmcp_narrowing_follows_the_clusters)
{
    trellis_plugin *pl =
        load("openmcp-clusters",
             "{\"config\":{\"scheduler\":{\"scope\":\"Cluster\",\"purposeMappings\":{\"mcp\":{"
             "\"template\":{\"spec\":{\"profile\":\"p\",\"tenancy\":\"Shared\"}}}}}}}");
    trellis_object *t[] = {OMCP_CLUSTER("c1", "[\"mcp\"]"), OMCP_CLUSTER("c2", "[\"other\"]"),
                           OMCP_CLUSTER("c3", "[\"mcp\"]")};
    int codes[3];
    trellis_status st[3];
    char err[512];
    ck_assert_int_eq(mock_filter(m, pl, OMCP_REQUEST("a"), t, 3, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(mock_narrowed(m), 2);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_int_eq(mock_filter(m, pl, OMCP_REQUEST("b"), t, 3, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(mock_narrowed(m), 2); /* the same Clusters */
    t[1] = OMCP_CLUSTER("c2", "[\"other\",\"mcp\"]");
    ck_assert_int_eq(mock_filter(m, pl, OMCP_REQUEST("c"), t, 3, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(mock_narrowed(m), 3);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
}
END_TEST

/* Clusters created since the last narrowing of a purpose (as many more
 * targets as were prepared since, at most eight, each of them a target
 * now) are taken into the kept narrowing: the places after each move up,
 * its own is added when it serves the purpose; otherwise the narrowing is
 * made again. Each step's verdicts are those of the plain filter
 * (mock_filter compares), and the Clusters left out are exactly those not
 * serving. */
static void expect_served(trellis_plugin *pl, trellis_object *w, trellis_object *const *t, size_t n,
                          const char *serving)
{
    int codes[26];
    trellis_status st[26];
    char err[512];
    ck_assert_int_eq(mock_filter(m, pl, w, t, n, codes, st, err, sizeof err), 0);
    long want = 0;
    for (size_t i = 0; i < n; i++) {
        want += serving[i] == 'y';
        ck_assert_msg(codes[i] == (serving[i] == 'y' ? TRELLIS_SUCCESS : TRELLIS_UNRESOLVABLE),
                      "target %zu: code %d", i, codes[i]);
    }
    ck_assert_int_eq(mock_narrowed(m), want);
}

START_TEST(openmcp_narrowing_takes_in_created_clusters)
{
    trellis_plugin *pl =
        load("openmcp-clusters",
             "{\"config\":{\"scheduler\":{\"scope\":\"Cluster\",\"purposeMappings\":{\"mcp\":{"
             "\"template\":{\"spec\":{\"profile\":\"p\",\"tenancy\":\"Shared\"}}}}}}}");
    /* prepared, not targets yet */
    trellis_object *y = OMCP_CLUSTER("c6", "[\"mcp\"]"), *y2 = OMCP_CLUSTER("cb", "[\"mcp\"]");
    trellis_object *t[12] = {OMCP_CLUSTER("c1", "[\"mcp\"]"), OMCP_CLUSTER("c2", "[\"other\"]"),
                             OMCP_CLUSTER("c3", "[\"mcp\"]")};
    expect_served(pl, OMCP_REQUEST("a"), t, 3, "yny");
    /* created before every other, serving */
    trellis_object *c0 = OMCP_CLUSTER("c0", "[\"mcp\"]");
    memmove(t + 1, t, 3 * sizeof *t);
    t[0] = c0;
    expect_served(pl, OMCP_REQUEST("b"), t, 4, "yyny");
    /* in the middle, not serving */
    trellis_object *c25 = OMCP_CLUSTER("c25", "[\"other\"]");
    memmove(t + 4, t + 3, sizeof *t);
    t[3] = c25;
    expect_served(pl, OMCP_REQUEST("c"), t, 5, "yynny");
    /* last, serving */
    t[5] = OMCP_CLUSTER("c4", "[\"mcp\"]");
    expect_served(pl, OMCP_REQUEST("d"), t, 6, "yynnyy");
    /* one more target, but not the one prepared since: made again */
    trellis_object *c7 = OMCP_CLUSTER("c7", "[\"mcp\"]");
    (void)c7;
    t[6] = y;
    expect_served(pl, OMCP_REQUEST("e"), t, 7, "yynnyyy");
    /* the same narrowing again; then one created between the first two */
    expect_served(pl, OMCP_REQUEST("f"), t, 7, "yynnyyy");
    trellis_object *c05 = OMCP_CLUSTER("c05", "[\"mcp\"]");
    memmove(t + 2, t + 1, 6 * sizeof *t);
    t[1] = c05;
    expect_served(pl, OMCP_REQUEST("g"), t, 8, "yyynnyyy");
    /* two created at once: both taken in */
    trellis_object *c8 = OMCP_CLUSTER("c8", "[\"mcp\"]"), *c9 = OMCP_CLUSTER("c9", "[\"other\"]");
    t[8] = c8;
    t[9] = c9;
    expect_served(pl, OMCP_REQUEST("h"), t, 10, "yyynnyyyyn");
    /* one created and another replaced (c3 no longer serving): made again */
    t[5] = OMCP_CLUSTER("c3", "[\"other\"]");
    t[10] = OMCP_CLUSTER("ca", "[\"mcp\"]");
    expect_served(pl, OMCP_REQUEST("i"), t, 11, "yyynnnyyyny");
    /* the one prepared since is a new copy of c1, not the c1 among the
     * targets, and one more target came: made again */
    trellis_object *c1b = OMCP_CLUSTER("c1", "[\"other\"]");
    (void)c1b;
    t[11] = y2;
    expect_served(pl, OMCP_REQUEST("j"), t, 12, "yyynnnyyynyy");
    /* three created at once (last, first, in the middle): taken in */
    trellis_object *cc = OMCP_CLUSTER("cc", "[\"mcp\"]");
    trellis_object *u[24] = {OMCP_CLUSTER("a1", "[\"mcp\"]")};
    memcpy(u + 1, t, 4 * sizeof *t);
    u[5] = OMCP_CLUSTER("c15", "[\"other\"]");
    memcpy(u + 6, t + 4, 8 * sizeof *t);
    u[14] = cc;
    expect_served(pl, OMCP_REQUEST("k"), u, 15, "yyyynnnnyyynyyy");
    /* more created at once than are kept: made again */
    for (int i = 0; i < 9; i++) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\",\"kind\":\"Cluster\","
                 "\"metadata\":{\"name\":\"d%d\",\"namespace\":\"ns\"},"
                 "\"spec\":{\"purposes\":[\"mcp\"]}}",
                 i);
        u[15 + i] = TARGET(json);
    }
    expect_served(pl, OMCP_REQUEST("l"), u, 24, "yyyynnnnyyynyyyyyyyyyyyy");
    /* two created at once before every other: taken in */
    trellis_object *v[26] = {OMCP_CLUSTER("a0", "[\"other\"]"), OMCP_CLUSTER("a05", "[\"mcp\"]")};
    memcpy(v + 2, u, 24 * sizeof *u);
    expect_served(pl, OMCP_REQUEST("m"), v, 26, "nyyyyynnnnyyynyyyyyyyyyyyy");
}
END_TEST

/* openmcp-strategy, Balanced: minus the request finalizers on a Cluster
 * plus the requests assumed there; the span's score (one column holding
 * the finalizer count and, up to 32 purposes, the purposes served) equal
 * to the plain score, with 2 purposes and with 33 (the count alone). */
#define OMCP_HOLDING(name, purposes, finalizers)                                                   \
    TARGET("{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\",\"kind\":\"Cluster\","             \
           "\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"finalizers\":" finalizers   \
           "},\"spec\":{\"purposes\":" purposes "}}")
#define OMCP_FIN(uid) "\"request.clusters.openmcp.cloud/" uid "\""
#define OMCP_SHARED "{\"template\":{\"spec\":{\"profile\":\"p\",\"tenancy\":\"Shared\"}}}"
static void expect_balanced(const char *args)
{
    trellis_plugin *pl = load("openmcp-strategy", args);
    trellis_object *t[] = {
        OMCP_HOLDING("c1", "[\"mcp\"]",
                     "[" OMCP_FIN("a") "," OMCP_FIN("b") "," OMCP_FIN("c") ",\"other.io/keep\"]"),
        OMCP_HOLDING("c2", "[\"other\"]", "[" OMCP_FIN("d") "]"),
        OMCP_HOLDING("c3", "[\"other\",\"mcp\"]", "[" OMCP_FIN("e") "," OMCP_FIN("f") "]"),
        OMCP_HOLDING("c4", "[\"mcp\"]", "[]"),
    };
    mock_assign(m, t[2], OMCP_REQUEST("assumed")); /* placed, not bound: one more */
    int64_t s[4];
    score(pl, OMCP_REQUEST("r"), t, 4, s);
    ck_assert_int_eq(s[0], -3);
    ck_assert_int_eq(s[1], -1);
    ck_assert_int_eq(s[2], -3);
    ck_assert_int_eq(s[3], 0);
}

START_TEST(openmcp_balanced_counts_finalizers_and_assumed)
{
    expect_balanced("{\"config\":{\"scheduler\":{\"scope\":\"Cluster\",\"strategy\":\"Balanced\","
                    "\"purposeMappings\":{\"mcp\":" OMCP_SHARED ",\"other\":" OMCP_SHARED "}}}}");
    char args[8192];
    size_t k = (size_t)snprintf(args, sizeof args,
                                "{\"config\":{\"scheduler\":{\"scope\":\"Cluster\",\"strategy\":"
                                "\"Balanced\",\"purposeMappings\":{");
    for (int i = 0; i < 31; i++)
        k += (size_t)snprintf(args + k, sizeof args - k, "\"p%d\":" OMCP_SHARED ",", i);
    snprintf(args + k, sizeof args - k, "\"mcp\":" OMCP_SHARED ",\"other\":" OMCP_SHARED "}}}}");
    expect_balanced(args); /* 33 purposes */
}
END_TEST
#undef OMCP_HOLDING
#undef OMCP_FIN
#undef OMCP_SHARED
#undef OMCP_CLUSTER
#undef OMCP_REQUEST

START_TEST(gardener_region_same_region)
{
    trellis_plugin *pl = load("gardener-region", "{\"region_config\":false}");
    trellis_object *t[] = {
        TARGET(SEED("here", "aws", "eu-west-1", "")),
        TARGET(SEED("there", "aws", "us-east-1", "")),
        TARGET(SEED("other", "gcp", "eu-west-1", "")),
    };
    int codes[3];
    trellis_status st[3];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16")), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "RegionMismatch");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "ProviderMismatch");
}
END_TEST

START_TEST(gardener_region_config_file)
{
#define GC_DOC                                                                                     \
    "\"config\":{\"apiVersion\":\"scheduler.config.gardener.cloud/v1alpha1\",\"kind\":"            \
    "\"SchedulerConfiguration\",\"logLevel\":\"info\",\"schedulers\":{\"shoot\":{"
    /* MinimalDistance from Gardener's file: no seed is filtered by region */
    trellis_plugin *pl = load("gardener-region", "{\"region_config\":false," GC_DOC
                                                 "\"candidateDeterminationStrategy\":"
                                                 "\"MinimalDistance\"}}}}");
    trellis_object *t[] = {TARGET(SEED("there", "aws", "us-east-1", ""))};
    int codes[1];
    trellis_status st[1];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16")), t, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    char err[512];
    ck_assert_ptr_null(mock_load(
        m, "gardener-region", "{" GC_DOC "\"strategy\":\"MinimalDistance\"}}}}", err, sizeof err));
    ck_assert_msg(strstr(err, "schedulers.shoot.strategy: unknown key") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "gardener-region",
                                 "{\"strategy\":\"SameRegion\"," GC_DOC
                                 "\"candidateDeterminationStrategy\":\"MinimalDistance\"}}}}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "set it in one place") != NULL, "%s", err);
#undef GC_DOC
}
END_TEST

START_TEST(gardener_networks_reject_overlaps)
{
    trellis_plugin *pl = load("gardener-networks", NULL);
    trellis_object *t[] = {TARGET(SEED("seed", "aws", "eu-west-1", ""))};
    int codes[1];
    trellis_status st[1];
    filter(pl, WORKLOAD(SHOOT("apart", "aws", "eu-west-1", "10.250.0.0/16")), t, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl, WORKLOAD(SHOOT("clash", "aws", "eu-west-1", "10.242.128.0/17")), t, 1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "NetworksOverlap");
}
END_TEST

START_TEST(gardener_capacity_full_seed)
{
    trellis_plugin *pl = load("gardener-capacity", NULL);
    trellis_object *roomy = TARGET(SEED("roomy", "aws", "eu-west-1", ""));
    trellis_object *full = TARGET(SEED("full", "aws", "eu-west-1", ""));
    mock_assign(m, full, WORKLOAD(SHOOT("a", "aws", "eu-west-1", "10.1.0.0/16")));
    mock_assign(m, full, WORKLOAD(SHOOT("b", "aws", "eu-west-1", "10.2.0.0/16")));
    trellis_object *t[] = {roomy, full};
    int codes[2];
    trellis_status st[2];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.3.0.0/16")), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[1].reason, "SeedFull");
}
END_TEST

/* SDK 1.5: one counter, shoots, against the seed's allocatable shoots;
 * a host of 1.4 cannot show it, and the plugin declares none there. */
START_TEST(gardener_capacity_names_shoots)
{
    trellis_plugin *pl = load("gardener-capacity", NULL);
    trellis_object *seed = TARGET(SEED("s1", "aws", "eu-west-1", ""));
    trellis_object *empty = TARGET(SEED("s2", "aws", "eu-west-1", ""));
    mock_assign(m, seed, WORKLOAD(SHOOT("a", "aws", "eu-west-1", "10.1.0.0/16")));
    trellis_unit u;
    ck_assert_str_eq(mock_counter_name(pl, 0, &u), "shoots");
    ck_assert_int_eq(u, TRELLIS_UNIT_COUNT);
    int64_t used, alloc;
    mock_allocated(pl, seed, &used, &alloc);
    ck_assert_int_eq(used, 1);
    ck_assert_int_eq(alloc, 2);
    mock_allocated(pl, empty, &used, &alloc);
    ck_assert_int_eq(used, 0);
    ck_assert_int_eq(alloc, 2);

    mock *old = mock_new(4);
    char err[512];
    trellis_plugin *on_old = mock_load(old, "gardener-capacity", NULL, err, sizeof err);
    ck_assert_msg(on_old != NULL, "%s", err);
    ck_assert(!mock_registered(on_old, "counters"));
    ck_assert_ptr_null(mock_counter_name(on_old, 0, &u));
    mock_free(old);
}
END_TEST

START_TEST(gardener_dns_disabled_seed)
{
    trellis_plugin *pl = load("gardener-dns", NULL);
    trellis_object *t[] = {
        TARGET(SEED("dns", "aws", "eu-west-1", "")),
        TARGET(SEED("nodns", "aws", "eu-west-1",
                    ",\"spec\":{\"taints\":[{\"key\":\"seed.gardener.cloud/disable-dns\"}]}")),
    };
    int codes[2];
    trellis_status st[2];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16")), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "DNSDisabled");
}
END_TEST

START_TEST(gardener_seed_selector_provider_types)
{
    trellis_plugin *pl = load("gardener-seed-selector", NULL);
    obj(-1, CLOUD_PROFILE("aws"));
    trellis_object *t[] = {
        TARGET(SEED("aws1", "aws", "eu-west-1", "")),
        TARGET(SEED("gcp1", "gcp", "eu-west-1", "")),
    };
    int codes[2];
    trellis_status st[2];
    filter(pl, WORKLOAD(SHOOT("s", "aws", "eu-west-1", "10.250.0.0/16")), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "ProviderNotAllowed");
}
END_TEST

#define ZONED_SEED(name, zones, mode)                                                              \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{"             \
    "\"name\":\"" name "\"},\"spec\":{\"provider\":{\"type\":\"aws\",\"region\":\"r\","            \
    "\"zones\":" zones "},\"settings\":{\"zoneSelection\":{\"mode\":\"" mode "\"}}}}"
#define ZONED_SHOOT(name, spec)                                                                    \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Shoot\",\"metadata\":{"            \
    "\"name\":\"" name "\",\"namespace\":\"garden-dev\"},\"spec\":{" spec "}}"

START_TEST(gardener_zones_rules)
{
    trellis_plugin *pl = load("gardener-zones", NULL);
    trellis_object *t[] = {
        TARGET(ZONED_SEED("enforce-a", "[\"a\"]", "Enforce")),
        TARGET(ZONED_SEED("prefer-x", "[\"x\",\"y\"]", "Prefer")),
        TARGET(ZONED_SEED("three", "[\"a\",\"b\",\"c\"]", "Prefer")),
    };
    int codes[3];
    trellis_status st[3];
    int64_t sc[3];
    /* workers in b: the Enforce seed shares no zone; the Prefer seed
     * without b scores 0 */
    trellis_object *w = WORKLOAD(
        ZONED_SHOOT("w", "\"provider\":{\"workers\":[{\"name\":\"p\",\"zones\":[\"b\",\"b\"]}]}"));
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "NoZoneOverlap");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    score(pl, w, t, 3, sc);
    ck_assert_int_eq(sc[0], 100);
    ck_assert_int_eq(sc[1], 0);
    ck_assert_int_eq(sc[2], 100);
    /* failure tolerance zone: three zones or nothing, zone selection off */
    trellis_object *ha = WORKLOAD(ZONED_SHOOT(
        "ha", "\"controlPlane\":{\"highAvailability\":{\"failureTolerance\":{\"type\":"
              "\"zone\"}}},\"provider\":{\"workers\":[{\"name\":\"p\",\"zones\":[\"q\"]}]}"));
    filter(pl, ha, t, 3, codes, st);
    ck_assert_str_eq(st[0].reason, "TooFewZones");
    ck_assert_str_eq(st[1].reason, "TooFewZones");
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    /* explicit control plane zones: all of them, whatever the mode */
    trellis_object *cp = WORKLOAD(ZONED_SHOOT("cp", "\"controlPlane\":{\"zones\":[\"b\",\"a\"]}"));
    filter(pl, cp, t, 3, codes, st);
    ck_assert_str_eq(st[0].reason, "ControlPlaneZonesMissing");
    ck_assert_msg(strstr(st[0].message, "[b a]") != NULL, "%s", st[0].message);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    ck_assert(!mock_equivalent(pl, w, cp));
    ck_assert(mock_equivalent(pl, w,
                              WORKLOAD(ZONED_SHOOT("w2", "\"provider\":{\"workers\":["
                                                         "{\"name\":\"q\",\"zones\":[\"b\"]}]}"))));
    /* an unknown mode is the seed's error */
    trellis_object *bad = TARGET(ZONED_SEED("bad", "[]", "Sometimes"));
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "spec.settings.zoneSelection.mode") != NULL,
                  "%s", mock_prepare_error(bad, pl));
}
END_TEST

START_TEST(gardener_access_restrictions)
{
    trellis_plugin *pl = load("gardener-access", NULL);
    trellis_object *t[] = {
        TARGET(ZONED_SEED("open", "[]", "Prefer")),
        TARGET(
            "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{"
            "\"name\":\"eu\"},\"spec\":{\"accessRestrictions\":[{\"name\":\"eu-access-only\"}]}}"),
    };
    int codes[2];
    trellis_status st[2];
    trellis_object *eu = WORKLOAD(ZONED_SHOOT(
        "eu", "\"accessRestrictions\":[{\"name\":\"eu-access-only\",\"options\":{\"a\":\"b\"}}]"));
    filter(pl, eu, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "AccessRestrictionsUnsupported");
    ck_assert_msg(strstr(st[0].message, "eu-access-only is not offered") != NULL, "%s",
                  st[0].message);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* as Gardener counts: the same name twice is more than one offered */
    trellis_object *twice = WORKLOAD(
        ZONED_SHOOT("twice", "\"accessRestrictions\":[{\"name\":\"eu-access-only\"},{\"name\":"
                             "\"eu-access-only\"}]"));
    filter(pl, twice, t, 2, codes, st);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_msg(strstr(st[1].message, "2 asked for, 1 offered") != NULL, "%s", st[1].message);
    /* none asked for: every seed */
    filter(pl, WORKLOAD(ZONED_SHOOT("none", "\"region\":\"r\"")), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert(!mock_equivalent(pl, eu, twice));
    trellis_object *bad = WORKLOAD(ZONED_SHOOT("bad", "\"accessRestrictions\":[\"eu\"]"));
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "spec.accessRestrictions[0]") != NULL, "%s",
                  mock_prepare_error(bad, pl));
}
END_TEST

START_TEST(gardener_dns_project_object)
{
    trellis_plugin *pl = load("gardener-dns", "{\"mode\":\"current\",\"project\":\"object\"}");
    trellis_object *t[] = {
        TARGET("{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\","
               "\"metadata\":{\"name\":\"s\"},\"spec\":{\"dns\":{\"defaults\":"
               "[{\"domain\":\"example.com\"}]}}}")};
    /* no Project claims garden-dev yet: an error, whatever the domain */
    trellis_object *orphan = WORKLOAD(ZONED_SHOOT("web", "\"region\":\"r\""));
    ck_assert_msg(strstr(mock_prepare_error(orphan, pl), "no Project has spec.namespace "
                                                         "'garden-dev'") != NULL,
                  "%s", mock_prepare_error(orphan, pl));
    obj(-1, "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Project\",\"metadata\":{"
            "\"name\":\"zeta\"},\"spec\":{\"namespace\":\"garden-dev\"}}");
    obj(-1, "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Project\",\"metadata\":{"
            "\"name\":\"alpha\"},\"spec\":{\"namespace\":\"garden-dev\"}}");
    int codes[1];
    trellis_status st[1];
    /* two claim it: the first by name, as Gardener lists them */
    filter(pl, WORKLOAD(ZONED_SHOOT("web", "\"dns\":{\"domain\":\"web.alpha.example.com\"}")), t, 1,
           codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl, WORKLOAD(ZONED_SHOOT("web", "\"dns\":{\"domain\":\"web.dev.example.com\"}")), t, 1,
           codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "DomainNotSupported");
    char err[256];
    ck_assert_ptr_null(mock_load(m, "gardener-dns", "{\"project\":\"label\"}", err, sizeof err));
    ck_assert_msg(strstr(err, "project: expected namespace or object") != NULL, "%s", err);
}
END_TEST

START_TEST(gardener_self_hosted_left_alone)
{
    trellis_plugin *pl = load("gardener-self-hosted", NULL);
    ck_assert(mock_registered(pl, "pre_enqueue"));
    ck_assert(!mock_registered(pl, "filter"));
    ck_assert_int_eq(
        mock_pre_enqueue(pl, WORKLOAD(ZONED_SHOOT("own", "\"provider\":{\"workers\":["
                                                         "{\"name\":\"cp\",\"controlPlane\""
                                                         ":{}}]}"))),
        TRELLIS_SKIP);
    ck_assert_int_eq(
        mock_pre_enqueue(pl, WORKLOAD(ZONED_SHOOT("seeded", "\"provider\":{\"workers\":["
                                                            "{\"name\":\"w\","
                                                            "\"controlPlane\":null}]}"))),
        TRELLIS_SUCCESS);
}
END_TEST

/* ---- the compatibility promise ----------------------------------------- */

START_TEST(older_host_older_functions)
{
    /* label-selector declares SDK 1.0: a 1.0 host runs it without the
     * queueing hints (1.2) and the equivalence hook (1.3) */
    mock *old = mock_new(0);
    char err[512];
    ck_assert_int_eq(mock_table(old)->sdk_minor, 0);
    ck_assert(!TRELLIS_HOST_HAS(mock_table(old), register_events));
    trellis_plugin *pl = mock_load(old, "label-selector", NULL, err, sizeof err);
    ck_assert_msg(pl != NULL, "%s", err);
    ck_assert(mock_registered(pl, "filter"));
    ck_assert(!mock_registered(pl, "events"));
    ck_assert(!mock_registered(pl, "equivalent"));
    /* and it still filters */
    trellis_object *w =
        mock_object(old, POD("db", "\"nodeSelector\":{\"disk\":\"ssd\"}"), 1, err, sizeof err);
    trellis_object *t[] = {
        mock_object(old, NODE("ssd", ",\"labels\":{\"disk\":\"ssd\"}") "}", 0, err, sizeof err),
        mock_object(old, NODE("hdd", ",\"labels\":{\"disk\":\"hdd\"}") "}", 0, err, sizeof err),
    };
    int codes[2];
    ck_assert_msg(mock_filter(old, pl, w, t, 2, codes, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    mock_free(old);

    /* on the newest host the same plugin registers both */
    trellis_plugin *cur = load("label-selector", NULL);
    ck_assert(mock_registered(cur, "events"));
    ck_assert(mock_registered(cur, "equivalent"));
}
END_TEST

START_TEST(newer_plugin_refused_by_older_host)
{
    /* resources-fit needs the columnar hooks of 1.3 */
    mock *old = mock_new(2);
    char err[512];
    ck_assert_ptr_null(mock_load(old, "resources-fit", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "needs SDK 1.3") != NULL, "%s", err);
    mock_free(old);
}
END_TEST

START_TEST(the_clock_is_the_hosts)
{
    /* fx-lease (a fixture) reads the time through clock_now and parses
     * annotations with time_parse: the mock's clock decides */
    trellis_plugin *pl = load("fx-lease", NULL);
    trellis_object *w = WORKLOAD(POD("web", ""));
    trellis_object *t[] = {
        TARGET(NODE("old", ",\"annotations\":{\"fx.trellis.io/lease-until\":"
                           "\"2026-01-01T00:05:00Z\"}") "}"),
        TARGET(NODE("soon", ",\"annotations\":{\"fx.trellis.io/usable-from\":"
                            "\"2026-01-01T01:20:00+01:00\"}") "}"),
        TARGET(NODE("bad", ",\"annotations\":{\"fx.trellis.io/usable-from\":\"noon\"}") "}"),
    };
    int codes[3];
    trellis_status st[3];
    mock_set_now(m, 1767225600000 + 10 * 60000); /* 00:10Z */
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].reason, "LeaseExpired");
    ck_assert_int_eq(codes[1], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[1].reason, "NotYetUsable");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "BadTime");
    ck_assert_int_eq(mock_retry_at(m), 1767225600000 + 20 * 60000); /* 00:20Z */
    mock_set_now(m, 1767225600000); /* 00:00Z: the lease holds, "soon" still waits */
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNSCHEDULABLE);
    mock_set_now(m, 1767225600000 + 20 * 60000); /* 00:20Z: "soon" is usable, no retry */
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(mock_retry_at(m), 0);
    /* a 1.3 host has no clock: the plugin (needs 1.4) is refused */
    mock *old = mock_new(3);
    char err[512];
    ck_assert_ptr_null(mock_load(old, "fx-lease", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "needs SDK 1.4") != NULL, "%s", err);
    mock_free(old);
}
END_TEST

START_TEST(several_targets)
{
    /* fx-want (a fixture): how many targets a workload wants, what it
     * gives up, one per cycle */
    trellis_plugin *pl = load("fx-want", "{\"one_per_cycle\":true}");
    trellis_object *w = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":{"
                                 "\"name\":\"p\",\"annotations\":{\"fx.trellis.io/release\":"
                                 "\"m2,m9\"}},\"spec\":{\"count\":3}}");
    trellis_object *t[1] = {TARGET("{\"apiVersion\":\"v1\",\"kind\":\"M\",\"metadata\":{"
                                   "\"name\":\"m1\"}}")};
    int codes[1];
    trellis_status st[1];
    filter(pl, w, t, 1, codes, st);
    ck_assert_uint_eq(mock_want(m), 1); /* holds none: one now, then another cycle */
    ck_assert(mock_requeue_now(m));
    ck_assert_str_eq(mock_note(m, 0), "wants 1, holds 0");
    const char *held[] = {"m1", "m2"};
    mock_set_held(m, held, 2);
    filter(pl, w, t, 1, codes, st);
    ck_assert_str_eq(mock_released(m, 0), "m2"); /* m9 is not held */
    ck_assert_ptr_null(mock_released(m, 1));
    ck_assert_uint_eq(mock_want(m), 3); /* holds 2: the last one, no further cycle */
    ck_assert(!mock_requeue_now(m));
}
END_TEST

START_TEST(feasible_filter)
{
    /* fx-late (a fixture): filter_feasible (SDK 1.6) rejects by the label
     * late through cycle_reject, or every target left by its own code */
    trellis_plugin *pl = load("fx-late", NULL);
    ck_assert(mock_registered(pl, "filter_feasible"));
    trellis_object *t[3] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
               "\"labels\":{\"late\":\"reject\"}}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\","
               "\"labels\":{\"late\":\"unresolvable\"}}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n3\"}}")};
    int codes[3];
    trellis_status st[3];
    char err[256];
    trellis_object *w = WORKLOAD(POD("p", ""));
    ck_assert_int_eq(mock_filter_feasible(m, pl, w, t, 3, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].reason, "LateRejected");
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    trellis_object *all = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                   "\"name\":\"q\",\"labels\":{\"late-all\":\"reject\"}}}");
    ck_assert_int_eq(mock_filter_feasible(m, pl, all, t, 3, codes, st, err, sizeof err), 0);
    ck_assert_str_eq(st[0].reason, "LateRejected"); /* its own first */
    ck_assert_int_eq(codes[2], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[2].reason, "AllRejected");
    trellis_object *bad = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                   "\"name\":\"r\",\"labels\":{\"late-all\":\"error\"}}}");
    ck_assert_int_eq(mock_filter_feasible(m, pl, bad, t, 3, codes, st, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "told to fail") != NULL, "%s", err);
    /* an SDK 1.5 host has no filter_feasible: the plugin needs 1.6 */
    mock *old = mock_new(5);
    ck_assert_ptr_null(mock_load(old, "fx-late", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "needs SDK 1.6") != NULL, "%s", err);
    mock_free(old);
}
END_TEST

START_TEST(review_candidates)
{
    /* fx-review (a fixture): review_candidates (SDK 1.7) drops the
     * candidate on a target labelled fx-review=drop and keeps only the
     * victim fx-review/only names */
    trellis_plugin *pl = load("fx-review", NULL);
    ck_assert(mock_registered(pl, "review_candidates"));
    trellis_object *t[3] = {TARGET(NODE("n1", ",\"labels\":{\"fx-review\":\"drop\"}") "}"),
                            TARGET(NODE("n2", ",\"labels\":{\"fx-review/only\":\"b\"}") "}"),
                            TARGET(NODE("n3", "") "}")};
    trellis_object *x = WORKLOAD(POD("x", "")), *a = WORKLOAD(POD("a", ""));
    trellis_object *b = WORKLOAD(POD("b", "")), *y = WORKLOAD(POD("y", ""));
    mock_assign(m, t[0], x);
    mock_assign(m, t[1], a);
    mock_assign(m, t[1], b);
    mock_assign(m, t[2], y);
    mock_candidate c[3] = {{0, {x}, 1, 1}, {1, {a, b}, 2, 1}, {2, {y}, 1, 0}};
    size_t n = 3;
    trellis_status st;
    trellis_object *w = WORKLOAD(POD("p", ""));
    ck_assert_int_eq(mock_review_candidates(m, pl, w, t, 3, c, &n, &st), TRELLIS_SUCCESS);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(c[0].target, 1);
    ck_assert_uint_eq(c[0].n_victims, 1);
    ck_assert_ptr_eq(c[0].victims[0], b);
    ck_assert_int_eq(c[0].pdb_violations, 0);
    ck_assert_uint_eq(c[1].target, 2);
    ck_assert_ptr_eq(c[1].victims[0], y);
    /* told to fail: the review's error with its message */
    trellis_object *bad = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                   "\"name\":\"q\",\"labels\":{\"fx-review\":\"error\"}}}");
    n = 2;
    ck_assert_int_eq(mock_review_candidates(m, pl, bad, t, 3, c, &n, &st), TRELLIS_ERROR);
    ck_assert_msg(strstr(st.message, "told to fail") != NULL, "%s", st.message);
    /* an SDK 1.6 host has no review: the fixture needs 1.7 */
    char err[256];
    mock *old = mock_new(6);
    ck_assert_ptr_null(mock_load(old, "fx-review", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "needs SDK 1.7") != NULL, "%s", err);
    mock_free(old);
}
END_TEST

START_TEST(narrowing_pre_filter)
{
    /* fx-narrow (a fixture): its pre_filter narrows the cycle (SDK 1.7
     * cycle_narrow) to the targets of the workload's pool; a target left
     * out is rejected by its plain filter, or in the host's words */
    trellis_plugin *pl = load("fx-narrow", NULL);
    trellis_object *t[4] = {
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
               "\"labels\":{\"pool\":\"a\"}}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\","
               "\"labels\":{\"pool\":\"b\"}}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n3\"}}"),
        TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n4\","
               "\"labels\":{\"pool\":\"a\"}}}")};
    int codes[4];
    trellis_status st[4];
    char err[256];
    trellis_object *w = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                 "\"name\":\"p\",\"labels\":{\"pool\":\"a\"}}}");
    ck_assert_int_eq(mock_filter(m, pl, w, t, 4, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(mock_narrowed(m), 2); /* n1 and n4; the position out of range refused */
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE); /* left out: no eviction brings it in */
    ck_assert_str_eq(st[1].reason, "OtherPool");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "NotInPreFilterResult");
    ck_assert_str_eq(st[2].message, "didn't satisfy plugin(s) [fx-narrow]");
    ck_assert_int_eq(codes[3], TRELLIS_SUCCESS);
    trellis_object *any = WORKLOAD(POD("q", ""));
    ck_assert_int_eq(mock_filter(m, pl, any, t, 4, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(mock_narrowed(m), -1); /* no pool: not narrowed */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(codes[i], TRELLIS_SUCCESS);
    /* an SDK 1.6 host has no cycle_narrow: the plugin needs 1.7 */
    mock *old = mock_new(6);
    ck_assert_ptr_null(mock_load(old, "fx-narrow", NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "needs SDK 1.7") != NULL, "%s", err);
    mock_free(old);
}
END_TEST

/* http-extender (built with libcurl only): its configuration, which
 * hooks it takes, managed resources, and a filter call to a port nobody
 * listens on, ignorable or not. The real exchanges are tests/extender.sh. */
START_TEST(http_extender)
{
    char err[1024];
    if (!mock_load(m, "http-extender", "{\"url_prefix\":\"http://127.0.0.1:1\"}", err,
                   sizeof err) &&
        strstr(err, "no ") && strstr(err, "http-extender"))
        return; /* this build has no libcurl */
    ck_assert_ptr_null(mock_load(m, "http-extender", "{}", err, sizeof err));
    ck_assert_msg(strstr(err, "url_prefix") != NULL, "%s", err);
    ck_assert_ptr_null(
        mock_load(m, "http-extender", "{\"url_prefix\":\"ftp://x\"}", err, sizeof err));
    ck_assert_msg(strstr(err, "expected an http:// or https:// URL") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "http-extender",
                                 "{\"url_prefix\":\"http://x\",\"bind_verb\":\"b?x\"}", err,
                                 sizeof err));
    ck_assert_msg(strstr(err, "bind_verb 'b?x'") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "http-extender",
                                 "{\"url_prefix\":\"http://x\",\"http_timeout_ms\":-1}", err,
                                 sizeof err));
    ck_assert_msg(strstr(err, "http_timeout_ms -1") != NULL, "%s", err);

    trellis_plugin *all =
        load("http-extender", "{\"url_prefix\":\"http://127.0.0.1:1/x/\",\"filter_verb\":"
                              "\"filter\",\"prioritize_verb\":\"prio\",\"bind_verb\":\"bind\","
                              "\"managed_resources\":[\"example.com/gpu\"],"
                              "\"http_timeout_ms\":500}");
    ck_assert(mock_registered(all, "filter_feasible"));
    ck_assert(mock_registered(all, "pre_score"));
    ck_assert(mock_registered(all, "score_span"));
    ck_assert(mock_registered(all, "bind"));
    ck_assert(mock_registered(all, "prepare_workload")); /* interest */
    ck_assert(mock_registered(all, "prepare_target"));   /* Node JSON */
    trellis_plugin *names =
        load("http-extender", "{\"url_prefix\":\"http://127.0.0.1:1\",\"filter_verb\":"
                              "\"filter\",\"node_cache_capable\":true,\"ignorable\":true}");
    ck_assert(!mock_registered(names, "prepare_target")); /* names only */
    ck_assert(!mock_registered(names, "prepare_workload"));
    ck_assert(!mock_registered(names, "pre_score"));
    ck_assert(!mock_registered(names, "bind"));

    trellis_object *t[2] = {TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
                                   "\"name\":\"n1\"}}"),
                            TARGET("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
                                   "\"name\":\"n2\"}}")};
    trellis_object *plain = WORKLOAD(POD("plain", "\"containers\":[{\"name\":\"c\"}]"));
    trellis_object *gpu =
        WORKLOAD(POD("gpu", "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{"
                            "\"example.com/gpu\":1}}}],\"containers\":[{\"name\":\"c\"}]"));
    int codes[2];
    trellis_status st[2];
    trellis_status bst;
    /* not interested: no call at all, every Node stays, the bind is
     * left to the next binder */
    ck_assert_int_eq(mock_filter_feasible(m, all, plain, t, 2, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(mock_bind(m, all, plain, t[0], &bst), TRELLIS_SKIP);
    /* interested (an init container's limit): the call fails, and names
     * the URL (the prefix without its trailing slash, then the verb) */
    ck_assert_int_eq(mock_filter_feasible(m, all, gpu, t, 2, codes, st, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "POST http://127.0.0.1:1/x/filter") != NULL, "%s", err);
    ck_assert_int_eq(mock_bind(m, all, gpu, t[0], &bst), TRELLIS_ERROR);
    ck_assert_msg(strstr(bst.message, "POST http://127.0.0.1:1/x/bind") != NULL, "%s", bst.message);
    /* ignorable: the failure skips the extender, every Node stays */
    ck_assert_int_eq(mock_filter_feasible(m, names, plain, t, 2, codes, st, err, sizeof err), 0);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_uint_ge(mock_logged(m, TRELLIS_LOG_WARN), 1);

    /* the preempt verb (SDK 1.7): a reviewer of preemption's candidates */
    const char *pargs = "{\"url_prefix\":\"http://127.0.0.1:1/x/\",\"preempt_verb\":\"preempt\","
                        "\"managed_resources\":[\"example.com/gpu\"]}";
    trellis_plugin *pre = load("http-extender", pargs);
    ck_assert(mock_registered(pre, "review_candidates"));
    ck_assert(!mock_registered(all, "review_candidates"));
    trellis_object *v1 = WORKLOAD(POD("v1", ""));
    mock_assign(m, t[0], v1);
    mock_candidate cand[1] = {{0, {v1}, 1, 0}};
    size_t nc = 1;
    /* not interested: no call, the candidates as they were */
    ck_assert_int_eq(mock_review_candidates(m, pre, plain, t, 2, cand, &nc, &bst), TRELLIS_SKIP);
    /* interested (prepared after the plugin was loaded): the call
     * fails, and the preemption with it */
    trellis_object *gpu2 =
        WORKLOAD(POD("gpu2", "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
                             "\"example.com/gpu\":1}}}]"));
    ck_assert_int_eq(mock_review_candidates(m, pre, gpu2, t, 2, cand, &nc, &bst), TRELLIS_ERROR);
    ck_assert_msg(strstr(bst.message, "POST http://127.0.0.1:1/x/preempt") != NULL, "%s",
                  bst.message);
    ck_assert_uint_eq(nc, 1);
    /* ignorable: skipped */
    trellis_plugin *prei =
        load("http-extender", "{\"url_prefix\":\"http://127.0.0.1:1\",\"preempt_verb\":"
                              "\"preempt\",\"node_cache_capable\":true,\"ignorable\":true}");
    ck_assert_int_eq(mock_review_candidates(m, prei, plain, t, 2, cand, &nc, &bst), TRELLIS_SKIP);
}
END_TEST

START_TEST(pre_enqueue_and_finalize)
{
    /* fx-writes (a fixture): leaves "ignore" workloads alone; finalizes
     * a workload by removing its finalizer from its target and deleting
     * the ConfigMap it made */
    trellis_plugin *pl = load("fx-writes", NULL);
    ck_assert(mock_registered(pl, "pre_enqueue"));
    ck_assert(mock_registered(pl, "finalize"));
    trellis_object *ignored =
        WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"i\","
                 "\"namespace\":\"a\",\"annotations\":{\"fx.trellis.io/operation\":\"ignore\"}}}");
    trellis_object *plain = WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\","
                                     "\"metadata\":{\"name\":\"p\",\"namespace\":\"a\"}}");
    ck_assert_int_eq(mock_pre_enqueue(pl, ignored), TRELLIS_SKIP);
    ck_assert_int_eq(mock_pre_enqueue(pl, plain), TRELLIS_SUCCESS);
    obj(-1, "{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":{\"name\":\"c1\","
            "\"namespace\":\"a\",\"finalizers\":[\"fx.trellis.io/a.gone\"]}}");
    obj(-1, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"info\","
            "\"namespace\":\"a\"}}");
    trellis_object *gone = WORKLOAD(
        "{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"gone\","
        "\"namespace\":\"a\",\"annotations\":{\"fx.trellis.io/create\":\"info\"}},"
        "\"spec\":{\"nodeName\":\"a/c1\"}}");
    trellis_status st;
    ck_assert_int_eq(mock_finalize(pl, gone, &st), TRELLIS_SUCCESS);
    ck_assert_str_eq(mock_written(m, "a", "c1", "metadata.finalizers"), "-fx.trellis.io/a.gone");
    ck_assert_str_eq(mock_written(m, "a", "info", "(deleted)"), "");
}
END_TEST

/* ---- node-affinity ------------------------------------------------------ */

#define REQ_TERMS(terms)                                                                           \
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"         \
    "\"nodeSelectorTerms\":[" terms "]}}}"
#define EXPR(key, op, values)                                                                      \
    "{\"key\":\"" key "\",\"operator\":\"" op "\",\"values\":[" values "]}"

START_TEST(node_affinity_required_terms)
{
    trellis_plugin *pl = load("node-affinity", NULL);
    trellis_object *t[] = {
        TARGET(NODE("a", ",\"labels\":{\"zone\":\"a\",\"cores\":\"8\"}") "}"),
        TARGET(NODE("b", ",\"labels\":{\"zone\":\"b\",\"cores\":\"4\"}") "}"),
        TARGET(NODE("c", "") "}"),
    };
    int codes[3];
    trellis_status st[3];
    /* nodeSelector AND a term */
    filter(pl,
           WORKLOAD(POD("sel", "\"nodeSelector\":{\"zone\":\"a\"}," REQ_TERMS(
                                   "{\"matchExpressions\":[" EXPR("cores", "Gt", "\"4\"") "]}"))),
           t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[1].reason, "NodeAffinityMismatch");
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    /* terms ORed; Lt; DoesNotExist */
    filter(pl,
           WORKLOAD(POD("or", REQ_TERMS("{\"matchExpressions\":[" EXPR(
                                  "cores", "Lt", "\"8\"") "]},"
                                                          "{\"matchExpressions\":[" EXPR(
                                                              "zone", "DoesNotExist", "") "]}"))),
           t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    /* an empty term matches nothing; matchFields on the name */
    filter(pl, WORKLOAD(POD("empty", REQ_TERMS("{}"))), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    filter(pl,
           WORKLOAD(POD("name", REQ_TERMS("{\"matchFields\":[" EXPR("metadata.name", "NotIn",
                                                                    "\"a\"") "]}"))),
           t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    /* nothing to match: every node fits (pre_filter skips the filter) */
    filter(pl, WORKLOAD(POD("plain", "")), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* a term of the wrong shape is the workload's error */
    char err[512];
    trellis_object *bad = mock_object(
        m, POD("bad", REQ_TERMS("{\"matchExpressions\":{\"key\":\"zone\"}}")), 1, err, sizeof err);
    ck_assert_ptr_nonnull(bad);
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "expected a list, got a map") != NULL, "%s",
                  mock_prepare_error(bad, pl));
}
END_TEST

START_TEST(node_affinity_preferred_and_added)
{
    trellis_plugin *pl =
        load("node-affinity",
             "{\"config\":{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
             "\"nodeSelectorTerms\":[{\"matchExpressions\":[" EXPR(
                 "zone", "NotIn", "\"c\"") "]}]},"
                                           "\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
                                           "\"weight\":10,\"preference\":{"
                                           "\"matchExpressions\":[" EXPR("zone", "In",
                                                                         "\"b\"") "]}}]}}}");
    trellis_object *t[] = {
        TARGET(NODE("a", ",\"labels\":{\"zone\":\"a\",\"disk\":\"ssd\"}") "}"),
        TARGET(NODE("b", ",\"labels\":{\"zone\":\"b\"}") "}"),
        TARGET(NODE("c", ",\"labels\":{\"zone\":\"c\",\"disk\":\"ssd\"}") "}"),
    };
    trellis_object *w = WORKLOAD(
        POD("p", "\"affinity\":{\"nodeAffinity\":{"
                 "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":40,"
                 "\"preference\":{\"matchExpressions\":[" EXPR("disk", "In", "\"ssd\"") "]}}]}}"));
    int codes[3];
    trellis_status st[3];
    int64_t sc[2];
    filter(pl, w, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "EnforcedNodeAffinityMismatch");
    /* raw a 40, b 10: normalized a 100, b 10 * 100 / 40 = 25 */
    score(pl, w, t, 2, sc);
    ck_assert_int_eq(sc[0], 100);
    ck_assert_int_eq(sc[1], 25);
    /* equivalence follows the two fields */
    ck_assert_int_ne(mock_equivalent(pl, WORKLOAD(POD("x", "")), WORKLOAD(POD("y", ""))), 0);
    ck_assert_int_eq(mock_equivalent(pl, w, WORKLOAD(POD("z", ""))), 0);
    /* an added affinity that does not parse stops init */
    char err[512];
    ck_assert_ptr_null(
        mock_load(m, "node-affinity",
                  "{\"config\":{\"addedAffinity\":{"
                  "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,"
                  "\"preference\":{\"matchExpressions\":[" EXPR("k", "Gt", "\"x\"") "]}}]}}}",
                  err, sizeof err));
    ck_assert_msg(strstr(err, "Gt takes exactly one integer") != NULL, "%s", err);
    ck_assert_ptr_null(
        mock_load(m, "node-affinity", "{\"config\":{\"added\":{}}}", err, sizeof err));
}
END_TEST

/* ---- node-unschedulable, node-name, node-ports ------------------------- */

START_TEST(node_unschedulable_cordoned_nodes)
{
    trellis_plugin *pl = load("node-unschedulable", NULL);
    trellis_object *t[] = {
        TARGET(NODE("cordoned", "") ",\"spec\":{\"unschedulable\":true}}"),
        TARGET(NODE("open", "") ",\"spec\":{\"unschedulable\":false}}"),
    };
    int codes[2];
    trellis_status st[2];
    trellis_object *plain = WORKLOAD(POD("plain", ""));
    trellis_object *tol =
        WORKLOAD(POD("ds", "\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\","
                           "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"));
    filter(pl, plain, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "NodeUnschedulable");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    filter(pl, tol, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(mock_equivalent(pl, plain, tol), 0);
    /* uncordoning queues the Pod again */
    ck_assert_int_eq(mock_hint(m, pl, plain, TRELLIS_EV_TARGET_UPDATE, t[0], t[1]), TRELLIS_QUEUE);
}
END_TEST

START_TEST(node_name_only_when_not_the_binding)
{
    trellis_plugin *kube = load("node-name", NULL);
    trellis_plugin *pl = load("node-name", "{\"field\":\"spec.wantedNode\"}");
    trellis_object *t[] = {TARGET(NODE("a", "") "}"), TARGET(NODE("b", "") "}")};
    trellis_object *w = WORKLOAD(POD("w", "\"wantedNode\":\"b\""));
    int codes[2];
    trellis_status st[2];
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[0].reason, "NodeNameMismatch");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* spec.nodeName is the binding field: nothing to check */
    filter(kube, WORKLOAD(POD("k", "\"nodeName\":\"b\"")), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
}
END_TEST

#define HOSTPORT(port, extra)                                                                      \
    "\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":1,\"hostPort\":" port extra     \
    "}]}]"

START_TEST(node_ports_conflicts)
{
    trellis_plugin *pl = load("node-ports", NULL);
    trellis_object *t[] = {TARGET(NODE("a", "") "}"), TARGET(NODE("b", "") "}")};
    mock_assign(m, t[0], WORKLOAD(POD("held", HOSTPORT("80", ",\"hostIP\":\"10.0.0.1\""))));
    mock_assign(m, t[1],
                WORKLOAD(POD("done", HOSTPORT("80", "") "},\"status\":{\"phase\":\"Failed\"")));
    int codes[2];
    trellis_status st[2];
    /* 0.0.0.0 conflicts with 10.0.0.1; a Failed Pod holds nothing */
    filter(pl, WORKLOAD(POD("any", HOSTPORT("80", ""))), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].reason, "NodePortsConflict");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* another address, or another protocol, does not */
    filter(pl, WORKLOAD(POD("other", HOSTPORT("80", ",\"hostIP\":\"10.0.0.2\""))), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    filter(pl, WORKLOAD(POD("udp", HOSTPORT("80", ",\"protocol\":\"UDP\""))), t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    char err[512];
    trellis_object *bad = mock_object(m, POD("bad", HOSTPORT("70000", "")), 1, err, sizeof err);
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "expected a port") != NULL, "%s",
                  mock_prepare_error(bad, pl));
}
END_TEST

/* ---- inter-pod-affinity ------------------------------------------------- */

#define ZNODE(name, zone)                                                                          \
    NODE(name, ",\"labels\":{\"kubernetes.io/hostname\":\"" name                                   \
               "\",\"topology.kubernetes.io/zone\":\"" zone "\"}")                                 \
    "}"
#define LPOD(name, ns, labels, spec)                                                               \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"" ns "\",\"labels\":{" labels "}},\"spec\":{" spec "}}"
#define TERM(sel, key) "{\"labelSelector\":{\"matchLabels\":{" sel "}},\"topologyKey\":\"" key "\"}"
#define REQUIRED(kind, terms)                                                                      \
    "\"affinity\":{\"" kind "\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[" terms "]}}"
#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"

START_TEST(inter_pod_affinity_required)
{
    trellis_plugin *pl = load("inter-pod-affinity", NULL);
    /* a, b in zone z1; c in z2; d has no zone label */
    trellis_object *t[] = {TARGET(ZNODE("a", "z1")), TARGET(ZNODE("b", "z1")),
                           TARGET(ZNODE("c", "z2")),
                           TARGET(NODE("d", ",\"labels\":{\"kubernetes.io/hostname\":\"d\"}") "}")};
    int codes[4];
    trellis_status st[4];
    /* nothing has a term yet: the plugin sits out, verdicts may be reused */
    trellis_object *plain = WORKLOAD(LPOD("plain", "shop", "\"app\":\"web\"", ""));
    ck_assert_int_ne(mock_equivalent(pl, plain, plain), 0);
    mock_assign(m, t[0], WORKLOAD(LPOD("db-0", "shop", "\"app\":\"db\"", "")));

    /* affinity to app=db in the zone: a and b, not c (no db in z2), not d
     * (no zone label); UNRESOLVABLE */
    trellis_object *w = WORKLOAD(LPOD("api", "shop", "\"app\":\"api\"",
                                      REQUIRED("podAffinity", TERM("\"app\":\"db\"", ZONE))));
    ck_assert_int_eq(mock_equivalent(pl, plain, plain), 0);
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].reason, "PodAffinityRulesNotMatch");
    ck_assert_str_eq(st[2].message, "node(s) didn't match pod affinity rules");
    ck_assert_int_eq(codes[3], TRELLIS_UNRESOLVABLE);

    /* another namespace's db does not count; namespaces names it */
    w = WORKLOAD(LPOD("api-2", "web", "", REQUIRED("podAffinity", TERM("\"app\":\"db\"", ZONE))));
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    w = WORKLOAD(LPOD("api-3", "web", "",
                      REQUIRED("podAffinity", "{\"labelSelector\":{\"matchLabels\":{\"app\":"
                                              "\"db\"}},\"namespaces\":[\"shop\"],"
                                              "\"topologyKey\":\"" ZONE "\"}")));
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);

    /* kube's special case: the first of a series with affinity to itself
     * (app=cache matches its own term, no cache Pod anywhere) goes to any
     * Node with the topology key */
    w = WORKLOAD(LPOD("cache-0", "shop", "\"app\":\"cache\"",
                      REQUIRED("podAffinity", TERM("\"app\":\"cache\"", ZONE))));
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[3], TRELLIS_UNRESOLVABLE);
    /* ...but not a Pod that does not match its own term */
    w = WORKLOAD(LPOD("cache-x", "shop", "\"app\":\"other\"",
                      REQUIRED("podAffinity", TERM("\"app\":\"cache\"", ZONE))));
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);

    /* anti-affinity to app=db per zone: a and b rejected (UNSCHEDULABLE) */
    w = WORKLOAD(
        LPOD("batch", "shop", "", REQUIRED("podAntiAffinity", TERM("\"app\":\"db\"", ZONE))));
    filter(pl, w, t, 4, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].reason, "PodAntiAffinityRulesNotMatch");
    ck_assert_str_eq(st[1].message, "node(s) didn't match pod anti-affinity rules");
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[3], TRELLIS_SUCCESS);
}
END_TEST

START_TEST(inter_pod_affinity_existing_anti_affinity)
{
    trellis_plugin *pl = load("inter-pod-affinity", NULL);
    trellis_object *t[] = {TARGET(ZNODE("a", "z1")), TARGET(ZNODE("b", "z1")),
                           TARGET(ZNODE("c", "z2"))};
    int codes[3];
    trellis_status st[3];
    /* an existing Pod on a keeps app=web out of its zone; a Failed one and
     * one being deleted keep nothing out */
    mock_assign(m, t[0],
                WORKLOAD(LPOD("lonely", "shop", "",
                              REQUIRED("podAntiAffinity", TERM("\"app\":\"web\"", ZONE)))));
    mock_assign(m, t[2],
                WORKLOAD(LPOD("done", "shop", "",
                              REQUIRED("podAntiAffinity",
                                       TERM("\"app\":\"web\"", ZONE)) "},"
                                                                      "\"status\":{\"phase\":"
                                                                      "\"Failed\"")));
    trellis_object *web = WORKLOAD(LPOD("web", "shop", "\"app\":\"web\"", ""));
    filter(pl, web, t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].reason, "ExistingPodsAntiAffinityRulesNotMatch");
    ck_assert_str_eq(st[1].message, "node(s) didn't satisfy existing pods anti-affinity rules");
    ck_assert_int_eq(codes[2], TRELLIS_SUCCESS);
    /* the existing Pod's term names its own namespace: another's web fits */
    filter(pl, WORKLOAD(LPOD("web", "other", "\"app\":\"web\"", "")), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* a Pod that matches nothing sits the filter out */
    filter(pl, WORKLOAD(LPOD("db", "shop", "\"app\":\"db\"", "")), t, 3, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
}
END_TEST

START_TEST(inter_pod_affinity_namespace_selector)
{
    trellis_plugin *pl = load("inter-pod-affinity", NULL);
    char err[512];
    ck_assert(mock_object(m,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                          "\"team-a\",\"labels\":{\"team\":\"a\"}}}",
                          -1, err, sizeof err) != NULL);
    ck_assert(mock_object(m,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                          "\"team-b\",\"labels\":{\"team\":\"b\"}}}",
                          -1, err, sizeof err) != NULL);
    trellis_object *t[] = {TARGET(ZNODE("a", "z1")), TARGET(ZNODE("b", "z2"))};
    int codes[2];
    mock_assign(m, t[0], WORKLOAD(LPOD("x", "team-a", "\"app\":\"x\"", "")));
    mock_assign(m, t[1], WORKLOAD(LPOD("x", "team-b", "\"app\":\"x\"", "")));
    /* anti-affinity to app=x in namespaces labelled team=a: only a */
    trellis_object *w = WORKLOAD(
        LPOD("y", "elsewhere", "",
             REQUIRED("podAntiAffinity", "{\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},"
                                         "\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}},"
                                         "\"topologyKey\":\"" HOST "\"}")));
    filter(pl, w, t, 2, codes, NULL);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* an empty namespaceSelector is every namespace */
    w = WORKLOAD(LPOD("z", "elsewhere", "",
                      REQUIRED("podAntiAffinity",
                               "{\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},"
                               "\"namespaceSelector\":{},\"topologyKey\":\"" HOST "\"}")));
    filter(pl, w, t, 2, codes, NULL);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_int_eq(codes[1], TRELLIS_UNSCHEDULABLE);
    /* matchLabelKeys: app In (the Pod's own value) is added to the selector */
    w = WORKLOAD(
        LPOD("k", "team-b", "\"app\":\"k\"",
             REQUIRED("podAntiAffinity", "{\"labelSelector\":{},\"matchLabelKeys\":[\"app\"],"
                                         "\"topologyKey\":\"" HOST "\"}")));
    filter(pl, w, t, 2, codes, NULL);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS); /* x is not app=k */
    /* a selector kube cannot parse: UNRESOLVABLE, "parsing pod" */
    trellis_status st;
    w = WORKLOAD(LPOD("bad", "shop", "",
                      REQUIRED("podAffinity",
                               "{\"labelSelector\":{\"matchExpressions\":[{\"key\":"
                               "\"a\",\"operator\":\"In\"}]},\"topologyKey\":\"" HOST "\"}")));
    filter(pl, w, t, 1, codes, &st);
    ck_assert_int_eq(codes[0], TRELLIS_UNRESOLVABLE);
    ck_assert_msg(strncmp(st.message, "parsing pod: requiredAffinityTerms: ", 36) == 0, "%s",
                  st.message);
}
END_TEST

START_TEST(inter_pod_affinity_scores)
{
    trellis_plugin *pl = load("inter-pod-affinity", NULL);
    trellis_object *t[] = {TARGET(ZNODE("a", "z1")), TARGET(ZNODE("b", "z1")),
                           TARGET(ZNODE("c", "z2")), TARGET(ZNODE("d", "z3"))};
    int64_t sc[4];
    mock_assign(m, t[0], WORKLOAD(LPOD("db", "shop", "\"app\":\"db\"", "")));
    mock_assign(m, t[2], WORKLOAD(LPOD("web", "shop", "\"app\":\"web\"", "")));
    /* prefer db's zone (weight 80), avoid web's zone (weight 20): z1 80,
     * z2 -20, z3 0 -> min -20, max 80: (s + 20) * 100 / 100 */
    trellis_object *w = WORKLOAD(
        LPOD("api", "shop", "",
             "\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
             "\"weight\":80,\"podAffinityTerm\":" TERM(
                 "\"app\":\"db\"",
                 ZONE) "}]},"
                       "\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
                       "\"weight\":20,\"podAffinityTerm\":" TERM("\"app\":\"web\"", ZONE) "}]}}"));
    score(pl, w, t, 4, sc);
    ck_assert_int_eq(sc[0], 100);
    ck_assert_int_eq(sc[1], 100);
    ck_assert_int_eq(sc[2], 0);
    ck_assert_int_eq(sc[3], 20);
    /* an existing Pod's required affinity toward the incoming Pod scores
     * hardPodAffinityWeight in its domain */
    mock_assign(
        m, t[3],
        WORKLOAD(LPOD("fan", "shop", "", REQUIRED("podAffinity", TERM("\"app\":\"star\"", ZONE)))));
    score(pl, WORKLOAD(LPOD("star", "shop", "\"app\":\"star\"", "")), t, 4, sc);
    ck_assert_int_eq(sc[3], 100);
    ck_assert_int_eq(sc[0], 0);
    ck_assert_ptr_nonnull(load("inter-pod-affinity",
                               "{\"config\":{\"hardPodAffinityWeight\":0,"
                               "\"ignorePreferredTermsOfExistingPods\":true}}"));
    char err[512];
    ck_assert_ptr_null(mock_load(m, "inter-pod-affinity",
                                 "{\"config\":{\"hardPodAffinityWeight\":"
                                 "101}}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "hardPodAffinityWeight") != NULL, "%s", err);
}
END_TEST

/* ---- node-resources-fit ------------------------------------------------- */

#define ALLOC(name, alloc) NODE(name, "") ",\"status\":{\"allocatable\":{" alloc "}}}"
#define REQ(name, req)                                                                             \
    POD(name, "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{" req "}}}]")

START_TEST(node_resources_fit_every_resource)
{
    trellis_plugin *pl = load("node-resources-fit", NULL);
    trellis_object *t[] = {
        TARGET(ALLOC("gpu", "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\","
                            "\"nvidia.com/gpu\":\"1\"")),
        TARGET(ALLOC("plain", "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"")),
    };
    int codes[2];
    trellis_status st[2];
    trellis_object *w = WORKLOAD(REQ("w", "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\""));
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[1], TRELLIS_UNRESOLVABLE);
    ck_assert_msg(strstr(st[1].message, "Insufficient nvidia.com/gpu") != NULL, "%s",
                  st[1].message);
    /* the gpu taken: unschedulable, not unresolvable */
    mock_assign(m, t[0], WORKLOAD(REQ("holder", "\"nvidia.com/gpu\":\"1\"")));
    filter(pl, w, t, 2, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    /* a Succeeded Pod holds nothing */
    mock_assign(m, t[1],
                WORKLOAD(POD("done", "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                                     "{\"cpu\":\"4\"}}}]},\"status\":{\"phase\":\"Succeeded\"")));
    filter(pl, WORKLOAD(REQ("cpu", "\"cpu\":\"1\"")), t, 2, codes, st);
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    /* LeastAllocated with non-zero requests: no request counts 100m, 200Mi.
     * gpu node, holder counted the same way: cpu (4000 - 200) * 100 / 4000
     * = 95, memory (8192Mi - 400Mi) * 100 / 8192Mi = 95; plain node (the
     * Succeeded Pod holds nothing): 3900 -> 97, 7992Mi -> 97 */
    int64_t sc[2];
    score(pl, WORKLOAD(POD("be", "\"containers\":[{\"name\":\"c\"}]")), t, 2, sc);
    ck_assert_int_eq(sc[0], 95);
    ck_assert_int_eq(sc[1], 97);
}
END_TEST

START_TEST(node_resources_fit_args)
{
    char err[512];
    trellis_plugin *pl = load("node-resources-fit", "{\"config\":{\"ignoredResources\":["
                                                    "\"example.com/foo\"],\"scoringStrategy\":{"
                                                    "\"type\":\"MostAllocated\"}}}");
    trellis_object *t[] = {TARGET(ALLOC("n", "\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\""))};
    int codes[1];
    trellis_status st[1];
    int64_t sc[1];
    filter(pl, WORKLOAD(REQ("w", "\"cpu\":\"2\",\"memory\":\"4Gi\",\"example.com/foo\":\"1\"")), t,
           1, codes, st);
    ck_assert_int_eq(codes[0], TRELLIS_SUCCESS);
    /* MostAllocated: cpu 2000 * 100 / 4000 = 50, memory 50 */
    score(pl, WORKLOAD(REQ("s", "\"cpu\":\"2\",\"memory\":\"4Gi\"")), t, 1, sc);
    ck_assert_int_eq(sc[0], 50);
    ck_assert_ptr_null(mock_load(m, "node-resources-fit",
                                 "{\"config\":{\"scoringStrategy\":{\"type\":\"Fewest\"}}}", err,
                                 sizeof err));
    ck_assert_msg(strstr(err, "expected LeastAllocated") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "node-resources-fit",
                                 "{\"config\":{\"scoringStrategy\":{\"type\":"
                                 "\"RequestedToCapacityRatio\"}}}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "shape") != NULL, "%s", err);
}
END_TEST

START_TEST(node_resources_balanced_allocation_std)
{
    trellis_plugin *pl = load("node-resources-balanced-allocation", NULL);
    trellis_object *t[] = {
        TARGET(ALLOC("even", "\"cpu\":\"4\",\"memory\":\"4Gi\"")),
        TARGET(ALLOC("skew", "\"cpu\":\"4\",\"memory\":\"16Gi\"")),
    };
    int64_t sc[2];
    /* even: 0.25, 0.25 -> 100; skew: 0.25, 0.0625 -> std 0.09375 -> 90 */
    score(pl, WORKLOAD(REQ("w", "\"cpu\":\"1\",\"memory\":\"1Gi\"")), t, 2, sc);
    ck_assert_int_eq(sc[0], 100);
    ck_assert_int_eq(sc[1], 90);
    /* three resources: the square root of the mean squared deviation */
    trellis_plugin *three = load("node-resources-balanced-allocation",
                                 "{\"config\":{\"resources\":[{\"name\":\"cpu\"},{\"name\":"
                                 "\"memory\"},{\"name\":\"ephemeral-storage\"}]}}");
    trellis_object *n3[] = {
        TARGET(ALLOC("n3", "\"cpu\":\"4\",\"memory\":\"4Gi\",\"ephemeral-storage\":\"4Gi\""))};
    /* fractions 0.5, 0.25, 0: mean 0.25, variance 0.125 / 3, std 0.2041 -> 79 */
    score(three,
          WORKLOAD(REQ("w3", "\"cpu\":\"2\",\"memory\":\"1Gi\",\"ephemeral-storage\":\"0\"")), n3,
          1, sc);
    ck_assert_int_eq(sc[0], 79);
}
END_TEST

/* ---- scheduling-gates -------------------------------------------------- */

START_TEST(scheduling_gates_hold_pods_back)
{
    trellis_plugin *pl = load("scheduling-gates", NULL);
    ck_assert(mock_registered(pl, "pre_enqueue"));
    ck_assert(!mock_registered(pl, "filter"));
    trellis_object *gated =
        WORKLOAD(POD("gated", "\"schedulingGates\":[{\"name\":\"example.com/quota\"}]"));
    trellis_object *empty = WORKLOAD(POD("empty", "\"schedulingGates\":[]"));
    trellis_object *none = WORKLOAD(POD("none", "\"containers\":[]"));
    trellis_object *bad = WORKLOAD(POD("bad", "\"schedulingGates\":[\"quota\"]"));
    trellis_object *bad2 = WORKLOAD(POD("bad2", "\"schedulingGates\":{\"name\":\"quota\"}"));
    ck_assert_int_eq(mock_pre_enqueue(pl, gated), TRELLIS_SKIP);
    ck_assert_int_eq(mock_pre_enqueue(pl, empty), TRELLIS_SUCCESS);
    ck_assert_int_eq(mock_pre_enqueue(pl, none), TRELLIS_SUCCESS);
    ck_assert_str_eq(mock_prepare_error(gated, pl), "");
    /* malformed: not held back, the Pod's error */
    ck_assert_int_eq(mock_pre_enqueue(pl, bad), TRELLIS_SUCCESS);
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "spec.schedulingGates[0]: expected a gate") !=
                      NULL,
                  "%s", mock_prepare_error(bad, pl));
    ck_assert_msg(strstr(mock_prepare_error(bad2, pl), "spec.schedulingGates: expected a list") !=
                      NULL,
                  "%s", mock_prepare_error(bad2, pl));
}
END_TEST

/* ---- image-locality ---------------------------------------------------- */

#define IMAGES(name, images) NODE(name, "") ",\"status\":{\"images\":[" images "]}}"
#define IMG(names, size) "{\"names\":[" names "],\"sizeBytes\":" size "}"
#define CONTAINER(image) "{\"name\":\"c\",\"image\":\"" image "\"}"

START_TEST(image_locality_kube_formula)
{
    trellis_plugin *pl = load("image-locality", NULL);
    /* MiB 1048576: app 600 MiB on a and b (spread 2/4), side 100 MiB on b
     * (1/4), big 4000 MiB on c (1/4) */
    trellis_object *t[] = {
        TARGET(IMAGES("a", IMG("\"example.com/app:1.0\"", "629145600"))),
        TARGET(IMAGES("b", IMG("\"example.com/app:1.0\"", "629145600") "," IMG(
                               "\"side:latest\",\"side@sha256:00\"", "104857600"))),
        TARGET(IMAGES("c", IMG("\"example.com/big:2\"", "4194304000"))),
        TARGET(NODE("d", "") "}"),
    };
    int64_t sc[5];
    ck_assert(mock_registered(pl, "score_span"));
    ck_assert(mock_registered(pl, "normalize"));
    /* one container: a, b 300 MiB -> 100 * 277 / 977 = 28 */
    score(pl, WORKLOAD(POD("one", "\"containers\":[" CONTAINER("example.com/app:1.0") "]")), t, 4,
          sc);
    ck_assert_int_eq(sc[0], 28);
    ck_assert_int_eq(sc[1], 28);
    ck_assert_int_eq(sc[2], 0);
    ck_assert_int_eq(sc[3], 0);
    /* "side" gets ":latest"; an init container counts, and so does every
     * container using an image: app twice (2 * 300) + side 25 on b = 625
     * MiB of 3 containers (max 3000): 100 * 602 / 2977 = 20; a 600 MiB:
     * 100 * 577 / 2977 = 19 */
    score(
        pl,
        WORKLOAD(POD("two", "\"initContainers\":[" CONTAINER("side") "],\"containers\":[" CONTAINER(
                                "example.com/app:1.0") "," CONTAINER("example.com/app:1.0") "]")),
        t, 4, sc);
    ck_assert_int_eq(sc[0], 19);
    ck_assert_int_eq(sc[1], 20);
    /* big: 4000 MiB * 1/4 = 1000 MiB, the most one container scores: 100 */
    score(pl, WORKLOAD(POD("big", "\"containers\":[" CONTAINER("example.com/big:2") "]")), t, 4,
          sc);
    ck_assert_int_eq(sc[2], 100);
    ck_assert_int_eq(sc[0], 0);
    /* a new Node holding app: the table is built again, spread 3/5:
     * 360 MiB -> 100 * 337 / 977 = 34 */
    trellis_object *t5[] = {t[0], t[1], t[2], t[3],
                            TARGET(IMAGES("e", IMG("\"example.com/app:1.0\"", "629145600")))};
    score(pl, WORKLOAD(POD("three", "\"containers\":[" CONTAINER("example.com/app:1.0") "]")), t5,
          5, sc);
    ck_assert_int_eq(sc[0], 34);
    ck_assert_int_eq(sc[4], 34);
    ck_assert_int_eq(sc[3], 0);
}
END_TEST

START_TEST(image_locality_many_images)
{
    trellis_plugin *pl = load("image-locality", NULL);
    char node[8192] = "", pod[8192] = "", buf[128];
    /* 63 distinct images: more than the bit set holds, scored directly */
    for (int i = 0; i < 63; i++) {
        snprintf(buf, sizeof buf, "%s{\"names\":[\"i-%d:1\"],\"sizeBytes\":1048576000}",
                 i ? "," : "", i);
        strcat(node, buf);
        snprintf(buf, sizeof buf, "%s{\"name\":\"c%d\",\"image\":\"i-%d:1\"}", i ? "," : "", i, i);
        strcat(pod, buf);
    }
    char nj[9000], pj[9000];
    snprintf(nj, sizeof nj, IMAGES("a", "%s"), node);
    snprintf(pj, sizeof pj, POD("many", "\"containers\":[%s]"), pod);
    trellis_object *t[] = {TARGET(nj), TARGET(NODE("b", "") "}")};
    trellis_object *w = WORKLOAD(pj);
    int64_t sc[2];
    /* a: 63 * 1000 MiB * 1/2 = 31500 MiB of max 63000:
     * 100 * (31500 - 23) / (63000 - 23) = 49; b: 0 */
    score(pl, w, t, 2, sc);
    ck_assert_int_eq(sc[0], 49);
    ck_assert_int_eq(sc[1], 0);
    ck_assert(!mock_equivalent(pl, w, w));
}
END_TEST

START_TEST(image_locality_equivalence_and_errors)
{
    trellis_plugin *pl = load("image-locality", NULL);
    trellis_object *a = WORKLOAD(POD("a", "\"containers\":[" CONTAINER("nginx") "]"));
    trellis_object *b = WORKLOAD(POD("b", "\"containers\":[" CONTAINER("nginx:latest") "]"));
    trellis_object *c =
        WORKLOAD(POD("c", "\"containers\":[" CONTAINER("nginx") "," CONTAINER("nginx:latest") "]"));
    ck_assert(mock_equivalent(pl, a, b)); /* the same image once normalized */
    ck_assert(!mock_equivalent(pl, a, c));
    /* no images at all: equivalent (no arrays to compare) */
    ck_assert(
        mock_equivalent(pl, WORKLOAD(POD("n1", "\"containers\":[]")), WORKLOAD(POD("n2", ""))));
    trellis_object *bad = TARGET(IMAGES("bad", IMG("\"x:1\"", "\"big\"")));
    ck_assert_msg(strstr(mock_prepare_error(bad, pl), "status.images[0].sizeBytes") != NULL, "%s",
                  mock_prepare_error(bad, pl));
    trellis_object *bad2 = TARGET(IMAGES("bad2", "\"x:1\""));
    ck_assert_msg(strstr(mock_prepare_error(bad2, pl), "status.images[0]: expected a map") != NULL,
                  "%s", mock_prepare_error(bad2, pl));
    trellis_object *badp =
        WORKLOAD(POD("badp", "\"containers\":[{\"name\":\"c\",\"image\":[\"x\"]}]"));
    ck_assert_msg(strstr(mock_prepare_error(badp, pl), "spec.containers[0].image") != NULL, "%s",
                  mock_prepare_error(badp, pl));
}
END_TEST

/* ---- pod-topology-spread ------------------------------------------------ */

#define ZONE_NODE(name, zone)                                                                      \
    NODE(name, ",\"labels\":{\"kubernetes.io/hostname\":\"" name                                   \
               "\",\"topology.kubernetes.io/zone\":\"" zone "\"}")                                 \
    "}"
#define LABELLED_POD(name, labels, spec)                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"default\",\"labels\":{" labels "}},\"spec\":{" spec "}}"
#define SPREAD(extra)                                                                              \
    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"                               \
    "\"topology.kubernetes.io/zone\"," extra "}]"

START_TEST(pod_topology_spread_counts_and_skew)
{
    trellis_plugin *pl = load("pod-topology-spread", NULL);
    trellis_object *t[] = {TARGET(ZONE_NODE("a", "za")), TARGET(ZONE_NODE("b", "zb")),
                           TARGET(NODE("c", "") "}")};
    int codes[3];
    trellis_status st[3];
    int64_t sc[3];

    /* two matching Pods in za, one being deleted and one finished do not count */
    mock_assign(m, t[0], WORKLOAD(LABELLED_POD("w1", "\"app\":\"web\"", "")));
    mock_assign(m, t[0], WORKLOAD(LABELLED_POD("w2", "\"app\":\"web\"", "")));
    mock_assign(m, t[1],
                WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                         "\"name\":\"old\",\"namespace\":\"default\",\"labels\":{"
                         "\"app\":\"web\"},\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                         "\"spec\":{}}"));
    mock_assign(m, t[1],
                WORKLOAD("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                         "\"name\":\"done\",\"namespace\":\"default\",\"labels\":{"
                         "\"app\":\"web\"}},\"spec\":{},\"status\":{\"phase\":\"Failed\"}}"));
    trellis_object *w = WORKLOAD(LABELLED_POD(
        "p", "\"app\":\"web\"",
        SPREAD("\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{"
               "\"app\":\"web\"}}")));
    filter(pl, w, t, 3, codes, st);
    /* za 2 + 1 - 0 > 1; zb 0 + 1 - 0 fits; c has no zone */
    ck_assert_int_eq(codes[0], TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st[0].message, "node(s) didn't match pod topology spread constraints");
    ck_assert_int_eq(codes[1], TRELLIS_SUCCESS);
    ck_assert_int_eq(codes[2], TRELLIS_UNRESOLVABLE);
    ck_assert_str_eq(st[2].message,
                     "node(s) didn't match pod topology spread constraints (missing required "
                     "label)");
    /* ScheduleAnyway: raw a 2 * ln(2 + 2) = 2.77 -> 3, b 0; c lacks the key: 0 */
    trellis_object *soft = WORKLOAD(LABELLED_POD(
        "s", "\"app\":\"web\"",
        SPREAD("\"whenUnsatisfiable\":\"ScheduleAnyway\",\"labelSelector\":{\"matchLabels\":{"
               "\"app\":\"web\"}}")));
    score(pl, soft, t, 3, sc);
    ck_assert_int_eq(sc[0], 0);   /* 100 * (3 + 0 - 3) / 3 */
    ck_assert_int_eq(sc[1], 100); /* 100 * (3 + 0 - 0) / 3 */
    ck_assert_int_eq(sc[2], 0);
    /* only Pods without constraints are equivalent */
    ck_assert_int_ne(mock_equivalent(pl, WORKLOAD(POD("x", "")), WORKLOAD(POD("y", ""))), 0);
    ck_assert_int_eq(mock_equivalent(pl, w, w), 0);
}
END_TEST

START_TEST(pod_topology_spread_parsing)
{
    trellis_plugin *pl = load("pod-topology-spread", NULL);
    static const struct {
        const char *spec, *error;
    } bad[] = {
        {SPREAD("\"whenUnsatisfiable\":\"Never\""), "expected DoNotSchedule or ScheduleAnyway"},
        {"\"topologySpreadConstraints\":[{\"maxSkew\":\"x\",\"topologyKey\":\"k\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\"}]",
         "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer"},
        {"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\"}]",
         "topologyKey: required"},
        {SPREAD("\"whenUnsatisfiable\":\"ScheduleAnyway\",\"minDomains\":2"),
         "minDomains: only with whenUnsatisfiable DoNotSchedule"},
        {SPREAD("\"whenUnsatisfiable\":\"DoNotSchedule\",\"minDomains\":0"),
         "minDomains: expected a positive integer"},
        {SPREAD("\"whenUnsatisfiable\":\"DoNotSchedule\",\"nodeTaintsPolicy\":\"Always\""),
         "nodeTaintsPolicy: expected Honor or Ignore"},
        {SPREAD("\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{"
                "\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Near\"}]}"),
         "labelSelector.matchExpressions[0].operator"},
        {SPREAD("\"whenUnsatisfiable\":\"DoNotSchedule\",\"matchLabelKeys\":[1]"),
         "matchLabelKeys[0]: expected a label key"},
        {"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"k\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\"},{\"maxSkew\":2,\"topologyKey\":\"k\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\"}]",
         "[1]: a second constraint with topologyKey 'k'"},
        {"\"topologySpreadConstraints\":{}", "expected a list"},
    };
    char json[1024], err[512];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(json, sizeof json,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bad%zu\","
                 "\"namespace\":\"default\"},\"spec\":{%s}}",
                 i, bad[i].spec);
        trellis_object *o = WORKLOAD(json);
        ck_assert_msg(strstr(mock_prepare_error(o, pl), bad[i].error) != NULL, "%zu: %s", i,
                      mock_prepare_error(o, pl));
    }
    /* PodTopologySpreadArgs */
    ck_assert_ptr_nonnull(load("pod-topology-spread",
                               "{\"config\":{\"defaultingType\":\"List\",\"defaultConstraints\":[{"
                               "\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
                               "\"ScheduleAnyway\"}]}}"));
    ck_assert_ptr_null(mock_load(m, "pod-topology-spread",
                                 "{\"config\":{\"defaultConstraints\":[{\"maxSkew\":1,"
                                 "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
                                 "\"ScheduleAnyway\"}]}}",
                                 err, sizeof err));
    ck_assert_msg(strstr(err, "must be empty when defaultingType is System") != NULL, "%s", err);
    ck_assert_ptr_null(
        mock_load(m, "pod-topology-spread",
                  "{\"config\":{\"defaultingType\":\"List\",\"defaultConstraints\":[{"
                  "\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
                  "\"ScheduleAnyway\",\"labelSelector\":{}}]}}",
                  err, sizeof err));
    ck_assert_msg(strstr(err, "must not define a selector") != NULL, "%s", err);
    ck_assert_ptr_null(mock_load(m, "pod-topology-spread",
                                 "{\"config\":{\"defaultingType\":\"Sometimes\"}}", err,
                                 sizeof err));
    ck_assert_msg(strstr(err, "expected System or List") != NULL, "%s", err);
    ck_assert_ptr_null(
        mock_load(m, "pod-topology-spread", "{\"config\":{\"defaults\":[]}}", err, sizeof err));
    ck_assert_msg(strstr(err, "only defaultingType and defaultConstraints") != NULL, "%s", err);
}
END_TEST

START_TEST(pod_topology_spread_system_defaults)
{
    trellis_plugin *pl = load("pod-topology-spread", NULL);
    trellis_object *t[] = {TARGET(ZONE_NODE("a", "za")), TARGET(ZONE_NODE("b", "zb"))};
    int64_t sc[2];

    obj(-1, "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
            "\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
            "\"web\"}}}}");
    mock_assign(m, t[0], WORKLOAD(LABELLED_POD("w1", "\"app\":\"web\"", "")));
    trellis_object *owned = WORKLOAD(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"default\",\"labels\":{\"app\":\"web\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},\"spec\":{}}");
    /* hostname (maxSkew 3, w ln 4) and zone (maxSkew 5, w ln 4):
     * a 1.386 + 2 + 1.386 + 4 = 8.77 -> 9, b 0 + 2 + 0 + 4 = 6;
     * a 100 * (9 + 6 - 9) / 9 = 66, b 100 * 9 / 9 = 100 */
    score(pl, owned, t, 2, sc);
    ck_assert_int_eq(sc[0], 66);
    ck_assert_int_eq(sc[1], 100);
    /* no owner and no Service: no defaults, the plugin sits the Pod out */
    trellis_object *alone = WORKLOAD(LABELLED_POD("q", "\"app\":\"web\"", ""));
    ck_assert_int_ne(mock_equivalent(pl, alone, WORKLOAD(POD("y", ""))), 0);
    ck_assert_int_eq(mock_equivalent(pl, owned, alone), 0);
}
END_TEST

static Suite *suite(const char *name, const TTest *const *tests)
{
    Suite *s = suite_create(name);
    TCase *tc = tcase_create("plugin");
    tcase_add_checked_fixture(tc, setup, teardown);
    for (size_t i = 0; tests[i]; i++)
        _tcase_add_test(tc, tests[i], 0, 0, 0, 1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const TTest *binder[] = {binder_writes_the_binding_field, binder_field_argument, NULL};
    const TTest *prio[] = {priority_sort_orders_by_priority,
                           priority_sort_resolves_priority_classes, NULL};
    const TTest *labels[] = {label_selector_matches_node_labels,
                             label_selector_equivalence_and_hint, NULL};
    const TTest *taints[] = {taints_filter_score_and_evict, NULL};
    const TTest *naff[] = {node_affinity_required_terms, node_affinity_preferred_and_added, NULL};
    const TTest *nuns[] = {node_unschedulable_cordoned_nodes, NULL};
    const TTest *nname[] = {node_name_only_when_not_the_binding, NULL};
    const TTest *nports[] = {node_ports_conflicts, NULL};
    const TTest *ipa[] = {inter_pod_affinity_required, inter_pod_affinity_existing_anti_affinity,
                          inter_pod_affinity_namespace_selector, inter_pod_affinity_scores, NULL};
    const TTest *nfit[] = {node_resources_fit_every_resource, node_resources_fit_args, NULL};
    const TTest *nbal[] = {node_resources_balanced_allocation_std, NULL};
    const TTest *gates[] = {scheduling_gates_hold_pods_back, NULL};
    const TTest *imgloc[] = {image_locality_kube_formula, image_locality_equivalence_and_errors,
                             image_locality_many_images, NULL};
    const TTest *pts[] = {pod_topology_spread_counts_and_skew, pod_topology_spread_parsing,
                          pod_topology_spread_system_defaults, NULL};
    const TTest *fit[] = {resources_fit_counts_assigned_workloads, resources_fit_names_its_counters,
                          NULL};
    const TTest *alloc[] = {least_allocated_prefers_the_emptier_target, NULL};
    const TTest *util[] = {least_utilized_prefers_fewer_workloads, NULL};
    const TTest *preempt[] = {preemption_registers_a_post_filter, preemption_candidates_wanted,
                              preemption_pick_one_in_kube_order, preemption_importance_and_budgets,
                              NULL};
    const TTest *usable[] = {gardener_usable_needs_a_ready_visible_seed,
                             gardener_usable_emergency_stop, NULL};
    const TTest *region[] = {gardener_region_same_region, gardener_region_config_file, NULL};
    const TTest *nets[] = {gardener_networks_reject_overlaps, NULL};
    const TTest *cap[] = {gardener_capacity_full_seed, gardener_capacity_names_shoots, NULL};
    const TTest *dns[] = {gardener_dns_disabled_seed, gardener_dns_project_object, NULL};
    const TTest *sel[] = {gardener_seed_selector_provider_types, NULL};
    const TTest *fleet_elig[] = {fleet_eligibility_follows_the_clock, NULL};
    const TTest *fleet_pol[] = {fleet_policy_from_the_latest_snapshot, NULL};
    const TTest *fleet_taints[] = {fleet_taints_match_as_kubefleet, NULL};
    const TTest *omcp[] = {openmcp_narrowing_follows_the_clusters,
                           openmcp_narrowing_takes_in_created_clusters,
                           openmcp_balanced_counts_finalizers_and_assumed, NULL};
    const TTest *fleet_aff[] = {fleet_affinity_properties,
                                fleet_affinity_scores_follow_the_clusters, NULL};
    const TTest *fleet_more[] = {
        fleet_topology_spread_counts_domains, fleet_topology_spread_applies_do_not_schedule_first,
        fleet_same_placement_scores_older_bindings, fleet_binder_writes_the_cluster_decision, NULL};
    const TTest *zones[] = {gardener_zones_rules, NULL};
    const TTest *access[] = {gardener_access_restrictions, NULL};
    const TTest *selfh[] = {gardener_self_hosted_left_alone, NULL};
    const TTest *compat[] = {older_host_older_functions,
                             newer_plugin_refused_by_older_host,
                             the_clock_is_the_hosts,
                             pre_enqueue_and_finalize,
                             several_targets,
                             feasible_filter,
                             review_candidates,
                             narrowing_pre_filter,
                             http_extender,
                             NULL};
    SRunner *sr = srunner_create(suite("default-binder", binder));
    srunner_add_suite(sr, suite("priority-sort", prio));
    srunner_add_suite(sr, suite("label-selector", labels));
    srunner_add_suite(sr, suite("taint-toleration", taints));
    srunner_add_suite(sr, suite("node-affinity", naff));
    srunner_add_suite(sr, suite("node-unschedulable", nuns));
    srunner_add_suite(sr, suite("node-name", nname));
    srunner_add_suite(sr, suite("node-ports", nports));
    srunner_add_suite(sr, suite("inter-pod-affinity", ipa));
    srunner_add_suite(sr, suite("node-resources-fit", nfit));
    srunner_add_suite(sr, suite("node-resources-balanced-allocation", nbal));
    srunner_add_suite(sr, suite("image-locality", imgloc));
    srunner_add_suite(sr, suite("scheduling-gates", gates));
    srunner_add_suite(sr, suite("pod-topology-spread", pts));
    srunner_add_suite(sr, suite("resources-fit", fit));
    srunner_add_suite(sr, suite("least-allocated", alloc));
    srunner_add_suite(sr, suite("least-utilized", util));
    srunner_add_suite(sr, suite("preemption", preempt));
    srunner_add_suite(sr, suite("gardener-usable", usable));
    srunner_add_suite(sr, suite("gardener-region", region));
    srunner_add_suite(sr, suite("gardener-networks", nets));
    srunner_add_suite(sr, suite("gardener-capacity", cap));
    srunner_add_suite(sr, suite("gardener-dns", dns));
    srunner_add_suite(sr, suite("gardener-seed-selector", sel));
    srunner_add_suite(sr, suite("fleet-eligibility", fleet_elig));
    srunner_add_suite(sr, suite("fleet-policy", fleet_pol));
    srunner_add_suite(sr, suite("fleet-taints", fleet_taints));
    srunner_add_suite(sr, suite("fleet-affinity", fleet_aff));
    srunner_add_suite(sr, suite("openmcp-clusters", omcp));
    srunner_add_suite(sr, suite("fleet-spread-same-binder", fleet_more));
    srunner_add_suite(sr, suite("gardener-zones", zones));
    srunner_add_suite(sr, suite("gardener-access", access));
    srunner_add_suite(sr, suite("gardener-self-hosted", selfh));
    srunner_add_suite(sr, suite("compatibility", compat));
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
