/*
 * object.c - trellis objects and their compact value trees: the builder
 * and the layout (onode.h). The value accessors behind the SDK are in
 * value.c, the JSON reader in jsonread.c, the interned keys in keys.c.
 *
 * An object is one allocation: the trellis_object header, then an array of
 * 12-byte nodes, then the string bytes. A node holds its type and length,
 * one offset (to its text, or to its first child: the children of a list or
 * map are consecutive nodes) and, for a map member, the id of its key (map
 * keys are interned for the process). Offsets are relative to the node
 * itself, so a node pointer is a complete handle: nothing else is needed to
 * read its value, and a trellis_value is simply a node pointer. Strings are
 * NUL-terminated and stored once per object; numbers keep their binary
 * value (8 bytes, read with memcpy) in front of the text value_string
 * shows. Nothing is written after object_build, so plugins may read values
 * from any thread.
 *
 * Values are built in an obuild first (temporary nodes, member stacks, the
 * bytes of every string), which the parsers reuse from one document to the
 * next; object_build copies the value into the object's block, breadth
 * first so that every container's children come out consecutive.
 */
#include "config.h"

#include "object.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "hmap.h"
#include "onode.h"
#include "util.h"

/* ---- the builder ------------------------------------------------------- */

typedef struct tnode {
    uint32_t type;
    uint32_t len; /* string/text bytes, members */
    uint32_t off; /* string, number: text in b->str; container: first
                     member in b->ent */
    union {
        int64_t i;
        double d;
    } num;
} tnode;

#define NOKEY UINT32_MAX

typedef struct tent {
    uint32_t koff, klen; /* key in b->str; koff NOKEY for a list element */
    oref val;
} tent;

/* A hash of the members of one big open map, so that adding n members
 * does not cost n^2 key comparisons. */
typedef struct bigmap {
    size_t mark;
    uint32_t *slots; /* stack index + 1; 0 = empty */
    size_t cap, n;
} bigmap;

#define BIG_MAP 24

/* One node of the object being laid out. */
typedef struct lay {
    oref src;
    uint32_t kin, klen; /* key in b->str, kin NOKEY for none */
    uint32_t kid;       /* key id + 1, 0 for none */
    uint32_t vout;      /* text in the object's strings */
} lay;

typedef struct islot {
    uint32_t hash, off, len; /* off + 1; 0 = empty */
} islot;

struct obuild {
    tnode *nodes;
    size_t n_nodes, cap_nodes;
    char *str;
    size_t n_str, cap_str;
    tent *stk; /* members of the open containers */
    size_t n_stk, cap_stk;
    tent *ent; /* members of closed containers */
    size_t n_ent, cap_ent;
    bigmap *big;
    size_t n_big, cap_big;
    /* object_build's scratch */
    lay *lay;
    size_t cap_lay;
    char *out;
    size_t n_out, cap_out;
    islot *islots;
    size_t n_islots, cap_islots;
    /* ob_parse_json's scratch for unescaped strings */
    char *sbuf;
    size_t cap_sbuf;
    hmap kcache; /* key text -> id + 1, the keys this builder met */
    int nul;     /* a string held a NUL: object_build refuses the value */
};

obuild *obuild_new(void)
{
    return xcalloc(1, sizeof(obuild));
}

void obuild_free(obuild *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->cap_big; i++)
        free(b->big[i].slots);
    free(b->big);
    free(b->nodes);
    free(b->str);
    free(b->stk);
    free(b->ent);
    free(b->lay);
    free(b->out);
    free(b->islots);
    free(b->sbuf);
    hmap_free(&b->kcache);
    free(b);
}

void obuild_clear(obuild *b)
{
    b->n_nodes = b->n_str = b->n_stk = b->n_ent = b->n_big = 0;
    b->nul = 0;
}

/* The calling thread's builder: kept from one object to the next so that
 * its memory and the keys it met (object_key_id takes a lock) serve every
 * object the thread builds; freed when the thread ends. */
static _Thread_local obuild *thread_builder;
static pthread_key_t thread_builder_key;
static pthread_once_t thread_builder_once = PTHREAD_ONCE_INIT;

static void thread_builder_end(void *b)
{
    obuild_free(b);
    thread_builder = NULL;
}

static int thread_builder_keyed; /* else a thread's builder outlives it */

static void thread_builder_init(void)
{
    thread_builder_keyed = pthread_key_create(&thread_builder_key, thread_builder_end) == 0;
}

obuild *obuild_thread(void)
{
    if (!thread_builder) {
        pthread_once(&thread_builder_once, thread_builder_init);
        thread_builder = obuild_new();
        if (thread_builder_keyed)
            pthread_setspecific(thread_builder_key, thread_builder);
    }
    obuild_clear(thread_builder);
    return thread_builder;
}

