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
#include "writers.h"
#include "depends.h"
#include "index.h"
#include "memstore.h"
#include "placements.h"
#include "profile_impl.h"
#include "testutil.h"

static cfg_profile profile_with(char **also, size_t n_also)
{
    cfg_profile pc;
    memset(&pc, 0, sizeof pc);
    pc.workload_kind = "Shoot";
    pc.binding_field = "spec.seedName";
    pc.also_counts = also;
    pc.n_also_counts = n_also;
    return pc;
}

static profile profile_of(const cfg_profile *pc)
{
    profile p;
    memset(&p, 0, sizeof p);
    p.cfg = pc;
    if (pc->binding_model == BINDING_OBJECT)
        p.placed = placements_new(pc);
    return p;
}

typedef struct seen {
    const char *v[8];
    size_t n;
} seen;

static void see(void *ud, const char *target)
{
    seen *s = ud;
    if (s->n < 8)
        s->v[s->n++] = target;
}

static size_t counted(const profile *p, const trellis_object *w, seen *s)
{
    s->n = 0;
    binding_each_counted(p, w, see, s);
    return s->n;
}

/* The object of id in st now, as JSON text (static buffer). */
static const char *stored(store *st, const char *id)
{
    static char buf[2048];
    trellis_object *o = memstore_get(st, id);
    if (!o)
        return "(none)";
    json_object *j = object_to_json(o);
    snprintf(buf, sizeof buf, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    object_unref(o);
    return buf;
}

START_TEST(binding_field_model)
{
    char *also[] = {"status.seedName"};
    cfg_profile pc = profile_with(also, 1);
    profile p = profile_of(&pc);
    trellis_object *pending = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":"
                                     "{\"name\":\"a\"},\"spec\":{\"seedName\":\"\"}}");
    trellis_object *moving =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":{\"name\":\"b\"},"
               "\"spec\":{\"seedName\":\"s2\"},\"status\":{\"seedName\":\"s1\"}}");
    trellis_object *settled =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Shoot\",\"metadata\":{\"name\":\"c\"},"
               "\"spec\":{\"seedName\":\"s1\"},\"status\":{\"seedName\":\"s1\"}}");
    seen on;
    char buf[BINDING_KEY_MAX];
    ck_assert_ptr_null(binding_target(&p, pending, buf, sizeof buf)); /* empty is pending */
    ck_assert_uint_eq(counted(&p, pending, &on), 0);
    ck_assert_str_eq(binding_target(&p, moving, buf, sizeof buf), "s2");
    ck_assert_uint_eq(counted(&p, moving, &on), 2); /* during a migration */
    ck_assert_str_eq(on.v[0], "s2");
    ck_assert_str_eq(on.v[1], "s1");
    ck_assert_uint_eq(counted(&p, settled, &on), 1); /* no repeats */
    ck_assert(binding_is_on(&p, moving, "s2"));
    ck_assert(!binding_is_on(&p, moving, "s1"));    /* placed on s2 only */
    ck_assert(binding_counts_on(&p, moving, "s1")); /* but counts on s1 too */
    /* releasing clears the field and leaves the status alone */
    store *st = memstore_new();
    memstore_put(st, moving);
    char err[256];
    ck_assert_int_eq(binding_release(&p, st, moving, "s2", NULL, err, sizeof err), 0);
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(stored(st, moving->id), "\"spec\":{}"));
    ck_assert_ptr_nonnull(strstr(stored(st, moving->id), "\"status\":{\"seedName\":\"s1\"}"));
    st->ops->destroy(st);
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
    profile p = profile_of(&pc);
    trellis_object *req =
        tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"r\","
               "\"namespace\":\"team\"},\"status\":{\"cluster\":{\"name\":\"onboarding\","
               "\"namespace\":\"team-a\"}}}");
    trellis_object *cl = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":"
                                "{\"name\":\"onboarding\",\"namespace\":\"team-b\"}}");
    char buf[BINDING_KEY_MAX];
    ck_assert_str_eq(binding_target(&p, req, buf, sizeof buf), "team-a/onboarding");
    ck_assert(binding_is_on(&p, req, "team-a/onboarding"));
    ck_assert(!binding_is_on(&p, req, "team-b/onboarding")); /* same name, other namespace */
    ck_assert(!binding_is_on(&p, req, "onboarding"));
    store *st = memstore_new();
    memstore_put(st, req);
    binding_change ch;
    char err[256];
    ck_assert_int_eq(binding_record(&p, st, req, cl, NULL, 0, &ch, err, sizeof err), 0);
    ck_assert_ptr_null(ch.obj); /* a field, no object */
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(stored(st, req->id),
                                 "\"cluster\":{\"name\":\"onboarding\",\"namespace\":\"team-b\"}"));
    st->ops->destroy(st);
    object_unref(req);
    object_unref(cl);
}
END_TEST

