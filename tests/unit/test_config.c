/*
 * test_config.c - the config loader: a good config, defaults, and an error
 * with file and line for each kind of mistake; the http group; the
 * effective configuration as JSON; plugin argument schemas.
 */
#include "config.h"

#include <check.h>
#include <json-c/json.h>
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

#define PROFILE_HEAD                                                                               \
    "profiles = ( {\n"                                                                             \
    "  name = \"default-scheduler\";\n"                                                            \
    "  workload = { kind = \"Pod\"; scheduler_name_field = \"spec.schedulerName\"; };\n"           \
    "  target = { kind = \"Node\"; };\n"                                                           \
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
                              "parallelism = 3;\n" PROFILE_HEAD "  default = true;\n"
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
    expect_error("colour = 1;\n" PROFILE_HEAD "plugins = ();\n} );\n", "unknown setting 'colour'");
    expect_error(PROFILE_HEAD "  plugins = ();\n  tiebreak = 1;\n} );\n",
                 ":7: unknown setting 'tiebreak'");
    expect_error("profiles = ( { name = \"x\"; target = { kind = \"Node\"; };"
                 " binding = { field = \"spec.nodeName\"; }; plugins = (); } );\n",
                 "missing setting 'workload'");
    expect_error(PROFILE_HEAD "  plugins = ();\n  tie_break = \"random\";\n} );\n", "tie_break");
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
    /* each binding model needs its own members, and only those */
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"Pod\"; }; target = { kind = \"Node\"; };"
                 " binding = { }; plugins = (); } );\n",
                 "model \"field\" needs field");
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"P\"; }; target = { kind = \"M\"; };"
                 " binding = { model = \"object\"; }; plugins = (); } );\n",
                 "model \"object\" needs object = {");
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"P\"; }; target = { kind = \"M\"; };"
                 " binding = { model = \"object\"; field = \"spec.x\";"
                 " object = { kind = \"B\"; workload_field = \"spec.p\";"
                 " target_field = \"spec.t\"; }; }; plugins = (); } );\n",
                 "binding.field is for model = \"field\"");
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"P\"; }; target = { kind = \"M\"; };"
                 " binding = { model = \"object\"; object = { kind = \"B\";"
                 " target_field = \"spec.t\"; }; }; plugins = (); } );\n",
                 "workload_field");
    /* binding objects the host writes must read back as what it meant */
#define OBJ_PROFILE(members)                                                                       \
    "profiles = ( { name = \"x\"; workload = { kind = \"P\"; }; target = { kind = \"M\"; };"       \
    " binding = { model = \"object\"; object = { kind = \"B\"; workload_field = \"spec.p\";"       \
    " target_field = \"spec.t\"; " members " }; }; plugins = (); } );\n"
    expect_error(OBJ_PROFILE("state_field = \"spec.s\"; placed_states = [\"Bound\"];"
                             " initial_state = \"Scheduled\";"),
                 "initial_state must be one of placed_states");
    expect_error(OBJ_PROFILE("state_field = \"spec.s\"; placed_states = [\"Bound\"];"
                             " initial_state = \"Bound\"; release_state = \"Bound\";"),
                 "release_state 'Bound' is one of placed_states");
    expect_error(OBJ_PROFILE("initial_state = \"Scheduled\";"), "need state_field");
    expect_error(OBJ_PROFILE("state_field = \"spec.s\"; placed_states = [\"Bound\"];"
                             " initial_state = \"Bound\"; previous_state_annotation = \"x/y\";"),
                 "previous_state_annotation needs release_state");
    expect_error(OBJ_PROFILE("finalizer = \"\";"), "finalizer: expected a finalizer name");
    expect_error(OBJ_PROFILE("state_field = \"spec.t.s\";"), "overlap");
    expect_error(OBJ_PROFILE("state_field = \"metadata.name\";"), "identity");
    expect_error(OBJ_PROFILE("state_field = \"spec.s[0]\";"), "list element");
    expect_error(
        "profiles = ( { name = \"x\"; workload = { kind = \"P\"; }; target = { kind = "
        "\"M\"; }; binding = { model = \"object\"; object = { kind = \"P\"; "
        "workload_field = \"spec.p\"; target_field = \"spec.t\"; }; }; plugins = (); } );\n",
        "kind P is the profile's workload kind");
#undef OBJ_PROFILE
}
END_TEST

