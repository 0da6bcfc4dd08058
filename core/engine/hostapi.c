/*
 * hostapi.c - see hostapi.h.
 */
#include "config.h"

#include "hostapi.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cache.h"
#include "clock.h"
#include "cycle.h"
#include "decision.h"
#include "fieldline.h"
#include "fmt.h"
#include "framework.h"
#include "guard.h"
#include "log.h"
#include "object.h"
#include "placements.h"
#include "plugin.h"
#include "profile_impl.h"
#include "services.h"
#include "util.h"

/* A registration outside init is refused, with a message naming the
 * plugin (a second registration of the same hook, or a NULL one, is
 * refused quietly: the plugin sees -1). */
static int outside_init(const trellis_plugin *self, const char *fn)
{
    if (!self)
        return 1;
    if (self->in_init)
        return 0;
    log_msg(TRELLIS_LOG_ERROR, self->name,
            "%s called outside init: refused (hooks are "
            "registered in init)",
            fn);
    return 1;
}

/* registration: only during init, once per hook */
#define REG(fn_name, field, type)                                                                  \
    static int fn_name(trellis_plugin *self, type fn)                                              \
    {                                                                                              \
        if (outside_init(self, __func__ + 4) || !fn || self->h.field)                              \
            return -1;                                                                             \
        self->h.field = fn;                                                                        \
        return 0;                                                                                  \
    }
REG(reg_prepare_workload, prepare_workload, trellis_prepare_fn)
REG(reg_prepare_target, prepare_target, trellis_prepare_fn)
REG(reg_release, release, trellis_release_fn)
REG(reg_queue_sort, less, trellis_less_fn)
REG(reg_pre_filter, pre_filter, trellis_pre_filter_fn)
REG(reg_filter, filter, trellis_filter_fn)
REG(reg_filter_batch, filter_batch, trellis_filter_batch_fn)
REG(reg_filter_span, filter_span, trellis_filter_span_fn)
REG(reg_filter_feasible, filter_feasible, trellis_filter_feasible_fn)
REG(reg_post_filter, post_filter, trellis_post_filter_fn)
REG(reg_pre_score, pre_score, trellis_pre_score_fn)
REG(reg_score, score, trellis_score_fn)
REG(reg_score_batch, score_batch, trellis_score_batch_fn)
REG(reg_score_span, score_span, trellis_score_span_fn)
REG(reg_normalize, normalize, trellis_normalize_fn)
REG(reg_reserve, reserve, trellis_reserve_fn)
REG(reg_unreserve, unreserve, trellis_unreserve_fn)
REG(reg_permit, permit, trellis_permit_fn)
REG(reg_pre_bind, pre_bind, trellis_bind_fn)
REG(reg_bind, bind, trellis_bind_fn)
REG(reg_post_bind, post_bind, trellis_post_bind_fn)
REG(reg_eviction_check, eviction_check, trellis_eviction_fn)
REG(reg_equivalent, equivalent, trellis_equivalent_fn)
REG(reg_pre_enqueue, pre_enqueue, trellis_pre_enqueue_fn)
REG(reg_finalize, finalize, trellis_finalize_fn)
REG(reg_target_lost, target_lost, trellis_target_lost_fn)
REG(reg_decided, decided, trellis_decided_fn)
REG(reg_review_candidates, review_candidates, trellis_review_candidates_fn)
#undef REG

/* A plugin's own thread may still call the host after its fini: every
 * function that takes the plugin's handle refuses then (the handle stays
 * valid memory, see registry_free), and says so once. */
static int retired(const trellis_plugin *self, const char *fn)
{
    if (!self || !atomic_load_explicit(&self->retired, memory_order_acquire))
        return 0;
    if (!atomic_exchange(&((trellis_plugin *)self)->retired_warned, 1))
        log_msg(TRELLIS_LOG_ERROR, self->name,
                "%s called after the plugin's fini: refused (a plugin must stop its threads "
                "in fini)",
                fn);
    return 1;
}
#define LIVE(self, ret)                                                                            \
    do {                                                                                           \
        if (retired(self, __func__))                                                               \
            return ret;                                                                            \
    } while (0)

#define MAX_COUNTERS 16
#define MAX_TARGET_VALUES 32

static int declare_counters(trellis_plugin *self, int n, trellis_amounts_fn fn)
{
    if (outside_init(self, __func__) || !fn || n < 1 || n > MAX_COUNTERS || self->n_counters)
        return -1;
    self->n_counters = n;
    self->h.amounts = fn;
    return 0;
}

static int declare_target_values(trellis_plugin *self, int n, trellis_amounts_fn fn)
{
    if (outside_init(self, __func__) || !fn || n < 1 || n > MAX_TARGET_VALUES || self->n_tvalues)
        return -1;
    self->n_tvalues = n;
    self->h.target_values = fn;
    return 0;
}

