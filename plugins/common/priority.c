/*
 * priority.c - reading a workload's priority (see priority.h).
 *
 * The range is Kubernetes' (int32) so that a manifest that the API server
 * would refuse is refused here too, with the field named, instead of being
 * scheduled with a priority no real cluster could have.
 */
#include "priority.h"

#include <stdio.h>
#include <string.h>

#include "values.h"

/* Kubernetes' built-in classes (scheduling.SystemCriticalPriority + 1000
 * and + 0), which every API server creates. */
static const struct {
    const char *name;
    int64_t value;
} builtin_classes[] = {
    {"system-node-critical", 2000001000},
    {"system-cluster-critical", 2000000000},
};

/* The int32 at v (what names it) into *out: 1, 0 when absent or null, -1
 * with err. */
static int read_int32(const trellis_host *h, const trellis_value *v, const char *what, int64_t *out,
                      char *err, size_t errlen)
{
    const char *text;
    int64_t p;

    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    if ((h->value_type(v) == TRELLIS_VALUE_INT || h->value_type(v) == TRELLIS_VALUE_STRING) &&
        h->value_int(v, &p) == 0) {
        if (p < INT32_MIN || p > INT32_MAX) {
            snprintf(err, errlen, "%s: expected an integer from %ld to %ld, got %lld", what,
                     (long)INT32_MIN, (long)INT32_MAX, (long long)p);
            return -1;
        }
        *out = p;
        return 1;
    }
    text = h->value_string(v);
    snprintf(err, errlen, "%s: expected an integer, got '%s'", what, text ? text : "a list or map");
    return -1;
}

int priority_read(const trellis_host *h, const trellis_object *w, const char *field, int64_t *out,
                  char *err, size_t errlen)
{
    *out = 0;
    return read_int32(h, h->object_get(w, field), field, out, err, errlen) < 0 ? -1 : 0;
}

/* The policy at v (what names it): 1 with *never set, 0 when absent, -1
 * with err. */
static int read_policy(const trellis_host *h, const trellis_value *v, const char *what, int *never,
                       char *err, size_t errlen)
{
    const char *policy;

    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL)
        return 0;
    policy = h->value_string(v);
    if (!policy || (strcmp(policy, "Never") != 0 && strcmp(policy, "PreemptLowerPriority") != 0)) {
        snprintf(err, errlen, "%s: expected PreemptLowerPriority or Never, got '%s'", what,
                 policy ? policy : "a list or map");
        return -1;
    }
    *never = strcmp(policy, "Never") == 0;
    return 1;
}

/* A class object's value and policy. */
static int read_class(const trellis_host *h, const priority_source *src, const trellis_object *pc,
                      int64_t *prio, int *never, char *err, size_t errlen)
{
    char what[192];
    int rc;

    snprintf(what, sizeof(what), "%s %s: value", src->class_kind, h->object_name(pc));
    rc = read_int32(h, h->object_get(pc, "value"), what, prio, err, errlen);
    if (rc == 0)
        snprintf(err, errlen, "%s: missing (a %s needs an integer value)", what, src->class_kind);
    if (rc <= 0)
        return -1;
    snprintf(what, sizeof(what), "%s %s: preemptionPolicy", src->class_kind, h->object_name(pc));
    return read_policy(h, h->object_get(pc, "preemptionPolicy"), what, never, err, errlen) < 0 ? -1
                                                                                               : 0;
}

typedef struct default_ctx {
    const trellis_host *h;
    const trellis_object *best;
    int64_t best_value;
} default_ctx;

static int default_one(const trellis_object *o, void *ud)
{
    default_ctx *d = ud;
    const trellis_value *g = d->h->object_get(o, "globalDefault");
    const trellis_value *v = d->h->object_get(o, "value");
    int on = 0;
    int64_t value;

    if (!g || d->h->value_bool(g, &on) < 0 || !on || !v || d->h->value_int(v, &value) < 0)
        return 0; /* a malformed default is read (and refused) when it is the one */
    if (!d->best || value < d->best_value) {
        d->best = o;
        d->best_value = value;
    }
    return 0;
}

