/*
 * trellis-gen.c - write a synthetic fleet as manifests, for benchmarks.
 *
 *   trellis-gen kube DIR NODES PODS [SEED] [yaml|json]
 *   trellis-gen kube-spread DIR NODES PODS [SEED] [yaml|json]
 *   trellis-gen gardener DIR SEEDS SHOOTS [SEED] [yaml|json]
 *   trellis-gen openmcp DIR CLUSTERS REQUESTS [SEED] [yaml|json]
 *   trellis-gen fleet DIR MEMBERS PLACEMENTS [SEED] [yaml|json]
 *   trellis-gen kube-antiaffinity DIR NODES PODS [SEED] [yaml|json]
 *
 * kube: Nodes of 4 CPU, 32Gi, 110 pods, labelled with a hostname and one of
 * three zones, and pending Pods requesting 100m CPU and 500Mi - the shape of
 * kube-scheduler's SchedulingBasic benchmark. kube-spread: kube-scheduler's
 * TopologySpreading shape: the same Nodes, as many Pods of the SchedulingBasic
 * shape already running on them (one per Node, round robin: kube's
 * initPods), and PODS pending Pods labelled color=blue with a zone spread
 * constraint (maxSkew 5, DoNotSchedule, selector color=blue). gardener: Seeds over three
 * providers and several regions (some tainted, distinct networks, room for
 * the shoots), a CloudProfile per provider, and pending Shoots. openmcp:
 * Clusters over 10 namespaces, each serving one of the Shared purposes
 * shared-1 .. shared-4, and pending ClusterRequests, a tenth of them of
 * the Exclusive purpose exclusive (each creates a Cluster), the others of
 * a Shared one (the configuration is scripts/bench.sh's). fleet:
 * MemberClusters over five regions and two environments with a node
 * count, cpu amounts and a member agent that reported at
 * 2026-11-20T11:59:30Z (schedule with --now 2026-11-20T12:00:00Z), and
 * ClusterResourcePlacements: one in twenty PickAll of one region's prod
 * clusters, the others PickN 3 preferring prod and more nodes, spread over
 * the regions (maxSkew 1, DoNotSchedule). kube-antiaffinity: kube's Nodes
 * and the Pods of kube-scheduler's SchedulingPodAntiAffinity benchmark
 * (scheduler_perf): labelled color=green, requesting 100m and 500Mi, with
 * required anti-affinity to color=green on kubernetes.io/hostname in the
 * namespaces sched-0 and sched-1; a third of them (its initPods, in
 * sched-0) already bound one per Node, spread evenly, the others (its
 * measurePods, in sched-1) pending: 5,000 Nodes and 3,000 Pods is its
 * 5000Nodes_2000Pods workload. The same
 * SEED writes the same files. Objects go to nodes/seeds and pods/shoots
 * files, 5,000 objects per file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t rng;

static uint32_t next(void)
{
    /* xorshift64*: small, fast, reproducible */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

typedef struct out {
    const char *dir, *base;
    int json;
    int file, in_file;
    FILE *f;
} out;

#define PER_FILE 5000

static FILE *doc(out *o)
{
    if (!o->f || o->in_file == PER_FILE) {
        if (o->f)
            fclose(o->f);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%04d.%s", o->dir, o->base, o->file++,
                 o->json ? "json" : "yaml");
        o->f = fopen(path, "w");
        if (!o->f) {
            fprintf(stderr, "trellis-gen: %s: %s\n", path, strerror(errno));
            exit(1);
        }
        o->in_file = 0;
    } else if (!o->json) {
        fputs("---\n", o->f);
    }
    o->in_file++;
    return o->f;
}

static void done(out *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
}

static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};

/* kube-scheduler's pod-with-topology-spreading.yaml */
static const char spread_json[] =
    ",\"labels\":{\"color\":\"blue\"}},\"spec\":{\"topologySpreadConstraints\":[{\"maxSkew\":5,"
    "\"topologyKey\":\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
    "\"labelSelector\":{\"matchLabels\":{\"color\":\"blue\"}}}],";
