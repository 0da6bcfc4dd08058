/*
 * spread.c - Pod topology spread constraints, parsed once per object (see
 * spread.h).
 */
#include "spread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define LABEL_ZONE "topology.kubernetes.io/zone"

static int push(spread_list *l, const spread_constraint *c)
{
    spread_constraint *p = realloc(l->v, (l->n + 1) * sizeof(*p));

    if (!p)
        return -1;
    l->v = p;
    l->v[l->n++] = *c;
    return 0;
}

void spread_clear(spread_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        selector_ids_clear(&l->v[i].sel);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int spread_selector_add(selector **s, const selector_req *req)
{
    selector_req *r;

    if (!*s && !(*s = calloc(1, sizeof(**s))))
        return -1;
    if ((*s)->n == (*s)->cap) {
        size_t cap = (*s)->cap ? (*s)->cap * 2 : 4;
        selector_req *p = realloc((*s)->reqs, cap * sizeof(*p));

        if (!p)
            return -1;
        (*s)->reqs = p;
        (*s)->cap = cap;
    }
    r = &(*s)->reqs[(*s)->n];
    memset(r, 0, sizeof(*r));
    r->op = req->op;
    if (!(r->key = values_strdup(req->key)))
        return -1;
    (*s)->n++; /* from here selector_free frees what is there */
    if (req->nvalues && !(r->values = calloc(req->nvalues, sizeof(*r->values))))
        return -1;
    for (size_t i = 0; i < req->nvalues; i++) {
        if (!(r->values[i] = values_strdup(req->values[i])))
            return -1;
        r->nvalues++;
    }
    return 0;
}

/* Append key=value to *s (created when NULL). */
static int add_equals(selector **s, const char *key, const char *value)
{
    char *v = (char *)value;
    selector_req r = {(char *)key, SELECTOR_EQUALS, &v, 1};

    return spread_selector_add(s, &r);
}

/* Set c's selector from s (NULL: nothing to match unless `empty`), and
 * self_match from the Pod's labels. */
static int set_selector(spread_constraint *c, const selector *s, int empty, intern *t,
                        const label_set *pod_labels)
{
    memset(&c->sel, 0, sizeof(c->sel));
    if (s && s->n) {
        if (selector_compile(s, t, &c->sel) < 0)
            return -1;
        c->match = SPREAD_MATCH_SELECTOR;
    } else {
        c->match = empty ? SPREAD_MATCH_EMPTY : SPREAD_MATCH_NOTHING;
    }
    c->self_match =
        c->match == SPREAD_MATCH_EMPTY || (c->match == SPREAD_MATCH_SELECTOR && pod_labels &&
                                           selector_ids_first_mismatch(&c->sel, pod_labels) < 0);
    return 0;
}

static int policy(const trellis_host *h, const trellis_value *v, const char *path, int dflt,
                  int *honor, char *err, size_t errlen)
{
    const char *s;
    int rc = values_expect(h, v, TRELLIS_VALUE_STRING, "Honor or Ignore", path, err, errlen);

    if (rc < 0)
        return -1;
    *honor = dflt;
    if (rc == 0)
        return 0;
    s = h->value_string(v);
    if (strcmp(s, "Honor") == 0 || strcmp(s, "Ignore") == 0) {
        *honor = s[0] == 'H';
        return 0;
    }
    snprintf(err, errlen, "%s: expected Honor or Ignore, got '%s'", path, s);
    return -1;
}

/* A positive int32 at path (required when `required`, else *out keeps
 * its default). */
static int positive(const trellis_host *h, const trellis_value *v, const char *path, int required,
                    int32_t *out, char *err, size_t errlen)
{
    int64_t n;

    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL) {
        if (!required)
            return 0;
        snprintf(err, errlen, "%s: required, a positive integer", path);
        return -1;
    }
    if (h->value_type(v) != TRELLIS_VALUE_INT || h->value_int(v, &n) < 0 || n < 1 ||
        n > INT32_MAX) {
        const char *s = values_scalar_text(h, v);

        snprintf(err, errlen, "%s: expected a positive integer, got %s%s%s", path,
                 s ? "'" : values_type_name(h->value_type(v)), s ? s : "", s ? "'" : "");
        return -1;
    }
    *out = (int32_t)n;
    return 0;
}

