/*
 * test_writeback.c - Check suite for writeback.c: format-preserving edits of
 * YAML and JSON manifests (each case compares the whole output text), the
 * order in which several edits combine, refusals, robustness against
 * truncated input, and the atomic file replacement.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "util.h"
#include "atomicfile.h"
#include "writeback.h"

/* Apply edits and compare the complete result with `want`. */
static void expect_edits(const char *in, int json, const wb_edit *e, size_t n, const char *want)
{
    char err[512] = "";
    char *out = NULL;
    size_t outlen = 0;
    int rc = writeback_apply(in, strlen(in), json, e, n, &out, &outlen, err, sizeof err);
    ck_assert_msg(rc == 0, "writeback_apply failed: %s", err);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(outlen, strlen(out));
    ck_assert_msg(strcmp(out, want) == 0, "got:\n[%s]\nwant:\n[%s]", out, want);
    free(out);
}

static void expect_set(const char *in, const char *path, const char *value, const char *want)
{
    wb_edit e = {0, -1, path, value, 0};
    expect_edits(in, 0, &e, 1, want);
}

/* A raw edit (value is a JSON text) of document 0. */
static void expect_raw(const char *in, int json, const char *path, const char *value,
                       const char *want)
{
    wb_edit e = {0, -1, path, value, 1};
    expect_edits(in, json, &e, 1, want);
}

static void expect_fail(const char *in, int json, const wb_edit *e, size_t n, const char *needle)
{
    char err[512] = "";
    char *out = (char *)"sentinel";
    int rc = writeback_apply(in, strlen(in), json, e, n, &out, NULL, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
}

/* ---- YAML: setting an existing field ----------------------------------- */

START_TEST(yaml_replace_existing)
{
    expect_set("apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: a # the name\n"
               "spec:\n"
               "  nodeName: old  # set by the scheduler\n"
               "  containers:\n"
               "  - name: c\n",
               "spec.nodeName", "node-1",
               "apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: a # the name\n"
               "spec:\n"
               "  nodeName: node-1  # set by the scheduler\n"
               "  containers:\n"
               "  - name: c\n");
}
END_TEST

START_TEST(yaml_replace_empty_forms)
{
    expect_set("spec:\n  nodeName: \"\"\n  x: 1\n", "spec.nodeName", "n1",
               "spec:\n  nodeName: n1\n  x: 1\n");
    expect_set("spec:\n  nodeName: ''\n", "spec.nodeName", "n1", "spec:\n  nodeName: n1\n");
    expect_set("spec:\n  nodeName:\n  x: 1\n", "spec.nodeName", "n1",
               "spec:\n  nodeName: n1\n  x: 1\n");
    expect_set("spec:\n  nodeName: # pick one\n  x: 1\n", "spec.nodeName", "n1",
               "spec:\n  nodeName: n1 # pick one\n  x: 1\n");
    expect_set("spec:\n  seedName: null\n", "spec.seedName", "s", "spec:\n  seedName: s\n");
    expect_set("spec:\n  seedName: ~\n", "spec.seedName", "s", "spec:\n  seedName: s\n");
    /* the empty value is the last thing in the file, without a break */
    expect_set("spec:\n  nodeName:", "spec.nodeName", "n1", "spec:\n  nodeName: n1");
}
END_TEST

START_TEST(yaml_replace_styles)
{
    expect_set("a:\n  b: \"quoted # not a comment\" # comment\n", "a.b", "v",
               "a:\n  b: v # comment\n");
    expect_set("a:\n  b: |\n    line one\n    line two\n  c: 1\n", "a.b", "v",
               "a:\n  b: v\n  c: 1\n");
    expect_set("a:\n  b: multi\n    line plain\n  c: 1\n", "a.b", "v", "a:\n  b: v\n  c: 1\n");
    expect_set("a:\n  b: &anch old\n  c: 1\n", "a.b", "v", "a:\n  b: &anch v\n  c: 1\n");
    expect_set("a:\n  b: !!int 5\n", "a.b", "v", "a:\n  b: v\n");
    expect_set("a: {b: old, c: 1}\n", "a.b", "v", "a: {b: v, c: 1}\n");
    expect_set("\"a\":\n  'b': old\n", "a.b", "v", "\"a\":\n  'b': v\n");
}
END_TEST

START_TEST(yaml_value_quoting)
{
    const char *in = "spec:\n  nodeName: old\n";
    expect_set(in, "spec.nodeName", "node-1.example.com_x/y",
               "spec:\n  nodeName: node-1.example.com_x/y\n");
    expect_set(in, "spec.nodeName", "true", "spec:\n  nodeName: \"true\"\n");
    expect_set(in, "spec.nodeName", "No", "spec:\n  nodeName: \"No\"\n");
    expect_set(in, "spec.nodeName", "y", "spec:\n  nodeName: \"y\"\n");
    expect_set(in, "spec.nodeName", "n", "spec:\n  nodeName: \"n\"\n");
    expect_set(in, "spec.nodeName", "null", "spec:\n  nodeName: \"null\"\n");
    expect_set(in, "spec.nodeName", "123", "spec:\n  nodeName: \"123\"\n");
    expect_set(in, "spec.nodeName", "1e3", "spec:\n  nodeName: \"1e3\"\n");
    expect_set(in, "spec.nodeName", "0x1F", "spec:\n  nodeName: \"0x1F\"\n");
    expect_set(in, "spec.nodeName", "2024-01-02", "spec:\n  nodeName: \"2024-01-02\"\n");
    expect_set(in, "spec.nodeName", "10gb", "spec:\n  nodeName: 10gb\n");
    expect_set(in, "spec.nodeName", "", "spec:\n  nodeName: \"\"\n");
    expect_set(in, "spec.nodeName", "a b", "spec:\n  nodeName: \"a b\"\n");
    expect_set(in, "spec.nodeName", "-x", "spec:\n  nodeName: \"-x\"\n");
    expect_set(in, "spec.nodeName", "a: b #c", "spec:\n  nodeName: \"a: b #c\"\n");
    expect_set(in, "spec.nodeName", "q\"b\\s\n\t\x01",
               "spec:\n  nodeName: \"q\\\"b\\\\s\\n\\t\\x01\"\n");
    expect_set(in, "spec.nodeName",
               "n\xc3\xb6"
               "de",
               "spec:\n  nodeName: \"n\xc3\xb6"
               "de\"\n");
}
END_TEST

/* ---- YAML: adding a field ---------------------------------------------- */

START_TEST(yaml_insert_after_nested_block_and_before_document)
{
    const char *in = "apiVersion: v1\n"
                     "kind: Pod\n"
                     "metadata:\n"
                     "  name: a\n"
                     "spec:\n"
                     "  containers:\n"
                     "  - name: c\n"
                     "    resources:\n"
                     "      requests:\n"
                     "        cpu: 1 # one\n"
                     "---\n"
                     "apiVersion: v1\n"
                     "kind: Pod\n"
                     "metadata:\n"
                     "  name: b\n";
    expect_set(in, "spec.nodeName", "n1",
               "apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: a\n"
               "spec:\n"
               "  containers:\n"
               "  - name: c\n"
               "    resources:\n"
               "      requests:\n"
               "        cpu: 1 # one\n"
               "  nodeName: n1\n"
               "---\n"
               "apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: b\n");
}
END_TEST

START_TEST(yaml_insert_after_block_scalar)
{
    expect_set("spec:\n"
               "  script: |\n"
               "    echo hi\n"
               "\n"
               "other: 1\n",
               "spec.nodeName", "n1",
               "spec:\n"
               "  script: |\n"
               "    echo hi\n"
               "  nodeName: n1\n"
               "\n"
               "other: 1\n");
    /* keep chomping: the blank lines belong to the scalar */
    expect_set("spec:\n"
               "  script: |+\n"
               "    echo hi\n"
               "\n"
               "other: 1\n",
               "spec.nodeName", "n1",
               "spec:\n"
               "  script: |+\n"
               "    echo hi\n"
               "\n"
               "  nodeName: n1\n"
               "other: 1\n");
    expect_set("spec:\n"
               "  list:\n"
               "  - a\n"
               "  - b # last\n"
               "# about other\n"
               "other: 1\n",
               "spec.nodeName", "n1",
               "spec:\n"
               "  list:\n"
               "  - a\n"
               "  - b # last\n"
               "  nodeName: n1\n"
               "# about other\n"
               "other: 1\n");
}
END_TEST

START_TEST(yaml_insert_missing_parent)
{
    expect_set("apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: a\n"
               "  labels:\n"
               "    app: x\n"
               "\n"
               "# trailing comment\n",
               "spec.nodeName", "n1",
               "apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: a\n"
               "  labels:\n"
               "    app: x\n"
               "spec:\n"
               "  nodeName: n1\n"
               "\n"
               "# trailing comment\n");
    /* two levels missing, in a file indented by four */
    expect_set("metadata:\n"
               "    name: a\n",
               "spec.placement.nodeName", "n1",
               "metadata:\n"
               "    name: a\n"
               "spec:\n"
               "    placement:\n"
               "        nodeName: n1\n");
    /* no final line break */
    expect_set("kind: Pod\nmetadata:\n  name: a", "spec.nodeName", "n1",
               "kind: Pod\nmetadata:\n  name: a\nspec:\n  nodeName: n1");
}
END_TEST

START_TEST(yaml_insert_null_parent)
{
    expect_set("spec:\nother: 1\n", "spec.nodeName", "n1", "spec:\n  nodeName: n1\nother: 1\n");
    expect_set("spec: # later\nother: 1\n", "spec.nodeName", "n1",
               "spec: # later\n  nodeName: n1\nother: 1\n");
    expect_set("spec: null # later\nother: 1\n", "spec.nodeName", "n1",
               "spec: # later\n  nodeName: n1\nother: 1\n");
    expect_set("spec: ~\n", "spec.nodeName", "n1", "spec:\n  nodeName: n1\n");
    expect_set("spec: {}\n", "spec.nodeName", "n1", "spec: {nodeName: n1}\n");
    expect_set("spec: {}\n", "spec.a.b", "n1", "spec: {a: {b: n1}}\n");
    expect_set("metadata:\n  name: a\nspec:\n", "spec.template.nodeName", "nn",
               "metadata:\n  name: a\nspec:\n  template:\n    nodeName: nn\n");
}
END_TEST

START_TEST(yaml_insert_flow)
{
    expect_set("spec: {schedulerName: x}\n", "spec.nodeName", "n1",
               "spec: {schedulerName: x, nodeName: n1}\n");
    expect_set("spec: { schedulerName: x }\n", "spec.nodeName", "n1",
               "spec: { schedulerName: x, nodeName: n1 }\n");
    expect_set("{kind: Pod, metadata: {name: a}}\n", "spec.nodeName", "n1",
               "{kind: Pod, metadata: {name: a}, spec: {nodeName: n1}}\n");
    expect_set("spec: {a: 1,\n  b: 2}\n", "spec.nodeName", "true",
               "spec: {a: 1,\n  b: 2, nodeName: \"true\"}\n");
}
END_TEST

START_TEST(yaml_comments_and_blank_lines_kept)
{
    const char *in = "# header comment\n"
                     "\n"
                     "apiVersion: v1   # api\n"
                     "kind: Pod\n"
                     "\n"
                     "metadata:\n"
                     "  # the name\n"
                     "  name: a\n"
                     "  labels: &l\n"
                     "    app: x\n"
                     "spec:\n"
                     "\n"
                     "  # containers\n"
                     "  containers:\n"
                     "    - name: c   # indented sequence\n"
                     "      image: busybox\n"
                     "\n"
                     "  # end of spec\n"
                     "...\n";
    expect_set(in, "spec.nodeName", "n1",
               "# header comment\n"
               "\n"
               "apiVersion: v1   # api\n"
               "kind: Pod\n"
               "\n"
               "metadata:\n"
               "  # the name\n"
               "  name: a\n"
               "  labels: &l\n"
               "    app: x\n"
               "spec:\n"
               "\n"
               "  # containers\n"
               "  containers:\n"
               "    - name: c   # indented sequence\n"
               "      image: busybox\n"
               "  nodeName: n1\n"
               "\n"
               "  # end of spec\n"
               "...\n");
}
END_TEST

START_TEST(yaml_unicode_positions)
{
    /* libyaml counts characters; the edits are placed by bytes */
    expect_set("\xef\xbb\xbf"
               "metadata:\n"
               "  name: \xc3\xa9t\xc3\xa9\n"
               "  annotations:\n"
               "    note: \"\xe2\x82\xac \xf0\x9f\x98\x80\"\n"
               "spec:\n"
               "  nodeName: old\n"
               "  x: \xc3\xbc\n",
               "spec.nodeName", "n\xc3\xa9w",
               "\xef\xbb\xbf"
               "metadata:\n"
               "  name: \xc3\xa9t\xc3\xa9\n"
               "  annotations:\n"
               "    note: \"\xe2\x82\xac \xf0\x9f\x98\x80\"\n"
               "spec:\n"
               "  nodeName: \"n\xc3\xa9w\"\n"
               "  x: \xc3\xbc\n");
    expect_set("a: \xc3\xa9\xc3\xa9\n", "spec.nodeName", "n1",
               "a: \xc3\xa9\xc3\xa9\nspec:\n  nodeName: n1\n");
}
END_TEST

START_TEST(yaml_crlf)
{
    expect_set("kind: Pod\r\nmetadata:\r\n  name: a\r\n", "spec.nodeName", "n1",
               "kind: Pod\r\nmetadata:\r\n  name: a\r\nspec:\r\n  nodeName: n1\r\n");
    expect_set("spec:\r\n  nodeName: old # c\r\n", "spec.nodeName", "n1",
               "spec:\r\n  nodeName: n1 # c\r\n");
    expect_set("spec:\r\nx: 1\r\n", "spec.nodeName", "n1", "spec:\r\n  nodeName: n1\r\nx: 1\r\n");
    wb_edit e = {0, -1, "spec.nodeName", NULL, 0};
    expect_edits("spec:\r\n  nodeName: a\r\n  x: 1\r\n", 0, &e, 1, "spec:\r\n  x: 1\r\n");
}
END_TEST

/* ---- YAML: Lists and several documents --------------------------------- */

static const char *list_doc = "apiVersion: v1\n"
                              "kind: List\n"
                              "items:\n"
                              "- apiVersion: v1\n"
                              "  kind: Pod\n"
                              "  metadata:\n"
                              "    name: a\n"
                              "- apiVersion: v1\n"
                              "  kind: Pod\n"
                              "  metadata:\n"
                              "    name: b\n"
                              "  spec:\n"
                              "    nodeName: old\n"
                              "- {apiVersion: v1, kind: Pod, metadata: {name: c}}\n";

/* A List that receives many edits in one pass, YAML and JSON: the
 * overlays of one document grew their arrays while pointers into them were
 * kept (a use after free from the ninth edit on). */
static void many_list_edits(int json, size_t n)
{
    strbuf in, want;
    sb_init(&in);
    sb_init(&want);
    sb_puts(&in, json ? "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
                      : "apiVersion: v1\nkind: List\nitems:\n");
    sb_puts(&want, in.s);
    wb_edit *e = calloc(n, sizeof *e);
    char(*names)[24] = calloc(n, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "n%zu", i);
        e[i] = (wb_edit){0, (int)i, "spec.nodeName", names[i], 0};
        if (json) {
            const char *sep = i + 1 < n ? "," : "";
            sb_printf(&in,
                      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p%zu\"}, "
                      "\"spec\": {\"x\": 1}}%s\n",
                      i, sep);
            sb_printf(&want,
                      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p%zu\"}, "
                      "\"spec\": {\"x\": 1, \"nodeName\": \"n%zu\"}}%s\n",
                      i, i, sep);
        } else {
            sb_printf(&in, "- kind: Pod\n  metadata:\n    name: p%zu\n  spec:\n    x: 1\n", i);
            sb_printf(&want,
                      "- kind: Pod\n  metadata:\n    name: p%zu\n  spec:\n    x: 1\n"
                      "    nodeName: n%zu\n",
                      i, i);
        }
    }
    if (json) {
        sb_puts(&in, "]}\n");
        sb_puts(&want, "]}\n");
    }
    expect_edits(in.s, json, e, n, want.s);
    free(e);
    free(names);
    sb_free(&in);
    sb_free(&want);
}

