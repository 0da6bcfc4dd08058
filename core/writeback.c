/*
 * writeback.c - format-preserving edits of YAML and JSON manifest text.
 *
 * The text is parsed into a tree of byte positions (YAML from libyaml's
 * events, JSON with the small scanner below), each edit is turned into one
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

#include "util.h"

#define MAX_DEPTH 200
#define MAX_COMPONENTS 64
#define DEFAULT_STEP 2

/* ---- position trees ---------------------------------------------------- */

typedef enum nkind { N_SCALAR, N_SEQ, N_MAP, N_ALIAS } nkind;

typedef struct node {
    nkind kind;
    int flow;   /* flow collection (always for JSON) */
    int style;  /* YAML: libyaml scalar style; JSON: 1 for strings */
    int tagged; /* YAML: has an explicit tag */
    int keep;   /* YAML: block scalar whose trailing breaks are content */
    /* byte offsets: start (properties included), content start (after
     * anchor and tag), end of content, start of the line after the node */
    size_t start, cstart, end, after;
    size_t col;  /* column of start, in characters */
    char *value; /* scalar: decoded text (JSON literals: as written) */
    size_t vlen;
    char *anchor;       /* own anchor, or the alias's target */
    struct node **kids; /* map: key, value, key, value...; seq: elements */
    size_t nkids, cap;
} node;

typedef struct anchor_ref {
    int doc;
    const char *name;
    node *n;
} anchor_ref;

typedef struct tree {
    node **docs;
    size_t ndocs, cap;
    anchor_ref *anchors;
    size_t nanchors, capanchors;
    anchor_ref *aliases;
    size_t naliases, capaliases;
    int step_doc; /* the document whose indentation step is known + 1, 0 for none */
    size_t step;
} tree;

static void node_free(node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++)
        node_free(n->kids[i]);
    free(n->kids);
    free(n->value);
    free(n->anchor);
    free(n);
}

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->ndocs; i++)
        node_free(t->docs[i]);
    free(t->docs);
    free(t->anchors);
    free(t->aliases);
    memset(t, 0, sizeof *t);
}

static void add_kid(node *parent, node *kid)
{
    grow(&parent->kids, &parent->cap, parent->nkids + 1, sizeof *parent->kids);
    parent->kids[parent->nkids++] = kid;
}

/* ---- text helpers ------------------------------------------------------ */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static size_t line_start(const char *s, size_t p)
{
    while (p > 0 && s[p - 1] != '\n' && s[p - 1] != '\r')
        p--;
    return p;
}

/* Offset of the line break ending the line that holds p (or len). */
static size_t line_end(const char *s, size_t len, size_t p)
{
    while (p < len && s[p] != '\n' && s[p] != '\r')
        p++;
    return p;
}

/* Start of the line after the one holding p (len at the last line). */
static size_t next_line(const char *s, size_t len, size_t p)
{
    p = line_end(s, len, p);
    if (p < len && s[p] == '\r')
        p++;
    if (p < len && s[p] == '\n')
        p++;
    return p;
}

static int line_no(const char *s, size_t p)
{
    int line = 1;
    for (size_t i = 0; i < p; i++)
        if (s[i] == '\n')
            line++;
    return line;
}

/* The file's line break: "\r\n" when its first line ends so. */
static const char *newline_of(const char *s, size_t len)
{
    const char *nl = memchr(s, '\n', len);
    if (nl && nl > s && nl[-1] == '\r')
        return "\r\n";
    return "\n";
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n;
        if (*p < 0x80)
            n = 0;
        else if ((*p & 0xe0) == 0xc0 && *p >= 0xc2)
            n = 1;
        else if ((*p & 0xf0) == 0xe0)
            n = 2;
        else if ((*p & 0xf8) == 0xf0 && *p <= 0xf4)
            n = 3;
        else
            return 0;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xc0) != 0x80)
                return 0;
    }
    return 1;
}

/* ---- value rendering --------------------------------------------------- */

/* Words that YAML 1.1 or 1.2 would read as something other than a string. */
static int reserved_word(const char *s)
{
    static const char *const words[] = {"true", "false", "null", "yes", "no",
                                        "on",   "off",   "y",    "n"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasecmp(s, words[i]) == 0)
            return 1;
    return 0;
}

static int plain_safe(const char *s)
{
    static const char *const first =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    if (!s[0] || !strchr(first, s[0]))
        return 0;
    for (const char *p = s + 1; *p; p++)
        if (!strchr(first, *p) && !strchr("-_./", *p))
            return 0;
    if (reserved_word(s))
        return 0;
    /* anything that starts with a digit and could be a number in some
     * schema (decimal, hex, octal, float, 1.1 underscores, dates) */
    if (s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789abcdefABCDEFxXoO._-+") == strlen(s))
        return 0;
    return 1;
}

/* A double-quoted string. Both forms escape quotes, backslashes and the
 * common control characters by name; other control characters are \xNN
 * in YAML (DEL too, which YAML does not allow raw) and \uNNNN in JSON,
 * which also names \b and \f. */
static void render_quoted(strbuf *b, const char *v, int json)
{
    sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        const char *named = NULL;
        switch (*p) {
        case '"': named = "\\\""; break;
        case '\\': named = "\\\\"; break;
        case '\n': named = "\\n"; break;
        case '\t': named = "\\t"; break;
        case '\r': named = "\\r"; break;
        case '\b': named = json ? "\\b" : NULL; break;
        case '\f': named = json ? "\\f" : NULL; break;
        default: break;
        }
        if (named)
            sb_puts(b, named);
        else if (*p < 0x20 || (!json && *p == 0x7f))
            sb_printf(b, json ? "\\u%04x" : "\\x%02x", *p);
        else
            sb_add(b, (const char *)p, 1);
    }
    sb_add(b, "\"", 1);
}

static void render_yaml(strbuf *b, const char *v)
{
    if (plain_safe(v))
        sb_puts(b, v);
    else
        render_quoted(b, v, 0);
}

static void render_json(strbuf *b, const char *v)
{
    render_quoted(b, v, 1);
}

static void render_key(strbuf *b, const char *k, int json)
{
    if (json)
        render_json(b, k);
    else
        render_yaml(b, k);
}

static void render_value(strbuf *b, const char *v, int json)
{
    if (json)
        render_json(b, v);
    else
        render_yaml(b, v);
}

/* "k1: {k2: v}" (YAML flow) or "\"k1\": {\"k2\": \"v\"}" (JSON); val is
 * the value as rendered already. */
static void render_chain(strbuf *b, char *const *comps, size_t n, const char *val, int json)
{
    for (size_t i = 0; i < n; i++) {
        render_key(b, comps[i], json);
        sb_puts(b, ": ");
        if (i + 1 < n)
            sb_add(b, "{", 1);
    }
    sb_puts(b, val);
    for (size_t i = 1; i < n; i++)
        sb_add(b, "}", 1);
}

