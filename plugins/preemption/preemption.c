/*
 * preemption.c - the preemption plugin: when nothing fits, evict
 * lower-priority workloads from one target to make room (kube-scheduler's
 * DefaultPreemption, a post_filter).
 *
 * In kube's order (pkg/scheduler/framework/preemption and
 * plugins/defaultpreemption):
 *  1. Eligibility (PodEligibleToPreemptOthers): not with preemptionPolicy
 *     Never; not while a lower-priority workload on the nominated target
 *     (status.nominatedNodeName) is still terminating because the
 *     scheduler preempted it (deletionTimestamp set and a DisruptionTarget
 *     condition of reason PreemptionByScheduler), unless the filters call
 *     that target UNRESOLVABLE.
 *  2. Potential targets: those whose filters said UNSCHEDULABLE
 *     (UNRESOLVABLE means eviction cannot help), in name order. kube
 *     starts at a random offset into them; trellis starts at the first, so
 *     the same state gives the same decision. They are dry-run one by one
 *     until min_candidate_nodes_percentage of them (at least
 *     min_candidate_nodes_absolute, at most all) are candidates and at
 *     least one of those violates no PodDisruptionBudget.
 *  3. Victims on a target (SelectVictimsOnNode): every workload with a
 *     strictly lower priority goes; if the workload does not fit even then,
 *     the target is out. The potential victims are sorted by importance
 *     (higher priority, then the earlier status.startTime) and split in
 *     those whose budget they would overdraw (each matching budget's
 *     status.disruptionsAllowed counted down per victim, in that order,
 *     a pod named in status.disruptedPods not counted) and the rest; each
 *     group in turn, the most important first, is reprieved when the
 *     workload still fits with it back. What stays out are the victims.
 *  4. The review (kube's callExtenders; SDK 1.7 cycle_review_candidates):
 *     the profile's reviewers (an HTTP extender's preempt verb) get the
 *     candidates in turn and may drop some and change victims and
 *     violation counts; what a reviewer changed is summarised again.
 *     A review that fails leaves the workload unschedulable, its message
 *     in the decision's notes and the log, the nomination as it was; one
 *     that leaves nothing: "no candidate node for preemption", likewise.
 *     On a host older than 1.7 there is no review.
 *  5. The choice (pickOneNodeForPreemption, pick.h): fewest PDB
 *     violations, lowest highest victim priority, smallest sum of victim
 *     priorities (each plus 2^31), fewest victims, latest earliest start
 *     of the highest-priority victims, then the first candidate
 *     (non-violating candidates first, each group in the order tried).
 *  6. The victims are evicted (the host unbinds and requeues them), lower
 *     priority workloads nominated to that target lose their nomination,
 *     and the workload's status.nominatedNodeName names the target (a
 *     write through the status subresource); the host prefers that target
 *     when the workload is retried. When no target can be freed the
 *     nomination is cleared; when the workload is bound elsewhere, too.
 *
 * Priorities are read once per workload in prepare (common/priority.c).
 * Temporary arrays come from the cycle's arena; budgets' selectors are
 * parsed per post_filter and freed before it returns.
 */
/* the oldest host it runs on: store_patch, declare_kinds, the clock (1.4),
 * decided (1.5) */
#define TRELLIS_PLUGIN_MIN_MINOR 5

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pick.h"
#include "priority.h"
#include "selector.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    priority_source src;
    int64_t percentage, absolute;
    const char *budget_kind;     /* PodDisruptionBudget; "" none */
    const char *start_field;     /* status.startTime */
    const char *nominated_field; /* status.nominatedNodeName; "" not written */
} config;

/* Per workload; `wrote` remembers a nomination written in this run, which
 * the object shows only once the store reports it. */
typedef struct prepared {
    int64_t priority;
    int never; /* preemptionPolicy: Never */
    int wrote_set;
    char wrote[256]; /* "" when cleared */
} prepared;