START_TEST(list_with_many_edits)
{
    for (size_t n = 1; n <= 70; n += 3) {
        many_list_edits(0, n);
        many_list_edits(1, n);
    }
}
END_TEST

/* A key given twice in JSON: the manifest reader keeps the last value, so
 * the edit goes there (an edit of the first was lost on the next read). */
START_TEST(json_duplicate_key_edits_the_last)
{
    wb_edit e = {0, -1, "spec.nodeName", "n1", 0};
    expect_edits("{\"kind\": \"Pod\", \"spec\": {\"nodeName\": \"a\", \"nodeName\": \"b\"}}\n", 1,
                 &e, 1,
                 "{\"kind\": \"Pod\", \"spec\": {\"nodeName\": \"a\", \"nodeName\": \"n1\"}}\n");
}
END_TEST

START_TEST(yaml_list_items)
{
    wb_edit e[] = {{0, 0, "spec.nodeName", "n1", 0},
                   {0, 1, "spec.nodeName", "n2", 0},
                   {0, 2, "spec.nodeName", "n3", 0}};
    expect_edits(list_doc, 0, e, 3,
                 "apiVersion: v1\n"
                 "kind: List\n"
                 "items:\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: a\n"
                 "  spec:\n"
                 "    nodeName: n1\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: b\n"
                 "  spec:\n"
                 "    nodeName: n2\n"
                 "- {apiVersion: v1, kind: Pod, metadata: {name: c}, spec: "
                 "{nodeName: n3}}\n");
    wb_edit r = {0, 1, "spec.nodeName", NULL, 0};
    expect_edits(list_doc, 0, &r, 1,
                 "apiVersion: v1\n"
                 "kind: List\n"
                 "items:\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: a\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: b\n"
                 "  spec:\n"
                 "- {apiVersion: v1, kind: Pod, metadata: {name: c}}\n");
    wb_edit bad = {0, 3, "spec.nodeName", "x", 0};
    expect_fail(list_doc, 0, &bad, 1, "no such item");
    wb_edit notlist = {0, 0, "spec.nodeName", "x", 0};
    expect_fail("kind: Pod\n", 0, &notlist, 1, "no items list");
}
END_TEST

static const char *multi_doc = "# first\n"
                               "kind: Pod\n"
                               "metadata:\n"
                               "  name: a\n"
                               "---\n"
                               "# empty document\n"
                               "---\n"
                               "kind: Pod\n"
                               "metadata:\n"
                               "  name: b\n"
                               "spec:\n"
                               "  nodeName: old\n"
                               "  priority: 1\n"
                               "...\n"
                               "---\n"
                               "kind: Pod\n"
                               "metadata: {name: c}\n";

START_TEST(yaml_several_documents)
{
    wb_edit e[] = {{3, -1, "spec.nodeName", "n3", 0},
                   {0, -1, "spec.nodeName", "n0", 0},
                   {2, -1, "spec.nodeName", NULL, 0}};
    expect_edits(multi_doc, 0, e, 3,
                 "# first\n"
                 "kind: Pod\n"
                 "metadata:\n"
                 "  name: a\n"
                 "spec:\n"
                 "  nodeName: n0\n"
                 "---\n"
                 "# empty document\n"
                 "---\n"
                 "kind: Pod\n"
                 "metadata:\n"
                 "  name: b\n"
                 "spec:\n"
                 "  priority: 1\n"
                 "...\n"
                 "---\n"
                 "kind: Pod\n"
                 "metadata: {name: c}\n"
                 "spec:\n"
                 "  nodeName: n3\n");
    wb_edit empty = {1, -1, "spec.nodeName", "x", 0};
    expect_fail(multi_doc, 0, &empty, 1, "the document is empty");
    wb_edit missing = {4, -1, "spec.nodeName", "x", 0};
    expect_fail(multi_doc, 0, &missing, 1, "no such document (the text has 4)");
}
END_TEST

START_TEST(yaml_edit_order)
{
    const char *in = "kind: Pod\nmetadata:\n  name: a\n";
    /* set twice: the last one wins */
    wb_edit twice[] = {{0, -1, "spec.nodeName", "first", 0}, {0, -1, "spec.nodeName", "second", 0}};
    expect_edits(in, 0, twice, 2, "kind: Pod\nmetadata:\n  name: a\nspec:\n  nodeName: second\n");
    /* two fields under a missing parent: the parent is created once */
    wb_edit two[] = {{0, -1, "spec.nodeName", "nn", 0}, {0, -1, "spec.schedulerName", "s", 0}};
    expect_edits(in, 0, two, 2,
                 "kind: Pod\nmetadata:\n  name: a\nspec:\n  nodeName: nn\n"
                 "  schedulerName: s\n");
    /* set then remove, remove then set */
    wb_edit setrm[] = {{0, -1, "spec.nodeName", "n", 0}, {0, -1, "spec.nodeName", NULL, 0}};
    expect_edits(in, 0, setrm, 2, "kind: Pod\nmetadata:\n  name: a\nspec:\n");
    wb_edit rmset[] = {{0, -1, "metadata.name", NULL, 0}, {0, -1, "metadata.name", "b", 0}};
    expect_edits(in, 0, rmset, 2, "kind: Pod\nmetadata:\n  name: b\n");
    /* nothing to do */
    expect_edits(in, 0, NULL, 0, in);
}
END_TEST

/* ---- YAML: removing a field -------------------------------------------- */

START_TEST(yaml_remove)
{
    wb_edit e = {0, -1, "spec.nodeName", NULL, 0};
    expect_edits("spec:\n"
                 "  # who runs it\n"
                 "  nodeName: n1 # set by trellis\n"
                 "  containers:\n"
                 "  - name: c\n",
                 0, &e, 1,
                 "spec:\n"
                 "  # who runs it\n"
                 "  containers:\n"
                 "  - name: c\n");
    /* a value on several lines goes with its key */
    expect_edits("spec:\n  nodeName: |\n    a\n    b\n  x: 1\n", 0, &e, 1, "spec:\n  x: 1\n");
    expect_edits("spec:\n  nodeName:\n    nested: 1\n    more: [1,\n      2]\n"
                 "other: 1\n",
                 0, &e, 1, "spec:\nother: 1\n");
    /* absent field, absent parent, null parent: nothing to do */
    expect_edits("spec:\n  x: 1\n", 0, &e, 1, "spec:\n  x: 1\n");
    expect_edits("kind: Pod\n", 0, &e, 1, "kind: Pod\n");
    expect_edits("spec: null\n", 0, &e, 1, "spec: null\n");
    /* first key of a sequence item */
    wb_edit first = {0, 0, "nodeName", NULL, 0};
    expect_edits("items:\n- nodeName: a\n  x: 1\n- nodeName: b\n", 0, &first, 1,
                 "items:\n- x: 1\n- nodeName: b\n");
    wb_edit only = {0, 1, "nodeName", NULL, 0};
    expect_edits("items:\n- nodeName: a\n  x: 1\n- nodeName: b # c\n", 0, &only, 1,
                 "items:\n- nodeName: a\n  x: 1\n- {} # c\n");
    /* no final line break */
    expect_edits("spec:\n  x: 1\n  nodeName: n1", 0, &e, 1, "spec:\n  x: 1\n");
}
END_TEST

START_TEST(yaml_remove_flow)
{
    wb_edit e = {0, -1, "spec.nodeName", NULL, 0};
    expect_edits("spec: {a: 1, nodeName: n1, b: 2}\n", 0, &e, 1, "spec: {a: 1, b: 2}\n");
    expect_edits("spec: {a: 1, nodeName: n1}\n", 0, &e, 1, "spec: {a: 1}\n");
    expect_edits("spec: {nodeName: n1}\n", 0, &e, 1, "spec: {}\n");
    expect_edits("spec: {nodeName: n1, a: 1}\n", 0, &e, 1, "spec: {a: 1}\n");
}
END_TEST

/* ---- YAML: refusals ----------------------------------------------------- */

START_TEST(yaml_refusals)
{
    wb_edit e = {0, -1, "spec.nodeName", "x", 0};
    expect_fail("spec: 5\n", 0, &e, 1, "'spec' is not a map");
    expect_fail("spec: [a]\n", 0, &e, 1, "'spec' is not a map");
    expect_fail("spec:\n  nodeName: {a: 1}\n", 0, &e, 1, "not a scalar");
    expect_fail("spec:\n  nodeName:\n  - a\n", 0, &e, 1, "not a scalar");
    expect_fail("base: &b {nodeName: y}\nspec: *b\n", 0, &e, 1, "alias");
    /* editing what an alias refers to would edit the alias too */
    expect_fail("spec: &s\n  nodeName: a\nother: *s\n", 0, &e, 1, "anchored");
    expect_fail("spec:\n  nodeName: &n a\nother: *n\n", 0, &e, 1, "anchored");
    wb_edit anc_rm = {0, -1, "spec.nodeName", NULL, 0};
    expect_fail("spec:\n  nodeName: &n a\n", 0, &anc_rm, 1, "anchor");
    wb_edit item_alias = {0, 0, "spec.nodeName", "x", 0};
    expect_fail("items:\n- &p {kind: Pod}\ncopy: *p\n", 0, &item_alias, 1, "the item is anchored");
    expect_fail("base: &b\n  spec: {nodeName: y}\n<<: *b\n", 0, &e, 1, "merge key");
    expect_fail("- a\n- b\n", 0, &e, 1, "not a map");
    expect_fail("a: [\n", 0, &e, 1, "cannot parse the YAML text");
    /* the field only exists through a merge: cannot be removed */
    wb_edit rm = {0, -1, "nodeName", NULL, 0};
    expect_fail("base: &b {nodeName: y}\n<<: *b\n", 0, &rm, 1, "merge key");
    /* but it can be set (the explicit key overrides the merged one) */
    wb_edit set = {0, -1, "nodeName", "z", 0};
    expect_edits("base: &b {nodeName: y}\n<<: *b\n", 0, &set, 1,
                 "base: &b {nodeName: y}\n<<: *b\nnodeName: z\n");
    wb_edit badpath[] = {{0, -1, "", "x", 0},
                         {0, -1, "a..b", "x", 0},
                         {0, -1, "a.", "x", 0},
                         {0, -1, "a[0].b", "x", 0},
                         {0, -1, "a[\"b", "x", 0}};
    for (size_t i = 0; i < sizeof badpath / sizeof *badpath; i++)
        expect_fail("a: {}\n", 0, &badpath[i], 1, "path");
    wb_edit badutf = {0, -1, "a", "\xff", 0};
    expect_fail("a: 1\n", 0, &badutf, 1, "UTF-8");
    /* a new key after a block scalar that ends the file without a line
     * break would add one to the scalar: refused, not written */
    wb_edit after_block = {0, -1, "x", "v", 0};
    expect_fail("a: 1\nb: |\n  text", 0, &after_block, 1, "would change beyond the edits");
    /* a failing edit among good ones produces nothing */
    wb_edit mixed[] = {{0, -1, "metadata.name", "ok", 0}, {0, -1, "metadata.name.deeper", "x", 0}};
    expect_fail("metadata:\n  name: a\n", 0, mixed, 2, "'name' is not a map");
}
END_TEST

