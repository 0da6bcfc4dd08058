/*
 * test_kubesched.c - a KubeSchedulerConfiguration loaded as a config
 * (kubesched.c through cfg.c): the empty file is conf/kube.cfg plugin for
 * plugin and weight for weight; kube's merge rules (defaults, multiPoint,
 * per-point enabled and disabled, '*'), its score weights, pluginConfig
 * handed to the plugins' config documents, extenders, the store and queue
 * settings; and every refusal with its line.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "kubesched.h"
#include "testutil.h"

static char dir[64];

#define HEAD                                                                                       \
    "apiVersion: kubescheduler.config.k8s.io/v1\n"                                                 \
    "kind: KubeSchedulerConfiguration\n"

static const char *write_yaml(const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/k.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void load(const char *text, cfg *c)
{
    char err[2048] = "";
    int rc = config_load(write_yaml(text), c, err, sizeof err);
    ck_assert_msg(rc == 0, "config_load: %s", err);
    ck_assert_int_eq(c->kube_config, 1);
}

/* The error, which names the file and line `line` (0: any line). */
static void expect_error(const char *text, int line, const char *needle)
{
    cfg c;
    char err[2048] = "", at[160];
    const char *p = write_yaml(text);
    ck_assert_int_eq(config_load(p, &c, err, sizeof err), -1);
    ck_assert_msg(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
    if (line)
        snprintf(at, sizeof at, "%s:%d: ", p, line);
    else
        snprintf(at, sizeof at, "%s", p);
    ck_assert_msg(strstr(err, at) != NULL, "error '%s' lacks '%s'", err, at);
}

static const cfg_plugin *plugin(const cfg_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_plugins; i++)
        if (strcmp(p->plugins[i].instance, name) == 0)
            return &p->plugins[i];
    return NULL;
}

static const char *inline_config(const cfg_plugin *pl)
{
    ck_assert_ptr_nonnull(pl->args);
    const config_setting_t *c = config_setting_get_member(pl->args, "config");
    ck_assert_ptr_nonnull(c);
    const config_setting_t *in = config_setting_get_member(c, "inline");
    ck_assert_ptr_nonnull(in);
    return config_setting_get_string(in);
}

static const char *arg_string(const cfg_plugin *pl, const char *key)
{
    const config_setting_t *s = pl->args ? config_setting_get_member(pl->args, key) : NULL;
    return s ? config_setting_get_string(s) : NULL;
}

/* bit of a trellis point, as cfg.c names them */
static unsigned pt(const char *name)
{
    unsigned b = config_point_parse(name);
    ck_assert_msg(b, "no point %s", name);
    return b;
}

START_TEST(detect)
{
    const char *y = HEAD;
    ck_assert_int_eq(kubesched_detect(y, strlen(y)), 1);
    const char *j = "{\"kind\": \"KubeSchedulerConfiguration\", \"apiVersion\": "
                    "\"kubescheduler.config.k8s.io/v1\"}";
    ck_assert_int_eq(kubesched_detect(j, strlen(j)), 1);
    const char *lc = "# a KubeSchedulerConfiguration in a comment\nprofiles = ( );\n";
    ck_assert_int_eq(kubesched_detect(lc, strlen(lc)), 0);
    const char *other = "kind: Pod\napiVersion: v1\n";
    ck_assert_int_eq(kubesched_detect(other, strlen(other)), 0);
}
END_TEST

/* kube's defaults are conf/kube.cfg: the same plugins in kube's order
 * with the same weights and arguments. */
