/*
 * extender_reply.c - see extender_reply.h.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "extender_reply.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Deep enough for a Node in a NodeList in a filter result. */
#define REPLY_DEPTH 64

static void reply_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *reply_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* The first JSON value of body[0..len), or NULL with err (an empty body
 * is an error, as Decode's io.EOF). *is_null: the value is null (json-c
 * hands back NULL for it). The caller puts the value. */
static json_object *first_value(const char *body, size_t len, int *is_null, char *err,
                                size_t errlen)
{
    *is_null = 0;
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", body[i]))
        i++;
    if (i == len) {
        reply_err(err, errlen, "the answer is empty (expected JSON)");
        return NULL;
    }
    if (len - i >= INT_MAX) {
        reply_err(err, errlen, "the answer is too large (%zu bytes)", len);
        return NULL;
    }
    /* json-c wants to see where a trailing number ends: a NUL after it */
    char *copy = malloc(len - i + 1);
    if (!copy) {
        reply_err(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(copy, body + i, len - i);
    copy[len - i] = '\0';
    json_tokener *tok = json_tokener_new_ex(REPLY_DEPTH);
    if (!tok) {
        free(copy);
        reply_err(err, errlen, "out of memory");
        return NULL;
    }
    json_object *v = json_tokener_parse_ex(tok, copy, (int)(len - i + 1));
    enum json_tokener_error e = json_tokener_get_error(tok);
    if (!v && e == json_tokener_success)
        *is_null = 1;
    else if (!v)
        reply_err(err, errlen, "the answer is not JSON: %s at byte %zu", json_tokener_error_desc(e),
                  i + json_tokener_get_parse_end(tok));
    json_tokener_free(tok);
    free(copy);
    return v;
}

/* The member of o named `name` without regard to ASCII case, the last
 * one when several are (Go decodes each in turn into the same field).
 * *present says whether there is one (its value may be null: NULL). */
static json_object *field(json_object *o, const char *name, int *present)
{
    json_object *found = NULL;
    *present = 0;
    json_object_object_foreach(o, k, v)
    {
        if (strcasecmp(k, name) == 0) {
            found = v;
            *present = 1;
        }
    }
    return found;
}

static int is(json_object *v, json_type t)
{
    return json_object_get_type(v) == t;
}

/* A list of strings into *out / *n (null: none, *given 0). */
static int string_list(json_object *v, const char *what, char ***out, size_t *n, int *given,
                       char *err, size_t errlen)
{
    *given = v != NULL;
    if (!v)
        return 0;
    if (!is(v, json_type_array)) {
        reply_err(err, errlen, "%s: expected a list of node names", what);
        return -1;
    }
    size_t len = json_object_array_length(v);
    *out = calloc(len ? len : 1, sizeof **out);
    if (!*out) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        json_object *s = json_object_array_get_idx(v, i); /* NULL for null: "" */
        if (s && !is(s, json_type_string)) {
            reply_err(err, errlen, "%s[%zu]: expected a string", what, i);
            return -1;
        }
        (*out)[i] = reply_dup(s ? json_object_get_string(s) : "");
        if (!(*out)[i]) {
            reply_err(err, errlen, "out of memory");
            return -1;
        }
        (*n)++;
    }
    return 0;
}

/* Nodes: a NodeList, its items' metadata.name. */
static int node_list(json_object *v, ext_filter_result *r, char *err, size_t errlen)
{
    r->has_nodes = v != NULL;
    if (!v)
        return 0;
    if (!is(v, json_type_object)) {
        reply_err(err, errlen, "Nodes: expected a NodeList (an object with items)");
        return -1;
    }
    int present;
    json_object *items = field(v, "items", &present);
    if (!items)
        return 0;
    if (!is(items, json_type_array)) {
        reply_err(err, errlen, "Nodes.items: expected a list of Nodes");
        return -1;
    }
    size_t len = json_object_array_length(items);
    r->nodes = calloc(len ? len : 1, sizeof *r->nodes);
    if (!r->nodes) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        json_object *node = json_object_array_get_idx(items, i);
        const char *name = "";
        if (node && !is(node, json_type_object)) {
            reply_err(err, errlen, "Nodes.items[%zu]: expected a Node", i);
            return -1;
        }
        json_object *meta = node ? field(node, "metadata", &present) : NULL;
        if (meta && !is(meta, json_type_object)) {
            reply_err(err, errlen, "Nodes.items[%zu].metadata: expected an object", i);
            return -1;
        }
        json_object *n = meta ? field(meta, "name", &present) : NULL;
        if (n && !is(n, json_type_string)) {
            reply_err(err, errlen, "Nodes.items[%zu].metadata.name: expected a string", i);
            return -1;
        }
        if (n)
            name = json_object_get_string(n);
        r->nodes[i] = reply_dup(name);
        if (!r->nodes[i]) {
            reply_err(err, errlen, "out of memory");
            return -1;
        }
        r->n_nodes++;
    }
    return 0;
}

