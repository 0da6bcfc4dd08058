/*
 * wbremove.c - removing one document, or one item of a List, from a
 * manifest file's text (writeback_remove in writeback.h).
 *
 * The cut is made in the text, as edits are: every other document, item,
 * comment and blank line stays byte for byte. A YAML document goes with
 * the "---" line that opens it and the comments between that line and its
 * content; the comments before a file's first document stay. A List item
 * goes with its "- " line (block style) or with one adjacent comma (flow
 * style and JSON). After the cut the text is read again, as the store
 * reads it too: it must hold one document (or item) fewer, every other one
 * must be what it was, and the manifest reader must find exactly the
 * objects it found before but the removed ones (a List item that held an
 * anchor a later item uses cannot go), or nothing is produced.
 */
#include "config.h"

#include "writeback.h"

#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "wbtree.h"

/* Every document of text as a tree in t. 0, or -1 with err. */
static int read_all(const char *s, size_t len, int json, tree *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int rc;
    if (json) {
        jbuild jb = {.s = s, .len = len, .err = err, .errlen = errlen};
        if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
            jb.i = 3;
        while ((rc = wb_json_next_doc(&jb, t)) > 0)
            ;
        return rc;
    }
    ybuild yb;
    memset(&yb, 0, sizeof yb);
    yb.s = s;
    yb.len = len;
    yb.t = t;
    yb.err = err;
    yb.errlen = errlen;
    if (!yaml_parser_initialize(&yb.p))
        return errf(err, errlen, "out of memory");
    wb_build_cmap(&yb);
    yaml_parser_set_input_string(&yb.p, (const unsigned char *)s, len);
    while ((rc = wb_yaml_next_doc(&yb)) > 0)
        ;
    yaml_parser_delete(&yb.p);
    free(yb.cmap);
    return rc;
}

static char *canon(const node *n, int json)
{
    strbuf b;
    sb_init(&b);
    if (n)
        wb_canon(&b, n, json, NULL, 0);
    sb_puts(&b, "");
    return sb_steal(&b);
}

/* The start of the "---" line that opens the document whose content
 * starts at `to`, searching lines from `from`; SIZE_MAX when there is
 * none (the first document, without a marker). */
static size_t opening_marker(const char *s, size_t len, size_t from, size_t to)
{
    size_t found = SIZE_MAX;
    for (size_t p = wb_line_start(s, from); p < to && p < len; p = wb_next_line(s, len, p)) {
        if (len - p >= 3 && memcmp(s + p, "---", 3) == 0 &&
            (p + 3 == len || s[p + 3] == ' ' || s[p + 3] == '\t' || s[p + 3] == '\n' ||
             s[p + 3] == '\r'))
            found = p;
    }
    return found;
}

/* Where document k's own text begins in YAML: its "---" line, or the
 * line of its content. */
static size_t yaml_doc_begin(const char *s, size_t len, const tree *t, size_t k)
{
    const node *root = t->docs[k];
    size_t from = k ? (t->docs[k - 1] ? t->docs[k - 1]->after : 0) : 0;
    size_t content = root ? root->start : from;
    size_t m = opening_marker(s, len, from, content);
    return m != SIZE_MAX ? m : wb_line_start(s, content);
}

/* [*a, *b): the bytes of document k. */
static void doc_span(const char *s, size_t len, int json, const tree *t, size_t k, size_t *a,
                     size_t *b)
{
    if (json) {
        const node *root = t->docs[k];
        *a = root->start;
        *b = k + 1 < t->ndocs ? t->docs[k + 1]->start : root->after;
        return;
    }
    *a = yaml_doc_begin(s, len, t, k);
    *b = k + 1 < t->ndocs ? yaml_doc_begin(s, len, t, k + 1) : len;
}

/* The '-' of a block sequence item whose content starts at p. */
static size_t dash_before(const char *s, size_t p)
{
    while (p > 0 && (s[p - 1] == ' ' || s[p - 1] == '\t' || s[p - 1] == '\n' || s[p - 1] == '\r'))
        p--;
    return p > 0 && s[p - 1] == '-' ? p - 1 : SIZE_MAX;
}

/* The start of the comment lines right above the line at `line` (or
 * `line` itself), not above `limit`: comments about an item go with it. */
static size_t lead_comments(const char *s, size_t line, size_t limit)
{
    while (line > limit && line > 0) {
        size_t prev = wb_line_start(s, line - 1);
        size_t p = prev;
        while (s[p] == ' ' || s[p] == '\t')
            p++;
        if (prev < limit || s[p] != '#')
            break;
        line = prev;
    }
    return line;
}

/* Where block item i's own lines begin: its comments, then its '-' line. */
static size_t block_item_begin(const char *s, const node *seq, size_t i)
{
    size_t d = dash_before(s, seq->kids[i]->start);
    if (d == SIZE_MAX)
        return SIZE_MAX;
    size_t limit = i ? seq->kids[i - 1]->end : seq->start;
    return lead_comments(s, wb_line_start(s, d), limit);
}

/* [*a, *b): the bytes of item i of seq, with its dash line or a comma. */
static int item_span(const char *s, const node *seq, size_t i, size_t *a, size_t *b)
{
    const node *e = seq->kids[i];
    if (seq->flow) {
        if (i + 1 < seq->nkids) {
            *a = e->start;
            *b = seq->kids[i + 1]->start;
        } else if (i > 0) {
            *a = seq->kids[i - 1]->end;
            *b = e->end;
        } else {
            *a = e->start;
            *b = e->end;
        }
        return 0;
    }
    *a = block_item_begin(s, seq, i);
    *b = i + 1 < seq->nkids ? block_item_begin(s, seq, i + 1) : e->after;
    return *a == SIZE_MAX || *b == SIZE_MAX ? -1 : 0;
}

