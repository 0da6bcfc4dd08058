/*
 * test_store.c - the file store: listing in path order with hidden files
 * skipped, duplicate objects reported, patches refused when the file
 * changed on disk (nothing is overwritten), dry runs, created objects;
 * the write queue of the networked stores (wqueue.c) and the versions
 * their own writes made (verchain.c).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "edit.h"
#include "store_file.h"
#include "testutil.h"
#include "verchain.h"
#include "wqueue.h"
#include "util.h"

static char tmp[64];

static void setup(void)
{
    tu_mkdtemp(tmp, "store");
}

static void teardown(void)
{
    tu_rmtree(tmp);
}

static void put(const char *rel, const char *text)
{
    tu_write(tmp, rel, text);
}

static char *get(const char *rel)
{
    return tu_read(tmp, rel);
}

#define POD(name) "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\nspec:\n  x: 1\n"

START_TEST(list_order_hidden_and_duplicates)
{
    char p[256];
    snprintf(p, sizeof p, "%s/sub", tmp);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/.hidden", tmp);
    mkdir(p, 0755);
    put("b.yaml", POD("b"));
    put("a.yaml", POD("a") "---\n" POD("a2"));
    put("sub/c.yml", POD("c"));
    put(".hidden/d.yaml", POD("d"));
    put(".tmp.yaml", POD("e"));
    put("notes.txt", "not a manifest");
    put("z.yaml", POD("b")); /* the same Pod twice */
    char err[256];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    manifest_set ms;
    manifest_set_init(&ms);
    ck_assert_int_eq(s->ops->list(s, &ms, err, sizeof err), 0);
    ck_assert_uint_eq(ms.n_objects, 4);
    ck_assert_str_eq(ms.objects[0]->name, "a");
    ck_assert_str_eq(ms.objects[1]->name, "a2");
    ck_assert_str_eq(ms.objects[2]->name, "b");
    ck_assert_str_eq(ms.objects[3]->name, "c");
    ck_assert_uint_eq(ms.n_errors, 1);
    ck_assert_msg(strstr(ms.errors[0].message, "defined twice") &&
                      strstr(ms.errors[0].file, "z.yaml"),
                  "%s: %s", ms.errors[0].file, ms.errors[0].message);
    trellis_object *o = s->ops->get(s, "Pod", "", "a2");
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->doc, 1);
    object_unref(o);
    ck_assert_ptr_null(s->ops->get(s, "Pod", "", "zz"));
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