START_TEST(yaml_quoted_path_keys)
{
    wb_edit e = {0, -1, "metadata.annotations[\"example.com/reason\"]", "busy", 0};
    expect_edits("metadata:\n  name: a\n", 0, &e, 1,
                 "metadata:\n  name: a\n  annotations:\n"
                 "    example.com/reason: busy\n");
    expect_edits("metadata:\n  annotations:\n    example.com/reason: old\n", 0, &e, 1,
                 "metadata:\n  annotations:\n    example.com/reason: busy\n");
}
END_TEST

/* ---- JSON ---------------------------------------------------------------- */

static const char *pretty_json = "{\n"
                                 "  \"apiVersion\": \"v1\",\n"
                                 "  \"kind\": \"Pod\",\n"
                                 "  \"metadata\": {\n"
                                 "    \"name\": \"a\"\n"
                                 "  },\n"
                                 "  \"spec\": {\n"
                                 "    \"containers\": []\n"
                                 "  }\n"
                                 "}\n";

START_TEST(json_pretty)
{
    wb_edit e = {0, -1, "spec.nodeName", "n1", 0};
    expect_edits(pretty_json, 1, &e, 1,
                 "{\n"
                 "  \"apiVersion\": \"v1\",\n"
                 "  \"kind\": \"Pod\",\n"
                 "  \"metadata\": {\n"
                 "    \"name\": \"a\"\n"
                 "  },\n"
                 "  \"spec\": {\n"
                 "    \"containers\": [],\n"
                 "    \"nodeName\": \"n1\"\n"
                 "  }\n"
                 "}\n");
    wb_edit p = {0, -1, "status.placement.nodeName", "n1", 0};
    expect_edits(pretty_json, 1, &p, 1,
                 "{\n"
                 "  \"apiVersion\": \"v1\",\n"
                 "  \"kind\": \"Pod\",\n"
                 "  \"metadata\": {\n"
                 "    \"name\": \"a\"\n"
                 "  },\n"
                 "  \"spec\": {\n"
                 "    \"containers\": []\n"
                 "  },\n"
                 "  \"status\": {\"placement\": {\"nodeName\": \"n1\"}}\n"
                 "}\n");
    wb_edit r = {0, -1, "kind", NULL, 0};
    expect_edits(pretty_json, 1, &r, 1,
                 "{\n"
                 "  \"apiVersion\": \"v1\",\n"
                 "  \"metadata\": {\n"
                 "    \"name\": \"a\"\n"
                 "  },\n"
                 "  \"spec\": {\n"
                 "    \"containers\": []\n"
                 "  }\n"
                 "}\n");
    wb_edit last = {0, -1, "spec", NULL, 0};
    expect_edits(pretty_json, 1, &last, 1,
                 "{\n"
                 "  \"apiVersion\": \"v1\",\n"
                 "  \"kind\": \"Pod\",\n"
                 "  \"metadata\": {\n"
                 "    \"name\": \"a\"\n"
                 "  }\n"
                 "}\n");
    wb_edit only = {0, -1, "spec.containers", NULL, 0};
    expect_edits(pretty_json, 1, &only, 1,
                 "{\n"
                 "  \"apiVersion\": \"v1\",\n"
                 "  \"kind\": \"Pod\",\n"
                 "  \"metadata\": {\n"
                 "    \"name\": \"a\"\n"
                 "  },\n"
                 "  \"spec\": {}\n"
                 "}\n");
}
END_TEST

START_TEST(json_compact)
{
    const char *in = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                     "\"metadata\":{\"name\":\"a\"},\"spec\":{}}";
    wb_edit e = {0, -1, "spec.nodeName", "n1", 0};
    expect_edits(in, 1, &e, 1,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                 "\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\": \"n1\"}}");
    wb_edit m = {0, -1, "metadata.namespace", "ns", 0};
    expect_edits(in, 1, &m, 1,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                 "\"metadata\":{\"name\":\"a\", \"namespace\": \"ns\"},"
                 "\"spec\":{}}");
    wb_edit s = {0, -1, "kind", "Po\"d\n", 0};
    expect_edits(in, 1, &s, 1,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Po\\\"d\\n\","
                 "\"metadata\":{\"name\":\"a\"},\"spec\":{}}");
    wb_edit r = {0, -1, "apiVersion", NULL, 0};
    expect_edits(in, 1, &r, 1, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{}}");
    wb_edit nul = {0, -1, "spec.a.b", "x", 0};
    expect_edits("{\"spec\": null}", 1, &nul, 1, "{\"spec\": {\"a\": {\"b\": \"x\"}}}");
    wb_edit num = {0, -1, "spec", "x", 0};
    expect_edits("{\"spec\": 12.5e3 }", 1, &num, 1, "{\"spec\": \"x\" }");
    wb_edit top = {0, -1, "a", "x", 0};
    expect_edits("{}", 1, &top, 1, "{\"a\": \"x\"}");
    expect_edits("{ }", 1, &top, 1, "{\"a\": \"x\" }");
    expect_edits("{\"\\u0061\": \"old\"}", 1, &top, 1, "{\"\\u0061\": \"x\"}");
}
END_TEST

START_TEST(json_concatenated_and_lists)
{
    const char *in = "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}\n"
                     "{\"kind\": \"List\", \"items\": [\n"
                     "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"b\"}},\n"
                     "  {\"kind\": \"Pod\", \"spec\": {\"nodeName\": \"x\"}}\n"
                     "]}\n";
    wb_edit e[] = {{1, 1, "spec.nodeName", "n2", 0},
                   {0, -1, "spec.nodeName", "n0", 0},
                   {1, 0, "spec.nodeName", "n1", 0}};
    expect_edits(in, 1, e, 3,
                 "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}, "
                 "\"spec\": {\"nodeName\": \"n0\"}}\n"
                 "{\"kind\": \"List\", \"items\": [\n"
                 "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"b\"}, "
                 "\"spec\": {\"nodeName\": \"n1\"}},\n"
                 "  {\"kind\": \"Pod\", \"spec\": {\"nodeName\": \"n2\"}}\n"
                 "]}\n");
    wb_edit missing = {2, -1, "a", "x", 0};
    expect_fail(in, 1, &missing, 1, "no such document (the text has 2)");
    wb_edit bad = {0, -1, "kind.x", "x", 0};
    expect_fail(in, 1, &bad, 1, "'kind' is not a map");
    expect_fail("{\"a\": [1, }", 1, &bad, 1, "line 1, column 11");
    expect_fail("{\"a\": 1,\n \"b\" 2}", 1, &bad, 1, "line 2, column 6");
}
END_TEST

START_TEST(json_refusals_and_noops)
{
    wb_edit e = {0, -1, "spec", "x", 0};
    expect_fail("{\"spec\": {\"a\": 1}}", 1, &e, 1, "holds a map, not a scalar");
    expect_fail("{\"spec\": [1]}", 1, &e, 1, "holds a list, not a scalar");
    expect_fail("[1, 2]", 1, &e, 1, "the document is not a map");
    expect_fail("null", 1, &e, 1, "the document is empty");
    expect_fail("", 1, &e, 1, "no such document (the text has 0)");
    wb_edit deep = {0, -1, "spec.a.b", "x", 0};
    expect_fail("{\"spec\": \"str\"}", 1, &deep, 1, "'spec' is not a map");
    wb_edit item = {0, 5, "spec", "x", 0};
    expect_fail("{\"items\": [{}]}", 1, &item, 1, "no such item (the list has 1)");
    wb_edit rm = {0, -1, "spec.a.b", NULL, 0};
    expect_edits("{\"spec\": {}}", 1, &rm, 1, "{\"spec\": {}}");
    expect_edits("{\"spec\": null}", 1, &rm, 1, "{\"spec\": null}");
    expect_edits("{\"kind\": \"Pod\"}", 1, &rm, 1, "{\"kind\": \"Pod\"}");
}
END_TEST

START_TEST(json_crlf)
{
    wb_edit e = {0, -1, "spec.nodeName", "n1", 0};
    expect_edits("{\r\n  \"spec\": {\r\n    \"a\": 1\r\n  }\r\n}\r\n", 1, &e, 1,
                 "{\r\n  \"spec\": {\r\n    \"a\": 1,\r\n    \"nodeName\": "
                 "\"n1\"\r\n  }\r\n}\r\n");
}
END_TEST

/* ---- raw edits: a JSON value as the field's value ----------------------- */

static const char *seed_doc = "apiVersion: core.gardener.cloud/v1beta1\n"
                              "kind: Seed\n"
                              "metadata:\n"
                              "  name: s1\n"
                              "spec:\n"
                              "  taints:\n"
                              "  - key: a\n"
                              "    effect: NoSchedule\n"
                              "  provider:\n"
                              "    type: aws\n";

START_TEST(raw_replace_block_sequence)
{
    expect_raw(seed_doc, 0, "spec.taints",
               "[{\"key\": \"a\", \"effect\": \"NoSchedule\"}, "
               "{\"key\": \"seed.gardener.cloud/unschedulable\", \"effect\": \"NoSchedule\"}]",
               "apiVersion: core.gardener.cloud/v1beta1\n"
               "kind: Seed\n"
               "metadata:\n"
               "  name: s1\n"
               "spec:\n"
               "  taints: [{\"key\": \"a\", \"effect\": \"NoSchedule\"}, "
               "{\"key\": \"seed.gardener.cloud/unschedulable\", \"effect\": \"NoSchedule\"}]\n"
               "  provider:\n"
               "    type: aws\n");
    expect_raw(seed_doc, 0, "spec.taints", "[]",
               "apiVersion: core.gardener.cloud/v1beta1\n"
               "kind: Seed\n"
               "metadata:\n"
               "  name: s1\n"
               "spec:\n"
               "  taints: []\n"
               "  provider:\n"
               "    type: aws\n");
    /* the JSON text is written again in one form, whatever its layout */
    expect_raw(seed_doc, 0, "spec.taints", " [ {\"key\":\"b\",\n \"effect\" :\"NoExecute\"} ] ",
               "apiVersion: core.gardener.cloud/v1beta1\n"
               "kind: Seed\n"
               "metadata:\n"
               "  name: s1\n"
               "spec:\n"
               "  taints: [{\"key\": \"b\", \"effect\": \"NoExecute\"}]\n"
               "  provider:\n"
               "    type: aws\n");
    /* a comment on the key's line stays; the lines of the old value go,
     * comment lines among them too; what follows the value stays */
    expect_raw("spec:\n"
               "  taints:   # managed by trellis\n"
               "  # the first one\n"
               "  - key: a  # why\n"
               "    effect: NoSchedule\n"
               "\n"
               "  # about the provider\n"
               "  provider:\n"
               "    type: aws\n",
               0, "spec.taints", "[]",
               "spec:\n"
               "  taints: []   # managed by trellis\n"
               "\n"
               "  # about the provider\n"
               "  provider:\n"
               "    type: aws\n");
    /* indented sequence, the last thing in the file, no final break */
    expect_raw("spec:\n  taints:\n    - a\n    - b # last", 0, "spec.taints", "[\"c\"]",
               "spec:\n  taints: [\"c\"]");
    /* last member of a map with a document after it */
    expect_raw("spec:\n  x: 1\n  taints:\n  - a\n---\nkind: Pod\n", 0, "spec.taints", "[1, 2]",
               "spec:\n  x: 1\n  taints: [1, 2]\n---\nkind: Pod\n");
    /* the sequence's own anchor is kept, a tag dropped */
    expect_raw("spec:\n  taints: &t # c\n  - a\n", 0, "spec.taints", "[]",
               "spec:\n  taints: &t [] # c\n");
    expect_raw("spec:\n  taints: !!seq\n  - a\n  x: 1\n", 0, "spec.taints", "[]",
               "spec:\n  taints: []\n  x: 1\n");
    /* a sequence of sequences */
    expect_raw("a:\n- - 1\n  - 2\n- - 3\nb: 2\n", 0, "a", "[[1, 2], [3]]",
               "a: [[1, 2], [3]]\nb: 2\n");
}
END_TEST

