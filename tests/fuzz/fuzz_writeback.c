/*
 * fuzz_writeback.c - format-preserving edits (writeback_apply) checked
 * with the manifest reader.
 *
 * The input's first line chooses the edits, the rest is the manifest text:
 *   byte 0      bit 0: the text is JSON (else YAML); bits 1-2: 1 to 4 edits
 *   then 4 bytes per edit: which object (document and List item), which
 *               path (one of the object's own fields, or a new one), what
 *               to do (set a string, set a raw JSON value, remove), and
 *               which value (from the tables below)
 *   the rest    a string value of the input's choosing
 * The text is read with the manifest reader first; the edits address the
 * objects it found, and the same edits are applied to those objects' JSON
 * trees. When writeback_apply succeeds, its result must read as well as
 * the text did, with as many objects and errors, every edited object must equal
 * its edited JSON tree (an emptied map may read as null, as writeback.c
 * says), and every other object must be unchanged byte for byte. An edit
 * writeback_apply refuses is fine: it refuses rather than guess. The same
 * text also has one object cut with writeback_remove (check_remove).
 */
#include "config.h"

#include <math.h>

#include "fuzz.h"
#include "manifest.h"
#include "writeback.h"

#define MAX_EDITS 4
#define MAX_COMPS 6
#define MAX_PATHS 64
#define HEADER_MAX 64

/* Strings that are not what they look like in YAML or JSON. */
static const char *const strings[] = {
    "node-1",
    "",
    "true",
    "null",
    "~",
    "yes",
    "NO",
    "123",
    "-1.5e3",
    "0x1f",
    "0o17",
    ".inf",
    "- a",
    "a: b",
    "a #b",
    "#x",
    "'q'",
    "\"dq\"",
    "multi\nline",
    "tab\there",
    "trail ",
    " lead",
    "*alias",
    "&anchor",
    "!tag",
    "%x",
    "@x",
    "`x",
    "{a}",
    "[a]",
    "?",
    ":",
    "-",
    "---",
    "...",
    "back\\slash",
    "\xc3\xbc\xc3\xb1\xc3\xaf",
    "\xe2\x80\xa8",
    "\xef\xbb\xbf"
    "bom",
    "cr\rlf",
    "a\x7f"
    "b",
    "10.250.0.0/16",
    "kubernetes.io/hostname",
    "=",
    "{{x}}",
};

/* Raw edits: JSON texts that become the field's value. */
static const char *const raws[] = {
    "[]",
    "{}",
    "null",
    "true",
    "false",
    "0",
    "-12",
    "1.50",
    "1e3",
    "\"s\"",
    "\"a: b\"",
    "[{\"key\": \"a\", \"effect\": \"NoSchedule\"}]",
    "{\"a\": {\"b\": [1, 2, {\"c\": null}]}}",
    "\"\\u00e9\\n\\t\\\"\"",
    "[\"x\", {\"y\": []}, [[]]]",
    "{\"k.with.dots\": \"v\", \"\": 1}",
    "\"\\u2028\"",
    "[1, \"#\", \"- a\"]",
};

/* Fields an edit may add (besides the object's own). */
static const char *const fresh[][MAX_COMPS] = {
    {"spec", "nodeName"},
    {"status", "fuzz"},
    {"metadata", "labels", "fuzz"},
    {"metadata", "annotations", "example.com/a.b"},
    {"spec", "new", "deep", "key"},
    {"x"},
    {"spec", "a\"q\\b"},
};

typedef struct path {
    const char *comps[MAX_COMPS];
    size_t n;
} path;

typedef struct edit_plan {
    size_t obj;
    path p;
    wb_edit e;
    char text[512]; /* the path as writeback.h spells it */
} edit_plan;