START_TEST(binding_object_model)
{
    /* Fleet: one ClusterResourceBinding per (placement, cluster), naming
     * its placement in a label and its cluster in spec.targetCluster */
    char *placed[] = {"Scheduled", "Bound"};
    cfg_profile pc;
    memset(&pc, 0, sizeof pc);
    pc.workload_kind = "ClusterResourcePlacement";
    pc.binding_model = BINDING_OBJECT;
    pc.bobj_kind = "ClusterResourceBinding";
    pc.bobj_api_version = "placement.kubernetes-fleet.io/v1beta1";
    pc.bobj_workload_field = "metadata.labels[\"kubernetes-fleet.io/parent-CRP\"]";
    pc.bobj_target_field = "spec.targetCluster";
    pc.bobj_state_field = "spec.state";
    pc.bobj_placed_states = placed;
    pc.n_bobj_placed_states = 2;
    pc.bobj_initial_state = "Scheduled";
    pc.bobj_release_state = "Unscheduled";
    profile p = profile_of(&pc);
    trellis_object *crp = tu_obj("{\"apiVersion\":\"placement.kubernetes-fleet.io/v1beta1\","
                                 "\"kind\":\"ClusterResourcePlacement\",\"metadata\":{\"name\":"
                                 "\"web\"}}");
#define CRB(name, crp, cluster, state)                                                             \
    tu_obj("{\"apiVersion\":\"placement.kubernetes-fleet.io/v1beta1\",\"kind\":"                   \
           "\"ClusterResourceBinding\",\"metadata\":{\"name\":\"" name "\",\"labels\":{"           \
           "\"kubernetes-fleet.io/parent-CRP\":\"" crp                                             \
           "\"}},\"spec\":{\"targetCluster\":\"" cluster "\",\"state\":\"" state "\"}}")
    trellis_object *b1 = CRB("web-m1", "web", "m1", "Bound");
    trellis_object *b2 = CRB("web-m2", "web", "m2", "Unscheduled"); /* not placed */
    trellis_object *b3 = CRB("other-m3", "other", "m3", "Scheduled");
    char ids[2][PLACEMENTS_ID_MAX];
    ck_assert(placements_claims(p.placed, b1));
    ck_assert(!placements_claims(p.placed, crp));
    ck_assert_uint_eq(placements_update(p.placed, NULL, b1, ids), 1);
    ck_assert_str_eq(ids[0], "ClusterResourcePlacement//web");
    placements_update(p.placed, NULL, b2, ids);
    placements_update(p.placed, NULL, b3, ids);
    seen on;
    char buf[BINDING_KEY_MAX];
    ck_assert_uint_eq(counted(&p, crp, &on), 1);
    ck_assert_str_eq(on.v[0], "m1");
    ck_assert_str_eq(binding_target(&p, crp, buf, sizeof buf), "m1");
    ck_assert(!binding_is_on(&p, crp, "m2"));
    ck_assert(!binding_is_on(&p, crp, "m3"));
    /* b2 becomes Scheduled: the placement follows */
    trellis_object *b2s = CRB("web-m2", "web", "m2", "Scheduled");
    ck_assert_uint_eq(placements_update(p.placed, b2, b2s, ids), 1);
    ck_assert_uint_eq(counted(&p, crp, &on), 2);
    /* binding object names: namespaced targets of one name stay apart,
     * long names are cut and made unique */
    char n1[256], n2[256];
    ck_assert_str_eq(placements_object_name(crp, "team-a/onboarding", n1, sizeof n1),
                     "web-team-a-onboarding");
    ck_assert_str_eq(placements_object_name(crp, "team-b/onboarding", n2, sizeof n2),
                     "web-team-b-onboarding");
    char longa[300], longb[300];
    memset(longa, 'a', 250);
    longa[250] = '\0';
    snprintf(longb, sizeof longb, "%.249sb", longa);
    placements_object_name(crp, longa, n1, sizeof n1);
    placements_object_name(crp, longb, n2, sizeof n2);
    ck_assert_uint_eq(strlen(n1), 199);
    ck_assert_str_ne(n1, n2);
    /* a new binding object names its workload and target */
    store *st = memstore_new();
    memstore_put(st, crp);
    memstore_put(st, b1);
    trellis_object *m4 = tu_obj("{\"apiVersion\":\"cluster.kubernetes-fleet.io/v1beta1\","
                                "\"kind\":\"MemberCluster\",\"metadata\":{\"name\":\"m4\"}}");
    binding_change ch;
    char err[256];
    ck_assert_int_eq(binding_record(&p, st, crp, m4, NULL, 0, &ch, err, sizeof err), 0);
    trellis_object *created = ch.obj;
    ck_assert_ptr_nonnull(created);
    ck_assert(!ch.deleted);
    ck_assert_str_eq(created->name, "web-m4");
    ck_assert_str_eq(value_string(object_get(created, pc.bobj_workload_field)), "web");
    ck_assert_str_eq(value_string(object_get(created, "spec.targetCluster")), "m4");
    ck_assert_str_eq(value_string(object_get(created, "spec.state")), "Scheduled");
    /* releasing sets the release state; the host's view says so */
    ck_assert_int_eq(binding_release(&p, st, crp, "m1", &ch, err, sizeof err), 0);
    ck_assert_str_eq(value_string(object_get(ch.obj, "spec.state")), "Unscheduled");
    object_unref(ch.obj);
    ck_assert_int_eq(binding_release(&p, st, crp, "m9", NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no binding object for m9"));
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(stored(st, b1->id), "\"state\":\"Unscheduled\""));
    ck_assert_ptr_nonnull(strstr(stored(st, created->id), "\"targetCluster\":\"m4\""));
    /* without a release state, the binding object is deleted */
    pc.bobj_release_state = NULL;
    ck_assert_int_eq(binding_release(&p, st, crp, "m2", NULL, err, sizeof err), -1); /* not in st */
    memstore_put(st, b2s);
    ck_assert_int_eq(binding_release(&p, st, crp, "m2", &ch, err, sizeof err), 0);
    ck_assert(ch.deleted);
    ck_assert_str_eq(ch.obj->name, "web-m2");
    object_unref(ch.obj);
    ck_assert_int_eq(st->ops->flush(st, NULL, NULL, err, sizeof err), 0);
    ck_assert_str_eq(stored(st, b2s->id), "(none)");
    st->ops->destroy(st);
    placements_free(p.placed);
    object_unref(created);
    object_unref(m4);
    object_unref(b2s);
    object_unref(b1);
    object_unref(b2);
    object_unref(b3);
    object_unref(crp);
#undef CRB
}
END_TEST

/* An object of kind named ns/name (ns "": cluster-scoped). */
static trellis_object *named(const char *kind, const char *ns, const char *name)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"apiVersion\":\"v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"%s%s%s}}", kind,
             name, *ns ? ",\"namespace\":\"" : "", ns, *ns ? "\"" : "");
    return tu_obj(json);
}

