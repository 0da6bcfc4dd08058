/*
 * nodeselector.h - Kubernetes NodeSelector terms (node affinity), parsed
 * once and matched often.
 *
 * A v1.NodeSelector is a list of nodeSelectorTerms, ORed; each term ANDs
 * its matchExpressions (over the node's labels: In, NotIn, Exists,
 * DoesNotExist, Gt, Lt) and its matchFields (over the node's fields, of
 * which there is one: metadata.name, with In and NotIn of one value).
 * Preferred terms add a weight. The rules are those of kube-scheduler's
 * component-helpers/scheduling/corev1/nodeaffinity: an empty term (no
 * expressions, no fields) matches nothing and is dropped; a required term
 * with an invalid requirement (an unknown operator, In without values,
 * Exists with values, Gt with anything but one integer) never matches but
 * does not stop the other terms; a preferred term with weight 0 is dropped
 * and an invalid one is an error. A value of the wrong shape (a term that
 * is not a map) is an error in every case: no API server would have
 * stored it.
 *
 * Keys and values are interned (intern.h) when parsed, in prepare; the
 * node side is a label_set (selector.h) and the id of the node's name, so
 * matching compares integers, except Gt and Lt, which read the label's
 * text through a lookup function and parse it as an integer.
 */
#ifndef TRELLIS_PLUGINS_NODESELECTOR_H
#define TRELLIS_PLUGINS_NODESELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "selector.h"
#include "trellis/plugin.h"

typedef enum ns_op { NS_IN = 0, NS_NOT_IN, NS_EXISTS, NS_DOES_NOT_EXIST, NS_GT, NS_LT } ns_op;

/* One requirement: a label expression, or a field one (field != 0: only
 * In and NotIn, and `key` is -1 unless the field is metadata.name). */
typedef struct ns_req {
    int32_t key;
    ns_op op;
    int field;
    uint32_t first, nvalues; /* values[first .. first + nvalues) of the selector */
    int64_t bound;           /* Gt / Lt: the integer */
    char *key_text;          /* owned: for Gt / Lt lookups and messages */
} ns_req;

typedef struct ns_term {
    ns_req *reqs;
    size_t n;
    int64_t weight; /* preferred terms; 0 for required ones */
    int invalid;    /* a requirement is invalid: the term matches nothing */
} ns_term;

/* Terms in document order, empty ones dropped. */
typedef struct node_selector {
    ns_term *terms;
    size_t n;
    int32_t *values; /* every requirement's value ids */
    size_t nvalues;
} node_selector;

/* What a node offers to matching: its labels as ids, the id of its name
 * (-1 when the table has not seen it), and its labels as text for Gt and
 * Lt (label(ud, key): the value, NULL when absent). */
typedef struct ns_node {
    const label_set *labels;
    int32_t name;
    const char *(*label)(const void *ud, const char *key);
    const void *ud;
} ns_node;

/* Parse the v1.NodeSelector map v ({nodeSelectorTerms: [...]}) found at
 * `path`, interning its strings in t. *out is never NULL on success: a
 * selector with no terms (all empty) matches nothing. -1 with err naming
 * the element when v is of the wrong shape. Ownership of *out transfers to
 * the caller. */
int ns_parse_required(const trellis_host *h, const trellis_value *v, const char *path, intern *t,
                      node_selector **out, char *err, size_t errlen);

/* Parse the list of v1.PreferredSchedulingTerm v ([{weight, preference}])
 * found at `path`. *out is NULL when no term with a weight is left. -1 with
 * err when v is of the wrong shape or a term is invalid. */
int ns_parse_preferred(const trellis_host *h, const trellis_value *v, const char *path, intern *t,
                       node_selector **out, char *err, size_t errlen);

/* Whether term i of s matches the node. Does not allocate. */
int ns_term_matches(const node_selector *s, size_t i, const ns_node *node);

/* Whether any term of s matches (required selectors). */
int ns_matches(const node_selector *s, const ns_node *node);

/* The sum of the weights of the terms of s (may be NULL) that match. */
int64_t ns_score(const node_selector *s, const ns_node *node);

/* Why the required selector s does not match the node, for a message:
 * "key in (a,b) not matched", or "none of 3 nodeSelectorTerms matched".
 * Truncated to len. */
void ns_describe_mismatch(const node_selector *s, const intern *t, const ns_node *node, char *buf,
                          size_t len);

void ns_free(node_selector *s);

#endif
