/*
 * spread.h - Pod topology spread constraints, parsed once per object.
 *
 * A v1.TopologySpreadConstraint ({maxSkew, topologyKey, whenUnsatisfiable,
 * labelSelector, minDomains, nodeAffinityPolicy, nodeTaintsPolicy,
 * matchLabelKeys}) becomes a spread_constraint with its key and selector
 * interned (intern.h), the way kube-scheduler's podtopologyspread plugin
 * turns it into its internal topologySpreadConstraint: minDomains 1 when
 * absent, nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore when
 * absent, the Pod's own values of the matchLabelKeys added to the selector
 * as key=value requirements. An absent labelSelector matches no Pod (and a
 * matchLabelKeys merge does not change that, as kube's
 * mergeLabelSetWithSelector); an empty one ({}) matches every Pod's labels
 * but counts no existing Pod (kube's countPodsMatchSelector skips an empty
 * selector). The same reader takes the defaultConstraints of kube's
 * PodTopologySpreadArgs, where a labelSelector is refused (the selector
 * of a default constraint is deduced per Pod). Used by the
 * pod-topology-spread plugin.
 */
#ifndef TRELLIS_PLUGINS_SPREAD_H
#define TRELLIS_PLUGINS_SPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "selector.h"
#include "trellis/plugin.h"

/* What the selector of a constraint counts. */
typedef enum spread_match {
    SPREAD_MATCH_NOTHING = 0, /* no labelSelector: no Pod, not even itself */
    SPREAD_MATCH_EMPTY,       /* labelSelector {}: matches every label set, counts no Pod */
    SPREAD_MATCH_SELECTOR     /* the requirements of `sel` */
} spread_match;

typedef struct spread_constraint {
    int32_t max_skew;
    int32_t min_domains; /* 1 when absent */
    int32_t key;         /* topologyKey, interned */
    int schedule_anyway; /* whenUnsatisfiable ScheduleAnyway (else DoNotSchedule) */
    int honor_affinity;  /* nodeAffinityPolicy Honor (the default) */
    int honor_taints;    /* nodeTaintsPolicy Honor (default Ignore) */
    spread_match match;
    selector_ids sel; /* SPREAD_MATCH_SELECTOR: labelSelector + matchLabelKeys */
    int self_match;   /* the Pod the constraint came from matches sel */
} spread_constraint;

typedef struct spread_list {
    spread_constraint *v;
    size_t n;
} spread_list;

/* Parse the list v (a Pod's spec.topologySpreadConstraints) found at
 * `path` into hard (DoNotSchedule) and soft (ScheduleAnyway), each in
 * document order, interning into t. pod_labels are the Pod's labels (the
 * values of matchLabelKeys, and self_match). v NULL or null: both empty.
 * -1 with err naming the element when v is not what an API server stores:
 * maxSkew not a positive integer, an empty topologyKey, an unknown
 * whenUnsatisfiable or policy, minDomains below 1 or with ScheduleAnyway,
 * a malformed labelSelector, two constraints with the same topologyKey
 * and whenUnsatisfiable. Ownership of the lists transfers to the caller
 * (spread_clear), also on failure. */
int spread_parse(const trellis_host *h, const trellis_value *v, const char *path,
                 const label_set *pod_labels, intern *t, spread_list *hard, spread_list *soft,
                 char *err, size_t errlen);

/* Parse the list v of PodTopologySpreadArgs.defaultConstraints (at path):
 * the same rules, a labelSelector refused; the selectors are left
 * SPREAD_MATCH_NOTHING for the caller to fill. */
int spread_parse_defaults(const trellis_host *h, const trellis_value *v, const char *path,
                          intern *t, spread_list *hard, spread_list *soft, char *err,
                          size_t errlen);

/* kube's system default constraints: kubernetes.io/hostname maxSkew 3 and
 * topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway, into soft
 * (hard stays empty). 0, or -1 when out of memory. */
int spread_system_defaults(intern *t, spread_list *hard, spread_list *soft);

/* Copy the constraints of `from` into *to (emptied first) with the selector
 * s (NULL: SPREAD_MATCH_NOTHING) and self_match computed on pod_labels:
 * the default constraints of one Pod. 0, or -1 when out of memory. */
int spread_with_selector(const spread_list *from, const selector *s, intern *t,
                         const label_set *pod_labels, spread_list *to);

/* Append a copy of requirement r to *s (created when NULL): how a caller
 * builds a selector from several sources (kube's DefaultSelector). 0, or
 * -1 when out of memory (*s may hold part of it; selector_free frees it).
 * Ownership of r is retained by the caller. */
int spread_selector_add(selector **s, const selector_req *r);

/* Whether an existing Pod with labels l counts for constraint c (the
 * namespace is the caller's business). Does not allocate. */
static inline int spread_counts(const spread_constraint *c, const label_set *l)
{
    return c->match == SPREAD_MATCH_SELECTOR && selector_ids_first_mismatch(&c->sel, l) < 0;
}

void spread_clear(spread_list *l);

#endif
