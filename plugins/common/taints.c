/*
 * taints.c - parsing and matching of taints and tolerations.
 *
 * Parsing copies every string so that matching runs on plain arrays and
 * needs nothing from the host. The two matching rules differ only in how a
 * toleration's key, operator and value are compared; effects are compared
 * the same way in both (an empty toleration effect matches every effect),
 * because trellis gives Gardener seeds the effects of its scheduling
 * proposal.
 */
#include "taints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

static const struct {
    const char *name;
    taint_effect effect;
} effects[] = {
    {"NoSchedule", TAINT_NO_SCHEDULE},
    {"PreferNoSchedule", TAINT_PREFER_NO_SCHEDULE},
    {"NoExecute", TAINT_NO_EXECUTE},
};

int taints_parse_effect(const char *s, taint_effect *out)
{
    for (size_t i = 0; i < sizeof(effects) / sizeof(effects[0]); i++) {
        if (strcmp(s, effects[i].name) == 0) {
            *out = effects[i].effect;
            return 0;
        }
    }
    return -1;
}

const char *taints_effect_name(taint_effect e)
{
    for (size_t i = 0; i < sizeof(effects) / sizeof(effects[0]); i++) {
        if (effects[i].effect == e)
            return effects[i].name;
    }
    return "";
}

void taints_free(taint_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    free(l);
}

/* Reads an optional scalar member. 1 with *text set when present, 0 when
 * absent or null, -1 (err filled) when it is a list or a map. Values such
 * as `value: true` are taken by their text, as a person wrote them. */
static int member_text(const trellis_host *h, const trellis_value *item, const char *member,
                       const char *path, const char **text, char *err, size_t errlen)
{
    const trellis_value *v = h->value_get(item, member);
    trellis_value_type t = v ? h->value_type(v) : TRELLIS_VALUE_NULL;

    *text = "";
    if (t == TRELLIS_VALUE_NULL)
        return 0;
    if (t == TRELLIS_VALUE_LIST || t == TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s.%s: expected a string, got %s", path, member,
                 values_type_name(t));
        return -1;
    }
    *text = h->value_string(v);
    if (!*text)
        *text = "";
    return 1;
}

/* How the elements of a list are read. */
typedef struct parse_opts {
    taint_effect empty_effect; /* what an element without effect gets */
    taint_semantics sem;       /* tolerations only: whose rules */
} parse_opts;

/* One element as read, its strings still borrowed from the host. */
typedef struct item_text {
    const char *key, *value;
    int has_value;
    taint_effect effect;
    int exists;
} item_text;

/* Reads one element, a map found at `path`, into out. */
typedef int (*read_item_fn)(const trellis_host *h, const trellis_value *item, const char *path,
                            const parse_opts *opts, item_text *out, char *err, size_t errlen);

