/*
 * routing.c - see routing.h.
 */
#include "config.h"

#include "routing.h"

#include <string.h>

#include "binder.h"
#include "binding.h"
#include "events.h"
#include "placements.h"
#include "runtime.h"
#include "util.h"

profile *routing_profile_for(const sched *s, const trellis_object *w)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        const cfg_profile *pc = p->cfg;
        if (!profile_is_workload_kind(p, w))
            continue;
        if (!pc->scheduler_name_field)
            return p;
        const char *name = value_string(object_get(w, pc->scheduler_name_field));
        if (!name || !*name) {
            if (pc->is_default || strcmp(pc->name, "default-scheduler") == 0)
                return p;
        } else if (strcmp(name, pc->name) == 0) {
            return p;
        }
    }
    return NULL;
}

profile *routing_owner_for(const sched *s, const trellis_object *w)
{
    profile *p = routing_profile_for(s, w);
    if (p)
        return p;
    for (size_t i = 0; i < s->n_profiles; i++)
        if (profile_is_workload_kind(&s->profiles[i], w))
            return &s->profiles[i];
    return NULL;
}

int routing_is_target(const sched *s, const trellis_object *o)
{
    for (size_t i = 0; i < s->n_profiles; i++)
        if (profile_is_target_kind(&s->profiles[i], o))
            return 1;
    return 0;
}

profile *routing_binding_owner(const sched *s, const trellis_object *o)
{
    for (size_t i = 0; i < s->n_profiles; i++)
        if (s->profiles[i].placed && placements_claims(s->profiles[i].placed, o))
            return &s->profiles[i];
    return NULL;
}

typedef struct count_ctx {
    sched *s;
    const char *kind;
    trellis_object *w;
} count_ctx;

static void count_one(void *ud, const char *target)
{
    count_ctx *cc = ud;
    cache_add_bound(&cc->s->cache, cc->w, cc->kind, target);
}

void routing_count_placements(sched *s, profile *p, trellis_object *w)
{
    count_ctx cc = {s, p->cfg->target_kind, w};
    binding_each_counted(p, w, count_one, &cc);
}

void routing_nominations(sched *s, const profile *p, const trellis_object *old, trellis_object *w)
{
    nominator *m = &s->cache.nom;
    const cache_workload *cw = cache_get_workload(&s->cache, w);
    const char *to = profile_workload_nominated(p, w);
    if (cw && cw->n_as) {
        nominator_drop(m, w); /* placed */
        return;
    }
    if (to)
        nominator_set(m, w, p->cfg->target_kind, to);
    else if (old && !profile_workload_nominated(p, old))
        nominator_refresh(m, w); /* kube's updateNominatedPod keeps it */
    else
        nominator_drop(m, w);
}

int routing_wants_cycle(const profile *p, const trellis_object *w)
{
    char buf[BINDING_KEY_MAX];
    if (profile_workload_finished(p, w))
        return 0; /* ran to its end: never placed again */
    /* binding objects: how many a workload wants is its plugins' to say,
     * so a placed one gets a cycle as well */
    return p->cfg->reconcile || p->placed || !binding_target(p, w, buf, sizeof buf);
}

void routing_set_held(sched *s, const profile *p, trellis_cycle *c, const trellis_object *w)
{
    c->held = NULL;
    c->n_held = 0;
    if (!p->placed && !p->cfg->reconcile)
        return; /* it is pending: it holds nothing */
    const cache_workload *cw = cache_get_workload(&s->cache, w);
    if (!cw || !cw->n_as)
        return;
    size_t len = 0;
    for (size_t i = 0; i < cw->n_as; i++)
        if (binding_is_on(p, w, cw->as[i].target->name))
            len += strlen(cw->as[i].target->name) + 1;
    grow(&s->held, &s->cap_held, cw->n_as, sizeof *s->held);
    grow(&s->held_buf, &s->cap_held_buf, len + 1, 1);
    char *at = s->held_buf;
    for (size_t i = 0; i < cw->n_as; i++) {
        const char *name = cw->as[i].target->name;
        if (!binding_is_on(p, w, name))
            continue;
        size_t l = strlen(name) + 1;
        memcpy(at, name, l);
        s->held[c->n_held++] = at;
        at += l;
    }
    c->held = s->held;
}

void routing_finalize(sched *s, profile *p, trellis_object *w)
{
    run_finalize(p, w);
    if (s->binder && p->finalize.n)
        binder_request_flush(s->binder);
}

void routing_enqueue(sched *s, profile *p, trellis_object *w)
{
    queue_add(&p->q, w, s->now_ms);
    s->n_pending++;
}

void routing_gate(sched *s, profile *p, trellis_object *w)
{
    (void)s;
    queue_gate(&p->q, w);
}

void routing_event(sched *s, profile *p, const trellis_object *w, const char *type,
                   const char *reason, const char *message, const char *codes)
{
    if (!p->cfg->events)
        return;
    events_record(s->st, s->wall_ms, p->cfg->name, w, type, reason, message, codes);
    if (s->binder)
        binder_request_flush(s->binder);
}
