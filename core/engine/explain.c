/*
 * explain.c - see explain.h.
 */
#include "config.h"

#include "explain.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "binding.h"
#include "routing.h"
#include "runtime.h"
#include "sched_impl.h"
#include "util.h"

/* ---- finding the workload ---------------------------------------------- */

/* A workload of `only`, or of any profile when only is NULL. */

static const char *score_mode_name(int mode)
{
    return mode == SCORE_TUPLE           ? "tuple"
           : mode == SCORE_LEXICOGRAPHIC ? "lexicographic"
                                         : "weighted";
}
static int is_workload(const sched *s, const profile *only, const trellis_object *o)
{
    for (size_t i = 0; i < s->n_profiles; i++)
        if ((!only || only == &s->profiles[i]) && profile_is_workload_kind(&s->profiles[i], o))
            return 1;
    return 0;
}

static void add_name(strbuf *b, const trellis_object *o)
{
    sb_printf(b, "%s%s/%s/%s", b->len ? ", " : "", o->kind, o->namespace_, o->name);
}

int explain_find(const sched *s, const char *spec, const char *profile_name, trellis_object **w,
                 profile **p, char *err, size_t errlen)
{
    *w = NULL;
    *p = NULL;
    profile *only = NULL;
    if (profile_name) {
        for (size_t i = 0; i < s->n_profiles; i++)
            if (strcmp(s->profiles[i].cfg->name, profile_name) == 0)
                only = &s->profiles[i];
        if (!only)
            return errf(err, errlen, "no profile named '%s' in %s", profile_name, s->cfg->file);
    }
    /* NAME, NAMESPACE/NAME, KIND/NAME (cluster-scoped) or KIND/NAMESPACE/NAME */
    char *copy = xstrdup(spec);
    char *part[4] = {copy, NULL, NULL, NULL};
    size_t n = 1;
    for (char *slash = strchr(copy, '/'); slash && n < 4; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        part[n++] = slash + 1;
    }
    const char *kind = n == 3 ? part[0] : NULL;
    const char *ns = n == 1 ? NULL : part[n - 2];
    const char *name = part[n - 1];
    if (n > 3 || !*name || (kind && !*kind)) {
        free(copy);
        return errf(err, errlen,
                    "'%s': expected NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME", spec);
    }
    strbuf matched, similar;
    sb_init(&matched);
    sb_init(&similar);
    size_t n_matched = 0;
    for (size_t i = 0; i < index_count(s->ix); i++) {
        trellis_object *o = index_at(s->ix, i);
        if (!is_workload(s, only, o) || strcmp(o->name, name) != 0)
            continue;
        /* NAME alone: a cluster-scoped or default-namespace workload */
        int ns_ok = ns ? strcmp(o->namespace_, ns) == 0
                       : !*o->namespace_ || strcmp(o->namespace_, "default") == 0;
        /* A/B is KIND/NAME too, for a cluster-scoped workload of kind A */
        int kind_name = n == 2 && !*o->namespace_ && strcasecmp(o->kind, part[0]) == 0;
        if (kind_name || (ns_ok && (!kind || strcasecmp(o->kind, kind) == 0))) {
            *w = o;
            n_matched++;
            add_name(&matched, o);
        } else {
            add_name(&similar, o);
        }
    }
    free(copy);
    int rc = 0;
    if (n_matched > 1) {
        rc = errf(err, errlen,
                  "'%s' is ambiguous: it matches %s; name one as "
                  "KIND/NAMESPACE/NAME",
                  spec, matched.s);
    } else if (n_matched == 0) {
        strbuf kinds;
        sb_init(&kinds);
        for (size_t i = 0; i < s->n_profiles; i++)
            if (!only || only == &s->profiles[i])
                sb_printf(&kinds, "%s%s", kinds.len ? ", " : "", s->profiles[i].cfg->workload_kind);
        rc = errf(err, errlen, "no workload '%s' in the state (workload kinds: %s%s%s)%s%s", spec,
                  kinds.s ? kinds.s : "none", only ? " of profile " : "",
                  only ? only->cfg->name : "", similar.len ? "; did you mean " : "",
                  similar.len ? similar.s : "");
        sb_free(&kinds);
    } else {
        *p = only ? only : sched_profile_for(s, *w);
        if (!*p) {
            /* a workload of some profile's kind that asks for no profile's name */
            const char *field = NULL;
            for (size_t i = 0; i < s->n_profiles && !field; i++)
                if (profile_is_workload_kind(&s->profiles[i], *w))
                    field = s->profiles[i].cfg->scheduler_name_field;
            const char *asked = field ? value_string(object_get(*w, field)) : NULL;
            rc = errf(err, errlen,
                      "%s %s asks for scheduler '%s' (%s), which no profile of %s answers "
                      "to; give --profile NAME to evaluate it against one",
                      (*w)->kind, (*w)->key, asked ? asked : "", field ? field : "-", s->cfg->file);
        }
    }
    if (rc < 0)
        *w = NULL;
    sb_free(&matched);
    sb_free(&similar);
    return rc;
}

