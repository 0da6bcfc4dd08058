/*
 * fieldline.h - where a field of a manifest document is: the line of
 * "spec.priority" in document 3 of a file, so that a bad value is
 * reported at the field's own line, not at the document's first. Looked
 * up again from the file when a value is found wrong (rare), so objects
 * carry no per-field positions.
 */
#ifndef TRELLIS_FIELDLINE_H
#define TRELLIS_FIELDLINE_H

/* The 1-based line of path (object_get's syntax: a.b[0].c,
 * a["x.y"]) in document doc (item >= 0: that item of a List document)
 * of the YAML or JSON file, as the file reads now: a map key's line for
 * a key, an element's for an index. 0 when the file cannot be read, is
 * larger than 4 MiB, or has no such field there. */
int fieldline_find(const char *file, int doc, int item, const char *path);

#endif
