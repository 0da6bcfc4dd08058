/*
 * test_embed.c - trellis/embed.h: a built-in plugin registered by
 * descriptor, and one run driven through trellis_open / trellis_run_once
 * over a real state directory, with the plugins of TRELLIS_PLUGIN_PATH.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "testutil.h"
#include "trellis/embed.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* a built-in plugin: no hooks but a filter that refuses the node "bad" */
static const trellis_host *host;

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    if (strcmp(host->target_name(t), "bad") == 0)
        return host->status(st, TRELLIS_UNRESOLVABLE, "NotThere", "never on bad");
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *a, char *err,
                size_t errlen)
{
    host = h;
    return h->register_filter(self, filter);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER, "avoid-bad", "1.0", "test: not on the node named bad", NULL, init, NULL,
};

static const trellis_plugin_desc *entry(void)
{
    return &desc;
}

static const trellis_plugin_desc bad_desc = {
    sizeof(trellis_plugin_desc),
    TRELLIS_SDK_MAJOR,
    TRELLIS_SDK_MINOR + 1,
    "too-new",
    "1.0",
    "test",
    NULL,
    init,
    NULL,
};

static const trellis_plugin_desc *bad_entry(void)
{
    return &bad_desc;
}

START_TEST(builtin_and_run_once)
{
    char err[1024];
    ck_assert_msg(trellis_register_builtin(entry, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(trellis_register_builtin(entry, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "registered twice"), "%s", err);
    ck_assert_int_eq(trellis_register_builtin(bad_entry, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "needs a newer host"), "%s", err);

    tu_mkdtemp(dir, "embed");
    write_file("t.cfg", "profiles = ( { name = \"default-scheduler\"; default = true;\n"
                        "  workload = { kind = \"Pod\"; }; target = { kind = \"Node\"; };\n"
                        "  binding = { field = \"spec.nodeName\"; };\n"
                        "  plugins = ( \"avoid-bad\", \"default-binder\" ); } );\n");
    write_file("s.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\n---\n"
                         "apiVersion: v1\nkind: Node\nmetadata: {name: good}\n---\n"
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"
                         "spec: {}\n");
    char cfgp[128];
    snprintf(cfgp, sizeof cfgp, "%s/t.cfg", dir);
    trellis_scheduler *s = trellis_open(cfgp, dir, 0, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_int_eq(trellis_run_once(s, out, err, sizeof err), 0);
    fclose(out);
    ck_assert_msg(strstr(text, "\"good\"") != NULL, "%s", text);
    size_t sc, un, er;
    trellis_counts(s, &sc, &un, &er);
    ck_assert_uint_eq(sc, 1);
    ck_assert_uint_eq(un + er, 0);
    trellis_close(s);
    free(text);
    char sp[128];
    snprintf(sp, sizeof sp, "%s/s.yaml", dir);
    FILE *f = fopen(sp, "r");
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, "nodeName: good") != NULL, "%s", buf);
    ck_assert_ptr_null(trellis_open("/nonexistent.cfg", dir, 1, err, sizeof err));
    ck_assert_msg(strstr(err, "/nonexistent.cfg"), "%s", err);
    ck_assert_str_eq(trellis_version(), PACKAGE_VERSION);
    tu_rmtree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("embed");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builtin_and_run_once);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
