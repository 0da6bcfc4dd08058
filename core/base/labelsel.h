/*
 * labelsel.h - a Kubernetes LabelSelector ({matchLabels, matchExpressions}
 * with In, NotIn, Exists, DoesNotExist) matched against an object's labels,
 * both as json-c values: what `trellis drain` asks of a disruption budget.
 * Plugins have their own, compiled selectors (plugins/common/selector.h);
 * this one is read once per question and never on a hot path.
 */
#ifndef TRELLIS_LABELSEL_H
#define TRELLIS_LABELSEL_H

#include <stddef.h>

#include <json-c/json.h>

/* 1 when the labels map (NULL or null: no labels) satisfies every
 * requirement of sel, 0 when not. An absent, null or empty selector
 * matches nothing, as the API server's eviction and kube-scheduler's
 * preemption treat a budget's. -1 with err naming the member
 * ("matchExpressions[0].operator: expected In, NotIn, Exists or
 * DoesNotExist, got 'Equals'") when sel is malformed. Ownership of both
 * is retained by the caller. */
int labelsel_match(json_object *sel, json_object *labels, char *err, size_t errlen);

#endif
