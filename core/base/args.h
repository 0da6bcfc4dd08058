/*
 * args.h - plugin arguments checked against the plugin's declared schema.
 *
 * The loader hands each plugin instance its profile's `args` group and the
 * plugin's trellis_arg_spec table; args_build fills defaults, checks types,
 * and rejects unknown keys and missing required ones with the config file
 * and line. The result is the trellis_args the plugin reads in init.
 */
#ifndef TRELLIS_ARGS_H
#define TRELLIS_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

#include "trellis/plugin.h"

typedef struct arg_value {
    const trellis_arg_spec *spec;
    char *s;     /* string form (STRING) */
    int64_t i;   /* INT, BOOL */
    double d;    /* DOUBLE */
    char **list; /* STRING_LIST */
    size_t n_list;
    /* DOCUMENT: the file it is read from (resolved against the config's
     * directory) or, when NULL, the inline text in s; where it was set
     * (for messages); the parsed document, set by whoever parses it (the
     * loader), and how to free it */
    char *path;
    char *where; /* "file:line" where it was set */
    void *doc;
    void (*doc_free)(void *);
    /* the text the document was parsed from, kept to find a member's line
     * again (fieldline.h) */
    char *text;
    size_t text_len;
} arg_value;

struct trellis_args {
    arg_value *v;
    size_t n;
};

/* Build args from a libconfig group (may be NULL: defaults only), then
 * from the profile's shared group (plugin_args; may be NULL) for the keys
 * the schema declares and the group does not set (keys it does not
 * declare belong to other plugins). `file` names the config in messages.
 * Returns NULL with err filled on error; ownership of the result
 * transfers to the caller (args_free). */
trellis_args *args_build(const trellis_arg_spec *spec, const config_setting_t *group,
                         const config_setting_t *shared, const char *file, char *err,
                         size_t errlen);
void args_free(trellis_args *a);
/* The value for key, or NULL when the schema has no such key. */
const arg_value *args_find(const trellis_args *a, const char *key);
/* Type name for messages and `trellis plugins`. */
const char *args_type_name(trellis_arg_type t);

/* host-table accessors */
const char *args_string(const trellis_args *a, const char *key);
int64_t args_int(const trellis_args *a, const char *key);
int args_bool(const trellis_args *a, const char *key);
double args_double(const trellis_args *a, const char *key);
size_t args_list_len(const trellis_args *a, const char *key);
const char *args_list_at(const trellis_args *a, const char *key, size_t i);

#endif
