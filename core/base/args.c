/*
 * args.c - see args.h. Defaults are written as text in the plugin's schema
 * and parsed with the same rules as config values, so `trellis plugins
 * --describe` can print them as they are.
 */
#include "config.h"

#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *args_type_name(trellis_arg_type t)
{
    switch (t) {
    case TRELLIS_ARG_STRING:
        return "string";
    case TRELLIS_ARG_INT:
        return "int";
    case TRELLIS_ARG_BOOL:
        return "bool";
    case TRELLIS_ARG_DOUBLE:
        return "double";
    case TRELLIS_ARG_STRING_LIST:
        return "string list";
    case TRELLIS_ARG_DOCUMENT:
        return "document";
    }
    return "?";
}

static void split_list(arg_value *v, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && (*p == ' ')) {
            p++;
            n--;
        }
        while (n && p[n - 1] == ' ')
            n--;
        if (n) {
            v->list = xrealloc(v->list, (v->n_list + 1) * sizeof *v->list);
            v->list[v->n_list] = xmalloc(n + 1);
            memcpy(v->list[v->n_list], p, n);
            v->list[v->n_list][n] = '\0';
            v->n_list++;
        }
        if (!e)
            break;
        p = e + 1;
    }
}

/* Parse a default written as text. */
static int parse_text(arg_value *v, const char *text, char *err, size_t errlen)
{
    char *end;
    switch (v->spec->type) {
    case TRELLIS_ARG_STRING:
        v->s = xstrdup(text);
        return 0;
    case TRELLIS_ARG_INT:
        errno = 0;
        v->i = strtoll(text, &end, 10);
        if (errno || end == text || *end)
            return errf(err, errlen, "default '%s' of '%s' is not an integer", text, v->spec->key);
        return 0;
    case TRELLIS_ARG_BOOL:
        if (strcmp(text, "true") == 0)
            v->i = 1;
        else if (strcmp(text, "false") == 0)
            v->i = 0;
        else
            return errf(err, errlen, "default '%s' of '%s' is not true or false", text,
                        v->spec->key);
        return 0;
    case TRELLIS_ARG_DOUBLE:
        errno = 0;
        v->d = strtod(text, &end);
        if (errno || end == text || *end)
            return errf(err, errlen, "default '%s' of '%s' is not a number", text, v->spec->key);
        return 0;
    case TRELLIS_ARG_STRING_LIST:
        split_list(v, text);
        return 0;
    case TRELLIS_ARG_DOCUMENT:
        v->s = xstrdup(text); /* inline */
        v->where = xstrdup("the plugin's default");
        return 0;
    }
    return errf(err, errlen, "argument '%s' has an unknown type %d", v->spec->key,
                (int)v->spec->type);
}

/* The file a setting was read from: an @include'd file names itself. */
static const char *at_file(const config_setting_t *s, const char *file)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? f : file;
}

/* A document argument: a file name (relative to the config file) or
 * { inline = "..."; }. */
static int parse_document(arg_value *v, const config_setting_t *s, const char *file, char *err,
                          size_t errlen)
{
    int t = config_setting_type(s);
    int line = config_setting_source_line(s);
    const char *key = v->spec->key;
    const config_setting_t *in =
        t == CONFIG_TYPE_GROUP ? config_setting_get_member(s, "inline") : NULL;
    if (t == CONFIG_TYPE_GROUP &&
        (!in || config_setting_length(s) != 1 || config_setting_type(in) != CONFIG_TYPE_STRING))
        return errf(err, errlen,
                    "%s:%d: argument '%s': expected { inline = \"...\"; } (the document as text)",
                    at_file(s, file), line, key);
    if (t != CONFIG_TYPE_GROUP && t != CONFIG_TYPE_STRING)
        return errf(err, errlen,
                    "%s:%d: argument '%s' must be a file name (YAML or JSON) or "
                    "{ inline = \"...\"; }",
                    at_file(s, file), line, key);
    free(v->s);
    free(v->path);
    free(v->where);
    v->s = NULL;
    v->path = NULL;
    if (in) {
        v->s = xstrdup(config_setting_get_string(in));
    } else {
        const char *name = config_setting_get_string(s);
        char *dir = xstrdup(at_file(s, file));
        char *slash = strrchr(dir, '/');
        if (name[0] == '/' || !slash)
            v->path = xstrdup(name);
        else
            v->path = xasprintf("%.*s/%s", (int)(slash - dir), dir, name);
        free(dir);
    }
    v->where = xasprintf("%s:%d", at_file(s, file), line);
    return 0;
}

