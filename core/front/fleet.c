/*
 * fleet.c - see fleet.h. The view is built from the objects the scheduler
 * loaded: the targets of the profile's target kind in key order, and every
 * workload of its workload kind placed on one of them (binding.h says
 * where a workload is placed), then printed. The counters the profile's
 * plugins named (name_counters) are its columns of amounts: what a target
 * holds and can hold of each is asked of the runtime (the placed
 * workloads' counter sums, corrected by the plugin) when first read after
 * the target's workloads changed (a report places this run's decisions
 * first).
 */
#include "config.h"

#include "fleet.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "binding.h"
#include "hmap.h"
#include "object.h"
#include "plugin.h"
#include "runtime.h"
#include "util.h"

/* A named counter: plugin pl's counter k. When several plugins of a
 * profile name a counter alike, the first one's is shown. */
typedef struct fleet_col {
    trellis_plugin *pl;
    int k;
    const char *name; /* the plugin's */
    trellis_unit unit;
} fleet_col;

typedef struct fleet_slot {
    const trellis_object *o;
    const trellis_object **wl; /* placed here, in store order */
    size_t n_wl, cap_wl;
    /* per column: what it holds, and can hold (-1: unknown); valid when
     * fresh, that is until the workloads on it change */
    int64_t *used, *alloc;
    int fresh;
} fleet_slot;

typedef struct fleet_view {
    const profile *p;
    const cfg_profile *pc;
    fleet_slot *t;
    size_t n, cap;
    hmap by_key;                 /* target key -> index + 1 */
    size_t pending;              /* workloads of the kind placed nowhere */
    const trellis_object **lost; /* placed on a target that does not exist */
    size_t n_lost, cap_lost;
    fleet_col *col; /* the named counters, in plugin order */
    size_t n_col;
} fleet_view;

static void view_free(fleet_view *v);

static int add_target(const trellis_object *o, void *ud)
{
    fleet_view *v = ud;
    grow(&v->t, &v->cap, v->n + 1, sizeof *v->t);
    v->t[v->n++] = (fleet_slot){o, NULL, 0, 0, NULL, NULL, 0};
    return 0;
}

static int cmp_target(const void *a, const void *b)
{
    return strcmp(((const fleet_slot *)a)->o->key, ((const fleet_slot *)b)->o->key);
}

typedef struct place_ctx {
    fleet_view *v;
    const trellis_object *w;
    int lost;
} place_ctx;

static void place_on(void *ud, const char *target)
{
    place_ctx *x = ud;
    x->lost |= fleet_place(x->v, target, x->w) < 0;
}

/* w on every target it is placed on (one field, or its binding objects);
 * also_counts fields are not placements */
static int add_workload(const trellis_object *w, void *ud)
{
    fleet_view *v = ud;
    char buf[BINDING_KEY_MAX];
    const char *some[16], **on = some;
    size_t n = binding_held(v->p, w, some, 16, buf, sizeof buf);
    if (!n) {
        v->pending++;
        return 0;
    }
    if (n > 16) {
        on = xcalloc(n, sizeof *on);
        binding_held(v->p, w, on, n, buf, sizeof buf);
    }
    place_ctx x = {v, w, 0};
    for (size_t i = 0; i < n; i++)
        place_on(&x, on[i]);
    if (on != some)
        free(on);
    if (x.lost) {
        grow(&v->lost, &v->cap_lost, v->n_lost + 1, sizeof *v->lost);
        v->lost[v->n_lost++] = w;
    }
    return 0;
}

/* The profile's named counters, in plugin order (a plugin's own come one
 * after the other), and room for each target's amounts of them. */
static void add_columns(fleet_view *v, const profile *p)
{
    size_t n_pl;
    trellis_plugin *const *pls = profile_plugins(p, &n_pl);
    size_t cap = 0;
    for (size_t i = 0; i < n_pl; i++)
        for (int k = 0; k < plugin_counter_count(pls[i]); k++) {
            trellis_unit unit;
            const char *name = plugin_counter_name(pls[i], k, &unit);
            size_t j = 0;
            while (name && j < v->n_col && strcmp(v->col[j].name, name) != 0)
                j++;
            if (!name || j < v->n_col)
                continue;
            grow(&v->col, &cap, v->n_col + 1, sizeof *v->col);
            v->col[v->n_col++] = (fleet_col){pls[i], k, name, unit};
        }
    for (size_t i = 0; i < v->n && v->n_col; i++) {
        v->t[i].used = xcalloc(v->n_col, sizeof *v->t[i].used);
        v->t[i].alloc = xcalloc(v->n_col, sizeof *v->t[i].alloc);
    }
}