static const char spread_yaml[] = "  labels: {color: blue}\nspec:\n  topologySpreadConstraints:\n"
                                  "  - maxSkew: 5\n    topologyKey: topology.kubernetes.io/zone\n"
                                  "    whenUnsatisfiable: DoNotSchedule\n"
                                  "    labelSelector: {matchLabels: {color: blue}}\n";

static void kube(const char *dir, long nodes, long pods, int json, int spread)
{
    out n = {dir, "nodes", json, 0, 0, NULL};
    for (long i = 0; i < nodes; i++) {
        FILE *f = doc(&n);
        const char *z = zones[next() % 3];
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                    "\"node-%06ld\",\"labels\":{\"kubernetes.io/hostname\":\"node-%06ld\","
                    "\"topology.kubernetes.io/zone\":\"%s\"}},\"spec\":{},\"status\":{"
                    "\"allocatable\":{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}\n",
                    i, i, z);
        else
            fprintf(f,
                    "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-%06ld\n  labels:\n"
                    "    kubernetes.io/hostname: node-%06ld\n"
                    "    topology.kubernetes.io/zone: %s\nspec: {}\nstatus:\n  allocatable:\n"
                    "    cpu: \"4\"\n    memory: 32Gi\n    pods: \"110\"\n",
                    i, i, z);
    }
    done(&n);
    out p = {dir, "pods", json, 0, 0, NULL};
    /* kube-spread: first one running Pod per Node (kube's initPods), then
     * the pending ones with the spread constraint */
    long running = spread ? nodes : 0;
    for (long i = 0; i < running + pods; i++) {
        FILE *f = doc(&p);
        int blue = i >= running && spread;
        char node[64] = "";
        if (i < running)
            snprintf(node, sizeof node,
                     json ? "\"nodeName\":\"node-%06ld\"," : "  nodeName: node-%06ld\n", i % nodes);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                    "\"pod-%07ld\",\"namespace\":\"bench\",\"uid\":\"%08x-0000-4000-8000-%012lx\""
                    "%s%s\"containers\":[{\"name\":\"app\",\"image\":\"registry.k8s.io/"
                    "pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":"
                    "\"500Mi\"}}}]}}\n",
                    i, next(), (unsigned long)i, blue ? spread_json : "},\"spec\":{", node);
        else
            fprintf(f,
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%07ld\n  namespace: bench\n"
                    "  uid: %08x-0000-4000-8000-%012lx\n%s%s  containers:\n  - name: app\n"
                    "    image: registry.k8s.io/pause:3.9\n    resources:\n      requests:\n"
                    "        cpu: 100m\n        memory: 500Mi\n",
                    i, next(), (unsigned long)i, blue ? spread_yaml : "spec:\n", node);
    }
    done(&p);
}

/* SchedulingPodAntiAffinity: kube's Nodes, then pods / 3 bound Pods (one
 * per Node, spread over them) and the rest pending. */
