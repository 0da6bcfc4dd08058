/*
 * podres.c - requests and allocatable over every resource name.
 *
 * Amount lists are small (a Pod requests a handful of resources), so they
 * are arrays searched linearly; all of it runs once per object.
 */
#include "podres.h"

#include <stdio.h>
#include <string.h>

#include "values.h"

int podres_setup(const trellis_host *h, const trellis_args *a, intern *t, podres_fields *f,
                 char *err, size_t errlen)
{
    static const char *const names[] = {"cpu", "memory", "ephemeral-storage", "pods"};

    for (int i = 0; i < PODRES_WELL_KNOWN; i++) {
        if (intern_id(t, names[i]) != i) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    f->containers = h->arg_string(a, "containers_field");
    f->init_containers = h->arg_string(a, "init_containers_field");
    f->overhead = h->arg_string(a, "overhead_field");
    f->allocatable = h->arg_string(a, "allocatable_field");
    f->phase = h->arg_string(a, "phase_field");
    if (values_check_path("containers_field", f->containers, err, errlen) < 0 ||
        values_check_path("init_containers_field", f->init_containers, err, errlen) < 0 ||
        values_check_path("overhead_field", f->overhead, err, errlen) < 0 ||
        values_check_path("allocatable_field", f->allocatable, err, errlen) < 0 ||
        values_check_path("phase_field", f->phase, err, errlen) < 0)
        return -1;
    return 0;
}

static int find(const podres_list *l, int32_t id)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->id[i] == id)
            return (int)i;
    }
    return -1;
}

int64_t podres_get(const podres_list *l, int32_t id)
{
    int i = find(l, id);

    return i < 0 ? 0 : l->v[i];
}

int podres_has(const podres_list *l, int32_t id)
{
    return find(l, id) >= 0;
}

/* The slot of id in l, added (amount 0) when absent; -1 when full. */
static int slot(podres_list *l, int32_t id)
{
    int i = find(l, id);

    if (i >= 0)
        return i;
    if (l->n == PODRES_MAX)
        return -1;
    l->id[l->n] = id;
    l->v[l->n] = 0;
    return (int)l->n++;
}

static int too_many(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: more than %d distinct resources", path, PODRES_MAX);
    return -1;
}

static int add(podres_list *dst, const podres_list *src, const char *path, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < src->n; i++) {
        int k = slot(dst, src->id[i]);

        if (k < 0)
            return too_many(path, err, errlen);
        if (src->v[i] > INT64_MAX - dst->v[k]) {
            snprintf(err, errlen, "%s: the total request is too large", path);
            return -1;
        }
        dst->v[k] += src->v[i];
    }
    return 0;
}

static int maxof(podres_list *dst, const podres_list *src, const char *path, char *err,
                 size_t errlen)
{
    for (uint32_t i = 0; i < src->n; i++) {
        int k = slot(dst, src->id[i]);

        if (k < 0)
            return too_many(path, err, errlen);
        if (src->v[i] > dst->v[k])
            dst->v[k] = src->v[i];
    }
    return 0;
}

typedef struct walk {
    const trellis_host *h;
    intern *t;
    podres_list *l;
    const char *path;
    int skip_present; /* limits: only resources without a request */
    podres_list *present;
    char *err;
    size_t errlen;
} walk;

static int member(const char *key, const trellis_value *v, void *ud)
{
    walk *w = ud;
    char path[320];
    int32_t id;
    int64_t amount;
    int k;

    values_member_path(path, sizeof(path), w->path, key, ".");
    id = intern_id(w->t, key);
    if (id < 0) {
        snprintf(w->err, w->errlen, "%s: out of memory", path);
        return -1;
    }
    if (w->skip_present && podres_has(w->present, id))
        return 0;
    if (res_value_quantity(w->h, v, res_unit_of(key), path, &amount, w->err, w->errlen) < 0)
        return -1;
    k = slot(w->l, id);
    if (k < 0)
        return too_many(w->path, w->err, w->errlen);
    w->l->v[k] = amount;
    return 0;
}

/* A map of quantities at path (absent or null: empty) into l. */
static int read_map(const trellis_host *h, const trellis_value *map, const char *path, intern *t,
                    podres_list *l, podres_list *present, char *err, size_t errlen)
{
    walk w = {h, t, l, path, present != NULL, present, err, errlen};
    int rc = values_expect(h, map, TRELLIS_VALUE_MAP, "a map of quantities", path, err, errlen);

    if (rc <= 0)
        return rc;
    return h->value_foreach(map, member, &w) ? -1 : 0;
}

/* One container's requests (limits standing in for missing requests;
 * with nonzero, kube's defaults for missing cpu and memory). */
