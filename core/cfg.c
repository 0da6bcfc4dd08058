/*
 * cfg.c - see cfg.h. Unknown settings are errors, so a typo in a
 * profile never silently changes what the scheduler does.
 */
#include "config.h"

#include "cfg.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *const point_names[] = {"queue_sort", "pre_filter", "filter",   "post_filter",
                                          "pre_score",  "score",      "reserve",  "permit",
                                          "pre_bind",   "bind",       "post_bind"};

const char *config_point_name(unsigned bit)
{
    for (unsigned i = 0; i < sizeof point_names / sizeof *point_names; i++)
        if (bit == 1u << i)
            return point_names[i];
    return NULL;
}

unsigned config_point_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof point_names / sizeof *point_names; i++)
        if (strcmp(name, point_names[i]) == 0)
            return 1u << i;
    return 0;
}

/* The file a setting was read from: an @include'd file names itself. */
static const char *sfile(const cfg *c, const config_setting_t *s)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? f : c->file;
}

static int serr(const cfg *c, const config_setting_t *s, char *err, size_t errlen, const char *what)
{
    return errf(err, errlen, "%s:%d: %s", sfile(c, s), s ? config_setting_source_line(s) : 0, what);
}

/* Reject any member of group not in allowed. */
static int check_keys(const cfg *c, const config_setting_t *group, const char *const *allowed,
                      char *err, size_t errlen)
{
    int n = config_setting_length(group);
    for (int i = 0; i < n; i++) {
        config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(m);
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (name && strcmp(name, *a) == 0)
                ok = 1;
        if (!ok) {
            strbuf b;
            sb_init(&b);
            for (const char *const *a = allowed; *a; a++)
                sb_printf(&b, "%s%s", a == allowed ? "" : ", ", *a);
            errf(err, errlen, "%s:%d: unknown setting '%s' (expected one of: %s)", sfile(c, m),
                 config_setting_source_line(m), name ? name : "?", b.s);
            sb_free(&b);
            return -1;
        }
    }
    return 0;
}

/* Read an optional string member; *out stays NULL when absent. */
static int get_str(const cfg *c, const config_setting_t *group, const char *key, int required,
                   char **out, char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s) {
        if (required)
            return errf(err, errlen, "%s:%d: missing setting '%s'", sfile(c, group),
                        config_setting_source_line(group), key);
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return errf(err, errlen, "%s:%d: '%s' must be a string", sfile(c, s),
                    config_setting_source_line(s), key);
    const char *v = config_setting_get_string(s);
    if (required && !*v)
        return errf(err, errlen, "%s:%d: '%s' must not be empty", sfile(c, s),
                    config_setting_source_line(s), key);
    *out = xstrdup(v);
    return 0;
}

static int get_int(const cfg *c, const config_setting_t *group, const char *key, long long min,
                   long long max, long long *out, char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s)
        return 0;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return errf(err, errlen, "%s:%d: '%s' must be an integer", sfile(c, s),
                    config_setting_source_line(s), key);
    long long v = config_setting_get_int64(s);
    if (v < min || v > max)
        return errf(err, errlen, "%s:%d: '%s' must be between %lld and %lld, got %lld", sfile(c, s),
                    config_setting_source_line(s), key, min, max, v);
    *out = v;
    return 0;
}

static int get_bool(const cfg *c, const config_setting_t *group, const char *key, int *out,
                    char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return errf(err, errlen, "%s:%d: '%s' must be true or false", sfile(c, s),
                    config_setting_source_line(s), key);
    *out = config_setting_get_bool(s);
    return 0;
}

static int valid_path(const char *p)
{
    if (!p || !*p || *p == '.' || p[strlen(p) - 1] == '.')
        return 0;
    return strstr(p, "..") == NULL;
}

