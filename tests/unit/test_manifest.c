/*
 * test_manifest.c - Check suite for manifest.c: YAML scalar resolution,
 * anchors and merge keys, document counting (empty documents included),
 * List expansion, the errors reported for bad documents and syntax errors
 * (with their lines), concatenated JSON values, and file names.
 */
#include "config.h"

#include <check.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fieldline.h"
#include "manifest.h"
#include "util.h"

static int parse(manifest_set *s, const char *file, const char *text)
{
    manifest_set_init(s);
    return manifest_parse(file, text, strlen(text), s);
}

static void expect_error(const manifest_set *s, size_t i, int line, int doc, const char *msg)
{
    ck_assert_msg(i < s->n_errors, "only %zu errors", s->n_errors);
    const manifest_error *e = &s->errors[i];
    ck_assert_msg(strcmp(e->message, msg) == 0, "error %zu is '%s', want '%s'", i, e->message, msg);
    ck_assert_msg(e->line == line, "error '%s' at line %d, want %d", e->message, e->line, line);
    ck_assert_int_eq(e->doc, doc);
}

static void expect_error_prefix(const manifest_set *s, size_t i, int line, int doc,
                                const char *prefix)
{
    ck_assert_msg(i < s->n_errors, "only %zu errors", s->n_errors);
    const manifest_error *e = &s->errors[i];
    ck_assert_msg(strncmp(e->message, prefix, strlen(prefix)) == 0,
                  "error '%s' does not start with '%s'", e->message, prefix);
    ck_assert_msg(e->line == line, "error '%s' at line %d, want %d", e->message, e->line, line);
    ck_assert_int_eq(e->doc, doc);
}

static void expect_object(const manifest_set *s, size_t i, const char *name, int doc, int item,
                          int line)
{
    ck_assert_msg(i < s->n_objects, "only %zu objects", s->n_objects);
    const trellis_object *o = s->objects[i];
    ck_assert_str_eq(o->name, name);
    ck_assert_msg(o->doc == doc && o->item == item && o->line == line,
                  "%s: doc %d item %d line %d, want %d %d %d", name, o->doc, o->item, o->line, doc,
                  item, line);
}

/* ---- YAML scalars --------------------------------------------------------- */

static const char *scalars = "apiVersion: v1\n"
                             "kind: Config\n"
                             "metadata:\n"
                             "  name: scalars\n"
                             "spec:\n"
                             "  n1: null\n"
                             "  n2: ~\n"
                             "  n3:\n"
                             "  n4: Null\n"
                             "  n5: NULL\n"
                             "  b1: true\n"
                             "  b2: True\n"
                             "  b3: FALSE\n"
                             "  i1: 42\n"
                             "  i2: -17\n"
                             "  i3: +5\n"
                             "  i4: 0x1F\n"
                             "  i5: 0o17\n"
                             "  i6: 012\n"
                             "  i7: 9223372036854775807\n"
                             "  f1: 1.5\n"
                             "  f2: 1e3\n"
                             "  f3: .inf\n"
                             "  f4: -.Inf\n"
                             "  f5: .nan\n"
                             "  f6: .5\n"
                             "  f7: 1.\n"
                             "  f8: -2.5E-3\n"
                             "  s1: \"42\"\n"
                             "  s2: '1.5'\n"
                             "  s3: |\n"
                             "    block\n"
                             "  s4: >-\n"
                             "    folded\n"
                             "    text\n"
                             "  s5: !!str 123\n"
                             "  s6: 1_000\n"
                             "  s7: 0b101\n"
                             "  s8: 2024-01-01\n"
                             "  s9: '12:30'\n"
                             "  s10: yes\n"
                             "  s11: on\n"
                             "  s12: 1e\n"
                             "  s13: 99999999999999999999\n"
                             "  s14: 0x8000000000000000\n"
                             "  s15: \"null\"\n"
                             "  s16: ! 12\n"
                             "  s17: nulls\n"
                             "  s18: \"\"\n"
                             "  t1: !!int \"7\"\n"
                             "  t2: !!float 3\n"
                             "  t3: !!bool \"true\"\n"
                             "  t4: !!null ''\n"
                             "  yes: key text\n"
                             "  12: numeric key\n";

static void expect_type(const trellis_object *o, const char *path, trellis_value_type t)
{
    const trellis_value *v = object_get(o, path);
    ck_assert_msg(value_type(v) == t, "%s has type %d, want %d", path, value_type(v), t);
}

static void expect_int(const trellis_object *o, const char *path, int64_t want)
{
    int64_t got;
    expect_type(o, path, TRELLIS_VALUE_INT);
    ck_assert_int_eq(value_int(object_get(o, path), &got), 0);
    ck_assert_msg(got == want, "%s = %lld", path, (long long)got);
}

static void expect_double(const trellis_object *o, const char *path, double want)
{
    double got;
    expect_type(o, path, TRELLIS_VALUE_DOUBLE);
    ck_assert_int_eq(value_double(object_get(o, path), &got), 0);
    ck_assert_msg(got == want || (isnan(want) && isnan(got)), "%s = %g", path, got);
}

static void expect_str(const trellis_object *o, const char *path, const char *want)
{
    expect_type(o, path, TRELLIS_VALUE_STRING);
    ck_assert_str_eq(value_string(object_get(o, path)), want);
}

static void expect_bool(const trellis_object *o, const char *path, int want)
{
    int got;
    expect_type(o, path, TRELLIS_VALUE_BOOL);
    ck_assert_int_eq(value_bool(object_get(o, path), &got), 0);
    ck_assert_int_eq(got, want);
}

