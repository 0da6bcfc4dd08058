/*
 * wbtree.h - the write-back's parts that are not the edits themselves:
 * position trees of YAML and JSON text (wbtree.c), the values it writes,
 * and the canonical form that checks nothing else changed (wbcanon.c).
 * Private to writeback.c and its two helpers.
 */
#ifndef TRELLIS_WBTREE_H
#define TRELLIS_WBTREE_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "util.h"

#define MAX_DEPTH 200
#define MAX_COMPONENTS 64
#define DEFAULT_STEP 2

/* ---- position trees ---- */

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
    char *value; /* scalar: decoded text (JSON literals: as written), in vbuf */
    size_t vlen;
    char *vbuf; /* owned, vcap bytes: kept when the node is reused */
    size_t vcap;
    char *anchor;       /* own anchor, or the alias's target */
    struct node **kids; /* map: key, value, key, value...; seq: elements */
    size_t nkids, cap;
    struct node *next_free; /* kept for reuse (wbtree.c's pool): the next one */
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

/* A YAML text being read into a tree. */
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

/* A JSON text being read into a tree. */
typedef struct jbuild {
    const char *s;
    size_t len, i;
    char *err;
    size_t errlen;
    /* the line last looked up: a node in [nl_from, nl_end] is on it and
     * its next line starts at nl_next (a one-line document of many nodes
     * is not scanned to its end once per node); nl_next 0: none yet */
    size_t nl_from, nl_end, nl_next;
} jbuild;

/* An edit's path, split at the dots. */
typedef struct keypath {
    char *comps[MAX_COMPONENTS];
    size_t n;
} keypath;

/* An edit laid over a document for the canonical form. */
typedef struct overlay {
    const keypath *p;
    int item;
    const char *value;
    const node *raw; /* a raw edit's parsed value */
} overlay;

void wb_build_cmap(ybuild *b);
int wb_json_next_doc(jbuild *b, tree *t);
size_t wb_line_end(const char *s, size_t len, size_t p);
size_t wb_line_start(const char *s, size_t p);
const char *wb_newline_of(const char *s, size_t len);
size_t wb_next_line(const char *s, size_t len, size_t p);
void wb_node_free(node *n);
int wb_plain_safe(const char *s);
int wb_raw_parse(const char *text, node **out, char *msg, size_t msglen);
void wb_render_block(strbuf *b, char *const *comps, size_t n, const char *val, size_t indent,
                     size_t step, const char *nl);
void wb_render_chain(strbuf *b, char *const *comps, size_t n, const char *val, int json);
void wb_render_raw(strbuf *b, const node *n);
void wb_render_value(strbuf *b, const char *v, int json);
void wb_tree_free(tree *t);
int wb_valid_utf8(const char *s);
int wb_yaml_next_doc(ybuild *b);
long wb_map_find(const node *m, const char *key);
int wb_is_null(const node *n, int json);
int wb_key_is(const node *k, const char *key);

/* ---- the canonical form (wbcanon.c) ---- */
void wb_canon(strbuf *b, const node *n, int json, const overlay *ov, size_t at);
void wb_canon_doc(strbuf *b, const node *root, int json, const overlay *ovs, size_t nov);
void wb_canon_raw(strbuf *b, const node *n, int json);

#endif
