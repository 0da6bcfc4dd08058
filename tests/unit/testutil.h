/*
 * testutil.h - helpers shared by the unit tests: objects from JSON text,
 * the plugin directories `make check` passes in TRELLIS_PLUGIN_PATH, a
 * temporary directory with files in it, and running a suite.
 */
#ifndef TRELLIS_TESTUTIL_H
#define TRELLIS_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "store.h"
#include "util.h"

static inline trellis_object *tu_obj(const char *json)
{
    char err[256];
    trellis_object *o = object_from_json(json, err, sizeof err);
    ck_assert_msg(o != NULL, "object_from_json: %s", err);
    return o;
}

/* Split TRELLIS_PLUGIN_PATH into dirs (at most 8). */
static inline size_t tu_plugin_dirs(char **dirs, char *buf, size_t buflen)
{
    const char *env = getenv("TRELLIS_PLUGIN_PATH");
    ck_assert_msg(env != NULL, "TRELLIS_PLUGIN_PATH is not set (run through make check)");
    snprintf(buf, buflen, "%s", env);
    size_t n = 0;
    for (char *t = strtok(buf, ":"); t && n < 8; t = strtok(NULL, ":"))
        dirs[n++] = t;
    return n;
}

/* A fresh directory under /tmp; dir must hold 64 bytes. */
static inline void tu_mkdtemp(char *dir, const char *name)
{
    snprintf(dir, 64, "/tmp/trellis-%s-XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void tu_rmtree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static inline void tu_write(const char *dir, const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Copy a file byte for byte. */
static inline void tu_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

/* The file's content; the caller frees it. */
static inline char *tu_read(const char *dir, const char *rel)
{
    char p[256], err[256];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *t = read_file(p, NULL, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

static inline int tu_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A store's create: 0 when it stored o (the reference it returns is
 * dropped; these stores keep o itself), -1 with err otherwise. */
static inline int tu_created(store *st, trellis_object *o, char *err, size_t errlen)
{
    trellis_object *stored = st->ops->create(st, o, err, errlen);
    if (!stored)
        return -1;
    ck_assert_ptr_eq(stored, o);
    object_unref(stored);
    return 0;
}

#endif