static int has_key(const char *key, const trellis_value *v, void *ud)
{
    (void)v;
    return strcmp(key, ud) == 0;
}

START_TEST(yaml_scalars)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "s.yaml", scalars), 0);
    ck_assert_uint_eq(s.n_errors, 0);
    ck_assert_uint_eq(s.n_objects, 1);
    const trellis_object *o = s.objects[0];
    for (int i = 1; i <= 5; i++) {
        char p[32];
        snprintf(p, sizeof p, "spec.n%d", i);
        expect_type(o, p, TRELLIS_VALUE_NULL);
        /* present, but null */
        ck_assert(value_foreach(object_get(o, "spec"), has_key, p + 5));
    }
    expect_bool(o, "spec.b1", 1);
    expect_bool(o, "spec.b2", 1);
    expect_bool(o, "spec.b3", 0);
    expect_int(o, "spec.i1", 42);
    expect_int(o, "spec.i2", -17);
    expect_int(o, "spec.i3", 5);
    expect_int(o, "spec.i4", 31);
    expect_int(o, "spec.i5", 15);
    expect_int(o, "spec.i6", 12);
    expect_int(o, "spec.i7", INT64_MAX);
    expect_double(o, "spec.f1", 1.5);
    expect_double(o, "spec.f2", 1000);
    expect_double(o, "spec.f3", INFINITY);
    expect_double(o, "spec.f4", -INFINITY);
    expect_double(o, "spec.f5", NAN);
    expect_double(o, "spec.f6", 0.5);
    expect_double(o, "spec.f7", 1.0);
    expect_double(o, "spec.f8", -2.5e-3);
    /* the text of a number is what the file says */
    ck_assert_str_eq(value_string(object_get(o, "spec.f1")), "1.5");
    ck_assert_str_eq(value_string(object_get(o, "spec.f2")), "1e3");
    ck_assert_str_eq(value_string(object_get(o, "spec.i4")), "31");
    expect_str(o, "spec.s1", "42");
    expect_str(o, "spec.s2", "1.5");
    expect_str(o, "spec.s3", "block\n");
    expect_str(o, "spec.s4", "folded text");
    expect_str(o, "spec.s5", "123");
    expect_str(o, "spec.s6", "1_000");
    expect_str(o, "spec.s7", "0b101");
    expect_str(o, "spec.s8", "2024-01-01");
    expect_str(o, "spec.s9", "12:30");
    expect_str(o, "spec.s10", "yes");
    expect_str(o, "spec.s11", "on");
    expect_str(o, "spec.s12", "1e");
    expect_str(o, "spec.s13", "99999999999999999999");
    expect_str(o, "spec.s14", "0x8000000000000000");
    expect_str(o, "spec.s15", "null");
    expect_str(o, "spec.s16", "12");
    expect_str(o, "spec.s17", "nulls");
    expect_str(o, "spec.s18", "");
    expect_int(o, "spec.t1", 7);
    expect_double(o, "spec.t2", 3.0);
    expect_bool(o, "spec.t3", 1);
    expect_type(o, "spec.t4", TRELLIS_VALUE_NULL);
    expect_str(o, "spec.yes", "key text");
    expect_str(o, "spec[\"12\"]", "numeric key");
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_bad_tags)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "t.yaml",
                           "apiVersion: v1\nkind: K\nmetadata: {name: a}\n"
                           "x: !!int abc\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: b}\n"
                           "y: !!bool maybe\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: c}\n"
                           "z: !!float x\n"
                           "w: !!null 0\n"),
                     0);
    ck_assert_uint_eq(s.n_objects, 0);
    ck_assert_uint_eq(s.n_errors, 3);
    expect_error(&s, 0, 4, 0, "document 0: line 4: invalid !!int value 'abc'");
    expect_error(&s, 1, 9, 1, "document 1: line 9: invalid !!bool value 'maybe'");
    expect_error(&s, 2, 14, 2, "document 2: line 14: invalid !!float value 'x'");
    manifest_set_free(&s);
}
END_TEST

/* ---- anchors, aliases, merge keys ---------------------------------------- */

