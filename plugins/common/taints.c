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

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
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
        snprintf(err, errlen, "%s.%s: expected a string, got a %s", path, member,
                 t == TRELLIS_VALUE_LIST ? "list" : "map");
        return -1;
    }
    *text = h->value_string(v);
    if (!*text)
        *text = "";
    return 1;
}

/* Shared start of both parsers: check the list, allocate the items. */
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

/* Copies key and value into the next item. */
static int add_item(taint_list *l, const char *key, const char *value, const char *field, char *err,
                    size_t errlen)
{
    taint_item *it = &l->items[l->n];

    it->key = copy_string(key);
    it->value = copy_string(value);
    if (!it->key || !it->value) {
        free(it->key);
        free(it->value);
        snprintf(err, errlen, "%s: out of memory", field);
        return -1;
    }
    l->n++;
    return 0;
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

int taints_parse_taints(const trellis_host *h, const trellis_value *v, const char *field,
                        taint_effect empty_effect, taint_list **out, char *err, size_t errlen)
{
    taint_list *l;

    *out = NULL;
    if (start_list(h, v, field, &l, err, errlen) < 0)
        return -1;
    if (!l)
        return 0;
    for (size_t i = 0; i < h->value_len(v); i++) {
        const trellis_value *item = h->value_at(v, i);
        const char *key, *value;
        taint_effect effect;
        int has_value;
        char path[256];

        snprintf(path, sizeof(path), "%s[%zu]", field, i);
        if (h->value_type(item) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s: expected a map with key, value, effect", path);
            goto fail;
        }
        if (member_text(h, item, "key", path, &key, err, errlen) < 0)
            goto fail;
        if (key[0] == '\0') {
            snprintf(err, errlen, "%s.key: expected a non-empty string", path);
            goto fail;
        }
        has_value = member_text(h, item, "value", path, &value, err, errlen);
        if (has_value < 0 ||
            parse_effect_member(h, item, path, empty_effect, &effect, err, errlen) < 0 ||
            add_item(l, key, value, field, err, errlen) < 0)
            goto fail;
        l->items[l->n - 1].has_value = has_value;
        l->items[l->n - 1].effect = effect;
    }
    *out = l;
    return 0;
fail:
    taints_free(l);
    return -1;
}

int taints_parse_tolerations(const trellis_host *h, const trellis_value *v, const char *field,
                             taint_semantics sem, taint_list **out, char *err, size_t errlen)
{
    taint_list *l;

    *out = NULL;
    if (start_list(h, v, field, &l, err, errlen) < 0)
        return -1;
    if (!l)
        return 0;
    for (size_t i = 0; i < h->value_len(v); i++) {
        const trellis_value *item = h->value_at(v, i);
        const char *key, *value, *op;
        taint_effect effect;
        int has_value, exists = 0;
        char path[256];

        snprintf(path, sizeof(path), "%s[%zu]", field, i);
        if (h->value_type(item) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s: expected a map with key, operator, value, effect", path);
            goto fail;
        }
        if (member_text(h, item, "key", path, &key, err, errlen) < 0)
            goto fail;
        has_value = member_text(h, item, "value", path, &value, err, errlen);
        if (has_value < 0 ||
            parse_effect_member(h, item, path, TAINT_EFFECT_ANY, &effect, err, errlen) < 0)
            goto fail;
        if (sem == TAINT_SEMANTICS_GARDENER) {
            /* Gardener tolerations match by key alone; there is no
             * operator to widen a toleration to every key. */
            if (key[0] == '\0') {
                snprintf(err, errlen, "%s.key: expected a non-empty string", path);
                goto fail;
            }
        } else {
            if (member_text(h, item, "operator", path, &op, err, errlen) < 0)
                goto fail;
            if (strcmp(op, "Exists") == 0) {
                exists = 1;
            } else if (op[0] != '\0' && strcmp(op, "Equal") != 0) {
                snprintf(err, errlen, "%s.operator: expected Equal or Exists, got '%s'", path, op);
                goto fail;
            }
        }
        if (add_item(l, key, value, field, err, errlen) < 0)
            goto fail;
        l->items[l->n - 1].has_value = has_value;
        l->items[l->n - 1].effect = effect;
        l->items[l->n - 1].exists = exists;
    }
    *out = l;
    return 0;
fail:
    taints_free(l);
    return -1;
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
