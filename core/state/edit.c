/*
 * edit.c - see edit.h.
 */
#include "config.h"

#include "edit.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hmap.h"
#include "util.h"

/* A field path an edit names is shorter than this. */
enum { EDIT_PATH_MAX = 512 };

/* Where the key that starts at path[i] ends: at the next '.' or '[', or
 * after a bracketed key ('["a.b/c"]', whose dots do not split). */
static size_t key_end(const char *path, size_t i)
{
    if (path[i] != '[') {
        while (path[i] && path[i] != '.' && path[i] != '[')
            i++;
        return i;
    }
    char quote = path[i + 1];
    size_t j = i + 1;
    if (quote == '"' || quote == '\'') {
        for (j = i + 2; path[j] && path[j] != quote;)
            j += path[j] == '\\' && path[j + 1] ? 2 : 1;
        if (path[j])
            j++; /* the closing quote */
    }
    while (path[j] && path[j] != ']')
        j++;
    return path[j] ? j + 1 : j;
}

static const char *type_name(trellis_value_type t)
{
    return t == TRELLIS_VALUE_MAP ? "map" : t == TRELLIS_VALUE_LIST ? "list" : "scalar";
}

store_edit store_edit_copy(const store_edit *e)
{
    return (store_edit){xstrdup(e->path), e->value ? xstrdup(e->value) : NULL, e->op};
}

void store_edit_free(store_edit *e)
{
    free((char *)e->path);
    free((char *)e->value);
}

int edit_check(const trellis_object *o, const store_edit *e, char *err, size_t errlen)
{
    const char *path = e->path ? e->path : "";
    size_t len = strlen(path);
    if (len == 0 || len >= EDIT_PATH_MAX || path[0] == '.' || path[0] == '[')
        return errf(err, errlen, "bad field path '%s'", path);
    if (e->op > STORE_LIST_REMOVE || e->op < STORE_SET)
        return errf(err, errlen, "%s: unknown edit %d", path, e->op);
    if (e->op >= STORE_LIST_ADD && !e->value)
        return errf(err, errlen, "%s %s: %s: a list edit needs a value", o->kind, o->key, path);
    /* walked a key at a time from the object's root: path[0..i) is the
     * path up to the key (what object_get of that path would read) */
    const trellis_value *v = o->root;
    size_t i = 0;
    for (;;) {
        v = value_step(v, path, &i);
        if (!v)
            return 0; /* created from here on */
        trellis_value_type t = value_type(v);
        if (path[i] && t != TRELLIS_VALUE_MAP && t != TRELLIS_VALUE_NULL)
            return errf(err, errlen, "%s %s: cannot set %s: '%.*s' is not a map", o->kind, o->key,
                        path, (int)i, path);
        if (!path[i]) {
            if (e->op == STORE_SET && e->value &&
                (t == TRELLIS_VALUE_MAP || t == TRELLIS_VALUE_LIST))
                return errf(err, errlen, "%s %s: cannot set %s: it is a %s, not a scalar", o->kind,
                            o->key, path, type_name(t));
            if (e->op >= STORE_LIST_ADD && t != TRELLIS_VALUE_LIST && t != TRELLIS_VALUE_NULL)
                return errf(err, errlen, "%s %s: cannot edit the list %s: it is a %s", o->kind,
                            o->key, path, type_name(t));
            size_t k = e->op >= STORE_LIST_ADD ? value_first_non_string(v) : SIZE_MAX;
            if (k != SIZE_MAX)
                return errf(err, errlen, "%s %s: cannot edit the list %s: item %zu is not a string",
                            o->kind, o->key, path, k);
            return 0;
        }
    }
}

/* The list a list edit e makes of old (a list of strings; NULL or null:
 * no list yet): *out a new array (owned by the caller), *changed whether
 * it differs from old. 0, or -1 with err (old is not a list of strings). */
static int list_after(json_object *old, const store_edit *e, json_object **out, int *changed,
                      char *err, size_t errlen)
{
    *out = NULL;
    int is_list = old && json_object_is_type(old, json_type_array);
    if (old && !is_list && !json_object_is_type(old, json_type_null))
        return errf(err, errlen, "cannot edit the list %s: it is not a list", e->path);
    json_object *a = json_object_new_array();
    int found = 0;
    for (size_t i = 0; is_list && i < json_object_array_length(old); i++) {
        json_object *it = json_object_array_get_idx(old, i);
        if (!json_object_is_type(it, json_type_string)) {
            json_object_put(a);
            return errf(err, errlen, "cannot edit the list %s: item %zu is not a string", e->path,
                        i);
        }
        int same = strcmp(json_object_get_string(it), e->value) == 0;
        found |= same;
        if (!(same && e->op == STORE_LIST_REMOVE))
            json_object_array_add(a, json_object_get(it));
    }
    if (!found && e->op == STORE_LIST_ADD)
        json_object_array_add(a, json_object_new_string(e->value));
    *changed = found != (e->op == STORE_LIST_ADD);
    *out = a;
    return 0;
}