START_TEST(yaml_anchors_and_merge)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "a.yaml",
                           "apiVersion: v1\n"
                           "kind: Pod\n"
                           "metadata:\n"
                           "  name: &n shared-name\n"
                           "  labels: &labels\n"
                           "    app: web\n"
                           "    tier: front\n"
                           "  annotations: *labels\n"
                           "spec:\n"
                           "  who: *n\n"
                           "  base: &base {cpu: 1, mem: 2}\n"
                           "  merged:\n"
                           "    cpu: 5\n"
                           "    <<: *base\n"
                           "  multi:\n"
                           "    <<: [*base, {gpu: 1, cpu: 9}]\n"
                           "    x: 1\n"
                           "  inline:\n"
                           "    <<: {a: 1}\n"
                           "  &k keyname: v\n"
                           "  *k : again\n"),
                     0);
    ck_assert_uint_eq(s.n_errors, 1); /* the alias key repeats keyname */
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "a.yaml",
                           "apiVersion: v1\n"
                           "kind: Pod\n"
                           "metadata:\n"
                           "  name: &n shared-name\n"
                           "  labels: &labels\n"
                           "    app: web\n"
                           "    tier: front\n"
                           "  annotations: *labels\n"
                           "spec:\n"
                           "  who: *n\n"
                           "  base: &base {cpu: 1, mem: 2}\n"
                           "  merged:\n"
                           "    cpu: 5\n"
                           "    <<: *base\n"
                           "  multi:\n"
                           "    <<: [*base, {gpu: 1, cpu: 9}]\n"
                           "    x: 1\n"
                           "  inline:\n"
                           "    <<: {a: 1}\n"
                           "  &k keyname: v\n"
                           "  x: {*k : again}\n"),
                     0);
    ck_assert_uint_eq(s.n_errors, 0);
    const trellis_object *o = s.objects[0];
    ck_assert_str_eq(object_annotation(o, "tier"), "front");
    ck_assert_str_eq(object_label(o, "app"), "web");
    expect_str(o, "spec.who", "shared-name");
    expect_int(o, "spec.merged.cpu", 5);
    expect_int(o, "spec.merged.mem", 2);
    ck_assert_uint_eq(value_len(object_get(o, "spec.merged")), 2);
    expect_int(o, "spec.multi.cpu", 1); /* earlier merge sources win */
    expect_int(o, "spec.multi.gpu", 1);
    expect_int(o, "spec.multi.x", 1);
    ck_assert_uint_eq(value_len(object_get(o, "spec.multi")), 4);
    expect_int(o, "spec.inline.a", 1);
    ck_assert_ptr_null(object_get(o, "spec.inline[\"<<\"]"));
    expect_str(o, "spec.x.keyname", "again");
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_anchor_errors)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "e.yaml",
                           "apiVersion: v1\nkind: K\nmetadata: {name: a}\n"
                           "x: *nope\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: b}\n"
                           "x:\n  <<: 5\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: c}\n"
                           "? [a, b]\n: v\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: d}\n"
                           "self: &s [*s]\n"
                           "---\n"
                           "apiVersion: v1\nkind: K\nmetadata: {name: e}\n"),
                     0);
    ck_assert_uint_eq(s.n_objects, 1);
    expect_object(&s, 0, "e", 4, -1, 23);
    ck_assert_uint_eq(s.n_errors, 4);
    expect_error(&s, 0, 4, 0, "document 0: line 4: unknown anchor 'nope'");
    expect_error(&s, 1, 10, 1,
                 "document 1: line 10: merge key '<<' needs a map or a list of "
                 "maps");
    expect_error(&s, 2, 15, 2, "document 2: line 15: a map key must be a scalar");
    expect_error(&s, 3, 21, 3, "document 3: line 21: unknown anchor 's'");
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_alias_bomb_and_depth)
{
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "apiVersion: v1\nkind: K\nmetadata: {name: a}\n"
                "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 9; i++) {
        sb_printf(&b, "l%d: &l%d [", i, i);
        for (int j = 0; j < 10; j++)
            sb_printf(&b, "%s*l%d", j ? ", " : "", i - 1);
        sb_puts(&b, "]\n");
    }
    manifest_set s;
    ck_assert_int_eq(parse(&s, "bomb.yaml", b.s), 0);
    ck_assert_uint_eq(s.n_objects, 0);
    ck_assert_uint_eq(s.n_errors, 1);
    ck_assert_msg(strstr(s.errors[0].message, "once aliases are expanded"), "%s",
                  s.errors[0].message);
    manifest_set_free(&s);
    sb_free(&b);

    /* nesting far deeper than allowed: refused without deep recursion,
     * and without reading the rest of the document (libyaml's scanner
     * took over a minute for 100,000 flow levels): the parse goes on at
     * the next document, with its lines right */
    sb_init(&b);
    sb_puts(&b, "apiVersion: v1\nkind: K\nmetadata: {name: a}\ndeep: ");
    for (int i = 0; i < 100000; i++)
        sb_add(&b, "[", 1);
    for (int i = 0; i < 100000; i++)
        sb_add(&b, "]", 1);
    sb_puts(&b, "\nmore: [1,\n 2]\n---\napiVersion: v1\nkind: K\nmetadata: {name: b}\n"
                "---\nkind: K\nbad: [\n");
    ck_assert_int_eq(parse(&s, "deep.yaml", b.s), -1);
    ck_assert_uint_eq(s.n_objects, 1);
    ck_assert_str_eq(s.objects[0]->name, "b");
    ck_assert_int_eq(s.objects[0]->line, 8);
    ck_assert_uint_eq(s.n_errors, 2);
    ck_assert_msg(strstr(s.errors[0].message, "nesting deeper than"), "%s", s.errors[0].message);
    ck_assert_int_eq(s.errors[0].line, 4);
    ck_assert_msg(strstr(s.errors[1].message, "document 2: syntax error"), "%s",
                  s.errors[1].message);
    ck_assert_int_eq(s.errors[1].line, 14); /* the end of the text, where libyaml gives up */
    manifest_set_free(&s);
    sb_free(&b);
}
END_TEST

/* ---- documents ------------------------------------------------------------ */

