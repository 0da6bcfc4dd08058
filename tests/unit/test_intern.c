/*
 * test_intern.c - the plugins' string interning and compiled label
 * selectors: ids are stable and distinct, label sets read through the host
 * table keep only scalar labels, and matching over ids gives exactly what
 * the string matching of common/selector.c gives (hand-picked cases and a
 * seeded random comparison). The plugin helpers are compiled into this test
 * directly (they are not part of the core library); a small fake value tree
 * stands in for the host's objects.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/common/intern.c"
#include "../../plugins/common/selector.c"
#include "../../plugins/common/values.c"

/* ---- a fake host: just the value functions label_set_read uses --------- */

struct trellis_value {
    trellis_value_type type;
    const char *text;        /* scalars */
    const char *const *keys; /* maps */
    const struct trellis_value *members;
    size_t n;
};

static trellis_value_type fake_type(const trellis_value *v)
{
    return v ? v->type : TRELLIS_VALUE_NULL;
}

static const char *fake_string(const trellis_value *v)
{
    return v && v->type != TRELLIS_VALUE_NULL && v->type != TRELLIS_VALUE_LIST &&
                   v->type != TRELLIS_VALUE_MAP
               ? v->text
               : NULL;
}

static int fake_foreach(const trellis_value *map,
                        int (*cb)(const char *key, const trellis_value *v, void *ud), void *ud)
{
    for (size_t i = 0; map && map->type == TRELLIS_VALUE_MAP && i < map->n; i++) {
        int rc = cb(map->keys[i], &map->members[i], ud);

        if (rc)
            return rc;
    }
    return 0;
}

static trellis_host fake_host(void)
{
    trellis_host h;

    memset(&h, 0, sizeof h);
    h.size = sizeof h;
    h.value_type = fake_type;
    h.value_string = fake_string;
    h.value_foreach = fake_foreach;
    return h;
}

/* ---- interning --------------------------------------------------------- */

START_TEST(intern_ids)
{
    intern t;
    char buf[32];

    intern_init(&t);
    ck_assert_int_eq(intern_find(&t, "aws"), -1);
    ck_assert_int_eq(intern_id(&t, "aws"), 0);
    ck_assert_int_eq(intern_id(&t, "gcp"), 1);
    ck_assert_int_eq(intern_id(&t, "aws"), 0);
    ck_assert_int_eq(intern_id(&t, ""), 2);
    ck_assert_int_eq(intern_id_n(&t, "gcp-extra", 3), 1);
    ck_assert_int_eq(intern_id_n(&t, "awsome", 3), 0);
    ck_assert_int_eq(intern_find(&t, "gcp"), 1);
    ck_assert_int_eq(intern_find(&t, "gc"), -1);
    ck_assert_str_eq(intern_str(&t, 1), "gcp");
    ck_assert_ptr_null(intern_str(&t, 3));
    ck_assert_ptr_null(intern_str(&t, -1));
    ck_assert_uint_eq(intern_count(&t), 3);
    /* many strings: the hash grows and every id stays what it was */
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "region-%d", i);
        ck_assert_int_eq(intern_id(&t, buf), 3 + i);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "region-%d", i);
        ck_assert_int_eq(intern_find(&t, buf), 3 + i);
        ck_assert_str_eq(intern_str(&t, 3 + i), buf);
    }
    ck_assert_int_eq(intern_find(&t, "aws"), 0);
    intern_free(&t);
    ck_assert_uint_eq(intern_count(&t), 0);
    ck_assert_int_eq(intern_find(&t, "aws"), -1);
    /* a freed table is an empty one and can be used again */
    ck_assert_int_eq(intern_id(&t, "azure"), 0);
    intern_free(&t);
}
END_TEST

/* ---- label sets -------------------------------------------------------- */

START_TEST(label_set_reading)
{
    static const char *const keys[] = {"zone", "ssd", "gone", "list", "env"};
    static const trellis_value members[] = {
        {TRELLIS_VALUE_STRING, "a", NULL, NULL, 0},    {TRELLIS_VALUE_BOOL, "true", NULL, NULL, 0},
        {TRELLIS_VALUE_NULL, NULL, NULL, NULL, 0},     {TRELLIS_VALUE_LIST, NULL, NULL, NULL, 0},
        {TRELLIS_VALUE_STRING, "prod", NULL, NULL, 0},
    };
    static const trellis_value labels = {TRELLIS_VALUE_MAP, NULL, keys, members, 5};
    static const trellis_value scalar = {TRELLIS_VALUE_STRING, "x", NULL, NULL, 0};
    trellis_host h = fake_host();
    intern t;
    label_set l;

    intern_init(&t);
    ck_assert_int_eq(label_set_read(&h, &labels, &t, &l), 0);
    /* null and list values are absent labels, as object_label has them */
    ck_assert_uint_eq(l.n, 3);
    ck_assert_int_eq(label_set_get(&l, intern_find(&t, "zone")), intern_find(&t, "a"));
    ck_assert_int_eq(label_set_get(&l, intern_find(&t, "ssd")), intern_find(&t, "true"));
    ck_assert_int_eq(label_set_get(&l, intern_find(&t, "env")), intern_find(&t, "prod"));
    ck_assert_int_eq(intern_find(&t, "gone"), -1);
    ck_assert_int_eq(label_set_get(&l, intern_id(&t, "gone")), -1);
    ck_assert_int_eq(label_set_get(&l, 12345), -1);
    label_set_clear(&l);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(label_set_read(&h, NULL, &t, &l), 0);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(label_set_read(&h, &scalar, &t, &l), 0);
    ck_assert_uint_eq(l.n, 0);
    intern_free(&t);
}
END_TEST

/* ---- selectors --------------------------------------------------------- */

