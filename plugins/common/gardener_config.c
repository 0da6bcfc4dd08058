/*
 * gardener_config.c - see gardener_config.h. The keys are those of
 * gardener's pkg/apis/config/scheduler/v1alpha1 (SchedulerConfiguration)
 * and of the component-base types it embeds (ClientConnectionConfiguration,
 * LeaderElectionConfiguration, DebuggingConfiguration); the strategy is
 * checked as gardener's validation does.
 */
#include "gardener_config.h"

#include <stdio.h>
#include <string.h>

#include "values.h"

/* What a key holds. */
enum {
    K_SCALAR = 0, /* a scalar the controller uses; ignored */
    K_MAP,        /* a map whose keys are listed in sub */
    K_ANY_MAP,    /* a map of anything (feature gates); ignored */
    K_STRATEGY    /* the one key that decides placements */
};

typedef struct key_spec {
    const char *key;
    int kind;
    const struct key_spec *sub; /* K_MAP */
    int ignored;                /* listed as ignored when present */
} key_spec;

static const key_spec client_connection[] = {
    {"kubeconfig", K_SCALAR, NULL, 0},  {"acceptContentTypes", K_SCALAR, NULL, 0},
    {"contentType", K_SCALAR, NULL, 0}, {"qps", K_SCALAR, NULL, 0},
    {"burst", K_SCALAR, NULL, 0},       {NULL, 0, NULL, 0},
};

static const key_spec leader_election[] = {
    {"leaderElect", K_SCALAR, NULL, 0},       {"leaseDuration", K_SCALAR, NULL, 0},
    {"renewDeadline", K_SCALAR, NULL, 0},     {"retryPeriod", K_SCALAR, NULL, 0},
    {"resourceLock", K_SCALAR, NULL, 0},      {"resourceName", K_SCALAR, NULL, 0},
    {"resourceNamespace", K_SCALAR, NULL, 0}, {NULL, 0, NULL, 0},
};