START_TEST(patch_flush_and_precondition)
{
    put("a.yaml", "# keep me\n" POD("a") "---\n" POD("b"));
    put("c.yaml", POD("c"));
    char err[512];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    ck_assert_uint_eq(ms.n_objects, 3);
    store_edit e = {"spec.nodeName", "n1", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[1], NULL, &e, 1, err, sizeof err), 0);
    store_edit e2 = {"spec.nodeName", "n2", STORE_SET}; /* a later patch of the same field wins */
    ck_assert_int_eq(s->ops->patch(s, ms.objects[1], NULL, &e2, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, ms.objects[2], NULL, &e, 1, err, sizeof err), 0);
    /* c.yaml changes on disk before the flush: its patch is refused */
    put("c.yaml", POD("c") "  y: 2\n");
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "c.yaml: changed on disk since it was read"), "%s", err);
    char *t = get("a.yaml");
    ck_assert_str_eq(t, "# keep me\n" POD("a") "---\n" POD("b") "  nodeName: n2\n");
    free(t);
    t = get("c.yaml");
    ck_assert_str_eq(t, POD("c") "  y: 2\n");
    free(t);
    /* the store knows the new content of a.yaml: a further patch works */
    store_edit rm = {"spec.nodeName", NULL, STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[1], NULL, &rm, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changed since it was read"), "%s", err);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

START_TEST(dry_run_writes_nothing)
{
    put("a.yaml", POD("a"));
    char err[512];
    store *s = store_file_open(tmp, 1, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    store_edit e = {"spec.nodeName", "n1", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &e, 1, err, sizeof err), 0);
    trellis_object *n = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"new\"}}");
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    char *t = get("a.yaml");
    ck_assert_str_eq(t, POD("a"));
    free(t);
    char p[256];
    snprintf(p, sizeof p, "%s/node-new.json", tmp);
    ck_assert_int_eq(access(p, F_OK), -1);
    object_unref(n);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* The store of tmp, opened and read (ms: what it read). */
static store *opened(manifest_set *ms, char *err, size_t errlen)
{
    store *s = store_file_open(tmp, 0, err, errlen);
    ck_assert_ptr_nonnull(s);
    manifest_set_init(ms);
    s->ops->list(s, ms, err, errlen);
    return s;
}

START_TEST(create_writes_a_new_file)
{
    char err[512];
    manifest_set ms;
    store *s = opened(&ms, err, sizeof err);
    trellis_object *n = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"new-1\"}}");
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), 0);
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "already exists"), "%s", err);
    /* patched before it is written: the edits go to what is written */
    store_edit e[3] = {
        {"metadata.finalizers", "a.io/x", STORE_LIST_ADD},
        {"metadata.labels[\"pool.io/name\"]", "gpu", STORE_SET},
        {"spec.taints", "[{\"key\": \"k\", \"effect\": \"NoSchedule\"}]", STORE_SET_JSON}};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, e, 3, err, sizeof err), 0);
    store_edit again = {"metadata.finalizers", "a.io/y", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, "status", &again, 1, err, sizeof err), 0);
    store_edit rename = {"metadata.name", "other", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &rename, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changes what the object is"), "%s", err);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    char *t = get("node-new-1.json");
    trellis_object *back = tu_obj(t);
    ck_assert_str_eq(back->name, "new-1");
    const trellis_value *f = object_get(back, "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 2);
    ck_assert_str_eq(value_string(value_at(f, 1)), "a.io/y");
    ck_assert_str_eq(object_label(back, "pool.io/name"), "gpu");
    ck_assert_str_eq(value_string(object_get(back, "spec.taints[0].effect")), "NoSchedule");
    object_unref(back);
    free(t);
    object_unref(n);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* List edits of a created object wait (no watch reads this store) and
 * are made at once when it is read or written, with what they would have
 * made one by one; an edit that could fail does not wait, and fails at
 * once, as it always did. */
START_TEST(created_list_edits_wait_then_settle)
{
    char err[512];
    manifest_set ms;
    store *s = opened(&ms, err, sizeof err);
    trellis_object *n = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"new-1\",\"finalizers\":[\"a/0\"]}}");
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), 0);
    char v[32];
    for (int i = 1; i <= 1000; i++) { /* 1000 additions, then 2 of them again */
        snprintf(v, sizeof v, "a/%d", i);
        store_edit e = {"metadata.finalizers", v, STORE_LIST_ADD};
        ck_assert_int_eq(s->ops->patch(s, n, NULL, &e, 1, err, sizeof err), 0);
    }
    store_edit more[3] = {{"metadata.finalizers", "a/7", STORE_LIST_ADD},
                          {"metadata.finalizers", "a/0", STORE_LIST_REMOVE},
                          {"spec.taintKeys", "k", STORE_LIST_ADD}};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, more, 3, err, sizeof err), 0);
    /* read: the edits made */
    trellis_object *got = s->ops->get(s, "Node", "", "new-1");
    const trellis_value *f = object_get(got, "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 1000);
    ck_assert_str_eq(value_string(value_at(f, 0)), "a/1");
    ck_assert_str_eq(value_string(value_at(f, 999)), "a/1000");
    ck_assert_str_eq(value_string(object_get(got, "spec.taintKeys[0]")), "k");
    object_unref(got);
    /* a list inside a list that waits, a list edit of what a set made a
     * string: refused at once, nothing of them made */
    store_edit inner[2] = {{"metadata.finalizers", "b/1", STORE_LIST_ADD},
                           {"spec.extra", "e", STORE_LIST_ADD}};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, inner, 2, err, sizeof err), 0);
    store_edit nested = {"spec.extra.x", "c", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &nested, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "is not a map"), "%s", err);
    store_edit str = {"spec.taintKeys", "\"k\"", STORE_SET_JSON};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &str, 1, err, sizeof err), 0);
    store_edit onstr = {"spec.taintKeys", "k2", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &onstr, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "not a list"), "%s", err);
    store_edit last = {"metadata.finalizers", "b/2", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &last, 1, err, sizeof err), 0);
    /* the same list written another way: made after what waits */
    store_edit alias = {"metadata[\"finalizers\"]", "b/3", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &alias, 1, err, sizeof err), 0);
    /* a field of what the object is: refused at once, as ever */
    store_edit ns = {"metadata.namespace", "x", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &ns, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changes what the object is"), "%s", err);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    char *t = get("node-new-1.json");
    trellis_object *back = tu_obj(t);
    f = object_get(back, "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 1003);
    ck_assert_str_eq(value_string(value_at(f, 1000)), "b/1");
    ck_assert_str_eq(value_string(value_at(f, 1001)), "b/2");
    ck_assert_str_eq(value_string(value_at(f, 1002)), "b/3");
    ck_assert_str_eq(value_string(object_get(back, "spec.taintKeys")), "k");
    ck_assert_str_eq(value_string(object_get(back, "spec.extra[0]")), "e");
    object_unref(back);
    free(t);
    /* one removed with edits waiting: forgotten, edits and all */
    trellis_object *m = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"new-2\"}}");
    ck_assert_int_eq(tu_created(s, m, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, m, NULL, &last, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->remove(s, m, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    char gone[128];
    snprintf(gone, sizeof gone, "%s/node-new-2.json", tmp);
    ck_assert_int_eq(access(gone, F_OK), -1);
    ck_assert_ptr_null(s->ops->get(s, "Node", "", "new-2"));
    object_unref(m);
    object_unref(n);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* What waits is made when the store cannot write it (its entry stays,
 * as an object of no file) and before a watch starts (a watching host
 * learns of each change; there was none to tell). */
static int no_fence(void *ud, char *why, size_t n)
{
    (void)ud;
    snprintf(why, n, "fenced");
    return 0;
}

static void count_events(void *ud, store_event_type type, trellis_object *old_obj,
                         trellis_object *new_obj)
{
    (void)type;
    (void)old_obj; /* borrowed */
    (void)new_obj;
    (*(int *)ud)++;
}

START_TEST(created_list_edits_made_when_not_written_or_watched)
{
    char err[512];
    manifest_set ms;
    store *s = opened(&ms, err, sizeof err);
    s->fence = no_fence;
    trellis_object *n = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"n1\"}}");
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), 0);
    store_edit e = {"metadata.finalizers", "x", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, n, NULL, &e, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), -1);
    trellis_object *got = s->ops->get(s, "Node", "", "n1");
    ck_assert_str_eq(value_string(object_get(got, "metadata.finalizers[0]")), "x");
    object_unref(got);
    s->fence = NULL;
    trellis_object *m = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"n2\"}}");
    ck_assert_int_eq(tu_created(s, m, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, m, NULL, &e, 1, err, sizeof err), 0);
    ck_assert_int_ge(s->ops->watch(s, err, sizeof err), 0);
    int events = 0;
    s->ops->dispatch(s, count_events, &events);
    ck_assert_int_eq(events, 0);
    got = s->ops->get(s, "Node", "", "n2");
    ck_assert_str_eq(value_string(object_get(got, "metadata.finalizers[0]")), "x");
    object_unref(got);
    s->ops->dispatch(s, count_events, &events);
    ck_assert_int_eq(events, 0); /* nothing changed since the watch began */
    object_unref(m);
    object_unref(n);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* Many created objects written in one flush: every file with its object's
 * text, and those that cannot be (a file already there; a second object
 * for the same file) reported in order, the others written all the same. */
static void note_failed(void *ud, const char *id, const char *message)
{
    (void)message;
    strbuf *b = ud;
    sb_printf(b, "%s;", id);
}

START_TEST(many_created_files_written_in_order)
{
    enum { N = 600 };
    char err[2048];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    put("node-n0300.json", "{}\n"); /* appears after the listing */
    for (int i = 0; i <= N; i++) {
        char buf[160];
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s%04d\"}}",
                 i == N ? "N" : "n", i == N ? 17 : i); /* N0017's file is n0017's */
        trellis_object *o = tu_obj(buf);
        ck_assert_int_eq(tu_created(s, o, err, sizeof err), 0);
        object_unref(o);
    }
    strbuf failed;
    sb_init(&failed);
    ck_assert_int_eq(s->ops->flush(s, note_failed, &failed, err, sizeof err), -1);
    ck_assert_str_eq(failed.s, "Node//n0300;Node//N0017;");
    const char *a = strstr(err, "node-n0300.json: exists already");
    const char *b = strstr(err, "node-n0017.json: exists already; Node N0017");
    ck_assert_msg(a && b && a < b, "%s", err);
    sb_free(&failed);
    for (int i = 0; i < N; i++) {
        char rel[32], want[160];
        snprintf(rel, sizeof rel, "node-n%04d.json", i);
        char *t = get(rel);
        snprintf(want, sizeof want,
                 i == 300 ? "{}\n"
                          : "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Node\",\n  \"metadata\": "
                            "{\n    \"name\": \"n%04d\"\n  }\n}\n",
                 i);
        ck_assert_str_eq(t, want);
        free(t);
    }
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* Open tmp, list it and return the store; the objects into ms. */
static store *open_listed(manifest_set *ms)
{
    char err[512];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    manifest_set_init(ms);
    ck_assert_int_eq(s->ops->list(s, ms, err, sizeof err), 0);
    return s;
}