static int load_plugin(cfg *c, cfg_profile *pr, const config_setting_t *s, cfg_plugin *pl,
                       char *err, size_t errlen)
{
    static const char *const keys[] = {"name",   "as",   "path",      "weight",
                                       "points", "args", "ignorable", NULL};
    memset(pl, 0, sizeof *pl);
    pl->line = config_setting_source_line(s);
    pl->weight = 1;
    pl->points = PT_ALL;
    if (config_setting_type(s) == CONFIG_TYPE_STRING) {
        pl->name = xstrdup(config_setting_get_string(s));
    } else if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
        if (check_keys(c, s, keys, err, errlen) < 0 ||
            get_str(c, s, "name", 1, &pl->name, err, errlen) < 0 ||
            get_str(c, s, "as", 0, &pl->instance, err, errlen) < 0 ||
            get_str(c, s, "path", 0, &pl->path, err, errlen) < 0)
            return -1;
        long long w = 1;
        if (get_int(c, s, "weight", 0, 1000000, &w, err, errlen) < 0)
            return -1;
        pl->weight = (int)w;
        if (get_bool(c, s, "ignorable", &pl->ignorable, err, errlen) < 0)
            return -1;
        config_setting_t *pts = config_setting_get_member(s, "points");
        if (pts) {
            if (!config_setting_is_aggregate(pts) || config_setting_is_group(pts))
                return serr(c, pts, err, errlen,
                            "'points' must be a list of extension point names");
            pl->points = 0;
            for (int i = 0; i < config_setting_length(pts); i++) {
                const char *n = config_setting_get_string_elem(pts, i);
                unsigned bit = n ? config_point_parse(n) : 0;
                if (!bit)
                    return errf(err, errlen,
                                "%s:%d: unknown extension point '%s' (expected queue_sort, "
                                "pre_filter, filter, post_filter, pre_score, score, reserve, "
                                "permit, pre_bind, bind or post_bind)",
                                sfile(c, pts), config_setting_source_line(pts), n ? n : "?");
                pl->points |= bit;
            }
        }
        config_setting_t *a = config_setting_get_member(s, "args");
        if (a && !config_setting_is_group(a))
            return serr(c, a, err, errlen, "'args' must be a group { key = value; }");
        pl->args = a;
    } else {
        return serr(c, s, err, errlen,
                    "a plugin entry must be a name or a group { name = \"...\"; }");
    }
    if (!*pl->name)
        return serr(c, s, err, errlen, "plugin name must not be empty");
    if (!pl->instance)
        pl->instance = xstrdup(pl->name);
    for (size_t i = 0; i < pr->n_plugins; i++)
        if (strcmp(pr->plugins[i].instance, pl->instance) == 0)
            return errf(err, errlen,
                        "%s:%d: profile '%s' lists '%s' twice (give the second one a "
                        "different name with as = \"...\")",
                        c->file, pl->line, pr->name, pl->instance);
    return 0;
}

static void free_plugin(cfg_plugin *pl)
{
    free(pl->name);
    free(pl->instance);
    free(pl->path);
}

static int load_kind(cfg *c, const config_setting_t *g, const char *what, char **kind, char **api,
                     char **sched_field, char *err, size_t errlen)
{
    static const char *const wkeys[] = {"kind", "api_version", "scheduler_name_field", NULL};
    static const char *const tkeys[] = {"kind", "api_version", NULL};
    config_setting_t *s = config_setting_get_member(g, what);
    if (!s)
        return errf(err, errlen, "%s:%d: missing setting '%s'", sfile(c, g),
                    config_setting_source_line(g), what);
    if (!config_setting_is_group(s))
        return serr(c, s, err, errlen, "must be a group { kind = \"...\"; }");
    if (check_keys(c, s, sched_field ? wkeys : tkeys, err, errlen) < 0 ||
        get_str(c, s, "kind", 1, kind, err, errlen) < 0 ||
        get_str(c, s, "api_version", 0, api, err, errlen) < 0)
        return -1;
    if (sched_field) {
        if (get_str(c, s, "scheduler_name_field", 0, sched_field, err, errlen) < 0)
            return -1;
        if (*sched_field && !valid_path(*sched_field))
            return serr(c, s, err, errlen,
                        "scheduler_name_field: expected a dotted path like spec.schedulerName");
    }
    return 0;
}

