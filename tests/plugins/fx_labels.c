/*
 * fx_labels.c - fixture: a filter configured by a document argument (1.4).
 *
 * `required` is a YAML or JSON map of label key to value; a target
 * without every one of those labels is rejected ("LabelsMissing"). Label
 * keys such as "kubernetes-fleet.io/parent-CRP" cannot be spelled in
 * libconfig; in a document they can. The document is read once, in init,
 * through arg_document and the value functions.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct pairs {
    char **k, **v;
    size_t n;
    const char *bad; /* a key whose value is not a string */
} pairs;

static int take(const char *key, const trellis_value *v, void *ud)
{
    pairs *p = ud;
    const char *s = host->value_string(v);
    if (!s) {
        p->bad = key;
        return 1;
    }
    p->k = realloc(p->k, (p->n + 1) * sizeof *p->k);
    p->v = realloc(p->v, (p->n + 1) * sizeof *p->v);
    p->k[p->n] = strdup(key);
    p->v[p->n] = strdup(s);
    p->n++;
    return 0;
}

static void pairs_free(void *ud)
{
    pairs *p = ud;
    for (size_t i = 0; i < p->n; i++) {
        free(p->k[i]);
        free(p->v[i]);
    }
    free(p->k);
    free(p->v);
    free(p);
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    (void)c;
    (void)w;
    const pairs *p = host->get_private(self);
    const trellis_object *o = host->target_object(t);
    for (size_t i = 0; i < p->n; i++) {
        const char *have = host->object_label(o, p->k[i]);
        if (!have || strcmp(have, p->v[i]) != 0) {
            host->status(st, TRELLIS_UNRESOLVABLE, "LabelsMissing", "no label %s=%s", p->k[i],
                         p->v[i]);
            return TRELLIS_UNRESOLVABLE;
        }
    }
    return TRELLIS_SUCCESS;
}

static const trellis_arg_spec args_table[] = {
    {"required", TRELLIS_ARG_DOCUMENT, NULL, "a map of label key to value every target needs"},
    {NULL, 0, NULL, NULL},
};

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    const trellis_value *doc = h->arg_document(args, "required");
    if (!doc || h->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen, "required: expected a map of label key to value");
        return -1;
    }
    pairs *p = calloc(1, sizeof *p);
    h->value_foreach(doc, take, p);
    if (p->bad) {
        snprintf(err, errlen, "required: the value of '%s' is not a string", p->bad);
        pairs_free(p);
        return -1;
    }
    h->set_private(self, p, pairs_free);
    if (h->register_filter(self, filter) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-labels",
    "0.0.1",
    "fixture: targets need the labels of a document argument",
    args_table,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
