/*
 * extender_reply.h - the answers of a kube-scheduler HTTP extender
 * (k8s.io/kube-scheduler/extender/v1), read as kube-scheduler's Go
 * decoder reads them.
 *
 * ExtenderFilterResult {Nodes, NodeNames, FailedNodes,
 * FailedAndUnresolvableNodes, Error}, HostPriorityList [{Host, Score}],
 * ExtenderPreemptionResult {NodeNameToMetaVictims: {node: {Pods: [{UID}],
 * NumPDBViolations}}} and ExtenderBindingResult {Error}: the first JSON
 * value of the body (what follows it is not read, as json.Decoder.Decode
 * does not), keys matched without regard to ASCII case, so the Go field
 * names a Go extender answers with ("NodeNames", "FailedNodes", "Host")
 * and the lower camelCase of the scheduler API before Kubernetes 1.17
 * ("nodenames", "failedNodes", "host") are both read (of two keys naming
 * one field the last wins, as with encoding/json for a list or a string;
 * Go would merge two maps, here the last one is read alone), null where
 * Go would leave a field nil, unknown keys ignored, and a value of the
 * wrong type an error (named with the Go field names). Only json-c and
 * libc: the fuzz target links this file alone.
 */
#ifndef TRELLIS_EXTENDER_REPLY_H
#define TRELLIS_EXTENDER_REPLY_H

#include <stddef.h>
#include <stdint.h>

/* A node the extender failed, with its message. */
typedef struct ext_failed {
    char *node;
    char *message;
    int unresolvable; /* from FailedAndUnresolvableNodes */
} ext_failed;

typedef struct ext_filter_result {
    int has_names; /* NodeNames was given (not null) */
    char **names;  /* NodeNames, in the order given */
    size_t n_names;
    int has_nodes; /* Nodes was given (not null): its items' metadata.name */
    char **nodes;
    size_t n_nodes;
    ext_failed *failed; /* FailedAndUnresolvableNodes first, then FailedNodes
                           not among them */
    size_t n_failed;
    char *error; /* non-empty Error, or NULL */
} ext_filter_result;

typedef struct ext_priority {
    char *host;
    int64_t score;
} ext_priority;

/* Parse a filter verb's answer body[0..len) into *r (zeroed first). 0, or
 * -1 with err ("FailedNodes[\"n1\"]: expected a string"); *r is empty
 * then. Ownership of *r's contents transfers to the caller
 * (ext_filter_result_free). */
int ext_parse_filter(const char *body, size_t len, ext_filter_result *r, char *err, size_t errlen);
void ext_filter_result_free(ext_filter_result *r);

/* Parse a prioritize verb's answer into *out (malloc'd, *n entries; NULL
 * and 0 for null or []). 0, or -1 with err. Ownership of *out transfers
 * to the caller (ext_priorities_free). */
int ext_parse_priorities(const char *body, size_t len, ext_priority **out, size_t *n, char *err,
                         size_t errlen);
void ext_priorities_free(ext_priority *v, size_t n);

/* What a preempt verb answered for one Node: its victims' UIDs. */
typedef struct ext_meta_victims {
    char *node;
    int has_pods; /* the Node's entry and its pods were given (not null) */
    char **uids;  /* in the order given; "" for a pod without a uid */
    size_t n_uids;
    int64_t pdb_violations;
} ext_meta_victims;

/* Parse a preempt verb's answer into *out (malloc'd, *n Nodes in the
 * order given; NULL and 0 for null, {} or no NodeNameToMetaVictims: no
 * candidates). A Node named twice counts once, with the last value (as a
 * Go map). 0, or -1 with err ("NodeNameToMetaVictims[\"n1\"].Pods[0].UID:
 * expected a string"). Ownership of *out transfers to the caller
 * (ext_meta_victims_free). */
int ext_parse_preemption(const char *body, size_t len, ext_meta_victims **out, size_t *n, char *err,
                         size_t errlen);
void ext_meta_victims_free(ext_meta_victims *v, size_t n);

/* Parse a bind verb's answer: 0 with *error the non-empty Error the
 * extender returned (malloc'd, the caller's) or NULL; -1 with err when
 * the body is not one. */
int ext_parse_binding(const char *body, size_t len, char **error, char *err, size_t errlen);

#endif
