/*
 * fieldline.h - where a field stands in a YAML or JSON document's text:
 * the line of "spec.priority" in document 3 of a manifest file, so that a
 * bad value is reported at the field's own line, not at the document's
 * first; the line of a member of a plugin's document argument (an unknown
 * key of a configuration file), so that the plugin's message names file
 * and line. Looked up again in the text when something is found wrong
 * (rare), so objects and value trees carry no per-field positions.
 */
#ifndef TRELLIS_FIELDLINE_H
#define TRELLIS_FIELDLINE_H

#include <stddef.h>

/* The 1-based line of the key keys[depth - 1] of the map member reached
 * from the root of the first document in text[0..len) by the keys
 * keys[0..depth) (depth 0: the line where the document starts). 0 when
 * the text does not parse up to it or has no such member. Ownership of
 * every argument is retained by the caller. */
int fieldline_in_text(const char *text, size_t len, const char *const *keys, size_t depth);

/* The 1-based line of path (object_get's syntax: a.b[0].c,
 * a["x.y"]) in document doc (item >= 0: that item of a List document)
 * of the YAML or JSON file, as the file reads now: a map key's line for
 * a key, an element's for an index. 0 when the file cannot be read, is
 * larger than 4 MiB, or has no such field there. */
int fieldline_find(const char *file, int doc, int item, const char *path);

#endif
