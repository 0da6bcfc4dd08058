/*
 * profile.c - see profile.h.
 */
#include "config.h"

#include "profile_impl.h"

#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "placements.h"
#include "util.h"

static void plist_add(plist *l, trellis_plugin *pl)
{
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = pl;
}

void profile_build(profile *p)
{
    if (!p->mcache)
        p->mcache = metrics_cache_new();
    for (size_t i = 0; i < p->n_plugins; i++) {
        trellis_plugin *pl = p->plugins[i];
        const plugin_hooks *h = &pl->h;
        unsigned pt = pl->points;
        pl->index = (int)i;
        if (h->less && (pt & PT_QUEUE_SORT) && !p->queue_sort)
            p->queue_sort = pl;
        if (h->prepare_workload || h->amounts)
            plist_add(&p->prepare_workload, pl);
        if (h->prepare_target || h->target_values)
            plist_add(&p->prepare_target, pl);
        if (h->pre_filter && (pt & PT_PRE_FILTER))
            plist_add(&p->pre_filter, pl);
        if (h->filter && (pt & PT_FILTER))
            plist_add(&p->filter, pl);
        /* the feasible filter is part of the filter point */
        if (h->filter_feasible && (pt & PT_FILTER))
            plist_add(&p->filter_feasible, pl);
        if (h->post_filter && (pt & PT_POST_FILTER))
            plist_add(&p->post_filter, pl);
        if (h->pre_score && (pt & PT_PRE_SCORE))
            plist_add(&p->pre_score, pl);
        if (h->score && (pt & PT_SCORE))
            plist_add(&p->score, pl);
        if ((h->reserve || h->unreserve) && (pt & PT_RESERVE))
            plist_add(&p->reserve, pl);
        if (h->permit && (pt & PT_PERMIT))
            plist_add(&p->permit, pl);
        if (h->pre_bind && (pt & PT_PRE_BIND))
            plist_add(&p->pre_bind, pl);
        if (h->bind && (pt & PT_BIND))
            plist_add(&p->bind, pl);
        if (h->post_bind && (pt & PT_POST_BIND))
            plist_add(&p->post_bind, pl);
        if (h->eviction_check)
            plist_add(&p->eviction, pl);
        if (h->pre_enqueue && (pt & PT_PRE_ENQUEUE))
            plist_add(&p->pre_enqueue, pl);
        if (h->finalize && (pt & PT_FINALIZE))
            plist_add(&p->finalize, pl);
        if (h->target_lost && (pt & PT_TARGET_LOST))
            plist_add(&p->target_lost, pl);
        if (h->decided && (pt & PT_DECIDED))
            plist_add(&p->decided, pl);
        /* the review of preemption candidates is part of the post-filter
         * point (kube asks its extenders inside preemption) */
        if (h->review_candidates && (pt & PT_POST_FILTER))
            plist_add(&p->review_candidates, pl);
    }
    /* the equivalence cache needs every plugin that filters or scores;
     * a feasible filter's verdicts may depend on anything (an extender's
     * answer): no cache */
    p->equivalent = p->cfg->equivalence_cache && !p->filter_feasible.n;
    const plist *judges[] = {&p->pre_filter, &p->filter, &p->pre_score, &p->score};
    for (size_t k = 0; k < sizeof judges / sizeof *judges; k++)
        for (size_t i = 0; i < judges[k]->n; i++)
            if (!judges[k]->v[i]->h.equivalent)
                p->equivalent = 0;
}

void profile_free(profile *p)
{
    queue_free(&p->q);
    snapshot_free(&p->snap);
    equiv_free(&p->eq);
    placements_free(p->placed);
    plist *lists[] = {&p->pre_filter,       &p->filter_feasible,
                      &p->filter,           &p->post_filter,
                      &p->pre_score,        &p->score,
                      &p->reserve,          &p->permit,
                      &p->pre_bind,         &p->bind,
                      &p->post_bind,        &p->prepare_workload,
                      &p->prepare_target,   &p->eviction,
                      &p->pre_enqueue,      &p->finalize,
                      &p->target_lost,      &p->decided,
                      &p->review_candidates};
    for (size_t j = 0; j < sizeof lists / sizeof *lists; j++)
        free(lists[j]->v);
    free(p->plugins);
    metrics_cache_free(p->mcache);
    memset(p, 0, sizeof *p);
}

const cfg_profile *profile_cfg(const profile *p)
{
    return p->cfg;
}

const char *profile_name(const profile *p)
{
    return p->cfg->name;
}

const plist *profile_point(const profile *p, ext_point ep)
{
    switch (ep) {
    case EP_PRE_FILTER:
        return &p->pre_filter;
    case EP_FILTER:
        return &p->filter;
    case EP_POST_FILTER:
        return &p->post_filter;
    case EP_PRE_SCORE:
        return &p->pre_score;
    case EP_SCORE:
        return &p->score;
    case EP_RESERVE:
        return &p->reserve;
    case EP_PERMIT:
        return &p->permit;
    case EP_PRE_BIND:
        return &p->pre_bind;
    case EP_BIND:
        return &p->bind;
    case EP_POST_BIND:
        return &p->post_bind;
    case EP_PREPARE_WORKLOAD:
        return &p->prepare_workload;
    case EP_PREPARE_TARGET:
        return &p->prepare_target;
    case EP_EVICTION:
        return &p->eviction;
    case EP_PRE_ENQUEUE:
        return &p->pre_enqueue;
    case EP_FINALIZE:
        return &p->finalize;
    case EP_TARGET_LOST:
        return &p->target_lost;
    case EP_DECIDED:
        return &p->decided;
    case EP_COUNT:
        break;
    }
    return NULL;
}

trellis_plugin *const *profile_plugins(const profile *p, size_t *n)
{
    *n = p->n_plugins;
    return p->plugins;
}

static int kind_matches(const trellis_object *o, const char *kind, const char *api)
{
    return strcmp(o->kind, kind) == 0 && (!api || strcmp(o->api_version, api) == 0);
}

int profile_is_workload_kind(const profile *p, const trellis_object *o)
{
    return kind_matches(o, p->cfg->workload_kind, p->cfg->workload_api_version);
}

int profile_workload_finished(const profile *p, const trellis_object *w)
{
    const cfg_profile *pc = p->cfg;
    if (!pc->finished_field)
        return 0;
    const char *v = value_string(object_get(w, pc->finished_field));
    for (size_t i = 0; v && i < pc->n_finished_values; i++)
        if (strcmp(v, pc->finished_values[i]) == 0)
            return 1;
    return 0;
}

const char *profile_workload_nominated(const profile *p, const trellis_object *w)
{
    if (!p->cfg->nominated_field)
        return NULL;
    const char *v = value_string(object_get(w, p->cfg->nominated_field));
    return v && *v ? v : NULL;
}

int profile_is_target_kind(const profile *p, const trellis_object *o)
{
    return kind_matches(o, p->cfg->target_kind, p->cfg->target_api_version);
}