/* Queueing hints: masks OR together, the last function wins (NULL
 * included: then every registered event queues). */
static int reg_events(trellis_plugin *self, unsigned events, trellis_hint_fn fn)
{
    if (outside_init(self, "register_events"))
        return -1;
    if (events & ~(unsigned)TRELLIS_EV_ALL) {
        log_msg(TRELLIS_LOG_ERROR, self->name,
                "register_events: unknown event bits 0x%x (this host knows 0x%x)",
                events & ~(unsigned)TRELLIS_EV_ALL, (unsigned)TRELLIS_EV_ALL);
        return -1;
    }
    self->h.events |= events;
    self->h.has_events = 1;
    self->h.hint = fn;
    return 0;
}

static void set_private(trellis_plugin *self, void *data, void (*free_fn)(void *))
{
    LIVE(self, /* void */);
    if (self->priv_free && self->priv && self->priv != data)
        self->priv_free(self->priv);
    self->priv = data;
    self->priv_free = free_fn;
}

static void *get_private(const trellis_plugin *self)
{
    LIVE(self, NULL);
    return self->priv;
}

static const char *host_profile_name(const trellis_plugin *self)
{
    LIVE(self, "");
    return self->profile ? profile_name(self->profile) : "";
}

static const char *binding_field(const trellis_plugin *self)
{
    LIVE(self, "");
    return self->profile ? profile_cfg(self->profile)->binding_field : "";
}

static void plugin_log(const trellis_plugin *self, trellis_log_level level, const char *fmt, ...)
{
    LIVE(self, /* void */);
    va_list ap;
    va_start(ap, fmt);
    /* the log's lock must not be left held by a call cut short */
    guard_host_enter();
    log_vmsg(level, self ? self->name : "plugin", fmt, ap);
    guard_host_leave();
    va_end(ap);
}

