/*
 * test_object.c - Check suite for object.c: building objects from json-c
 * trees and JSON text (and every way that is refused), identity and
 * provenance, reference counting, the path syntax of object_get and
 * value_path, the value accessors behind the SDK, and the compact form:
 * the builder, the JSON reader (against json-c, which it must match) and
 * the conversion back to json-c.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "util.h"

static trellis_object *from_json(const char *text)
{
    char err[256] = "";
    trellis_object *o = object_from_json(text, err, sizeof err);
    ck_assert_msg(o != NULL, "object_from_json failed: %s", err);
    return o;
}

static void expect_refused(const char *text, const char *want)
{
    char err[256] = "";
    trellis_object *o = object_from_json(text, err, sizeof err);
    ck_assert_ptr_null(o);
    ck_assert_msg(strcmp(err, want) == 0, "error '%s', want '%s'", err, want);
}

static const char *pod =
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n"
    " \"metadata\": {\"name\": \"web-1\", \"namespace\": \"prod\",\n"
    "   \"uid\": \"u-1\",\n"
    "   \"labels\": {\"app\": \"web\", \"topology.kubernetes.io/zone\": \"z1\","
    " \"tier\": 3},\n"
    "   \"annotations\": {\"a/b\": \"c\", \"quote\\\"d\": \"q\"}},\n"
    " \"spec\": {\"containers\": [{\"name\": \"c0\", \"resources\": "
    "{\"requests\": {\"cpu\": \"250m\", \"memory\": 1024}}},\n"
    "   {\"name\": \"c1\", \"ports\": [80, 443]}],\n"
    "   \"priority\": 7, \"weight\": 0.25, \"big\": 1e300, \"preempt\": true,\n"
    "   \"flag\": \"false\", \"count\": \"42\", \"neg\": \"-17\", \"bad\": \"4x\","
    " \"nothing\": null, \"empty\": {}, \"list\": []}}";

START_TEST(identity)
{
    trellis_object *o = from_json(pod);
    ck_assert_str_eq(o->api_version, "v1");
    ck_assert_str_eq(o->kind, "Pod");
    ck_assert_str_eq(o->name, "web-1");
    ck_assert_str_eq(o->namespace_, "prod");
    ck_assert_str_eq(o->uid, "u-1");
    ck_assert_str_eq(o->key, "prod/web-1");
    ck_assert_str_eq(o->id, "Pod/prod/web-1");
    ck_assert_int_eq(o->refs, 1);
    ck_assert_int_eq(o->item, -1);
    ck_assert_int_eq(o->prepare_failed_slot, -1);
    ck_assert_ptr_null(o->file);
    ck_assert_ptr_null(o->aux);
    ck_assert_ptr_nonnull(o->labels);
    ck_assert_ptr_nonnull(o->annotations);
    char buf[64];
    ck_assert_str_eq(object_describe(o, buf, sizeof buf), "Pod prod/web-1");
    object_unref(o);

    o = from_json("{\"apiVersion\": \"v1\", \"kind\": \"Node\", "
                  "\"metadata\": {\"name\": \"n1\", \"labels\": [1]}}");
    ck_assert_str_eq(o->namespace_, "");
    ck_assert_str_eq(o->uid, "");
    ck_assert_str_eq(o->key, "n1");
    ck_assert_str_eq(o->id, "Node//n1");
    ck_assert_ptr_null(o->labels); /* not a map: ignored */
    ck_assert_ptr_null(o->annotations);
    ck_assert_ptr_null(object_label(o, "x"));
    ck_assert_ptr_null(object_annotation(o, "x"));
    ck_assert_str_eq(object_describe(o, buf, sizeof buf), "Node n1");
    /* a short buffer is cut, not overrun */
    ck_assert_str_eq(object_describe(o, buf, 5), "Node");
    object_unref(o);
}
END_TEST

START_TEST(refusals)
{
    expect_refused("[1, 2]", "document is a list, expected a map");
    expect_refused("\"text\"", "document is a string, expected a map");
    expect_refused("null", "document is null, expected a map");
    expect_refused("12", "document is a number, expected a map");
    expect_refused("{}", "missing apiVersion");
    expect_refused("{\"apiVersion\": 1}", "apiVersion is not a string");
    expect_refused("{\"apiVersion\": \"v1\"}", "missing kind");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": null}", "missing kind");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": 3}", "kind is not a string");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"\"}", "kind is empty");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}", "missing metadata.name");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": 5}",
                   "metadata is not a map");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {}}",
                   "missing metadata.name");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", "
                   "\"metadata\": {\"name\": [\"x\"]}}",
                   "metadata.name is not a string");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", "
                   "\"metadata\": {\"name\": \"\"}}",
                   "metadata.name is empty");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", "
                   "\"metadata\": {\"name\": \"a\", \"namespace\": 4}}",
                   "metadata.namespace is not a string");
    expect_refused("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", "
                   "\"metadata\": {\"name\": \"a\", \"uid\": {}}}",
                   "metadata.uid is not a string");
    /* object_new with a tree: ownership transfers on failure too (ASan
     * reports a leak otherwise) */
    char err[128];
    ck_assert_ptr_null(object_new(json_object_new_array(), err, sizeof err));
    ck_assert_str_eq(err, "document is a list, expected a map");
    ck_assert_ptr_null(object_new(NULL, err, sizeof err));
    ck_assert_ptr_null(object_new(json_object_new_object(), NULL, 0));
}
END_TEST

