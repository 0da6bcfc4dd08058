/*
 * changes.c - see changes.h.
 */
#include "config.h"

#include "changes.h"

#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "evictions.h"
#include "log.h"
#include "metrics.h"
#include "ownwrites.h"
#include "placements.h"
#include "quarantine.h"
#include "runtime.h"
#include "routing.h"
#include "sched_impl.h"
#include "util.h"

typedef struct hint_ctx {
    profile *p;
    unsigned event;
    const trellis_object *old_obj, *new_obj;
} hint_ctx;

/* May this change help the unschedulable workload of it? Asks the
 * plugins that rejected it. */
static int hint_pred(void *ud, qitem *it)
{
    const hint_ctx *h = ud;
    if (it->rejectors & QUEUE_REJ_ANY)
        return 1;
    for (size_t i = 0; i < h->p->n_plugins && i < 63; i++)
        if ((it->rejectors & (1ull << i)) &&
            run_hint(h->p->plugins[i], it->w, h->event, h->old_obj, h->new_obj))
            return 1;
    return 0;
}

/* Move back what a change may help, in p or (p NULL) in every profile. */
static void move_on_event(sched *s, profile *only, unsigned event, const trellis_object *old_obj,
                          const trellis_object *new_obj)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        if ((only && p != only) || !p->q.n_unschedulable)
            continue;
        hint_ctx h = {p, event, old_obj, new_obj};
        size_t n = queue_move_if(&p->q, s->now_ms, hint_pred, &h);
        if (n) {
            const trellis_object *o = new_obj ? new_obj : old_obj;
            log_debug("profile %s: %s %s changed: %zu unschedulable workload(s) queued again",
                      p->cfg->name, o->kind, o->key, n);
        }
    }
}

static void apply_target(sched *s, trellis_object *old_obj, trellis_object *new_obj)
{
    const trellis_object *o = new_obj ? new_obj : old_obj;
    if (new_obj) {
        index_set(s->ix, new_obj);
        index_prepare(s->ix, new_obj, 0);
        cache_set_target(&s->cache, new_obj);
    } else {
        index_del(s->ix, old_obj);
        cache_remove_target(&s->cache, old_obj->kind, old_obj->key);
    }
    s->targets_changed = 1;
    unsigned ev = !old_obj   ? TRELLIS_EV_TARGET_ADD
                  : !new_obj ? TRELLIS_EV_TARGET_DELETE
                             : TRELLIS_EV_TARGET_UPDATE;
    for (size_t i = 0; i < s->n_profiles; i++)
        if (profile_is_target_kind(&s->profiles[i], o))
            move_on_event(s, &s->profiles[i], ev, old_obj, new_obj);
}

/* Whether the workload of o is in flight (being bound, or waiting on a
 * permit) in some profile. */
static int in_flight(const sched *s, const trellis_object *o)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        qitem *it = queue_find(&s->profiles[i].q, o);
        if (it && it->state == Q_IN_FLIGHT)
            return 1;
    }
    return 0;
}

/* Take old_obj off the cache; whether a target lost it (has room now). */
static int forget_old(sched *s, const profile *own, trellis_object *old_obj,
                      const trellis_object *new_obj)
{
    cache_workload *cw = cache_get_workload(&s->cache, old_obj);
    if (!cw)
        return 0;
    int gone = 0;
    for (size_t i = 0; i < cw->n_as && !gone; i++)
        gone = !new_obj || !binding_counts_on(own, new_obj, cw->as[i].target->name);
    cache_remove_workload(&s->cache, old_obj);
    return gone;
}

/* Count the workload on the targets it is placed on, and queue it when
 * it is pending or its profile reconciles (unless it is being deleted:
 * then it is finalized, once; or a pre-enqueue plugin holds it back: then
 * it is gated until it changes again). */
static void take_new(sched *s, profile *own, const trellis_object *old_obj, trellis_object *w)
{
    index_set(s->ix, w);
    index_prepare(s->ix, w, 1);
    routing_count_placements(s, own, w);
    routing_nominations(s, own, old_obj, w);
    int deleting = object_being_deleted(w);
    if (deleting && !(old_obj && object_being_deleted(old_obj)))
        routing_finalize(s, own, w);
    profile *sp = routing_profile_for(s, w);
    int wants = !deleting && sp && routing_wants_cycle(sp, w);
    int enqueue = wants && run_pre_enqueue(sp, w, NULL);
    for (size_t i = 0; i < s->n_profiles; i++)
        if (!wants || &s->profiles[i] != sp)
            queue_delete(&s->profiles[i].q, w);
    if (!enqueue)
        decisions_drop(s->dec, w);
    if (enqueue)
        queue_add(&sp->q, w, s->now_ms);
    else if (wants)
        routing_gate(s, sp, w); /* held back until it changes */
}

