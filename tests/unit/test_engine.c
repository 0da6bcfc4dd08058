/*
 * test_engine.c - the scheduling engine's small concepts alone: how a
 * profile records a placement (binding.c), the decisions table
 * (decision.c) and the object index (index.c).
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "binding.h"
#include "decision.h"
#include "depends.h"
#include "index.h"
#include "testutil.h"

static cfg_profile profile_with(char **also, size_t n_also)
{
    cfg_profile pc;
    memset(&pc, 0, sizeof pc);
    pc.binding_field = "spec.seedName";
    pc.also_counts = also;
    pc.n_also_counts = n_also;
    return pc;
}

START_TEST(binding_field_model)
{
    char *also[] = {"status.seedName"};
    cfg_profile pc = profile_with(also, 1);
    trellis_object *pending = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":"
                                     "{\"name\":\"a\"},\"spec\":{\"seedName\":\"\"}}");
    trellis_object *moving =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":{\"name\":\"b\"},"
               "\"spec\":{\"seedName\":\"s2\"},\"status\":{\"seedName\":\"s1\"}}");
    trellis_object *settled =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":{\"name\":\"c\"},"
               "\"spec\":{\"seedName\":\"s1\"},\"status\":{\"seedName\":\"s1\"}}");
    const char *on[BINDING_MAX_COUNTED];
    char buf[BINDING_KEY_MAX];
    ck_assert_ptr_null(binding_target(&pc, pending, buf, sizeof buf)); /* empty is pending */
    ck_assert_uint_eq(binding_counted(&pc, pending, on, buf, sizeof buf), 0);
    ck_assert_str_eq(binding_target(&pc, moving, buf, sizeof buf), "s2");
    ck_assert_uint_eq(binding_counted(&pc, moving, on, buf, sizeof buf),
                      2); /* during a migration */
    ck_assert_str_eq(on[0], "s2");
    ck_assert_str_eq(on[1], "s1");
    ck_assert_uint_eq(binding_counted(&pc, settled, on, buf, sizeof buf), 1); /* no repeats */
    ck_assert(binding_is_on(&pc, moving, "s2"));
    ck_assert(!binding_is_on(&pc, moving, "s1"));    /* placed on s2 only */
    ck_assert(binding_counts_on(&pc, moving, "s1")); /* but counts on s1 too */
    store_edit e[2];
    ck_assert_uint_eq(binding_clear(&pc, e), 1);
    ck_assert_str_eq(e[0].path, "spec.seedName");
    ck_assert_ptr_null(e[0].value);
    ck_assert_ptr_null(binding_subresource(&pc));
    object_unref(pending);
    object_unref(moving);
    object_unref(settled);
}
END_TEST

START_TEST(binding_with_namespace_field)
{
    /* openMCP: status.cluster.name and .namespace, through status */
    cfg_profile pc = profile_with(NULL, 0);
    pc.binding_field = "status.cluster.name";
    pc.binding_namespace_field = "status.cluster.namespace";
    pc.binding_subresource = 1;
    trellis_object *req =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"r\","
               "\"namespace\":\"team\"},\"status\":{\"cluster\":{\"name\":\"onboarding\","
               "\"namespace\":\"team-a\"}}}");
    trellis_object *cl = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":"
                                "{\"name\":\"onboarding\",\"namespace\":\"team-b\"}}");
    char buf[BINDING_KEY_MAX];
    ck_assert_str_eq(binding_target(&pc, req, buf, sizeof buf), "team-a/onboarding");
    ck_assert(binding_is_on(&pc, req, "team-a/onboarding"));
    ck_assert(!binding_is_on(&pc, req, "team-b/onboarding")); /* same name, other namespace */
    ck_assert(!binding_is_on(&pc, req, "onboarding"));
    store_edit e[2];
    ck_assert_uint_eq(binding_edits(&pc, cl, e), 2);
    ck_assert_str_eq(e[0].path, "status.cluster.name");
    ck_assert_str_eq(e[0].value, "onboarding");
    ck_assert_str_eq(e[1].path, "status.cluster.namespace");
    ck_assert_str_eq(e[1].value, "team-b");
    ck_assert_uint_eq(binding_clear(&pc, e), 2);
    ck_assert_ptr_null(e[1].value);
    ck_assert_str_eq(binding_subresource(&pc), "status");
    pc.binding_namespace_field = NULL; /* one field: the key */
    ck_assert_uint_eq(binding_edits(&pc, cl, e), 1);
    ck_assert_str_eq(e[0].value, "team-b/onboarding");
    object_unref(req);
    object_unref(cl);
}
END_TEST

