/*
 * fuzz_labelsel.c - labelsel.c, the LabelSelector `trellis drain` matches
 * disruption budgets with.
 *
 * The input is JSON: {"selector": ..., "labels": ...}. Whatever its shape,
 * labelsel_match answers 1, 0 or -1, and -1 only with a message. Properties
 * checked: the same answer a second time (no state), and the empty
 * selector matches nothing.
 */
#include "config.h"

#include "fuzz.h"
#include "labelsel.h"

#include <json-c/json.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    json_object *in = json_tokener_parse(text);
    json_object *sel = NULL, *labels = NULL;
    char err[256];

    if (in && json_object_is_type(in, json_type_object)) {
        json_object_object_get_ex(in, "selector", &sel);
        json_object_object_get_ex(in, "labels", &labels);
        err[0] = '\0';
        int r = labelsel_match(sel, labels, err, sizeof err);
        FUZZ_CHECK(r >= -1 && r <= 1, "answer %d", r);
        if (r < 0)
            FUZZ_CHECK(err[0] != '\0', "-1 without a message");
        FUZZ_CHECK(labelsel_match(sel, labels, err, sizeof err) == r, "a second answer differs");
        json_object *empty = json_object_new_object();
        FUZZ_CHECK(labelsel_match(empty, labels, err, sizeof err) == 0,
                   "the empty selector matched");
        json_object_put(empty);
    }
    json_object_put(in);
    free(text);
    return 0;
}
