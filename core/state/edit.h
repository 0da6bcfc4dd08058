/*
 * edit.h - store edits checked and resolved against an object.
 *
 * What every store does with a store_edit before it writes it: check that
 * it can be placed in the object as read (every parent on the path a map
 * or absent, the field of the right shape), and turn a list edit into the
 * whole new list, resolved against the object and what is queued for the
 * same field before it. Paths are dotted keys, with keys that hold dots or
 * slashes in brackets: metadata.labels["kubernetes-fleet.io/parent-CRP"].
 */
#ifndef TRELLIS_EDIT_H
#define TRELLIS_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "object.h"
#include "store.h"

/* 0 when e can be placed in o: every parent on the path a map (or absent:
 * then it is created) and the field itself a scalar or absent (STORE_SET
 * of a string), anything (STORE_SET_JSON, a removal), or a list of strings
 * or absent (list edits);
 * -1 with err naming the object and the path otherwise. */
int edit_check(const trellis_object *o, const store_edit *e, char *err, size_t errlen);

/* A copy of e owning its path and value (store_edit_free frees them): an
 * edit kept past the call that made it. */
store_edit store_edit_copy(const store_edit *e);
void store_edit_free(store_edit *e);

/* What is queued for the field already (a store's pending write). */
typedef struct edit_pending {
    const char *value; /* NULL: removed */
    int json;          /* value is a JSON text, not a string */
} edit_pending;

/* A list edit (STORE_LIST_ADD, STORE_LIST_REMOVE) of o, after pending (may
 * be NULL: the object's list), as the JSON text of the whole new list
 * (malloc'd, ownership transfers). NULL with *unchanged set when nothing
 * needs writing (the value is there already, or absent); NULL with err
 * when the field is not a list of strings. A later edit of the result
 * goes through edit_list_in_place. */
char *edit_list_result(const trellis_object *o, const edit_pending *pending, const store_edit *e,
                       int *unchanged, char *err, size_t errlen);
/* A text grown in place: s (malloc'd) holds len bytes and a NUL in cap.
 * seen (malloc'd, cap_seen slots, or NULL until the first addition) is
 * edit_list_in_place's set of the hashes of the items the list has held:
 * an addition looks for its item in the text only when its hash is
 * there. All zero is an empty text; edit_text_free frees both. */
typedef struct edit_text {
    char *s;
    size_t len, cap;
    uint64_t *seen;
    size_t n_seen, cap_seen;
} edit_text;
/* The list edit e (STORE_LIST_ADD, STORE_LIST_REMOVE) of t, an earlier
 * result of edit_list_result, in place: the bytes edit_list_result would
 * give from t parsed, without parsing, printing or copying the list (a
 * Cluster gaining its thousandth finalizer in one run; an addition goes
 * at the end, after a look at the item set rather than the text). */
void edit_list_in_place(edit_text *t, const store_edit *e);
/* The list at e[0].path of o after the list edits e[0..n) of that path,
 * one after the other, as the JSON text of the whole list (malloc'd,
 * ownership transfers): what applying them one by one to the object makes
 * of it (a list, even when no item changed), read once and edited in
 * place. NULL with err when the field is not a list of strings. */
char *edit_lists_result(const trellis_object *o, const store_edit *e, size_t n, char *err,
                        size_t errlen);
void edit_text_free(edit_text *t);

/* Apply e to a json-c tree in place (an object created in this run and
 * not written yet: its patches go to it). Missing parents are created. 0,
 * or -1 with err (a parent that is not a map, a list that is not one of
 * strings, a JSON value that does not parse). */
int edit_apply_json(json_object *root, const store_edit *e, char *err, size_t errlen);
/* A new object: edits[0..n) applied in order to an empty map, as
 * edit_apply_json and object_new make it (the same members in the same
 * order, the same error), without a json-c tree when every edit sets a
 * string or a JSON text or adds to a list it made. One reference; NULL with
 * err. */
trellis_object *edit_build_object(const store_edit *edits, size_t n, char *err, size_t errlen);
/* o with edits[0..n) applied, as a new object (ownership transfers; the
 * version is o's), all or none: NULL with err when an edit cannot be
 * applied or would change the object's identity. */
trellis_object *edit_apply_object(const trellis_object *o, const store_edit *edits, size_t n,
                                  char *err, size_t errlen);

#endif
