/*
 * writeback.c - format-preserving edits of YAML and JSON manifest text.
 *
 * The text is parsed into a tree of byte positions (YAML from libyaml's
 * events, JSON with a small scanner: wbtree.c), each edit is turned into one
 * replacement of a byte range, and the replacements are spliced into a copy
 * of the text; every byte outside them is kept. Documents are counted as in
 * manifest.c: one per libyaml DOCUMENT-START event (empty ones included),
 * one per concatenated JSON value.
 *
 * Edits behave as if applied one at a time in the order given. Edits that
 * cannot interact (different documents, or different items of one List) are
 * placed against the same text and spliced in one pass; an edit that may
 * interact with an earlier one (same document and item, or a whole-document
 * edit next to an item edit) waits for the next pass, which re-parses the
 * text the previous pass produced. So "set x, then set x again" leaves the
 * second value, and "set spec.a, set spec.b" on a document without spec
 * creates spec once. After every pass the result is parsed again and
 * checked: each edited field holds the new string (or is gone), and every
 * document reads as before apart from the edits (compared in a canonical
 * form). Anything else is an error and nothing is produced: a refused edit
 * is better than a manifest that silently means something else.
 *
 * Where text goes in YAML: a new key is written on its own line after the
 * last line of its map's last member, at the column of the map's keys; a
 * null parent ("spec:", "spec: null") gets the new lines after its own;
 * flow maps get ", key: value" before their closing brace. Removing a key
 * deletes its lines (key, value, trailing comment, line break). In JSON a
 * new member follows the last one on its own line, indented like it, when
 * the object spans lines, and on the same line otherwise.
 *
 * Values are written as plain scalars when that is unambiguous
 * ([A-Za-z0-9][-A-Za-z0-9_./]*, not a YAML 1.1 or 1.2 bool or null word,
 * not something that starts like a number), otherwise double-quoted; JSON
 * values are always JSON strings.
 *
 * Raw edits carry a JSON text instead of a string. It is checked strictly
 * (RFC 8259; no duplicate keys, no lone surrogates, no \u0000) and written
 * again on one line, in the same form for YAML and JSON: strings
 * double-quoted with JSON escapes (also escaping what YAML would not read
 * back: DEL, C1 controls, U+2028/9, U+FEFF, U+FFFE/F), numbers as given,
 * ", " and ": " between items: JSON that is also YAML flow syntax. In
 * YAML the value goes where a string would go: after the key on its line,
 * replacing a scalar, an alias or a flow collection in place (its own anchor
 * kept, a tag dropped, a trailing comment kept). An old block collection is
 * replaced from the key's ':' through the line break of its last line: its
 * lines, comment lines among them included, go, and the flow value follows
 * the ':'; a comment on the key's own line is kept after it. A value that
 * holds anchors inside is refused (aliases elsewhere may refer to them).
 * Verification compares the field's new value, in canonical form, with
 * the parsed JSON: same structure, keys and scalar text, strings quoted,
 * numbers, booleans and null plain (an empty map reads as null, as above).
 */
#include "config.h"

#include "writeback.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#include "atomicfile.h"
#include "manifest.h"
#include "util.h"
#include "wbtree.h"

#define MAX_DEPTH 200
#define MAX_COMPONENTS 64
#define DEFAULT_STEP 2

/* ---- locating a path --------------------------------------------------- */

static void path_free(keypath *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->comps[i]);
    p->n = 0;
}

/* Split "a.b" / 'a["b.c"]' into keys. */
static int path_split(const char *s, keypath *p, char *err, size_t errlen)
{
    p->n = 0;
    if (!s || !*s)
        return errf(err, errlen, "empty path");
    const char *q = s;
    while (*q) {
        if (p->n == MAX_COMPONENTS) {
            path_free(p);
            return errf(err, errlen, "path '%s' has too many components", s);
        }
        strbuf b;
        sb_init(&b);
        if (*q == '[') {
            char quote = q[1];
            if (quote != '"' && quote != '\'') {
                path_free(p);
                return errf(err, errlen, "path '%s': list indexes cannot be written", s);
            }
            q += 2;
            while (*q && *q != quote) {
                if (*q == '\\' && q[1])
                    q++;
                sb_add(&b, q++, 1);
            }
            if (*q != quote || q[1] != ']') {
                sb_free(&b);
                path_free(p);
                return errf(err, errlen, "path '%s': unterminated [\"...\"]", s);
            }
            q += 2;
        } else {
            const char *st = q;
            while (*q && *q != '.' && *q != '[')
                q++;
            sb_add(&b, st, (size_t)(q - st));
        }
        if (b.len == 0) {
            sb_free(&b);
            path_free(p);
            return errf(err, errlen, "path '%s' has an empty key", s);
        }
        p->comps[p->n++] = sb_steal(&b);
        if (*q == '.') {
            q++;
            if (!*q || *q == '.' || *q == '[') {
                path_free(p);
                return errf(err, errlen, "path '%s' has an empty key", s);
            }
        } else if (*q && *q != '[') {
            path_free(p);
            return errf(err, errlen, "path '%s' is malformed", s);
        }
    }
    return 0;
}

static node *find_anchor(const tree *t, int doc, const char *name, size_t before)
{
    node *found = NULL;
    for (size_t i = 0; i < t->nanchors; i++)
        if (t->anchors[i].doc == doc && t->anchors[i].n->start < before &&
            strcmp(t->anchors[i].name, name) == 0)
            found = t->anchors[i].n;
    return found;
}

/* Whether key reaches m only through a YAML merge key. */
static int merged_key(const tree *t, int doc, const node *m, const char *key, int depth)
{
    if (depth > 16)
        return 0;
    for (size_t i = 0; i + 1 < m->nkids; i += 2) {
        const node *k = m->kids[i], *v = m->kids[i + 1];
        if (!wb_key_is(k, "<<") || k->style != YAML_PLAIN_SCALAR_STYLE)
            continue;
        size_t nsrc = v->kind == N_SEQ ? v->nkids : 1;
        for (size_t j = 0; j < nsrc; j++) {
            const node *src = v->kind == N_SEQ ? v->kids[j] : v;
            if (src->kind == N_ALIAS)
                src = find_anchor(t, doc, src->anchor, src->start);
            if (!src || src->kind != N_MAP)
                continue;
            if (wb_map_find(src, key) >= 0 || merged_key(t, doc, src, key, depth + 1))
                return 1;
        }
    }
    return 0;
}

