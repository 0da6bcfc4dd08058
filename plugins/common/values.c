/*
 * values.c - type names, member paths, scalar text and checked reads.
 *
 * Messages name the offending element by the path a person would look for
 * in a manifest and say what was found there by its type, so every parser
 * builds them from the same pieces and they read alike across plugins.
 */
#include "values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *values_type_name(trellis_value_type t)
{
    switch (t) {
    case TRELLIS_VALUE_NULL:
        return "null";
    case TRELLIS_VALUE_BOOL:
        return "a boolean";
    case TRELLIS_VALUE_INT:
        return "an integer";
    case TRELLIS_VALUE_DOUBLE:
        return "a number";
    case TRELLIS_VALUE_STRING:
        return "a string";
    case TRELLIS_VALUE_LIST:
        return "a list";
    case TRELLIS_VALUE_MAP:
        return "a map";
    }
    return "an unknown value";
}

void values_member_path(char *buf, size_t len, const char *parent, const char *key,
                        const char *special)
{
    if (strpbrk(key, special))
        snprintf(buf, len, "%s[\"%s\"]", parent, key);
    else
        snprintf(buf, len, "%s.%s", parent, key);
}

const char *values_scalar_text(const trellis_host *h, const trellis_value *v)
{
    trellis_value_type t = v ? h->value_type(v) : TRELLIS_VALUE_NULL;

    if (t == TRELLIS_VALUE_NULL || t == TRELLIS_VALUE_LIST || t == TRELLIS_VALUE_MAP)
        return NULL;
    return h->value_string(v);
}

int values_expect(const trellis_host *h, const trellis_value *v, trellis_value_type want,
                  const char *what, const char *path, char *err, size_t errlen)
{
    trellis_value_type t = v ? h->value_type(v) : TRELLIS_VALUE_NULL;

    if (t == want)
        return 1;
    if (t == TRELLIS_VALUE_NULL)
        return 0;
    snprintf(err, errlen, "%s: expected %s, got %s", path, what, values_type_name(t));
    return -1;
}

int values_check_path(const char *key, const char *value, char *err, size_t errlen)
{
    if (value && value[0] != '\0')
        return 0;
    snprintf(err, errlen, "%s: expected a dotted path, got '%s'", key, value ? value : "");
    return -1;
}

char *values_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}
