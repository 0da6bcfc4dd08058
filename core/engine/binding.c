/*
 * binding.c - see binding.h.
 */
#include "config.h"

#include "binding.h"

#include <stdio.h>
#include <string.h>

/* The key the primary binding names: the field alone, or namespace/name
 * from two fields (namespace_field). NULL when w is not bound. */
static const char *primary(const cfg_profile *pc, const trellis_object *w, char *buf, size_t len)
{
    const char *t = value_string(object_get(w, pc->binding_field));
    if (!t || !*t)
        return NULL;
    if (!pc->binding_namespace_field)
        return t;
    const char *ns = value_string(object_get(w, pc->binding_namespace_field));
    if (!ns || !*ns)
        return t;
    snprintf(buf, len, "%s/%s", ns, t);
    return buf;
}

const char *binding_target(const cfg_profile *pc, const trellis_object *w, char *buf, size_t len)
{
    return primary(pc, w, buf, len);
}

int binding_is_on(const cfg_profile *pc, const trellis_object *w, const char *target)
{
    char buf[BINDING_KEY_MAX];
    const char *t = primary(pc, w, buf, sizeof buf);
    return t && strcmp(t, target) == 0;
}

size_t binding_counted(const cfg_profile *pc, const trellis_object *w, const char **out, char *buf,
                       size_t len)
{
    size_t n = 0;
    for (size_t k = 0; k <= pc->n_also_counts && n < BINDING_MAX_COUNTED; k++) {
        const char *t =
            k == 0 ? primary(pc, w, buf, len) : value_string(object_get(w, pc->also_counts[k - 1]));
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
    char buf[BINDING_KEY_MAX];
    const char *counted[BINDING_MAX_COUNTED];
    size_t n = binding_counted(pc, w, counted, buf, sizeof buf);
    for (size_t k = 0; k < n; k++)
        if (strcmp(counted[k], target) == 0)
            return 1;
    return 0;
}

const char *binding_subresource(const cfg_profile *pc)
{
    static const char *const names[] = {NULL, "status", "binding"};
    return pc->binding_subresource >= 0 && pc->binding_subresource <= 2
               ? names[pc->binding_subresource]
               : NULL;
}

size_t binding_clear(const cfg_profile *pc, store_edit out[2])
{
    size_t n = 0;
    out[n++] = (store_edit){pc->binding_field, NULL, STORE_SET};
    if (pc->binding_namespace_field)
        out[n++] = (store_edit){pc->binding_namespace_field, NULL, STORE_SET};
    return n;
}

size_t binding_edits(const cfg_profile *pc, const trellis_object *t, store_edit out[2])
{
    if (!pc->binding_namespace_field) {
        out[0] = (store_edit){pc->binding_field, t->key, STORE_SET};
        return 1;
    }
    out[0] = (store_edit){pc->binding_field, t->name, STORE_SET};
    if (!*t->namespace_) {
        out[1] = (store_edit){pc->binding_namespace_field, NULL, STORE_SET};
        return 2;
    }
    out[1] = (store_edit){pc->binding_namespace_field, t->namespace_, STORE_SET};
    return 2;
}
