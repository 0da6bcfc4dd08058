/*
 * test_scheduler.c - the scheduler end to end in one process, with the
 * in-tree plugins: decisions independent of the number of workers over
 * several filter blocks, tie-breaking, write-back into the source files,
 * dry runs, the permit wait path and profile selection by scheduler name.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "scheduler.h"
#include "store_file.h"
#include "testutil.h"
#include "util.h"

static char *dirs[8];
static size_t n_dirs;
static char path_copy[4096];
static char tmp[64];

static void setup(void)
{
    n_dirs = tu_plugin_dirs(dirs, path_copy, sizeof path_copy);
    tu_mkdtemp(tmp, "sched");
}

static void teardown(void)
{
    tu_rmtree(tmp);
}

static void write_text(const char *rel, const char *text)
{
    tu_write(tmp, rel, text);
}

static char *read_text(const char *rel)
{
    return tu_read(tmp, rel);
}

#define PROFILE(name, extra, plugins)                                                              \
    "{ name = \"" name "\"; " extra                                                                \
    " workload = { kind = \"Pod\"; scheduler_name_field = \"spec.schedulerName\"; };"              \
    " target = { kind = \"Node\"; }; binding = { field = \"spec.nodeName\"; };"                    \
    " plugins = ( " plugins " ); }"

typedef struct run {
    cfg c;
    sched *s;
    store *st;
} run;

static void start(run *r, const char *cfgtext, int par, int dry)
{
    char err[1024];
    write_text("t.cfg", cfgtext);
    char p[256];
    snprintf(p, sizeof p, "%s/t.cfg", tmp);
    ck_assert_msg(config_load(p, &r->c, err, sizeof err) == 0, "%s", err);
    r->s = sched_open(&r->c, dirs, n_dirs, par, err, sizeof err);
    ck_assert_msg(r->s != NULL, "%s", err);
    snprintf(p, sizeof p, "%s/state", tmp);
    r->st = store_file_open(p, dry, err, sizeof err);
    ck_assert_msg(r->st != NULL, "%s", err);
    ck_assert_msg(sched_load(r->s, r->st, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(sched_run_once(r->s, err, sizeof err) == 0, "%s", err);
}

static void stop(run *r)
{
    sched_close(r->s);
    r->st->ops->destroy(r->st);
    config_free(&r->c);
}

static decision *find(run *r, const char *name)
{
    const decisions *ds = sched_decisions(r->s);
    for (size_t i = 0; i < decisions_count(ds); i++)
        if (strcmp(decisions_at(ds, i)->w->name, name) == 0)
            return decisions_at(ds, i);
    ck_abort_msg("no decision for %s", name);
    return NULL;
}

/* 700 nodes (three filter blocks) and 300 pods, one JSON file each kind */
static void make_fleet(void)
{
    char p[256];
    snprintf(p, sizeof p, "%s/state", tmp);
    mkdir(p, 0755);
    strbuf b;
    sb_init(&b);
    for (int i = 0; i < 700; i++)
        sb_printf(&b,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                  "\"node-%03d\",\"labels\":{\"zone\":\"z%d\"}},\"status\":{\"allocatable\":"
                  "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}\n",
                  i, i % 3);
    write_text("state/nodes.json", b.s);
    sb_free(&b);
    sb_init(&b);
    for (int i = 0; i < 300; i++)
        sb_printf(&b,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                  "\"pod-%03d\",\"namespace\":\"default\"},\"spec\":{%s\"containers\":[{"
                  "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%dm\"}}}]}}\n",
                  i, i % 5 == 0 ? "\"nodeSelector\":{\"zone\":\"z1\"}," : "", 100 + (i % 7) * 150);
    write_text("state/pods.json", b.s);
    sb_free(&b);
}

#define FLEET_PLUGINS                                                                              \
    "{ name = \"label-selector\"; }, { name = \"resources-fit\"; },"                               \
    " { name = \"least-allocated\"; weight = 2; }, { name = \"least-utilized\"; },"                \
    " { name = \"default-binder\"; }"