/* Patches of many objects of one file, several fields a patch, some
 * fields patched again later, interleaved, as the edit index grows:
 * every object gets the last value of each of its fields. */
START_TEST(patches_of_many_objects_keep_the_last_value)
{
    enum { N = 40 };
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    for (int i = 0; i < N; i++)
        sb_printf(&b,
                  "%s{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%02d\","
                  "\"namespace\":\"d\"}}",
                  i ? "," : "", i);
    sb_puts(&b, "]}\n");
    put("pods.json", b.s);
    sb_free(&b);
    manifest_set ms;
    store *s = open_listed(&ms);
    ck_assert_uint_eq(ms.n_objects, N);
    char err[512], v1[N][16], v2[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(v1[i], sizeof v1[i], "one-%d", i);
        store_edit e[] = {{"status.a", v1[i], STORE_SET}, {"status.b", "b", STORE_SET}};
        ck_assert_int_eq(s->ops->patch(s, ms.objects[i], "status", e, 2, err, sizeof err), 0);
    }
    for (int i = N - 1; i >= 0; i -= 3) {
        snprintf(v2[i], sizeof v2[i], "two-%d", i);
        store_edit e[] = {{"status.c", "c", STORE_SET},
                          {"status.a", v2[i], STORE_SET},
                          {"metadata.finalizers", "f.io/x", STORE_LIST_ADD}};
        ck_assert_int_eq(s->ops->patch(s, ms.objects[i], "status", e, 3, err, sizeof err), 0);
    }
    for (int i = 0; i < N; i += 5) {
        store_edit e = {"metadata.finalizers", "f.io/y", STORE_LIST_ADD};
        ck_assert_int_eq(s->ops->patch(s, ms.objects[i], NULL, &e, 1, err, sizeof err), 0);
    }
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    manifest_set_free(&ms);
    s->ops->destroy(s);
    s = open_listed(&ms);
    for (int i = 0; i < N; i++) {
        const trellis_object *o = ms.objects[i];
        int again = (N - 1 - i) % 3 == 0;
        ck_assert_str_eq(value_string(object_get(o, "status.a")), again ? v2[i] : v1[i]);
        ck_assert_str_eq(value_string(object_get(o, "status.b")), "b");
        ck_assert_int_eq(object_get(o, "status.c") != NULL, again);
        const trellis_value *f = object_get(o, "metadata.finalizers");
        ck_assert_uint_eq(value_len(f), (size_t)again + (i % 5 == 0));
        if (again && i % 5 == 0)
            ck_assert_str_eq(value_string(value_at(f, 1)), "f.io/y");
    }
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

#define CLUSTER(name, extra)                                                                       \
    "apiVersion: clusters.openmcp.cloud/v1alpha1\nkind: Cluster\nmetadata:\n  name: " name         \
    "\n  namespace: ns\n" extra "spec:\n  purposes: [mcp]\n"

START_TEST(list_edits_add_and_remove_strings)
{
    put("a.yaml", CLUSTER("none", "") "---\n" CLUSTER("some", "  finalizers:\n  - keep.io/x\n"));
    put("b.json", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n"
                  " \"metadata\": {\"name\": \"j\", \"namespace\": \"ns\",\n"
                  "              \"finalizers\": [\"keep.io/x\", \"go.io/y\"]}}\n");
    char err[512];
    manifest_set ms;
    store *s = open_listed(&ms);
    ck_assert_uint_eq(ms.n_objects, 3);
    const trellis_object *none = ms.objects[0], *some = ms.objects[1], *j = ms.objects[2];
    /* two additions to the same list in one flush both land; an object
     * without the list gets a list, never a string */
    store_edit add_a = {"metadata.finalizers", "trellis.io/a", STORE_LIST_ADD};
    store_edit add_b = {"metadata.finalizers", "trellis.io/b", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, none, NULL, &add_a, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, none, NULL, &add_b, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, none, NULL, &add_a, 1, err, sizeof err),
                     0); /* there already */
    ck_assert_int_eq(s->ops->patch(s, some, NULL, &add_a, 1, err, sizeof err), 0);
    store_edit rm = {"metadata.finalizers", "go.io/y", STORE_LIST_REMOVE};
    store_edit rm_absent = {"metadata.finalizers", "never.io/z", STORE_LIST_REMOVE};
    ck_assert_int_eq(s->ops->patch(s, j, NULL, &rm, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->patch(s, j, NULL, &rm_absent, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    manifest_set_free(&ms);
    s->ops->destroy(s);

    s = open_listed(&ms);
    const trellis_value *f = object_get(ms.objects[0], "metadata.finalizers");
    ck_assert_int_eq(value_type(f), TRELLIS_VALUE_LIST);
    ck_assert_uint_eq(value_len(f), 2);
    ck_assert_str_eq(value_string(value_at(f, 0)), "trellis.io/a");
    ck_assert_str_eq(value_string(value_at(f, 1)), "trellis.io/b");
    f = object_get(ms.objects[1], "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 2);
    ck_assert_str_eq(value_string(value_at(f, 0)), "keep.io/x");
    ck_assert_str_eq(value_string(value_at(f, 1)), "trellis.io/a");
    f = object_get(ms.objects[2], "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 1);
    ck_assert_str_eq(value_string(value_at(f, 0)), "keep.io/x");
    /* an addition that is there already writes nothing */
    char *before = get("b.json");
    store_edit keep = {"metadata.finalizers", "keep.io/x", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[2], NULL, &keep, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    char *after = get("b.json");
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    /* a list edit of a list of strings (a flow list) works; of anything else it is refused */
    store_edit purposes = {"spec.purposes", "x", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &purposes, 1, err, sizeof err),
                     0); /* [mcp] */
    store_edit scalar = {"metadata.name", "x", STORE_LIST_ADD};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &scalar, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot edit the list metadata.name: it is a scalar"), "%s", err);
    store_edit novalue = {"metadata.finalizers", NULL, STORE_LIST_REMOVE};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &novalue, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "a list edit needs a value"), "%s", err);
    manifest_set_free(&ms);
    s->ops->destroy(s);
    /* nor of a list that holds anything but strings: the first such item
     * is named */
    put("c.json", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n"
                  " \"metadata\": {\"name\": \"k\", \"namespace\": \"ns\",\n"
                  "              \"finalizers\": [\"keep.io/x\", \"b\", 3, null]}}\n");
    s = open_listed(&ms);
    ck_assert_uint_eq(ms.n_objects, 4);
    ck_assert_int_eq(s->ops->patch(s, ms.objects[3], NULL, &add_a, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot edit the list metadata.finalizers: item 2 is not a string"),
                  "%s", err);
    /* the check every store's patch makes first says so too */
    ck_assert_int_eq(edit_check(ms.objects[3], &add_a, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot edit the list metadata.finalizers: item 2 is not a string"),
                  "%s", err);
    ck_assert_int_eq(edit_check(ms.objects[2], &add_a, err, sizeof err), 0);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* A list edit after an earlier one of the same run is made on the text:
 * the same bytes as parsing the list and printing it again, whatever the
 * strings hold. */
START_TEST(list_edits_as_text_match_a_reparse)
{
    put("a.yaml", CLUSTER("none", ""));
    manifest_set ms;
    store *s = open_listed(&ms);
    const trellis_object *o = ms.objects[0];
    static const char *const values[] = {
        "plain.io/a", "with,comma", "[bracket]", "quote\"d", "back\\slash", "a\\",     "slash/es",
        "tab\tnl\n",  "\x01ctl",    "",          "ünïcode",  "\\",          ",\"x\",", "plain.io/a",
        "a[",         ",b",         ",",         "]",        "[",           "\",\""};
    char err[256];
    int unchanged;
    store_edit first = {"metadata.finalizers", "first.io/x", STORE_LIST_ADD};
    char *text = edit_list_result(o, NULL, &first, &unchanged, err, sizeof err);
    ck_assert_ptr_nonnull(text);
    edit_text t = {.s = text, .len = strlen(text), .cap = strlen(text) + 1};
    for (int round = 0; round < 3; round++) {
        for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
            /* add in the first round, remove in the second, add back in the third */
            store_edit e = {"metadata.finalizers", values[k],
                            round == 1 ? STORE_LIST_REMOVE : STORE_LIST_ADD};
            edit_pending reparsed = {t.s, 1};
            char *slow = edit_list_result(o, &reparsed, &e, &unchanged, err, sizeof err);
            ck_assert_ptr_nonnull(slow);
            edit_list_in_place(&t, &e);
            ck_assert_str_eq(t.s, slow);
            ck_assert_uint_eq(t.len, strlen(slow));
            free(slow);
        }
    }
    /* a list of hundreds (its item set grown several times): each
     * addition new once, then already there, then again after a removal */
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 300; k++) {
            char v[32];
            snprintf(v, sizeof v, "request.io/%d", k * 7919 % 300);
            store_edit e = {"metadata.finalizers", v,
                            round == 1 && k % 2 ? STORE_LIST_REMOVE : STORE_LIST_ADD};
            edit_pending reparsed = {t.s, 1};
            char *slow = edit_list_result(o, &reparsed, &e, &unchanged, err, sizeof err);
            ck_assert_ptr_nonnull(slow);
            edit_list_in_place(&t, &e);
            ck_assert_str_eq(t.s, slow);
            free(slow);
        }
    }
    /* every copy of a value goes, first, middle and last */
    edit_text_free(&t);
    t.s = xstrdup("[\"d\",\"x\",\"d\",\"y\",\"d\"]");
    t.len = strlen(t.s);
    t.cap = t.len + 1;
    store_edit rm = {"metadata.finalizers", "d", STORE_LIST_REMOVE};
    edit_list_in_place(&t, &rm);
    ck_assert_str_eq(t.s, "[\"x\",\"y\"]");
    ck_assert_uint_eq(t.len, 9);
    /* an item the text held before the set was built is found by it */
    store_edit again = {"metadata.finalizers", "x", STORE_LIST_ADD};
    edit_list_in_place(&t, &again);
    ck_assert_str_eq(t.s, "[\"x\",\"y\"]");
    edit_text_free(&t);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* The first edit of an object's list is read from the object, not through
 * json-c: the same text, the same "nothing to write", the same errors as
 * json-c's way (the list handed over as pending JSON text). */
START_TEST(list_edits_from_the_object_match_json_c)
{
    static const char *const lists[] = {
        NULL,
        "null",
        "[]",
        "[\"a\"]",
        "[\"a\",\"b\",\"a\"]",
        "[\"with,comma\",\"quote\\\"d\",\"back\\\\slash\",\"t\\tab\",\"\\u0001\",\"\u00fc\"]",
        "\"scalar\"",
        "[1]",
        "[\"a\",{}]",
        "{}"};
    static const char *const values[] = {"a", "b", "quote\"d", "\x01", "new", ""};
    char json[512], err[256], err2[256];
    for (size_t l = 0; l < sizeof lists / sizeof *lists; l++) {
        if (lists[l])
            snprintf(json, sizeof json,
                     "{\"apiVersion\":\"v1\",\"kind\":\"C\",\"metadata\":{\"name\":\"c\","
                     "\"finalizers\":%s}}",
                     lists[l]);
        else
            snprintf(json, sizeof json,
                     "{\"apiVersion\":\"v1\",\"kind\":\"C\",\"metadata\":{\"name\":\"c\"}}");
        trellis_object *o = tu_obj(json);
        json_object *list = value_to_json(object_get(o, "metadata.finalizers"));
        char *text = list ? xstrdup(json_object_to_json_string_ext(
                                list, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))
                          : NULL;
        json_object_put(list);
        for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
            for (int op = 0; op < 2; op++) {
                store_edit e = {"metadata.finalizers", values[k],
                                op ? STORE_LIST_REMOVE : STORE_LIST_ADD};
                int u1 = -1, u2 = -1;
                err[0] = err2[0] = '\0';
                char *fast = edit_list_result(o, NULL, &e, &u1, err, sizeof err);
                edit_pending p = {text, 1};
                char *slow = text ? edit_list_result(o, &p, &e, &u2, err2, sizeof err2)
                                  : edit_list_result(o, &(edit_pending){NULL, 0}, &e, &u2, err2,
                                                     sizeof err2);
                const char *what = lists[l] ? lists[l] : "(absent)";
                if (!fast && !err[0]) {
                    /* nothing to write; json-c's way, handed the list as
                     * pending, writes it as it is */
                    ck_assert_int_eq(u1, 1);
                    ck_assert_msg(slow && strcmp(slow, text ? text : "[]") == 0, "list %s: %s",
                                  what, slow ? slow : err2);
                } else if (fast) {
                    ck_assert_msg(slow && strcmp(fast, slow) == 0, "list %s, %s %s: %s / %s", what,
                                  op ? "remove" : "add", values[k], fast, slow ? slow : err2);
                } else {
                    ck_assert_msg(!slow && strcmp(err, err2) == 0, "list %s: %s / %s", what, err,
                                  slow ? slow : err2);
                }
                free(fast);
                free(slow);
            }
        }
        free(text);
        object_unref(o);
    }
}
END_TEST

/* edit_build_object makes the object json-c's tree of the same edits
 * makes, member for member (its written text), or fails with the same
 * error: the edits it builds itself and those it leaves to json-c. */
START_TEST(object_built_from_edits_as_json_c_makes_it)
{
#define HEAD                                                                                       \
    {"apiVersion", "v1", STORE_SET}, {"kind", "ConfigMap", STORE_SET},                             \
        {"metadata.name", "cm", STORE_SET},                                                        \
    {                                                                                              \
        "metadata.namespace", "ns", STORE_SET                                                      \
    }
    static const store_edit cases[][8] = {
        {HEAD,
         {"spec.a", "x", STORE_SET},
         {"metadata.labels[\"a.io/b\"]", "y", STORE_SET},
         {"metadata.finalizers", "f.io/x", STORE_LIST_ADD},
         {"spec.d", "{\"n\": 1.50, \"l\": [1, \"s\", null, true], \"e\": {}}", STORE_SET_JSON}},
        {HEAD, {"spec.a", "1", STORE_SET}, {"spec.b", "2", STORE_SET}, {"spec.a", "3", STORE_SET}},
        {HEAD,
         {"metadata.finalizers", "a", STORE_LIST_ADD},
         {"metadata.finalizers", "b", STORE_LIST_ADD},
         {"metadata.finalizers", "a", STORE_LIST_ADD}},
        {HEAD,
         {"spec.a.b", "1", STORE_SET},
         {"spec", "flat", STORE_SET},
         {"spec.c", "2", STORE_SET}},
        {HEAD, {"spec.j", " {\"a\": 1} \n", STORE_SET_JSON}, {"spec.j.b", "x", STORE_SET}},
        {HEAD, {"spec.j", "{} x", STORE_SET_JSON}},
        {HEAD, {"spec.j", "{\"a\": ", STORE_SET_JSON}},
        {HEAD, {"spec.j", "null", STORE_SET_JSON}, {"spec.k", "[]", STORE_SET_JSON}},
        {HEAD, {"spec.a", "1", STORE_SET}, {"spec.a", NULL, STORE_SET}},
        {HEAD,
         {"metadata.finalizers", "a", STORE_LIST_ADD},
         {"metadata.finalizers", "a", STORE_LIST_REMOVE}},
        {HEAD, {"spec.l", "\"s\"", STORE_SET_JSON}, {"spec.l", "a", STORE_LIST_ADD}},
        {HEAD, {"metadata['k\\'q'].x", "v", STORE_SET}, {"[\"a.b\"]", "dot", STORE_SET}},
        {{"apiVersion", "v1", STORE_SET}, {"metadata.name", "no-kind", STORE_SET}},
        {HEAD, {"spec.j", "", STORE_SET_JSON}},
        {HEAD, {"spec.j", " ", STORE_SET_JSON}},
        /* json-c's parse stops at 32 levels; the fast reader would go on */
        {HEAD,
         {"spec.j", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
          STORE_SET_JSON}},
        {HEAD,
         {"spec.j", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
          STORE_SET_JSON}},
        /* 32 levels with a value in the innermost: a value at depth 32 */
        {HEAD,
         {"spec.j", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
          STORE_SET_JSON}},
        {HEAD,
         {"spec.j", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{\"a\":1}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
          STORE_SET_JSON}},
        {HEAD, {"spec.j", "[\"[[[[\", {\"a\": \"]]]\"}]", STORE_SET_JSON}},
        /* scalars: the plain forms built directly (one other in a case
         * leaves the whole object to json-c), the rest json-c's */
        {HEAD,
         {"spec.t", "true", STORE_SET_JSON},
         {"spec.f", "false", STORE_SET_JSON},
         {"spec.n", "-12", STORE_SET_JSON},
         {"spec.d", "0", STORE_SET_JSON}},
        {HEAD, {"spec.a", "123456789012345678", STORE_SET_JSON}, {"spec.c", "-0", STORE_SET_JSON}},
        {HEAD, {"spec.b", "1234567890123456789", STORE_SET_JSON}},
        {HEAD, {"spec.z", "007", STORE_SET_JSON}},
        {HEAD, {"spec.e", "-", STORE_SET_JSON}},
        {HEAD, {"spec.e", "truex", STORE_SET_JSON}},
        {HEAD, {"spec.e", "1.5", STORE_SET_JSON}, {"spec.s", "\"q\\\"x\"", STORE_SET_JSON}},
    };
#undef HEAD
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        size_t n = 0;
        while (n < 8 && cases[c][n].path)
            n++;
        char e1[256] = "", e2[256] = "";
        trellis_object *fast = edit_build_object(cases[c], n, e1, sizeof e1);
        json_object *tree = json_object_new_object();
        trellis_object *slow = NULL;
        size_t k = 0;
        while (k < n && edit_apply_json(tree, &cases[c][k], e2, sizeof e2) == 0)
            k++;
        if (k == n)
            slow = object_new(tree, e2, sizeof e2);
        else
            json_object_put(tree);
        ck_assert_msg(!fast == !slow, "case %zu: %s / %s", c, e1, e2);
        if (!fast) {
            ck_assert_str_eq(e1, e2);
            continue;
        }
        strbuf a, b;
        sb_init(&a);
        sb_init(&b);
        object_json_pretty(fast, &a);
        object_json_pretty(slow, &b);
        ck_assert_msg(strcmp(a.s, b.s) == 0, "case %zu:\n%s\n%s", c, a.s, b.s);
        sb_free(&a);
        sb_free(&b);
        object_unref(fast);
        object_unref(slow);
    }
}
END_TEST

START_TEST(keys_with_dots_and_slashes)
{
    put("a.yaml", CLUSTER("c", "  labels:\n    plain: x\n"));
    char err[512];
    manifest_set ms;
    store *s = open_listed(&ms);
    store_edit e[2] = {
        {"metadata.labels[\"kubernetes-fleet.io/parent-CRP\"]", "crp-1", STORE_SET},
        {"metadata.annotations['a.b/c']", "v", STORE_SET},
    };
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, e, 2, err, sizeof err), 0);
    /* a parent that is not a map is found through the brackets too */
    store_edit under = {"metadata.name[\"x.y\"]", "v", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &under, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "'metadata.name' is not a map"), "%s", err);
    /* a bracketed key after a dot names the same field as without the dot
     * (the edit would write there): a map is not set to a string */
    store_edit dotted = {"metadata.[\"labels\"]", "v", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &dotted, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "it is a map, not a scalar"), "%s", err);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    manifest_set_free(&ms);
    s->ops->destroy(s);
    s = open_listed(&ms);
    ck_assert_str_eq(value_string(object_get(
                         ms.objects[0], "metadata.labels[\"kubernetes-fleet.io/parent-CRP\"]")),
                     "crp-1");
    ck_assert_str_eq(object_annotation(ms.objects[0], "a.b/c"), "v");
    ck_assert_str_eq(object_label(ms.objects[0], "plain"), "x");
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