static oref new_node(obuild *b, uint32_t type)
{
    if (b->n_nodes == b->cap_nodes)
        grow(&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof *b->nodes);
    tnode *t = &b->nodes[b->n_nodes];
    t->type = type;
    t->len = t->off = 0;
    t->num.i = 0;
    return (oref)b->n_nodes++;
}

/* Append bytes and a NUL to b->str (s may point into it); returns their
 * offset. */
static uint32_t add_str(obuild *b, const char *s, size_t len)
{
    if (b->n_str + len + 1 > b->cap_str) {
        if (b->str && s >= b->str && s < b->str + b->cap_str) {
            size_t at = (size_t)(s - b->str);
            grow(&b->str, &b->cap_str, b->n_str + len + 1, 1);
            s = b->str + at;
        } else {
            grow(&b->str, &b->cap_str, b->n_str + len + 1, 1);
        }
    }
    uint32_t off = (uint32_t)b->n_str;
    if (len)
        memcpy(b->str + off, s, len);
    b->str[off + len] = '\0';
    b->n_str += len + 1;
    return off;
}

oref ob_null(obuild *b)
{
    return new_node(b, N_NULL);
}

oref ob_bool(obuild *b, int v)
{
    oref r = new_node(b, N_BOOL);
    b->nodes[r].len = v ? 1 : 0;
    return r;
}

oref ob_int(obuild *b, int64_t v, const char *text)
{
    char buf[32];
    if (!text) {
        fmt_s(buf, sizeof buf, "%lld", (long long)v);
        text = buf;
    }
    size_t len = strlen(text);
    uint32_t off = add_str(b, text, len);
    oref r = new_node(b, N_INT);
    b->nodes[r].num.i = v;
    b->nodes[r].off = off;
    b->nodes[r].len = (uint32_t)len;
    return r;
}

oref ob_double(obuild *b, double v, const char *text)
{
    json_object *tmp = NULL;
    if (!text) {
        /* the text json-c gives a double it did not parse */
        tmp = json_object_new_double(v);
        text = json_object_to_json_string_ext(tmp, JSON_C_TO_STRING_PLAIN);
    }
    size_t len = strlen(text);
    uint32_t off = add_str(b, text, len);
    json_object_put(tmp);
    oref r = new_node(b, N_DOUBLE);
    b->nodes[r].num.d = v;
    b->nodes[r].off = off;
    b->nodes[r].len = (uint32_t)len;
    return r;
}

void ob_note_json_text(obuild *b, const char *t, size_t n)
{
    for (size_t i = 0; i + 6 <= n; i++) {
        if (t[i] != '\\')
            continue;
        if (memcmp(t + i + 1, "u0000", 5) == 0) {
            b->nul = 1;
            return;
        }
        i++; /* an escaped character, a backslash included, is not a start */
    }
}

oref ob_string(obuild *b, const char *s, size_t len)
{
    /* values are read as C strings: "a\u0000b" would be "a" silently */
    if (memchr(s, '\0', len))
        b->nul = 1;
    uint32_t off = add_str(b, s, len);
    oref r = new_node(b, N_STRING);
    b->nodes[r].off = off;
    b->nodes[r].len = (uint32_t)len;
    return r;
}

size_t ob_open(obuild *b)
{
    return b->n_stk;
}

static void push_member(obuild *b, uint32_t koff, uint32_t klen, oref v)
{
    if (b->n_stk == b->cap_stk)
        grow(&b->stk, &b->cap_stk, b->n_stk + 1, sizeof *b->stk);
    b->stk[b->n_stk++] = (tent){koff, klen, v};
}

void ob_item(obuild *b, oref v)
{
    push_member(b, NOKEY, 0, v);
}

/* The builder's tables' hash (the strings of a binding's decision run to
 * hundreds of bytes). */