/* Fields an edit must not touch: they decide what the document is. */
static int identity(const path *p)
{
    if (p->n == 0)
        return 1;
    if (strcmp(p->comps[0], "apiVersion") == 0 || strcmp(p->comps[0], "kind") == 0)
        return 1;
    if (strcmp(p->comps[0], "metadata") == 0 && (p->n == 1 || strcmp(p->comps[1], "name") == 0))
        return 1;
    return 0;
}

/* The fields of a json-c map, depth first, into paths[]. */
static void collect(json_object *m, path *cur, path *paths, size_t *n)
{
    json_object_object_foreach(m, key, child)
    {
        if (*n == MAX_PATHS || cur->n == MAX_COMPS)
            return;
        cur->comps[cur->n++] = key;
        int own = !identity(cur);
        if (own)
            paths[(*n)++] = *cur;
        /* metadata is off limits as a whole, its labels are not */
        if (json_object_is_type(child, json_type_object) &&
            (own || (cur->n == 1 && strcmp(key, "metadata") == 0)))
            collect(child, cur, paths, n);
        cur->n--;
    }
}

/* writeback.h's path syntax: plain keys joined by dots, ["..."] for a key
 * a dot or bracket would split. 0, or -1 when it does not fit. */
static int render_path(const path *p, char *buf, size_t len)
{
    size_t o = 0;

    for (size_t i = 0; i < p->n; i++) {
        const char *k = p->comps[i];
        int plain = *k && !strpbrk(k, ".[");

        if (o + 2 * strlen(k) + 8 >= len)
            return -1;
        if (plain) {
            if (i > 0)
                buf[o++] = '.';
            memcpy(buf + o, k, strlen(k));
            o += strlen(k);
            continue;
        }
        buf[o++] = '[';
        buf[o++] = '"';
        for (const char *c = k; *c; c++) {
            if (*c == '"' || *c == '\\')
                buf[o++] = '\\';
            buf[o++] = *c;
        }
        buf[o++] = '"';
        buf[o++] = ']';
    }
    buf[o] = '\0';
    return 0;
}

/* The edit applied to a JSON tree. 0, or -1 when writeback must refuse it
 * (a parent on the path is neither a map nor null). */
static int model_apply(json_object *root, const edit_plan *ep)
{
    json_object *m = root, *child;
    const path *p = &ep->p;

    for (size_t i = 0; i + 1 < p->n; i++) {
        const char *k = p->comps[i];

        if (!json_object_object_get_ex(m, k, &child) || !child) {
            if (!ep->e.value)
                return 0; /* nothing to remove */
            child = json_object_new_object();
            json_object_object_add(m, k, child);
        } else if (!json_object_is_type(child, json_type_object)) {
            return -1;
        }
        m = child;
    }
    const char *last = p->comps[p->n - 1];
    if (!ep->e.value) {
        json_object_object_del(m, last);
        return 0;
    }
    json_object *v;
    if (ep->e.raw) {
        v = json_tokener_parse(ep->e.value);
        FUZZ_CHECK(v || strcmp(ep->e.value, "null") == 0, "raw table: %s", ep->e.value);
    } else {
        v = json_object_new_string(ep->e.value);
    }
    json_object_object_add(m, last, v);
    return 0;
}

static int empty(json_object *j)
{
    return !j || (json_object_is_type(j, json_type_object) && json_object_object_length(j) == 0);
}

/* Equal trees, where an empty map equals null (a YAML map emptied by a
 * removal reads as null) and members may come in any order. */
static int same(json_object *a, json_object *b)
{
    if (empty(a) || empty(b))
        return empty(a) && empty(b);
    json_type t = json_object_get_type(a);
    if (t != json_object_get_type(b))
        return 0;
    switch (t) {
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return 0;
        json_object_object_foreach(a, key, av)
        {
            json_object *bv;
            if (!json_object_object_get_ex(b, key, &bv) || !same(av, bv))
                return 0;
        }
        return 1;
    }
    case json_type_array: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!same(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return 0;
        return 1;
    }
    case json_type_double: {
        double x = json_object_get_double(a), y = json_object_get_double(b);
        return x == y || (isnan(x) && isnan(y));
    }
    default:
        return json_object_equal(a, b);
    }
}

