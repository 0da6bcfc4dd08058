/*
 * decision.c - see decision.h.
 */
#include "config.h"

#include "decision.h"

#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "hmap.h"
#include "util.h"

struct decisions {
    decision **v; /* kept for the report (keep_all) */
    size_t n, cap;
    hmap by_key; /* workload id -> decision; the key is the decision's w->id */
    eviction *evictions;
    size_t n_evictions;
    int keep_all;
};

const char *decision_result_name(dec_result r)
{
    switch (r) {
    case DEC_SCHEDULED:
        return "scheduled";
    case DEC_UNSCHEDULABLE:
        return "unschedulable";
    case DEC_ERROR:
        return "error";
    case DEC_PENDING:
        break;
    }
    return "unschedulable";
}

void decision_set_targets(decision *d, const char *const *names, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 1;
    char **t = n ? xmalloc(n * sizeof *t + len) : NULL;
    char *at = (char *)(t + n);
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(names[i]) + 1;
        memcpy(at, names[i], l);
        t[i] = at;
        at += l;
    }
    free(d->targets);
    d->targets = t;
    d->n_targets = (uint32_t)n;
}

void decision_set_result(decision *d, dec_result r, const char *msg, const char *target)
{
    d->result = r;
    free(d->message);
    d->message = msg ? xstrdup(msg) : NULL;
    decision_set_targets(d, &target, target ? 1 : 0);
}

/* Append the names[0..n) not in v yet: a set of them when there are many
 * (a PickAll placement lands on every cluster of a region at once). */
static void add_names(char ***v, uint32_t *nv, const char *const *names, size_t n)
{
    int many = *nv + n > 16;
    hmap seen;
    if (many) {
        hmap_init(&seen);
        for (uint32_t i = 0; i < *nv; i++)
            hmap_put(&seen, (*v)[i], (*v)[i]);
    }
    *v = xrealloc(*v, (*nv + n + 1) * sizeof **v);
    for (size_t k = 0; k < n; k++) {
        int have = 0;
        if (many)
            have = hmap_get(&seen, names[k]) != NULL;
        for (uint32_t i = 0; !many && i < *nv && !have; i++)
            have = strcmp((*v)[i], names[k]) == 0;
        if (have)
            continue;
        char *c = xstrdup(names[k]);
        (*v)[(*nv)++] = c;
        if (many)
            hmap_put(&seen, c, c);
    }
    if (many)
        hmap_free(&seen);
}

void decision_add_added(decision *d, const char *const *targets, size_t n)
{
    add_names(&d->added, &d->n_added, targets, n);
}

void decision_add_released(decision *d, const char *target)
{
    add_names(&d->released, &d->n_released, &target, 1);
}

static void remove_name(char **v, uint32_t *n, const char *name)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (strcmp(v[i], name) != 0)
            continue;
        free(v[i]);
        memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof *v);
        (*n)--;
        return;
    }
}

void decision_unrecord(decision *d, const char *target, int released)
{
    const char **keep = xcalloc(d->n_targets + 1, sizeof *keep);
    size_t n = 0;
    for (uint32_t i = 0; i < d->n_targets; i++)
        if (released || strcmp(d->targets[i], target) != 0)
            keep[n++] = d->targets[i];
    if (released)
        keep[n++] = target;
    decision_set_targets(d, keep, n);
    free(keep);
    remove_name(released ? d->released : d->added, released ? &d->n_released : &d->n_added, target);
}

static void free_cands(decision *d)
{
    for (size_t i = 0; i < d->n_cands; i++) {
        dec_cand *c = &d->cands[i];
        free(c->target);
        free(c->plugin);
        free(c->code);
        free(c->reason);
        free(c->scores);
    }
    free(d->cands);
    d->cands = NULL;
    d->n_cands = 0;
}

