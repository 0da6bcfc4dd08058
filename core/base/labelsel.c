/*
 * labelsel.c - see labelsel.h.
 */
#include "config.h"

#include "labelsel.h"

#include <string.h>

#include "util.h"

static const char *label(json_object *labels, const char *key)
{
    json_object *v;
    if (!labels || !json_object_is_type(labels, json_type_object) ||
        !json_object_object_get_ex(labels, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* One matchExpressions element: 1, 0, or -1 with err. */
static int expression(json_object *e, size_t i, json_object *labels, char *err, size_t errlen)
{
    json_object *k, *op, *vals = NULL;
    if (!json_object_is_type(e, json_type_object))
        return errf(err, errlen, "matchExpressions[%zu]: expected a map", i);
    if (!json_object_object_get_ex(e, "key", &k) || !json_object_is_type(k, json_type_string))
        return errf(err, errlen, "matchExpressions[%zu].key: expected a string", i);
    if (!json_object_object_get_ex(e, "operator", &op) ||
        !json_object_is_type(op, json_type_string))
        return errf(err, errlen, "matchExpressions[%zu].operator: expected a string", i);
    json_object_object_get_ex(e, "values", &vals);
    if (vals && json_object_is_type(vals, json_type_null))
        vals = NULL;
    if (vals && !json_object_is_type(vals, json_type_array))
        return errf(err, errlen, "matchExpressions[%zu].values: expected a list", i);
    size_t nv = vals ? json_object_array_length(vals) : 0;
    for (size_t j = 0; j < nv; j++)
        if (!json_object_is_type(json_object_array_get_idx(vals, j), json_type_string))
            return errf(err, errlen, "matchExpressions[%zu].values[%zu]: expected a string", i, j);
    const char *o = json_object_get_string(op);
    const char *have = label(labels, json_object_get_string(k));
    int in = strcmp(o, "In") == 0, notin = strcmp(o, "NotIn") == 0;
    if (in || notin) {
        if (!nv)
            return errf(err, errlen, "matchExpressions[%zu].values: %s needs at least one value", i,
                        o);
        int found = 0;
        for (size_t j = 0; have && j < nv; j++)
            found |= strcmp(have, json_object_get_string(json_object_array_get_idx(vals, j))) == 0;
        return in ? found : !found;
    }
    int exists = strcmp(o, "Exists") == 0;
    if (!exists && strcmp(o, "DoesNotExist") != 0)
        return errf(err, errlen,
                    "matchExpressions[%zu].operator: expected In, NotIn, Exists or DoesNotExist, "
                    "got '%s'",
                    i, o);
    if (nv)
        return errf(err, errlen, "matchExpressions[%zu].values: %s takes no values", i, o);
    return exists ? have != NULL : have == NULL;
}

int labelsel_match(json_object *sel, json_object *labels, char *err, size_t errlen)
{
    json_object *ml = NULL, *me = NULL;
    if (!sel || json_object_is_type(sel, json_type_null))
        return 0;
    if (!json_object_is_type(sel, json_type_object))
        return errf(err, errlen, "expected a map {matchLabels, matchExpressions}");
    json_object_object_get_ex(sel, "matchLabels", &ml);
    json_object_object_get_ex(sel, "matchExpressions", &me);
    if (ml && json_object_is_type(ml, json_type_null))
        ml = NULL;
    if (me && json_object_is_type(me, json_type_null))
        me = NULL;
    if (ml && !json_object_is_type(ml, json_type_object))
        return errf(err, errlen, "matchLabels: expected a map");
    if (me && !json_object_is_type(me, json_type_array))
        return errf(err, errlen, "matchExpressions: expected a list");
    size_t n =
        (ml ? (size_t)json_object_object_length(ml) : 0) + (me ? json_object_array_length(me) : 0);
    if (!n)
        return 0; /* empty: matches nothing */
    int match = 1;
    if (ml) {
        json_object_object_foreach(ml, k, v)
        {
            if (!json_object_is_type(v, json_type_string))
                return errf(err, errlen, "matchLabels.%s: expected a string", k);
            const char *have = label(labels, k);
            if (!have || strcmp(have, json_object_get_string(v)) != 0)
                match = 0;
        }
    }
    for (size_t i = 0; me && i < json_object_array_length(me); i++) {
        int r = expression(json_object_array_get_idx(me, i), i, labels, err, errlen);
        if (r < 0)
            return -1;
        if (!r)
            match = 0;
    }
    return match;
}
