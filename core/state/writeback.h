/*
 * writeback.h - format-preserving edits of manifest files.
 *
 * A binding is written back by editing the text of the file the workload
 * came from, not by re-serialising it: every other document, field, comment
 * and blank line stays byte for byte, so `git diff` shows only the new
 * field. Edits set a scalar string field, set a field to any JSON value
 * ("raw" edits: a list, a map, a number...) or remove it, addressed by
 * document index, List item and a dotted path of plain keys
 * ("spec.nodeName"); missing parent maps are created. Files are replaced
 * atomically (temporary file in the same directory, fsync, rename, fsync of
 * the directory).
 */
#ifndef TRELLIS_WRITEBACK_H
#define TRELLIS_WRITEBACK_H

#include <stddef.h>

/* Callers must zero the whole struct before filling it in (calloc, memset,
 * "= {0}", designated initialisers), so that fields added later default to
 * today's behaviour; positional initialisers must list every field. */
typedef struct wb_edit {
    int doc;           /* 0-based document index */
    int item;          /* index in a List's items, -1 when not in a List */
    const char *path;  /* dotted plain keys, e.g. "spec.nodeName" */
    const char *value; /* new value, NULL to remove the field (raw or not) */
    /* 0: value is the new string. 1: value is a JSON text (array, object,
     * string, number, true, false or null) that becomes the field's value,
     * whatever the field held before (a scalar, a block or flow
     * collection) or inserted when the field is missing. In YAML it is
     * written as a flow value on the key's line ("key: [{"a": "b"}]"); the
     * lines of an old block value go, a comment on the key's line stays.
     * In JSON it becomes the member's value, on one line. */
    int raw;
} wb_edit;

/* Apply edits to a YAML (is_json == 0) or JSON text. On success *out is a
 * malloc'd NUL-terminated text (ownership transfers to the caller) and
 * *outlen its length. -1 with err filled when an edit cannot be placed (the
 * document or item does not exist, a parent on the path is not a map, the
 * text does not parse, a raw value is not valid JSON); nothing is produced
 * then. */
int writeback_apply(const char *text, size_t len, int is_json, const wb_edit *edits, size_t n,
                    char **out, size_t *outlen, char *err, size_t errlen);

/* Remove document doc (item -1), or item `item` of the List that document
 * doc is, from a YAML or JSON text: only that document's or item's bytes
 * go (with its "---" line, its "- " line or one comma). On success *out is
 * the new malloc'd text (ownership transfers; *outlen its length) and
 * *docs_left (may be NULL) the number of documents it holds: 0 when the
 * file has nothing left to hold. -1 with err when there is no such
 * document or item, the text does not parse, or the cut would touch
 * anything else; nothing is produced then. */
int writeback_remove(const char *text, size_t len, int is_json, int doc, int item, char **out,
                     size_t *outlen, size_t *docs_left, char *err, size_t errlen);

#endif