/* The object named name among ms's. */
static trellis_object *named(const manifest_set *ms, const char *name)
{
    for (size_t i = 0; i < ms->n_objects; i++)
        if (strcmp(ms->objects[i]->name, name) == 0)
            return ms->objects[i];
    ck_abort_msg("no object %s", name);
    return NULL;
}

static int exists(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    return access(p, F_OK) == 0;
}

START_TEST(remove_documents_items_and_files)
{
    put("multi.yaml", "# three\n" POD("a") "---\n" POD("b") "---\n" POD("c"));
    put("list.json",
        "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
        "  {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"l1\"}},\n"
        "  {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"l2\"}}\n"
        "]}\n");
    put("one.yaml", POD("solo"));
    char err[512];
    manifest_set ms;
    store *s = open_listed(&ms);
    ck_assert_uint_eq(ms.n_objects, 6);
    /* b (the middle document), l2 (a List item) and solo (a whole file);
     * an edit of c in the same flush lands too */
    ck_assert_int_eq(s->ops->remove(s, named(&ms, "b"), err, sizeof err), 0);
    ck_assert_int_eq(s->ops->remove(s, named(&ms, "b"), err, sizeof err), 0); /* once */
    store_edit e = {"spec.nodeName", "n1", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, named(&ms, "c"), NULL, &e, 1, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->remove(s, named(&ms, "l2"), err, sizeof err), 0);
    ck_assert_int_eq(s->ops->remove(s, named(&ms, "solo"), err, sizeof err), 0);
    /* a created object not written yet is only forgotten */
    trellis_object *n = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                               "\"metadata\":{\"name\":\"gone-before-written\"}}");
    ck_assert_int_eq(tu_created(s, n, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->remove(s, n, err, sizeof err), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), 0);
    ck_assert(!exists("node-gone-before-written.json"));
    char *t = get("multi.yaml");
    ck_assert_str_eq(t, "# three\n" POD("a") "---\n" POD("c") "  nodeName: n1\n");
    free(t);
    t = get("list.json");
    ck_assert_str_eq(
        t, "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
           "  {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"l1\"}}\n"
           "]}\n");
    free(t);
    ck_assert(!exists("one.yaml"));
    ck_assert_ptr_null(s->ops->get(s, "Pod", "", "b"));
    ck_assert_ptr_null(s->ops->get(s, "Pod", "", "solo"));
    trellis_object *c = s->ops->get(s, "Pod", "", "c");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->doc, 1); /* it moved up */
    object_unref(c);
    object_unref(n);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

