/*
 * object.h - in-memory Kubernetes-shaped objects and their values.
 *
 * Every manifest document the stores read becomes one trellis_object: one
 * allocation holding the object's identity and provenance followed by its
 * value tree in a compact, immutable form (an array of small nodes and the
 * string bytes they point into; map keys are interned for the process),
 * plus the slots the plugin registry fills with prepared data. Objects are immutable once built and
 * reference counted; a change to an object is a new object. A trellis_value handle is a pointer to
 * a node inside its object's block, so the SDK never sees how values are stored, and reading them
 * never allocates or writes.
 *
 * Trees are built with an object builder (obuild): the manifest parsers
 * (JSON text, libyaml events) and the json-c converter push values into it,
 * and object_build lays one value out as a new object.
 */
#ifndef TRELLIS_OBJECT_H
#define TRELLIS_OBJECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "trellis/plugin.h"

struct trellis_object {
    const trellis_value *root; /* the value tree, inside this allocation */
    /* identity: inside this allocation, "" when absent */
    const char *api_version;
    const char *kind;
    const char *namespace_;
    const char *name;
    const char *uid;
    const trellis_value *labels;      /* NULL when absent or not a map */
    const trellis_value *annotations; /* NULL when absent or not a map */
    const char *key;                  /* "namespace/name", or "name" for cluster-scoped */
    const char *id;                   /* "Kind/namespace/name" (namespace "" when cluster-
                                         scoped): what stores and indexes key objects by */
    uint64_t id_hash;                 /* hmap_hash(id): the maps keyed by id use it */

    /* provenance, set by the store that read it */
    const char *file; /* shared with every object of that file; NULL when
                         not from a file */
    uint64_t version; /* store version, bumped on every change */

    /* filled by the registry (plugin.c): prepared data per plugin slot,
     * counters per workload, an error when a plugin's prepare failed */
    void **aux;
    size_t naux;
    int64_t *counters;     /* may follow aux[naux] in aux's allocation */
    int64_t *tvalues;      /* targets: the plugins' target values */
    char *prepare_error;   /* the first failure's message */
    unsigned char *failed; /* naux flags: that slot's prepare failed */

    /* the small fields together, so that the header has no holes (there
     * is one per object) */
    uint32_t tree_size;      /* bytes of the value tree (nodes and strings) */
    int doc;                 /* 0-based document index in the file */
    int item;                /* index in a kind: List's items, -1 when not in a List */
    int line;                /* 1-based line where the document (or item) starts */
    int prepare_failed_slot; /* the first failing slot, -1 when none failed */
    /* atomic so that a reference may be dropped from any thread */
    atomic_int refs;
};

/* Build an object from a json-c tree; ownership of root transfers to the
 * object (the tree is converted and released, on failure too). Returns NULL
 * with err filled when root is not a map or lacks apiVersion, kind or
 * metadata.name, or when those are not strings. */
trellis_object *object_new(json_object *root, char *err, size_t errlen);
/* A new object with o's content and provenance (file, position, version),
 * unprepared: what a plugin prepares again. NULL only when memory runs
 * out. */
trellis_object *object_copy(const trellis_object *o);
/* Parse a JSON text into an object (used by create_target). */
trellis_object *object_from_json(const char *text, char *err, size_t errlen);
trellis_object *object_ref(trellis_object *o);
void object_unref(trellis_object *o);
/* Set provenance; file is interned (objects of one file share it). */
void object_set_origin(trellis_object *o, const char *file, int doc, int item, int line);
/* hmap_hash(o->file), kept with the shared name (o->file not NULL) */
uint64_t object_file_hash(const trellis_object *o);
/* Whether two objects hold the same value tree, byte for byte (the same
 * document parsed twice gives the same tree). */
int object_same_content(const trellis_object *a, const trellis_object *b);
/* Whether a and b differ at most in their status (what a controller
 * reports, not what it is asked for). */
int object_same_but_status(const trellis_object *a, const trellis_object *b);
/* The object's tree as a new json-c tree; ownership transfers to the
 * caller. */
json_object *object_to_json(const trellis_object *o);
/* A value as a new json-c tree (NULL for null); ownership transfers. */
json_object *value_to_json(const trellis_value *v);
struct strbuf;
/* Append to b the text json-c gives object_to_json(o) with
 * JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
 * JSON_C_TO_STRING_NOSLASHESCAPE (how the file store writes a new
 * object), byte for byte, without building the json-c tree. 0, or -1
 * (b as it was) when o holds a map with a key twice, which only json-c's
 * own rules word. Ownership of o and b is retained by the caller. */
int object_json_pretty(const trellis_object *o, struct strbuf *b);
/* The n bytes at s as json-c writes a string (json_escape_str with
 * JSON_C_TO_STRING_NOSLASHESCAPE), quotes included, appended to b. */
void object_json_string(struct strbuf *b, const char *s, size_t n);

const char *object_label(const trellis_object *o, const char *key);
const char *object_annotation(const trellis_object *o, const char *key);
/* Whether o is being deleted (metadata.deletionTimestamp is set, the
 * Kubernetes API's convention every store follows). */
int object_being_deleted(const trellis_object *o);
/* Path lookup, see trellis_host.object_get for the syntax. */
const trellis_value *object_get(const trellis_object *o, const char *path);
/* "Kind namespace/name" for messages; writes into buf and returns it. */
const char *object_describe(const trellis_object *o, char *buf, size_t len);

