/*
 * fx_late.c - fixture: a feasible filter (filter_feasible, SDK 1.6).
 *
 * Once per cycle, after every filter, it looks at the feasible targets'
 * label "late": "reject" is rejected UNSCHEDULABLE with reason
 * "LateRejected", "unresolvable" UNRESOLVABLE with "LateUnresolvable". A
 * workload labelled late-all=reject has every target left rejected by the
 * hook's own UNSCHEDULABLE ("AllRejected"), late-all=error ends the cycle
 * with an error. It checks the host's guards as it goes: a second
 * rejection of the same target is refused, and so is one it
 * rejects outside filter_feasible (pre_score): a guard that lets it
 * through ends the cycle with an error, which the decisions show.
 */
/* a 1.6 plugin: it needs filter_feasible and nothing newer */
#define TRELLIS_PLUGIN_MIN_MINOR 6

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* what it uses came with 1.6: a newer host's additions are not needed */
#define TRELLIS_PLUGIN_MIN_MINOR 6
#include "trellis/plugin.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

static int filter_feasible(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                           const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    const char *all = host->object_label(w, "late-all");
    if (all && strcmp(all, "error") == 0) {
        host->status(st, TRELLIS_ERROR, "LateError", "fx-late was told to fail");
        return TRELLIS_ERROR;
    }
    for (size_t j = 0; j < n; j++) {
        const char *v = host->object_label(host->target_object(feasible[j]), "late");
        trellis_status r;
        if (!v)
            continue;
        if (strcmp(v, "reject") == 0)
            host->status(&r, TRELLIS_UNSCHEDULABLE, "LateRejected", "%s carries late=reject",
                         host->target_name(feasible[j]));
        else if (strcmp(v, "unresolvable") == 0)
            host->status(&r, TRELLIS_UNRESOLVABLE, "LateUnresolvable",
                         "%s carries late=unresolvable", host->target_name(feasible[j]));
        else
            continue;
        if (host->cycle_reject(c, self, feasible[j], &r) < 0 ||
            host->cycle_reject(c, self, feasible[j], &r) == 0) {
            host->log(self, TRELLIS_LOG_ERROR, "cycle_reject's guard is missing");
            return TRELLIS_ERROR;
        }
    }
    if (all && strcmp(all, "reject") == 0) {
        host->status(st, TRELLIS_UNSCHEDULABLE, "AllRejected", "late-all=reject");
        return TRELLIS_UNSCHEDULABLE;
    }
    return TRELLIS_SUCCESS;
}

/* cycle_reject outside filter_feasible is refused. */
static int pre_score(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                     const trellis_target *const *feasible, size_t n, trellis_status *st)
{
    trellis_status r;
    host->status(&r, TRELLIS_UNSCHEDULABLE, "TooLate", "pre_score may not reject");
    if (n && host->cycle_reject(c, self, feasible[0], &r) == 0) {
        host->status(st, TRELLIS_ERROR, "GuardMissing", "cycle_reject worked in pre_score");
        return TRELLIS_ERROR;
    }
    return TRELLIS_SUCCESS;
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    if (h->register_filter_feasible(self, filter_feasible) < 0 ||
        h->register_pre_score(self, pre_score) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return 0;
}

/* clang-format off */
static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fx-late",
    "0.0.1",
    "fixture: a feasible filter over the label late",
    NULL,
    init,
    NULL,
};
/* clang-format on */

TRELLIS_PLUGIN(desc)
