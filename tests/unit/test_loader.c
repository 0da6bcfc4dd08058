/*
 * test_loader.c - the plugin loader's defences, with the misbehaving
 * fixture plugins of tests/plugins/ and the in-tree plugins, found through
 * TRELLIS_PLUGIN_PATH as `make check` sets it.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cfg.h"
#include "hostapi.h"
#include "plugin.h"
#include "testutil.h"
#include "util.h"

/* an instance outside any profile, with the real host table and no
 * scheduler services */
#define BARE_CTX                                                                                   \
    {                                                                                              \
        NULL, NULL, hostapi_table(), NULL, "p.cfg"                                                 \
    }

static char *dirs[8];
static size_t n_dirs;
static char path_copy[4096];

static void setup_dirs(void)
{
    n_dirs = tu_plugin_dirs(dirs, path_copy, sizeof path_copy);
}

/* the file of a fixture, found in the directories */
static const char *fixture_path(const char *name)
{
    static char p[4200];
    for (size_t i = 0; i < n_dirs; i++) {
        snprintf(p, sizeof p, "%s/%s.so", dirs[i], name);
        FILE *f = fopen(p, "rb");
        if (f) {
            fclose(f);
            return p;
        }
    }
    ck_abort_msg("fixture %s.so not found", name);
    return NULL;
}

static void expect_load_error(const char *name, const char *path, const char *n1, const char *n2)
{
    registry r;
    registry_init(&r);
    plugin_module *m;
    char err[1024] = "";
    ck_assert_int_eq(registry_load(&r, name, path, dirs, n_dirs, &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, n1) != NULL, "'%s' lacks '%s'", err, n1);
    if (n2)
        ck_assert_msg(strstr(err, n2) != NULL, "'%s' lacks '%s'", err, n2);
    registry_free(&r);
}

START_TEST(version_checks)
{
    setup_dirs();
    char want1[128], want2[128];
    snprintf(want1, sizeof want1, "plugin built against SDK %d.0", TRELLIS_SDK_MAJOR + 1);
    snprintf(want2, sizeof want2, "host has SDK %d.%d (major version differs", TRELLIS_SDK_MAJOR,
             TRELLIS_SDK_MINOR);
    expect_load_error("fx-wrong-major", NULL, want1, want2);
    snprintf(want1, sizeof want1, "SDK %d.%d, host has SDK %d.%d", TRELLIS_SDK_MAJOR,
             TRELLIS_SDK_MINOR + 1, TRELLIS_SDK_MAJOR, TRELLIS_SDK_MINOR);
    expect_load_error("fx-newer-minor", NULL, want1, "plugin needs a newer host");
}
END_TEST

START_TEST(missing_things)
{
    setup_dirs();
    expect_load_error("no-such-plugin", NULL,
                      "plugin 'no-such-plugin': no-such-plugin.so "
                      "not found in",
                      NULL);
    expect_load_error("fx-no-entry", NULL, "no symbol 'trellis_plugin_entry'", "fx-no-entry.so");
    expect_load_error("x", "/nonexistent/x.so", "/nonexistent/x.so: cannot load", NULL);
}
END_TEST

