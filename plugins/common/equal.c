/*
 * equal.c - see equal.h.
 */
#include "equal.h"

#include <string.h>

typedef struct member_ctx {
    const trellis_host *h;
    const trellis_value *other;
} member_ctx;

/* value_foreach callback: nonzero (stop) when the member differs in b. */
static int member_differs(const char *key, const trellis_value *v, void *ud)
{
    const member_ctx *m = ud;

    return !equal_values(m->h, v, m->h->value_get(m->other, key));
}

int equal_values(const trellis_host *h, const trellis_value *a, const trellis_value *b)
{
    trellis_value_type ta = a ? h->value_type(a) : TRELLIS_VALUE_NULL;
    trellis_value_type tb = b ? h->value_type(b) : TRELLIS_VALUE_NULL;

    if (ta != tb)
        return 0;
    switch (ta) {
    case TRELLIS_VALUE_NULL:
        return 1;
    case TRELLIS_VALUE_LIST: {
        size_t n = h->value_len(a);

        if (n != h->value_len(b))
            return 0;
        for (size_t i = 0; i < n; i++) {
            if (!equal_values(h, h->value_at(a, i), h->value_at(b, i)))
                return 0;
        }
        return 1;
    }
    case TRELLIS_VALUE_MAP: {
        member_ctx m = {h, b};

        return h->value_len(a) == h->value_len(b) && !h->value_foreach(a, member_differs, &m);
    }
    default: {
        const char *sa = h->value_string(a), *sb = h->value_string(b);

        return sa && sb && strcmp(sa, sb) == 0;
    }
    }
}

int equal_fields(const trellis_host *h, const trellis_object *a, const trellis_object *b,
                 const char *path)
{
    return equal_values(h, h->object_get(a, path), h->object_get(b, path));
}