typedef struct budget {
    const trellis_object *o;
    selector *sel; /* NULL: empty, matches nothing (as kube's preemption) */
    int64_t allowed;
} budget;

typedef struct budgets {
    budget *b;
    size_t n, cap;
    int oom;
} budgets;

typedef struct candidate {
    const trellis_object *w;
    int64_t priority;
    int64_t start_ms;
} candidate;

/* The victims one target would need. */
typedef struct plan {
    const trellis_target *t;
    const trellis_object **victims;
    pick_summary sum;
} plan;

static const trellis_arg_spec args_table[] = {
    {"priority_field", TRELLIS_ARG_STRING, "spec.priority",
     "dotted path of the workload's integer priority; absent means 0"},
    {"policy_field", TRELLIS_ARG_STRING, "spec.preemptionPolicy",
     "dotted path of the preemption policy: PreemptLowerPriority (default) "
     "or Never"},
    PRIORITY_CLASS_ARGS,
    {"min_candidate_nodes_percentage", TRELLIS_ARG_INT, "10",
     "DefaultPreemptionArgs.minCandidateNodesPercentage: the share (0-100) of the "
     "targets whose filters failed that are dry-run for victims"},
    {"min_candidate_nodes_absolute", TRELLIS_ARG_INT, "100",
     "DefaultPreemptionArgs.minCandidateNodesAbsolute: at least this many of them"},
    {"budget_kind", TRELLIS_ARG_STRING, "PodDisruptionBudget",
     "the kind of the disruption budgets (spec.selector over workloads of its "
     "namespace, status.disruptionsAllowed, status.disruptedPods); empty: none"},
    {"start_time_field", TRELLIS_ARG_STRING, "status.startTime",
     "dotted path of a workload's RFC 3339 start time; absent means now"},
    {"nominated_field", TRELLIS_ARG_STRING, "status.nominatedNodeName",
     "the field of the workload that names its nominated target, written "
     "through the status subresource; empty: not written"},
    {NULL, 0, NULL, NULL},
};

static const char *nominated_of(const config *cfg, const trellis_object *w, const prepared *p)
{
    const trellis_value *v;

    if (p && p->wrote_set)
        return p->wrote;
    if (!cfg->nominated_field[0])
        return "";
    v = host->object_get(w, cfg->nominated_field);
    if (!v || host->value_type(v) != TRELLIS_VALUE_STRING)
        return "";
    return host->value_string(v);
}

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
    p = calloc(1, sizeof(*p));
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
    (void)self;
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

/* kube's GetPodStartTime: status.startTime, else now. */
static int64_t start_of(const trellis_plugin *self, const config *cfg, const trellis_object *w)
{
    const trellis_value *v = host->object_get(w, cfg->start_field);
    const char *s = v ? host->value_string(v) : NULL;
    int64_t ms;

    if (s && host->time_parse(s, &ms) == 0)
        return ms;
    return host->clock_now(self);
}

/* The most important first; namespace and name make the order total
 * (kube's sort is not stable). */
static int cmp_candidates(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    int c;

    if (pick_more_important(x->priority, x->start_ms, y->priority, y->start_ms))
        return -1;
    if (pick_more_important(y->priority, y->start_ms, x->priority, x->start_ms))
        return 1;
    c = strcmp(host->object_namespace(x->w), host->object_namespace(y->w));
    if (c != 0)
        return c;
    return strcmp(host->object_name(x->w), host->object_name(y->w));
}

/* ---- disruption budgets ------------------------------------------------ */