START_TEST(raw_replace_block_mapping)
{
    expect_raw("spec:\n"
               "  provider: # where\n"
               "    type: aws\n"
               "    regions:\n"
               "    - eu-west-1\n"
               "    config:\n"
               "      a: |\n"
               "        text\n"
               "  x: 1\n",
               0, "spec.provider", "{\"type\": \"gcp\", \"regions\": [\"europe-west1\"]}",
               "spec:\n"
               "  provider: {\"type\": \"gcp\", \"regions\": [\"europe-west1\"]} # where\n"
               "  x: 1\n");
    expect_raw("spec:\n  provider:\n    type: aws\n", 0, "spec.provider", "{}",
               "spec:\n  provider: {}\n");
    expect_raw("spec:\n  provider:\n    type: aws\n", 0, "spec", "null", "spec: null\n");
    /* the whole top-level map value of a key */
    expect_raw("metadata:\n  name: a\nspec:\n  provider:\n    type: aws\n  x: 1\n", 0, "spec",
               "{\"x\": 2}", "metadata:\n  name: a\nspec: {\"x\": 2}\n");
}
END_TEST

START_TEST(raw_replace_scalar)
{
    expect_raw("spec:\n  taints: none # c\n  x: 1\n", 0, "spec.taints", "[]",
               "spec:\n  taints: [] # c\n  x: 1\n");
    expect_raw("spec:\n  taints:\n  x: 1\n", 0, "spec.taints", "[\"a\"]",
               "spec:\n  taints: [\"a\"]\n  x: 1\n");
    expect_raw("spec:\n  taints: # later\n  x: 1\n", 0, "spec.taints", "[\"a\"]",
               "spec:\n  taints: [\"a\"] # later\n  x: 1\n");
    expect_raw("spec:\n  taints: null\n", 0, "spec.taints", "[]", "spec:\n  taints: []\n");
    expect_raw("spec:\n  taints: |\n    a\n    b\n  x: 1\n", 0, "spec.taints", "[]",
               "spec:\n  taints: []\n  x: 1\n");
    expect_raw("spec:\n  n: !!str 5\n", 0, "spec.n", "5", "spec:\n  n: 5\n");
    expect_raw("spec:\n  n: &a old\n", 0, "spec.n", "{\"k\": \"v\"}",
               "spec:\n  n: &a {\"k\": \"v\"}\n");
    /* scalars: strings are always quoted, the rest plain */
    const char *in = "spec:\n  v: old # c\n";
    expect_raw(in, 0, "spec.v", "\"n1\"", "spec:\n  v: \"n1\" # c\n");
    expect_raw(in, 0, "spec.v", "\"true\"", "spec:\n  v: \"true\" # c\n");
    expect_raw(in, 0, "spec.v", "true", "spec:\n  v: true # c\n");
    expect_raw(in, 0, "spec.v", "null", "spec:\n  v: null # c\n");
    expect_raw(in, 0, "spec.v", "-1.5e3", "spec:\n  v: -1.5e3 # c\n");
    expect_raw(in, 0, "spec.v", "0", "spec:\n  v: 0 # c\n");
    /* escapes YAML reads back as the same string */
    expect_raw(in, 0, "spec.v",
               "[\"a\\\"b\\\\c\", \"\\u00e9\xc3\xa9\", \"\\t\\n\\u0001\\u007f\", "
               "\"\\u0085\xc2\x85\\u2028\xe2\x80\xa9\\ufeff\", \"\\/ # : -\", "
               "\"\\ud83d\\ude00\"]",
               "spec:\n  v: [\"a\\\"b\\\\c\", \"\xc3\xa9\xc3\xa9\", \"\\t\\n\\u0001\\u007f\", "
               "\"\\u0085\\u0085\\u2028\\u2029\\ufeff\", \"/ # : -\", "
               "\"\xf0\x9f\x98\x80\"] # c\n");
    /* an alias is replaced, the anchored node stays */
    expect_raw("base: &b [a]\nspec:\n  taints: *b\n", 0, "spec.taints", "[\"c\"]",
               "base: &b [a]\nspec:\n  taints: [\"c\"]\n");
}
END_TEST

START_TEST(raw_replace_flow)
{
    expect_raw("spec:\n  taints: [{key: a, effect: NoSchedule}] # c\n  x: 1\n", 0, "spec.taints",
               "[{\"key\": \"b\"}]", "spec:\n  taints: [{\"key\": \"b\"}] # c\n  x: 1\n");
    expect_raw("spec:\n  taints: [a,\n    b]   # c\n  x: 1\n", 0, "spec.taints", "[]",
               "spec:\n  taints: []   # c\n  x: 1\n");
    expect_raw("spec:\n  taints: {a: 1}\n", 0, "spec.taints", "[true, false]",
               "spec:\n  taints: [true, false]\n");
    expect_raw("spec:\n  taints: []\n", 0, "spec.taints", "[\"a\"]", "spec:\n  taints: [\"a\"]\n");
    /* inside a flow map */
    expect_raw("spec: {taints: [a], x: 1}\n", 0, "spec.taints", "[{\"k\": \"v\"}]",
               "spec: {taints: [{\"k\": \"v\"}], x: 1}\n");
    expect_raw("spec: {taints: [a], x: 1}\n", 0, "spec.x", "{\"y\": null}",
               "spec: {taints: [a], x: {\"y\": null}}\n");
    expect_raw("spec: {taints: &t [a]}\n", 0, "spec.taints", "[]", "spec: {taints: &t []}\n");
}
END_TEST

START_TEST(raw_insert_missing)
{
    expect_raw("spec:\n  provider:\n    type: aws\n", 0, "spec.taints", "[{\"key\": \"a\"}]",
               "spec:\n  provider:\n    type: aws\n  taints: [{\"key\": \"a\"}]\n");
    /* missing parents are created */
    expect_raw("kind: Seed\nmetadata:\n  name: s\n", 0, "spec.taints", "[]",
               "kind: Seed\nmetadata:\n  name: s\nspec:\n  taints: []\n");
    expect_raw("kind: Seed\n", 0, "spec.settings.scheduling", "{\"visible\": true}",
               "kind: Seed\nspec:\n  settings:\n    scheduling: {\"visible\": true}\n");
    /* null parent, flow parent */
    expect_raw("spec:\nstatus: {}\n", 0, "spec.taints", "[]", "spec:\n  taints: []\nstatus: {}\n");
    expect_raw("spec: null # c\n", 0, "spec.a.taints", "[]", "spec: # c\n  a:\n    taints: []\n");
    expect_raw("spec: {x: 1}\n", 0, "spec.taints", "[\"a\", 1]",
               "spec: {x: 1, taints: [\"a\", 1]}\n");
    expect_raw("spec: {}\n", 0, "spec.a.b", "[]", "spec: {a: {b: []}}\n");
    /* after a block sequence that ends its map */
    expect_raw("spec:\n  list:\n  - a\n  - b # last\n# about other\nother: 1\n", 0, "spec.taints",
               "[]",
               "spec:\n  list:\n  - a\n  - b # last\n  taints: []\n# about other\nother: 1\n");
}
END_TEST

START_TEST(raw_json)
{
    expect_raw(pretty_json, 1, "spec.containers", "[{\"name\": \"c\", \"image\": \"busybox\"}]",
               "{\n"
               "  \"apiVersion\": \"v1\",\n"
               "  \"kind\": \"Pod\",\n"
               "  \"metadata\": {\n"
               "    \"name\": \"a\"\n"
               "  },\n"
               "  \"spec\": {\n"
               "    \"containers\": [{\"name\": \"c\", \"image\": \"busybox\"}]\n"
               "  }\n"
               "}\n");
    expect_raw(pretty_json, 1, "spec.taints", "[{\"key\": \"a\"}]",
               "{\n"
               "  \"apiVersion\": \"v1\",\n"
               "  \"kind\": \"Pod\",\n"
               "  \"metadata\": {\n"
               "    \"name\": \"a\"\n"
               "  },\n"
               "  \"spec\": {\n"
               "    \"containers\": [],\n"
               "    \"taints\": [{\"key\": \"a\"}]\n"
               "  }\n"
               "}\n");
    expect_raw(pretty_json, 1, "metadata", "{\"name\": \"b\", \"labels\": {\"app\": \"x\"}}",
               "{\n"
               "  \"apiVersion\": \"v1\",\n"
               "  \"kind\": \"Pod\",\n"
               "  \"metadata\": {\"name\": \"b\", \"labels\": {\"app\": \"x\"}},\n"
               "  \"spec\": {\n"
               "    \"containers\": []\n"
               "  }\n"
               "}\n");
    expect_raw(pretty_json, 1, "status.conditions", "[]",
               "{\n"
               "  \"apiVersion\": \"v1\",\n"
               "  \"kind\": \"Pod\",\n"
               "  \"metadata\": {\n"
               "    \"name\": \"a\"\n"
               "  },\n"
               "  \"spec\": {\n"
               "    \"containers\": []\n"
               "  },\n"
               "  \"status\": {\"conditions\": []}\n"
               "}\n");
    /* a pretty multi-line array goes onto one line */
    expect_raw("{\n"
               "  \"spec\": {\n"
               "    \"taints\": [\n"
               "      {\n"
               "        \"key\": \"a\"\n"
               "      }\n"
               "    ],\n"
               "    \"x\": 1\n"
               "  }\n"
               "}\n",
               1, "spec.taints", "[]",
               "{\n"
               "  \"spec\": {\n"
               "    \"taints\": [],\n"
               "    \"x\": 1\n"
               "  }\n"
               "}\n");
    /* compact */
    const char *in = "{\"kind\":\"Seed\",\"spec\":{\"taints\":[{\"key\":\"a\"}],\"n\":1}}";
    expect_raw(in, 1, "spec.taints", "[{\"key\":\"a\"},{\"key\":\"b\",\"effect\":\"NoSchedule\"}]",
               "{\"kind\":\"Seed\",\"spec\":{\"taints\":[{\"key\": \"a\"}, "
               "{\"key\": \"b\", \"effect\": \"NoSchedule\"}],\"n\":1}}");
    expect_raw(in, 1, "spec.n", "2.5",
               "{\"kind\":\"Seed\",\"spec\":{\"taints\":[{\"key\":\"a\"}],\"n\":2.5}}");
    expect_raw(in, 1, "spec.taints", "null",
               "{\"kind\":\"Seed\",\"spec\":{\"taints\":null,\"n\":1}}");
    expect_raw(in, 1, "spec.x.y", "\"s\\u2028\"",
               "{\"kind\":\"Seed\",\"spec\":{\"taints\":[{\"key\":\"a\"}],\"n\":1, "
               "\"x\": {\"y\": \"s\\u2028\"}}}");
    expect_raw("{\"spec\": null}", 1, "spec.taints", "[]", "{\"spec\": {\"taints\": []}}");
    expect_raw("{}", 1, "spec", "{\"a\": [1]}", "{\"spec\": {\"a\": [1]}}");
    /* CRLF */
    expect_raw("{\r\n  \"spec\": {\r\n    \"a\": [\r\n      1\r\n    ]\r\n  }\r\n}\r\n", 1,
               "spec.a", "[2]", "{\r\n  \"spec\": {\r\n    \"a\": [2]\r\n  }\r\n}\r\n");
}
END_TEST