static int parse_setting(arg_value *v, const config_setting_t *s, const char *file, char *err,
                         size_t errlen)
{
    int t = config_setting_type(s);
    int line = config_setting_source_line(s);
    const char *key = v->spec->key;
    switch (v->spec->type) {
    case TRELLIS_ARG_DOCUMENT:
        return parse_document(v, s, file, err, errlen);
    case TRELLIS_ARG_STRING:
        if (t != CONFIG_TYPE_STRING)
            return errf(err, errlen, "%s:%d: argument '%s' must be a string", at_file(s, file),
                        line, key);
        free(v->s);
        v->s = xstrdup(config_setting_get_string(s));
        return 0;
    case TRELLIS_ARG_INT:
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
            return errf(err, errlen, "%s:%d: argument '%s' must be an integer", at_file(s, file),
                        line, key);
        v->i = config_setting_get_int64(s);
        return 0;
    case TRELLIS_ARG_BOOL:
        if (t != CONFIG_TYPE_BOOL)
            return errf(err, errlen, "%s:%d: argument '%s' must be true or false", at_file(s, file),
                        line, key);
        v->i = config_setting_get_bool(s);
        return 0;
    case TRELLIS_ARG_DOUBLE:
        if (t == CONFIG_TYPE_FLOAT)
            v->d = config_setting_get_float(s);
        else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
            v->d = (double)config_setting_get_int64(s);
        else
            return errf(err, errlen, "%s:%d: argument '%s' must be a number", at_file(s, file),
                        line, key);
        return 0;
    case TRELLIS_ARG_STRING_LIST:
        for (size_t i = 0; i < v->n_list; i++)
            free(v->list[i]);
        free(v->list);
        v->list = NULL;
        v->n_list = 0;
        if (t == CONFIG_TYPE_STRING) {
            split_list(v, config_setting_get_string(s));
            return 0;
        }
        if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
            return errf(err, errlen, "%s:%d: argument '%s' must be a list of strings",
                        at_file(s, file), line, key);
        for (int i = 0; i < config_setting_length(s); i++) {
            const char *e = config_setting_get_string_elem(s, i);
            if (!e)
                return errf(err, errlen, "%s:%d: argument '%s' must be a list of strings",
                            at_file(s, file), line, key);
            v->list = xrealloc(v->list, (v->n_list + 1) * sizeof *v->list);
            v->list[v->n_list++] = xstrdup(e);
        }
        return 0;
    }
    return -1;
}

trellis_args *args_build(const trellis_arg_spec *spec, const config_setting_t *group,
                         const config_setting_t *shared, const char *file, char *err, size_t errlen)
{
    trellis_args *a = xcalloc(1, sizeof *a);
    size_t n = 0;
    while (spec && spec[n].key)
        n++;
    a->v = xcalloc(n, sizeof *a->v);
    a->n = n;
    for (size_t i = 0; i < n; i++) {
        a->v[i].spec = &spec[i];
        if (spec[i].default_value && parse_text(&a->v[i], spec[i].default_value, err, errlen) < 0) {
            errprefix(err, errlen, "plugin schema");
            goto fail;
        }
    }
    if (group) {
        int m = config_setting_length(group);
        for (int j = 0; j < m; j++) {
            const config_setting_t *s = config_setting_get_elem(group, (unsigned)j);
            const char *key = config_setting_name(s);
            arg_value *v = NULL;
            for (size_t i = 0; i < n; i++)
                if (strcmp(spec[i].key, key) == 0)
                    v = &a->v[i];
            if (!v) {
                strbuf b;
                sb_init(&b);
                for (size_t i = 0; i < n; i++)
                    sb_printf(&b, "%s%s", i ? ", " : "", spec[i].key);
                errf(err, errlen, "%s:%d: unknown argument '%s' (%s%s)", at_file(s, file),
                     config_setting_source_line(s), key,
                     n ? "expected one of: " : "this plugin takes no arguments", b.s ? b.s : "");
                sb_free(&b);
                goto fail;
            }
            if (parse_setting(v, s, file, err, errlen) < 0)
                goto fail;
        }
    }
    for (size_t i = 0; shared && i < n; i++) {
        const config_setting_t *s = config_setting_get_member(shared, spec[i].key);
        if (s && !(group && config_setting_get_member(group, spec[i].key)) &&
            parse_setting(&a->v[i], s, file, err, errlen) < 0)
            goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        if (spec[i].default_value)
            continue;
        if ((!group || !config_setting_get_member(group, spec[i].key)) &&
            (!shared || !config_setting_get_member(shared, spec[i].key))) {
            errf(err, errlen, "%s:%d: missing required argument '%s' (%s)", at_file(group, file),
                 group ? config_setting_source_line(group) : 0, spec[i].key,
                 spec[i].doc ? spec[i].doc : args_type_name(spec[i].type));
            goto fail;
        }
    }
    return a;
fail:
    args_free(a);
    return NULL;
}

void args_free(trellis_args *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->v[i].s);
        free(a->v[i].path);
        free(a->v[i].where);
        free(a->v[i].text);
        if (a->v[i].doc && a->v[i].doc_free)
            a->v[i].doc_free(a->v[i].doc);
        for (size_t j = 0; j < a->v[i].n_list; j++)
            free(a->v[i].list[j]);
        free(a->v[i].list);
    }
    free(a->v);
    free(a);
}

const arg_value *args_find(const trellis_args *a, const char *key)
{
    if (!a || !key)
        return NULL;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].spec->key, key) == 0)
            return &a->v[i];
    return NULL;
}

const char *args_string(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING ? v->s : NULL;
}

int64_t args_int(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    return v && (v->spec->type == TRELLIS_ARG_INT || v->spec->type == TRELLIS_ARG_BOOL) ? v->i : 0;
}

int args_bool(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    return v && v->spec->type == TRELLIS_ARG_BOOL ? (int)v->i : 0;
}

double args_double(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    return v && v->spec->type == TRELLIS_ARG_DOUBLE ? v->d : 0.0;
}

size_t args_list_len(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING_LIST ? v->n_list : 0;
}

const char *args_list_at(const trellis_args *a, const char *key, size_t i)
{
    const arg_value *v = args_find(a, key);
    return v && v->spec->type == TRELLIS_ARG_STRING_LIST && i < v->n_list ? v->list[i] : NULL;
}
