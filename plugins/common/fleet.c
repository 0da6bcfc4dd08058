/*
 * fleet.c - see fleet.h.
 */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct find_ctx {
    const trellis_host *h;
    const char *placement;
    const trellis_object *latest;
    int n_latest;
} find_ctx;

static int find_latest(const trellis_object *o, void *ud)
{
    find_ctx *f = ud;
    const char *parent = f->h->object_label(o, FLEET_PARENT_LABEL);
    const char *latest = f->h->object_label(o, FLEET_LATEST_LABEL);
    if (parent && strcmp(parent, f->placement) == 0 && latest && strcmp(latest, "true") == 0) {
        f->latest = o;
        f->n_latest++;
    }
    return 0;
}

int fleet_policy_of(const trellis_host *h, trellis_plugin *self, const trellis_object *w,
                    const char *snapshot_kind, const trellis_object **snap,
                    const trellis_value **policy, char *err, size_t errlen)
{
    find_ctx f = {h, h->object_name(w), NULL, 0};
    h->foreach_object(self, snapshot_kind, h->object_namespace(w), find_latest, &f);
    *snap = NULL;
    *policy = NULL;
    if (f.n_latest > 1) {
        snprintf(err, errlen, "%d %s objects are labelled %s=true for this placement; expected one",
                 f.n_latest, snapshot_kind, FLEET_LATEST_LABEL);
        return -1;
    }
    *snap = f.latest;
    const trellis_value *v = h->object_get(f.latest ? f.latest : w, "spec.policy");
    *policy = v && h->value_type(v) != TRELLIS_VALUE_NULL ? v : NULL;
    return 0;
}

int fleet_policy_type(const trellis_host *h, const trellis_value *policy)
{
    static const char *const names[] = {"PickAll", "PickN", "PickFixed"};
    const trellis_value *v = policy ? h->value_get(policy, "placementType") : NULL;
    const char *t = v ? h->value_string(v) : NULL;
    if (!t)
        return FLEET_PICK_ALL;
    for (int i = 0; i < 3; i++)
        if (strcmp(t, names[i]) == 0)
            return i;
    return FLEET_PICK_UNKNOWN;
}

const char *fleet_policy_where(const trellis_host *h, const trellis_object *snap, char *buf,
                               size_t len)
{
    if (snap)
        snprintf(buf, len, "%s %s: spec.policy", h->object_kind(snap), h->object_name(snap));
    else
        snprintf(buf, len, "spec.policy");
    return buf;
}

void *fleet_setup(const trellis_host *h, trellis_plugin *self, const trellis_args *args,
                  size_t size, char *err, size_t errlen)
{
    const char **cfg = calloc(1, size);
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cfg[0] = h->arg_string(args, "snapshot_kind");
    h->set_private(self, cfg, free);
    const char *const kinds[] = {cfg[0], NULL};
    if (h->declare_kinds(self, kinds) < 0) {
        snprintf(err, errlen, "snapshot_kind: expected a kind (letters and digits), got '%s'",
                 cfg[0] ? cfg[0] : "");
        return NULL;
    }
    return cfg;
}
