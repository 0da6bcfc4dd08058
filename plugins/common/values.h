/*
 * values.h - reading values through the host table.
 *
 * The small pieces every parser of object fields needs: type names for
 * messages ("expected a map, got a list"), bracket paths for map keys with
 * dots ('status.allocatable["nvidia.com/gpu"]'), the text of a scalar, the
 * check that a value is absent or of the expected type, the check that a
 * path argument is not empty, and owned copies of strings borrowed from the
 * host. Nothing here allocates except values_strdup.
 */
#ifndef TRELLIS_PLUGINS_VALUES_H
#define TRELLIS_PLUGINS_VALUES_H

#include <stddef.h>

#include "trellis/plugin.h"

/* "null", "a boolean", "an integer", "a number", "a string", "a list",
 * "a map": the type of a value as a message names it. */
const char *values_type_name(trellis_value_type t);

/* The path of member `key` of the map at `parent`: "parent.key", or
 * 'parent["key"]' when key contains any of the characters in `special`.
 * Truncated to len. */
void values_member_path(char *buf, size_t len, const char *parent, const char *key,
                        const char *special);

/* Text of a scalar of any type, as a person wrote it (`ssd: true` gives
 * "true"); NULL when v is NULL, null, a list or a map. */
const char *values_scalar_text(const trellis_host *h, const trellis_value *v);

/* 1 when v is of type `want`, 0 when it is NULL or null, -1 with err
 * ("<path>: expected <what>, got a list") when it is anything else. */
int values_expect(const trellis_host *h, const trellis_value *v, trellis_value_type want,
                  const char *what, const char *path, char *err, size_t errlen);

/* 0 when `value`, the string argument `key`, is a dotted path; -1 with err
 * when it is missing (NULL) or empty. */
int values_check_path(const char *key, const char *value, char *err, size_t errlen);

/* A malloc'd copy of s, NULL when out of memory. */
char *values_strdup(const char *s);

#endif
