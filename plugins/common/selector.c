/*
 * selector.c - parsing and matching of Kubernetes label selectors.
 *
 * Parsing walks the value with the host's value functions and copies every
 * key and value, so the parsed selector outlives nothing it borrowed and
 * matching is a loop over plain strings. Every rejection names the element
 * by its path under the configured field, because the person reading the
 * message has to find the line in a manifest. The compiled form at the end
 * is the same matching over interned ids, for plugins that match one
 * workload against many targets.
 */
#include "selector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

/* The walk over a map is callback driven (value_foreach), so the parse
 * state travels in one struct. */
typedef struct parse_ctx {
    const trellis_host *h;
    selector *sel;
    const char *field;        /* path of the map being walked, for messages */
    const char *const *extra; /* other members a LabelSelector may have */
    char *err;
    size_t errlen;
} parse_ctx;

static int add_req(parse_ctx *ctx, const char *key, selector_op op)
{
    selector *s = ctx->sel;
    selector_req *r;

    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        selector_req *p = realloc(s->reqs, cap * sizeof(*p));

        if (!p)
            goto nomem;
        s->reqs = p;
        s->cap = cap;
    }
    r = &s->reqs[s->n];
    memset(r, 0, sizeof(*r));
    r->op = op;
    r->key = values_strdup(key);
    if (!r->key)
        goto nomem;
    s->n++;
    return 0;
nomem:
    snprintf(ctx->err, ctx->errlen, "%s: out of memory", ctx->field);
    return -1;
}

/* Append a value to the last requirement. */
static int add_value(parse_ctx *ctx, const char *value)
{
    selector_req *r = &ctx->sel->reqs[ctx->sel->n - 1];
    char **p = realloc(r->values, (r->nvalues + 1) * sizeof(*p));

    if (p)
        r->values = p;
    if (!p || !(p[r->nvalues] = values_strdup(value))) {
        snprintf(ctx->err, ctx->errlen, "%s: out of memory", ctx->field);
        return -1;
    }
    r->nvalues++;
    return 0;
}

/* One key=value pair of a plain map or of matchLabels. */
static int equals_entry(const char *key, const trellis_value *v, void *ud)
{
    parse_ctx *ctx = ud;
    const char *text = values_scalar_text(ctx->h, v);
    char path[256];

    /* Label keys such as "topology.kubernetes.io/zone" contain dots, so
     * they are written in the bracket form the host's paths accept. */
    values_member_path(path, sizeof(path), ctx->field, key, ".[\"");
    if (key[0] == '\0') {
        snprintf(ctx->err, ctx->errlen, "%s: expected a non-empty label key", ctx->field);
        return -1;
    }
    if (!text) {
        snprintf(ctx->err, ctx->errlen, "%s: expected a string, got %s", path,
                 values_type_name(ctx->h->value_type(v)));
        return -1;
    }
    if (add_req(ctx, key, SELECTOR_EQUALS) < 0 || add_value(ctx, text) < 0)
        return -1;
    return 0;
}

static int parse_equals_map(parse_ctx *ctx, const trellis_value *v)
{
    int rc =
        values_expect(ctx->h, v, TRELLIS_VALUE_MAP, "a map", ctx->field, ctx->err, ctx->errlen);

    if (rc <= 0)
        return rc;
    return ctx->h->value_foreach(v, equals_entry, ctx) ? -1 : 0;
}

static int parse_operator(const char *s, selector_op *op)
{
    static const struct {
        const char *name;
        selector_op op;
    } ops[] = {
        {"In", SELECTOR_IN},
        {"NotIn", SELECTOR_NOT_IN},
        {"Exists", SELECTOR_EXISTS},
        {"DoesNotExist", SELECTOR_DOES_NOT_EXIST},
    };

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strcmp(s, ops[i].name) == 0) {
            *op = ops[i].op;
            return 0;
        }
    }
    return -1;
}

/* One element of matchExpressions; `path` names it
 * ("spec.selector.matchExpressions[1]"). */
