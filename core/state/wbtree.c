/*
 * wbtree.c - see wbtree.h: YAML and JSON text as trees of byte positions
 * (libyaml's events, a small JSON scanner), the strict reader and writer
 * of raw JSON values, and how values are written (plain or quoted).
 */
#include "config.h"

#include "wbtree.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- position trees ---------------------------------------------------- */

/* A document's tree lives while its file is written back, and a file is
 * read twice (planned, then checked): nodes are many and short-lived.
 * Each thread keeps the nodes it freed, with their kid arrays and value
 * buffers, for the next tree it reads, up to POOL_BYTES in all (a value
 * buffer over VALUE_KEPT bytes is not kept); what it kept goes when the
 * thread ends. Under AddressSanitizer nothing is kept, so that a node
 * used after it was freed is still caught. */
#define POOL_BYTES ((size_t)32 << 20)
#define VALUE_KEPT 256
#if defined(__SANITIZE_ADDRESS__)
#define POOLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOLED 0
#endif
#endif
#ifndef POOLED
#define POOLED 1
#endif
static _Thread_local node *pool;
static _Thread_local size_t pool_bytes;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_ok; /* the key exists: a thread's pool is freed at its end */

static size_t node_bytes(const node *n)
{
    return sizeof *n + n->cap * sizeof *n->kids + n->vcap;
}

static void destroy(node *n)
{
    free(n->kids);
    free(n->vbuf);
    free(n);
}

static void pool_end(void *unused)
{
    (void)unused;
    while (pool) {
        node *n = pool;
        pool = n->next_free;
        destroy(n);
    }
    pool_bytes = 0;
}

static void pool_init(void)
{
    pool_ok = pthread_key_create(&pool_key, pool_end) == 0;
}

/* A node, all zero but for the buffers a reused one keeps. */
static node *node_new(void)
{
    node *n = pool;
    if (!n)
        return xcalloc(1, sizeof *n);
    pool = n->next_free;
    pool_bytes -= node_bytes(n);
    node **kids = n->kids;
    size_t cap = n->cap, vcap = n->vcap;
    char *vbuf = n->vbuf;
    memset(n, 0, sizeof *n);
    n->kids = kids;
    n->cap = cap;
    n->vbuf = vbuf;
    n->vcap = vcap;
    return n;
}

/* n's value, with room for len bytes and a NUL (its old text dropped). */
static char *node_value(node *n, size_t len)
{
    if (n->vcap < len + 1) {
        free(n->vbuf);
        n->vcap = len + 1 < 32 ? 32 : len + 1;
        n->vbuf = xmalloc(n->vcap);
    }
    n->vlen = len;
    return n->value = n->vbuf;
}

void wb_node_free(node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++)
        wb_node_free(n->kids[i]);
    free(n->anchor);
    n->anchor = NULL;
    if (POOLED)
        pthread_once(&pool_once, pool_init);
    if (n->vcap > VALUE_KEPT) {
        free(n->vbuf);
        n->vbuf = NULL;
        n->vcap = 0;
    }
    if (!POOLED || !pool_ok || pool_bytes + node_bytes(n) > POOL_BYTES) {
        destroy(n);
        return;
    }
    if (!pool)
        pthread_setspecific(pool_key, &pool_key); /* pool_end runs at the thread's end */
    n->next_free = pool;
    pool = n;
    pool_bytes += node_bytes(n);
}

