/*
 * output.c - see output.h.
 */
#include "config.h"

#include "output.h"

#include <string.h>

#include <json-c/json.h>

#include "clock.h"
#include "plugin.h"
#include "util.h"

static json_object *id_json(const obj_id *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(id->kind));
    json_object_object_add(o, "namespace", json_object_new_string(id->namespace_));
    json_object_object_add(o, "name", json_object_new_string(id->name));
    return o;
}

static json_object *ids_json(const obj_id *ids, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, id_json(&ids[i]));
    return a;
}

#define JSON_FLAGS                                                                                 \
    (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Write j as json-c prints it at nesting level `level` of a bigger
 * document: its text, every line after the first indented (strings hold
 * no raw newline). Ownership of j is retained by the caller. */
static void put_nested(FILE *f, json_object *j, int level)
{
    const char *text = json_object_to_json_string_ext(j, JSON_FLAGS);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl) {
            fputs(p, f);
            break;
        }
        fwrite(p, 1, (size_t)(nl - p) + 1, f);
        fprintf(f, "%*s", level * 2, "");
        p = nl + 1;
    }
}

static json_object *decision_json(int explain, const decision *d, dec_result r)
{
    json_object *o = json_object_new_object();
    json_object *w = json_object_new_object();
    json_object_object_add(w, "kind", json_object_new_string(d->w->kind));
    json_object_object_add(w, "namespace", json_object_new_string(d->w->namespace_));
    json_object_object_add(w, "name", json_object_new_string(d->w->name));
    json_object_object_add(o, "workload", w);
    json_object_object_add(o, "profile", json_object_new_string(profile_name(d->p)));
    json_object_object_add(o, "result", json_object_new_string(decision_result_name(r)));
    json_object *t = json_object_new_array();
    for (size_t k = 0; k < d->n_targets; k++)
        json_object_array_add(t, json_object_new_string(d->targets[k]));
    json_object_object_add(o, "targets", t);
    if (profile_cfg(d->p)->binding_model == BINDING_OBJECT) {
        /* a decision of several targets: what this run placed and gave up */
        json_object *a = json_object_new_array(), *rl = json_object_new_array();
        for (size_t k = 0; k < d->n_added; k++)
            json_object_array_add(a, json_object_new_string(d->added[k]));
        for (size_t k = 0; k < d->n_released; k++)
            json_object_array_add(rl, json_object_new_string(d->released[k]));
        json_object_object_add(o, "added", a);
        json_object_object_add(o, "released", rl);
    }
    json_object_object_add(o, "message", json_object_new_string(d->message ? d->message : ""));
    json_object_object_add(o, "evicted", ids_json(d->evicted, d->n_evicted));
    json_object_object_add(o, "created", ids_json(d->created, d->n_created));
    if (d->n_notes) {
        json_object *na = json_object_new_array();
        for (size_t k = 0; k < d->n_notes; k++)
            json_object_array_add(na, json_object_new_string(d->notes[k]));
        json_object_object_add(o, "notes", na);
    }
    if (d->retry_at && r == DEC_UNSCHEDULABLE) {
        char ts[CLOCK_TEXT_MAX];
        clock_format(d->retry_at, ts, sizeof ts);
        json_object_object_add(o, "retry_at", json_object_new_string(ts));
    }
    if (explain) {
        const plist *sp = profile_point(d->p, EP_SCORE);
        json_object *ca = json_object_new_array();
        for (size_t k = 0; k < d->n_cands; k++) {
            const dec_cand *c = &d->cands[k];
            json_object *co = json_object_new_object();
            json_object_object_add(co, "target", json_object_new_string(c->target));
            json_object_object_add(co, "verdict",
                                   json_object_new_string(c->feasible ? "feasible" : "rejected"));
            if (!c->feasible) {
                json_object_object_add(co, "plugin", json_object_new_string(c->plugin));
                json_object_object_add(co, "code", json_object_new_string(c->code));
                json_object_object_add(co, "reason", json_object_new_string(c->reason));
            }
            if (c->has_score) {
                json_object_object_add(co, "score", json_object_new_int64(c->score));
                json_object *sc = json_object_new_object();
                for (size_t j = 0; j < sp->n; j++)
                    json_object_object_add(sc, plugin_name(sp->v[j]),
                                           json_object_new_int64(c->scores[j]));
                json_object_object_add(co, "scores", sc);
            }
            json_object_array_add(ca, co);
        }
        json_object_object_add(o, "candidates", ca);
    }
    return o;
}

/* The document is written as json-c prints it whole, one decision at a
 * time, so that fifty thousand decisions never sit in memory as a tree. */