static int parse_expression(parse_ctx *ctx, const trellis_value *e, const char *path)
{
    const trellis_host *h = ctx->h;
    const trellis_value *key, *opv, *values;
    const char *keytext, *optext;
    selector_op op;
    size_t nvalues = 0;

    if (h->value_type(e) != TRELLIS_VALUE_MAP) {
        snprintf(ctx->err, ctx->errlen, "%s: expected a map, got %s", path,
                 values_type_name(h->value_type(e)));
        return -1;
    }
    key = h->value_get(e, "key");
    keytext = key && h->value_type(key) == TRELLIS_VALUE_STRING ? h->value_string(key) : NULL;
    if (!keytext || keytext[0] == '\0') {
        snprintf(ctx->err, ctx->errlen, "%s.key: expected a non-empty string", path);
        return -1;
    }
    opv = h->value_get(e, "operator");
    optext = values_scalar_text(h, opv);
    if (!optext || parse_operator(optext, &op) < 0) {
        snprintf(ctx->err, ctx->errlen,
                 "%s.operator: expected In, NotIn, Exists or DoesNotExist, "
                 "got '%s'",
                 path, optext ? optext : "");
        return -1;
    }
    values = h->value_get(e, "values");
    if (values && h->value_type(values) != TRELLIS_VALUE_NULL) {
        if (h->value_type(values) != TRELLIS_VALUE_LIST) {
            snprintf(ctx->err, ctx->errlen, "%s.values: expected a list, got %s", path,
                     values_type_name(h->value_type(values)));
            return -1;
        }
        nvalues = h->value_len(values);
    }
    /* The API server's validation: a set operator needs values, an
     * existence operator must have none. */
    if ((op == SELECTOR_IN || op == SELECTOR_NOT_IN) && nvalues == 0) {
        snprintf(ctx->err, ctx->errlen, "%s.values: expected a non-empty list for operator %s",
                 path, optext);
        return -1;
    }
    if ((op == SELECTOR_EXISTS || op == SELECTOR_DOES_NOT_EXIST) && nvalues > 0) {
        snprintf(ctx->err, ctx->errlen, "%s.values: expected no values for operator %s", path,
                 optext);
        return -1;
    }
    if (add_req(ctx, keytext, op) < 0)
        return -1;
    for (size_t i = 0; i < nvalues; i++) {
        const char *text = values_scalar_text(h, h->value_at(values, i));

        if (!text) {
            snprintf(ctx->err, ctx->errlen, "%s.values[%zu]: expected a string, got %s", path, i,
                     values_type_name(h->value_type(h->value_at(values, i))));
            return -1;
        }
        if (add_value(ctx, text) < 0)
            return -1;
    }
    return 0;
}

static int parse_expressions(parse_ctx *ctx, const trellis_value *list, const char *path)
{
    const trellis_host *h = ctx->h;
    int rc = values_expect(h, list, TRELLIS_VALUE_LIST, "a list", path, ctx->err, ctx->errlen);
    char item[300];

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < h->value_len(list); i++) {
        snprintf(item, sizeof(item), "%s[%zu]", path, i);
        if (parse_expression(ctx, h->value_at(list, i), item) < 0)
            return -1;
    }
    return 0;
}

/* Members of a LabelSelector. matchLabels are collected first whatever the
 * member order, so a mismatch message always points at the simplest
 * requirement that failed. */
static int selector_member(const char *key, const trellis_value *v, void *ud)
{
    parse_ctx *ctx = ud;

    if (strcmp(key, "matchLabels") == 0 || strcmp(key, "matchExpressions") == 0)
        return 0;
    for (const char *const *e = ctx->extra; e && *e; e++) {
        if (strcmp(key, *e) == 0)
            return 0;
    }
    snprintf(ctx->err, ctx->errlen, "%s: expected matchLabels or matchExpressions, got '%s'",
             ctx->field, key);
    return -1;
}

static int parse_label_selector(parse_ctx *ctx, const trellis_value *v)
{
    const trellis_host *h = ctx->h;
    const trellis_value *labels, *exprs;
    const char *field = ctx->field;
    char path[256];
    int rc;

    if (h->value_type(v) != TRELLIS_VALUE_MAP) {
        snprintf(ctx->err, ctx->errlen, "%s: expected a map, got %s", field,
                 values_type_name(h->value_type(v)));
        return -1;
    }
    if (h->value_foreach(v, selector_member, ctx))
        return -1;
    labels = h->value_get(v, "matchLabels");
    if (labels) {
        snprintf(path, sizeof(path), "%s.matchLabels", field);
        ctx->field = path;
        rc = parse_equals_map(ctx, labels);
        ctx->field = field;
        if (rc < 0)
            return -1;
    }
    exprs = h->value_get(v, "matchExpressions");
    if (exprs) {
        snprintf(path, sizeof(path), "%s.matchExpressions", field);
        if (parse_expressions(ctx, exprs, path) < 0)
            return -1;
    }
    return 0;
}

int selector_parse(const trellis_host *h, const trellis_value *v, selector_format format,
                   const char *field, selector **out, char *err, size_t errlen)
{
    return selector_parse_with(h, v, format, NULL, field, out, err, errlen);
}