/* Which of a workload's targets the cache counts it on: all of them
 * (known), or not some (unknown). */
typedef struct counted_ctx {
    const cache_workload *cw;
    int all_known, some_unknown;
} counted_ctx;

static void counted_one(void *ud, const char *target)
{
    counted_ctx *cc = ud;
    int found = 0;
    for (size_t i = 0; cc->cw && i < cc->cw->n_as && !found; i++)
        found = strcmp(cc->cw->as[i].target->name, target) == 0;
    cc->all_known &= found;
    cc->some_unknown |= !found;
}

/* Whether new_obj counts on a target the host did not count old_obj
 * (NULL: none) on: placed by another (the host's own bindings were
 * assumed and counted already: changes_workload_placed said so). */
static int placed_anew(sched *s, const profile *own, const trellis_object *old_obj,
                       const trellis_object *new_obj)
{
    counted_ctx cc = {old_obj ? cache_get_workload(&s->cache, old_obj) : NULL, 1, 0};
    binding_each_counted(own, new_obj, counted_one, &cc);
    return cc.some_unknown;
}

void changes_workload_placed(sched *s, profile *p, const trellis_object *w)
{
    move_on_event(s, p, TRELLIS_EV_WORKLOAD_PLACED, NULL, w);
}

/* 0 when the workload is in flight: the change waits until that ends. */
static int apply_workload(sched *s, profile *own, trellis_object *old_obj, trellis_object *new_obj)
{
    if (in_flight(s, new_obj ? new_obj : old_obj))
        return 0;
    int placed = new_obj && !own->placed && placed_anew(s, own, old_obj, new_obj);
    int gone = old_obj && forget_old(s, own, old_obj, new_obj);
    if (new_obj) {
        take_new(s, own, old_obj, new_obj);
    } else {
        routing_finalize(s, own, old_obj); /* gone: whatever it still holds goes */
        nominator_drop(&s->cache.nom, old_obj);
        index_del(s->ix, old_obj);
        for (size_t i = 0; i < s->n_profiles; i++)
            queue_delete(&s->profiles[i].q, old_obj);
        decisions_drop(s->dec, old_obj);
    }
    if (gone)
        move_on_event(s, own, TRELLIS_EV_WORKLOAD_GONE, old_obj, NULL);
    if (placed)
        move_on_event(s, own, TRELLIS_EV_WORKLOAD_PLACED, old_obj, new_obj);
    return 1;
}

static void refresh_one(sched *s, const char *id);

/* Whether the workload of id counts on exactly the targets its binding
 * objects now place it on (the host's own binding object, read back). */
static int counted_as_placed(const sched *s, const profile *p, const char *id)
{
    const trellis_object *w = index_lookup_id(s->ix, id);
    if (!w)
        return 1; /* no such workload (yet): nothing to count */
    const cache_workload *cw = cache_get_workload(&s->cache, w);
    counted_ctx cc = {cw, 1, 0};
    binding_each_counted(p, w, counted_one, &cc);               /* every placement is counted */
    for (size_t i = 0; cw && i < cw->n_as && cc.all_known; i++) /* and nothing else */
        cc.all_known = binding_counts_on(p, w, cw->as[i].target->name);
    return cc.all_known;
}

/* A binding object changed: the index and the placements follow; the
 * ids of the workloads it names go to ids (their number). */
static size_t note_binding(sched *s, profile *bp, trellis_object *old_obj, trellis_object *new_obj,
                           char ids[2][PLACEMENTS_ID_MAX])
{
    if (new_obj)
        index_set(s->ix, new_obj);
    else
        index_del(s->ix, old_obj);
    return placements_update(bp->placed, old_obj, new_obj, ids);
}

/* The workload of id is counted where its binding objects place it now
 * (prepared again, and queued when pending or reconciled). */
static void sync_placed(sched *s, profile *bp, const char *id)
{
    if (!counted_as_placed(s, bp, id))
        refresh_one(s, id);
}

