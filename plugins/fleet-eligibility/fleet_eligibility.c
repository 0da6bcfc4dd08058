/*
 * fleet_eligibility.c - the fleet-eligibility plugin: only member clusters
 * that KubeFleet's cluster eligibility checker accepts take placements.
 *
 * KubeFleet (pkg/scheduler/clustereligibilitychecker) drops a
 * MemberCluster that is being deleted ("has left the fleet"), whose
 * member agent has not reported (no MemberAgent entry in
 * status.agentStatus), whose last heartbeat is older than the heartbeat
 * timeout, whose agent has not Joined, that has no Healthy condition, or
 * whose Healthy condition has not been True for longer than the health
 * timeout; both timeouts are five minutes, and arguments here. The
 * clock is the run's (clock_now: `--now` makes a one-shot run
 * repeatable), and the messages are KubeFleet's, minutes with two
 * decimals. What depends on the cluster alone is read once per cluster
 * change (prepare_target), down to the instant it stops being eligible
 * (a target-value column: filter_span compares the clock with it, reading
 * no cluster's data; the plain filter decides the same way and says why).
 * A cluster that is eligible now and turns ineligible by itself (its
 * heartbeat ages, an unhealthy spell lasts) asks for a retry then
 * (cycle_retry_at), so a placement is looked at again without a change
 * of the object. Every rejection is UNRESOLVABLE: evicting placements
 * never makes a cluster eligible.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trellis/helpers.h"
#include "trellis/plugin.h"
#include "values.h"

/* Process-global and immutable once init has run (see plugin.h). */
static const trellis_host *host;

typedef struct config {
    int64_t heartbeat_ms, health_ms; /* the timeouts */
} config;

/* What a cluster's object says, once per change. */
enum { E_OK = 0, E_LEFT, E_NO_AGENT, E_NOT_JOINED, E_NO_HEALTH };

typedef struct cluster {
    int state;            /* E_*: a verdict that does not depend on the clock */
    int64_t heartbeat_ms; /* the member agent's last heartbeat (INT64_MIN: none) */
    /* Healthy is not True since then (INT64_MIN: no time given); INT64_MAX:
     * it is True */
    int64_t unhealthy_ms;
    /* eligible while the clock is before it (INT64_MIN: never): the first
     * instant the heartbeat or an unhealthy spell is too old */
    int64_t until;
} cluster;

/* a + b, b >= 0, at most INT64_MAX */
static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* cluster.until: KubeFleet's checks that do not depend on the clock
 * passed, the first instant when now - heartbeat > heartbeat_ms or
 * now - unhealthy > health_ms. */
static int64_t eligible_until(const config *cfg, const cluster *c)
{
    if (c->state != E_OK || c->heartbeat_ms == INT64_MIN || c->unhealthy_ms == INT64_MIN)
        return INT64_MIN;
    int64_t until = add_sat(c->heartbeat_ms, add_sat(cfg->heartbeat_ms, 1));
    if (c->unhealthy_ms != INT64_MAX) {
        int64_t u = add_sat(c->unhealthy_ms, add_sat(cfg->health_ms, 1));
        until = u < until ? u : until;
    }
    return until;
}

static const trellis_arg_spec args_table[] = {
    {"heartbeat_timeout_s", TRELLIS_ARG_INT, "300",
     "a member agent whose last heartbeat is older is not connected to the fleet"},
    {"health_timeout_s", TRELLIS_ARG_INT, "300",
     "a Healthy condition not True for longer makes the cluster ineligible"},
    {NULL, 0, NULL, NULL},
};

/* The RFC 3339 time at v as milliseconds; INT64_MIN when absent or not a
 * time (metav1.Time's zero value: "a long time ago"). */
static int64_t time_of(const trellis_value *v)
{
    const char *t = values_scalar_text(host, v);
    int64_t ms;
    return t && host->time_parse(t, &ms) == 0 ? ms : INT64_MIN;
}

/* The first element of list whose `type` is type (Kubernetes' lookup of
 * a condition or an agent status), or NULL. */