static void record_failed(void *ud, const char *id, const char *message)
{
    (void)message;
    snprintf(ud, 128, "%s", id);
}

START_TEST(remove_refused_when_changed)
{
    put("a.yaml", POD("a") "---\n" POD("b"));
    char err[512];
    manifest_set ms;
    store *s = open_listed(&ms);
    ck_assert_int_eq(s->ops->remove(s, named(&ms, "a"), err, sizeof err), 0);
    put("a.yaml", POD("a") "  y: 2\n---\n" POD("b")); /* someone else's change */
    char failed_id[128] = "";
    ck_assert_int_eq(s->ops->flush(s, record_failed, failed_id, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changed on disk since it was read"), "%s", err);
    ck_assert_str_eq(failed_id, "Pod//a"); /* the removal that was not made, by object */
    char *t = get("a.yaml");
    ck_assert_str_eq(t, POD("a") "  y: 2\n---\n" POD("b")); /* nothing lost */
    free(t);
    manifest_set_free(&ms);
    s->ops->destroy(s);
}
END_TEST

START_TEST(open_errors)
{
    char err[512];
    ck_assert_ptr_null(store_file_open("/nonexistent/state", 0, err, sizeof err));
    ck_assert_msg(strstr(err, "/nonexistent/state"), "%s", err);
    put("f.yaml", POD("a"));
    char p[256];
    snprintf(p, sizeof p, "%s/f.yaml", tmp);
    ck_assert_ptr_null(store_file_open(p, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "not a directory"), "%s", err);
}
END_TEST

/* "ln -s . a; ln -s . b" made the walk exponential, and one such link made
 * every file load 40 times: each directory and file is taken once. A link
 * to a file inside the tree is read once too; one leading outside the
 * state is refused with a message naming it. */
START_TEST(links_walked_once_and_kept_inside)
{
    char p[512], q[512], out[64];
    put("a.yaml", POD("a"));
    snprintf(p, sizeof p, "%s/sub", tmp);
    mkdir(p, 0755);
    put("sub/b.yaml", POD("b"));
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/loop%d", tmp, i);
        ck_assert_int_eq(symlink(".", p), 0);
        snprintf(p, sizeof p, "%s/sub/up%d", tmp, i);
        ck_assert_int_eq(symlink("..", p), 0);
    }
    snprintf(p, sizeof p, "%s/same.yaml", tmp);
    ck_assert_int_eq(symlink("a.yaml", p), 0);
    tu_mkdtemp(out, "outside");
    tu_write(out, "x.yaml", POD("x"));
    snprintf(p, sizeof p, "%s/ext", tmp);
    ck_assert_int_eq(symlink(out, p), 0);
    snprintf(p, sizeof p, "%s/x.yaml", out);
    snprintf(q, sizeof q, "%s/extfile.yaml", tmp);
    ck_assert_int_eq(symlink(p, q), 0);
    char err[512];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    ck_assert_int_eq(s->ops->list(s, &ms, err, sizeof err), 0);
    ck_assert_uint_eq(ms.n_objects, 2);
    ck_assert_str_eq(ms.objects[0]->name, "a");
    ck_assert_str_eq(ms.objects[1]->name, "b");
    ck_assert_uint_eq(ms.n_errors, 2);
    for (size_t i = 0; i < ms.n_errors; i++)
        ck_assert_msg(
            strstr(ms.errors[i].message, "outside the state directory") &&
                (strstr(ms.errors[i].file, "/ext") || strstr(ms.errors[i].file, "/extfile.yaml")),
            "%s: %s", ms.errors[i].file, ms.errors[i].message);
    manifest_set_free(&ms);
    s->ops->destroy(s);
    tu_rmtree(out);
}
END_TEST

/* A file replaced by a link to a file outside the state after it was read
 * (same content, so the change check cannot see it) is not written
 * through. */
START_TEST(no_write_through_a_link_outside)
{
    char p[512], q[512], out[64];
    put("a.yaml", POD("a"));
    char err[1024];
    store *s = store_file_open(tmp, 0, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    ck_assert_uint_eq(ms.n_objects, 1);
    store_edit e = {"spec.nodeName", "n1", STORE_SET};
    ck_assert_int_eq(s->ops->patch(s, ms.objects[0], NULL, &e, 1, err, sizeof err), 0);
    tu_mkdtemp(out, "outside");
    tu_write(out, "a.yaml", POD("a"));
    snprintf(p, sizeof p, "%s/a.yaml", tmp);
    snprintf(q, sizeof q, "%s/a.yaml", out);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(symlink(q, p), 0);
    ck_assert_int_eq(s->ops->flush(s, NULL, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "outside the state directory"), "%s", err);
    char *t = tu_read(out, "a.yaml");
    ck_assert_str_eq(t, POD("a"));
    free(t);
    manifest_set_free(&ms);
    s->ops->destroy(s);
    tu_rmtree(out);
}
END_TEST

/* Temporary files left by a kill -9 during a write are removed when the
 * store is read for writing; another live writer's are not. */
START_TEST(stale_temporary_files_removed)
{
    /* the host's name as writeback.c puts it into temporary names: dots
     * and slashes made underscores, at most 63 bytes */
    char host[64] = "", p[512];
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '.' || *c == '/')
            *c = '_';
    put("a.yaml", POD("a"));
    snprintf(p, sizeof p, "%s/sub", tmp);
    mkdir(p, 0755);
    char dead[160], live[160];
    /* pid 1 is alive; a pid above the kernel's maximum never is */
    snprintf(dead, sizeof dead, "sub/.a.yaml.tmp.%s.%d.Ab12Cd", host, 99999999);
    snprintf(live, sizeof live, ".a.yaml.tmp.%s.1.Ef34Gh", host);
    put(dead, "x");
    put(live, "x");
    put(".b.yaml.tmp.otherhost.4242.Xy56Zw", "x"); /* another host's, fresh */
    put(".c.yaml.tmp.otherhost.4242.Qr78St", "x"); /* another host's, old */
    put(".d.yaml.tmp.Uv90Wx", "x");                /* an older trellis's, old */
    struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    snprintf(p, sizeof p, "%s/.c.yaml.tmp.otherhost.4242.Qr78St", tmp);
    ck_assert_int_eq(utimensat(AT_FDCWD, p, old, 0), 0);
    snprintf(p, sizeof p, "%s/.d.yaml.tmp.Uv90Wx", tmp);
    ck_assert_int_eq(utimensat(AT_FDCWD, p, old, 0), 0);
    char err[512];
    /* a dry run removes nothing */
    store *s = store_file_open(tmp, 1, err, sizeof err);
    manifest_set ms;
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    s->ops->destroy(s);
    manifest_set_free(&ms);
    snprintf(p, sizeof p, "%s/%s", tmp, dead);
    ck_assert_int_eq(access(p, F_OK), 0);
    s = store_file_open(tmp, 0, err, sizeof err);
    manifest_set_init(&ms);
    s->ops->list(s, &ms, err, sizeof err);
    ck_assert_uint_eq(ms.n_objects, 1);
    s->ops->destroy(s);
    manifest_set_free(&ms);
    ck_assert_int_eq(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/%s", tmp, live);
    ck_assert_int_eq(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/.b.yaml.tmp.otherhost.4242.Xy56Zw", tmp);
    ck_assert_int_eq(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/.c.yaml.tmp.otherhost.4242.Qr78St", tmp);
    ck_assert_int_eq(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/.d.yaml.tmp.Uv90Wx", tmp);
    ck_assert_int_eq(access(p, F_OK), -1);
}
END_TEST

/* ---- the versions own writes made (verchain.c) ---- */

START_TEST(version_chain_follows_own_writes_only)
{
    verchain *v = verchain_new(0);
    const char *id = "K/ns/a";
    /* nothing written: only a version is itself */
    ck_assert(verchain_own_between(v, id, "10", "10"));
    ck_assert(!verchain_own_between(v, id, "10", "11"));
    /* written from 10 to 11, then from 11 to 12: a write made on the
     * copy read at 10 (or 11) may be made again on 12 */
    verchain_wrote(v, id, "10", "11");
    verchain_wrote(v, id, "11", "12");
    ck_assert(verchain_own_between(v, id, "10", "12"));
    ck_assert(verchain_own_between(v, id, "11", "12"));
    ck_assert(verchain_own_between(v, id, "10", "11"));
    /* another object, a version outside the chain (another writer's),
     * no version: not own */
    ck_assert(!verchain_own_between(v, "K/ns/b", "10", "12"));
    ck_assert(!verchain_own_between(v, id, "9", "12"));
    ck_assert(!verchain_own_between(v, id, "10", "15"));
    ck_assert(!verchain_own_between(v, id, "", "12"));
    /* a write made on another writer's version (15) starts a new chain
     * without the versions before it */
    verchain_wrote(v, id, "15", "16");
    ck_assert(!verchain_own_between(v, id, "11", "16"));
    ck_assert(verchain_own_between(v, id, "15", "16"));
    ck_assert_uint_eq(verchain_count(v), 1);
    /* the versions replaced are kept up to a bound: the oldest go */
    char from[16], to[16];
    for (int i = 16; i < 40; i++) {
        snprintf(from, sizeof from, "%d", i);
        snprintf(to, sizeof to, "%d", i + 1);
        verchain_wrote(v, id, from, to);
    }
    ck_assert(verchain_own_between(v, id, "32", "40"));
    ck_assert(!verchain_own_between(v, id, "31", "40"));
    /* a write that made no new version, or of no version: nothing */
    verchain_wrote(v, id, "40", "40");
    verchain_wrote(v, id, "", "41");
    ck_assert(!verchain_own_between(v, id, "40", "41"));
    /* deleted: gone */
    verchain_forget(v, id);
    ck_assert_uint_eq(verchain_count(v), 0);
    ck_assert(!verchain_own_between(v, id, "39", "40"));
    verchain_free(v);

    /* at most max chains: the oldest started goes first, a chain started
     * again counts from then */
    v = verchain_new(3);
    verchain_wrote(v, "a", "1", "2");
    verchain_wrote(v, "b", "1", "2");
    verchain_wrote(v, "c", "1", "2");
    verchain_wrote(v, "a", "7", "8"); /* a starts again: now the newest */
    verchain_wrote(v, "d", "1", "2"); /* b goes */
    ck_assert_uint_eq(verchain_count(v), 3);
    ck_assert(!verchain_own_between(v, "b", "1", "2"));
    ck_assert(verchain_own_between(v, "c", "1", "2"));
    ck_assert(verchain_own_between(v, "a", "7", "8"));
    verchain_wrote(v, "e", "1", "2"); /* c goes */
    verchain_wrote(v, "f", "1", "2"); /* then a */
    ck_assert(!verchain_own_between(v, "c", "1", "2"));
    ck_assert(!verchain_own_between(v, "a", "7", "8"));
    ck_assert(verchain_own_between(v, "d", "1", "2"));
    ck_assert(verchain_own_between(v, "f", "1", "2"));
    ck_assert_uint_eq(verchain_count(v), 3);
    verchain_free(v);
}
END_TEST

/* ---- the write queue (wqueue.c) ---- */

START_TEST(write_queue_merges_and_refuses)
{
    char err[256];
    wqueue q;
    wqueue_init(&q);
    trellis_object *pod = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                                 "{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{}}");
    trellis_object *cm = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                                "{\"name\":\"board\",\"namespace\":\"shop\"}}");
    store_edit a = {"metadata.labels.tier", "web", STORE_SET};
    store_edit b = {"metadata.labels.team", "shop", STORE_SET};
    store_edit st = {"status.nominatedNodeName", "n1", STORE_SET};
    store_edit bind = {"spec.nodeName", "n1", STORE_SET};
    /* two patches of the object merge, edits in order */
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &a, 1, 0, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &b, 1, 0, err, sizeof err), 0);
    /* a creation of it cannot be queued beside */
    ck_assert_int_eq(wqueue_add(&q, pod, WQ_CREATE, 0, err, sizeof err), -1);
    ck_assert_str_eq(err, "Pod shop/web: a patch is queued already");
    ck_assert_int_eq(wqueue_add(&q, cm, WQ_CREATE, 0, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &a, 1, 0, err, sizeof err), -1);
    ck_assert_str_eq(err, "ConfigMap shop/board: a creation is queued already");
    size_t n;
    wq_write *v = wqueue_take(&q, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(v[0].id, pod->id);
    ck_assert_int_eq(v[0].op, WQ_PATCH);
    ck_assert_uint_eq(v[0].n_edits, 2);
    ck_assert_str_eq(v[0].edits[1].path, "metadata.labels.team");
    ck_assert_int_eq(v[1].op, WQ_CREATE);
    for (size_t i = 0; i < n; i++)
        wq_write_free(&v[i]);
    free(v);
    /* taken: the queue is empty and takes the object again */
    ck_assert_int_eq(wqueue_add(&q, pod, WQ_REMOVE, 0, err, sizeof err), 0);
    wqueue_clear(&q);
    /* the Kubernetes API's parts: a Binding beside a status patch, and
     * patches of different parts of one object refused */
    ck_assert_int_eq(wqueue_patch(&q, pod, "status", &st, 1, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, pod, "binding", &bind, 1, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &a, 1, 1, err, sizeof err), -1);
    ck_assert_str_eq(err, "Pod shop/web: a patch of another part is queued already");
    v = wqueue_take(&q, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert(!wq_write_is_binding(&v[0]));
    ck_assert(wq_write_is_binding(&v[1]));
    for (size_t i = 0; i < n; i++)
        wq_write_free(&v[i]);
    free(v);
    /* a patch of the object and one of its status: one write, each edit
     * marked with its part, in the order queued */
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &a, 1, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, cm, "status", &st, 1, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &b, 1, 1, err, sizeof err), 0);
    v = wqueue_take(&q, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(v[0].n_edits, 3);
    ck_assert_str_eq(v[0].edits[1].path, "status.nominatedNodeName");
    ck_assert_int_eq(v[0].in_status[0], 0);
    ck_assert_int_eq(v[0].in_status[1], 1);
    ck_assert_int_eq(v[0].in_status[2], 0);
    wq_write_free(&v[0]);
    free(v);
    /* a removal after a patch: with parts, the patch then the removal (a
     * finalizer off before the object goes); without, the removal alone;
     * nothing after the removal */
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &a, 1, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_add(&q, cm, WQ_REMOVE, 1, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &b, 1, 1, err, sizeof err), -1);
    ck_assert_int_eq(wqueue_add(&q, cm, WQ_REMOVE, 1, err, sizeof err), -1);
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &a, 1, 0, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_add(&q, pod, WQ_REMOVE, 0, err, sizeof err), 0);
    v = wqueue_take(&q, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(v[0].op, WQ_PATCH);
    ck_assert_int_eq(v[0].then_remove, 1);
    ck_assert_uint_eq(v[0].n_edits, 1);
    ck_assert_int_eq(v[1].op, WQ_REMOVE);
    ck_assert_uint_eq(v[1].n_edits, 0);
    for (size_t i = 0; i < n; i++)
        wq_write_free(&v[i]);
    free(v);
    /* without parts a Binding is a patch of the object like any other */
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &st, 1, 0, err, sizeof err), 0);
    ck_assert_int_eq(wqueue_patch(&q, pod, NULL, &bind, 1, 0, err, sizeof err), 0);
    /* an edit that cannot apply is refused before anything is queued */
    store_edit bad = {"", "x", STORE_SET};
    ck_assert_int_eq(wqueue_patch(&q, cm, NULL, &bad, 1, 0, err, sizeof err), -1);
    v = wqueue_take(&q, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(v[0].n_edits, 2);
    wq_write_free(&v[0]);
    free(v);
    wqueue_clear(&q);
    object_unref(pod);
    object_unref(cm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("file");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, list_order_hidden_and_duplicates);
    tcase_add_test(tc, patch_flush_and_precondition);
    tcase_add_test(tc, patches_of_many_objects_keep_the_last_value);
    tcase_add_test(tc, dry_run_writes_nothing);
    tcase_add_test(tc, list_edits_as_text_match_a_reparse);
    tcase_add_test(tc, list_edits_from_the_object_match_json_c);
    tcase_add_test(tc, create_writes_a_new_file);
    tcase_add_test(tc, created_list_edits_wait_then_settle);
    tcase_add_test(tc, created_list_edits_made_when_not_written_or_watched);
    tcase_add_test(tc, many_created_files_written_in_order);
    tcase_add_test(tc, open_errors);
    tcase_add_test(tc, links_walked_once_and_kept_inside);
    tcase_add_test(tc, no_write_through_a_link_outside);
    tcase_add_test(tc, stale_temporary_files_removed);
    tcase_add_test(tc, list_edits_add_and_remove_strings);
    tcase_add_test(tc, keys_with_dots_and_slashes);
    tcase_add_test(tc, object_built_from_edits_as_json_c_makes_it);
    tcase_add_test(tc, remove_documents_items_and_files);
    tcase_add_test(tc, remove_refused_when_changed);
    suite_add_tcase(s, tc);
    TCase *wq = tcase_create("wqueue");
    tcase_add_test(wq, write_queue_merges_and_refuses);
    tcase_add_test(wq, version_chain_follows_own_writes_only);
    suite_add_tcase(s, wq);
    return tu_run(s);
}