START_TEST(duplicate_and_mismatched_names)
{
    setup_dirs();
    registry r;
    registry_init(&r);
    plugin_module *a, *b;
    char err[1024] = "";
    char pa[4200];
    snprintf(pa, sizeof pa, "%s", fixture_path("fx-dup-a"));
    ck_assert_msg(registry_load(&r, "fx-dup", pa, dirs, n_dirs, &a, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(
        registry_load(&r, "fx-dup", fixture_path("fx-dup-b"), dirs, n_dirs, &b, err, sizeof err),
        -1);
    ck_assert_msg(strstr(err, "duplicate plugin name 'fx-dup'") && strstr(err, "fx-dup-a.so"), "%s",
                  err);
    /* found by file name, the descriptor must carry that name */
    ck_assert_int_eq(registry_load(&r, "fx-dup-b", NULL, dirs, n_dirs, &b, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "declares the name 'fx-dup', expected 'fx-dup-b'"), "%s", err);
    registry_free(&r);
}
END_TEST

static cfg_plugin entry(const char *name)
{
    cfg_plugin pc;
    memset(&pc, 0, sizeof pc);
    pc.name = (char *)name;
    pc.instance = (char *)name;
    pc.weight = 1;
    pc.points = PT_ALL;
    pc.line = 7;
    return pc;
}

START_TEST(failing_init)
{
    setup_dirs();
    registry r;
    registry_init(&r);
    plugin_module *m;
    trellis_plugin *pl;
    char err[1024] = "";
    ck_assert_int_eq(registry_load(&r, "fx-failing-init", NULL, dirs, n_dirs, &m, err, sizeof err),
                     0);
    cfg_plugin pc = entry("fx-failing-init");
    ck_assert_int_eq(
        registry_instantiate(&r, m, &pc, &(instance_ctx)BARE_CTX, &pl, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "p.cfg:7: plugin 'fx-failing-init'") &&
                      strstr(err, "init failed: cannot reach the inventory service"),
                  "%s", err);
    ck_assert_uint_eq(r.n_inst, 0);
    registry_free(&r);
}
END_TEST

static int dummy_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        const trellis_target *t, trellis_status *st)
{
    return TRELLIS_SUCCESS;
}

START_TEST(hooks_and_slots)
{
    setup_dirs();
    registry r;
    registry_init(&r);
    plugin_module *m;
    trellis_plugin *pl, *pl2;
    char err[1024] = "";
    ck_assert_msg(registry_load(&r, "fx-all-hooks", NULL, dirs, n_dirs, &m, err, sizeof err) == 0,
                  "%s", err);
    cfg_plugin pc = entry("fx-all-hooks");
    ck_assert_msg(registry_instantiate(&r, m, &pc, &(instance_ctx)BARE_CTX, &pl, err, sizeof err) ==
                      0,
                  "%s", err);
    char hooks[512];
    registry_hook_names(pl, hooks, sizeof hooks);
    const char *want[] = {
        "prepare-workload", "prepare-target", "counters",    "queue-sort", "pre-filter",
        "filter",           "filter-batch",   "post-filter", "pre-score",  "score",
        "score-batch",      "normalize",      "reserve",     "unreserve",  "permit",
        "pre-bind",         "bind",           "post-bind"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(hooks, want[i]) != NULL, "%s lacks %s", hooks, want[i]);
    ck_assert_int_eq(pl->slot, 0);
    ck_assert_int_eq(pl->n_counters, 1);
    /* a second instance of the same module gets its own slot and counters */
    ck_assert_int_eq(
        registry_instantiate(&r, m, &pc, &(instance_ctx)BARE_CTX, &pl2, err, sizeof err), 0);
    ck_assert_int_eq(pl2->slot, 1);
    ck_assert_int_eq(pl2->counter_off, 1);
    ck_assert_int_eq(r.n_counters, 2);
    /* hooks can only be registered during init */
    const trellis_host *h = hostapi_table();
    ck_assert_int_eq(h->register_filter(pl, dummy_filter), -1);
    ck_assert_uint_eq(h->size, sizeof(trellis_host));
    ck_assert(TRELLIS_HOST_HAS(h, permit_reject));
    registry_free(&r);
}
END_TEST

START_TEST(status_helper)
{
    const trellis_host *h = hostapi_table();
    trellis_status st;
    ck_assert_int_eq(h->status(&st, TRELLIS_UNSCHEDULABLE, "TaintNotTolerated", "taint %s", "x"),
                     TRELLIS_UNSCHEDULABLE);
    ck_assert_str_eq(st.reason, "TaintNotTolerated");
    ck_assert_str_eq(st.message, "taint x");
    h->status(&st, TRELLIS_ERROR, NULL, NULL);
    ck_assert_str_eq(st.reason, "");
    ck_assert_str_eq(st.message, "");
}
END_TEST

/* A plugin file or directory that others could change, or that belongs
 * to a third user, is refused with what to change. */
START_TEST(unsafe_files_refused)
{
    setup_dirs();
    char tmp[64], so[128], err[1024];
    tu_mkdtemp(tmp, "unsafe");
    chmod(tmp, 0755);
    snprintf(so, sizeof so, "%s/fx-reject-all.so", tmp);
    tu_copy(fixture_path("fx-reject-all"), so);
    chmod(so, 0755);
    plugin_module m;
    ck_assert_msg(registry_open_file(so, &m, err, sizeof err) == 0, "%s", err);
    registry_close_file(&m);
    chmod(so, 0775);
    ck_assert_int_eq(registry_open_file(so, &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "writable by its group (mode 0775)") && strstr(err, "chmod go-w"),
                  "%s", err);
    chmod(so, 0757);
    ck_assert_int_eq(registry_open_file(so, &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "writable by others"), "%s", err);
    chmod(so, 0755);
    chmod(tmp, 0777);
    ck_assert_int_eq(registry_open_file(so, &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "the directory") && strstr(err, "group and others"), "%s", err);
    chmod(tmp, 0755);
    if (geteuid() == 0) {
        /* only root can give a file away */
        ck_assert_int_eq(chown(so, 4242, 4242), 0);
        ck_assert_int_eq(registry_open_file(so, &m, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "owned by uid 4242"), "%s", err);
    }
    tu_rmtree(tmp);
}
END_TEST

/* A plugin thread that outlives fini and then calls the host is refused:
 * the handle stays valid memory, and every call that takes it answers
 * nothing. */
START_TEST(host_refuses_calls_after_fini)
{
    setup_dirs();
    char tmp[64], report[128], text[256], err[1024] = "";
    tu_mkdtemp(tmp, "late");
    snprintf(report, sizeof report, "%s/report", tmp);
    snprintf(text, sizeof text, "args = { late_thread = \"%s\"; };", report);
    config_t lc;
    config_init(&lc);
    ck_assert_int_eq(config_read_string(&lc, text), CONFIG_TRUE);
    registry r;
    registry_init(&r);
    plugin_module *m;
    trellis_plugin *pl;
    ck_assert_int_eq(registry_load(&r, "fx-faults", NULL, dirs, n_dirs, &m, err, sizeof err), 0);
    cfg_plugin pc = entry("fx-faults");
    pc.args = config_lookup(&lc, "args");
    ck_assert_msg(registry_instantiate(&r, m, &pc, &(instance_ctx)BARE_CTX, &pl, err, sizeof err) ==
                      0,
                  "%s", err);
    registry_free(&r); /* fini: the fixture's thread wakes up and calls */
    char *got = NULL;
    for (int i = 0; i < 5000 && !got; i++) { /* at most five seconds */
        char rerr[256];
        got = read_file(report, NULL, rerr, sizeof rerr);
        if (!got || !strchr(got, '\n')) {
            free(got);
            got = NULL;
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, "get_private after fini: refused\n");
    free(got);
    config_destroy(&lc);
    tu_rmtree(tmp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, version_checks);
    tcase_add_test(tc, missing_things);
    tcase_add_test(tc, duplicate_and_mismatched_names);
    tcase_add_test(tc, failing_init);
    tcase_add_test(tc, hooks_and_slots);
    tcase_add_test(tc, status_helper);
    tcase_add_test(tc, unsafe_files_refused);
    tcase_add_test(tc, host_refuses_calls_after_fini);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