typedef struct member {
    char path[320]; /* a constraint's path (at most 255) and a member name */
} member;

static const char *at(member *m, const char *base, const char *key)
{
    snprintf(m->path, sizeof(m->path), "%s.%s", base, key);
    return m->path;
}

/* One constraint c at path. defaults: PodTopologySpreadArgs, no selector. */
static int parse_one(const trellis_host *h, const trellis_value *c, const char *path, int defaults,
                     const label_set *pod_labels, intern *t, spread_constraint *out, char *err,
                     size_t errlen)
{
    const trellis_value *v;
    const char *s;
    selector *sel = NULL;
    member m;
    int empty = 0, rc;

    memset(out, 0, sizeof(*out));
    out->min_domains = 1;
    if (!c || h->value_type(c) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map {maxSkew, topologyKey, whenUnsatisfiable, ...}",
                 path);
        return -1;
    }
    if (positive(h, h->value_get(c, "maxSkew"), at(&m, path, "maxSkew"), 1, &out->max_skew, err,
                 errlen) < 0)
        return -1;
    v = h->value_get(c, "topologyKey");
    rc = values_expect(h, v, TRELLIS_VALUE_STRING, "a label key", at(&m, path, "topologyKey"), err,
                       errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 || !*(s = h->value_string(v))) {
        snprintf(err, errlen, "%s: required, a label key", at(&m, path, "topologyKey"));
        return -1;
    }
    if ((out->key = intern_id(t, s)) < 0)
        goto nomem;
    v = h->value_get(c, "whenUnsatisfiable");
    s = values_scalar_text(h, v);
    if (!s || (strcmp(s, "DoNotSchedule") && strcmp(s, "ScheduleAnyway"))) {
        snprintf(err, errlen, "%s: expected DoNotSchedule or ScheduleAnyway, got %s%s%s",
                 at(&m, path, "whenUnsatisfiable"), s ? "'" : "",
                 s ? s : (v ? values_type_name(h->value_type(v)) : "nothing"), s ? "'" : "");
        return -1;
    }
    out->schedule_anyway = s[0] == 'S';
    v = h->value_get(c, "minDomains");
    if (positive(h, v, at(&m, path, "minDomains"), 0, &out->min_domains, err, errlen) < 0)
        return -1;
    if (v && h->value_type(v) != TRELLIS_VALUE_NULL && out->schedule_anyway) {
        snprintf(err, errlen, "%s: only with whenUnsatisfiable DoNotSchedule",
                 at(&m, path, "minDomains"));
        return -1;
    }
    if (policy(h, h->value_get(c, "nodeAffinityPolicy"), at(&m, path, "nodeAffinityPolicy"), 1,
               &out->honor_affinity, err, errlen) < 0 ||
        policy(h, h->value_get(c, "nodeTaintsPolicy"), at(&m, path, "nodeTaintsPolicy"), 0,
               &out->honor_taints, err, errlen) < 0)
        return -1;
    v = h->value_get(c, "matchLabelKeys");
    rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list of label keys",
                       at(&m, path, "matchLabelKeys"), err, errlen);
    if (rc < 0)
        return -1;
    for (size_t i = 0; rc > 0 && i < h->value_len(v); i++) {
        if (h->value_type(h->value_at(v, i)) != TRELLIS_VALUE_STRING) {
            snprintf(err, errlen, "%s[%zu]: expected a label key", at(&m, path, "matchLabelKeys"),
                     i);
            return -1;
        }
    }
    v = h->value_get(c, "labelSelector");
    if (defaults) {
        if (v && h->value_type(v) != TRELLIS_VALUE_NULL) {
            snprintf(err, errlen,
                     "%s: a default constraint must not define a selector, it is deduced for "
                     "each Pod",
                     at(&m, path, "labelSelector"));
            return -1;
        }
        return 0;
    }
    if (v && h->value_type(v) != TRELLIS_VALUE_NULL) {
        if (values_expect(h, v, TRELLIS_VALUE_MAP, "a LabelSelector map",
                          at(&m, path, "labelSelector"), err, errlen) < 0 ||
            selector_parse(h, v, SELECTOR_FORMAT_SELECTOR, at(&m, path, "labelSelector"), &sel, err,
                           errlen) < 0)
            return -1;
        empty = 1;
        /* kube merges the Pod's values of matchLabelKeys into a selector,
         * never into an absent one (labels.Nothing stays Nothing) */
        v = h->value_get(c, "matchLabelKeys");
        for (size_t i = 0; rc > 0 && i < h->value_len(v); i++) {
            const char *key = h->value_string(h->value_at(v, i));
            int32_t id = intern_find(t, key);
            int32_t val = id >= 0 && pod_labels ? label_set_get(pod_labels, id) : -1;

            if (val >= 0 && add_equals(&sel, key, intern_str(t, val)) < 0) {
                selector_free(sel);
                goto nomem;
            }
        }
    }
    rc = set_selector(out, sel, empty, t, pod_labels);
    selector_free(sel);
    if (rc < 0)
        goto nomem;
    return 0;