static int by_node(const void *a, const void *b)
{
    return strcmp(((const ext_failed *)a)->node, ((const ext_failed *)b)->node);
}

/* Whether node is among the first n of r->failed, sorted by node. */
static int has_failed(const ext_filter_result *r, size_t n, const char *node)
{
    ext_failed key = {(char *)node, NULL, 0};
    return n && bsearch(&key, r->failed, n, sizeof *r->failed, by_node) != NULL;
}

/* A FailedNodesMap: node name -> message. Nodes failed already (the
 * unresolvable map is read first) keep that verdict, as kube-scheduler's
 * findNodesThatPassExtenders has it. */
static int failed_map(json_object *v, const char *what, int unresolvable, ext_filter_result *r,
                      char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (!is(v, json_type_object)) {
        reply_err(err, errlen, "%s: expected a map of node names to messages", what);
        return -1;
    }
    size_t len = (size_t)json_object_object_length(v);
    ext_failed *grown = realloc(r->failed, (r->n_failed + len + 1) * sizeof *r->failed);
    if (!grown) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    r->failed = grown;
    /* a map's keys are unique: only the maps read before are looked in,
     * sorted once (an answer of many nodes costs n log n, not n^2) */
    size_t before = r->n_failed;
    if (before > 1)
        qsort(r->failed, before, sizeof *r->failed, by_node);
    json_object_object_foreach(v, k, m)
    {
        if (m && !is(m, json_type_string)) {
            reply_err(err, errlen, "%s[\"%.64s\"]: expected a string", what, k);
            return -1;
        }
        if (has_failed(r, before, k))
            continue;
        ext_failed *f = &r->failed[r->n_failed];
        f->node = reply_dup(k);
        f->message = reply_dup(m ? json_object_get_string(m) : "");
        f->unresolvable = unresolvable;
        if (!f->node || !f->message) {
            free(f->node);
            free(f->message);
            reply_err(err, errlen, "out of memory");
            return -1;
        }
        r->n_failed++;
    }
    return 0;
}

