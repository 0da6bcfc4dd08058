/*
 * services.c - the scheduler's side of services.h: what the host table
 * may ask of it on a plugin's behalf.
 */
#include "config.h"

#include "services.h"

#include <stdlib.h>
#include <string.h>

#include "bindcycle.h"
#include "binding.h"
#include "edit.h"
#include "heldwrites.h"
#include "log.h"
#include "ownwrites.h"
#include "routing.h"
#include "sched_impl.h"
#include "util.h"

/* the store writes plugins made on this thread (services_writes_here) */
static _Thread_local uint64_t writes_here;

uint64_t services_writes_here(void)
{
    return writes_here;
}

/* Clear the victim's placement, take it off the targets it was placed on
 * (a status field counting it elsewhere stays) and queue it again. */
static int svc_evict(void *ud, trellis_cycle *c, const trellis_plugin *pl,
                     const trellis_object *victim, const char *reason, char *err, size_t errlen)
{
    sched *s = ud;
    if (!c->in_post_filter)
        return errf(err, errlen, "evict is only allowed in a post-filter");
    cache_workload *cw = cache_get_workload(&s->cache, victim);
    if (!cw || !cw->n_as)
        return errf(err, errlen, "%s %s is not assigned to any target", victim->kind, victim->key);
    for (size_t i = 0; i < cw->n_as; i++)
        if (cw->as[i].assumed)
            return errf(err, errlen, "%s %s is being bound (assumed on %s); it cannot be evicted",
                        victim->kind, victim->key, cw->as[i].target->name);
    trellis_object *v = object_ref(cw->obj);
    profile *vp = routing_owner_for(s, v);
    if (!vp)
        vp = c->p;
    strbuf from;
    sb_init(&from);
    int rc = 0;
    binding_change ch;
    /* every placement goes (one field, or each binding object); a status
     * field counting it elsewhere stays */
    for (size_t i = 0; i < cw->n_as && rc == 0;) {
        cache_target *t = cw->as[i].target;
        if (!binding_is_on(vp, v, t->name)) {
            i++;
        } else if ((rc = binding_release(vp, s->st, v, t->name, &ch, err, errlen)) == 0) {
            own_note_binding(s, &ch);
            sb_printf(&from, "%s%s", from.len ? "," : "", t->name);
            cache_forget(&s->cache, v, t);
        }
    }
    if (rc < 0 && !from.len) {
        sb_free(&from);
        object_unref(v);
        return -1;
    }
    decision_add_evicted(c->d, v);
    c->n_evicted++;
    log_info("plugin %s: evicted %s %s from %s: %s", pl->name, v->kind, v->key, from.s,
             reason ? reason : "");
    sb_free(&from);
    profile *sp = routing_profile_for(s, v);
    if (sp)
        queue_add(&sp->q, v, s->now_ms);
    object_unref(v);
    c->changed = 1;
    return 0;
}

static int svc_create_target(void *ud, trellis_cycle *c, const trellis_plugin *pl, const char *json,
                             char *err, size_t errlen)
{
    sched *s = ud;
    if (!c->in_post_filter)
        return errf(err, errlen, "create_target is only allowed in a post-filter");
    trellis_object *o = object_from_json(json, err, errlen);
    if (!o)
        return -1;
    const cfg_profile *pc = c->p->cfg;
    trellis_object *t = NULL; /* as stored */
    const cache_target *have = NULL;
    if (!profile_is_target_kind(c->p, o))
        errf(err, errlen, "a created target must be of kind %s, not %s", pc->target_kind, o->kind);
    else if ((have = cache_get_target(&s->cache, o->kind, o->key)) && have->t.obj)
        errf(err, errlen, "%s %s exists already", o->kind, o->key);
    else
        t = s->st->ops->create(s->st, o, err, errlen);
    object_unref(o);
    if (!t)
        return -1;
    writes_here++;
    index_prepare(s->ix, t, 0);
    cache_set_target(&s->cache, t);
    index_set(s->ix, t);
    decision_add_created(c->d, t);
    log_info("plugin %s: created %s %s", pl->name, t->kind, t->key);
    c->changed = 1;
    object_unref(t);
    return 0;
}

/* Read your writes: whether the cycles that follow see a plugin's patch
 * or deletion of o at once. Not for a workload, a binding object or a
 * target: the host's view of those moves with the binding cycles and
 * their assumptions (a plugin that counts what a target holds counts an
 * assumed workload until its binding is read back; seeing the target's
 * own patch now as well would count it twice); they are seen once the
 * store reports them. */
static int seen_at_once(const sched *s, const trellis_object *o)
{
    return !routing_owner_for(s, o) && !routing_binding_owner(s, o) && !routing_is_target(s, o);
}

/* whether this thread holds patches back, and those it holds (made at
 * the first: a cycle that writes nothing allocates nothing) */
static _Thread_local int holding;
static _Thread_local held_writes *held;

void services_hold(void)
{
    holding = 1;
}

held_writes *services_held(void)
{
    held_writes *h = held;
    holding = 0;
    held = NULL;
    return h;
}