static void kube_antiaffinity(const char *dir, long nodes, long pods, int json)
{
    long bound = pods / 3;
    out p = {dir, "pods", json, 0, 0, NULL};

    kube(dir, nodes, 0, json, 0);
    if (bound > nodes)
        bound = nodes; /* one per Node at most: the anti-affinity allows no more */
    for (long i = 0; i < pods; i++) {
        FILE *f = doc(&p);
        int init = i < bound;
        const char *ns = init ? "sched-0" : "sched-1";
        char node[64] = "";

        if (init)
            snprintf(node, sizeof node, "node-%06ld", nodes ? i * nodes / bound : 0);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                    "\"anti-affinity-pod-%07ld\",\"namespace\":\"%s\",\"uid\":"
                    "\"%08x-0000-4000-8000-%012lx\",\"labels\":{\"color\":\"green\"}},"
                    "\"spec\":{%s%s%s\"affinity\":{\"podAntiAffinity\":{"
                    "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
                    "\"matchLabels\":{\"color\":\"green\"}},\"topologyKey\":"
                    "\"kubernetes.io/hostname\",\"namespaces\":[\"sched-1\",\"sched-0\"]}]}},"
                    "\"containers\":[{\"name\":\"pause\",\"image\":\"registry.k8s.io/"
                    "pause:3.10\",\"ports\":[{\"containerPort\":80}],\"resources\":{\"limits\":{"
                    "\"cpu\":\"100m\",\"memory\":\"500Mi\"},\"requests\":{\"cpu\":\"100m\","
                    "\"memory\":\"500Mi\"}}}]}}\n",
                    i, ns, next(), (unsigned long)i, init ? "\"nodeName\":\"" : "", node,
                    init ? "\"," : "");
        else
            fprintf(f,
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: anti-affinity-pod-%07ld\n"
                    "  namespace: %s\n  uid: %08x-0000-4000-8000-%012lx\n  labels:\n"
                    "    color: green\nspec:\n%s%s%s  affinity:\n    podAntiAffinity:\n"
                    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - labelSelector:\n          matchLabels:\n            color: green\n"
                    "        topologyKey: kubernetes.io/hostname\n"
                    "        namespaces: [sched-1, sched-0]\n  containers:\n  - name: pause\n"
                    "    image: registry.k8s.io/pause:3.10\n    ports:\n    - containerPort: 80\n"
                    "    resources:\n      limits: {cpu: 100m, memory: 500Mi}\n"
                    "      requests: {cpu: 100m, memory: 500Mi}\n",
                    i, ns, next(), (unsigned long)i, init ? "  nodeName: " : "", node,
                    init ? "\n" : "");
    }
    done(&p);
}

static const char *const providers[] = {"aws", "gcp", "azure"};
static const char *const regions[3][4] = {
    {"eu-west-1", "eu-central-1", "us-east-1", "ap-southeast-1"},
    {"europe-west1", "europe-north1", "us-central1", "asia-east1"},
    {"westeurope", "northeurope", "eastus", "southeastasia"}};