static int load_profile(cfg *c, const config_setting_t *s, cfg_profile *p, char *err, size_t errlen)
{
    static const char *const keys[] = {"name",
                                       "default",
                                       "workload",
                                       "target",
                                       "binding",
                                       "tie_break",
                                       "score_mode",
                                       "unschedulable_message",
                                       "target_noun",
                                       "events",
                                       "taints_field",
                                       "cordon_taint",
                                       "capacity_field",
                                       "percentage_of_targets_to_score",
                                       "equivalence_cache",
                                       "backoff",
                                       "max_unschedulable_ms",
                                       "hook_deadline_ms",
                                       "bind_deadline_ms",
                                       "plugins",
                                       NULL};
    static const char *const bkeys[] = {"field", "also_counts", NULL};
    static const char *const bokeys[] = {"initial_ms", "max_ms", NULL};
    memset(p, 0, sizeof *p);
    p->line = config_setting_source_line(s);
    p->backoff_initial_ms = 1000;
    p->backoff_max_ms = 10000;
    p->max_unschedulable_ms = 300000;
    p->hook_deadline_ms = 5000;
    p->bind_deadline_ms = 60000;
    if (!config_setting_is_group(s))
        return serr(c, s, err, errlen, "a profile must be a group { name = ...; }");
    if (check_keys(c, s, keys, err, errlen) < 0 ||
        get_str(c, s, "name", 1, &p->name, err, errlen) < 0 ||
        get_bool(c, s, "default", &p->is_default, err, errlen) < 0 ||
        load_kind(c, s, "workload", &p->workload_kind, &p->workload_api_version,
                  &p->scheduler_name_field, err, errlen) < 0 ||
        load_kind(c, s, "target", &p->target_kind, &p->target_api_version, NULL, err, errlen) < 0)
        return -1;
    config_setting_t *b = config_setting_get_member(s, "binding");
    if (!b)
        return errf(err, errlen, "%s:%d: profile '%s': missing setting 'binding'", c->file, p->line,
                    p->name);
    if (!config_setting_is_group(b) || check_keys(c, b, bkeys, err, errlen) < 0 ||
        get_str(c, b, "field", 1, &p->binding_field, err, errlen) < 0) {
        if (!config_setting_is_group(b))
            serr(c, b, err, errlen, "binding must be a group { field = \"spec.nodeName\"; }");
        return -1;
    }
    if (!valid_path(p->binding_field))
        return serr(c, b, err, errlen, "binding.field: expected a dotted path like spec.nodeName");
    config_setting_t *ac = config_setting_get_member(b, "also_counts");
    if (ac) {
        if (!config_setting_is_array(ac) && !config_setting_is_list(ac))
            return serr(c, ac, err, errlen,
                        "binding.also_counts must be a list of paths [ \"status.seedName\" ]");
        int n = config_setting_length(ac);
        p->also_counts = xcalloc((size_t)n, sizeof *p->also_counts);
        for (int i = 0; i < n; i++) {
            const char *f = config_setting_get_string_elem(ac, i);
            if (!f || !valid_path(f))
                return serr(c, ac, err, errlen,
                            "binding.also_counts: expected dotted paths like status.seedName");
            p->also_counts[p->n_also_counts++] = xstrdup(f);
        }
    }
    char *sm = NULL, *um = NULL;
    if (get_str(c, s, "score_mode", 0, &sm, err, errlen) < 0)
        return -1;
    if (sm) {
        int ok = strcmp(sm, "weighted") == 0 || strcmp(sm, "lexicographic") == 0;
        p->lexicographic = strcmp(sm, "lexicographic") == 0;
        free(sm);
        if (!ok)
            return serr(c, config_setting_get_member(s, "score_mode"), err, errlen,
                        "score_mode: expected \"weighted\" or \"lexicographic\"");
    }
    if (get_str(c, s, "unschedulable_message", 0, &um, err, errlen) < 0)
        return -1;
    if (um) {
        int ok = strcmp(um, "summary") == 0 || strcmp(um, "per-target") == 0;
        p->per_target_message = strcmp(um, "per-target") == 0;
        free(um);
        if (!ok)
            return serr(c, config_setting_get_member(s, "unschedulable_message"), err, errlen,
                        "unschedulable_message: expected \"summary\" or \"per-target\"");
    }
    if (get_str(c, s, "target_noun", 0, &p->target_noun, err, errlen) < 0)
        return -1;
    if (!p->target_noun)
        p->target_noun = xstrdup("target");
    if (get_bool(c, s, "events", &p->events, err, errlen) < 0)
        return -1;
    long long pct = 100;
    if (get_int(c, s, "percentage_of_targets_to_score", 0, 100, &pct, err, errlen) < 0)
        return -1;
    p->percentage_to_score = (int)pct;
    p->equivalence_cache = 1;
    if (get_bool(c, s, "equivalence_cache", &p->equivalence_cache, err, errlen) < 0)
        return -1;
    if (get_str(c, s, "taints_field", 0, &p->taints_field, err, errlen) < 0 ||
        get_str(c, s, "cordon_taint", 0, &p->cordon_taint, err, errlen) < 0 ||
        get_str(c, s, "capacity_field", 0, &p->capacity_field, err, errlen) < 0)
        return -1;
    if (!p->taints_field)
        p->taints_field = xstrdup("spec.taints");
    if (!p->cordon_taint)
        p->cordon_taint = xstrdup("node.kubernetes.io/unschedulable");
    if (!valid_path(p->taints_field) || (p->capacity_field && !valid_path(p->capacity_field)))
        return serr(c, s, err, errlen,
                    "taints_field and capacity_field must be dotted paths like spec.taints");
    char *tb = NULL;
    if (get_str(c, s, "tie_break", 0, &tb, err, errlen) < 0)
        return -1;
    if (tb) {
        int ok = strcmp(tb, "name") == 0 || strcmp(tb, "name-desc") == 0;
        p->tie_break_desc = strcmp(tb, "name-desc") == 0;
        free(tb);
        if (!ok)
            return serr(c, config_setting_get_member(s, "tie_break"), err, errlen,
                        "tie_break: expected \"name\" or \"name-desc\"");
    }
    config_setting_t *bo = config_setting_get_member(s, "backoff");
    if (bo) {
        long long v;
        if (!config_setting_is_group(bo) || check_keys(c, bo, bokeys, err, errlen) < 0)
            return config_setting_is_group(bo)
                       ? -1
                       : serr(c, bo, err, errlen, "backoff must be a group");
        v = (long long)p->backoff_initial_ms;
        if (get_int(c, bo, "initial_ms", 1, 86400000LL, &v, err, errlen) < 0)
            return -1;
        p->backoff_initial_ms = (uint64_t)v;
        v = (long long)p->backoff_max_ms;
        if (get_int(c, bo, "max_ms", 1, 86400000LL, &v, err, errlen) < 0)
            return -1;
        p->backoff_max_ms = (uint64_t)v;
        if (p->backoff_max_ms < p->backoff_initial_ms)
            return serr(c, bo, err, errlen, "backoff.max_ms must be >= backoff.initial_ms");
    }
    long long mu = (long long)p->max_unschedulable_ms;
    if (get_int(c, s, "max_unschedulable_ms", 1, 86400000LL * 7, &mu, err, errlen) < 0)
        return -1;
    p->max_unschedulable_ms = (uint64_t)mu;
    long long hd = p->hook_deadline_ms, bd = p->bind_deadline_ms;
    if (get_int(c, s, "hook_deadline_ms", 0, 86400000LL, &hd, err, errlen) < 0 ||
        get_int(c, s, "bind_deadline_ms", 0, 86400000LL, &bd, err, errlen) < 0)
        return -1;
    p->hook_deadline_ms = (uint32_t)hd;
    p->bind_deadline_ms = (uint32_t)bd;

    config_setting_t *pl = config_setting_get_member(s, "plugins");
    if (!pl)
        return errf(err, errlen, "%s:%d: profile '%s': missing setting 'plugins'", c->file, p->line,
                    p->name);
    if (!config_setting_is_list(pl) && !config_setting_is_array(pl))
        return serr(c, pl, err, errlen, "plugins must be a list ( { name = \"...\"; }, ... )");
    int n = config_setting_length(pl);
    p->plugins = xcalloc((size_t)n, sizeof *p->plugins);
    for (int i = 0; i < n; i++) {
        if (load_plugin(c, p, config_setting_get_elem(pl, (unsigned)i), &p->plugins[i], err,
                        errlen) < 0) {
            free_plugin(&p->plugins[i]);
            return -1;
        }
        p->n_plugins++;
    }
    return 0;
}