void decision_record_candidates(decision *d, trellis_cycle *c)
{
    free_cands(d);
    if (!c->filtered)
        return; /* the cycle ended before filtering: there are no verdicts */
    d->n_cands = (uint32_t)c->n;
    d->cands = xcalloc(c->n ? c->n : 1, sizeof *d->cands);
    size_t j = 0; /* index among feasible targets, which keep snapshot order */
    for (size_t i = 0; i < c->n; i++) {
        dec_cand *dc = &d->cands[i];
        dc->target = xstrdup(c->targets[i]->name);
        const trellis_plugin *who;
        trellis_status st;
        int code = framework_explain(c, i, &who, &st);
        dc->feasible = code == TRELLIS_SUCCESS;
        if (!dc->feasible) {
            dc->plugin = xstrdup(who ? who->name : "-");
            dc->code = xstrdup(st.reason);
            dc->reason = xstrdup(st.message);
            continue;
        }
        if (c->scored && j < c->n_feasible && c->feasible_idx[j] == i) {
            dc->has_score = 1;
            dc->score = c->totals[j];
            size_t ns = c->p->score.n;
            dc->scores = xcalloc(ns ? ns : 1, sizeof *dc->scores);
            for (size_t k = 0; k < ns; k++)
                dc->scores[k] = c->rows[k][j];
        }
        j++;
    }
}

static obj_id *add_id(obj_id **v, uint32_t *n, const trellis_object *o)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    obj_id *id = &(*v)[(*n)++];
    id->kind = xstrdup(o->kind);
    id->namespace_ = xstrdup(o->namespace_);
    id->name = xstrdup(o->name);
    return id;
}

void decision_add_evicted(decision *d, const trellis_object *o)
{
    add_id(&d->evicted, &d->n_evicted, o);
}

void decision_add_created(decision *d, const trellis_object *o)
{
    add_id(&d->created, &d->n_created, o);
}

/* Whether note reads "plugin: text". */
static int note_is(const char *note, const char *plugin, const char *text)
{
    size_t n = strlen(plugin);
    return strncmp(note, plugin, n) == 0 && note[n] == ':' && note[n + 1] == ' ' &&
           strcmp(note + n + 2, text) == 0;
}

#define NOTES_MORE_LEN 96

void decision_add_note(decision *d, const char *plugin, const char *text)
{
    size_t kept = d->n_notes - (d->notes_dropped ? 1 : 0);
    for (size_t i = 0; i < kept; i++)
        if (note_is(d->notes[i], plugin, text)) /* said already (explain's two passes) */
            return;
    if (kept >= DECISION_NOTES_MAX) {
        /* a plugin noting in a loop does not grow a decision; the last
         * entry says how many were not kept, rewritten in place */
        if (!d->notes_dropped) {
            d->notes = xrealloc(d->notes, (d->n_notes + 1) * sizeof *d->notes);
            d->notes[d->n_notes++] = xmalloc(NOTES_MORE_LEN);
        }
        /* an attempt that runs the same plugins again drops the same
         * notes again: the count is that of the attempt that dropped most */
        if (++d->notes_dropped_now <= d->notes_dropped)
            return;
        d->notes_dropped = d->notes_dropped_now;
        snprintf(d->notes[d->n_notes - 1], NOTES_MORE_LEN,
                 "... and %u more note%s (at most %d are kept per decision)", d->notes_dropped,
                 d->notes_dropped == 1 ? "" : "s", DECISION_NOTES_MAX);
        return;
    }
    d->notes = xrealloc(d->notes, (d->n_notes + 1) * sizeof *d->notes);
    size_t pl = strlen(plugin), tl = strlen(text);
    char *n = xmalloc(pl + tl + 3); /* "plugin: text", a note per decision or more */
    memcpy(n, plugin, pl);
    memcpy(n + pl, ": ", 2);
    memcpy(n + pl + 2, text, tl + 1);
    d->notes[d->n_notes++] = n;
}

void decision_notes_again(decision *d)
{
    d->notes_dropped_now = 0;
}

void decision_clear_notes(decision *d)
{
    for (size_t i = 0; i < d->n_notes; i++)
        free(d->notes[i]);
    free(d->notes);
    d->notes = NULL;
    d->n_notes = 0;
    d->notes_dropped = d->notes_dropped_now = 0;
}

void decision_nominate(decision *d, const char *target)
{
    free(d->nominated);
    d->nominated = target ? xstrdup(target) : NULL;
}

void obj_ids_free(obj_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ids[i].kind);
        free(ids[i].namespace_);
        free(ids[i].name);
    }
    free(ids);
}

