/*
 * admin.c - see admin.h.
 */
#include "config.h"

#include "admin.h"

#include <string.h>

#include <json-c/json.h>

#include "binding.h"
#include "util.h"

typedef struct taint_spec {
    char key[600], value[600], effect[600];
    int has_value, has_effect, remove;
} taint_spec;

/* "key[=value][:Effect]" or "key[:Effect]-"; the effect one of the
 * profile's operator.taint_effects. */
static int parse_spec(const cfg_profile *pc, const char *spec, taint_spec *t, char *err,
                      size_t errlen)
{
    memset(t, 0, sizeof *t);
    size_t len = strlen(spec);
    if (len && spec[len - 1] == '-') {
        t->remove = 1;
        len--;
    }
    char buf[600];
    if (len == 0 || len >= sizeof buf)
        return errf(err, errlen, "taint '%s': expected key[=value][:Effect] or key[:Effect]-",
                    spec);
    memcpy(buf, spec, len);
    buf[len] = '\0';
    char *colon = strrchr(buf, ':');
    if (colon) {
        *colon = '\0';
        snprintf(t->effect, sizeof t->effect, "%s", colon + 1);
        t->has_effect = 1;
        int ok = 0;
        strbuf known;
        sb_init(&known);
        for (size_t i = 0; i < pc->n_taint_effects; i++) {
            ok |= strcmp(t->effect, pc->taint_effects[i]) == 0;
            sb_printf(&known, "%s%s",
                      !i                            ? ""
                      : i + 1 < pc->n_taint_effects ? ", "
                                                    : " or ",
                      pc->taint_effects[i]);
        }
        if (!ok)
            errf(err, errlen, "taint '%s': effect '%s' is not %s", spec, t->effect,
                 known.s ? known.s : "allowed (operator.taint_effects is empty)");
        sb_free(&known);
        if (!ok)
            return -1;
    }
    char *eq = strchr(buf, '=');
    if (eq) {
        *eq = '\0';
        snprintf(t->value, sizeof t->value, "%s", eq + 1);
        t->has_value = 1;
    }
    snprintf(t->key, sizeof t->key, "%s", buf);
    if (!t->key[0])
        return errf(err, errlen, "taint '%s': the key is empty", spec);
    return 0;
}

static const char *member(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

static int same_effect(json_object *taint, const taint_spec *t)
{
    const char *e = member(taint, "effect");
    return strcmp(e ? e : "", t->has_effect ? t->effect : "") == 0;
}

static const trellis_object *find_target(sched *s, profile *p, const char *name, char *err,
                                         size_t errlen)
{
    const trellis_object *o = sched_lookup(s, profile_cfg(p)->target_kind, "", name);
    if (!o)
        errf(err, errlen, "%s '%s' not found in the state", profile_cfg(p)->target_kind, name);
    return o;
}

int admin_taint(sched *s, profile *p, const char *target, const char *spec, FILE *out, char *err,
                size_t errlen)
{
    taint_spec t;
    if (parse_spec(profile_cfg(p), spec, &t, err, errlen) < 0)
        return -1;
    const trellis_object *o = find_target(s, p, target, err, errlen);
    if (!o)
        return -1;
    const char *field = profile_cfg(p)->taints_field;
    json_object *cur = value_to_json(object_get(o, field));
    if (cur && !json_object_is_type(cur, json_type_array) &&
        !json_object_is_type(cur, json_type_null)) {
        json_object_put(cur);
        return errf(err, errlen, "%s %s: %s is not a list", o->kind, o->name, field);
    }
    json_object *list = json_object_new_array();
    size_t dropped = 0;
    size_t n = cur && json_object_is_type(cur, json_type_array) ? json_object_array_length(cur) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(cur, i);
        const char *k = json_object_is_type(it, json_type_object) ? member(it, "key") : NULL;
        int match = k && strcmp(k, t.key) == 0;
        if (match && t.remove && t.has_effect)
            match = same_effect(it, &t);
        if (match && !t.remove)
            match = same_effect(it, &t);
        if (match) {
            dropped++;
            continue;
        }
        json_object_array_add(list, json_object_get(it));
    }
    json_object_put(cur);
    if (t.remove && !dropped) {
        json_object_put(list);
        return errf(err, errlen, "%s %s has no taint %s%s%s", o->kind, o->name, t.key,
                    t.has_effect ? ":" : "", t.has_effect ? t.effect : "");
    }
    if (!t.remove) {
        json_object *nt = json_object_new_object();
        json_object_object_add(nt, "key", json_object_new_string(t.key));
        if (t.has_value)
            json_object_object_add(nt, "value", json_object_new_string(t.value));
        if (t.has_effect)
            json_object_object_add(nt, "effect", json_object_new_string(t.effect));
        json_object_array_add(list, nt);
    }
    const char *text = json_object_to_json_string_ext(list, JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    store_edit e = {field, text, STORE_SET_JSON};
    store *st = sched_store(s);
    int rc = st->ops->patch(st, o, NULL, &e, 1, err, errlen);
    if (rc == 0 && out)
        fprintf(out, "%s/%s %s %s\n", o->kind, o->name,
                t.remove  ? "untainted"
                : dropped ? "taint replaced"
                          : "tainted",
                spec);
    json_object_put(list);
    return rc;
}

int admin_drain(sched *s, profile *p, const char *target, const drain_flags *f, FILE *out,
                char *err, size_t errlen)
{
    char spec[300];
    snprintf(spec, sizeof spec, "%s:NoSchedule", profile_cfg(p)->cordon_taint);
    const trellis_object *o = find_target(s, p, target, err, errlen);
    if (!o)
        return -1;
    if (profile_cfg(p)->cordon_field)
        return drain_target(s, p, o, f, out, err, errlen);
    /* already cordoned is fine: the taint is replaced by the same one */
    if (admin_taint(s, p, target, spec, out, err, errlen) < 0)
        return -1;
    size_t n = 0;
    store *st = sched_store(s);
    for (size_t i = 0; i < sched_object_count(s); i++) {
        trellis_object *w = sched_object_at(s, i);
        if (sched_profile_for(s, w) != p && strcmp(w->kind, profile_cfg(p)->workload_kind) != 0)
            continue;
        if (!binding_is_on(p, w, target))
            continue;
        if (binding_release(p, st, w, target, NULL, err, errlen) < 0)
            return errprefix(err, errlen, "evicting %s %s", w->kind, w->key);
        if (out)
            fprintf(out, "%s/%s evicted from %s\n", w->kind, w->key, target);
        n++;
    }
    if (out)
        fprintf(out, "%s/%s drained: %zu %s evicted\n", o->kind, o->name, n,
                n == 1 ? "workload" : "workloads");
    return 0;
}

int admin_uncordon(sched *s, profile *p, const char *target, int dry_run, FILE *out, char *err,
                   size_t errlen)
{
    if (profile_cfg(p)->cordon_field) {
        const trellis_object *o = find_target(s, p, target, err, errlen);
        return o ? drain_uncordon(s, p, o, dry_run, out, err, errlen) : -1;
    }
    char spec[300];
    snprintf(spec, sizeof spec, "%s-", profile_cfg(p)->cordon_taint);
    return admin_taint(s, p, target, spec, out, err, errlen);
}
