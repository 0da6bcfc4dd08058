/*
 * onode.h - the layout of an object's value nodes, for object.c
 * (which builds them) and value.c (which reads them). Nothing else sees
 * it: plugins and the rest of the host hold trellis_value handles.
 */
#ifndef TRELLIS_ONODE_H
#define TRELLIS_ONODE_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "object.h"

enum { N_NULL, N_BOOL, N_INT, N_DOUBLE, N_STRING, N_LIST, N_MAP };

typedef struct onode {
    uint32_t tl;  /* type in the low 3 bits, length above: string bytes,
                     members, 0/1 for a bool */
    uint32_t off; /* string, number: bytes to its text (a number's 8-byte
                     value first); container: nodes to its first child */
    uint32_t key; /* the member's key (interned id + 1), 0 when not in a map */
} onode;

/* A node type as the SDK names it. */
static inline trellis_value_type public_type(unsigned t)
{
    static const trellis_value_type map[] = {
        TRELLIS_VALUE_NULL,   TRELLIS_VALUE_BOOL, TRELLIS_VALUE_INT, TRELLIS_VALUE_DOUBLE,
        TRELLIS_VALUE_STRING, TRELLIS_VALUE_LIST, TRELLIS_VALUE_MAP,
    };
    return map[t];
}

#define NODE_MAX_LEN (UINT32_MAX >> 3)

static inline const onode *N(const trellis_value *v)
{
    return (const onode *)(const void *)v;
}

static inline const trellis_value *V(const onode *n)
{
    return (const trellis_value *)(const void *)n;
}

static inline unsigned ntype(const onode *n)
{
    return n->tl & 7;
}

static inline uint32_t nlen(const onode *n)
{
    return n->tl >> 3;
}

static inline const char *ntext(const onode *n)
{
    const char *p = (const char *)n + n->off;
    return ntype(n) == N_INT || ntype(n) == N_DOUBLE ? p + 8 : p;
}

static inline const char *nkey(const onode *n)
{
    return object_key_text(n->key - 1);
}

static inline const onode *nchild(const onode *n, size_t i)
{
    return n + n->off + i;
}

/* A member or element as a handle: null is NULL, as it always was. */
static inline const trellis_value *handle(const onode *n)
{
    return ntype(n) == N_NULL ? NULL : V(n);
}

#endif