static const trellis_value *of_type(const trellis_value *list, const char *type)
{
    size_t n = list && host->value_type(list) == TRELLIS_VALUE_LIST ? host->value_len(list) : 0;
    for (size_t i = 0; i < n; i++) {
        const trellis_value *e = host->value_at(list, i);
        const char *t = values_scalar_text(host, host->value_get(e, "type"));
        if (t && strcmp(t, type) == 0)
            return e;
    }
    return NULL;
}

static int is_true(const trellis_value *cond)
{
    const trellis_value *st = host->value_get(cond, "status");
    int b;
    if (st && host->value_type(st) == TRELLIS_VALUE_BOOL)
        return host->value_bool(st, &b) == 0 && b;
    const char *t = values_scalar_text(host, st);
    return t && strcmp(t, "True") == 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *obj, void **data, char *err,
                          size_t errlen)
{
    const trellis_value *agents = host->object_get(obj, "status.agentStatus");
    if (agents && host->value_type(agents) != TRELLIS_VALUE_LIST &&
        host->value_type(agents) != TRELLIS_VALUE_NULL) {
        snprintf(err, errlen, "status.agentStatus: expected a list, got %s",
                 values_type_name(host->value_type(agents)));
        return -1;
    }
    cluster *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const trellis_value *del = host->object_get(obj, "metadata.deletionTimestamp");
    const trellis_value *agent = of_type(agents, "MemberAgent");
    const trellis_value *conds = agent ? host->value_get(agent, "conditions") : NULL;
    const trellis_value *joined = of_type(conds, "Joined");
    const trellis_value *healthy = of_type(conds, "Healthy");
    c->heartbeat_ms = agent ? time_of(host->value_get(agent, "lastReceivedHeartbeat")) : INT64_MIN;
    c->unhealthy_ms = !healthy           ? INT64_MIN
                      : is_true(healthy) ? INT64_MAX
                                         : time_of(host->value_get(healthy, "lastTransitionTime"));
    c->state = del && host->value_type(del) != TRELLIS_VALUE_NULL ? E_LEFT
               : !agent                                           ? E_NO_AGENT
               : !joined || !is_true(joined)                      ? E_NOT_JOINED
               : !healthy                                         ? E_NO_HEALTH
                                                                  : E_OK;
    c->until = eligible_until(host->get_private(self), c);
    *data = c;
    return 0;
}

/* The column filter_span reads: cluster.until (INT64_MAX without data:
 * no verdict, as the plain filter). */
static void target_values(trellis_plugin *self, const trellis_object *o, int64_t *out)
{
    const cluster *c = host->object_data(self, o);
    out[0] = c ? c->until : INT64_MAX;
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    free(data);
}

/* Minutes since `since`, for KubeFleet's messages (a missing time is the
 * zero time: minutes since year 1). */
static double minutes(int64_t now, int64_t since)
{
    static const int64_t year1_ms = -62135596800000LL;
    return (double)(now - (since == INT64_MIN ? year1_ms : since)) / 60000.0;
}

/* The verdict on one cluster at now: TRELLIS_SUCCESS while the clock is
 * before cluster.until (what filter_span compares), else UNRESOLVABLE
 * with st filled (st may be NULL) by the first of KubeFleet's checks that
 * fails. *expires: when an eligible cluster stops being so by itself. */