static void gardener(const char *dir, long seeds, long shoots, int json)
{
    out c = {dir, "cloudprofiles", json, 0, 0, NULL};
    for (int i = 0; i < 3; i++) {
        FILE *f = doc(&c);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"CloudProfile\","
                    "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"type\":\"%s\",\"seedSelector\":"
                    "{\"providerTypes\":[\"%s\"]}}}\n",
                    providers[i], providers[i], providers[i]);
        else
            fprintf(f,
                    "apiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata:\n"
                    "  name: %s\nspec:\n  type: %s\n  seedSelector:\n    providerTypes: [%s]\n",
                    providers[i], providers[i], providers[i]);
    }
    done(&c);
    /* every seed takes an equal share of the shoots, with room to spare */
    long cap = seeds ? (shoots / seeds) * 2 + 10 : 0;
    out s = {dir, "seeds", json, 0, 0, NULL};
    for (long i = 0; i < seeds; i++) {
        FILE *f = doc(&s);
        int p = (int)(i % 3);
        const char *r = regions[p][(i / 3) % 4];
        int tainted = next() % 10 == 0;
        /* seed networks live in 10.0.0.0/8; shoots use 100.64.0.0/10 */
        unsigned b = (unsigned)(i % 250);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\","
                    "\"metadata\":{\"name\":\"seed-%05ld\",\"labels\":{\"environment\":"
                    "\"prod\"}},\"spec\":{\"provider\":{\"type\":\"%s\",\"region\":\"%s\"},"
                    "\"networks\":{\"nodes\":\"10.%u.0.0/18\",\"pods\":\"10.%u.64.0/18\","
                    "\"services\":\"10.%u.128.0/18\"},\"settings\":{\"scheduling\":{\"visible\":"
                    "true}},\"taints\":[%s]},\"status\":{\"lastOperation\":{\"state\":"
                    "\"Succeeded\"},\"conditions\":[{\"type\":\"GardenletReady\",\"status\":"
                    "\"True\"}],\"allocatable\":{\"shoots\":\"%ld\"}}}\n",
                    i, providers[p], r, b, b, b,
                    tainted ? "{\"key\":\"maintenance\",\"effect\":\"PreferNoSchedule\"}" : "",
                    cap);
        else
            fprintf(f,
                    "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n"
                    "  name: seed-%05ld\n  labels:\n    environment: prod\nspec:\n  provider:\n"
                    "    type: %s\n    region: %s\n  networks:\n    nodes: 10.%u.0.0/18\n"
                    "    pods: 10.%u.64.0/18\n    services: 10.%u.128.0/18\n  settings:\n"
                    "    scheduling:\n      visible: true\n  taints: [%s]\nstatus:\n"
                    "  lastOperation:\n    state: Succeeded\n  conditions:\n"
                    "  - type: GardenletReady\n    status: \"True\"\n  allocatable:\n"
                    "    shoots: \"%ld\"\n",
                    i, providers[p], r, b, b, b,
                    tainted ? "{key: maintenance, effect: PreferNoSchedule}" : "", cap);
    }
    done(&s);
    out h = {dir, "shoots", json, 0, 0, NULL};
    for (long i = 0; i < shoots; i++) {
        FILE *f = doc(&h);
        int p = (int)(next() % 3);
        const char *r = regions[p][next() % 4];
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Shoot\","
                    "\"metadata\":{\"name\":\"shoot-%07ld\",\"namespace\":\"garden-bench\"},"
                    "\"spec\":{\"cloudProfileName\":\"%s\",\"provider\":{\"type\":\"%s\"},"
                    "\"region\":\"%s\",\"networking\":{\"nodes\":\"100.64.0.0/16\",\"pods\":"
                    "\"100.96.0.0/16\",\"services\":\"100.100.0.0/16\"}}}\n",
                    i, providers[p], providers[p], r);
        else
            fprintf(f,
                    "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata:\n"
                    "  name: shoot-%07ld\n  namespace: garden-bench\nspec:\n"
                    "  cloudProfileName: %s\n  provider:\n    type: %s\n  region: %s\n"
                    "  networking:\n    nodes: 100.64.0.0/16\n    pods: 100.96.0.0/16\n"
                    "    services: 100.100.0.0/16\n",
                    i, providers[p], providers[p], r);
    }
    done(&h);
}

static void openmcp(const char *dir, long clusters, long requests, int json)
{
    out c = {dir, "clusters", json, 0, 0, NULL};
    for (long i = 0; i < clusters; i++) {
        FILE *f = doc(&c);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\",\"kind\":\"Cluster\","
                    "\"metadata\":{\"name\":\"cluster-%05ld\",\"namespace\":\"ns-%ld\","
                    "\"labels\":{\"landscape\":\"bench\"}},\"spec\":{\"profile\":\"small\","
                    "\"tenancy\":\"Shared\",\"purposes\":[\"shared-%ld\"]}}\n",
                    i, i % 10, 1 + i % 4);
        else
            fprintf(f,
                    "apiVersion: clusters.openmcp.cloud/v1alpha1\nkind: Cluster\nmetadata:\n"
                    "  name: cluster-%05ld\n  namespace: ns-%ld\n  labels:\n    landscape: bench\n"
                    "spec:\n  profile: small\n  tenancy: Shared\n  purposes: [shared-%ld]\n",
                    i, i % 10, 1 + i % 4);
    }
    done(&c);
    out r = {dir, "requests", json, 0, 0, NULL};
    for (long i = 0; i < requests; i++) {
        FILE *f = doc(&r);
        char purpose[16];
        if (i % 10 == 0)
            snprintf(purpose, sizeof purpose, "exclusive");
        else
            snprintf(purpose, sizeof purpose, "shared-%u", 1 + next() % 4);
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"clusters.openmcp.cloud/v1alpha1\","
                    "\"kind\":\"ClusterRequest\",\"metadata\":{\"name\":\"req-%07ld\","
                    "\"namespace\":\"ns-%ld\",\"uid\":\"00000000-0000-4000-8000-%012ld\"},"
                    "\"spec\":{\"purpose\":\"%s\"}}\n",
                    i, i % 10, i, purpose);
        else
            fprintf(f,
                    "apiVersion: clusters.openmcp.cloud/v1alpha1\nkind: ClusterRequest\n"
                    "metadata:\n  name: req-%07ld\n  namespace: ns-%ld\n"
                    "  uid: 00000000-0000-4000-8000-%012ld\nspec:\n  purpose: %s\n",
                    i, i % 10, i, purpose);
    }
    done(&r);
}

