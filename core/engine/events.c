/*
 * events.c - see events.h.
 */
#include "config.h"

#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework.h"
#include "hmap.h"
#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/* Record a Kubernetes Event about w. The name is derived from the
 * workload, the reason and the message, so the same event again (in this
 * run or a later one) is the same Event: its count goes up and its
 * lastTimestamp moves, as kubectl shows it. codes (may be NULL) goes into
 * an annotation for tools: the reason code per target. */
void events_record(store *st, int64_t now_ms, const char *component, const trellis_object *w,
                   const char *type, const char *reason, const char *message, const char *codes)
{
    char ts[CLOCK_TEXT_MAX];
    clock_format(now_ms, ts, sizeof ts);
    char basis[1024];
    snprintf(basis, sizeof basis, "%s/%s/%s/%s", w->kind, w->key, reason, message);
    char name[320];
    snprintf(name, sizeof name, "%s.%016llx", w->name, (unsigned long long)hmap_hash(basis));
    const char *ns = *w->namespace_ ? w->namespace_ : "default";
    char err[512];
    trellis_object *old = st->ops->get(st, "Event", ns, name);
    if (old) {
        int64_t count = 1;
        value_int(object_get(old, "count"), &count);
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%lld", (long long)count + 1);
        store_edit e[2] = {{"count", cnt, STORE_SET_JSON}, {"lastTimestamp", ts, STORE_SET}};
        if (st->ops->patch(st, old, NULL, e, 2, err, sizeof err) < 0)
            log_debug("event %s/%s: count not updated: %s", ns, name, err);
        object_unref(old);
        metrics_event_written(reason);
        return;
    }
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(ev, "kind", json_object_new_string("Event"));
    json_object *md = json_object_new_object();
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(md, "namespace", json_object_new_string(ns));
    if (codes) {
        json_object *ann = json_object_new_object();
        json_object_object_add(ann, "trellis.io/reasons", json_object_new_string(codes));
        json_object_object_add(md, "annotations", ann);
    }
    json_object_object_add(ev, "metadata", md);
    json_object *inv = json_object_new_object();
    json_object_object_add(inv, "apiVersion", json_object_new_string(w->api_version));
    json_object_object_add(inv, "kind", json_object_new_string(w->kind));
    json_object_object_add(inv, "namespace", json_object_new_string(w->namespace_));
    json_object_object_add(inv, "name", json_object_new_string(w->name));
    json_object_object_add(inv, "uid", json_object_new_string(w->uid));
    json_object_object_add(ev, "involvedObject", inv);
    json_object_object_add(ev, "reason", json_object_new_string(reason));
    json_object_object_add(ev, "message", json_object_new_string(message));
    json_object_object_add(ev, "type", json_object_new_string(type));
    json_object *src = json_object_new_object();
    json_object_object_add(src, "component", json_object_new_string(component));
    json_object_object_add(ev, "source", src);
    json_object_object_add(ev, "reportingComponent", json_object_new_string("trellis"));
    json_object_object_add(ev, "count", json_object_new_int(1));
    json_object_object_add(ev, "firstTimestamp", json_object_new_string(ts));
    json_object_object_add(ev, "lastTimestamp", json_object_new_string(ts));
    trellis_object *o = object_new(ev, err, sizeof err);
    if (!o) {
        log_error("event for %s %s: %s", w->kind, w->key, err);
        return;
    }
    trellis_object *stored = st->ops->create(st, o, err, sizeof err);
    if (!stored)
        log_warn("event for %s %s not written: %s", w->kind, w->key, err);
    else
        metrics_event_written(reason);
    if (stored)
        object_unref(stored);
    object_unref(o);
}

char *events_reason_codes(trellis_cycle *c)
{
    strbuf codes;
    sb_init(&codes);
    for (size_t i = 0; i < c->n; i++) {
        const trellis_plugin *who;
        trellis_status st;
        framework_explain(c, i, &who, &st);
        sb_printf(&codes, "%s%s=%s", i ? "," : "", c->targets[i]->name, st.reason);
    }
    return codes.s ? sb_steal(&codes) : xstrdup("");
}