/* Whether n carries an anchor that an alias in the document refers to:
 * editing n would change what the alias means too. */
static int anchor_shared(const tree *t, int doc, const node *n)
{
    if (!n->anchor || n->kind == N_ALIAS)
        return 0;
    for (size_t i = 0; i < t->naliases; i++)
        if (t->aliases[i].doc == doc && strcmp(t->aliases[i].name, n->anchor) == 0)
            return 1;
    return 0;
}

/* Where an edit leads in a tree. */
typedef struct spot {
    node *map;       /* the map holding (or to hold) the next key */
    size_t comp;     /* index of the first component not found */
    long pair;       /* when comp is the last one and found: its pair in map */
    int null_parent; /* map's pair `pair` holds null where a map is needed */
} spot;

typedef struct wctx {
    const char *s;
    size_t len;
    int json;
    tree t;
    const char *nl;
} wctx;

static int edit_err(char *err, size_t errlen, size_t i, const wb_edit *e, const char *fmt, ...)
    UTIL_PRINTF(5, 6);

static int edit_err(char *err, size_t errlen, size_t i, const wb_edit *e, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->item >= 0)
        return errf(err, errlen, "edit %zu (document %d, item %d, %s): %s", i, e->doc, e->item,
                    e->path ? e->path : "", msg);
    return errf(err, errlen, "edit %zu (document %d, %s): %s", i, e->doc, e->path ? e->path : "",
                msg);
}

/* The map an edit starts from: the document's root, or its List item. */
static node *edit_base(wctx *w, const wb_edit *e, char *msg, size_t msglen)
{
    if (e->doc < 0 || (size_t)e->doc >= w->t.ndocs) {
        errf(msg, msglen, "no such document (the text has %zu)", w->t.ndocs);
        return NULL;
    }
    node *n = w->t.docs[e->doc];
    if (wb_is_null(n, w->json)) {
        errf(msg, msglen, "the document is empty");
        return NULL;
    }
    if (n->kind != N_MAP) {
        errf(msg, msglen, "the document is not a map");
        return NULL;
    }
    const char *shared = anchor_shared(&w->t, e->doc, n) ? "the document" : NULL;
    if (e->item >= 0) {
        long p = wb_map_find(n, "items");
        node *items = p >= 0 ? n->kids[2 * p + 1] : NULL;
        if (!items || items->kind != N_SEQ) {
            errf(msg, msglen, "the document has no items list");
            return NULL;
        }
        if ((size_t)e->item >= items->nkids) {
            errf(msg, msglen, "no such item (the list has %zu)", items->nkids);
            return NULL;
        }
        if (!shared && anchor_shared(&w->t, e->doc, items))
            shared = "the items list";
        n = items->kids[e->item];
        if (n->kind != N_MAP) {
            errf(msg, msglen, "the item is not a map");
            return NULL;
        }
        if (!shared && anchor_shared(&w->t, e->doc, n))
            shared = "the item";
    }
    if (shared) {
        errf(msg, msglen, "%s is anchored and an alias refers to it; the edit would change both",
             shared);
        return NULL;
    }
    return n;
}

/* Follow the path as far as it exists. 0 with *sp set, or -1 with msg. */
static int walk(wctx *w, const wb_edit *e, const keypath *p, spot *sp, char *msg, size_t msglen)
{
    node *m = edit_base(w, e, msg, msglen);
    if (!m)
        return -1;
    memset(sp, 0, sizeof *sp);
    sp->pair = -1;
    for (size_t i = 0; i < p->n; i++) {
        const char *key = p->comps[i];
        int last = i + 1 == p->n;
        long k = wb_map_find(m, key);
        sp->map = m;
        sp->comp = i;
        if (k < 0) {
            if (!w->json && merged_key(&w->t, e->doc, m, key, 0) && (!last || !e->value))
                return errf(msg, msglen,
                            "'%s' comes from a merge key ('<<'); edit the "
                            "anchored map instead",
                            key);
            return 0;
        }
        sp->pair = k;
        node *v = m->kids[2 * k + 1];
        if (anchor_shared(&w->t, e->doc, v))
            return errf(msg, msglen,
                        "'%s' is anchored and an alias refers to it; the edit would change both",
                        key);
        if (last)
            return 0;
        if (v->kind == N_MAP) {
            m = v;
            sp->pair = -1;
            continue;
        }
        if (wb_is_null(v, w->json)) {
            sp->null_parent = 1;
            sp->comp = i + 1;
            return 0;
        }
        if (v->kind == N_ALIAS)
            return errf(msg, msglen, "'%s' is an alias; edit the anchored node instead", key);
        return errf(msg, msglen, "'%s' is not a map", key);
    }
    return 0;
}

/* One byte-range replacement. */
typedef struct repl {
    size_t start, end;
    char *text;  /* NULL: delete */
    size_t edit; /* index of the edit, orders equal positions */
} repl;

static size_t indent_step(const node *n)
{
    if (n->kind != N_MAP && n->kind != N_SEQ)
        return 0;
    for (size_t i = 0; i < n->nkids; i++) {
        const node *kid = n->kids[i];
        if (n->kind == N_MAP && !n->flow && i % 2 == 1 && kid->kind == N_MAP && !kid->flow &&
            kid->nkids && kid->kids[0]->col > n->kids[i - 1]->col)
            return kid->kids[0]->col - n->kids[i - 1]->col;
        size_t s = indent_step(kid);
        if (s)
            return s;
    }
    return 0;
}

/* The indentation step a document uses for nested maps (2 when it shows
 * none). */
static size_t doc_step(wctx *w, int doc)
{
    if (w->t.step_doc != doc + 1) {
        size_t step = indent_step(w->t.docs[doc]);
        w->t.step = step ? step : DEFAULT_STEP;
        w->t.step_doc = doc + 1;
    }
    return w->t.step;
}

