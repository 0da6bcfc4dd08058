/*
 * settings.c - see settings.h.
 */
#include "config.h"

#include "settings.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define CAT(base, off, type) ((const type *)(const void *)((const char *)(base) + (off)))

typedef char **strv;

static const char *type_name(const setting *s)
{
    switch (s->type) {
    case SET_STRING:
        return "string";
    case SET_PATH:
        return "path";
    case SET_PATH_LIST:
        return "list of paths";
    case SET_STRING_LIST:
        return "list of strings";
    case SET_BOOL:
        return "bool";
    case SET_INT:
        return "int";
    case SET_CHOICE:
        return "choice";
    case SET_GROUP:
        return "group";
    case SET_CUSTOM:
        return "list";
    }
    return "?";
}

static int valid_path(const char *p)
{
    if (!p || !*p || *p == '.' || p[strlen(p) - 1] == '.')
        return 0;
    return strstr(p, "..") == NULL;
}

static void set_int(const setting *s, void *base, long long v)
{
    if (s->size == 8)
        *AT(base, s->off, uint64_t) = (uint64_t)v;
    else
        *AT(base, s->off, int) = (int)v;
}

static long long get_int(const setting *s, const void *base)
{
    return s->size == 8 ? (long long)*CAT(base, s->off, uint64_t) : *CAT(base, s->off, int);
}

static void free_list(const setting *s, void *base)
{
    char ***v = AT(base, s->off, char **);
    size_t *n = AT(base, s->size, size_t);
    for (size_t i = 0; i < *n; i++)
        free((*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

static void list_from_text(const setting *s, void *base, const char *text)
{
    char ***v = AT(base, s->off, char **);
    size_t *n = AT(base, s->size, size_t);
    for (const char *p = text; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            *v = xrealloc(*v, (*n + 1) * sizeof **v);
            (*v)[(*n)++] = xasprintf("%.*s", (int)len, p);
        }
        if (!e)
            break;
        p = e + 1;
    }
}

void settings_defaults(const setting *tab, void *base)
{
    for (const setting *s = tab; s->key; s++) {
        if (s->alias_of)
            continue;
        switch (s->type) {
        case SET_STRING:
        case SET_PATH:
            free(*AT(base, s->off, char *));
            *AT(base, s->off, char *) = s->def ? xstrdup(s->def) : NULL;
            break;
        case SET_PATH_LIST:
        case SET_STRING_LIST:
            free_list(s, base);
            if (s->def)
                list_from_text(s, base, s->def);
            break;
        case SET_BOOL:
            *AT(base, s->off, int) = s->def && strcmp(s->def, "true") == 0;
            break;
        case SET_INT:
            set_int(s, base, s->def ? strtoll(s->def, NULL, 10) : 0);
            break;
        case SET_CHOICE:
            *AT(base, s->off, int) = 0;
            for (int i = 0; s->def && s->choices[i]; i++)
                if (strcmp(s->choices[i], s->def) == 0)
                    *AT(base, s->off, int) = i;
            break;
        case SET_GROUP:
            settings_defaults(s->members, base);
            break;
        case SET_CUSTOM:
            break;
        }
    }
}

static const char *sfile(const config_setting_t *s, const char *file)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? f : file;
}

static int fail(const config_setting_t *at, const char *file, char *err, size_t errlen,
                const char *fmt, const char *key, const char *extra)
{
    char what[600];
    snprintf(what, sizeof what, fmt, key, extra ? extra : "");
    return errf(err, errlen, "%s:%d: %s", sfile(at, file), at ? config_setting_source_line(at) : 0,
                what);
}

/* Refuse any member of g the table does not know, naming the known ones. */
static int check_keys(const setting *tab, const config_setting_t *g, const char *file, char *err,
                      size_t errlen)
{
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(m);
        const setting *s = tab;
        while (s->key && !(name && strcmp(s->key, name) == 0))
            s++;
        if (s->key)
            continue;
        strbuf b;
        sb_init(&b);
        for (s = tab; s->key; s++)
            if (!s->alias_of)
                sb_printf(&b, "%s%s", b.len ? ", " : "", s->key);
        fail(m, file, err, errlen, "unknown setting '%s' (expected one of: %s)", name ? name : "?",
             b.s);
        sb_free(&b);
        return -1;
    }
    return 0;
}