/* Whether an item of the list text t starts at t[i], walking the items
 * from `from` (where one starts, or the '[', ',' or ']' before or after
 * one) on: each string to its closing quote, escapes skipped. */
static int item_starts_at(const char *t, size_t tlen, size_t from, size_t i)
{
    size_t k = from;
    for (;;) {
        while (k < tlen && (t[k] == '[' || t[k] == ','))
            k++;
        if (k >= i || k >= tlen || t[k] != '"')
            return k == i;
        for (k++; k < tlen && t[k] != '"'; k++)
            k += t[k] == '\\';
        k++;
    }
}

/* Where the item q (quoted, qlen bytes) stands in the list text t (as
 * json-c prints a list of strings: no spaces), from offset from (as for
 * item_starts_at) on, or NULL. A match that looks like an item (after '['
 * or ',', before ',' or ']') may still start at the closing quote of one
 * (["a[",",b"] holds "," there): it counts only where the items, walked,
 * put one; q being a whole string, the item is then q. */
static const char *find_item(const char *t, size_t tlen, size_t from, const char *q, size_t qlen)
{
    for (size_t at = from; at + qlen + 1 <= tlen;) {
        const char *hit = memmem(t + at, tlen - at, q, qlen);
        if (!hit)
            return NULL;
        size_t i = (size_t)(hit - t);
        if (i > 0 && (t[i - 1] == '[' || t[i - 1] == ',') && i + qlen < tlen &&
            (t[i + qlen] == ',' || t[i + qlen] == ']') && item_starts_at(t, tlen, from, i))
            return hit;
        at = i + 1;
    }
    return NULL;
}

/* The hash of an item's text (quotes included), never 0 (an empty slot). */
static uint64_t item_hash(const char *s, size_t n)
{
    return hash_mem(s, n) | 1;
}

/* Whether h is in t's set; with add, put it there when it is not. */
static int seen_has(edit_text *t, uint64_t h, int add)
{
    if (add && (t->n_seen + 1) * 2 > t->cap_seen) {
        size_t cap = t->cap_seen ? t->cap_seen * 2 : 64;
        uint64_t *v = xcalloc(cap, sizeof *v);
        for (size_t j = 0; j < t->cap_seen; j++) {
            if (!t->seen[j])
                continue;
            size_t k = t->seen[j] & (cap - 1);
            while (v[k])
                k = (k + 1) & (cap - 1);
            v[k] = t->seen[j];
        }
        free(t->seen);
        t->seen = v;
        t->cap_seen = cap;
    }
    size_t mask = t->cap_seen - 1, k = h & mask;
    for (; t->seen[k]; k = (k + 1) & mask)
        if (t->seen[k] == h)
            return 1;
    if (add) {
        t->seen[k] = h;
        t->n_seen++;
    }
    return 0;
}

/* t's set from its items: each string to its closing quote. */
static void seen_build(edit_text *t)
{
    const char *s = t->s;
    for (size_t k = 0; k < t->len;) {
        if (s[k] != '"') {
            k++;
            continue;
        }
        size_t start = k;
        for (k++; k < t->len && s[k] != '"'; k++)
            k += s[k] == '\\';
        k++;
        seen_has(t, item_hash(s + start, k - start), 1);
    }
    if (!t->seen)
        seen_has(t, 1, 1); /* an empty list: a set all the same */
}

void edit_text_free(edit_text *t)
{
    free(t->s);
    free(t->seen);
    memset(t, 0, sizeof *t);
}

/* v quoted as JSON: in stack (cap bytes) when it needs no escape and
 * fits, else in heap (initialised, freed by the caller). */
