/*
 * test_hints.c - queueing hints (SDK 1.2): register_events and the
 * runtime's run_hint, with the in-tree plugins found through
 * TRELLIS_PLUGIN_PATH as `make check` sets it, on Node/Pod and Seed/Shoot
 * objects prepared by those plugins the way the host prepares them.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "hostapi.h"
#include "plugin.h"
#include "runtime.h"
#include "testutil.h"

#define MAX_OBJS 48

/* A registry of some in-tree plugins and the objects they prepared. */
typedef struct fixture {
    registry r;
    trellis_object *objs[MAX_OBJS];
    size_t n_objs;
} fixture;

static cfg_plugin entries[16];

static void fx_load(fixture *f, const char *const *names)
{
    char *dirs[8], buf[4096], err[1024] = "";
    size_t n_dirs = tu_plugin_dirs(dirs, buf, sizeof buf);

    instance_ctx ctx = {NULL, NULL, hostapi_table(), NULL, "t.cfg"};
    memset(f, 0, sizeof *f);
    registry_init(&f->r);
    for (size_t i = 0; names[i]; i++) {
        plugin_module *m;
        trellis_plugin *pl;
        cfg_plugin *pc = &entries[i];

        ck_assert_uint_lt(i, sizeof entries / sizeof *entries);
        memset(pc, 0, sizeof *pc);
        pc->name = pc->instance = (char *)names[i];
        pc->weight = 1;
        pc->points = PT_ALL;
        pc->line = 1;
        ck_assert_msg(registry_load(&f->r, names[i], NULL, dirs, n_dirs, &m, err, sizeof err) == 0,
                      "%s", err);
        ck_assert_msg(registry_instantiate(&f->r, m, pc, &ctx, &pl, err, sizeof err) == 0, "%s",
                      err);
    }
}

static trellis_plugin *fx_plugin(fixture *f, const char *name)
{
    for (size_t i = 0; i < f->r.n_inst; i++)
        if (strcmp(f->r.inst[i]->name, name) == 0)
            return f->r.inst[i];
    ck_abort_msg("plugin %s not loaded", name);
    return NULL;
}

enum { OTHER = -1, TARGET = 0, WORKLOAD = 1 };

/* An object from JSON, prepared by every plugin of the fixture as a
 * WORKLOAD or a TARGET (an OTHER object is prepared by none); a failed
 * prepare is flagged as the host flags it. */
static const trellis_object *fx_obj(fixture *f, int role, const char *json)
{
    trellis_object *o = tu_obj(json);

    ck_assert_uint_lt(f->n_objs, MAX_OBJS);
    o->aux = xcalloc((size_t)f->r.n_slots, sizeof *o->aux);
    o->naux = (size_t)f->r.n_slots;
    for (size_t i = 0; i < f->r.n_inst; i++) {
        trellis_plugin *pl = f->r.inst[i];
        trellis_prepare_fn fn = role == WORKLOAD ? pl->h.prepare_workload
                                : role == TARGET ? pl->h.prepare_target
                                                 : NULL;
        char err[512] = "";
        void *data = NULL;

        if (!fn || pl->slot < 0)
            continue;
        if (fn(pl, o, &data, err, sizeof err) != 0) {
            if (!o->failed)
                o->failed = xcalloc(o->naux, 1);
            o->failed[pl->slot] = 1;
            if (o->prepare_failed_slot < 0)
                o->prepare_failed_slot = pl->slot;
        }
        o->aux[pl->slot] = data;
    }
    f->objs[f->n_objs++] = o;
    return o;
}

static void fx_free(fixture *f)
{
    for (size_t k = 0; k < f->n_objs; k++) {
        trellis_object *o = f->objs[k];

        for (size_t i = 0; i < f->r.n_inst; i++) {
            trellis_plugin *pl = f->r.inst[i];

            if (pl->slot >= 0 && o->aux[pl->slot] && pl->h.release)
                pl->h.release(pl, o->aux[pl->slot]);
        }
        object_unref(o);
    }
    registry_free(&f->r);
}

/* Assert whether a change concerns `plugin` for workload w, in a test with
 * a fixture f; the message names the change. */
