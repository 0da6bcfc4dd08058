/*
 * wbcanon.c - see wbtree.h: the canonical form of a document.
 */
#include "config.h"

#include "wbtree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- checking that nothing else changed -------------------------------
 *
 * Each document is written out in a canonical form (structure, keys,
 * scalar text and whether it is plain, anchors, aliases; not layout), once
 * from the text before a pass with the pass's edits laid over it, once from
 * the text after it. They must be equal. An empty map and null read the
 * same (removing a block map's last key leaves null). */

static void canon_text(strbuf *b, char kind, int tagged, const char *v, size_t len)
{
    /* "<kind>[t]<len>:<text>", written by hand: this runs for every
     * scalar of every document a write-back touches */
    char head[32], digits[24];
    size_t h = 0, nd = 0, n = len;
    head[h++] = kind;
    if (tagged)
        head[h++] = 't';
    do {
        digits[nd++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (nd)
        head[h++] = digits[--nd];
    head[h++] = ':';
    sb_add(b, head, h);
    sb_add(b, v, len);
}

static void canon_scalar(strbuf *b, const node *n, int json)
{
    if (n->anchor)
        sb_printf(b, "&%s ", n->anchor);
    if (wb_is_null(n, json)) {
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
    canon_text(b, json || !wb_plain_safe(v) ? 's' : 'p', 0, v, strlen(v));
}

/* A raw value as render_raw writes it: strings (keys too) quoted, other
 * scalars plain (JSON: literals), null and {} as null. */
void wb_canon_raw(strbuf *b, const node *n, int json)
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
            wb_canon_raw(b, n->kids[i + 1], json);
        }
        sb_add(b, "}", 1);
        return;
    case N_SEQ:
        sb_add(b, "[", 1);
        for (size_t i = 0; i < n->nkids; i++)
            wb_canon_raw(b, n->kids[i], json);
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
        wb_canon_raw(b, ov->raw, json);
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
    long target = ck ? wb_map_find(n, ck) : -1;
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
            wb_canon(b, k, json, NULL, 0);
            if (last) {
                if (v->anchor && v->kind != N_ALIAS && (v->kind == N_SCALAR || ov->raw))
                    sb_printf(b, "&%s ", v->anchor);
                canon_value(b, ov, json);
            } else if (wb_is_null(v, json) && ov->value) {
                canon_chain(b, ov, at + 1, json);
            } else {
                wb_canon(b, v, json, ov, at + 1);
            }
            count++;
            continue;
        }
        wb_canon(b, k, json, NULL, 0);
        wb_canon(b, v, json, NULL, 0);
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

void wb_canon(strbuf *b, const node *n, int json, const overlay *ov, size_t at)
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
            wb_canon(b, n->kids[i], json, NULL, 0);
        sb_add(b, "]", 1);
        return;
    }
}

/* A document with the overlays of one pass: one whole-document edit, or
 * edits of distinct List items. */
void wb_canon_doc(strbuf *b, const node *root, int json, const overlay *ovs, size_t nov)
{
    if (nov == 0 || ovs[0].item < 0) {
        wb_canon(b, root, json, nov ? &ovs[0] : NULL, 0);
        return;
    }
    if (root->anchor)
        sb_printf(b, "&%s ", root->anchor);
    sb_add(b, "{", 1);
    long items = wb_map_find(root, "items");
    for (size_t i = 0; i + 1 < root->nkids; i += 2) {
        const node *v = root->kids[i + 1];
        wb_canon(b, root->kids[i], json, NULL, 0);
        if ((long)(i / 2) != items || v->kind != N_SEQ) {
            wb_canon(b, v, json, NULL, 0);
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
            wb_canon(b, v->kids[j], json, ov, 0);
        }
        sb_add(b, "]", 1);
    }
    sb_add(b, "}", 1);
}
