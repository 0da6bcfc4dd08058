/*
 * value.c - the value accessors behind the SDK (value_*, object_get's
 * paths) over an object's compact nodes (onode.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "onode.h"
#include "util.h"

trellis_value_type value_type(const trellis_value *v)
{
    return v ? public_type(ntype(N(v))) : TRELLIS_VALUE_NULL;
}

const char *value_string(const trellis_value *v)
{
    const onode *n = N(v);
    if (!n)
        return NULL;
    switch (ntype(n)) {
    case N_STRING:
    case N_INT:
    case N_DOUBLE:
        return ntext(n);
    case N_BOOL:
        return nlen(n) ? "true" : "false";
    default:
        return NULL;
    }
}

/* Whole-string decimal integer with optional sign. */
static int parse_int64(const char *s, int64_t *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end;
    long long n = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (int64_t)n;
    return 0;
}

int value_int(const trellis_value *v, int64_t *out)
{
    const onode *n = N(v);
    int64_t i;
    if (!n)
        return -1;
    if (ntype(n) == N_INT)
        memcpy(&i, (const char *)n + n->off, 8);
    else if (ntype(n) != N_STRING || parse_int64(ntext(n), &i) < 0)
        return -1;
    if (out)
        *out = i;
    return 0;
}

int value_double(const trellis_value *v, double *out)
{
    const onode *n = N(v);
    double d;
    if (!n)
        return -1;
    if (ntype(n) == N_DOUBLE) {
        memcpy(&d, (const char *)n + n->off, 8);
    } else if (ntype(n) == N_INT) {
        int64_t i;
        memcpy(&i, (const char *)n + n->off, 8);
        d = (double)i;
    } else {
        return -1;
    }
    if (out)
        *out = d;
    return 0;
}

int value_bool(const trellis_value *v, int *out)
{
    const onode *n = N(v);
    int b;
    if (!n)
        return -1;
    if (ntype(n) == N_BOOL) {
        b = (int)nlen(n);
    } else if (ntype(n) == N_STRING) {
        const char *s = ntext(n);
        if (strcmp(s, "true") == 0)
            b = 1;
        else if (strcmp(s, "false") == 0)
            b = 0;
        else
            return -1;
    } else {
        return -1;
    }
    if (out)
        *out = b;
    return 0;
}

const char *value_string_len(const trellis_value *v, size_t *len)
{
    const onode *n = N(v);
    if (!n || ntype(n) != N_STRING)
        return NULL;
    *len = nlen(n);
    return ntext(n);
}

size_t value_len(const trellis_value *v)
{
    const onode *n = N(v);
    if (n && (ntype(n) == N_LIST || ntype(n) == N_MAP))
        return nlen(n);
    return 0;
}

size_t value_first_non_string(const trellis_value *list)
{
    const onode *n = N(list);
    if (!n || ntype(n) != N_LIST)
        return SIZE_MAX;
    uint32_t len = nlen(n);
    for (uint32_t i = 0; i < len; i++)
        if (ntype(nchild(n, i)) != N_STRING)
            return i;
    return SIZE_MAX;
}

const trellis_value *value_at(const trellis_value *list, size_t i)
{
    const onode *n = N(list);
    if (!n || ntype(n) != N_LIST || i >= nlen(n))
        return NULL;
    return handle(nchild(n, i));
}

static const onode *map_get(const onode *n, const char *key)
{
    if (!n || ntype(n) != N_MAP || !key)
        return NULL;
    const onode *c = nchild(n, 0);
    for (uint32_t i = 0, len = nlen(n); i < len; i++, c++) {
        const char *k = nkey(c);
        if (k[0] == key[0] && strcmp(k, key) == 0)
            return c;
    }
    return NULL;
}

const trellis_value *value_get(const trellis_value *map, const char *key)
{
    const onode *c = map_get(N(map), key);
    return c ? handle(c) : NULL;
}

/* A key segment of a path: seg[0..len) raw, with backslash escapes when
 * `escaped` (the inside of a quoted ["..."] segment). */
typedef struct segment {
    const char *s;
    size_t len;
    int escaped;
} segment;

/* Compare a map key with a segment. */
static int seg_equal(const char *key, const segment *g)
{
    size_t i = 0;
    const char *k = key;
    while (i < g->len) {
        char c = g->s[i++];
        if (g->escaped && c == '\\' && i < g->len)
            c = g->s[i++];
        if (*k++ != c)
            return 0;
    }
    return *k == '\0';
}

static const onode *map_lookup(const onode *m, const segment *g)
{
    if (!m || ntype(m) != N_MAP)
        return NULL;
    const onode *c = nchild(m, 0);
    for (uint32_t i = 0, len = nlen(m); i < len; i++, c++)
        if (seg_equal(nkey(c), g))
            return handle(c) ? c : NULL;
    return NULL;
}