static const char *quoted(const char *v, char *stack, size_t cap, strbuf *heap, size_t *len)
{
    size_t n = 0;
    while (v[n] && (unsigned char)v[n] >= ' ' && v[n] != '"' && v[n] != '\\')
        n++;
    if (!v[n] && n + 2 <= cap) { /* a finalizer: as it is, in quotes */
        stack[0] = '"';
        memcpy(stack + 1, v, n);
        stack[n + 1] = '"';
        *len = n + 2;
        return stack;
    }
    object_json_string(heap, v, strlen(v));
    *len = heap->len;
    return heap->s;
}

void edit_list_in_place(edit_text *t, const store_edit *e)
{
    strbuf heap;
    sb_init(&heap);
    char stack[256];
    size_t qlen;
    const char *qs = quoted(e->value, stack, sizeof stack, &heap, &qlen);
    char *s = t->s;
    size_t len = t->len;
    if (e->op == STORE_LIST_ADD) {
        /* the set holds every item the list has held (a removal leaves
         * its hash: then the text is looked at); built at the first
         * addition, it pays from the second */
        uint64_t h = item_hash(qs, qlen);
        if (!t->seen)
            seen_build(t);
        int absent = !seen_has(t, h, 1) || !find_item(s, len, 0, qs, qlen);
        if (absent) { /* at the end, before the ']' */
            grow(&t->s, &t->cap, len + qlen + 2, 1);
            s = t->s;
            len--;
            if (len > 1)
                s[len++] = ',';
            memcpy(s + len, qs, qlen);
            len += qlen;
            s[len++] = ']';
            s[len] = '\0';
        }
    } else {
        /* every copy goes, with the comma before it (after it when first);
         * the text only shrinks: kept bytes move down as they are met */
        size_t from = 0, out = 0;
        const char *hit;
        while ((hit = find_item(s, len, from, qs, qlen))) {
            size_t i = (size_t)(hit - s), end = i + qlen;
            if (s[i - 1] == ',' && i - 1 >= from)
                i--;
            else if (s[end] == ',')
                end++;
            memmove(s + out, s + from, i - from);
            out += i - from;
            from = end;
        }
        memmove(s + out, s + from, len - from);
        len = out + len - from;
        s[len] = '\0';
    }
    t->len = len;
    sb_free(&heap);
}

/* list_after over the object's value v (absent, null or a list of
 * strings), printed into b as json-c prints its result, without json-c
 * (e NULL: the list as it is): 0, or -1 when v is anything else (json-c's
 * way says why). */
static int list_after_text(const trellis_value *v, const store_edit *e, strbuf *b, int *changed)
{
    trellis_value_type ty = v ? value_type(v) : TRELLIS_VALUE_NULL;
    if (ty != TRELLIS_VALUE_NULL && ty != TRELLIS_VALUE_LIST)
        return -1;
    size_t n = ty == TRELLIS_VALUE_LIST ? value_len(v) : 0;
    for (size_t i = 0; i < n; i++)
        if (value_type(value_at(v, i)) != TRELLIS_VALUE_STRING)
            return -1;
    int found = 0;
    size_t items = 0;
    sb_add(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *it = value_string_len(value_at(v, i), &len);
        int same = e && strcmp(it, e->value) == 0; /* as list_after compares */
        found |= same;
        if (same && e->op == STORE_LIST_REMOVE)
            continue;
        if (items++)
            sb_add(b, ",", 1);
        object_json_string(b, it, len);
    }
    if (e && !found && e->op == STORE_LIST_ADD) {
        if (items)
            sb_add(b, ",", 1);
        object_json_string(b, e->value, strlen(e->value));
    }
    sb_add(b, "]", 1);
    *changed = e && found != (e->op == STORE_LIST_ADD);
    return 0;
}

char *edit_lists_result(const trellis_object *o, const store_edit *e, size_t n, char *err,
                        size_t errlen)
{
    strbuf b;
    sb_init(&b);
    int changed;
    if (list_after_text(object_get(o, e[0].path), NULL, &b, &changed) < 0) {
        sb_free(&b);
        errf(err, errlen, "%s %s: cannot edit the list %s: it is not a list of strings", o->kind,
             o->key, e[0].path);
        return NULL;
    }
    edit_text t = {b.s, b.len, b.cap, NULL, 0, 0};
    for (size_t k = 0; k < n; k++)
        edit_list_in_place(&t, &e[k]);
    free(t.seen);
    return t.s;
}

