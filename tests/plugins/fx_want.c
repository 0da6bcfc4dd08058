/*
 * fx_want.c - fixture: a pre-filter that says how many targets a workload
 * wants, as Fleet's policy does (PickN's numberOfClusters, PickAll): the
 * workload's `field` (an integer, or "All"; absent: the host's default of
 * one). A comma-separated list of target keys in the annotation
 * fx.trellis.io/release is given up (a scale-down that chose them). With
 * `one_per_cycle`, it asks for one target per cycle and another cycle at
 * once until the workload holds what it wants (Fleet with topology spread
 * constraints). With `note_score` set to a score plugin's name, its
 * reserve notes the score that plugin gave each target reserved (what a
 * binder records next to a placement). A comma-separated list in the
 * annotation fx.trellis.io/reconsider puts those held targets to the vote
 * again (Fleet's bindings of an older policy snapshot), each noted with
 * the state its binding object has (cycle_held_object). With `stamp` set
 * to a path, it is the profile's binder: store_bind_edits writes the
 * placement with "<workload> on <target>" at that path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    const char *field;
    int one_per_cycle;
    const char *note_score;
    const char *stamp;
} config;

/* The state of the binding object of held target key, "-" when none. */
static const char *held_state(trellis_cycle *c, const char *key)
{
    for (size_t i = 0; i < host->cycle_held_count(c); i++) {
        const trellis_object *b = host->cycle_held_object(c, i);
        if (strcmp(host->cycle_held(c, i), key) == 0 && b) {
            const trellis_value *v = host->object_get(b, "spec.state");
            return v && host->value_string(v) ? host->value_string(v) : "-";
        }
    }
    return "-";
}

/* Give up (or put to the vote) the held targets the annotation lists. */
static void give_up_listed(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                           int reconsider)
{
    const char *list = host->object_annotation(w, reconsider ? "fx.trellis.io/reconsider"
                                                             : "fx.trellis.io/release");
    char key[256];
    while (list && *list) {
        size_t n = strcspn(list, ",");
        snprintf(key, sizeof key, "%.*s", (int)(n < 255 ? n : 255), list);
        if (reconsider) {
            host->cycle_note(c, self, "%s was %s", key, held_state(c, key));
            if (host->cycle_reconsider(c, self, key, "reconsidered by the annotation") < 0)
                host->log(self, TRELLIS_LOG_INFO, "%s is not held: not reconsidered", key);
        } else if (host->cycle_release(c, self, key, "released by the annotation") < 0) {
            host->log(self, TRELLIS_LOG_INFO, "%s is not held: not released", key);
        }
        list += n + (list[n] == ',');
    }
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    const config *cfg = host->get_private(self);
    const trellis_value *v = host->object_get(w, cfg->field);
    const char *text = v ? host->value_string(v) : NULL;
    int64_t n = 1;
    uint32_t want = 1;
    if (text && strcmp(text, "All") == 0) {
        want = TRELLIS_WANT_ALL;
    } else if (v && (host->value_int(v, &n) < 0 || n < 1 || n > 100000)) {
        host->status(st, TRELLIS_ERROR, "BadCount", "%s: expected 1..100000 or All", cfg->field);
        return TRELLIS_ERROR;
    } else {
        want = (uint32_t)n;
    }
    give_up_listed(self, c, w, 0);
    give_up_listed(self, c, w, 1);
    size_t held = host->cycle_held_count(c);
    if (cfg->one_per_cycle && want != TRELLIS_WANT_ALL && held + 1 < want) {
        want = (uint32_t)held + 1;
        host->cycle_requeue_now(c);
    }
    host->cycle_want(c, want);
    if (want == TRELLIS_WANT_ALL)
        host->cycle_note(c, self, "wants all, holds %zu", held);
    else
        host->cycle_note(c, self, "wants %u, holds %zu", want, held);
    return TRELLIS_SUCCESS;
}

static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)w;
    (void)st;
    const config *cfg = host->get_private(self);
    int64_t v;
    if (cfg->note_score[0] && host->cycle_score(c, cfg->note_score, t, &v) == 0)
        host->cycle_note(c, self, "%s scored %s %lld", cfg->note_score, host->target_key(t),
                         (long long)v);
    return TRELLIS_SUCCESS;
}

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                const trellis_target *t, trellis_status *st)
{
    (void)c;
    const config *cfg = host->get_private(self);
    char text[600], err[TRELLIS_MESSAGE_MAX];
    snprintf(text, sizeof text, "%s on %s", host->object_name(w), host->target_key(t));
    trellis_edit e = {TRELLIS_EDIT_SET, cfg->stamp, text};
    if (host->store_bind_edits(self, w, t, &e, 1, err, sizeof err) < 0) {
        host->status(st, TRELLIS_ERROR, "BindFailed", "%s", err);
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static const trellis_arg_spec args_table[] = {
    {"field", TRELLIS_ARG_STRING, "spec.count", "how many targets the workload wants"},
    {"one_per_cycle", TRELLIS_ARG_BOOL, "false", "one target per cycle, cycles at once"},
    {"note_score", TRELLIS_ARG_STRING, "", "note the score this score plugin gave in reserve"},
    {"stamp", TRELLIS_ARG_STRING, "", "bind, writing \"<workload> on <target>\" at this path"},
    {NULL, 0, NULL, NULL},
};

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    config *cfg = malloc(sizeof *cfg);
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->field = h->arg_string(args, "field");
    cfg->one_per_cycle = h->arg_bool(args, "one_per_cycle");
    cfg->note_score = h->arg_string(args, "note_score");
    cfg->stamp = h->arg_string(args, "stamp");
    h->set_private(self, cfg, free);
    if (h->register_pre_filter(self, pre_filter) < 0 || h->register_reserve(self, reserve) < 0 ||
        (cfg->stamp[0] && h->register_bind(self, bind) < 0)) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-want",
    "0.0.1",
    "fixture: how many targets a workload wants, from a field",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