START_TEST(empty_is_conf_kube)
{
    static const char *const order[] = {
        "scheduling-gates",   "priority-sort",      "node-unschedulable",
        "node-name",          "taint-toleration",   "node-affinity",
        "node-ports",         "node-resources-fit", "pod-topology-spread",
        "inter-pod-affinity", "preemption",         "node-resources-balanced-allocation",
        "image-locality",     "default-binder",     NULL};
    cfg c, k;
    char err[2048], path[512];
    load(HEAD, &c);
    ck_assert_uint_eq(c.n_profiles, 1);
    const cfg_profile *p = &c.profiles[0];
    ck_assert_str_eq(p->name, "default-scheduler");
    ck_assert_int_eq(p->is_default, 1);
    ck_assert_int_eq(p->percentage_to_score, 0);
    ck_assert_uint_eq(p->backoff_initial_ms, 1000);
    ck_assert_uint_eq(p->backoff_max_ms, 10000);
    ck_assert_uint_eq(p->max_unschedulable_ms, 300000);
    ck_assert_str_eq(p->binding_field, "spec.nodeName");
    ck_assert_int_eq(p->binding_subresource, 2);
    ck_assert_uint_eq(p->n_plugins, 14);
    for (size_t i = 0; order[i]; i++) {
        ck_assert_str_eq(p->plugins[i].name, order[i]);
        ck_assert_uint_eq(p->plugins[i].points, PT_ALL);
    }
    ck_assert_ptr_nonnull(c.notice);
    ck_assert_ptr_nonnull(strstr(c.notice, "VolumeRestrictions, NodeVolumeLimits, "
                                           "VolumeBinding, VolumeZone are left out"));

    const char *top = getenv("TOP_SRCDIR");
    ck_assert_ptr_nonnull(top);
    snprintf(path, sizeof path, "%s/conf/kube.cfg", top);
    ck_assert_msg(config_load(path, &k, err, sizeof err) == 0, "%s", err);
    const cfg_profile *q = &k.profiles[0];
    ck_assert_uint_eq(q->n_plugins, p->n_plugins);
    ck_assert_str_eq(q->name, p->name);
    ck_assert_int_eq(q->is_default, p->is_default);
    ck_assert_int_eq(q->percentage_to_score, p->percentage_to_score);
    ck_assert_uint_eq(q->backoff_initial_ms, p->backoff_initial_ms);
    ck_assert_uint_eq(q->backoff_max_ms, p->backoff_max_ms);
    ck_assert_uint_eq(q->max_unschedulable_ms, p->max_unschedulable_ms);
    ck_assert_str_eq(q->workload_kind, p->workload_kind);
    ck_assert_str_eq(q->scheduler_name_field, p->scheduler_name_field);
    ck_assert_str_eq(q->finished_field, p->finished_field);
    ck_assert_uint_eq(q->n_finished_values, p->n_finished_values);
    ck_assert_int_eq(q->tie_break_desc, p->tie_break_desc);
    for (size_t i = 0; i < q->n_plugins; i++) {
        const cfg_plugin *a = &q->plugins[i], *b = &p->plugins[i];
        ck_assert_str_eq(a->name, b->name);
        ck_assert_msg(a->weight == b->weight, "%s: weight %d in conf/kube.cfg, %d here", a->name,
                      a->weight, b->weight);
        ck_assert_uint_eq(a->points, b->points);
        ck_assert_int_eq(!a->args, !b->args);
        if (a->args) {
            ck_assert_str_eq(arg_string(a, "priority_field"), arg_string(b, "priority_field"));
            ck_assert_str_eq(arg_string(a, "priority_class_field"),
                             arg_string(b, "priority_class_field"));
            ck_assert_int_eq(config_setting_length(a->args), config_setting_length(b->args));
        }
    }
    ck_assert_int_eq(plugin(p, "taint-toleration")->weight, 3);
    ck_assert_int_eq(plugin(p, "node-affinity")->weight, 2);
    ck_assert_int_eq(plugin(p, "pod-topology-spread")->weight, 2);
    ck_assert_int_eq(plugin(p, "inter-pod-affinity")->weight, 2);
    ck_assert_int_eq(plugin(p, "node-resources-fit")->weight, 1);
    ck_assert_int_eq(plugin(p, "node-resources-balanced-allocation")->weight, 1);
    ck_assert_int_eq(plugin(p, "image-locality")->weight, 1);
    config_free(&k);
    config_free(&c);
}
END_TEST