/* ---- evaluating it ----------------------------------------------------- */

/* Pass one: framework_schedule with every target filtered and scored and
 * the post-filters held back (nothing may be evicted before the verdicts
 * are read), then each filter plugin alone on each target, in the same
 * cycle so the pre-filters' state is there. */
static void verdicts(sched *s, profile *p, trellis_object *w, decision *d, explain_result *r)
{
    trellis_cycle *c = &s->cycle;
    char msg[1024];
    const struct trellis_target *best;
    snapshot_update(&p->snap, &s->cache);
    c->d = d;
    framework_schedule(p, c, w, FW_EXPLAIN | FW_NO_POST_FILTER, &best, msg, sizeof msg);
    r->n_targets = c->n;
    if (!c->filtered)
        return; /* a malformed workload or a failing pre-filter: the real cycle says */
    if (c->pre_plugin >= 0) {
        r->pre_plugin = xstrdup(p->plugins[c->pre_plugin]->name);
        r->pre_status = c->pre_status;
    }
    if (c->narrowed) {
        strbuf b;
        sb_init(&b);
        for (size_t k = 0; k < c->n_narrow_by && k < NARROW_NAMED; k++)
            sb_printf(&b, "%s%s", k ? ", " : "", p->plugins[c->narrow_by[k]]->name);
        if (c->n_narrow_by > NARROW_NAMED)
            sb_puts(&b, ", ...");
        r->narrowed_by = sb_steal(&b);
        r->n_narrow = c->n_narrow;
    }
    size_t nfl = p->filter.n, nsc = p->score.n, nf = c->n_feasible;
    r->scored = c->scored;
    r->score_skipped = xcalloc(nsc ? nsc : 1, 1);
    r->narrowed = xcalloc(nsc ? nsc : 1, 1);
    for (size_t k = 0; k < nsc; k++)
        r->score_skipped[k] = c->skip_score[p->score.v[k]->index];
    r->n_rows = c->n;
    r->rows = xcalloc(c->n ? c->n : 1, sizeof *r->rows);
    size_t j = 0; /* index among the feasible targets, which keep snapshot order */
    for (size_t i = 0; i < c->n; i++) {
        explain_row *row = &r->rows[i];
        const trellis_plugin *who;
        trellis_status st;
        row->target = xstrdup(c->targets[i]->name);
        row->feasible = framework_explain(c, i, &who, &st) == TRELLIS_SUCCESS;
        if (!row->feasible) {
            row->rej_plugin = xstrdup(who ? who->name : "-");
            row->rej_code = xstrdup(st.reason);
            row->rej_message = xstrdup(st.message);
        }
        row->filters = xcalloc(nfl ? nfl : 1, sizeof *row->filters);
        for (size_t k = 0; k < nfl; k++) {
            explain_verdict *v = &row->filters[k];
            /* a target left out of the cycle met no filter */
            v->ran = c->pre_plugin < 0 && cycle_in_set(c, i);
            v->code = v->ran ? framework_filter_one(c, k, i, &st) : TRELLIS_SKIP;
            v->reason = xstrdup(v->ran ? st.reason : "");
            v->message = xstrdup(v->ran ? st.message : "");
        }
        if (!row->feasible)
            continue;
        if (c->scored && j < nf && c->feasible_idx[j] == i) {
            row->scored = 1;
            row->total = c->totals[j];
            row->scores = xcalloc(nsc ? nsc : 1, sizeof *row->scores);
            row->kept = xcalloc(nsc ? nsc : 1, 1);
            for (size_t k = 0; k < nsc; k++)
                row->scores[k] = c->rows[k][j];
        }
        j++;
    }
    if (!(p->cfg->score_mode == SCORE_LEXICOGRAPHIC) || !c->scored)
        return;
    /* Lexicographic: totals[j] is the number of rounds target j stayed in.
     * Round `round` is the round-th score plugin not skipped; the targets
     * in it are those that stayed in more rounds; it keeps those with its
     * best (normalized) score. Scores of targets out of the running are
     * raw, so they are not shown. */
    size_t round = 0;
    for (size_t k = 0; k < nsc; k++) {
        if (r->score_skipped[k])
            continue;
        int64_t top = INT64_MIN;
        for (size_t f = 0; f < nf; f++)
            if ((size_t)c->totals[f] > round && c->rows[k][f] > top)
                top = c->rows[k][f];
        r->narrowed[k] = top != INT64_MIN;
        for (size_t f = 0; f < nf; f++) {
            explain_row *row = &r->rows[c->feasible_idx[f]];
            if ((size_t)c->totals[f] <= round)
                row->scores[k] = INT64_MIN;
            else if (row->scores[k] == top)
                row->kept[k] = 1;
            else
                row->cut_by = p->score.v[k]->name;
        }
        round++;
    }
}