#define EXPECT(plugin, w, event, old_obj, new_obj, want)                                           \
    ck_assert_msg(                                                                                 \
        run_hint(fx_plugin(&f, plugin), w, TRELLIS_EV_##event, old_obj, new_obj) == (want),        \
        "%s: %s of %s, %s -> %s: expected %d", plugin, #event, #w, #old_obj, #new_obj, want)

/* ---- Node / Pod -------------------------------------------------------- */

static const char *const kube_plugins[] = {"taint-toleration", "label-selector", "resources-fit",
                                           "least-allocated",  "priority-sort",  NULL};

#define NODE(name, labels, taints, cpu)                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name                      \
    "\",\"labels\":{" labels "}},\"spec\":{\"taints\":[" taints "]},"                              \
    "\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"8Gi\",\"pods\":\"110\","        \
    "\"ephemeral-storage\":\"100Gi\"}}}"

#define POD(name, extra_spec, cpu)                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"default\"},\"spec\":{" extra_spec "\"containers\":[{\"name\":\"c\","       \
    "\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"" cpu                              \
    "\",\"memory\":\"1Gi\"}}}]}}"

#define GPU_TAINT "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}"
#define OTHER_TAINT "{\"key\":\"maintenance\",\"effect\":\"NoExecute\"}"
#define SOFT_TAINT "{\"key\":\"spot\",\"effect\":\"PreferNoSchedule\"}"

START_TEST(taint_toleration_hints)
{
    fixture f;
    fx_load(&f, kube_plugins);
    const trellis_object *pod = fx_obj(&f, WORKLOAD, POD("web", "", "500m"));
    const trellis_object *tolerant = fx_obj(
        &f, WORKLOAD,
        POD("gpu-job",
            "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"gpu\","
            "\"effect\":\"NoSchedule\"}],",
            "500m"));
    const trellis_object *tainted = fx_obj(&f, TARGET, NODE("n1", "", GPU_TAINT, "4"));
    const trellis_object *clean = fx_obj(&f, TARGET, NODE("n1", "", "", "4"));
    const trellis_object *retainted = fx_obj(&f, TARGET, NODE("n1", "", OTHER_TAINT, "4"));
    const trellis_object *soft = fx_obj(&f, TARGET, NODE("n1", "", GPU_TAINT "," SOFT_TAINT, "4"));
    const trellis_object *relabelled =
        fx_obj(&f, TARGET, NODE("n1", "\"zone\":\"b\"", GPU_TAINT, "4"));

    /* the taint goes away: the pod that did not tolerate it may fit */
    EXPECT("taint-toleration", pod, TARGET_UPDATE, tainted, clean, 1);
    /* one untolerated taint for another, a soft taint added, labels changed */
    EXPECT("taint-toleration", pod, TARGET_UPDATE, tainted, retainted, 0);
    EXPECT("taint-toleration", pod, TARGET_UPDATE, tainted, soft, 0);
    EXPECT("taint-toleration", pod, TARGET_UPDATE, tainted, relabelled, 0);
    /* a pod that tolerates the new taint, not the old one */
    EXPECT("taint-toleration", tolerant, TARGET_UPDATE, retainted, tainted, 1);
    /* a node appears: only one whose taints the pod tolerates */
    EXPECT("taint-toleration", pod, TARGET_ADD, NULL, clean, 1);
    EXPECT("taint-toleration", pod, TARGET_ADD, NULL, tainted, 0);
    EXPECT("taint-toleration", tolerant, TARGET_ADD, NULL, tainted, 1);
    /* events it did not register */
    EXPECT("taint-toleration", pod, TARGET_DELETE, clean, NULL, 0);
    EXPECT("taint-toleration", pod, WORKLOAD_GONE, tolerant, NULL, 0);
    EXPECT("taint-toleration", pod, OTHER, NULL, NULL, 0);
    /* the workload's own change always requeues it */
    EXPECT("taint-toleration", pod, WORKLOAD_UPDATE, pod, pod, 1);
    fx_free(&f);
}
END_TEST

START_TEST(label_selector_hints)
{
    fixture f;
    fx_load(&f, kube_plugins);
    const trellis_object *pod =
        fx_obj(&f, WORKLOAD, POD("db", "\"nodeSelector\":{\"disk\":\"ssd\"},", "500m"));
    const trellis_object *any = fx_obj(&f, WORKLOAD, POD("web", "", "500m"));
    const trellis_object *hdd_a =
        fx_obj(&f, TARGET, NODE("n1", "\"disk\":\"hdd\",\"zone\":\"a\"", "", "4"));
    const trellis_object *hdd_b =
        fx_obj(&f, TARGET, NODE("n1", "\"disk\":\"hdd\",\"zone\":\"b\"", "", "4"));
    const trellis_object *ssd_a =
        fx_obj(&f, TARGET, NODE("n1", "\"disk\":\"ssd\",\"zone\":\"a\"", "", "4"));
    const trellis_object *ssd_b =
        fx_obj(&f, TARGET, NODE("n1", "\"disk\":\"ssd\",\"zone\":\"b\"", "", "4"));

    /* an unrelated label changes: still no match */
    EXPECT("label-selector", pod, TARGET_UPDATE, hdd_a, hdd_b, 0);
    /* the label the selector wants appears */
    EXPECT("label-selector", pod, TARGET_UPDATE, hdd_a, ssd_a, 1);
    /* it matched before too: this plugin did not reject there */
    EXPECT("label-selector", pod, TARGET_UPDATE, ssd_a, ssd_b, 0);
    EXPECT("label-selector", pod, TARGET_ADD, NULL, ssd_b, 1);
    EXPECT("label-selector", pod, TARGET_ADD, NULL, hdd_b, 0);
    /* a pod without a selector is never rejected by it */
    EXPECT("label-selector", any, TARGET_UPDATE, hdd_a, ssd_a, 0);
    fx_free(&f);
}
END_TEST

START_TEST(resources_fit_hints)
{
    fixture f;
    fx_load(&f, kube_plugins);
    const trellis_object *pod = fx_obj(&f, WORKLOAD, POD("big", "", "2"));
    const trellis_object *bound = fx_obj(&f, WORKLOAD, POD("old", "\"nodeName\":\"n1\",", "1"));
    const trellis_object *n4 = fx_obj(&f, TARGET, NODE("n1", "", "", "4"));
    const trellis_object *n8 = fx_obj(&f, TARGET, NODE("n1", "", "", "8"));
    const trellis_object *n3 = fx_obj(&f, TARGET, NODE("n1", "", "", "3"));
    const trellis_object *n1 = fx_obj(&f, TARGET, NODE("n1", "", "", "1"));
    const trellis_object *n1_5 = fx_obj(&f, TARGET, NODE("n1", "", "", "1500m"));
    const trellis_object *n4_relabelled = fx_obj(&f, TARGET, NODE("n1", "\"zone\":\"a\"", "", "4"));
    const trellis_object *n4_disk = fx_obj(
        &f, TARGET,
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{"
        "\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\","
        "\"ephemeral-storage\":\"200Gi\"}}}");
    const trellis_object *n4_mem = fx_obj(
        &f, TARGET,
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{"
        "\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"}}}");

    /* more allocatable cpu may make room; less, or the same, does not */
    EXPECT("resources-fit", pod, TARGET_UPDATE, n4, n8, 1);
    EXPECT("resources-fit", pod, TARGET_UPDATE, n4, n3, 0);
    EXPECT("resources-fit", pod, TARGET_UPDATE, n4, n4_relabelled, 0);
    /* a resource the profile does not count, one the pod requests */
    EXPECT("resources-fit", pod, TARGET_UPDATE, n4, n4_disk, 0);
    EXPECT("resources-fit", pod, TARGET_UPDATE, n4, n4_mem, 1);
    /* grown from too small to big enough; grown, but still too small for
     * the request even when empty */
    EXPECT("resources-fit", pod, TARGET_UPDATE, n1, n3, 1);
    EXPECT("resources-fit", pod, TARGET_UPDATE, n1, n1_5, 0);
    /* a node appears: one that can hold the pod */
    EXPECT("resources-fit", pod, TARGET_ADD, NULL, n4, 1);
    EXPECT("resources-fit", pod, TARGET_ADD, NULL, n1, 0);
    /* a bound pod is deleted: its node has room */
    EXPECT("resources-fit", pod, WORKLOAD_GONE, bound, NULL, 1);
    fx_free(&f);
}
END_TEST

START_TEST(unregistered_plugins_always_concerned)
{
    fixture f;
    fx_load(&f, kube_plugins);
    const trellis_object *pod = fx_obj(&f, WORKLOAD, POD("web", "", "1"));
    const trellis_object *n = fx_obj(&f, TARGET, NODE("n1", "", "", "4"));
    static const unsigned events[] = {TRELLIS_EV_TARGET_ADD,      TRELLIS_EV_TARGET_UPDATE,
                                      TRELLIS_EV_TARGET_DELETE,   TRELLIS_EV_WORKLOAD_GONE,
                                      TRELLIS_EV_WORKLOAD_UPDATE, TRELLIS_EV_OTHER};

    ck_assert_int_eq(fx_plugin(&f, "least-allocated")->h.has_events, 0);
    ck_assert_int_eq(fx_plugin(&f, "priority-sort")->h.has_events, 0);
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        ck_assert_int_eq(run_hint(fx_plugin(&f, "least-allocated"), pod, events[i], n, n), 1);
        ck_assert_int_eq(run_hint(fx_plugin(&f, "priority-sort"), pod, events[i], NULL, n), 1);
    }
    fx_free(&f);
}
END_TEST

START_TEST(malformed_old_target_concerns)
{
    fixture f;
    fx_load(&f, kube_plugins);
    const trellis_object *pod = fx_obj(&f, WORKLOAD, POD("web", "", "1"));
    /* taints that are not a list: taint-toleration's prepare fails, so its
     * filter rejected the node whatever the pod tolerates */
    const trellis_object *broken =
        fx_obj(&f, TARGET,
               "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
               "\"spec\":{\"taints\":\"dedicated=gpu:NoSchedule\"},"
               "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
    const trellis_object *fixed = fx_obj(&f, TARGET, NODE("n1", "", GPU_TAINT, "4"));
    trellis_plugin *tt = fx_plugin(&f, "taint-toleration");

    ck_assert_ptr_nonnull(broken->failed);
    ck_assert_int_eq(broken->failed[tt->slot], 1);
    EXPECT("taint-toleration", pod, TARGET_UPDATE, broken, fixed, 1);
    /* the same change asked of the plugin's hint alone says no: the new
     * taint is not tolerated */
    ck_assert_int_eq(tt->h.hint(tt, pod, TRELLIS_EV_TARGET_UPDATE, broken, fixed),
                     TRELLIS_QUEUE_SKIP);
    fx_free(&f);
}
END_TEST

START_TEST(describe_shows_events)
{
    fixture f;
    fx_load(&f, kube_plugins);
    char buf[512];

    registry_hook_names(fx_plugin(&f, "taint-toleration"), buf, sizeof buf);
    ck_assert_msg(strstr(buf, ",events(target-add,target-update)") != NULL, "%s", buf);
    registry_hook_names(fx_plugin(&f, "resources-fit"), buf, sizeof buf);
    ck_assert_msg(strstr(buf, "events(target-add,target-update,workload-gone)") != NULL, "%s", buf);
    registry_hook_names(fx_plugin(&f, "least-allocated"), buf, sizeof buf);
    ck_assert_msg(strstr(buf, "events(") == NULL, "%s", buf);
    fx_free(&f);
}
END_TEST

/* ---- register_events --------------------------------------------------- */

static int hint_a(trellis_plugin *self, const trellis_object *w, unsigned event,
                  const trellis_object *old_obj, const trellis_object *new_obj)
{
    return TRELLIS_QUEUE_SKIP;
}

static int hint_b(trellis_plugin *self, const trellis_object *w, unsigned event,
                  const trellis_object *old_obj, const trellis_object *new_obj)
{
    return event == TRELLIS_EV_TARGET_DELETE ? TRELLIS_QUEUE : TRELLIS_QUEUE_SKIP;
}

START_TEST(register_events_rules)
{
    const trellis_host *h = hostapi_table();
    trellis_plugin pl;
    trellis_object *w = tu_obj(POD("web", "", "1"));
    char buf[256];

    ck_assert(TRELLIS_HOST_HAS(h, register_events));
    ck_assert_int_eq(h->sdk_minor, TRELLIS_SDK_MINOR);
    ck_assert_int_ge(TRELLIS_SDK_MINOR, 2);
    memset(&pl, 0, sizeof pl);
    pl.name = "hinted";
    pl.slot = -1;

    /* outside init */
    ck_assert_int_eq(h->register_events(&pl, TRELLIS_EV_TARGET_ADD, NULL), -1);
    ck_assert_int_eq(pl.h.has_events, 0);
    pl.in_init = 1;
    /* unknown bits, alone or with known ones */
    ck_assert_int_eq(h->register_events(&pl, 1u << 7, NULL), -1);
    ck_assert_int_eq(h->register_events(&pl, TRELLIS_EV_TARGET_ADD | (1u << 31), hint_a), -1);
    ck_assert_int_eq(pl.h.has_events, 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_ADD, NULL, w), 1);

    /* masks OR together, the last function wins */
    ck_assert_int_eq(h->register_events(&pl, TRELLIS_EV_TARGET_ADD, hint_a), 0);
    ck_assert_int_eq(h->register_events(&pl, TRELLIS_EV_TARGET_DELETE, hint_b), 0);
    pl.in_init = 0;
    ck_assert_uint_eq(pl.h.events, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_DELETE);
    ck_assert_ptr_eq((void *)pl.h.hint, (void *)hint_b);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_ADD, NULL, w), 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_DELETE, w, NULL), 1);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_UPDATE, w, w), 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_WORKLOAD_UPDATE, w, w), 1);
    /* not one known event: unsure */
    ck_assert_int_eq(run_hint(&pl, w, 0, NULL, NULL), 1);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_DELETE, w, w), 1);
    ck_assert_int_eq(run_hint(&pl, w, 1u << 7, NULL, NULL), 1);
    registry_hook_names(&pl, buf, sizeof buf);
    ck_assert_str_eq(buf, "events(target-add,target-delete)");

    /* no function: every registered event queues; an empty mask: none */
    pl.in_init = 1;
    ck_assert_int_eq(h->register_events(&pl, TRELLIS_EV_OTHER, NULL), 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_ADD, NULL, w), 1);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_WORKLOAD_GONE, w, NULL), 0);
    memset(&pl.h, 0, sizeof pl.h);
    ck_assert_int_eq(h->register_events(&pl, 0, NULL), 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_TARGET_ADD, NULL, w), 0);
    ck_assert_int_eq(run_hint(&pl, w, TRELLIS_EV_WORKLOAD_UPDATE, w, w), 1);
    registry_hook_names(&pl, buf, sizeof buf);
    ck_assert_str_eq(buf, "events(none)");
    object_unref(w);
}
END_TEST