static int collect_budget(const trellis_object *o, void *ud)
{
    budgets *bs = ud;
    const trellis_value *sel = host->object_get(o, "spec.selector");
    const trellis_value *al = host->object_get(o, "status.disruptionsAllowed");
    char err[TRELLIS_MESSAGE_MAX];
    budget b;

    memset(&b, 0, sizeof(b));
    b.o = o;
    if (!al || host->value_int(al, &b.allowed) < 0)
        b.allowed = 0;
    /* a selector that does not parse matches nothing, as in kube */
    if (sel && host->value_type(sel) == TRELLIS_VALUE_MAP &&
        selector_parse(host, sel, SELECTOR_FORMAT_SELECTOR, "spec.selector", &b.sel, err,
                       sizeof(err)) < 0)
        b.sel = NULL;
    if (!b.sel)
        return 0; /* matches no pod: nothing to count */
    if (bs->n == bs->cap) {
        size_t cap = bs->cap ? bs->cap * 2 : 8;
        budget *nb = realloc(bs->b, cap * sizeof(*nb));

        if (!nb) {
            selector_free(b.sel);
            bs->oom = 1;
            return 1;
        }
        bs->b = nb;
        bs->cap = cap;
    }
    bs->b[bs->n++] = b;
    return 0;
}

static void budgets_free(budgets *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        selector_free(bs->b[i].sel);
    free(bs->b);
    memset(bs, 0, sizeof(*bs));
}

static const char *label_of(const void *ud, const char *key)
{
    return host->object_label(ud, key);
}

/* Indices of the budgets that cover w into match[] (room for bs->n). */
static size_t budgets_matching(const budgets *bs, const trellis_object *w, size_t *match)
{
    const trellis_value *labels = host->object_get(w, "metadata.labels");
    const char *ns = host->object_namespace(w);
    size_t n = 0;

    /* a pod without labels matches no budget */
    if (!labels || host->value_len(labels) == 0)
        return 0;
    for (size_t i = 0; i < bs->n; i++) {
        const trellis_value *dis;

        if (strcmp(host->object_namespace(bs->b[i].o), ns) != 0)
            continue;
        if (selector_first_mismatch(bs->b[i].sel, label_of, w) >= 0)
            continue;
        /* already disrupted, processed by the API server: not counted */
        dis = host->object_get(bs->b[i].o, "status.disruptedPods");
        if (dis && host->value_type(dis) == TRELLIS_VALUE_MAP &&
            host->value_get(dis, host->object_name(w)))
            continue;
        match[n++] = i;
    }
    return n;
}

/* ---- victims on one target --------------------------------------------- */

/* Work out the victims on t for a workload of priority `prio`. 1 with *out
 * filled, 0 when t cannot be freed, -1 when the arena is exhausted. */
