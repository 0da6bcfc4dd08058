/*
 * binding.c - see binding.h.
 */
#include "config.h"

#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "log.h"
#include "placements.h"
#include "profile_impl.h"
#include "util.h"

/* The key the primary binding field names: the field alone, or
 * namespace/name from two fields (namespace_field). NULL when w is not
 * bound. */
static const char *primary(const cfg_profile *pc, const trellis_object *w, char *buf, size_t len)
{
    const char *t = value_string(object_get(w, pc->binding_field));
    if (!t || !*t)
        return NULL;
    if (!pc->binding_namespace_field)
        return t;
    const char *ns = value_string(object_get(w, pc->binding_namespace_field));
    if (!ns || !*ns)
        return t;
    snprintf(buf, len, "%s/%s", ns, t);
    return buf;
}

const char *binding_target(const profile *p, const trellis_object *w, char *buf, size_t len)
{
    if (p->placed) {
        const char *t = NULL;
        return placements_of(p->placed, w, &t, 1) ? t : NULL;
    }
    return primary(p->cfg, w, buf, len);
}

size_t binding_held(const profile *p, const trellis_object *w, const char **out, size_t max,
                    char *buf, size_t len)
{
    if (p->placed)
        return placements_of(p->placed, w, out, max);
    const char *t = primary(p->cfg, w, buf, len);
    if (t && max)
        out[0] = t;
    return t ? 1 : 0;
}

typedef struct find_ctx {
    const char *target;
    int found;
} find_ctx;

static void find_one(void *ud, const char *target)
{
    find_ctx *f = ud;
    f->found |= strcmp(f->target, target) == 0;
}

int binding_is_on(const profile *p, const trellis_object *w, const char *target)
{
    if (p->placed)
        return placements_binding(p->placed, w, target, 1) != NULL;
    char buf[BINDING_KEY_MAX];
    const char *t = primary(p->cfg, w, buf, sizeof buf);
    return t && strcmp(t, target) == 0;
}

void binding_each_counted(const profile *p, const trellis_object *w,
                          void (*fn)(void *ud, const char *target), void *ud)
{
    const cfg_profile *pc = p->cfg;
    if (profile_workload_finished(p, w))
        return; /* it holds nothing anywhere */
    if (p->placed) {
        const char *one[16], **all = one;
        size_t n = placements_of(p->placed, w, one, 16);
        if (n > 16) {
            all = xcalloc(n, sizeof *all);
            placements_of(p->placed, w, all, n);
        }
        for (size_t k = 0; k < n; k++)
            fn(ud, all[k]);
        if (all != one)
            free(all);
        return;
    }
    char buf[BINDING_KEY_MAX];
    const char *seen[8];
    size_t n = 0;
    for (size_t k = 0; k <= pc->n_also_counts && n < 8; k++) {
        const char *t = k == 0 ? primary(pc, w, buf, sizeof buf)
                               : value_string(object_get(w, pc->also_counts[k - 1]));
        if (!t || !*t)
            continue;
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= strcmp(seen[j], t) == 0;
        if (!dup) {
            seen[n++] = t;
            fn(ud, t);
        }
    }
}

int binding_counts_on(const profile *p, const trellis_object *w, const char *target)
{
    if (profile_workload_finished(p, w))
        return 0;
    if (p->placed) /* its binding objects alone */
        return placements_binding(p->placed, w, target, 1) != NULL;
    find_ctx f = {target, 0};
    binding_each_counted(p, w, find_one, &f);
    return f.found;
}

static const char *subresource(const cfg_profile *pc)
{
    static const char *const names[] = {NULL, "status", "binding"};
    return pc->binding_subresource >= 0 && pc->binding_subresource <= 2
               ? names[pc->binding_subresource]
               : NULL;
}

/* Hand what changed to the caller (or drop it). */
static void changed(binding_change *ch, trellis_object *o, int deleted)
{
    if (ch) {
        ch->obj = o;
        ch->deleted = deleted;
    } else if (o) {
        object_unref(o);
    }
}

/* The state a released binding b gets when it places again: the one
 * its previous-state annotation kept, when that one places, else the
 * initial state. */