/* Error: a string or null; the non-empty one into *out. */
static int error_field(json_object *o, char **out, char *err, size_t errlen)
{
    int present;
    json_object *e = field(o, "Error", &present);
    if (!e)
        return 0;
    if (!is(e, json_type_string)) {
        reply_err(err, errlen, "Error: expected a string");
        return -1;
    }
    const char *s = json_object_get_string(e);
    if (s[0] && !(*out = reply_dup(s))) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void ext_filter_result_free(ext_filter_result *r)
{
    for (size_t i = 0; i < r->n_names; i++)
        free(r->names[i]);
    for (size_t i = 0; i < r->n_nodes; i++)
        free(r->nodes[i]);
    for (size_t i = 0; i < r->n_failed; i++) {
        free(r->failed[i].node);
        free(r->failed[i].message);
    }
    free(r->names);
    free(r->nodes);
    free(r->failed);
    free(r->error);
    memset(r, 0, sizeof *r);
}

int ext_parse_filter(const char *body, size_t len, ext_filter_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    int is_null, present, rc = -1;
    json_object *v = first_value(body, len, &is_null, err, errlen);
    if (!v)
        return is_null ? 0 : -1; /* null: nothing set, every node filtered out */
    if (!is(v, json_type_object)) {
        reply_err(err, errlen, "expected an ExtenderFilterResult (a JSON object), got %s",
                  json_type_to_name(json_object_get_type(v)));
        goto out;
    }
    if (string_list(field(v, "NodeNames", &present), "NodeNames", &r->names, &r->n_names,
                    &r->has_names, err, errlen) < 0 ||
        node_list(field(v, "Nodes", &present), r, err, errlen) < 0 ||
        failed_map(field(v, "FailedAndUnresolvableNodes", &present), "FailedAndUnresolvableNodes",
                   1, r, err, errlen) < 0 ||
        failed_map(field(v, "FailedNodes", &present), "FailedNodes", 0, r, err, errlen) < 0 ||
        error_field(v, &r->error, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    json_object_put(v);
    if (rc < 0)
        ext_filter_result_free(r);
    return rc;
}

void ext_priorities_free(ext_priority *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].host);
    free(v);
}

int ext_parse_priorities(const char *body, size_t len, ext_priority **out, size_t *n, char *err,
                         size_t errlen)
{
    *out = NULL;
    *n = 0;
    int is_null, present;
    json_object *v = first_value(body, len, &is_null, err, errlen);
    if (!v)
        return is_null ? 0 : -1;
    if (!is(v, json_type_array)) {
        reply_err(err, errlen, "expected a HostPriorityList (a JSON list), got %s",
                  json_type_to_name(json_object_get_type(v)));
        json_object_put(v);
        return -1;
    }
    size_t len_ = json_object_array_length(v);
    ext_priority *p = calloc(len_ ? len_ : 1, sizeof *p);
    if (!p) {
        reply_err(err, errlen, "out of memory");
        json_object_put(v);
        return -1;
    }
    size_t k = 0;
    for (; k < len_; k++) {
        json_object *e = json_object_array_get_idx(v, k);
        json_object *h = e && is(e, json_type_object) ? field(e, "Host", &present) : NULL;
        json_object *s = e && is(e, json_type_object) ? field(e, "Score", &present) : NULL;
        if (e && !is(e, json_type_object)) {
            reply_err(err, errlen, "[%zu]: expected a HostPriority (an object)", k);
            break;
        }
        if (h && !is(h, json_type_string)) {
            reply_err(err, errlen, "[%zu].Host: expected a string", k);
            break;
        }
        if (s && !is(s, json_type_int)) {
            reply_err(err, errlen, "[%zu].Score: expected an integer", k);
            break;
        }
        p[k].host = reply_dup(h ? json_object_get_string(h) : "");
        if (!p[k].host) {
            reply_err(err, errlen, "out of memory");
            break;
        }
        p[k].score = s ? json_object_get_int64(s) : 0;
    }
    json_object_put(v);
    if (k < len_) {
        ext_priorities_free(p, k);
        return -1;
    }
    *out = p;
    *n = len_;
    return 0;
}

void ext_meta_victims_free(ext_meta_victims *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        for (size_t j = 0; j < v[i].n_uids; j++)
            free(v[i].uids[j]);
        free(v[i].uids);
        free(v[i].node);
    }
    free(v);
}