/* Target i's amounts, asked again when its workloads changed. */
static const fleet_slot *settled(fleet_view *v, size_t i)
{
    fleet_slot *t = &v->t[i];
    int64_t used[64], alloc[64]; /* a plugin declares at most 16 counters */
    const trellis_plugin *last = NULL;
    for (size_t c = 0; !t->fresh && c < v->n_col; c++) {
        /* once per plugin: its columns come one after the other */
        if (v->col[c].pl != last)
            run_allocated(v->col[c].pl, t->o, t->wl, t->n_wl, used, alloc);
        last = v->col[c].pl;
        t->used[c] = used[v->col[c].k];
        t->alloc[c] = alloc[v->col[c].k];
    }
    t->fresh = 1;
    return t;
}

static void view_build(fleet_view *v, const sched *s, const profile *p)
{
    const cfg_profile *pc = profile_cfg(p);
    memset(v, 0, sizeof *v);
    v->p = p;
    v->pc = pc;
    hmap_init(&v->by_key);
    sched_foreach(s, pc->target_kind, NULL, add_target, v);
    if (v->n > 1)
        qsort(v->t, v->n, sizeof *v->t, cmp_target);
    for (size_t i = 0; i < v->n; i++)
        hmap_put(&v->by_key, v->t[i].o->key, (void *)(uintptr_t)(i + 1));
    sched_foreach(s, pc->workload_kind, NULL, add_workload, v);
    add_columns(v, p);
}

fleet_view *fleet_build(const sched *s, const profile *p)
{
    fleet_view *v = xmalloc(sizeof *v);
    view_build(v, s, p);
    return v;
}

void fleet_free(fleet_view *v)
{
    if (!v)
        return;
    view_free(v);
    free(v);
}

int fleet_place(fleet_view *v, const char *target, const trellis_object *w)
{
    uintptr_t at = (uintptr_t)hmap_get(&v->by_key, target);
    if (!at)
        return -1;
    fleet_slot *t = &v->t[at - 1];
    grow(&t->wl, &t->cap_wl, t->n_wl + 1, sizeof *t->wl);
    t->wl[t->n_wl++] = w;
    t->fresh = 0;
    return 0;
}

void fleet_unplace(fleet_view *v, const char *kind, const char *ns, const char *name)
{
    for (size_t i = 0; i < v->n; i++) {
        fleet_slot *t = &v->t[i];
        for (size_t k = 0; k < t->n_wl; k++) {
            const trellis_object *w = t->wl[k];
            if (strcmp(w->kind, kind) == 0 && strcmp(w->namespace_, ns) == 0 &&
                strcmp(w->name, name) == 0) {
                memmove(t->wl + k, t->wl + k + 1, (t->n_wl - k - 1) * sizeof *t->wl);
                t->n_wl--;
                t->fresh = 0;
                k--;
            }
        }
    }
}

size_t fleet_count(const fleet_view *v)
{
    return v->n;
}

const trellis_object *fleet_target(const fleet_view *v, size_t i)
{
    return v->t[i].o;
}

size_t fleet_placed_count(const fleet_view *v, size_t i)
{
    return v->t[i].n_wl;
}

const trellis_object *fleet_placed_at(const fleet_view *v, size_t i, size_t k)
{
    return v->t[i].wl[k];
}

size_t fleet_counter_count(const fleet_view *v)
{
    return v->n_col;
}

const char *fleet_counter_name(const fleet_view *v, size_t c)
{
    return v->col[c].name;
}

int64_t fleet_counter_used(fleet_view *v, size_t i, size_t c)
{
    return settled(v, i)->used[c];
}

int64_t fleet_counter_allocatable(fleet_view *v, size_t i, size_t c)
{
    return settled(v, i)->alloc[c];
}

/* An amount as a manifest would say it: "1500m" or "4" (thousandths),
 * "512Mi" or "1G" (bytes: the largest binary, else decimal, suffix that
 * divides it), a plain integer otherwise. */
static void amount_text(int64_t a, trellis_unit unit, char *buf, size_t len)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
    if (unit == TRELLIS_UNIT_MILLI) {
        if (a % 1000 == 0)
            snprintf(buf, len, "%lld", (long long)(a / 1000));
        else
            snprintf(buf, len, "%lldm", (long long)a);
        return;
    }
    if (unit == TRELLIS_UNIT_BYTES && a > 0) {
        for (int k = 6; k >= 1; k--)
            if (a % (INT64_C(1) << (10 * k)) == 0) {
                snprintf(buf, len, "%lld%s", (long long)(a >> (10 * k)), bin[k]);
                return;
            }
        int64_t m = INT64_C(1000000000000000000);
        for (int k = 6; k >= 1; k--, m /= 1000)
            if (a % m == 0) {
                snprintf(buf, len, "%lld%s", (long long)(a / m), dec[k]);
                return;
            }
    }
    snprintf(buf, len, "%lld", (long long)a);
}