START_TEST(raw_invalid_json)
{
    static const struct {
        const char *value, *why;
    } bad[] = {
        {"", "unexpected end of text"},
        {"   ", "unexpected end of text"},
        {"[a]", "line 1, column 2: unexpected character"},
        {"NoSchedule", "unexpected character"},
        {"{'key': 'a'}", "expected a string key"},
        {"{key: a}", "expected a string key"},
        {"[1,]", "unexpected character"},
        {"[1 2]", "expected ',' or ']'"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\": 1", "expected ',' or '}'"},
        {"\"abc", "unterminated string"},
        {"[1]\n x", "line 2, column 2: text after the value"},
        {"[1] [2]", "text after the value"},
        {"01", "malformed number"},
        {"1.", "malformed number"},
        {"+1", "unexpected character"},
        {".5", "unexpected character"},
        {"1e", "malformed number"},
        {"0x1F", "malformed number"},
        {"NaN", "unexpected character"},
        {"truex", "unexpected character"},
        {"True", "unexpected character"},
        {"\"a\tb\"", "control character"},
        {"\"\\x41\"", "unknown escape"},
        {"\"\\u12\"", "bad \\u escape"},
        {"\"\\ud800\"", "lone high surrogate"},
        {"\"\\ud800\\u0041\"", "lone high surrogate"},
        {"\"\\udc00\"", "lone low surrogate"},
        {"\"\\u0000\"", "NUL"},
        {"{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}}", "duplicate key \"c\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wb_edit e = {0, -1, "spec.taints", bad[i].value, 1};
        char err[512] = "";
        char *out = (char *)"sentinel";
        int rc = writeback_apply(seed_doc, strlen(seed_doc), 0, &e, 1, &out, NULL, err, sizeof err);
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_null(out);
        ck_assert_msg(
            strstr(err, "edit 0 (document 0, spec.taints): the value is not valid JSON") == err,
            "[%s]: error '%s'", bad[i].value, err);
        ck_assert_msg(strstr(err, bad[i].why) != NULL, "[%s]: error '%s' lacks '%s'", bad[i].value,
                      err, bad[i].why);
        /* JSON files refuse it the same way */
        expect_fail(pretty_json, 1, &e, 1, bad[i].why);
    }
    /* a bad raw edit among good ones produces nothing */
    wb_edit mixed[] = {{0, -1, "metadata.name", "ok", 0}, {0, -1, "spec.taints", "[", 1}};
    expect_fail(seed_doc, 0, mixed, 2,
                "edit 1 (document 0, spec.taints): the value is not valid JSON");
    wb_edit badutf = {0, -1, "spec.taints", "[\"\xff\"]", 1};
    expect_fail(seed_doc, 0, &badutf, 1, "UTF-8");
    /* what raw edits refuse like string edits, and anchors inside the old
     * value that an alias may refer to */
    wb_edit e = {0, -1, "spec.taints", "[]", 1};
    expect_fail("spec: [a]\n", 0, &e, 1, "'spec' is not a map");
    expect_fail("spec: &s\n  taints: [a]\nother: *s\n", 0, &e, 1, "anchored");
    expect_fail("spec:\n  taints: &t\n  - a\nother: *t\n", 0, &e, 1, "anchored");
    expect_fail("spec:\n  taints:\n  - &a x\nother: *a\n", 0, &e, 1, "holds an anchor");
    expect_fail("spec: {taints: [&a x]}\n", 0, &e, 1, "holds an anchor");
    expect_fail("{\"spec\": 1}", 1, &e, 1, "'spec' is not a map");
}
END_TEST

START_TEST(raw_list_items)
{
    wb_edit e[] = {{0, 0, "spec.tolerations", "[{\"key\": \"k\", \"operator\": \"Exists\"}]", 1},
                   {0, 1, "spec", "{\"nodeName\": \"n2\", \"priority\": 5}", 1},
                   {0, 2, "spec.tolerations", "[]", 1}};
    expect_edits(list_doc, 0, e, 3,
                 "apiVersion: v1\n"
                 "kind: List\n"
                 "items:\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: a\n"
                 "  spec:\n"
                 "    tolerations: [{\"key\": \"k\", \"operator\": \"Exists\"}]\n"
                 "- apiVersion: v1\n"
                 "  kind: Pod\n"
                 "  metadata:\n"
                 "    name: b\n"
                 "  spec: {\"nodeName\": \"n2\", \"priority\": 5}\n"
                 "- {apiVersion: v1, kind: Pod, metadata: {name: c}, spec: {tolerations: []}}\n");
    /* the key on the item's "- " line */
    wb_edit first = {0, 0, "taints", "[\"b\"]", 1};
    expect_edits("items:\n- taints:\n  - a\n  x: 1\n- taints: [c]\n", 0, &first, 1,
                 "items:\n- taints: [\"b\"]\n  x: 1\n- taints: [c]\n");
    wb_edit second = {0, 1, "taints", "[]", 1};
    expect_edits("items:\n- taints:\n  - a\n  x: 1\n- taints:\n  - c\n", 0, &second, 1,
                 "items:\n- taints:\n  - a\n  x: 1\n- taints: []\n");
    /* JSON List */
    wb_edit j = {0, 1, "spec.taints", "[{\"key\": \"a\"}]", 1};
    expect_edits("{\"kind\": \"List\", \"items\": [\n"
                 "  {\"kind\": \"Pod\"},\n"
                 "  {\"kind\": \"Pod\", \"spec\": {\"taints\": [{\"key\": \"x\"}]}}\n"
                 "]}\n",
                 1, &j, 1,
                 "{\"kind\": \"List\", \"items\": [\n"
                 "  {\"kind\": \"Pod\"},\n"
                 "  {\"kind\": \"Pod\", \"spec\": {\"taints\": [{\"key\": \"a\"}]}}\n"
                 "]}\n");
}
END_TEST

START_TEST(raw_crlf)
{
    expect_raw("spec:\r\n"
               "  taints: # t\r\n"
               "  - key: a\r\n"
               "    effect: NoSchedule\r\n"
               "  provider:\r\n"
               "    type: aws\r\n",
               0, "spec.taints", "[{\"key\": \"b\"}]",
               "spec:\r\n"
               "  taints: [{\"key\": \"b\"}] # t\r\n"
               "  provider:\r\n"
               "    type: aws\r\n");
    expect_raw("spec:\r\n  x: 1\r\n", 0, "spec.taints", "[]",
               "spec:\r\n  x: 1\r\n  taints: []\r\n");
    expect_raw("kind: Seed\r\n", 0, "spec.taints", "[]", "kind: Seed\r\nspec:\r\n  taints: []\r\n");
    expect_raw("spec:\r\n  taints:\r\n  - a\r\n", 0, "spec.taints", "[]",
               "spec:\r\n  taints: []\r\n");
    wb_edit rm = {0, -1, "spec.taints", NULL, 1};
    expect_edits("spec:\r\n  taints:\r\n  - a\r\n  x: 1\r\n", 0, &rm, 1, "spec:\r\n  x: 1\r\n");
}
END_TEST

START_TEST(raw_edit_order)
{
    /* raw set, then a field inside the new value */
    wb_edit two[] = {{0, -1, "spec.provider", "{\"type\": \"gcp\"}", 1},
                     {0, -1, "spec.provider.region", "eu", 0}};
    expect_edits(seed_doc, 0, two, 2,
                 "apiVersion: core.gardener.cloud/v1beta1\n"
                 "kind: Seed\n"
                 "metadata:\n"
                 "  name: s1\n"
                 "spec:\n"
                 "  taints:\n"
                 "  - key: a\n"
                 "    effect: NoSchedule\n"
                 "  provider: {\"type\": \"gcp\", region: eu}\n");
    /* raw set twice: the last one wins; raw set then remove */
    wb_edit twice[] = {{0, -1, "spec.taints", "[1]", 1}, {0, -1, "spec.taints", "[2]", 1}};
    expect_edits("spec:\n  taints:\n  - 0\n", 0, twice, 2, "spec:\n  taints: [2]\n");
    wb_edit setrm[] = {{0, -1, "spec.taints", "[1]", 1}, {0, -1, "spec.taints", NULL, 0}};
    expect_edits("spec:\n  taints:\n  - 0\n  x: 1\n", 0, setrm, 2, "spec:\n  x: 1\n");
    /* a string edit next to a raw one */
    wb_edit mix[] = {{0, -1, "spec.taints", "[]", 1}, {0, -1, "metadata.name", "s2", 0}};
    expect_edits(seed_doc, 0, mix, 2,
                 "apiVersion: core.gardener.cloud/v1beta1\n"
                 "kind: Seed\n"
                 "metadata:\n"
                 "  name: s2\n"
                 "spec:\n"
                 "  taints: []\n"
                 "  provider:\n"
                 "    type: aws\n");
}
END_TEST

/* Removing a key whose value is a block sequence takes all its lines. */
START_TEST(remove_block_sequence)
{
    wb_edit e = {0, -1, "spec.taints", NULL, 0};
    expect_edits(seed_doc, 0, &e, 1,
                 "apiVersion: core.gardener.cloud/v1beta1\n"
                 "kind: Seed\n"
                 "metadata:\n"
                 "  name: s1\n"
                 "spec:\n"
                 "  provider:\n"
                 "    type: aws\n");
    expect_edits("spec:\n"
                 "  x: 1\n"
                 "  taints: # c\n"
                 "    # inside\n"
                 "    - a\n"
                 "    - key: b # c\n"
                 "      effect: NoSchedule\n"
                 "\n"
                 "# about status\n"
                 "status: {}\n",
                 0, &e, 1,
                 "spec:\n"
                 "  x: 1\n"
                 "\n"
                 "# about status\n"
                 "status: {}\n");
    expect_edits("spec:\n  taints:\n  - a\n", 0, &e, 1, "spec:\n");
    expect_edits("spec:\n  taints:\n  - a", 0, &e, 1, "spec:\n");
    /* raw does not matter when removing */
    wb_edit r = {0, -1, "spec.taints", NULL, 1};
    expect_edits("spec:\n  taints:\n  - a\n  x: 1\n", 0, &r, 1, "spec:\n  x: 1\n");
    expect_edits("{\"spec\": {\"taints\": [\n  {\"key\": \"a\"}\n], \"x\": 1}}", 1, &r, 1,
                 "{\"spec\": {\"x\": 1}}");
}
END_TEST

/* ---- robustness ---------------------------------------------------------- */

static void mangled_inputs(const char *doc, int json, const char *file)
{
    size_t len = strlen(doc);
    wb_edit e[] = {{0, -1, "spec.nodeName", "n1", 0},
                   {1, -1, "spec.nodeName", NULL, 0},
                   {0, 0, "metadata.name", "x", 0},
                   {0, 0, "metadata", "{\"name\": \"m\", \"l\": [1, {\"a\": null}]}", 1}};
    size_t ne = sizeof e / sizeof *e;
    for (size_t cut = 0; cut <= len; cut++) {
        /* a copy of exactly `cut` bytes, so ASan sees any overread */
        char *t = xmalloc(cut ? cut : 1);
        memcpy(t, doc, cut);
        for (size_t k = 0; k < ne; k++) {
            char err[256] = "";
            char *out = NULL;
            size_t outlen;
            int rc = writeback_apply(t, cut, json, &e[k], 1, &out, &outlen, err, sizeof err);
            if (rc == 0) {
                ck_assert_ptr_nonnull(out);
                free(out);
            } else {
                ck_assert_int_eq(rc, -1);
                ck_assert_msg(err[0] != '\0', "no message at cut %zu", cut);
                ck_assert_ptr_null(out);
            }
        }
        manifest_set s;
        manifest_set_init(&s);
        int rc = manifest_parse(file, t, cut, &s);
        ck_assert(rc == 0 || rc == -1);
        if (rc == -1)
            ck_assert_uint_gt(s.n_errors, 0);
        for (size_t i = 0; i < s.n_errors; i++)
            ck_assert(s.errors[i].message && s.errors[i].message[0]);
        manifest_set_free(&s);
        /* and a byte changed to something hostile */
        if (cut < len) {
            static const char junk[] = {':', '-', '{', '"', '\n', '&', '*', '\0', '\xc3', ' '};
            char *u = xmalloc(len);
            memcpy(u, doc, len);
            u[cut] = junk[cut % sizeof junk];
            char err[256] = "";
            char *out = NULL;
            if (writeback_apply(u, len, json, e, ne, &out, NULL, err, sizeof err) == 0)
                free(out);
            else
                ck_assert(err[0] != '\0');
            manifest_set_init(&s);
            manifest_parse(file, u, len, &s);
            manifest_set_free(&s);
            free(u);
        }
        free(t);
    }
}

START_TEST(robust_yaml)
{
    mangled_inputs("kind: List\n"
                   "items:\n"
                   "- apiVersion: v1\n"
                   "  kind: Pod\n"
                   "  metadata: {name: a, labels: {x: 'y'}}\n"
                   "  spec:\n"
                   "    nodeName: \"old\" # c\n"
                   "    s: |\n"
                   "      text\n"
                   "---\n"
                   "a: &x [1, 2]\n"
                   "b: *x\n"
                   "spec: {nodeName: z}\n",
                   0, "f.yaml");
}
END_TEST

/* JSON text the manifest reader finds a syntax error in is refused, as
 * YAML is: the reader reads on past it, this scanner is more lenient, and
 * the two could number the documents after it differently (a NUL in a
 * key: json-c refuses it, the scanner took it). */
START_TEST(json_syntax_error_refused)
{
    static const char text[] = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"m\0etadata\":"
                               "{\"name\":\"n1\"}}\n"
                               "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                               "{\"name\":\"p1\"},\"spec\":{}}\n";
    wb_edit e = {1, -1, "spec.nodeName", "n1", 0};
    char err[512] = "";
    char *out = NULL;
    ck_assert_int_eq(writeback_apply(text, sizeof text - 1, 1, &e, 1, &out, NULL, err, sizeof err),
                     -1);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err, "cannot parse the JSON text: document 0: syntax error: "), "%s", err);
    /* the same stream without the NUL is edited */
    char fixed[sizeof text];
    memcpy(fixed, text, sizeof text);
    fixed[strlen("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"m")] = 'x';
    ck_assert_int_eq(writeback_apply(fixed, sizeof text - 1, 1, &e, 1, &out, NULL, err, sizeof err),
                     0);
    ck_assert_msg(strstr(out, "\"nodeName\": \"n1\""), "%s", out);
    free(out);
}
END_TEST

START_TEST(robust_json)
{
    mangled_inputs("{\"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\",\n"
                   " \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\\u00e9\"},\n"
                   " \"spec\": {\"nodeName\": null, \"n\": [1, 2.5, true]}}]}\n"
                   "{\"spec\": {\"nodeName\": \"x\"}} 12\n",
                   1, "f.json");
}
END_TEST

/* Every prefix of a raw JSON value, and every byte of it changed: valid
 * JSON is written, anything else refused with a message. */
START_TEST(robust_raw_values)
{
    const char *value = "[{\"key\": \"a\\u00e9\\ud83d\\ude00\", \"n\": -12.5e+3, "
                        "\"t\": [true, false, null, {}, []]}, \"x\\n\"]";
    size_t len = strlen(value);
    static const char junk[] = {'"', '\\', '{', ']', ',', ':', '\x01', '\xc3', ' ', '0'};
    for (size_t cut = 0; cut <= len; cut++) {
        for (int variant = 0; variant < 2; variant++) {
            if (variant && cut == len)
                break;
            char *v = xmalloc(len + 1);
            memcpy(v, value, len + 1);
            if (variant)
                v[cut] = junk[cut % sizeof junk];
            else
                v[cut] = '\0';
            for (int json = 0; json < 2; json++) {
                const char *in = json ? pretty_json : seed_doc;
                wb_edit e = {0, -1, json ? "spec.containers" : "spec.taints", v, 1};
                char err[512] = "";
                char *out = NULL;
                int rc = writeback_apply(in, strlen(in), json, &e, 1, &out, NULL, err, sizeof err);
                if (cut == len && !variant)
                    ck_assert_msg(rc == 0, "refused: %s", err);
                if (rc == 0) {
                    ck_assert_ptr_nonnull(out);
                    free(out);
                } else {
                    ck_assert_int_eq(rc, -1);
                    ck_assert_msg(err[0] != '\0', "no message for [%s]", v);
                    ck_assert_ptr_null(out);
                }
            }
            free(v);
        }
    }
}
END_TEST

/* Every edit's output parses again and holds what was asked. */
START_TEST(result_reloads)
{
    wb_edit e[] = {{0, 0, "spec.nodeName", "node-a", 0},
                   {0, 1, "spec.nodeName", "true", 0},
                   {0, 2, "spec.nodeName", "node c", 0}};
    char err[256];
    char *out;
    size_t outlen;
    ck_assert_int_eq(
        writeback_apply(list_doc, strlen(list_doc), 0, e, 3, &out, &outlen, err, sizeof err), 0);
    manifest_set s;
    manifest_set_init(&s);
    ck_assert_int_eq(manifest_parse("l.yaml", out, outlen, &s), 0);
    ck_assert_uint_eq(s.n_objects, 3);
    ck_assert_uint_eq(s.n_errors, 0);
    const char *want[] = {"node-a", "true", "node c"};
    for (size_t i = 0; i < 3; i++) {
        const trellis_value *v = object_get(s.objects[i], "spec.nodeName");
        ck_assert_int_eq(value_type(v), TRELLIS_VALUE_STRING);
        ck_assert_str_eq(value_string(v), want[i]);
        ck_assert_int_eq(s.objects[i]->item, (int)i);
    }
    manifest_set_free(&s);
    free(out);
}
END_TEST

/* ---- generated manifests ------------------------------------------------
 *
 * A seeded generator writes manifests in many layouts (block and flow maps,
 * sequences, block scalars, comments, blank lines, empty documents, Lists,
 * two-space or four-space indentation, LF or CRLF), applies random edits,
 * and checks the result through manifest.c against the same edits made on
 * the json-c trees of the original: the edited fields change, nothing else
 * does, and edits that cannot be placed are refused. */

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng_state >> 33) % n);
}