/* Block lines "key:\n  key: v", the first at `indent`, each next one
 * `step` deeper, separated by nl, without a final break; val is the value
 * as rendered already. */
static void render_block(strbuf *b, char *const *comps, size_t n, const char *val, size_t indent,
                         size_t step, const char *nl)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_puts(b, nl);
        for (size_t j = 0; j < indent + i * step; j++)
            sb_add(b, " ", 1);
        render_key(b, comps[i], 0);
        sb_add(b, ":", 1);
    }
    sb_add(b, " ", 1);
    sb_puts(b, val);
}

/* ---- YAML trees -------------------------------------------------------- */

typedef struct ybuild {
    yaml_parser_t p;
    const char *s;
    size_t len;
    size_t bom;
    size_t *cmap; /* character index -> byte offset; NULL for ASCII text */
    size_t nchars;
    tree *t;
    int doc;
    char *err;
    size_t errlen;
} ybuild;

/* libyaml counts marks in characters (after a byte-order mark); map them
 * back to bytes. */
static void build_cmap(ybuild *b)
{
    b->bom = b->len >= 3 && memcmp(b->s, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    size_t i;
    for (i = b->bom; i < b->len; i++)
        if ((unsigned char)b->s[i] >= 0x80)
            break;
    if (i == b->len)
        return;
    b->cmap = xmalloc((b->len + 1) * sizeof *b->cmap);
    size_t n = 0;
    for (i = b->bom; i < b->len;) {
        unsigned char c = (unsigned char)b->s[i];
        size_t w = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 1;
        b->cmap[n++] = i;
        i += w;
    }
    b->cmap[n] = b->len;
    b->nchars = n;
}

static size_t byte_at(const ybuild *b, size_t idx)
{
    if (!b->cmap)
        return b->bom + idx < b->len ? b->bom + idx : b->len;
    return idx <= b->nchars ? b->cmap[idx] : b->len;
}

/* Skip an anchor and/or tag (and the space or comments after them). */
static size_t skip_props(const char *s, size_t p, size_t end)
{
    while (p < end && (s[p] == '&' || s[p] == '!')) {
        while (p < end && !is_space(s[p]))
            p++;
        while (p < end) {
            if (is_space(s[p]))
                p++;
            else if (s[p] == '#')
                while (p < end && s[p] != '\n' && s[p] != '\r')
                    p++;
            else
                break;
        }
    }
    return p;
}

static int yaml_fail(ybuild *b)
{
    yaml_parser_t *p = &b->p;
    if (p->error == YAML_READER_ERROR) {
        size_t off = p->problem_offset < b->len ? p->problem_offset : b->len;
        return errf(b->err, b->errlen, "line %d: %s", line_no(b->s, off),
                    p->problem ? p->problem : "unreadable text");
    }
    return errf(b->err, b->errlen, "line %zu, column %zu: %s", p->problem_mark.line + 1,
                p->problem_mark.column + 1, p->problem ? p->problem : "syntax error");
}

static int ynext(ybuild *b, yaml_event_t *ev)
{
    return yaml_parser_parse(&b->p, ev) ? 0 : yaml_fail(b);
}

static void add_ref(anchor_ref **refs, size_t *n, size_t *cap, int doc, node *node_)
{
    grow(refs, cap, *n + 1, sizeof **refs);
    (*refs)[*n].doc = doc;
    (*refs)[*n].name = node_->anchor;
    (*refs)[*n].n = node_;
    (*n)++;
}

static void add_anchor(ybuild *b, node *n)
{
    tree *t = b->t;
    if (n->kind == N_ALIAS)
        add_ref(&t->aliases, &t->naliases, &t->capaliases, b->doc, n);
    else
        add_ref(&t->anchors, &t->nanchors, &t->capanchors, b->doc, n);
}

/* Build the node whose first event is *ev (consumed). */
static int ybuild_node(ybuild *b, yaml_event_t *ev, int depth, node **out)
{
    node *n = xcalloc(1, sizeof *n);
    const char *s = b->s;
    const char *anchor = NULL;
    int rc = 0;
    *out = n;
    n->start = byte_at(b, ev->start_mark.index);
    n->col = ev->start_mark.column;
    if (depth > MAX_DEPTH) {
        size_t line = ev->start_mark.line + 1; /* the event is cleared below */
        yaml_event_delete(ev);
        return errf(b->err, b->errlen, "line %zu: nesting deeper than %d", line, MAX_DEPTH);
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        n->kind = N_SCALAR;
        n->style = ev->data.scalar.style;
        n->tagged = ev->data.scalar.tag != NULL;
        anchor = (const char *)ev->data.scalar.anchor;
        n->value = xmalloc(ev->data.scalar.length + 1);
        memcpy(n->value, ev->data.scalar.value, ev->data.scalar.length + 1);
        n->vlen = ev->data.scalar.length;
        size_t end = byte_at(b, ev->end_mark.index);
        n->cstart = (anchor || n->tagged) ? skip_props(s, n->start, end) : n->start;
        if (n->style == YAML_LITERAL_SCALAR_STYLE || n->style == YAML_FOLDED_SCALAR_STYLE) {
            /* libyaml ends a block scalar after its trailing breaks, in
             * the next line's indentation: end it after its last
             * non-blank character instead, or, when trailing breaks are
             * content (keep chomping "|+"), at the start of that line. */
            size_t h = n->cstart + 1;
            int keep = 0;
            while (h < end && strchr("+-0123456789", s[h]))
                keep |= s[h++] == '+';
            n->end = end;
            while (n->end > n->cstart + 1 && is_space(s[n->end - 1]))
                n->end--;
            n->keep = keep;
            n->after = keep ? line_start(s, end) : next_line(s, b->len, n->end);
            if (n->after < n->end)
                n->after = next_line(s, b->len, n->end);
        } else {
            n->end = end;
            n->after = next_line(s, b->len, end);
        }
        break;
    }
    case YAML_ALIAS_EVENT:
        n->kind = N_ALIAS;
        n->anchor = xstrdup((const char *)ev->data.alias.anchor);
        n->cstart = n->start;
        n->end = byte_at(b, ev->end_mark.index);
        n->after = next_line(s, b->len, n->end);
        add_anchor(b, n);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int map = ev->type == YAML_MAPPING_START_EVENT;
        yaml_event_type_t end_type = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
        n->kind = map ? N_MAP : N_SEQ;
        if (map) {
            anchor = (const char *)ev->data.mapping_start.anchor;
            n->flow = ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
            n->tagged = ev->data.mapping_start.tag != NULL;
        } else {
            anchor = (const char *)ev->data.sequence_start.anchor;
            n->flow = ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
            n->tagged = ev->data.sequence_start.tag != NULL;
        }
        n->cstart = (anchor || n->tagged) ? skip_props(s, n->start, b->len) : n->start;
        if (anchor)
            n->anchor = xstrdup(anchor);
        anchor = NULL;
        for (;;) {
            yaml_event_t kev;
            if (ynext(b, &kev) < 0) {
                rc = -1;
                break;
            }
            if (kev.type == end_type) {
                size_t close = byte_at(b, kev.end_mark.index);
                yaml_event_delete(&kev);
                if (n->flow) {
                    n->end = close;
                    n->after = next_line(s, b->len, close);
                } else if (n->nkids) {
                    n->end = n->kids[n->nkids - 1]->end;
                    n->after = n->kids[n->nkids - 1]->after;
                } else {
                    n->end = n->cstart;
                    n->after = next_line(s, b->len, n->end);
                }
                break;
            }
            node *kid;
            rc = ybuild_node(b, &kev, depth + 1, &kid);
            add_kid(n, kid);
            if (rc < 0)
                break;
        }
        if (n->anchor)
            add_anchor(b, n);
        break;
    }
    default:
        rc = errf(b->err, b->errlen, "unexpected YAML event");
        break;
    }
    if (anchor) {
        n->anchor = xstrdup(anchor);
        add_anchor(b, n);
    }
    yaml_event_delete(ev);
    return rc;
}