void decision_clear(decision *d)
{
    decision_set_result(d, DEC_PENDING, NULL, NULL);
    free_cands(d);
    decision_clear_notes(d);
    obj_ids_free(d->evicted, d->n_evicted);
    obj_ids_free(d->created, d->n_created);
    free(d->nominated);
    for (uint32_t i = 0; i < d->n_added; i++)
        free(d->added[i]);
    for (uint32_t i = 0; i < d->n_released; i++)
        free(d->released[i]);
    free(d->added);
    free(d->released);
    d->added = d->released = NULL;
    d->n_added = d->n_released = 0;
    d->evicted = d->created = NULL;
    d->n_evicted = d->n_created = 0;
    d->nominated = NULL;
}

static void decision_free(decision *d)
{
    decision_clear(d);
    object_unref(d->w);
    free(d);
}

/* ---- the table ---- */

decisions *decisions_new(int keep_all)
{
    decisions *ds = xcalloc(1, sizeof *ds);
    hmap_init(&ds->by_key);
    ds->keep_all = keep_all;
    return ds;
}

void decisions_free(decisions *ds)
{
    if (!ds)
        return;
    for (size_t i = 0; i < ds->n_evictions; i++) {
        eviction *ev = &ds->evictions[i];
        free(ev->workload.kind);
        free(ev->workload.namespace_);
        free(ev->workload.name);
        free(ev->target);
        free(ev->plugin);
        free(ev->code);
        free(ev->reason);
    }
    free(ds->evictions);
    free(ds->v);
    size_t i = 0;
    hmap_slot *sl;
    while ((sl = hmap_next(&ds->by_key, &i)))
        decision_free(sl->val);
    hmap_free(&ds->by_key);
    free(ds);
}

decision *decisions_for(decisions *ds, trellis_object *w, profile *p)
{
    int found;
    hmap_slot *sl = hmap_slot_h(&ds->by_key, w->id, w->id_hash, &found);
    decision *d = sl->val;
    if (found) {
        if (d->w != w) {
            trellis_object *old = d->w;
            d->w = object_ref(w);
            sl->key = w->id; /* the key is d->w's id */
            object_unref(old);
        }
        d->p = p;
        return d;
    }
    d = xcalloc(1, sizeof *d);
    d->w = object_ref(w);
    d->p = p;
    if (ds->keep_all) {
        grow(&ds->v, &ds->cap, ds->n + 1, sizeof *ds->v);
        ds->v[ds->n++] = d;
    }
    sl->val = d; /* the key is the workload's id, alive while d->w is */
    return d;
}

decision *decisions_get(const decisions *ds, const char *id)
{
    return hmap_get(&ds->by_key, id);
}

void decisions_drop(decisions *ds, const trellis_object *w)
{
    if (ds->keep_all)
        return; /* the report holds every decision */
    decision *d = hmap_del_h(&ds->by_key, w->id, w->id_hash);
    if (d)
        decision_free(d);
}

void decisions_keep_all(decisions *ds, int keep_all)
{
    ds->keep_all = keep_all;
}

static int dec_cmp(const void *a, const void *b)
{
    const decision *x = *(decision *const *)a, *y = *(decision *const *)b;
    int r = strcmp(x->w->kind, y->w->kind);
    if (!r)
        r = strcmp(x->w->namespace_, y->w->namespace_);
    if (!r)
        r = strcmp(x->w->name, y->w->name);
    return r;
}

void decisions_sort(decisions *ds)
{
    if (ds->n)
        qsort(ds->v, ds->n, sizeof *ds->v, dec_cmp);
}

size_t decisions_count(const decisions *ds)
{
    return ds->n;
}

decision *decisions_at(const decisions *ds, size_t i)
{
    return i < ds->n ? ds->v[i] : NULL;
}

void decisions_add_eviction(decisions *ds, const trellis_object *w, const char *target,
                            const char *plugin, const trellis_status *st)
{
    ds->evictions = xrealloc(ds->evictions, (ds->n_evictions + 1) * sizeof *ds->evictions);
    eviction *ev = &ds->evictions[ds->n_evictions++];
    ev->workload.kind = xstrdup(w->kind);
    ev->workload.namespace_ = xstrdup(w->namespace_);
    ev->workload.name = xstrdup(w->name);
    ev->target = xstrdup(target);
    ev->plugin = xstrdup(plugin);
    ev->code = xstrdup(st->reason);
    ev->reason = xstrdup(st->message);
}

size_t decisions_eviction_count(const decisions *ds)
{
    return ds->n_evictions;
}

const eviction *decisions_eviction_at(const decisions *ds, size_t i)
{
    return i < ds->n_evictions ? &ds->evictions[i] : NULL;
}