static const node *items_of(const node *root)
{
    if (!root || root->kind != N_MAP)
        return NULL;
    long k = wb_map_find(root, "items");
    const node *v = k >= 0 ? root->kids[2 * k + 1] : NULL;
    return v && v->kind == N_SEQ ? v : NULL;
}

/* The canonical forms of every document but `skip` (SIZE_MAX: none), and
 * of every item of document `in` but `skip_item` (-1: its documents'
 * forms only), joined, to compare before and after a cut. */
static char *forms(const tree *t, int json, size_t skip, size_t in, int skip_item)
{
    strbuf b;
    sb_init(&b);
    for (size_t k = 0; k < t->ndocs; k++) {
        if (k == skip)
            continue;
        const node *items = k == in ? items_of(t->docs[k]) : NULL;
        if (!items) {
            char *c = canon(t->docs[k], json);
            sb_printf(&b, "doc %s\n", c);
            free(c);
            continue;
        }
        for (size_t i = 0; i < items->nkids; i++) {
            if ((int)i == skip_item)
                continue;
            char *c = canon(items->kids[i], json);
            sb_printf(&b, "item %s\n", c);
            free(c);
        }
    }
    sb_puts(&b, "");
    return sb_steal(&b);
}

/* Whether the manifest reader finds in after exactly the objects of
 * before, with the same content, but those of document doc (item -1) or
 * of its List item, and no new error. */
static int same_objects_but(const char *before, size_t blen, const char *after, size_t alen,
                            int json, int doc, int item)
{
    const char *name = json ? "cut.json" : "cut.yaml";
    manifest_set a, b;
    manifest_set_init(&a);
    manifest_set_init(&b);
    manifest_parse(name, before, blen, &a);
    manifest_parse(name, after, alen, &b);
    int ok = b.n_errors <= a.n_errors;
    size_t kept = 0;
    for (size_t i = 0; i < a.n_objects && ok; i++) {
        const trellis_object *o = a.objects[i];
        if (o->doc == doc && (item < 0 || o->item == item))
            continue;
        int found = 0;
        for (size_t j = 0; j < b.n_objects && !found; j++)
            found = strcmp(b.objects[j]->id, o->id) == 0 && object_same_content(b.objects[j], o);
        ok = found;
        kept++;
    }
    ok = ok && kept == b.n_objects;
    manifest_set_free(&a);
    manifest_set_free(&b);
    return ok;
}

int writeback_remove(const char *text, size_t len, int is_json, int doc, int item, char **out,
                     size_t *outlen, size_t *docs_left, char *err, size_t errlen)
{
    *out = NULL;
    tree t;
    if (read_all(text, len, is_json, &t, err, errlen) < 0) {
        wb_tree_free(&t);
        return -1;
    }
    int rc = -1;
    size_t a = 0, b = 0;
    const node *items = NULL;
    if (doc < 0 || (size_t)doc >= t.ndocs || (item < 0 && !t.docs[doc])) {
        errf(err, errlen, "document %d does not exist", doc + 1);
    } else if (item >= 0 && (!(items = items_of(t.docs[doc])) || (size_t)item >= items->nkids)) {
        errf(err, errlen, "document %d has no List item %d", doc + 1, item + 1);
    } else if (item >= 0 && item_span(text, items, (size_t)item, &a, &b) < 0) {
        errf(err, errlen, "document %d: List item %d: cannot find its '-'", doc + 1, item + 1);
    } else {
        if (item < 0)
            doc_span(text, len, is_json, &t, (size_t)doc, &a, &b);
        rc = 0;
    }
    if (rc < 0) {
        wb_tree_free(&t);
        return -1;
    }
    size_t in = item < 0 ? SIZE_MAX : (size_t)doc; /* the List whose items are compared */
    char *want = forms(&t, is_json, item < 0 ? (size_t)doc : SIZE_MAX, in, item);
    size_t ndocs = t.ndocs - (item < 0);
    wb_tree_free(&t);
    strbuf o;
    sb_init(&o);
    sb_add(&o, text, a);
    sb_add(&o, text + b, len - b);
    sb_puts(&o, "");
    /* read it again: one document or item fewer, the rest unchanged */
    char e2[256];
    if (read_all(o.s, o.len, is_json, &t, e2, sizeof e2) < 0) {
        rc = errf(err, errlen, "the text without it does not parse (%s); nothing removed", e2);
    } else {
        char *got = forms(&t, is_json, SIZE_MAX, in, -1);
        if (t.ndocs != ndocs || strcmp(got, want) != 0)
            rc = errf(err, errlen, "the cut would change other documents; nothing removed");
        free(got);
    }
    wb_tree_free(&t);
    free(want);
    if (rc == 0 && !same_objects_but(text, len, o.s, o.len, is_json, doc, item))
        rc = errf(err, errlen,
                  "the text without it reads differently (an anchor it holds is used "
                  "elsewhere?); nothing removed");
    if (rc < 0) {
        sb_free(&o);
        return -1;
    }
    if (docs_left)
        *docs_left = ndocs;
    if (outlen)
        *outlen = o.len;
    *out = sb_steal(&o);
    return 0;
}
