/*
 * fx_raw_score.c - fixture: a score plugin whose score is a target label,
 * a signed integer, as Fleet's plugins score (affinity weights -100..100,
 * -1000 for a violated soft spread constraint). The label is the `label`
 * argument; a target without it scores 0. No normalize: in score_mode
 * "tuple" the raw scores rank the targets; in "weighted" a score outside
 * 0..100 is the plugin's error.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    (void)c;
    (void)w;
    const char *label = host->get_private(self);
    const char *v = host->object_label(host->target_object(t), label);
    char *end = NULL;
    long long n = v ? strtoll(v, &end, 10) : 0;
    if (v && (!*v || *end)) {
        host->status(st, TRELLIS_ERROR, "BadScore", "label %s=%s is not an integer", label, v);
        return TRELLIS_ERROR;
    }
    *out = n;
    return TRELLIS_SUCCESS;
}

static const trellis_arg_spec args_table[] = {
    {"label", TRELLIS_ARG_STRING, "fx.trellis.io/score", "the target label holding the score"},
    {NULL, 0, NULL, NULL},
};

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    h->set_private(self, (void *)h->arg_string(args, "label"), NULL);
    if (h->register_score(self, score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-raw-score",
    "0.0.1",
    "fixture: a signed score read from a target label",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
