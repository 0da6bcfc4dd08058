/*
 * deschedule.c - see deschedule.h.
 */
#include "config.h"

#include "deschedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindcycle.h"
#include "binding.h"
#include "ownwrites.h"
#include "routing.h"
#include "sched_impl.h"
#include "util.h"

static int by_key_desc(const void *a, const void *b)
{
    const trellis_object *x = *(trellis_object *const *)a, *y = *(trellis_object *const *)b;
    return -strcmp(x->key, y->key);
}

/* The workloads p placed on target, largest names first; their number. */
static trellis_object **placed_on(sched *s, profile *p, const char *target, size_t *n_out)
{
    trellis_object **on = NULL;
    size_t n = 0, cap = 0;
    for (size_t k = 0; k < index_count(s->ix); k++) {
        trellis_object *w = index_at(s->ix, k);
        if (routing_owner_for(s, w) == p && binding_is_on(p, w, target)) {
            grow(&on, &cap, n + 1, sizeof *on);
            on[n++] = w;
        }
    }
    *n_out = n;
    return on;
}

/* Try to move w off target: 1 when it moved (report says where), 0 when
 * it stays (report says why). */
static int move_one(sched *s, profile *p, trellis_object *w, cache_target *ct, const char *from,
                    desched_fn report, void *ud)
{
    cache_forget(&s->cache, w, ct);
    snapshot_update(&p->snap, &s->cache);
    decision *d = decisions_for(s->dec, w, p);
    d->attempts++;
    trellis_cycle *c = &s->cycle;
    c->d = d;
    c->exclude_name = from;
    char msg[1024];
    const struct trellis_target *best = NULL;
    fw_result r = framework_schedule(p, c, w, 0, &best, msg, sizeof msg);
    c->exclude_name = NULL;
    qitem *it = queue_take(&p->q, w, s->now_ms);
    if (r == FW_SCHEDULED && it) {
        bindcycle_run(s, p, c, d, it, best);
        if (d->result == DEC_SCHEDULED) {
            report(ud, w, from, d->targets[0], NULL);
            return 1;
        }
        snprintf(msg, sizeof msg, "%s", d->message ? d->message : "binding failed");
    } else if (r == FW_UNSCHEDULABLE) {
        char *m = framework_unschedulable_message(c);
        snprintf(msg, sizeof msg, "%s", m);
        free(m);
    }
    /* no other target takes it: it stays where it is */
    cache_add_bound(&s->cache, w, p->cfg->target_kind, from);
    if (it && it->state == Q_IN_FLIGHT)
        queue_done(&p->q, it);
    else if (it)
        queue_delete(&p->q, w);
    decision_set_result(d, DEC_UNSCHEDULABLE, msg, from);
    report(ud, w, from, NULL, msg);
    return 0;
}

int deschedule_run(sched *s, profile *p, size_t budget, desched_fn report, void *ud, char *err,
                   size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    size_t moved = 0;
    if (p->placed)
        return errf(err, errlen,
                    "profile '%s' records placements as binding objects: deschedule moves "
                    "workloads of binding model \"field\" only (release a binding object "
                    "instead)",
                    pc->name);
    snapshot_update(&p->snap, &s->cache);
    /* the snapshot's targets are in name order; copy the names, since
     * moving workloads updates the snapshot */
    size_t nt = p->snap.n;
    char **names = xcalloc(nt ? nt : 1, sizeof *names);
    for (size_t i = 0; i < nt; i++)
        names[i] = xstrdup(p->snap.targets[i]->name);
    for (size_t i = 0; i < nt && moved < budget; i++) {
        cache_target *ct = cache_get_target(&s->cache, pc->target_kind, names[i]);
        int64_t cap;
        if (!ct || !ct->t.obj || value_int(object_get(ct->t.obj, pc->capacity_field), &cap) < 0)
            continue;
        size_t n;
        trellis_object **on = placed_on(s, p, names[i], &n);
        if ((int64_t)n > cap && n > 1)
            qsort(on, n, sizeof *on, by_key_desc);
        int64_t over = (int64_t)n - cap;
        for (size_t k = 0; k < n && over > 0 && moved < budget; k++) {
            if (move_one(s, p, on[k], ct, names[i], report, ud)) {
                moved++;
                over--;
            }
        }
        free(on);
    }
    for (size_t i = 0; i < nt; i++)
        free(names[i]);
    free(names);
    if (s->st && own_flush(s, NULL, NULL, err, errlen) < 0)
        return -1;
    return (int)moved;
}