typedef struct gen {
    strbuf b;
    const char *nl;
    int step;
    int names;
} gen;

static void g_line(gen *g, int ind, const char *text)
{
    for (int i = 0; i < ind; i++)
        sb_add(&g->b, " ", 1);
    sb_puts(&g->b, text);
    if (rnd(6) == 0)
        sb_puts(&g->b, "  # note");
    sb_puts(&g->b, g->nl);
}

static const char *g_scalar(void)
{
    static const char *const v[] = {"plain", "\"double q\"", "'single'", "12",      "true", "null",
                                    "~",     "1.5",          "\"\"",     "x-y.z/w", "0x1F"};
    return v[rnd(sizeof v / sizeof *v)];
}

static void g_map(gen *g, int ind, int depth, const char *first_key, const char *first_value);

static void g_member(gen *g, int ind, int depth, const char *key)
{
    char line[256];
    switch (depth < 3 ? rnd(9) : rnd(3)) {
    case 0:
    case 1:
        snprintf(line, sizeof line, "%s: %s", key, g_scalar());
        g_line(g, ind, line);
        break;
    case 2:
        snprintf(line, sizeof line, "%s: {a: %s, b: [1, %s]}", key, g_scalar(), g_scalar());
        g_line(g, ind, line);
        break;
    case 3:
        snprintf(line, sizeof line, "%s:", key);
        g_line(g, ind, line);
        g_map(g, ind + g->step, depth + 1, NULL, NULL);
        break;
    case 4: {
        int seq_ind = rnd(2) ? ind : ind + g->step;
        snprintf(line, sizeof line, "%s:", key);
        g_line(g, ind, line);
        for (unsigned i = 0, n = 1 + rnd(3); i < n; i++) {
            snprintf(line, sizeof line, "- %s", g_scalar());
            g_line(g, seq_ind, line);
        }
        break;
    }
    case 5: {
        /* a sequence of maps */
        int seq_ind = rnd(2) ? ind : ind + g->step;
        snprintf(line, sizeof line, "%s:", key);
        g_line(g, ind, line);
        for (unsigned i = 0, n = 1 + rnd(2); i < n; i++) {
            g_line(g, seq_ind, "- name: item");
            g_map(g, seq_ind + 2, depth + 1, NULL, NULL);
        }
        break;
    }
    case 6: {
        static const char *const heads[] = {"|", "|-", ">", "|+", ">-"};
        snprintf(line, sizeof line, "%s: %s", key, heads[rnd(5)]);
        g_line(g, ind, line);
        for (unsigned i = 0, n = 1 + rnd(2); i < n; i++) {
            for (int k = 0; k < ind + g->step; k++)
                sb_add(&g->b, " ", 1);
            sb_puts(&g->b, "text line");
            sb_puts(&g->b, g->nl);
        }
        if (rnd(2))
            sb_puts(&g->b, g->nl);
        break;
    }
    case 7:
        snprintf(line, sizeof line, "%s:", key);
        g_line(g, ind, line);
        break;
    default:
        snprintf(line, sizeof line, "%s: [a, {b: c}]", key);
        g_line(g, ind, line);
        break;
    }
}

static void g_map(gen *g, int ind, int depth, const char *first_key, const char *first_value)
{
    static const char *const keys[] = {"k1", "k2", "k3", "nodeName", "x"};
    unsigned used = first_key ? 1u << 3 : 0; /* keys[3] is nodeName */
    if (first_key) {
        char line[256];
        snprintf(line, sizeof line, "%s: %s", first_key, first_value);
        g_line(g, ind, line);
    }
    for (unsigned i = 0, n = 1 + rnd(3); i < n; i++) {
        unsigned k = rnd(5);
        if (used & (1u << k))
            continue;
        used |= 1u << k;
        if (rnd(8) == 0) {
            for (int j = 0; j < ind; j++)
                sb_add(&g->b, " ", 1);
            sb_puts(&g->b, "# a comment line");
            sb_puts(&g->b, g->nl);
        }
        if (rnd(8) == 0)
            sb_puts(&g->b, g->nl);
        g_member(g, ind, depth, keys[k]);
    }
}

static void g_spec(gen *g, int ind)
{
    char line[128];
    switch (rnd(8)) {
    case 0:
        return;
    case 1:
        g_line(g, ind, "spec:");
        return;
    case 2:
        g_line(g, ind, "spec: null");
        return;
    case 3:
        g_line(g, ind, "spec: {}");
        return;
    case 4:
        snprintf(line, sizeof line, "spec: {nodeName: %s, k1: [1, 2]}", g_scalar());
        g_line(g, ind, line);
        return;
    default:
        g_line(g, ind, "spec:");
        g_map(g, ind + g->step, 1, rnd(2) ? "nodeName" : NULL, g_scalar());
        return;
    }
}

/* A Pod whose top-level keys sit at column ind. */
static void g_pod(gen *g, int ind)
{
    char line[64];
    g_line(g, ind, "apiVersion: v1");
    g_line(g, ind, "kind: Pod");
    g_line(g, ind, "metadata:");
    snprintf(line, sizeof line, "name: p%d", g->names++);
    g_line(g, ind + g->step, line);
    if (rnd(2)) {
        g_line(g, ind + g->step, "labels:");
        g_line(g, ind + 2 * g->step, "app: web");
    }
    g_spec(g, ind);
    if (rnd(4) == 0)
        g_line(g, ind, "status: {phase: Pending}");
}

/* A List item: the pod at column 2, its first line starting with "- ". */
static void g_item(gen *g)
{
    size_t at = g->b.len;
    g_pod(g, 2);
    g->b.s[at] = '-';
}

static int g_file(gen *g, int *is_list, int max_docs)
{
    int ndocs = 1 + (int)rnd((unsigned)max_docs);
    for (int d = 0; d < ndocs; d++) {
        if (d > 0 || rnd(3) == 0) {
            sb_puts(&g->b, "---");
            sb_puts(&g->b, g->nl);
        }
        is_list[d] = 0;
        switch (d > 0 ? rnd(6) : 1 + rnd(5)) {
        case 0:
            sb_puts(&g->b, "# nothing here");
            sb_puts(&g->b, g->nl);
            is_list[d] = -1;
            break;
        case 1:
            is_list[d] = 1;
            g_line(g, 0, "apiVersion: v1");
            g_line(g, 0, "kind: List");
            g_line(g, 0, "items:");
            for (unsigned i = 0, n = 1 + rnd(3); i < n; i++)
                g_item(g);
            break;
        default:
            g_pod(g, 0);
        }
        if (rnd(5) == 0) {
            sb_puts(&g->b, g->nl);
            sb_puts(&g->b, "# trailing");
            sb_puts(&g->b, g->nl);
        }
    }
    return ndocs;
}

/* The expected effect of one edit on a json-c tree: 0, -1 when the edit
 * must be refused, 1 when the outcome depends on the layout. */
static int json_edit(json_object *root, const char *path, const char *value, int raw)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    char *comps[8];
    size_t n = 0;
    for (char *t = strtok(buf, "."); t && n < 8; t = strtok(NULL, "."))
        comps[n++] = t;
    json_object *cur = root;
    for (size_t i = 0; i + 1 < n; i++) {
        json_object *next = NULL;
        if (!json_object_object_get_ex(cur, comps[i], &next) || !next) {
            if (!value)
                return 0;
            next = json_object_new_object();
            json_object_object_add(cur, comps[i], next);
        } else if (!json_object_is_type(next, json_type_object)) {
            return -1;
        }
        cur = next;
    }
    json_object *old = NULL;
    int exists = json_object_object_get_ex(cur, comps[n - 1], &old);
    if (!value) {
        json_object_object_del(cur, comps[n - 1]);
        return 0;
    }
    if (raw) {
        /* a raw value replaces whatever is there ("null" parses to NULL) */
        json_object_object_add(cur, comps[n - 1], json_tokener_parse(value));
        return 0;
    }
    /* an emptied block map reads as null, a flow {} as a map: either
     * outcome is right, the case is not checked */
    if (exists && json_object_is_type(old, json_type_object) && json_object_object_length(old) == 0)
        return 1;
    if (exists &&
        (json_object_is_type(old, json_type_object) || json_object_is_type(old, json_type_array)))
        return -1;
    json_object_object_add(cur, comps[n - 1], json_object_new_string(value));
    return 0;
}

/* Empty maps read as null once written back (a block map cannot be empty):
 * compare them as null. */
static json_object *normalize(json_object *v)
{
    if (json_object_is_type(v, json_type_object)) {
        if (json_object_object_length(v) == 0)
            return NULL;
        json_object_object_foreach(v, key, child)
        {
            json_object *n = normalize(child);
            if (n != child)
                json_object_object_add(v, key, n);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *c = json_object_array_get_idx(v, i);
            json_object *n = normalize(c);
            if (n != c)
                json_object_array_put_idx(v, i, n);
        }
    }
    return v;
}

static json_object *copy_of(const trellis_object *o)
{
    json_object *c = object_to_json(o);
    ck_assert_ptr_nonnull(c);
    return c;
}

