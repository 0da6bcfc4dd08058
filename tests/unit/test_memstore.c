/*
 * test_memstore.c - the store interface's second implementation
 * (tests/memstore): version preconditions, list edits resolved against
 * concurrent changes, failures reported by object, changes dispatched in
 * order; and the scheduler on it, binder included, without a file, one-shot
 * and as `trellis run` turns.
 */
#include "config.h"

#include <check.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "changes.h"
#include "clock.h"
#include "memstore.h"
#include "ownwrites.h"
#include "scheduler.h"
#include "testutil.h"

#define NODE(name, cpu)                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"},"               \
    "\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}"
#define POD(name, cpu)                                                                             \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\","                 \
    "\"namespace\":\"shop\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"             \
    "{\"requests\":{\"cpu\":\"" cpu "\"}}}]}}"

static void put(store *st, const char *json)
{
    trellis_object *o = tu_obj(json);
    memstore_put(st, o);
    object_unref(o);
}

typedef struct seen {
    int added, modified, deleted;
    char failed[256];
} seen;

static void on_change(void *ud, store_event_type t, trellis_object *old_obj,
                      trellis_object *new_obj)
{
    seen *s = ud;
    (void)old_obj;
    (void)new_obj;
    s->added += t == STORE_ADDED;
    s->modified += t == STORE_MODIFIED;
    s->deleted += t == STORE_DELETED;
}

static void on_failed(void *ud, const char *id, const char *message)
{
    seen *s = ud;
    snprintf(s->failed, sizeof s->failed, "%s: %s", id, message);
}

START_TEST(versions_lists_failures_events)
{
    store *st = memstore_new();
    char err[512];
    seen sn = {0};
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":{\"name\":\"c1\","
            "\"namespace\":\"a\",\"finalizers\":[\"keep.io/x\"]}}");
    ck_assert_uint_eq(st->ops->dispatch(st, on_change, &sn), 1);
    ck_assert_int_eq(sn.added, 1);
    trellis_object *read = memstore_get(st, "Cluster/a/c1");
    /* a list addition and a set, made against what was read */
    store_edit add = {"metadata.finalizers", "trellis.io/r1", STORE_LIST_ADD};
    ck_assert_int_eq(st->ops->patch(st, read, NULL, &add, 1, err, sizeof err), 0);
    /* another writer adds its own finalizer meanwhile */
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":{\"name\":\"c1\","
            "\"namespace\":\"a\",\"finalizers\":[\"keep.io/x\",\"other.io/z\"]}}");
    ck_assert_int_eq(st->ops->flush(st, on_failed, &sn, err, sizeof err), 0);
    trellis_object *now = memstore_get(st, "Cluster/a/c1");
    const trellis_value *f = object_get(now, "metadata.finalizers");
    ck_assert_uint_eq(value_len(f), 3); /* neither addition is lost */
    ck_assert_str_eq(value_string(value_at(f, 1)), "other.io/z");
    ck_assert_str_eq(value_string(value_at(f, 2)), "trellis.io/r1");
    /* a patch against the old version is refused at once */
    store_edit set = {"spec.note", "x", STORE_SET};
    ck_assert_int_eq(st->ops->patch(st, read, NULL, &set, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "changed since it was read"), "%s", err);
    /* a set whose object changes before the flush fails, by object */
    ck_assert_int_eq(st->ops->patch(st, now, NULL, &set, 1, err, sizeof err), 0);
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":{\"name\":\"c1\","
            "\"namespace\":\"a\"}}");
    ck_assert_int_eq(st->ops->flush(st, on_failed, &sn, err, sizeof err), -1);
    ck_assert_msg(strstr(sn.failed, "Cluster/a/c1: ") && strstr(sn.failed, "changed since"), "%s",
                  sn.failed);
    /* an injected failure; then a removal and a creation */
    object_unref(now);
    now = memstore_get(st, "Cluster/a/c1");
    memstore_fail_next(st, "Cluster/a/c1", "disk full");
    ck_assert_int_eq(st->ops->patch(st, now, NULL, &set, 1, err, sizeof err), 0);
    ck_assert_int_eq(st->ops->flush(st, on_failed, &sn, err, sizeof err), -1);
    ck_assert_msg(strstr(sn.failed, "disk full"), "%s", sn.failed);
    ck_assert_int_eq(st->ops->remove(st, now, err, sizeof err), 0);
    trellis_object *c2 = tu_obj("{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":"
                                "{\"name\":\"c2\",\"namespace\":\"a\"}}");
    ck_assert_int_eq(tu_created(st, c2, err, sizeof err), 0);
    ck_assert_int_eq(tu_created(st, c2, err, sizeof err), -1);
    ck_assert_int_eq(st->ops->flush(st, on_failed, &sn, err, sizeof err), 0);
    ck_assert_ptr_null(memstore_get(st, "Cluster/a/c1"));
    memset(&sn, 0, sizeof sn);
    st->ops->dispatch(st, on_change, &sn);
    ck_assert_int_eq(sn.deleted, 1);
    ck_assert_int_eq(sn.added, 1);
    ck_assert_int_eq(sn.modified, 3); /* the flush's write and two outside changes */
    object_unref(c2);
    object_unref(now);
    object_unref(read);
    st->ops->destroy(st);
}
END_TEST

