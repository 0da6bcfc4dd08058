/*
 * taints.h - taints on targets and the tolerations of workloads.
 *
 * Taints ({key, value, effect}) and tolerations ({key, operator, value,
 * effect}) are parsed once per object into plain arrays, and matched with
 * either Kubernetes' rules or Gardener's (whose seed tolerations carry no
 * operator and treat a missing value specially). Used by the
 * taint-toleration plugin.
 */
#ifndef TRELLIS_PLUGINS_TAINTS_H
#define TRELLIS_PLUGINS_TAINTS_H

#include <stddef.h>

#include "trellis/plugin.h"

typedef enum taint_effect {
    TAINT_EFFECT_ANY = 0, /* tolerations only: no effect given */
    TAINT_NO_SCHEDULE,
    TAINT_PREFER_NO_SCHEDULE,
    TAINT_NO_EXECUTE
} taint_effect;

typedef enum taint_semantics {
    /* core/v1 Toleration.ToleratesTaint */
    TAINT_SEMANTICS_KUBERNETES = 0,
    /* Gardener seeds: no operator; a toleration without a value does not
     * tolerate a taint with one; a taint without a value is tolerated by
     * any toleration with its key */
    TAINT_SEMANTICS_GARDENER
} taint_semantics;

/* One taint or one toleration; `exists` is used by tolerations only. */
typedef struct taint_item {
    char *key;     /* "" when absent (tolerations only) */
    char *value;   /* "" when absent */
    int has_value; /* value was given (Gardener tells "" from absent) */
    taint_effect effect;
    int exists; /* operator Exists */
} taint_item;

typedef struct taint_list {
    taint_item *items;
    size_t n;
} taint_list;

/* "NoSchedule" -> TAINT_NO_SCHEDULE ...; -1 for anything else. */
int taints_parse_effect(const char *s, taint_effect *out);
const char *taints_effect_name(taint_effect e);

/* Parse the list v found at `field`. A taint without effect gets
 * empty_effect. *out is NULL when there are none. -1 with err naming the
 * element ("spec.taints[2].effect: expected NoSchedule, PreferNoSchedule
 * or NoExecute, got 'Never'"). Ownership of *out transfers to the caller. */
int taints_parse_taints(const trellis_host *h, const trellis_value *v, const char *field,
                        taint_effect empty_effect, taint_list **out, char *err, size_t errlen);
int taints_parse_tolerations(const trellis_host *h, const trellis_value *v, const char *field,
                             taint_semantics sem, taint_list **out, char *err, size_t errlen);

/* Whether any toleration in tols (may be NULL) tolerates taint. */
int taints_tolerated(const taint_item *taint, const taint_list *tols, taint_semantics sem);

/* "key=value:Effect", or "key:Effect" for a taint without value. */
void taints_describe(const taint_item *taint, char *buf, size_t len);

void taints_free(taint_list *l);
/* Whether two lists (NULL: empty) hold the same items in the same order. */
int taints_equal(const taint_list *a, const taint_list *b);

#endif