static void apply_binding(sched *s, profile *bp, trellis_object *old_obj, trellis_object *new_obj)
{
    char ids[2][PLACEMENTS_ID_MAX];
    size_t n = note_binding(s, bp, old_obj, new_obj, ids);
    if (new_obj && binding_clean_up(bp, s->st, new_obj) && s->binder)
        binder_request_flush(s->binder);
    for (size_t i = 0; i < n; i++)
        sync_placed(s, bp, ids[i]);
}

static void defer(sched *s, store_event_type type, trellis_object *old_obj, trellis_object *new_obj)
{
    grow(&s->deferred, &s->cap_deferred, s->n_deferred + 1, sizeof *s->deferred);
    struct change *c = &s->deferred[s->n_deferred++];
    c->type = type;
    c->old_obj = old_obj ? object_ref(old_obj) : NULL;
    c->new_obj = new_obj ? object_ref(new_obj) : NULL;
    c->refresh = NULL;
}

static void apply_one(sched *s, store_event_type type, trellis_object *old_obj,
                      trellis_object *new_obj)
{
    trellis_object *o = new_obj ? new_obj : old_obj;
    if (s->quarantine && quarantine_count(s->quarantine)) {
        /* a changed or deleted object may be tried again */
        quarantine_forget(s->quarantine, o->id);
        char qerr[512];
        if (quarantine_save(s->quarantine, 0, qerr, sizeof qerr) < 0)
            log_warn("%s", qerr);
    }
    if (routing_is_target(s, o)) {
        apply_target(s, old_obj, new_obj);
        return;
    }
    profile *bp = routing_binding_owner(s, o);
    if (bp) {
        apply_binding(s, bp, old_obj, new_obj);
        return;
    }
    profile *own = routing_owner_for(s, o);
    if (own) {
        if (!apply_workload(s, own, old_obj, new_obj))
            defer(s, type, old_obj, new_obj);
        return;
    }
    if (new_obj)
        index_set(s->ix, new_obj);
    else
        index_del(s->ix, old_obj);
    /* the host's own Events never help a workload fit, nor does another
     * object's status alone (see changes_apply) */
    if (strcmp(o->kind, "Event") != 0 &&
        !(old_obj && new_obj && object_same_but_status(old_obj, new_obj)))
        move_on_event(s, NULL, TRELLIS_EV_OTHER, old_obj, new_obj);
}

/* Prepare the object of id again, as it is now: a fresh copy through the
 * change path. A workload in flight waits: its refresh is made after the
 * changes deferred before it, from the object it has then (a copy taken
 * now would undo them). */
static void refresh_one(sched *s, const char *id)
{
    const trellis_object *cur = index_lookup_id(s->ix, id);
    if (!cur)
        return;
    if (in_flight(s, cur)) {
        grow(&s->deferred, &s->cap_deferred, s->n_deferred + 1, sizeof *s->deferred);
        s->deferred[s->n_deferred++] = (struct change){STORE_MODIFIED, NULL, NULL, xstrdup(id)};
        return;
    }
    trellis_object *copy = object_copy(cur);
    if (!copy)
        return;
    trellis_object *old = object_ref((trellis_object *)cur);
    apply_one(s, STORE_MODIFIED, old, copy);
    object_unref(old);
    object_unref(copy);
}

/* The objects whose prepare read o are prepared again, as if they had
 * changed (a Shoot whose CloudProfile changed): each is replaced by a
 * fresh copy of itself, which the plugins prepare and which goes back to
 * the queue when it is pending. Not transitively: a cycle of reads would
 * never end. */
static void refresh_readers(sched *s, const trellis_object *old_obj, const trellis_object *new_obj)
{
    const trellis_object *o = new_obj ? new_obj : old_obj;
    char **ids;
    size_t n = index_dependents(s->ix, o, &ids);
    /* what a prepare reads of another object is what it asks for: its
     * status changing alone (Fleet's policy snapshot, written by the
     * host) prepares nobody again (compared only when someone read it) */
    int status_only = n && old_obj && new_obj && object_same_but_status(old_obj, new_obj);
    for (size_t i = 0; i < n; i++) {
        if (!status_only) {
            log_debug("%s read %s %s: prepared again", ids[i], o->kind, o->key);
            refresh_one(s, ids[i]);
        }
        free(ids[i]);
    }
    free(ids);
}