static uint32_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = hash_mem(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

static int key_eq(const obuild *b, const tent *e, const char *key, size_t len)
{
    return e->klen == len && memcmp(b->str + e->koff, key, len) == 0;
}

static void big_insert(const obuild *b, bigmap *m, size_t idx)
{
    const tent *e = &b->stk[idx];
    size_t mask = m->cap - 1;
    for (size_t i = hash_bytes(b->str + e->koff, e->klen) & mask;; i = (i + 1) & mask)
        if (!m->slots[i]) {
            m->slots[i] = (uint32_t)(idx + 1);
            m->n++;
            return;
        }
}

static void big_rehash(const obuild *b, bigmap *m, size_t cap)
{
    free(m->slots);
    m->slots = xcalloc(cap, sizeof *m->slots);
    m->cap = cap;
    m->n = 0;
    for (size_t i = m->mark; i < b->n_stk; i++)
        big_insert(b, m, i);
}

/* The member of the map open at mark with this key: its stack index, or
 * SIZE_MAX. Big maps get a hash of their members on the way. */
static size_t find_member(obuild *b, size_t mark, const char *key, size_t len)
{
    size_t n = b->n_stk - mark;
    if (n < BIG_MAP) {
        for (size_t i = mark; i < b->n_stk; i++)
            if (key_eq(b, &b->stk[i], key, len))
                return i;
        return SIZE_MAX;
    }
    bigmap *m = b->n_big ? &b->big[b->n_big - 1] : NULL;
    if (!m || m->mark != mark) {
        if (b->n_big == b->cap_big) {
            size_t old = b->cap_big;
            grow(&b->big, &b->cap_big, b->n_big + 1, sizeof *b->big);
            memset(b->big + old, 0, (b->cap_big - old) * sizeof *b->big);
        }
        m = &b->big[b->n_big++];
        m->mark = mark;
        big_rehash(b, m, 64);
    }
    if ((m->n + 1) * 2 > m->cap)
        big_rehash(b, m, m->cap * 2);
    size_t mask = m->cap - 1;
    for (size_t i = hash_bytes(key, len) & mask; m->slots[i]; i = (i + 1) & mask)
        if (key_eq(b, &b->stk[m->slots[i] - 1], key, len))
            return m->slots[i] - 1;
    return SIZE_MAX;
}

static void note_member(obuild *b, size_t mark)
{
    if (b->n_big && b->big[b->n_big - 1].mark == mark)
        big_insert(b, &b->big[b->n_big - 1], b->n_stk - 1);
}

/* ob_member with the key already in b->str. */
static int member_at(obuild *b, size_t mark, uint32_t koff, uint32_t klen, oref v, int replace)
{
    size_t at = find_member(b, mark, b->str + koff, klen);
    if (at != SIZE_MAX) {
        if (replace)
            b->stk[at].val = v;
        return 1;
    }
    push_member(b, koff, klen, v);
    note_member(b, mark);
    return 0;
}

uint32_t ob_key(obuild *b, const char *key, size_t len)
{
    size_t n = strnlen(key, len);
    if (n < len)
        b->nul = 1;
    return add_str(b, key, n);
}

const char *ob_key_text(const obuild *b, uint32_t key)
{
    return b->str + key;
}

int ob_member_at(obuild *b, size_t mark, uint32_t key, oref v, int replace)
{
    return member_at(b, mark, key, (uint32_t)strlen(b->str + key), v, replace);
}

int ob_member(obuild *b, size_t mark, const char *key, size_t len, oref v, int replace)
{
    size_t n = strnlen(key, len);
    if (n < len)
        b->nul = 1;
    len = n;
    size_t at = find_member(b, mark, key, len);
    if (at != SIZE_MAX) {
        if (replace)
            b->stk[at].val = v;
        return 1;
    }
    uint32_t koff = add_str(b, key, len);
    push_member(b, koff, (uint32_t)len, v);
    note_member(b, mark);
    return 0;
}

void ob_merge(obuild *b, size_t mark, oref src)
{
    const tnode *t = &b->nodes[src];
    if (t->type != N_MAP)
        return;
    uint32_t first = t->off, n = t->len;
    for (uint32_t i = 0; i < n; i++) {
        tent e = b->ent[first + i];
        if (find_member(b, mark, b->str + e.koff, e.klen) == SIZE_MAX) {
            push_member(b, e.koff, e.klen, e.val);
            note_member(b, mark);
        }
    }
}

static oref close_container(obuild *b, size_t mark, uint32_t type)
{
    size_t n = b->n_stk - mark;
    if (b->n_ent + n > b->cap_ent)
        grow(&b->ent, &b->cap_ent, b->n_ent + n, sizeof *b->ent);
    uint32_t first = (uint32_t)b->n_ent;
    if (n)
        memcpy(b->ent + b->n_ent, b->stk + mark, n * sizeof *b->ent);
    b->n_ent += n;
    b->n_stk = mark;
    while (b->n_big && b->big[b->n_big - 1].mark >= mark)
        b->n_big--;
    oref r = new_node(b, type);
    b->nodes[r].off = first;
    b->nodes[r].len = (uint32_t)n;
    return r;
}

oref ob_close_list(obuild *b, size_t mark)
{
    return close_container(b, mark, N_LIST);
}

oref ob_close_map(obuild *b, size_t mark)
{
    return close_container(b, mark, N_MAP);
}

trellis_value_type ob_type(const obuild *b, oref v)
{
    return v == OB_NONE ? TRELLIS_VALUE_NULL : public_type(b->nodes[v].type);
}

size_t ob_len(const obuild *b, oref v)
{
    if (v == OB_NONE)
        return 0;
    const tnode *t = &b->nodes[v];
    return t->type == N_LIST || t->type == N_MAP ? t->len : 0;
}

oref ob_at(const obuild *b, oref list, size_t i)
{
    if (list == OB_NONE || b->nodes[list].type != N_LIST || i >= b->nodes[list].len)
        return OB_NONE;
    return b->ent[b->nodes[list].off + i].val;
}

oref ob_get(const obuild *b, oref map, const char *key)
{
    if (map == OB_NONE || b->nodes[map].type != N_MAP)
        return OB_NONE;
    const tnode *t = &b->nodes[map];
    size_t len = strlen(key);
    for (uint32_t i = 0; i < t->len; i++)
        if (key_eq(b, &b->ent[t->off + i], key, len))
            return b->ent[t->off + i].val;
    return OB_NONE;
}

const char *ob_text(const obuild *b, oref v)
{
    if (v == OB_NONE)
        return "null";
    const tnode *t = &b->nodes[v];
    switch (t->type) {
    case N_NULL:
        return "null";
    case N_BOOL:
        return t->len ? "true" : "false";
    case N_INT:
    case N_DOUBLE:
    case N_STRING:
        return b->str + t->off;
    default:
        return NULL;
    }
}

oref ob_json(obuild *b, json_object *j)
{
    switch (json_object_get_type(j)) {
    case json_type_null:
        return ob_null(b);
    case json_type_boolean:
        return ob_bool(b, json_object_get_boolean(j));
    case json_type_int:
        return ob_int(b, json_object_get_int64(j), NULL);
    case json_type_double: {
        /* a parsed double keeps its source text as user data */
        const char *text = json_object_get_userdata(j);
        if (!text)
            text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
        return ob_double(b, json_object_get_double(j), text);
    }
    case json_type_string:
        return ob_string(b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
    case json_type_array: {
        size_t mark = ob_open(b);
        size_t n = json_object_array_length(j);
        for (size_t i = 0; i < n; i++)
            ob_item(b, ob_json(b, json_object_array_get_idx(j, i)));
        return ob_close_list(b, mark);
    }
    case json_type_object: {
        size_t mark = ob_open(b);
        json_object_object_foreach(j, key, child)
        {
            oref v = ob_json(b, child);
            ob_member(b, mark, key, strlen(key), v, 1);
        }
        return ob_close_map(b, mark);
    }
    }
    return ob_null(b);
}

/* ---- laying out an object ---------------------------------------------- */

static const char *type_name(const obuild *b, oref v)
{
    switch (ob_type(b, v)) {
    case TRELLIS_VALUE_NULL:
        return "null";
    case TRELLIS_VALUE_BOOL:
        return "a bool";
    case TRELLIS_VALUE_INT:
    case TRELLIS_VALUE_DOUBLE:
        return "a number";
    case TRELLIS_VALUE_STRING:
        return "a string";
    case TRELLIS_VALUE_LIST:
        return "a list";
    case TRELLIS_VALUE_MAP:
        return "a map";
    }
    return "unknown";
}

/* A member that is present and not null. */
static oref member(const obuild *b, oref map, const char *key)
{
    oref v = ob_get(b, map, key);
    return v != OB_NONE && b->nodes[v].type == N_NULL ? OB_NONE : v;
}

/* A required, non-empty string member of m. */
static int need_string(const obuild *b, oref m, const char *key, const char *label,
                       const char **out, char *err, size_t errlen)
{
    oref v = member(b, m, key);
    if (v == OB_NONE)
        return errf(err, errlen, "missing %s", label);
    if (b->nodes[v].type != N_STRING)
        return errf(err, errlen, "%s is not a string", label);
    if (b->nodes[v].len == 0)
        return errf(err, errlen, "%s is empty", label);
    *out = b->str + b->nodes[v].off;
    return 0;
}

/* An optional string member: "" when absent or null. */
static int opt_string(const obuild *b, oref m, const char *key, const char *label, const char **out,
                      char *err, size_t errlen)
{
    oref v = member(b, m, key);
    *out = "";
    if (v == OB_NONE)
        return 0;
    if (b->nodes[v].type != N_STRING)
        return errf(err, errlen, "%s is not a string", label);
    *out = b->str + b->nodes[v].off;
    return 0;
}

static void out_reserve(obuild *b, size_t n)
{
    if (b->n_out + n > b->cap_out)
        grow(&b->out, &b->cap_out, b->n_out + n, 1);
}

/* The offset of s in the object's strings, stored once. */
static uint32_t intern(obuild *b, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len);
    size_t mask = b->n_islots - 1;
    size_t i = h & mask;
    for (; b->islots[i].off; i = (i + 1) & mask) {
        islot *sl = &b->islots[i];
        if (sl->hash == h && sl->len == len && memcmp(b->out + sl->off - 1, s, len) == 0)
            return sl->off - 1;
    }
    out_reserve(b, len + 1);
    uint32_t off = (uint32_t)b->n_out;
    memcpy(b->out + off, s, len);
    b->out[off + len] = '\0';
    b->n_out += len + 1;
    b->islots[i] = (islot){h, off + 1, (uint32_t)len};
    return off;
}

/* Let later strings equal to s[0..len) (bytes already in b->out at off,
 * NUL-terminated) use them. */
static void intern_at(obuild *b, const char *s, size_t len, uint32_t off)
{
    uint32_t h = hash_bytes(s, len);
    size_t mask = b->n_islots - 1;
    size_t i = h & mask;
    for (; b->islots[i].off; i = (i + 1) & mask) {
        const islot *sl = &b->islots[i];
        if (sl->hash == h && sl->len == len && memcmp(b->out + sl->off - 1, s, len) == 0)
            return;
    }
    b->islots[i] = (islot){h, off + 1, (uint32_t)len};
}

static uint32_t add_number(obuild *b, const tnode *t)
{
    out_reserve(b, 8 + t->len + 1);
    uint32_t off = (uint32_t)b->n_out;
    memcpy(b->out + off, &t->num, 8);
    memcpy(b->out + off + 8, b->str + t->off, t->len + 1);
    b->n_out += 8 + t->len + 1;
    return off;
}

/* A key's id, through the builder's cache of the keys it met. */
static uint32_t local_key(obuild *b, const char *key)
{
    uintptr_t v = (uintptr_t)hmap_get(&b->kcache, key);
    if (v)
        return (uint32_t)(v - 1);
    uint32_t id = object_key_id(key);
    if (id != UINT32_MAX)
        hmap_put(&b->kcache, object_key_text(id), (void *)(uintptr_t)(id + 1));
    return id;
}

/* Objects are at most this big (offsets are 32 bits). */
#define MAX_TREE ((size_t)1 << 31)

/* Interned file names: objects of one file share one copy. */
typedef struct fname {
    size_t refs;
    uint64_t h; /* hmap_hash(s) */
    char s[];
} fname;

static pthread_mutex_t fname_mu = PTHREAD_MUTEX_INITIALIZER;
static hmap fname_map;

static const char *fname_get(const char *file)
{
    pthread_mutex_lock(&fname_mu);
    fname *f = hmap_get(&fname_map, file);
    if (!f) {
        size_t len = strlen(file);
        f = xmalloc(sizeof *f + len + 1);
        f->refs = 0;
        memcpy(f->s, file, len + 1);
        f->h = hmap_hash(f->s);
        hmap_put(&fname_map, f->s, f);
    }
    f->refs++;
    pthread_mutex_unlock(&fname_mu);
    return f->s;
}

static void fname_put(const char *s)
{
    if (!s)
        return;
    fname *f = (fname *)(void *)(s - offsetof(fname, s));
    pthread_mutex_lock(&fname_mu);
    if (--f->refs == 0) {
        hmap_del(&fname_map, f->s);
        if (fname_map.len == 0)
            hmap_free(&fname_map);
        free(f);
    }
    pthread_mutex_unlock(&fname_mu);
}

/* The identity fields of a document: a map with apiVersion, kind and
 * metadata.name strings, metadata.namespace and metadata.uid strings when
 * present. 0, or -1 with err. */
static int identity_fields(const obuild *b, oref root, const char **api, const char **kind,
                           const char **name, const char **ns, const char **uid, char *err,
                           size_t errlen)
{
    if (b->nul)
        return errf(err, errlen,
                    "a string holds a NUL character (\\u0000 or \\0), which "
                    "trellis cannot keep: remove it");
    if (root == OB_NONE || b->nodes[root].type != N_MAP)
        return errf(err, errlen, "document is %s, expected a map", type_name(b, root));
    oref meta = member(b, root, "metadata");
    if (need_string(b, root, "apiVersion", "apiVersion", api, err, errlen) < 0 ||
        need_string(b, root, "kind", "kind", kind, err, errlen) < 0)
        return -1;
    if (meta != OB_NONE && b->nodes[meta].type != N_MAP)
        return errf(err, errlen, "metadata is not a map");
    if (meta == OB_NONE)
        return errf(err, errlen, "missing metadata.name");
    if (need_string(b, meta, "name", "metadata.name", name, err, errlen) < 0 ||
        opt_string(b, meta, "namespace", "metadata.namespace", ns, err, errlen) < 0 ||
        opt_string(b, meta, "uid", "metadata.uid", uid, err, errlen) < 0)
        return -1;
    return 0;
}

/* The nodes in b->lay, breadth first, so that each container's children
 * get consecutive slots: how many, or 0 with err when too large. */
static size_t breadth_first(obuild *b, oref root, char *err, size_t errlen)
{
    size_t n = 1;
    if (!b->cap_lay)
        grow(&b->lay, &b->cap_lay, 64, sizeof *b->lay);
    b->lay[0] = (lay){root, NOKEY, 0, 0, 0};
    size_t strbytes = 0;
    for (size_t i = 0; i < n; i++) {
        const tnode *t = &b->nodes[b->lay[i].src];
        if (t->type == N_STRING || t->type == N_INT || t->type == N_DOUBLE)
            strbytes += t->len + 9;
        if (t->type != N_LIST && t->type != N_MAP)
            continue;
        if (n + t->len > b->cap_lay)
            grow(&b->lay, &b->cap_lay, n + t->len, sizeof *b->lay);
        for (uint32_t k = 0; k < t->len; k++) {
            const tent *e = &b->ent[t->off + k];
            b->lay[n++] = (lay){e->val, e->koff, e->klen, 0, 0};
        }
        if (n * sizeof(onode) + strbytes > MAX_TREE)
            return errf(err, errlen, "document too large"), 0;
    }
    return n;
}

/* The strings of the n laid-out nodes into b->out, each distinct one
 * once, with the id "Kind/namespace/name" first (the key
 * "namespace/name" is its tail, and metadata.name's value shares its
 * last bytes); keys by id. The id's and the key's offsets into *idoff,
 * *keyoff. 0, or -1 with err. */
static int intern_strings(obuild *b, size_t n, const char *kind, const char *ns, const char *name,
                          uint32_t *idoff, uint32_t *keyoff, char *err, size_t errlen)
{
    size_t want = 64;
    while (want < n * 3)
        want *= 2;
    if (want > b->cap_islots) {
        free(b->islots);
        b->islots = xmalloc(want * sizeof *b->islots);
        b->cap_islots = want;
    }
    b->n_islots = want;
    memset(b->islots, 0, want * sizeof *b->islots);
    b->n_out = 0;
    size_t kl = strlen(kind), nl = strlen(ns), ml = strlen(name);
    size_t il = kl + nl + ml + 2;
    char stackbuf[256];
    char *id = il + 1 <= sizeof stackbuf ? stackbuf : xmalloc(il + 1);
    memcpy(id, kind, kl);
    id[kl] = '/';
    memcpy(id + kl + 1, ns, nl);
    id[kl + 1 + nl] = '/';
    memcpy(id + kl + nl + 2, name, ml + 1);
    *idoff = intern(b, id, il);
    *keyoff = *ns ? *idoff + (uint32_t)kl + 1 : *idoff + (uint32_t)(kl + 2);
    if (id != stackbuf)
        free(id);
    intern_at(b, b->out + *idoff + il - ml, ml, *idoff + (uint32_t)(il - ml));
    for (size_t i = 0; i < n; i++) {
        lay *l = &b->lay[i];
        const tnode *t = &b->nodes[l->src];
        if (l->kin != NOKEY) {
            uint32_t kid = local_key(b, b->str + l->kin);
            if (kid == UINT32_MAX)
                return errf(err, errlen, "too many distinct keys");
            l->kid = kid + 1;
        }
        if (t->type == N_STRING)
            l->vout = intern(b, b->str + t->off, t->len);
        else if (t->type == N_INT || t->type == N_DOUBLE)
            l->vout = add_number(b, t);
    }
    return 0;
}

/* One allocation: the header, the n nodes, the strings. */
static trellis_object *emit(const obuild *b, size_t n)
{
    size_t head = (sizeof(trellis_object) + 7) & ~(size_t)7;
    size_t nodes_bytes = n * sizeof(onode);
    trellis_object *o = xmalloc(head + nodes_bytes + b->n_out);
    memset(o, 0, sizeof *o);
    onode *nodes = (onode *)(void *)((char *)o + head);
    char *strs = (char *)nodes + nodes_bytes;
    memcpy(strs, b->out, b->n_out);
    size_t next_child = 1;
    for (size_t i = 0; i < n; i++) {
        const lay *l = &b->lay[i];
        const tnode *t = &b->nodes[l->src];
        onode *d = &nodes[i];
        uint32_t len = t->len;
        size_t to_strs = (size_t)(strs - (char *)d);
        switch (t->type) {
        case N_STRING:
        case N_INT:
        case N_DOUBLE:
            d->off = (uint32_t)(to_strs + l->vout);
            break;
        case N_LIST:
        case N_MAP:
            d->off = (uint32_t)(next_child - i);
            next_child += len;
            break;
        default:
            d->off = 0;
            break;
        }
        d->tl = t->type | len << 3;
        d->key = l->kid;
    }
    o->tree_size = (uint32_t)(nodes_bytes + b->n_out);
    o->root = V(nodes);
    return o;
}

/* The identity, pointing into the block (strs: its strings). */
static void set_identity(trellis_object *o, const char *strs, uint32_t idoff, uint32_t keyoff)
{
    const trellis_value *m = value_get(o->root, "metadata");
    o->api_version = value_string(value_get(o->root, "apiVersion"));
    o->kind = value_string(value_get(o->root, "kind"));
    o->name = value_string(value_get(m, "name"));
    const char *s = value_string(value_get(m, "namespace"));
    o->namespace_ = s ? s : "";
    s = value_string(value_get(m, "uid"));
    o->uid = s ? s : "";
    const trellis_value *lab = value_get(m, "labels");
    o->labels = value_type(lab) == TRELLIS_VALUE_MAP ? lab : NULL;
    const trellis_value *ann = value_get(m, "annotations");
    o->annotations = value_type(ann) == TRELLIS_VALUE_MAP ? ann : NULL;
    o->key = strs + keyoff;
    o->id = strs + idoff;
    o->id_hash = hmap_hash(o->id);
    o->item = -1;
    o->prepare_failed_slot = -1;
    atomic_init(&o->refs, 1);
}

trellis_object *object_build(obuild *b, oref root, char *err, size_t errlen)
{
    const char *api = NULL, *kind = NULL, *name = NULL, *ns = "", *uid = "";
    if (identity_fields(b, root, &api, &kind, &name, &ns, &uid, err, errlen) < 0)
        return NULL;
    size_t n = breadth_first(b, root, err, errlen);
    uint32_t idoff, keyoff;
    if (!n || intern_strings(b, n, kind, ns, name, &idoff, &keyoff, err, errlen) < 0)
        return NULL;
    trellis_object *o = emit(b, n);
    set_identity(o, (const char *)o->root + n * sizeof(onode), idoff, keyoff);
    return o;
}

trellis_object *object_build_document(obuild *b, oref root, char *err, size_t errlen)
{
    if (b->nul) {
        errf(err, errlen, "a string holds a NUL character, which trellis cannot keep");
        return NULL;
    }
    if (root == OB_NONE) {
        errf(err, errlen, "the document is empty");
        return NULL;
    }
    size_t n = breadth_first(b, root, err, errlen);
    uint32_t idoff, keyoff;
    if (!n || intern_strings(b, n, "", "", "", &idoff, &keyoff, err, errlen) < 0)
        return NULL;
    trellis_object *o = emit(b, n);
    set_identity(o, (const char *)o->root + n * sizeof(onode), idoff, keyoff);
    /* a document has no identity of its own */
    o->api_version = o->kind = o->name = "";
    return o;
}

/* ---- objects ----------------------------------------------------------- */

trellis_object *object_new(json_object *root, char *err, size_t errlen)
{
    obuild *b = obuild_thread();
    oref r = root ? ob_json(b, root) : OB_NONE;
    json_object_put(root);
    return object_build(b, r, err, errlen);
}

/* 1-based line of byte offset off in text. */
trellis_object *object_ref(trellis_object *o)
{
    if (o)
        atomic_fetch_add(&o->refs, 1);
    return o;
}

void object_unref(trellis_object *o)
{
    if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    fname_put(o->file);
    if (o->counters && !(o->aux && o->counters == (int64_t *)(void *)(o->aux + o->naux)))
        free(o->counters);
    free(o->aux);
    free(o->tvalues);
    free(o->failed);
    free(o->prepare_error);
    free(o);
}

trellis_object *object_copy(const trellis_object *o)
{
    char err[256];
    trellis_object *c = object_new(object_to_json(o), err, sizeof err);
    if (!c)
        return NULL;
    object_set_origin(c, o->file, o->doc, o->item, o->line);
    c->version = o->version;
    return c;
}

uint64_t object_file_hash(const trellis_object *o)
{
    return ((const fname *)(const void *)(o->file - offsetof(fname, s)))->h;
}

void object_set_origin(trellis_object *o, const char *file, int doc, int item, int line)
{
    if (!file || !o->file || strcmp(file, o->file) != 0) {
        const char *f = file ? fname_get(file) : NULL;
        fname_put(o->file);
        o->file = f;
    }
    o->doc = doc;
    o->item = item;
    o->line = line;
}

int object_same_content(const trellis_object *a, const trellis_object *b)
{
    return a->tree_size == b->tree_size && memcmp(a->root, b->root, a->tree_size) == 0;
}

int object_same_but_status(const trellis_object *a, const trellis_object *b)
{
    if (object_same_content(a, b))
        return 1;
    json_object *ja = object_to_json(a), *jb = object_to_json(b);
    if (ja)
        json_object_object_del(ja, "status");
    if (jb)
        json_object_object_del(jb, "status");
    int same = ja && jb && json_object_equal(ja, jb);
    json_object_put(ja);
    json_object_put(jb);
    return same;
}

json_object *value_to_json(const trellis_value *v)
{
    const onode *n = N(v);
    if (!n)
        return NULL;
    switch (ntype(n)) {
    case N_BOOL:
        return json_object_new_boolean((json_bool)nlen(n));
    case N_INT: {
        int64_t i;
        memcpy(&i, (const char *)n + n->off, 8);
        return json_object_new_int64(i);
    }
    case N_DOUBLE: {
        double d;
        memcpy(&d, (const char *)n + n->off, 8);
        return json_object_new_double_s(d, ntext(n));
    }
    case N_STRING:
        return json_object_new_string_len(ntext(n), (int)nlen(n));
    case N_LIST: {
        json_object *a = json_object_new_array_ext((int)nlen(n));
        for (size_t i = 0; i < nlen(n); i++)
            json_object_array_add(a, value_to_json(handle(nchild(n, i))));
        return a;
    }
    case N_MAP: {
        json_object *m = json_object_new_object();
        for (size_t i = 0; i < nlen(n); i++) {
            const onode *c = nchild(n, i);
            json_object_object_add(m, nkey(c), value_to_json(handle(c)));
        }
        return m;
    }
    default:
        return NULL;
    }
}

json_object *object_to_json(const trellis_object *o)
{
    return value_to_json(o->root);
}

void object_json_string(strbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sb_add(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= ' ' && c != '"' && c != '\\')
            continue; /* the common case: as it is */
        const char *esc = NULL;
        char u[7];
        switch (c) {
        case '\b':
            esc = "\\b";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        default:
            if (c < ' ') {
                memcpy(u, "\\u00", 4);
                u[4] = hex[c >> 4];
                u[5] = hex[c & 0xf];
                u[6] = '\0';
                esc = u;
            }
        }
        if (!esc)
            continue;
        sb_add(b, s + start, i - start);
        sb_add(b, esc, strlen(esc));
        start = i + 1;
    }
    sb_add(b, s + start, n - start);
    sb_add(b, "\"", 1);
}

