/*
 * fx_all_hooks.c - fixture: a plugin that registers every hook and logs
 * each call, so a test can read the order of the extension points.
 *
 * Each hook logs one INFO line through the host, e.g.
 *   hook=filter workload=default/p1 target=n1
 * (a workload without a namespace is logged by name alone), unless the
 * argument `log_hooks` is false. The verdicts are neutral: every target
 * passes the filters, every raw score is 1 and normalize turns them all into
 * 50, so the host's tie-break decides; pre_bind succeeds and bind writes the
 * target's name into the profile's binding field through the store, like
 * default-binder, so a profile needs no other plugin. post_filter changes
 * nothing. Each workload counts 1 in the plugin's single counter.
 *
 * Permit: a workload labelled `gang: wait` gets TRELLIS_WAIT (30 s), and
 * the queue sort puts such workloads before the others (then queue order),
 * so the wait path is reachable with one labelled and one plain workload:
 * the post_bind of the next workload that binds calls host->permit_allow for
 * every workload still waiting, and the host then runs their binding cycle.
 * If no other workload binds, the wait ends with the run and the host
 * rejects the waiting workload (PermitTimeout).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/plugin.h"

#define WAIT_TIMEOUT_MS 30000
#define MAX_WAITING 64

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct waiter {
    char *namespace_;
    char *name;
} waiter;

/* Touched only from main-thread and binding-cycle hooks (permit,
 * post_bind), which the host never runs concurrently. */
typedef struct state {
    int log_hooks;
    waiter waiting[MAX_WAITING];
    size_t n_waiting;
} state;

static const trellis_arg_spec args_table[] = {
    {"log_hooks", TRELLIS_ARG_BOOL, "true", "log one INFO line per hook call"},
    {NULL, 0, NULL, NULL},
};

static void free_state(void *p)
{
    state *s = p;

    for (size_t i = 0; i < s->n_waiting; i++) {
        free(s->waiting[i].namespace_);
        free(s->waiting[i].name);
    }
    free(s);
}

static state *get_state(const trellis_plugin *self)
{
    return host->get_private(self);
}

/* "namespace/name", or "name" without a namespace. */
static const char *key(const trellis_object *o, char *buf, size_t len)
{
    const char *ns = host->object_namespace(o);

    if (ns && *ns)
        snprintf(buf, len, "%s/%s", ns, host->object_name(o));
    else
        snprintf(buf, len, "%s", host->object_name(o));
    return buf;
}

/* Log "hook=<hook> workload=<w>[ target=<t>][ <extra>]". */
static void trace(const trellis_plugin *self, const char *hook, const trellis_object *w,
                  const trellis_target *t, const char *extra)
{
    char wk[256];

    if (!get_state(self)->log_hooks)
        return;
    host->log(self, TRELLIS_LOG_INFO, "hook=%s workload=%s%s%s%s%s", hook,
              w ? key(w, wk, sizeof(wk)) : "-", t ? " target=" : "", t ? host->target_name(t) : "",
              extra ? " " : "", extra ? extra : "");
}

static int wants_wait(const trellis_object *w)
{
    const char *v = host->object_label(w, "gang");

    return v && strcmp(v, "wait") == 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- objects ----------------------------------------------------------- */

static int prepare_workload(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                            size_t errlen)
{
    char wk[256];

    trace(self, "prepare_workload", obj, NULL, NULL);
    /* something to hand back to release */
    *data = dup_str(key(obj, wk, sizeof(wk)));
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    state *s = get_state(self);

    if (s->log_hooks)
        host->log(self, TRELLIS_LOG_INFO, "hook=prepare_target target=%s", host->object_name(obj));
    *data = dup_str(host->object_name(obj));
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    if (get_state(self)->log_hooks)
        host->log(self, TRELLIS_LOG_INFO, "hook=release object=%s",
                  data ? (const char *)data : "-");
    free(data);
}

static void amounts(trellis_plugin *self, const trellis_object *workload, int64_t *out)
{
    trace(self, "counters", workload, NULL, NULL);
    out[0] = 1;
}

/* ---- scheduling cycle -------------------------------------------------- */

static int less(trellis_plugin *self, const trellis_object *a, uint64_t a_seq,
                const trellis_object *b, uint64_t b_seq)
{
    int wa = wants_wait(a), wb = wants_wait(b);
    char bk[256], extra[300];

    snprintf(extra, sizeof(extra), "other=%s", key(b, bk, sizeof(bk)));
    trace(self, "queue_sort", a, NULL, extra);
    if (wa != wb)
        return wa;
    return a_seq < b_seq;
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      trellis_status *st)
{
    trace(self, "pre_filter", workload, NULL, NULL);
    return TRELLIS_SUCCESS;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    trace(self, "filter", workload, target, NULL);
    return TRELLIS_SUCCESS;
}

static void filter_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                         const trellis_target *const *targets, size_t n, uint64_t *pass)
{
    char extra[64];

    /* every target fits: leave every bit set, as the plain filter agrees */
    snprintf(extra, sizeof(extra), "targets=%zu", n);
    trace(self, "filter_batch", workload, NULL, extra);
}

static int post_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                       trellis_status *st)
{
    trace(self, "post_filter", workload, NULL, NULL);
    host->status(st, TRELLIS_UNSCHEDULABLE, "NothingChanged", NULL);
    return TRELLIS_UNSCHEDULABLE;
}