/* The next document into t->docs[t->ndocs]: 1, 0 at the end of the
 * stream, -1 on an error (b->err says it). */
static int yaml_next_doc(ybuild *b)
{
    tree *t = b->t;
    for (;;) {
        yaml_event_t ev;
        if (ynext(b, &ev) < 0)
            return -1;
        yaml_event_type_t type = ev.type;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            return 0;
        if (type != YAML_DOCUMENT_START_EVENT)
            continue;
        b->doc = (int)t->ndocs;
        node *root = NULL;
        if (ynext(b, &ev) < 0)
            return -1;
        int rc = ybuild_node(b, &ev, 0, &root);
        grow(&t->docs, &t->cap, t->ndocs + 1, sizeof *t->docs);
        t->docs[t->ndocs++] = root;
        return rc < 0 ? -1 : 1;
    }
}

/* ---- JSON trees -------------------------------------------------------- */

typedef struct jbuild {
    const char *s;
    size_t len, i;
    char *err;
    size_t errlen;
} jbuild;

static int jfail(jbuild *b, const char *what)
{
    size_t p = b->i < b->len ? b->i : b->len;
    return errf(b->err, b->errlen, "line %d, column %zu: %s", line_no(b->s, p),
                p - line_start(b->s, p) + 1, what);
}

static void jws(jbuild *b)
{
    while (b->i < b->len && is_space(b->s[b->i]))
        b->i++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int jhex4(jbuild *b, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = b->i < b->len ? hexval(b->s[b->i]) : -1;
        if (h < 0)
            return jfail(b, "bad \\u escape");
        v = v * 16 + (unsigned)h;
        b->i++;
    }
    *out = v;
    return 0;
}

static void put_utf8(strbuf *sb, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    sb_add(sb, u, n);
}

/* A string at b->i (json-c also takes single quotes); decoded into n. */
static int jstring(jbuild *b, node *n)
{
    char q = b->s[b->i++];
    strbuf sb;
    sb_init(&sb);
    for (;;) {
        if (b->i >= b->len) {
            sb_free(&sb);
            return jfail(b, "unterminated string");
        }
        char c = b->s[b->i++];
        if (c == q)
            break;
        if (c != '\\') {
            sb_add(&sb, &c, 1);
            continue;
        }
        if (b->i >= b->len)
            continue;
        c = b->s[b->i++];
        unsigned cp;
        switch (c) {
        case 'b':
            sb_add(&sb, "\b", 1);
            break;
        case 'f':
            sb_add(&sb, "\f", 1);
            break;
        case 'n':
            sb_add(&sb, "\n", 1);
            break;
        case 'r':
            sb_add(&sb, "\r", 1);
            break;
        case 't':
            sb_add(&sb, "\t", 1);
            break;
        case 'u':
            if (jhex4(b, &cp) < 0) {
                sb_free(&sb);
                return -1;
            }
            if (cp >= 0xd800 && cp < 0xdc00 && b->i + 6 <= b->len && b->s[b->i] == '\\' &&
                b->s[b->i + 1] == 'u') {
                unsigned lo;
                b->i += 2;
                if (jhex4(b, &lo) < 0) {
                    sb_free(&sb);
                    return -1;
                }
                if (lo >= 0xdc00 && lo < 0xe000)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else
                    put_utf8(&sb, cp), cp = lo;
            }
            put_utf8(&sb, cp);
            break;
        default:
            sb_add(&sb, &c, 1);
        }
    }
    n->vlen = sb.len;
    n->value = sb_steal(&sb);
    n->style = 1;
    return 0;
}

static int jvalue(jbuild *b, int depth, node **out);