static int plan_target(trellis_plugin *self, const config *cfg, trellis_cycle *c,
                       const trellis_target *t, int64_t prio, const budgets *bs, plan *out)
{
    size_t m = host->target_workload_count(t), k = 0, n, nv = 0;
    const trellis_object **trial;
    unsigned char *out_now, *violating;
    size_t *order, *match;
    candidate *cand;
    int64_t *allowed;
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
            cand[k].start_ms = start_of(self, cfg, w);
            k++;
        }
    }
    if (k == 0)
        return 0;
    trial = host->cycle_alloc(c, k * sizeof(*trial));
    out_now = host->cycle_alloc(c, k);
    violating = host->cycle_alloc(c, k);
    order = host->cycle_alloc(c, k * sizeof(*order));
    match = host->cycle_alloc(c, (bs->n + 1) * sizeof(*match));
    allowed = host->cycle_alloc(c, (bs->n + 1) * sizeof(*allowed));
    if (!trial || !out_now || !violating || !order || !match || !allowed)
        return -1;
    for (size_t j = 0; j < k; j++)
        trial[j] = cand[j].w;
    memset(&st, 0, sizeof(st));
    if (host->cycle_filter_without(c, t, trial, k, &st) != TRELLIS_SUCCESS)
        return 0;

    qsort(cand, k, sizeof(*cand), cmp_candidates);
    /* filterPodsWithPDBViolation: budgets counted down in importance order */
    for (size_t i = 0; i < bs->n; i++)
        allowed[i] = bs->b[i].allowed;
    for (size_t j = 0; j < k; j++) {
        size_t nm = budgets_matching(bs, cand[j].w, match);

        violating[j] = (unsigned char)pick_budget_take(allowed, match, nm);
    }
    /* reprieve the violating ones first, then the others, each group the
     * most important first */
    n = 0;
    for (size_t j = 0; j < k; j++)
        if (violating[j])
            order[n++] = j;
    for (size_t j = 0; j < k; j++)
        if (!violating[j])
            order[n++] = j;
    memset(out_now, 1, k);
    for (size_t r = 0; r < k; r++) {
        size_t j = order[r];

        n = 0;
        for (size_t l = 0; l < k; l++)
            if (out_now[l] && l != j)
                trial[n++] = cand[l].w;
        memset(&st, 0, sizeof(st));
        if (host->cycle_filter_without(c, t, trial, n, &st) == TRELLIS_SUCCESS)
            out_now[j] = 0;
    }

    /* the victims in order of importance: the most important first */
    memset(&out->sum, 0, sizeof(out->sum));
    out->t = t;
    out->victims = trial;
    for (size_t j = 0; j < k; j++) {
        if (!out_now[j])
            continue;
        if (nv == 0) {
            out->sum.highest = cand[j].priority;
            out->sum.earliest_ms = cand[j].start_ms;
        } else if (cand[j].priority == out->sum.highest &&
                   cand[j].start_ms < out->sum.earliest_ms) {
            out->sum.earliest_ms = cand[j].start_ms;
        }
        trial[nv++] = cand[j].w;
        out->sum.sum += pick_sum_term(cand[j].priority);
        if (violating[j])
            out->sum.pdb_violations++;
    }
    out->sum.victims = nv;
    /* Everything reprieved means the filters disagree with the verdict
     * that brought us here; evicting nothing would retry forever (kube:
     * "expected at least one victim pod on node"). */
    return nv > 0;
}

/* ---- the review ------------------------------------------------------------ */

/* What pickOneNodeForPreemption compares about victims[0..n) with pdb
 * violations: the most important victim's priority, the earliest start
 * among the victims of that priority, the sum of the terms. */
static pick_summary summarise(const trellis_plugin *self, const config *cfg,
                              const trellis_object *const *victims, size_t n, int64_t pdb)
{
    pick_summary s;

    memset(&s, 0, sizeof(s));
    s.pdb_violations = pdb;
    s.victims = n;
    for (size_t j = 0; j < n; j++) {
        int64_t p = priority_of(self, cfg, victims[j]);
        int64_t at = start_of(self, cfg, victims[j]);

        if (j == 0 || p > s.highest) {
            s.highest = p;
            s.earliest_ms = at;
        } else if (p == s.highest && at < s.earliest_ms) {
            s.earliest_ms = at;
        }
        s.sum += pick_sum_term(p);
    }
    return s;
}

/* Have the profile's reviewers look at all[0..*n): TRELLIS_SUCCESS with
 * all[0..*n) what they left (changed victims summarised again), or
 * TRELLIS_ERROR with st. Without the host function (older than 1.7):
 * nothing changes. */