START_TEST(decisions_table)
{
    decisions *ds = decisions_new(1);
    trellis_object *b = named("Pod", "x", "b");
    trellis_object *a = named("Pod", "x", "a");
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

/* The writers of a flush's objects: the first decision that created an
 * object, by its id; no binding object where no profile has them. */
START_TEST(writers_by_id)
{
    decisions *ds = decisions_new(1);
    trellis_object *a = named("Pod", "x", "a");
    trellis_object *b = named("Pod", "x", "b");
    trellis_object *n1 = named("Node", "", "n1");
    trellis_object *c = named("Cluster", "y", "c");
    decision *da = decisions_for(ds, a, NULL), *db = decisions_for(ds, b, NULL);
    decision_add_created(da, n1);
    decision_add_created(db, n1); /* the first one found is the one */
    decision_add_created(db, c);
    writers *w = writers_new(ds);
    ck_assert_ptr_eq(writers_creator(w, "Node//n1"), da);
    ck_assert_ptr_eq(writers_creator(w, "Cluster/y/c"), db);
    ck_assert_ptr_null(writers_creator(w, "Cluster/y/d"));
    ck_assert_ptr_null(writers_creator(w, "Cluster/y"));
    const char *target = NULL;
    int released = -1;
    ck_assert_ptr_null(writers_take_binding(w, "Pod/x/a", &target, &released));
    writers_free(w);
    object_unref(a);
    object_unref(b);
    object_unref(n1);
    object_unref(c);
    decisions_free(ds);
}
END_TEST

/* Notes: one said again is kept once; past DECISION_NOTES_MAX the last
 * entry says how many were not kept, and an attempt that joins its notes
 * to the last one's (explain's second pass) does not count them twice. */
START_TEST(decision_notes_capped_visibly)
{
    decisions *ds = decisions_new(1);
    trellis_object *a = named("Pod", "x", "a");
    decision *d = decisions_for(ds, a, NULL);
    char text[32];
    decision_add_note(d, "p", "same");
    decision_add_note(d, "p", "same");
    ck_assert_uint_eq(d->n_notes, 1);
    ck_assert_str_eq(d->notes[0], "p: same");
    for (int i = 1; i < DECISION_NOTES_MAX; i++) {
        snprintf(text, sizeof text, "n%d", i);
        decision_add_note(d, "p", text);
    }
    ck_assert_uint_eq(d->n_notes, DECISION_NOTES_MAX);
    decision_add_note(d, "p", "same"); /* kept already: not one more */
    ck_assert_uint_eq(d->n_notes, DECISION_NOTES_MAX);
    decision_add_note(d, "p", "x1");
    ck_assert_uint_eq(d->n_notes, DECISION_NOTES_MAX + 1);
    ck_assert_str_eq(d->notes[DECISION_NOTES_MAX],
                     "... and 1 more note (at most 64 are kept per decision)");
    for (int i = 2; i <= 100; i++) {
        snprintf(text, sizeof text, "x%d", i);
        decision_add_note(d, "p", text);
    }
    ck_assert_uint_eq(d->n_notes, DECISION_NOTES_MAX + 1);
    ck_assert_str_eq(d->notes[DECISION_NOTES_MAX],
                     "... and 100 more notes (at most 64 are kept per decision)");
    ck_assert_str_eq(d->notes[DECISION_NOTES_MAX - 1], "p: n63");
    /* the same notes again in a joined attempt: still 100 */
    decision_notes_again(d);
    for (int i = 1; i <= 100; i++) {
        snprintf(text, sizeof text, "x%d", i);
        decision_add_note(d, "p", text);
    }
    ck_assert_str_eq(d->notes[DECISION_NOTES_MAX],
                     "... and 100 more notes (at most 64 are kept per decision)");
    decision_add_note(d, "q", "one more");
    ck_assert_str_eq(d->notes[DECISION_NOTES_MAX],
                     "... and 101 more notes (at most 64 are kept per decision)");
    decision_clear_notes(d);
    ck_assert_uint_eq(d->n_notes, 0);
    decision_add_note(d, "p", "again");
    ck_assert_uint_eq(d->n_notes, 1);
    object_unref(a);
    decisions_free(ds);
}
END_TEST

/* The targets a run placed a workload on: each once, in the order first
 * noted, across batches small and large; an unrecorded one can come back. */
START_TEST(decision_added_each_once)
{
    decisions *ds = decisions_new(1);
    trellis_object *a = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"CRP\",\"metadata\":"
                               "{\"name\":\"a\"}}");
    decision *d = decisions_for(ds, a, NULL);
    const char *few[] = {"m2", "m1", "m2"};
    decision_add_added(d, few, 3);
    ck_assert_uint_eq(d->n_added, 2);
    char names[40][8];
    const char *many[40];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i % 30); /* m0..m29, then m0..m9 again */
        many[i] = names[i];
    }
    decision_add_added(d, many, 40);
    ck_assert_uint_eq(d->n_added, 30);
    ck_assert_str_eq(d->added[0], "m2");
    ck_assert_str_eq(d->added[1], "m1");
    ck_assert_str_eq(d->added[2], "m0");
    ck_assert_str_eq(d->added[29], "m29");
    decision_unrecord(d, "m5", 0);
    ck_assert_uint_eq(d->n_added, 29);
    decision_add_added(d, many, 40);
    ck_assert_uint_eq(d->n_added, 30);
    ck_assert_str_eq(d->added[29], "m5");
    object_unref(a);
    decisions_free(ds);
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
    tcase_add_test(tc, binding_object_model);
    tcase_add_test(tc, binding_with_namespace_field);
    tcase_add_test(tc, decisions_table);
    tcase_add_test(tc, writers_by_id);
    tcase_add_test(tc, decision_notes_capped_visibly);
    tcase_add_test(tc, decision_added_each_once);
    tcase_add_test(tc, index_order_and_replacement);
    tcase_add_test(tc, depends_records_reads_while_preparing);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
