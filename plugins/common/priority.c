/*
 * priority.c - reading a workload's priority.
 *
 * The range is Kubernetes' (int32) so that a manifest that the API server
 * would refuse is refused here too, with the field named, instead of being
 * scheduled with a priority no real cluster could have.
 */
#include "priority.h"

#include <stdio.h>

int priority_read(const trellis_host *h, const trellis_object *w, const char *field, int64_t *out,
                  char *err, size_t errlen)
{
    const trellis_value *v = h->object_get(w, field);
    const char *text;
    int64_t p;

    *out = 0;
    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    if (h->value_type(v) == TRELLIS_VALUE_INT || h->value_type(v) == TRELLIS_VALUE_STRING) {
        if (h->value_int(v, &p) == 0) {
            if (p < INT32_MIN || p > INT32_MAX) {
                snprintf(err, errlen, "%s: expected an integer from %ld to %ld, got %lld", field,
                         (long)INT32_MIN, (long)INT32_MAX, (long long)p);
                return -1;
            }
            *out = p;
            return 0;
        }
    }
    text = h->value_string(v);
    snprintf(err, errlen, "%s: expected an integer, got '%s'", field,
             text ? text : "a list or map");
    return -1;
}