/* A selector built by hand: reqs as (key, op, values...) */
static void add(selector *s, const char *key, selector_op op, size_t nvalues,
                const char *const *values)
{
    selector_req *r;

    s->reqs = realloc(s->reqs, (s->n + 1) * sizeof(*s->reqs));
    ck_assert_ptr_nonnull(s->reqs);
    r = &s->reqs[s->n++];
    r->key = values_strdup(key);
    r->op = op;
    r->nvalues = nvalues;
    r->values = nvalues ? calloc(nvalues, sizeof(char *)) : NULL;
    for (size_t i = 0; i < nvalues; i++)
        r->values[i] = values_strdup(values[i]);
}

/* Labels as parallel arrays, for the string matcher's lookup. */
typedef struct labels {
    const char *keys[8];
    const char *values[8];
    size_t n;
} labels;

static const char *lookup(const void *ud, const char *key)
{
    const labels *l = ud;

    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->keys[i], key) == 0)
            return l->values[i];
    }
    return NULL;
}

static void to_set(const labels *l, intern *t, label_set *out)
{
    const char *keys[8];
    trellis_value members[8];
    trellis_value map = {TRELLIS_VALUE_MAP, NULL, keys, members, l->n};
    trellis_host h = fake_host();

    for (size_t i = 0; i < l->n; i++) {
        keys[i] = l->keys[i];
        members[i] = (trellis_value){TRELLIS_VALUE_STRING, l->values[i], NULL, NULL, 0};
    }
    ck_assert_int_eq(label_set_read(&h, &map, t, out), 0);
}

static long ids_mismatch(const selector *s, const labels *l, intern *t)
{
    selector_ids ids;
    label_set set;
    long r;

    ck_assert_int_eq(selector_compile(s, t, &ids), 0);
    to_set(l, t, &set);
    r = selector_ids_first_mismatch(&ids, &set);
    selector_ids_clear(&ids);
    label_set_clear(&set);
    return r;
}

START_TEST(compiled_matches_cases)
{
    static const char *const ab[] = {"a", "b"};
    static const char *const prod[] = {"prod"};
    labels l = {{"zone", "env"}, {"b", "prod"}, 2};
    labels none = {{NULL}, {NULL}, 0};
    selector *sel = calloc(1, sizeof(*sel));
    intern t;

    ck_assert_ptr_nonnull(sel);
    intern_init(&t);
    /* the empty selector matches everything, NULL included */
    ck_assert_int_eq(ids_mismatch(NULL, &l, &t), -1);
    ck_assert_int_eq(ids_mismatch(sel, &none, &t), -1);

    add(sel, "env", SELECTOR_EQUALS, 1, prod);
    add(sel, "zone", SELECTOR_IN, 2, ab);
    add(sel, "gpu", SELECTOR_DOES_NOT_EXIST, 0, NULL);
    add(sel, "zone", SELECTOR_EXISTS, 0, NULL);
    ck_assert_int_eq(selector_first_mismatch(sel, lookup, &l), -1);
    ck_assert_int_eq(ids_mismatch(sel, &l, &t), -1);
    /* no labels: the first requirement fails */
    ck_assert_int_eq(selector_first_mismatch(sel, lookup, &none), 0);
    ck_assert_int_eq(ids_mismatch(sel, &none, &t), 0);
    /* a value no seed ever had, then a seed that has it */
    add(sel, "tier", SELECTOR_NOT_IN, 1, prod);
    add(sel, "tier", SELECTOR_EQUALS, 1, ab);
    ck_assert_int_eq(ids_mismatch(sel, &l, &t), 5);
    l.keys[2] = "tier";
    l.values[2] = "a";
    l.n = 3;
    ck_assert_int_eq(ids_mismatch(sel, &l, &t), -1);
    l.values[2] = "prod";
    ck_assert_int_eq(selector_first_mismatch(sel, lookup, &l), 4);
    ck_assert_int_eq(ids_mismatch(sel, &l, &t), 4);
    selector_free(sel);
    intern_free(&t);
}
END_TEST

/* A small deterministic generator (the test must not depend on rand()). */
static uint32_t next(uint64_t *state)
{
    *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)(*state >> 33);
}

START_TEST(compiled_matches_random)
{
    static const char *const keys[] = {"zone", "env", "tier", "gpu", "a.b/c"};
    static const char *const vals[] = {"a", "b", "c", "prod", "", "true"};
    uint64_t state = 42;
    intern t;

    intern_init(&t);
    for (int round = 0; round < 3000; round++) {
        selector *s = calloc(1, sizeof(*s));
        labels l = {{NULL}, {NULL}, 0};
        size_t nreq = next(&state) % 4;

        ck_assert_ptr_nonnull(s);
        for (size_t k = 0; k < 5; k++) {
            if (next(&state) % 2) {
                l.keys[l.n] = keys[k];
                l.values[l.n++] = vals[next(&state) % 6];
            }
        }
        for (size_t i = 0; i < nreq; i++) {
            selector_op op = (selector_op)(next(&state) % 5);
            const char *v[3];
            size_t nv = op == SELECTOR_EQUALS                        ? 1
                        : op == SELECTOR_IN || op == SELECTOR_NOT_IN ? 1 + next(&state) % 3
                                                                     : 0;

            for (size_t j = 0; j < nv; j++)
                v[j] = vals[next(&state) % 6];
            add(s, keys[next(&state) % 5], op, nv, v);
        }
        ck_assert_int_eq(ids_mismatch(s, &l, &t), selector_first_mismatch(s, lookup, &l));
        selector_free(s);
    }
    intern_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("intern");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, intern_ids);
    tcase_add_test(tc, label_set_reading);
    tcase_add_test(tc, compiled_matches_cases);
    tcase_add_test(tc, compiled_matches_random);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