/* Start of parse_list: check the list, allocate the items. */
static int start_list(const trellis_host *h, const trellis_value *v, const char *field,
                      taint_list **out, char *err, size_t errlen)
{
    trellis_value_type t = v ? h->value_type(v) : TRELLIS_VALUE_NULL;
    taint_list *l;
    size_t n;

    *out = NULL;
    if (t == TRELLIS_VALUE_NULL)
        return 0;
    if (t != TRELLIS_VALUE_LIST) {
        snprintf(err, errlen, "%s: expected a list", field);
        return -1;
    }
    n = h->value_len(v);
    if (n == 0)
        return 0;
    l = calloc(1, sizeof(*l));
    if (l)
        l->items = calloc(n, sizeof(*l->items));
    if (!l || !l->items) {
        free(l);
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    *out = l;
    return 0;
}

/* Copies an element read by a read_item_fn into the next item. */
static int add_item(taint_list *l, const item_text *src, const char *field, char *err,
                    size_t errlen)
{
    taint_item *it = &l->items[l->n];

    it->key = values_strdup(src->key);
    it->value = values_strdup(src->value);
    if (!it->key || !it->value) {
        free(it->key);
        free(it->value);
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    it->has_value = src->has_value;
    it->effect = src->effect;
    it->exists = src->exists;
    l->n++;
    return 0;
}

/* Both parsers: each element of the list v at `field` must be a map with
 * `members` (named when it is not), read by read_item. */
static int parse_list(const trellis_host *h, const trellis_value *v, const char *field,
                      const char *members, read_item_fn read_item, const parse_opts *opts,
                      taint_list **out, char *err, size_t errlen)
{
    taint_list *l;

    *out = NULL;
    if (start_list(h, v, field, &l, err, errlen) < 0)
        return -1;
    if (!l)
        return 0;
    for (size_t i = 0; i < h->value_len(v); i++) {
        const trellis_value *item = h->value_at(v, i);
        item_text text;
        char path[256];

        memset(&text, 0, sizeof(text));
        snprintf(path, sizeof(path), "%s[%zu]", field, i);
        if (h->value_type(item) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s: expected a map with %s", path, members);
            goto fail;
        }
        if (read_item(h, item, path, opts, &text, err, errlen) < 0 ||
            add_item(l, &text, field, err, errlen) < 0)
            goto fail;
    }
    *out = l;
    return 0;
fail:
    taints_free(l);
    return -1;
}

static int check_key(const char *key, const char *path, char *err, size_t errlen)
{
    if (key[0] != '\0')
        return 0;
    snprintf(err, errlen, "%s.key: expected a non-empty string", path);
    return -1;
}

static int parse_effect_member(const trellis_host *h, const trellis_value *item, const char *path,
                               taint_effect empty, taint_effect *effect, char *err, size_t errlen)
{
    const char *text;
    int rc = member_text(h, item, "effect", path, &text, err, errlen);

    if (rc < 0)
        return -1;
    if (text[0] == '\0') {
        *effect = empty;
        return 0;
    }
    if (taints_parse_effect(text, effect) < 0) {
        snprintf(err, errlen,
                 "%s.effect: expected NoSchedule, PreferNoSchedule or "
                 "NoExecute, got '%s'",
                 path, text);
        return -1;
    }
    return 0;
}

static int read_taint(const trellis_host *h, const trellis_value *item, const char *path,
                      const parse_opts *opts, item_text *out, char *err, size_t errlen)
{
    if (member_text(h, item, "key", path, &out->key, err, errlen) < 0 ||
        check_key(out->key, path, err, errlen) < 0)
        return -1;
    out->has_value = member_text(h, item, "value", path, &out->value, err, errlen);
    if (out->has_value < 0)
        return -1;
    return parse_effect_member(h, item, path, opts->empty_effect, &out->effect, err, errlen);
}

static int read_toleration(const trellis_host *h, const trellis_value *item, const char *path,
                           const parse_opts *opts, item_text *out, char *err, size_t errlen)
{
    const char *op;

    if (member_text(h, item, "key", path, &out->key, err, errlen) < 0)
        return -1;
    out->has_value = member_text(h, item, "value", path, &out->value, err, errlen);
    if (out->has_value < 0 ||
        parse_effect_member(h, item, path, opts->empty_effect, &out->effect, err, errlen) < 0)
        return -1;
    /* Gardener tolerations match by key alone; there is no operator to
     * widen a toleration to every key. */
    if (opts->sem == TAINT_SEMANTICS_GARDENER)
        return check_key(out->key, path, err, errlen);
    if (member_text(h, item, "operator", path, &op, err, errlen) < 0)
        return -1;
    if (strcmp(op, "Exists") == 0) {
        out->exists = 1;
    } else if (op[0] != '\0' && strcmp(op, "Equal") != 0) {
        snprintf(err, errlen, "%s.operator: expected Equal or Exists, got '%s'", path, op);
        return -1;
    }
    return 0;
}

int taints_parse_taints(const trellis_host *h, const trellis_value *v, const char *field,
                        taint_effect empty_effect, taint_list **out, char *err, size_t errlen)
{
    parse_opts opts = {empty_effect, TAINT_SEMANTICS_KUBERNETES};

    return parse_list(h, v, field, "key, value, effect", read_taint, &opts, out, err, errlen);
}

int taints_parse_tolerations(const trellis_host *h, const trellis_value *v, const char *field,
                             taint_semantics sem, taint_list **out, char *err, size_t errlen)
{
    parse_opts opts = {TAINT_EFFECT_ANY, sem};

    return parse_list(h, v, field, "key, operator, value, effect", read_toleration, &opts, out, err,
                      errlen);
}

static int tolerates(const taint_item *tol, const taint_item *taint, taint_semantics sem)
{
    if (tol->effect != TAINT_EFFECT_ANY && tol->effect != taint->effect)
        return 0;
    if (sem == TAINT_SEMANTICS_GARDENER) {
        if (strcmp(tol->key, taint->key) != 0)
            return 0;
        if (!taint->has_value)
            return 1;
        return tol->has_value && strcmp(tol->value, taint->value) == 0;
    }
    /* Kubernetes: an empty key matches every key; Exists ignores the value,
     * Equal (the default) compares it, absent being "". */
    if (tol->key[0] != '\0' && strcmp(tol->key, taint->key) != 0)
        return 0;
    return tol->exists || strcmp(tol->value, taint->value) == 0;
}

int taints_tolerated(const taint_item *taint, const taint_list *tols, taint_semantics sem)
{
    if (!tols)
        return 0;
    for (size_t i = 0; i < tols->n; i++) {
        if (tolerates(&tols->items[i], taint, sem))
            return 1;
    }
    return 0;
}

void taints_describe(const taint_item *taint, char *buf, size_t len)
{
    if (taint->value[0] != '\0')
        snprintf(buf, len, "%s=%s:%s", taint->key, taint->value, taints_effect_name(taint->effect));
    else
        snprintf(buf, len, "%s:%s", taint->key, taints_effect_name(taint->effect));
}

int taints_equal(const taint_list *a, const taint_list *b)
{
    size_t na = a ? a->n : 0, nb = b ? b->n : 0;

    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        const taint_item *x = &a->items[i], *y = &b->items[i];

        if (strcmp(x->key, y->key) != 0 || strcmp(x->value, y->value) != 0 ||
            x->has_value != y->has_value || x->effect != y->effect || x->exists != y->exists)
            return 0;
    }
    return 1;
}
