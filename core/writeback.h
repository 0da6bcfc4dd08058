/*
 * writeback.h - format-preserving edits of manifest files.
 *
 * A binding is written back by editing the text of the file the workload
 * came from, not by re-serialising it: every other document, field, comment
 * and blank line stays byte for byte, so `git diff` shows only the new
 * field. Edits set a scalar string field or remove it, addressed by document
 * index, List item and a dotted path of plain keys ("spec.nodeName");
 * missing parent maps are created. Files are replaced atomically (temporary
 * file in the same directory, fsync, rename, fsync of the directory).
 */
#ifndef TRELLIS_WRITEBACK_H
#define TRELLIS_WRITEBACK_H

#include <stddef.h>

typedef struct wb_edit {
    int doc;           /* 0-based document index */
    int item;          /* index in a List's items, -1 when not in a List */
    const char *path;  /* dotted plain keys, e.g. "spec.nodeName" */
    const char *value; /* new string value, NULL to remove the field */
} wb_edit;

/* Apply edits to a YAML (is_json == 0) or JSON text. On success *out is a
 * malloc'd NUL-terminated text (ownership transfers to the caller) and
 * *outlen its length. -1 with err filled when an edit cannot be placed (the
 * document or item does not exist, a parent on the path is not a map, the
 * text does not parse); nothing is produced then. */
int writeback_apply(const char *text, size_t len, int is_json,
                    const wb_edit *edits, size_t n, char **out,
                    size_t *outlen, char *err, size_t errlen);

/* Replace `path` by data atomically. 0, or -1 with err filled (the original
 * file is untouched then). The file's permission bits are kept. */
int writeback_write_atomic(const char *path, const char *data, size_t len,
                           char *err, size_t errlen);

#endif