START_TEST(yaml_documents_counted)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "m.yaml",
                           "# leading comment\n"   /* 1 */
                           "---\n"                 /* 2: doc 0, empty */
                           "---\n"                 /* 3: doc 1 */
                           "# only a comment\n"    /* 4 */
                           "---\n"                 /* 5: doc 2 */
                           "apiVersion: v1\n"      /* 6 */
                           "kind: Pod\n"           /* 7 */
                           "metadata: {name: a}\n" /* 8 */
                           "...\n"                 /* 9 */
                           "---\n"                 /* 10: doc 3 */
                           "null\n"                /* 11 */
                           "--- # doc 4\n"         /* 12 */
                           "\n"                    /* 13 */
                           "apiVersion: v1\n"      /* 14 */
                           "kind: Pod\n"           /* 15 */
                           "metadata:\n"           /* 16 */
                           "  name: b\n"           /* 17 */
                           "  namespace: ns\n"     /* 18 */
                           "---\n"                 /* 19: doc 5 */
                           "- not\n- a map\n"),    /* 20 */
                     0);
    ck_assert_uint_eq(s.n_objects, 2);
    expect_object(&s, 0, "a", 2, -1, 6);
    expect_object(&s, 1, "b", 4, -1, 14);
    ck_assert_str_eq(s.objects[0]->file, "m.yaml");
    ck_assert_str_eq(s.objects[1]->key, "ns/b");
    ck_assert_uint_eq(s.n_errors, 1);
    expect_error(&s, 0, 20, 5, "document 5: document is a list, expected a map");
    manifest_set_free(&s);

    /* nothing at all, or only comments: no documents, no errors */
    ck_assert_int_eq(parse(&s, "e.yaml", ""), 0);
    ck_assert_uint_eq(s.n_objects + s.n_errors, 0);
    manifest_set_free(&s);
    ck_assert_int_eq(parse(&s, "e.yaml", "# nothing\n\n# here\n"), 0);
    ck_assert_uint_eq(s.n_objects + s.n_errors, 0);
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_invalid_documents)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "bad.yaml",
                           "apiVersion: v1\n" /* 1 doc 0 */
                           "kind: Pod\n"
                           "metadata: {namespace: x}\n"
                           "---\n" /* 4 doc 1 */
                           "kind: Pod\n"
                           "metadata: {name: b}\n"
                           "---\n" /* 7 doc 2 */
                           "apiVersion: v1\n"
                           "kind: 12\n"
                           "metadata: {name: c}\n"
                           "---\n" /* 11 doc 3 */
                           "just a string\n"
                           "---\n" /* 13 doc 4 */
                           "apiVersion: v1\n"
                           "kind: Pod\n"
                           "metadata:\n"
                           "  name: d\n"
                           "  name: d2\n" /* 18 */
                           "---\n"
                           "apiVersion: v1\n" /* 20 doc 5 */
                           "kind: Pod\n"
                           "metadata: {name: ok}\n"),
                     0);
    ck_assert_uint_eq(s.n_objects, 1);
    expect_object(&s, 0, "ok", 5, -1, 20);
    ck_assert_uint_eq(s.n_errors, 5);
    expect_error(&s, 0, 1, 0, "document 0: missing metadata.name");
    expect_error(&s, 1, 5, 1, "document 1: missing apiVersion");
    expect_error(&s, 2, 8, 2, "document 2: kind is not a string");
    expect_error(&s, 3, 12, 3, "document 3: document is a string, expected a map");
    expect_error(&s, 4, 18, 4, "document 4: line 18: duplicate key 'name'");
    ck_assert_str_eq(s.errors[0].file, "bad.yaml");
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_lists)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "l.yaml",
                           "apiVersion: v1\n" /* 1 */
                           "kind: List\n"
                           "items:\n"
                           "- apiVersion: v1\n" /* 4 item 0 */
                           "  kind: Pod\n"
                           "  metadata:\n"
                           "    name: a\n"
                           "- kind: Pod\n" /* 8 item 1 */
                           "  metadata:\n"
                           "    name: b\n"
                           "-\n"                /* 11 item 2 */
                           "  apiVersion: v1\n" /* 12 */
                           "  kind: [Pod]\n"
                           "  metadata: {name: c}\n"
                           "- {apiVersion: v1, kind: Pod, metadata: {name: d}}\n"
                           "---\n" /* 16 doc 1 */
                           "apiVersion: v1\n"
                           "kind: PodList\n"
                           "items:\n"
                           "  - apiVersion: v1\n" /* 20 */
                           "    kind: Pod\n"
                           "    metadata: {name: e}\n"
                           "---\n"            /* doc 2: not a List */
                           "apiVersion: v1\n" /* 24 */
                           "kind: ConfigMapList\n"
                           "metadata: {name: cml}\n"
                           "---\n" /* doc 3: empty List */
                           "apiVersion: v1\n"
                           "kind: List\n"
                           "---\n"            /* doc 4 */
                           "apiVersion: v1\n" /* 31 */
                           "kind: List\n"
                           "items: 5\n"),
                     0);
    ck_assert_uint_eq(s.n_objects, 4);
    expect_object(&s, 0, "a", 0, 0, 4);
    expect_object(&s, 1, "d", 0, 3, 15);
    expect_object(&s, 2, "e", 1, 0, 20);
    expect_object(&s, 3, "cml", 2, -1, 24);
    ck_assert_uint_eq(s.n_errors, 3);
    expect_error(&s, 0, 8, 0, "document 0, item 1: missing apiVersion");
    /* an item on the line after its dash starts where its content does */
    expect_error(&s, 1, 12, 0, "document 0, item 2: kind is not a string");
    expect_error(&s, 2, 31, 4, "document 4: items is not a list");
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_syntax_errors)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "x.yaml",
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
                           "---\n"
                           "apiVersion: v1\n"
                           "kind: Pod\n"
                           "metadata:\n"
                           "  name: c\n"
                           " bad: indentation\n" /* 13 */
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: d}\n"),
                     -1);
    /* the documents after the broken one are read too */
    ck_assert_uint_eq(s.n_objects, 3);
    expect_object(&s, 0, "a", 0, -1, 1);
    expect_object(&s, 1, "b", 1, -1, 5);
    expect_object(&s, 2, "d", 3, -1, 15);
    ck_assert_uint_eq(s.n_errors, 1);
    expect_error_prefix(&s, 0, 13, 2, "document 2: syntax error: ");
    manifest_set_free(&s);

    /* two broken documents among good ones: each reported, each good one
     * read, with its document number and line; a flow collection left
     * open is found at the next "---", which starts the next document */
    ck_assert_int_eq(parse(&s, "x.yaml",
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: b\n" /* 5-7 */
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n" /* 9 */
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n \tx: [\n"
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: e}\n"), /* 19 */
                     -1);
    ck_assert_uint_eq(s.n_objects, 3);
    expect_object(&s, 0, "a", 0, -1, 1);
    expect_object(&s, 1, "c", 2, -1, 9);
    expect_object(&s, 2, "e", 4, -1, 19);
    ck_assert_uint_eq(s.n_errors, 2);
    ck_assert_int_eq(s.errors[0].doc, 1);
    ck_assert_msg(strstr(s.errors[0].message, "document 1: syntax error: "), "%s",
                  s.errors[0].message);
    ck_assert_int_eq(s.errors[1].doc, 3);
    ck_assert_msg(strstr(s.errors[1].message, "document 3: syntax error: "), "%s",
                  s.errors[1].message);
    manifest_set_free(&s);

    /* a broken "---" line itself: the next document is still read */
    ck_assert_int_eq(parse(&s, "x.yaml",
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                           "--- [\n"
                           "---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"),
                     -1);
    ck_assert_uint_eq(s.n_objects, 2);
    expect_object(&s, 1, "b", 2, -1, 6);
    ck_assert_uint_eq(s.n_errors, 1);
    ck_assert_int_eq(s.errors[0].doc, 1);
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "x.yaml", "a: [1, 2\nb: 3\n"), -1);
    ck_assert_uint_eq(s.n_objects, 0);
    expect_error(&s, 0, 2, 0,
                 "document 0: syntax error: did not find expected ',' or ']' at "
                 "column 2 (while parsing a flow sequence at line 1)");
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "x.yaml", "a: 1\n\tb: 2\n"), -1);
    expect_error_prefix(&s, 0, 2, 0, "document 0: syntax error: ");
    manifest_set_free(&s);

    /* not UTF-8 */
    ck_assert_int_eq(parse(&s, "x.yaml", "a: 1\nb: \"\xff\"\n"), -1);
    expect_error_prefix(&s, 0, 2, 0, "document 0: syntax error: invalid");
    manifest_set_free(&s);

    /* an error between documents is counted for the next one */
    ck_assert_int_eq(parse(&s, "x.yaml",
                           "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                           "...\n"
                           "%BAD directive\n"),
                     -1);
    ck_assert_uint_eq(s.n_objects, 1);
    ck_assert_uint_eq(s.n_errors, 1);
    ck_assert_int_eq(s.errors[0].doc, 1);
    manifest_set_free(&s);
}
END_TEST

