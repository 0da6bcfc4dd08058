/*
 * image_locality.c - the image-locality plugin: kube-scheduler's
 * ImageLocality (pkg/scheduler/framework/plugins/imagelocality).
 *
 * Score: for each container and init container of the Pod whose image the
 * Node holds (status.images[].names), the image's size scaled by its
 * spread: sizeBytes * (Nodes holding it / all Nodes), truncated to an
 * integer per container; the sum is clamped between 23 MiB and 1000 MiB
 * times the number of containers and init containers, and mapped onto
 * 0..100: 100 * (sum - 23 MiB) / (max - 23 MiB), integer division. A
 * container's image is compared as kube normalizes it: ":latest" is added
 * when the name has no tag after its last '/' (a digest, "@sha256:...",
 * counts as a tag); nothing else (no "docker.io/library/" is added or
 * removed, as in kube). Node image names are taken as written.
 *
 * The spread depends on every Node, so it is not worked out per (Pod,
 * Node): score and score_span only note, as a bit set, which of the Pod's
 * distinct images the Node holds, which depends on the Pod and the Node
 * alone (the host's equivalence cache may reuse it); pre_score reads the
 * number of Nodes holding each image from a table built once per snapshot
 * (rebuilt only when a Node was prepared again, appeared or went away),
 * and normalize turns the bit sets into scores. The table also lists the
 * Nodes holding each image, so that when many Nodes are feasible
 * pre_score writes every Node's bit set into a column in one pass over
 * those lists, and score_span reads it, instead of looking the Pod's
 * images up in every Node's list. A Pod with more distinct
 * images than the bit set holds is scored directly and never equivalent.
 * Nodes that report different sizes for one image name: the first Node by
 * name gives the size (kube: the first Node its cache saw).
 */
/* the oldest host it runs on: the columnar hooks of SDK 1.3 */
#define TRELLIS_PLUGIN_MIN_MINOR 3

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

#define MB (INT64_C(1024) * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)
/* distinct images of a Pod that fit the bit set of a raw score */
#define MASK_IMAGES 62

/* The per-snapshot table: Nodes holding each image id, and its size. */
typedef struct spread_table {
    uint64_t gen;   /* the prepare generation it was built at */
    size_t n_nodes; /* the snapshot's Nodes */
    int built;
    uint32_t cap;
    uint32_t *count; /* by image id */
    int64_t *size;   /* by image id; -1: not seen */
    /* the snapshot indices of the Nodes holding image id: at[first[id]]
     * .. at[first[id] + count[id]) */
    uint32_t *first;
    uint32_t *at;
    size_t n_at, cap_at;
    /* the per-cycle column of raw scores by snapshot index (pre_score
     * writes it, score_span reads it) */
    int64_t *col;
    size_t cap_col;
} spread_table;

typedef struct config {
    const char *containers, *init_containers, *images; /* host-owned */
    intern ids;                                        /* image names; written in prepare only */
    /* bumped by every prepare_target and every release of a Node's data,
     * so that a snapshot whose Nodes were prepared again is noticed */
    uint64_t gen;
    spread_table spread; /* main thread (pre_score) only */
} config;

enum { KIND_POD = 1, KIND_NODE };

/* A Node: the ids of the image names it holds, ascending, and the size of
 * each. */
typedef struct node_images {
    int kind;
    uint32_t n;
    int64_t *size; /* n sizes, in the same allocation after id */
    int32_t id[];  /* n ids, ascending */
} node_images;

/* A Pod: its distinct normalized images, how many containers use each,
 * and the number of containers and init containers. */
typedef struct pod_images {
    int kind;
    uint32_t n;
    uint32_t containers;
    int32_t *id;
    uint32_t *uses;
} pod_images;

/* What pre_score hands score and normalize. */
typedef struct cycle_data {
    const pod_images *pod;
    int64_t *weight; /* per distinct image: uses * scaled size */
    /* the raw scores of every Node by snapshot index, worked out from the
     * table's lists when that is cheaper than a lookup per feasible Node;
     * NULL: look each Node up */
    const int64_t *col;
} cycle_data;

static const trellis_arg_spec args_table[] = {
    {"containers_field", TRELLIS_ARG_STRING, "spec.containers",
     "dotted path of the workload's containers list"},
    {"init_containers_field", TRELLIS_ARG_STRING, "spec.initContainers",
     "dotted path of the workload's init containers list"},
    {"images_field", TRELLIS_ARG_STRING, "status.images",
     "dotted path of the target's images: [{names: [...], sizeBytes}]"},
    {NULL, 0, NULL, NULL},
};

