/*
 * fx_writes.c - fixture: a reserve hook that writes through the SDK's
 * store functions (1.4), as the openMCP and Fleet plugins will.
 *
 * For a workload W (namespace ns) reserved on target T it:
 *   - adds the finalizer "fx.trellis.io/<ns>.<W>" to T's
 *     metadata.finalizers (a list edit: two workloads on one target both
 *     land, and a target without the list gets one);
 *   - sets status.placedBy = "fx-writes" and status.attempt = 1 (a JSON
 *     number) on W's status subresource;
 *   - deletes every object W's annotation fx.trellis.io/delete names
 *     ("Kind/namespace/name,...", namespace empty for cluster-scoped);
 *   - creates the ConfigMap W's annotation fx.trellis.io/create names, in
 *     W's namespace, with data.target = T's key;
 *   - sets data.marked = W's name on the ConfigMap W's annotation
 *     fx.trellis.io/mark names, in W's namespace.
 * A failed write fails the reserve with the store's message.
 *
 * pre_filter: a workload annotated fx.trellis.io/needs=NAME waits
 * (unschedulable) until a ConfigMap NAME in its namespace exists; one
 * annotated fx.trellis.io/needs-mark=NAME until that ConfigMap has
 * data.marked; one annotated fx.trellis.io/needs-gone=NAME while that
 * ConfigMap exists.
 * pre_enqueue: a workload annotated fx.trellis.io/operation=ignore is
 * left alone (no decision, no Event).
 * finalize: for a workload being deleted, the finalizer it added goes
 * from the target its binding field names (a target of kind target_kind,
 * an argument, default Cluster), and the ConfigMap it created is deleted.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int fail(trellis_status *st, const char *what, const char *err)
{
    host->status(st, TRELLIS_ERROR, "WriteFailed", "%s: %s", what, err);
    return TRELLIS_ERROR;
}

/* Delete each "Kind/namespace/name" of the comma-separated list. */
static int delete_named(trellis_plugin *self, const char *list, trellis_status *st)
{
    char buf[1024], err[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *ns = strchr(tok, '/');
        char *name = ns ? strchr(ns + 1, '/') : NULL;
        if (!name)
            return fail(st, tok, "expected Kind/namespace/name");
        *ns++ = '\0';
        *name++ = '\0';
        const trellis_object *o = host->lookup_object(self, tok, ns, name);
        if (!o)
            return fail(st, name, "no such object");
        if (host->store_delete(self, o, err, sizeof err) < 0)
            return fail(st, "store_delete", err);
    }
    return TRELLIS_SUCCESS;
}