/* One Node's MetaVictims (mv may be null: no victims) into *out. */
static int meta_victims(const char *node, json_object *mv, ext_meta_victims *out, char *err,
                        size_t errlen)
{
    int present;
    if (!(out->node = reply_dup(node))) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    if (!mv)
        return 0;
    if (!is(mv, json_type_object)) {
        reply_err(err, errlen, "NodeNameToMetaVictims[\"%.64s\"]: expected MetaVictims (an object)",
                  node);
        return -1;
    }
    json_object *pdb = field(mv, "NumPDBViolations", &present);
    if (pdb && !is(pdb, json_type_int)) {
        reply_err(err, errlen,
                  "NodeNameToMetaVictims[\"%.64s\"].NumPDBViolations: expected an "
                  "integer",
                  node);
        return -1;
    }
    out->pdb_violations = pdb ? json_object_get_int64(pdb) : 0;
    json_object *pods = field(mv, "Pods", &present);
    if (!pods)
        return 0;
    if (!is(pods, json_type_array)) {
        reply_err(err, errlen, "NodeNameToMetaVictims[\"%.64s\"].Pods: expected a list", node);
        return -1;
    }
    out->has_pods = 1;
    size_t len = json_object_array_length(pods);
    out->uids = calloc(len ? len : 1, sizeof *out->uids);
    if (!out->uids) {
        reply_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        json_object *p = json_object_array_get_idx(pods, i);
        json_object *uid = p && is(p, json_type_object) ? field(p, "UID", &present) : NULL;
        if (p && !is(p, json_type_object)) {
            reply_err(err, errlen,
                      "NodeNameToMetaVictims[\"%.64s\"].Pods[%zu]: expected a MetaPod (an object)",
                      node, i);
            return -1;
        }
        if (uid && !is(uid, json_type_string)) {
            reply_err(err, errlen,
                      "NodeNameToMetaVictims[\"%.64s\"].Pods[%zu].UID: expected a string", node, i);
            return -1;
        }
        if (!(out->uids[i] = reply_dup(uid ? json_object_get_string(uid) : ""))) {
            reply_err(err, errlen, "out of memory");
            return -1;
        }
        out->n_uids++;
    }
    return 0;
}

int ext_parse_preemption(const char *body, size_t len, ext_meta_victims **out, size_t *n, char *err,
                         size_t errlen)
{
    *out = NULL;
    *n = 0;
    int is_null, present, rc = -1;
    json_object *v = first_value(body, len, &is_null, err, errlen);
    if (!v)
        return is_null ? 0 : -1; /* null: no candidates */
    if (!is(v, json_type_object)) {
        reply_err(err, errlen, "expected an ExtenderPreemptionResult (a JSON object), got %s",
                  json_type_to_name(json_object_get_type(v)));
        json_object_put(v);
        return -1;
    }
    json_object *m = field(v, "NodeNameToMetaVictims", &present);
    if (!m) {
        json_object_put(v);
        return 0;
    }
    if (!is(m, json_type_object)) {
        reply_err(err, errlen,
                  "NodeNameToMetaVictims: expected a map of node names to MetaVictims");
        json_object_put(v);
        return -1;
    }
    size_t count = (size_t)json_object_object_length(m), k = 0;
    ext_meta_victims *r = calloc(count ? count : 1, sizeof *r);
    if (!r) {
        reply_err(err, errlen, "out of memory");
        json_object_put(v);
        return -1;
    }
    json_object_object_foreach(m, node, mv)
    {
        if (k == count)
            break;
        if (meta_victims(node, mv, &r[k++], err, errlen) < 0)
            goto out;
    }
    rc = 0;
out:
    json_object_put(v);
    if (rc < 0) {
        ext_meta_victims_free(r, k);
        return -1;
    }
    *out = r;
    *n = k;
    return 0;
}

int ext_parse_binding(const char *body, size_t len, char **error, char *err, size_t errlen)
{
    *error = NULL;
    int is_null;
    json_object *v = first_value(body, len, &is_null, err, errlen);
    if (!v)
        return is_null ? 0 : -1;
    int rc = -1;
    if (!is(v, json_type_object))
        reply_err(err, errlen, "expected an ExtenderBindingResult (a JSON object), got %s",
                  json_type_to_name(json_object_get_type(v)));
    else
        rc = error_field(v, error, err, errlen);
    json_object_put(v);
    return rc;
}