/* What kubectl describe nodes prints: the share rounded down. */
static int percent_of(int64_t used, int64_t alloc)
{
    return alloc > 0 ? (int)((double)used / (double)alloc * 100) : -1;
}

int fleet_counter_text(fleet_view *v, size_t i, size_t c, char *buf, size_t len)
{
    char u[32], a[32];
    const fleet_slot *t = settled(v, i);
    int64_t used = t->used[c], alloc = t->alloc[c];
    int pct = percent_of(used, alloc);
    amount_text(used, v->col[c].unit, u, sizeof u);
    amount_text(alloc, v->col[c].unit, a, sizeof a);
    if (alloc < 0)
        snprintf(buf, len, "%s", u);
    else if (pct < 0)
        snprintf(buf, len, "%s/%s", u, a);
    else
        snprintf(buf, len, "%s/%s (%d%%)", u, a, pct);
    return pct;
}

static void view_free(fleet_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->t[i].wl);
        free(v->t[i].used);
        free(v->t[i].alloc);
    }
    free(v->col);
    free(v->t);
    free(v->lost);
    hmap_free(&v->by_key);
}

/* The target's taints as "key=value:Effect" in b (", " between); whether
 * the cordon taint is one of them. */
static int taints_text(const cfg_profile *pc, const trellis_object *o, strbuf *b)
{
    const trellis_value *list = pc->taints_field ? object_get(o, pc->taints_field) : NULL;
    int cordoned = 0;
    for (size_t i = 0; list && i < value_len(list); i++) {
        const trellis_value *t = value_at(list, i);
        const char *key = value_string(value_get(t, "key"));
        const char *val = value_string(value_get(t, "value"));
        const char *eff = value_string(value_get(t, "effect"));
        if (!key)
            continue;
        cordoned |= pc->cordon_taint && strcmp(key, pc->cordon_taint) == 0;
        sb_printf(b, "%s%s%s%s%s%s", b->len ? ", " : "", key, val && *val ? "=" : "",
                  val && *val ? val : "", eff ? ":" : "", eff ? eff : "");
    }
    return cordoned;
}

/* The target's capacity (operator.capacity_field), or -1. */
static int64_t capacity_of(const cfg_profile *pc, const trellis_object *o)
{
    int64_t cap;
    const trellis_value *v = pc->capacity_field ? object_get(o, pc->capacity_field) : NULL;
    return v && value_int(v, &cap) == 0 ? cap : -1;
}

int64_t fleet_capacity(const fleet_view *v, size_t i)
{
    return capacity_of(v->pc, v->t[i].o);
}

int fleet_cordoned(const fleet_view *v, size_t i)
{
    strbuf b;
    sb_init(&b);
    int cordoned = taints_text(v->pc, v->t[i].o, &b);
    sb_free(&b);
    return cordoned;
}

static json_object *target_json(fleet_view *v, size_t i)
{
    const cfg_profile *pc = v->pc;
    const fleet_slot *t = &v->t[i];
    json_object *o = json_object_new_object();
    strbuf b;
    sb_init(&b);
    int cordoned = taints_text(pc, t->o, &b);
    sb_free(&b);
    const trellis_value *taints = pc->taints_field ? object_get(t->o, pc->taints_field) : NULL;
    json_object_object_add(o, "name", json_object_new_string(t->o->key));
    json_object_object_add(o, "cordoned", json_object_new_boolean(cordoned));
    json_object_object_add(o, "taints", taints ? value_to_json(taints) : json_object_new_array());
    json_object *wl = json_object_new_array();
    for (size_t k = 0; k < t->n_wl; k++)
        json_object_array_add(wl, json_object_new_string(t->wl[k]->key));
    json_object_object_add(o, "workloads", wl);
    json_object_object_add(o, "workload_count", json_object_new_int64((int64_t)t->n_wl));
    if (v->n_col) {
        static const char *const units[] = {"count", "milli", "bytes"};
        json_object *cs = json_object_new_array();
        for (size_t c = 0; c < v->n_col; c++) {
            char text[96];
            json_object *x = json_object_new_object();
            int pct = fleet_counter_text(v, i, c, text, sizeof text);
            int64_t alloc = t->alloc[c];
            json_object_object_add(x, "name", json_object_new_string(v->col[c].name));
            json_object_object_add(x, "unit", json_object_new_string(units[v->col[c].unit]));
            json_object_object_add(x, "used", json_object_new_int64(fleet_counter_used(v, i, c)));
            json_object_object_add(x, "allocatable",
                                   alloc >= 0 ? json_object_new_int64(alloc) : NULL);
            json_object_object_add(x, "percent", pct >= 0 ? json_object_new_int(pct) : NULL);
            json_object_object_add(x, "text", json_object_new_string(text));
            json_object_array_add(cs, x);
        }
        json_object_object_add(o, "counters", cs);
    }
    int64_t cap = capacity_of(pc, t->o);
    json_object_object_add(o, "capacity", cap >= 0 ? json_object_new_int64(cap) : NULL);
    json_object_object_add(
        o, "error", t->o->prepare_error ? json_object_new_string(t->o->prepare_error) : NULL);
    return o;
}