static const char *plugin_dirs_env(char **dirs, size_t *n)
{
    static char copy[4096];
    *n = tu_plugin_dirs(dirs, copy, sizeof copy);
    return copy;
}

/* The config dir/t.cfg into c, and a scheduler of it with n workers. */
static sched *open_sched(const char *dir, cfg *c, int n)
{
    char p[128], err[1024];
    snprintf(p, sizeof p, "%s/t.cfg", dir);
    ck_assert_msg(config_load(p, c, err, sizeof err) == 0, "%s", err);
    char *dirs[8];
    size_t nd;
    plugin_dirs_env(dirs, &nd);
    sched *s = sched_open(c, dirs, nd, n, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

START_TEST(the_store_is_told_the_kinds)
{
    /* the workload and target kinds, the binding objects' kind, Event,
     * and what a plugin declared (fx-writes reads ConfigMaps) */
    char dir[64], err[1024];
    tu_mkdtemp(dir, "memkinds");
    tu_write(dir, "t.cfg",
             "profiles = ( { name = \"a\"; default = true; events = true;"
             " workload = { kind = \"ClusterRequest\"; }; target = { kind = \"Cluster\"; };"
             " binding = { field = \"spec.cluster\"; };"
             " plugins = ( { name = \"fx-writes\"; }, { name = \"default-binder\"; } ); },"
             " { name = \"b\"; workload = { kind = \"Placement\"; };"
             " target = { kind = \"Cluster\"; }; binding = { model = \"object\";"
             " object = { kind = \"Binding\"; workload_field = \"spec.placement\";"
             " target_field = \"spec.cluster\"; }; };"
             " plugins = ( { name = \"default-binder\"; } ); } );\n");
    cfg c;
    sched *s = open_sched(dir, &c, 1);
    store *st = memstore_new();
    ck_assert_msg(sched_load(s, st, err, sizeof err) == 0, "%s", err);
    const char *want[] = {"ClusterRequest", "Cluster", "Event",
                          "Placement",      "Binding", "ConfigMap"};
    for (size_t i = 0; i < 6; i++)
        ck_assert_str_eq(memstore_kind(st, i), want[i]);
    ck_assert_ptr_null(memstore_kind(st, 6));
    sched_close(s);
    st->ops->destroy(st);
    config_free(&c);
    tu_rmtree(dir);
}
END_TEST

START_TEST(scheduler_and_binder_on_a_memory_store)
{
    char dir[64], err[1024];
    tu_mkdtemp(dir, "memsched");
    tu_write(dir, "t.cfg",
             "profiles = ( { name = \"default-scheduler\"; default = true;"
             " workload = { kind = \"Pod\"; scheduler_name_field = \"spec.schedulerName\"; };"
             " target = { kind = \"Node\"; }; binding = { field = \"spec.nodeName\"; };"
             " plugins = ( { name = \"resources-fit\"; }, { name = \"least-allocated\"; },"
             " { name = \"default-binder\"; } ); } );\n");
    cfg c;
    sched *s = open_sched(dir, &c, 2);
    store *st = memstore_new();
    put(st, NODE("n1", "2"));
    put(st, NODE("n2", "4"));
    put(st, POD("web", "1"));
    put(st, POD("db", "1"));
    put(st, POD("huge", "8"));
    /* the binding of db cannot be written: its decision says so */
    memstore_fail_next(st, "Pod/shop/db", "the store refused db");
    ck_assert_msg(sched_load(s, st, err, sizeof err) == 0, "%s", err);
    /* the store was told what to list: the workload and target kinds */
    ck_assert_str_eq(memstore_kind(st, 0), "Pod");
    ck_assert_str_eq(memstore_kind(st, 1), "Node");
    ck_assert_ptr_null(memstore_kind(st, 2));
    ck_assert_int_eq(sched_run_once(s, err, sizeof err), -1); /* one write failed */
    trellis_object *web = memstore_get(st, "Pod/shop/web");
    const char *on = value_string(object_get(web, "spec.nodeName"));
    ck_assert_msg(on && (strcmp(on, "n1") == 0 || strcmp(on, "n2") == 0), "web on %s",
                  on ? on : "nothing");
    trellis_object *db = memstore_get(st, "Pod/shop/db");
    ck_assert_ptr_null(object_get(db, "spec.nodeName"));
    const decisions *ds = sched_decisions(s);
    int n_sched = 0, n_err = 0, n_unsched = 0;
    for (size_t i = 0; i < decisions_count(ds); i++) {
        const decision *d = decisions_at(ds, i);
        n_sched += d->result == DEC_SCHEDULED;
        n_unsched += d->result == DEC_UNSCHEDULABLE;
        if (d->result == DEC_ERROR) {
            n_err++;
            ck_assert_str_eq(d->w->name, "db");
            ck_assert_msg(strstr(d->message, "the store refused db"), "%s", d->message);
        }
    }
    ck_assert_int_eq(n_sched, 1);
    ck_assert_int_eq(n_err, 1);
    ck_assert_int_eq(n_unsched, 1); /* huge: 8 CPUs fit nowhere */
    ck_assert_uint_eq(memstore_writes(st), 1);
    object_unref(web);
    object_unref(db);
    sched_close(s);
    st->ops->destroy(st);
    config_free(&c);
    tu_rmtree(dir);
}
END_TEST

/* Fleet moving a placement: web holds member-a and wants one cluster;
 * its held member-a is put to the vote (fx-want's
 * fx.trellis.io/reconsider) and member-b ranks first (fx-raw-score reads
 * the label: 100 against 0). With refuse, the store refuses the release
 * of the binding on member-a. */
static void move_placement(int refuse)
{
    char dir[64], err[1024];
    tu_mkdtemp(dir, "memmove");
    tu_write(dir, "t.cfg",
             "profiles = ( { name = \"fleet\"; default = true;"
             " workload = { kind = \"ClusterResourcePlacement\"; };"
             " target = { kind = \"MemberCluster\"; };"
             " binding = { model = \"object\"; object = { kind = \"ClusterResourceBinding\";"
             " api_version = \"placement.kubernetes-fleet.io/v1beta1\";"
             " workload_field = \"metadata.labels[\\\"kubernetes-fleet.io/parent-CRP\\\"]\";"
             " target_field = \"spec.targetCluster\"; state_field = \"spec.state\";"
             " placed_states = [ \"Scheduled\", \"Bound\" ];"
             " initial_state = \"Scheduled\"; release_state = \"Unscheduled\"; }; };"
             " score_mode = \"tuple\";"
             " plugins = ( { name = \"fx-want\"; },"
             " { name = \"fx-raw-score\"; args = { label = \"fx.trellis.io/affinity\"; }; },"
             " { name = \"default-binder\"; } );"
             " } );\n");
    cfg c;
    sched *s = open_sched(dir, &c, 1);
    store *st = memstore_new();
#define MEMBER(name, score)                                                                        \
    "{\"apiVersion\":\"cluster.kubernetes-fleet.io/v1beta1\",\"kind\":\"MemberCluster\","          \
    "\"metadata\":{\"name\":\"" name "\",\"labels\":{\"fx.trellis.io/affinity\":\"" score "\"}}}"
    put(st, MEMBER("member-a", "0"));
    put(st, MEMBER("member-b", "100"));
#undef MEMBER
    put(st, "{\"apiVersion\":\"placement.kubernetes-fleet.io/v1beta1\",\"kind\":"
            "\"ClusterResourcePlacement\",\"metadata\":{\"name\":\"web\",\"annotations\":"
            "{\"fx.trellis.io/reconsider\":\"member-a\"}},\"spec\":{\"count\":1}}");
    put(st, "{\"apiVersion\":\"placement.kubernetes-fleet.io/v1beta1\",\"kind\":"
            "\"ClusterResourceBinding\",\"metadata\":{\"name\":\"web-member-a\",\"labels\":"
            "{\"kubernetes-fleet.io/parent-CRP\":\"web\"}},\"spec\":{\"targetCluster\":"
            "\"member-a\",\"state\":\"Bound\"}}");
    ck_assert_msg(sched_load(s, st, err, sizeof err) == 0, "%s", err);
    if (refuse)
        memstore_fail_next(st, "ClusterResourceBinding//web-member-a", "the store refused it");
    trellis_object *a;
    if (refuse) { /* the run says so; the binding stays as it was */
        ck_assert_int_eq(sched_run_once(s, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "releases: ") && strstr(err, "the store refused it"), "%s", err);
        ck_assert_str_eq(memstore_log(st), "create ClusterResourceBinding//web-member-b; | | ");
        a = memstore_get(st, "ClusterResourceBinding//web-member-a");
        ck_assert_str_eq(value_string(object_get(a, "spec.state")), "Bound");
    } else { /* in a later flush than the creation, so that no reader of
              * the store sees web placed nowhere in between */
        ck_assert_msg(sched_run_once(s, err, sizeof err) == 0, "%s", err);
        ck_assert_str_eq(memstore_log(st), "create ClusterResourceBinding//web-member-b; | "
                                           "patch ClusterResourceBinding//web-member-a; | ");
        a = memstore_get(st, "ClusterResourceBinding//web-member-a");
        ck_assert_str_eq(value_string(object_get(a, "spec.state")), "Unscheduled");
    }
    object_unref(a);
    const decisions *ds = sched_decisions(s);
    ck_assert_uint_eq(decisions_count(ds), 1);
    const decision *d = decisions_at(ds, 0);
    ck_assert_int_eq(d->result, DEC_SCHEDULED);
    ck_assert_uint_eq(d->n_targets, 1);
    ck_assert_str_eq(d->targets[0], "member-b");
    sched_close(s);
    st->ops->destroy(st);
    config_free(&c);
    tu_rmtree(dir);
}

START_TEST(a_release_lands_after_its_replacement)
{
    move_placement(0);
    move_placement(1);
}
END_TEST

/* One turn of `trellis run` (run.c's turn) on st. */
static void run_turn(sched *s, store *st)
{
    struct pollfd none;
    poll(&none, 0, 1);
    sched_set_now(s, clock_mono_ms());
    sched_collect(s);
    if (st->ops->dispatch(st, sched_on_change, s))
        sched_after_changes(s);
    sched_tick(s);
    while (sched_step(s))
        sched_set_now(s, clock_mono_ms());
}

/* A plugin's patch the store refuses: the host saw it at once (read your
 * writes), and sees the object again as the store has it once the flush
 * refused the patch. fx-writes (tests/plugins/fx_writes.c) marks the
 * ConfigMap board in r2's reserve and holds r1 back until board is
 * marked; the store refuses the mark, so r1, which comes later, waits.
 * (Before, the host kept believing board marked and placed r1.) */
START_TEST(a_refused_plugin_write_is_undone)
{
    char dir[64], err[1024];
    tu_mkdtemp(dir, "memrefused");
    tu_write(dir, "t.cfg",
             "profiles = ( { name = \"cluster-scheduler\"; default = true;"
             " workload = { kind = \"ClusterRequest\"; }; target = { kind = \"Cluster\"; };"
             " binding = { field = \"spec.cluster\"; };"
             " plugins = ( { name = \"fx-writes\"; }, { name = \"default-binder\"; } ); } );\n");
    cfg c;
    sched *s = open_sched(dir, &c, 1);
    store *st = memstore_new();
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"Cluster\",\"metadata\":{\"name\":\"c1\","
            "\"namespace\":\"team-a\"}}");
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"board\","
            "\"namespace\":\"team-a\"},\"data\":{\"owner\":\"platform\"}}");
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"r2\","
            "\"namespace\":\"team-a\",\"annotations\":{\"fx.trellis.io/mark\":\"board\"}},"
            "\"spec\":{}}");
    memstore_fail_next(st, "ConfigMap/team-a/board", "the store refused the mark");
    sched_set_long_running(s);
    ck_assert_int_ge(st->ops->watch(st, err, sizeof err), 0);
    ck_assert_msg(sched_load(s, st, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(sched_start(s, err, sizeof err) == 0, "%s", err);
    /* r2 placed and its flush done: the mark refused */
    trellis_object *r2 = NULL;
    for (int i = 0; i < 5000 && !(r2 && object_get(r2, "spec.cluster")); i++) {
        run_turn(s, st);
        if (r2)
            object_unref(r2);
        r2 = memstore_get(st, "ClusterRequest/team-a/r2");
    }
    ck_assert_str_eq(value_string(object_get(r2, "spec.cluster")), "team-a/c1");
    object_unref(r2);
    trellis_object *board = memstore_get(st, "ConfigMap/team-a/board");
    ck_assert_ptr_null(object_get(board, "data.marked"));
    object_unref(board);
    /* the host saw the mark at once; it sees board as the store has it
     * once the flush refused the mark (the binding thread's flush, then
     * a turn that collects it) */
    const trellis_object *held = NULL;
    for (int i = 0; i < 5000; i++) {
        held = sched_lookup(s, "ConfigMap", "team-a", "board");
        if (held && !object_get(held, "data.marked"))
            break;
        run_turn(s, st);
    }
    ck_assert_ptr_nonnull(held);
    ck_assert_ptr_null(object_get(held, "data.marked"));
    /* r1 needs the mark: it waits (a turn dispatches it and runs its
     * cycle; stopping finishes any binding it would have had) */
    put(st, "{\"apiVersion\":\"v1\",\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"r1\","
            "\"namespace\":\"team-a\",\"annotations\":{\"fx.trellis.io/needs-mark\":\"board\"}},"
            "\"spec\":{}}");
    for (int i = 0; i < 5000 && !sched_lookup(s, "ClusterRequest", "team-a", "r1"); i++)
        run_turn(s, st);
    ck_assert_ptr_nonnull(sched_lookup(s, "ClusterRequest", "team-a", "r1"));
    sched_stop(s);
    trellis_object *r1 = memstore_get(st, "ClusterRequest/team-a/r1");
    ck_assert_ptr_null(object_get(r1, "spec.cluster"));
    object_unref(r1);
    sched_close(s);
    st->ops->destroy(st);
    config_free(&c);
    tu_rmtree(dir);
}
END_TEST

/* The host the two tests below write through: a profile with a plugin
 * that writes (fx-writes) on a memory store holding ConfigMap
 * team-a/board (data.owner platform); *v1 the host's copy of it (a
 * reference). The engine's own calls follow, in the order trellis run
 * makes them. */
#define BOARD(data)                                                                                \
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"board\","              \
    "\"namespace\":\"team-a\"},\"data\":{" data "}}"
typedef struct board_host {
    char dir[64];
    cfg c;
    sched *s;
    store *st;
    trellis_object *v1;
} board_host;

static void board_open(board_host *b, const char *name)
{
    char err[1024];
    tu_mkdtemp(b->dir, name);
    tu_write(b->dir, "t.cfg",
             "profiles = ( { name = \"cluster-scheduler\"; default = true;"
             " workload = { kind = \"ClusterRequest\"; }; target = { kind = \"Cluster\"; };"
             " binding = { field = \"spec.cluster\"; };"
             " plugins = ( { name = \"fx-writes\"; }, { name = \"default-binder\"; } ); } );\n");
    b->s = open_sched(b->dir, &b->c, 1);
    b->st = memstore_new();
    put(b->st, BOARD("\"owner\":\"platform\""));
    ck_assert_msg(sched_load(b->s, b->st, err, sizeof err) == 0, "%s", err);
    b->v1 = (trellis_object *)sched_lookup(b->s, "ConfigMap", "team-a", "board");
    ck_assert_ptr_nonnull(b->v1);
    object_ref(b->v1);
}

static void board_close(board_host *b)
{
    object_unref(b->v1);
    sched_close(b->s);
    b->st->ops->destroy(b->st);
    config_free(&b->c);
    tu_rmtree(b->dir);
}

/* The undo of a refused write (ownwrites.c) applies only while the host
 * holds what the write made it see: when the watch brought another
 * change of the object meanwhile, the host keeps that one. */
static void undo_after(int watched)
{
    char err[1024];
    board_host b;
    board_open(&b, "memundo");
    sched *s = b.s;
    /* a plugin marks the board: the store queues it, the host sees it */
    trellis_object *marked = tu_obj(BOARD("\"owner\":\"platform\",\"marked\":\"r2\""));
    store_edit e = {"data.marked", "r2", STORE_SET};
    uint64_t gen = own_pending(s, OWN_PATCH, b.v1, marked);
    ck_assert_int_eq(b.st->ops->patch(b.st, b.v1, NULL, &e, 1, err, sizeof err), 0);
    own_pending_queued(s, gen, marked);
    own_note(s, marked, 0);
    changes_apply_own(s);
    ck_assert_ptr_eq(sched_lookup(s, "ConfigMap", "team-a", "board"), marked);
    trellis_object *v2 = tu_obj(BOARD("\"owner\":\"ops\""));
    if (watched) /* another writer's change, delivered before the flush ends */
        changes_apply(s, STORE_MODIFIED, marked, v2);
    /* the flush refuses the mark; its undo is applied at the next turn */
    memstore_fail_next(b.st, "ConfigMap/team-a/board", "refused");
    ck_assert_int_eq(own_flush(s, NULL, NULL, err, sizeof err), -1);
    changes_apply_own(s);
    const trellis_object *now = sched_lookup(s, "ConfigMap", "team-a", "board");
    ck_assert_ptr_nonnull(now);
    ck_assert_str_eq(value_string(object_get(now, "data.owner")), watched ? "ops" : "platform");
    ck_assert_ptr_null(object_get(now, "data.marked"));
    object_unref(v2);
    object_unref(marked);
    board_close(&b);
}

START_TEST(an_undo_yields_to_a_later_change)
{
    undo_after(0);
    undo_after(1);
}
END_TEST

/* A plugin's patch is seen at once, on the copy it was made on, which
 * keeps that copy's store version: when the store has delivered another
 * version of the object before the patch is applied (the write read
 * back, with its new version), the host keeps the store's. Taken over
 * it, the patched copy stayed the host's, with the old version, for good:
 * every later write of the object was made against it and refused. */
static void patched_after(int read_back)
{
    char err[1024];
    board_host b;
    board_open(&b, "mempatch");
    sched *s = b.s;
    trellis_object *marked = tu_obj(BOARD("\"owner\":\"platform\",\"marked\":\"r2\""));
    marked->version = b.v1->version; /* as edit_apply_object makes it */
    store_edit e = {"data.marked", "r2", STORE_SET};
    uint64_t gen = own_pending(s, OWN_PATCH, b.v1, marked);
    ck_assert_int_eq(b.st->ops->patch(b.st, b.v1, NULL, &e, 1, err, sizeof err), 0);
    own_pending_queued(s, gen, marked);
    own_note_patched(s, marked, b.v1);
    trellis_object *v2 =
        tu_obj(BOARD("\"owner\":\"platform\",\"marked\":\"r2\",\"resourceVersion\":\"9\""));
    v2->version = b.v1->version + 1;
    if (read_back) /* the write read back before the turn applies the patch */
        changes_apply(s, STORE_MODIFIED, b.v1, v2);
    changes_apply_own(s);
    ck_assert_ptr_eq(sched_lookup(s, "ConfigMap", "team-a", "board"), read_back ? v2 : marked);
    if (!read_back) { /* read back after: the store's version replaces it */
        changes_apply(s, STORE_MODIFIED, marked, v2);
        ck_assert_ptr_eq(sched_lookup(s, "ConfigMap", "team-a", "board"), v2);
    }
    ck_assert_int_eq(own_flush(s, NULL, NULL, err, sizeof err), 0);
    object_unref(v2);
    object_unref(marked);
    board_close(&b);
}
#undef BOARD

START_TEST(a_patch_yields_to_the_store_version)
{
    patched_after(0);
    patched_after(1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memstore");
    TCase *tc = tcase_create("store");
    tcase_add_test(tc, versions_lists_failures_events);
    tcase_add_test(tc, scheduler_and_binder_on_a_memory_store);
    tcase_add_test(tc, the_store_is_told_the_kinds);
    tcase_add_test(tc, a_release_lands_after_its_replacement);
    tcase_add_test(tc, a_refused_plugin_write_is_undone);
    tcase_add_test(tc, an_undo_yields_to_a_later_change);
    tcase_add_test(tc, a_patch_yields_to_the_store_version);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
