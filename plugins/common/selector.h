/*
 * selector.h - Kubernetes label selectors, parsed once and matched often.
 *
 * A selector is read from an object's value in one of two shapes: a plain
 * map of key=value pairs that must all match (a Pod's nodeSelector), or a
 * LabelSelector {matchLabels, matchExpressions} with the operators In,
 * NotIn, Exists and DoesNotExist. Parsing validates and copies everything,
 * so matching neither allocates nor touches the source object; the caller
 * supplies the target's labels through a lookup function. Used by the
 * label-selector plugin and meant for any plugin that matches labels.
 *
 * A plugin that matches many targets per workload compiles the parsed
 * selector once (selector_compile) against its intern table (intern.h) and
 * reads each target's labels once into a label_set of (key id, value id)
 * pairs; selector_ids_first_mismatch then compares integers only.
 */
#ifndef TRELLIS_PLUGINS_SELECTOR_H
#define TRELLIS_PLUGINS_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "intern.h"
#include "trellis/plugin.h"

typedef enum selector_format {
    SELECTOR_FORMAT_MAP = 0, /* {key: value, ...}, every pair must match */
    SELECTOR_FORMAT_SELECTOR /* {matchLabels, matchExpressions} */
} selector_format;

typedef enum selector_op {
    SELECTOR_EQUALS = 0, /* a map entry or a matchLabels entry */
    SELECTOR_IN,
    SELECTOR_NOT_IN,
    SELECTOR_EXISTS,
    SELECTOR_DOES_NOT_EXIST
} selector_op;

typedef struct selector_req {
    char *key;
    selector_op op;
    char **values; /* one for EQUALS, >= 1 for IN / NOT_IN, none otherwise */
    size_t nvalues;
} selector_req;

/* Requirements in document order: matchLabels first, then
 * matchExpressions. All of them must match (AND). */
typedef struct selector {
    selector_req *reqs;
    size_t n, cap;
} selector;

/* Returns the value of label `key` on the target, NULL when absent. */
typedef const char *(*selector_lookup_fn)(const void *ud, const char *key);

/* Parse the value found at `field` (used to name the offending element in
 * messages). *out is NULL when the selector is empty, which matches every
 * target. -1 with err filled ("spec.nodeSelector.matchExpressions[1]
 * .operator: expected In, NotIn, Exists or DoesNotExist, got 'Equals'")
 * when v is malformed. Ownership of *out transfers to the caller. */
int selector_parse(const trellis_host *h, const trellis_value *v, selector_format format,
                   const char *field, selector **out, char *err, size_t errlen);

/* selector_parse, where a LabelSelector may also have the members named in
 * `extra` (NULL-terminated; NULL for none), which are left to the caller:
 * Gardener's seedSelector carries providerTypes beside matchLabels and
 * matchExpressions. */
int selector_parse_with(const trellis_host *h, const trellis_value *v, selector_format format,
                        const char *const *extra, const char *field, selector **out, char *err,
                        size_t errlen);

/* Index of the first requirement that the labels seen through `lookup` do
 * not satisfy, or -1 when all are satisfied. Does not allocate. */
long selector_first_mismatch(const selector *s, selector_lookup_fn lookup, const void *ud);

/* Kubernetes' text form of one requirement: "zone=a", "zone in (a,b)",
 * "zone notin (a,b)", "zone", "!zone". Truncated to len. */
void selector_describe(const selector_req *r, char *buf, size_t len);

void selector_free(selector *s);

/* Append the requirement `key op value` (value NULL for Exists and
 * DoesNotExist) to *s, creating *s when it is NULL (the empty selector):
 * what the API server does with a pod affinity term's matchLabelKeys.
 * 0, or -1 when out of memory (*s is then unchanged, or NULL when it was
 * created). key and value are copied. */
int selector_add(selector **s, const char *key, selector_op op, const char *value);

/* ---- compiled selectors ------------------------------------------------ */

/* A target's labels as ids: ((uint64_t)key id << 32 | value id), sorted,
 * one per key. A label whose value is null, a list or a map is absent, as
 * the host's object_label has it. */
typedef struct label_set {
    uint64_t *pairs;
    size_t n;
} label_set;

/* One requirement of a compiled selector: its values are
 * values[first .. first + nvalues) of the selector_ids. */
typedef struct selector_idreq {
    int32_t key;
    selector_op op;
    uint32_t first, nvalues;
} selector_idreq;

/* A selector with keys and values replaced by ids; same order of
 * requirements as the selector it came from. Empty (n == 0) matches every
 * target. */
typedef struct selector_ids {
    selector_idreq *reqs;
    size_t n;
    int32_t *values;
} selector_ids;

/* Compile s (NULL: the empty selector) into *out, interning its keys and
 * values in t. 0, or -1 when out of memory (*out is then empty). */
int selector_compile(const selector *s, intern *t, selector_ids *out);

void selector_ids_clear(selector_ids *s);
/* Whether a and b, compiled against the same table, are the same
 * selector (the same requirements in the same order). */
int selector_ids_equal(const selector_ids *a, const selector_ids *b);
/* A copy of s into *out (its own arrays). 0, or -1 when out of memory
 * (*out is then empty). */
int selector_ids_copy(const selector_ids *s, selector_ids *out);

/* The labels of the map `labels` (NULL, null or not a map: no labels) into
 * *out, interned in t. 0, or -1 when out of memory (*out is then empty). */
int label_set_read(const trellis_host *h, const trellis_value *labels, intern *t, label_set *out);

/* The value id of label `key` in l, -1 when absent. Does not allocate. */
int32_t label_set_get(const label_set *l, int32_t key);

void label_set_clear(label_set *l);

/* Index of the first requirement of s that the labels l do not satisfy,
 * or -1 when all are satisfied: selector_first_mismatch over ids. Does not
 * allocate. */
long selector_ids_first_mismatch(const selector_ids *s, const label_set *l);

#endif
