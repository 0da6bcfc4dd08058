/*
 * docline.h - where a member stands in a document's text.
 *
 * The host keeps a plugin's document argument (a YAML or JSON file) as a
 * value tree without positions; when a plugin refuses a member of it (an
 * unknown key of a configuration file), the host finds the member's line
 * again in the text it read, so the message can name file and line.
 */
#ifndef TRELLIS_DOCLINE_H
#define TRELLIS_DOCLINE_H

#include <stddef.h>

/* The 1-based line of the key path[depth - 1] of the map member reached
 * from the root of the first document in text by the keys path[0..depth)
 * (depth 0: the line where the document starts). 0 when the text does not
 * parse or has no such member. Ownership of every argument is retained by
 * the caller. */
int docline_find(const char *text, size_t len, const char *const *path, size_t depth);

#endif