int selector_parse_with(const trellis_host *h, const trellis_value *v, selector_format format,
                        const char *const *extra, const char *field, selector **out, char *err,
                        size_t errlen)
{
    parse_ctx ctx;
    selector *s;
    int rc;

    *out = NULL;
    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    ctx.h = h;
    ctx.sel = s;
    ctx.field = field;
    ctx.extra = extra;
    ctx.err = err;
    ctx.errlen = errlen;
    if (format == SELECTOR_FORMAT_MAP)
        rc = parse_equals_map(&ctx, v);
    else
        rc = parse_label_selector(&ctx, v);
    if (rc < 0 || s->n == 0) {
        selector_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int has_value(const selector_req *r, const char *value)
{
    for (size_t i = 0; i < r->nvalues; i++) {
        if (strcmp(r->values[i], value) == 0)
            return 1;
    }
    return 0;
}

/* NotIn and DoesNotExist are satisfied by a target without the label, as in
 * Kubernetes. */
static int req_matches(const selector_req *r, const char *value)
{
    switch (r->op) {
    case SELECTOR_EQUALS:
        return value && strcmp(value, r->values[0]) == 0;
    case SELECTOR_IN:
        return value && has_value(r, value);
    case SELECTOR_NOT_IN:
        return !value || !has_value(r, value);
    case SELECTOR_EXISTS:
        return value != NULL;
    case SELECTOR_DOES_NOT_EXIST:
        return value == NULL;
    }
    return 0;
}

long selector_first_mismatch(const selector *s, selector_lookup_fn lookup, const void *ud)
{
    if (!s)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        if (!req_matches(&s->reqs[i], lookup(ud, s->reqs[i].key)))
            return (long)i;
    }
    return -1;
}

/* Appends with snprintf semantics: `used` may run past len, the text is
 * cut but always terminated. */
static size_t append(char *buf, size_t len, size_t used, const char *s)
{
    if (used < len)
        snprintf(buf + used, len - used, "%s", s);
    return used + strlen(s);
}

void selector_describe(const selector_req *r, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    switch (r->op) {
    case SELECTOR_EQUALS:
        used = append(buf, len, used, r->key);
        used = append(buf, len, used, "=");
        append(buf, len, used, r->values[0]);
        return;
    case SELECTOR_EXISTS:
        append(buf, len, used, r->key);
        return;
    case SELECTOR_DOES_NOT_EXIST:
        used = append(buf, len, used, "!");
        append(buf, len, used, r->key);
        return;
    case SELECTOR_IN:
    case SELECTOR_NOT_IN:
        used = append(buf, len, used, r->key);
        used = append(buf, len, used, r->op == SELECTOR_IN ? " in (" : " notin (");
        for (size_t i = 0; i < r->nvalues; i++) {
            if (i > 0)
                used = append(buf, len, used, ",");
            used = append(buf, len, used, r->values[i]);
        }
        append(buf, len, used, ")");
        return;
    }
}

void selector_free(selector *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        for (size_t j = 0; j < s->reqs[i].nvalues; j++)
            free(s->reqs[i].values[j]);
        free(s->reqs[i].values);
        free(s->reqs[i].key);
    }
    free(s->reqs);
    free(s);
}

/* ---- compiled selectors ------------------------------------------------ */

int selector_compile(const selector *s, intern *t, selector_ids *out)
{
    size_t nvalues = 0, k = 0;

    memset(out, 0, sizeof(*out));
    if (!s || s->n == 0)
        return 0;
    for (size_t i = 0; i < s->n; i++)
        nvalues += s->reqs[i].nvalues;
    out->reqs = calloc(s->n, sizeof(*out->reqs));
    out->values = calloc(nvalues ? nvalues : 1, sizeof(*out->values));
    if (!out->reqs || !out->values)
        goto nomem;
    for (size_t i = 0; i < s->n; i++) {
        const selector_req *r = &s->reqs[i];
        selector_idreq *q = &out->reqs[i];

        q->op = r->op;
        q->key = intern_id(t, r->key);
        q->first = (uint32_t)k;
        q->nvalues = (uint32_t)r->nvalues;
        if (q->key < 0)
            goto nomem;
        for (size_t j = 0; j < r->nvalues; j++) {
            out->values[k] = intern_id(t, r->values[j]);
            if (out->values[k++] < 0)
                goto nomem;
        }
    }
    out->n = s->n;
    return 0;
nomem:
    selector_ids_clear(out);
    return -1;
}

void selector_ids_clear(selector_ids *s)
{
    free(s->reqs);
    free(s->values);
    memset(s, 0, sizeof(*s));
}

/* The number of values of s. */
static size_t ids_values(const selector_ids *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->reqs[i].nvalues;
    return n;
}