/* Where a key starts on its line: at the '?' of an explicit "? key". */
static size_t key_head(const wctx *w, const node *k)
{
    size_t p = k->start;
    while (p > 0 && (w->s[p - 1] == ' ' || w->s[p - 1] == '\t'))
        p--;
    return p > 0 && w->s[p - 1] == '?' ? p - 1 : k->start;
}

/* Column of a block map's keys. */
static size_t key_column(const wctx *w, const node *m)
{
    const node *k = m->kids[0];
    size_t back = k->start - key_head(w, k);
    return k->col >= back ? k->col - back : 0;
}

static int has_anchor(const node *n)
{
    if (n->anchor && n->kind != N_ALIAS)
        return 1;
    for (size_t i = 0; i < n->nkids; i++)
        if (has_anchor(n->kids[i]))
            return 1;
    return 0;
}

/* Insert the missing components p->comps[from..] into map m, the last one
 * holding val (rendered already). */
static void plan_insert(wctx *w, const wb_edit *e, node *m, const keypath *p, size_t from,
                        const char *val, repl *r)
{
    strbuf b;
    sb_init(&b);
    char *const *comps = p->comps + from;
    size_t n = p->n - from;
    if (w->json || m->flow) {
        if (m->nkids == 0) {
            size_t open = m->cstart; /* the '{' */
            r->start = r->end = open + 1;
            wb_render_chain(&b, comps, n, val, w->json);
        } else {
            node *lastk = m->kids[m->nkids - 2];
            node *lastv = m->kids[m->nkids - 1];
            r->start = r->end = lastv->end;
            if (w->json && memchr(w->s + m->start, '\n', lastk->start - m->start)) {
                size_t ls = wb_line_start(w->s, lastk->start), ie = ls;
                while (ie < lastk->start && (w->s[ie] == ' ' || w->s[ie] == '\t'))
                    ie++;
                sb_puts(&b, ",");
                sb_puts(&b, w->nl);
                sb_add(&b, w->s + ls, ie - ls);
            } else {
                sb_puts(&b, ", ");
            }
            wb_render_chain(&b, comps, n, val, w->json);
        }
    } else {
        size_t step = doc_step(w, e->doc);
        node *lastv = m->kids[m->nkids - 1];
        size_t at = lastv->after;
        int no_break = at == w->len && at > 0 && w->s[at - 1] != '\n' && w->s[at - 1] != '\r';
        if (no_break)
            sb_puts(&b, w->nl);
        wb_render_block(&b, comps, n, val, key_column(w, m), step, w->nl);
        if (!no_break)
            sb_puts(&b, w->nl);
        r->start = r->end = at;
    }
    r->text = sb_steal(&b);
}

/* The value of pair k in m is null where a map is needed: replace it by a
 * map holding the components p->comps[from..], the last one holding val. */
static int plan_fill(wctx *w, const wb_edit *e, node *m, long k, const keypath *p, size_t from,
                     const char *val, repl *r, char *msg, size_t msglen)
{
    node *key = m->kids[2 * k], *v = m->kids[2 * k + 1];
    char *const *comps = p->comps + from;
    size_t n = p->n - from;
    strbuf b;
    sb_init(&b);
    if (v->anchor) {
        return errf(msg, msglen, "'%s' is anchored; edit it by hand", p->comps[from - 1]);
    }
    if (w->json || m->flow) {
        r->start = v->cstart;
        r->end = v->end;
        if (v->cstart == v->end)
            sb_add(&b, " ", 1);
        sb_add(&b, "{", 1);
        wb_render_chain(&b, comps, n, val, w->json);
        sb_add(&b, "}", 1);
    } else {
        size_t step = doc_step(w, e->doc);
        size_t eol = wb_line_end(w->s, w->len, v->end);
        if (v->start == v->end) {
            /* "key:" or "key: # comment": add the lines after it */
            r->start = r->end = eol;
        } else {
            /* "key: null # c" -> "key: # c" followed by the lines */
            r->start = key->end;
            r->end = eol;
            sb_add(&b, ":", 1);
            sb_add(&b, w->s + v->end, eol - v->end);
        }
        sb_puts(&b, w->nl);
        wb_render_block(&b, comps, n, val, key->col + step, step, w->nl);
    }
    r->text = sb_steal(&b);
    return 0;
}

/* A raw value replaces a block collection: from the key's ':' through the
 * line break of the collection's last line, by ": value" on the key's line
 * (the collection's own anchor kept, a comment on the key's line too). */
static int plan_raw_block(wctx *w, node *key, node *v, const char *val, repl *r, char *msg,
                          size_t msglen)
{
    const char *s = w->s;
    size_t colon = key->end;
    while (colon < w->len && (s[colon] == ' ' || s[colon] == '\t'))
        colon++;
    if (colon >= w->len || s[colon] != ':')
        return errf(msg, msglen, "cannot place a value after this key (a complex key)");
    size_t eol = wb_line_end(s, w->len, colon);
    if (v->after <= eol)
        return errf(msg, msglen, "cannot place a value after this key (the value shares its line)");
    /* the rest of the key's line: blanks, the value's anchor or tag when
     * they stand there, a comment */
    size_t q = colon + 1, comment = eol, gap = eol;
    for (;;) {
        size_t ws = q;
        while (q < eol && (s[q] == ' ' || s[q] == '\t'))
            q++;
        if (q < eol && q > ws && s[q] == '#') {
            comment = q;
            gap = ws;
            break;
        }
        if (q < eol && q > ws && (s[q] == '&' || s[q] == '!') && v->start <= q) {
            while (q < eol && s[q] != ' ' && s[q] != '\t')
                q++;
            continue;
        }
        break;
    }
    strbuf b;
    sb_init(&b);
    sb_puts(&b, ": ");
    if (v->anchor)
        sb_printf(&b, "&%s ", v->anchor);
    sb_puts(&b, val);
    if (comment < eol)
        sb_add(&b, s + gap, eol - gap);
    r->start = colon;
    r->end = v->after;
    if (r->end > 0 && (s[r->end - 1] == '\n' || s[r->end - 1] == '\r'))
        sb_puts(&b, w->nl);
    r->text = sb_steal(&b);
    return 0;
}

/* Set the value of pair k in m to val (rendered already; raw: any JSON
 * value, else a string). */
