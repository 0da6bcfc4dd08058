/*
 * nodeselector.c - parsing and matching of node selector terms.
 *
 * Parsing checks the shape (maps, lists, strings) strictly and the meaning
 * (operators, value counts, integers) as kube-scheduler does, lazily for
 * required terms: an invalid term is kept, marked, and matches nothing.
 * Messages name the element by its path under the field it came from.
 */
#include "nodeselector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

/* An element's path for messages (truncated: paths only name things). */
static void nsp_pathf(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void nsp_pathf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Growing arrays of the parse. */
typedef struct builder {
    const trellis_host *h;
    intern *t;
    node_selector *s;
    size_t cap_terms, cap_values;
    char *err;
    size_t errlen;
} builder;

static int nsp_nomem(builder *b, const char *path)
{
    snprintf(b->err, b->errlen, "%s: out of memory", path);
    return -1;
}

static int nsp_add_value(builder *b, const char *text, const char *path)
{
    int32_t id;

    if (b->s->nvalues == b->cap_values) {
        size_t cap = b->cap_values ? b->cap_values * 2 : 8;
        int32_t *p = realloc(b->s->values, cap * sizeof(*p));

        if (!p)
            return nsp_nomem(b, path);
        b->s->values = p;
        b->cap_values = cap;
    }
    id = intern_id(b->t, text);
    if (id < 0)
        return nsp_nomem(b, path);
    b->s->values[b->s->nvalues++] = id;
    return 0;
}

/* Kubernetes' strconv.ParseInt(s, 10, 64). */
static int nsp_parse_int64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (!s || !*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int nsp_op_parse(const char *s, ns_op *op)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

    for (int i = 0; i < 6; i++) {
        if (strcmp(s, names[i]) == 0) {
            *op = (ns_op)i;
            return 0;
        }
    }
    return -1;
}

static const char *nsp_op_name(ns_op op)
{
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

    return names[op];
}

/* One requirement {key, operator, values} at path into r. 0 when valid, 1
 * when of the right shape but invalid (*why says how), -1 on a shape error
 * (err filled). */
static int nsp_parse_req(builder *b, const trellis_value *v, const char *path, int field, ns_req *r,
                         char *why, size_t whylen)
{
    const trellis_host *h = b->h;
    const trellis_value *key, *op, *vals;
    const char *ktext, *otext;
    char sub[300];
    size_t nv;
    int rc;

    memset(r, 0, sizeof(*r));
    r->key = -1;
    if (h->value_type(v) != TRELLIS_VALUE_MAP) {
        snprintf(b->err, b->errlen, "%s: expected a map {key, operator, values}, got %s", path,
                 values_type_name(h->value_type(v)));
        return -1;
    }
    key = h->value_get(v, "key");
    op = h->value_get(v, "operator");
    vals = h->value_get(v, "values");
    ktext = key && h->value_type(key) == TRELLIS_VALUE_STRING ? h->value_string(key) : NULL;
    otext = op && h->value_type(op) == TRELLIS_VALUE_STRING ? h->value_string(op) : NULL;
    if (!ktext) {
        snprintf(b->err, b->errlen, "%s.key: expected a string, got %s", path,
                 values_type_name(key ? h->value_type(key) : TRELLIS_VALUE_NULL));
        return -1;
    }
    if (!otext) {
        snprintf(b->err, b->errlen, "%s.operator: expected a string, got %s", path,
                 values_type_name(op ? h->value_type(op) : TRELLIS_VALUE_NULL));
        return -1;
    }
    nsp_pathf(sub, sizeof(sub), "%s.values", path);
    rc = values_expect(h, vals, TRELLIS_VALUE_LIST, "a list of strings", sub, b->err, b->errlen);
    if (rc < 0)
        return -1;
    nv = rc > 0 ? h->value_len(vals) : 0;
    r->key_text = values_strdup(ktext);
    if (!r->key_text)
        return nsp_nomem(b, path);
    r->field = field;
    r->first = (uint32_t)b->s->nvalues;
    for (size_t i = 0; i < nv; i++) {
        const char *text = values_scalar_text(h, h->value_at(vals, i));

        if (!text) {
            snprintf(b->err, b->errlen, "%s[%zu]: expected a string, got %s", sub, i,
                     values_type_name(h->value_type(h->value_at(vals, i))));
            return -1;
        }
        if (nsp_add_value(b, text, sub) < 0)
            return -1;
    }
    r->nvalues = (uint32_t)nv;
    if (nsp_op_parse(otext, &r->op) < 0) {
        nsp_pathf(why, whylen,
                  "%s.operator: '%s' is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt", path,
                  otext);
        return 1;
    }
    if (field) {
        /* the only node field is metadata.name; any other reads as "" */
        if ((r->op != NS_IN && r->op != NS_NOT_IN) || nv != 1) {
            nsp_pathf(why, whylen, "%s: a field requirement takes In or NotIn and one value", path);
            return 1;
        }
        r->key = strcmp(ktext, "metadata.name") == 0 ? 0 : -1;
        return 0;
    }
    r->key = intern_id(b->t, ktext);
    if (r->key < 0)
        return nsp_nomem(b, path);
    switch (r->op) {
    case NS_IN:
    case NS_NOT_IN:
        if (nv == 0) {
            nsp_pathf(why, whylen, "%s.values: %s needs at least one value", path, otext);
            return 1;
        }
        break;
    case NS_EXISTS:
    case NS_DOES_NOT_EXIST:
        if (nv != 0) {
            nsp_pathf(why, whylen, "%s.values: %s takes no values", path, otext);
            return 1;
        }
        break;
    case NS_GT:
    case NS_LT:
        if (nv != 1 ||
            nsp_parse_int64(values_scalar_text(h, h->value_at(vals, 0)), &r->bound) < 0) {
            nsp_pathf(why, whylen, "%s.values: %s takes exactly one integer", path, otext);
            return 1;
        }
        break;
    }
    return 0;
}

static void nsp_term_clear(ns_term *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->reqs[i].key_text);
    free(t->reqs);
    memset(t, 0, sizeof(*t));
}

