/*
 * fuzz_config.c - the host configuration (cfg.c) and plugin arguments
 * checked against a schema (args.c).
 *
 * config_load reads a file, so each input is written to a file in a
 * private temporary directory first. Inputs that mention "include" are
 * skipped: libconfig's @include would read whatever file the input names,
 * which is neither the parser's business nor safe to fuzz. When the config
 * loads, every plugin entry's args group is checked against two schemas
 * (one with a default for every type, one with a required key), every
 * accessor is read, and /configz's JSON must be JSON.
 */
#include "config.h"

#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "args.h"
#include "cfg.h"
#include "fuzz.h"

static char dir[64], file[96];

static void cleanup(void)
{
    unlink(file);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof dir, "%s/trellis-fuzz-cfg.XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    snprintf(file, sizeof file, "%s/fuzz.cfg", dir);
    atexit(cleanup);
    return 0;
}

/* Argument schemas shaped like the in-tree plugins' tables. */
static const trellis_arg_spec defaults_spec[] = {
    {"field", TRELLIS_ARG_STRING, "spec.nodeSelector", "dotted path of the selector"},
    {"format", TRELLIS_ARG_STRING, "map", "map or selector"},
    {"count", TRELLIS_ARG_INT, "3", "an integer"},
    {"enabled", TRELLIS_ARG_BOOL, "false", "a switch"},
    {"ratio", TRELLIS_ARG_DOUBLE, "0.5", "a number"},
    {"resources", TRELLIS_ARG_STRING_LIST, "cpu, memory,pods", "resources counted"},
    {"scheduler", TRELLIS_ARG_DOCUMENT, "{}", "a document (file or inline)"},
    {NULL, 0, NULL, NULL},
};
static const trellis_arg_spec required_spec[] = {
    {"priority_field", TRELLIS_ARG_STRING, NULL, "dotted path of the priority"},
    {"distances", TRELLIS_ARG_STRING_LIST, "", "region distances"},
    {NULL, 0, NULL, NULL},
};

static void check_args(const trellis_arg_spec *spec, const cfg *c, const cfg_plugin *pl)
{
    char err[512] = "";
    trellis_args *a = args_build(spec, pl->args, NULL, c->file, err, sizeof err);

    if (!a) {
        FUZZ_CHECK(err[0], "args_build failed without a message");
        return;
    }
    for (size_t i = 0; spec[i].key; i++) {
        const char *k = spec[i].key;
        const arg_value *v = args_find(a, k);

        FUZZ_CHECK(v && v->spec == &spec[i], "args_find(%s)", k);
        switch (spec[i].type) {
        case TRELLIS_ARG_STRING:
            FUZZ_CHECK(args_string(a, k) != NULL, "%s: no string", k);
            break;
        case TRELLIS_ARG_BOOL:
            FUZZ_CHECK(args_bool(a, k) == 0 || args_bool(a, k) == 1, "%s: %d", k, args_bool(a, k));
            break;
        case TRELLIS_ARG_INT:
            (void)args_int(a, k);
            break;
        case TRELLIS_ARG_DOUBLE:
            (void)args_double(a, k);
            break;
        case TRELLIS_ARG_STRING_LIST:
            for (size_t j = 0; j < args_list_len(a, k); j++)
                FUZZ_CHECK(args_list_at(a, k, j) != NULL, "%s[%zu]", k, j);
            FUZZ_CHECK(args_list_at(a, k, args_list_len(a, k)) == NULL, "%s: past the end", k);
            break;
        case TRELLIS_ARG_DOCUMENT:
            /* a file name or inline text, and where it was set */
            FUZZ_CHECK(!(v->path && v->s), "%s: both a file and inline text", k);
            FUZZ_CHECK(!(v->path || v->s) || v->where, "%s: no place for messages", k);
            break;
        }
    }
    FUZZ_CHECK(args_find(a, "no-such-key") == NULL, "args_find of an unknown key");
    args_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const trellis_arg_spec no_args[] = {{NULL, 0, NULL, NULL}};

    for (size_t i = 0; i + 7 <= size; i++)
        if (strncasecmp((const char *)data + i, "include", 7) == 0)
            return 0;
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();

    cfg c;
    char err[1024] = "";
    if (config_load(file, &c, err, sizeof err) < 0) {
        FUZZ_CHECK(err[0], "config_load failed without a message");
        return 0;
    }
    FUZZ_CHECK(c.n_profiles > 0, "a config without profiles loaded");
    for (size_t i = 0; i < c.n_profiles; i++) {
        const cfg_profile *p = &c.profiles[i];

        FUZZ_CHECK(p->name && p->workload_kind && p->target_kind && p->binding_field,
                   "profile %zu lacks a setting", i);
        for (size_t j = 0; j < p->n_plugins; j++) {
            const cfg_plugin *pl = &p->plugins[j];

            FUZZ_CHECK(pl->name && pl->instance, "profile %zu plugin %zu", i, j);
            check_args(defaults_spec, &c, pl);
            check_args(required_spec, &c, pl);
            check_args(no_args, &c, pl);
        }
    }
    char *json = config_to_json(&c);
    FUZZ_CHECK(json != NULL, "config_to_json");
    /* args groups nest as deep as libconfig lets them */
    json_tokener *tok = json_tokener_new_ex(100000);
    json_object *j = json_tokener_parse_ex(tok, json, (int)strlen(json) + 1);
    FUZZ_CHECK(j != NULL, "config_to_json is not JSON: %s: %s", json,
               json_tokener_error_desc(json_tokener_get_error(tok)));
    json_object_put(j);
    json_tokener_free(tok);
    free(json);
    config_free(&c);
    return 0;
}