static int plan_set(wctx *w, const wb_edit *e, node *m, long k, const char *val, repl *r, char *msg,
                    size_t msglen)
{
    node *v = m->kids[2 * k + 1];
    strbuf b;
    if (e->raw) {
        /* what an alias elsewhere may refer to must stay */
        for (size_t i = 0; i < v->nkids; i++)
            if (has_anchor(v->kids[i]))
                return errf(msg, msglen, "the field holds an anchor other nodes may refer to");
        if (!w->json && !v->flow && (v->kind == N_MAP || v->kind == N_SEQ))
            return plan_raw_block(w, m->kids[2 * k], v, val, r, msg, msglen);
    } else if (v->kind == N_MAP || v->kind == N_SEQ) {
        return errf(msg, msglen, "the field holds a %s, not a scalar",
                    v->kind == N_MAP ? "map" : "list");
    }
    sb_init(&b);
    if (w->json) {
        r->start = v->start;
        r->end = v->end;
    } else if (v->kind != N_ALIAS && v->tagged) {
        /* drop the tag (it may say !!int), keep an anchor */
        r->start = v->start;
        r->end = v->end;
        if (v->anchor)
            sb_printf(&b, "&%s ", v->anchor);
    } else if (v->kind == N_SCALAR && v->cstart == v->end) {
        /* empty value: "key:" -> "key: value" */
        r->start = r->end = v->cstart;
        sb_add(&b, " ", 1);
    } else {
        r->start = v->cstart;
        r->end = v->end;
    }
    sb_puts(&b, val);
    r->text = sb_steal(&b);
    return 0;
}

static int plan_remove(wctx *w, node *m, long k, repl *r, char *msg, size_t msglen)
{
    node *key = m->kids[2 * k], *v = m->kids[2 * k + 1];
    size_t npairs = m->nkids / 2;
    r->text = NULL;
    if (has_anchor(key) || has_anchor(v))
        return errf(msg, msglen, "the field holds an anchor other nodes may refer to");
    if (w->json || m->flow) {
        if ((size_t)k + 1 < npairs) {
            r->start = key->start;
            r->end = m->kids[2 * k + 2]->start;
        } else if (k > 0) {
            r->start = m->kids[2 * k - 1]->end;
            r->end = v->end;
        } else if (w->json) {
            r->start = m->cstart + 1;
            r->end = m->end - 1;
        } else {
            r->start = key->start;
            r->end = v->end;
        }
        return 0;
    }
    size_t head = key_head(w, key);
    size_t ls = wb_line_start(w->s, head);
    int alone = 1;
    for (size_t i = ls; i < head; i++)
        if (w->s[i] != ' ' && w->s[i] != '\t')
            alone = 0;
    if (alone) {
        /* whole lines, with the line break and any trailing comment */
        r->start = ls;
        r->end = v->after;
        /* blank lines after the removed ones would join a "|+" scalar
         * right before them: they go too */
        const node *prev = k > 0 ? m->kids[2 * k - 1] : NULL;
        while (prev && prev->nkids && prev->kind != N_SCALAR)
            prev = prev->kids[prev->nkids - 1];
        if (prev && prev->keep && prev->after == ls) {
            for (;;) {
                size_t q = r->end;
                while (q < w->len && (w->s[q] == ' ' || w->s[q] == '\t'))
                    q++;
                if (q >= w->len || (w->s[q] != '\n' && w->s[q] != '\r'))
                    break;
                r->end = wb_next_line(w->s, w->len, q);
            }
        }
    } else if ((size_t)k + 1 < npairs) {
        /* "- key: v\n  next: w" -> "- next: w" */
        r->start = head;
        r->end = key_head(w, m->kids[2 * k + 2]);
    } else {
        r->start = head;
        r->end = v->end;
        r->text = xstrdup("{}");
    }
    return 0;
}

/* Turn one edit into a replacement; r->text == NULL && start == end means
 * nothing to do. raw: the edit's parsed JSON value, for raw edits. */
static int plan_edit(wctx *w, const wb_edit *e, const node *raw, size_t idx, repl *r, char *err,
                     size_t errlen)
{
    keypath p;
    spot sp;
    char msg[512];
    memset(r, 0, sizeof *r);
    r->edit = idx;
    if (path_split(e->path, &p, msg, sizeof msg) < 0)
        return edit_err(err, errlen, idx, e, "%s", msg);
    strbuf val;
    sb_init(&val);
    if (e->value && raw)
        wb_render_raw(&val, raw);
    else if (e->value)
        wb_render_value(&val, e->value, w->json);
    sb_add(&val, "", 0);
    int rc = walk(w, e, &p, &sp, msg, sizeof msg);
    if (rc == 0) {
        int found = sp.pair >= 0 && !sp.null_parent && sp.comp + 1 == p.n;
        if (!e->value) {
            if (found)
                rc = plan_remove(w, sp.map, sp.pair, r, msg, sizeof msg);
        } else if (found) {
            rc = plan_set(w, e, sp.map, sp.pair, val.s, r, msg, sizeof msg);
        } else if (sp.null_parent) {
            rc = plan_fill(w, e, sp.map, sp.pair, &p, sp.comp, val.s, r, msg, sizeof msg);
        } else {
            plan_insert(w, e, sp.map, &p, sp.comp, val.s, r);
        }
    }
    sb_free(&val);
    path_free(&p);
    if (rc < 0)
        return edit_err(err, errlen, idx, e, "%s", msg);
    return 0;
}

/* Whether v holds the raw value (its own anchor aside). */
static int holds_raw(const node *v, const node *raw, int json)
{
    strbuf x, y;
    sb_init(&x);
    sb_init(&y);
    wb_canon(&x, v, json, NULL, 0);
    wb_canon_raw(&y, raw, json);
    size_t skip = v->anchor && v->kind != N_ALIAS ? strlen(v->anchor) + 2 : 0; /* "&a " */
    int ok = x.len >= skip && x.len - skip == y.len && memcmp(x.s + skip, y.s, y.len) == 0;
    sb_free(&x);
    sb_free(&y);
    return ok;
}