static json_object *view_json(fleet_view *v, const char *name)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "workload_kind", json_object_new_string(v->pc->workload_kind));
    json_object_object_add(o, "target_kind", json_object_new_string(v->pc->target_kind));
    json_object *ts = json_object_new_array();
    for (size_t i = 0; i < v->n; i++)
        json_object_array_add(ts, target_json(v, i));
    json_object_object_add(o, "targets", ts);
    json_object_object_add(o, "pending", json_object_new_int64((int64_t)v->pending));
    json_object *lost = json_object_new_array();
    for (size_t i = 0; i < v->n_lost; i++) {
        char buf[BINDING_KEY_MAX];
        json_object *l = json_object_new_object();
        json_object_object_add(l, "workload", json_object_new_string(v->lost[i]->key));
        json_object_object_add(
            l, "target", json_object_new_string(binding_target(v->p, v->lost[i], buf, sizeof buf)));
        json_object_array_add(lost, l);
    }
    json_object_object_add(o, "on_missing_targets", lost);
    return o;
}

static void view_table(FILE *f, fleet_view *v, const char *name)
{
    size_t w = strlen("TARGET");
    for (size_t i = 0; i < v->n; i++)
        if (strlen(v->t[i].o->key) > w)
            w = strlen(v->t[i].o->key);
    fprintf(f, "PROFILE %s (%s on %s)\n", name, v->pc->workload_kind, v->pc->target_kind);
    fprintf(f, "%-*s  %-9s  %-9s  %-8s  %s\n", (int)w, "TARGET", "STATE", "WORKLOADS", "CAPACITY",
            "TAINTS");
    for (size_t i = 0; i < v->n; i++) {
        const fleet_slot *t = &v->t[i];
        strbuf b;
        sb_init(&b);
        int cordoned = taints_text(v->pc, t->o, &b);
        int64_t cap = capacity_of(v->pc, t->o);
        char capbuf[32] = "-";
        if (cap >= 0)
            snprintf(capbuf, sizeof capbuf, "%zu/%lld", t->n_wl, (long long)cap);
        fprintf(f, "%-*s  %-9s  %-9zu  %-8s  %s\n", (int)w, t->o->key,
                t->o->prepare_error ? "invalid"
                : cordoned          ? "cordoned"
                                    : "ready",
                t->n_wl, capbuf, b.len ? b.s : "-");
        sb_free(&b);
        if (t->o->prepare_error)
            fprintf(f, "%*s  %s\n", (int)w, "", t->o->prepare_error);
        for (size_t c = 0; c < v->n_col; c++) {
            char text[96];
            fleet_counter_text(v, i, c, text, sizeof text);
            if (!c)
                fprintf(f, "%*s  allocated:", (int)w, "");
            fprintf(f, "%s %s %s%s", c ? "," : "", v->col[c].name, text,
                    c + 1 == v->n_col ? "\n" : "");
        }
        for (size_t k = 0; k < t->n_wl; k++)
            fprintf(f, "%*s  %s\n", (int)w, "", t->wl[k]->key);
    }
    fprintf(f, "%zu target%s; %zu %s pending", v->n, v->n == 1 ? "" : "s", v->pending,
            v->pc->workload_kind);
    for (size_t i = 0; i < v->n_lost; i++) {
        char buf[BINDING_KEY_MAX];
        fprintf(f, "%s%s on missing %s", i ? ", " : "; ", v->lost[i]->key,
                binding_target(v->p, v->lost[i], buf, sizeof buf));
    }
    fputs("\n", f);
}

void fleet_print(FILE *f, const sched *s, const profile *p, int json)
{
    json_object *all = json ? json_object_new_array() : NULL;
    for (size_t i = 0; i < sched_profile_count(s); i++) {
        const profile *q = sched_profile_at(s, i);
        if (p && q != p)
            continue;
        fleet_view v;
        view_build(&v, s, q);
        if (json)
            json_object_array_add(all, view_json(&v, profile_name(q)));
        else
            view_table(f, &v, profile_name(q));
        view_free(&v);
    }
    if (json) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "profiles", all);
        fprintf(f, "%s\n",
                json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                         JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(root);
    }
}