int selector_ids_equal(const selector_ids *a, const selector_ids *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const selector_idreq *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->key != y->key || x->op != y->op || x->first != y->first || x->nvalues != y->nvalues)
            return 0;
    }
    size_t nv = ids_values(a);
    return nv == 0 || memcmp(a->values, b->values, nv * sizeof *a->values) == 0;
}

int selector_ids_copy(const selector_ids *s, selector_ids *out)
{
    memset(out, 0, sizeof(*out));
    if (s->n == 0)
        return 0;
    size_t nv = ids_values(s);
    out->reqs = malloc(s->n * sizeof(*out->reqs));
    out->values = malloc((nv ? nv : 1) * sizeof(*out->values));
    if (!out->reqs || !out->values) {
        selector_ids_clear(out);
        return -1;
    }
    memcpy(out->reqs, s->reqs, s->n * sizeof(*out->reqs));
    if (nv)
        memcpy(out->values, s->values, nv * sizeof(*out->values));
    out->n = s->n;
    return 0;
}

typedef struct read_ctx {
    const trellis_host *h;
    intern *t;
    label_set *l;
    size_t cap;
} read_ctx;

static int read_label(const char *key, const trellis_value *v, void *ud)
{
    read_ctx *ctx = ud;
    const char *text = values_scalar_text(ctx->h, v);
    int32_t k, id;

    if (!text)
        return 0;
    if (ctx->l->n == ctx->cap) {
        size_t cap = ctx->cap ? ctx->cap * 2 : 8;
        uint64_t *p = realloc(ctx->l->pairs, cap * sizeof(*p));

        if (!p)
            return -1;
        ctx->l->pairs = p;
        ctx->cap = cap;
    }
    k = intern_id(ctx->t, key);
    id = intern_id(ctx->t, text);
    if (k < 0 || id < 0)
        return -1;
    ctx->l->pairs[ctx->l->n++] = (uint64_t)(uint32_t)k << 32 | (uint32_t)id;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

int label_set_read(const trellis_host *h, const trellis_value *labels, intern *t, label_set *out)
{
    read_ctx ctx = {h, t, out, 0};

    memset(out, 0, sizeof(*out));
    if (!labels || h->value_type(labels) != TRELLIS_VALUE_MAP)
        return 0;
    if (h->value_foreach(labels, read_label, &ctx)) {
        label_set_clear(out);
        return -1;
    }
    /* keys of a map are distinct, so sorting the pairs sorts the keys */
    if (out->n > 1)
        qsort(out->pairs, out->n, sizeof(*out->pairs), cmp_pair);
    return 0;
}

int32_t label_set_get(const label_set *l, int32_t key)
{
    size_t lo = 0, hi = l->n;

    /* binary search on the key half of the sorted pairs */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t k = (int32_t)(l->pairs[mid] >> 32);

        if (k == key)
            return (int32_t)(uint32_t)l->pairs[mid];
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void label_set_clear(label_set *l)
{
    free(l->pairs);
    memset(l, 0, sizeof(*l));
}

static int has_value_id(const selector_ids *s, const selector_idreq *r, int32_t value)
{
    for (uint32_t i = 0; i < r->nvalues; i++) {
        if (s->values[r->first + i] == value)
            return 1;
    }
    return 0;
}

/* req_matches over ids; value is -1 when the label is absent. */
static int idreq_matches(const selector_ids *s, const selector_idreq *r, int32_t value)
{
    switch (r->op) {
    case SELECTOR_EQUALS:
        return value >= 0 && value == s->values[r->first];
    case SELECTOR_IN:
        return value >= 0 && has_value_id(s, r, value);
    case SELECTOR_NOT_IN:
        return value < 0 || !has_value_id(s, r, value);
    case SELECTOR_EXISTS:
        return value >= 0;
    case SELECTOR_DOES_NOT_EXIST:
        return value < 0;
    }
    return 0;
}

long selector_ids_first_mismatch(const selector_ids *s, const label_set *l)
{
    for (size_t i = 0; i < s->n; i++) {
        if (!idreq_matches(s, &s->reqs[i], label_set_get(l, s->reqs[i].key)))
            return (long)i;
    }
    return -1;
}

int selector_add(selector **s, const char *key, selector_op op, const char *value)
{
    char err[64];
    parse_ctx ctx;
    int fresh = !*s;

    if (fresh && !(*s = calloc(1, sizeof(**s))))
        return -1;
    memset(&ctx, 0, sizeof(ctx));
    ctx.sel = *s;
    ctx.field = "selector";
    ctx.err = err;
    ctx.errlen = sizeof(err);
    if (add_req(&ctx, key, op) < 0 || (value && add_value(&ctx, value) < 0)) {
        if (fresh) {
            selector_free(*s);
            *s = NULL;
        }
        return -1;
    }
    return 0;
}