/* Pass two: the real cycle, as scheduler.c runs a workload: explain off,
 * the post-filters on, retried at once while a post-filter made room. */
static void real_cycle(sched *s, profile *p, trellis_object *w, decision *d, explain_result *r)
{
    trellis_cycle *c = &s->cycle;
    unsigned flags = 0;
    r->post_filter_evaluated = 1;
    if (p->post_filter.n && !(s->st && s->st->dry_run)) {
        flags = FW_NO_POST_FILTER;
        r->post_filter_evaluated = 0;
        r->post_filter_note = xstrdup("post-filter not evaluated: the store is not opened "
                                      "dry-run, and a post-filter writes (evictions, "
                                      "created targets)");
    }
    char msg[1024];
    /* the notes of pass one stay (it scores even a single candidate);
     * the real cycle adds what only it does (a post-filter's) */
    for (;;) {
        const struct trellis_target *best = NULL;
        decision_notes_again(d);
        d->attempts++;
        snapshot_update(&p->snap, &s->cache);
        c->d = d;
        c->nominated_name = d->nominated ? d->nominated : profile_workload_nominated(p, w);
        r->result = framework_schedule(p, c, w, flags, &best, msg, sizeof msg);
        c->nominated_name = NULL;
        free(r->message);
        if (r->result == FW_SCHEDULED) {
            r->message = xstrdup("");
            r->picked = xstrdup(c->n_picks ? c->picks[0]->name : best->name);
            r->n_picks = c->n_picks;
            r->picks = xcalloc(c->n_picks ? c->n_picks : 1, sizeof *r->picks);
            for (size_t i = 0; i < c->n_picks; i++)
                r->picks[i] = xstrdup(c->picks[i]->name);
            r->more_cycles = c->requeue_now;
            for (size_t i = 0; i < c->n; i++)
                r->n_not_evaluated += framework_rej(c, i) == REJ_NOT_EVALUATED;
            break;
        }
        if (r->result == FW_ERROR) {
            r->message = xstrdup(msg);
            break;
        }
        if (r->result == FW_SATISFIED) {
            r->message = xstrdup("it holds as many targets as it wants; none is picked");
            break;
        }
        r->message = framework_unschedulable_message(c);
        r->post_filter_ran |= p->post_filter.n > 0 && !(flags & FW_NO_POST_FILTER);
        if (!c->changed || d->attempts >= s->max_attempts)
            break;
    }
    c->d = NULL;
    r->notes = d->notes;
    r->n_notes = d->n_notes;
    d->notes = NULL;
    d->n_notes = 0;
    d->notes_dropped = d->notes_dropped_now = 0;
    r->attempts = d->attempts;
    r->evicted = d->evicted;
    r->n_evicted = d->n_evicted;
    r->created = d->created;
    r->n_created = d->n_created;
    r->nominated = d->nominated;
    /* where each victim was: its binding as read (objects never change) */
    r->evicted_from = xcalloc(r->n_evicted ? r->n_evicted : 1, sizeof *r->evicted_from);
    for (size_t i = 0; i < r->n_evicted; i++) {
        const obj_id *id = &r->evicted[i];
        const trellis_object *v = sched_lookup(s, id->kind, id->namespace_, id->name);
        profile *vp = v ? sched_profile_for(s, v) : NULL;
        char buf[BINDING_KEY_MAX];
        const char *on = v ? binding_target(vp ? vp : p, v, buf, sizeof buf) : NULL;
        r->evicted_from[i] = xstrdup(on ? on : "");
    }
    for (size_t i = 0; i < r->n_rows; i++) {
        r->rows[i].picked = r->picked && strcmp(r->rows[i].target, r->picked) == 0;
        for (size_t k = 0; k < r->n_picks; k++)
            r->rows[i].picked |= strcmp(r->rows[i].target, r->picks[k]) == 0;
    }
}

/* How many pending workloads of p the queue pops before w: a run places
 * them first, and they can take what w would get. */
static size_t queued_ahead(const profile *p, const trellis_object *w)
{
    const queue *q = &p->q;
    const qitem *me = NULL;
    for (size_t i = 0; i < q->active.n && !me; i++)
        if (q->active.v[i]->w == w)
            me = q->active.v[i];
    size_t n = 0;
    if (me && q->less && q->order_enter)
        q->order_enter(q->less_ud, w);
    for (size_t i = 0; me && i < q->active.n; i++) {
        const qitem *o = q->active.v[i];
        if (o != me)
            n +=
                q->less ? q->less(q->less_ud, o->w, o->seq, me->w, me->seq) != 0 : o->seq < me->seq;
    }
    if (me && q->less && q->order_enter)
        q->order_leave(q->less_ud);
    return n;
}