static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "feasible=%zu", n);
    trace(self, "pre_score", workload, NULL, extra);
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                 const trellis_target *target, int64_t *out, trellis_status *st)
{
    trace(self, "score", workload, target, NULL);
    *out = 1;
    return TRELLIS_SUCCESS;
}

static void score_batch(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        const trellis_target *const *targets, size_t n, int64_t *scores)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "targets=%zu", n);
    trace(self, "score_batch", workload, NULL, extra);
    for (size_t i = 0; i < n; i++)
        scores[i] = 1;
}

static int normalize(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                     const trellis_target *const *targets, size_t n, int64_t *scores,
                     trellis_status *st)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "targets=%zu", n);
    trace(self, "normalize", workload, NULL, extra);
    for (size_t i = 0; i < n; i++)
        scores[i] = TRELLIS_MAX_SCORE / 2;
    return TRELLIS_SUCCESS;
}

static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                   const trellis_target *target, trellis_status *st)
{
    trace(self, "reserve", workload, target, NULL);
    return TRELLIS_SUCCESS;
}

static void unreserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      const trellis_target *target)
{
    trace(self, "unreserve", workload, target, NULL);
}

static int permit(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, uint64_t *timeout_ms, trellis_status *st)
{
    state *s = get_state(self);

    if (!wants_wait(workload) || s->n_waiting == MAX_WAITING) {
        trace(self, "permit", workload, target, "verdict=allow");
        return TRELLIS_SUCCESS;
    }
    waiter *w = &s->waiting[s->n_waiting];
    w->namespace_ = dup_str(host->object_namespace(workload));
    w->name = dup_str(host->object_name(workload));
    if (!w->namespace_ || !w->name) {
        free(w->namespace_);
        free(w->name);
        host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
        return TRELLIS_ERROR;
    }
    s->n_waiting++;
    trace(self, "permit", workload, target, "verdict=wait");
    *timeout_ms = WAIT_TIMEOUT_MS;
    host->status(st, TRELLIS_WAIT, "GangWait", "waiting for another workload");
    return TRELLIS_WAIT;
}

/* ---- binding cycle ----------------------------------------------------- */

static int pre_bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                    const trellis_target *target, trellis_status *st)
{
    trace(self, "pre_bind", workload, target, NULL);
    return TRELLIS_SUCCESS;
}

static int bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                const trellis_target *target, trellis_status *st)
{
    char err[TRELLIS_MESSAGE_MAX];

    trace(self, "bind", workload, target, NULL);
    err[0] = '\0';
    if (host->store_set_field(self, workload, host->binding_field(self), host->target_name(target),
                              err, sizeof(err)) < 0) {
        host->status(st, TRELLIS_ERROR, "BindFailed", "%s",
                     err[0] ? err : "the store refused the change");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static void post_bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                      const trellis_target *target)
{
    state *s = get_state(self);
    const char *ns = host->object_namespace(workload);
    const char *name = host->object_name(workload);

    trace(self, "post_bind", workload, target, NULL);
    for (size_t i = 0; i < s->n_waiting; i++) {
        waiter *w = &s->waiting[i];

        if (strcmp(w->namespace_, ns ? ns : "") != 0 || strcmp(w->name, name) != 0) {
            if (host->permit_allow(self, w->namespace_, w->name) == 0 && s->log_hooks)
                host->log(self, TRELLIS_LOG_INFO, "hook=permit_allow workload=%s%s%s",
                          w->namespace_, *w->namespace_ ? "/" : "", w->name);
        }
        free(w->namespace_);
        free(w->name);
    }
    /* allowed or bound: nobody is left waiting on this plugin */
    s->n_waiting = 0;
}

/* ---- init -------------------------------------------------------------- */

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    state *s;

    host = h;
    s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->log_hooks = h->arg_bool(args, "log_hooks");
    h->set_private(self, s, free_state);

    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 || h->declare_counters(self, 1, amounts) < 0 ||
        h->register_queue_sort(self, less) < 0 || h->register_pre_filter(self, pre_filter) < 0 ||
        h->register_filter(self, filter) < 0 || h->register_filter_batch(self, filter_batch) < 0 ||
        h->register_post_filter(self, post_filter) < 0 ||
        h->register_pre_score(self, pre_score) < 0 || h->register_score(self, score) < 0 ||
        h->register_score_batch(self, score_batch) < 0 ||
        h->register_normalize(self, normalize) < 0 || h->register_reserve(self, reserve) < 0 ||
        h->register_unreserve(self, unreserve) < 0 || h->register_permit(self, permit) < 0 ||
        h->register_pre_bind(self, pre_bind) < 0 || h->register_bind(self, bind) < 0 ||
        h->register_post_bind(self, post_bind) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    if (s->log_hooks)
        h->log(self, TRELLIS_LOG_INFO, "hook=init profile=%s", h->profile_name(self));
    return 0;
}

static void fini(trellis_plugin *self)
{
    if (get_state(self) && get_state(self)->log_hooks)
        host->log(self, TRELLIS_LOG_INFO, "hook=fini");
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-all-hooks",
    "0.0.1",
    "fixture: registers every hook and logs each call",
    args_table,
    init,
    fini,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
