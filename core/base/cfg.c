/*
 * cfg.c - see cfg.h. Unknown settings are errors, so a typo in a
 * profile never silently changes what the scheduler does.
 */
#include "config.h"

#include "cfg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "kubesched.h"
#include "log.h"
#include "settings.h"
#include "util.h"

static const char *const point_names[] = {"queue_sort", "pre_filter",  "filter",    "post_filter",
                                          "pre_score",  "score",       "reserve",   "permit",
                                          "pre_bind",   "bind",        "post_bind", "pre_enqueue",
                                          "finalize",   "target_lost", "decided"};

const char *config_point_name(unsigned bit)
{
    for (unsigned i = 0; i < sizeof point_names / sizeof *point_names; i++)
        if (bit == 1u << i)
            return point_names[i];
    return NULL;
}

unsigned config_point_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof point_names / sizeof *point_names; i++)
        if (strcmp(name, point_names[i]) == 0)
            return 1u << i;
    return 0;
}

/* The file a setting was read from: an @include'd file names itself. */
static const char *sfile(const cfg *c, const config_setting_t *s)
{
    const char *f = s ? config_setting_source_file(s) : NULL;
    return f ? f : c->file;
}

static int serr(const cfg *c, const config_setting_t *s, char *err, size_t errlen, const char *what)
{
    return errf(err, errlen, "%s:%d: %s", sfile(c, s), s ? config_setting_source_line(s) : 0, what);
}

/* Reject any member of group not in allowed. */
static int check_keys(const cfg *c, const config_setting_t *group, const char *const *allowed,
                      char *err, size_t errlen)
{
    int n = config_setting_length(group);
    for (int i = 0; i < n; i++) {
        config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(m);
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (name && strcmp(name, *a) == 0)
                ok = 1;
        if (!ok) {
            strbuf b;
            sb_init(&b);
            for (const char *const *a = allowed; *a; a++)
                sb_printf(&b, "%s%s", a == allowed ? "" : ", ", *a);
            errf(err, errlen, "%s:%d: unknown setting '%s' (expected one of: %s)", sfile(c, m),
                 config_setting_source_line(m), name ? name : "?", b.s);
            sb_free(&b);
            return -1;
        }
    }
    return 0;
}

/* Read an optional string member; *out stays NULL when absent. */
static int get_str(const cfg *c, const config_setting_t *group, const char *key, int required,
                   char **out, char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s) {
        if (required)
            return errf(err, errlen, "%s:%d: missing setting '%s'", sfile(c, group),
                        config_setting_source_line(group), key);
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return errf(err, errlen, "%s:%d: '%s' must be a string", sfile(c, s),
                    config_setting_source_line(s), key);
    const char *v = config_setting_get_string(s);
    if (required && !*v)
        return errf(err, errlen, "%s:%d: '%s' must not be empty", sfile(c, s),
                    config_setting_source_line(s), key);
    *out = xstrdup(v);
    return 0;
}

static int get_int(const cfg *c, const config_setting_t *group, const char *key, long long min,
                   long long max, long long *out, char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s)
        return 0;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return errf(err, errlen, "%s:%d: '%s' must be an integer", sfile(c, s),
                    config_setting_source_line(s), key);
    long long v = config_setting_get_int64(s);
    if (v < min || v > max)
        return errf(err, errlen, "%s:%d: '%s' must be between %lld and %lld, got %lld", sfile(c, s),
                    config_setting_source_line(s), key, min, max, v);
    *out = v;
    return 0;
}

static int get_bool(const cfg *c, const config_setting_t *group, const char *key, int *out,
                    char *err, size_t errlen)
{
    config_setting_t *s = config_setting_get_member(group, key);
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return errf(err, errlen, "%s:%d: '%s' must be true or false", sfile(c, s),
                    config_setting_source_line(s), key);
    *out = config_setting_get_bool(s);
    return 0;
}

static int load_plugin(cfg *c, cfg_profile *pr, const config_setting_t *s, cfg_plugin *pl,
                       char *err, size_t errlen)
{
    static const char *const keys[] = {"name",   "as",   "path",      "weight",
                                       "points", "args", "ignorable", NULL};
    memset(pl, 0, sizeof *pl);
    pl->line = config_setting_source_line(s);
    pl->weight = 1;
    pl->points = PT_ALL;
    if (config_setting_type(s) == CONFIG_TYPE_STRING) {
        pl->name = xstrdup(config_setting_get_string(s));
    } else if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
        if (check_keys(c, s, keys, err, errlen) < 0 ||
            get_str(c, s, "name", 1, &pl->name, err, errlen) < 0 ||
            get_str(c, s, "as", 0, &pl->instance, err, errlen) < 0 ||
            get_str(c, s, "path", 0, &pl->path, err, errlen) < 0)
            return -1;
        long long w = 1;
        if (get_int(c, s, "weight", 0, 1000000, &w, err, errlen) < 0)
            return -1;
        pl->weight = (int)w;
        if (get_bool(c, s, "ignorable", &pl->ignorable, err, errlen) < 0)
            return -1;
        config_setting_t *pts = config_setting_get_member(s, "points");
        if (pts) {
            if (!config_setting_is_aggregate(pts) || config_setting_is_group(pts))
                return serr(c, pts, err, errlen,
                            "'points' must be a list of extension point names");
            pl->points = 0;
            for (int i = 0; i < config_setting_length(pts); i++) {
                const char *n = config_setting_get_string_elem(pts, i);
                unsigned bit = n ? config_point_parse(n) : 0;
                if (!bit)
                    return errf(
                        err, errlen,
                        "%s:%d: unknown extension point '%s' (expected queue_sort, "
                        "pre_filter, filter, post_filter, pre_score, score, reserve, "
                        "permit, pre_bind, bind, post_bind, pre_enqueue, finalize, target_lost "
                        "or decided)",
                        sfile(c, pts), config_setting_source_line(pts), n ? n : "?");
                pl->points |= bit;
            }
        }
        config_setting_t *a = config_setting_get_member(s, "args");
        if (a && !config_setting_is_group(a))
            return serr(c, a, err, errlen, "'args' must be a group { key = value; }");
        pl->args = a;
    } else {
        return serr(c, s, err, errlen,
                    "a plugin entry must be a name or a group { name = \"...\"; }");
    }
    if (!*pl->name)
        return serr(c, s, err, errlen, "plugin name must not be empty");
    if (!pl->instance)
        pl->instance = xstrdup(pl->name);
    for (size_t i = 0; i < pr->n_plugins; i++)
        if (strcmp(pr->plugins[i].instance, pl->instance) == 0)
            return errf(err, errlen,
                        "%s:%d: profile '%s' lists '%s' twice (give the second one a "
                        "different name with as = \"...\")",
                        c->file, pl->line, pr->name, pl->instance);
    return 0;
}

static void free_plugin(cfg_plugin *pl)
{
    free(pl->name);
    free(pl->instance);
    free(pl->path);
}

/* ---- the profile settings ---- */

#define F(x) offsetof(cfg_profile, x)
#define MS_MAX 86400000LL /* a day */

static const char *const tie_breaks[] = {"name", "name-desc", NULL};
static const char *const score_modes[] = {"weighted", "lexicographic", "tuple", NULL};
static const char *const messages[] = {"summary", "per-target", NULL};