static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)c;
    char fin[512], err[512];
    const char *ns = host->object_namespace(w), *name = host->object_name(w);
    snprintf(fin, sizeof fin, "fx.trellis.io/%s.%s", ns, name);
    trellis_edit add = {TRELLIS_EDIT_LIST_ADD, "metadata.finalizers", fin};
    if (host->store_patch(self, host->target_object(t), NULL, &add, 1, err, sizeof err) < 0)
        return fail(st, "store_patch of the target", err);
    trellis_edit status[2] = {{TRELLIS_EDIT_SET, "status.placedBy", "fx-writes"},
                              {TRELLIS_EDIT_SET_JSON, "status.attempt", "1"}};
    if (host->store_patch(self, w, "status", status, 2, err, sizeof err) < 0)
        return fail(st, "store_patch of the status", err);
    const char *del = host->object_annotation(w, "fx.trellis.io/delete");
    if (del && delete_named(self, del, st) != TRELLIS_SUCCESS)
        return TRELLIS_ERROR;
    const char *cm = host->object_annotation(w, "fx.trellis.io/create");
    if (cm) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": "
                 "{\"name\": \"%s\", \"namespace\": \"%s\"}, \"data\": {\"target\": \"%s\"}}",
                 cm, ns, host->target_key(t));
        if (host->store_create(self, json, err, sizeof err) < 0)
            return fail(st, "store_create", err);
    }
    const char *mark = host->object_annotation(w, "fx.trellis.io/mark");
    if (mark) {
        const trellis_object *o = host->lookup_object(self, "ConfigMap", ns, mark);
        trellis_edit set = {TRELLIS_EDIT_SET, "data.marked", name};
        if (!o)
            return fail(st, mark, "no such ConfigMap");
        if (host->store_patch(self, o, NULL, &set, 1, err, sizeof err) < 0)
            return fail(st, "store_patch of the ConfigMap", err);
    }
    return TRELLIS_SUCCESS;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    (void)c;
    const char *need = host->object_annotation(w, "fx.trellis.io/needs");
    if (need && !host->lookup_object(self, "ConfigMap", host->object_namespace(w), need)) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "ConfigMapMissing", "ConfigMap %s not found", need);
        return TRELLIS_UNSCHEDULABLE;
    }
    need = host->object_annotation(w, "fx.trellis.io/needs-mark");
    if (need) {
        const trellis_object *o =
            host->lookup_object(self, "ConfigMap", host->object_namespace(w), need);
        if (!o || !host->object_get(o, "data.marked")) {
            host->status(st, TRELLIS_UNSCHEDULABLE, "ConfigMapUnmarked",
                         "ConfigMap %s has no data.marked", need);
            return TRELLIS_UNSCHEDULABLE;
        }
    }
    need = host->object_annotation(w, "fx.trellis.io/needs-gone");
    if (need && host->lookup_object(self, "ConfigMap", host->object_namespace(w), need)) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "ConfigMapPresent", "ConfigMap %s still exists",
                     need);
        return TRELLIS_UNSCHEDULABLE;
    }
    return TRELLIS_SUCCESS;
}

static int pre_enqueue(trellis_plugin *self, const trellis_object *w)
{
    (void)self;
    const char *op = host->object_annotation(w, "fx.trellis.io/operation");
    return op && strcmp(op, "ignore") == 0 ? TRELLIS_SKIP : TRELLIS_SUCCESS;
}

static int finalize(trellis_plugin *self, const trellis_object *w, trellis_status *st)
{
    char key[512], fin[512], err[512];
    const char *ns = host->object_namespace(w), *name = host->object_name(w);
    const char *bound = host->value_string(host->object_get(w, host->binding_field(self)));
    snprintf(fin, sizeof fin, "fx.trellis.io/%s.%s", ns, name);
    if (bound) {
        snprintf(key, sizeof key, "%s", bound);
        char *slash = strchr(key, '/');
        const char *tns = slash ? key : "", *tname = slash ? slash + 1 : key;
        if (slash)
            *slash = '\0';
        const trellis_object *t =
            host->lookup_object(self, (const char *)host->get_private(self), tns, tname);
        trellis_edit rm = {TRELLIS_EDIT_LIST_REMOVE, "metadata.finalizers", fin};
        if (t && host->store_patch(self, t, NULL, &rm, 1, err, sizeof err) < 0)
            return fail(st, "store_patch of the target", err);
    }
    const char *cm = host->object_annotation(w, "fx.trellis.io/create");
    const trellis_object *made = cm ? host->lookup_object(self, "ConfigMap", ns, cm) : NULL;
    if (made && host->store_delete(self, made, err, sizeof err) < 0)
        return fail(st, "store_delete", err);
    return TRELLIS_SUCCESS;
}

static const trellis_arg_spec args_table[] = {
    {"target_kind", TRELLIS_ARG_STRING, "Cluster", "the kind of the targets finalize looks up"},
    {NULL, 0, NULL, NULL},
};

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    const char *kind = h->arg_string(args, "target_kind");
    h->set_private(self, strdup(kind ? kind : "Cluster"), free);
    static const char *const kinds[] = {"ConfigMap", NULL}; /* pre_filter, finalize */
    if (h->declare_kinds(self, kinds) < 0 || h->register_pre_enqueue(self, pre_enqueue) < 0 ||
        h->register_finalize(self, finalize) < 0 || h->register_reserve(self, reserve) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-writes",
    "0.0.1",
    "fixture: writes finalizers, status, creations and deletions from reserve",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