/* writeback_remove of one object the reader found (pick chooses it): when
 * it succeeds, the result reads with that object gone and every other one
 * unchanged; when it refuses, it says why and produces nothing. */
static void check_remove(const char *file, const char *text, size_t len, int json,
                         const manifest_set *before, unsigned pick)
{
    if (!before->n_objects || before->n_errors)
        return;
    for (size_t i = 0; i < before->n_objects; i++)
        for (size_t j = i + 1; j < before->n_objects; j++)
            if (strcmp(before->objects[i]->id, before->objects[j]->id) == 0)
                return; /* one object twice: the store refuses that file's second */
    const trellis_object *gone = before->objects[pick % before->n_objects];
    char *cut = NULL, err[512] = "";
    size_t cutlen = 0, left = 0;
    if (writeback_remove(text, len, json, gone->doc, gone->item, &cut, &cutlen, &left, err,
                         sizeof err) < 0) {
        FUZZ_CHECK(!cut && err[0], "a refused removal without a message, or with a text");
        return;
    }
    manifest_set after;
    manifest_set_init(&after);
    manifest_parse(file, cut, cutlen, &after);
    FUZZ_CHECK(after.n_objects == before->n_objects - 1 && after.n_errors == 0,
               "removing %s left %zu objects (%zu errors) of %zu", gone->id, after.n_objects,
               after.n_errors, before->n_objects);
    for (size_t i = 0; i < before->n_objects; i++) {
        const trellis_object *o = before->objects[i];
        int found = 0;
        for (size_t j = 0; j < after.n_objects && !found; j++)
            found = strcmp(after.objects[j]->id, o->id) == 0 &&
                    object_same_content(after.objects[j], o);
        FUZZ_CHECK(found == (o != gone), "%s %s after removing %s", o->id,
                   found ? "still there" : "changed or gone", gone->id);
    }
    manifest_set_free(&after);
    free(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t hdr[HEADER_MAX] = {0};
    size_t nh = 0;
    while (nh < size && nh < HEADER_MAX && data[nh] != '\n')
        nh++;
    memcpy(hdr, data, nh);
    if (nh == size || data[nh] != '\n')
        return 0; /* no header line */
    const uint8_t *body = data + nh + 1;
    size_t len = size - nh - 1;
    int json = hdr[0] & 1;
    size_t n = 1 + ((hdr[0] >> 1) & 3);
    char custom[HEADER_MAX + 1] = "";
    if (nh > 1 + 4 * n) {
        memcpy(custom, hdr + 1 + 4 * n, nh - 1 - 4 * n);
        custom[nh - 1 - 4 * n] = '\0';
    }
    const char *file = json ? "fuzz.json" : "fuzz.yaml";
    char *text = fuzz_text(body, len);
    char *out = NULL;
    size_t outlen = 0;

    manifest_set before;
    manifest_set_init(&before);
    int rc_before = manifest_parse(file, text, len, &before);
    check_remove(file, text, len, json, &before, hdr[1]);

    edit_plan plans[MAX_EDITS];
    json_object *trees[MAX_EDITS] = {NULL}; /* per edited object, the model */
    size_t objs[MAX_EDITS], nobjs = 0;
    json_object *full[MAX_EDITS] = {NULL}; /* owners of the comps' strings */
    memset(plans, 0, sizeof plans);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *c = hdr + 1 + 4 * i;
        edit_plan *ep = &plans[i];
        path paths[MAX_PATHS], cur = {{0}, 0};
        size_t np = 0;

        ep->e.item = -1;
        if (before.n_objects == 0) {
            /* nothing to model: only that nothing breaks */
            ep->e.doc = c[0] % 4;
            ep->p.comps[0] = "spec";
            ep->p.comps[1] = "nodeName";
            ep->p.n = 2;
        } else {
            ep->obj = c[0] % before.n_objects;
            const trellis_object *o = before.objects[ep->obj];
            ep->e.doc = o->doc;
            ep->e.item = o->item;
            full[i] = object_to_json(o);
            collect(full[i], &cur, paths, &np);
            size_t nf = sizeof fresh / sizeof *fresh;
            size_t k = c[1] % (np + nf);
            if (k < np) {
                ep->p = paths[k];
            } else {
                for (ep->p.n = 0; ep->p.n < MAX_COMPS && fresh[k - np][ep->p.n]; ep->p.n++)
                    ep->p.comps[ep->p.n] = fresh[k - np][ep->p.n];
            }
        }
        if (render_path(&ep->p, ep->text, sizeof ep->text) < 0)
            goto out;
        ep->e.path = ep->text;
        switch (c[2] % 4) {
        case 0:
            ep->e.value = strings[c[3] % (sizeof strings / sizeof *strings)];
            break;
        case 1:
            ep->e.value = custom;
            break;
        case 2:
            ep->e.value = NULL;
            break;
        default:
            ep->e.value = raws[c[3] % (sizeof raws / sizeof *raws)];
            /* a namespace or uid that is not a string makes no object */
            ep->e.raw =
                !(ep->p.n == 2 && strcmp(ep->p.comps[0], "metadata") == 0 &&
                  (strcmp(ep->p.comps[1], "namespace") == 0 || strcmp(ep->p.comps[1], "uid") == 0));
            break;
        }
    }

    wb_edit edits[MAX_EDITS];
    for (size_t i = 0; i < n; i++)
        edits[i] = plans[i].e;
    char err[1024] = "";
    int rc = writeback_apply(text, len, json, edits, n, &out, &outlen, err, sizeof err);
    if (rc < 0) {
        FUZZ_CHECK(!out && err[0], "a refusal without a message, or with a text");
        goto out;
    }
    FUZZ_CHECK(out && out[outlen] == '\0', "no text");
    if (before.n_objects == 0)
        goto out;

    /* the model: each edited object's tree with its edits, in order */
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nobjs && objs[j] != plans[i].obj)
            j++;
        if (j == nobjs) {
            objs[nobjs] = plans[i].obj;
            trees[nobjs++] = object_to_json(before.objects[plans[i].obj]);
        }
        FUZZ_CHECK(model_apply(trees[j], &plans[i]) == 0,
                   "edit %zu (%s) succeeded through a parent that is not a map", i, plans[i].text);
    }

    manifest_set after;
    manifest_set_init(&after);
    FUZZ_CHECK(manifest_parse(file, out, outlen, &after) == rc_before,
               "the result reads differently from the text");
    FUZZ_CHECK(after.n_objects == before.n_objects && after.n_errors == before.n_errors,
               "%zu objects and %zu errors, before %zu and %zu", after.n_objects, after.n_errors,
               before.n_objects, before.n_errors);
    for (size_t i = 0; i < after.n_objects; i++) {
        const trellis_object *a = before.objects[i], *b = after.objects[i];
        size_t j = 0;

        FUZZ_CHECK(a->doc == b->doc && a->item == b->item, "object %zu moved", i);
        while (j < nobjs && objs[j] != i)
            j++;
        if (j == nobjs) {
            FUZZ_CHECK(object_same_content(a, b), "object %zu (%s) changed without an edit", i,
                       a->id);
            continue;
        }
        json_object *got = object_to_json(b);
        FUZZ_CHECK(same(got, trees[j]), "object %zu: got %s, want %s", i,
                   json_object_to_json_string(got), json_object_to_json_string(trees[j]));
        json_object_put(got);
    }
    manifest_set_free(&after);
out:
    for (size_t i = 0; i < MAX_EDITS; i++) {
        json_object_put(trees[i]);
        json_object_put(full[i]);
    }
    free(out);
    manifest_set_free(&before);
    free(text);
    return 0;
}
