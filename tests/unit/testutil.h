/*
 * testutil.h - helpers shared by the unit tests: building objects from
 * JSON text and running a suite.
 */
#ifndef TRELLIS_TESTUTIL_H
#define TRELLIS_TESTUTIL_H

#include <check.h>
#include <stdlib.h>

#include "object.h"

static inline trellis_object *tu_obj(const char *json)
{
    char err[256];
    trellis_object *o = object_from_json(json, err, sizeof err);
    ck_assert_msg(o != NULL, "object_from_json: %s", err);
    return o;
}

static inline int tu_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