static int review(trellis_plugin *self, const config *cfg, trellis_cycle *c, plan *all, size_t *n,
                  trellis_status *st)
{
    trellis_candidate *cands;
    size_t m = *n;

    if (!TRELLIS_HOST_HAS(host, cycle_review_candidates) || *n == 0)
        return TRELLIS_SUCCESS;
    cands = host->cycle_alloc(c, *n * sizeof(*cands));
    if (!cands)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
    for (size_t i = 0; i < *n; i++) {
        cands[i].target = all[i].t;
        cands[i].victims = all[i].victims;
        cands[i].n_victims = all[i].sum.victims;
        cands[i].pdb_violations = all[i].sum.pdb_violations;
    }
    if (host->cycle_review_candidates(c, self, cands, &m, st) != TRELLIS_SUCCESS)
        return TRELLIS_ERROR;
    /* the reviewers keep the order given: match each survivor up */
    for (size_t i = 0, k = 0; i < m; i++) {
        while (k < *n && all[k].t != cands[i].target)
            k++;
        if (k == *n)
            return host->status(st, TRELLIS_ERROR, "ReviewRefused",
                                "the review answered a target that was not a candidate");
        if (cands[i].victims != all[k].victims || cands[i].n_victims != all[k].sum.victims ||
            cands[i].pdb_violations != all[k].sum.pdb_violations) {
            all[k].victims = (const trellis_object **)cands[i].victims;
            all[k].sum =
                summarise(self, cfg, cands[i].victims, cands[i].n_victims, cands[i].pdb_violations);
        }
        all[i] = all[k++];
    }
    *n = m;
    return TRELLIS_SUCCESS;
}

/* ---- eligibility --------------------------------------------------------- */

/* kube's podTerminatingByPreemption. */
static int terminating_by_preemption(const trellis_object *w)
{
    const trellis_value *conds = host->object_get(w, "status.conditions");
    size_t n = conds ? host->value_len(conds) : 0;

    if (!host->object_get(w, "metadata.deletionTimestamp"))
        return 0;
    for (size_t i = 0; i < n; i++) {
        const trellis_value *cd = host->value_at(conds, i);
        const trellis_value *ty = host->value_get(cd, "type");
        const trellis_value *s = host->value_get(cd, "status");
        const trellis_value *r = host->value_get(cd, "reason");
        const char *tys = ty ? host->value_string(ty) : NULL;

        if (!tys || strcmp(tys, "DisruptionTarget") != 0)
            continue;
        return s && r && host->value_string(s) && host->value_string(r) &&
               strcmp(host->value_string(s), "True") == 0 &&
               strcmp(host->value_string(r), "PreemptionByScheduler") == 0;
    }
    return 0;
}

/* 1 when a lower-priority workload on the nominated target is still
 * terminating, which a preemption there started. */
static int waiting_for_victims(trellis_plugin *self, const config *cfg, trellis_cycle *c,
                               const char *nominated, int64_t prio)
{
    size_t count = host->cycle_target_count(c);

    for (size_t i = 0; i < count; i++) {
        const trellis_target *t = host->cycle_target(c, i);

        if (strcmp(host->target_name(t), nominated) != 0)
            continue;
        if (host->cycle_target_code(c, i) == TRELLIS_UNRESOLVABLE)
            return 0;
        for (size_t j = 0; j < host->target_workload_count(t); j++) {
            const trellis_object *w = host->target_workload(t, j);

            if (priority_of(self, cfg, w) < prio && terminating_by_preemption(w))
                return 1;
        }
        return 0;
    }
    return 0;
}

/* ---- nominations ---------------------------------------------------------- */

/* Write (node != "") or clear (node == "") the nomination of w. */
static int set_nominated(trellis_plugin *self, const config *cfg, const trellis_object *w,
                         const char *node, char *err, size_t errlen)
{
    prepared *p = host->object_data(self, w);
    const char *cur = nominated_of(cfg, w, p);
    trellis_edit e;

    if (!cfg->nominated_field[0] || strcmp(cur, node) == 0)
        return 0;
    e.op = node[0] ? TRELLIS_EDIT_SET : TRELLIS_EDIT_REMOVE;
    e.path = cfg->nominated_field;
    e.value = node;
    if (host->store_patch(self, w, "status", &e, 1, err, errlen) < 0)
        return -1;
    if (p) {
        p->wrote_set = 1;
        snprintf(p->wrote, sizeof(p->wrote), "%s", node);
    }
    return 0;
}

typedef struct lower_nominated {
    trellis_plugin *self;
    const config *cfg;
    const trellis_object *me;
    const char *node;
    int64_t prio;
    int failed;
    char err[TRELLIS_MESSAGE_MAX];
} lower_nominated;