void wb_tree_free(tree *t)
{
    for (size_t i = 0; i < t->ndocs; i++)
        wb_node_free(t->docs[i]);
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

size_t wb_line_start(const char *s, size_t p)
{
    while (p > 0 && s[p - 1] != '\n' && s[p - 1] != '\r')
        p--;
    return p;
}

/* Offset of the line break ending the line that holds p (or len). */
size_t wb_line_end(const char *s, size_t len, size_t p)
{
    if (p >= len)
        return p;
    /* the next '\n', or an earlier '\r' (memchr reads a word at a time) */
    const char *nl = memchr(s + p, '\n', len - p);
    size_t end = nl ? (size_t)(nl - s) : len;
    const char *cr = memchr(s + p, '\r', end - p);
    return cr ? (size_t)(cr - s) : end;
}

/* Start of the line after the one holding p (len at the last line). */
size_t wb_next_line(const char *s, size_t len, size_t p)
{
    p = wb_line_end(s, len, p);
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
const char *wb_newline_of(const char *s, size_t len)
{
    const char *nl = memchr(s, '\n', len);
    if (nl && nl > s && nl[-1] == '\r')
        return "\r\n";
    return "\n";
}

int wb_valid_utf8(const char *s)
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

int wb_plain_safe(const char *s)
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
        case '"':
            named = "\\\"";
            break;
        case '\\':
            named = "\\\\";
            break;
        case '\n':
            named = "\\n";
            break;
        case '\t':
            named = "\\t";
            break;
        case '\r':
            named = "\\r";
            break;
        case '\b':
            named = json ? "\\b" : NULL;
            break;
        case '\f':
            named = json ? "\\f" : NULL;
            break;
        default:
            break;
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
    if (wb_plain_safe(v))
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

void wb_render_value(strbuf *b, const char *v, int json)
{
    if (json)
        render_json(b, v);
    else
        render_yaml(b, v);
}

/* "k1: {k2: v}" (YAML flow) or "\"k1\": {\"k2\": \"v\"}" (JSON); val is
 * the value as rendered already. */
void wb_render_chain(strbuf *b, char *const *comps, size_t n, const char *val, int json)
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
void wb_render_block(strbuf *b, char *const *comps, size_t n, const char *val, size_t indent,
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

/* libyaml counts marks in characters (after a byte-order mark); map them
 * back to bytes. */
void wb_build_cmap(ybuild *b)
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
/* A scalar event into n; its anchor (may be NULL) goes to *anchor. */
static void ybuild_scalar(ybuild *b, yaml_event_t *ev, node *n, const char **anchor)
{
    const char *s = b->s;
    n->kind = N_SCALAR;
    n->style = ev->data.scalar.style;
    n->tagged = ev->data.scalar.tag != NULL;
    *anchor = (const char *)ev->data.scalar.anchor;
    memcpy(node_value(n, ev->data.scalar.length), ev->data.scalar.value,
           ev->data.scalar.length + 1);
    size_t end = byte_at(b, ev->end_mark.index);
    n->cstart = (*anchor || n->tagged) ? skip_props(s, n->start, end) : n->start;
    n->end = end;
    if (n->style != YAML_LITERAL_SCALAR_STYLE && n->style != YAML_FOLDED_SCALAR_STYLE) {
        n->after = wb_next_line(s, b->len, end);
        return;
    }
    /* libyaml ends a block scalar after its trailing breaks, in the next
     * line's indentation: end it after its last non-blank character
     * instead, or, when trailing breaks are content (keep chomping "|+"),
     * at the start of that line. */
    size_t h = n->cstart + 1;
    int keep = 0;
    while (h < end && strchr("+-0123456789", s[h]))
        keep |= s[h++] == '+';
    while (n->end > n->cstart + 1 && is_space(s[n->end - 1]))
        n->end--;
    n->keep = keep;
    n->after = keep ? wb_line_start(s, end) : wb_next_line(s, b->len, n->end);
    if (n->after < n->end)
        n->after = wb_next_line(s, b->len, n->end);
}

static int ybuild_node(ybuild *b, yaml_event_t *ev, int depth, node **out);

/* A sequence or mapping, from its start event to its end, into n. */
static int ybuild_collection(ybuild *b, yaml_event_t *ev, int depth, node *n)
{
    const char *s = b->s, *anchor;
    int rc = 0, map = ev->type == YAML_MAPPING_START_EVENT;
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
                n->after = wb_next_line(s, b->len, close);
            } else if (n->nkids) {
                n->end = n->kids[n->nkids - 1]->end;
                n->after = n->kids[n->nkids - 1]->after;
            } else {
                n->end = n->cstart;
                n->after = wb_next_line(s, b->len, n->end);
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
    return rc;
}

static int ybuild_node(ybuild *b, yaml_event_t *ev, int depth, node **out)
{
    node *n = node_new();
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
    case YAML_SCALAR_EVENT:
        ybuild_scalar(b, ev, n, &anchor);
        break;
    case YAML_ALIAS_EVENT:
        n->kind = N_ALIAS;
        n->anchor = xstrdup((const char *)ev->data.alias.anchor);
        n->cstart = n->start;
        n->end = byte_at(b, ev->end_mark.index);
        n->after = wb_next_line(b->s, b->len, n->end);
        add_anchor(b, n);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        rc = ybuild_collection(b, ev, depth, n);
        break;
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
int wb_yaml_next_doc(ybuild *b)
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

static int jfail(jbuild *b, const char *what)
{
    size_t p = b->i < b->len ? b->i : b->len;
    return errf(b->err, b->errlen, "line %d, column %zu: %s", line_no(b->s, p),
                p - wb_line_start(b->s, p) + 1, what);
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

/* A string at b->i (json-c also takes single quotes), decoded into sb. */
static int jstring_text(jbuild *b, strbuf *sb)
{
    char q = b->s[b->i++];
    for (;;) {
        if (b->i >= b->len)
            return jfail(b, "unterminated string");
        /* the plain run up to the next quote or backslash, in one piece */
        size_t run = b->i;
        while (run < b->len && b->s[run] != q && b->s[run] != '\\')
            run++;
        if (run > b->i) {
            sb_add(sb, b->s + b->i, run - b->i);
            b->i = run;
            continue;
        }
        char c = b->s[b->i++];
        if (c == q)
            break;
        if (b->i >= b->len)
            continue;
        c = b->s[b->i++];
        unsigned cp;
        switch (c) {
        case 'b':
            sb_add(sb, "\b", 1);
            break;
        case 'f':
            sb_add(sb, "\f", 1);
            break;
        case 'n':
            sb_add(sb, "\n", 1);
            break;
        case 'r':
            sb_add(sb, "\r", 1);
            break;
        case 't':
            sb_add(sb, "\t", 1);
            break;
        case 'u':
            if (jhex4(b, &cp) < 0)
                return -1;
            if (cp >= 0xd800 && cp < 0xdc00 && b->i + 6 <= b->len && b->s[b->i] == '\\' &&
                b->s[b->i + 1] == 'u') {
                unsigned lo;
                b->i += 2;
                if (jhex4(b, &lo) < 0)
                    return -1;
                if (lo >= 0xdc00 && lo < 0xe000)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else
                    put_utf8(sb, cp), cp = lo;
            }
            put_utf8(sb, cp);
            break;
        default:
            sb_add(sb, &c, 1);
        }
    }
    return 0;
}

/* A string at b->i (json-c also takes single quotes); decoded into n's
 * value, in the buffer it has. */
static int jstring(jbuild *b, node *n)
{
    strbuf sb = {n->vbuf, 0, n->vcap};
    if (sb.s)
        sb.s[0] = '\0';
    int rc = jstring_text(b, &sb);
    if (!sb.s)
        sb_add(&sb, "", 0);
    n->value = n->vbuf = sb.s;
    n->vcap = sb.cap;
    n->vlen = sb.len;
    n->style = 1;
    return rc;
}

/* wb_next_line for the JSON builder, remembering the line it found. */
static size_t jnext_line(jbuild *b, size_t p)
{
    if (b->nl_next && p >= b->nl_from && p <= b->nl_end)
        return b->nl_next;
    b->nl_from = p;
    b->nl_end = wb_line_end(b->s, b->len, p);
    b->nl_next = wb_next_line(b->s, b->len, b->nl_end);
    return b->nl_next;
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
            kid = node_new();
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
    node *n = node_new();
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
        char *v = node_value(n, b->i - st);
        memcpy(v, b->s + st, n->vlen);
        v[n->vlen] = '\0';
    }
    n->end = b->i;
    n->after = jnext_line(b, n->end);
    return rc;
}

/* The next document into t->docs[t->ndocs]: 1, 0 at the end of the
 * text, -1 on an error (b->err says it). */
int wb_json_next_doc(jbuild *b, tree *t)
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
                p - wb_line_start(c->s, p) + 1, what);
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
int wb_raw_parse(const char *text, node **out, char *msg, size_t msglen)
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
    jbuild b = {.s = text, .len = c.len, .err = why, .errlen = sizeof why};
    node *n = NULL;
    if (jvalue(&b, 0, &n) < 0) { /* cannot happen after the check */
        wb_node_free(n);
        return errf(msg, msglen, "the value is not valid JSON: %s", why);
    }
    const node *dup = raw_dup_key(n);
    if (dup) {
        int rc =
            errf(msg, msglen, "the value is not valid JSON here: duplicate key \"%s\"", dup->value);
        wb_node_free(n);
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
void wb_render_raw(strbuf *b, const node *n)
{
    switch (n->kind) {
    case N_MAP:
        sb_add(b, "{", 1);
        for (size_t i = 0; i + 1 < n->nkids; i += 2) {
            if (i)
                sb_puts(b, ", ");
            render_jstring(b, n->kids[i]->value, n->kids[i]->vlen);
            sb_puts(b, ": ");
            wb_render_raw(b, n->kids[i + 1]);
        }
        sb_add(b, "}", 1);
        return;
    case N_SEQ:
        sb_add(b, "[", 1);
        for (size_t i = 0; i < n->nkids; i++) {
            if (i)
                sb_puts(b, ", ");
            wb_render_raw(b, n->kids[i]);
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

int wb_key_is(const node *k, const char *key)
{
    return k->kind == N_SCALAR && k->vlen == strlen(key) && memcmp(k->value, key, k->vlen) == 0;
}

/* Index of the pair holding key (kids[2i], kids[2i+1]), or -1. A key that
 * is there twice (JSON lets it be) gives its last pair: the manifest
 * reader, like json-c, keeps the last value, so an edit of the first one
 * would be lost on the next read. */
long wb_map_find(const node *m, const char *key)
{
    long found = -1;
    for (size_t i = 0; i + 1 < m->nkids; i += 2)
        if (wb_key_is(m->kids[i], key))
            found = (long)(i / 2);
    return found;
}

int wb_is_null(const node *n, int json)
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
