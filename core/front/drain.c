/*
 * drain.c - see drain.h. kubectl's rules are those of
 * k8s.io/kubectl/pkg/drain (filters.go: daemonSetFilter, mirrorPodFilter,
 * localStorageFilter, unreplicatedFilter, in that order, the last verdict
 * of a workload counting) and of the API server's eviction subresource
 * (one budget per workload at most, status.disruptionsAllowed counted
 * down per eviction, a Pending workload or one being deleted evicted
 * without asking). Where
 * kubectl waits (an eviction a budget refuses is retried until --timeout),
 * trellis refuses at once and evicts nothing, naming the budget.
 */
#include "config.h"

#include "drain.h"

#include <ctype.h>
#include <string.h>

#include <json-c/json.h>

#include "binding.h"
#include "labelsel.h"
#include "util.h"

/* kubectl's words */
enum { F_OK, F_SKIP, F_WARN, F_ERR };
enum { M_DS, M_LOCAL, M_UNMANAGED, M_N };
static const char *const FATAL[M_N] = {
    "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
    "cannot delete Pods with local storage (use --delete-emptydir-data to override)",
    "cannot delete Pods that declare no controller (use --force to override)",
};
static const char *const WARNING[M_N] = {
    "ignoring DaemonSet-managed Pods",
    "deleting Pods with local storage",
    "deleting Pods that declare no controller",
};

typedef struct verdict {
    int type;  /* F_* */
    int evict; /* kubectl's Delete */
    int msg;   /* M_*, for F_WARN and F_ERR */
} verdict;

static verdict v_ok(void)
{
    return (verdict){F_OK, 1, -1};
}

/* "node" for Node: kubectl's resource/name lines */
static void lower(const char *kind, char *buf, size_t len)
{
    size_t i = 0;
    for (; kind[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)kind[i]);
    buf[i] = '\0';
}

static int str_is(const trellis_value *v, const char *s)
{
    const char *t = v ? value_string(v) : NULL;
    return t && strcmp(t, s) == 0;
}

/* The owner reference with controller: true, or NULL. */
static const trellis_value *controller_of(const trellis_object *w)
{
    const trellis_value *refs = object_get(w, "metadata.ownerReferences");
    size_t n = refs ? value_len(refs) : 0;
    for (size_t i = 0; i < n; i++) {
        const trellis_value *r = value_at(refs, i);
        int c = 0;
        const trellis_value *cv = value_get(r, "controller");
        if (cv && value_bool(cv, &c) == 0 && c)
            return r;
    }
    return NULL;
}

static int daemon_owned(const cfg_profile *pc, const trellis_value *ctrl)
{
    const trellis_value *k = ctrl ? value_get(ctrl, "kind") : NULL;
    for (size_t i = 0; k && i < pc->n_daemon_owner_kinds; i++)
        if (str_is(k, pc->daemon_owner_kinds[i]))
            return 1;
    return 0;
}

static int local_storage(const cfg_profile *pc, const trellis_object *w)
{
    const trellis_value *vols = pc->volumes_field ? object_get(w, pc->volumes_field) : NULL;
    size_t n = vols ? value_len(vols) : 0;
    for (size_t i = 0; i < n; i++) {
        const trellis_value *e = value_get(value_at(vols, i), "emptyDir");
        if (e && value_type(e) != TRELLIS_VALUE_NULL)
            return 1;
    }
    return 0;
}

/* kubectl's filter chain over one workload (finished: in phase Succeeded
 * or Failed, as the profile's finished_field says). */
static verdict filter(const cfg_profile *pc, const drain_flags *f, const trellis_object *w,
                      int finished)
{
    const trellis_value *ctrl = controller_of(w);
    /* daemonSetFilter */
    if (daemon_owned(pc, ctrl) && !finished) {
        if (!f->ignore_daemonsets)
            return (verdict){F_ERR, 0, M_DS};
        return (verdict){F_WARN, 0, M_DS};
    }
    /* mirrorPodFilter */
    if (pc->mirror_annotation && *pc->mirror_annotation &&
        object_annotation(w, pc->mirror_annotation))
        return (verdict){F_SKIP, 0, -1};
    /* localStorageFilter (its warning is dropped by the next filter's
     * verdict, as in kubectl) */
    if (local_storage(pc, w) && !finished && !f->delete_emptydir_data)
        return (verdict){F_ERR, 0, M_LOCAL};
    /* unreplicatedFilter */
    if (finished || ctrl)
        return v_ok();
    if (f->force)
        return (verdict){F_WARN, 1, M_UNMANAGED};
    return (verdict){F_ERR, 0, M_UNMANAGED};
}

typedef struct budget {
    const trellis_object *o;
    int64_t allowed;
} budget;