static void free_profile(cfg_profile *p)
{
    free(p->name);
    free(p->workload_kind);
    free(p->workload_api_version);
    free(p->scheduler_name_field);
    free(p->target_kind);
    free(p->target_api_version);
    free(p->binding_field);
    for (size_t i = 0; i < p->n_also_counts; i++)
        free(p->also_counts[i]);
    free(p->also_counts);
    free(p->target_noun);
    free(p->taints_field);
    free(p->cordon_taint);
    free(p->capacity_field);
    for (size_t i = 0; i < p->n_plugins; i++)
        free_plugin(&p->plugins[i]);
    free(p->plugins);
}

/* The group http { enabled; address; port; }: every member optional. */
static int load_http(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    static const char *const keys[] = {"enabled", "address", "port", "liveness_timeout_ms", NULL};
    c->http_enabled = 1;
    c->http_address = xstrdup("127.0.0.1");
    c->http_port = 10259;
    c->liveness_timeout_ms = 30000;
    config_setting_t *h = config_setting_get_member(root, "http");
    if (!h)
        return 0;
    if (!config_setting_is_group(h))
        return serr(c, h, err, errlen,
                    "http must be a group { enabled = true; address = \"127.0.0.1\"; "
                    "port = 10259; }");
    if (check_keys(c, h, keys, err, errlen) < 0)
        return -1;
    config_setting_t *s = config_setting_get_member(h, "enabled");
    if (s) {
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
            return serr(c, s, err, errlen, "http.enabled: expected true or false");
        c->http_enabled = config_setting_get_bool(s);
    }
    s = config_setting_get_member(h, "address");
    if (s) {
        const char *a = config_setting_get_string(s);
        struct in_addr in;
        if (!a || inet_pton(AF_INET, a, &in) != 1)
            return errf(err, errlen,
                        "%s:%d: http.address: expected an IPv4 address like \"127.0.0.1\", "
                        "got %s%s%s",
                        sfile(c, s), config_setting_source_line(s), a ? "\"" : "",
                        a ? a : "a value that is not a string", a ? "\"" : "");
        free(c->http_address);
        c->http_address = xstrdup(a);
    }
    s = config_setting_get_member(h, "port");
    if (s) {
        int t = config_setting_type(s);
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
            return serr(c, s, err, errlen, "http.port: expected 0..65535, got a non-integer");
        long long v = config_setting_get_int64(s);
        if (v < 0 || v > 65535)
            return errf(err, errlen, "%s:%d: http.port: expected 0..65535, got %lld", sfile(c, s),
                        config_setting_source_line(s), v);
        c->http_port = (int)v;
    }
    long long lt = c->liveness_timeout_ms;
    if (get_int(c, h, "liveness_timeout_ms", 1000, 86400000LL, &lt, err, errlen) < 0)
        return -1;
    c->liveness_timeout_ms = (uint32_t)lt;
    return 0;
}