/* ---- Seed / Shoot ------------------------------------------------------ */

static const char *const gardener_plugins[] = {"gardener-usable",
                                               "gardener-seed-selector",
                                               "gardener-dns",
                                               "gardener-region",
                                               "gardener-networks",
                                               "gardener-capacity",
                                               NULL};

/* A ready, visible seed with the given labels, taints, region, node
 * network and allocatable shoots. */
#define SEED(labels, taints, region, nodes, shoots, ready)                                         \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{"             \
    "\"name\":\"aws-eu1\",\"labels\":{" labels "}},\"spec\":{\"provider\":{\"type\":\"aws\","      \
    "\"region\":\"" region "\"},\"networks\":{\"nodes\":\"" nodes "\",\"pods\":\"100.96.0.0/11\"," \
    "\"services\":\"100.64.0.0/13\"},\"settings\":{\"scheduling\":{\"visible\":true}},"            \
    "\"taints\":[" taints "]},\"status\":{\"lastOperation\":{\"state\":\"Succeeded\"},"            \
    "\"conditions\":[{\"type\":\"GardenletReady\",\"status\":\"" ready "\"}],"                     \
    "\"allocatable\":{\"shoots\":\"" shoots "\"}}}"

#define SHOOT(name, extra_spec)                                                                    \
    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Shoot\",\"metadata\":{"            \
    "\"name\":\"" name "\",\"namespace\":\"garden-dev\"},\"spec\":{" extra_spec                    \
    "\"provider\":{\"type\":\"aws\"},\"region\":\"eu-west-1\",\"networking\":{"                    \
    "\"nodes\":\"10.250.0.0/16\"},\"dns\":{\"domain\":\"" name ".dev.example.com\"}}}"