/* getLowerPriorityNominatedPods + clearNominatedNodeName: pending workloads
 * of lower priority nominated to the same target may no longer fit. */
static int clear_lower(const trellis_object *o, void *ud)
{
    lower_nominated *x = ud;
    const trellis_value *b;
    const char *bs;

    if (o == x->me)
        return 0;
    b = host->object_get(o, host->binding_field(x->self));
    bs = b ? host->value_string(b) : NULL;
    if (bs && bs[0])
        return 0; /* bound: not a nomination any more */
    if (strcmp(nominated_of(x->cfg, o, host->object_data(x->self, o)), x->node) != 0)
        return 0;
    if (priority_of(x->self, x->cfg, o) >= x->prio)
        return 0;
    if (set_nominated(x->self, x->cfg, o, "", x->err, sizeof(x->err)) < 0)
        x->failed = 1;
    return 0;
}

static void describe(const trellis_object *w, char *buf, size_t len)
{
    const char *ns = host->object_namespace(w);

    if (ns[0])
        snprintf(buf, len, "%s/%s", ns, host->object_name(w));
    else
        snprintf(buf, len, "%s", host->object_name(w));
}

static int add_plan(trellis_cycle *c, plan **list, size_t *n, size_t *cap, const plan *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        plan *nl = host->cycle_alloc(c, ncap * sizeof(*nl));

        if (!nl)
            return -1;
        if (*n)
            memcpy(nl, *list, *n * sizeof(*nl));
        *list = nl;
        *cap = ncap;
    }
    (*list)[(*n)++] = *p;
    return 0;
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const prepared *me = host->object_data(self, workload);
    int64_t prio = me ? me->priority : 0;
    size_t count = host->cycle_target_count(c), npot = 0, nviol = 0, nok = 0, vcap = 0, ocap = 0;
    size_t *pot;
    plan cur, *ok = NULL, *viol = NULL, *all, *best;
    size_t ncand;
    trellis_status rst;
    budgets bs;
    uint32_t want;
    int rc = TRELLIS_SUCCESS;
    const char *nominated;
    char who[TRELLIS_MESSAGE_MAX / 2], reason[TRELLIS_MESSAGE_MAX];
    char err[TRELLIS_MESSAGE_MAX];

    memset(&bs, 0, sizeof(bs));
    describe(workload, who, sizeof(who));
    if (me && me->never)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "PreemptionPolicyNever",
                            "%s is not eligible to preempt: preemptionPolicy Never", who);
    nominated = nominated_of(cfg, workload, me);
    if (nominated[0] && waiting_for_victims(self, cfg, c, nominated, prio))
        return host->status(st, TRELLIS_UNSCHEDULABLE, "PreemptionInProgress",
                            "%s is not eligible to preempt: a lower-priority workload on its "
                            "nominated target %s is still terminating",
                            who, nominated);

    pot = host->cycle_alloc(c, (count + 1) * sizeof(*pot));
    if (!pot)
        goto oom;
    for (size_t i = 0; i < count; i++)
        if (host->cycle_target_code(c, i) == TRELLIS_UNSCHEDULABLE)
            pot[npot++] = i;
    if (npot && cfg->budget_kind[0]) {
        host->foreach_object(self, cfg->budget_kind, NULL, collect_budget, &bs);
        if (bs.oom)
            goto oom;
    }
    want = pick_candidates_wanted((uint32_t)npot, cfg->percentage, cfg->absolute);
    /* offset 0: the potential targets in name order (kube: a random one) */
    for (size_t i = 0; i < npot; i++) {
        int r = plan_target(self, cfg, c, host->cycle_target(c, pot[i]), prio, &bs, &cur);

        if (r < 0)
            goto oom;
        if (r == 0)
            continue;
        if (cur.sum.pdb_violations == 0 ? add_plan(c, &ok, &nok, &ocap, &cur) < 0
                                        : add_plan(c, &viol, &nviol, &vcap, &cur) < 0)
            goto oom;
        if (nok > 0 && nok + nviol >= want)
            break;
    }
    if (nok + nviol == 0) {
        err[0] = '\0';
        /* preemption cannot help: the nomination goes (kube's ModeOverride "") */
        if (set_nominated(self, cfg, workload, "", err, sizeof(err)) < 0)
            host->log(self, TRELLIS_LOG_WARN, "clearing the nomination of %s: %s", who, err);
        host->status(st, TRELLIS_UNSCHEDULABLE, "NoPreemptionVictims",
                     "no target can make room for %s (priority %lld) by "
                     "evicting lower-priority workloads",
                     who, (long long)prio);
        rc = TRELLIS_UNSCHEDULABLE;
        goto out;
    }

    all = host->cycle_alloc(c, (nok + nviol) * sizeof(*all));
    if (!all)
        goto oom;
    for (size_t i = 0; i < nok; i++)
        all[i] = ok[i];
    for (size_t i = 0; i < nviol; i++)
        all[nok + i] = viol[i];
    ncand = nok + nviol;
    memset(&rst, 0, sizeof(rst));
    if (review(self, cfg, c, all, &ncand, &rst) != TRELLIS_SUCCESS) {
        /* kube: the status of the failed extender; the pod stays
         * unschedulable and its nomination as it was */
        host->cycle_note(c, self, "preemption failed: %s", rst.message);
        host->log(self, TRELLIS_LOG_WARN, "preemption for %s failed: %s", who, rst.message);
        host->status(st, TRELLIS_UNSCHEDULABLE, "PreemptionReviewFailed", "%s", rst.message);
        rc = TRELLIS_UNSCHEDULABLE;
        goto out;
    }
    if (ncand == 0) {
        host->cycle_note(c, self,
                         "%zu of %zu targets tried, %zu candidates; the review left none: no "
                         "candidate node for preemption",
                         npot, count, nok + nviol);
        host->status(st, TRELLIS_UNSCHEDULABLE, "NoPreemptionCandidate",
                     "no candidate node for preemption");
        rc = TRELLIS_UNSCHEDULABLE;
        goto out;
    }
    {
        pick_summary *sums = host->cycle_alloc(c, ncand * sizeof(*sums));

        if (!sums)
            goto oom;
        for (size_t i = 0; i < ncand; i++)
            sums[i] = all[i].sum;
        best = &all[pick_one(sums, ncand)];
    }
    if (ncand == nok + nviol)
        host->cycle_note(c, self,
                         "%zu of %zu targets tried, %zu candidates (%zu violate a disruption "
                         "budget); %s: %zu victims, highest priority %lld, %lld budget violations",
                         npot, count, nok + nviol, nviol, host->target_name(best->t),
                         best->sum.victims, (long long)best->sum.highest,
                         (long long)best->sum.pdb_violations);
    else
        host->cycle_note(c, self,
                         "%zu of %zu targets tried, %zu candidates (%zu violate a disruption "
                         "budget), %zu left by the review; %s: %zu victims, highest priority "
                         "%lld, %lld budget violations",
                         npot, count, nok + nviol, nviol, ncand, host->target_name(best->t),
                         best->sum.victims, (long long)best->sum.highest,
                         (long long)best->sum.pdb_violations);

    snprintf(reason, sizeof(reason), "preempted by %s (priority %lld)", who, (long long)prio);
    for (size_t j = 0; j < best->sum.victims; j++) {
        err[0] = '\0';
        if (host->evict(c, self, best->victims[j], reason, err, sizeof(err)) < 0) {
            host->status(st, TRELLIS_ERROR, "EvictionFailed", "%s", err);
            rc = TRELLIS_ERROR;
            goto out;
        }
    }
    {
        lower_nominated x;

        memset(&x, 0, sizeof(x));
        x.self = self;
        x.cfg = cfg;
        x.me = workload;
        x.node = host->target_name(best->t);
        x.prio = prio;
        if (cfg->nominated_field[0])
            host->foreach_object(self, host->object_kind(workload), NULL, clear_lower, &x);
        if (x.failed)
            host->log(self, TRELLIS_LOG_WARN, "clearing a lower-priority nomination: %s", x.err);
    }
    if (host->nominate(c, best->t) < 0) {
        host->status(st, TRELLIS_ERROR, "NominationFailed", "cannot nominate target %s",
                     host->target_name(best->t));
        rc = TRELLIS_ERROR;
        goto out;
    }
    err[0] = '\0';
    if (set_nominated(self, cfg, workload, host->target_name(best->t), err, sizeof(err)) < 0) {
        host->status(st, TRELLIS_ERROR, "NominationFailed", "writing %s of %s: %s",
                     cfg->nominated_field, who, err);
        rc = TRELLIS_ERROR;
        goto out;
    }
