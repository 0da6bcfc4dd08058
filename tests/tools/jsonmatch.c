/*
 * jsonmatch.c - does an actual JSON document match an expected one?
 *
 * The scenario tests compare trellis's JSON output against expected.json
 * as a subset: every key of an expected object must be present and match
 * in the actual one (other keys are ignored), arrays must have the same
 * length and match element by element, scalars must be equal. Prints the
 * path of the first difference and exits 1; exits 0 on a match, 2 on
 * unreadable input.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

static int match(json_object *exp, json_object *act, char *path, size_t len)
{
    json_type te = json_object_get_type(exp), ta = json_object_get_type(act);
    if (te == json_type_object) {
        if (ta != json_type_object) {
            printf("%s: expected an object, got %s\n", path[0] ? path : "$",
                   json_object_to_json_string(act));
            return 0;
        }
        json_object_object_foreach(exp, key, val)
        {
            size_t l = strlen(path);
            snprintf(path + l, len - l, ".%s", key);
            json_object *a;
            if (!json_object_object_get_ex(act, key, &a)) {
                printf("%s: missing\n", path);
                return 0;
            }
            if (!match(val, a, path, len))
                return 0;
            path[l] = '\0';
        }
        return 1;
    }
    if (te == json_type_array) {
        if (ta != json_type_array) {
            printf("%s: expected an array, got %s\n", path, json_object_to_json_string(act));
            return 0;
        }
        size_t n = json_object_array_length(exp), m = json_object_array_length(act);
        if (n != m) {
            printf("%s: expected %zu elements, got %zu: %s\n", path, n, m,
                   json_object_to_json_string(act));
            return 0;
        }
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(path);
            snprintf(path + l, len - l, "[%zu]", i);
            if (!match(json_object_array_get_idx(exp, i), json_object_array_get_idx(act, i), path,
                       len))
                return 0;
            path[l] = '\0';
        }
        return 1;
    }
    if (te == json_type_int && (ta == json_type_int || ta == json_type_double)) {
        if (json_object_get_int64(exp) == json_object_get_int64(act))
            return 1;
    } else if (te == ta && te != json_type_double &&
               strcmp(json_object_to_json_string(exp), json_object_to_json_string(act)) == 0) {
        return 1;
    } else if (te == json_type_double && (ta == json_type_double || ta == json_type_int) &&
               json_object_get_double(exp) == json_object_get_double(act)) {
        return 1;
    } else if (te == json_type_null && ta == json_type_null) {
        return 1;
    }
    printf("%s: expected %s, got %s\n", path, json_object_to_json_string(exp),
           json_object_to_json_string(act));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: jsonmatch EXPECTED.json ACTUAL.json\n");
        return 2;
    }
    json_object *exp = json_object_from_file(argv[1]);
    if (!exp) {
        fprintf(stderr, "jsonmatch: %s: %s\n", argv[1], json_util_get_last_err());
        return 2;
    }
    json_object *act = json_object_from_file(argv[2]);
    if (!act) {
        fprintf(stderr, "jsonmatch: %s: %s\n", argv[2], json_util_get_last_err());
        json_object_put(exp);
        return 2;
    }
    char path[4096] = "";
    int ok = match(exp, act, path, sizeof path);
    json_object_put(exp);
    json_object_put(act);
    return ok ? 0 : 1;
}