/* value functions behind the SDK's value_* (see plugin.h for contracts) */
trellis_value_type value_type(const trellis_value *v);
const char *value_string(const trellis_value *v);
int value_int(const trellis_value *v, int64_t *out);
int value_double(const trellis_value *v, double *out);
int value_bool(const trellis_value *v, int *out);
size_t value_len(const trellis_value *v);
/* A string value's bytes (NUL-terminated; *len of them, NULs within
 * counted), or NULL when v is not a string. */
const char *value_string_len(const trellis_value *v, size_t *len);
const trellis_value *value_at(const trellis_value *list, size_t i);
/* The index of list's first item that is not a string; SIZE_MAX when all
 * are (or list is not a list). */
size_t value_first_non_string(const trellis_value *list);
const trellis_value *value_get(const trellis_value *map, const char *key);
const trellis_value *value_path(const trellis_value *v, const char *path);
/* One key or [index] of path from v, starting at path[*pos]: the value
 * it names, *pos moved past it (and past the '.' before it), so that
 * path[*pos] is '\0' at the end. NULL when v holds no such value or the
 * path is malformed there. What value_path does a step at a time. */
const trellis_value *value_step(const trellis_value *v, const char *path, size_t *pos);
int value_foreach(const trellis_value *map,
                  int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud);

/* ---- building ---------------------------------------------------------- */

/* A builder holds the values of one document while it is parsed; each
 * value is named by an oref. Containers are built on a stack: ob_open
 * returns a mark, members are added, ob_close_list / ob_close_map turn
 * them into one value. A value may be used in several places (a YAML
 * alias); object_build copies it into each. Not thread-safe: one builder
 * per parsing thread. */
typedef struct obuild obuild;
typedef uint32_t oref;

obuild *obuild_new(void);
void obuild_free(obuild *b);
/* Forget every value built (keeps the memory for the next document). */
void obuild_clear(obuild *b);
/* The calling thread's builder, cleared (not freed by the caller; the
 * next obuild_thread call on the thread clears it again). */
obuild *obuild_thread(void);

oref ob_null(obuild *b);
oref ob_bool(obuild *b, int v);
/* text: how value_string shows it; NULL for the decimal form. */
oref ob_int(obuild *b, int64_t v, const char *text);
oref ob_double(obuild *b, double v, const char *text);
oref ob_string(obuild *b, const char *s, size_t len);
/* A json-c tree (borrowed) as a value. */
oref ob_json(obuild *b, json_object *j);
/* json-c keeps a key only up to a NUL: after ob_json, hand it the text the
 * tree came from, so that an escaped NUL (\u0000) anywhere in it makes
 * object_build refuse the document instead of keeping a key cut short. */
void ob_note_json_text(obuild *b, const char *text, size_t len);

size_t ob_open(obuild *b);
void ob_item(obuild *b, oref v);
/* Add key (cut at a NUL, as json-c keys are) to the map opened at mark.
 * When the key is there already: with replace, its value becomes v (the
 * member keeps its place); returns 1 either way, 0 when added. */
int ob_member(obuild *b, size_t mark, const char *key, size_t len, oref v, int replace);
/* The same in two steps, for a parser that must keep the key while it
 * reads the value: ob_key keeps the key's bytes (cut at a NUL) and returns
 * a handle for ob_member_at and ob_key_text. */
uint32_t ob_key(obuild *b, const char *key, size_t len);
const char *ob_key_text(const obuild *b, uint32_t key);
int ob_member_at(obuild *b, size_t mark, uint32_t key, oref v, int replace);
oref ob_close_list(obuild *b, size_t mark);
oref ob_close_map(obuild *b, size_t mark);
/* Add the members of the built map src that the map at mark lacks. */
void ob_merge(obuild *b, size_t mark, oref src);

/* Reading built values (List expansion, YAML merge keys and alias keys). */
trellis_value_type ob_type(const obuild *b, oref v);
size_t ob_len(const obuild *b, oref v);
oref ob_at(const obuild *b, oref list, size_t i);
/* The member's value, or OB_NONE. */
oref ob_get(const obuild *b, oref map, const char *key);
/* Text of a scalar as value_string gives it; "null" for null. */
const char *ob_text(const obuild *b, oref v);
#define OB_NONE UINT32_MAX

/* Lay out v as a new object (one reference); NULL with err filled as
 * object_new says. */
trellis_object *object_build(obuild *b, oref v, char *err, size_t errlen);
/* The same for a document of any shape, without identity (a plugin's
 * structured argument): kind, name and the rest are "". */
trellis_object *object_build_document(obuild *b, oref v, char *err, size_t errlen);

/* The builder's scratch buffer, grown to at least need bytes (its
 * contents kept); valid until the next call. */
char *ob_scratch(obuild *b, size_t need);

/* Parse one JSON value starting at text[0] (after any white space) into b
 * with the rules json-c applies in strict mode. Returns the offset just
 * past the value, or 0 when the text is not one this fast reader takes
 * (then json-c decides: it may accept what this refuses, and its error is
 * the one to report). */
size_t ob_parse_json(obuild *b, const char *text, size_t len, oref *out); /* jsonread.c */
/* ob_parse_json refusing (0) a text with a value nested max_nest deep or
 * more (the document's own container at depth 0): json-c's rule, for a
 * text json_tokener_parse (max_nest JSON_TOKENER_DEFAULT_DEPTH) would
 * read. */
size_t ob_parse_json_nest(obuild *b, const char *text, size_t len, int max_nest, oref *out);

#endif