static void pretty_indent(strbuf *b, int level)
{
    static const char spaces[] = "                                ";
    for (size_t n = (size_t)level * 2; n;) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        sb_add(b, spaces, k);
        n -= k;
    }
}

/* json-c's to_json_string of each type, PRETTY | SPACED. */
static int pretty_value(strbuf *b, const onode *n, int level)
{
    char num[32];
    switch (ntype(n)) {
    case N_BOOL:
        sb_puts(b, nlen(n) ? "true" : "false");
        return 0;
    case N_INT: {
        int64_t i;
        memcpy(&i, (const char *)n + n->off, 8);
        snprintf(num, sizeof num, "%" PRId64, i);
        sb_puts(b, num);
        return 0;
    }
    case N_DOUBLE: /* json_object_new_double_s: the text as read */
        sb_puts(b, ntext(n));
        return 0;
    case N_STRING:
        object_json_string(b, ntext(n), nlen(n));
        return 0;
    case N_LIST:
        sb_add(b, "[\n", 2);
        for (size_t i = 0; i < nlen(n); i++) {
            if (i)
                sb_add(b, ",\n", 2);
            pretty_indent(b, level + 1);
            if (pretty_value(b, nchild(n, i), level + 1) < 0)
                return -1;
        }
        if (nlen(n))
            sb_add(b, "\n", 1);
        pretty_indent(b, level);
        sb_add(b, "]", 1);
        return 0;
    case N_MAP:
        sb_add(b, "{", 1);
        for (size_t i = 0; i < nlen(n); i++) {
            const onode *c = nchild(n, i);
            for (size_t k = 0; k < i; k++)
                if (nchild(n, k)->key == c->key)
                    return -1; /* json-c keeps the first place, the last value */
            sb_add(b, i ? ",\n" : "\n", i ? 2 : 1);
            pretty_indent(b, level + 1);
            const char *key = nkey(c);
            object_json_string(b, key, strlen(key));
            sb_add(b, ": ", 2);
            if (pretty_value(b, c, level + 1) < 0)
                return -1;
        }
        sb_add(b, "\n", 1); /* an empty map too: "{", a line, "}" */
        pretty_indent(b, level);
        sb_add(b, "}", 1);
        return 0;
    default:
        sb_puts(b, "null");
        return 0;
    }
}