static const setting workload_settings[] = {
    {"kind", SET_STRING, NULL, 1, 0, 0, NULL, F(workload_kind), 0, NULL,
     "the kind this profile schedules (Pod, Shoot, ...)", NULL},
    {"api_version", SET_STRING, NULL, 0, 0, 0, NULL, F(workload_api_version), 0, NULL,
     "its apiVersion; absent: any", NULL},
    {"scheduler_name_field", SET_PATH, NULL, 0, 0, 0, NULL, F(scheduler_name_field), 0, NULL,
     "the field naming the scheduler that should place it; absent: every workload of the kind",
     NULL},
    {"finished_field", SET_PATH, NULL, 0, 0, 0, NULL, F(finished_field), 0, NULL,
     "the field saying a workload has run to its end (status.phase); absent: none has", NULL},
    {"finished_values", SET_STRING_LIST, NULL, 0, 0, 0, NULL, F(finished_values),
     F(n_finished_values), NULL,
     "the values of finished_field of a finished workload (Succeeded, Failed): it counts on no "
     "target and gets no cycle",
     NULL},
    {"nominated_field", SET_PATH, NULL, 0, 0, 0, NULL, F(nominated_field), 0, NULL,
     "the field naming the target a preemption nominated the workload to "
     "(status.nominatedNodeName): picked when it fits, whatever the scores; absent: only the "
     "nominations made in the run",
     NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const setting target_settings[] = {
    {"kind", SET_STRING, NULL, 1, 0, 0, NULL, F(target_kind), 0, NULL,
     "the kind workloads are placed on (Node, Seed, ...)", NULL},
    {"api_version", SET_STRING, NULL, 0, 0, 0, NULL, F(target_api_version), 0, NULL,
     "its apiVersion; absent: any", NULL},
    {"cordon_field", SET_PATH, NULL, 0, 0, 0, NULL, F(cordon_field), 0, NULL,
     "drain, uncordon: the boolean field that cordons a target (spec.unschedulable), set to "
     "true by drain (which then works as kubectl drain) and removed by uncordon; absent: the "
     "operator's cordon_taint",
     NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const char *const subresources[] = {"none", "status", "binding", NULL};

static const char *const binding_models[] = {"field", "object", NULL};

static const setting binding_object_settings[] = {
    {"kind", SET_STRING, NULL, 1, 0, 0, NULL, F(bobj_kind), 0, NULL,
     "the binding objects' kind (ClusterResourceBinding)", NULL},
    {"api_version", SET_STRING, NULL, 0, 0, 0, NULL, F(bobj_api_version), 0, NULL,
     "their apiVersion; absent: any when read, \"v1\" when created", NULL},
    {"workload_field", SET_PATH, NULL, 1, 0, 0, NULL, F(bobj_workload_field), 0, NULL,
     "the field naming the workload, in the binding's namespace "
     "(metadata.labels[\"kubernetes-fleet.io/parent-CRP\"])",
     NULL},
    {"target_field", SET_PATH, NULL, 1, 0, 0, NULL, F(bobj_target_field), 0, NULL,
     "the field naming the target, by its key (spec.targetCluster)", NULL},
    {"state_field", SET_PATH, NULL, 0, 0, 0, NULL, F(bobj_state_field), 0, NULL,
     "the binding's state (spec.state); absent: every binding object places", NULL},
    {"placed_states", SET_STRING_LIST, NULL, 0, 0, 0, NULL, F(bobj_placed_states),
     F(n_bobj_placed_states), NULL, "the states that count as placed; absent: any state", NULL},
    {"initial_state", SET_STRING, NULL, 0, 0, 0, NULL, F(bobj_initial_state), 0, NULL,
     "the state a binding object the host creates gets (Scheduled)", NULL},
    {"release_state", SET_STRING, NULL, 0, 0, 0, NULL, F(bobj_release_state), 0, NULL,
     "the state a released binding gets (Unscheduled); absent: it is deleted", NULL},
    {"finalizer", SET_STRING, NULL, 0, 0, 0, NULL, F(bobj_finalizer), 0, NULL,
     "a finalizer the host puts on every binding object it creates and removes once the "
     "object is being deleted (kubernetes-fleet.io/scheduler-crb-cleanup)",
     NULL},
    {"previous_state_annotation", SET_STRING, NULL, 0, 0, 0, NULL,
     F(bobj_previous_state_annotation), 0, NULL,
     "the annotation a released binding keeps the state it had in, restored when it places "
     "again (kubernetes-fleet.io/previous-binding-state); absent: it gets initial_state",
     NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const setting binding_settings[] = {
    {"model", SET_CHOICE, "field", 0, 0, 0, binding_models, F(binding_model), 0, NULL,
     "field: the target's name in a field of the workload; object: one binding object per "
     "placement",
     NULL},
    {"field", SET_PATH, NULL, 0, 0, 0, NULL, F(binding_field), 0, NULL,
     "model field: the workload's field the target's name is written into (spec.nodeName)", NULL},
    {"namespace_field", SET_PATH, NULL, 0, 0, 0, NULL, F(binding_namespace_field), 0, NULL,
     "the field the target's namespace goes into (status.cluster.namespace); absent: field "
     "holds namespace/name",
     NULL},
    {"subresource", SET_CHOICE, "none", 0, 0, 0, subresources, F(binding_subresource), 0, NULL,
     "the workload's subresource the binding is written through (none|status|binding)", NULL},
    {"also_counts", SET_PATH_LIST, NULL, 0, 0, 0, NULL, F(also_counts), F(n_also_counts), NULL,
     "more fields whose target a workload counts on, never written (status.seedName)", NULL},
    {"object", SET_GROUP, NULL, 0, 0, 0, NULL, 0, 0, binding_object_settings,
     "model object: the binding objects", NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const setting backoff_settings[] = {
    {"initial_ms", SET_INT, "1000", 0, 1, MS_MAX, NULL, F(backoff_initial_ms), 8, NULL,
     "the first wait before a failed workload is tried again", NULL},
    {"max_ms", SET_INT, "10000", 0, 1, MS_MAX, NULL, F(backoff_max_ms), 8, NULL,
     "the longest wait (it doubles per attempt up to this)", NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* What the operator commands need to know about targets: not generic,
 * it is the Kubernetes and Gardener shape of taints and capacity. */
static const setting operator_settings[] = {
    {"taints_field", SET_PATH, "spec.taints", 0, 0, 0, NULL, F(taints_field), 0, NULL,
     "taint, drain, uncordon: the targets' list of {key, value, effect}", NULL},
    {"taint_effects", SET_STRING_LIST, "NoSchedule,PreferNoSchedule,NoExecute", 0, 0, 0, NULL,
     F(taint_effects), F(n_taint_effects), NULL, "taint: the effects a taint may have", NULL},
    {"cordon_taint", SET_STRING, "node.kubernetes.io/unschedulable", 0, 0, 0, NULL, F(cordon_taint),
     0, NULL, "drain, uncordon: the key of the NoSchedule taint that cordons", NULL},
    {"daemon_owner_kinds", SET_STRING_LIST, "DaemonSet", 0, 0, 0, NULL, F(daemon_owner_kinds),
     F(n_daemon_owner_kinds), NULL,
     "drain with target.cordon_field: workloads whose controller is of these kinds stay "
     "(--ignore-daemonsets) or stop the drain",
     NULL},
    {"mirror_annotation", SET_STRING, "kubernetes.io/config.mirror", 0, 0, 0, NULL,
     F(mirror_annotation), 0, NULL,
     "drain with target.cordon_field: workloads with this annotation (mirror Pods) stay", NULL},
    {"budget_kind", SET_STRING, "PodDisruptionBudget", 0, 0, 0, NULL, F(budget_kind), 0, NULL,
     "drain with target.cordon_field: the disruption budgets an eviction must respect", NULL},
    {"volumes_field", SET_PATH, "spec.volumes", 0, 0, 0, NULL, F(volumes_field), 0, NULL,
     "drain with target.cordon_field: the workloads' volumes; one with emptyDir is local "
     "storage (--delete-emptydir-data)",
     NULL},
    {"capacity_field", SET_PATH, NULL, 0, 0, 0, NULL, F(capacity_field), 0, NULL,
     "deschedule: how many workloads a target takes; absent: deschedule refuses", NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const setting profile_settings[] = {
    {"name", SET_STRING, NULL, 1, 0, 0, NULL, F(name), 0, NULL,
     "the scheduler name this profile answers to", NULL},
    {"default", SET_BOOL, "false", 0, 0, 0, NULL, F(is_default), 0, NULL,
     "also take workloads that name no scheduler", NULL},
    {"workload", SET_GROUP, NULL, 1, 0, 0, NULL, 0, 0, workload_settings,
     "what the profile schedules", NULL},
    {"target", SET_GROUP, NULL, 1, 0, 0, NULL, 0, 0, target_settings, "what it places workloads on",
     NULL},
    {"binding", SET_GROUP, NULL, 1, 0, 0, NULL, 0, 0, binding_settings,
     "how a placement is recorded", NULL},
    {"tie_break", SET_CHOICE, "name", 0, 0, 0, tie_breaks, F(tie_break_desc), 0, NULL,
     "equal totals go to the first or the last target by namespace, then name", NULL},
    {"score_mode", SET_CHOICE, "weighted", 0, 0, 0, score_modes, F(score_mode), 0, NULL,
     "add weighted scores, let each score plugin in turn keep its best targets, or rank by raw "
     "signed scores plugin by plugin",
     NULL},
    {"unschedulable_message", SET_CHOICE, "summary", 0, 0, 0, messages, F(per_target_message), 0,
     NULL, "\"0/N targets are available: ...\", or one reason per target", NULL},
    {"target_noun", SET_STRING, "target", 0, 0, 0, NULL, F(target_noun), 0, NULL,
     "what messages call a target", NULL},
    {"events", SET_BOOL, "false", 0, 0, 0, NULL, F(events), 0, NULL,
     "write Scheduled and FailedScheduling Events", NULL},
    {"percentage_of_targets_to_score", SET_INT, "100", 0, 0, 100, NULL, F(percentage_to_score), 4,
     NULL, "stop filtering once this share of the targets fits (0: adaptive)", NULL},
    {"reconcile", SET_BOOL, "false", 0, 0, 0, NULL, F(reconcile), 0, NULL,
     "placed workloads get a cycle again when a change may make them want or get other targets",
     NULL},
    {"equivalence_cache", SET_BOOL, "true", 0, 0, 0, NULL, F(equivalence_cache), 0, NULL,
     "reuse verdicts for equivalent workloads", NULL},
    {"operator", SET_GROUP, NULL, 0, 0, 0, NULL, 0, 0, operator_settings,
     "the shape of taints and capacity for taint, drain, uncordon, deschedule", NULL},
    {"taints_field", SET_PATH, NULL, 0, 0, 0, NULL, F(taints_field), 0, NULL, NULL,
     "operator.taints_field"},
    {"cordon_taint", SET_STRING, NULL, 0, 0, 0, NULL, F(cordon_taint), 0, NULL, NULL,
     "operator.cordon_taint"},
    {"capacity_field", SET_PATH, NULL, 0, 0, 0, NULL, F(capacity_field), 0, NULL, NULL,
     "operator.capacity_field"},
    {"backoff", SET_GROUP, NULL, 0, 0, 0, NULL, 0, 0, backoff_settings,
     "how long a failed workload waits", NULL},
    {"max_unschedulable_ms", SET_INT, "300000", 0, 1, MS_MAX * 7, NULL, F(max_unschedulable_ms), 8,
     NULL, "an unschedulable workload is tried again after this long at the latest", NULL},
    {"hook_deadline_ms", SET_INT, "5000", 0, 0, MS_MAX, NULL, F(hook_deadline_ms), 4, NULL,
     "a scheduling-cycle hook or prepare running longer ends the run (0: no limit)", NULL},
    {"bind_deadline_ms", SET_INT, "60000", 0, 0, MS_MAX, NULL, F(bind_deadline_ms), 4, NULL,
     "the same for init and the binding cycle's hooks", NULL},
    {"plugins", SET_CUSTOM, NULL, 1, 0, 0, NULL, 0, 0, NULL,
     "( { name; as; path; weight; points; ignorable; args; }, ... ) in order", NULL},
    {"plugin_args", SET_CUSTOM, NULL, 0, 0, 0, NULL, 0, 0, NULL,
     "{ key = value; } for every plugin that declares the key and does not set it", NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

void config_describe_profile(FILE *f)
{
    fprintf(f, "  %-34s %-14s %-22s %s\n", "SETTING", "TYPE", "DEFAULT", "MEANING");
    settings_describe(f, profile_settings, "");
}

/* Whether path names a field the object's identity holds, or a list
 * element (a binding object the host writes could not be read back). */
static const char *unwritable(const char *path)
{
    static const char *const ids[] = {"apiVersion",         "kind",         "metadata.name",
                                      "metadata.namespace", "metadata.uid", NULL};
    for (size_t i = 0; ids[i]; i++)
        if (strcmp(path, ids[i]) == 0)
            return "is part of the object's identity";
    for (const char *q = strchr(path, '['); q; q = strchr(q + 1, '['))
        if (q[1] >= '0' && q[1] <= '9')
            return "names a list element; a field the host can write is a map member";
    return NULL;
}

/* Whether one of a, b is the other or holds it. */
static int overlap(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;
    return strncmp(a, b, l) == 0 &&
           (la == lb || (la > lb ? a : b)[l] == '.' || (la > lb ? a : b)[l] == '[');
}

/* What is wrong with a profile's binding objects, into why: 1, or 0 when
 * nothing is. Each rule keeps a binding the host writes readable as the
 * placement it made. */
static int binding_object_problem(const cfg_profile *p, char *why, size_t len)
{
    const char *paths[] = {p->bobj_workload_field, p->bobj_target_field, p->bobj_state_field};
    const char *names[] = {"workload_field", "target_field", "state_field"};
    int placed_initial = 0, placed_release = 0;
    for (size_t i = 0; i < p->n_bobj_placed_states; i++) {
        placed_initial |=
            p->bobj_initial_state && strcmp(p->bobj_placed_states[i], p->bobj_initial_state) == 0;
        placed_release |=
            p->bobj_release_state && strcmp(p->bobj_placed_states[i], p->bobj_release_state) == 0;
    }
    if (strcmp(p->bobj_kind, p->workload_kind) == 0 || strcmp(p->bobj_kind, p->target_kind) == 0)
        snprintf(why, len,
                 "kind %s is the profile's %s kind: binding objects need a kind of "
                 "their own",
                 p->bobj_kind, strcmp(p->bobj_kind, p->workload_kind) == 0 ? "workload" : "target");
    else if (!p->bobj_state_field &&
             (p->n_bobj_placed_states || p->bobj_initial_state || p->bobj_release_state))
        snprintf(why, len, "placed_states, initial_state and release_state need state_field");
    else if (p->n_bobj_placed_states && !placed_initial)
        snprintf(why, len,
                 "initial_state must be one of placed_states (a binding the host "
                 "creates must place)");
    else if (p->bobj_release_state && !p->n_bobj_placed_states)
        snprintf(why, len, "release_state needs placed_states (without them every state places)");
    else if (p->bobj_previous_state_annotation && !p->bobj_release_state)
        snprintf(why, len,
                 "previous_state_annotation needs release_state (a deleted binding keeps "
                 "nothing)");
    else if (p->bobj_previous_state_annotation && !*p->bobj_previous_state_annotation)
        snprintf(why, len, "previous_state_annotation: expected an annotation key");
    else if (p->bobj_finalizer && !*p->bobj_finalizer)
        snprintf(why, len, "finalizer: expected a finalizer name");
    else if (placed_release)
        snprintf(why, len,
                 "release_state '%s' is one of placed_states: a released binding "
                 "would still place",
                 p->bobj_release_state);
    else {
        for (size_t i = 0; i < 3; i++) {
            const char *u = paths[i] ? unwritable(paths[i]) : NULL;
            if (u) {
                snprintf(why, len, "%s '%s' %s", names[i], paths[i], u);
                return 1;
            }
            for (size_t j = i + 1; j < 3; j++)
                if (paths[i] && paths[j] && overlap(paths[i], paths[j])) {
                    snprintf(why, len,
                             "%s and %s overlap ('%s', '%s'): each needs a field of its own",
                             names[i], names[j], paths[i], paths[j]);
                    return 1;
                }
        }
        return 0;
    }
    return 1;
}

/* The members the binding model needs are there, and no member of the
 * other model. */
static int check_binding(cfg *c, const config_setting_t *s, const cfg_profile *p, char *err,
                         size_t errlen)
{
    const config_setting_t *b = config_setting_get_member(s, "binding");
    if (p->binding_model == BINDING_FIELD) {
        if (!p->binding_field)
            return serr(c, b, err, errlen,
                        "binding: model \"field\" needs field = \"spec.nodeName\" (or "
                        "model = \"object\" with object = { ... })");
        if (config_setting_get_member(b, "object"))
            return serr(c, config_setting_get_member(b, "object"), err, errlen,
                        "binding.object is for model = \"object\"");
        return 0;
    }
    static const char *const field_only[] = {"field", "namespace_field", "subresource",
                                             "also_counts", NULL};
    for (size_t i = 0; field_only[i]; i++) {
        const config_setting_t *m = config_setting_get_member(b, field_only[i]);
        if (m)
            return errf(err, errlen,
                        "%s:%d: binding.%s is for model = \"field\"; model \"object\" "
                        "records placements in binding.object's objects",
                        sfile(c, m), config_setting_source_line(m), field_only[i]);
    }
    const config_setting_t *o = config_setting_get_member(b, "object");
    if (!o)
        return serr(c, b, err, errlen,
                    "binding: model \"object\" needs object = { kind; workload_field; "
                    "target_field; }");
    char why[300];
    if (binding_object_problem(p, why, sizeof why))
        return errf(err, errlen, "%s:%d: binding.object: %s", sfile(c, o),
                    config_setting_source_line(o), why);
    return 0;
}

static int load_profile(cfg *c, const config_setting_t *s, cfg_profile *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->line = config_setting_source_line(s);
    settings_defaults(profile_settings, p);
    if (!config_setting_is_group(s))
        return serr(c, s, err, errlen, "a profile must be a group { name = ...; }");
    if (settings_load(profile_settings, s, p, c->file, err, errlen) < 0)
        return -1;
    if (check_binding(c, s, p, err, errlen) < 0)
        return -1;
    if (!p->finished_field != !p->n_finished_values)
        return serr(c, config_setting_get_member(s, "workload"), err, errlen,
                    "workload: finished_field and finished_values go together (finished_field = "
                    "\"status.phase\"; finished_values = [ \"Succeeded\", \"Failed\" ];)");
    if (p->backoff_max_ms < p->backoff_initial_ms)
        return serr(c, config_setting_get_member(s, "backoff"), err, errlen,
                    "backoff.max_ms must be >= backoff.initial_ms");
    config_setting_t *pa = config_setting_get_member(s, "plugin_args");
    if (pa && !config_setting_is_group(pa))
        return serr(c, pa, err, errlen, "'plugin_args' must be a group { key = value; }");
    p->plugin_args = pa;
    config_setting_t *pl = config_setting_get_member(s, "plugins");
    if (!config_setting_is_list(pl) && !config_setting_is_array(pl))
        return serr(c, pl, err, errlen, "plugins must be a list ( { name = \"...\"; }, ... )");
    int n = config_setting_length(pl);
    p->plugins = xcalloc((size_t)(n ? n : 1), sizeof *p->plugins);
    for (int i = 0; i < n; i++) {
        if (load_plugin(c, p, config_setting_get_elem(pl, (unsigned)i), &p->plugins[i], err,
                        errlen) < 0) {
            free_plugin(&p->plugins[i]);
            return -1;
        }
        p->n_plugins++;
    }
    return 0;
}

static void free_profile(cfg_profile *p)
{
    settings_free(profile_settings, p);
    for (size_t i = 0; i < p->n_plugins; i++)
        free_plugin(&p->plugins[i]);
    free(p->plugins);
}

/* The group http { enabled; address; port; }: every member optional. */
static int load_http(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    static const char *const keys[] = {
        "enabled", "address", "port", "liveness_timeout_ms", "plugin_metrics_sample_percent", NULL};
    c->http_enabled = 1;
    c->http_address = xstrdup("127.0.0.1");
    c->http_port = 10259;
    c->liveness_timeout_ms = 30000;
    c->plugin_metrics_sample_percent = 10;
    config_setting_t *h = config_setting_get_member(root, "http");
    if (!h)
        return 0;
    if (!config_setting_is_group(h))
        return serr(c, h, err, errlen,
                    "http must be a group { enabled = true; address = \"127.0.0.1\"; "
                    "port = 10259; }");
    if (check_keys(c, h, keys, err, errlen) < 0)
        return -1;
    config_setting_t *s = config_setting_get_member(h, "enabled");
    if (s) {
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
            return serr(c, s, err, errlen, "http.enabled: expected true or false");
        c->http_enabled = config_setting_get_bool(s);
    }
    s = config_setting_get_member(h, "address");
    if (s) {
        const char *a = config_setting_get_string(s);
        struct in_addr in;
        if (!a || inet_pton(AF_INET, a, &in) != 1)
            return errf(err, errlen,
                        "%s:%d: http.address: expected an IPv4 address like \"127.0.0.1\", "
                        "got %s%s%s",
                        sfile(c, s), config_setting_source_line(s), a ? "\"" : "",
                        a ? a : "a value that is not a string", a ? "\"" : "");
        free(c->http_address);
        c->http_address = xstrdup(a);
    }
    s = config_setting_get_member(h, "port");
    if (s) {
        int t = config_setting_type(s);
        if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
            return serr(c, s, err, errlen, "http.port: expected 0..65535, got a non-integer");
        long long v = config_setting_get_int64(s);
        if (v < 0 || v > 65535)
            return errf(err, errlen, "%s:%d: http.port: expected 0..65535, got %lld", sfile(c, s),
                        config_setting_source_line(s), v);
        c->http_port = (int)v;
    }
    long long lt = c->liveness_timeout_ms;
    if (get_int(c, h, "liveness_timeout_ms", 1000, 86400000LL, &lt, err, errlen) < 0)
        return -1;
    c->liveness_timeout_ms = (uint32_t)lt;
    long long sp = c->plugin_metrics_sample_percent;
    if (get_int(c, h, "plugin_metrics_sample_percent", 0, 100, &sp, err, errlen) < 0)
        return -1;
    c->plugin_metrics_sample_percent = (int)sp;
    return 0;
}

/* plugin_dirs = [ ... ], resolved against the config's directory. */
static int load_plugin_dirs(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    config_setting_t *dirs = config_setting_get_member(root, "plugin_dirs");
    if (!dirs)
        return 0;
    if (!config_setting_is_array(dirs) && !config_setting_is_list(dirs))
        return serr(c, dirs, err, errlen, "plugin_dirs must be a list of strings [ \"dir\", ... ]");
    int n = config_setting_length(dirs);
    c->plugin_dirs = xcalloc((size_t)(n ? n : 1), sizeof *c->plugin_dirs);
    for (int i = 0; i < n; i++) {
        const char *d = config_setting_get_string_elem(dirs, i);
        if (!d)
            return serr(c, dirs, err, errlen, "plugin_dirs must be a list of strings");
        c->plugin_dirs[c->n_plugin_dirs++] =
            d[0] == '/' ? xstrdup(d) : xasprintf("%s/%s", c->dir, d);
    }
    return 0;
}

/* A path of the config resolved against its directory (NULL stays). */
static void resolve(const cfg *c, char **path)
{
    if (*path && (*path)[0] != '/') {
        char *abs = xasprintf("%s/%s", c->dir, *path);
        free(*path);
        *path = abs;
    }
}

/* endpoints = [ "http://host:port", ... ]: a non-empty list of http(s)
 * URLs without a path. */
static int load_endpoints(cfg *c, const config_setting_t *st, char *err, size_t errlen)
{
    config_setting_t *eps = config_setting_get_member(st, "endpoints");
    if (!eps)
        return serr(c, st, err, errlen,
                    "store: an etcd store needs endpoints = [ \"http://127.0.0.1:2379\", ... ]");
    int n = config_setting_length(eps);
    if ((!config_setting_is_array(eps) && !config_setting_is_list(eps)) || n == 0)
        return serr(c, eps, err, errlen,
                    "store.endpoints must be a non-empty list of URLs [ \"http://host:2379\" ]");
    c->store.endpoints = xcalloc((size_t)n, sizeof *c->store.endpoints);
    for (int i = 0; i < n; i++) {
        const char *u = config_setting_get_string_elem(eps, i);
        if (!u)
            return serr(c, eps, err, errlen, "store.endpoints must be a list of strings");
        const char *rest = strncmp(u, "http://", 7) == 0    ? u + 7
                           : strncmp(u, "https://", 8) == 0 ? u + 8
                                                            : NULL;
        if (!rest || !*rest || strchr(rest, '/') || strchr(rest, ' ')) {
            char what[512];
            snprintf(what, sizeof what,
                     "store.endpoints: '%.200s' is not an endpoint: expected http://HOST:PORT or "
                     "https://HOST:PORT (no path)",
                     u);
            return serr(c, eps, err, errlen, what);
        }
        c->store.endpoints[c->store.n_endpoints++] = xstrdup(u);
    }
    return 0;
}

/* tls = { ca = "..."; cert = "..."; key = "..."; }: files that must be
 * readable; cert and key together. */
static int load_tls(cfg *c, const config_setting_t *st, char *err, size_t errlen)
{
    static const char *const tkeys[] = {"ca", "cert", "key", NULL};
    config_setting_t *t = config_setting_get_member(st, "tls");
    if (!t)
        return 0;
    if (!config_setting_is_group(t))
        return serr(c, t, err, errlen,
                    "store.tls must be a group { ca = \"ca.pem\"; cert = \"client.pem\"; key = "
                    "\"client-key.pem\"; }");
    cfg_store *sc = &c->store;
    if (check_keys(c, t, tkeys, err, errlen) < 0 ||
        get_str(c, t, "ca", 0, &sc->tls_ca, err, errlen) < 0 ||
        get_str(c, t, "cert", 0, &sc->tls_cert, err, errlen) < 0 ||
        get_str(c, t, "key", 0, &sc->tls_key, err, errlen) < 0)
        return -1;
    if (!sc->tls_cert != !sc->tls_key)
        return serr(c, t, err, errlen,
                    "store.tls: a client certificate needs its key: give both cert and key");
    char **files[] = {&sc->tls_ca, &sc->tls_cert, &sc->tls_key};
    const char *names[] = {"ca", "cert", "key"};
    for (int i = 0; i < 3; i++) {
        resolve(c, files[i]);
        if (*files[i] && access(*files[i], R_OK) != 0) {
            char what[1024];
            snprintf(what, sizeof what, "store.tls.%s: cannot read %.900s: %s", names[i], *files[i],
                     strerror(errno));
            return serr(c, config_setting_get_member(t, names[i]), err, errlen, what);
        }
    }
    return 0;
}

/* The etcd store's settings. */
static int load_etcd(cfg *c, const config_setting_t *st, char *err, size_t errlen)
{
    cfg_store *sc = &c->store;
    long long ttl = 15, timeout = 5000, wt = 660000;
    if (load_endpoints(c, st, err, errlen) < 0 || load_tls(c, st, err, errlen) < 0 ||
        get_str(c, st, "prefix", 0, &sc->prefix, err, errlen) < 0 ||
        get_int(c, st, "lease_ttl_s", 2, 3600, &ttl, err, errlen) < 0 ||
        get_int(c, st, "timeout_ms", 100, 600000, &timeout, err, errlen) < 0 ||
        get_int(c, st, "watch_timeout_ms", 1000, 86400000LL, &wt, err, errlen) < 0)
        return -1;
    if (!sc->prefix)
        sc->prefix = xstrdup("/trellis");
    size_t n = strlen(sc->prefix);
    if (n == 0 || sc->prefix[0] != '/' || sc->prefix[n - 1] == '/')
        return serr(c, config_setting_get_member(st, "prefix"), err, errlen,
                    "store.prefix: expected a key prefix that starts with '/' and does not end "
                    "with one, such as \"/trellis\"");
    sc->lease_ttl_s = (uint32_t)ttl;
    sc->timeout_ms = (uint32_t)timeout;
    sc->watch_timeout_ms = (uint32_t)wt;
    if (sc->path)
        return serr(c, config_setting_get_member(st, "path"), err, errlen,
                    "store.path is the file store's directory: an etcd store has none (remove "
                    "it)");
    return 0;
}

/* A list of strings (NULL: absent). 0, or -1 with err. */
static int get_str_list(cfg *c, const config_setting_t *group, const char *key, char ***out,
                        size_t *n, const char *what, char *err, size_t errlen)
{
    config_setting_t *l = config_setting_get_member(group, key);
    if (!l)
        return 0;
    int len = config_setting_length(l);
    if (!config_setting_is_array(l) && !config_setting_is_list(l))
        return serr(c, l, err, errlen, what);
    *out = xcalloc((size_t)len + 1, sizeof **out);
    for (int i = 0; i < len; i++) {
        const char *v = config_setting_get_string_elem(l, i);
        if (!v || !*v)
            return serr(c, l, err, errlen, what);
        (*out)[(*n)++] = xstrdup(v);
    }
    return 0;
}

/* The Kubernetes API store's settings. */
static int load_kube(cfg *c, const config_setting_t *st, char *err, size_t errlen)
{
    static const char *const rkeys[] = {"kind", "api_version", "plural", "namespaced", NULL};
    cfg_store *sc = &c->store;
    long long ttl = 15, timeout = 10000, wt = 300000;
    if (get_str(c, st, "kubeconfig", 0, &sc->kubeconfig, err, errlen) < 0 ||
        get_str(c, st, "context", 0, &sc->context, err, errlen) < 0 ||
        get_str(c, st, "lease_namespace", 0, &sc->lease_namespace, err, errlen) < 0 ||
        get_str(c, st, "lease_name", 0, &sc->lease_name, err, errlen) < 0 ||
        get_int(c, st, "lease_ttl_s", 3, 3600, &ttl, err, errlen) < 0 ||
        get_int(c, st, "timeout_ms", 100, 600000, &timeout, err, errlen) < 0 ||
        get_int(c, st, "watch_timeout_ms", 1000, 86400000LL, &wt, err, errlen) < 0 ||
        get_str_list(c, st, "kinds", &sc->kinds, &sc->n_kinds,
                     "store.kinds must be a list of kinds [ \"Pod\", \"Node\" ]", err, errlen) < 0)
        return -1;
    sc->lease_ttl_s = (uint32_t)ttl;
    sc->timeout_ms = (uint32_t)timeout;
    sc->watch_timeout_ms = (uint32_t)wt;
    if (!sc->lease_namespace)
        sc->lease_namespace = xstrdup("kube-system");
    if (!sc->lease_name)
        sc->lease_name = xstrdup("trellis");
    if (sc->kubeconfig) {
        resolve(c, &sc->kubeconfig);
        if (access(sc->kubeconfig, R_OK) != 0) {
            char what[1200];
            snprintf(what, sizeof what, "store.kubeconfig: cannot read %.900s: %s", sc->kubeconfig,
                     strerror(errno));
            return serr(c, config_setting_get_member(st, "kubeconfig"), err, errlen, what);
        }
    }
    if (sc->path)
        return serr(c, config_setting_get_member(st, "path"), err, errlen,
                    "store.path is the file store's directory: the Kubernetes API store has none "
                    "(remove it)");
    config_setting_t *rs = config_setting_get_member(st, "resources");
    if (!rs)
        return 0;
    static const char *const rshape =
        "store.resources must be a list ( { kind = \"Shoot\"; api_version = "
        "\"core.gardener.cloud/v1beta1\"; plural = \"shoots\"; namespaced = true; }, ... )";
    if (!config_setting_is_list(rs))
        return serr(c, rs, err, errlen, rshape);
    int n = config_setting_length(rs);
    sc->resources = xcalloc((size_t)n + 1, sizeof *sc->resources);
    for (int i = 0; i < n; i++) {
        config_setting_t *r = config_setting_get_elem(rs, (unsigned)i);
        cfg_kube_resource *kr = &sc->resources[sc->n_resources++];
        kr->namespaced = 1;
        if (!config_setting_is_group(r))
            return serr(c, r, err, errlen, rshape);
        if (check_keys(c, r, rkeys, err, errlen) < 0 ||
            get_str(c, r, "kind", 1, &kr->kind, err, errlen) < 0 ||
            get_str(c, r, "api_version", 1, &kr->api_version, err, errlen) < 0 ||
            get_str(c, r, "plural", 1, &kr->plural, err, errlen) < 0 ||
            get_bool(c, r, "namespaced", &kr->namespaced, err, errlen) < 0)
            return -1;
        if (strchr(kr->plural, '/') || strchr(kr->api_version, ' '))
            return serr(c, r, err, errlen, rshape);
    }
    return 0;
}

/* store = { type = "file"; path = "..."; } or { type = "etcd"; endpoints =
 * [...]; ... } or { type = "kubernetes"; kubeconfig = "..."; ... }, paths
 * resolved. */
static int load_store(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    static const char *const skeys[] = {"type",
                                        "path",
                                        "endpoints",
                                        "prefix",
                                        "tls",
                                        "lease_ttl_s",
                                        "timeout_ms",
                                        "watch_timeout_ms",
                                        "kubeconfig",
                                        "context",
                                        "lease_namespace",
                                        "lease_name",
                                        "kinds",
                                        "resources",
                                        NULL};
    static const char *const etcd_only[] = {"endpoints",  "prefix",           "tls", "lease_ttl_s",
                                            "timeout_ms", "watch_timeout_ms", NULL};
    static const char *const kube_only[] = {
        "kubeconfig", "context", "lease_namespace", "lease_name", "kinds", "resources", NULL};
    config_setting_t *st = config_setting_get_member(root, "store");
    cfg_store *sc = &c->store;
    sc->type = xstrdup("file");
    sc->file = xstrdup(st ? sfile(c, st) : "");
    sc->line = st ? config_setting_source_line(st) : 0;
    if (!st)
        return 0;
    if (!config_setting_is_group(st))
        return serr(c, st, err, errlen,
                    "store must be a group { type = \"file\"; path = \"...\"; } or { type = "
                    "\"etcd\"; endpoints = [ ... ]; }");
    char *type = NULL;
    if (check_keys(c, st, skeys, err, errlen) < 0 ||
        get_str(c, st, "type", 0, &type, err, errlen) < 0 ||
        get_str(c, st, "path", 0, &sc->path, err, errlen) < 0)
        return -1;
    if (type) {
        free(sc->type);
        sc->type = type;
    }
    int is_etcd = strcmp(sc->type, "etcd") == 0, is_kube = strcmp(sc->type, "kubernetes") == 0;
    if (!is_etcd && !is_kube && strcmp(sc->type, "file") != 0)
        return serr(c, config_setting_get_member(st, "type"), err, errlen,
                    "store.type: expected \"file\", \"etcd\" or \"kubernetes\"");
    for (const char *const *k = kube_only; !is_kube && *k; k++)
        if (config_setting_get_member(st, *k)) {
            char what[256];
            snprintf(what, sizeof what,
                     "store.%s is a setting of the Kubernetes API store: set type = "
                     "\"kubernetes\" or remove it",
                     *k);
            return serr(c, config_setting_get_member(st, *k), err, errlen, what);
        }
    if (is_etcd)
        return load_etcd(c, st, err, errlen);
    static const char *const not_kube[] = {"endpoints", "prefix", "tls", NULL};
    for (const char *const *k = not_kube; is_kube && *k; k++)
        if (config_setting_get_member(st, *k)) {
            char what[256];
            snprintf(what, sizeof what,
                     "store.%s is a setting of the etcd store: the Kubernetes API store reads "
                     "its server and credentials from store.kubeconfig",
                     *k);
            return serr(c, config_setting_get_member(st, *k), err, errlen, what);
        }
    if (is_kube)
        return load_kube(c, st, err, errlen);
    for (const char *const *k = etcd_only; *k; k++)
        if (config_setting_get_member(st, *k)) {
            char what[256];
            snprintf(what, sizeof what,
                     "store.%s is a setting of the etcd store: set type = \"etcd\" or remove it",
                     *k);
            return serr(c, config_setting_get_member(st, *k), err, errlen, what);
        }
    resolve(c, &sc->path);
    return 0;
}

/* profiles = ( { ... }, ... ): names unique, one default per kind. */
static int load_profiles(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    config_setting_t *profs = config_setting_get_member(root, "profiles");
    if (!profs)
        return errf(err, errlen, "%s: missing setting 'profiles'", c->file);
    if (!config_setting_is_list(profs) || config_setting_length(profs) == 0)
        return serr(c, profs, err, errlen, "profiles must be a non-empty list ( { ... }, ... )");
    int n = config_setting_length(profs);
    c->profiles = xcalloc((size_t)n, sizeof *c->profiles);
    for (int i = 0; i < n; i++) {
        cfg_profile *p = &c->profiles[i];
        if (load_profile(c, config_setting_get_elem(profs, (unsigned)i), p, err, errlen) < 0) {
            free_profile(p);
            return -1;
        }
        c->n_profiles++;
        for (int j = 0; j < i; j++) {
            const cfg_profile *q = &c->profiles[j];
            if (strcmp(q->name, p->name) == 0)
                return errf(err, errlen, "%s:%d: a profile named '%s' already exists (line %d)",
                            c->file, p->line, p->name, q->line);
            if (p->is_default && q->is_default && strcmp(q->workload_kind, p->workload_kind) == 0)
                return errf(err, errlen,
                            "%s:%d: profiles '%s' and '%s' are both default for kind %s", c->file,
                            p->line, q->name, p->name, p->workload_kind);
            if (p->binding_model == BINDING_OBJECT && q->binding_model == BINDING_OBJECT &&
                strcmp(p->bobj_kind, q->bobj_kind) == 0)
                return errf(err, errlen,
                            "%s:%d: profiles '%s' and '%s' both record placements as %s objects; "
                            "each needs a binding kind of its own",
                            c->file, p->line, q->name, p->name, p->bobj_kind);
        }
    }
    return 0;
}

/* `now = "RFC 3339"`: the instant a run decides at. */
static int load_now(cfg *c, const config_setting_t *root, char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(root, "now");
    if (!s)
        return 0; /* the system clock */
    if (get_str(c, root, "now", 1, &c->now, err, errlen) < 0)
        return -1;
    if (clock_parse(c->now, &c->now_ms) < 0)
        return errf(err, errlen,
                    "%s:%d: 'now' must be an RFC 3339 time such as \"2026-01-31T12:00:00Z\", "
                    "got '%s'",
                    sfile(c, s), config_setting_source_line(s), c->now);
    return 0;
}

int config_load(const char *file, cfg *c, char *err, size_t errlen)
{
    static const char *const keys[] = {"plugin_dirs", "parallelism", "summary_interval_ms",
                                       "now",         "store",       "http",
                                       "profiles",    NULL};
    memset(c, 0, sizeof *c);
    c->file = xstrdup(file);
    char *tmp = xstrdup(file);
    c->dir = xstrdup(dirname(tmp));
    free(tmp);
    config_init(&c->lc);
    if (access(file, R_OK) != 0) {
        errf(err, errlen, "%s: cannot read the config file: %m", file);
        goto fail;
    }
    size_t len;
    char *text = read_file(file, &len, err, errlen);
    if (!text)
        goto fail;
    if (kubesched_detect(text, len)) {
        c->kube_config = 1;
        int rc = kubesched_translate(file, text, len, &c->lc, &c->notice, err, errlen);
        free(text);
        if (rc < 0)
            goto fail;
        if (c->notice)
            log_msg(TRELLIS_LOG_INFO, NULL, "%s", c->notice);
    } else {
        free(text);
        if (!config_read_file(&c->lc, file)) {
            errf(err, errlen, "%s:%d: %s",
                 config_error_file(&c->lc) ? config_error_file(&c->lc) : file,
                 config_error_line(&c->lc), config_error_text(&c->lc));
            goto fail;
        }
    }
    config_setting_t *root = config_root_setting(&c->lc);
    long long par = 0, summary = 60000;
    if (check_keys(c, root, keys, err, errlen) < 0 || load_plugin_dirs(c, root, err, errlen) < 0 ||
        get_int(c, root, "parallelism", 0, 256, &par, err, errlen) < 0 ||
        get_int(c, root, "summary_interval_ms", 0, 86400000LL, &summary, err, errlen) < 0 ||
        load_now(c, root, err, errlen) < 0 || load_store(c, root, err, errlen) < 0 ||
        load_http(c, root, err, errlen) < 0 || load_profiles(c, root, err, errlen) < 0)
        goto fail;
    c->parallelism = (int)par;
    c->summary_interval_ms = (uint32_t)summary;
    return 0;
fail:
    config_free(c);
    return -1;
}

static int config_set_now(cfg *c, const char *text, char *err, size_t errlen)
{
    int64_t ms;
    if (!text)
        return 0;
    if (clock_parse(text, &ms) < 0)
        return errf(err, errlen,
                    "--now: expected an RFC 3339 time such as 2026-01-31T12:00:00Z, got '%s'",
                    text);
    free(c->now);
    c->now = xstrdup(text);
    c->now_ms = ms;
    return 0;
}

void config_store_free(cfg_store *sc)
{
    free(sc->type);
    free(sc->path);
    for (size_t i = 0; i < sc->n_endpoints; i++)
        free(sc->endpoints[i]);
    free(sc->endpoints);
    free(sc->prefix);
    free(sc->tls_ca);
    free(sc->tls_cert);
    free(sc->tls_key);
    free(sc->kubeconfig);
    free(sc->context);
    free(sc->lease_namespace);
    free(sc->lease_name);
    for (size_t i = 0; i < sc->n_kinds; i++)
        free(sc->kinds[i]);
    free(sc->kinds);
    for (size_t i = 0; i < sc->n_resources; i++) {
        free(sc->resources[i].kind);
        free(sc->resources[i].api_version);
        free(sc->resources[i].plural);
    }
    free(sc->resources);
    free(sc->file);
    memset(sc, 0, sizeof *sc);
}

int config_load_store(const char *file, cfg_store *sc, char *err, size_t errlen)
{
    cfg c;
    memset(&c, 0, sizeof c);
    memset(sc, 0, sizeof *sc);
    c.file = xstrdup(file);
    char *tmp = xstrdup(file);
    c.dir = xstrdup(dirname(tmp));
    free(tmp);
    config_init(&c.lc);
    int rc = -1;
    if (access(file, R_OK) != 0)
        errf(err, errlen, "%s: cannot read the config file: %m", file);
    else if (!config_read_file(&c.lc, file))
        errf(err, errlen, "%s:%d: %s", config_error_file(&c.lc) ? config_error_file(&c.lc) : file,
             config_error_line(&c.lc), config_error_text(&c.lc));
    else if (load_store(&c, config_root_setting(&c.lc), err, errlen) == 0)
        rc = 0;
    if (rc == 0) {
        *sc = c.store;
        memset(&c.store, 0, sizeof c.store);
    }
    config_free(&c);
    return rc;
}

int config_load_at(const char *file, const char *now, cfg *c, char *err, size_t errlen)
{
    if (config_load(file, c, err, errlen) < 0)
        return -1;
    if (config_set_now(c, now, err, errlen) < 0) {
        config_free(c);
        return -1;
    }
    return 0;
}

void config_free(cfg *c)
{
    for (size_t i = 0; i < c->n_profiles; i++)
        free_profile(&c->profiles[i]);
    free(c->profiles);
    for (size_t i = 0; i < c->n_plugin_dirs; i++)
        free(c->plugin_dirs[i]);
    free(c->plugin_dirs);
    free(c->now);
    config_store_free(&c->store);
    free(c->http_address);
    free(c->notice);
    free(c->file);
    free(c->dir);
    config_destroy(&c->lc);
    memset(c, 0, sizeof *c);
}

/* ---- the effective configuration as JSON (/configz) ---- */

static json_object *jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL; /* NULL: JSON null */
}

static json_object *jstr_array(char *const *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, jstr(v[i]));
    return a;
}

/* A libconfig setting as JSON: groups objects, lists and arrays arrays. */
static json_object *setting_json(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: {
        json_object *o = json_object_new_object();
        for (int i = 0; i < config_setting_length(s); i++) {
            const config_setting_t *m = config_setting_get_elem(s, (unsigned)i);
            json_object_object_add(o, config_setting_name(m), setting_json(m));
        }
        return o;
    }
    case CONFIG_TYPE_LIST:
    case CONFIG_TYPE_ARRAY: {
        json_object *a = json_object_new_array();
        for (int i = 0; i < config_setting_length(s); i++)
            json_object_array_add(a, setting_json(config_setting_get_elem(s, (unsigned)i)));
        return a;
    }
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return json_object_new_int64(config_setting_get_int64(s));
    case CONFIG_TYPE_FLOAT:
        return json_object_new_double(config_setting_get_float(s));
    case CONFIG_TYPE_BOOL:
        return json_object_new_boolean(config_setting_get_bool(s));
    case CONFIG_TYPE_STRING:
        return json_object_new_string(config_setting_get_string(s));
    default:
        return NULL;
    }
}

static json_object *plugin_json(const cfg_plugin *pl)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", jstr(pl->name));
    json_object_object_add(o, "as", jstr(pl->instance));
    json_object_object_add(o, "path", jstr(pl->path));
    json_object_object_add(o, "weight", json_object_new_int(pl->weight));
    json_object_object_add(o, "ignorable", json_object_new_boolean(pl->ignorable));
    json_object *pts = json_object_new_array();
    for (unsigned bit = 1; bit & PT_ALL; bit <<= 1)
        if (pl->points & bit)
            json_object_array_add(pts, json_object_new_string(config_point_name(bit)));
    json_object_object_add(o, "points", pts);
    json_object_object_add(o, "args", pl->args ? setting_json(pl->args) : json_object_new_object());
    return o;
}

static json_object *profile_json(const cfg_profile *p)
{
    json_object *o = settings_json(profile_settings, p);
    json_object *pls = json_object_new_array();
    for (size_t i = 0; i < p->n_plugins; i++)
        json_object_array_add(pls, plugin_json(&p->plugins[i]));
    json_object_object_add(o, "plugins", pls);
    json_object_object_add(
        o, "plugin_args", p->plugin_args ? setting_json(p->plugin_args) : json_object_new_object());
    return o;
}

char *config_to_json(const cfg *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", jstr(c->file));
    json_object_object_add(o, "plugin_dirs", jstr_array(c->plugin_dirs, c->n_plugin_dirs));
    json_object_object_add(o, "parallelism", json_object_new_int(c->parallelism));
    json_object_object_add(o, "summary_interval_ms", json_object_new_int64(c->summary_interval_ms));
    json_object_object_add(o, "now", jstr(c->now));
    json_object *st = json_object_new_object();
    const cfg_store *sc = &c->store;
    json_object_object_add(st, "type", jstr(sc->type));
    json_object_object_add(st, "path", jstr(sc->path));
    if (sc->n_endpoints) {
        json_object_object_add(st, "endpoints", jstr_array(sc->endpoints, sc->n_endpoints));
        json_object_object_add(st, "prefix", jstr(sc->prefix));
        json_object *t = json_object_new_object();
        json_object_object_add(t, "ca", jstr(sc->tls_ca));
        json_object_object_add(t, "cert", jstr(sc->tls_cert));
        json_object_object_add(t, "key", jstr(sc->tls_key));
        json_object_object_add(st, "tls", t);
        json_object_object_add(st, "lease_ttl_s", json_object_new_int64(sc->lease_ttl_s));
        json_object_object_add(st, "timeout_ms", json_object_new_int64(sc->timeout_ms));
        json_object_object_add(st, "watch_timeout_ms", json_object_new_int64(sc->watch_timeout_ms));
    }
    if (sc->type && strcmp(sc->type, "kubernetes") == 0) {
        json_object_object_add(st, "kubeconfig", jstr(sc->kubeconfig));
        json_object_object_add(st, "context", jstr(sc->context));
        json_object_object_add(st, "lease_namespace", jstr(sc->lease_namespace));
        json_object_object_add(st, "lease_name", jstr(sc->lease_name));
        json_object_object_add(st, "lease_ttl_s", json_object_new_int64(sc->lease_ttl_s));
        json_object_object_add(st, "timeout_ms", json_object_new_int64(sc->timeout_ms));
        json_object_object_add(st, "watch_timeout_ms", json_object_new_int64(sc->watch_timeout_ms));
        json_object_object_add(st, "kinds", jstr_array(sc->kinds, sc->n_kinds));
        json_object *rs = json_object_new_array();
        for (size_t i = 0; i < sc->n_resources; i++) {
            const cfg_kube_resource *r = &sc->resources[i];
            json_object *ro = json_object_new_object();
            json_object_object_add(ro, "kind", jstr(r->kind));
            json_object_object_add(ro, "api_version", jstr(r->api_version));
            json_object_object_add(ro, "plural", jstr(r->plural));
            json_object_object_add(ro, "namespaced", json_object_new_boolean(r->namespaced));
            json_object_array_add(rs, ro);
        }
        json_object_object_add(st, "resources", rs);
    }
    json_object_object_add(o, "store", st);
    json_object *h = json_object_new_object();
    json_object_object_add(h, "enabled", json_object_new_boolean(c->http_enabled));
    json_object_object_add(h, "address", jstr(c->http_address));
    json_object_object_add(h, "port", json_object_new_int(c->http_port));
    json_object_object_add(h, "liveness_timeout_ms", json_object_new_int64(c->liveness_timeout_ms));
    json_object_object_add(h, "plugin_metrics_sample_percent",
                           json_object_new_int(c->plugin_metrics_sample_percent));
    json_object_object_add(o, "http", h);
    json_object *profs = json_object_new_array();
    for (size_t i = 0; i < c->n_profiles; i++)
        json_object_array_add(profs, profile_json(&c->profiles[i]));
    json_object_object_add(o, "profiles", profs);
    char *text = xasprintf("%s\n", json_object_to_json_string_ext(
                                       o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                              JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return text;
}