void explain_run(sched *s, profile *p, trellis_object *w, explain_result *r)
{
    memset(r, 0, sizeof *r);
    r->w = object_ref(w);
    r->p = p;
    r->queued_ahead = queued_ahead(p, w);
    profile *own = sched_profile_for(s, w);
    if (own != p)
        r->note = xasprintf("%s %s is scheduled by %s%s%s; evaluated against profile '%s' "
                            "as asked",
                            w->kind, w->key, own ? "profile '" : "no profile",
                            own ? own->cfg->name : "", own ? "'" : "", p->cfg->name);
    if (profile_workload_finished(p, w)) {
        char *prev = r->note;
        r->note =
            xasprintf("%s%s%s %s has finished (%s is %s): it holds no room and a run never "
                      "places it (below: what it would get if it were taken)",
                      prev ? prev : "", prev ? "; " : "", w->kind, w->key, p->cfg->finished_field,
                      value_string(object_get(w, p->cfg->finished_field)));
        free(prev);
    }
    char buf[BINDING_KEY_MAX];
    const char *b = binding_target(p, w, buf, sizeof buf);
    const char *by = NULL;
    if (!(b && *b) && !run_pre_enqueue(p, w, &by))
        r->skipped_by = xstrdup(by);
    int holds = p->placed || p->cfg->reconcile;
    if (b && *b) {
        /* evaluated as if pending: its own place on its target is free;
         * a workload that may hold several keeps them, as in a run (held
         * targets are not candidates) */
        r->bound = xstrdup(b);
        cache_target *ct = cache_get_target(&s->cache, p->cfg->target_kind, b);
        if (ct && !holds)
            cache_forget(&s->cache, w, ct);
    }
    if (holds) {
        routing_set_held(s, p, &s->cycle, w);
        r->holds = 1;
        if (s->cycle.n_held) {
            strbuf hb;
            sb_init(&hb);
            for (size_t i = 0; i < s->cycle.n_held; i++)
                sb_printf(&hb, "%s%s", i ? "," : "", s->cycle.held[i]);
            free(r->bound);
            r->bound = xstrdup(hb.s);
            sb_free(&hb);
        }
    }
    decision d;
    memset(&d, 0, sizeof d);
    d.w = w;
    d.p = p;
    verdicts(s, p, w, &d, r);
    real_cycle(s, p, w, &d, r);
    s->cycle.held = NULL;
    s->cycle.n_held = 0;
}

void explain_free(explain_result *r)
{
    size_t nfl = r->p ? r->p->filter.n : 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        explain_row *row = &r->rows[i];
        for (size_t k = 0; k < nfl; k++) {
            free(row->filters[k].reason);
            free(row->filters[k].message);
        }
        free(row->filters);
        free(row->target);
        free(row->rej_plugin);
        free(row->rej_code);
        free(row->rej_message);
        free(row->scores);
        free(row->kept);
    }
    free(r->rows);
    for (size_t i = 0; i < r->n_evicted; i++)
        free(r->evicted_from[i]);
    free(r->evicted_from);
    obj_ids_free(r->evicted, r->n_evicted);
    obj_ids_free(r->created, r->n_created);
    free(r->nominated);
    free(r->score_skipped);
    free(r->narrowed);
    free(r->bound);
    free(r->note);
    free(r->pre_plugin);
    free(r->narrowed_by);
    for (size_t i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r->skipped_by);
    free(r->picked);
    for (size_t i = 0; i < r->n_picks; i++)
        free(r->picks[i]);
    free(r->picks);
    free(r->message);
    free(r->post_filter_note);
    if (r->w)
        object_unref(r->w);
    memset(r, 0, sizeof *r);
}

/* ---- printing ---------------------------------------------------------- */

static const char *result_name(const explain_result *r)
{
    return decision_result_name(r->result == FW_SCHEDULED || r->result == FW_SATISFIED
                                    ? DEC_SCHEDULED
                                : r->result == FW_UNSCHEDULABLE ? DEC_UNSCHEDULABLE
                                                                : DEC_ERROR);
}

static const char *verdict_name(const explain_verdict *v)
{
    if (!v->ran)
        return "not-run";
    switch (v->code) {
    case TRELLIS_SUCCESS:
        return "pass";
    case TRELLIS_SKIP:
        return "skip";
    case TRELLIS_UNSCHEDULABLE:
    case TRELLIS_UNRESOLVABLE:
        return "fail";
    default:
        return "error";
    }
}

static json_object *jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

static json_object *id_json(const char *kind, const char *ns, const char *name)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", jstr(kind));
    json_object_object_add(o, "namespace", jstr(ns));
    json_object_object_add(o, "name", jstr(name));
    return o;
}

/* {"plugin", ["verdict",] "code", "message"} */
static json_object *status_json(const char *plugin, const char *verdict, const char *code,
                                const char *message)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "plugin", jstr(plugin));
    if (verdict)
        json_object_object_add(o, "verdict", jstr(verdict));
    json_object_object_add(o, "code", jstr(code));
    json_object_object_add(o, "message", jstr(message));
    return o;
}