START_TEST(json_errors)
{
    char err[256];
    ck_assert_ptr_null(object_from_json("{\"a\": 1,\n \"b\" 2}", err, sizeof err));
    ck_assert_msg(strncmp(err, "line 2, column 6: ", 18) == 0, "%s", err);
    ck_assert_ptr_null(object_from_json("{\"a\":", err, sizeof err));
    ck_assert_msg(strstr(err, "line 1") && strstr(err, "unexpected end of data"), "%s", err);
    ck_assert_ptr_null(object_from_json("", err, sizeof err));
    ck_assert_ptr_null(object_from_json("{} {}", err, sizeof err));
    ck_assert_msg(strstr(err, "column 4"), "%s", err);
    ck_assert_ptr_null(object_from_json("{\"a\": 1,}", err, sizeof err));
    ck_assert_ptr_null(object_from_json("{\"a\": \"\xff\"}", err, sizeof err));
    ck_assert_ptr_null(object_from_json(NULL, err, sizeof err));
    /* trailing white space is fine */
    trellis_object *o = from_json("{\"apiVersion\": \"v1\", \"kind\": \"K\", "
                                  "\"metadata\": {\"name\": \"n\"}}\n\n");
    object_unref(o);
}
END_TEST

START_TEST(refcount_and_origin)
{
    trellis_object *o = from_json(pod);
    ck_assert_ptr_eq(object_ref(o), o);
    ck_assert_int_eq(o->refs, 2);
    object_unref(o);
    ck_assert_int_eq(o->refs, 1);
    object_set_origin(o, "dir/pods.yaml", 2, 3, 40);
    ck_assert_str_eq(o->file, "dir/pods.yaml");
    ck_assert_int_eq(o->doc, 2);
    ck_assert_int_eq(o->item, 3);
    ck_assert_int_eq(o->line, 40);
    object_set_origin(o, NULL, 0, -1, 1);
    ck_assert_ptr_null(o->file);
    object_set_origin(o, "again.yaml", 0, -1, 1);
    /* what the registry hangs on an object is released with it */
    o->aux = xcalloc(4, sizeof *o->aux);
    o->naux = 4;
    o->counters = xcalloc(2, sizeof *o->counters);
    o->prepare_error = xstrdup("bad");
    object_unref(o);
    object_unref(NULL);
    ck_assert_ptr_null(object_ref(NULL));
}
END_TEST

START_TEST(labels_and_annotations)
{
    trellis_object *o = from_json(pod);
    ck_assert_str_eq(object_label(o, "app"), "web");
    ck_assert_str_eq(object_label(o, "topology.kubernetes.io/zone"), "z1");
    ck_assert_str_eq(object_label(o, "tier"), "3"); /* text of a number */
    ck_assert_ptr_null(object_label(o, "missing"));
    ck_assert_str_eq(object_annotation(o, "a/b"), "c");
    ck_assert_str_eq(object_annotation(o, "quote\"d"), "q");
    ck_assert_ptr_null(object_annotation(o, "app"));
    object_unref(o);
}
END_TEST

static const char *str_at(const trellis_object *o, const char *path)
{
    return value_string(object_get(o, path));
}

