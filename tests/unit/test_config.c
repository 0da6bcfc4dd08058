/*
 * test_config.c - the config loader: a good config, defaults, and an error
 * with file and line for each kind of mistake; plugin argument schemas.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cfg.h"
#include "testutil.h"

static char dir[64];

static const char *write_cfg(const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/t.cfg", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define PROFILE_HEAD                                                                       \
    "profiles = ( {\n"                                                                     \
    "  name = \"default-scheduler\";\n"                                                    \
    "  workload = { kind = \"Pod\"; scheduler_name_field = \"spec.schedulerName\"; };\n"    \
    "  target = { kind = \"Node\"; };\n"                                                   \
    "  binding = { field = \"spec.nodeName\"; };\n"

static void expect_error(const char *text, const char *needle)
{
    cfg c;
    char err[1024] = "";
    const char *p = write_cfg(text);
    ck_assert_int_eq(config_load(p, &c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
    ck_assert_msg(strstr(err, "t.cfg") != NULL, "error '%s' lacks the file", err);
}

START_TEST(good_config_and_defaults)
{
    cfg c;
    char err[1024];
    const char *p = write_cfg("plugin_dirs = [ \"plugins\", \"/abs\" ];\n"
                              "parallelism = 3;\n" PROFILE_HEAD
                              "  default = true;\n"
                              "  tie_break = \"name-desc\";\n"
                              "  backoff = { initial_ms = 5; max_ms = 1000000; };\n"
                              "  plugins = ( \"taint-toleration\",\n"
                              "    { name = \"least-allocated\"; weight = 3; },\n"
                              "    { name = \"label-selector\"; as = \"zone\"; points = "
                              "[\"filter\"];\n"
                              "      args = { field = \"spec.nodeSelector\"; }; } );\n"
                              "} );\n");
    ck_assert_msg(config_load(p, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n_plugin_dirs, 2);
    ck_assert_msg(strstr(c.plugin_dirs[0], "/plugins") != NULL, "%s", c.plugin_dirs[0]);
    ck_assert_str_eq(c.plugin_dirs[1], "/abs");
    ck_assert_int_eq(c.parallelism, 3);
    ck_assert_uint_eq(c.n_profiles, 1);
    cfg_profile *pr = &c.profiles[0];
    ck_assert_int_eq(pr->is_default, 1);
    ck_assert_int_eq(pr->tie_break_desc, 1);
    ck_assert_uint_eq(pr->backoff_initial_ms, 5);
    ck_assert_uint_eq(pr->backoff_max_ms, 1000000);
    ck_assert_uint_eq(pr->max_unschedulable_ms, 300000);
    ck_assert_str_eq(pr->binding_field, "spec.nodeName");
    ck_assert_uint_eq(pr->n_plugins, 3);
    ck_assert_str_eq(pr->plugins[0].name, "taint-toleration");
    ck_assert_int_eq(pr->plugins[0].weight, 1);
    ck_assert_uint_eq(pr->plugins[0].points, PT_ALL);
    ck_assert_int_eq(pr->plugins[1].weight, 3);
    ck_assert_str_eq(pr->plugins[2].instance, "zone");
    ck_assert_uint_eq(pr->plugins[2].points, PT_FILTER);
    ck_assert_ptr_nonnull(pr->plugins[2].args);
    config_free(&c);
}
END_TEST

START_TEST(errors_name_file_and_line)
{
    expect_error("profiles = ( { name = \"x\"\n", "t.cfg:");
    expect_error("colour = 1;\n" PROFILE_HEAD "plugins = ();\n} );\n",
                 "unknown setting 'colour'");
    expect_error(PROFILE_HEAD "  plugins = ();\n  tiebreak = 1;\n} );\n", ":7: unknown setting 'tiebreak'");
    expect_error("profiles = ( { name = \"x\"; target = { kind = \"Node\"; };"
                 " binding = { field = \"spec.nodeName\"; }; plugins = (); } );\n",
                 "missing setting 'workload'");
    expect_error(PROFILE_HEAD "  plugins = ();\n  tie_break = \"random\";\n} );\n",
                 "tie_break");
    expect_error(PROFILE_HEAD "  plugins = ( { name = \"a\"; points = [\"filtre\"]; } );\n} );\n",
                 "unknown extension point 'filtre'");
    expect_error(PROFILE_HEAD "  plugins = ( \"a\", \"a\" );\n} );\n", "lists 'a' twice");
    expect_error(PROFILE_HEAD "  plugins = ( { name = \"a\"; weight = -1; } );\n} );\n",
                 "'weight' must be between");
}
END_TEST

START_TEST(bad_binding_field)
{
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"Pod\"; }; target = { kind = \"Node\"; };"
                 " binding = { field = \"spec..nodeName\"; }; plugins = (); } );\n",
                 "binding.field");
}
END_TEST

START_TEST(duplicate_profiles)
{
    expect_error(PROFILE_HEAD "  plugins = ();\n},\n{ name = \"default-scheduler\";"
                              " workload = { kind = \"Pod\"; }; target = { kind = \"Node\"; };"
                              " binding = { field = \"spec.nodeName\"; }; plugins = (); } );\n",
                 "already exists");
}
END_TEST

START_TEST(missing_file)
{
    cfg c;
    char err[512];
    ck_assert_int_eq(config_load("/nonexistent/trellis.cfg", &c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/nonexistent/trellis.cfg") != NULL, "%s", err);
}
END_TEST

static const trellis_arg_spec spec[] = {
    {"field", TRELLIS_ARG_STRING, "spec.nodeSelector", "where"},
    {"count", TRELLIS_ARG_INT, "3", "how many"},
    {"strict", TRELLIS_ARG_BOOL, "false", "be strict"},
    {"ratio", TRELLIS_ARG_DOUBLE, "0.5", "a ratio"},
    {"resources", TRELLIS_ARG_STRING_LIST, "cpu, memory", "list"},
    {"needed", TRELLIS_ARG_STRING, NULL, "required"},
    {NULL, 0, NULL, NULL}};

static trellis_args *build(const char *args_text, char *err, size_t len)
{
    static cfg c;
    static int loaded;
    if (loaded)
        config_free(&c);
    char text[1024];
    snprintf(text, sizeof text,
             PROFILE_HEAD "  plugins = ( { name = \"x\"; args = { %s }; } );\n} );\n",
             args_text);
    char e[512];
    ck_assert_msg(config_load(write_cfg(text), &c, e, sizeof e) == 0, "%s", e);
    loaded = 1;
    return args_build(spec, c.profiles[0].plugins[0].args, c.file, err, len);
}

START_TEST(args_schema)
{
    char err[512];
    trellis_args *a = build("needed = \"yes\"; count = 7; resources = [\"pods\"];", err,
                            sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_str_eq(args_string(a, "field"), "spec.nodeSelector");
    ck_assert_int_eq(args_int(a, "count"), 7);
    ck_assert_int_eq(args_bool(a, "strict"), 0);
    ck_assert(args_double(a, "ratio") == 0.5);
    ck_assert_uint_eq(args_list_len(a, "resources"), 1);
    ck_assert_str_eq(args_list_at(a, "resources", 0), "pods");
    ck_assert_ptr_null(args_list_at(a, "resources", 1));
    ck_assert_ptr_null(args_string(a, "nope"));
    args_free(a);

    a = build("needed = \"y\"; colour = 1;", err, sizeof err);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, "unknown argument 'colour'") && strstr(err, "t.cfg:6"), "%s",
                  err);
    a = build("needed = \"y\"; count = \"seven\";", err, sizeof err);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, "'count' must be an integer"), "%s", err);
    a = build("count = 1;", err, sizeof err);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, "missing required argument 'needed'"), "%s", err);
    a = build("needed = \"y\"; resources = \"cpu,pods\";", err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_uint_eq(args_list_len(a, "resources"), 2);
    args_free(a);
    a = build("needed = \"y\"; ratio = 2;", err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert(args_double(a, "ratio") == 2.0);
    args_free(a);
    a = build("needed = \"y\"; strict = 1;", err, sizeof err);
    ck_assert_ptr_null(a);
}
END_TEST

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/trellis-cfg-XXXXXX");
    if (!mkdtemp(dir))
        return EXIT_FAILURE;
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, good_config_and_defaults);
    tcase_add_test(tc, errors_name_file_and_line);
    tcase_add_test(tc, bad_binding_field);
    tcase_add_test(tc, duplicate_profiles);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, args_schema);
    suite_add_tcase(s, tc);
    int rc = tu_run(s);
    char path[128];
    snprintf(path, sizeof path, "%s/t.cfg", dir);
    unlink(path);
    rmdir(dir);
    return rc;
}