START_TEST(yaml_crlf_and_bom)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "c.yaml",
                           "\xef\xbb\xbf"
                           "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n"
                           "  name: a\r\nspec:\r\n  s: |\r\n    x\r\n---\r\n"
                           "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n"
                           "  name: b\r\n"),
                     0);
    ck_assert_uint_eq(s.n_objects, 2);
    expect_object(&s, 1, "b", 1, -1, 9);
    expect_str(s.objects[0], "spec.s", "x\n");
    manifest_set_free(&s);
}
END_TEST

/* ---- JSON ----------------------------------------------------------------- */

START_TEST(json_values)
{
    manifest_set s;
    ck_assert_int_eq(
        parse(&s, "p.json",
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},"
              "\"spec\":{\"n\":1.50,\"i\":7,\"b\":false}}\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}"
              " [1]\n"
              "  {\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [\n"
              "     {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"}},\n"
              "     {\"apiVersion\":\"v1\",\"kind\":\"Pod\"},\n"
              "\n"
              "     {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"e\"}}\n"
              "  ]}\n"
              "null\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"f\"}}"
              "12"),
        0);
    ck_assert_uint_eq(s.n_objects, 5);
    expect_object(&s, 0, "a", 0, -1, 1);
    expect_object(&s, 1, "b", 1, -1, 2);
    expect_object(&s, 2, "c", 3, 0, 4);
    expect_object(&s, 3, "e", 3, 2, 7);
    expect_object(&s, 4, "f", 5, -1, 10);
    expect_double(s.objects[0], "spec.n", 1.5);
    ck_assert_str_eq(value_string(object_get(s.objects[0], "spec.n")), "1.50");
    expect_int(s.objects[0], "spec.i", 7);
    expect_bool(s.objects[0], "spec.b", 0);
    ck_assert_uint_eq(s.n_errors, 3);
    expect_error(&s, 0, 2, 2, "document 2: document is a list, expected a map");
    expect_error(&s, 1, 5, 3, "document 3, item 1: missing metadata.name");
    expect_error(&s, 2, 10, 6, "document 6: document is a number, expected a map");
    manifest_set_free(&s);
}
END_TEST