static const char *state_again(const cfg_profile *pc, const trellis_object *b)
{
    const char *prev = pc->bobj_previous_state_annotation
                           ? object_annotation(b, pc->bobj_previous_state_annotation)
                           : NULL;
    for (size_t i = 0; prev && i < pc->n_bobj_placed_states; i++)
        if (strcmp(prev, pc->bobj_placed_states[i]) == 0)
            return prev;
    return pc->bobj_initial_state;
}

/* Patch b with e[0..n) and say what changed. */
static int patch_binding(store *st, trellis_object *b, const store_edit *e, size_t n,
                         binding_change *ch, char *err, size_t errlen)
{
    if (!n)
        return 0;
    int rc = st->ops->patch(st, b, NULL, e, n, err, errlen);
    char why[256];
    if (rc == 0)
        changed(ch, edit_apply_object(b, e, n, why, sizeof why), 0);
    return rc;
}

int binding_record(const profile *p, store *st, const trellis_object *w, const trellis_object *t,
                   const store_edit *extra, size_t n_extra, binding_change *ch, char *err,
                   size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    changed(ch, NULL, 0);
    store_edit e[BINDING_EDITS_MAX + 2];
    char path[512];
    if (n_extra > BINDING_EDITS_MAX)
        return errf(err, errlen, "at most %d edits of a binding", BINDING_EDITS_MAX);
    if (p->placed) {
        /* on the binding thread: the index is read under its lock. One that
         * places already is written again (a placement reconsidered and
         * picked again: Fleet moves it to the new policy snapshot); one
         * released earlier places again (Fleet reuses an Unscheduled
         * binding) */
        trellis_object *b = placements_binding_ref(p->placed, w, t->key, 1);
        size_t n = 0;
        if (!b && pc->bobj_state_field && pc->bobj_initial_state &&
            (b = placements_binding_ref(p->placed, w, t->key, 0))) {
            e[n++] = (store_edit){pc->bobj_state_field, state_again(pc, b), STORE_SET};
            if (pc->bobj_previous_state_annotation &&
                object_annotation(b, pc->bobj_previous_state_annotation)) {
                snprintf(path, sizeof path, "metadata.annotations[\"%s\"]",
                         pc->bobj_previous_state_annotation);
                e[n++] = (store_edit){path, NULL, STORE_SET};
            }
        }
        if (b) {
            if (n_extra)
                memcpy(&e[n], extra, n_extra * sizeof *extra);
            int rc = patch_binding(st, b, e, n + n_extra, ch, err, errlen);
            object_unref(b);
            return rc;
        }
        trellis_object *nb = placements_manifest(p->placed, w, t, extra, n_extra, err, errlen);
        trellis_object *stored = nb ? st->ops->create(st, nb, err, errlen) : NULL;
        if (nb)
            object_unref(nb);
        changed(ch, stored, 0);
        return stored ? 0 : -1;
    }
    size_t n = 1;
    if (!pc->binding_namespace_field) {
        e[0] = (store_edit){pc->binding_field, t->key, STORE_SET};
    } else {
        e[0] = (store_edit){pc->binding_field, t->name, STORE_SET};
        e[1] = (store_edit){pc->binding_namespace_field, *t->namespace_ ? t->namespace_ : NULL,
                            STORE_SET};
        n = 2;
    }
    if (n_extra)
        memcpy(&e[n], extra, n_extra * sizeof *extra);
    return st->ops->patch(st, w, subresource(pc), e, n + n_extra, err, errlen);
}

const char *binding_written_id(const profile *p, const trellis_object *w, const char *target,
                               char *buf, size_t len)
{
    if (!p->placed)
        return w->id;
    const trellis_object *b = placements_binding(p->placed, w, target, 1);
    if (!b) /* one released earlier is placed again */
        b = placements_binding(p->placed, w, target, 0);
    if (b) /* whatever its length: an id cut would match no write */
        return b->id;
    char name[256];
    snprintf(buf, len, "%s/%s/%s", p->cfg->bobj_kind, w->namespace_,
             placements_object_name(w, target, name, sizeof name));
    return buf;
}