static const key_spec server_endpoint[] = {
    {"bindAddress", K_SCALAR, NULL, 0},
    {"port", K_SCALAR, NULL, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec server[] = {
    {"healthProbes", K_MAP, server_endpoint, 0},
    {"metrics", K_MAP, server_endpoint, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec debugging[] = {
    {"enableProfiling", K_SCALAR, NULL, 0},
    {"enableContentionProfiling", K_SCALAR, NULL, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec backup_bucket[] = {
    {"concurrentSyncs", K_SCALAR, NULL, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec shoot[] = {
    {"concurrentSyncs", K_SCALAR, NULL, 1},
    {"candidateDeterminationStrategy", K_STRATEGY, NULL, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec schedulers[] = {
    {"backupBucket", K_MAP, backup_bucket, 1},
    {"shoot", K_MAP, shoot, 0},
    {NULL, 0, NULL, 0},
};

static const key_spec root[] = {
    {"apiVersion", K_SCALAR, NULL, 0},
    {"kind", K_SCALAR, NULL, 0},
    {"clientConnection", K_MAP, client_connection, 1},
    {"leaderElection", K_MAP, leader_election, 1},
    {"logLevel", K_SCALAR, NULL, 1},
    {"logFormat", K_SCALAR, NULL, 1},
    {"server", K_MAP, server, 1},
    {"debugging", K_MAP, debugging, 1},
    {"schedulers", K_MAP, schedulers, 0},
    {"featureGates", K_ANY_MAP, NULL, 1},
    {NULL, 0, NULL, 0},
};

typedef struct walk {
    const trellis_host *h;
    gardener_config *c;
    const key_spec *level;
    const char *path;  /* of the map being walked, "" at the root */
    const char **keys; /* the keys leading to it, keys[0..depth) */
    size_t depth;
    char *err;
    size_t errlen;
    int failed;
} walk;

static int walk_map(const walk *up, const trellis_value *m, const key_spec *level,
                    const char *path);

/* Record where the error is: the keys down to the member key. */
static int failed_at(walk *w, const char *key)
{
    size_t n = 0;

    for (; n < w->depth && n < GARDENER_CONFIG_DEPTH; n++)
        w->c->err_path[n] = w->keys[n];
    if (n < GARDENER_CONFIG_DEPTH)
        w->c->err_path[n++] = key;
    w->c->err_depth = n;
    return w->failed = 1;
}

static void known_keys(const key_spec *level, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (const key_spec *k = level; k->key && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", k == level ? "" : ", ", k->key);
}

static void note_ignored(gardener_config *c, const char *path)
{
    size_t n = strlen(c->ignored);

    snprintf(c->ignored + n, sizeof(c->ignored) - n, "%s%s", n ? ", " : "", path);
}

static int strategy(const trellis_host *h, const trellis_value *v, const char *path,
                    gardener_config *c, char *err, size_t errlen)
{
    const char *s = values_scalar_text(h, v);

    if (!v || h->value_type(v) == TRELLIS_VALUE_NULL || (s && !*s))
        return 0; /* Gardener's default, SameRegion, applies */
    if (s && strcmp(s, "SameRegion") == 0)
        c->strategy = GARDENER_SAME_REGION;
    else if (s && strcmp(s, "MinimalDistance") == 0)
        c->strategy = GARDENER_MINIMAL_DISTANCE;
    else if (s)
        return snprintf(err, errlen, "%s: expected SameRegion or MinimalDistance, got '%s'", path,
                        s),
               -1;
    else
        return snprintf(err, errlen, "%s: expected SameRegion or MinimalDistance, got %s", path,
                        values_type_name(h->value_type(v))),
               -1;
    return 0;
}

static int member(const char *key, const trellis_value *v, void *ud)
{
    walk *w = ud;
    const key_spec *k = w->level;
    char path[256], known[256];
    trellis_value_type t = v ? w->h->value_type(v) : TRELLIS_VALUE_NULL;

    values_member_path(path, sizeof(path), w->path, key, "./");
    if (!*w->path && path[0] == '.')
        memmove(path, path + 1, strlen(path));
    while (k->key && strcmp(k->key, key) != 0)
        k++;
    if (!k->key) {
        known_keys(w->level, known, sizeof(known));
        snprintf(w->err, w->errlen, "%s: unknown key (this level has: %s)", path, known);
        return failed_at(w, key);
    }
    if ((k->kind == K_MAP || k->kind == K_ANY_MAP) && t != TRELLIS_VALUE_MAP &&
        t != TRELLIS_VALUE_NULL) {
        snprintf(w->err, w->errlen, "%s: expected a map, got %s", path, values_type_name(t));
        return failed_at(w, key);
    }
    if (k->kind == K_SCALAR && (t == TRELLIS_VALUE_MAP || t == TRELLIS_VALUE_LIST)) {
        snprintf(w->err, w->errlen, "%s: expected a single value, got %s", path,
                 values_type_name(t));
        return failed_at(w, key);
    }
    if (k->ignored)
        note_ignored(w->c, path);
    if (k->kind == K_STRATEGY && strategy(w->h, v, path, w->c, w->err, w->errlen) < 0)
        return failed_at(w, key);
    if (k->kind == K_MAP && t == TRELLIS_VALUE_MAP && w->depth + 1 < GARDENER_CONFIG_DEPTH) {
        w->keys[w->depth] = key;
        if (walk_map(w, v, k->sub, path) < 0)
            return w->failed = 1;
    }
    return 0;
}

/* The members of map m, one level below up's (NULL: the root). */
static int walk_map(const walk *up, const trellis_value *m, const key_spec *level, const char *path)
{
    walk w = *up;

    w.level = level;
    w.path = path;
    w.depth = up->path ? up->depth + 1 : 0;
    w.failed = 0;
    w.h->value_foreach(m, member, &w);
    return w.failed ? -1 : 0;
}

/* apiVersion and kind must name the file format. */
static int check_type(const trellis_host *h, const trellis_value *doc, gardener_config *c,
                      char *err, size_t errlen)
{
    const char *api = values_scalar_text(h, h->value_get(doc, "apiVersion"));
    const char *kind = values_scalar_text(h, h->value_get(doc, "kind"));

    c->err_depth = 1;
    if (!api || strcmp(api, GARDENER_CONFIG_API_VERSION) != 0) {
        c->err_path[0] = "apiVersion";
        snprintf(err, errlen, "apiVersion: expected " GARDENER_CONFIG_API_VERSION ", got '%s'",
                 api ? api : "");
        return -1;
    }
    if (!kind || strcmp(kind, GARDENER_CONFIG_KIND) != 0) {
        c->err_path[0] = "kind";
        snprintf(err, errlen, "kind: expected " GARDENER_CONFIG_KIND ", got '%s'",
                 kind ? kind : "");
        return -1;
    }
    c->err_depth = 0;
    return 0;
}

int gardener_config_parse(const trellis_host *h, const trellis_value *doc, gardener_config *c,
                          char *err, size_t errlen)
{
    const char *keys[GARDENER_CONFIG_DEPTH] = {0};
    walk top = {h, c, NULL, NULL, keys, 0, err, errlen, 0};

    memset(c, 0, sizeof(*c));
    c->strategy = GARDENER_STRATEGY_UNSET;
    if (!doc || h->value_type(doc) != TRELLIS_VALUE_MAP) {
        snprintf(err, errlen,
                 "expected a map: Gardener's " GARDENER_CONFIG_KIND
                 " (apiVersion " GARDENER_CONFIG_API_VERSION ")");
        return -1;
    }
    if (check_type(h, doc, c, err, errlen) < 0)
        return -1;
    return walk_map(&top, doc, root, "");
}

int gardener_config_given(const trellis_host *h, const trellis_value *doc)
{
    return doc && !(h->value_type(doc) == TRELLIS_VALUE_MAP && h->value_len(doc) == 0);
}

const char *gardener_strategy_name(int strategy)
{
    return strategy == GARDENER_MINIMAL_DISTANCE ? "MinimalDistance" : "SameRegion";
}