static void fleet(const char *dir, long members, long placements, int json)
{
    static const char *const fleet_regions[] = {"eastus", "westus", "northeurope", "westeurope",
                                                "southeastasia"};
    out m = {dir, "members", json, 0, 0, NULL};
    for (long i = 0; i < members; i++) {
        FILE *f = doc(&m);
        const char *region = fleet_regions[i % 5], *env = i % 3 ? "prod" : "staging";
        unsigned nodes = 1 + next() % 50, cpu = nodes * 8;
        if (json)
            fprintf(f,
                    "{\"apiVersion\":\"cluster.kubernetes-fleet.io/v1beta1\",\"kind\":"
                    "\"MemberCluster\",\"metadata\":{\"name\":\"member-%05ld\",\"labels\":{"
                    "\"fleet.example.com/region\":\"%s\",\"environment\":\"%s\"}},"
                    "\"status\":{\"agentStatus\":[{\"type\":\"MemberAgent\","
                    "\"lastReceivedHeartbeat\":\"2026-11-20T11:59:30Z\",\"conditions\":["
                    "{\"type\":\"Joined\",\"status\":\"True\",\"lastTransitionTime\":"
                    "\"2026-11-01T08:00:00Z\"},{\"type\":\"Healthy\",\"status\":\"True\","
                    "\"lastTransitionTime\":\"2026-11-01T08:00:00Z\"}]}],\"properties\":{"
                    "\"kubernetes-fleet.io/node-count\":{\"value\":\"%u\"}},"
                    "\"resourceUsage\":{\"capacity\":{\"cpu\":\"%u\"},\"allocatable\":"
                    "{\"cpu\":\"%u\"},\"available\":{\"cpu\":\"%u\"}}}}\n",
                    i, region, env, nodes, cpu, cpu, cpu / 2);
        else
            fprintf(
                f,
                "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
                "metadata:\n  name: member-%05ld\n  labels:\n"
                "    fleet.example.com/region: %s\n    environment: %s\nstatus:\n"
                "  agentStatus:\n  - type: MemberAgent\n"
                "    lastReceivedHeartbeat: \"2026-11-20T11:59:30Z\"\n    conditions:\n"
                "    - {type: Joined, status: \"True\", lastTransitionTime: "
                "\"2026-11-01T08:00:00Z\"}\n"
                "    - {type: Healthy, status: \"True\", lastTransitionTime: "
                "\"2026-11-01T08:00:00Z\"}\n"
                "  properties:\n    kubernetes-fleet.io/node-count: {value: \"%u\"}\n"
                "  resourceUsage:\n    capacity: {cpu: \"%u\"}\n    allocatable: {cpu: \"%u\"}\n"
                "    available: {cpu: \"%u\"}\n",
                i, region, env, nodes, cpu, cpu, cpu / 2);
    }
    done(&m);
    out p = {dir, "placements", json, 0, 0, NULL};
    for (long i = 0; i < placements; i++) {
        FILE *f = doc(&p);
        const char *head = json ? "{\"apiVersion\":\"placement.kubernetes-fleet.io/v1beta1\","
                                  "\"kind\":\"ClusterResourcePlacement\",\"metadata\":{"
                                  "\"name\":\"crp-%06ld\"},\"spec\":{\"policy\":"
                                : "apiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                                  "kind: ClusterResourcePlacement\nmetadata:\n  name: crp-%06ld\n"
                                  "spec:\n  policy:\n";
        fprintf(f, head, i);
        if (i % 20 == 0 && json)
            fprintf(f,
                    "{\"placementType\":\"PickAll\",\"affinity\":{\"clusterAffinity\":{"
                    "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
                    "\"clusterSelectorTerms\":[{\"labelSelector\":{\"matchLabels\":{"
                    "\"fleet.example.com/region\":\"%s\",\"environment\":\"prod\"}}}]}}}}}}\n",
                    fleet_regions[(i / 20) % 5]);
        else if (i % 20 == 0)
            fprintf(f,
                    "    placementType: PickAll\n    affinity:\n      clusterAffinity:\n"
                    "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "          clusterSelectorTerms:\n          - labelSelector:\n"
                    "              matchLabels: {fleet.example.com/region: %s, environment: "
                    "prod}\n",
                    fleet_regions[(i / 20) % 5]);
        else if (json)
            fprintf(f, "{\"placementType\":\"PickN\",\"numberOfClusters\":3,\"affinity\":{"
                       "\"clusterAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
                       "{\"weight\":30,\"preference\":{\"labelSelector\":{\"matchLabels\":{"
                       "\"environment\":\"prod\"}}}},{\"weight\":70,\"preference\":{"
                       "\"propertySorter\":{\"name\":\"kubernetes-fleet.io/node-count\","
                       "\"sortOrder\":\"Descending\"}}}]}},\"topologySpreadConstraints\":[{"
                       "\"maxSkew\":1,\"topologyKey\":\"fleet.example.com/region\","
                       "\"whenUnsatisfiable\":\"DoNotSchedule\"}]}}}\n");
        else
            fprintf(f, "    placementType: PickN\n    numberOfClusters: 3\n    affinity:\n"
                       "      clusterAffinity:\n"
                       "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                       "        - weight: 30\n"
                       "          preference: {labelSelector: {matchLabels: {environment: "
                       "prod}}}\n"
                       "        - weight: 70\n          preference:\n            propertySorter: "
                       "{name: kubernetes-fleet.io/node-count, sortOrder: Descending}\n"
                       "    topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: "
                       "fleet.example.com/region, whenUnsatisfiable: DoNotSchedule}\n");
    }
    done(&p);
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 7 ||
        (strcmp(argv[1], "kube") && strcmp(argv[1], "kube-spread") && strcmp(argv[1], "gardener") &&
         strcmp(argv[1], "openmcp") && strcmp(argv[1], "fleet") &&
         strcmp(argv[1], "kube-antiaffinity"))) {
        fprintf(stderr,
                "usage: trellis-gen kube|kube-spread|kube-antiaffinity|gardener|openmcp|fleet "
                "DIR TARGETS WORKLOADS [SEED] [yaml|json]\n");
        return 2;
    }
    char *end;
    long t = strtol(argv[3], &end, 10);
    long w = *end ? -1 : strtol(argv[4], &end, 10);
    if (t < 0 || w < 0 || *end) {
        fprintf(stderr, "trellis-gen: TARGETS and WORKLOADS must be numbers\n");
        return 2;
    }
    rng = argc > 5 ? strtoull(argv[5], NULL, 10) * 0x9E3779B97F4A7C15ull + 1 : 42;
    int json = argc > 6 && strcmp(argv[6], "json") == 0;
    if (mkdir(argv[2], 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "trellis-gen: %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    if (strcmp(argv[1], "kube") == 0 || strcmp(argv[1], "kube-spread") == 0)
        kube(argv[2], t, w, json, strcmp(argv[1], "kube-spread") == 0);
    else if (strcmp(argv[1], "gardener") == 0)
        gardener(argv[2], t, w, json);
    else if (strcmp(argv[1], "fleet") == 0)
        fleet(argv[2], t, w, json);
    else if (strcmp(argv[1], "kube-antiaffinity") == 0)
        kube_antiaffinity(argv[2], t, w, json);
    else
        openmcp(argv[2], t, w, json);
    return 0;
}
