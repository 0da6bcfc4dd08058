/*
 * extender_request.c - see extender_request.h.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "extender_request.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TO_TEXT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* v as a json-c value (NULL for null), or *bad set on failure. */
static json_object *to_json(const trellis_host *h, const trellis_value *v, int *bad);

typedef struct member_ctx {
    const trellis_host *h;
    json_object *map;
    int *bad;
} member_ctx;

static int add_member(const char *key, const trellis_value *v, void *ud)
{
    member_ctx *m = ud;
    json_object *j = to_json(m->h, v, m->bad);
    if (*m->bad || json_object_object_add(m->map, key, j) != 0) {
        json_object_put(j);
        *m->bad = 1;
        return 1;
    }
    return 0;
}

static json_object *to_json(const trellis_host *h, const trellis_value *v, int *bad)
{
    json_object *j = NULL;
    int64_t i;
    double d;
    int b;
    switch (h->value_type(v)) {
    case TRELLIS_VALUE_NULL:
        return NULL;
    case TRELLIS_VALUE_BOOL:
        return h->value_bool(v, &b) == 0 ? json_object_new_boolean(b) : NULL;
    case TRELLIS_VALUE_INT:
        if (h->value_int(v, &i) == 0)
            return json_object_new_int64(i);
        break;
    case TRELLIS_VALUE_DOUBLE:
        /* the number as it was written (1.50 stays 1.50) */
        if (h->value_double(v, &d) == 0)
            return json_object_new_double_s(d, h->value_string(v));
        break;
    case TRELLIS_VALUE_STRING:
        return json_object_new_string(h->value_string(v));
    case TRELLIS_VALUE_LIST:
        j = json_object_new_array();
        for (size_t k = 0; j && k < h->value_len(v) && !*bad; k++)
            if (json_object_array_add(j, to_json(h, h->value_at(v, k), bad)) != 0)
                *bad = 1;
        break;
    case TRELLIS_VALUE_MAP: {
        j = json_object_new_object();
        member_ctx m = {h, j, bad};
        if (j)
            h->value_foreach(v, add_member, &m);
        break;
    }
    }
    if (!j || *bad) {
        json_object_put(j);
        *bad = 1;
        return NULL;
    }
    return j;
}

static char *dup_text(json_object *j)
{
    const char *t = json_object_to_json_string_ext(j, TO_TEXT);
    char *s = t ? strdup(t) : NULL;
    json_object_put(j);
    return s;
}

char *ext_object_json(const trellis_host *h, const trellis_object *o)
{
    /* the empty path reaches the object's root */
    const trellis_value *root = h->object_get(o, "");
    int bad = 0;
    if (!root || h->value_type(root) != TRELLIS_VALUE_MAP)
        return NULL;
    json_object *j = to_json(h, root, &bad);
    return bad || !j ? NULL : dup_text(j);
}

/* A growing text. */
typedef struct buf {
    char *s;
    size_t len, cap;
    int oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *g = realloc(b->s, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->s = g;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* s as a JSON string literal. */
static void quoted(buf *b, const char *s)
{
    json_object *j = json_object_new_string(s ? s : "");
    const char *t = j ? json_object_to_json_string_ext(j, TO_TEXT) : NULL;
    if (t)
        puts_(b, t);
    else
        b->oom = 1;
    json_object_put(j);
}

static char *done(buf *b, size_t *len)
{
    if (b->oom) {
        free(b->s);
        return NULL;
    }
    *len = b->len;
    return b->s;
}

/* The keys below are the Go field names of extender/v1, whose types carry
 * no json tags: kube-scheduler's json.Marshal writes every field, so the
 * one not in use goes out as null, as kube sends it. */

char *ext_args_body(const char *pod_json, const char *const *items, size_t n, int names,
                    size_t *len)
{
    buf b = {0};
    puts_(&b, "{\"Pod\":");
    puts_(&b, pod_json);
    puts_(&b,
          names ? ",\"Nodes\":null,\"NodeNames\":[" : ",\"Nodes\":{\"metadata\":{},\"items\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            puts_(&b, ",");
        if (names)
            quoted(&b, items[i]);
        else
            puts_(&b, items[i]);
    }
    puts_(&b, names ? "]}" : "]},\"NodeNames\":null}");
    return done(&b, len);
}

static int by_node_name(const void *a, const void *b)
{
    return strcmp((*(const ext_victims *const *)a)->node, (*(const ext_victims *const *)b)->node);
}

char *ext_preemption_body(const char *pod_json, const ext_victims *v, size_t n, int meta,
                          size_t *len)
{
    buf b = {0};
    char num[32];
    /* Go writes a map's keys sorted (bytewise, as strcmp) */
    const ext_victims **order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < n; i++)
        order[i] = &v[i];
    qsort(order, n, sizeof *order, by_node_name);
    puts_(&b, "{\"Pod\":");
    puts_(&b, pod_json);
    puts_(&b, meta ? ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
                   : ",\"NodeNameToVictims\":{");
    for (size_t i = 0; i < n; i++) {
        const ext_victims *c = order[i];
        if (i)
            puts_(&b, ",");
        quoted(&b, c->node);
        puts_(&b, ":{\"Pods\":[");
        for (size_t j = 0; j < c->n_pods; j++) {
            if (j)
                puts_(&b, ",");
            if (meta) {
                puts_(&b, "{\"UID\":");
                quoted(&b, c->pods[j]);
                puts_(&b, "}");
            } else {
                puts_(&b, c->pods[j]);
            }
        }
        snprintf(num, sizeof num, "%lld", (long long)c->pdb_violations);
        puts_(&b, "],\"NumPDBViolations\":");
        puts_(&b, num);
        puts_(&b, "}");
    }
    puts_(&b, meta ? "}}" : "},\"NodeNameToMetaVictims\":null}");
    free(order);
    return done(&b, len);
}

char *ext_binding_body(const char *pod_name, const char *pod_namespace, const char *pod_uid,
                       const char *node, size_t *len)
{
    buf b = {0};
    puts_(&b, "{\"PodName\":");
    quoted(&b, pod_name);
    puts_(&b, ",\"PodNamespace\":");
    quoted(&b, pod_namespace);
    puts_(&b, ",\"PodUID\":");
    quoted(&b, pod_uid);
    puts_(&b, ",\"Node\":");
    quoted(&b, node);
    puts_(&b, "}");
    return done(&b, len);
}