static int load_list(const setting *s, const char *key, const config_setting_t *v, void *base,
                     const char *file, char *err, size_t errlen)
{
    if (!config_setting_is_array(v) && !config_setting_is_list(v))
        return fail(v, file, err, errlen, "'%s' must be a list of strings [ \"...\" ]", s->key,
                    NULL);
    free_list(s, base);
    char ***out = AT(base, s->off, char **);
    size_t *n = AT(base, s->size, size_t);
    int len = config_setting_length(v);
    *out = xcalloc((size_t)(len ? len : 1), sizeof **out);
    for (int i = 0; i < len; i++) {
        const char *e = config_setting_get_string_elem(v, i);
        if (!e || (s->type == SET_PATH_LIST && !valid_path(e)))
            return fail(v, file, err, errlen,
                        s->type == SET_PATH_LIST
                            ? "'%s': expected dotted paths like status.seedName"
                            : "'%s' must be a list of strings",
                        key, NULL);
        (*out)[(*n)++] = xstrdup(e);
    }
    return 0;
}

static int load_int(const setting *s, const char *key, const config_setting_t *v, void *base,
                    const char *file, char *err, size_t errlen)
{
    int t = config_setting_type(v);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return fail(v, file, err, errlen, "'%s' must be an integer", key, NULL);
    long long n = config_setting_get_int64(v);
    if (n < s->min || n > s->max) {
        char range[200];
        snprintf(range, sizeof range, "%lld and %lld, got %lld", s->min, s->max, n);
        return fail(v, file, err, errlen, "'%s' must be between %s", key, range);
    }
    set_int(s, base, n);
    return 0;
}

static int load_choice(const setting *s, const char *key, const config_setting_t *v, void *base,
                       const char *file, char *err, size_t errlen)
{
    const char *text =
        config_setting_type(v) == CONFIG_TYPE_STRING ? config_setting_get_string(v) : NULL;
    for (int i = 0; text && s->choices[i]; i++)
        if (strcmp(s->choices[i], text) == 0) {
            *AT(base, s->off, int) = i;
            return 0;
        }
    strbuf b;
    sb_init(&b);
    for (int i = 0; s->choices[i]; i++)
        sb_printf(&b, "%s\"%s\"", !i ? "" : s->choices[i + 1] ? ", " : " or ", s->choices[i]);
    fail(v, file, err, errlen, "%s: expected %s", key, b.s);
    sb_free(&b);
    return -1;
}

static int load_group(const setting *tab, const config_setting_t *g, void *base, const char *file,
                      const char *prefix, char *err, size_t errlen);

/* key: the setting's full name (binding.field) for messages */
static int load_one(const setting *s, const char *key, const config_setting_t *v, void *base,
                    const char *file, char *err, size_t errlen)
{
    switch (s->type) {
    case SET_STRING:
    case SET_PATH: {
        if (config_setting_type(v) != CONFIG_TYPE_STRING)
            return fail(v, file, err, errlen, "'%s' must be a string", key, NULL);
        const char *text = config_setting_get_string(v);
        if (s->required && !*text)
            return fail(v, file, err, errlen, "'%s' must not be empty", key, NULL);
        if (s->type == SET_PATH && !valid_path(text))
            return fail(v, file, err, errlen, "%s: expected a dotted path like spec.nodeName", key,
                        NULL);
        free(*AT(base, s->off, char *));
        *AT(base, s->off, char *) = xstrdup(text);
        return 0;
    }
    case SET_PATH_LIST:
    case SET_STRING_LIST:
        return load_list(s, key, v, base, file, err, errlen);
    case SET_BOOL:
        if (config_setting_type(v) != CONFIG_TYPE_BOOL)
            return fail(v, file, err, errlen, "'%s' must be true or false", key, NULL);
        *AT(base, s->off, int) = config_setting_get_bool(v);
        return 0;
    case SET_INT:
        return load_int(s, key, v, base, file, err, errlen);
    case SET_CHOICE:
        return load_choice(s, key, v, base, file, err, errlen);
    case SET_GROUP:
        if (!config_setting_is_group(v))
            return fail(v, file, err, errlen, "%s must be a group { ... }", key, NULL);
        return load_group(s->members, v, base, file, key, err, errlen);
    case SET_CUSTOM:
        return 0;
    }
    return -1;
}