static int status(trellis_status *st, trellis_code code, const char *reason, const char *fmt, ...)
{
    if (!st)
        return code;
    st->code = code;
    size_t k = reason ? strnlen(reason, sizeof st->reason - 1) : 0;
    memcpy(st->reason, reason ? reason : "", k);
    st->reason[k] = '\0';
    st->message[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fmt_v(st->message, sizeof st->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *obj_kind(const trellis_object *o)
{
    return o->kind;
}
static const char *obj_api(const trellis_object *o)
{
    return o->api_version;
}
static const char *obj_ns(const trellis_object *o)
{
    return o->namespace_;
}
static const char *obj_name(const trellis_object *o)
{
    return o->name;
}
static const char *obj_uid(const trellis_object *o)
{
    return o->uid;
}

static void *object_data(const trellis_plugin *self, const trellis_object *o)
{
    LIVE(self, NULL);
    if (!o || self->slot < 0 || (size_t)self->slot >= o->naux)
        return NULL;
    return o->aux[self->slot];
}

static const trellis_object *target_object(const trellis_target *t)
{
    return t->obj;
}
static const char *target_name(const trellis_target *t)
{
    return t->obj ? t->obj->name : t->name;
}
static const char *target_key(const trellis_target *t)
{
    return t->name;
}
static size_t target_workload_count(const trellis_target *t)
{
    return t->n_wl;
}

static const trellis_object *target_workload(const trellis_target *t, size_t i)
{
    return i < t->n_wl ? t->wl[i] : NULL;
}

static const int64_t *target_counters(const trellis_plugin *self, const trellis_target *t)
{
    LIVE(self, NULL);
    return self->n_counters ? t->sums + self->counter_off : NULL;
}

static const int64_t *workload_counters(const trellis_plugin *self, const trellis_object *w)
{
    LIVE(self, NULL);
    return self->n_counters && w->counters ? w->counters + self->counter_off : NULL;
}

static void cycle_set(trellis_cycle *c, const trellis_plugin *self, void *data)
{
    LIVE(self, /* void */);
    if (c && self && (size_t)self->index < c->cap_plugins)
        c->slots[self->index] = data;
}

static void *cycle_get(const trellis_cycle *c, const trellis_plugin *self)
{
    LIVE(self, NULL);
    if (c && self && (size_t)self->index < c->cap_plugins)
        return c->slots[self->index];
    return NULL;
}

static size_t cycle_target_count(const trellis_cycle *c)
{
    return c->n;
}

static void *const *cycle_target_data(const trellis_cycle *c, const trellis_plugin *self)
{
    LIVE(self, NULL);
    if (!c || !c->p || !self || self->slot < 0 || self->slot >= c->p->snap.n_slots)
        return NULL;
    return snapshot_data(&c->p->snap, self->slot);
}

static const int64_t *cycle_target_values(const trellis_cycle *c, const trellis_plugin *self, int k)
{
    LIVE(self, NULL);
    if (!c || !c->p || !self || k < 0 || k >= self->n_tvalues)
        return NULL;
    return snapshot_values(&c->p->snap, self->tvalue_off + k);
}

static const int64_t *cycle_target_counter(const trellis_cycle *c, const trellis_plugin *self,
                                           int k)
{
    LIVE(self, NULL);
    if (!c || !c->p || !self || k < 0 || k >= self->n_counters)
        return NULL;
    return snapshot_counter(&c->p->snap, self->counter_off + k);
}

static const trellis_target *cycle_target(const trellis_cycle *c, size_t i)
{
    return i < c->n ? c->targets[i] : NULL;
}

static int cycle_target_code(const trellis_cycle *c, size_t i)
{
    if (i >= c->n)
        return TRELLIS_ERROR;
    return framework_code((trellis_cycle *)c, i);
}

static int cycle_filter_without(trellis_cycle *c, const trellis_target *t,
                                const trellis_object *const *victims, size_t n, trellis_status *st)
{
    trellis_status tmp;
    if (!c->in_post_filter)
        return TRELLIS_ERROR;
    return framework_filter_without(c, t, victims, n, st ? st : &tmp);
}

/* The hooks a function that writes may be called from: the binding
 * cycle (and the post-filter, whose evictions are writes). A write from a
 * scheduling hook (filter, score: on worker threads, against a snapshot)
 * or from prepare is refused. */
static int write_allowed(const char *hook)
{
    static const char *const ok[] = {"post_filter", "reserve", "unreserve", "permit",
                                     "pre_bind",    "bind",    "post_bind", "finalize",
                                     "target_lost", "decided"};
    if (!hook)
        return 1; /* not inside a hook: a plugin's own thread (permits) */
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strcmp(hook, ok[i]) == 0)
            return 1;
    return 0;
}

/* Services (services.h), with the checks every caller gets: the plugin
 * is live, the host gave it services, and the phase allows the call. */
enum { ANY_PHASE, WRITES, READS };

static const host_services *svc_for(const trellis_plugin *self, const char *fn, int kind, char *err,
                                    size_t errlen)
{
    if (!self || retired(self, fn)) {
        errf(err, errlen, "%s: refused", fn);
        return NULL;
    }
    if (!self->svc) {
        errf(err, errlen, "%s: not available here (no scheduler behind this host)", fn);
        return NULL;
    }
    const char *hook = guard_hook();
    if (kind == WRITES && !write_allowed(hook)) {
        errf(err, errlen,
             "%s called from %s: refused (writes belong to the post-filter, the binding "
             "cycle, finalize, target_lost and decided)",
             fn, hook);
        log_msg(TRELLIS_LOG_ERROR, self->name, "%s", err);
        return NULL;
    }
    if (kind == READS && hook &&
        (strcmp(hook, "pre_bind") == 0 || strcmp(hook, "bind") == 0 ||
         strcmp(hook, "post_bind") == 0)) {
        /* the binding thread runs beside the main thread, which changes
         * the objects: reads belong to the scheduling cycle and prepare */
        errf(err, errlen,
             "%s called from %s: refused (objects are read in prepare and the "
             "scheduling cycle)",
             fn, hook);
        log_msg(TRELLIS_LOG_ERROR, self->name, "%s", err);
        return NULL;
    }
    return self->svc;
}

static int evict(trellis_cycle *c, const trellis_plugin *self, const trellis_object *victim,
                 const char *reason, char *err, size_t errlen)
{
    const host_services *s = svc_for(self, "evict", WRITES, err, errlen);
    return s ? s->evict(s->ud, c, self, victim, reason, err, errlen) : -1;
}

static int create_target(trellis_cycle *c, const trellis_plugin *self, const char *json, char *err,
                         size_t errlen)
{
    const host_services *s = svc_for(self, "create_target", WRITES, err, errlen);
    return s ? s->create_target(s->ud, c, self, json, err, errlen) : -1;
}

static int nominate(trellis_cycle *c, const trellis_target *t)
{
    if (!c || !c->in_post_filter || c->in_review || !t || !c->d)
        return -1;
    /* not a target a pre-filter left out of the cycle */
    size_t i = cycle_pos(c, t);
    if (i != SIZE_MAX && !cycle_in_set(c, i))
        return -1;
    decision_nominate(c->d, t->name);
    c->nominated_to = t;
    return 0;
}

static int store_set_field(const trellis_plugin *self, const trellis_object *o, const char *path,
                           const char *value, char *err, size_t errlen)
{
    const host_services *s = svc_for(self, "store_set_field", WRITES, err, errlen);
    store_edit e = {path, value, STORE_SET};
    return s ? s->patch(s->ud, self, o, NULL, &e, 1, err, errlen) : -1;
}

static int permit_set(const trellis_plugin *self, const char *fn, const char *ns, const char *name,
                      int allow, const char *reason)
{
    char err[256];
    const host_services *s = svc_for(self, fn, ANY_PHASE, err, sizeof err);
    return s && name ? s->permit(s->ud, ns, name, allow, reason) : -1;
}

static int permit_allow(const trellis_plugin *self, const char *ns, const char *name)
{
    return permit_set(self, "permit_allow", ns, name, 1, NULL);
}

static int permit_reject(const trellis_plugin *self, const char *ns, const char *name,
                         const char *reason)
{
    return permit_set(self, "permit_reject", ns, name, 0, reason);
}

static const trellis_object *lookup_object(const trellis_plugin *self, const char *kind,
                                           const char *ns, const char *name)
{
    char err[256];
    const host_services *s = svc_for(self, "lookup_object", READS, err, sizeof err);
    if (!s || !kind || !name)
        return NULL;
    return s->lookup(s->ud, kind, ns ? ns : "", name);
}

static int foreach_object(const trellis_plugin *self, const char *kind, const char *ns,
                          int (*cb)(const trellis_object *o, void *ud), void *ud)
{
    char err[256];
    const host_services *s = svc_for(self, "foreach_object", READS, err, sizeof err);
    if (!s || !kind || !cb)
        return 0;
    return s->foreach (s->ud, kind, ns, cb, ud);
}

static int64_t clock_now(const trellis_plugin *self)
{
    char err[256];
    const host_services *s = svc_for(self, "clock_now", ANY_PHASE, err, sizeof err);
    return s ? s->now(s->ud) : 0;
}

static int time_parse(const char *text, int64_t *ms)
{
    int64_t v;
    if (!ms || clock_parse(text, &v) < 0)
        return -1;
    *ms = v;
    return 0;
}

static void cycle_retry_at(trellis_cycle *c, int64_t ms)
{
    if (c)
        cycle_note_retry(c, ms);
}

static int in_hook(const char *const *ok, size_t n);

static void cycle_note(trellis_cycle *c, const trellis_plugin *self, const char *fmt, ...)
{
    static const char *const ok[] = {"pre_filter", "post_filter", "pre_score",        "normalize",
                                     "reserve",    "permit",      "review_candidates"};
    if (!c || !c->d || !fmt || !in_hook(ok, sizeof ok / sizeof *ok) || !self ||
        retired(self, "cycle_note"))
        return;
    char text[TRELLIS_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    fmt_v(text, sizeof text, fmt, ap);
    va_end(ap);
    decision_add_note(c->d, self->name, text);
}

/* Whether the plugin is in one of the hooks of ok[0..n). */
static int in_hook(const char *const *ok, size_t n)
{
    const char *hook = guard_hook();
    int allowed = 0;
    for (size_t i = 0; hook && i < n; i++)
        allowed |= strcmp(hook, ok[i]) == 0;
    return allowed;
}

static void cycle_want(trellis_cycle *c, uint32_t n)
{
    static const char *const ok[] = {"pre_filter"};
    if (c && in_hook(ok, 1))
        c->want = c->p && c->p->placed ? n : 1;
}

static int cycle_narrow(trellis_cycle *c, const trellis_plugin *self, const uint32_t *idx, size_t n)
{
    static const char *const ok[] = {"pre_filter"};
    if (!c || !self || (n && !idx) || !in_hook(ok, 1) || retired(self, "cycle_narrow"))
        return -1;
    return cycle_narrow_to(c, self->index, idx, n);
}

static size_t cycle_held_count(const trellis_cycle *c)
{
    return c ? c->n_held : 0;
}

static const char *cycle_held(const trellis_cycle *c, size_t i)
{
    return c && i < c->n_held ? c->held[i] : NULL;
}

/* Whether target is on the list v[0..n). */
static int listed(const char *const *v, size_t n, const char *target)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], target) == 0)
            return 1;
    return 0;
}