/* After an edit: does the field hold the new value (or is it gone)? */
static int verify_edit(wctx *w, const wb_edit *e, const node *raw, size_t idx, char *err,
                       size_t errlen)
{
    keypath p;
    spot sp;
    char msg[512];
    if (path_split(e->path, &p, msg, sizeof msg) < 0)
        return edit_err(err, errlen, idx, e, "%s", msg);
    int rc = walk(w, e, &p, &sp, msg, sizeof msg);
    int found = rc == 0 && sp.pair >= 0 && !sp.null_parent && sp.comp + 1 == p.n;
    path_free(&p);
    if (rc < 0 && !e->value &&
        (e->doc >= 0 && ((size_t)e->doc >= w->t.ndocs || wb_is_null(w->t.docs[e->doc], w->json))))
        return 0; /* removing the last field emptied the document */
    if (rc < 0)
        return edit_err(err, errlen, idx, e, "after the edit: %s", msg);
    if (!e->value) {
        if (found)
            return edit_err(err, errlen, idx, e, "after the edit the field is still there");
        return 0;
    }
    const node *v = found ? sp.map->kids[2 * sp.pair + 1] : NULL;
    if (raw) {
        if (!v || !holds_raw(v, raw, w->json))
            return edit_err(err, errlen, idx, e,
                            "after the edit the field does not hold the value");
        return 0;
    }
    int ok = v && v->kind == N_SCALAR && v->vlen == strlen(e->value) &&
             memcmp(v->value, e->value, v->vlen) == 0 &&
             (w->json ? v->style == 1
                      : (v->style != YAML_PLAIN_SCALAR_STYLE || wb_plain_safe(v->value)));
    if (!ok)
        return edit_err(err, errlen, idx, e, "after the edit the field does not hold the value");
    return 0;
}

/* ---- passes, one document at a time ----------------------------------
 *
 * A pass reads the text document by document: each document's tree is
 * built, the pass's edits of that document are planned against it, its
 * canonical form with those edits laid over is kept, and the tree is
 * dropped before the next document is read. After the splice, the new text
 * is read the same way: each edit is verified and each document compared
 * with the form kept for it. So memory follows the largest document rather
 * than the file (a file of fifty thousand Pods made two trees of it). */

typedef struct reader {
    wctx *w;
    jbuild jb;
    ybuild yb;
    int yaml_open;
} reader;

static int reader_open(reader *r, wctx *w, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->w = w;
    wb_tree_free(&w->t);
    if (w->json) {
        r->jb = (jbuild){.s = w->s, .len = w->len, .err = err, .errlen = errlen};
        if (w->len >= 3 && memcmp(w->s, "\xef\xbb\xbf", 3) == 0)
            r->jb.i = 3;
        return 0;
    }
    r->yb.s = w->s;
    r->yb.len = w->len;
    r->yb.t = &w->t;
    r->yb.err = err;
    r->yb.errlen = errlen;
    if (!yaml_parser_initialize(&r->yb.p))
        return errf(err, errlen, "out of memory");
    r->yaml_open = 1;
    wb_build_cmap(&r->yb);
    yaml_parser_set_input_string(&r->yb.p, (const unsigned char *)w->s, w->len);
    return 0;
}

/* The next document, at w->t.docs[w->t.ndocs - 1]: 1, 0 at the end, -1 on
 * an error. */
static int reader_next(reader *r)
{
    return r->w->json ? wb_json_next_doc(&r->jb, &r->w->t) : wb_yaml_next_doc(&r->yb);
}

/* Forget document d's tree (and the anchors it held). */
static void reader_drop(reader *r, size_t d)
{
    tree *t = &r->w->t;
    wb_node_free(t->docs[d]);
    t->docs[d] = NULL;
    t->nanchors = t->naliases = 0;
}

static void reader_close(reader *r)
{
    if (r->yaml_open)
        yaml_parser_delete(&r->yb.p);
    free(r->yb.cmap);
    r->yaml_open = 0;
    r->yb.cmap = NULL;
}

/* The first failure of a pass, by the edits' order in the pass. */
typedef struct first_err {
    size_t at; /* position in the pass; SIZE_MAX when none */
    char msg[1024];
} first_err;

static void keep_err(first_err *f, size_t at, const char *msg)
{
    if (at < f->at) {
        f->at = at;
        snprintf(f->msg, sizeof f->msg, "%s", msg);
    }
}

/* The overlays of one document; a key path is half a kilobyte, so these
 * are sized by the document's edits, not the pass's. */
typedef struct doc_ovs {
    overlay *ovs;
    keypath *paths;
    size_t cap;
} doc_ovs;

/* A pass's edits by document: positions in the pass (r, into round)
 * ordered by their edit's document, then by r, so that the edits of one
 * document are one run and a pass over a file of many documents and many
 * edits looks at each edit once, not once per document. */
typedef struct doc_run {
    int doc;
    size_t r;
} doc_run;

typedef struct by_doc {
    doc_run *v;
    size_t n, at; /* at: where the next document's run starts */
} by_doc;

static int doc_run_cmp(const void *pa, const void *pb)
{
    const doc_run *a = pa, *b = pb;
    if (a->doc != b->doc)
        return a->doc < b->doc ? -1 : 1;
    return a->r < b->r ? -1 : a->r > b->r;
}

static void by_doc_init(by_doc *b, const wb_edit *edits, const size_t *round, size_t nr)
{
    b->v = xcalloc(nr ? nr : 1, sizeof *b->v);
    b->n = nr;
    b->at = 0;
    for (size_t r = 0; r < nr; r++)
        b->v[r] = (doc_run){edits[round[r]].doc, r};
    qsort(b->v, nr, sizeof *b->v, doc_run_cmp);
}

/* The run of document d, [*a, *b) in b->v; documents are asked in
 * increasing order. */
static void by_doc_next(by_doc *b, int d, size_t *from, size_t *to)
{
    while (b->at < b->n && b->v[b->at].doc < d)
        b->at++;
    *from = b->at;
    while (b->at < b->n && b->v[b->at].doc == d)
        b->at++;
    *to = b->at;
}

/* The pass's overlays of the document whose edits are run[0..nrun) (edits
 * not postponed), for canon_doc. */