void changes_apply(sched *s, store_event_type type, trellis_object *old_obj,
                   trellis_object *new_obj)
{
    static const char *const names[] = {"", "added", "modified", "deleted"};
    if (new_obj && index_lookup_id(s->ix, new_obj->id) == new_obj)
        return; /* the host's own view already (an object it created) */
    metrics_store_event(names[type]);
    trellis_object *o = new_obj ? new_obj : old_obj;
    char who[256];
    log_debug("store: %s %s", object_describe(o, who, sizeof who), names[type]);
    apply_one(s, type, old_obj, new_obj);
    if (strcmp(o->kind, "Event") != 0)
        refresh_readers(s, old_obj, new_obj);
}

void changes_apply_own(sched *s)
{
    size_t n;
    struct own_write *v = own_take(s, &n);
    /* every binding object first, then each workload once: a decision's
     * bindings land together; any other object as a change from the store */
    /* not cleared: only the entries note_binding fills are read (at 768
     * bytes an id, clearing them cost more than the rest for a PickAll
     * placement's hundred bindings) */
    char(*ids)[PLACEMENTS_ID_MAX] = xmalloc((2 * n + 1) * sizeof *ids);
    profile **owners = xmalloc((2 * n + 1) * sizeof *owners);
    size_t ni = 0;
    for (size_t i = 0; i < n; i++) {
        trellis_object *o = v[i].o;
        const trellis_object *cur = index_lookup_id(s->ix, o->id);
        /* an undo of a refused write: only while the host holds what the
         * write made it see; a patch: only while the store has delivered
         * no other version of the object than the one it was made on
         * (the patched copy keeps that version: taken over the store's
         * newer one, it would stay the host's, stale, for good) */
        const trellis_object *ex = v[i].expect;
        int stale =
            v[i].undo == OWN_IF_ABSENT ? cur != NULL
            : v[i].undo == OWN_IF_SAME ? cur != ex
            : v[i].undo == OWN_IF_HELD ? cur != ex && !(cur && ex && object_same_content(cur, ex))
            : v[i].undo == OWN_IF_VERSION ? !cur || (cur != ex && cur->version != ex->version)
                                          : 0;
        if (v[i].expect)
            object_unref(v[i].expect);
        if (stale) {
            object_unref(o);
            continue;
        }
        profile *bp = routing_binding_owner(s, o);
        trellis_object *old = cur && cur != o ? object_ref((trellis_object *)cur) : NULL;
        /* a deletion: of what the host holds now (nothing: done) */
        trellis_object *now = v[i].deleted ? NULL : o;
        if (v[i].deleted && cur)
            old = object_ref((trellis_object *)cur);
        /* the store reported the write first: keep its object (it is the
         * one the store finds again, with its place and version) */
        int change = v[i].deleted ? cur != NULL : cur != o && !(cur && object_same_content(cur, o));
        if (change && bp) {
            size_t k = note_binding(s, bp, old, now, &ids[ni]);
            for (size_t j = 0; j < k; j++)
                owners[ni + j] = bp;
            ni += k;
        } else if (change) {
            apply_one(s, !now ? STORE_DELETED : old ? STORE_MODIFIED : STORE_ADDED, old, now);
            refresh_readers(s, old, now);
        }
        if (old)
            object_unref(old);
        object_unref(o);
    }
    for (size_t i = 0; i < ni; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(ids[i], ids[j]) == 0;
        if (!seen)
            sync_placed(s, owners[i], ids[i]);
    }
    free(ids);
    free(owners);
    free(v);
}

void changes_apply_deferred(sched *s)
{
    struct change *v = s->deferred;
    size_t n = s->n_deferred;
    if (!n)
        return;
    s->deferred = NULL;
    s->n_deferred = s->cap_deferred = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].refresh) {
            refresh_one(s, v[i].refresh);
            free(v[i].refresh);
            continue;
        }
        changes_apply(s, v[i].type, v[i].old_obj, v[i].new_obj);
        if (v[i].old_obj)
            object_unref(v[i].old_obj);
        if (v[i].new_obj)
            object_unref(v[i].new_obj);
    }
    free(v);
}

void changes_settle(sched *s)
{
    if (s->targets_changed) {
        s->targets_changed = 0;
        evictions_check(s);
    }
    index_sweep(s->ix, 0);
}

void changes_free(sched *s)
{
    own_free(s);
    for (size_t k = 0; k < s->n_deferred; k++) {
        free(s->deferred[k].refresh);
        if (s->deferred[k].old_obj)
            object_unref(s->deferred[k].old_obj);
        if (s->deferred[k].new_obj)
            object_unref(s->deferred[k].new_obj);
    }
    free(s->deferred);
    s->deferred = NULL;
    s->n_deferred = s->cap_deferred = 0;
}