/* Put the held target on *v (released or reconsidered), once: 0, or -1
 * when it is not held or already given up or put to the vote. */
static int give_up(trellis_cycle *c, const trellis_plugin *self, const char *target,
                   const char *reason, const char *fn, const char ***v, size_t *n, const char *dflt)
{
    static const char *const ok[] = {"pre_filter"};
    if (!c || !target || !self || !in_hook(ok, 1) || retired(self, fn))
        return -1;
    if (listed(c->released, c->n_released, target) ||
        listed(c->reconsidered, c->n_reconsidered, target))
        return -1;
    for (size_t i = 0; i < c->n_held; i++) {
        if (strcmp(c->held[i], target) != 0)
            continue;
        if (!*v)
            *v = cycle_alloc(c, c->n_held * sizeof **v);
        if (!*v)
            return -1;
        (*v)[(*n)++] = c->held[i];
        if (c->d)
            decision_add_note(c->d, self->name, reason && *reason ? reason : dflt);
        return 0;
    }
    return -1;
}

static int cycle_release(trellis_cycle *c, const trellis_plugin *self, const char *target,
                         const char *reason)
{
    return give_up(c, self, target, reason, "cycle_release", &c->released, &c->n_released,
                   "released");
}

static int cycle_reconsider(trellis_cycle *c, const trellis_plugin *self, const char *target,
                            const char *reason)
{
    if (!c || !c->p || !c->p->placed) /* a field holds one: nothing to vote on */
        return -1;
    return give_up(c, self, target, reason, "cycle_reconsider", &c->reconsidered,
                   &c->n_reconsidered, "reconsidered");
}