typedef struct budgets {
    budget *b;
    size_t n;
} budgets;

static int collect(const trellis_object *o, void *ud)
{
    budgets *bs = ud;
    int64_t a = 0;
    const trellis_value *v = object_get(o, "status.disruptionsAllowed");
    if (!v || value_int(v, &a) < 0)
        a = 0;
    bs->b = xrealloc(bs->b, (bs->n + 1) * sizeof *bs->b);
    bs->b[bs->n++] = (budget){o, a};
    return 0;
}

/* The eviction subresource's answer for w: 0 allowed (its budget counted
 * down), -1 with why. */
static int eviction_allowed(budgets *bs, const trellis_object *w, strbuf *why)
{
    /* the API server evicts a Pending Pod, or one being deleted already,
     * without asking (canIgnorePDB) */
    if (str_is(object_get(w, "status.phase"), "Pending") || object_being_deleted(w))
        return 0;
    json_object *labels = value_to_json(object_get(w, "metadata.labels"));
    budget *match[2];
    size_t nm = 0;
    strbuf names;
    sb_init(&names);
    for (size_t i = 0; i < bs->n; i++) {
        const trellis_object *b = bs->b[i].o;
        if (strcmp(b->namespace_, w->namespace_) != 0)
            continue;
        json_object *sel = value_to_json(object_get(b, "spec.selector"));
        char e[256];
        int m = labelsel_match(sel, labels, e, sizeof e);
        json_object_put(sel);
        if (m != 1)
            continue; /* a selector that does not parse matches nothing */
        if (nm < 2)
            match[nm] = &bs->b[i];
        nm++;
        sb_printf(&names, "%s%s", names.len ? ", " : "", b->name);
    }
    json_object_put(labels);
    int rc = 0;
    if (nm > 1) {
        sb_printf(why,
                  "cannot evict pod %s/%s: it has more than one PodDisruptionBudget (%s), which "
                  "the eviction subresource does not support",
                  w->namespace_, w->name, names.s);
        rc = -1;
    } else if (nm == 1) {
        budget *b = match[0];
        int64_t gen = 0, obs = 0;
        const trellis_value *g = object_get(b->o, "metadata.generation");
        const trellis_value *og = object_get(b->o, "status.observedGeneration");
        if (g && og && value_int(g, &gen) == 0 && value_int(og, &obs) == 0 && obs < gen) {
            sb_printf(why,
                      "cannot evict pod %s/%s: its disruption budget %s/%s is still being "
                      "processed (status.observedGeneration %lld < metadata.generation %lld)",
                      w->namespace_, w->name, b->o->namespace_, b->o->name, (long long)obs,
                      (long long)gen);
            rc = -1;
        } else if (b->allowed <= 0) {
            sb_printf(why,
                      "cannot evict pod %s/%s: it would violate the pod's disruption budget %s/%s "
                      "(status.disruptionsAllowed %lld%s)",
                      w->namespace_, w->name, b->o->namespace_, b->o->name, (long long)b->allowed,
                      b->allowed < 0 ? ", negative" : "");
            rc = -1;
        } else {
            b->allowed--;
        }
    }
    sb_free(&names);
    return rc;
}

static int set_cordon(sched *s, profile *p, const trellis_object *t, int on, char *err,
                      size_t errlen)
{
    store_edit e = {profile_cfg(p)->cordon_field, on ? "true" : NULL,
                    on ? STORE_SET_JSON : STORE_SET};
    store *st = sched_store(s);
    return st->ops->patch(st, t, NULL, &e, 1, err, errlen);
}

static int cordoned(const cfg_profile *pc, const trellis_object *t)
{
    int b = 0;
    const trellis_value *v = object_get(t, pc->cordon_field);
    return v && value_bool(v, &b) == 0 && b;
}