static int jcontainer(jbuild *b, node *n, int depth)
{
    int map = n->kind == N_MAP;
    char close = map ? '}' : ']';
    b->i++;
    jws(b);
    if (b->i < b->len && b->s[b->i] == close) {
        b->i++;
        return 0;
    }
    for (;;) {
        node *kid;
        if (map) {
            jws(b);
            if (b->i >= b->len || (b->s[b->i] != '"' && b->s[b->i] != '\''))
                return jfail(b, "expected a string key");
            kid = xcalloc(1, sizeof *kid);
            kid->kind = N_SCALAR;
            kid->start = kid->cstart = b->i;
            add_kid(n, kid);
            if (jstring(b, kid) < 0)
                return -1;
            kid->end = b->i;
            jws(b);
            if (b->i >= b->len || b->s[b->i] != ':')
                return jfail(b, "expected ':'");
            b->i++;
        }
        int rc = jvalue(b, depth + 1, &kid);
        add_kid(n, kid);
        if (rc < 0)
            return -1;
        jws(b);
        if (b->i < b->len && b->s[b->i] == ',') {
            b->i++;
            continue;
        }
        if (b->i < b->len && b->s[b->i] == close) {
            b->i++;
            return 0;
        }
        return jfail(b, map ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jvalue(jbuild *b, int depth, node **out)
{
    jws(b);
    node *n = xcalloc(1, sizeof *n);
    *out = n;
    n->start = n->cstart = b->i;
    if (depth > MAX_DEPTH)
        return jfail(b, "nesting too deep");
    if (b->i >= b->len)
        return jfail(b, "unexpected end of text");
    char c = b->s[b->i];
    int rc = 0;
    if (c == '{' || c == '[') {
        n->kind = c == '{' ? N_MAP : N_SEQ;
        n->flow = 1;
        rc = jcontainer(b, n, depth);
    } else if (c == '"' || c == '\'') {
        n->kind = N_SCALAR;
        rc = jstring(b, n);
    } else {
        n->kind = N_SCALAR;
        size_t st = b->i;
        while (b->i < b->len &&
               (strchr("+-.", b->s[b->i]) || (b->s[b->i] >= '0' && b->s[b->i] <= '9') ||
                (b->s[b->i] >= 'a' && b->s[b->i] <= 'z') ||
                (b->s[b->i] >= 'A' && b->s[b->i] <= 'Z')))
            b->i++;
        if (b->i == st)
            return jfail(b, "unexpected character");
        n->vlen = b->i - st;
        n->value = xmalloc(n->vlen + 1);
        memcpy(n->value, b->s + st, n->vlen);
        n->value[n->vlen] = '\0';
    }
    n->end = b->i;
    n->after = next_line(b->s, b->len, n->end);
    return rc;
}

/* The next document into t->docs[t->ndocs]: 1, 0 at the end of the
 * text, -1 on an error (b->err says it). */
static int json_next_doc(jbuild *b, tree *t)
{
    jws(b);
    if (b->i >= b->len)
        return 0;
    node *root;
    int rc = jvalue(b, 0, &root);
    grow(&t->docs, &t->cap, t->ndocs + 1, sizeof *t->docs);
    t->docs[t->ndocs++] = root;
    return rc < 0 ? -1 : 1;
}

/* ---- raw values ---------------------------------------------------------
 *
 * A raw edit's value is a JSON text, checked strictly here (the scanner
 * above is lenient, as json-c is), then read into a tree by that scanner
 * and written out again by render_raw. */

typedef struct jcheck {
    const char *s;
    size_t len, i;
    char *msg;
    size_t msglen;
} jcheck;

static int jc_fail(jcheck *c, const char *what)
{
    size_t p = c->i < c->len ? c->i : c->len;
    return errf(c->msg, c->msglen, "line %d, column %zu: %s", line_no(c->s, p),
                p - line_start(c->s, p) + 1, what);
}

static void jc_ws(jcheck *c)
{
    while (c->i < c->len && is_space(c->s[c->i]))
        c->i++;
}

static int jc_hex4(jcheck *c, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = c->i < c->len ? hexval(c->s[c->i]) : -1;
        if (h < 0)
            return jc_fail(c, "bad \\u escape");
        v = v * 16 + (unsigned)h;
        c->i++;
    }
    *out = v;
    return 0;
}

static int jc_string(jcheck *c)
{
    c->i++; /* the opening quote */
    for (;;) {
        if (c->i >= c->len)
            return jc_fail(c, "unterminated string");
        unsigned char ch = (unsigned char)c->s[c->i];
        if (ch == '"') {
            c->i++;
            return 0;
        }
        if (ch < 0x20)
            return jc_fail(c, "control character in a string (escape it)");
        if (ch != '\\') {
            c->i++;
            continue;
        }
        c->i++;
        if (c->i >= c->len)
            return jc_fail(c, "unterminated string");
        ch = (unsigned char)c->s[c->i];
        if (ch != 'u') {
            if (!strchr("\"\\/bfnrt", ch))
                return jc_fail(c, "unknown escape in a string");
            c->i++;
            continue;
        }
        c->i++;
        size_t at = c->i - 2;
        unsigned cp;
        if (jc_hex4(c, &cp) < 0)
            return -1;
        if (cp == 0) {
            c->i = at;
            return jc_fail(c, "\\u0000 (a NUL character) cannot be written to a manifest");
        }
        if (cp >= 0xdc00 && cp < 0xe000) {
            c->i = at;
            return jc_fail(c, "lone low surrogate in a \\u escape");
        }
        if (cp >= 0xd800 && cp < 0xdc00) {
            unsigned lo;
            if (c->i + 2 > c->len || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u') {
                c->i = at;
                return jc_fail(c, "lone high surrogate in a \\u escape");
            }
            c->i += 2;
            if (jc_hex4(c, &lo) < 0)
                return -1;
            if (lo < 0xdc00 || lo >= 0xe000) {
                c->i = at;
                return jc_fail(c, "lone high surrogate in a \\u escape");
            }
        }
    }
}

static int jc_digits(jcheck *c)
{
    size_t st = c->i;
    while (c->i < c->len && c->s[c->i] >= '0' && c->s[c->i] <= '9')
        c->i++;
    return c->i > st ? 0 : jc_fail(c, "malformed number");
}

static int jc_number(jcheck *c)
{
    if (c->s[c->i] == '-')
        c->i++;
    if (c->i < c->len && c->s[c->i] == '0')
        c->i++;
    else if (jc_digits(c) < 0)
        return -1;
    if (c->i < c->len && c->s[c->i] == '.') {
        c->i++;
        if (jc_digits(c) < 0)
            return -1;
    }
    if (c->i < c->len && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-'))
            c->i++;
        if (jc_digits(c) < 0)
            return -1;
    }
    /* "01", "1x": the scanner that reads the value would take more */
    if (c->i < c->len && (isalnum((unsigned char)c->s[c->i]) || strchr("+-.", c->s[c->i])))
        return jc_fail(c, "malformed number");
    return 0;
}

static int jc_value(jcheck *c, int depth)
{
    jc_ws(c);
    if (depth > MAX_DEPTH)
        return jc_fail(c, "nesting too deep");
    if (c->i >= c->len)
        return jc_fail(c, "unexpected end of text");
    char ch = c->s[c->i];
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->i++;
        jc_ws(c);
        if (c->i < c->len && c->s[c->i] == close) {
            c->i++;
            return 0;
        }
        for (;;) {
            if (ch == '{') {
                jc_ws(c);
                if (c->i >= c->len || c->s[c->i] != '"')
                    return jc_fail(c, "expected a string key");
                if (jc_string(c) < 0)
                    return -1;
                jc_ws(c);
                if (c->i >= c->len || c->s[c->i] != ':')
                    return jc_fail(c, "expected ':'");
                c->i++;
            }
            if (jc_value(c, depth + 1) < 0)
                return -1;
            jc_ws(c);
            if (c->i < c->len && c->s[c->i] == ',') {
                c->i++;
                continue;
            }
            if (c->i < c->len && c->s[c->i] == close) {
                c->i++;
                return 0;
            }
            return jc_fail(c, ch == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (ch == '"')
        return jc_string(c);
    if (ch == '-' || (ch >= '0' && ch <= '9'))
        return jc_number(c);
    static const char *const words[] = {"true", "false", "null"};
    for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
        size_t wl = strlen(words[k]);
        if (c->len - c->i >= wl && memcmp(c->s + c->i, words[k], wl) == 0 &&
            (c->len - c->i == wl || !isalnum((unsigned char)c->s[c->i + wl]))) {
            c->i += wl;
            return 0;
        }
    }
    return jc_fail(c, "unexpected character");
}

/* The first key that a map in n holds twice, or NULL. */
static const node *raw_dup_key(const node *n)
{
    if (n->kind == N_MAP)
        for (size_t i = 0; i + 1 < n->nkids; i += 2)
            for (size_t j = i + 2; j + 1 < n->nkids; j += 2)
                if (n->kids[i]->vlen == n->kids[j]->vlen &&
                    memcmp(n->kids[i]->value, n->kids[j]->value, n->kids[i]->vlen) == 0)
                    return n->kids[i];
    for (size_t i = 0; i < n->nkids; i++) {
        const node *d = raw_dup_key(n->kids[i]);
        if (d)
            return d;
    }
    return NULL;
}

/* Read a raw edit's JSON text. 0 with *out (free with node_free), or -1
 * with msg. */
static int raw_parse(const char *text, node **out, char *msg, size_t msglen)
{
    char why[256];
    jcheck c = {text, strlen(text), 0, why, sizeof why};
    *out = NULL;
    if (jc_value(&c, 0) < 0)
        return errf(msg, msglen, "the value is not valid JSON: %s", why);
    jc_ws(&c);
    if (c.i < c.len) {
        jc_fail(&c, "text after the value");
        return errf(msg, msglen, "the value is not valid JSON: %s", why);
    }
    jbuild b = {text, c.len, 0, why, sizeof why};
    node *n = NULL;
    if (jvalue(&b, 0, &n) < 0) { /* cannot happen after the check */
        node_free(n);
        return errf(msg, msglen, "the value is not valid JSON: %s", why);
    }
    const node *dup = raw_dup_key(n);
    if (dup) {
        int rc =
            errf(msg, msglen, "the value is not valid JSON here: duplicate key \"%s\"", dup->value);
        node_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

/* A JSON string that YAML reads back as the same text in double quotes. */
static void render_jstring(strbuf *b, const char *v, size_t len)
{
    const unsigned char *p = (const unsigned char *)v, *e = p + len;
    sb_add(b, "\"", 1);
    while (p < e) {
        unsigned cp = 0;
        size_t w = 1;
        if (*p == '"')
            sb_puts(b, "\\\"");
        else if (*p == '\\')
            sb_puts(b, "\\\\");
        else if (*p == '\n')
            sb_puts(b, "\\n");
        else if (*p == '\t')
            sb_puts(b, "\\t");
        else if (*p == '\r')
            sb_puts(b, "\\r");
        else if (*p == '\b')
            sb_puts(b, "\\b");
        else if (*p == '\f')
            sb_puts(b, "\\f");
        else if (*p < 0x20 || *p == 0x7f)
            sb_printf(b, "\\u%04x", *p);
        else if (*p < 0x80)
            sb_add(b, (const char *)p, 1);
        else {
            /* valid UTF-8: checked before */
            w = (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;
            if (w > (size_t)(e - p))
                w = (size_t)(e - p);
            cp = *p & (w == 2 ? 0x1f : w == 3 ? 0x0f : 0x07);
            for (size_t k = 1; k < w; k++)
                cp = (cp << 6) | (p[k] & 0x3f);
            /* C1 controls (NEL among them), line and paragraph
             * separators, byte-order mark, non-characters */
            if ((cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
                cp == 0xfffe || cp == 0xffff)
                sb_printf(b, "\\u%04x", cp);
            else
                sb_add(b, (const char *)p, w);
        }
        p += w;
    }
    sb_add(b, "\"", 1);
}

/* A raw value on one line: JSON that is also YAML flow syntax. */
static void render_raw(strbuf *b, const node *n)
{
    switch (n->kind) {
    case N_MAP:
        sb_add(b, "{", 1);
        for (size_t i = 0; i + 1 < n->nkids; i += 2) {
            if (i)
                sb_puts(b, ", ");
            render_jstring(b, n->kids[i]->value, n->kids[i]->vlen);
            sb_puts(b, ": ");
            render_raw(b, n->kids[i + 1]);
        }
        sb_add(b, "}", 1);
        return;
    case N_SEQ:
        sb_add(b, "[", 1);
        for (size_t i = 0; i < n->nkids; i++) {
            if (i)
                sb_puts(b, ", ");
            render_raw(b, n->kids[i]);
        }
        sb_add(b, "]", 1);
        return;
    default:
        if (n->style == 1)
            render_jstring(b, n->value, n->vlen);
        else
            sb_add(b, n->value, n->vlen); /* number, true, false, null */
        return;
    }
}

/* ---- locating a path --------------------------------------------------- */

typedef struct keypath {
    char *comps[MAX_COMPONENTS];
    size_t n;
} keypath;

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

static int key_is(const node *k, const char *key)
{
    return k->kind == N_SCALAR && k->vlen == strlen(key) && memcmp(k->value, key, k->vlen) == 0;
}

/* Index of the pair holding key (kids[2i], kids[2i+1]), or -1. A key that
 * is there twice (JSON lets it be) gives its last pair: the manifest
 * reader, like json-c, keeps the last value, so an edit of the first one
 * would be lost on the next read. */
static long map_find(const node *m, const char *key)
{
    long found = -1;
    for (size_t i = 0; i + 1 < m->nkids; i += 2)
        if (key_is(m->kids[i], key))
            found = (long)(i / 2);
    return found;
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
        if (!key_is(k, "<<") || k->style != YAML_PLAIN_SCALAR_STYLE)
            continue;
        size_t nsrc = v->kind == N_SEQ ? v->nkids : 1;
        for (size_t j = 0; j < nsrc; j++) {
            const node *src = v->kind == N_SEQ ? v->kids[j] : v;
            if (src->kind == N_ALIAS)
                src = find_anchor(t, doc, src->anchor, src->start);
            if (!src || src->kind != N_MAP)
                continue;
            if (map_find(src, key) >= 0 || merged_key(t, doc, src, key, depth + 1))
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

static int is_null(const node *n, int json)
{
    if (n->kind != N_SCALAR || !n->value)
        return 0;
    if (json)
        return n->style == 0 && strcmp(n->value, "null") == 0;
    if (n->style != YAML_PLAIN_SCALAR_STYLE || n->tagged)
        return 0;
    const char *v = n->value;
    return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
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
    if (is_null(n, w->json)) {
        errf(msg, msglen, "the document is empty");
        return NULL;
    }
    if (n->kind != N_MAP) {
        errf(msg, msglen, "the document is not a map");
        return NULL;
    }
    const char *shared = anchor_shared(&w->t, e->doc, n) ? "the document" : NULL;
    if (e->item >= 0) {
        long p = map_find(n, "items");
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
        long k = map_find(m, key);
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
        if (is_null(v, w->json)) {
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
            render_chain(&b, comps, n, val, w->json);
        } else {
            node *lastk = m->kids[m->nkids - 2];
            node *lastv = m->kids[m->nkids - 1];
            r->start = r->end = lastv->end;
            if (w->json && memchr(w->s + m->start, '\n', lastk->start - m->start)) {
                size_t ls = line_start(w->s, lastk->start), ie = ls;
                while (ie < lastk->start && (w->s[ie] == ' ' || w->s[ie] == '\t'))
                    ie++;
                sb_puts(&b, ",");
                sb_puts(&b, w->nl);
                sb_add(&b, w->s + ls, ie - ls);
            } else {
                sb_puts(&b, ", ");
            }
            render_chain(&b, comps, n, val, w->json);
        }
    } else {
        size_t step = doc_step(w, e->doc);
        node *lastv = m->kids[m->nkids - 1];
        size_t at = lastv->after;
        int no_break = at == w->len && at > 0 && w->s[at - 1] != '\n' && w->s[at - 1] != '\r';
        if (no_break)
            sb_puts(&b, w->nl);
        render_block(&b, comps, n, val, key_column(w, m), step, w->nl);
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
        render_chain(&b, comps, n, val, w->json);
        sb_add(&b, "}", 1);
    } else {
        size_t step = doc_step(w, e->doc);
        size_t eol = line_end(w->s, w->len, v->end);
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
        render_block(&b, comps, n, val, key->col + step, step, w->nl);
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
    size_t eol = line_end(s, w->len, colon);
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
    size_t ls = line_start(w->s, head);
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
                r->end = next_line(w->s, w->len, q);
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
        render_raw(&val, raw);
    else if (e->value)
        render_value(&val, e->value, w->json);
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

typedef struct overlay overlay;
static void canon(strbuf *b, const node *n, int json, const overlay *ov, size_t at);
static void canon_raw(strbuf *b, const node *n, int json);

/* Whether v holds the raw value (its own anchor aside). */
static int holds_raw(const node *v, const node *raw, int json)
{
    strbuf x, y;
    sb_init(&x);
    sb_init(&y);
    canon(&x, v, json, NULL, 0);
    canon_raw(&y, raw, json);
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
        (e->doc >= 0 && ((size_t)e->doc >= w->t.ndocs || is_null(w->t.docs[e->doc], w->json))))
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
    int ok =
        v && v->kind == N_SCALAR && v->vlen == strlen(e->value) &&
        memcmp(v->value, e->value, v->vlen) == 0 &&
        (w->json ? v->style == 1 : (v->style != YAML_PLAIN_SCALAR_STYLE || plain_safe(v->value)));
    if (!ok)
        return edit_err(err, errlen, idx, e, "after the edit the field does not hold the value");
    return 0;
}

/* ---- checking that nothing else changed -------------------------------
 *
 * Each document is written out in a canonical form (structure, keys,
 * scalar text and whether it is plain, anchors, aliases; not layout), once
 * from the text before a pass with the pass's edits laid over it, once from
 * the text after it. They must be equal. An empty map and null read the
 * same (removing a block map's last key leaves null). */

struct overlay {
    const keypath *p;
    int item;
    const char *value;
    const node *raw; /* a raw edit's parsed value */
};

static void canon_text(strbuf *b, char kind, int tagged, const char *v, size_t len)
{
    sb_printf(b, "%c%s%zu:", kind, tagged ? "t" : "", len);
    sb_add(b, v, len);
}

static void canon_scalar(strbuf *b, const node *n, int json)
{
    if (n->anchor)
        sb_printf(b, "&%s ", n->anchor);
    if (is_null(n, json)) {
        sb_add(b, "~", 1);
        return;
    }
    char kind =
        json ? (n->style == 1 ? 's' : 'l') : (n->style == YAML_PLAIN_SCALAR_STYLE ? 'p' : 's');
    canon_text(b, kind, n->tagged, n->value, n->vlen);
}

/* A string as writeback renders it. */
static void canon_new(strbuf *b, const char *v, int json)
{
    canon_text(b, json || !plain_safe(v) ? 's' : 'p', 0, v, strlen(v));
}

/* A raw value as render_raw writes it: strings (keys too) quoted, other
 * scalars plain (JSON: literals), null and {} as null. */
static void canon_raw(strbuf *b, const node *n, int json)
{
    switch (n->kind) {
    case N_MAP:
        if (n->nkids == 0) {
            sb_add(b, "~", 1);
            return;
        }
        sb_add(b, "{", 1);
        for (size_t i = 0; i + 1 < n->nkids; i += 2) {
            canon_text(b, 's', 0, n->kids[i]->value, n->kids[i]->vlen);
            canon_raw(b, n->kids[i + 1], json);
        }
        sb_add(b, "}", 1);
        return;
    case N_SEQ:
        sb_add(b, "[", 1);
        for (size_t i = 0; i < n->nkids; i++)
            canon_raw(b, n->kids[i], json);
        sb_add(b, "]", 1);
        return;
    default:
        if (n->style == 1)
            canon_text(b, 's', 0, n->value, n->vlen);
        else if (n->vlen == 4 && memcmp(n->value, "null", 4) == 0)
            sb_add(b, "~", 1);
        else
            canon_text(b, json ? 'l' : 'p', 0, n->value, n->vlen);
        return;
    }
}

/* The value an overlay puts at its path. */
static void canon_value(strbuf *b, const overlay *ov, int json)
{
    if (ov->raw)
        canon_raw(b, ov->raw, json);
    else
        canon_new(b, ov->value, json);
}

/* {comps[from]: {...: value}} */
static void canon_chain(strbuf *b, const overlay *ov, size_t from, int json)
{
    if (from == ov->p->n) {
        canon_value(b, ov, json);
        return;
    }
    sb_add(b, "{", 1);
    canon_new(b, ov->p->comps[from], json);
    canon_chain(b, ov, from + 1, json);
    sb_add(b, "}", 1);
}

static void canon_map(strbuf *b, const node *n, int json, const overlay *ov, size_t at)
{
    const char *ck = ov && at < ov->p->n ? ov->p->comps[at] : NULL;
    int last = ck && at + 1 == ov->p->n;
    int found = 0;
    /* the pair the edit goes to: the last one of a key given twice */
    long target = ck ? map_find(n, ck) : -1;
    size_t count = 0;
    if (n->anchor)
        sb_printf(b, "&%s ", n->anchor);
    size_t mark = b->len;
    sb_add(b, "{", 1);
    for (size_t i = 0; i + 1 < n->nkids; i += 2) {
        const node *k = n->kids[i], *v = n->kids[i + 1];
        if (ck && !found && (long)(i / 2) == target) {
            found = 1;
            if (last && !ov->value)
                continue;
            canon(b, k, json, NULL, 0);
            if (last) {
                if (v->anchor && v->kind != N_ALIAS && (v->kind == N_SCALAR || ov->raw))
                    sb_printf(b, "&%s ", v->anchor);
                canon_value(b, ov, json);
            } else if (is_null(v, json) && ov->value) {
                canon_chain(b, ov, at + 1, json);
            } else {
                canon(b, v, json, ov, at + 1);
            }
            count++;
            continue;
        }
        canon(b, k, json, NULL, 0);
        canon(b, v, json, NULL, 0);
        count++;
    }
    if (ck && !found && ov->value) {
        canon_new(b, ck, json);
        canon_chain(b, ov, at + 1, json);
        count++;
    }
    if (count == 0) {
        b->len = mark;
        sb_add(b, "~", 1);
    } else {
        sb_add(b, "}", 1);
    }
}

static void canon(strbuf *b, const node *n, int json, const overlay *ov, size_t at)
{
    switch (n->kind) {
    case N_SCALAR:
        canon_scalar(b, n, json);
        return;
    case N_ALIAS:
        sb_printf(b, "*%s ", n->anchor);
        return;
    case N_MAP:
        canon_map(b, n, json, ov, at);
        return;
    case N_SEQ:
        if (n->anchor)
            sb_printf(b, "&%s ", n->anchor);
        sb_add(b, "[", 1);
        for (size_t i = 0; i < n->nkids; i++)
            canon(b, n->kids[i], json, NULL, 0);
        sb_add(b, "]", 1);
        return;
    }
}

/* A document with the overlays of one pass: one whole-document edit, or
 * edits of distinct List items. */
static void canon_doc(strbuf *b, const node *root, int json, const overlay *ovs, size_t nov)
{
    if (nov == 0 || ovs[0].item < 0) {
        canon(b, root, json, nov ? &ovs[0] : NULL, 0);
        return;
    }
    if (root->anchor)
        sb_printf(b, "&%s ", root->anchor);
    sb_add(b, "{", 1);
    long items = map_find(root, "items");
    for (size_t i = 0; i + 1 < root->nkids; i += 2) {
        const node *v = root->kids[i + 1];
        canon(b, root->kids[i], json, NULL, 0);
        if ((long)(i / 2) != items || v->kind != N_SEQ) {
            canon(b, v, json, NULL, 0);
            continue;
        }
        if (v->anchor)
            sb_printf(b, "&%s ", v->anchor);
        sb_add(b, "[", 1);
        for (size_t j = 0; j < v->nkids; j++) {
            const overlay *ov = NULL;
            for (size_t k = 0; k < nov; k++)
                if (ovs[k].item == (int)j)
                    ov = &ovs[k];
            canon(b, v->kids[j], json, ov, 0);
        }
        sb_add(b, "]", 1);
    }
    sb_add(b, "}", 1);
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
    tree_free(&w->t);
    if (w->json) {
        r->jb = (jbuild){w->s, w->len, 0, err, errlen};
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
    build_cmap(&r->yb);
    yaml_parser_set_input_string(&r->yb.p, (const unsigned char *)w->s, w->len);
    return 0;
}

/* The next document, at w->t.docs[w->t.ndocs - 1]: 1, 0 at the end, -1 on
 * an error. */
static int reader_next(reader *r)
{
    return r->w->json ? json_next_doc(&r->jb, &r->w->t) : yaml_next_doc(&r->yb);
}

/* Forget document d's tree (and the anchors it held). */
static void reader_drop(reader *r, size_t d)
{
    tree *t = &r->w->t;
    node_free(t->docs[d]);
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

/* The pass's overlays of document d (edits not postponed), for canon_doc. */
static size_t doc_overlays(const wb_edit *edits, node *const *raws, const size_t *round,
                           size_t nr, const unsigned char *state, size_t d, doc_ovs *o)
{
    size_t n = 0;
    char msg[512];
    for (size_t r = 0; r < nr; r++) {
        const wb_edit *e = &edits[round[r]];
        if (state[round[r]] != 1 || e->doc != (int)d)
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
    uint64_t h1 = 1469598103934665603ull ^ b->len, h2 = 0x9e3779b97f4a7c15ull ^ ~b->len;
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = (unsigned char)b->s[i];
        h1 = (h1 ^ c) * 1099511628211ull;
        h2 = (h2 + c + 1) * 0xbf58476d1ce4e5b9ull;
        h2 ^= h2 >> 27;
    }
    out[0] = h1;
    out[1] = h2;
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
    int rc = reader_open(&rd, w, msg, sizeof msg);
    *nrs = 0;
    for (size_t d = 0; rc == 0; d++) {
        int got = reader_next(&rd);
        if (got < 0) {
            rc = errf(err, errlen, first ? "cannot parse the %s text: %s"
                                         : "the edited text does not parse: %s%s",
                      first ? (w->json ? "JSON" : "YAML") : "", msg);
            break;
        }
        if (got == 0)
            break;
        size_t from = *nrs;
        for (size_t r = 0; r < nr; r++) {
            const wb_edit *e = &edits[round[r]];
            char e1[1024];
            if (e->doc != (int)d || r > fe.at)
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
        size_t nm = doc_overlays(edits, raws, round, nr, state, d, &dov);
        grow(sums, cap_sums, d + 1, sizeof **sums);
        form.len = 0;
        canon_doc(&form, w->t.docs[d], w->json, dov.ovs, nm);
        form_sum(&form, (*sums)[d]);
        for (size_t k = 0; k < nm; k++)
            path_free(&dov.paths[k]);
        reader_drop(&rd, d);
    }
    reader_close(&rd);
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
    int rc = reader_open(&rd, w, msg, sizeof msg);
    for (size_t d = 0; rc == 0; d++) {
        int got = reader_next(&rd);
        if (got < 0) {
            rc = errf(err, errlen, "the edited text does not parse: %s", msg);
            break;
        }
        if (got == 0)
            break;
        for (size_t r = 0; r < nr; r++) {
            const wb_edit *e = &edits[round[r]];
            char e1[1024];
            if (state[round[r]] != 2 || e->doc != (int)d || r > fe.at)
                continue;
            if (verify_edit(w, e, raws[round[r]], round[r], e1, sizeof e1) < 0)
                keep_err(&fe, r, e1);
        }
        if (changed == SIZE_MAX && d < before_ndocs) {
            uint64_t sum[2];
            y.len = 0;
            canon_doc(&y, w->t.docs[d], w->json, NULL, 0);
            form_sum(&y, sum);
            if (sum[0] != sums[d][0] || sum[1] != sums[d][1])
                changed = d;
        }
        reader_drop(&rd, d);
    }
    reader_close(&rd);
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

/* Edits a and b may interact when they address the same document and the
 * same item, or one of them the whole document. */
static int conflict(const wb_edit *a, const wb_edit *b)
{
    return a->doc == b->doc && (a->item == b->item || a->item < 0 || b->item < 0);
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
        if (edits[i].value && !valid_utf8(edits[i].value))
            return edit_err(err, errlen, i, &edits[i], "the value is not valid UTF-8");
    }
    /* raw values: parsed once, used to render and to verify */
    node **raws = xcalloc(n ? n : 1, sizeof *raws);
    for (size_t i = 0; i < n; i++) {
        char msg[512];
        if (edits[i].raw && edits[i].value &&
            raw_parse(edits[i].value, &raws[i], msg, sizeof msg) < 0) {
            for (size_t j = 0; j < i; j++)
                node_free(raws[j]);
            free(raws);
            return edit_err(err, errlen, i, &edits[i], "%s", msg);
        }
    }
    wctx w;
    memset(&w, 0, sizeof w);
    w.json = is_json;
    w.nl = newline_of(text, len);
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
    size_t left = n;
    do {
        /* pick the edits of this pass, in order, skipping any that must
         * wait for an earlier one that waits (none at all: the text is
         * only read, so that what does not parse is refused) */
        size_t nr = 0;
        for (size_t i = 0; i < n; i++) {
            if (state[i] == 2)
                continue;
            int ok = 1;
            for (size_t j = 0; j < i && ok; j++)
                if (state[j] != 2 && conflict(&edits[i], &edits[j]))
                    ok = 0;
            if (ok) {
                state[i] = 1;
                round[nr++] = i;
            }
        }
        size_t nrs = 0, ndocs = 0;
        rc = plan_pass(&w, edits, raws, round, nr, state, rs, &nrs, &sums, &cap_sums, &ndocs,
                       first, err, errlen);
        first = 0;
        if (rc < 0 || nr == 0)
            break;
        strbuf next;
        sb_init(&next);
        size_t grown = w.len;
        for (size_t r = 0; r < nrs; r++)
            grown += rs[r].text ? strlen(rs[r].text) : 0;
        sb_reserve(&next, grown);
        size_t pos = 0;
        for (size_t r = 0; r < nrs; r++) {
            sb_add(&next, w.s + pos, rs[r].start - pos);
            if (rs[r].text)
                sb_puts(&next, rs[r].text);
            pos = rs[r].end;
            free(rs[r].text);
        }
        sb_add(&next, w.s + pos, w.len - pos);
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
    tree_free(&w.t);
    free(sums);
    for (size_t i = 0; i < n; i++)
        node_free(raws[i]);
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

/* ---- atomic replacement ------------------------------------------------ */

/* This host's part of a temporary file's name: ".NAME.tmp.HOST.PID.XXXXXX",
 * so that a later start can tell its own stale files from another live
 * host's. */
static char host_name_buf[64];

static void host_name_init(void)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) < 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    h[sizeof h - 1] = '\0';
    /* a dot would make the name ambiguous; a slash impossible */
    for (char *c = h; *c; c++)
        if (*c == '.' || *c == '/')
            *c = '_';
    size_t n = strlen(h);
    if (n >= sizeof host_name_buf)
        n = sizeof host_name_buf - 1;
    memcpy(host_name_buf, h, n);
    host_name_buf[n] = '\0';
}

static const char *host_name(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, host_name_init);
    return host_name_buf;
}

int writeback_write_atomic(const char *path, const char *within, const char *data, size_t len,
                           char *err, size_t errlen)
{
    /* write to the file path names, through any link, but only inside
     * within: a link may not carry a write outside the state */
    char *target = realpath(path, NULL);
    if (!target && errno == ENOENT) {
        char *dc = xstrdup(path);
        char *rd = realpath(dirname(dc), NULL);
        const char *b = strrchr(path, '/');
        target = rd ? xasprintf("%s/%s", rd, b ? b + 1 : path) : NULL;
        free(rd);
        free(dc);
    }
    if (!target)
        return errf(err, errlen, "%s: cannot resolve the path: %s", path, strerror(errno));
    if (within && !path_within(within, target)) {
        errf(err, errlen,
             "%s: leads to %s, outside the state directory %s: not written (trellis never "
             "writes outside its state; replace the link by the file itself)",
             path, target, within);
        free(target);
        return -1;
    }
    char *dcopy = xstrdup(target), *bcopy = xstrdup(target);
    const char *dir = dirname(dcopy);
    const char *base = basename(bcopy);
    char *tmp = xasprintf("%s/.%s.tmp.%s.%ld.XXXXXX", dir, base, host_name(), (long)getpid());
    struct stat st;
    mode_t mode = 0644;
    int rc = -1, fd = -1, dfd = -1;
    if (stat(target, &st) == 0)
        mode = st.st_mode & 07777;
    fd = mkstemp(tmp);
    if (fd < 0) {
        errf(err, errlen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            errf(err, errlen, "%s: write: %s", tmp, strerror(errno));
            goto fail;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        errf(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, mode) < 0) {
        errf(err, errlen, "%s: chmod: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        errf(err, errlen, "%s: close: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, target) < 0) {
        errf(err, errlen, "%s: rename: %s", path, strerror(errno));
        goto fail;
    }
    /* the rename is durable once the directory is */
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0 || fsync(dfd) < 0) {
        errf(err, errlen, "%s: written, but syncing directory %s failed: %s", path, dir,
             strerror(errno));
        if (dfd >= 0)
            close(dfd);
        goto out;
    }
    close(dfd);
    rc = 0;
    goto out;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    free(tmp);
    free(dcopy);
    free(bcopy);
    free(target);
    return rc;
}

/* A temporary file of another host (or of an older trellis that did not
 * name its host) may be one being written right now: it is stale only
 * when no write could take this long. */
#define FOREIGN_TEMP_STALE_S 600

/* Is name (in dir) a temporary file of writeback_write_atomic that no
 * live writer holds? */
static int stale_temp(const char *dir, const char *name)
{
    if (name[0] != '.')
        return 0;
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        t = p; /* the last one: NAME itself may hold ".tmp." */
    if (!t || t == name)
        return 0;
    const char *rest = t + 5; /* HOST.PID.XXXXXX, or XXXXXX */
    size_t rl = strlen(rest);
    if (rl < 6)
        return 0;
    const char *rnd = rest + rl - 6;
    for (const char *c = rnd; *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    int ours = 0;
    long pid = 0;
    if (rnd > rest) {
        /* HOST.PID. before the random part */
        if (rnd[-1] != '.')
            return 0;
        const char *pe = rnd - 1, *pb = pe;
        while (pb > rest && isdigit((unsigned char)pb[-1]))
            pb--;
        if (pb == pe || pb == rest || pb[-1] != '.')
            return 0;
        pid = strtol(pb, NULL, 10);
        const char *me = host_name();
        size_t hl = (size_t)(pb - 1 - rest);
        ours = hl == strlen(me) && memcmp(rest, me, hl) == 0;
    }
    if (ours)
        return pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    int old = lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
              time(NULL) - st.st_mtime > FOREIGN_TEMP_STALE_S;
    free(p);
    return old;
}

size_t writeback_clean_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!stale_temp(dir, e->d_name))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        if (unlink(p) == 0)
            removed++;
        free(p);
    }
    closedir(d);
    return removed;
}
