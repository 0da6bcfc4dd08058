/*
 * binding.c - see binding.h.
 */
#include "config.h"

#include "binding.h"

#include <string.h>

const char *binding_target(const cfg_profile *pc, const trellis_object *w)
{
    const char *t = value_string(object_get(w, pc->binding_field));
    return t && *t ? t : NULL;
}

int binding_is_on(const cfg_profile *pc, const trellis_object *w, const char *target)
{
    const char *t = value_string(object_get(w, pc->binding_field));
    return t && strcmp(t, target) == 0;
}

size_t binding_counted(const cfg_profile *pc, const trellis_object *w, const char **out)
{
    size_t n = 0;
    for (size_t k = 0; k <= pc->n_also_counts && n < BINDING_MAX_COUNTED; k++) {
        const char *field = k == 0 ? pc->binding_field : pc->also_counts[k - 1];
        const char *t = value_string(object_get(w, field));
        if (!t || !*t)
            continue;
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= strcmp(out[j], t) == 0;
        if (!dup)
            out[n++] = t;
    }
    return n;
}

int binding_counts_on(const cfg_profile *pc, const trellis_object *w, const char *target)
{
    for (size_t k = 0; k <= pc->n_also_counts; k++) {
        const char *b = value_string(object_get(w, k ? pc->also_counts[k - 1] : pc->binding_field));
        if (b && strcmp(b, target) == 0)
            return 1;
    }
    return 0;
}

store_edit binding_clear(const cfg_profile *pc)
{
    store_edit e = {pc->binding_field, NULL, 0};
    return e;
}