static int container(const trellis_host *h, const trellis_value *c, const char *path, intern *t,
                     int nonzero, podres_list *out, char *err, size_t errlen)
{
    const trellis_value *res;
    podres_list limits;
    char sub[340];

    out->n = 0;
    if (h->value_type(c) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "%s: expected a map, got %s", path,
                 values_type_name(h->value_type(c)));
        return -1;
    }
    res = h->value_get(c, "resources");
    if (res && h->value_type(res) != TRELLIS_VALUE_NULL) {
        if (h->value_type(res) != TRELLIS_VALUE_MAP) {
            snprintf(err, errlen, "%s.resources: expected a map, got %s", path,
                     values_type_name(h->value_type(res)));
            return -1;
        }
        snprintf(sub, sizeof(sub), "%s.resources.requests", path);
        if (read_map(h, h->value_get(res, "requests"), sub, t, out, NULL, err, errlen) < 0)
            return -1;
        limits.n = 0;
        snprintf(sub, sizeof(sub), "%s.resources.limits", path);
        if (read_map(h, h->value_get(res, "limits"), sub, t, &limits, out, err, errlen) < 0 ||
            add(out, &limits, path, err, errlen) < 0)
            return -1;
    }
    if (nonzero) {
        int k;

        if (!podres_has(out, PODRES_CPU) && (k = slot(out, PODRES_CPU)) >= 0)
            out->v[k] = PODRES_DEFAULT_MILLI_CPU;
        if (!podres_has(out, PODRES_MEMORY) && (k = slot(out, PODRES_MEMORY)) >= 0)
            out->v[k] = PODRES_DEFAULT_MEMORY;
    }
    return 0;
}

static const trellis_value *list_at(const trellis_host *h, const trellis_object *o,
                                    const char *field, int *bad, char *err, size_t errlen)
{
    const trellis_value *v = h->object_get(o, field);
    int rc = values_expect(h, v, TRELLIS_VALUE_LIST, "a list", field, err, errlen);

    *bad = rc < 0;
    return rc > 0 ? v : NULL;
}

int podres_requests(const trellis_host *h, const podres_fields *f, const trellis_object *pod,
                    intern *t, int nonzero, podres_list *out, char *err, size_t errlen)
{
    podres_list one, sidecars = {0}, init_max = {0}, overhead = {0};
    const trellis_value *list;
    char path[320];
    int bad;

    out->n = 0;
    list = list_at(h, pod, f->containers, &bad, err, errlen);
    if (bad)
        return -1;
    for (size_t i = 0; list && i < h->value_len(list); i++) {
        snprintf(path, sizeof(path), "%s[%zu]", f->containers, i);
        if (container(h, h->value_at(list, i), path, t, nonzero, &one, err, errlen) < 0 ||
            add(out, &one, path, err, errlen) < 0)
            return -1;
    }
    list = list_at(h, pod, f->init_containers, &bad, err, errlen);
    if (bad)
        return -1;
    for (size_t i = 0; list && i < h->value_len(list); i++) {
        const trellis_value *c = h->value_at(list, i), *rp;
        const char *policy;

        snprintf(path, sizeof(path), "%s[%zu]", f->init_containers, i);
        if (container(h, c, path, t, nonzero, &one, err, errlen) < 0)
            return -1;
        rp = h->value_get(c, "restartPolicy");
        policy = rp ? h->value_string(rp) : NULL;
        if (policy && strcmp(policy, "Always") == 0) {
            if (add(out, &one, path, err, errlen) < 0 ||
                add(&sidecars, &one, path, err, errlen) < 0)
                return -1;
            one = sidecars;
        } else if (add(&one, &sidecars, path, err, errlen) < 0) {
            return -1;
        }
        if (maxof(&init_max, &one, path, err, errlen) < 0)
            return -1;
    }
    if (maxof(out, &init_max, f->init_containers, err, errlen) < 0)
        return -1;
    if (read_map(h, h->object_get(pod, f->overhead), f->overhead, t, &overhead, NULL, err, errlen) <
            0 ||
        add(out, &overhead, f->overhead, err, errlen) < 0)
        return -1;
    return 0;
}

int podres_allocatable(const trellis_host *h, const podres_fields *f, const trellis_object *node,
                       intern *t, podres_list *out, char *err, size_t errlen)
{
    out->n = 0;
    return read_map(h, h->object_get(node, f->allocatable), f->allocatable, t, out, NULL, err,
                    errlen);
}

int podres_terminal(const trellis_host *h, const podres_fields *f, const trellis_object *pod)
{
    const trellis_value *v = h->object_get(pod, f->phase);
    const char *p = v ? h->value_string(v) : NULL;

    return p && (strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0);
}

int podres_is_extended(const char *name)
{
    /* native: no domain, or a kubernetes.io/ one */
    if (!strchr(name, '/') || strstr(name, "kubernetes.io/"))
        return 0;
    return strncmp(name, "requests.", 9) != 0;
}

int podres_is_scalar(const char *name)
{
    return podres_is_extended(name) || strncmp(name, "hugepages-", 10) == 0 ||
           strstr(name, "kubernetes.io/") != NULL || strncmp(name, "attachable-volumes-", 19) == 0;
}