static int load_group(const setting *tab, const config_setting_t *g, void *base, const char *file,
                      const char *prefix, char *err, size_t errlen)
{
    if (g && check_keys(tab, g, file, err, errlen) < 0)
        return -1;
    for (const setting *s = tab; s->key; s++) {
        const config_setting_t *v = g ? config_setting_get_member(g, s->key) : NULL;
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", s->key);
        if (!v) {
            if (s->required && !s->alias_of)
                return errf(err, errlen, "%s:%d: missing setting '%s'", sfile(g, file),
                            g ? config_setting_source_line(g) : 0, key);
            continue;
        }
        if (s->alias_of && config_setting_lookup((config_setting_t *)g, s->alias_of))
            return fail(v, file, err, errlen, "'%s' is given twice: here and as %s", key,
                        s->alias_of);
        if (load_one(s, key, v, base, file, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int settings_load(const setting *tab, const config_setting_t *g, void *base, const char *file,
                  char *err, size_t errlen)
{
    return load_group(tab, g, base, file, NULL, err, errlen);
}

json_object *settings_json(const setting *tab, const void *base)
{
    json_object *o = json_object_new_object();
    for (const setting *s = tab; s->key; s++) {
        json_object *v = NULL;
        if (s->alias_of || s->type == SET_CUSTOM)
            continue;
        switch (s->type) {
        case SET_STRING:
        case SET_PATH: {
            const char *text = *CAT(base, s->off, char *);
            v = text ? json_object_new_string(text) : NULL;
            break;
        }
        case SET_PATH_LIST:
        case SET_STRING_LIST: {
            char *const *list = *CAT(base, s->off, strv);
            size_t n = *CAT(base, s->size, size_t);
            v = json_object_new_array();
            for (size_t i = 0; i < n; i++)
                json_object_array_add(v, json_object_new_string(list[i]));
            break;
        }
        case SET_BOOL:
            v = json_object_new_boolean(*CAT(base, s->off, int));
            break;
        case SET_INT:
            v = json_object_new_int64(get_int(s, base));
            break;
        case SET_CHOICE:
            v = json_object_new_string(s->choices[*CAT(base, s->off, int)]);
            break;
        case SET_GROUP:
            v = settings_json(s->members, base);
            break;
        case SET_CUSTOM:
            break;
        }
        json_object_object_add(o, s->key, v);
    }
    return o;
}

void settings_free(const setting *tab, void *base)
{
    for (const setting *s = tab; s->key; s++) {
        if (s->alias_of)
            continue;
        if (s->type == SET_STRING || s->type == SET_PATH) {
            free(*AT(base, s->off, char *));
            *AT(base, s->off, char *) = NULL;
        } else if (s->type == SET_PATH_LIST || s->type == SET_STRING_LIST) {
            free_list(s, base);
        } else if (s->type == SET_GROUP) {
            settings_free(s->members, base);
        }
    }
}

void settings_describe(FILE *f, const setting *tab, const char *prefix)
{
    for (const setting *s = tab; s->key; s++) {
        char key[200], def[240];
        if (s->alias_of)
            continue;
        snprintf(key, sizeof key, "%s%s", prefix, s->key);
        if (s->type == SET_GROUP) {
            fprintf(f, "  %-34s %-14s %-22s %s\n", key, "group", s->required ? "(required)" : "",
                    s->doc ? s->doc : "");
            char sub[210];
            snprintf(sub, sizeof sub, "%s.", key);
            settings_describe(f, s->members, sub);
            continue;
        }
        if (s->type == SET_CHOICE) {
            strbuf b;
            sb_init(&b);
            for (int i = 0; s->choices[i]; i++)
                sb_printf(&b, "%s%s", i ? "|" : "", s->choices[i]);
            fprintf(f, "  %-34s %-14s %-22s %s (%s)\n", key, "choice", s->def ? s->def : "",
                    s->doc ? s->doc : "", b.s);
            sb_free(&b);
            continue;
        }
        snprintf(def, sizeof def, "%s",
                 s->required ? "(required)"
                 : s->def    ? (*s->def ? s->def : "\"\"")
                             : "(none)");
        fprintf(f, "  %-34s %-14s %-22s %s\n", key, type_name(s), def, s->doc ? s->doc : "");
    }
}