START_TEST(same_decisions_for_any_worker_count)
{
    const char *conf =
        "profiles = ( " PROFILE("default-scheduler", "default = true;", FLEET_PLUGINS) " );\n";
    char *first[300];
    for (int par = 1; par <= 4; par += 3) {
        make_fleet();
        run r;
        start(&r, conf, par, 1);
        ck_assert_uint_eq(decisions_count(sched_decisions(r.s)), 300);
        for (size_t i = 0; i < 300; i++) {
            decision *d = decisions_at(sched_decisions(r.s), i);
            ck_assert_int_eq(d->result, DEC_SCHEDULED);
            ck_assert_uint_eq(d->n_targets, 1);
            if (par == 1)
                first[i] = xstrdup(d->targets[0]);
            else
                ck_assert_msg(strcmp(first[i], d->targets[0]) == 0,
                              "%s: %s with 1 worker, %s with 4", d->w->name, first[i],
                              d->targets[0]);
        }
        stop(&r);
    }
    for (int i = 0; i < 300; i++)
        free(first[i]);
}
END_TEST

START_TEST(sampled_filtering_is_deterministic)
{
    /* 700 nodes, 10%: 100 feasible nodes are enough for each pod (at least
     * 100 are always looked for), the window rotates, and the workers do
     * not change which nodes are kept */
    const char *conf = "profiles = ( " PROFILE("default-scheduler",
                                               "default = true; "
                                               "percentage_of_targets_to_score = 10;",
                                               FLEET_PLUGINS) " );\n";
    char *first[300];
    int spread = 0;
    for (int par = 1; par <= 4; par += 3) {
        make_fleet();
        run r;
        start(&r, conf, par, 1);
        ck_assert_uint_eq(decisions_count(sched_decisions(r.s)), 300);
        for (size_t i = 0; i < 300; i++) {
            decision *d = decisions_at(sched_decisions(r.s), i);
            ck_assert_int_eq(d->result, DEC_SCHEDULED);
            if (par == 1) {
                first[i] = xstrdup(d->targets[0]);
                spread |= strcmp(d->targets[0], "node-200") > 0;
            } else {
                ck_assert_msg(strcmp(first[i], d->targets[0]) == 0,
                              "%s: %s with 1 worker, %s with 4", d->w->name, first[i],
                              d->targets[0]);
            }
        }
        stop(&r);
    }
    /* the rotating start reaches nodes far past the first window */
    ck_assert(spread);
    for (int i = 0; i < 300; i++)
        free(first[i]);
}
END_TEST

/* Ten Pods of a second profile, each asking for a whole node and held
 * back by a nodeSelector no node matches, nominated (status.
 * nominatedNodeName) to nodes across the filter blocks. */
#define N_NOMINATED 10
static const char *nominated_node(int i, char *buf, size_t len)
{
    snprintf(buf, len, "node-%03d", i * 70 + 3);
    return buf;
}

static void add_nominated(void)
{
    strbuf b;
    sb_init(&b);
    for (int i = 0; i < N_NOMINATED; i++) {
        char n[32];
        sb_printf(&b,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"held-%d\","
                  "\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"high\","
                  "\"priority\":100,\"nodeSelector\":{\"zone\":\"none\"},\"containers\":[{"
                  "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]},"
                  "\"status\":{\"nominatedNodeName\":\"%s\"}}\n",
                  i, nominated_node(i, n, sizeof n));
    }
    write_text("state/nominated.json", b.s);
    sb_free(&b);
}

#define NOM_PROFILE(name, extra, nominated, plugins)                                               \
    "{ name = \"" name "\"; " extra                                                                \
    " workload = { kind = \"Pod\"; scheduler_name_field = \"spec.schedulerName\"; " nominated      \
    " }; target = { kind = \"Node\"; }; binding = { field = \"spec.nodeName\"; };"                 \
    " plugins = ( " plugins " ); }"
#define NOM_FIELD "nominated_field = \"status.nominatedNodeName\";"
#define HIGH_PROFILE                                                                               \
    NOM_PROFILE("high", "", NOM_FIELD,                                                             \
                "{ name = \"priority-sort\"; }, { name = \"label-selector\"; },"                   \
                " { name = \"default-binder\"; }")

/* How many of the fleet's pods r placed on a nominated node; their
 * targets into got[] (owned by the caller) when it is not NULL. */
