/*
 * preemption.c - the preemption plugin: when nothing fits, evict
 * lower-priority workloads from one target to make room.
 *
 * kube-scheduler's DefaultPreemption as a post_filter. Only targets whose
 * filters said UNSCHEDULABLE are considered (UNRESOLVABLE means eviction
 * cannot help). On each, every workload with a strictly lower priority is a
 * candidate; if the workload does not fit even with all of them gone, the
 * target is out. Otherwise candidates are reprieved one by one, the most
 * important first, as long as the workload still fits without the ones that
 * remain: what is left are the victims. The target chosen is the one with
 * the fewest victims, then the lowest highest victim priority, then the
 * lowest sum of victim priorities, then the smallest name. Its victims are
 * evicted (the host unbinds and requeues them) and the target is nominated
 * for the retry.
 *
 * Priorities are read once per workload in prepare (common/priority.c).
 * Temporary arrays come from the cycle's arena: this runs once per failed
 * cycle and must not leak when it returns early.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "priority.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    priority_source src;
} config;

typedef struct prepared {
    int64_t priority;
    int never; /* preemptionPolicy: Never */
} prepared;

typedef struct candidate {
    const trellis_object *w;
    int64_t priority;
} candidate;

/* The victims one target would need. */
typedef struct plan {
    const trellis_target *t;
    const trellis_object **victims;
    size_t n;
    int64_t max_priority;
    int64_t sum_priority;
} plan;