int config_load(const char *file, cfg *c, char *err, size_t errlen)
{
    static const char *const keys[] = {"plugin_dirs", "parallelism", "store",
                                       "http",        "profiles",    NULL};
    static const char *const skeys[] = {"type", "path", NULL};
    memset(c, 0, sizeof *c);
    c->file = xstrdup(file);
    char *tmp = xstrdup(file);
    c->dir = xstrdup(dirname(tmp));
    free(tmp);
    c->parallelism = 0;
    config_init(&c->lc);
    if (access(file, R_OK) != 0) {
        errf(err, errlen, "%s: cannot read the config file: %m", file);
        goto fail;
    }
    if (!config_read_file(&c->lc, file)) {
        errf(err, errlen, "%s:%d: %s", config_error_file(&c->lc) ? config_error_file(&c->lc) : file,
             config_error_line(&c->lc), config_error_text(&c->lc));
        goto fail;
    }
    config_setting_t *root = config_root_setting(&c->lc);
    if (check_keys(c, root, keys, err, errlen) < 0)
        goto fail;

    config_setting_t *dirs = config_setting_get_member(root, "plugin_dirs");
    if (dirs) {
        if (!config_setting_is_array(dirs) && !config_setting_is_list(dirs)) {
            serr(c, dirs, err, errlen, "plugin_dirs must be a list of strings [ \"dir\", ... ]");
            goto fail;
        }
        int n = config_setting_length(dirs);
        c->plugin_dirs = xcalloc((size_t)n, sizeof *c->plugin_dirs);
        for (int i = 0; i < n; i++) {
            const char *d = config_setting_get_string_elem(dirs, i);
            if (!d) {
                serr(c, dirs, err, errlen, "plugin_dirs must be a list of strings");
                goto fail;
            }
            c->plugin_dirs[c->n_plugin_dirs++] =
                d[0] == '/' ? xstrdup(d) : xasprintf("%s/%s", c->dir, d);
        }
    }
    long long par = 0;
    if (get_int(c, root, "parallelism", 0, 256, &par, err, errlen) < 0)
        goto fail;
    c->parallelism = (int)par;

    config_setting_t *st = config_setting_get_member(root, "store");
    c->store_type = xstrdup("file");
    if (st) {
        if (!config_setting_is_group(st)) {
            serr(c, st, err, errlen, "store must be a group { type = \"file\"; path = \"...\"; }");
            goto fail;
        }
        char *type = NULL;
        if (check_keys(c, st, skeys, err, errlen) < 0 ||
            get_str(c, st, "type", 0, &type, err, errlen) < 0 ||
            get_str(c, st, "path", 0, &c->store_path, err, errlen) < 0)
            goto fail;
        if (type) {
            free(c->store_type);
            c->store_type = type;
        }
        if (strcmp(c->store_type, "file") != 0) {
            serr(c, st, err, errlen, "store.type: expected \"file\" (the only store so far)");
            goto fail;
        }
        if (c->store_path && c->store_path[0] != '/') {
            char *abs = xasprintf("%s/%s", c->dir, c->store_path);
            free(c->store_path);
            c->store_path = abs;
        }
    }

    if (load_http(c, root, err, errlen) < 0)
        goto fail;

    config_setting_t *profs = config_setting_get_member(root, "profiles");
    if (!profs) {
        errf(err, errlen, "%s: missing setting 'profiles'", file);
        goto fail;
    }
    if (!config_setting_is_list(profs) || config_setting_length(profs) == 0) {
        serr(c, profs, err, errlen, "profiles must be a non-empty list ( { ... }, ... )");
        goto fail;
    }
    int n = config_setting_length(profs);
    c->profiles = xcalloc((size_t)n, sizeof *c->profiles);
    for (int i = 0; i < n; i++) {
        cfg_profile *p = &c->profiles[i];
        if (load_profile(c, config_setting_get_elem(profs, (unsigned)i), p, err, errlen) < 0) {
            free_profile(p);
            goto fail;
        }
        c->n_profiles++;
        for (int j = 0; j < i; j++) {
            const cfg_profile *q = &c->profiles[j];
            if (strcmp(q->name, p->name) == 0) {
                errf(err, errlen, "%s:%d: a profile named '%s' already exists (line %d)", file,
                     p->line, p->name, q->line);
                goto fail;
            }
            if (p->is_default && q->is_default && strcmp(q->workload_kind, p->workload_kind) == 0) {
                errf(err, errlen, "%s:%d: profiles '%s' and '%s' are both default for kind %s",
                     file, p->line, q->name, p->name, p->workload_kind);
                goto fail;
            }
        }
    }
    return 0;
fail:
    config_free(c);
    return -1;
}

