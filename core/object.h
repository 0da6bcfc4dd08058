/*
 * object.h - in-memory Kubernetes-shaped objects and their values.
 *
 * Every manifest document the stores read becomes one trellis_object: a
 * json-c tree plus its identity (apiVersion, kind, namespace, name, uid),
 * cached pointers to labels and annotations, where it came from (file,
 * document, List item, line) and the slots the plugin registry fills with
 * prepared data. Objects are immutable once built and reference counted; a
 * change to an object is a new object. A trellis_value handle is a json-c
 * node in disguise, so the SDK never sees json-c.
 */
#ifndef TRELLIS_OBJECT_H
#define TRELLIS_OBJECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "trellis/plugin.h"

struct trellis_object {
    json_object *root; /* owned (one reference) */
    /* identity: borrowed from root, "" when absent */
    const char *api_version;
    const char *kind;
    const char *namespace_;
    const char *name;
    const char *uid;
    json_object *labels;      /* borrowed, NULL when absent */
    json_object *annotations; /* borrowed, NULL when absent */
    char *key; /* "namespace/name", or "name" for cluster-scoped; owned */

    /* provenance, set by the store that read it */
    char *file;   /* owned, NULL when not from a file */
    int doc;      /* 0-based document index in the file */
    int item;     /* index in a kind: List's items, -1 when not in a List */
    int line;     /* 1-based line where the document (or item) starts */
    uint64_t version; /* store version, bumped on every change */

    /* atomic so that a reference may be dropped from any thread */
    atomic_int refs;

    /* filled by the registry (plugin.c): prepared data per plugin slot,
     * counters per workload, an error when a plugin's prepare failed */
    void **aux;
    size_t naux;
    int64_t *counters; /* workloads: the plugins' counter amounts */
    int64_t *tvalues;  /* targets: the plugins' target values */
    char *prepare_error;     /* the first failure's message */
    int prepare_failed_slot; /* the first failing slot, -1 when none failed */
    unsigned char *failed;   /* naux flags: that slot's prepare failed */
};

/* Build an object from a json-c tree; ownership of root transfers to the
 * object (on failure too). Returns NULL with err filled when root is not a
 * map or lacks apiVersion, kind or metadata.name, or when those are not
 * strings. */
trellis_object *object_new(json_object *root, char *err, size_t errlen);
/* Parse a JSON text into an object (used by create_target). */
trellis_object *object_from_json(const char *text, char *err, size_t errlen);
trellis_object *object_ref(trellis_object *o);
void object_unref(trellis_object *o);
/* Set provenance; file is copied. */
void object_set_origin(trellis_object *o, const char *file, int doc, int item,
                       int line);

const char *object_label(const trellis_object *o, const char *key);
const char *object_annotation(const trellis_object *o, const char *key);
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
const trellis_value *value_at(const trellis_value *list, size_t i);
const trellis_value *value_get(const trellis_value *map, const char *key);
const trellis_value *value_path(const trellis_value *v, const char *path);
int value_foreach(const trellis_value *map,
                  int (*cb)(const char *key, const trellis_value *v, void *ud),
                  void *ud);

#endif