#define DNS_TAINT "{\"key\":\"seed.gardener.cloud/disable-dns\"}"
#define EU "eu-west-1"
#define OWN_NET "10.1.0.0/16"
#define CLASH_NET "10.250.0.0/16"

START_TEST(gardener_hints)
{
    fixture f;
    fx_load(&f, gardener_plugins);
    const trellis_object *shoot = fx_obj(&f, WORKLOAD, SHOOT("api", ""));
    const trellis_object *picky = fx_obj(
        &f, WORKLOAD, SHOOT("picky", "\"seedSelector\":{\"matchLabels\":{\"env\":\"prod\"}},"));
    const trellis_object *gone = fx_obj(&f, WORKLOAD, SHOOT("old", "\"seedName\":\"aws-eu1\","));
    const trellis_object *base = fx_obj(&f, TARGET, SEED("", "", EU, OWN_NET, "2", "True"));
    const trellis_object *relabelled =
        fx_obj(&f, TARGET, SEED("\"tier\":\"x\"", "", EU, OWN_NET, "2", "True"));
    const trellis_object *prod =
        fx_obj(&f, TARGET, SEED("\"env\":\"prod\"", "", EU, OWN_NET, "2", "True"));
    const trellis_object *not_ready = fx_obj(&f, TARGET, SEED("", "", EU, OWN_NET, "2", "False"));
    const trellis_object *us = fx_obj(&f, TARGET, SEED("", "", "us-east-1", OWN_NET, "2", "True"));
    const trellis_object *clash = fx_obj(&f, TARGET, SEED("", "", EU, CLASH_NET, "2", "True"));
    const trellis_object *no_dns =
        fx_obj(&f, TARGET, SEED("", DNS_TAINT, EU, OWN_NET, "2", "True"));
    const trellis_object *more = fx_obj(&f, TARGET, SEED("", "", EU, OWN_NET, "3", "True"));
    const trellis_object *less = fx_obj(&f, TARGET, SEED("", "", EU, OWN_NET, "1", "True"));
    const trellis_object *full = fx_obj(&f, TARGET, SEED("", "", EU, OWN_NET, "0", "True"));
    const trellis_object *cm =
        fx_obj(&f, OTHER,
               "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"regions\","
               "\"namespace\":\"garden\"},\"data\":{}}");
    const trellis_object *cp =
        fx_obj(&f, OTHER,
               "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"CloudProfile\","
               "\"metadata\":{\"name\":\"aws\"},\"spec\":{}}");

    /* gardener-usable: the seed turns ready */
    EXPECT("gardener-usable", shoot, TARGET_UPDATE, not_ready, base, 1);
    EXPECT("gardener-usable", shoot, TARGET_UPDATE, base, relabelled, 0);
    EXPECT("gardener-usable", shoot, TARGET_UPDATE, base, not_ready, 0);
    EXPECT("gardener-usable", shoot, TARGET_ADD, NULL, not_ready, 0);

    /* gardener-seed-selector: the seed gains the label; CloudProfiles */
    EXPECT("gardener-seed-selector", picky, TARGET_UPDATE, base, prod, 1);
    EXPECT("gardener-seed-selector", picky, TARGET_UPDATE, base, relabelled, 0);
    EXPECT("gardener-seed-selector", picky, OTHER, NULL, cm, 0);
    /* this shoot names no CloudProfile */
    EXPECT("gardener-seed-selector", picky, OTHER, cp, cp, 0);

    /* gardener-region: the seed moves into the shoot's region */
    EXPECT("gardener-region", shoot, TARGET_UPDATE, us, base, 1);
    EXPECT("gardener-region", shoot, TARGET_UPDATE, base, us, 0);
    EXPECT("gardener-region", shoot, OTHER, NULL, cm, 0);

    /* gardener-networks: the seed's node network no longer overlaps */
    EXPECT("gardener-networks", shoot, TARGET_UPDATE, clash, base, 1);
    EXPECT("gardener-networks", shoot, TARGET_UPDATE, clash, clash, 0);

    /* gardener-dns (document mode): the disable-dns taint goes away */
    EXPECT("gardener-dns", shoot, TARGET_UPDATE, no_dns, base, 1);
    EXPECT("gardener-dns", shoot, TARGET_UPDATE, base, no_dns, 0);
    EXPECT("gardener-dns", shoot, TARGET_ADD, NULL, no_dns, 0);

    /* gardener-capacity: more allocatable shoots, or a shoot gone */
    EXPECT("gardener-capacity", shoot, TARGET_UPDATE, base, more, 1);
    EXPECT("gardener-capacity", shoot, TARGET_UPDATE, base, less, 0);
    EXPECT("gardener-capacity", shoot, TARGET_UPDATE, base, relabelled, 0);
    EXPECT("gardener-capacity", shoot, TARGET_ADD, NULL, full, 0);
    EXPECT("gardener-capacity", shoot, TARGET_ADD, NULL, base, 1);
    EXPECT("gardener-capacity", shoot, WORKLOAD_GONE, gone, NULL, 1);
    EXPECT("gardener-capacity", shoot, OTHER, NULL, cm, 0);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hints");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, taint_toleration_hints);
    tcase_add_test(tc, label_selector_hints);
    tcase_add_test(tc, resources_fit_hints);
    tcase_add_test(tc, unregistered_plugins_always_concerned);
    tcase_add_test(tc, malformed_old_target_concerns);
    tcase_add_test(tc, describe_shows_events);
    tcase_add_test(tc, register_events_rules);
    tcase_add_test(tc, gardener_hints);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