void config_free(cfg *c)
{
    for (size_t i = 0; i < c->n_profiles; i++)
        free_profile(&c->profiles[i]);
    free(c->profiles);
    for (size_t i = 0; i < c->n_plugin_dirs; i++)
        free(c->plugin_dirs[i]);
    free(c->plugin_dirs);
    free(c->store_type);
    free(c->store_path);
    free(c->http_address);
    free(c->file);
    free(c->dir);
    config_destroy(&c->lc);
    memset(c, 0, sizeof *c);
}

/* ---- the effective configuration as JSON (/configz) ---- */

static json_object *jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL; /* NULL: JSON null */
}

static json_object *jstr_array(char *const *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, jstr(v[i]));
    return a;
}

/* A libconfig setting as JSON: groups objects, lists and arrays arrays. */
static json_object *setting_json(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: {
        json_object *o = json_object_new_object();
        for (int i = 0; i < config_setting_length(s); i++) {
            const config_setting_t *m = config_setting_get_elem(s, (unsigned)i);
            json_object_object_add(o, config_setting_name(m), setting_json(m));
        }
        return o;
    }
    case CONFIG_TYPE_LIST:
    case CONFIG_TYPE_ARRAY: {
        json_object *a = json_object_new_array();
        for (int i = 0; i < config_setting_length(s); i++)
            json_object_array_add(a, setting_json(config_setting_get_elem(s, (unsigned)i)));
        return a;
    }
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return json_object_new_int64(config_setting_get_int64(s));
    case CONFIG_TYPE_FLOAT:
        return json_object_new_double(config_setting_get_float(s));
    case CONFIG_TYPE_BOOL:
        return json_object_new_boolean(config_setting_get_bool(s));
    case CONFIG_TYPE_STRING:
        return json_object_new_string(config_setting_get_string(s));
    default:
        return NULL;
    }
}

