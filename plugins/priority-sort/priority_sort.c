/*
 * priority_sort.c - the priority-sort plugin: the queue order.
 *
 * Kubernetes' PrioritySort: a workload with a higher priority is scheduled
 * first; among equal priorities, the one queued first goes first. The
 * priority is read once per workload in prepare (common/priority.c) from
 * `priority_field`, or resolved through its PriorityClass when
 * `priority_class_field` is set, so the comparison the queue calls on
 * every reorder reads two integers.
 */
/* the oldest host it runs on: it needs no function newer than SDK 1.0 (newer ones it tests for) */
#define TRELLIS_PLUGIN_MIN_MINOR 0

#include <stdio.h>
#include <stdlib.h>

#include "priority.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    priority_source src;
} config;

typedef struct prepared {
    int64_t priority;
} prepared;

static const trellis_arg_spec args_table[] = {
    {"priority_field", TRELLIS_ARG_STRING, "spec.priority",
     "dotted path of the workload's integer priority; absent means 0"},
    PRIORITY_CLASS_ARGS,
    {NULL, 0, NULL, NULL},
};

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    const config *cfg = host->get_private(self);
    prepared *p;
    int64_t prio;

    *data = NULL;
    if (priority_resolve(host, self, &cfg->src, obj, &prio, NULL, err, errlen) < 0)
        return -1;
    if (prio == 0)
        return 0; /* no data reads as 0 */
    p = malloc(sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->priority = prio;
    *data = p;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    free(data);
}

static int64_t priority_of(const trellis_plugin *self, const trellis_object *w)
{
    const prepared *p = host->object_data(self, w);

    return p ? p->priority : 0;
}

static int less(trellis_plugin *self, const trellis_object *a, uint64_t a_seq,
                const trellis_object *b, uint64_t b_seq)
{
    int64_t pa = priority_of(self, a), pb = priority_of(self, b);

    if (pa != pb)
        return pa > pb;
    return a_seq < b_seq;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    config *cfg;

    host = h;
    cfg = malloc(sizeof(*cfg));
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->set_private(self, cfg, free);
    if (priority_setup(self, h, args, 0, &cfg->src, err, errlen) < 0)
        return -1;

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_release(self, release) < 0 || h->register_queue_sort(self, less) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "priority-sort",
    "1.0.0",
    "queues higher-priority workloads first, then in arrival order",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, priority_sort)
