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
 *     W's namespace, with data.target = T's key.
 * A failed write fails the reserve with the store's message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    (void)args;
    host = h;
    if (h->register_reserve(self, reserve) < 0) {
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
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