static void config_free(void *p)
{
    config *cfg = p;

    if (!cfg)
        return;
    intern_free(&cfg->ids);
    free(cfg->spread.count);
    free(cfg->spread.size);
    free(cfg->spread.first);
    free(cfg->spread.at);
    free(cfg->spread.col);
    free(cfg);
}

/* ---- Pods --------------------------------------------------------------- */

/* kube's normalizedImageName: ":latest" when no ':' follows the last '/'. */
static int32_t image_id(config *cfg, const char *name)
{
    const char *colon = strrchr(name, ':'), *slash = strrchr(name, '/');
    size_t len = strlen(name);
    char *full;
    int32_t id;

    if (colon && (!slash || colon > slash))
        return intern_id(&cfg->ids, name);
    full = malloc(len + sizeof ":latest");
    if (!full)
        return -1;
    memcpy(full, name, len);
    memcpy(full + len, ":latest", sizeof ":latest");
    id = intern_id(&cfg->ids, full);
    free(full);
    return id;
}

static void pod_free(pod_images *p)
{
    if (!p)
        return;
    free(p->id);
    free(p->uses);
    free(p);
}

/* Add the images of the containers list at `field` to p. */
static int add_containers(config *cfg, const trellis_object *obj, const char *field, pod_images *p,
                          size_t *cap, char *err, size_t errlen)
{
    const trellis_value *list = host->object_get(obj, field);
    int rc =
        values_expect(host, list, TRELLIS_VALUE_LIST, "a list of containers", field, err, errlen);

    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < host->value_len(list); i++) {
        const trellis_value *c = host->value_at(list, i);
        const trellis_value *img =
            host->value_type(c) == TRELLIS_VALUE_MAP ? host->value_get(c, "image") : NULL;
        const char *name;
        int32_t id;
        uint32_t k;

        if (host->value_type(c) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s[%zu]: expected a container (a map), got %s", field, i,
                     values_type_name(host->value_type(c)));
            return -1;
        }
        p->containers++;
        if (!img || host->value_type(img) == TRELLIS_VALUE_NULL)
            continue; /* no image: nothing a Node can hold */
        name = host->value_type(img) == TRELLIS_VALUE_STRING ? host->value_string(img) : NULL;
        if (!name) {
            snprintf(err, errlen, "%s[%zu].image: expected a string, got %s", field, i,
                     values_type_name(host->value_type(img)));
            return -1;
        }
        id = image_id(cfg, name);
        if (id < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (k = 0; k < p->n && p->id[k] != id; k++)
            ;
        if (k == p->n) {
            if (p->n == *cap) {
                size_t nc = *cap ? *cap * 2 : 4;
                int32_t *ids = realloc(p->id, nc * sizeof(*ids));
                uint32_t *uses;

                if (!ids) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                p->id = ids;
                uses = realloc(p->uses, nc * sizeof(*uses));
                if (!uses) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                p->uses = uses;
                *cap = nc;
            }
            p->id[k] = id;
            p->uses[k] = 0;
            p->n++;
        }
        p->uses[k]++;
    }
    return 0;
}

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    config *cfg = host->get_private(self);
    pod_images *p = calloc(1, sizeof(*p));
    size_t cap = 0;

    *data = NULL;
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->kind = KIND_POD;
    if (add_containers(cfg, obj, cfg->init_containers, p, &cap, err, errlen) < 0 ||
        add_containers(cfg, obj, cfg->containers, p, &cap, err, errlen) < 0) {
        pod_free(p);
        return -1;
    }
    *data = p;
    return 0;
}

/* ---- Nodes -------------------------------------------------------------- */

static void node_free(node_images *n)
{
    free(n);
}

/* A Node of room for names ids and sizes, in one block: the score's
 * lookup touches one allocation. */
static node_images *node_new(size_t names)
{
    size_t ids = (names * sizeof(int32_t) + sizeof(int64_t) - 1) / sizeof(int64_t);
    node_images *n =
        calloc(1, sizeof(*n) + ids * sizeof(int64_t) + (names ? names : 1) * sizeof(int64_t));

    if (!n)
        return NULL;
    n->kind = KIND_NODE;
    n->size = (int64_t *)(void *)((char *)n + sizeof(*n) + ids * sizeof(int64_t));
    return n;
}

/* Insert (id, size) into n, ascending by id; a name listed twice keeps
 * its first size. */