START_TEST(score_disabled_and_reweighted)
{
    cfg c;
    load(HEAD "profiles:\n"
              "- schedulerName: default-scheduler\n"
              "  plugins:\n"
              "    score:\n"
              "      disabled:\n"
              "      - name: NodeResourcesBalancedAllocation\n"
              "      enabled:\n"
              "      - name: NodeAffinity\n"
              "        weight: 5\n"
              "      - name: TaintToleration\n",
         &c);
    const cfg_profile *p = &c.profiles[0];
    /* disabled at score only: kube still runs its PreScore */
    const cfg_plugin *b = plugin(p, "node-resources-balanced-allocation");
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(b->points, PT_ALL & ~pt("score"));
    /* a score entry replaces the default one: its weight, 1 when none */
    ck_assert_int_eq(plugin(p, "node-affinity")->weight, 5);
    ck_assert_int_eq(plugin(p, "taint-toleration")->weight, 1);
    ck_assert_uint_eq(plugin(p, "taint-toleration")->points, PT_ALL);
    ck_assert_int_eq(plugin(p, "pod-topology-spread")->weight, 2);
    config_free(&c);
}
END_TEST

START_TEST(multipoint_rules)
{
    cfg c;
    /* multiPoint re-enabling a default plugin keeps its place, takes the
     * entry's weight; '*' at a point leaves that point to its own list */
    load(HEAD "profiles:\n"
              "- plugins:\n"
              "    multiPoint:\n"
              "      enabled:\n"
              "      - name: ImageLocality\n"
              "        weight: 7\n"
              "    preScore:\n"
              "      disabled:\n"
              "      - name: '*'\n"
              "    filter:\n"
              "      disabled:\n"
              "      - name: NodeName\n",
         &c);
    const cfg_profile *p = &c.profiles[0];
    ck_assert_int_eq(plugin(p, "image-locality")->weight, 7);
    ck_assert_str_eq(p->plugins[11].name, "image-locality");
    ck_assert_ptr_null(plugin(p, "node-name")); /* at no point any more */
    ck_assert_uint_eq(plugin(p, "taint-toleration")->points, PT_ALL & ~pt("pre_score"));
    ck_assert_uint_eq(plugin(p, "node-affinity")->points, PT_ALL & ~pt("pre_score"));
    ck_assert_uint_eq(plugin(p, "image-locality")->points, PT_ALL);
    config_free(&c);

    /* '*' in multiPoint: only what is listed */
    load(HEAD "profiles:\n"
              "- schedulerName: lean\n"
              "  plugins:\n"
              "    multiPoint:\n"
              "      disabled: [{name: '*'}]\n"
              "      enabled:\n"
              "      - {name: PrioritySort}\n"
              "      - {name: NodeResourcesFit, weight: 4}\n"
              "      - {name: DefaultBinder}\n",
         &c);
    p = &c.profiles[0];
    ck_assert_str_eq(p->name, "lean");
    ck_assert_int_eq(p->is_default, 1);
    ck_assert_uint_eq(p->n_plugins, 3);
    ck_assert_str_eq(p->plugins[0].name, "priority-sort");
    ck_assert_str_eq(p->plugins[1].name, "node-resources-fit");
    ck_assert_int_eq(p->plugins[1].weight, 4);
    ck_assert_str_eq(p->plugins[2].name, "default-binder");
    ck_assert_ptr_null(c.notice); /* no volume plugin left out */
    config_free(&c);

    /* a plugin enabled at one point only takes part there */
    load(HEAD "profiles:\n"
              "- plugins:\n"
              "    multiPoint:\n"
              "      disabled: [{name: TaintToleration}]\n"
              "    filter:\n"
              "      enabled: [{name: TaintToleration}]\n",
         &c);
    p = &c.profiles[0];
    ck_assert_uint_eq(plugin(p, "taint-toleration")->points,
                      PT_ALL & ~pt("pre_score") & ~pt("score"));
    config_free(&c);
}
END_TEST