START_TEST(json_errors)
{
    manifest_set s;
    ck_assert_int_eq(
        parse(&s, "p.json",
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n"
              "{\"a\": [1,}\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}\n"),
        -1);
    /* the document after the broken one is read too */
    ck_assert_uint_eq(s.n_objects, 2);
    ck_assert_str_eq(s.objects[1]->name, "b");
    ck_assert_int_eq(s.objects[1]->doc, 2);
    ck_assert_int_eq(s.objects[1]->line, 3);
    ck_assert_uint_eq(s.n_errors, 1);
    expect_error_prefix(&s, 0, 2, 1, "document 1: syntax error: ");
    ck_assert_msg(strstr(s.errors[0].message, "at line 2, column 10"), "%s", s.errors[0].message);
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "p.json", "{\"a\":\n  1,\n"), -1);
    expect_error(&s, 0, 3, 0,
                 "document 0: syntax error: unexpected end of data at line 3, "
                 "column 1");
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "p.json", "{\"a\": 1} // comment\n"), -1);
    ck_assert_uint_eq(s.n_errors, 2); /* the map, then the comment */
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "p.json", "{\"a\": \"\xff\"}"), -1);
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "p.json", " \n\t"), 0);
    ck_assert_uint_eq(s.n_objects + s.n_errors, 0);
    manifest_set_free(&s);

    ck_assert_int_eq(parse(&s, "p.json",
                           "\xef\xbb\xbf{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                           "\"metadata\":{\"name\":\"a\"}}"),
                     0);
    ck_assert_uint_eq(s.n_objects, 1);
    manifest_set_free(&s);
}
END_TEST

/* A JSON stream written as kubectl writes one (pretty-printed documents
 * one after the other) with a broken document in the middle, a stream of
 * one document per line with a brace missing, and a List (kubectl get -o
 * json) with a broken item: every document and item that can be read is
 * read, with its document, item and line, and each one that cannot is
 * reported with its line. */
START_TEST(json_recovery)
{
    manifest_set s;
    ck_assert_int_eq(parse(&s, "s.json",
                           "{\n"                                   /* 1 */
                           "  \"apiVersion\": \"v1\",\n"           /* 2 */
                           "  \"kind\": \"Pod\",\n"                /* 3 */
                           "  \"metadata\": {\"name\": \"a\"}\n"   /* 4 */
                           "}\n"                                   /* 5 */
                           "{\n"                                   /* 6 */
                           "  \"apiVersion\": \"v1\",\n"           /* 7 */
                           "  \"kind\": \"Pod\",\n"                /* 8 */
                           "  \"metadata\": {\"name\": \"b\",},\n" /* 9: trailing comma */
                           "  \"spec\": {}\n"                      /* 10 */
                           "}\n"                                   /* 11 */
                           "{\n"                                   /* 12 */
                           "  \"apiVersion\": \"v1\",\n"           /* 13 */
                           "  \"kind\": \"Pod\",\n"                /* 14 */
                           "  \"metadata\": {\"name\": \"c\"}\n"   /* 15 */
                           "}\n"),                                 /* 16 */
                     -1);
    ck_assert_uint_eq(s.n_objects, 2);
    ck_assert_str_eq(s.objects[0]->name, "a");
    ck_assert_str_eq(s.objects[1]->name, "c");
    ck_assert_int_eq(s.objects[1]->doc, 2);
    ck_assert_int_eq(s.objects[1]->line, 12);
    ck_assert_uint_eq(s.n_errors, 1);
    expect_error_prefix(&s, 0, 9, 1, "document 1: syntax error: ");
    manifest_set_free(&s);

    ck_assert_int_eq(
        parse(&s, "l.json",
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"}}\n"
              "[1,\n"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"d\"}}\n"),
        -1);
    ck_assert_uint_eq(s.n_objects, 3);
    ck_assert_str_eq(s.objects[1]->name, "c");
    ck_assert_int_eq(s.objects[1]->doc, 2);
    ck_assert_str_eq(s.objects[2]->name, "d");
    ck_assert_int_eq(s.objects[2]->doc, 4);
    ck_assert_int_eq(s.objects[2]->line, 5);
    ck_assert_uint_eq(s.n_errors, 2);
    /* the missing brace shows where the next document starts */
    expect_error_prefix(&s, 0, 3, 1, "document 1: syntax error: ");
    /* a document left open: the error at the end, the next one read */
    expect_error_prefix(&s, 1, 6, 3, "document 3: syntax error: ");
    manifest_set_free(&s);

    static const char list[] = "{\n"                                             /* 1 */
                               "    \"apiVersion\": \"v1\",\n"                   /* 2 */
                               "    \"items\": [\n"                              /* 3 */
                               "        {\n"                                     /* 4 */
                               "            \"apiVersion\": \"v1\",\n"           /* 5 */
                               "            \"kind\": \"Pod\",\n"                /* 6 */
                               "            \"metadata\": {\"name\": \"i0\"}\n"  /* 7 */
                               "        },\n"                                    /* 8 */
                               "        {\n"                                     /* 9 */
                               "            \"apiVersion\": \"v1\",\n"           /* 10 */
                               "            \"kind\": \"Pod\",\n"                /* 11 */
                               "            \"metadata\": {\"name\": \"i1\"},\n" /* 12 */
                               "            \"spec\": {\"priority\": 1 2}\n"     /* 13 */
                               "        },\n"                                    /* 14 */
                               "        {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": "
                               "{\"name\": \"i2\"}},\n" /* 15 */
                               "        {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": "
                               "{\"name\": \"i3\"\n" /* 16 */
                               "        ,\n"         /* 17 */
                               "        {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": "
                               "{\"name\": \"i4\"}}\n"                           /* 18 */
                               "    ],\n"                                        /* 19 */
                               "    \"kind\": \"List\",\n"                       /* 20 */
                               "    \"metadata\": {\"resourceVersion\": \"\"}\n" /* 21 */
                               "}\n";                                            /* 22 */
    ck_assert_int_eq(parse(&s, "list.json", list), -1);
    ck_assert_uint_eq(s.n_objects, 2);
    ck_assert_str_eq(s.objects[0]->name, "i0");
    ck_assert_int_eq(s.objects[0]->item, 0);
    ck_assert_int_eq(s.objects[0]->line, 4);
    ck_assert_str_eq(s.objects[1]->name, "i2");
    ck_assert_int_eq(s.objects[1]->doc, 0);
    ck_assert_int_eq(s.objects[1]->item, 2);
    ck_assert_int_eq(s.objects[1]->line, 15);
    /* i3 lacks a brace: it runs on to the end of the list and swallows i4 */
    ck_assert_uint_eq(s.n_errors, 2);
    expect_error_prefix(&s, 0, 13, 0, "document 0, item 1: syntax error: ");
    expect_error_prefix(&s, 1, 18, 0, "document 0, item 3: syntax error: ");
    manifest_set_free(&s);

    /* a List whose items all read, broken after them: the document's error */
    ck_assert_int_eq(parse(&s, "list.json",
                           "{\"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": "
                           "\"Pod\", \"metadata\": "
                           "{\"name\": \"x\"}}], \"metadata\": {]}\n"),
                     -1);
    ck_assert_uint_eq(s.n_objects, 1);
    ck_assert_uint_eq(s.n_errors, 1);
    expect_error_prefix(&s, 0, 1, 0, "document 0: syntax error: ");
    manifest_set_free(&s);
}
END_TEST