static void node_insert(node_images *n, int32_t id, int64_t size)
{
    uint32_t k = n->n;

    while (k > 0 && n->id[k - 1] > id)
        k--;
    if (k > 0 && n->id[k - 1] == id)
        return;
    memmove(n->id + k + 1, n->id + k, (n->n - k) * sizeof(*n->id));
    memmove(n->size + k + 1, n->size + k, (n->n - k) * sizeof(*n->size));
    n->id[k] = id;
    n->size[k] = size;
    n->n++;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    config *cfg = host->get_private(self);
    const trellis_value *list = host->object_get(obj, cfg->images);
    node_images *n;
    size_t names = 0;
    int rc;

    cfg->gen++;
    *data = NULL;
    rc = values_expect(host, list, TRELLIS_VALUE_LIST, "a list of {names, sizeBytes}", cfg->images,
                       err, errlen);
    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < host->value_len(list); i++) {
        const trellis_value *img = host->value_at(list, i);
        const trellis_value *nl =
            host->value_type(img) == TRELLIS_VALUE_MAP ? host->value_get(img, "names") : NULL;

        if (host->value_type(img) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s[%zu]: expected a map {names, sizeBytes}, got %s", cfg->images,
                     i, values_type_name(host->value_type(img)));
            return -1;
        }
        if (nl && host->value_type(nl) == TRELLIS_VALUE_LIST)
            names += host->value_len(nl);
    }
    n = node_new(names);
    if (!n) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < host->value_len(list); i++) {
        const trellis_value *img = host->value_at(list, i);
        const trellis_value *nl = host->value_get(img, "names");
        const trellis_value *sz = host->value_get(img, "sizeBytes");
        char path[128];
        int64_t size = 0;

        snprintf(path, sizeof(path), "%s[%zu].names", cfg->images, i);
        rc =
            values_expect(host, nl, TRELLIS_VALUE_LIST, "a list of image names", path, err, errlen);
        if (rc < 0) {
            node_free(n);
            return -1;
        }
        if (sz && host->value_type(sz) != TRELLIS_VALUE_NULL &&
            (host->value_type(sz) != TRELLIS_VALUE_INT || host->value_int(sz, &size) < 0 ||
             size < 0)) {
            const char *text = host->value_string(sz);

            snprintf(err, errlen, "%s[%zu].sizeBytes: expected a number of bytes, got '%s'",
                     cfg->images, i, text ? text : "a list or map");
            node_free(n);
            return -1;
        }
        for (size_t k = 0; rc > 0 && k < host->value_len(nl); k++) {
            const trellis_value *v = host->value_at(nl, k);
            const char *name =
                host->value_type(v) == TRELLIS_VALUE_STRING ? host->value_string(v) : NULL;
            int32_t id;

            if (!name) {
                snprintf(err, errlen, "%s[%zu]: expected a string, got %s", path, k,
                         values_type_name(host->value_type(v)));
                node_free(n);
                return -1;
            }
            id = intern_id(&cfg->ids, name);
            if (id < 0) {
                snprintf(err, errlen, "out of memory");
                node_free(n);
                return -1;
            }
            node_insert(n, id, size);
        }
    }
    *data = n;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    int *kind = data;

    if (!kind)
        return;
    if (*kind == KIND_NODE) {
        config *cfg = host->get_private(self);

        cfg->gen++;
        node_free(data);
    } else {
        pod_free(data);
    }
}