START_TEST(paths)
{
    trellis_object *o = from_json(pod);
    ck_assert_str_eq(str_at(o, "spec.containers[0].resources.requests.cpu"), "250m");
    ck_assert_str_eq(str_at(o, "spec.containers[0].resources.requests.memory"), "1024");
    ck_assert_str_eq(str_at(o, "spec.containers[1].ports[1]"), "443");
    ck_assert_str_eq(str_at(o, "metadata.labels[\"topology.kubernetes.io/zone\"]"), "z1");
    ck_assert_str_eq(str_at(o, "metadata.labels['topology.kubernetes.io/zone']"), "z1");
    ck_assert_str_eq(str_at(o, "metadata.annotations[\"quote\\\"d\"]"), "q");
    ck_assert_str_eq(str_at(o, "metadata[\"labels\"].app"), "web");
    ck_assert_str_eq(str_at(o, "[\"metadata\"][\"name\"]"), "web-1");
    ck_assert_str_eq(str_at(o, "metadata.annotations[\"a/b\"]"), "c");
    /* the empty path is the value itself */
    ck_assert_ptr_eq(object_get(o, ""), (const trellis_value *)o->root);
    const trellis_value *spec = object_get(o, "spec");
    ck_assert_ptr_eq(value_path(spec, ""), spec);
    ck_assert_str_eq(value_string(value_path(spec, "containers[1].name")), "c1");
    ck_assert_str_eq(value_string(value_path(spec, "[\"priority\"]")), "7");
    /* a bracket after a dot names what it names without the dot, as an
     * edit of the same path writes it */
    ck_assert_str_eq(value_string(value_path(spec, "containers.[1].name")), "c1");
    ck_assert_str_eq(value_string(object_get(o, "spec.[\"priority\"]")), "7");
    /* absent, null, out of range, wrong shape, malformed: NULL */
    static const char *const absent[] = {"spec.missing",
                                         "spec.nothing",
                                         "spec.nothing.deeper",
                                         "spec.containers[2]",
                                         "spec.containers[0].ports[0]",
                                         "spec.containers.name",
                                         "spec.priority.x",
                                         "spec[0]",
                                         "spec.containers[-1]",
                                         "spec.containers[]",
                                         "spec.containers[1",
                                         "spec.containers[x]",
                                         "spec..priority",
                                         "spec.",
                                         ".spec",
                                         "spec.containers[0]x",
                                         "metadata.labels[\"app]",
                                         "metadata.labels[\"app\"",
                                         "spec.containers[99999999999999999999999]",
                                         "metadata.labels[\"app\"].x"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        ck_assert_msg(object_get(o, absent[i]) == NULL, "'%s' found", absent[i]);
    ck_assert_ptr_null(object_get(o, NULL));
    ck_assert_ptr_null(object_get(NULL, "spec"));
    ck_assert_ptr_null(value_path(NULL, "a"));
    ck_assert_ptr_null(value_path(NULL, ""));
    object_unref(o);
}
END_TEST

START_TEST(long_keys)
{
    /* keys longer than the lookup's stack buffer */
    char key[600];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    key[300] = '.';
    char *text = xasprintf("{\"apiVersion\": \"v1\", \"kind\": \"K\", "
                           "\"metadata\": {\"name\": \"n\", \"labels\": "
                           "{\"%s\": \"long\", \"x\": \"y\"}}}",
                           key);
    trellis_object *o = from_json(text);
    char *path = xasprintf("metadata.labels[\"%s\"]", key);
    ck_assert_str_eq(str_at(o, path), "long");
    ck_assert_str_eq(object_label(o, key), "long");
    path[strlen(path) - 3] = 'X';
    ck_assert_ptr_null(object_get(o, path));
    free(path);
    key[300] = 'k';
    path = xasprintf("metadata.labels.%s", key);
    ck_assert_ptr_null(object_get(o, path));
    free(path);
    free(text);
    object_unref(o);
}
END_TEST

START_TEST(value_types_and_accessors)
{
    trellis_object *o = from_json(pod);
    const trellis_value *v;
    int64_t i;
    double d;
    int b;

    ck_assert_int_eq(value_type(object_get(o, "spec")), TRELLIS_VALUE_MAP);
    ck_assert_int_eq(value_type(object_get(o, "spec.list")), TRELLIS_VALUE_LIST);
    ck_assert_int_eq(value_type(object_get(o, "spec.priority")), TRELLIS_VALUE_INT);
    ck_assert_int_eq(value_type(object_get(o, "spec.weight")), TRELLIS_VALUE_DOUBLE);
    ck_assert_int_eq(value_type(object_get(o, "spec.preempt")), TRELLIS_VALUE_BOOL);
    ck_assert_int_eq(value_type(object_get(o, "spec.flag")), TRELLIS_VALUE_STRING);
    ck_assert_int_eq(value_type(object_get(o, "spec.nothing")), TRELLIS_VALUE_NULL);
    ck_assert_int_eq(value_type(NULL), TRELLIS_VALUE_NULL);

    /* value_string: text of any scalar */
    ck_assert_str_eq(str_at(o, "spec.priority"), "7");
    ck_assert_str_eq(str_at(o, "spec.weight"), "0.25");
    ck_assert_str_eq(str_at(o, "spec.big"), "1e300");
    ck_assert_str_eq(str_at(o, "spec.preempt"), "true");
    ck_assert_str_eq(str_at(o, "spec.flag"), "false");
    ck_assert_ptr_null(str_at(o, "spec.nothing"));
    ck_assert_ptr_null(str_at(o, "spec.list"));
    ck_assert_ptr_null(str_at(o, "spec"));
    ck_assert_ptr_null(value_string(NULL));

    /* value_int: ints and whole decimal strings */
    ck_assert_int_eq(value_int(object_get(o, "spec.priority"), &i), 0);
    ck_assert_int_eq(i, 7);
    ck_assert_int_eq(value_int(object_get(o, "spec.count"), &i), 0);
    ck_assert_int_eq(i, 42);
    ck_assert_int_eq(value_int(object_get(o, "spec.neg"), &i), 0);
    ck_assert_int_eq(i, -17);
    ck_assert_int_eq(value_int(object_get(o, "spec.bad"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "spec.weight"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "spec.preempt"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "spec.nothing"), &i), -1);
    ck_assert_int_eq(value_int(NULL, &i), -1);

    /* value_double: doubles and ints */
    ck_assert_int_eq(value_double(object_get(o, "spec.weight"), &d), 0);
    ck_assert(d == 0.25);
    ck_assert_int_eq(value_double(object_get(o, "spec.priority"), &d), 0);
    ck_assert(d == 7.0);
    ck_assert_int_eq(value_double(object_get(o, "spec.count"), &d), -1);

    /* value_bool: bools and "true"/"false" */
    ck_assert_int_eq(value_bool(object_get(o, "spec.preempt"), &b), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(value_bool(object_get(o, "spec.flag"), &b), 0);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(value_bool(object_get(o, "spec.count"), &b), -1);
    ck_assert_int_eq(value_bool(object_get(o, "spec.priority"), &b), -1);

    /* lengths, indexes, keys */
    ck_assert_uint_eq(value_len(object_get(o, "spec.containers")), 2);
    ck_assert_uint_eq(value_len(object_get(o, "metadata.labels")), 3);
    ck_assert_uint_eq(value_len(object_get(o, "spec.empty")), 0);
    ck_assert_uint_eq(value_len(object_get(o, "spec.priority")), 0);
    ck_assert_uint_eq(value_len(NULL), 0);
    v = object_get(o, "spec.containers");
    ck_assert_str_eq(value_string(value_get(value_at(v, 1), "name")), "c1");
    ck_assert_ptr_null(value_at(v, 2));
    ck_assert_ptr_null(value_at(object_get(o, "spec"), 0));
    ck_assert_ptr_null(value_get(v, "name"));
    ck_assert_ptr_null(value_get(object_get(o, "spec"), NULL));
    ck_assert_ptr_null(value_get(object_get(o, "spec"), "nothing")); /* null */
    object_unref(o);
}
END_TEST

START_TEST(int_edges)
{
    trellis_object *o =
        from_json("{\"apiVersion\": \"v1\", \"kind\": \"K\", \"metadata\": {\"name\": "
                  "\"n\"}, \"a\": \"9223372036854775807\", \"b\": \"9223372036854775808\","
                  " \"c\": \"+5\", \"d\": \" 5\", \"e\": \"5 \", \"f\": \"\", \"g\": \"-\","
                  " \"h\": -9223372036854775808}");
    int64_t i;
    ck_assert_int_eq(value_int(object_get(o, "a"), &i), 0);
    ck_assert(i == INT64_MAX);
    ck_assert_int_eq(value_int(object_get(o, "b"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "c"), &i), 0);
    ck_assert_int_eq(i, 5);
    ck_assert_int_eq(value_int(object_get(o, "d"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "e"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "f"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "g"), &i), -1);
    ck_assert_int_eq(value_int(object_get(o, "h"), &i), 0);
    ck_assert(i == INT64_MIN);
    ck_assert_str_eq(str_at(o, "h"), "-9223372036854775808");
    object_unref(o);
}
END_TEST

typedef struct visit {
    char keys[256];
    int stop_at;
    int seen;
} visit;

static int collect(const char *key, const trellis_value *v, void *ud)
{
    visit *vi = ud;
    (void)v;
    strcat(vi->keys, key);
    strcat(vi->keys, ",");
    if (++vi->seen == vi->stop_at)
        return 7;
    return 0;
}

START_TEST(foreach_order)
{
    trellis_object *o =
        from_json("{\"apiVersion\": \"v1\", \"kind\": \"K\", \"metadata\": {\"name\": "
                  "\"n\"}, \"m\": {\"zeta\": 1, \"alpha\": 2, \"mid\": 3, \"beta\": 4}}");
    visit vi = {"", 0, 0};
    ck_assert_int_eq(value_foreach(object_get(o, "m"), collect, &vi), 0);
    ck_assert_str_eq(vi.keys, "zeta,alpha,mid,beta,");
    visit stop = {"", 2, 0};
    ck_assert_int_eq(value_foreach(object_get(o, "m"), collect, &stop), 7);
    ck_assert_str_eq(stop.keys, "zeta,alpha,");
    visit none = {"", 0, 0};
    ck_assert_int_eq(value_foreach(object_get(o, "m.zeta"), collect, &none), 0);
    ck_assert_int_eq(value_foreach(NULL, collect, &none), 0);
    ck_assert_int_eq(none.seen, 0);
    object_unref(o);
}
END_TEST

START_TEST(values_of_built_trees)
{
    /* a tree built in code (as create_target's caller may): numbers get
     * their text too */
    json_object *root = json_object_new_object();
    json_object_object_add(root, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(root, "kind", json_object_new_string("Node"));
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string("n"));
    json_object_object_add(root, "metadata", meta);
    json_object_object_add(root, "cpu", json_object_new_int64(-3));
    json_object_object_add(root, "ratio", json_object_new_double(0.5));
    json_object *list = json_object_new_array();
    json_object_array_add(list, json_object_new_int(12));
    json_object_object_add(root, "list", list);
    char err[64];
    trellis_object *o = object_new(root, err, sizeof err);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(str_at(o, "cpu"), "-3");
    ck_assert_str_eq(str_at(o, "ratio"), "0.5");
    ck_assert_str_eq(str_at(o, "list[0]"), "12");
    object_unref(o);
}
END_TEST

/* ---- the compact form and the JSON reader ---- */

#define HEAD "{\"apiVersion\": \"v1\", \"kind\": \"K\", \"metadata\": {\"name\": \"n\"}, \"x\": "

/* The object json-c builds from text, converted. */
static trellis_object *via_json_c(const char *text)
{
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *j = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
    ck_assert_msg(json_tokener_get_error(tok) == json_tokener_success, "json-c refuses %s", text);
    json_tokener_free(tok);
    char err[128];
    trellis_object *o = object_new(j, err, sizeof err);
    ck_assert_msg(o != NULL, "%s", err);
    return o;
}

/* The fast reader takes text (or leaves it, as `taken` says) and the
 * object equals what json-c builds; converted back, it is the same json-c
 * tree (but for integers past int64, which values see clamped, as they
 * always did). */
static void same_as_json_c(const char *x, int taken)
{
    int exact = strlen(x) < 19 || !strchr("-0123456789", x[0]);
    char text[2048];
    snprintf(text, sizeof text, HEAD "%s}", x);
    obuild *b = obuild_new();
    oref r;
    size_t used = ob_parse_json(b, text, strlen(text), &r);
    ck_assert_msg(taken ? used == strlen(text) : used == 0, "%s: reader took %zu", x, used);
    obuild_free(b);
    trellis_object *fast = from_json(text), *ref = via_json_c(text);
    ck_assert_msg(object_same_content(fast, ref), "%s differs from json-c", x);
    json_object *back = object_to_json(fast), *j = json_tokener_parse(text);
    ck_assert_msg(!exact || json_object_equal(back, j), "%s does not convert back", x);
    json_object_put(back);
    json_object_put(j);
    object_unref(fast);
    object_unref(ref);
}

START_TEST(reader_matches_json_c)
{
    same_as_json_c("1", 1);
    same_as_json_c("-0", 1);
    same_as_json_c("[0, -7, 123456789012345678, -123456789012345678]", 1);
    same_as_json_c("[1.5, -0.25, 1e3, 2E-2, 6.02e+23, 1.0, 10.50]", 1);
    same_as_json_c("[true, false, null, \"\", [], {}]", 1);
    same_as_json_c("\"tab\\there \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\"", 1);
    same_as_json_c("\"\\u00e9\\u20ac caf\xc3\xa9 \xf0\x9f\x98\x80\"", 1);
    same_as_json_c("{\"a\": 1, \"b\": {\"c\": [1, {\"d\": null}]}, \"a\": 2}", 1);
    same_as_json_c("{\"\\u0041key\": \"v\", \"k\\n\": 1}", 1);
    same_as_json_c("  [ 1 ,\n\t2 ]  ", 1);
    /* left to json-c, which accepts them its own way */
    same_as_json_c("12345678901234567890", 0);
    same_as_json_c("-99999999999999999999", 0);
    same_as_json_c("\"lone \\ud800 surrogate\"", 0);
    same_as_json_c("\"low \\udc00 first\"", 0);
    /* surrogate pairs: json-c decodes some as U+FFFD (\ud836\ude00), and
     * its tree is the reference */
    same_as_json_c("\"\\ud83d\\ude00 pair\"", 0);
    same_as_json_c("\"\\ud836\\ude00 pair\"", 0);
    same_as_json_c("00", 0);
    same_as_json_c("\"control \x01 char\"", 1);
    /* a NUL inside a string would cut it short: refused, whichever reader */
    char err[256] = "";
    ck_assert_ptr_null(object_from_json(HEAD "\"nul \\u0000 inside\"}", err, sizeof err));
    ck_assert_msg(strstr(err, "NUL character"), "%s", err);
    ck_assert_ptr_null(object_from_json(HEAD "\"x\", \"k\\u0000ey\": 1}", err, sizeof err));
    ck_assert_msg(strstr(err, "NUL character"), "%s", err);
}
END_TEST

START_TEST(reader_leaves_what_it_does_not_take)
{
    const char *left[] = {
        "\"top\"",
        "12",
        "true",
        "null",
        "{\"a\": 1,}",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\": 01}",
        "{\"a\": 1.}",
        "{\"a\": .5}",
        "{\"a\": 1e}",
        "{\"a\": \"\xff\"}",
        "{\"a\": \"\xc3\"}",
        "{\"a\": tru}",
        "{\"a\": truex}",
        "{\"a\": 'x'}",
        "{\"a\": NaN}",
        "{\"a\": \"\\x\"}",
        "{\"a\": \"\\u12g4\"}",
        "{\"a\": \"open}",
        "{\"a\": [1, 2}",
        "{",
        "",
    };
    obuild *b = obuild_new();
    for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
        oref r;
        ck_assert_msg(ob_parse_json(b, left[i], strlen(left[i]), &r) == 0, "took %s", left[i]);
        obuild_clear(b);
    }
    /* nesting: json-c's limit is the reader's */
    char deep[600];
    size_t n = 0;
    for (int i = 0; i < 127; i++)
        deep[n++] = '[';
    for (int i = 0; i < 127; i++)
        deep[n++] = ']';
    oref r;
    ck_assert_uint_eq(ob_parse_json(b, deep, n, &r), n);
    obuild_clear(b);
    n = 0;
    for (int i = 0; i < 129; i++)
        deep[n++] = '[';
    for (int i = 0; i < 129; i++)
        deep[n++] = ']';
    ck_assert_uint_eq(ob_parse_json(b, deep, n, &r), 0);
    /* a value ends where json-c ends it: concatenated documents */
    obuild_clear(b);
    ck_assert_uint_eq(ob_parse_json(b, "{\"a\": 1}{\"b\": 2}", 16, &r), 8);
    obuild_free(b);
}
END_TEST

START_TEST(big_maps)
{
    /* enough members for the builder's hash, with a duplicate at the end:
     * json-c keeps the first place and the last value */
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, HEAD "{");
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "\"k%d\": %d, ", i, i);
    n += (size_t)snprintf(text + n, sizeof text - n, "\"k7\": \"last\"}}");
    trellis_object *o = from_json(text), *ref = via_json_c(text);
    ck_assert(object_same_content(o, ref));
    ck_assert_uint_eq(value_len(object_get(o, "x")), 200);
    ck_assert_str_eq(value_string(object_get(o, "x.k7")), "last");
    ck_assert_str_eq(value_string(object_get(o, "x.k199")), "199");
    object_unref(o);
    object_unref(ref);
    /* an empty key, and keys that share a prefix, by path */
    o = from_json(HEAD "{\"\": 1, \"ab\": 2, \"a\": 3, \"a.b\": 4}}");
    ck_assert_str_eq(value_string(object_get(o, "x[\"\"]")), "1");
    ck_assert_str_eq(value_string(object_get(o, "x.a")), "3");
    ck_assert_str_eq(value_string(object_get(o, "x.ab")), "2");
    ck_assert_str_eq(value_string(object_get(o, "x[\"a.b\"]")), "4");
    ck_assert_ptr_null(object_get(o, "x[\"abc\"]"));
    /* a plain key ends at a dot, whatever the map's keys hold */
    ck_assert_ptr_null(object_get(o, "x.a.b"));
    ck_assert_ptr_null(object_get(o, "x.a[0]"));
    ck_assert_ptr_null(object_get(o, "x..a"));
    ck_assert_ptr_null(object_get(o, "x.a."));
    ck_assert_ptr_null(object_get(o, "x.abc"));
    ck_assert_ptr_null(object_get(o, "x.b"));
    object_unref(o);
    o = from_json(HEAD "{\"a.b\": 4, \"a\": {\"b\": 5}}}");
    ck_assert_str_eq(value_string(object_get(o, "x.a.b")), "5");
    ck_assert_str_eq(value_string(object_get(o, "x[\"a.b\"]")), "4");
    ref = via_json_c(HEAD "{}}");
    object_unref(o);
    object_unref(ref);
}
END_TEST