size_t output_json(FILE *f, sched *s)
{
    const decisions *ds = sched_decisions(s);
    size_t n_dec = decisions_count(ds), n_ev = decisions_eviction_count(ds);
    size_t counts[4] = {0};
    fputs("{\n  \"decisions\": [\n", f);
    for (size_t i = 0; i < n_dec; i++) {
        const decision *d = decisions_at(ds, i);
        dec_result r = d->result == DEC_PENDING ? DEC_UNSCHEDULABLE : d->result;
        counts[r]++;
        json_object *o = decision_json(sched_explaining(s), d, r);
        fputs(i ? ",\n    " : "    ", f);
        put_nested(f, o, 2);
        json_object_put(o);
    }
    fputs(n_dec ? "\n  ],\n  \"evictions\": " : "  ],\n  \"evictions\": ", f);
    json_object *evs = json_object_new_array();
    for (size_t i = 0; i < n_ev; i++) {
        const eviction *ev = decisions_eviction_at(ds, i);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "workload", id_json(&ev->workload));
        json_object_object_add(o, "target", json_object_new_string(ev->target));
        json_object_object_add(o, "plugin", json_object_new_string(ev->plugin));
        json_object_object_add(o, "code", json_object_new_string(ev->code));
        json_object_object_add(o, "reason", json_object_new_string(ev->reason));
        json_object_array_add(evs, o);
    }
    put_nested(f, evs, 1);
    json_object_put(evs);
    fputs(",\n  \"summary\": ", f);
    json_object *sum = json_object_new_object();
    json_object_object_add(sum, "scheduled", json_object_new_int64((int64_t)counts[1]));
    json_object_object_add(sum, "unschedulable", json_object_new_int64((int64_t)counts[2]));
    json_object_object_add(sum, "error", json_object_new_int64((int64_t)counts[3]));
    json_object_object_add(sum, "gated", json_object_new_int64((int64_t)sched_gated(s)));
    put_nested(f, sum, 1);
    json_object_put(sum);
    fputs("\n}\n", f);
    return counts[DEC_ERROR];
}

size_t output_table(FILE *f, sched *s)
{
    const decisions *ds = sched_decisions(s);
    size_t n_dec = decisions_count(ds), n_ev = decisions_eviction_count(ds);
    size_t ww = strlen("WORKLOAD"), pw = strlen("PROFILE"), tw = strlen("TARGETS");
    char buf[512];
    for (size_t i = 0; i < n_dec; i++) {
        const decision *d = decisions_at(ds, i);
        snprintf(buf, sizeof buf, "%s/%s", d->w->kind, d->w->key);
        if (strlen(buf) > ww)
            ww = strlen(buf);
        if (strlen(profile_name(d->p)) > pw)
            pw = strlen(profile_name(d->p));
        size_t tl = 0;
        for (size_t k = 0; k < d->n_targets; k++)
            tl += strlen(d->targets[k]) + (k ? 1 : 0);
        if (tl > tw)
            tw = tl;
    }
    for (size_t i = 0; i < n_ev; i++) {
        const eviction *ev = decisions_eviction_at(ds, i);
        fprintf(f, "evicted %s %s%s%s from %s: %s %s: %s\n", ev->workload.kind,
                ev->workload.namespace_, *ev->workload.namespace_ ? "/" : "", ev->workload.name,
                ev->target, ev->plugin, ev->code, ev->reason);
    }
    fprintf(f, "%-*s  %-*s  %-13s  %-*s  %s\n", (int)ww, "WORKLOAD", (int)pw, "PROFILE", "RESULT",
            (int)tw, "TARGETS", "MESSAGE");
    size_t counts[4] = {0};
    for (size_t i = 0; i < n_dec; i++) {
        const decision *d = decisions_at(ds, i);
        dec_result r = d->result == DEC_PENDING ? DEC_UNSCHEDULABLE : d->result;
        counts[r]++;
        strbuf t;
        sb_init(&t);
        for (size_t k = 0; k < d->n_targets; k++)
            sb_printf(&t, "%s%s", k ? "," : "", d->targets[k]);
        snprintf(buf, sizeof buf, "%s/%s", d->w->kind, d->w->key);
        fprintf(f, "%-*s  %-*s  %-13s  %-*s  %s\n", (int)ww, buf, (int)pw, profile_name(d->p),
                decision_result_name(r), (int)tw, t.s ? t.s : "-", d->message ? d->message : "");
        sb_free(&t);
        for (size_t k = 0; k < d->n_evicted; k++)
            fprintf(f, "    evicted %s %s%s%s\n", d->evicted[k].kind, d->evicted[k].namespace_,
                    *d->evicted[k].namespace_ ? "/" : "", d->evicted[k].name);
        for (size_t k = 0; k < d->n_created; k++)
            fprintf(f, "    created %s %s%s%s\n", d->created[k].kind, d->created[k].namespace_,
                    *d->created[k].namespace_ ? "/" : "", d->created[k].name);
        for (size_t k = 0; k < d->n_added; k++)
            fprintf(f, "    added %s\n", d->added[k]);
        for (size_t k = 0; k < d->n_released; k++)
            fprintf(f, "    released %s\n", d->released[k]);
        for (size_t k = 0; k < d->n_notes; k++)
            fprintf(f, "    %s\n", d->notes[k]);
        if (sched_explaining(s)) {
            for (size_t k = 0; k < d->n_cands; k++) {
                const dec_cand *c = &d->cands[k];
                if (c->feasible)
                    fprintf(f, "    %-20s feasible  score %lld\n", c->target, (long long)c->score);
                else
                    fprintf(f, "    %-20s rejected  %s %s: %s\n", c->target, c->plugin, c->code,
                            c->reason);
            }
        }
    }
    fprintf(f, "%zu scheduled, %zu unschedulable, %zu error", counts[1], counts[2], counts[3]);
    if (sched_gated(s))
        fprintf(f, ", %zu gated (held back by a pre_enqueue plugin)", sched_gated(s));
    fputc('\n', f);
    return counts[DEC_ERROR];
}