/* A requirement list (matchExpressions or matchFields) of term tm. */
static int nsp_parse_reqs(builder *b, const trellis_value *list, const char *path, int field,
                          ns_term *tm, char *why, size_t whylen)
{
    const trellis_host *h = b->h;
    size_t n = h->value_len(list);
    ns_req *p;

    if (n == 0)
        return 0;
    p = realloc(tm->reqs, (tm->n + n) * sizeof(*p));
    if (!p)
        return nsp_nomem(b, path);
    tm->reqs = p;
    for (size_t i = 0; i < n; i++) {
        char sub[300];
        int rc;

        nsp_pathf(sub, sizeof(sub), "%s[%zu]", path, i);
        rc = nsp_parse_req(b, h->value_at(list, i), sub, field, &tm->reqs[tm->n], why, whylen);
        if (rc < 0) {
            free(tm->reqs[tm->n].key_text);
            return -1;
        }
        tm->n++;
        if (rc > 0)
            tm->invalid = 1;
    }
    return 0;
}

/* A NodeSelectorTerm at path. 1 when it is empty (dropped), 0 when parsed
 * into tm (tm->invalid and why set when a requirement is invalid), -1 on a
 * shape error. */
static int nsp_parse_term(builder *b, const trellis_value *v, const char *path, ns_term *tm,
                          char *why, size_t whylen)
{
    const trellis_host *h = b->h;
    const trellis_value *ex, *fi;
    char sub[300];
    int rx, rf;

    memset(tm, 0, sizeof(*tm));
    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 1;
    if (h->value_type(v) != TRELLIS_VALUE_MAP) {
        snprintf(b->err, b->errlen, "%s: expected a map {matchExpressions, matchFields}, got %s",
                 path, values_type_name(h->value_type(v)));
        return -1;
    }
    ex = h->value_get(v, "matchExpressions");
    fi = h->value_get(v, "matchFields");
    nsp_pathf(sub, sizeof(sub), "%s.matchExpressions", path);
    rx = values_expect(h, ex, TRELLIS_VALUE_LIST, "a list", sub, b->err, b->errlen);
    if (rx < 0)
        return -1;
    nsp_pathf(sub, sizeof(sub), "%s.matchFields", path);
    rf = values_expect(h, fi, TRELLIS_VALUE_LIST, "a list", sub, b->err, b->errlen);
    if (rf < 0)
        return -1;
    if ((rx == 0 || h->value_len(ex) == 0) && (rf == 0 || h->value_len(fi) == 0))
        return 1;
    nsp_pathf(sub, sizeof(sub), "%s.matchExpressions", path);
    if (rx > 0 && nsp_parse_reqs(b, ex, sub, 0, tm, why, whylen) < 0)
        goto fail;
    nsp_pathf(sub, sizeof(sub), "%s.matchFields", path);
    if (rf > 0 && nsp_parse_reqs(b, fi, sub, 1, tm, why, whylen) < 0)
        goto fail;
    return 0;
fail:
    nsp_term_clear(tm);
    return -1;
}