static int key_list(const char *key, const trellis_value *v, void *ud)
{
    strcat(ud, key);
    strcat(ud, v ? "=" : "~");
    strcat(ud, v ? value_string(v) ? value_string(v) : "{}" : "");
    strcat(ud, ",");
    return 0;
}

START_TEST(builder)
{
    obuild *b = obuild_new();
    /* a shared value (as a YAML alias makes) is copied into each place */
    size_t m = ob_open(b);
    ob_member(b, m, "a", 1, ob_int(b, 1, NULL), 0);
    ob_member(b, m, "b", 1, ob_string(b, "two", 3), 0);
    oref shared = ob_close_map(b, m);
    size_t root = ob_open(b);
    ob_member(b, root, "apiVersion", 10, ob_string(b, "v1", 2), 0);
    ob_member(b, root, "kind", 4, ob_string(b, "K", 1), 0);
    size_t meta = ob_open(b);
    ob_member(b, meta, "name", 4, ob_string(b, "n", 1), 0);
    ob_member(b, meta, "namespace", 9, ob_string(b, "ns", 2), 0);
    ob_member(b, root, "metadata", 8, ob_close_map(b, meta), 0);
    ob_member(b, root, "one", 3, shared, 0);
    ob_member(b, root, "two", 3, shared, 0);
    /* without replace a present key is left alone */
    ck_assert_int_eq(ob_member(b, root, "one", 3, ob_null(b), 0), 1);
    ck_assert_int_eq(ob_member(b, root, "k", 1, ob_bool(b, 1), 0), 0);
    /* a merge adds only what the map lacks, after its own members */
    size_t src = ob_open(b);
    ob_member(b, src, "k", 1, ob_bool(b, 0), 0);
    ob_member(b, src, "merged", 6, ob_double(b, 0.5, "0.50"), 0);
    ob_member(b, src, "nothing", 7, ob_null(b), 0);
    ob_merge(b, root, ob_close_map(b, src));
    oref r = ob_close_map(b, root);
    ck_assert_int_eq(ob_type(b, r), TRELLIS_VALUE_MAP);
    ck_assert_uint_eq(ob_len(b, r), 8);
    ck_assert_str_eq(ob_text(b, ob_get(b, r, "kind")), "K");
    ck_assert_str_eq(ob_text(b, ob_get(b, shared, "a")), "1");
    ck_assert_uint_eq(ob_get(b, r, "absent"), OB_NONE);
    char err[128];
    trellis_object *o = object_build(b, r, err, sizeof err);
    ck_assert_msg(o != NULL, "%s", err);
    obuild_free(b);
    ck_assert_str_eq(o->key, "ns/n");
    ck_assert_str_eq(value_string(object_get(o, "one.b")), "two");
    ck_assert_str_eq(value_string(object_get(o, "two.b")), "two");
    ck_assert_ptr_ne(object_get(o, "one.b"), object_get(o, "two.b"));
    char keys[256] = "";
    value_foreach(o->root, key_list, keys);
    ck_assert_str_eq(keys, "apiVersion=v1,kind=K,metadata={},one={},two={},k=true,"
                           "merged=0.50,nothing~,");
    double d;
    ck_assert_int_eq(value_double(object_get(o, "merged"), &d), 0);
    ck_assert(d == 0.5);
    ck_assert_ptr_null(object_get(o, "nothing"));
    ck_assert_uint_eq(value_len(o->root), 8);
    /* back to json-c, nulls included */
    json_object *j = object_to_json(o);
    ck_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
                     "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\","
                     "\"namespace\":\"ns\"},\"one\":{\"a\":1,\"b\":\"two\"},\"two\":{\"a\":1,"
                     "\"b\":\"two\"},\"k\":true,\"merged\":0.50,\"nothing\":null}");
    json_object_put(j);
    ck_assert_ptr_null(value_to_json(NULL));
    object_unref(o);
}
END_TEST

