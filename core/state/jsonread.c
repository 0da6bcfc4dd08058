/*
 * jsonread.c - objects from JSON text: the fast reader of manifests
 * (ob_parse_json, object.h), JSON text straight into an obuild without
 * json-c's tree, and object_from_json on top of it. What the fast reader
 * cannot decide the way json-c would (see jp_string) it leaves to json-c,
 * whose error is then the one reported.
 */
#include "config.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "util.h"

/* json-c's nesting limit with the depth the parsers ask for: a value may
 * sit at most this deep. */
#define JSON_MAX_DEPTH (JSON_TOKENER_DEFAULT_DEPTH * 4 - 1)

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

typedef struct jparse {
    obuild *b;
    const char *t;
    size_t n, i;
    int max_depth; /* a value sits at a depth below it (json-c's rule) */
} jparse;

static int jp_value(jparse *p, int depth, oref *out);

static void jp_ws(jparse *p)
{
    while (p->i < p->n && is_ws(p->t[p->i]))
        p->i++;
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

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(s[k]);
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

/* The length of a UTF-8 sequence whose first byte is c (>= 0x80) at
 * t[i], checked: 0 when it is not one. */
static size_t utf8_len(const char *t, size_t i, size_t n, unsigned char c)
{
    size_t more = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 0;
    if (!more || i + more >= n)
        return 0;
    for (size_t k = 1; k <= more; k++)
        if (((unsigned char)t[i + k] & 0xc0) != 0x80)
            return 0;
    return more + 1;
}

/* Code point u as UTF-8 at out; the bytes written. */
static size_t put_utf8(char *out, unsigned u)
{
    if (u < 0x80) {
        out[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        out[0] = (char)(0xc0 | (u >> 6));
        out[1] = (char)(0x80 | (u & 0x3f));
        return 2;
    }
    out[0] = (char)(0xe0 | (u >> 12)); /* u < 0x10000: no surrogate pairs here */
    out[1] = (char)(0x80 | ((u >> 6) & 0x3f));
    out[2] = (char)(0x80 | (u & 0x3f));
    return 3;
}

/* The escape at t[*i] (after the backslash's letter was read at t[*i -
 * 1]) into out; the bytes written, or 0 for what json-c would refuse or
 * read otherwise (an unknown escape, \u0000, any surrogate). */
static size_t jp_escape(const char *t, size_t *i, size_t n, char e, char *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = e ? strchr(from, e) : NULL;
    if (k) {
        out[0] = to[k - from];
        return 1;
    }
    unsigned u;
    if (e != 'u' || *i + 4 > n || hex4(t + *i, &u) < 0)
        return 0;
    *i += 4;
    /* a surrogate, paired or not: json-c's decoding of some pairs
     * (\ud836\udc00 ...) is not UTF-16's, and its tree is the reference */
    if (u == 0 || (u & 0xf800) == 0xd800)
        return 0;
    return put_utf8(out, u);
}

/* The rest of a string with escapes, from t[i] (a backslash), after the
 * o bytes from start that needed none: unescaped into the builder's
 * scratch buffer. */
static int jp_string_escaped(jparse *p, size_t start, size_t i, const char **s, size_t *len)
{
    const char *t = p->t;
    size_t n = p->n, o = i - start;
    char *sb = ob_scratch(p->b, o + 64);
    memcpy(sb, t + start, o);
    for (;;) {
        /* a run of plain characters at once */
        size_t r = i;
        while (r < n && t[r] != '"' && t[r] != '\\' && (unsigned char)t[r] - 1u < 0x7fu)
            r++;
        if (r > i) {
            sb = ob_scratch(p->b, o + (r - i) + 8);
            memcpy(sb + o, t + i, r - i);
            o += r - i;
            i = r;
        }
        if (i >= n)
            return -1;
        sb = ob_scratch(p->b, o + 8);
        unsigned char c = (unsigned char)t[i];
        if (c == '"') {
            *s = sb;
            *len = o;
            p->i = i + 1;
            return 0;
        }
        if (c == 0)
            return -1;
        if (c >= 0x80) {
            size_t m = utf8_len(t, i, n, c);
            if (!m)
                return -1;
            memcpy(sb + o, t + i, m);
            o += m;
            i += m;
        } else if (c != '\\') {
            sb[o++] = (char)c;
            i++;
        } else {
            if (i + 1 >= n)
                return -1;
            char e = t[i + 1];
            i += 2;
            size_t m = jp_escape(t, &i, n, e, sb + o);
            if (!m)
                return -1;
            o += m;
        }
    }
}

/* A string at p->i (the opening quote): its bytes, unescaped, in *s and *len
 * (pointing into the text when there was nothing to unescape). What json-c
 * would change or refuse (a NUL, a lone surrogate, bytes that are not
 * UTF-8 as its checker sees it) is left to json-c. */
static int jp_string(jparse *p, const char **s, size_t *len)
{
    const char *t = p->t;
    size_t i = p->i + 1, n = p->n, start = i;
    for (;;) {
        if (i >= n)
            return -1;
        unsigned char c = (unsigned char)t[i];
        if (c == '"') {
            *s = t + start;
            *len = i - start;
            p->i = i + 1;
            return 0;
        }
        if (c == '\\')
            return jp_string_escaped(p, start, i, s, len);
        if (c == 0)
            return -1;
        if (c >= 0x80) {
            size_t m = utf8_len(t, i, n, c);
            if (!m)
                return -1;
            i += m;
        } else {
            i++;
        }
    }
}

/* What may follow a scalar inside a container. */
static int jp_delim(const jparse *p)
{
    if (p->i >= p->n)
        return 0;
    char c = p->t[p->i];
    return c == ',' || c == ']' || c == '}' || is_ws(c);
}

static int jp_number(jparse *p, oref *out)
{
    const char *t = p->t;
    size_t i = p->i, n = p->n, start = i;
    int neg = 0, is_double = 0;
    if (t[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n || t[i] < '0' || t[i] > '9')
        return -1;
    size_t digits = i;
    if (t[i] == '0') {
        i++;
        if (i < n && t[i] >= '0' && t[i] <= '9')
            return -1; /* leading zeros: json-c's own rules */
    } else {
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
    }
    size_t ndigits = i - digits;
    if (i < n && t[i] == '.') {
        is_double = 1;
        i++;
        if (i >= n || t[i] < '0' || t[i] > '9')
            return -1;
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        is_double = 1;
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-'))
            i++;
        if (i >= n || t[i] < '0' || t[i] > '9')
            return -1;
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
    }
    p->i = i;
    if (!jp_delim(p))
        return -1;
    char buf[64];
    size_t len = i - start;
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, t + start, len);
    buf[len] = '\0';
    if (!is_double) {
        if (ndigits > 18)
            return -1; /* json-c clamps; let it */
        int64_t v = 0;
        for (size_t k = digits; k < digits + ndigits; k++)
            v = v * 10 + (t[k] - '0');
        *out = ob_int(p->b, neg ? -v : v, NULL);
        return 0;
    }
    char *end;
    double d = strtod(buf, &end);
    if (*end)
        return -1;
    *out = ob_double(p->b, d, buf);
    return 0;
}

static int jp_literal(jparse *p, const char *word, size_t len)
{
    if (p->n - p->i < len || memcmp(p->t + p->i, word, len) != 0)
        return -1;
    p->i += len;
    return jp_delim(p) ? 0 : -1;
}

/* An object at p->i (its '{') into out. */
static int jp_object(jparse *p, int depth, oref *out)
{
    obuild *b = p->b;
    size_t mark = ob_open(b);
    p->i++;
    jp_ws(p);
    if (p->i < p->n && p->t[p->i] == '}') {
        p->i++;
        *out = ob_close_map(b, mark);
        return 0;
    }
    for (;;) {
        if (p->i >= p->n || p->t[p->i] != '"')
            return -1;
        const char *k;
        size_t klen;
        if (jp_string(p, &k, &klen) < 0)
            return -1;
        /* the key may sit in the scratch buffer the value reuses */
        uint32_t koff = ob_key(b, k, klen);
        jp_ws(p);
        if (p->i >= p->n || p->t[p->i] != ':')
            return -1;
        p->i++;
        jp_ws(p);
        oref v;
        if (jp_value(p, depth + 1, &v) < 0)
            return -1;
        ob_member_at(b, mark, koff, v, 1);
        jp_ws(p);
        if (p->i >= p->n)
            return -1;
        char c = p->t[p->i++];
        if (c == '}')
            break;
        if (c != ',')
            return -1;
        jp_ws(p);
    }
    *out = ob_close_map(b, mark);
    return 0;
}

/* An array at p->i (its '[') into out. */
static int jp_array(jparse *p, int depth, oref *out)
{
    obuild *b = p->b;
    size_t mark = ob_open(b);
    p->i++;
    jp_ws(p);
    if (p->i < p->n && p->t[p->i] == ']') {
        p->i++;
        *out = ob_close_list(b, mark);
        return 0;
    }
    for (;;) {
        oref v;
        if (jp_value(p, depth + 1, &v) < 0)
            return -1;
        ob_item(b, v);
        jp_ws(p);
        if (p->i >= p->n)
            return -1;
        char c = p->t[p->i++];
        if (c == ']')
            break;
        if (c != ',')
            return -1;
        jp_ws(p);
    }
    *out = ob_close_list(b, mark);
    return 0;
}

/* A value at p->i; a document (depth 0) must be an object or an array. */
static int jp_value(jparse *p, int depth, oref *out)
{
    if (p->i >= p->n || depth >= p->max_depth)
        return -1;
    obuild *b = p->b;
    char c = p->t[p->i];
    if (c == '{')
        return jp_object(p, depth, out);
    if (c == '[')
        return jp_array(p, depth, out);
    if (depth == 0)
        return -1;
    switch (c) {
    case '"': {
        const char *s;
        size_t len;
        if (jp_string(p, &s, &len) < 0 || !jp_delim(p))
            return -1;
        *out = ob_string(b, s, len);
        return 0;
    }
    case 't':
        if (jp_literal(p, "true", 4) < 0)
            return -1;
        *out = ob_bool(b, 1);
        return 0;
    case 'f':
        if (jp_literal(p, "false", 5) < 0)
            return -1;
        *out = ob_bool(b, 0);
        return 0;
    case 'n':
        if (jp_literal(p, "null", 4) < 0)
            return -1;
        *out = ob_null(b);
        return 0;
    default:
        return jp_number(p, out);
    }
}

size_t ob_parse_json_nest(obuild *b, const char *text, size_t len, int max_nest, oref *out)
{
    jparse p = {b, text, len, 0, max_nest};
    if (len >= INT_MAX)
        return 0;
    if (jp_value(&p, 0, out) < 0)
        return 0;
    return p.i;
}

size_t ob_parse_json(obuild *b, const char *text, size_t len, oref *out)
{
    return ob_parse_json_nest(b, text, len, JSON_MAX_DEPTH + 1, out);
}

/* ---- a whole object from JSON text ---- */

static int line_of(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n')
            line++;
    return line;
}

static int column_of(const char *text, size_t off)
{
    size_t i = off;
    while (i > 0 && text[i - 1] != '\n')
        i--;
    return (int)(off - i) + 1;
}

trellis_object *object_from_json(const char *text, char *err, size_t errlen)
{
    if (!text)
        return errf(err, errlen, "no JSON text"), NULL;
    size_t len = strlen(text);
    if (len >= INT_MAX)
        return errf(err, errlen, "JSON text too large"), NULL;
    obuild *b = obuild_thread();
    oref r = OB_NONE;
    size_t i = 0;
    while (i < len && is_ws(text[i]))
        i++;
    size_t used = ob_parse_json(b, text + i, len - i, &r);
    if (used) {
        i += used;
        while (i < len && is_ws(text[i]))
            i++;
    }
    if (!used || i != len) {
        /* json-c decides, and says what is wrong */
        obuild_clear(b);
        r = OB_NONE;
        json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 4);
        if (!tok)
            return errf(err, errlen, "out of memory"), NULL;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        /* include the terminating NUL so a top-level number can end */
        json_object *root = json_tokener_parse_ex(tok, text, (int)len + 1);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        size_t end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (jerr != json_tokener_success) {
            size_t at = end > len ? len : end;
            errf(err, errlen, "line %d, column %d: %s", line_of(text, at), column_of(text, at),
                 json_tokener_error_desc(jerr));
            return NULL;
        }
        if (root)
            r = ob_json(b, root);
        json_object_put(root);
        ob_note_json_text(b, text, len);
    }
    return object_build(b, r, err, errlen);
}
