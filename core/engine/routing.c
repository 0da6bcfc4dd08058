/*
 * routing.c - see routing.h.
 */
#include "config.h"

#include "routing.h"

#include <string.h>

#include "binder.h"
#include "events.h"
#include "runtime.h"

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

int routing_being_deleted(const trellis_object *w)
{
    const trellis_value *v = object_get(w, "metadata.deletionTimestamp");
    return v && value_type(v) != TRELLIS_VALUE_NULL;
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

void routing_event(sched *s, profile *p, const trellis_object *w, const char *type,
                   const char *reason, const char *message, const char *codes)
{
    if (!p->cfg->events)
        return;
    events_record(s->st, s->wall_ms, p->cfg->name, w, type, reason, message, codes);
    if (s->binder)
        binder_request_flush(s->binder);
}