static size_t cycle_pick_count(const trellis_cycle *c)
{
    return c ? c->n_picks : 0;
}

static const trellis_target *cycle_pick(const trellis_cycle *c, size_t i)
{
    return c && i < c->n_picks ? c->picks[i] : NULL;
}

static int cycle_held_kept(const trellis_cycle *c, size_t i)
{
    if (!c || i >= c->n_held || listed(c->released, c->n_released, c->held[i]))
        return 0;
    if (!cycle_reconsidered(c, c->held[i]))
        return 1;
    for (size_t k = 0; k < c->n_picks; k++)
        if (strcmp(c->picks[k]->name, c->held[i]) == 0)
            return 1;
    return 0;
}

static int cycle_target_status(trellis_cycle *c, size_t i, trellis_status *st)
{
    static const char *const ok[] = {"post_filter", "decided"};
    if (st)
        memset(st, 0, sizeof *st);
    if (!c || i >= c->n || !in_hook(ok, 2) || !c->filtered)
        return TRELLIS_SUCCESS;
    if (!st) { /* the verdict alone: no filter runs again */
        int rej = framework_rej(c, i);
        if (rej == -1 || rej == REJ_NOT_EVALUATED)
            return TRELLIS_SUCCESS;
        return rej == REJ_PRE_FILTER              ? c->pre_status.code
               : rej == REJ_NARROWED              ? TRELLIS_UNRESOLVABLE
               : c->cands[i].code == CODE_UNKNOWN ? TRELLIS_UNSCHEDULABLE
                                                  : c->cands[i].code;
    }
    const trellis_plugin *who;
    return framework_explain(c, i, &who, st);
}

/* Only the plugin whose filter_feasible runs, on a target still
 * feasible, with a rejection's code. */
static int host_cycle_reject(trellis_cycle *c, const trellis_plugin *self, const trellis_target *t,
                             const trellis_status *st)
{
    if (!c || !self || !t || !st || c->in_filter_feasible != self || retired(self, __func__))
        return -1;
    if (st->code != TRELLIS_UNSCHEDULABLE && st->code != TRELLIS_UNRESOLVABLE)
        return -1;
    size_t i = cycle_pos(c, t);
    if (i == SIZE_MAX || !(c->pass[i / 64] & (1ull << (i % 64))))
        return -1;
    trellis_status copy = *st;
    copy.reason[sizeof copy.reason - 1] = '\0';
    copy.message[sizeof copy.message - 1] = '\0';
    if (!copy.reason[0])
        snprintf(copy.reason, sizeof copy.reason, "Rejected");
    cycle_reject_late(c, self, i, &copy);
    return 0;
}

/* A post_filter's own call (not a reviewer's, not another hook's), on
 * candidates it owns. */
static int cycle_review_candidates(trellis_cycle *c, const trellis_plugin *self,
                                   trellis_candidate *cands, size_t *n, trellis_status *st)
{
    static const char *const ok[] = {"post_filter"};
    trellis_status tmp;
    if (!st)
        st = &tmp;
    memset(st, 0, sizeof *st);
    if (!c || !self || !n || (*n && !cands) || retired(self, __func__) || !c->in_post_filter ||
        c->in_review || !in_hook(ok, 1)) {
        st->code = TRELLIS_ERROR;
        snprintf(st->reason, sizeof st->reason, "ReviewRefused");
        snprintf(st->message, sizeof st->message,
                 "cycle_review_candidates: refused (a post_filter's call, outside a review)");
        return TRELLIS_ERROR;
    }
    if (*n == 0)
        return TRELLIS_SUCCESS;
    return framework_review(c, self, cands, n, st);
}