static size_t doc_overlays(const wb_edit *edits, node *const *raws, const size_t *round,
                           const doc_run *run, size_t nrun, const unsigned char *state, doc_ovs *o)
{
    size_t n = 0;
    char msg[512];
    for (size_t q = 0; q < nrun; q++) {
        size_t r = run[q].r;
        const wb_edit *e = &edits[round[r]];
        if (state[round[r]] != 1)
            continue;
        if (n == o->cap) {
            size_t cap = o->cap;
            grow(&o->paths, &cap, n + 1, sizeof *o->paths);
            grow(&o->ovs, &o->cap, n + 1, sizeof *o->ovs);
        }
        if (path_split(e->path, &o->paths[n], msg, sizeof msg) < 0)
            continue; /* planning refused it already */
        o->ovs[n].item = e->item;
        o->ovs[n].value = e->value;
        o->ovs[n].raw = e->value ? raws[round[r]] : NULL;
        n++;
    }
    /* only now: growing paths above moves the paths already split */
    for (size_t k = 0; k < n; k++)
        o->ovs[k].p = &o->paths[k];
    return n;
}

static int repl_cmp(const void *pa, const void *pb)
{
    const repl *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->edit < b->edit ? -1 : a->edit > b->edit;
}

/* A canonical form, as two independent 64-bit sums: the form of every
 * document of a big file would take more memory than the file. */
typedef uint64_t form_sums[2];

static void form_sum(const strbuf *b, uint64_t *out)
{
    /* two independent lanes, eight bytes a step (a file's forms run to
     * megabytes, summed twice a write) */
    uint64_t h1 = 1469598103934665603ull ^ b->len, h2 = 0x9e3779b97f4a7c15ull ^ ~b->len, w;
    size_t i = 0;
    for (; i + 8 <= b->len; i += 8) {
        memcpy(&w, b->s + i, 8);
        h1 = (h1 ^ w) * 0xff51afd7ed558ccdull;
        h1 ^= h1 >> 29;
        h2 = (h2 + w + 1) * 0xbf58476d1ce4e5b9ull;
        h2 ^= h2 >> 27;
    }
    w = 0;
    if (b->len > i)
        memcpy(&w, b->s + i, b->len - i);
    h1 = (h1 ^ w) * 0xc4ceb9fe1a85ec53ull;
    h2 = (h2 + w + 1) * 0x94d049bb133111ebull;
    out[0] = h1 ^ (h1 >> 31);
    out[1] = h2 ^ (h2 >> 31);
}

/* Plan the pass's edits (state 1) over w->s. Replacements go to rs (in
 * order, overlapping ones postponed: state 0), the sums of each document's
 * canonical form with its edits to sums, the number of documents to
 * *ndocs. */
static int plan_pass(wctx *w, const wb_edit *edits, node *const *raws, const size_t *round,
                     size_t nr, unsigned char *state, repl *rs, size_t *nrs, form_sums **sums,
                     size_t *cap_sums, size_t *ndocs, int first, char *err, size_t errlen)
{
    char msg[512];
    first_err fe = {SIZE_MAX, ""};
    reader rd;
    doc_ovs dov = {NULL, NULL, 0};
    strbuf form;
    sb_init(&form);
    size_t pos = 0; /* end of the last replacement kept */
    by_doc bd;
    by_doc_init(&bd, edits, round, nr);
    int rc = reader_open(&rd, w, msg, sizeof msg);
    *nrs = 0;
    for (size_t d = 0; rc == 0; d++) {
        int got = reader_next(&rd);
        if (got < 0) {
            rc = errf(err, errlen,
                      first ? "cannot parse the %s text: %s"
                            : "the edited text does not parse: %s%s",
                      first ? (w->json ? "JSON" : "YAML") : "", msg);
            break;
        }
        if (got == 0)
            break;
        size_t from = *nrs, ra, rb;
        by_doc_next(&bd, (int)d, &ra, &rb);
        for (size_t q = ra; q < rb; q++) {
            size_t r = bd.v[q].r;
            const wb_edit *e = &edits[round[r]];
            char e1[1024];
            if (r > fe.at)
                continue;
            if (plan_edit(w, e, raws[round[r]], round[r], &rs[*nrs], e1, sizeof e1) < 0)
                keep_err(&fe, r, e1);
            else
                (*nrs)++;
        }
        /* a replacement that overlaps the one before it waits for the
         * next pass (cannot happen for edits that do not conflict, but a
         * wrong splice must never be written); replacements stay within
         * their document, so this is decided document by document */
        qsort(rs + from, *nrs - from, sizeof *rs, repl_cmp);
        size_t kept = from;
        for (size_t k = from; k < *nrs; k++) {
            if (rs[k].start < pos) {
                state[rs[k].edit] = 0;
                free(rs[k].text);
                continue;
            }
            pos = rs[k].end;
            rs[kept++] = rs[k];
        }
        *nrs = kept;
        size_t nm = doc_overlays(edits, raws, round, bd.v + ra, rb - ra, state, &dov);
        grow(sums, cap_sums, d + 1, sizeof **sums);
        form.len = 0;
        wb_canon_doc(&form, w->t.docs[d], w->json, dov.ovs, nm);
        form_sum(&form, (*sums)[d]);
        for (size_t k = 0; k < nm; k++)
            path_free(&dov.paths[k]);
        reader_drop(&rd, d);
    }
    reader_close(&rd);
    free(bd.v);
    *ndocs = w->t.ndocs;
    if (rc == 0) {
        /* edits of documents the text does not have */
        for (size_t r = 0; r < nr; r++) {
            const wb_edit *e = &edits[round[r]];
            char e1[1024];
            repl tmp;
            if (e->doc >= 0 && (size_t)e->doc < w->t.ndocs)
                continue;
            if (plan_edit(w, e, raws[round[r]], round[r], &tmp, e1, sizeof e1) < 0)
                keep_err(&fe, r, e1);
            else
                free(tmp.text);
        }
        if (fe.at != SIZE_MAX)
            rc = errf(err, errlen, "%s", fe.msg);
    }
    if (rc < 0) {
        for (size_t k = 0; k < *nrs; k++)
            free(rs[k].text);
        *nrs = 0;
    }
    free(dov.ovs);
    free(dov.paths);
    sb_free(&form);
    return rc;
}