static const trellis_arg_spec args_table[] = {
    {"priority_field", TRELLIS_ARG_STRING, "spec.priority",
     "dotted path of the workload's integer priority; absent means 0"},
    {"policy_field", TRELLIS_ARG_STRING, "spec.preemptionPolicy",
     "dotted path of the preemption policy: PreemptLowerPriority (default) "
     "or Never"},
    PRIORITY_CLASS_ARGS,
    {NULL, 0, NULL, NULL},
};

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    prepared *p;
    int64_t prio;
    int never;

    *data = NULL;
    if (priority_resolve(host, self, &cfg->src, obj, &prio, &never, err, errlen) < 0)
        return -1;
    /* Allocated even for priority 0, so that "no data" can only mean the
     * object was never prepared by this instance. */
    p = malloc(sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->priority = prio;
    p->never = never;
    *data = p;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

/* A workload on a target may belong to another profile, whose workloads
 * this instance never prepared: read its priority directly then. This is
 * the post filter, not a hot path. */
static int64_t priority_of(const trellis_plugin *self, const config *cfg, const trellis_object *w)
{
    const prepared *p = host->object_data(self, w);
    char err[TRELLIS_MESSAGE_MAX];
    int64_t prio;

    if (p)
        return p->priority;
    if (priority_resolve(host, self, &cfg->src, w, &prio, NULL, err, sizeof(err)) < 0)
        return 0;
    return prio;
}

/* The most important first: higher priority, then namespace and name. */
static int cmp_candidates(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    int c;

    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    c = strcmp(host->object_namespace(x->w), host->object_namespace(y->w));
    if (c != 0)
        return c;
    return strcmp(host->object_name(x->w), host->object_name(y->w));
}

/* Work out the victims on t for a workload of priority `prio`. 1 with *out
 * filled, 0 when t cannot be freed, -1 when the arena is exhausted. */
static int plan_target(trellis_plugin *self, const config *cfg, trellis_cycle *c,
                       const trellis_target *t, int64_t prio, plan *out)
{
    size_t m = host->target_workload_count(t), k = 0, n;
    const trellis_object **trial;
    unsigned char *victim;
    candidate *cand;
    trellis_status st;

    if (m == 0)
        return 0;
    cand = host->cycle_alloc(c, m * sizeof(*cand));
    if (!cand)
        return -1;
    for (size_t j = 0; j < m; j++) {
        const trellis_object *w = host->target_workload(t, j);
        int64_t p = priority_of(self, cfg, w);

        if (p < prio) {
            cand[k].w = w;
            cand[k].priority = p;
            k++;
        }
    }
    if (k == 0)
        return 0;
    trial = host->cycle_alloc(c, k * sizeof(*trial));
    victim = host->cycle_alloc(c, k);
    if (!trial || !victim)
        return -1;
    for (size_t j = 0; j < k; j++)
        trial[j] = cand[j].w;
    memset(&st, 0, sizeof(st));
    if (host->cycle_filter_without(c, t, trial, k, &st) != TRELLIS_SUCCESS)
        return 0;

    qsort(cand, k, sizeof(*cand), cmp_candidates);
    memset(victim, 1, k);
    for (size_t j = 0; j < k; j++) {
        n = 0;
        for (size_t l = 0; l < k; l++) {
            if (victim[l] && l != j)
                trial[n++] = cand[l].w;
        }
        memset(&st, 0, sizeof(st));
        if (host->cycle_filter_without(c, t, trial, n, &st) == TRELLIS_SUCCESS)
            victim[j] = 0;
    }

    out->t = t;
    out->victims = trial;
    out->n = 0;
    out->max_priority = INT64_MIN;
    out->sum_priority = 0;
    for (size_t j = 0; j < k; j++) {
        if (!victim[j])
            continue;
        trial[out->n++] = cand[j].w;
        if (cand[j].priority > out->max_priority)
            out->max_priority = cand[j].priority;
        out->sum_priority += cand[j].priority;
    }
    /* Everything reprieved means the filters disagree with the verdict
     * that brought us here; evicting nothing would retry forever. */
    return out->n > 0;
}

static int better(const plan *a, const plan *b)
{
    if (a->n != b->n)
        return a->n < b->n;
    if (a->max_priority != b->max_priority)
        return a->max_priority < b->max_priority;
    if (a->sum_priority != b->sum_priority)
        return a->sum_priority < b->sum_priority;
    return strcmp(host->target_name(a->t), host->target_name(b->t)) < 0;
}

static void describe(const trellis_object *w, char *buf, size_t len)
{
    const char *ns = host->object_namespace(w);

    if (ns[0])
        snprintf(buf, len, "%s/%s", ns, host->object_name(w));
    else
        snprintf(buf, len, "%s", host->object_name(w));
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *me = host->object_data(self, workload);
    int64_t prio = me ? me->priority : 0;
    size_t count = host->cycle_target_count(c);
    plan best, cur;
    int have = 0;
    char who[TRELLIS_MESSAGE_MAX / 2], reason[TRELLIS_MESSAGE_MAX];
    char err[TRELLIS_MESSAGE_MAX];

    memset(&best, 0, sizeof(best));
    describe(workload, who, sizeof(who));
    if (me && me->never) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "PreemptionPolicyNever",
                     "%s has preemptionPolicy Never", who);
        return TRELLIS_UNSCHEDULABLE;
    }
    for (size_t i = 0; i < count; i++) {
        int rc;

        if (host->cycle_target_code(c, i) != TRELLIS_UNSCHEDULABLE)
            continue;
        rc = plan_target(self, cfg, c, host->cycle_target(c, i), prio, &cur);
        if (rc < 0) {
            host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
            return TRELLIS_ERROR;
        }
        if (rc > 0 && (!have || better(&cur, &best))) {
            best = cur;
            have = 1;
        }
    }
    if (!have) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "NoPreemptionVictims",
                     "no target can make room for %s (priority %lld) by "
                     "evicting lower-priority workloads",
                     who, (long long)prio);
        return TRELLIS_UNSCHEDULABLE;
    }

    snprintf(reason, sizeof(reason), "preempted by %s (priority %lld)", who, (long long)prio);
    for (size_t j = 0; j < best.n; j++) {
        err[0] = '\0';
        if (host->evict(c, self, best.victims[j], reason, err, sizeof(err)) < 0) {
            host->status(st, TRELLIS_ERROR, "EvictionFailed", "%s", err);
            return TRELLIS_ERROR;
        }
    }
    if (host->nominate(c, best.t) < 0) {
        host->status(st, TRELLIS_ERROR, "NominationFailed", "cannot nominate target %s",
                     host->target_name(best.t));
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = malloc(sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, free);
    if (priority_setup(self, h, args, 1, &cfg->src, err, errlen) < 0)
        return -1;

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_post_filter(self, post_filter) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "preemption",
    "1.0.0",
    "evicts lower-priority workloads from one target when nothing fits",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, preemption)