static trellis_object *find_obj(manifest_set *s, int doc, int item)
{
    for (size_t i = 0; i < s->n_objects; i++)
        if (s->objects[i]->doc == doc && s->objects[i]->item == item)
            return s->objects[i];
    return NULL;
}

static void check_generated(const char *text, size_t len, int json, const wb_edit *e, size_t n)
{
    const char *file = json ? "g.json" : "g.yaml";
    manifest_set before, after;
    manifest_set_init(&before);
    manifest_set_init(&after);
    ck_assert_msg(manifest_parse(file, text, len, &before) == 0 && before.n_errors == 0,
                  "generated text does not load:\n%s\n%s", text,
                  before.n_errors ? before.errors[0].message : "");
    json_object **want = xcalloc(before.n_objects + 1, sizeof *want);
    for (size_t i = 0; i < before.n_objects; i++)
        want[i] = copy_of(before.objects[i]);
    int refuse = 0, unsure = 0;
    for (size_t k = 0; k < n && !refuse && !unsure; k++) {
        size_t i;
        for (i = 0; i < before.n_objects; i++)
            if (before.objects[i]->doc == e[k].doc && before.objects[i]->item == e[k].item)
                break;
        int r = i == before.n_objects ? -1 : json_edit(want[i], e[k].path, e[k].value, e[k].raw);
        refuse = r < 0;
        unsure = r > 0;
    }
    if (unsure) {
        for (size_t i = 0; i < before.n_objects; i++)
            json_object_put(want[i]);
        free(want);
        manifest_set_free(&before);
        return;
    }
    char err[512] = "";
    char *out = NULL;
    size_t outlen = 0;
    int rc = writeback_apply(text, len, json, e, n, &out, &outlen, err, sizeof err);
    strbuf what;
    sb_init(&what);
    for (size_t k = 0; k < n; k++)
        sb_printf(&what, "  doc %d item %d %s = %s%s\n", e[k].doc, e[k].item, e[k].path,
                  e[k].value ? e[k].value : "(remove)", e[k].raw ? " (raw)" : "");
    if (refuse) {
        ck_assert_msg(rc == -1, "edits accepted but should be refused:\n%s%s", what.s, text);
    } else {
        ck_assert_msg(rc == 0, "edits refused: %s\n%s%s", err, what.s, text);
        ck_assert_int_eq(manifest_parse(file, out, outlen, &after), 0);
        ck_assert_msg(after.n_errors == 0, "result does not load: %s\n%s",
                      after.n_errors ? after.errors[0].message : "", out);
        ck_assert_uint_eq(after.n_objects, before.n_objects);
        for (size_t i = 0; i < before.n_objects; i++) {
            trellis_object *o = find_obj(&after, before.objects[i]->doc, before.objects[i]->item);
            ck_assert_ptr_nonnull(o);
            json_object *got = normalize(copy_of(o));
            json_object *exp = normalize(want[i]);
            want[i] = exp;
            ck_assert_msg(json_object_equal(got, exp),
                          "object %zu differs:\n got  %s\n want %s\ninput:\n%s\n"
                          "output:\n%s",
                          i, json_object_to_json_string(got), json_object_to_json_string(exp), text,
                          out);
            json_object_put(got);
        }
    }
    sb_free(&what);
    for (size_t i = 0; i < before.n_objects; i++)
        json_object_put(want[i]);
    free(want);
    free(out);
    manifest_set_free(&before);
    manifest_set_free(&after);
}

static const char *const gen_paths[] = {"spec.nodeName",
                                        "spec.schedulerName",
                                        "spec.k1",
                                        "spec.k2.k3",
                                        "spec.x.y.z",
                                        "metadata.name",
                                        "metadata.labels.app",
                                        "metadata.annotations.note",
                                        "status.phase",
                                        "spec"};
static const char *const gen_values[] = {
    "n1", "node-2.example.com", "true", "123", "with space", "", "q\"uote", NULL, NULL, NULL};

static const char *const gen_raw[] = {
    "[{\"key\": \"a\", \"effect\": \"NoSchedule\"}]",
    "[]",
    "{}",
    "{\"a\": [1, 2.5, true, null, -3e2], \"b\": {\"c\": \"d\", \"e\": {}}}",
    "\"str\"",
    "\"123\"",
    "12",
    "null",
    "false",
    "\"li\\ne \\u00e9\\u2028\\u0085#: - x\"",
    "[[], {}, \"\", [\"nested\", [1]]]",
    NULL};

/* with_raw: some edits are raw (never of metadata.name, which must stay a
 * string for the object to load). */
static void random_edits(wb_edit *e, size_t n, int ndocs, const int *is_list, int with_raw)
{
    for (size_t k = 0; k < n; k++) {
        memset(&e[k], 0, sizeof e[k]);
        e[k].doc = (int)rnd((unsigned)ndocs);
        e[k].item = is_list[e[k].doc] == 1 ? (int)rnd(3) : -1;
        e[k].path = gen_paths[rnd(sizeof gen_paths / sizeof *gen_paths)];
        if (with_raw && rnd(2) == 0 && strcmp(e[k].path, "metadata.name") != 0) {
            e[k].raw = 1;
            e[k].value = gen_raw[rnd(sizeof gen_raw / sizeof *gen_raw)];
            continue;
        }
        e[k].value = gen_values[rnd(sizeof gen_values / sizeof *gen_values)];
        if ((!e[k].value || !e[k].value[0]) && strcmp(e[k].path, "metadata.name") == 0)
            e[k].value = "renamed";
    }
}

static void generated_yaml_run(unsigned long long seed, int with_raw)
{
    rng_state = seed;
    for (int iter = 0; iter < 400; iter++) {
        gen g;
        sb_init(&g.b);
        g.nl = rnd(4) == 0 ? "\r\n" : "\n";
        g.step = rnd(3) == 0 ? 4 : 2;
        g.names = 0;
        int is_list[4];
        int ndocs = g_file(&g, is_list, 4);
        wb_edit e[3];
        size_t n = 1 + rnd(3);
        random_edits(e, n, ndocs, is_list, with_raw);
        check_generated(g.b.s, g.b.len, 0, e, n);
        sb_free(&g.b);
    }
}

START_TEST(generated_yaml)
{
    generated_yaml_run(42, 0);
}
END_TEST

START_TEST(generated_yaml_raw)
{
    generated_yaml_run(4242, 1);
}
END_TEST

static json_object *j_random(int depth)
{
    json_object *m = json_object_new_object();
    static const char *const keys[] = {"k1", "k2", "k3", "nodeName", "x"};
    for (unsigned i = 0, n = rnd(4); i < n; i++) {
        json_object *v;
        switch (depth < 3 ? rnd(6) : rnd(3)) {
        case 0:
            v = json_object_new_string("s");
            break;
        case 1:
            v = json_object_new_int((int)rnd(100));
            break;
        case 2:
            v = NULL;
            break;
        case 3:
            v = json_object_new_array();
            json_object_array_add(v, json_object_new_boolean(1));
            break;
        default:
            v = j_random(depth + 1);
        }
        json_object_object_add(m, keys[rnd(5)], v);
    }
    return m;
}

static void generated_json_run(unsigned long long seed, int with_raw)
{
    static const int flags[] = {JSON_C_TO_STRING_PLAIN, JSON_C_TO_STRING_SPACED,
                                JSON_C_TO_STRING_PRETTY,
                                JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB};
    rng_state = seed;
    for (int iter = 0; iter < 300; iter++) {
        strbuf b;
        sb_init(&b);
        int ndocs = 1 + (int)rnd(3), is_list[3];
        int fl = flags[rnd(4)];
        for (int d = 0; d < ndocs; d++) {
            json_object *doc;
            is_list[d] = rnd(3) == 0;
            json_object *pod = json_object_new_object();
            json_object_object_add(pod, "apiVersion", json_object_new_string("v1"));
            json_object_object_add(pod, "kind", json_object_new_string("Pod"));
            json_object *meta = json_object_new_object();
            json_object_object_add(meta, "name", json_object_new_string("p"));
            json_object_object_add(pod, "metadata", meta);
            switch (rnd(4)) {
            case 0:
                break;
            case 1:
                json_object_object_add(pod, "spec", NULL);
                break;
            default:
                json_object_object_add(pod, "spec", j_random(1));
            }
            if (is_list[d]) {
                doc = json_object_new_object();
                json_object_object_add(doc, "kind", json_object_new_string("List"));
                json_object *items = json_object_new_array();
                for (unsigned i = 0, n = 1 + rnd(3); i < n; i++) {
                    json_object *c = NULL;
                    json_object_deep_copy(pod, &c, NULL);
                    json_object_array_add(items, c);
                }
                json_object_object_add(doc, "items", items);
                json_object_put(pod);
            } else {
                doc = pod;
            }
            sb_puts(&b, json_object_to_json_string_ext(doc, fl));
            sb_puts(&b, rnd(2) ? "\n" : " ");
            json_object_put(doc);
        }
        wb_edit e[3];
        size_t n = 1 + rnd(3);
        random_edits(e, n, ndocs, is_list, with_raw);
        check_generated(b.s, b.len, 1, e, n);
        sb_free(&b);
    }
}

START_TEST(generated_json)
{
    generated_json_run(7, 0);
}
END_TEST

START_TEST(generated_json_raw)
{
    generated_json_run(77, 1);
}
END_TEST