START_TEST(finished_workloads)
{
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"Pod\"; finished_field = \"status.phase\"; };"
                 " target = { kind = \"Node\"; };"
                 " binding = { field = \"spec.nodeName\"; }; plugins = (); } );\n",
                 "finished_field and finished_values go together");
    expect_error("profiles = ( { name = \"x\";"
                 " workload = { kind = \"Pod\"; finished_values = [ \"Succeeded\" ]; };"
                 " target = { kind = \"Node\"; };"
                 " binding = { field = \"spec.nodeName\"; }; plugins = (); } );\n",
                 "finished_field and finished_values go together");
    cfg c;
    char err[1024] = "";
    const char *p =
        write_cfg("profiles = ( { name = \"x\"; workload = { kind = \"Pod\"; finished_field = "
                  "\"status.phase\"; finished_values = [ \"Succeeded\", \"Failed\" ]; };"
                  " target = { kind = \"Node\"; }; binding = { field = \"spec.nodeName\"; };"
                  " plugins = (); } );\n");
    ck_assert_msg(config_load(p, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(c.profiles[0].finished_field, "status.phase");
    ck_assert_uint_eq(c.profiles[0].n_finished_values, 2);
    ck_assert_str_eq(c.profiles[0].finished_values[1], "Failed");
    config_free(&c);
}
END_TEST

START_TEST(operator_section_and_older_spelling)
{
    cfg c;
    char err[1024] = "";
    ck_assert_msg(config_load(write_cfg(PROFILE_HEAD "  plugins = ();\n"
                                                     "  operator = { cordon_taint = \"x\";"
                                                     " taint_effects = [\"Hard\"]; };\n} );\n"),
                              &c, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_str_eq(c.profiles[0].cordon_taint, "x");
    ck_assert_uint_eq(c.profiles[0].n_taint_effects, 1);
    ck_assert_str_eq(c.profiles[0].taint_effects[0], "Hard");
    ck_assert_str_eq(c.profiles[0].taints_field, "spec.taints");
    config_free(&c);
    /* the spelling of older configs, at the top of the profile */
    ck_assert_msg(config_load(write_cfg(PROFILE_HEAD "  plugins = ();\n"
                                                     "  capacity_field = \"status.cap\";\n} );\n"),
                              &c, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_str_eq(c.profiles[0].capacity_field, "status.cap");
    config_free(&c);
    expect_error(PROFILE_HEAD "  plugins = ();\n  cordon_taint = \"a\";\n"
                              "  operator = { cordon_taint = \"b\"; };\n} );\n",
                 ":7: 'cordon_taint' is given twice: here and as operator.cordon_taint");
    expect_error(PROFILE_HEAD
                 "  plugins = ();\n  operator = { capacity_field = \"a..b\"; };\n} );\n",
                 "operator.capacity_field: expected a dotted path");
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

#define PROFILE_TAIL "  plugins = ();\n} );\n"

START_TEST(http_defaults_and_values)
{
    cfg c;
    char err[1024];
    ck_assert_msg(config_load(write_cfg(PROFILE_HEAD PROFILE_TAIL), &c, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(c.http_enabled, 1);
    ck_assert_str_eq(c.http_address, "127.0.0.1");
    ck_assert_int_eq(c.http_port, 10259);
    config_free(&c);

    ck_assert_msg(config_load(write_cfg("http = { enabled = false; address = \"0.0.0.0\";"
                                        " port = 0; };\n" PROFILE_HEAD PROFILE_TAIL),
                              &c, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_int_eq(c.http_enabled, 0);
    ck_assert_str_eq(c.http_address, "0.0.0.0");
    ck_assert_int_eq(c.http_port, 0);
    config_free(&c);

    ck_assert_msg(config_load(write_cfg("http = { port = 65535; };\n" PROFILE_HEAD PROFILE_TAIL),
                              &c, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_int_eq(c.http_enabled, 1);
    ck_assert_str_eq(c.http_address, "127.0.0.1");
    ck_assert_int_eq(c.http_port, 65535);
    config_free(&c);
}
END_TEST

START_TEST(http_errors)
{
    expect_error("http = { port = 70000; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:1: http.port: expected 0..65535, got 70000");
    expect_error("\nhttp = { port = -1; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:2: http.port: expected 0..65535, got -1");
    expect_error("http = { port = \"80\"; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:1: http.port: expected 0..65535, got a non-integer");
    expect_error("http = { address = \"localhost\"; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:1: http.address: expected an IPv4 address like \"127.0.0.1\", got "
                 "\"localhost\"");
    expect_error("http = { address = \"::1\"; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "http.address: expected an IPv4 address");
    expect_error("http = { address = 127; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "http.address: expected an IPv4 address like \"127.0.0.1\", got a value that "
                 "is not a string");
    expect_error("http = { enabled = 1; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:1: http.enabled: expected true or false");
    expect_error("http = {\n  prot = 80; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:2: unknown setting 'prot' (expected one of: enabled, address, port, "
                 "liveness_timeout_ms, plugin_metrics_sample_percent)");
    expect_error("http = 1;\n" PROFILE_HEAD PROFILE_TAIL, "t.cfg:1: http must be a group");
    expect_error("http = { plugin_metrics_sample_percent = 101; };\n" PROFILE_HEAD PROFILE_TAIL,
                 "t.cfg:1: 'plugin_metrics_sample_percent' must be between 0 and 100, got 101");
}
END_TEST

static json_object *get(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok(buf, "."); k; k = strtok(NULL, ".")) {
        json_object *next = NULL;
        if (json_object_is_type(o, json_type_array))
            next = json_object_array_get_idx(o, (size_t)atoi(k));
        else
            ck_assert_msg(json_object_object_get_ex(o, k, &next), "no '%s' in %s", k, path);
        ck_assert_msg(next != NULL || !strtok(NULL, "."), "%s: null on the way", path);
        o = next;
    }
    return o;
}

static const char *jstr(json_object *o, const char *path)
{
    json_object *v = get(o, path);
    ck_assert_msg(json_object_is_type(v, json_type_string), "%s is not a string", path);
    return json_object_get_string(v);
}

static int64_t jint(json_object *o, const char *path)
{
    json_object *v = get(o, path);
    ck_assert_msg(json_object_is_type(v, json_type_int), "%s is not an integer", path);
    return json_object_get_int64(v);
}

static int jbool(json_object *o, const char *path)
{
    json_object *v = get(o, path);
    ck_assert_msg(json_object_is_type(v, json_type_boolean), "%s is not a boolean", path);
    return json_object_get_boolean(v);
}

static json_object *to_json(const cfg *c)
{
    char *text = config_to_json(c);
    ck_assert_ptr_nonnull(text);
    ck_assert(text[0] && text[strlen(text) - 1] == '\n');
    ck_assert_ptr_nonnull(strchr(text, '\n')); /* pretty */
    json_object *o = json_tokener_parse(text);
    ck_assert_msg(o != NULL, "not JSON: %s", text);
    free(text);
    return o;
}

START_TEST(config_json_defaults_and_args)
{
    cfg c;
    char err[1024];
    const char *p = write_cfg(
        "plugin_dirs = [ \"plugins\" ];\n"
        "store = { path = \"state\"; };\n"
        "http = { port = 8080; };\n" PROFILE_HEAD "  plugins = ( \"priority-sort\",\n"
        "    { name = \"label-selector\"; as = \"zone\"; weight = 2;\n"
        "      points = [\"filter\", \"score\"];\n"
        "      args = { field = \"spec.nodeSelector\"; count = 3; big = 5000000000L;\n"
        "               ratio = 0.25; strict = true; list = [\"a\", \"b\"];\n"
        "               mixed = ( 1, \"x\", { k = \"v\"; } ); nested = { deep = false; }; };\n"
        "    } );\n"
        "} );\n");
    ck_assert_msg(config_load(p, &c, err, sizeof err) == 0, "%s", err);
    json_object *o = to_json(&c);
    ck_assert_str_eq(jstr(o, "file"), p);
    ck_assert_msg(str_endswith(jstr(o, "plugin_dirs.0"), "/plugins"), "%s",
                  jstr(o, "plugin_dirs.0"));
    ck_assert_int_eq(jint(o, "parallelism"), 0);
    ck_assert_str_eq(jstr(o, "store.type"), "file");
    ck_assert(str_endswith(jstr(o, "store.path"), "/state"));
    ck_assert_int_eq(jbool(o, "http.enabled"), 1);
    ck_assert_str_eq(jstr(o, "http.address"), "127.0.0.1");
    ck_assert_int_eq(jint(o, "http.port"), 8080);

    json_object *pr = get(o, "profiles.0");
    ck_assert_uint_eq(json_object_array_length(get(o, "profiles")), 1);
    ck_assert_str_eq(jstr(pr, "name"), "default-scheduler");
    ck_assert_int_eq(jbool(pr, "default"), 0);
    ck_assert_str_eq(jstr(pr, "workload.kind"), "Pod");
    ck_assert_ptr_null(get(pr, "workload.api_version"));
    ck_assert_str_eq(jstr(pr, "workload.scheduler_name_field"), "spec.schedulerName");
    ck_assert_str_eq(jstr(pr, "target.kind"), "Node");
    ck_assert_str_eq(jstr(pr, "binding.field"), "spec.nodeName");
    ck_assert_uint_eq(json_object_array_length(get(pr, "binding.also_counts")), 0);
    ck_assert_str_eq(jstr(pr, "tie_break"), "name");
    ck_assert_str_eq(jstr(pr, "score_mode"), "weighted");
    ck_assert_int_eq(jint(pr, "percentage_of_targets_to_score"), 100);
    ck_assert_str_eq(jstr(pr, "unschedulable_message"), "summary");
    ck_assert_str_eq(jstr(pr, "target_noun"), "target");
    ck_assert_int_eq(jbool(pr, "events"), 0);
    ck_assert_str_eq(jstr(pr, "operator.taints_field"), "spec.taints");
    ck_assert_str_eq(jstr(pr, "operator.cordon_taint"), "node.kubernetes.io/unschedulable");
    ck_assert_ptr_null(get(pr, "operator.capacity_field"));
    ck_assert_uint_eq(json_object_array_length(get(pr, "operator.taint_effects")), 3);
    /* the older spelling is read, never shown */
    ck_assert(!json_object_object_get_ex(pr, "taints_field", NULL));
    ck_assert_int_eq(jint(pr, "backoff.initial_ms"), 1000);
    ck_assert_int_eq(jint(pr, "backoff.max_ms"), 10000);
    ck_assert_int_eq(jint(pr, "max_unschedulable_ms"), 300000);

    ck_assert_str_eq(jstr(pr, "plugins.0.name"), "priority-sort");
    ck_assert_str_eq(jstr(pr, "plugins.0.as"), "priority-sort");
    ck_assert_ptr_null(get(pr, "plugins.0.path"));
    ck_assert_int_eq(jint(pr, "plugins.0.weight"), 1);
    ck_assert_uint_eq(json_object_array_length(get(pr, "plugins.0.points")),
                      15); /* every extension point, target_lost last */
    ck_assert_str_eq(jstr(pr, "plugins.0.points.0"), "queue_sort");
    ck_assert_int_eq(json_object_object_length(get(pr, "plugins.0.args")), 0);

    ck_assert_str_eq(jstr(pr, "plugins.1.as"), "zone");
    ck_assert_int_eq(jint(pr, "plugins.1.weight"), 2);
    ck_assert_uint_eq(json_object_array_length(get(pr, "plugins.1.points")), 2);
    ck_assert_str_eq(jstr(pr, "plugins.1.points.0"), "filter");
    ck_assert_str_eq(jstr(pr, "plugins.1.points.1"), "score");
    ck_assert_str_eq(jstr(pr, "plugins.1.args.field"), "spec.nodeSelector");
    ck_assert_int_eq(jint(pr, "plugins.1.args.count"), 3);
    ck_assert_int_eq(jint(pr, "plugins.1.args.big"), 5000000000LL);
    ck_assert(json_object_get_double(get(pr, "plugins.1.args.ratio")) == 0.25);
    ck_assert_int_eq(jbool(pr, "plugins.1.args.strict"), 1);
    ck_assert_str_eq(jstr(pr, "plugins.1.args.list.1"), "b");
    ck_assert_int_eq(jint(pr, "plugins.1.args.mixed.0"), 1);
    ck_assert_str_eq(jstr(pr, "plugins.1.args.mixed.1"), "x");
    ck_assert_str_eq(jstr(pr, "plugins.1.args.mixed.2.k"), "v");
    ck_assert_int_eq(jbool(pr, "plugins.1.args.nested.deep"), 0);
    json_object_put(o);
    config_free(&c);
}
END_TEST

START_TEST(config_json_of_kube_profile)
{
    const char *top = getenv("TOP_SRCDIR");
    ck_assert_msg(top != NULL, "TOP_SRCDIR is not set (run through make check)");
    char path[512], err[1024];
    snprintf(path, sizeof path, "%s/conf/kube.cfg", top);
    cfg c;
    ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
    json_object *o = to_json(&c);
    ck_assert_int_eq(jbool(o, "http.enabled"), 1);
    ck_assert_int_eq(jint(o, "http.port"), 10259);
    ck_assert(json_object_get_type(get(o, "store.path")) == json_type_null);
    json_object *pr = get(o, "profiles.0");
    ck_assert_str_eq(jstr(pr, "name"), "default-scheduler");
    ck_assert_int_eq(jbool(pr, "default"), 1);
    ck_assert_str_eq(jstr(pr, "workload.api_version"), "v1");
    ck_assert_int_eq(jint(pr, "percentage_of_targets_to_score"), 0);
    ck_assert_str_eq(jstr(pr, "workload.finished_field"), "status.phase");
    ck_assert_str_eq(jstr(pr, "workload.finished_values.1"), "Failed");
    ck_assert_str_eq(jstr(pr, "plugins.0.name"), "scheduling-gates");
    ck_assert_str_eq(jstr(pr, "plugins.1.name"), "priority-sort");
    ck_assert_str_eq(jstr(pr, "plugins.1.args.priority_field"), "spec.priority");
    ck_assert_str_eq(jstr(pr, "plugins.1.args.priority_class_field"), "spec.priorityClassName");
    ck_assert_str_eq(jstr(pr, "plugins.2.name"), "node-unschedulable");
    ck_assert_str_eq(jstr(pr, "plugins.4.name"), "taint-toleration");
    ck_assert_int_eq(jint(pr, "plugins.4.weight"), 3);
    ck_assert_str_eq(jstr(pr, "plugins.5.name"), "node-affinity");
    ck_assert_int_eq(jint(pr, "plugins.5.weight"), 2);
    json_object_put(o);
    config_free(&c);
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
             PROFILE_HEAD "  plugins = ( { name = \"x\"; args = { %s }; } );\n} );\n", args_text);
    char e[512];
    ck_assert_msg(config_load(write_cfg(text), &c, e, sizeof e) == 0, "%s", e);
    loaded = 1;
    return args_build(spec, c.profiles[0].plugins[0].args, c.profiles[0].plugin_args, c.file, err,
                      len);
}

/* plugin_args: what a profile gives every plugin that declares the key. */
START_TEST(shared_plugin_args)
{
    static cfg c;
    char err[512];
    const char *text =
        PROFILE_HEAD "  plugin_args = { needed = \"shared\"; count = 9; other = 1; };\n"
                     "  plugins = ( { name = \"x\"; args = { count = 2; }; } );\n} );\n";
    ck_assert_msg(config_load(write_cfg(text), &c, err, sizeof err) == 0, "%s", err);
    trellis_args *a = args_build(spec, c.profiles[0].plugins[0].args, c.profiles[0].plugin_args,
                                 c.file, err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_str_eq(args_string(a, "needed"), "shared"); /* required, given once */
    ck_assert_int_eq(args_int(a, "count"), 2);            /* its own entry wins */
    ck_assert_int_eq(args_bool(a, "strict"), 0);          /* the default stays */
    args_free(a);
    config_free(&c);
    text = PROFILE_HEAD "  plugin_args = { count = \"nine\"; };\n"
                        "  plugins = ( { name = \"x\"; args = { needed = \"y\"; }; } );\n} );\n";
    ck_assert_msg(config_load(write_cfg(text), &c, err, sizeof err) == 0, "%s", err);
    a = args_build(spec, c.profiles[0].plugins[0].args, c.profiles[0].plugin_args, c.file, err,
                   sizeof err);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, "'count' must be an integer") && strstr(err, "t.cfg:"), "%s", err);
    config_free(&c);
    text = PROFILE_HEAD "  plugin_args = ( 1 );\n  plugins = ( \"x\" );\n} );\n";
    ck_assert_int_eq(config_load(write_cfg(text), &c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "'plugin_args' must be a group"), "%s", err);
}
END_TEST

START_TEST(args_schema)
{
    char err[512];
    trellis_args *a =
        build("needed = \"yes\"; count = 7; resources = [\"pods\"];", err, sizeof err);
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
    ck_assert_msg(strstr(err, "unknown argument 'colour'") && strstr(err, "t.cfg:6"), "%s", err);
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
    tcase_add_test(tc, finished_workloads);
    tcase_add_test(tc, duplicate_profiles);
    tcase_add_test(tc, operator_section_and_older_spelling);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, args_schema);
    tcase_add_test(tc, shared_plugin_args);
    tcase_add_test(tc, http_defaults_and_values);
    tcase_add_test(tc, http_errors);
    tcase_add_test(tc, config_json_defaults_and_args);
    tcase_add_test(tc, config_json_of_kube_profile);
    suite_add_tcase(s, tc);
    int rc = tu_run(s);
    char path[128];
    snprintf(path, sizeof path, "%s/t.cfg", dir);
    unlink(path);
    rmdir(dir);
    return rc;
}