/* Read the text a pass produced: every edit of the pass (state 2) holds its
 * value, every document reads as its kept form says. */
static int check_pass(wctx *w, const wb_edit *edits, node *const *raws, const size_t *round,
                      size_t nr, const unsigned char *state, const form_sums *sums,
                      size_t before_ndocs, char *err, size_t errlen)
{
    char msg[512];
    first_err fe = {SIZE_MAX, ""};
    size_t changed = SIZE_MAX;
    reader rd;
    strbuf y;
    sb_init(&y);
    by_doc bd;
    by_doc_init(&bd, edits, round, nr);
    int rc = reader_open(&rd, w, msg, sizeof msg);
    for (size_t d = 0; rc == 0; d++) {
        int got = reader_next(&rd);
        if (got < 0) {
            rc = errf(err, errlen, "the edited text does not parse: %s", msg);
            break;
        }
        if (got == 0)
            break;
        size_t ra, rb;
        by_doc_next(&bd, (int)d, &ra, &rb);
        for (size_t q = ra; q < rb; q++) {
            size_t r = bd.v[q].r;
            const wb_edit *e = &edits[round[r]];
            char e1[1024];
            if (state[round[r]] != 2 || r > fe.at)
                continue;
            if (verify_edit(w, e, raws[round[r]], round[r], e1, sizeof e1) < 0)
                keep_err(&fe, r, e1);
        }
        if (changed == SIZE_MAX && d < before_ndocs) {
            uint64_t sum[2];
            y.len = 0;
            wb_canon_doc(&y, w->t.docs[d], w->json, NULL, 0);
            form_sum(&y, sum);
            if (sum[0] != sums[d][0] || sum[1] != sums[d][1])
                changed = d;
        }
        reader_drop(&rd, d);
    }
    reader_close(&rd);
    free(bd.v);
    sb_free(&y);
    if (rc < 0)
        return rc;
    for (size_t r = 0; r < nr; r++) {
        const wb_edit *e = &edits[round[r]];
        char e1[1024];
        if (state[round[r]] != 2 || (e->doc >= 0 && (size_t)e->doc < w->t.ndocs))
            continue;
        if (verify_edit(w, e, raws[round[r]], round[r], e1, sizeof e1) < 0)
            keep_err(&fe, r, e1);
    }
    if (fe.at != SIZE_MAX)
        return errf(err, errlen, "%s", fe.msg);
    if (before_ndocs != w->t.ndocs)
        return errf(err, errlen,
                    "the edits would change the number of documents "
                    "(%zu, then %zu); nothing was written",
                    before_ndocs, w->t.ndocs);
    if (changed != SIZE_MAX)
        return errf(err, errlen,
                    "document %zu would change beyond the edits; nothing "
                    "was written",
                    changed);
    return 0;
}

/* The raw values of edits, parsed once (used to render and to verify);
 * NULL with err naming the edit whose value is not valid JSON. */
static node **parse_raws(const wb_edit *edits, size_t n, char *err, size_t errlen)
{
    node **raws = xcalloc(n ? n : 1, sizeof *raws);
    for (size_t i = 0; i < n; i++) {
        char msg[512];
        if (edits[i].raw && edits[i].value &&
            wb_raw_parse(edits[i].value, &raws[i], msg, sizeof msg) < 0) {
            for (size_t j = 0; j < i; j++)
                wb_node_free(raws[j]);
            free(raws);
            edit_err(err, errlen, i, &edits[i], "%s", msg);
            return NULL;
        }
    }
    return raws;
}

/* What a pass has seen of the edits not done yet, per document: one
 * addressing the whole document, any at all, and the (document, item)
 * pairs of those inside a List (a small open-addressing set). */
typedef struct waiting {
    unsigned char *whole, *any; /* [ndocs] */
    uint64_t *items;            /* (doc << 32 | item) + 1; 0 empty */
    size_t cap;                 /* a power of two */
} waiting;

static size_t item_slot(const waiting *wt, uint64_t key)
{
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (wt->cap - 1);
    while (wt->items[h] && wt->items[h] != key)
        h = (h + 1) & (wt->cap - 1);
    return h;
}

/* The edits of the next pass into round, in order, marked 1 in state:
 * those that wait for no earlier edit still waiting on the same document
 * and item (or on the whole document, or being one). Their number.
 * Linear in the edits: a file with thousands of documents gets thousands
 * of edits in one write. */
static size_t pick_round(const wb_edit *edits, size_t n, unsigned char *state, size_t *round)
{
    int ndocs = 0;
    for (size_t i = 0; i < n; i++)
        if (edits[i].doc >= ndocs)
            ndocs = edits[i].doc + 1;
    waiting wt = {xcalloc((size_t)ndocs + 1, 1), xcalloc((size_t)ndocs + 1, 1), NULL, 16};
    while (wt.cap < 2 * n)
        wt.cap *= 2;
    wt.items = xcalloc(wt.cap, sizeof *wt.items);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        const wb_edit *e = &edits[i];
        if (state[i] == 2 || e->doc < 0)
            continue;
        uint64_t key = ((uint64_t)(uint32_t)e->doc << 32 | (uint32_t)e->item) + 1;
        int blocked =
            wt.whole[e->doc] || (e->item < 0 ? wt.any[e->doc] : wt.items[item_slot(&wt, key)] != 0);
        if (!blocked) {
            state[i] = 1;
            round[nr++] = i;
        }
        wt.any[e->doc] = 1;
        if (e->item < 0)
            wt.whole[e->doc] = 1;
        else
            wt.items[item_slot(&wt, key)] = key;
    }
    free(wt.whole);
    free(wt.any);
    free(wt.items);
    return nr;
}

/* Mark done (2 in state) every edit that a later one makes moot: a value
 * set at the same document, item and path and set there again, with no
 * edit between them on the whole document, on a field that holds this one
 * or on one inside it (either could change what is accepted or where the
 * path leads); the later edit creates, or is refused, exactly as the
 * earlier would. Several patches of one object in a run
 * (each finalizer added to a Cluster's list) then cost one edit, not one
 * pass each. Edits are compared within their document only (grouped by a
 * counting sort), so the cost follows the edits per document. The number
 * marked. */