nomem:
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
}

static int parse_list(const trellis_host *h, const trellis_value *v, const char *path, int defaults,
                      const label_set *pod_labels, intern *t, spread_list *hard, spread_list *soft,
                      char *err, size_t errlen)
{
    int rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list of topology spread constraints", path,
                           err, errlen);

    memset(hard, 0, sizeof(*hard));
    memset(soft, 0, sizeof(*soft));
    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < h->value_len(v); i++) {
        char p[256];
        spread_constraint c;
        spread_list *to;

        snprintf(p, sizeof(p), "%s[%zu]", path, i);
        if (parse_one(h, h->value_at(v, i), p, defaults, pod_labels, t, &c, err, errlen) < 0)
            return -1;
        to = c.schedule_anyway ? soft : hard;
        for (size_t j = 0; j < to->n; j++) {
            if (to->v[j].key == c.key) {
                snprintf(err, errlen,
                         "%s: a second constraint with topologyKey '%s' and whenUnsatisfiable %s",
                         p, intern_str(t, c.key),
                         c.schedule_anyway ? "ScheduleAnyway" : "DoNotSchedule");
                selector_ids_clear(&c.sel);
                return -1;
            }
        }
        if (push(to, &c) < 0) {
            selector_ids_clear(&c.sel);
            snprintf(err, errlen, "%s: out of memory", p);
            return -1;
        }
    }
    return 0;
}

int spread_parse(const trellis_host *h, const trellis_value *v, const char *path,
                 const label_set *pod_labels, intern *t, spread_list *hard, spread_list *soft,
                 char *err, size_t errlen)
{
    return parse_list(h, v, path, 0, pod_labels, t, hard, soft, err, errlen);
}

int spread_parse_defaults(const trellis_host *h, const trellis_value *v, const char *path,
                          intern *t, spread_list *hard, spread_list *soft, char *err, size_t errlen)
{
    return parse_list(h, v, path, 1, NULL, t, hard, soft, err, errlen);
}

int spread_system_defaults(intern *t, spread_list *hard, spread_list *soft)
{
    spread_constraint c;

    memset(hard, 0, sizeof(*hard));
    memset(soft, 0, sizeof(*soft));
    memset(&c, 0, sizeof(c));
    c.min_domains = 1;
    c.schedule_anyway = 1;
    c.honor_affinity = 1;
    c.max_skew = 3;
    if ((c.key = intern_id(t, LABEL_HOSTNAME)) < 0 || push(soft, &c) < 0)
        return -1;
    c.max_skew = 5;
    if ((c.key = intern_id(t, LABEL_ZONE)) < 0 || push(soft, &c) < 0)
        return -1;
    return 0;
}

int spread_with_selector(const spread_list *from, const selector *s, intern *t,
                         const label_set *pod_labels, spread_list *to)
{
    spread_clear(to);
    for (size_t i = 0; i < from->n; i++) {
        spread_constraint c = from->v[i];

        if (set_selector(&c, s, 0, t, pod_labels) < 0)
            return -1;
        if (push(to, &c) < 0) {
            selector_ids_clear(&c.sel);
            return -1;
        }
    }
    return 0;
}