/* ---- names and files ------------------------------------------------------ */

START_TEST(manifest_names)
{
    ck_assert(manifest_is_manifest_name("pod.yaml"));
    ck_assert(manifest_is_manifest_name("pod.yml"));
    ck_assert(manifest_is_manifest_name("pod.json"));
    ck_assert(manifest_is_manifest_name("dir/sub/pod.yaml"));
    ck_assert(manifest_is_manifest_name(".hidden/pod.yaml"));
    ck_assert(!manifest_is_manifest_name(".pod.yaml"));
    ck_assert(!manifest_is_manifest_name("dir/.pod.yaml.tmp.ABC123"));
    ck_assert(!manifest_is_manifest_name("dir/.pod.yaml"));
    ck_assert(!manifest_is_manifest_name("pod.yaml~"));
    ck_assert(!manifest_is_manifest_name("pod.txt"));
    ck_assert(!manifest_is_manifest_name("yaml"));
    ck_assert(!manifest_is_manifest_name(""));
    ck_assert(!manifest_is_manifest_name("dir/"));
    ck_assert(!manifest_is_manifest_name(NULL));
}
END_TEST

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

/* A NUL inside a name or any string was cut short silently ("a\u0000b"
 * read as "a"): the document is refused with its file and line. */
START_TEST(nul_in_strings_refused)
{
    manifest_set s;
    const char *json = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n"
                       " \"metadata\": {\"name\": \"a\\u0000b\"}}\n";
    parse(&s, "n.json", json);
    ck_assert_uint_eq(s.n_objects, 0);
    ck_assert_uint_eq(s.n_errors, 1);
    ck_assert_msg(strstr(s.errors[0].message, "NUL character"), "%s", s.errors[0].message);
    ck_assert_int_eq(s.errors[0].line, 1);
    manifest_set_free(&s);
    parse(&s, "n.yaml",
          "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"c\\0d\"\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {\"k\\x00ey\": 1}\n");
    ck_assert_uint_eq(s.n_objects, 1);
    ck_assert_str_eq(s.objects[0]->name, "ok");
    ck_assert_uint_eq(s.n_errors, 2);
    ck_assert_msg(strstr(s.errors[0].message, "NUL character"), "%s", s.errors[0].message);
    ck_assert_int_eq(s.errors[0].line, 5);
    ck_assert_msg(strstr(s.errors[1].message, "NUL character"), "%s", s.errors[1].message);
    manifest_set_free(&s);
}
END_TEST