static json_object *row_json(const explain_result *r, const explain_row *row)
{
    const profile *p = r->p;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "target", jstr(row->target));
    json_object_object_add(o, "feasible", json_object_new_boolean(row->feasible));
    json_object_object_add(
        o, "rejected_by",
        row->feasible ? NULL : status_json(row->rej_plugin, NULL, row->rej_code, row->rej_message));
    json_object *fa = json_object_new_array();
    for (size_t k = 0; k < p->filter.n; k++) {
        const explain_verdict *v = &row->filters[k];
        json_object *vo = status_json(p->filter.v[k]->name, verdict_name(v), v->reason, v->message);
        if (v->ran && (v->code == TRELLIS_UNSCHEDULABLE || v->code == TRELLIS_UNRESOLVABLE))
            json_object_object_add(vo, "unresolvable",
                                   json_object_new_boolean(v->code == TRELLIS_UNRESOLVABLE));
        json_object_array_add(fa, vo);
    }
    json_object_object_add(o, "filters", fa);
    if (row->scored) {
        json_object *so = json_object_new_object();
        for (size_t k = 0; k < p->score.n; k++)
            json_object_object_add(so, p->score.v[k]->name,
                                   r->score_skipped[k] || row->scores[k] == INT64_MIN
                                       ? NULL
                                       : json_object_new_int64(row->scores[k]));
        json_object_object_add(o, "scores", so);
        if ((p->cfg->score_mode == SCORE_LEXICOGRAPHIC))
            json_object_object_add(o, "cut_by", jstr(row->cut_by));
        else
            json_object_object_add(o, "total", json_object_new_int64(row->total));
    }
    json_object_object_add(o, "picked", json_object_new_boolean(row->picked));
    return o;
}