char *edit_list_result(const trellis_object *o, const edit_pending *pending, const store_edit *e,
                       int *unchanged, char *err, size_t errlen)
{
    if (!pending) { /* the object's list, read where it is */
        strbuf b;
        sb_init(&b);
        int changed;
        if (list_after_text(object_get(o, e->path), e, &b, &changed) == 0) {
            *unchanged = !changed;
            if (*unchanged)
                sb_free(&b);
            return *unchanged ? NULL : sb_steal(&b);
        }
        sb_free(&b);
    }
    /* what the edit starts from: the value queued for the field, else
     * the object's list */
    json_object *before = NULL;
    if (pending && pending->value) {
        before = pending->json ? json_tokener_parse(pending->value) : NULL;
        if (!before) {
            errf(err, errlen, "%s %s: cannot edit the list %s: it was set to something else",
                 o->kind, o->key, e->path);
            return NULL;
        }
    } else if (!pending) {
        before = value_to_json(object_get(o, e->path)); /* NULL when absent or null */
    }
    json_object *after;
    int changed;
    int rc = list_after(before, e, &after, &changed, err, errlen);
    json_object_put(before);
    if (rc < 0) {
        errprefix(err, errlen, "%s %s", o->kind, o->key);
        return NULL;
    }
    char *text = NULL;
    *unchanged = !changed && !pending; /* nothing to write: the list already says so */
    if (!*unchanged)
        text = xstrdup(json_object_to_json_string_ext(after, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(after);
    return text;
}

/* Where the text of the key path[i..end) lies, its brackets and quotes
 * left out: [*a, *z). */
static void key_bounds(const char *path, size_t i, size_t end, size_t *a, size_t *z)
{
    *a = i;
    *z = end;
    if (path[i] != '[')
        return;
    *a = i + 1;
    *z = end > i + 1 && path[end - 1] == ']' ? end - 1 : end;
    if (*a < *z && (path[*a] == '"' || path[*a] == '\'') && *z - 1 > *a &&
        path[*z - 1] == path[*a]) {
        (*a)++;
        (*z)--;
    }
}

/* The key of path[i..end) as text: a plain key as it is, a bracketed one
 * without its brackets and quotes, escapes undone. Owned by the caller. */
static char *key_text(const char *path, size_t i, size_t end)
{
    size_t a, z;
    key_bounds(path, i, end, &a, &z);
    strbuf b;
    sb_init(&b);
    for (size_t k = a; k < z; k++) {
        if (path[i] == '[' && path[k] == '\\' && k + 1 < z)
            k++;
        sb_add(&b, path + k, 1);
    }
    sb_puts(&b, "");
    return sb_steal(&b);
}

/* A list edit of the member k of map m. */
static int list_edit_member(json_object *m, const char *k, const store_edit *e, char *err,
                            size_t errlen)
{
    json_object *old = NULL, *after;
    int changed;
    json_object_object_get_ex(m, k, &old);
    if (list_after(old, e, &after, &changed, err, errlen) < 0)
        return -1;
    json_object_object_add(m, k, after);
    return 0;
}

int edit_apply_json(json_object *root, const store_edit *e, char *err, size_t errlen)
{
    const char *path = e->path ? e->path : "";
    if (!*path)
        return errf(err, errlen, "bad field path ''");
    int removal = (e->op == STORE_SET || e->op == STORE_SET_JSON) && !e->value;
    json_object *cur = root;
    size_t i = 0;
    for (;;) {
        size_t end = key_end(path, i);
        if (!json_object_is_type(cur, json_type_object))
            return errf(err, errlen, "cannot set %s: '%.*s' is not a map", path, (int)i, path);
        char *k = key_text(path, i, end);
        int rc = 0;
        if (!path[end]) {
            json_object *v = NULL;
            if (removal)
                json_object_object_del(cur, k);
            else if (e->op == STORE_SET)
                json_object_object_add(cur, k, json_object_new_string(e->value));
            else if (e->op == STORE_SET_JSON && !(v = json_tokener_parse(e->value)) &&
                     strcmp(e->value, "null") != 0)
                rc = errf(err, errlen, "%s: the value is not JSON", path);
            else if (e->op == STORE_SET_JSON)
                json_object_object_add(cur, k, v);
            else
                rc = list_edit_member(cur, k, e, err, errlen);
            free(k);
            return rc;
        }
        json_object *next = NULL;
        if (!json_object_object_get_ex(cur, k, &next) || !next) {
            if (removal) {
                free(k);
                return 0; /* nothing there to remove */
            }
            next = json_object_new_object();
            json_object_object_add(cur, k, next);
        }
        free(k);
        cur = next;
        i = path[end] == '.' ? end + 1 : end;
    }
}

/* ---- an object made of edits ------------------------------------------ */

/* The tree edit_build_object makes of its edits before it lays it out:
 * maps of members in the order they were first set, strings, JSON texts
 * and lists of strings. Node 0 is "none"; node 1 the root map. */
enum { EB_MAP, EB_STRING, EB_JSON, EB_LIST };
typedef struct eb_node {
    const char *key; /* NULL for the root and list items; in an edit's path */
    uint32_t klen;   /* unless owned (unescaped from a bracket): then its own */
    int owned;
    int type;          /* EB_* */
    const char *value; /* EB_STRING, EB_JSON: the edit's */
    uint32_t first, last, next;
} eb_node;

typedef struct eb_tree {
    eb_node *v;
    size_t n, cap;
} eb_tree;

/* A key of a path: path[i..end) as key_end found it, its text borrowed
 * from the path unless a bracket's escapes had to be undone (then owned). */
typedef struct eb_key {
    const char *s;
    uint32_t len;
    int owned;
} eb_key;

static eb_key key_at(const char *path, size_t i, size_t end)
{
    size_t a, z;
    key_bounds(path, i, end, &a, &z);
    if (path[i] == '[' && memchr(path + a, '\\', z - a)) {
        char *k = key_text(path, i, end);
        return (eb_key){k, (uint32_t)strlen(k), 1};
    }
    return (eb_key){path + a, (uint32_t)(z - a), 0};
}

static void key_drop(eb_key k)
{
    if (k.owned)
        free((char *)k.s);
}

static uint32_t eb_add(eb_tree *t, uint32_t parent, eb_key key, int type, const char *value)
{
    grow(&t->v, &t->cap, t->n + 1, sizeof *t->v);
    uint32_t i = (uint32_t)t->n++;
    t->v[i] = (eb_node){key.s, key.len, key.owned, type, value, 0, 0, 0};
    if (parent) {
        if (t->v[parent].last)
            t->v[t->v[parent].last].next = i;
        else
            t->v[parent].first = i;
        t->v[parent].last = i;
    }
    return i;
}

static uint32_t eb_member(const eb_tree *t, uint32_t map, eb_key key)
{
    for (uint32_t k = t->v[map].first; k; k = t->v[k].next)
        if (t->v[k].klen == key.len && memcmp(t->v[k].key, key.s, key.len) == 0)
            return k;
    return 0;
}

/* The member k (kept, or dropped when there) of the map cur, added as an
 * empty node of that type when absent; 0 when it is there with another
 * type. */
static uint32_t eb_child(eb_tree *t, uint32_t cur, eb_key k, int type)
{
    uint32_t m = eb_member(t, cur, k);
    if (!m)
        return eb_add(t, cur, k, type, NULL);
    key_drop(k);
    return t->v[m].type == type ? m : 0;
}

/* Apply e to the tree: 0, or 1 when it is an edit the tree does not take
 * (a removal, a list removal, a path through or a list edit of a value
 * that is not one it built): json-c's way decides then. */
static int eb_apply(eb_tree *t, const store_edit *e)
{
    const char *path = e->path ? e->path : "";
    if (!*path || !e->value ||
        (e->op != STORE_SET && e->op != STORE_SET_JSON && e->op != STORE_LIST_ADD))
        return 1;
    uint32_t cur = 1;
    size_t i = 0, end;
    while (path[end = key_end(path, i)]) {
        if (!(cur = eb_child(t, cur, key_at(path, i, end), EB_MAP)))
            return 1;
        i = path[end] == '.' ? end + 1 : end;
    }
    eb_key k = key_at(path, i, end);
    if (e->op == STORE_LIST_ADD) {
        uint32_t m = eb_child(t, cur, k, EB_LIST), it = m ? t->v[m].first : 0;
        while (it && strcmp(t->v[it].value, e->value) != 0)
            it = t->v[it].next;
        if (m && !it)
            eb_add(t, m, (eb_key){0}, EB_STRING, e->value);
        return !m;
    }
    uint32_t m = eb_member(t, cur, k);
    if (m) /* replaced where it stands */
        key_drop(k);
    else
        m = eb_add(t, cur, k, EB_STRING, NULL);
    t->v[m].type = e->op == STORE_SET ? EB_STRING : EB_JSON;
    t->v[m].value = e->value;
    t->v[m].first = t->v[m].last = 0;
    return 0;
}

/* The JSON text of a scalar as json-c reads it, when it is one of the
 * plain forms an edit sets (true, false, null, an integer of at most 18
 * digits without a leading zero); else OB_NONE (the whole-text reader
 * takes documents, not scalars, and json-c decides the rest). */
static oref eb_scalar(obuild *b, const char *text)
{
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
        return ob_bool(b, text[0] == 't');
    if (strcmp(text, "null") == 0)
        return ob_null(b);
    const char *d = text + (text[0] == '-');
    size_t n = strspn(d, "0123456789");
    if (n == 0 || n > 18 || d[n] || (d[0] == '0' && n > 1))
        return OB_NONE;
    int64_t v = 0;
    for (size_t k = 0; k < n; k++)
        v = v * 10 + (d[k] - '0');
    return ob_int(b, text[0] == '-' ? -v : v, NULL);
}

/* Node i into b, or OB_NONE for a JSON text the fast reader does not take
 * whole (or takes where json-c's parse, edit_apply_json's, would not). */
static oref eb_emit(const eb_tree *t, obuild *b, uint32_t i)
{
    const eb_node *nd = &t->v[i];
    if (nd->type == EB_STRING)
        return ob_string(b, nd->value, strlen(nd->value));
    if (nd->type == EB_JSON) {
        oref v = eb_scalar(b, nd->value);
        if (v != OB_NONE)
            return v;
        size_t len = strlen(nd->value);
        /* nested deeper than json-c's parse takes (a value at depth 32):
         * its way, with its error */
        size_t at = ob_parse_json_nest(b, nd->value, len, JSON_TOKENER_DEFAULT_DEPTH, &v);
        while (at && at < len && strchr(" \t\r\n", nd->value[at]))
            at++;
        return at && at == len ? v : OB_NONE;
    }
    size_t mark = ob_open(b);
    for (uint32_t k = nd->first; k; k = t->v[k].next) {
        oref v = eb_emit(t, b, k);
        if (v == OB_NONE)
            return OB_NONE;
        if (nd->type == EB_LIST)
            ob_item(b, v);
        else
            ob_member(b, mark, t->v[k].key, t->v[k].klen, v, 0);
    }
    return nd->type == EB_LIST ? ob_close_list(b, mark) : ob_close_map(b, mark);
}

trellis_object *edit_build_object(const store_edit *edits, size_t n, char *err, size_t errlen)
{
    eb_tree t = {0};
    eb_add(&t, 0, (eb_key){0}, EB_MAP, NULL); /* node 0: none */
    eb_add(&t, 0, (eb_key){0}, EB_MAP, NULL); /* node 1: the root */
    int fast = 1;
    for (size_t k = 0; k < n && fast; k++)
        fast = eb_apply(&t, &edits[k]) == 0;
    trellis_object *o = NULL;
    if (fast) {
        obuild *b = obuild_thread();
        oref root = eb_emit(&t, b, 1);
        if (root != OB_NONE)
            o = object_build(b, root, err, errlen);
        else
            fast = 0;
    }
    for (size_t k = 0; k < t.n; k++)
        if (t.v[k].owned)
            free((char *)t.v[k].key);
    free(t.v);
    if (fast)
        return o;
    /* json-c's way: the same object, or the error edit_apply_json words */
    json_object *tree = json_object_new_object();
    for (size_t k = 0; k < n; k++) {
        if (edit_apply_json(tree, &edits[k], err, errlen) < 0) {
            json_object_put(tree);
            return NULL;
        }
    }
    return object_new(tree, err, errlen); /* the tree is the object's now */
}

trellis_object *edit_apply_object(const trellis_object *o, const store_edit *edits, size_t n,
                                  char *err, size_t errlen)
{
    json_object *tree = object_to_json(o);
    for (size_t k = 0; k < n; k++) {
        if (edit_apply_json(tree, &edits[k], err, errlen) < 0) {
            json_object_put(tree);
            errprefix(err, errlen, "%s %s", o->kind, o->key);
            return NULL;
        }
    }
    char e[256];
    trellis_object *c = object_new(tree, e, sizeof e);
    if (!c || strcmp(c->id, o->id) != 0) {
        errf(err, errlen, "%s %s: the patch changes what the object is (%s)", o->kind, o->key,
             c ? "its identity" : e);
        if (c)
            object_unref(c);
        return NULL;
    }
    /* the same place in the same store: a later write of it finds it */
    object_set_origin(c, o->file, o->doc, o->item, o->line);
    c->version = o->version;
    return c;
}