static const trellis_object *cycle_held_object(const trellis_cycle *c, size_t i)
{
    if (!c || i >= c->n_held || !c->p || !c->p->placed || !c->w)
        return NULL;
    return placements_binding(c->p->placed, c->w, c->held[i], 1);
}

static void cycle_requeue_now(trellis_cycle *c)
{
    static const char *const ok[] = {"pre_filter", "post_filter", "pre_score",
                                     "normalize",  "reserve",     "permit"};
    if (c && in_hook(ok, sizeof ok / sizeof *ok))
        c->requeue_now = 1;
}

static int cycle_score(const trellis_cycle *c, const char *plugin, const trellis_target *t,
                       int64_t *out)
{
    static const char *const ok[] = {"normalize", "reserve", "permit", "decided"};
    if (!c || !c->scored || !plugin || !t || !out || !in_hook(ok, sizeof ok / sizeof *ok))
        return -1;
    const profile *p = c->p;
    size_t nf = c->n_feasible;
    for (size_t k = 0; k < p->score.n; k++) {
        const trellis_plugin *pl = p->score.v[k];
        if (strcmp(pl->name, plugin) != 0 || c->skip_score[pl->index])
            continue;
        /* the handle itself first (a binder asks of the targets it was
         * handed), then by name (a copy of a handle); names are unique
         * in a cycle, so both find the same entry */
        for (size_t j = 0; j < nf; j++) {
            if (c->feasible[j] == t) {
                *out = c->rows[k][j];
                return 0;
            }
        }
        for (size_t j = 0; j < nf; j++) {
            if (strcmp(c->feasible[j]->name, t->name) == 0) {
                *out = c->rows[k][j];
                return 0;
            }
        }
    }
    return -1;
}

static int declare_kinds(trellis_plugin *self, const char *const *kinds)
{
    if (outside_init(self, "declare_kinds") || !kinds)
        return -1;
    for (size_t i = 0; kinds[i]; i++) {
        const char *k = kinds[i];
        int ok = *k != '\0' && strlen(k) < 128;
        for (const char *q = k; ok && *q; q++)
            ok = (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9');
        if (!ok) {
            log_msg(TRELLIS_LOG_ERROR, self->name,
                    "declare_kinds: '%.128s' is not a kind (letters and digits, like ConfigMap)",
                    k);
            return -1;
        }
    }
    for (size_t i = 0; kinds[i]; i++) {
        int have = 0;
        for (size_t j = 0; j < self->n_kinds && !have; j++)
            have = strcmp(self->kinds[j], kinds[i]) == 0;
        if (have)
            continue;
        self->kinds = xrealloc(self->kinds, (self->n_kinds + 1) * sizeof *self->kinds);
        self->kinds[self->n_kinds++] = xstrdup(kinds[i]);
    }
    return 0;
}

/* A plugin's edits as the store's, into e (TRELLIS_EDITS_MAX): 0, or -1
 * with err naming fn and the edit. */
static int to_store_edits(const trellis_edit *edits, size_t n, store_edit *e, const char *fn,
                          char *err, size_t errlen)
{
    if ((n && !edits) || n > TRELLIS_EDITS_MAX)
        return errf(err, errlen, "%s: %s", fn,
                    n > TRELLIS_EDITS_MAX ? "at most TRELLIS_EDITS_MAX (64) edits" : "no edits");
    /* a removal takes any field, a list or a map too: a JSON set of nothing */
    static const int ops[] = {STORE_SET, STORE_SET_JSON, STORE_SET_JSON, STORE_LIST_ADD,
                              STORE_LIST_REMOVE};
    for (size_t i = 0; i < n; i++) {
        if (edits[i].op < 0 || edits[i].op > TRELLIS_EDIT_LIST_REMOVE || !edits[i].path ||
            (edits[i].op != TRELLIS_EDIT_REMOVE && !edits[i].value))
            return errf(err, errlen, "%s: edit %zu: %s", fn, i,
                        !edits[i].path ? "no path" : "unknown op or no value");
        e[i] =
            (store_edit){edits[i].path, edits[i].op == TRELLIS_EDIT_REMOVE ? NULL : edits[i].value,
                         ops[edits[i].op]};
    }
    return 0;
}

/* A counter's name: what an operator reads next to its amounts. */
static int counter_name_ok(const char *s)
{
    size_t n = strlen(s);
    for (const char *q = s; *q; q++)
        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
              strchr(".-_/", *q)))
            return 0;
    return n > 0 && n < 64;
}

