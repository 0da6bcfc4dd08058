/*
 * evictions.c - see evictions.h.
 */
#include "config.h"

#include "evictions.h"

#include <stdlib.h>
#include <string.h>

#include "binder.h"
#include "binding.h"
#include "log.h"
#include "ownwrites.h"
#include "runtime.h"
#include "routing.h"
#include "sched_impl.h"
#include "util.h"

typedef struct hit {
    trellis_object *w;
    cache_target *t;
    const trellis_plugin *pl;
    trellis_status st;
} hit;

/* Clear a bound workload's placement, take it off every target it counts
 * on through that placement and queue it again. */
static void evict_bound(sched *s, profile *p, const hit *h)
{
    char err[512];
    trellis_object *w = h->w;
    cache_target *ct = h->t;
    binding_change ch;
    if (binding_release(p, s->st, w, ct->name, &ch, err, sizeof err) < 0) {
        log_error("cannot evict %s %s from %s: %s", w->kind, w->key, ct->name, err);
        return;
    }
    log_info("plugin %s: evicted %s %s from %s: %s", h->pl->name, w->kind, w->key, ct->name,
             h->st.message);
    if (!s->run_mode)
        decisions_add_eviction(s->dec, w, ct->name, h->pl->name, &h->st);
    /* only this placement goes; an also_counts field (a status the
     * scheduler does not own) keeps counting, and so do the workload's
     * other binding objects */
    cache_forget(&s->cache, w, ct);
    own_note_binding(s, &ch); /* a released binding object, seen at once */
    profile *sp = routing_profile_for(s, w);
    if (sp)
        routing_enqueue(s, sp, w);
}

/* A bound workload of a target the store does not hold (ct has no
 * object): p's target_lost plugins repair it or have it evicted. */
static int lost(sched *s, profile *p, trellis_object *w, cache_target *ct, hit *h)
{
    if (!p->target_lost.n || routing_owner_for(s, w) != p || !binding_is_on(p, w, ct->name))
        return 0;
    int evict = run_target_lost(p, w, ct->name, &h->pl, &h->st);
    if (s->binder) /* what a plugin wrote (a target created again) goes out now */
        binder_request_flush(s->binder);
    return evict;
}

/* The bound workloads of p's targets some eviction check rejects, or
 * whose target is gone and a target_lost plugin says so. */
static hit *collect(sched *s, profile *p, size_t *n_out)
{
    hit *hits = NULL;
    size_t n = 0, cap = 0, it = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&s->cache.targets, &it))) {
        cache_target *ct = sl->val;
        if (strcmp(ct->kind, p->cfg->target_kind) != 0)
            continue;
        for (size_t j = 0; j < ct->t.n_wl; j++) {
            trellis_object *w = ct->t.wl[j];
            hit h = {.t = ct};
            if (!ct->t.obj) {
                if (!lost(s, p, w, ct, &h))
                    continue;
            } else if (routing_owner_for(s, w) != p || !binding_is_on(p, w, ct->name) ||
                       !run_eviction_check(p, w, &ct->t, &h.pl, &h.st)) {
                continue;
            }
            grow(&hits, &cap, n + 1, sizeof *hits);
            h.w = object_ref(w);
            hits[n++] = h;
        }
    }
    *n_out = n;
    return hits;
}

void evictions_check(sched *s)
{
    for (size_t i = 0; i < s->n_profiles; i++) {
        profile *p = &s->profiles[i];
        if (!p->eviction.n && !p->target_lost.n)
            continue;
        /* collect first: evicting changes the lists being walked */
        size_t n;
        hit *hits = collect(s, p, &n);
        /* in name order, so the output and the requeue order are stable */
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && strcmp(hits[b - 1].w->key, hits[b].w->key) > 0; b--) {
                hit tmp = hits[b];
                hits[b] = hits[b - 1];
                hits[b - 1] = tmp;
            }
        for (size_t j = 0; j < n; j++) {
            evict_bound(s, p, &hits[j]);
            object_unref(hits[j].w);
        }
        free(hits);
    }
}