START_TEST(load_files)
{
    char dir[] = "/tmp/trellis-manifest-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = xasprintf("%s/pods.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", f);
    fclose(f);
    manifest_set s;
    manifest_set_init(&s);
    ck_assert_int_eq(manifest_load_file(path, &s), 0);
    ck_assert_uint_eq(s.n_objects, 1);
    ck_assert_str_eq(s.objects[0]->file, path);
    char *missing = xasprintf("%s/missing.yaml", dir);
    ck_assert_int_eq(manifest_load_file(missing, &s), -1);
    ck_assert_uint_eq(s.n_errors, 1);
    ck_assert_str_eq(s.errors[0].file, missing);
    ck_assert_msg(strstr(s.errors[0].message, missing), "%s", s.errors[0].message);
    ck_assert_int_eq(s.errors[0].line, 0);
    manifest_set_free(&s);
    /* a set can be freed twice and reused */
    manifest_set_free(&s);
    free(path);
    free(missing);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* fieldline_in_text: a member's line in a document's text, for messages about
 * a document argument. */
START_TEST(member_lines)
{
    static const char yaml[] = "# a comment\n"
                               "apiVersion: v1\n"
                               "schedulers:\n"
                               "  backupBucket: {shoot: 1}\n"
                               "  shoot:\n"
                               "    list: [a, {shoot: 2}]\n"
                               "    ? {complex: key}\n"
                               "    : value\n"
                               "    strategy: x\n";
    size_t n = strlen(yaml);
    const char *p1[] = {"schedulers", "shoot", "strategy"};
    const char *p2[] = {"schedulers", "backupBucket", "shoot"};
    const char *p3[] = {"schedulers"};
    const char *p4[] = {"shoot"};
    const char *p5[] = {"schedulers", "shoot", "missing"};
    ck_assert_int_eq(fieldline_in_text(yaml, n, p1, 3), 9);
    ck_assert_int_eq(fieldline_in_text(yaml, n, p2, 3), 4);
    ck_assert_int_eq(fieldline_in_text(yaml, n, p3, 1), 3);
    /* a key of that name elsewhere is not the one at the root */
    ck_assert_int_eq(fieldline_in_text(yaml, n, p4, 1), 0);
    ck_assert_int_eq(fieldline_in_text(yaml, n, p5, 3), 0);
    ck_assert_int_eq(fieldline_in_text(yaml, n, NULL, 0), 2);
    /* JSON is read the same way */
    static const char json[] = "{\n  \"a\": {\n    \"b\": 1\n  }\n}\n";
    const char *pj[] = {"a", "b"};
    ck_assert_int_eq(fieldline_in_text(json, strlen(json), pj, 2), 3);
    /* what a syntax error cuts off has no line; what precedes it has */
    ck_assert_int_eq(fieldline_in_text("x: [\na: 1\n", 10, pj, 1), 0);
    ck_assert_int_eq(fieldline_in_text("a: [", 4, pj, 1), 1);
    ck_assert_int_eq(fieldline_in_text(NULL, 0, pj, 1), 0);
    /* a key path deeper than any asked for matches nothing */
    const char *deep[65];
    for (size_t i = 0; i < 65; i++)
        deep[i] = "a";
    ck_assert_int_eq(fieldline_in_text(json, strlen(json), deep, 65), 0);
}
END_TEST

/* fieldline_find: the line of a field in document doc (and List item) */
START_TEST(field_lines)
{
    char dir[] = "/tmp/trellis-fieldline.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = xasprintf("%s/f.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n" /* 1-3 */
          "---\n"
          "apiVersion: v1\nkind: Pod\n"                                   /* 5-6 */
          "metadata:\n  name: b\n  labels:\n    zone.x/y: z\n"            /* 7-10 */
          "spec:\n  skip: {a: [1, {b: 2}]}\n  priority: high\n"           /* 11-13 */
          "  containers:\n  - name: c\n    resources:\n      requests:\n" /* 14-17 */
          "        cpu:\n        - 1\n"                                   /* 18-19 */
          "---\n"
          "apiVersion: v1\nkind: List\nitems:\n"                       /* 21-23 */
          "- {apiVersion: v1, kind: Pod, metadata: {name: c}}\n"       /* 24 */
          "- apiVersion: v1\n  kind: Pod\n  spec:\n    priority: x\n", /* 25-28 */
          f);
    fclose(f);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.priority"), 13);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.containers[0].resources.requests.cpu"), 18);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.containers[0].resources.requests.cpu[0]"),
                     19);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "metadata.labels[\"zone.x/y\"]"), 10);
    ck_assert_int_eq(fieldline_find(path, 0, -1, "metadata.name"), 3);
    ck_assert_int_eq(fieldline_find(path, 2, 1, "spec.priority"), 28);
    ck_assert_int_eq(fieldline_find(path, 2, 0, "metadata.name"), 24);
    /* absent: 0, and the caller keeps the document's line */
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.nodeSelector"), 0);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.containers[1]"), 0);
    ck_assert_int_eq(fieldline_find(path, 5, -1, "spec.priority"), 0);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec..x"), 0);
    ck_assert_int_eq(fieldline_find("/nonexistent/f.yaml", 0, -1, "a"), 0);
    /* a syntax error in an earlier document: the documents after it are
     * numbered and found as manifest_parse numbers and reads them */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: v1\nkind: Pod\nmetadata: {name: a\n" /* 1-3: unclosed */
          "---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  priority: high\n", /* 5-9 */
          f);
    fclose(f);
    ck_assert_int_eq(fieldline_find(path, 1, -1, "spec.priority"), 9);
    /* the field's own value broken: its key still has a line */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: v1\nkind: Pod\nspec:\n  priority: [high\n", f);
    fclose(f);
    ck_assert_int_eq(fieldline_find(path, 0, -1, "spec.priority"), 4);
    ck_assert_int_eq(manifest_doc_start("a: [\n---\nb: 1\n", 14, 1), 5);
    ck_assert_int_eq(manifest_doc_start("a: 1\n", 5, 1), -1);
    unlink(path);
    rmdir(dir);
    free(path);
}
END_TEST

static Suite *manifest_suite(void)
{
    Suite *s = suite_create("manifest");
    TCase *y = tcase_create("yaml");
    tcase_add_test(y, yaml_scalars);
    tcase_add_test(y, yaml_bad_tags);
    tcase_add_test(y, yaml_anchors_and_merge);
    tcase_add_test(y, yaml_anchor_errors);
    tcase_add_test(y, yaml_alias_bomb_and_depth);
    tcase_add_test(y, yaml_documents_counted);
    tcase_add_test(y, yaml_invalid_documents);
    tcase_add_test(y, yaml_lists);
    tcase_add_test(y, yaml_syntax_errors);
    tcase_add_test(y, yaml_crlf_and_bom);
    suite_add_tcase(s, y);
    TCase *j = tcase_create("json");
    tcase_add_test(j, json_values);
    tcase_add_test(j, json_errors);
    tcase_add_test(j, json_recovery);
    suite_add_tcase(s, j);
    TCase *f = tcase_create("files");
    tcase_add_test(f, manifest_names);
    tcase_add_test(f, nul_in_strings_refused);
    tcase_add_test(f, load_files);
    tcase_add_test(f, member_lines);
    tcase_add_test(f, field_lines);
    suite_add_tcase(s, f);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(manifest_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