static int name_counters(trellis_plugin *self, const char *const *names, const trellis_unit *units,
                         trellis_allocated_fn fn)
{
    if (outside_init(self, "name_counters") || !names || !units || self->counter_names)
        return -1;
    if (!self->n_counters) {
        log_msg(TRELLIS_LOG_ERROR, self->name,
                "name_counters: no counters declared (call declare_counters first)");
        return -1;
    }
    for (int i = 0; i < self->n_counters; i++) {
        if (names[i] && !counter_name_ok(names[i])) {
            log_msg(TRELLIS_LOG_ERROR, self->name,
                    "name_counters: counter %d: '%.64s' is not a name (1 to 63 letters, digits "
                    "and \".-_/\", like cpu or nvidia.com/gpu)",
                    i, names[i]);
            return -1;
        }
        if (names[i] && ((int)units[i] < 0 || (int)units[i] > (int)TRELLIS_UNIT_BYTES)) {
            log_msg(TRELLIS_LOG_ERROR, self->name,
                    "name_counters: counter %d (%s): unknown unit %d (this host knows 0 to %d)", i,
                    names[i], (int)units[i], (int)TRELLIS_UNIT_BYTES);
            return -1;
        }
    }
    self->counter_names = xcalloc((size_t)self->n_counters, sizeof *self->counter_names);
    self->counter_units = xcalloc((size_t)self->n_counters, sizeof *self->counter_units);
    for (int i = 0; i < self->n_counters; i++) {
        self->counter_names[i] = names[i] ? xstrdup(names[i]) : NULL;
        self->counter_units[i] = names[i] ? units[i] : TRELLIS_UNIT_COUNT;
    }
    self->h.allocated = fn;
    return 0;
}

static int store_patch(const trellis_plugin *self, const trellis_object *o, const char *subresource,
                       const trellis_edit *edits, size_t n, char *err, size_t errlen)
{
    const host_services *s = svc_for(self, "store_patch", WRITES, err, errlen);
    if (!s)
        return -1;
    if (!o)
        return errf(err, errlen, "store_patch: no object");
    store_edit e[TRELLIS_EDITS_MAX];
    if (to_store_edits(edits, n, e, "store_patch", err, errlen) < 0)
        return -1;
    return s->patch(s->ud, self, o, subresource, e, n, err, errlen);
}

static int store_create(const trellis_plugin *self, const char *json, char *err, size_t errlen)
{
    const host_services *s = svc_for(self, "store_create", WRITES, err, errlen);
    if (!s)
        return -1;
    if (!json)
        return errf(err, errlen, "store_create: no manifest");
    return s->create(s->ud, self, json, err, errlen);
}

static int store_delete(const trellis_plugin *self, const trellis_object *o, char *err,
                        size_t errlen)
{
    const host_services *s = svc_for(self, "store_delete", WRITES, err, errlen);
    if (!s)
        return -1;
    if (!o)
        return errf(err, errlen, "store_delete: no object");
    return s->remove(s->ud, self, o, err, errlen);
}

static int store_bind_edits(const trellis_plugin *self, const trellis_object *w,
                            const trellis_target *t, const trellis_edit *edits, size_t n, char *err,
                            size_t errlen)
{
    const char *fn = edits ? "store_bind_edits" : "store_bind";
    const host_services *s = svc_for(self, fn, WRITES, err, errlen);
    if (!s)
        return -1;
    if (!w || !t || !t->obj)
        return errf(err, errlen, "%s: %s", fn, !w ? "no workload" : "no target object");
    store_edit e[TRELLIS_EDITS_MAX];
    if (to_store_edits(edits, n, e, fn, err, errlen) < 0)
        return -1;
    return s->bind(s->ud, self, w, t->obj, e, n, err, errlen);
}

static int store_bind(const trellis_plugin *self, const trellis_object *w, const trellis_target *t,
                      char *err, size_t errlen)
{
    return store_bind_edits(self, w, t, NULL, 0, err, errlen);
}

static const trellis_value *arg_document(const trellis_args *a, const char *key)
{
    const arg_value *v = args_find(a, key);
    if (!v || v->spec->type != TRELLIS_ARG_DOCUMENT || !v->doc)
        return NULL;
    return ((const trellis_object *)v->doc)->root;
}

static int arg_document_where(const trellis_args *a, const char *key, const char *const *path,
                              size_t depth, char *buf, size_t len)
{
    const arg_value *v = args_find(a, key);
    if (!v || v->spec->type != TRELLIS_ARG_DOCUMENT || !v->doc)
        return -1;
    for (size_t i = 0; i < depth; i++)
        if (!path || !path[i])
            return -1;
    int line = fieldline_in_text(v->text, v->text_len, path, depth);
    const char *file = v->path ? v->path : "(inline)";
    if (buf && len) {
        if (line)
            snprintf(buf, len, "%s:%d", file, line);
        else
            snprintf(buf, len, "%s", file);
    }
    return line;
}

