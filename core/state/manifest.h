/*
 * manifest.h - reading manifest files into objects.
 *
 * YAML files (.yaml, .yml; multi-document) are read with libyaml, JSON files
 * (.json; one value, or several concatenated) with object.c's reader, json-c
 * deciding what that reader leaves to it. A document of
 * kind List (or any kind ending in "List" that has items) is expanded into
 * its items. Every document that is not a valid object is reported with
 * file, line and what was expected, and skipped; the others load.
 */
#ifndef TRELLIS_MANIFEST_H
#define TRELLIS_MANIFEST_H

#include <stddef.h>

#include "object.h"

typedef struct manifest_error {
    char *file;    /* owned */
    int line;      /* 1-based, 0 when unknown */
    int doc;       /* 0-based document index */
    char *message; /* owned: "document 2: missing metadata.name" */
} manifest_error;

typedef struct manifest_set {
    trellis_object **objects; /* each holds one reference */
    size_t n_objects, cap_objects;
    manifest_error *errors;
    size_t n_errors, cap_errors;
} manifest_set;

void manifest_set_init(manifest_set *s);
void manifest_set_free(manifest_set *s);
/* Append an error about file (copied) at line and document doc; message
 * is malloc'd and owned by s from now on. */
void manifest_add_error(manifest_set *s, const char *file, int line, int doc, char *message);

/* Whether a file name is one the loader reads (by extension). */
int manifest_is_manifest_name(const char *name);

/* Parse one file's text and append its objects and errors to s. `file` is
 * used for provenance and messages. Returns 0, or -1 when the whole file is
 * unreadable as its format (the error is appended to s too). */
int manifest_parse(const char *file, const char *text, size_t len, manifest_set *s);
/* Where document doc of a YAML text starts (its "---" or its first
 * node), numbered as manifest_parse numbers documents, syntax errors
 * before it included; -1 when the text has no such document. */
long manifest_doc_start(const char *text, size_t len, int doc);
/* One YAML or JSON document of any shape (a plugin's structured
 * argument) as an object whose root is the document; `where` names it in
 * messages. NULL with err ("where:line: what") when the text is not
 * exactly one well-formed document. Ownership transfers to the caller. */
trellis_object *manifest_parse_document(const char *where, const char *text, size_t len, char *err,
                                        size_t errlen);
/* Read and parse a file. -1 when it cannot be read (error appended). */
int manifest_load_file(const char *file, manifest_set *s);

#endif