/* Whether c ends a plain key of a path: '\0', '.' or '[' (one load in
 * the loops that compare keys byte by byte). */
static const unsigned char ends_key[256] = {['\0'] = 1, ['.'] = 1, ['['] = 1};

static int ends_segment(char c)
{
    return ends_key[(unsigned char)c];
}

/* The member of map m named by the plain key at p (not empty: up to the
 * next '.', '[' or the end), compared where it stands, first byte first:
 * the common case of a path, read without a pass to find where the key
 * ends. *end: where it ends. */
static const onode *map_lookup_plain(const onode *m, const char *p, const char **end)
{
    if (m && ntype(m) == N_MAP) {
        const onode *c = nchild(m, 0);
        for (uint32_t i = 0, len = nlen(m); i < len; i++, c++) {
            const char *k = nkey(c);
            if (k[0] != p[0])
                continue;
            size_t j = 1; /* k[0..j) == p[0..j), none of them '\0', '.' or '[' */
            while (k[j] == p[j] && !ends_segment(p[j]))
                j++;
            if (!k[j] && ends_segment(p[j])) {
                *end = p + j;
                return handle(c) ? c : NULL;
            }
        }
    }
    while (!ends_segment(*p))
        p++;
    *end = p;
    return NULL;
}

/* Parse a bracketed segment at p (just after '['). Sets either *g (quoted
 * key) or *index; returns the position after ']' or NULL when malformed. */
static const char *parse_bracket(const char *p, segment *g, size_t *index, int *is_key)
{
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        const char *start = p;
        int escaped = 0;
        while (*p && *p != q) {
            if (*p == '\\' && p[1]) {
                escaped = 1;
                p++;
            }
            p++;
        }
        if (*p != q || p[1] != ']')
            return NULL;
        g->s = start;
        g->len = (size_t)(p - start);
        g->escaped = escaped;
        *is_key = 1;
        return p + 2;
    }
    if (*p < '0' || *p > '9')
        return NULL;
    size_t n = 0;
    while (*p >= '0' && *p <= '9') {
        size_t d = (size_t)(*p - '0');
        if (n > (SIZE_MAX - d) / 10)
            return NULL;
        n = n * 10 + d;
        p++;
    }
    if (*p != ']')
        return NULL;
    *index = n;
    *is_key = 0;
    return p + 1;
}

/* One step of a path from cur: the member or item path[*pos..] names,
 * *pos moved past it (and past the '.' before it, after the first: a
 * bracket after a dot names what it names without one, as edits have
 * it). NULL when there is none or the path is malformed there. */
static const onode *step(const onode *cur, const char *path, size_t *pos)
{
    const char *p = path + *pos;
    if (*pos > 0 && *p != '.' && *p != '[')
        return NULL; /* a key runs into what follows a ']' */
    if (*pos > 0 && *p == '.')
        p++;
    if (*p == '[') {
        segment g = {NULL, 0, 0};
        size_t index = 0;
        int is_key = 0;
        p = parse_bracket(p + 1, &g, &index, &is_key);
        if (!p)
            return NULL;
        *pos = (size_t)(p - path);
        if (is_key)
            return map_lookup(cur, &g);
        if (ntype(cur) != N_LIST || index >= nlen(cur))
            return NULL;
        cur = nchild(cur, index);
        return ntype(cur) == N_NULL ? NULL : cur;
    }
    if (ends_segment(*p)) { /* an empty key */
        *pos = (size_t)(p - path);
        return NULL;
    }
    const char *end;
    const onode *found = map_lookup_plain(cur, p, &end);
    *pos = (size_t)(end - path);
    return found;
}

const trellis_value *value_step(const trellis_value *v, const char *path, size_t *pos)
{
    const onode *cur = v && path && path[*pos] ? step(N(v), path, pos) : NULL;
    return cur ? V(cur) : NULL;
}

const trellis_value *value_path(const trellis_value *v, const char *path)
{
    if (!path)
        return NULL;
    const onode *cur = N(v);
    for (size_t pos = 0; cur && path[pos];)
        cur = step(cur, path, &pos);
    return cur ? V(cur) : NULL;
}

int value_foreach(const trellis_value *map,
                  int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud)
{
    const onode *n = N(map);
    if (!n || ntype(n) != N_MAP)
        return 0;
    const onode *c = nchild(n, 0);
    for (uint32_t i = 0, len = nlen(n); i < len; i++, c++) {
        int rc = cb(nkey(c), handle(c), ud);
        if (rc)
            return rc;
    }
    return 0;
}