static const trellis_host table = {
    .size = sizeof(trellis_host),
    .sdk_major = TRELLIS_SDK_MAJOR,
    .sdk_minor = TRELLIS_SDK_MINOR,
    .register_prepare_workload = reg_prepare_workload,
    .register_prepare_target = reg_prepare_target,
    .register_release = reg_release,
    .declare_counters = declare_counters,
    .register_queue_sort = reg_queue_sort,
    .register_pre_filter = reg_pre_filter,
    .register_filter = reg_filter,
    .register_filter_batch = reg_filter_batch,
    .register_post_filter = reg_post_filter,
    .register_pre_score = reg_pre_score,
    .register_score = reg_score,
    .register_score_batch = reg_score_batch,
    .register_normalize = reg_normalize,
    .register_reserve = reg_reserve,
    .register_unreserve = reg_unreserve,
    .register_permit = reg_permit,
    .register_pre_bind = reg_pre_bind,
    .register_bind = reg_bind,
    .register_post_bind = reg_post_bind,
    .set_private = set_private,
    .get_private = get_private,
    .profile_name = host_profile_name,
    .binding_field = binding_field,
    .log = plugin_log,
    .status = status,
    .arg_string = args_string,
    .arg_int = args_int,
    .arg_bool = args_bool,
    .arg_double = args_double,
    .arg_list_len = args_list_len,
    .arg_list_at = args_list_at,
    .object_kind = obj_kind,
    .object_api_version = obj_api,
    .object_namespace = obj_ns,
    .object_name = obj_name,
    .object_uid = obj_uid,
    .object_label = object_label,
    .object_annotation = object_annotation,
    .object_get = object_get,
    .object_data = object_data,
    .value_type = value_type,
    .value_string = value_string,
    .value_int = value_int,
    .value_double = value_double,
    .value_bool = value_bool,
    .value_len = value_len,
    .value_at = value_at,
    .value_get = value_get,
    .value_path = value_path,
    .value_foreach = value_foreach,
    .target_object = target_object,
    .target_name = target_name,
    .target_workload_count = target_workload_count,
    .target_workload = target_workload,
    .target_counters = target_counters,
    .workload_counters = workload_counters,
    .cycle_set = cycle_set,
    .cycle_get = cycle_get,
    .cycle_alloc = cycle_alloc,
    .cycle_target_count = cycle_target_count,
    .cycle_target = cycle_target,
    .cycle_target_code = cycle_target_code,
    .cycle_filter_without = cycle_filter_without,
    .evict = evict,
    .create_target = create_target,
    .nominate = nominate,
    .store_set_field = store_set_field,
    .permit_allow = permit_allow,
    .permit_reject = permit_reject,
    .lookup_object = lookup_object,
    .foreach_object = foreach_object,
    .register_eviction_check = reg_eviction_check,
    .register_events = reg_events,
    .register_filter_span = reg_filter_span,
    .register_score_span = reg_score_span,
    .cycle_target_data = cycle_target_data,
    .declare_target_values = declare_target_values,
    .cycle_target_values = cycle_target_values,
    .cycle_target_counter = cycle_target_counter,
    .register_equivalent = reg_equivalent,
    .clock_now = clock_now,
    .time_parse = time_parse,
    .cycle_retry_at = cycle_retry_at,
    .target_key = target_key,
    .store_patch = store_patch,
    .store_create = store_create,
    .store_delete = store_delete,
    .register_pre_enqueue = reg_pre_enqueue,
    .register_finalize = reg_finalize,
    .arg_document = arg_document,
    .arg_document_where = arg_document_where,
    .cycle_held_object = cycle_held_object,
    .cycle_reconsider = cycle_reconsider,
    .store_bind_edits = store_bind_edits,
    .register_decided = reg_decided,
    .cycle_pick_count = cycle_pick_count,
    .cycle_pick = cycle_pick,
    .cycle_held_kept = cycle_held_kept,
    .cycle_target_status = cycle_target_status,
    .name_counters = name_counters,
    .store_bind = store_bind,
    .register_target_lost = reg_target_lost,
    .cycle_note = cycle_note,
    .cycle_want = cycle_want,
    .cycle_held_count = cycle_held_count,
    .cycle_held = cycle_held,
    .cycle_release = cycle_release,
    .cycle_requeue_now = cycle_requeue_now,
    .cycle_score = cycle_score,
    .declare_kinds = declare_kinds,
    .register_filter_feasible = reg_filter_feasible,
    .cycle_reject = host_cycle_reject,
    .register_review_candidates = reg_review_candidates,
    .cycle_review_candidates = cycle_review_candidates,
    .cycle_narrow = cycle_narrow,
};

const trellis_host *hostapi_table(void)
{
    return &table;
}