out:
    budgets_free(&bs);
    return rc;
oom:
    budgets_free(&bs);
    return host->status(st, TRELLIS_ERROR, "OutOfMemory", "the cycle's arena is exhausted");
}

/* Bound elsewhere than its nomination: the nomination goes. */
static void decided(trellis_plugin *self, trellis_cycle *c, const trellis_object *w, int again)
{
    const config *cfg = host->get_private(self);
    const char *nominated, *to;
    char err[TRELLIS_MESSAGE_MAX];

    (void)again;
    if (host->cycle_pick_count(c) == 0)
        return;
    nominated = nominated_of(cfg, w, host->object_data(self, w));
    to = host->target_name(host->cycle_pick(c, 0));
    if (!nominated[0] || strcmp(nominated, to) == 0)
        return;
    err[0] = '\0';
    if (set_nominated(self, cfg, w, "", err, sizeof(err)) < 0)
        host->log(self, TRELLIS_LOG_WARN, "clearing the nomination of %s/%s: %s",
                  host->object_namespace(w), host->object_name(w), err);
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
    cfg->percentage = h->arg_int(args, "min_candidate_nodes_percentage");
    cfg->absolute = h->arg_int(args, "min_candidate_nodes_absolute");
    /* kube's ValidateDefaultPreemptionArgs */
    if (cfg->percentage < 0 || cfg->percentage > 100) {
        snprintf(err, errlen,
                 "min_candidate_nodes_percentage: not in valid range [0, 100], got %lld",
                 (long long)cfg->percentage);
        return -1;
    }
    if (cfg->absolute < 0) {
        snprintf(err, errlen, "min_candidate_nodes_absolute: not in valid range [0, inf), got %lld",
                 (long long)cfg->absolute);
        return -1;
    }
    if (cfg->percentage == 0 && cfg->absolute == 0) {
        snprintf(err, errlen,
                 "min_candidate_nodes_percentage and min_candidate_nodes_absolute: both cannot "
                 "be zero at the same time");
        return -1;
    }
    cfg->budget_kind = h->arg_string(args, "budget_kind");
    cfg->start_field = h->arg_string(args, "start_time_field");
    cfg->nominated_field = h->arg_string(args, "nominated_field");
    if (values_check_path("start_time_field", cfg->start_field, err, errlen) < 0)
        return -1;
    if (cfg->budget_kind[0]) {
        const char *kinds[] = {cfg->budget_kind, NULL};

        if (h->declare_kinds(self, kinds) < 0) {
            snprintf(err, errlen, "budget_kind: '%s' is not a kind", cfg->budget_kind);
            return -1;
        }
    }

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_post_filter(self, post_filter) < 0 ||
        h->register_decided(self, decided) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "preemption",
    "2.0.0",
    "evicts lower-priority workloads from one target when nothing fits (kube's "
    "DefaultPreemption: disruption budgets, nominatedNodeName)",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, preemption)