static int first_key(const char *key, const trellis_value *v, void *ud)
{
    (void)v;
    *(const char **)ud = key;
    return 1;
}

/* object_json_pretty writes what json-c writes of object_to_json. */
static void expect_pretty_as_json_c(trellis_object *o)
{
    json_object *tree = object_to_json(o);
    const char *want = json_object_to_json_string_ext(
        tree, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "x"); /* appended after what is there */
    if (object_json_pretty(o, &b) == 0)
        ck_assert_str_eq(b.s + 1, want);
    else
        ck_assert_str_eq(b.s, "x");
    sb_free(&b);
    json_object_put(tree);
}

START_TEST(pretty_text_as_json_c)
{
    const char *texts[] = {
        pod,
        "{\"apiVersion\": \"v1\", \"kind\": \"A\", \"metadata\": {\"name\": \"a\"}, \"l\": [[], "
        "{}, [1, [2, []]], null,"
        " {\"x\": null, \"y\": [null]}], \"d\": [1.50, -0.0, 1e3, 2E-7, 123456789012345678901234],"
        " \"i\": [-9223372036854775808, 9223372036854775807, 0, -1], \"b\": [true, false],"
        " \"s\": \"tab\\there \\\"q\\\" back\\\\ slash/ nl\\n cr\\r ff\\f bs\\b \\u0001\\u001f"
        " \\u007f caf\\u00e9 \\ud83d\\ude00 end\"}",
        "{\"apiVersion\": \"v1\", \"kind\": \"B\", \"metadata\": {\"name\": \"b\"}, \"dup\": 1, "
        "\"dup\": 2}",
        "{\"apiVersion\": \"v1\", \"kind\": \"C\", \"metadata\": {\"name\": \"c\", \"labels\": "
        "{}}, \"e\": {\"\": \"\"}}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        trellis_object *o = from_json(texts[i]);
        expect_pretty_as_json_c(o);
        object_unref(o);
    }
    /* every byte in a string and in a key */
    char text[2048];
    for (int c = 1; c < 256; c++) {
        char ch[8];
        if (c == '"' || c == '\\')
            snprintf(ch, sizeof ch, "\\%c", c);
        else if (c < ' ')
            snprintf(ch, sizeof ch, "\\u%04x", c);
        else if (c < 0x80)
            snprintf(ch, sizeof ch, "%c", c);
        else /* as UTF-8 */
            snprintf(ch, sizeof ch, "%c%c", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
        snprintf(text, sizeof text,
                 "{\"apiVersion\": \"v1\", \"kind\": \"K\", \"metadata\": {\"name\": \"k\"}, "
                 "\"v%s\": \"a%sb\"}",
                 ch, ch);
        trellis_object *o = from_json(text);
        expect_pretty_as_json_c(o);
        object_unref(o);
    }
}
END_TEST

START_TEST(same_content_and_origin)
{
    const char *t = HEAD "[1, \"s\", {\"a\": true}]}";
    trellis_object *a = from_json(t), *b = from_json(t);
    ck_assert(object_same_content(a, b));
    trellis_object *c = from_json(HEAD "[1, \"s\", {\"a\": false}]}");
    ck_assert(!object_same_content(a, c));
    /* map keys are stored once for the process */
    const char *ka = NULL, *kc = NULL;
    value_foreach(object_get(a, "x[2]"), first_key, &ka);
    value_foreach(object_get(c, "x[2]"), first_key, &kc);
    ck_assert_str_eq(ka, "a");
    ck_assert_ptr_eq(ka, kc);
    /* objects of one file share its name */
    object_set_origin(a, "dir/f.yaml", 0, -1, 1);
    object_set_origin(b, "dir/f.yaml", 1, -1, 9);
    ck_assert_ptr_eq(a->file, b->file);
    ck_assert_str_eq(a->file, "dir/f.yaml");
    object_set_origin(c, "dir/g.yaml", 0, -1, 1);
    ck_assert_ptr_ne(a->file, c->file);
    object_set_origin(b, NULL, 0, -1, 1);
    ck_assert_ptr_null(b->file);
    ck_assert_str_eq(a->file, "dir/f.yaml");
    object_unref(b);
    object_unref(a);
    /* the name is freed with its last object, and comes back fresh */
    trellis_object *d = from_json(t);
    object_set_origin(d, "dir/f.yaml", 0, -1, 1);
    ck_assert_str_eq(d->file, "dir/f.yaml");
    object_unref(d);
    object_unref(c);
}
END_TEST

static Suite *object_suite(void)
{
    Suite *s = suite_create("object");
    TCase *t = tcase_create("objects");
    tcase_add_test(t, identity);
    tcase_add_test(t, refusals);
    tcase_add_test(t, json_errors);
    tcase_add_test(t, refcount_and_origin);
    tcase_add_test(t, labels_and_annotations);
    suite_add_tcase(s, t);
    TCase *v = tcase_create("values");
    tcase_add_test(v, paths);
    tcase_add_test(v, long_keys);
    tcase_add_test(v, value_types_and_accessors);
    tcase_add_test(v, int_edges);
    tcase_add_test(v, foreach_order);
    tcase_add_test(v, values_of_built_trees);
    suite_add_tcase(s, v);
    TCase *c = tcase_create("compact");
    tcase_add_test(c, reader_matches_json_c);
    tcase_add_test(c, reader_leaves_what_it_does_not_take);
    tcase_add_test(c, big_maps);
    tcase_add_test(c, builder);
    tcase_add_test(c, same_content_and_origin);
    tcase_add_test(c, pretty_text_as_json_c);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(object_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