int object_json_pretty(const trellis_object *o, strbuf *b)
{
    size_t was = b->len;
    if (!o->root) {
        sb_puts(b, "null");
        return 0;
    }
    if (pretty_value(b, N(o->root), 0) == 0)
        return 0;
    b->len = was;
    if (b->s)
        b->s[was] = '\0';
    return -1;
}

const char *object_label(const trellis_object *o, const char *key)
{
    return value_string(value_get(o->labels, key));
}

const char *object_annotation(const trellis_object *o, const char *key)
{
    return value_string(value_get(o->annotations, key));
}

int object_being_deleted(const trellis_object *o)
{
    const trellis_value *v = object_get(o, "metadata.deletionTimestamp");
    return v && value_type(v) != TRELLIS_VALUE_NULL;
}

const trellis_value *object_get(const trellis_object *o, const char *path)
{
    if (!o)
        return NULL;
    return value_path(o->root, path);
}

const char *object_describe(const trellis_object *o, char *buf, size_t len)
{
    if (o->namespace_[0])
        snprintf(buf, len, "%s %s/%s", o->kind, o->namespace_, o->name);
    else
        snprintf(buf, len, "%s %s", o->kind, o->name);
    return buf;
}

char *ob_scratch(obuild *b, size_t need)
{
    if (b->cap_sbuf < need)
        grow(&b->sbuf, &b->cap_sbuf, need, 1);
    return b->sbuf;
}