static json_object *kind_json(const char *kind, const char *api, int with_field, const char *field)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", jstr(kind));
    json_object_object_add(o, "api_version", jstr(api));
    if (with_field)
        json_object_object_add(o, "scheduler_name_field", jstr(field));
    return o;
}

static json_object *plugin_json(const cfg_plugin *pl)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", jstr(pl->name));
    json_object_object_add(o, "as", jstr(pl->instance));
    json_object_object_add(o, "path", jstr(pl->path));
    json_object_object_add(o, "weight", json_object_new_int(pl->weight));
    json_object_object_add(o, "ignorable", json_object_new_boolean(pl->ignorable));
    json_object *pts = json_object_new_array();
    for (unsigned bit = 1; bit & PT_ALL; bit <<= 1)
        if (pl->points & bit)
            json_object_array_add(pts, json_object_new_string(config_point_name(bit)));
    json_object_object_add(o, "points", pts);
    json_object_object_add(o, "args", pl->args ? setting_json(pl->args) : json_object_new_object());
    return o;
}

static json_object *profile_json(const cfg_profile *p)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", jstr(p->name));
    json_object_object_add(o, "default", json_object_new_boolean(p->is_default));
    json_object_object_add(
        o, "workload",
        kind_json(p->workload_kind, p->workload_api_version, 1, p->scheduler_name_field));
    json_object_object_add(o, "target", kind_json(p->target_kind, p->target_api_version, 0, NULL));
    json_object *b = json_object_new_object();
    json_object_object_add(b, "field", jstr(p->binding_field));
    json_object_object_add(b, "also_counts", jstr_array(p->also_counts, p->n_also_counts));
    json_object_object_add(o, "binding", b);
    json_object_object_add(o, "tie_break", jstr(p->tie_break_desc ? "name-desc" : "name"));
    json_object_object_add(o, "score_mode", jstr(p->lexicographic ? "lexicographic" : "weighted"));
    json_object_object_add(o, "percentage_of_targets_to_score",
                           json_object_new_int(p->percentage_to_score));
    json_object_object_add(o, "equivalence_cache",
                           json_object_new_boolean(p->equivalence_cache));
    json_object_object_add(o, "unschedulable_message",
                           jstr(p->per_target_message ? "per-target" : "summary"));
    json_object_object_add(o, "target_noun", jstr(p->target_noun));
    json_object_object_add(o, "events", json_object_new_boolean(p->events));
    json_object_object_add(o, "taints_field", jstr(p->taints_field));
    json_object_object_add(o, "cordon_taint", jstr(p->cordon_taint));
    json_object_object_add(o, "capacity_field", jstr(p->capacity_field));
    json_object *bo = json_object_new_object();
    json_object_object_add(bo, "initial_ms", json_object_new_int64((int64_t)p->backoff_initial_ms));
    json_object_object_add(bo, "max_ms", json_object_new_int64((int64_t)p->backoff_max_ms));
    json_object_object_add(o, "backoff", bo);
    json_object_object_add(o, "max_unschedulable_ms",
                           json_object_new_int64((int64_t)p->max_unschedulable_ms));
    json_object_object_add(o, "hook_deadline_ms", json_object_new_int64(p->hook_deadline_ms));
    json_object_object_add(o, "bind_deadline_ms", json_object_new_int64(p->bind_deadline_ms));
    json_object *pls = json_object_new_array();
    for (size_t i = 0; i < p->n_plugins; i++)
        json_object_array_add(pls, plugin_json(&p->plugins[i]));
    json_object_object_add(o, "plugins", pls);
    return o;
}

char *config_to_json(const cfg *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", jstr(c->file));
    json_object_object_add(o, "plugin_dirs", jstr_array(c->plugin_dirs, c->n_plugin_dirs));
    json_object_object_add(o, "parallelism", json_object_new_int(c->parallelism));
    json_object *st = json_object_new_object();
    json_object_object_add(st, "type", jstr(c->store_type));
    json_object_object_add(st, "path", jstr(c->store_path));
    json_object_object_add(o, "store", st);
    json_object *h = json_object_new_object();
    json_object_object_add(h, "enabled", json_object_new_boolean(c->http_enabled));
    json_object_object_add(h, "address", jstr(c->http_address));
    json_object_object_add(h, "port", json_object_new_int(c->http_port));
    json_object_object_add(h, "liveness_timeout_ms", json_object_new_int64(c->liveness_timeout_ms));
    json_object_object_add(o, "http", h);
    json_object *profs = json_object_new_array();
    for (size_t i = 0; i < c->n_profiles; i++)
        json_object_array_add(profs, profile_json(&c->profiles[i]));
    json_object_object_add(o, "profiles", profs);
    char *text = xasprintf("%s\n", json_object_to_json_string_ext(
                                       o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                              JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return text;
}
