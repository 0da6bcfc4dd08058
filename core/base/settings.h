/*
 * settings.h - config settings declared as tables.
 *
 * A group of the config file (a profile, its `backoff`, ...) is described
 * by a table of settings with the columns of a plugin's argument table
 * (key, type, default, doc) plus where the value goes in the struct it
 * fills. From the one table come: reading the group (types, ranges,
 * choices, required keys, unknown keys refused with the list of the
 * known ones, each error naming file and line), the defaults, the value
 * as JSON (/configz), the help `trellis validate --describe profile`
 * prints, and freeing what was read.
 */
#ifndef TRELLIS_SETTINGS_H
#define TRELLIS_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>
#include <libconfig.h>

typedef enum {
    SET_STRING,    /* char *, NULL when absent without a default */
    SET_PATH,      /* char *, a dotted path like spec.nodeName */
    SET_PATH_LIST, /* char ** + size_t count (at off and count_off) */
    SET_STRING_LIST,
    SET_BOOL,   /* int */
    SET_INT,    /* int, uint32_t or uint64_t by size, within min..max */
    SET_CHOICE, /* int: the index of the text in choices */
    SET_GROUP,  /* a group of its own table (members) */
    SET_CUSTOM  /* read by the caller (e.g. the plugin list): only its key
                   is known here */
} set_type;

typedef struct setting {
    const char *key;
    set_type type;
    const char *def; /* default as text ("true", "100", "a,b"); NULL: none */
    int required;
    long long min, max;
    const char *const *choices;    /* SET_CHOICE, NULL-terminated */
    size_t off;                    /* into the struct filled */
    size_t size;                   /* SET_INT: 4 or 8 bytes; SET_*_LIST: count_off */
    const struct setting *members; /* SET_GROUP */
    const char *doc;
    const char *alias_of; /* an older spelling of that key (same offset):
                             read, never printed */
} setting;

/* Set every default of the table (groups included) in base. */
void settings_defaults(const setting *tab, void *base);
/* Read group g (NULL: absent) into base per the table; file names the
 * config for messages. 0, or -1 with err "file:line: what". */
int settings_load(const setting *tab, const config_setting_t *g, void *base, const char *file,
                  char *err, size_t errlen);
/* base as a JSON object, under the config's names (SET_CUSTOM skipped). */
json_object *settings_json(const setting *tab, const void *base);
/* Free the strings and lists read into base. */
void settings_free(const setting *tab, void *base);
/* One line per setting: key (with its group), type, default, doc. */
void settings_describe(FILE *f, const setting *tab, const char *prefix);

#endif