void explain_print_json(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    const trellis_object *w = r->w;
    json_object *root = json_object_new_object();
    json_object_object_add(root, "workload", id_json(w->kind, w->namespace_, w->name));
    json_object_object_add(root, "profile", jstr(p->cfg->name));
    json_object_object_add(root, "bound", jstr(r->bound));
    if (r->note)
        json_object_object_add(root, "note", jstr(r->note));
    json_object_object_add(root, "queued_ahead", json_object_new_int64((int64_t)r->queued_ahead));
    json_object_object_add(root, "score_mode", jstr(score_mode_name(p->cfg->score_mode)));
    json_object *fl = json_object_new_array();
    for (size_t k = 0; k < p->filter.n; k++)
        json_object_array_add(fl, jstr(p->filter.v[k]->name));
    json_object_object_add(root, "filters", fl);
    json_object *sl = json_object_new_array();
    for (size_t k = 0; k < p->score.n; k++) {
        json_object *so = json_object_new_object();
        json_object_object_add(so, "plugin", jstr(p->score.v[k]->name));
        json_object_object_add(so, "weight", json_object_new_int(p->score.v[k]->weight));
        json_object_object_add(so, "skipped",
                               json_object_new_boolean(r->score_skipped && r->score_skipped[k]));
        if ((p->cfg->score_mode == SCORE_LEXICOGRAPHIC)) {
            json_object *kept = NULL;
            if (r->narrowed && r->narrowed[k]) {
                kept = json_object_new_array();
                for (size_t i = 0; i < r->n_rows; i++)
                    if (r->rows[i].scored && r->rows[i].kept[k])
                        json_object_array_add(kept, jstr(r->rows[i].target));
            }
            json_object_object_add(so, "kept", kept);
        }
        json_object_array_add(sl, so);
    }
    json_object_object_add(root, "score_plugins", sl);
    json_object_object_add(root, "pre_filter",
                           r->pre_plugin ? status_json(r->pre_plugin, NULL, r->pre_status.reason,
                                                       r->pre_status.message)
                                         : NULL);
    json_object *ta = json_object_new_array();
    for (size_t i = 0; i < r->n_rows; i++)
        json_object_array_add(ta, row_json(r, &r->rows[i]));
    json_object_object_add(root, "targets", ta);
    json_object_object_add(root, "result", jstr(result_name(r)));
    json_object *na = json_object_new_array();
    for (size_t i = 0; i < r->n_notes; i++)
        json_object_array_add(na, jstr(r->notes[i]));
    json_object_object_add(root, "notes", na);
    json_object_object_add(root, "left_alone_by", jstr(r->skipped_by));
    json_object_object_add(root, "gated", json_object_new_boolean(r->skipped_by != NULL));
    json_object_object_add(root, "picked", jstr(r->picked));
    if (r->n_picks) {
        json_object *pa = json_object_new_array();
        for (size_t i = 0; i < r->n_picks; i++)
            json_object_array_add(pa, jstr(r->picks[i]));
        json_object_object_add(root, "picks", pa);
    }
    json_object_object_add(root, "more_cycles", json_object_new_boolean(r->more_cycles));
    json_object_object_add(root, "message", jstr(r->message ? r->message : ""));
    json_object_object_add(root, "attempts", json_object_new_int((int)r->attempts));
    json_object_object_add(root, "targets_not_evaluated",
                           json_object_new_int64((int64_t)r->n_not_evaluated));
    json_object *nw = NULL;
    if (r->narrowed_by) {
        nw = json_object_new_object();
        json_object_object_add(nw, "by", jstr(r->narrowed_by));
        json_object_object_add(nw, "targets", json_object_new_int64((int64_t)r->n_narrow));
    }
    json_object_object_add(root, "narrowed", nw);
    json_object *pf = json_object_new_object();
    json_object *pl = json_object_new_array();
    for (size_t k = 0; k < p->post_filter.n; k++)
        json_object_array_add(pl, jstr(p->post_filter.v[k]->name));
    json_object_object_add(pf, "plugins", pl);
    json_object_object_add(pf, "evaluated", json_object_new_boolean(r->post_filter_evaluated));
    json_object_object_add(pf, "ran", json_object_new_boolean(r->post_filter_ran));
    json_object *ev = json_object_new_array();
    for (size_t i = 0; i < r->n_evicted; i++) {
        const obj_id *id = &r->evicted[i];
        json_object *vo = id_json(id->kind, id->namespace_, id->name);
        json_object_object_add(vo, "target", jstr(r->evicted_from[i]));
        json_object_array_add(ev, vo);
    }
    json_object_object_add(pf, "evicted", ev);
    json_object *cr = json_object_new_array();
    for (size_t i = 0; i < r->n_created; i++)
        json_object_array_add(
            cr, id_json(r->created[i].kind, r->created[i].namespace_, r->created[i].name));
    json_object_object_add(pf, "created", cr);
    json_object_object_add(pf, "nominated", jstr(r->nominated));
    if (r->post_filter_note)
        json_object_object_add(pf, "note", jstr(r->post_filter_note));
    json_object_object_add(root, "post_filter", pf);
    fprintf(f, "%s\n",
            json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
}

/* Columns on a terminal: UTF-8 continuation bytes take no room. */
static size_t cols(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The table: a grid of owned strings, printed with padded columns. */
typedef struct grid {
    char **cell;        /* [rows * ncol] */
    const char **group; /* [ncol] a label over the columns from there on */
    size_t nrow, ncol;
} grid;

static void grid_set(grid *g, size_t row, size_t col, char *s)
{
    g->cell[row * g->ncol + col] = s;
}

static void grid_print(FILE *f, const grid *g, const explain_result *r)
{
    size_t *width = xcalloc(g->ncol, sizeof *width);
    for (size_t i = 0; i < g->nrow * g->ncol; i++)
        if (g->cell[i] && cols(g->cell[i]) > width[i % g->ncol])
            width[i % g->ncol] = cols(g->cell[i]);
    strbuf groups;
    sb_init(&groups);
    for (size_t col = 0, at = 0; col < g->ncol; at += width[col++] + 2) {
        if (!g->group[col])
            continue;
        size_t have = groups.s ? cols(groups.s) : 0;
        for (size_t n = have; n < at || (have && n < have + 2 && n >= at); n++)
            sb_puts(&groups, " ");
        sb_puts(&groups, g->group[col]);
    }
    if (groups.len)
        fprintf(f, "%s\n", groups.s);
    sb_free(&groups);
    for (size_t row = 0; row < g->nrow; row++) {
        strbuf line;
        sb_init(&line);
        for (size_t col = 0; col < g->ncol; col++) {
            const char *s = g->cell[row * g->ncol + col];
            s = s ? s : "";
            sb_printf(&line, "%s%s", col ? "  " : "", s);
            for (size_t n = cols(s); n < width[col]; n++)
                sb_puts(&line, " ");
        }
        while (line.len && line.s[line.len - 1] == ' ')
            line.s[--line.len] = '\0';
        if (row > 0 && r->rows[row - 1].picked)
            sb_puts(&line, r->attempts > 1 ? "  <- picked (after the post-filter)" : "  <- picked");
        fprintf(f, "%s\n", line.s ? line.s : "");
        sb_free(&line);
    }
    free(width);
}

static char *filter_cell(const explain_verdict *v)
{
    if (!v->ran)
        return xstrdup("-");
    switch (v->code) {
    case TRELLIS_SUCCESS:
        return xstrdup("\u2713");
    case TRELLIS_SKIP:
        return xstrdup("skip");
    case TRELLIS_UNSCHEDULABLE:
    case TRELLIS_UNRESOLVABLE:
        return xstrdup(v->reason);
    default:
        return xasprintf("error:%s", v->reason);
    }
}

static void print_matrix(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    int lex = p->cfg->score_mode == SCORE_LEXICOGRAPHIC;
    int tuple = p->cfg->score_mode == SCORE_TUPLE;
    size_t nfl = p->filter.n, nsc = r->scored ? p->score.n : 0;
    size_t pre = r->pre_plugin ? 1 : 0;
    grid g;
    g.nrow = r->n_rows + 1;
    g.ncol = 1 + pre + nfl + (nsc ? nsc + 1 : 0);
    g.cell = xcalloc(g.nrow * g.ncol, sizeof *g.cell);
    g.group = xcalloc(g.ncol, sizeof *g.group);
    if (pre + nfl)
        g.group[1] = "FILTERS (\u2713 passed, or the reason code)";
    if (nsc)
        g.group[1 + pre + nfl] = lex     ? "SCORES (* kept by that plugin)"
                                 : tuple ? "SCORES (raw, ranked plugin by plugin)"
                                         : "SCORES (0-100, \u00d7 weight)";
    size_t col = 0;
    grid_set(&g, 0, col++, xstrdup("TARGET"));
    if (pre)
        grid_set(&g, 0, col++, xasprintf("%s (pre-filter)", r->pre_plugin));
    for (size_t k = 0; k < nfl; k++)
        grid_set(&g, 0, col++, xstrdup(p->filter.v[k]->name));
    for (size_t k = 0; k < nsc; k++)
        grid_set(&g, 0, col++,
                 lex || tuple
                     ? xasprintf("%s", p->score.v[k]->name)
                     : xasprintf("%s \u00d7%d", p->score.v[k]->name, p->score.v[k]->weight));
    if (nsc)
        grid_set(&g, 0, col++, xstrdup(lex ? "STANDING" : tuple ? "OUTRANKS" : "TOTAL"));
    for (size_t i = 0; i < r->n_rows; i++) {
        const explain_row *row = &r->rows[i];
        col = 0;
        grid_set(&g, i + 1, col++, xstrdup(row->target));
        if (pre)
            grid_set(&g, i + 1, col++, xstrdup(r->pre_status.reason));
        for (size_t k = 0; k < nfl; k++)
            grid_set(&g, i + 1, col++, filter_cell(&row->filters[k]));
        if (!row->scored || !nsc)
            continue;
        for (size_t k = 0; k < nsc; k++) {
            char *s = r->score_skipped[k]           ? xstrdup("skip")
                      : row->scores[k] == INT64_MIN ? xstrdup("-")
                      : lex && row->kept[k]         ? xasprintf("%lld*", (long long)row->scores[k])
                                                    : xasprintf("%lld", (long long)row->scores[k]);
            grid_set(&g, i + 1, col++, s);
        }
        grid_set(&g, i + 1, col++,
                 lex ? (row->cut_by ? xasprintf("cut by %s", row->cut_by) : xstrdup("kept"))
                     : xasprintf("%lld", (long long)row->total));
    }
    grid_print(f, &g, r);
    for (size_t i = 0; i < g.nrow * g.ncol; i++)
        free(g.cell[i]);
    free(g.cell);
    free(g.group);
}

/* Every rejection with its message: the matrix has room for codes only. */
static void print_reasons(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    size_t tw = 0, pw = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        if (strlen(r->rows[i].target) > tw)
            tw = strlen(r->rows[i].target);
    for (size_t k = 0; k < p->filter.n; k++)
        if (strlen(p->filter.v[k]->name) > pw)
            pw = strlen(p->filter.v[k]->name);
    int header = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const explain_row *row = &r->rows[i];
        const char *last = NULL;
        int shown_first = 0;
        for (size_t k = 0; k < p->filter.n; k++) {
            const explain_verdict *v = &row->filters[k];
            if (!v->ran || v->code == TRELLIS_SUCCESS || v->code == TRELLIS_SKIP)
                continue;
            /* an invalid target says so once, not once per plugin */
            if (last && strcmp(last, v->message) == 0)
                continue;
            if (!header++)
                fprintf(f, "\nRejections:\n");
            fprintf(f, "  %-*s  %-*s  %s: %s\n", (int)tw, row->target, (int)pw,
                    p->filter.v[k]->name, v->reason, v->message);
            last = v->message;
            shown_first |= row->rej_code && strcmp(row->rej_code, v->reason) == 0;
        }
        if (!row->feasible && !shown_first && !r->pre_plugin) {
            if (!header++)
                fprintf(f, "\nRejections:\n");
            fprintf(f, "  %-*s  %-*s  %s: %s\n", (int)tw, row->target, (int)pw, row->rej_plugin,
                    row->rej_code, row->rej_message);
        }
    }
    if (r->pre_plugin)
        fprintf(f, "\nPre-filter %s rejected the workload for every target: %s: %s\n",
                r->pre_plugin, r->pre_status.reason, r->pre_status.message);
}

static void print_lexicographic(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    if (!(p->cfg->score_mode == SCORE_LEXICOGRAPHIC) || !r->scored)
        return;
    fprintf(f, "\nLexicographic: each score plugin keeps the targets with its best score "
               "(* above)\n");
    for (size_t k = 0; k < p->score.n; k++) {
        strbuf kept;
        sb_init(&kept);
        for (size_t i = 0; r->narrowed[k] && i < r->n_rows; i++)
            if (r->rows[i].scored && r->rows[i].kept[k])
                sb_printf(&kept, "%s%s", kept.len ? ", " : "", r->rows[i].target);
        fprintf(f, "  %s: %s\n", p->score.v[k]->name,
                r->score_skipped[k] ? "skipped (pre-score)"
                : r->narrowed[k]    ? kept.s
                                    : "not reached (one target left)");
        sb_free(&kept);
    }
}

static void print_post_filter(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    strbuf names;
    sb_init(&names);
    for (size_t k = 0; k < p->post_filter.n; k++)
        sb_printf(&names, "%s%s", k ? ", " : "", p->post_filter.v[k]->name);
    if (!p->post_filter.n)
        fprintf(f, "Post-filter: none in profile '%s'\n", p->cfg->name);
    else if (!r->post_filter_evaluated)
        fprintf(f, "Post-filter (%s): %s\n", names.s, r->post_filter_note);
    else if (!r->post_filter_ran)
        fprintf(f, "Post-filter (%s): not needed, a target fits\n", names.s);
    else if (!r->n_evicted && !r->n_created)
        fprintf(f, "Post-filter (%s): would make no room (nothing to evict or create)\n", names.s);
    else {
        fprintf(f, "Post-filter (%s) would, in a real run (nothing is written now):\n", names.s);
        for (size_t i = 0; i < r->n_evicted; i++)
            fprintf(f, "  evict %s %s%s%s%s%s\n", r->evicted[i].kind, r->evicted[i].namespace_,
                    *r->evicted[i].namespace_ ? "/" : "", r->evicted[i].name,
                    *r->evicted_from[i] ? " from " : "", r->evicted_from[i]);
        for (size_t i = 0; i < r->n_created; i++)
            fprintf(f, "  create %s %s%s%s\n", r->created[i].kind, r->created[i].namespace_,
                    *r->created[i].namespace_ ? "/" : "", r->created[i].name);
        if (r->nominated)
            fprintf(f, "  nominate %s for the retry\n", r->nominated);
    }
    sb_free(&names);
}

void explain_print_table(FILE *f, const explain_result *r)
{
    const profile *p = r->p;
    fprintf(f, "%s/%s: %s%s%s, profile %s, %zu target%s, %s scores\n", r->w->kind, r->w->key,
            !r->bound  ? "pending"
            : r->holds ? "holds "
                       : "bound to ",
            r->bound ? r->bound : "",
            !r->bound  ? ""
            : r->holds ? " (kept; never candidates)"
                       : " (evaluated as if pending, its own place freed)",
            p->cfg->name, r->n_targets, r->n_targets == 1 ? "" : "s",
            score_mode_name(p->cfg->score_mode));
    if (r->note)
        fprintf(f, "note: %s\n", r->note);
    if (r->queued_ahead)
        fprintf(f,
                "note: %zu pending workload%s of this profile come%s first in the queue; "
                "a run places %s before this one, which can change the answer\n",
                r->queued_ahead, r->queued_ahead == 1 ? "" : "s", r->queued_ahead == 1 ? "s" : "",
                r->queued_ahead == 1 ? "it" : "them");
    if (r->rows) {
        fprintf(f, "\n");
        print_matrix(f, r);
        print_reasons(f, r);
        print_lexicographic(f, r);
    }
    fprintf(f, "\n");
    print_post_filter(f, r);
    if (r->narrowed_by)
        fprintf(f,
                "Narrowed: pre-filter %s left %zu of %zu targets in the cycle; no filter ran on "
                "the others (- above), each rejected with the reason the narrowing plugin's "
                "filter gives, or NotInPreFilterResult\n",
                r->narrowed_by, r->n_narrow, r->n_targets);
    if (r->n_not_evaluated)
        fprintf(f,
                "note: the real cycle looked at %zu of %zu targets "
                "(percentage_of_targets_to_score) and picked among those\n",
                r->n_rows - r->n_not_evaluated, r->n_rows);
    if (r->skipped_by)
        fprintf(f,
                "Gated: plugin %s's pre_enqueue holds it back (queue gated), so a run makes "
                "no decision for it until it changes (below: what it would get if it were "
                "taken)\n",
                r->skipped_by);
    for (size_t i = 0; i < r->n_notes; i++)
        fprintf(f, "Decided: %s\n", r->notes[i]);
    if (r->result == FW_SCHEDULED && r->n_picks > 1) {
        fprintf(f, "Result: scheduled on");
        for (size_t i = 0; i < r->n_picks; i++)
            fprintf(f, "%s %s", i ? "," : "", r->picks[i]);
        fprintf(f, "%s\n", r->more_cycles ? " (then another cycle: a plugin asked for one)" : "");
    } else if (r->result == FW_SCHEDULED)
        fprintf(f, "Result: scheduled on %s%s%s\n", r->picked,
                r->attempts > 1 ? " after the post-filter made room" : "",
                r->more_cycles ? " (then another cycle: a plugin asked for one)" : "");
    else
        fprintf(f, "Result: %s: %s\n", result_name(r), r->message ? r->message : "");
}