int binding_release_plan(const profile *p, const trellis_object *w, const char *target,
                         binding_release_w *rw, binding_change *ch, char *err, size_t errlen)
{
    const cfg_profile *pc = p->cfg;
    changed(ch, NULL, 0);
    memset(rw, 0, sizeof *rw);
    if (!p->placed) {
        rw->o = object_ref((trellis_object *)w);
        rw->subresource = subresource(pc);
        rw->e[rw->n++] = (store_edit){pc->binding_field, NULL, STORE_SET};
        if (pc->binding_namespace_field)
            rw->e[rw->n++] = (store_edit){pc->binding_namespace_field, NULL, STORE_SET};
        return 0;
    }
    const trellis_object *b = placements_binding(p->placed, w, target, 1);
    if (!b)
        return errf(err, errlen, "%s %s has no binding object for %s", w->kind, w->key, target);
    rw->o = object_ref((trellis_object *)b);
    if (!pc->bobj_release_state || !pc->bobj_state_field) {
        rw->remove = 1;
        changed(ch, object_ref(rw->o), 1);
        return 0;
    }
    rw->e[rw->n++] = (store_edit){pc->bobj_state_field, pc->bobj_release_state, STORE_SET};
    const char *was = value_string(object_get(b, pc->bobj_state_field));
    if (pc->bobj_previous_state_annotation && was) {
        /* Fleet keeps the state to go back to if the cluster is picked
         * again before the binding is gone */
        char path[512];
        snprintf(path, sizeof path, "metadata.annotations[\"%s\"]",
                 pc->bobj_previous_state_annotation);
        rw->path = xstrdup(path);
        rw->was = xstrdup(was);
        rw->e[rw->n++] = (store_edit){rw->path, rw->was, STORE_SET};
    }
    char why[256];
    changed(ch, edit_apply_object(b, rw->e, rw->n, why, sizeof why), 0);
    return 0;
}

int binding_release_write(store *st, binding_release_w *rw, char *err, size_t errlen)
{
    int rc = rw->remove ? st->ops->remove(st, rw->o, err, errlen)
                        : st->ops->patch(st, rw->o, rw->subresource, rw->e, rw->n, err, errlen);
    binding_release_forget(rw);
    return rc;
}

void binding_release_forget(binding_release_w *rw)
{
    if (rw->o)
        object_unref(rw->o);
    free(rw->path);
    free(rw->was);
    memset(rw, 0, sizeof *rw);
}

int binding_release(const profile *p, store *st, const trellis_object *w, const char *target,
                    binding_change *ch, char *err, size_t errlen)
{
    binding_release_w rw;
    if (binding_release_plan(p, w, target, &rw, ch, err, errlen) < 0)
        return -1;
    if (binding_release_write(st, &rw, err, errlen) == 0)
        return 0;
    if (ch && ch->obj) /* not written: nothing changed */
        object_unref(ch->obj);
    changed(ch, NULL, 0);
    return -1;
}

int binding_clean_up(const profile *p, store *st, const trellis_object *b)
{
    const cfg_profile *pc = p->cfg;
    if (!st || !p->placed || !pc->bobj_finalizer || !object_being_deleted(b))
        return 0;
    const trellis_value *l = object_get(b, "metadata.finalizers");
    int has = 0;
    for (size_t i = 0; l && i < value_len(l) && !has; i++) {
        const char *f = value_string(value_at(l, i));
        has = f && strcmp(f, pc->bobj_finalizer) == 0;
    }
    if (!has)
        return 0;
    store_edit e = {"metadata.finalizers", pc->bobj_finalizer, STORE_LIST_REMOVE};
    char err[512];
    if (st->ops->patch(st, b, NULL, &e, 1, err, sizeof err) < 0) {
        log_warn("%s %s: cannot remove finalizer %s: %s", b->kind, b->key, pc->bobj_finalizer, err);
        return 0;
    }
    log_info("%s %s: being deleted: finalizer %s removed", b->kind, b->key, pc->bobj_finalizer);
    return 1;
}
