/*
 * fuzz_json.c - object.c's strict JSON reader against json-c.
 *
 * ob_parse_json promises json-c's strict rules: whatever value it takes
 * from the front of a text, json-c in strict mode must take too, and the
 * two must build the same tree (it leaves anything unusual to json-c by
 * refusing). object_from_json, the fast reader with json-c behind it, must
 * agree with json-c alone on the whole text: both accept with the same
 * object, or both refuse.
 */
#include "config.h"

#include "fuzz.h"
#include "object.h"

/* The depth object_from_json gives json-c. */
#define DEPTH (JSON_TOKENER_DEFAULT_DEPTH * 4)

/* json-c in strict mode over text[0..len), as object_from_json runs it;
 * NULL when it refuses (also for a JSON null, which no caller needs). */
static json_object *json_c_parse(const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    json_tokener *tok = json_tokener_new_ex(DEPTH);

    if (!copy || !tok)
        abort();
    memcpy(copy, text, len);
    copy[len] = '\0';
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    /* the terminating NUL lets a top-level number end */
    json_object *j = json_tokener_parse_ex(tok, copy, (int)len + 1);
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(j);
        j = NULL;
    }
    json_tokener_free(tok);
    free(copy);
    return j;
}

/* An object around the built value v, so that object_build lays it out. */
static trellis_object *wrap_built(obuild *b, oref v)
{
    char err[256];
    size_t mark = ob_open(b), meta = ob_open(b);

    ob_member(b, meta, "name", 4, ob_string(b, "n", 1), 0);
    oref m = ob_close_map(b, meta);
    ob_member(b, mark, "apiVersion", 10, ob_string(b, "v1", 2), 0);
    ob_member(b, mark, "kind", 4, ob_string(b, "K", 1), 0);
    ob_member(b, mark, "metadata", 8, m, 0);
    ob_member(b, mark, "value", 5, v, 0);
    trellis_object *o = object_build(b, ob_close_map(b, mark), err, sizeof err);
    FUZZ_CHECK(o != NULL, "%s", err);
    return o;
}

/* The same around a json-c value; ownership of v transfers. */
static trellis_object *wrap_json(json_object *v)
{
    char err[256];
    json_object *root = json_object_new_object(), *meta = json_object_new_object();

    json_object_object_add(meta, "name", json_object_new_string("n"));
    json_object_object_add(root, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(root, "kind", json_object_new_string("K"));
    json_object_object_add(root, "metadata", meta);
    json_object_object_add(root, "value", v);
    trellis_object *o = object_new(root, err, sizeof err);
    FUZZ_CHECK(o != NULL, "%s", err);
    return o;
}

/* An escaped NUL (\u0000) in t[0..n): trellis refuses the document (a
 * string or key would be cut short), json-c takes it. */
static int has_nul(const char *t, size_t n)
{
    for (size_t i = 0; i + 6 <= n; i++) {
        if (t[i] != '\\')
            continue;
        if (memcmp(t + i + 1, "u0000", 5) == 0)
            return 1;
        i++;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    obuild *b = obuild_new();
    oref v = OB_NONE;

    /* the fast reader alone, from the first byte */
    size_t used = ob_parse_json(b, text, size, &v);
    FUZZ_CHECK(used <= size, "used %zu of %zu", used, size);
    if (used && !has_nul(text, used)) {
        json_object *j = json_c_parse(text, used);
        FUZZ_CHECK(j != NULL, "json-c refuses the %zu bytes the fast reader took", used);
        trellis_object *fast = wrap_built(b, v), *slow = wrap_json(j);
        FUZZ_CHECK(object_same_content(fast, slow), "the readers build different trees");
        object_unref(fast);
        object_unref(slow);
    }
    obuild_free(b);

    /* the whole text, as create_target reads it (up to a NUL) */
    char err[512] = "";
    size_t len = strlen(text);
    trellis_object *o = object_from_json(text, err, sizeof err);
    json_object *j = json_c_parse(text, len);
    trellis_object *ref = NULL;
    if (j && has_nul(text, len)) {
        FUZZ_CHECK(!o && strstr(err, "NUL"), "a NUL was taken: %s", o ? "ok" : err);
        json_object_put(j);
    } else if (j) {
        char err2[512] = "";
        ref = object_new(j, err2, sizeof err2);
        FUZZ_CHECK(!o == !ref, "object_from_json: %s; json-c: %s", o ? "ok" : err,
                   ref ? "ok" : err2);
    } else {
        /* json-c refuses, or the text is a bare null */
        FUZZ_CHECK(!o, "object_from_json takes what json-c refuses");
    }
    if (o && ref)
        FUZZ_CHECK(object_same_content(o, ref), "object_from_json and json-c differ");
    FUZZ_CHECK(o || err[0], "object_from_json failed without a message");
    object_unref(o);
    object_unref(ref);
    free(text);
    return 0;
}
