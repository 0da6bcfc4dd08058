/*
 * fx_faults.c - fixture: a plugin that misbehaves as its arguments say.
 *
 *   crash_in = "init" | "filter" | "score"   die there (how = "segv" | "abort")
 *   crash_on = NAME      only for the workload of that name ("" any)
 *   hang_in = "filter" | "score"             never return from that hook
 *   hang_on = NAME       only for the workload of that name ("" any)
 *   fail_score_on = NAME score fails (an error) for the target of that name
 *   touch = PATH         pre-bind appends a comment to PATH, so the file a
 *                        binding goes to has changed on disk by the flush
 *   late_thread = PATH   init starts a thread that outlives fini and then
 *                        calls the host; it writes what the host answered
 *                        to PATH
 *
 * Otherwise every target passes and scores 0. Each fault is one the host
 * must survive or report (see tests/faults.sh and test_loader.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct faults {
    char crash_in[16], crash_on[128], how[16], hang_in[16], hang_on[128], touch[512],
        fail_score_on[128];
} faults;

static atomic_int finished; /* set by fini: the late thread's cue */
static char late_path[512];

static int is(const char *want, const char *hook, const char *on, const trellis_object *w)
{
    return strcmp(want, hook) == 0 && (!*on || strcmp(on, host->object_name(w)) == 0);
}

static void misbehave(const trellis_plugin *self, const char *hook, const trellis_object *w)
{
    const faults *f = host->get_private(self);
    if (!f)
        return;
    if (is(f->crash_in, hook, f->crash_on, w)) {
        if (strcmp(f->how, "abort") == 0)
            abort();
        raise(SIGSEGV);
    }
    if (is(f->hang_in, hook, f->hang_on, w))
        for (;;) {
            /* waiting on something that never comes (ThreadSanitizer
             * delivers signals only at the calls it watches) */
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    misbehave(self, "filter", w);
    return TRELLIS_SUCCESS;
}

static int score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                 const trellis_target *t, int64_t *out, trellis_status *st)
{
    misbehave(self, "score", w);
    const faults *f = host->get_private(self);
    *out = 0;
    if (f && *f->fail_score_on && strcmp(f->fail_score_on, host->target_name(t)) == 0)
        return host->status(st, TRELLIS_ERROR, "Refused", "told to fail on %s", f->fail_score_on);
    return TRELLIS_SUCCESS;
}

static int pre_bind(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                    const trellis_target *t, trellis_status *st)
{
    const faults *f = host->get_private(self);
    FILE *fp = fopen(f->touch, "a");
    if (fp) {
        fputs("# changed while trellis was binding\n", fp);
        fclose(fp);
    }
    return TRELLIS_SUCCESS;
}

/* Calls the host once fini has run, as a plugin thread that was not
 * stopped would. */
static void *late(void *arg)
{
    trellis_plugin *self = arg;
    while (!atomic_load(&finished)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    static int marker;
    host->set_private(self, &marker, NULL);
    void *back = host->get_private(self);
    FILE *fp = fopen(late_path, "w");
    if (fp) {
        fprintf(fp, "get_private after fini: %s\n", back == &marker ? "answered" : "refused");
        fclose(fp);
    }
    return NULL;
}

static void copy(char *to, size_t len, const char *from)
{
    snprintf(to, len, "%s", from ? from : "");
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    faults *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    copy(f->crash_in, sizeof f->crash_in, h->arg_string(args, "crash_in"));
    copy(f->crash_on, sizeof f->crash_on, h->arg_string(args, "crash_on"));
    copy(f->how, sizeof f->how, h->arg_string(args, "how"));
    copy(f->hang_in, sizeof f->hang_in, h->arg_string(args, "hang_in"));
    copy(f->hang_on, sizeof f->hang_on, h->arg_string(args, "hang_on"));
    copy(f->touch, sizeof f->touch, h->arg_string(args, "touch"));
    copy(f->fail_score_on, sizeof f->fail_score_on, h->arg_string(args, "fail_score_on"));
    h->set_private(self, f, free);
    if (strcmp(f->crash_in, "init") == 0) {
        if (strcmp(f->how, "abort") == 0)
            abort();
        raise(SIGSEGV);
    }
    const char *lp = h->arg_string(args, "late_thread");
    if (lp && *lp) {
        copy(late_path, sizeof late_path, lp);
        pthread_t t;
        if (pthread_create(&t, NULL, late, self) == 0)
            pthread_detach(t);
    }
    if (h->register_filter(self, filter) < 0 || h->register_score(self, score) < 0 ||
        (f->touch[0] && h->register_pre_bind(self, pre_bind) < 0)) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

static void fini(trellis_plugin *self)
{
    atomic_store(&finished, 1);
}

static const trellis_arg_spec args[] = {
    {"crash_in", TRELLIS_ARG_STRING, "", "init, filter or score: die there"},
    {"crash_on", TRELLIS_ARG_STRING, "", "only for the workload of this name"},
    {"how", TRELLIS_ARG_STRING, "segv", "segv or abort"},
    {"hang_in", TRELLIS_ARG_STRING, "", "filter or score: never return"},
    {"hang_on", TRELLIS_ARG_STRING, "", "only for the workload of this name"},
    {"touch", TRELLIS_ARG_STRING, "", "pre-bind appends a comment to this file"},
    {"fail_score_on", TRELLIS_ARG_STRING, "", "score fails for the target of this name"},
    {"late_thread", TRELLIS_ARG_STRING, "", "a thread calls the host after fini; result here"},
    {NULL, 0, NULL, NULL},
};

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-faults",
    "0.0.1",
    "fixture: crashes, hangs, a file changed under a binding, a thread after fini",
    args,
    init,
    fini,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