int priority_resolve(const trellis_host *h, const trellis_plugin *self, const priority_source *src,
                     const trellis_object *w, int64_t *prio, int *never, char *err, size_t errlen)
{
    int have_prio, have_policy = 0, n = 0;
    int64_t cprio = 0;
    int cnever = 0;
    const trellis_value *cv;
    const char *cname;

    *prio = 0;
    if (never)
        *never = 0;
    have_prio = read_int32(h, h->object_get(w, src->priority_field), src->priority_field, prio, err,
                           errlen);
    if (have_prio < 0)
        return -1;
    if (never && src->policy_field) {
        have_policy = read_policy(h, h->object_get(w, src->policy_field), src->policy_field, never,
                                  err, errlen);
        if (have_policy < 0)
            return -1;
    }
    if (!src->class_field || (have_prio && (have_policy || !never || !src->policy_field)))
        return 0; /* admitted already: what kube-scheduler reads */
    cv = h->object_get(w, src->class_field);
    cname = cv ? h->value_string(cv) : NULL;
    if (cv && h->value_type(cv) != TRELLIS_VALUE_NULL &&
        h->value_type(cv) != TRELLIS_VALUE_STRING) {
        snprintf(err, errlen, "%s: expected a class name, got %s", src->class_field,
                 values_type_name(h->value_type(cv)));
        return -1;
    }
    if (cname && *cname) {
        const trellis_object *pc = h->lookup_object(self, src->class_kind, "", cname);

        if (pc) {
            if (read_class(h, src, pc, &cprio, &cnever, err, errlen) < 0)
                return -1;
        } else {
            for (n = 0; n < (int)(sizeof(builtin_classes) / sizeof(builtin_classes[0])); n++)
                if (strcmp(builtin_classes[n].name, cname) == 0)
                    break;
            if (n == (int)(sizeof(builtin_classes) / sizeof(builtin_classes[0]))) {
                if (have_prio)
                    return 0; /* admitted when the class still existed */
                snprintf(err, errlen,
                         "%s: no %s '%s' (the API server's Priority admission refuses such a "
                         "Pod: create the %s or name an existing one)",
                         src->class_field, src->class_kind, cname, src->class_kind);
                return -1;
            }
            cprio = builtin_classes[n].value;
        }
    } else {
        default_ctx d = {h, NULL, 0};

        h->foreach_object(self, src->class_kind, NULL, default_one, &d);
        if (d.best && read_class(h, src, d.best, &cprio, &cnever, err, errlen) < 0)
            return -1;
    }
    if (!have_prio)
        *prio = cprio;
    if (never && !have_policy)
        *never = cnever;
    return 0;
}

int priority_setup(trellis_plugin *self, const trellis_host *h, const trellis_args *args,
                   int with_policy, priority_source *src, char *err, size_t errlen)
{
    const char *kinds[2];

    memset(src, 0, sizeof(*src));
    src->priority_field = h->arg_string(args, "priority_field");
    src->class_field = h->arg_string(args, "priority_class_field");
    src->class_kind = h->arg_string(args, "priority_class_kind");
    if (with_policy)
        src->policy_field = h->arg_string(args, "policy_field");
    if (values_check_path("priority_field", src->priority_field, err, errlen) < 0 ||
        (with_policy && values_check_path("policy_field", src->policy_field, err, errlen) < 0))
        return -1;
    if (!src->class_field || !*src->class_field) {
        src->class_field = NULL;
        return 0;
    }
    if (!src->class_kind || !*src->class_kind) {
        snprintf(err, errlen, "priority_class_kind: expected a kind (PriorityClass)");
        return -1;
    }
    if (!TRELLIS_HOST_HAS(h, foreach_object)) {
        snprintf(err, errlen,
                 "priority_class_field: this host (SDK 1.%d) cannot read other "
                 "objects (SDK 1.1 and later can)",
                 h->sdk_minor);
        return -1;
    }
    kinds[0] = src->class_kind;
    kinds[1] = NULL;
    if (TRELLIS_HOST_HAS(h, declare_kinds) && h->declare_kinds(self, kinds) < 0) {
        snprintf(err, errlen, "priority_class_kind: '%s' is not a kind", src->class_kind);
        return -1;
    }
    return 0;
}