/* Whether the Node's sorted ids hold id. */
static int node_has(const node_images *n, int32_t id)
{
    uint32_t lo = 0, hi = n->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (n->id[mid] == id)
            return 1;
        if (n->id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* ---- the spread, once per snapshot ------------------------------------- */

/* The table of Nodes holding each image, for the cycle's snapshot. */
static spread_table *spread_for(trellis_plugin *self, config *cfg, trellis_cycle *c)
{
    spread_table *t = &cfg->spread;
    size_t n = host->cycle_target_count(c);
    void *const *data;
    uint32_t ids = intern_count(&cfg->ids), had = t->cap;
    int same = t->built && t->gen == cfg->gen && t->n_nodes == n;

    if (same && ids <= t->cap)
        return t; /* no Node prepared, added or gone since */
    if (ids > t->cap) {
        uint32_t cap = ids + ids / 2 + 16;
        uint32_t *count = realloc(t->count, cap * sizeof(*count)), *first;
        int64_t *size;

        if (!count)
            return NULL;
        t->count = count;
        size = realloc(t->size, cap * sizeof(*size));
        if (!size)
            return NULL;
        t->size = size;
        first = realloc(t->first, cap * sizeof(*first));
        if (!first)
            return NULL;
        t->first = first;
        t->cap = cap;
    }
    /* images no Node had when the table was built (a new Pod's): none */
    memset(t->count + had, 0, (t->cap - had) * sizeof(*t->count));
    memset(t->first + had, 0, (t->cap - had) * sizeof(*t->first));
    for (uint32_t i = had; i < t->cap; i++)
        t->size[i] = -1;
    if (same)
        return t;
    memset(t->count, 0, t->cap * sizeof(*t->count));
    for (uint32_t i = 0; i < t->cap; i++)
        t->size[i] = -1;
    data = host->cycle_target_data(c, self);
    t->n_at = 0;
    for (size_t i = 0; data && i < n; i++) {
        const node_images *ni = data[i];

        for (uint32_t k = 0; ni && k < ni->n; k++) {
            t->count[ni->id[k]]++;
            if (t->size[ni->id[k]] < 0)
                t->size[ni->id[k]] = ni->size[k];
        }
        t->n_at += ni ? ni->n : 0;
    }
    if (t->n_at > t->cap_at) {
        uint32_t *at = realloc(t->at, t->n_at * sizeof(*at));

        if (!at) {
            t->built = 0;
            return NULL;
        }
        t->at = at;
        t->cap_at = t->n_at;
    }
    /* counting sort: each image's Nodes, in snapshot order */
    for (uint32_t i = 0, off = 0; i < t->cap; i++) {
        t->first[i] = off;
        off += t->count[i];
    }
    for (size_t i = 0; data && i < n; i++) {
        const node_images *ni = data[i];

        for (uint32_t k = 0; ni && k < ni->n; k++)
            t->at[t->first[ni->id[k]]++] = (uint32_t)i;
    }
    for (uint32_t i = 0; i < t->cap; i++)
        t->first[i] -= t->count[i];
    t->gen = cfg->gen;
    t->n_nodes = n;
    t->built = 1;
    return t;
}

/* kube's calculatePriority. */
static int64_t priority(int64_t sum, uint32_t containers)
{
    int64_t max = MAX_CONTAINER_THRESHOLD * (int64_t)containers;

    if (sum < MIN_THRESHOLD)
        sum = MIN_THRESHOLD;
    else if (sum > max)
        sum = max;
    return TRELLIS_MAX_SCORE * (sum - MIN_THRESHOLD) / (max - MIN_THRESHOLD);
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    config *cfg = host->get_private(self);
    const pod_images *p = host->object_data(self, workload);
    spread_table *t;
    cycle_data *cd;
    size_t total = host->cycle_target_count(c), entries = 0;
    int any = 0;

    if (!p || !p->n || !total)
        return TRELLIS_SKIP;
    t = spread_for(self, cfg, c);
    cd = host->cycle_alloc(c, sizeof(*cd));
    if (!t || !cd || !(cd->weight = host->cycle_alloc(c, p->n * sizeof(*cd->weight))))
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", "out of memory");
    cd->pod = p;
    for (uint32_t k = 0; k < p->n; k++) {
        uint32_t id = (uint32_t)p->id[k];
        uint32_t count = id < t->cap ? t->count[id] : 0;
        double spread = (double)count / (double)total;

        /* kube's scaledImageScore, once per container using the image */
        cd->weight[k] = count ? (int64_t)p->uses[k] * (int64_t)((double)t->size[id] * spread) : 0;
        any |= count > 0;
        entries += count;
    }
    if (!any)
        return TRELLIS_SKIP; /* no Node holds any of them: every score is 0 */
    /* Walking the table's lists of the Pod's images (and clearing a
     * column of every Node) costs about entries + total / 8 steps; looking
     * each feasible Node up, a few cache misses per Node and image. */
    if (total / 8 + entries <= 8 * n * p->n) {
        if (total > t->cap_col) {
            int64_t *col = realloc(t->col, total * sizeof(*col));

            if (!col)
                return host->status(st, TRELLIS_ERROR, "OutOfMemory", "out of memory");
            t->col = col;
            t->cap_col = total;
        }
        memset(t->col, 0, total * sizeof(*t->col));
        for (uint32_t k = 0; k < p->n; k++) {
            uint32_t id = (uint32_t)p->id[k];
            const uint32_t *at;
            uint32_t count;

            if (!cd->weight[k])
                continue; /* held nowhere, or adds 0: as if not held */
            at = t->at + t->first[id];
            count = t->count[id];
            if (p->n > MASK_IMAGES)
                for (uint32_t j = 0; j < count; j++)
                    t->col[at[j]] += cd->weight[k];
            else
                for (uint32_t j = 0; j < count; j++)
                    t->col[at[j]] |= INT64_C(1) << k;
        }
        cd->col = t->col;
    }
    host->cycle_set(c, self, cd);
    return TRELLIS_SUCCESS;
}

/* The raw score of one Node: the bit set of the Pod's images it holds,
 * or, for a Pod of more images than the bit set has, the score itself. */
static int64_t raw_score(const cycle_data *cd, const node_images *ni)
{
    const pod_images *p = cd->pod;
    int64_t mask = 0, sum = 0;

    if (!ni)
        return p->n > MASK_IMAGES ? priority(0, p->containers) : 0;
    if (p->n > MASK_IMAGES) {
        for (uint32_t k = 0; k < p->n; k++)
            if (cd->weight[k] && node_has(ni, p->id[k]))
                sum += cd->weight[k];
        return priority(sum, p->containers);
    }
    for (uint32_t k = 0; k < p->n; k++)
        if (cd->weight[k] && node_has(ni, p->id[k]))
            mask |= INT64_C(1) << k;
    return mask;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    const cycle_data *cd = host->cycle_get(c, self);

    *out = cd ? raw_score(cd, host->object_data(self, host->target_object(target))) : 0;
    return TRELLIS_SUCCESS;
}

static void score_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       const uint32_t *idx, size_t n, int64_t *scores)
{
    const cycle_data *cd = host->cycle_get(c, self);
    void *const *data = host->cycle_target_data(c, self);

    if (cd && cd->col && cd->pod->n > MASK_IMAGES) {
        for (size_t j = 0; j < n; j++)
            scores[j] = priority(cd->col[idx[j]], cd->pod->containers);
        return;
    }
    if (cd && cd->col) {
        for (size_t j = 0; j < n; j++)
            scores[j] = cd->col[idx[j]];
        return;
    }
    for (size_t j = 0; j < n; j++)
        scores[j] = cd && data ? raw_score(cd, data[idx[j]]) : 0;
}

/* Pods of at most this many distinct images get a table of the score of
 * every bit set, so that normalize divides once per bit set, not per
 * Node. */
#define TABLE_IMAGES 8

static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    const cycle_data *cd = host->cycle_get(c, self);
    int64_t table[1u << TABLE_IMAGES];

    if (!cd || cd->pod->n > MASK_IMAGES)
        return TRELLIS_SUCCESS; /* scored directly (or 0 everywhere) */
    if (cd->pod->n <= TABLE_IMAGES) {
        uint32_t sets = 1u << cd->pod->n;

        for (uint32_t m = 0; m < sets; m++) {
            int64_t sum = 0;

            for (uint32_t k = 0; k < cd->pod->n; k++)
                if (m & (1u << k))
                    sum += cd->weight[k];
            table[m] = priority(sum, cd->pod->containers);
        }
        for (size_t j = 0; j < n; j++)
            scores[j] = (uint64_t)scores[j] < sets ? table[scores[j]] : 0;
        return TRELLIS_SUCCESS;
    }
    for (size_t j = 0; j < n; j++) {
        uint64_t mask = (uint64_t)scores[j];
        int64_t sum = 0;

        while (mask) {
            sum += cd->weight[__builtin_ctzll(mask)];
            mask &= mask - 1;
        }
        scores[j] = priority(sum, cd->pod->containers);
    }
    return TRELLIS_SUCCESS;
}