START_TEST(decisions_table)
{
    decisions *ds = decisions_new(1);
    trellis_object *b = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                               "{\"name\":\"b\",\"namespace\":\"x\"}}");
    trellis_object *a = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                               "{\"name\":\"a\",\"namespace\":\"x\"}}");
    decision *db = decisions_for(ds, b, NULL);
    decision *da = decisions_for(ds, a, NULL);
    ck_assert_ptr_eq(decisions_for(ds, b, NULL), db); /* one per workload */
    decision_set_result(db, DEC_SCHEDULED, NULL, "n1");
    ck_assert_uint_eq(db->n_targets, 1);
    ck_assert_str_eq(db->targets[0], "n1");
    decision_set_result(da, DEC_UNSCHEDULABLE, "no room", NULL);
    decision_add_evicted(da, b);
    ck_assert_uint_eq(da->n_evicted, 1);
    ck_assert_str_eq(da->evicted[0].name, "b");
    decisions_sort(ds);
    ck_assert_ptr_eq(decisions_at(ds, 0), da); /* by kind, namespace, name */
    ck_assert_ptr_eq(decisions_get(ds, a->id), da);
    trellis_status st = {TRELLIS_UNSCHEDULABLE, "TaintNoExecute", "gone"};
    decisions_add_eviction(ds, b, "n1", "taint-toleration", &st);
    ck_assert_uint_eq(decisions_eviction_count(ds), 1);
    ck_assert_str_eq(decisions_eviction_at(ds, 0)->code, "TaintNoExecute");
    object_unref(a);
    object_unref(b);
    decisions_free(ds); /* holds its own references */
}
END_TEST

START_TEST(depends_records_reads_while_preparing)
{
    depends *d = depends_new();
    trellis_object *shoot = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":"
                                   "{\"name\":\"web\",\"namespace\":\"garden-a\"}}");
    trellis_object *other = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":"
                                   "{\"name\":\"db\",\"namespace\":\"garden-a\"}}");
    trellis_object *cp = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"CloudProfile\","
                                "\"metadata\":{\"name\":\"aws\"}}");
    trellis_object *cm = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                                "\"metadata\":{\"name\":\"regions\",\"namespace\":\"garden\"}}");
    trellis_object *cm2 = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                                 "\"metadata\":{\"name\":\"x\",\"namespace\":\"elsewhere\"}}");
    char **ids;
    /* a read outside a prepare (a filter) is not recorded */
    depends_read(d, "CloudProfile", "", "aws");
    ck_assert_uint_eq(depends_on(d, cp, &ids), 0);
    free(ids);
    /* web reads the CloudProfile by name (twice: one record) and walks the
     * ConfigMaps of garden; db reads itself and every Shoot */
    depends_preparing(d, shoot);
    depends_read(d, "CloudProfile", "", "aws");
    depends_read(d, "CloudProfile", NULL, "aws");
    depends_read(d, "ConfigMap", "garden", NULL);
    depends_preparing(d, other);
    depends_read(d, "Shoot", "garden-a", "db");
    depends_read(d, "Shoot", NULL, NULL);
    depends_preparing(d, NULL);
    ck_assert_uint_eq(depends_on(d, cp, &ids), 1);
    ck_assert_str_eq(ids[0], "Shoot/garden-a/web");
    free(ids[0]);
    free(ids);
    ck_assert_uint_eq(depends_on(d, cm, &ids), 1);
    free(ids[0]);
    free(ids);
    ck_assert_uint_eq(depends_on(d, cm2, &ids), 0); /* another namespace */
    free(ids);
    /* a change of web concerns db (it walked every Shoot), never web itself */
    ck_assert_uint_eq(depends_on(d, shoot, &ids), 1);
    ck_assert_str_eq(ids[0], "Shoot/garden-a/db");
    free(ids[0]);
    free(ids);
    ck_assert_uint_eq(depends_on(d, other, &ids), 0);
    free(ids);
    depends_free(d);
    object_unref(shoot);
    object_unref(other);
    object_unref(cp);
    object_unref(cm);
    object_unref(cm2);
}
END_TEST

START_TEST(index_order_and_replacement)
{
    registry reg;
    registry_init(&reg);
    obj_index *ix = index_new(&reg, NULL, 0);
    trellis_object *a = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                               "{\"name\":\"a\"}}");
    trellis_object *b = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                               "{\"name\":\"b\"}}");
    trellis_object *a2 = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                                "{\"name\":\"a\",\"labels\":{\"x\":\"y\"}}}");
    index_set(ix, a);
    index_set(ix, b);
    index_set(ix, a2); /* replaces a, in its place */
    ck_assert_uint_eq(index_count(ix), 2);
    ck_assert_ptr_eq(index_at(ix, 0), a2);
    ck_assert_ptr_eq(index_lookup(ix, "Node", "", "a"), a2);
    index_del(ix, a2);
    ck_assert_uint_eq(index_count(ix), 1);
    ck_assert_ptr_eq(index_at(ix, 0), b);
    ck_assert_ptr_null(index_lookup(ix, "Node", "", "a"));
    object_unref(a);
    object_unref(b);
    object_unref(a2);
    index_free(ix);
    registry_free(&reg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, binding_field_model);
    tcase_add_test(tc, binding_with_namespace_field);
    tcase_add_test(tc, decisions_table);
    tcase_add_test(tc, index_order_and_replacement);
    tcase_add_test(tc, depends_records_reads_while_preparing);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