static size_t drop_superseded(const wb_edit *edits, size_t n, unsigned char *state)
{
    int ndocs = 0;
    for (size_t i = 0; i < n; i++)
        if (edits[i].doc >= ndocs)
            ndocs = edits[i].doc + 1;
    size_t *start = xcalloc((size_t)ndocs + 2, sizeof *start),
           *by = xmalloc((n ? n : 1) * sizeof *by);
    for (size_t i = 0; i < n; i++)
        if (edits[i].doc >= 0)
            start[edits[i].doc + 2]++;
    for (int d = 0; d < ndocs; d++)
        start[d + 2] += start[d + 1];
    for (size_t i = 0; i < n; i++) /* stable: each document's edits in order */
        if (edits[i].doc >= 0)
            by[start[edits[i].doc + 1]++] = i;
    size_t dropped = 0;
    for (int d = 0; d < ndocs; d++) {
        for (size_t x = start[d]; x < start[d + 1]; x++) {
            const wb_edit *a = &edits[by[x]];
            size_t plen = strlen(a->path);
            for (size_t y = x + 1; y < start[d + 1]; y++) {
                const wb_edit *b = &edits[by[y]];
                if (b->item < 0 && a->item >= 0)
                    break; /* the whole document: keep */
                if (b->item != a->item)
                    continue;
                if (strcmp(b->path, a->path) == 0) {
                    if (a->value && b->value && a->raw == b->raw) { /* set, then set again */
                        state[by[x]] = 2;
                        dropped++;
                    }
                    break;
                }
                size_t blen = strlen(b->path), n_ = blen < plen ? blen : plen;
                if (strncmp(a->path, b->path, n_) == 0 &&
                    (blen < plen ? a->path[blen] : b->path[plen]) == '.')
                    break; /* a field holding this one, or inside it, changed between */
            }
        }
    }
    free(start);
    free(by);
    return dropped;
}

/* The text of w with the nrs replacements (in order, not overlapping)
 * spliced in; their texts are freed. */
static strbuf splice_repls(const wctx *w, repl *rs, size_t nrs)
{
    strbuf next;
    sb_init(&next);
    size_t grown = w->len;
    for (size_t r = 0; r < nrs; r++)
        grown += rs[r].text ? strlen(rs[r].text) : 0;
    sb_reserve(&next, grown);
    size_t pos = 0;
    for (size_t r = 0; r < nrs; r++) {
        sb_add(&next, w->s + pos, rs[r].start - pos);
        if (rs[r].text)
            sb_puts(&next, rs[r].text);
        pos = rs[r].end;
        free(rs[r].text);
    }
    sb_add(&next, w->s + pos, w->len - pos);
    return next;
}

/* Whether the manifest reader finds a syntax error in JSON text (err
 * then says where). It reads past one, document by document, and the
 * scanner here is more lenient (as json-c without its strict flag), so
 * the two could number the documents after it differently: such a text
 * is refused, as a YAML text with a syntax error is (libyaml reads it
 * here too). */
static int json_unreadable(const char *text, size_t len, char *err, size_t errlen)
{
    manifest_set s;
    manifest_set_init(&s);
    int bad = manifest_parse("text.json", text, len, &s) < 0;
    if (bad) {
        const char *m = s.n_errors ? s.errors[0].message : "syntax error";
        for (size_t i = 0; i < s.n_errors; i++)
            if (strstr(s.errors[i].message, "syntax error")) {
                m = s.errors[i].message;
                break;
            }
        errf(err, errlen, "cannot parse the JSON text: %s", m);
    }
    manifest_set_free(&s);
    return bad;
}

int writeback_apply(const char *text, size_t len, int is_json, const wb_edit *edits, size_t n,
                    char **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    if (outlen)
        *outlen = 0;
    if (!text) {
        text = "";
        len = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (edits[i].value && !wb_valid_utf8(edits[i].value))
            return edit_err(err, errlen, i, &edits[i], "the value is not valid UTF-8");
    }
    if (is_json && json_unreadable(text, len, err, errlen))
        return -1;
    node **raws = parse_raws(edits, n, err, errlen);
    if (!raws)
        return -1;
    wctx w;
    memset(&w, 0, sizeof w);
    w.json = is_json;
    w.nl = wb_newline_of(text, len);
    strbuf cur; /* the text after the last pass; the caller's until then */
    sb_init(&cur);
    w.s = text;
    w.len = len;
    unsigned char *state = xcalloc(n ? n : 1, 1); /* 0 waiting, 1 now, 2 done */
    repl *rs = xcalloc(n ? n : 1, sizeof *rs);
    size_t *round = xcalloc(n ? n : 1, sizeof *round);
    form_sums *sums = NULL;
    size_t cap_sums = 0;
    int rc = 0, first = 1;
    size_t left = n - drop_superseded(edits, n, state);
    do {
        /* pick the edits of this pass, in order, skipping any that must
         * wait for an earlier one that waits (none at all: the text is
         * only read, so that what does not parse is refused) */
        size_t nr = pick_round(edits, n, state, round);
        size_t nrs = 0, ndocs = 0;
        rc = plan_pass(&w, edits, raws, round, nr, state, rs, &nrs, &sums, &cap_sums, &ndocs, first,
                       err, errlen);
        first = 0;
        if (rc < 0 || nr == 0)
            break;
        strbuf next = splice_repls(&w, rs, nrs);
        for (size_t r = 0; r < nr; r++)
            if (state[round[r]] == 1) {
                state[round[r]] = 2;
                left--;
            }
        sb_free(&cur);
        cur = next;
        w.s = cur.s ? cur.s : "";
        w.len = cur.len;
        rc = check_pass(&w, edits, raws, round, nr, state, sums, ndocs, err, errlen);
    } while (left > 0 && rc == 0);
    wb_tree_free(&w.t);
    free(sums);
    for (size_t i = 0; i < n; i++)
        wb_node_free(raws[i]);
    free(raws);
    free(state);
    free(rs);
    free(round);
    if (rc < 0) {
        sb_free(&cur);
        return -1;
    }
    if (!cur.s)
        sb_add(&cur, text, len); /* no pass: the text as it was */
    if (outlen)
        *outlen = cur.len;
    *out = sb_steal(&cur);
    return 0;
}