int drain_target(sched *s, profile *p, const trellis_object *t, const drain_flags *f, FILE *out,
                 char *err, size_t errlen)
{
    const cfg_profile *pc = profile_cfg(p);
    const char *dry = f->dry_run ? " (dry run)" : "";
    char tk[64], wk[64];
    lower(t->kind, tk, sizeof tk);
    lower(pc->workload_kind, wk, sizeof wk);

    if (cordoned(pc, t)) {
        if (out)
            fprintf(out, "%s/%s already cordoned%s\n", tk, t->name, dry);
    } else {
        if (set_cordon(s, p, t, 1, err, errlen) < 0)
            return -1;
        if (out)
            fprintf(out, "%s/%s cordoned%s\n", tk, t->name, dry);
    }

    /* the workloads on t, each with kubectl's verdict */
    size_t n = 0;
    const trellis_object **evict = NULL;
    strbuf fatal[M_N], warn[M_N], finished_list;
    for (int m = 0; m < M_N; m++) {
        sb_init(&fatal[m]);
        sb_init(&warn[m]);
    }
    sb_init(&finished_list);
    int refused = 0;
    for (size_t i = 0; i < sched_object_count(s); i++) {
        trellis_object *w = sched_object_at(s, i);
        if (strcmp(w->kind, pc->workload_kind) != 0 || !binding_is_on(p, w, t->name))
            continue;
        int fin = profile_workload_finished(p, w);
        verdict v = filter(pc, f, w, fin);
        if (v.type == F_ERR) {
            sb_printf(&fatal[v.msg], "%s%s/%s", fatal[v.msg].len ? ", " : "", w->namespace_,
                      w->name);
            refused = 1;
            continue;
        }
        if (v.type == F_WARN)
            sb_printf(&warn[v.msg], "%s%s/%s", warn[v.msg].len ? ", " : "", w->namespace_, w->name);
        if (!v.evict)
            continue;
        if (fin) {
            /* it holds nothing and is never placed again: unbinding it
             * changes nothing */
            sb_printf(&finished_list, "%s%s/%s", finished_list.len ? ", " : "", w->namespace_,
                      w->name);
            continue;
        }
        evict = xrealloc(evict, (n + 1) * sizeof *evict);
        evict[n++] = w;
    }
    int rc = 0;
    strbuf why;
    sb_init(&why);
    if (refused) {
        for (int m = 0; m < M_N; m++)
            if (fatal[m].len)
                sb_printf(&why, "%s%s: %s", why.len ? "; " : "", FATAL[m], fatal[m].s);
    } else if (!f->disable_eviction && pc->budget_kind && *pc->budget_kind) {
        budgets bs = {NULL, 0};
        sched_foreach(s, pc->budget_kind, NULL, collect, &bs);
        for (size_t i = 0; i < n; i++) {
            strbuf one;
            sb_init(&one);
            if (eviction_allowed(&bs, evict[i], &one) < 0) {
                sb_printf(&why, "%s%s", why.len ? "; " : "", one.s);
                refused = 1;
            }
            sb_free(&one);
        }
        if (refused)
            sb_puts(&why, " (use --disable-eviction to delete without asking the budget)");
        free(bs.b);
    }
    if (refused) {
        errf(err, errlen, "unable to drain %s \"%s\": %s; %s/%s stays cordoned", tk, t->name, why.s,
             tk, t->name);
        rc = -2;
        goto out;
    }
    {
        strbuf w;
        sb_init(&w);
        for (int m = 0; m < M_N; m++)
            if (warn[m].len)
                sb_printf(&w, "%s%s: %s", w.len ? "; " : "", WARNING[m], warn[m].s);
        if (finished_list.len)
            sb_printf(&w, "%sleaving Pods that have finished: %s", w.len ? "; " : "",
                      finished_list.s);
        if (w.len && out)
            fprintf(out, "Warning: %s\n", w.s);
        sb_free(&w);
    }
    for (size_t i = 0; i < n; i++) {
        const trellis_object *w = evict[i];
        if (out)
            fprintf(out, "%s %s %s/%s%s\n", f->disable_eviction ? "deleting" : "evicting", wk,
                    w->namespace_, w->name, dry);
        if (binding_release(p, sched_store(s), w, t->name, NULL, err, errlen) < 0) {
            errprefix(err, errlen, "evicting %s %s", w->kind, w->key);
            rc = -2;
            goto out;
        }
        if (out)
            fprintf(out, "%s/%s %s%s\n", wk, w->name, f->disable_eviction ? "deleted" : "evicted",
                    dry);
    }
    if (out)
        fprintf(out, "%s/%s drained%s\n", tk, t->name, dry);
out:
    for (int m = 0; m < M_N; m++) {
        sb_free(&fatal[m]);
        sb_free(&warn[m]);
    }
    sb_free(&finished_list);
    sb_free(&why);
    free(evict);
    return rc;
}

int drain_uncordon(sched *s, profile *p, const trellis_object *t, int dry_run, FILE *out, char *err,
                   size_t errlen)
{
    const cfg_profile *pc = profile_cfg(p);
    char tk[64];
    lower(t->kind, tk, sizeof tk);
    if (!cordoned(pc, t)) {
        if (out)
            fprintf(out, "%s/%s already uncordoned%s\n", tk, t->name, dry_run ? " (dry run)" : "");
        return 0;
    }
    /* removed, not set to false: kubectl's patch leaves no
     * `unschedulable: false` behind (the field is omitted when false) */
    if (set_cordon(s, p, t, 0, err, errlen) < 0)
        return -1;
    if (out)
        fprintf(out, "%s/%s uncordoned%s\n", tk, t->name, dry_run ? " (dry run)" : "");
    return 0;
}