static int patch_now(sched *s, const trellis_object *o, const char *subresource,
                     const store_edit *edits, size_t n, char *err, size_t errlen)
{
    /* the cycles that follow see the patched object */
    char why[256];
    trellis_object *now =
        seen_at_once(s, o) ? edit_apply_object(o, edits, n, why, sizeof why) : NULL;
    uint64_t gen = now ? own_pending(s, OWN_PATCH, (trellis_object *)o, now) : 0;
    int rc = s->st->ops->patch(s->st, o, subresource, edits, n, err, errlen);
    writes_here += rc == 0;
    if (now && rc < 0) {
        own_pending_drop(s, gen);
    } else if (now) {
        own_pending_queued(s, gen, now);
        own_note_patched(s, now, (trellis_object *)o);
    }
    if (now)
        object_unref(now);
    return rc;
}

static int svc_patch(void *ud, const trellis_plugin *pl, const trellis_object *o,
                     const char *subresource, const store_edit *edits, size_t n, char *err,
                     size_t errlen)
{
    sched *s = ud;
    if (!s->st)
        return errf(err, errlen, "no store");
    if (holding) { /* what can be told now is; the store's own refusal is logged */
        for (size_t i = 0; i < n; i++)
            if (edit_check(o, &edits[i], err, errlen) < 0)
                return -1;
        held_writes_add(&held, pl->name, o, subresource, edits, n);
        return 0;
    }
    return patch_now(s, o, subresource, edits, n, err, errlen);
}

static int svc_create(void *ud, const trellis_plugin *pl, const char *json, char *err,
                      size_t errlen)
{
    sched *s = ud;
    if (!s->st)
        return errf(err, errlen, "no store");
    trellis_object *o = object_from_json(json, err, errlen);
    if (!o)
        return -1;
    uint64_t gen = own_pending(s, OWN_CREATE, NULL, o);
    trellis_object *stored = s->st->ops->create(s->st, o, err, errlen);
    if (stored) {
        writes_here++;
        log_info("plugin %s: created %s %s", pl->name, o->kind, o->key);
        own_pending_queued(s, gen, stored);
        own_note(s, stored, 0); /* read your writes: lookups see it at once */
        object_unref(stored);
    } else {
        own_pending_drop(s, gen);
    }
    object_unref(o);
    return stored ? 0 : -1;
}

static int svc_remove(void *ud, const trellis_plugin *pl, const trellis_object *o, char *err,
                      size_t errlen)
{
    sched *s = ud;
    if (!s->st)
        return errf(err, errlen, "no store");
    int seen = seen_at_once(s, o);
    uint64_t gen = seen ? own_pending(s, OWN_DELETE, (trellis_object *)o, (trellis_object *)o) : 0;
    int rc = s->st->ops->remove(s->st, o, err, errlen);
    writes_here += rc == 0;
    if (rc == 0)
        log_info("plugin %s: deleted %s %s", pl->name, o->kind, o->key);
    if (seen && rc < 0) {
        own_pending_drop(s, gen);
    } else if (seen) {
        own_pending_queued(s, gen, (trellis_object *)o);
        own_note(s, (trellis_object *)o, 1); /* read your writes */
    }
    return rc;
}

static int svc_bind(void *ud, const trellis_plugin *pl, const trellis_object *w,
                    const trellis_object *t, const store_edit *extra, size_t n_extra, char *err,
                    size_t errlen)
{
    sched *s = ud;
    if (!s->st)
        return errf(err, errlen, "no store");
    if (!pl->profile)
        return errf(err, errlen, "store_bind: the plugin belongs to no profile");
    binding_change ch;
    if (binding_record(pl->profile, s->st, w, t, extra, n_extra, &ch, err, errlen) < 0)
        return -1;
    writes_here++;
    own_note_binding(s, &ch); /* seen at once, on the scheduling thread */
    return 0;
}

static int svc_permit(void *ud, const char *ns, const char *name, int allow, const char *reason)
{
    return bindcycle_permit(ud, ns, name, allow, reason);
}

static const trellis_object *svc_lookup(void *ud, const char *kind, const char *ns,
                                        const char *name)
{
    const sched *s = ud;
    return index_lookup(s->ix, kind, ns, name);
}

static int svc_foreach(void *ud, const char *kind, const char *ns,
                       int (*cb)(const trellis_object *o, void *cbud), void *cbud)
{
    const sched *s = ud;
    return index_foreach(s->ix, kind, ns, cb, cbud);
}

static int64_t svc_now(void *ud)
{
    const sched *s = ud;
    return s->wall_ms;
}

void services_init(sched *s, host_services *out)
{
    out->ud = s;
    out->evict = svc_evict;
    out->create_target = svc_create_target;
    out->permit = svc_permit;
    out->lookup = svc_lookup;
    out->foreach = svc_foreach;
    out->now = svc_now;
    out->patch = svc_patch;
    out->create = svc_create;
    out->remove = svc_remove;
    out->bind = svc_bind;
}