static int on_nominated(run *r, char **got)
{
    int hits = 0;
    for (size_t i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "pod-%03zu", i);
        decision *d = find(r, name);
        ck_assert_int_eq(d->result, DEC_SCHEDULED);
        ck_assert_uint_eq(d->n_targets, 1);
        for (int k = 0; k < N_NOMINATED; k++) {
            char n[32];
            hits += strcmp(d->targets[0], nominated_node(k, n, sizeof n)) == 0;
        }
        if (got)
            got[i] = xstrdup(d->targets[0]);
    }
    for (int k = 0; k < N_NOMINATED; k++) {
        char name[32];
        snprintf(name, sizeof name, "held-%d", k);
        ck_assert_int_eq(find(r, name)->result, DEC_UNSCHEDULABLE);
    }
    return hits;
}

START_TEST(nominations_hold_their_nodes)
{
    const char *variants[] = {
        /* every node, the equivalence cache on (it serves no cycle that
         * meets a nomination) */
        "",
        /* every node, the cache off: the same decisions */
        "equivalence_cache = false;",
        /* kube's adaptive share: the nominated pass is inside the sampled
         * window, so the feasible nodes counted are the right ones */
        "percentage_of_targets_to_score = 10;",
    };
    char *first[300] = {0};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        for (int par = 1; par <= 4; par += 3) {
            char conf[2048];
            snprintf(conf, sizeof conf, "profiles = ( %s, %s );\n",
                     v == 0 ? NOM_PROFILE("default-scheduler", "default = true;", NOM_FIELD,
                                          "{ name = \"priority-sort\"; }, " FLEET_PLUGINS)
                     : v == 1
                         ? NOM_PROFILE("default-scheduler",
                                       "default = true; equivalence_cache = false;", NOM_FIELD,
                                       "{ name = \"priority-sort\"; }, " FLEET_PLUGINS)
                         : NOM_PROFILE("default-scheduler",
                                       "default = true; percentage_of_targets_to_score = 10;",
                                       NOM_FIELD, "{ name = \"priority-sort\"; }, " FLEET_PLUGINS),
                     HIGH_PROFILE);
            make_fleet();
            add_nominated();
            run r;
            start(&r, conf, par, 1);
            char *got[300];
            ck_assert_int_eq(on_nominated(&r, got), 0);
            sched_stats st;
            sched_get_stats(r.s, &st);
            ck_assert_uint_eq(st.eq_hits, 0);
            for (size_t i = 0; i < 300; i++) {
                if (v < 2 && first[i])
                    ck_assert_msg(strcmp(first[i], got[i]) == 0, "pod-%03zu: %s, then %s", i,
                                  first[i], got[i]);
                if (v == 0 && par == 1)
                    first[i] = got[i];
                else
                    free(got[i]);
            }
            stop(&r);
        }
    }
    for (size_t i = 0; i < 300; i++)
        free(first[i]);
    /* without the field read, the same fleet uses some of those nodes */
    make_fleet();
    add_nominated();
    run r;
    start(
        &r,
        "profiles = ( " NOM_PROFILE(
            "default-scheduler", "default = true;", "",
            "{ name = \"priority-sort\"; }, " FLEET_PLUGINS) ", " NOM_PROFILE("high", "", "",
                                                                              "{ name = "
                                                                              "\"priority-sort\"; "
                                                                              "}, { name = "
                                                                              "\"label-selector\"; "
                                                                              "},"
                                                                              " { name = "
                                                                              "\"default-binder\"; "
                                                                              "}") " );\n",
        2, 1);
    ck_assert_int_gt(on_nominated(&r, NULL), 0);
    stop(&r);
}
END_TEST

/* The equivalence cache keeps verdicts without nominations only: vip
 * (priority 200) outranks the held pod nominated to n-0 and ignores it;
 * low (priority 0) is equivalent to vip for every plugin (the priority is
 * the queue's) but must not reuse vip's verdicts: held counts on n-0 for
 * it. No score plugin: the first feasible name wins. */