static int nsp_add_term(builder *b, ns_term *tm, const char *path)
{
    if (b->s->n == b->cap_terms) {
        size_t cap = b->cap_terms ? b->cap_terms * 2 : 4;
        ns_term *p = realloc(b->s->terms, cap * sizeof(*p));

        if (!p) {
            nsp_term_clear(tm);
            return nsp_nomem(b, path);
        }
        b->s->terms = p;
        b->cap_terms = cap;
    }
    b->s->terms[b->s->n++] = *tm;
    return 0;
}

static int nsp_begin(builder *b, const trellis_host *h, intern *t, const char *path, char *err,
                     size_t errlen)
{
    memset(b, 0, sizeof(*b));
    b->h = h;
    b->t = t;
    b->err = err;
    b->errlen = errlen;
    b->s = calloc(1, sizeof(*b->s));
    return b->s ? 0 : nsp_nomem(b, path);
}

int ns_parse_required(const trellis_host *h, const trellis_value *v, const char *path, intern *t,
                      node_selector **out, char *err, size_t errlen)
{
    const trellis_value *terms;
    char sub[300];
    builder b;
    int rc;

    *out = NULL;
    if (nsp_begin(&b, h, t, path, err, errlen) < 0)
        return -1;
    if (v && h->value_type(v) != TRELLIS_VALUE_NULL && h->value_type(v) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map {nodeSelectorTerms}, got %s", path,
                 values_type_name(h->value_type(v)));
        goto fail;
    }
    terms = v ? h->value_get(v, "nodeSelectorTerms") : NULL;
    nsp_pathf(sub, sizeof(sub), "%s.nodeSelectorTerms", path);
    rc = values_expect(h, terms, TRELLIS_VALUE_LIST, "a list", sub, err, errlen);
    if (rc < 0)
        goto fail;
    for (size_t i = 0; rc > 0 && i < h->value_len(terms); i++) {
        char tp[300], why[TRELLIS_MESSAGE_MAX];
        ns_term tm;
        int r;

        nsp_pathf(tp, sizeof(tp), "%s[%zu]", sub, i);
        r = nsp_parse_term(&b, h->value_at(terms, i), tp, &tm, why, sizeof(why));
        if (r < 0)
            goto fail;
        if (r == 0 && nsp_add_term(&b, &tm, tp) < 0)
            goto fail;
    }
    *out = b.s;
    return 0;
fail:
    ns_free(b.s);
    return -1;
}

int ns_parse_preferred(const trellis_host *h, const trellis_value *v, const char *path, intern *t,
                       node_selector **out, char *err, size_t errlen)
{
    builder b;
    int rc;

    *out = NULL;
    rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list of {weight, preference}", path, err,
                       errlen);
    if (rc <= 0)
        return rc;
    if (nsp_begin(&b, h, t, path, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < h->value_len(v); i++) {
        const trellis_value *e = h->value_at(v, i), *w;
        char tp[300], why[TRELLIS_MESSAGE_MAX];
        int64_t weight = 0;
        ns_term tm;
        int r;

        nsp_pathf(tp, sizeof(tp), "%s[%zu]", path, i);
        if (h->value_type(e) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s: expected a map {weight, preference}, got %s", tp,
                     values_type_name(h->value_type(e)));
            goto fail;
        }
        w = h->value_get(e, "weight");
        if (w && h->value_type(w) != TRELLIS_VALUE_NULL &&
            (h->value_int(w, &weight) < 0 || weight < 0 || weight > 100)) {
            snprintf(err, errlen, "%s.weight: expected an integer from 1 to 100, got '%s'", tp,
                     values_scalar_text(h, w) ? values_scalar_text(h, w) : "?");
            goto fail;
        }
        if (weight == 0)
            continue; /* kube-scheduler skips it unparsed */
        nsp_pathf(tp, sizeof(tp), "%s[%zu].preference", path, i);
        why[0] = '\0';
        r = nsp_parse_term(&b, h->value_get(e, "preference"), tp, &tm, why, sizeof(why));
        if (r < 0)
            goto fail;
        if (r > 0)
            continue;
        if (tm.invalid) {
            snprintf(err, errlen, "%s", why);
            nsp_term_clear(&tm);
            goto fail;
        }
        tm.weight = weight;
        if (nsp_add_term(&b, &tm, tp) < 0)
            goto fail;
    }
    if (b.s->n == 0) {
        ns_free(b.s);
        return 0;
    }
    *out = b.s;
    return 0;