/* ---- atomic write ------------------------------------------------------- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static char *make_tmpdir(void)
{
    char *d = xstrdup("/tmp/trellis-wb-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static void remove_tree(char *d)
{
    nftw(d, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static size_t count_entries(const char *dir)
{
    char *cmd = xasprintf("ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(fscanf(p, "%zu", &n), 1);
    pclose(p);
    free(cmd);
    return n;
}

START_TEST(atomic_replace_keeps_mode)
{
    char *d = make_tmpdir();
    char *f = xasprintf("%s/pod.yaml", d);
    FILE *fp = fopen(f, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("old content that is longer than the new one\n", fp);
    fclose(fp);
    ck_assert_int_eq(chmod(f, 0600), 0);
    char err[256] = "";
    ck_assert_int_eq(atomicfile_write(f, NULL, "new\n", 4, err, sizeof err), 0);
    struct stat st;
    ck_assert_int_eq(stat(f, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    size_t len;
    char *got = read_file(f, &len, err, sizeof err);
    ck_assert_str_eq(got, "new\n");
    free(got);
    ck_assert_uint_eq(count_entries(d), 1); /* no temporary left */
    /* a new file gets 0644 */
    char *g = xasprintf("%s/new.json", d);
    ck_assert_int_eq(atomicfile_write(g, NULL, "{}", 2, err, sizeof err), 0);
    ck_assert_int_eq(stat(g, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644);
    /* through a symbolic link, the link stays and its target changes */
    char *l = xasprintf("%s/link.yaml", d);
    ck_assert_int_eq(symlink("pod.yaml", l), 0);
    ck_assert_int_eq(atomicfile_write(l, NULL, "via link\n", 9, err, sizeof err), 0);
    ck_assert_int_eq(lstat(l, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    got = read_file(f, &len, err, sizeof err);
    ck_assert_str_eq(got, "via link\n");
    free(got);
    ck_assert_uint_eq(count_entries(d), 3);
    free(f);
    free(g);
    free(l);
    remove_tree(d);
}
END_TEST

/* A write made against a file as it was is not made when another writer
 * replaced (renamed over) or rewrote the file meanwhile: theirs stays. */
START_TEST(atomic_write_unchanged_keeps_another_writers_file)
{
    char *d = make_tmpdir();
    char *f = xasprintf("%s/pods.yaml", d), *t = xasprintf("%s/.other", d);
    FILE *fp = fopen(f, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("read\n", fp);
    fclose(fp);
    struct stat was;
    ck_assert_int_eq(stat(f, &was), 0);
    char err[256] = "";
    fp = fopen(t, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("theirs\n", fp);
    fclose(fp);
    ck_assert_int_eq(rename(t, f), 0); /* another writer's rename over it */
    ck_assert_int_eq(atomicfile_write_unchanged(f, NULL, "mine\n", 5, &was, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changed on disk while it was being written"), "%s", err);
    size_t len;
    char *got = read_file(f, &len, err, sizeof err);
    ck_assert_str_eq(got, "theirs\n");
    free(got);
    ck_assert_uint_eq(count_entries(d), 1); /* no temporary left */
    /* unchanged since: written */
    ck_assert_int_eq(stat(f, &was), 0);
    ck_assert_int_eq(atomicfile_write_unchanged(f, NULL, "mine\n", 5, &was, err, sizeof err), 0);
    got = read_file(f, &len, err, sizeof err);
    ck_assert_str_eq(got, "mine\n");
    free(got);
    free(f);
    free(t);
    remove_tree(d);
}
END_TEST

/* A batch resolves its directory once: files of one directory, new and
 * old, through a link inside the state and a link leading out of it. */
START_TEST(atomic_batch_one_directory)
{
    char *d = make_tmpdir();
    char *real = realpath(d, NULL);
    ck_assert_ptr_nonnull(real);
    char *old = xasprintf("%s/old.yaml", d), *fresh = xasprintf("%s/fresh.json", d);
    char *in = xasprintf("%s/in.yaml", d), *out = xasprintf("%s/out.yaml", d);
    FILE *fp = fopen(old, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("old\n", fp);
    fclose(fp);
    ck_assert_int_eq(chmod(old, 0600), 0);
    ck_assert_int_eq(symlink("old.yaml", in), 0);
    char *elsewhere = make_tmpdir(), *outside = xasprintf("%s/x.yaml", elsewhere);
    fp = fopen(outside, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    ck_assert_int_eq(symlink(outside, out), 0);
    char err[512] = "";
    atomicfile_batch *b = atomicfile_batch_new(real);
    ck_assert_int_eq(atomicfile_batch_add(b, fresh, "{}\n", 3, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_add(b, old, "new\n", 4, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_add(b, out, "x", 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "outside the state directory"), "err '%s'", err);
    ck_assert_int_eq(atomicfile_batch_commit(b, NULL, NULL), 0);
    atomicfile_batch_free(b);
    struct stat st;
    ck_assert_int_eq(stat(old, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600); /* kept */
    ck_assert_int_eq(stat(fresh, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644);
    size_t len;
    char *got = read_file(fresh, &len, err, sizeof err);
    ck_assert_str_eq(got, "{}\n");
    free(got);
    /* a link within the state is followed, in the same batch as others */
    b = atomicfile_batch_new(real);
    ck_assert_int_eq(atomicfile_batch_add(b, fresh, "{\"a\":1}\n", 8, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_add(b, in, "via link\n", 9, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_commit(b, NULL, NULL), 0);
    atomicfile_batch_free(b);
    ck_assert_int_eq(lstat(in, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    got = read_file(old, &len, err, sizeof err);
    ck_assert_str_eq(got, "via link\n");
    free(got);
    ck_assert_uint_eq(count_entries(d), 4); /* no temporary left */
    free(old);
    free(fresh);
    free(in);
    free(out);
    free(real);
    free(outside);
    remove_tree(elsewhere);
    remove_tree(d);
}
END_TEST

/* add_new stages only a path where no file is: not over a file, nor
 * through a link to one; a link that leads nowhere is replaced. */
START_TEST(atomic_batch_add_new)
{
    char *d = make_tmpdir();
    char *old = xasprintf("%s/old.json", d), *fresh = xasprintf("%s/fresh.json", d);
    char *tofile = xasprintf("%s/to-old.json", d), *nowhere = xasprintf("%s/nowhere.json", d);
    FILE *fp = fopen(old, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("old\n", fp);
    fclose(fp);
    ck_assert_int_eq(symlink("old.json", tofile), 0);
    ck_assert_int_eq(symlink("missing.json", nowhere), 0);
    char err[512] = "x";
    atomicfile_batch *b = atomicfile_batch_new(NULL);
    ck_assert_int_eq(atomicfile_batch_add_new(b, old, "new\n", 4, err, sizeof err), -2);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(atomicfile_batch_add_new(b, tofile, "new\n", 4, err, sizeof err), -2);
    ck_assert_int_eq(atomicfile_batch_add_new(b, fresh, "{}\n", 3, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_add_new(b, nowhere, "{}\n", 3, err, sizeof err), 0);
    ck_assert_int_eq(atomicfile_batch_commit(b, NULL, NULL), 0);
    atomicfile_batch_free(b);
    size_t len;
    char *got = read_file(old, &len, err, sizeof err);
    ck_assert_str_eq(got, "old\n"); /* untouched */
    free(got);
    got = read_file(fresh, &len, err, sizeof err);
    ck_assert_str_eq(got, "{}\n");
    free(got);
    struct stat st;
    ck_assert_int_eq(lstat(nowhere, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_uint_eq(count_entries(d), 4);
    free(old);
    free(fresh);
    free(tofile);
    free(nowhere);
    remove_tree(d);
}
END_TEST

START_TEST(atomic_failure_leaves_nothing)
{
    char *d = make_tmpdir();
    char *f = xasprintf("%s/missing-dir/pod.yaml", d);
    char err[256] = "";
    ck_assert_int_eq(atomicfile_write(f, NULL, "x", 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, f) != NULL, "err '%s' does not name the path", err);
    ck_assert_msg(strstr(err, strerror(ENOENT)) != NULL, "err '%s'", err);
    ck_assert_uint_eq(count_entries(d), 0);
    /* a directory that cannot be written (unless we are root) */
    if (geteuid() != 0) {
        char *ro = xasprintf("%s/ro", d);
        ck_assert_int_eq(mkdir(ro, 0500), 0);
        char *g = xasprintf("%s/pod.yaml", ro);
        ck_assert_int_eq(atomicfile_write(g, NULL, "x", 1, err, sizeof err), -1);
        ck_assert(strstr(err, strerror(EACCES)) != NULL);
        ck_assert_uint_eq(count_entries(ro), 0);
        chmod(ro, 0700);
        free(g);
        free(ro);
    }
    free(f);
    remove_tree(d);
}
END_TEST

/* writeback_remove(text, doc, item) must give exactly want, with docs_left. */
static void check_cut(const char *in, int json, int doc, int item, const char *want,
                      size_t want_left)
{
    char *out = NULL, err[512] = "";
    size_t outlen = 0, left = 99;
    int rc =
        writeback_remove(in, strlen(in), json, doc, item, &out, &outlen, &left, err, sizeof err);
    ck_assert_msg(rc == 0, "writeback_remove failed: %s", err);
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(outlen, strlen(want));
    ck_assert_uint_eq(left, want_left);
    free(out);
}

static void check_cut_refused(const char *in, int json, int doc, int item, const char *why)
{
    char *out = NULL, err[512] = "";
    ck_assert_int_eq(
        writeback_remove(in, strlen(in), json, doc, item, &out, NULL, NULL, err, sizeof err), -1);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err, why), "expected '%s' in: %s", why, err);
}

#define D(n) "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " n "\n"

START_TEST(cut_yaml_documents)
{
    const char *three = "# header\n" D("a") "---\n# about b\n" D("b") "---\n" D("c");
    /* the first: its content goes, the file's header stays */
    check_cut(three, 0, 0, -1, "# header\n---\n# about b\n" D("b") "---\n" D("c"), 2);
    /* the middle one, with its --- line and its comment */
    check_cut(three, 0, 1, -1, "# header\n" D("a") "---\n" D("c"), 2);
    /* the last */
    check_cut(three, 0, 2, -1, "# header\n" D("a") "---\n# about b\n" D("b"), 2);
    /* the only one: nothing is left to hold */
    check_cut(D("a"), 0, 0, -1, "", 0);
    check_cut("---\n" D("a"), 0, 0, -1, "", 0);
    /* an explicit first marker and a document end marker */
    check_cut("--- # first\n" D("a") "...\n---\n" D("b"), 0, 0, -1, "---\n" D("b"), 1);
    check_cut_refused(three, 0, 3, -1, "document 4 does not exist");
    check_cut_refused(three, 0, 0, 0, "document 1 has no List item 1");
    check_cut_refused("a: [\n", 0, 0, -1, "");
}
END_TEST

#define LIST_YAML                                                                                  \
    "apiVersion: v1\nkind: List\nitems:\n"                                                         \
    "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"                                 \
    "# about b\n"                                                                                  \
    "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n"                              \
    "-\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"

START_TEST(cut_list_items)
{
    check_cut(LIST_YAML, 0, 0, 0,
              "apiVersion: v1\nkind: List\nitems:\n# about b\n"
              "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n"
              "-\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n",
              1);
    check_cut(LIST_YAML, 0, 0, 2,
              "apiVersion: v1\nkind: List\nitems:\n"
              "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
              "# about b\n"
              "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n",
              1);
    /* a flow list and a JSON List: one comma goes with the item */
    check_cut(
        "kind: List\nitems: [{kind: A, metadata: {name: a}}, {kind: A, metadata: {name: b}}]\n", 0,
        0, 1, "kind: List\nitems: [{kind: A, metadata: {name: a}}]\n", 1);
    const char *js = "{\"kind\": \"List\", \"items\": [\n"
                     "  {\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}},\n"
                     "  {\"kind\": \"A\", \"metadata\": {\"name\": \"b\"}},\n"
                     "  {\"kind\": \"A\", \"metadata\": {\"name\": \"c\"}}\n]}\n";
    check_cut(js, 1, 0, 1,
              "{\"kind\": \"List\", \"items\": [\n"
              "  {\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}},\n"
              "  {\"kind\": \"A\", \"metadata\": {\"name\": \"c\"}}\n]}\n",
              1);
    check_cut(js, 1, 0, 2,
              "{\"kind\": \"List\", \"items\": [\n"
              "  {\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}},\n"
              "  {\"kind\": \"A\", \"metadata\": {\"name\": \"b\"}}\n]}\n",
              1);
    check_cut_refused(js, 1, 0, 3, "has no List item 4");
}
END_TEST

START_TEST(cut_json_documents)
{
    const char *two = "{\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}}\n"
                      "{\"kind\": \"A\", \"metadata\": {\"name\": \"b\"}}\n";
    check_cut(two, 1, 0, -1, "{\"kind\": \"A\", \"metadata\": {\"name\": \"b\"}}\n", 1);
    check_cut(two, 1, 1, -1, "{\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}}\n", 1);
    check_cut("{\"kind\": \"A\"}\n", 1, 0, -1, "", 0);
}
END_TEST

static Suite *writeback_suite(void)
{
    Suite *s = suite_create("writeback");
    TCase *y = tcase_create("yaml");
    tcase_add_test(y, yaml_replace_existing);
    tcase_add_test(y, yaml_replace_empty_forms);
    tcase_add_test(y, yaml_replace_styles);
    tcase_add_test(y, yaml_value_quoting);
    tcase_add_test(y, yaml_insert_after_nested_block_and_before_document);
    tcase_add_test(y, yaml_insert_after_block_scalar);
    tcase_add_test(y, yaml_insert_missing_parent);
    tcase_add_test(y, yaml_insert_null_parent);
    tcase_add_test(y, yaml_insert_flow);
    tcase_add_test(y, yaml_comments_and_blank_lines_kept);
    tcase_add_test(y, yaml_unicode_positions);
    tcase_add_test(y, yaml_crlf);
    tcase_add_test(y, yaml_list_items);
    tcase_add_test(y, list_with_many_edits);
    tcase_add_test(y, json_duplicate_key_edits_the_last);
    tcase_add_test(y, yaml_several_documents);
    tcase_add_test(y, yaml_edit_order);
    tcase_add_test(y, yaml_remove);
    tcase_add_test(y, yaml_remove_flow);
    tcase_add_test(y, yaml_refusals);
    tcase_add_test(y, yaml_quoted_path_keys);
    suite_add_tcase(s, y);
    TCase *j = tcase_create("json");
    tcase_add_test(j, json_pretty);
    tcase_add_test(j, json_compact);
    tcase_add_test(j, json_concatenated_and_lists);
    tcase_add_test(j, json_refusals_and_noops);
    tcase_add_test(j, json_crlf);
    suite_add_tcase(s, j);
    TCase *w = tcase_create("raw");
    tcase_add_test(w, raw_replace_block_sequence);
    tcase_add_test(w, raw_replace_block_mapping);
    tcase_add_test(w, raw_replace_scalar);
    tcase_add_test(w, raw_replace_flow);
    tcase_add_test(w, raw_insert_missing);
    tcase_add_test(w, raw_json);
    tcase_add_test(w, raw_invalid_json);
    tcase_add_test(w, raw_list_items);
    tcase_add_test(w, raw_crlf);
    tcase_add_test(w, raw_edit_order);
    tcase_add_test(w, remove_block_sequence);
    suite_add_tcase(s, w);
    TCase *r = tcase_create("robustness");
    tcase_set_timeout(r, 60);
    tcase_add_test(r, robust_yaml);
    tcase_add_test(r, robust_json);
    tcase_add_test(r, json_syntax_error_refused);
    tcase_add_test(r, robust_raw_values);
    tcase_add_test(r, result_reloads);
    tcase_add_test(r, generated_yaml);
    tcase_add_test(r, generated_json);
    tcase_add_test(r, generated_yaml_raw);
    tcase_add_test(r, generated_json_raw);
    suite_add_tcase(s, r);
    TCase *a = tcase_create("atomic");
    tcase_add_test(a, atomic_replace_keeps_mode);
    tcase_add_test(a, atomic_write_unchanged_keeps_another_writers_file);
    tcase_add_test(a, atomic_failure_leaves_nothing);
    tcase_add_test(a, atomic_batch_one_directory);
    tcase_add_test(a, atomic_batch_add_new);
    suite_add_tcase(s, a);
    TCase *c = tcase_create("cut");
    tcase_add_test(c, cut_yaml_documents);
    tcase_add_test(c, cut_list_items);
    tcase_add_test(c, cut_json_documents);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(writeback_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