START_TEST(plugin_config_mapping)
{
    cfg c;
    load(HEAD "profiles:\n"
              "- pluginConfig:\n"
              "  - name: NodeResourcesFit\n"
              "    args:\n"
              "      apiVersion: kubescheduler.config.k8s.io/v1\n"
              "      kind: NodeResourcesFitArgs\n"
              "      scoringStrategy:\n"
              "        type: MostAllocated\n"
              "        resources:\n"
              "        - {name: cpu, weight: 1}\n"
              "        - {name: nvidia.com/gpu, weight: 3}\n"
              "  - name: NodeAffinity\n"
              "    args:\n"
              "      addedAffinity:\n"
              "        requiredDuringSchedulingIgnoredDuringExecution:\n"
              "          nodeSelectorTerms:\n"
              "          - matchExpressions:\n"
              "            - {key: \"team\", operator: In, values: [\"a b\", \"1\"]}\n"
              "  - name: InterPodAffinity\n"
              "    args: {hardPodAffinityWeight: 0}\n"
              "  - name: DefaultPreemption\n"
              "    args: {minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 50}\n"
              "  - name: PodTopologySpread\n"
              "    args:\n"
              "      defaultingType: List\n"
              "      defaultConstraints:\n"
              "      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
              "whenUnsatisfiable: ScheduleAnyway}\n"
              "  - name: NodeResourcesBalancedAllocation\n"
              "    args: {resources: [{name: cpu, weight: 1}]}\n"
              "  - name: VolumeBinding\n"
              "    args: {bindTimeoutSeconds: 600}\n",
         &c);
    const cfg_profile *p = &c.profiles[0];
    ck_assert_str_eq(inline_config(plugin(p, "node-resources-fit")),
                     "{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}, "
                     "{name: nvidia.com/gpu, weight: 3}]}}");
    ck_assert_str_eq(inline_config(plugin(p, "node-affinity")),
                     "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                     "{nodeSelectorTerms: [{matchExpressions: [{key: \"team\", operator: In, "
                     "values: [\"a b\", \"1\"]}]}]}}}");
    ck_assert_str_eq(inline_config(plugin(p, "inter-pod-affinity")), "{hardPodAffinityWeight: 0}");
    ck_assert_ptr_nonnull(
        strstr(inline_config(plugin(p, "pod-topology-spread")), "defaultingType: List"));
    ck_assert_str_eq(inline_config(plugin(p, "node-resources-balanced-allocation")),
                     "{resources: [{name: cpu, weight: 1}]}");
    /* DefaultPreemptionArgs: the preemption plugin's own arguments */
    const config_setting_t *pa = plugin(p, "preemption")->args;
    ck_assert_ptr_null(config_setting_get_member(pa, "config"));
    ck_assert_int_eq(
        config_setting_get_int(config_setting_get_member(pa, "min_candidate_nodes_percentage")),
        20);
    ck_assert_int_eq(
        config_setting_get_int(config_setting_get_member(pa, "min_candidate_nodes_absolute")), 50);
    /* the line of the args (their first key), for the plugin's own errors */
    const config_setting_t *in = config_setting_get_member(
        config_setting_get_member(plugin(p, "node-resources-fit")->args, "config"), "inline");
    ck_assert_int_eq(config_setting_source_line(in), 7);
    config_free(&c);
}
END_TEST

START_TEST(extenders_and_ignored_resources)
{
    cfg c;
    load(HEAD "extenders:\n"
              "- urlPrefix: http://127.0.0.1:8888/scheduler\n"
              "  filterVerb: filter\n"
              "  prioritizeVerb: prioritize\n"
              "  weight: 5\n"
              "  httpTimeout: 1m30s\n"
              "  nodeCacheCapable: true\n"
              "  managedResources:\n"
              "  - {name: example.com/foo, ignoredByScheduler: true}\n"
              "  - {name: example.com/bar}\n"
              "  ignorable: true\n"
              "- urlPrefix: https://ext.example:443/\n"
              "  bindVerb: bind\n"
              "  tlsConfig:\n"
              "    insecure: false\n"
              "    serverName: ext.example\n"
              "    caFile: ca.pem\n"
              "    certData: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
              "profiles:\n"
              "- pluginConfig:\n"
              "  - name: NodeResourcesFit\n"
              "    args: {ignoredResources: [example.com/old], ignoredResourceGroups: [ex.io]}\n",
         &c);
    const cfg_profile *p = &c.profiles[0];
    ck_assert_uint_eq(p->n_plugins, 16);
    /* after every filter and score plugin, before the binder */
    ck_assert_str_eq(p->plugins[13].instance, "http-extender");
    ck_assert_str_eq(p->plugins[14].instance, "extender-2");
    ck_assert_str_eq(p->plugins[14].name, "http-extender");
    ck_assert_str_eq(p->plugins[15].name, "default-binder");
    const cfg_plugin *e = &p->plugins[13];
    ck_assert_int_eq(e->weight, 5);
    ck_assert_str_eq(arg_string(e, "url_prefix"), "http://127.0.0.1:8888/scheduler");
    ck_assert_str_eq(arg_string(e, "filter_verb"), "filter");
    ck_assert_str_eq(arg_string(e, "prioritize_verb"), "prioritize");
    ck_assert_int_eq(config_setting_get_int(config_setting_get_member(e->args, "http_timeout_ms")),
                     90000);
    ck_assert_int_eq(
        config_setting_get_bool(config_setting_get_member(e->args, "node_cache_capable")), 1);
    ck_assert_int_eq(config_setting_get_bool(config_setting_get_member(e->args, "ignorable")), 1);
    const config_setting_t *mr = config_setting_get_member(e->args, "managed_resources");
    ck_assert_int_eq(config_setting_length(mr), 2);
    ck_assert_str_eq(config_setting_get_string_elem(mr, 0), "example.com/foo");
    e = &p->plugins[14];
    ck_assert_int_eq(e->weight, 1);
    ck_assert_str_eq(arg_string(e, "bind_verb"), "bind");
    ck_assert_str_eq(arg_string(e, "tls_server_name"), "ext.example");
    ck_assert_str_eq(arg_string(e, "tls_ca_file"), "ca.pem");
    ck_assert_str_eq(arg_string(e, "tls_cert_data"), "-----BEGIN CERTIFICATE-----\n");
    /* kube replaces NodeResourcesFitArgs.ignoredResources with the
     * extenders' ignoredByScheduler resources */
    ck_assert_str_eq(inline_config(plugin(p, "node-resources-fit")),
                     "{ignoredResources: [example.com/foo], ignoredResourceGroups: [ex.io]}");
    config_free(&c);

    /* without a pluginConfig for it the list is the whole args */
    load(HEAD "extenders:\n"
              "- urlPrefix: http://127.0.0.1:1/x\n"
              "  managedResources: [{name: a.io/b, ignoredByScheduler: true}]\n",
         &c);
    ck_assert_str_eq(inline_config(plugin(&c.profiles[0], "node-resources-fit")),
                     "{ignoredResources: [a.io/b]}");
    config_free(&c);

    /* kube: enableHTTPS without a CA verifies no certificate; with one it
     * does; httpTimeout 0 is the default */
    load(HEAD "extenders:\n"
              "- urlPrefix: https://a:1/x\n"
              "  enableHTTPS: true\n"
              "  httpTimeout: 0s\n"
              "- urlPrefix: https://b:1/x\n"
              "  enableHTTPS: true\n"
              "  tlsConfig: {caFile: ca.pem}\n",
         &c);
    e = plugin(&c.profiles[0], "http-extender");
    ck_assert_int_eq(config_setting_get_bool(config_setting_get_member(e->args, "tls_insecure")),
                     1);
    ck_assert_ptr_null(config_setting_get_member(e->args, "http_timeout_ms"));
    e = plugin(&c.profiles[0], "extender-2");
    ck_assert_ptr_null(config_setting_get_member(e->args, "tls_insecure"));
    config_free(&c);
}
END_TEST

START_TEST(profiles_and_settings)
{
    cfg c;
    char kc[160];
    snprintf(kc, sizeof kc, "%s/admin.kubeconfig", dir);
    tu_write(dir, "admin.kubeconfig", "apiVersion: v1\nkind: Config\n");
    load(HEAD "parallelism: 4\n"
              "percentageOfNodesToScore: 30\n"
              "podInitialBackoffSeconds: 2\n"
              "podMaxBackoffSeconds: 20\n"
              "enableProfiling: false\n"
              "clientConnection:\n"
              "  kubeconfig: admin.kubeconfig\n"
              "leaderElection:\n"
              "  leaderElect: true\n"
              "  leaseDuration: 30s\n"
              "  renewDeadline: 10s\n"
              "  resourceLock: leases\n"
              "  resourceName: trellis-sched\n"
              "  resourceNamespace: sched\n"
              "profiles:\n"
              "- schedulerName: batch\n"
              "  percentageOfNodesToScore: 100\n"
              "- schedulerName: default-scheduler\n",
         &c);
    ck_assert_int_eq(c.parallelism, 4);
    ck_assert_str_eq(c.store.type, "kubernetes");
    ck_assert_str_eq(c.store.kubeconfig, kc);
    ck_assert_uint_eq(c.store.lease_ttl_s, 30);
    ck_assert_str_eq(c.store.lease_name, "trellis-sched");
    ck_assert_str_eq(c.store.lease_namespace, "sched");
    ck_assert_uint_eq(c.n_profiles, 2);
    ck_assert_str_eq(c.profiles[0].name, "batch");
    ck_assert_int_eq(c.profiles[0].is_default, 0);
    ck_assert_int_eq(c.profiles[0].percentage_to_score, 100);
    ck_assert_str_eq(c.profiles[1].name, "default-scheduler");
    ck_assert_int_eq(c.profiles[1].is_default, 1);
    ck_assert_int_eq(c.profiles[1].percentage_to_score, 30);
    ck_assert_uint_eq(c.profiles[1].backoff_initial_ms, 2000);
    ck_assert_uint_eq(c.profiles[1].backoff_max_ms, 20000);
    config_free(&c);

    /* JSON is YAML */
    load("{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": "
         "\"KubeSchedulerConfiguration\", \"profiles\": [{\"schedulerName\": \"a\"}]}",
         &c);
    ck_assert_str_eq(c.profiles[0].name, "a");
    ck_assert_int_eq(c.profiles[0].is_default, 1);
    config_free(&c);
}
END_TEST

START_TEST(refusals_name_the_line)
{
    expect_error(HEAD "percentageOfNodesToScor: 50\n", 3, "unknown key 'percentageOfNodesToScor'");
    expect_error(HEAD "healthzBindAddress: 0.0.0.0:10251\n", 3, "--listen");
    expect_error(HEAD "featureGates: {A: true}\n", 3, "feature gates");
    expect_error(HEAD "leaderElection:\n  leaderElect: false\n", 4, "always elects");
    expect_error(HEAD "leaderElection:\n  leaseDuration: 20s\n", 4, "clientConnection.kubeconfig");
    expect_error(HEAD "leaderElection:\n  retryPeriod: 5s\n", 4, "retryPeriod is not supported");
    expect_error(HEAD "leaderElection:\n  resourceLock: endpointsleases\n", 4, "\"leases\"");
    expect_error(HEAD "clientConnection:\n  qps: 50\n", 4, "no rate limit");
    expect_error(HEAD "enableProfiling: true\n", 3, "/debug/pprof");
    expect_error(HEAD "delayCacheUntilActive: maybe\n", 3, "expected true or false");
    expect_error(HEAD "parallelism: 0\n", 3, "parallelism: expected an integer from 1 to 256");
    expect_error(HEAD "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n", 4,
                 "at least podInitialBackoffSeconds");
    expect_error("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                 "kind: KubeSchedulerConfiguration\n",
                 1, "expected kubescheduler.config.k8s.io/v1");
    expect_error(HEAD "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                      "      - name: MyPlugin\n",
                 7, "'MyPlugin' is not a kube-scheduler plugin trellis reproduces");
    expect_error(HEAD "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                      "      - name: VolumeBinding\n",
                 7, "without volumes");
    expect_error(HEAD "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                      "      - name: ImageLocality\n",
                 7, "does not extend filter");
    expect_error(HEAD "profiles:\n- plugins:\n    score:\n      enabled:\n"
                      "      - name: ImageLocality\n      - name: ImageLocality\n",
                 8, "enabled twice");
    expect_error(HEAD "profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n", 4,
                 "no queue sort plugin");
    expect_error(HEAD "profiles:\n- plugins:\n    multiPoint:\n"
                      "      disabled: [{name: DefaultBinder}]\n",
                 4, "at least one bind plugin");
    expect_error(HEAD "profiles:\n- plugins:\n    filtr: {}\n", 5, "unknown key 'filtr'");
    expect_error(HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                      "    args: {scoringStrategy: {type: MostAllocated}, strict: true}\n",
                 6, "unknown key 'strict'");
    expect_error(HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                      "    args: {kind: InterPodAffinityArgs}\n",
                 6, "kind: expected NodeResourcesFitArgs");
    expect_error(HEAD "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                      "    args:\n      minCandidateNodesPercentage: 101\n",
                 7, "minCandidateNodesPercentage");
    /* durations as Go reads them: no NaN, infinity or hex */
    expect_error(HEAD "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  httpTimeout: nanms\n", 5,
                 "expected a duration");
    expect_error(HEAD "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  httpTimeout: infs\n", 5,
                 "expected a duration");
    expect_error(HEAD "extenders:\n- urlPrefix: http://127.0.0.1:1/x\n  httpTimeout: 0x10s\n", 5,
                 "expected a duration");
    /* aliases of aliases (a billion laughs) in args: refused, not expanded */
    {
        char y[4096];
        int n = snprintf(y, sizeof y,
                         HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                              "      scoringStrategy:\n        resources:\n"
                              "        - &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int l = 1; l < 9; l++) {
            n += snprintf(y + n, sizeof y - (size_t)n, "        - &a%d [", l);
            for (int j = 0; j < 10; j++)
                n += snprintf(y + n, sizeof y - (size_t)n, "%s*a%d", j ? ", " : "", l - 1);
            n += snprintf(y + n, sizeof y - (size_t)n, "]\n");
        }
        expect_error(y, 0, "more than 4 MiB once YAML aliases are expanded");
    }
    expect_error(HEAD "profiles:\n- pluginConfig:\n  - name: TaintToleration\n"
                      "    args: {x: 1}\n",
                 6, "takes no arguments");
    expect_error(HEAD "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: "
                      "NodeAffinity\n",
                 6, "configured twice");
    expect_error(HEAD "profiles:\n- schedulerName: a\n- {}\n", 5, "schedulerName is required");
    expect_error(HEAD "profiles:\n- schedulerName: a\n- schedulerName: a\n", 0,
                 "a profile named 'a' already exists");
    expect_error(HEAD "profiles:\n- percentageOfNodesToScore: 101\n", 4,
                 "percentageOfNodesToScore: expected an integer from 0 to 100");
    expect_error(HEAD "extenders:\n- filterVerb: filter\n", 4, "urlPrefix");
    expect_error(HEAD "extenders:\n- urlPrefix: http://a/\n  prioritizeVerb: p\n", 4,
                 "needs a weight");
    expect_error(HEAD "extenders:\n- urlPrefix: http://a/\n  bindVerb: b\n"
                      "- urlPrefix: http://b/\n  bindVerb: b\n",
                 7, "only one extender can implement bind");
    expect_error(HEAD "extenders:\n- urlPrefix: http://a/\n  httpTimeout: 30\n", 5, "a unit");
    expect_error(HEAD "extenders:\n- urlPrefix: http://a/\n  tlsConfig: {caData: '!!'}\n", 5,
                 "base64");
    expect_error(HEAD "extenders:\n- urlPrefix: http://a/\n  retries: 3\n", 5,
                 "unknown key 'retries'");
    expect_error(HEAD "kind: KubeSchedulerConfiguration\n", 3, "given twice");
    expect_error(HEAD "profiles: [\n", 0, "k.yaml:");
    expect_error(HEAD "---\n" HEAD, 4, "a second document");
    expect_error("kind: KubeSchedulerConfiguration\n", 1, "apiVersion: expected");
}
END_TEST

START_TEST(order_conflict_refused)
{
    /* re-enabling NodePorts at filter puts it first there (kube's
     * override), while at preFilter it stays after NodeAffinity: one list
     * cannot hold both orders */
    expect_error(HEAD "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                      "      - name: NodePorts\n",
                 4, "trellis runs a profile's plugins in one order");
}
END_TEST

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/trellis-ks-XXXXXX");
    if (!mkdtemp(dir))
        return EXIT_FAILURE;
    Suite *s = suite_create("kubesched");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, detect);
    tcase_add_test(tc, empty_is_conf_kube);
    tcase_add_test(tc, score_disabled_and_reweighted);
    tcase_add_test(tc, multipoint_rules);
    tcase_add_test(tc, plugin_config_mapping);
    tcase_add_test(tc, extenders_and_ignored_resources);
    tcase_add_test(tc, profiles_and_settings);
    tcase_add_test(tc, refusals_name_the_line);
    tcase_add_test(tc, order_conflict_refused);
    suite_add_tcase(s, tc);
    int rc = tu_run(s);
    const char *files[] = {"k.yaml", "admin.kubeconfig"};
    for (size_t i = 0; i < 2; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return rc;
}