fail:
    ns_free(b.s);
    return -1;
}

static int nsp_has_value(const node_selector *s, const ns_req *r, int32_t id)
{
    for (uint32_t i = 0; i < r->nvalues; i++) {
        if (s->values[r->first + i] == id)
            return 1;
    }
    return 0;
}

static int nsp_req_matches(const node_selector *s, const ns_req *r, const ns_node *node)
{
    int32_t v;
    int64_t n;

    if (r->field) {
        /* metadata.name, or a field the node does not have (reads "") */
        int eq = r->key == 0 ? s->values[r->first] == node->name && node->name >= 0 : 0;

        return r->op == NS_IN ? eq : !eq;
    }
    v = label_set_get(node->labels, r->key);
    switch (r->op) {
    case NS_IN:
        return v >= 0 && nsp_has_value(s, r, v);
    case NS_NOT_IN:
        return v < 0 || !nsp_has_value(s, r, v);
    case NS_EXISTS:
        return v >= 0;
    case NS_DOES_NOT_EXIST:
        return v < 0;
    case NS_GT:
    case NS_LT:
        if (v < 0 || !node->label || nsp_parse_int64(node->label(node->ud, r->key_text), &n) < 0)
            return 0;
        return r->op == NS_GT ? n > r->bound : n < r->bound;
    }
    return 0;
}

int ns_term_matches(const node_selector *s, size_t i, const ns_node *node)
{
    const ns_term *t = &s->terms[i];

    if (t->invalid)
        return 0;
    for (size_t k = 0; k < t->n; k++) {
        if (!nsp_req_matches(s, &t->reqs[k], node))
            return 0;
    }
    return 1;
}

int ns_matches(const node_selector *s, const ns_node *node)
{
    for (size_t i = 0; i < s->n; i++) {
        if (ns_term_matches(s, i, node))
            return 1;
    }
    return 0;
}

int64_t ns_score(const node_selector *s, const ns_node *node)
{
    int64_t total = 0;

    for (size_t i = 0; s && i < s->n; i++) {
        if (ns_term_matches(s, i, node))
            total += s->terms[i].weight;
    }
    return total;
}

static size_t nsp_append(char *buf, size_t len, size_t used, const char *s)
{
    int n;

    if (used >= len)
        return used;
    n = snprintf(buf + used, len - used, "%s", s);
    return n < 0 ? used : used + (size_t)n;
}

void ns_describe_mismatch(const node_selector *s, const intern *t, const ns_node *node, char *buf,
                          size_t len)
{
    const ns_term *tm;
    size_t used = 0;

    if (len)
        buf[0] = '\0';
    if (s->n == 0) {
        snprintf(buf, len, "no nodeSelectorTerm can match (none has a requirement)");
        return;
    }
    if (s->n > 1) {
        snprintf(buf, len, "none of %zu nodeSelectorTerms matched", s->n);
        return;
    }
    tm = &s->terms[0];
    if (tm->invalid) {
        snprintf(buf, len, "the nodeSelectorTerm is invalid and matches nothing");
        return;
    }
    for (size_t k = 0; k < tm->n; k++) {
        const ns_req *r = &tm->reqs[k];

        if (nsp_req_matches(s, r, node))
            continue;
        used = nsp_append(buf, len, used, r->field ? "field " : "label ");
        used = nsp_append(buf, len, used, r->key_text);
        used = nsp_append(buf, len, used, " ");
        used = nsp_append(buf, len, used, nsp_op_name(r->op));
        for (uint32_t i = 0; i < r->nvalues; i++) {
            const char *v = intern_str(t, s->values[r->first + i]);

            used = nsp_append(buf, len, used, i ? "," : " (");
            used = nsp_append(buf, len, used, v ? v : "?");
        }
        if (r->nvalues)
            used = nsp_append(buf, len, used, ")");
        nsp_append(buf, len, used, " not matched");
        return;
    }
}

void ns_free(node_selector *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        nsp_term_clear(&s->terms[i]);
    free(s->terms);
    free(s->values);
    free(s);
}