START_TEST(equivalence_not_reused_across_nominations)
{
    char p[256];
    snprintf(p, sizeof p, "%s/state", tmp);
    mkdir(p, 0755);
    strbuf b;
    sb_init(&b);
    for (int i = 0; i < 3; i++)
        sb_printf(&b,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n-%d\"},"
                  "\"status\":{\"allocatable\":{\"cpu\":\"1\",\"memory\":\"8Gi\",\"pods\":"
                  "\"110\"}}}\n",
                  i);
    const char *pods[][2] = {{"vip", "200"}, {"low", "0"}};
    for (int i = 0; i < 2; i++)
        sb_printf(&b,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                  "\"namespace\":\"default\"},\"spec\":{\"priority\":%s,\"containers\":[{"
                  "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}\n",
                  pods[i][0], pods[i][1]);
    sb_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"held\","
                  "\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"high\","
                  "\"priority\":100,\"nodeSelector\":{\"zone\":\"none\"},\"containers\":[{"
                  "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
                  "\"status\":{\"nominatedNodeName\":\"n-0\"}}\n");
    write_text("state/all.json", b.s);
    sb_free(&b);
    run r;
    start(&r,
          "profiles = ( " NOM_PROFILE(
              "default-scheduler", "default = true; tie_break = \"name\";", NOM_FIELD,
              "{ name = \"priority-sort\"; }, { name = \"resources-fit\"; },"
              " { name = \"default-binder\"; }") ", " HIGH_PROFILE " );\n",
          1, 1);
    ck_assert_str_eq(find(&r, "vip")->targets[0], "n-0");
    /* n-0 with held: 1 + 0.5 + 0.5 > 1 */
    ck_assert_str_eq(find(&r, "low")->targets[0], "n-1");
    ck_assert_int_eq(find(&r, "held")->result, DEC_UNSCHEDULABLE);
    sched_stats st;
    sched_get_stats(r.s, &st);
    ck_assert_uint_eq(st.eq_hits, 0);
    stop(&r);
}
END_TEST

START_TEST(tie_break_by_name)
{
    make_fleet();
    run r;
    start(&r,
          "profiles = ( " PROFILE("default-scheduler", "default = true; tie_break = \"name\";",
                                  "{ name = \"least-utilized\"; }, { name = "
                                  "\"default-binder\"; }") " );\n",
          2, 1);
    /* all equal at first: the smallest name, then the next empty one */
    ck_assert_str_eq(find(&r, "pod-000")->targets[0], "node-000");
    ck_assert_str_eq(find(&r, "pod-001")->targets[0], "node-001");
    stop(&r);
    run r2;
    start(&r2,
          "profiles = ( " PROFILE("default-scheduler", "default = true; tie_break = \"name-desc\";",
                                  "{ name = \"least-utilized\"; }, { name = "
                                  "\"default-binder\"; }") " );\n",
          2, 1);
    ck_assert_str_eq(find(&r2, "pod-000")->targets[0], "node-699");
    ck_assert_str_eq(find(&r2, "pod-001")->targets[0], "node-698");
    stop(&r2);
}
END_TEST

static const char *yaml_state =
    "# two nodes\n"
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels: {disk: ssd}\n"
    "status:\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"10\"}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: b\n"
    "status:\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"10\"}\n";

static const char *yaml_pods =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssd-pod\n  namespace: default\n"
    "spec:\n  nodeSelector:\n    disk: ssd   # needs the fast disk\n"
    "  containers:\n  - name: c\n    resources:\n      requests: {cpu: 500m}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: other\n  namespace: default\n"
    "spec:\n  schedulerName: batch-scheduler\n"
    "  containers:\n  - name: c\n    resources:\n      requests: {cpu: 500m}\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: placed\n  namespace: default\n"
    "spec:\n  nodeName: b\n"
    "  containers:\n  - name: c\n    resources:\n      requests: {cpu: \"2\"}\n";

