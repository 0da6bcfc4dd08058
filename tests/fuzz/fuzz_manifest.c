/*
 * fuzz_manifest.c - the manifest reader (manifest_parse) over any text.
 *
 * Built twice: FUZZ_FILE names a .yaml file for the libyaml reader
 * (fuzz_manifest_yaml) and a .json file for the JSON reader, object.c's
 * fast reader with json-c as its fallback (fuzz_manifest_json). Besides
 * not crashing, leaking or hanging, the reader must be deterministic (the
 * same text read again gives the same objects: the builder and the
 * process-wide key table carry state between documents), keep documents
 * in order, and every object it returns must survive the trip through
 * JSON text that `trellis` output and the HTTP API take: printed by
 * json-c and read back by object_from_json, it is the same tree. A
 * field's line (fieldline.h) is looked up in the same text: a line of the
 * text, or 0.
 */
#include "config.h"

#include "fieldline.h"
#include "fuzz.h"
#include "manifest.h"

#ifndef FUZZ_FILE
#define FUZZ_FILE "fuzz.yaml"
#endif

/* Whether json-c printed a double that JSON has no number for. */
static int has_nonfinite(const char *text)
{
    return strstr(text, "NaN") || strstr(text, "Infinity");
}

static void check_json_trip(const trellis_object *o)
{
    char err[256] = "";
    json_object *j = object_to_json(o);
    const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    trellis_object *back = object_from_json(text, err, sizeof err);

    if (!back) {
        /* .inf and .nan read from YAML print as words JSON lacks */
        FUZZ_CHECK(has_nonfinite(text), "%s: %s", text, err);
    } else {
        FUZZ_CHECK(object_same_content(o, back), "%s", text);
        FUZZ_CHECK(strcmp(o->id, back->id) == 0, "%s vs %s", o->id, back->id);
        object_unref(back);
    }
    json_object_put(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    manifest_set a, b;

    manifest_set_init(&a);
    manifest_set_init(&b);
    int rc = manifest_parse(FUZZ_FILE, text, size, &a);
    FUZZ_CHECK(rc == 0 || a.n_errors > 0, "rc %d without an error", rc);

    int last_doc = -1;
    for (size_t i = 0; i < a.n_objects; i++) {
        const trellis_object *o = a.objects[i];

        FUZZ_CHECK(o->doc >= last_doc, "document %d after %d", o->doc, last_doc);
        last_doc = o->doc;
        FUZZ_CHECK(o->kind && o->name && o->id && o->key, "object %zu lacks its identity", i);
        FUZZ_CHECK(o->file && strcmp(o->file, FUZZ_FILE) == 0, "object %zu: file", i);
        check_json_trip(o);
    }
    for (size_t i = 0; i < a.n_errors; i++)
        FUZZ_CHECK(a.errors[i].message && a.errors[i].line >= 0, "error %zu", i);

    int rc2 = manifest_parse(FUZZ_FILE, text, size, &b);
    FUZZ_CHECK(rc2 == rc, "second read: rc %d, first %d", rc2, rc);
    FUZZ_CHECK(b.n_objects == a.n_objects && b.n_errors == a.n_errors,
               "second read: %zu objects %zu errors, first %zu and %zu", b.n_objects, b.n_errors,
               a.n_objects, a.n_errors);
    for (size_t i = 0; i < a.n_objects; i++) {
        FUZZ_CHECK(object_same_content(a.objects[i], b.objects[i]), "object %zu differs", i);
        FUZZ_CHECK(a.objects[i]->line == b.objects[i]->line, "object %zu: line", i);
    }
    for (size_t i = 0; i < a.n_errors; i++)
        FUZZ_CHECK(strcmp(a.errors[i].message, b.errors[i].message) == 0, "%s vs %s",
                   a.errors[i].message, b.errors[i].message);

    manifest_set_free(&a);
    manifest_set_free(&b);

    /* the same text as a plugin's document argument: one document of any
     * shape, or an error that says where */
    char err[512] = "";
    trellis_object *d = manifest_parse_document(FUZZ_FILE, text, size, err, sizeof err);
    FUZZ_CHECK(d || err[0], "manifest_parse_document failed without a message");
    /* a line of the text (libyaml breaks lines at \r, NEL, LS and PS
     * too: no more lines than bytes), or 0 */
    static const char *const keys[] = {"metadata", "name"};
    for (size_t depth = 0; depth <= 2; depth++) {
        long at = fieldline_in_text(text, size, keys, depth);
        FUZZ_CHECK(at >= 0 && at <= (long)size + 1, "line %ld of %zu bytes", at, size);
    }
    if (d) {
        FUZZ_CHECK(d->root && d->kind && !*d->kind && !*d->name, "a document has no identity");
        json_object *j = object_to_json(d);
        json_object_put(j);
        object_unref(d);
    }
    free(text);
    return 0;
}