static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const pod_images *x = host->object_data(self, a), *y = host->object_data(self, b);

    if (!x || !y)
        return x == y;
    if (x->n > MASK_IMAGES || x->n != y->n || x->containers != y->containers)
        return 0;
    /* no images: no arrays to compare (they may be NULL) */
    return !x->n || (memcmp(x->id, y->id, x->n * sizeof(*x->id)) == 0 &&
                     memcmp(x->uses, y->uses, x->n * sizeof(*x->uses)) == 0);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, config_free);
    cfg->containers = h->arg_string(args, "containers_field");
    cfg->init_containers = h->arg_string(args, "init_containers_field");
    cfg->images = h->arg_string(args, "images_field");
    if (values_check_path("containers_field", cfg->containers, err, errlen) < 0 ||
        values_check_path("init_containers_field", cfg->init_containers, err, errlen) < 0 ||
        values_check_path("images_field", cfg->images, err, errlen) < 0)
        return -1;
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->register_pre_score(self, pre_score) < 0 ||
        h->register_score(self, score) < 0 || h->register_score_span(self, score_span) < 0 ||
        h->register_normalize(self, normalize) < 0 ||
        h->register_equivalent(self, equivalent) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "image-locality",
    "1.0.0",
    "kube-scheduler's ImageLocality: prefers targets that hold the workload's images, "
    "weighted by size and spread",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, image_locality)