START_TEST(write_back_and_dry_run)
{
    char p[256];
    snprintf(p, sizeof p, "%s/state", tmp);
    mkdir(p, 0755);
    write_text("state/nodes.yaml", yaml_state);
    write_text("state/pods.yaml", yaml_pods);
    const char *conf =
        "profiles = ( " PROFILE("default-scheduler", "default = true;",
                                "{ name = \"label-selector\"; }, { name = \"resources-fit\"; },"
                                " { name = \"default-binder\"; }") " );\n";
    run r;
    start(&r, conf, 1, 1); /* dry run first */
    ck_assert_uint_eq(decisions_count(sched_decisions(r.s)),
                      1); /* "other" belongs to another scheduler */
    ck_assert_str_eq(find(&r, "ssd-pod")->targets[0], "a");
    stop(&r);
    char *after = read_text("state/pods.yaml");
    ck_assert_str_eq(after, yaml_pods);
    free(after);

    run r2;
    start(&r2, conf, 1, 0);
    stop(&r2);
    after = read_text("state/pods.yaml");
    /* exactly one line added, at the end of the first document's spec */
    const char *want_prefix =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssd-pod\n  namespace: default\n"
        "spec:\n  nodeSelector:\n    disk: ssd   # needs the fast disk\n"
        "  containers:\n  - name: c\n    resources:\n      requests: {cpu: 500m}\n"
        "  nodeName: a\n---\n";
    ck_assert_msg(strncmp(after, want_prefix, strlen(want_prefix)) == 0, "got:\n%s", after);
    ck_assert_str_eq(after + strlen(want_prefix), strstr(yaml_pods, "---\n") + 4);
    free(after);
    after = read_text("state/nodes.yaml");
    ck_assert_str_eq(after, yaml_state);
    free(after);

    /* a second run finds nothing pending */
    run r3;
    start(&r3, conf, 1, 0);
    ck_assert_uint_eq(decisions_count(sched_decisions(r3.s)), 0);
    stop(&r3);
}
END_TEST

START_TEST(profiles_by_scheduler_name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/state", tmp);
    mkdir(p, 0755);
    write_text("state/nodes.yaml", yaml_state);
    write_text("state/pods.yaml", yaml_pods);
    run r;
    start(&r,
          "profiles = ( " PROFILE("default-scheduler", "default = true;",
                                  "{ name = \"label-selector\"; }, { name = \"default-binder\"; "
                                  "}") ",\n" PROFILE("batch-scheduler",
                                                     "tie_break = \"name-desc\";",
                                                     "{ name = \"default-binder\"; }") " );\n",
          1, 1);
    ck_assert_uint_eq(decisions_count(sched_decisions(r.s)), 2);
    decision *d = find(&r, "other");
    ck_assert_str_eq(profile_name(d->p), "batch-scheduler");
    ck_assert_str_eq(d->targets[0], "b");
    ck_assert_str_eq(profile_name(find(&r, "ssd-pod")->p), "default-scheduler");
    stop(&r);
}
END_TEST

START_TEST(permit_wait_then_allow)
{
    char p[256];
    snprintf(p, sizeof p, "%s/state", tmp);
    mkdir(p, 0755);
    write_text("state/nodes.yaml", yaml_state);
    write_text("state/gang.yaml",
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: g1\n  namespace: default\n"
               "  labels:\n    gang: wait\nspec: {}\n---\n"
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\n  namespace: default\n"
               "spec: {}\n");
    run r;
    start(&r,
          "profiles = ( " PROFILE("default-scheduler", "default = true;",
                                  "{ name = \"fx-all-hooks\"; args = { log_hooks = false; }; "
                                  "}") " );\n",
          1, 1);
    decision *g = find(&r, "g1");
    ck_assert_msg(g->result == DEC_SCHEDULED, "g1: %d %s", g->result, g->message ? g->message : "");
    ck_assert_int_eq(find(&r, "solo")->result, DEC_SCHEDULED);
    stop(&r);

    /* alone, the waiting workload times out when the run ends */
    write_text("state/gang.yaml",
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: g1\n  namespace: default\n"
               "  labels:\n    gang: wait\nspec: {}\n");
    run r2;
    start(&r2,
          "profiles = ( " PROFILE("default-scheduler", "default = true;",
                                  "{ name = \"fx-all-hooks\"; args = { log_hooks = false; }; "
                                  "}") " );\n",
          1, 1);
    g = find(&r2, "g1");
    ck_assert_int_eq(g->result, DEC_UNSCHEDULABLE);
    ck_assert_msg(strstr(g->message, "PermitTimeout") != NULL, "%s", g->message);
    sched_stats ss;
    sched_get_stats(r2.s, &ss);
    ck_assert_uint_eq(ss.assumed, 0);
    stop(&r2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scheduler");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_decisions_for_any_worker_count);
    tcase_add_test(tc, sampled_filtering_is_deterministic);
    tcase_add_test(tc, tie_break_by_name);
    tcase_add_test(tc, nominations_hold_their_nodes);
    tcase_add_test(tc, equivalence_not_reused_across_nominations);
    tcase_add_test(tc, write_back_and_dry_run);
    tcase_add_test(tc, profiles_by_scheduler_name);
    tcase_add_test(tc, permit_wait_then_allow);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