static int verdict(const config *cfg, const cluster *c, int64_t now, trellis_status *st,
                   int64_t *expires)
{
    static const char *const fixed[] = {
        [E_LEFT] = "cluster has left the fleet",
        [E_NO_AGENT] = "cluster is not connected to the fleet: member agent not online yet",
        [E_NOT_JOINED] = "cluster is not connected to the fleet: member agent not joined yet",
        [E_NO_HEALTH] = "cluster is not connected to the fleet: health condition from member "
                        "agent is not available",
    };
    *expires = c->until;
    if (now < c->until)
        return TRELLIS_SUCCESS;
    *expires = INT64_MAX;
    if (!st)
        return TRELLIS_UNRESOLVABLE;
    if (c->state == E_LEFT || c->state == E_NO_AGENT)
        host->status(st, TRELLIS_UNRESOLVABLE, c->state == E_LEFT ? "ClusterLeft" : "NotConnected",
                     "%s", fixed[c->state]);
    else if (c->heartbeat_ms == INT64_MIN || now - c->heartbeat_ms > cfg->heartbeat_ms)
        host->status(st, TRELLIS_UNRESOLVABLE, "NotConnected",
                     "cluster is not connected to the fleet: no recent heartbeat signals "
                     "(last received %.2f minutes ago)",
                     minutes(now, c->heartbeat_ms));
    else if (c->state != E_OK)
        host->status(st, TRELLIS_UNRESOLVABLE, "NotConnected", "%s", fixed[c->state]);
    else /* what is left: an unhealthy spell too long */
        host->status(st, TRELLIS_UNRESOLVABLE, "Unhealthy",
                     "cluster is not connected to the fleet: unhealthy for a prolonged "
                     "period of time (last transitioned %.2f minutes ago)",
                     minutes(now, c->unhealthy_ms));
    return TRELLIS_UNRESOLVABLE;
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                  const trellis_target *target, trellis_status *st)
{
    (void)workload;
    const config *cfg = host->get_private(self);
    const cluster *cl = host->object_data(self, host->target_object(target));
    int64_t expires;
    if (!cl)
        return TRELLIS_SUCCESS;
    int rc = verdict(cfg, cl, host->clock_now(self), st, &expires);
    if (rc == TRELLIS_SUCCESS && expires != INT64_MAX)
        host->cycle_retry_at(c, expires);
    return rc;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *workload,
                        size_t first, size_t n, uint64_t *pass)
{
    (void)workload;
    const int64_t *until = host->cycle_target_values(c, self, 0) + first;
    int64_t now = host->clock_now(self), soonest = INT64_MAX;
    for (size_t j = 0; j < n; j++) {
        if (now >= until[j])
            pass[j / 64] &= ~(1ull << (j % 64));
        else if (until[j] < soonest)
            soonest = until[j];
    }
    if (soonest != INT64_MAX)
        host->cycle_retry_at(c, soonest);
}

static int rejects_on(trellis_plugin *self, const trellis_object *workload,
                      const trellis_object *obj)
{
    (void)workload;
    const cluster *cl = host->object_data(self, obj);
    int64_t expires;
    return cl && verdict(host->get_private(self), cl, host->clock_now(self), NULL, &expires) !=
                     TRELLIS_SUCCESS;
}

static int hint(trellis_plugin *self, const trellis_object *workload, unsigned event,
                const trellis_object *old_obj, const trellis_object *new_obj)
{
    return trellis_hint_target_turned(self, workload, event, old_obj, new_obj, rejects_on);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    int64_t hb = h->arg_int(args, "heartbeat_timeout_s"),
            health = h->arg_int(args, "health_timeout_s");
    if (hb < 1 || hb > 86400 * 30 || health < 1 || health > 86400 * 30) {
        snprintf(err, errlen, "%s: expected 1..2592000 seconds, got %lld",
                 hb < 1 || hb > 86400 * 30 ? "heartbeat_timeout_s" : "health_timeout_s",
                 (long long)(hb < 1 || hb > 86400 * 30 ? hb : health));
        return -1;
    }
    config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cfg->heartbeat_ms = hb * 1000;
    cfg->health_ms = health * 1000;
    h->set_private(self, cfg, free);
    /* no `equivalent`: the verdicts depend on the clock */
    if (h->register_prepare_target(self, prepare_target) < 0 ||
        h->declare_target_values(self, 1, target_values) < 0 ||
        h->register_release(self, release) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0) {
        snprintf(err, errlen, "cannot register hooks");
        return -1;
    }
    return trellis_hints_register(h, self, TRELLIS_EV_TARGET_ADD | TRELLIS_EV_TARGET_UPDATE, hint,
                                  err, errlen);
}

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "fleet-eligibility",
    "1.0.0",
    "keeps the member clusters KubeFleet's eligibility checker accepts: joined, recent "
    "heartbeat, healthy",
    args_table,
    init,
    NULL,
};

TRELLIS_PLUGIN_AS(desc, fleet_eligibility)
