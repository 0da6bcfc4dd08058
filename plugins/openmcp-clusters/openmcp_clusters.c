/*
 * openmcp_clusters.c - the openmcp-clusters plugin: which existing
 * Clusters a ClusterRequest may be given, as the openMCP scheduler decides.
 *
 * A Cluster is a candidate when it is in scope (scope Cluster: any
 * namespace; Namespaced: the purpose template's namespace, else the
 * request's), its labels match selectors.clusters and the purpose's
 * selector, and its spec.purposes names the request's purpose. Then, each
 * rule an argument that can be switched off:
 *   recover        a candidate that already carries the request's finalizer
 *                  request.clusters.openmcp.cloud/<uid> is the request's
 *                  Cluster, before any other rule (a lost status);
 *   exclusive      an Exclusive purpose never reuses a Cluster;
 *   skip_deleting  a Shared purpose skips Clusters being deleted;
 *   tenancy_count  a Shared purpose with tenancyCount > 0 skips Clusters
 *                  that hold that many requests: the request finalizers on
 *                  the Cluster plus the requests assumed there in this run
 *                  (placed, their finalizers not written yet).
 * When nothing is left, openmcp-create makes a new Cluster.
 *
 * The pre-filter narrows each cycle (cycle_narrow, kube's PreFilterResult)
 * to the Clusters that can be candidates: those serving the request's
 * purpose, from an index of Clusters by purpose kept as Clusters are
 * prepared and released, in the request's namespace under a Namespaced
 * scope; only the recovered one after recovery; none for an Exclusive
 * purpose. The index notes where each Cluster was last found among the
 * cycle's targets, and looks again only for those that moved; a purpose's
 * last narrowing is kept, and takes in a Cluster created since. A Cluster
 * left out is explained by the plain filter, as before. The hot loop is
 * filter_span over target-value columns computed once per Cluster change
 * (purpose mask, namespace id, request count with deletion) and the host's
 * per-target counter of the requests placed and not bound when read (the
 * assumed ones): no string is compared per (request, Cluster) pair.
 * Arguments: config, default_scope (the scope when the configuration sets
 * none: "Namespaced" as openMCP's document says, "Cluster" as its current
 * code defaults), and the four switches above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "openmcp.h"
#include "values.h"
#include "trellis/helpers.h"
#include "trellis/plugin.h"

static const trellis_host *host;

/* A Cluster's prepared values, its columns: the purposes it serves, its
 * namespace id, and V_LOAD, its request finalizers or, when it is being
 * deleted, -1 minus them (the filter reads one column for both). */
enum { V_PURPOSES, V_NAMESPACE, V_LOAD, N_VALUES };

/* A load's request finalizers, and whether its Cluster is being deleted. */
static inline int64_t load_requests(int64_t load)
{
    return load < 0 ? -1 - load : load;
}

static inline int load_deleting(int64_t load)
{
    return load < 0;
}

struct clu;

#define ADDED_MAX 32 /* preparings a kept narrowing can take in */

typedef struct conf {
    omcp_config c;
    int recover, exclusive, skip_deleting, tenancy_count;
    /* namespaces and the request finalizers seen on Clusters; written in
     * prepare (main thread), read on the main thread */
    intern ids;
    /* per finalizer id: how many prepared Clusters carry it, and one of
     * them (NULL when it went), so that recovery finds it without a scan */
    int32_t *holders;
    struct clu **where;
    size_t cap;
    /* per purpose, the prepared Clusters that serve it (any order; each
     * knows its place, clu.at), with where each was last found among the
     * cycle's targets: a narrowing reads these entries, not the Clusters */
    struct members {
        struct member {
            struct clu *t;
            uint32_t pos;  /* POS_NEW: never looked for; POS_GONE: not there */
            uint32_t at_n; /* the cycle's target count when pos was found */
            int64_t ns;    /* the Cluster's namespace id */
        } * v;
        size_t n, cap;
    } serves[OMCP_PURPOSES_MAX];
    /* counts the Clusters prepared and released: while it and the
     * cycle's target count stay, every Cluster keeps its position */
    uint64_t gen;
    /* the Clusters prepared last (a ring; an entry's Cluster NULL once
     * released), each with the gen its preparing made: a narrowing made
     * k steps ago, all of them preparings kept here, and with k targets
     * fewer, takes those k in without looking for every other Cluster */
    struct added {
        struct clu *t;
        uint64_t gen;
        /* where it was found among at_n targets (0: not looked for): the
         * narrowings that take it in while no other target came find it
         * there, not each by name */
        uint32_t pos;
        size_t at_n;
    } added[ADDED_MAX];
    size_t n_added; /* preparings recorded: the last is added[(n_added - 1) % ADDED_MAX] */
    /* the narrowings, by purpose and namespace (open addressing, at most
     * half full; one for each the requests asked for, none dropped: a
     * table of fixed size made the namespaces of a Namespaced scope take
     * each other's place): the positions each gave, at gen with n targets */
    struct narrowing {
        int purpose;
        int64_t ns;
        int used;   /* the slot holds purpose and ns */
        int filled; /* idx[0..n) is a narrowing */
        uint64_t gen;
        size_t n_targets;
        uint32_t *idx;
        size_t n, cap;
    } * narrowed;
    size_t n_narrowed, cap_narrowed;
} conf;

enum { T_REQ = 1, T_CLU };

/* a request, prepared once per change */
typedef struct req {
    int tag;     /* T_REQ */
    int purpose; /* -1: unknown (openmcp-requests makes it an error) */
    int32_t ns;  /* the namespace a Namespaced scope searches; -1: any */
    char *fin;   /* request.clusters.openmcp.cloud/<uid>, "" without uid */
} req;

/* a Cluster, prepared once per change: the columns' values (also what
 * the plain filter reads), its identity and its request finalizers */
typedef struct clu {
    int tag; /* T_CLU */
    int64_t v[N_VALUES];
    /* requests assumed here that the Cluster carries the finalizer of
     * (recovered or created in this run): counted once, by the finalizer;
     * changed in reserve / unreserve on the main thread */
    int64_t dup;
    conf *cf;
    char *ns, *name;
    int32_t *fins;
    size_t n_fins;
    /* its place in cf->serves[k] for each purpose k it serves, by rank
     * among the bits of v[V_PURPOSES]; listed: whether it is in them */
    uint32_t *at;
    int listed;
} clu;

#define POS_NEW UINT32_MAX
#define POS_GONE (UINT32_MAX - 1)

/* one cycle */
typedef struct cyc {
    const req *r;
    int exclusive;
    int64_t limit; /* tenancyCount when it applies, else 0 */
    long rec;      /* the recovered Cluster's index, -1 when none */
    /* narrowed to the Clusters serving the purpose (in the namespace): the
     * host offers the filter no other */
    int narrowed;
} cyc;

static int prepare_workload(trellis_plugin *self, const trellis_object *w, void **data, char *err,
                            size_t errlen)
{
    conf *cf = host->get_private(self);
    req *r = calloc(1, sizeof *r);
    if (!r)
        return snprintf(err, errlen, "out of memory"), -1;
    r->tag = T_REQ;
    r->purpose = omcp_purpose_index(&cf->c, omcp_request_purpose(host, w));
    r->ns = -1;
    if (r->purpose >= 0 && cf->c.namespaced)
        r->ns = intern_id(&cf->ids, omcp_scope_namespace(&cf->c.purposes[r->purpose], host, w));
    char fin[OMCP_FINALIZER_MAX];
    r->fin = values_strdup(omcp_request_finalizer(host, w, fin, sizeof fin) < 0 ? "" : fin);
    *data = r;
    if (!r->fin)
        return snprintf(err, errlen, "out of memory"), -1;
    return 0;
}

/* Take t off the purpose index. */
static void unlist(clu *t)
{
    if (!t->listed)
        return;
    uint64_t m = (uint64_t)t->v[V_PURPOSES];
    for (size_t r = 0; m; r++, m &= m - 1) {
        struct members *ms = &t->cf->serves[__builtin_ctzll(m)];
        struct member last = ms->v[--ms->n];
        ms->v[t->at[r]] = last;
        /* last's place for this purpose: its rank of the same bit */
        uint64_t lm = (uint64_t)last.t->v[V_PURPOSES], bit = m & -m;
        last.t->at[__builtin_popcountll(lm & (bit - 1))] = t->at[r];
    }
    t->listed = 0;
}

/* Put t on the purpose index. 0, or -1 when out of memory. */
static int list(clu *t)
{
    uint64_t m = (uint64_t)t->v[V_PURPOSES];
    if (!m)
        return 0;
    t->at = calloc((size_t)__builtin_popcountll(m), sizeof *t->at);
    if (!t->at)
        return -1;
    for (size_t r = 0; m; r++, m &= m - 1) {
        struct members *ms = &t->cf->serves[__builtin_ctzll(m)];
        if (ms->n == ms->cap) {
            size_t cap = ms->cap ? 2 * ms->cap : 64;
            struct member *v = realloc(ms->v, cap * sizeof *v);
            if (!v) {
                /* undo the purposes listed so far */
                uint64_t done = (uint64_t)t->v[V_PURPOSES] & ~m;
                for (size_t q = 0; done; q++, done &= done - 1) {
                    struct members *d = &t->cf->serves[__builtin_ctzll(done)];
                    struct member last = d->v[--d->n];
                    d->v[t->at[q]] = last;
                    uint64_t lm = (uint64_t)last.t->v[V_PURPOSES], bit = done & -done;
                    last.t->at[__builtin_popcountll(lm & (bit - 1))] = t->at[q];
                }
                return -1;
            }
            ms->v = v;
            ms->cap = cap;
        }
        t->at[r] = (uint32_t)ms->n;
        ms->v[ms->n++] = (struct member){t, POS_NEW, 0, t->v[V_NAMESPACE]};
    }
    t->listed = 1;
    return 0;
}

static void release(trellis_plugin *self, void *data)
{
    (void)self;
    clu *t = data;
    if (t && t->tag == T_CLU) {
        t->cf->gen++;
        for (size_t k = 0; k < ADDED_MAX; k++)
            if (t->cf->added[k].t == t)
                t->cf->added[k].t = NULL;
        unlist(t);
        free(t->at);
        for (size_t i = 0; i < t->n_fins; i++) {
            t->cf->holders[t->fins[i]]--;
            if (t->cf->where[t->fins[i]] == t)
                t->cf->where[t->fins[i]] = NULL;
        }
        free(t->fins);
        free(t->ns);
        free(t->name);
    } else if (t) {
        free(((req *)data)->fin);
    }
    free(data);
}

/* Note that t carries finalizer id. 0, or -1 when out of memory. */
static int hold(conf *cf, clu *t, int32_t id)
{
    if ((size_t)id >= cf->cap) {
        size_t cap = cf->cap ? cf->cap * 2 : 256;
        while (cap <= (size_t)id)
            cap *= 2;
        int32_t *h = realloc(cf->holders, cap * sizeof *h);
        if (h)
            cf->holders = h;
        clu **w = h ? realloc(cf->where, cap * sizeof *w) : NULL;
        if (!w)
            return -1;
        cf->where = w;
        memset(h + cf->cap, 0, (cap - cf->cap) * sizeof *h);
        memset(w + cf->cap, 0, (cap - cf->cap) * sizeof *w);
        cf->cap = cap;
    }
    int32_t *f = realloc(t->fins, (t->n_fins + 1) * sizeof *f);
    if (!f)
        return -1;
    t->fins = f;
    t->fins[t->n_fins++] = id;
    cf->holders[id]++;
    cf->where[id] = t;
    return 0;
}

static int prepare_target(trellis_plugin *self, const trellis_object *o, void **data, char *err,
                          size_t errlen)
{
    conf *cf = host->get_private(self);
    cf->gen++;
    clu *t = calloc(1, sizeof *t);
    if (!t || !(t->ns = values_strdup(host->object_namespace(o))) ||
        !(t->name = values_strdup(host->object_name(o)))) {
        if (t)
            free(t->ns);
        free(t);
        return snprintf(err, errlen, "out of memory"), -1;
    }
    t->tag = T_CLU;
    t->cf = cf;
    cf->added[cf->n_added++ % ADDED_MAX] = (struct added){t, cf->gen, 0, 0};
    t->v[V_PURPOSES] = (int64_t)omcp_cluster_purposes(&cf->c, o);
    t->v[V_NAMESPACE] = intern_id(&cf->ids, t->ns);
    int64_t requests = omcp_cluster_requests(host, o);
    t->v[V_LOAD] = omcp_being_deleted(host, o) ? -1 - requests : requests;
    *data = t; /* released by the host whatever happens below */
    if (list(t) < 0)
        return snprintf(err, errlen, "out of memory"), -1;
    const trellis_value *f = host->object_get(o, "metadata.finalizers");
    for (size_t i = 0; f && i < host->value_len(f); i++) {
        const char *s = host->value_string(host->value_at(f, i));
        if (s &&
            strncmp(s, OMCP_CLUSTER_FINALIZER_PREFIX, sizeof OMCP_CLUSTER_FINALIZER_PREFIX - 1) ==
                0 &&
            hold(cf, t, intern_id(&cf->ids, s)) < 0)
            return snprintf(err, errlen, "out of memory"), -1;
    }
    return 0;
}

static void target_values(trellis_plugin *self, const trellis_object *o, int64_t *out)
{
    const clu *t = host->object_data(self, o);
    for (int k = 0; t && k < N_VALUES; k++)
        out[k] = t->v[k];
}

/* The counter: the requests placed on a Cluster and not bound when read
 * (assumed in this run; their finalizers are not written yet). */
static void amounts(trellis_plugin *self, const trellis_object *w, int64_t *out)
{
    omcp_request_counters(host, self, w, out);
}

/* What a Cluster holds and can hold, for the operator's views. It holds
 * its request finalizers (its tenancy count, requests not in the state
 * included) and every request placed on it that does not carry one there
 * yet (placed in this run). It can hold as many as the largest
 * tenancyCount of the Shared purposes it serves (no limit when one of them
 * has none, or tenancy_count is off), one when it serves only Exclusive
 * purposes. The bound-requests counter is not shown. */
static void allocated(trellis_plugin *self, const trellis_object *o,
                      const trellis_object *const *placed, size_t n, int64_t *used,
                      int64_t *allocatable)
{
    const conf *cf = host->get_private(self);
    const clu *t = host->object_data(self, o);
    if (!t)
        return;
    used[0] = load_requests(t->v[V_LOAD]);
    for (size_t i = 0; i < n; i++)
        used[0] += !omcp_carries_own(host, placed[i], o);
    int64_t most = 0;
    int any = 0;
    for (size_t i = 0; i < cf->c.n_purposes && i < 64; i++) {
        const omcp_purpose *p = &cf->c.purposes[i];
        if (!((uint64_t)t->v[V_PURPOSES] >> i & 1))
            continue;
        any = 1;
        if (p->exclusive)
            most = most > 1 || most < 0 ? most : 1;
        else if (!cf->tenancy_count || p->tenancy_count <= 0)
            most = -1;
        else if (most >= 0 && p->tenancy_count > most)
            most = p->tenancy_count;
    }
    if (any)
        allocatable[0] = most;
}

static int name_counters(trellis_plugin *self, const trellis_host *h)
{
    static const char *const names[] = {"requests"};
    static const trellis_unit units[] = {TRELLIS_UNIT_COUNT};
    return h->name_counters(self, names, units, allocated);
}

static int candidate(const req *r, uint64_t purposes, int64_t ns)
{
    return (purposes >> r->purpose & 1) && (r->ns < 0 || ns == r->ns);
}

/* Why a Cluster that is no recovered one is passed over: R_NONE when it
 * is not, else the rule. */
enum { R_NONE = 0, R_CANDIDATE, R_EXCLUSIVE, R_DELETING, R_FULL };
static int passed_over(const conf *cf, const cyc *y, uint64_t purposes, int64_t ns,
                       int64_t deleting)
{
    if (!candidate(y->r, purposes, ns))
        return R_CANDIDATE;
    if (y->exclusive)
        return R_EXCLUSIVE;
    return cf->skip_deleting && deleting ? R_DELETING : R_NONE;
}

/* The columns a hook reads: the target values, then the counter of
 * assumed requests; and the prepared data column (NULL: no target). Read
 * once a hook (they are the host's until the hook returns). */
enum { C_ASSUMED = N_VALUES, N_COLS };

typedef struct cols {
    const int64_t *col[N_COLS];
    void *const *data;
} cols;

static void columns(trellis_cycle *c, const trellis_plugin *self, cols *k)
{
    for (int v = 0; v < N_VALUES; v++)
        k->col[v] = host->cycle_target_values(c, self, v);
    k->col[C_ASSUMED] = host->cycle_target_counter(c, self, 0);
    k->data = host->cycle_target_data(c, self);
}

/* A request placed on a Cluster that carries its finalizer already is
 * counted once (the finalizer), not also as assumed. */
static int reserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                   const trellis_target *t, trellis_status *st)
{
    (void)w;
    (void)st;
    const cyc *y = host->cycle_get(c, self);
    clu *tc = host->object_data(self, host->target_object(t));
    if (tc && y && y->rec >= 0) /* recovered (or created for it): carries its finalizer */
        tc->dup++;
    return TRELLIS_SUCCESS;
}

static void unreserve(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      const trellis_target *t)
{
    (void)c;
    clu *tc = host->object_data(self, host->target_object(t));
    if (tc && tc->dup > 0 && omcp_carries_own(host, w, host->target_object(t)))
        tc->dup--;
}

/* Whether some prepared Cluster carries the finalizer fin. */
static int held(const conf *cf, const char *fin)
{
    int32_t id = intern_find(&cf->ids, fin);
    return id >= 0 && (size_t)id < cf->cap && cf->holders[id] > 0;
}

/* The index of the Cluster ns/name in the cycle (targets are in namespace,
 * then name order), or -1. */
static long find_target(trellis_cycle *c, const char *ns, const char *name)
{
    size_t lo = 0, hi = host->cycle_target_count(c);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const trellis_object *o = host->target_object(host->cycle_target(c, mid));
        int r = strcmp(host->object_namespace(o), ns);
        if (!r)
            r = strcmp(host->object_name(o), name);
        if (!r)
            return (long)mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The first candidate that carries r's finalizer: the one Cluster that
 * holds it, found by name, or (several hold it, or the one went) the
 * first in order; -1 when none. */
static long recovered(const conf *cf, trellis_cycle *c, const cyc *y, const cols *k)
{
    const req *r = y->r;
    if (!held(cf, r->fin))
        return -1;
    int32_t id = intern_find(&cf->ids, r->fin);
    const int64_t *const *col = k->col;
    if (cf->holders[id] == 1 && cf->where[id]) {
        long i = find_target(c, cf->where[id]->ns, cf->where[id]->name);
        return i >= 0 && candidate(r, (uint64_t)col[V_PURPOSES][i], col[V_NAMESPACE][i]) ? i : -1;
    }
    size_t n = host->cycle_target_count(c);
    for (size_t i = 0; i < n; i++)
        if (candidate(r, (uint64_t)col[V_PURPOSES][i], col[V_NAMESPACE][i]) &&
            omcp_has_finalizer(host, host->target_object(host->cycle_target(c, i)), r->fin))
            return (long)i;
    return -1;
}

#define SCAN_AHEAD 512 /* more targets added than this: a binary search */

/* Where the Cluster of entry e is among the cycle's n targets (data: the
 * prepared data column), noted in e: where it was last found, unless
 * targets were added since (positions only move up then: it is looked for
 * among the next n - at_n places, while they are few), else by name (a
 * binary search). Reads the data column and, only when it moved, the
 * Cluster. POS_GONE when it is not a target of the cycle (its object was
 * replaced or removed). */
static uint32_t position(trellis_cycle *c, struct member *e, void *const *data, size_t n)
{
    if (e->pos < n && data[e->pos] == e->t)
        return e->pos;
    if (e->pos == POS_GONE && e->at_n == n)
        return POS_GONE; /* the same set as when it was missing */
    uint32_t found = POS_GONE;
    if (e->pos < POS_GONE && n > e->at_n && n - e->at_n <= SCAN_AHEAD) {
        size_t last = e->pos + (n - e->at_n);
        for (size_t i = e->pos + 1; i <= last && i < n && found == POS_GONE; i++)
            if (data[i] == e->t)
                found = (uint32_t)i;
    }
    if (found == POS_GONE) {
        long i = find_target(c, e->t->ns, e->t->name);
        if (i >= 0 && data[i] == e->t)
            found = (uint32_t)i;
    }
    e->pos = found;
    e->at_n = (uint32_t)n;
    return found;
}

/* Narrowing g, made k = cf->gen - g->gen steps ago with k targets fewer,
 * updated for the Clusters prepared since, when each step was one of the
 * preparings kept and each of those Clusters is now a target: an old place
 * moves up by the number of them placed before it; a new one's place is
 * added when it serves g's purpose (in g's namespace). 0, or -1 when that
 * is not so or memory ran out (g is then made again). */
static int took_in(conf *cf, trellis_cycle *c, struct narrowing *g, void *const *data, size_t n)
{
    uint64_t k = cf->gen - g->gen;
    if (k == 0 || k > ADDED_MAX || k > cf->n_added || g->n_targets + k != n)
        return -1;
    uint32_t at[ADDED_MAX];
    int serves[ADDED_MAX];
    size_t m = 0; /* the new places, ascending */
    for (uint64_t i = 0; i < k; i++) {
        struct added *a = &cf->added[(cf->n_added - k + i) % ADDED_MAX];
        if (!a->t || a->gen != g->gen + 1 + i)
            return -1;
        long pos = a->at_n == n && data[a->pos] == a->t ? (long)a->pos
                                                        : find_target(c, a->t->ns, a->t->name);
        if (pos < 0 || data[pos] != a->t)
            return -1;
        a->pos = (uint32_t)pos;
        a->at_n = n;
        size_t j = m++;
        for (; j > 0 && at[j - 1] > (uint32_t)pos; j--) {
            at[j] = at[j - 1];
            serves[j] = serves[j - 1];
        }
        at[j] = (uint32_t)pos;
        /* as the purpose index has it (a Cluster whose listing ran out of
         * memory is in no purpose) */
        serves[j] = a->t->listed && ((uint64_t)a->t->v[V_PURPOSES] >> g->purpose & 1) &&
                    (g->ns < 0 || a->t->v[V_NAMESPACE] == g->ns);
    }
    size_t more = 0;
    for (size_t j = 0; j < m; j++)
        more += (size_t)serves[j];
    if (g->n + more > g->cap) {
        size_t cap = (g->n + more) * 2;
        uint32_t *v = realloc(g->idx, cap * sizeof *v);
        if (!v)
            return -1;
        g->idx = v;
        g->cap = cap;
    }
    /* the j-th new place (ascending) has at[j] - j old places before it */
    for (size_t q = 0; q < g->n; q++) {
        uint32_t p = g->idx[q], up = 0;
        for (size_t j = 0; j < m && at[j] - j <= p; j++)
            up++;
        g->idx[q] = p + up;
    }
    for (size_t j = 0; j < m; j++)
        if (serves[j])
            g->idx[g->n++] = at[j];
    g->gen = cf->gen;
    g->n_targets = n;
    return 0;
}

static size_t narrowing_slot(const struct narrowing *v, size_t cap, int purpose, int64_t ns)
{
    uint64_t h =
        (uint64_t)purpose * 0x9e3779b97f4a7c15ull ^ (uint64_t)(ns + 1) * 0xbf58476d1ce4e5b9ull;
    size_t i = (size_t)(h ^ h >> 31) & (cap - 1);
    while (v[i].used && (v[i].purpose != purpose || v[i].ns != ns))
        i = (i + 1) & (cap - 1);
    return i;
}

/* The narrowing of purpose in namespace ns (-1: any), made (empty) when
 * there is none yet; NULL when memory ran out. */
static struct narrowing *narrowing_of(conf *cf, int purpose, int64_t ns)
{
    if ((cf->n_narrowed + 1) * 2 > cf->cap_narrowed) {
        size_t cap = cf->cap_narrowed ? cf->cap_narrowed * 2 : 64;
        struct narrowing *v = calloc(cap, sizeof *v);
        if (!v)
            return NULL;
        for (size_t k = 0; k < cf->cap_narrowed; k++)
            if (cf->narrowed[k].used)
                v[narrowing_slot(v, cap, cf->narrowed[k].purpose, cf->narrowed[k].ns)] =
                    cf->narrowed[k];
        free(cf->narrowed);
        cf->narrowed = v;
        cf->cap_narrowed = cap;
    }
    struct narrowing *g =
        &cf->narrowed[narrowing_slot(cf->narrowed, cf->cap_narrowed, purpose, ns)];
    if (!g->used) {
        *g = (struct narrowing){.purpose = purpose, .ns = ns, .used = 1};
        cf->n_narrowed++;
    }
    return g;
}

/* Narrow the cycle to the n places at idx, the purpose's Clusters. */
static int narrowed(trellis_cycle *c, const trellis_plugin *self, cyc *y, const uint32_t *idx,
                    size_t n)
{
    int rc = host->cycle_narrow(c, self, idx, n);
    y->narrowed = rc == 0;
    return rc;
}

/* Narrow the cycle to the Clusters that can be candidates for y: the
 * recovered one, none for an Exclusive purpose, else those serving the
 * purpose (in the request's namespace when the scope is Namespaced). 0,
 * or -1 when out of memory. */
static int narrow(conf *cf, trellis_cycle *c, const trellis_plugin *self, cyc *y, const cols *k)
{
    if (y->rec >= 0) {
        uint32_t one = (uint32_t)y->rec;
        return host->cycle_narrow(c, self, &one, 1);
    }
    if (y->exclusive)
        return host->cycle_narrow(c, self, NULL, 0);
    struct members *ms = &cf->serves[y->r->purpose];
    size_t n = host->cycle_target_count(c);
    void *const *data = k->data;
    if (!data || !n) /* no target at all */
        return host->cycle_narrow(c, self, NULL, 0);
    int32_t ns = y->r->ns;
    struct narrowing *g = narrowing_of(cf, y->r->purpose, ns);
    if (!g)
        return -1;
    int mine = g->filled;
    if ((mine && g->gen == cf->gen && g->n_targets == n) || /* nothing moved since */
        (mine && took_in(cf, c, g, data, n) == 0))          /* Clusters created since */
        return narrowed(c, self, y, g->idx, g->n);
    if (ms->n > g->cap) {
        uint32_t *v = realloc(g->idx, ms->n * sizeof *v);
        if (!v)
            return -1;
        g->idx = v;
        g->cap = ms->n;
    }
    g->filled = 0;
    size_t m = 0;
    for (size_t j = 0; j < ms->n; j++) {
        struct member *e = &ms->v[j];
        if (ns >= 0 && e->ns != ns)
            continue;
        uint32_t pos = position(c, e, data, n);
        if (pos != POS_GONE)
            g->idx[m++] = pos;
    }
    g->gen = cf->gen;
    g->n_targets = n;
    g->n = m;
    g->filled = 1;
    return narrowed(c, self, y, g->idx, m);
}

static int pre_filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                      trellis_status *st)
{
    conf *cf = host->get_private(self);
    const req *r = host->object_data(self, w);
    if (!r || r->purpose < 0)
        return TRELLIS_SKIP; /* openmcp-requests says why */
    cyc *y = host->cycle_alloc(c, sizeof *y);
    if (!y)
        return host->status(st, TRELLIS_ERROR, "OutOfMemory", NULL);
    const omcp_purpose *p = &cf->c.purposes[r->purpose];
    y->r = r;
    cols k;
    columns(c, self, &k);
    y->exclusive = cf->exclusive && p->exclusive;
    y->limit = cf->tenancy_count && !p->exclusive ? p->tenancy_count : 0;
    y->rec = cf->recover && r->fin[0] ? recovered(cf, c, y, &k) : -1;
    y->narrowed = 0;
    if (y->rec >= 0)
        host->cycle_note(c, self,
                         "recovered: Cluster %s already carries the request's finalizer %s",
                         host->target_key(host->cycle_target(c, (size_t)y->rec)), r->fin);
    host->cycle_set(c, self, y);
    if (TRELLIS_HOST_HAS(host, cycle_narrow) && narrow(cf, c, self, y, &k) < 0)
        return host->status(st, TRELLIS_ERROR, "NarrowFailed",
                            "cannot narrow the cycle to the candidates of purpose '%s'", p->name);
    return TRELLIS_SUCCESS;
}

static void filter_span(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                        size_t first, size_t n, uint64_t *pass)
{
    (void)w;
    const conf *cf = host->get_private(self);
    const cyc *y = host->cycle_get(c, self);
    if (!y)
        return;
    size_t words = (n + 63) / 64;
    if (y->rec >= 0 || y->exclusive) {
        /* the recovered Cluster alone; none for an Exclusive purpose
         * (bits past n are not this span's) */
        for (size_t wd = 0; wd < words; wd++) {
            uint64_t keep = n - wd * 64 < 64 ? ~UINT64_C(0) << (n - wd * 64) : 0;
            if (y->rec >= 0 && (size_t)y->rec >= first + wd * 64 &&
                (size_t)y->rec - first - wd * 64 < 64)
                keep |= UINT64_C(1) << (((size_t)y->rec - first) % 64);
            pass[wd] &= keep;
        }
        return;
    }
    /* A Cluster is feasible when it is a candidate (the only ones offered
     * when the cycle was narrowed to them), not skipped as being deleted,
     * and (a tenancy count applying) holds fewer requests than it (its
     * data read only when it might not: dup only lowers the count). What
     * stays the same over the span is read once, before the loop. */
    cols k;
    columns(c, self, &k);
    const int64_t *const *col = k.col;
    void *const *data = k.data;
    const int64_t *purposes = col[V_PURPOSES] + first, *nsc = col[V_NAMESPACE] + first,
                  *load = col[V_LOAD] + first, *assumed = col[C_ASSUMED] + first;
    void *const *dat = data ? data + first : NULL;
    const int purpose = y->r->purpose, skip_deleting = cf->skip_deleting, any = !y->narrowed;
    const int64_t ns = y->r->ns, limit = y->limit;
    for (size_t wd = 0; wd < words; wd++) {
        uint64_t bits = pass[wd], out = bits;
        while (bits) {
            size_t j = wd * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            if (j >= n)
                continue;
            int64_t l = load[j], requests = load_requests(l);
            int ok = !(skip_deleting && load_deleting(l)) &&
                     (!any || (((uint64_t)purposes[j] >> purpose & 1) && (ns < 0 || nsc[j] == ns)));
            if (ok && limit > 0 && omcp_held(requests, assumed[j], 0) >= limit)
                ok = omcp_held(requests, assumed[j],
                               dat && dat[j] ? ((const clu *)dat[j])->dup : 0) < limit;
            if (!ok)
                out &= ~(UINT64_C(1) << (j % 64));
        }
        pass[wd] = out;
    }
}

/* Why target i is not a candidate. */
static int not_candidate(const conf *cf, const req *r, const trellis_object *o, trellis_status *st)
{
    const omcp_purpose *p = &cf->c.purposes[r->purpose];
    if (r->ns >= 0 && strcmp(intern_str(&cf->ids, r->ns), host->object_namespace(o)) != 0)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "OutOfScope",
                            "scope Namespaced: purpose '%s' looks in namespace %s", p->name,
                            intern_str(&cf->ids, r->ns));
    const trellis_value *ps = host->object_get(o, "spec.purposes");
    int serves = 0;
    for (size_t i = 0; ps && i < host->value_len(ps); i++) {
        const char *s = host->value_string(host->value_at(ps, i));
        serves |= s && strcmp(s, p->name) == 0;
    }
    if (!serves)
        return host->status(st, TRELLIS_UNSCHEDULABLE, "PurposeNotServed",
                            "spec.purposes does not contain '%s'", p->name);
    return host->status(st, TRELLIS_UNSCHEDULABLE, "SelectorMismatch",
                        "labels do not match selectors.clusters and purpose '%s''s selector",
                        p->name);
}

static int filter(trellis_plugin *self, trellis_cycle *c, const trellis_object *w,
                  const trellis_target *t, trellis_status *st)
{
    (void)w;
    const conf *cf = host->get_private(self);
    const cyc *y = host->cycle_get(c, self);
    const clu *tc = host->object_data(self, host->target_object(t));
    const int64_t *v = tc ? tc->v : NULL;
    const int64_t *k = host->target_counters(self, t);
    if (!y || !v)
        return TRELLIS_SUCCESS;
    const omcp_purpose *p = &cf->c.purposes[y->r->purpose];
    if (y->rec >= 0) {
        const trellis_target *mine = host->cycle_target(c, (size_t)y->rec);
        return mine == t ? TRELLIS_SUCCESS
                         : host->status(st, TRELLIS_UNSCHEDULABLE, "RecoveredElsewhere",
                                        "the request's finalizer is on Cluster %s",
                                        host->target_key(mine));
    }
    int64_t a = k ? omcp_held(0, k[0], tc->dup) : 0; /* assumed in this run */
    int64_t requests = load_requests(v[V_LOAD]);
    int why = passed_over(cf, y, (uint64_t)v[V_PURPOSES], v[V_NAMESPACE], load_deleting(v[V_LOAD]));
    if (why == R_NONE && y->limit > 0 && requests + a >= y->limit)
        why = R_FULL;
    switch (why) {
    case R_CANDIDATE:
        return not_candidate(cf, y->r, host->target_object(t), st);
    case R_EXCLUSIVE:
        return host->status(st, TRELLIS_UNSCHEDULABLE, "Exclusive",
                            "purpose '%s' is Exclusive: a new Cluster is created for every "
                            "request",
                            p->name);
    case R_DELETING:
        return host->status(st, TRELLIS_UNSCHEDULABLE, "BeingDeleted",
                            "the Cluster is being deleted");
    case R_FULL:
        return host->status(st, TRELLIS_UNSCHEDULABLE, "TenancyFull",
                            "holds %lld requests (%lld assumed in this run); purpose '%s' "
                            "allows %lld per Cluster",
                            (long long)(requests + a), (long long)a, p->name, (long long)y->limit);
    }
    return TRELLIS_SUCCESS;
}

/* Equivalent requests: same purpose and scope namespace, and no Cluster
 * carries either's finalizer (so neither recovers one; a Cluster that
 * gains one has changed, and the host filters it again). */
static int equivalent(trellis_plugin *self, const trellis_object *a, const trellis_object *b)
{
    const conf *cf = host->get_private(self);
    const req *ra = host->object_data(self, a), *rb = host->object_data(self, b);
    if (!ra || !rb || ra->purpose != rb->purpose || ra->ns != rb->ns || !ra->fin[0] || !rb->fin[0])
        return 0;
    return !cf->recover || (!held(cf, ra->fin) && !held(cf, rb->fin));
}

/* What the configuration's free leaves: the id table. */
static void more_free(void *p)
{
    conf *cf = p;
    intern_free(&cf->ids);
    free(cf->holders);
    free(cf->where);
    for (size_t k = 0; k < OMCP_PURPOSES_MAX; k++)
        free(cf->serves[k].v);
    for (size_t k = 0; k < cf->cap_narrowed; k++)
        free(cf->narrowed[k].idx);
    free(cf->narrowed);
}

static int init(trellis_plugin *self, const trellis_host *h, const trellis_args *args, char *err,
                size_t errlen)
{
    host = h;
    conf *cf = omcp_plugin_setup(h, self, args, sizeof *cf, h->arg_string(args, "default_scope"),
                                 more_free, err, errlen);
    if (!cf)
        return -1;
    cf->recover = h->arg_bool(args, "recover");
    cf->exclusive = h->arg_bool(args, "exclusive");
    cf->skip_deleting = h->arg_bool(args, "skip_deleting");
    cf->tenancy_count = h->arg_bool(args, "tenancy_count");
    if (h->register_prepare_workload(self, prepare_workload) < 0 ||
        h->register_prepare_target(self, prepare_target) < 0 ||
        h->register_release(self, release) < 0 ||
        h->declare_target_values(self, N_VALUES, target_values) < 0 ||
        h->declare_counters(self, 1, amounts) < 0 || name_counters(self, h) < 0 ||
        h->register_pre_filter(self, pre_filter) < 0 || h->register_filter(self, filter) < 0 ||
        h->register_filter_span(self, filter_span) < 0 || h->register_reserve(self, reserve) < 0 ||
        h->register_unreserve(self, unreserve) < 0 ||
        trellis_register_equivalent(h, self, equivalent) < 0)
        return snprintf(err, errlen, "cannot register hooks"), -1;
    return 0;
}

static const trellis_arg_spec args[] = {
    OMCP_CONFIG_ARG,
    {"default_scope", TRELLIS_ARG_STRING, "Namespaced",
     "the scope when the configuration sets none: Namespaced (openMCP's document) or Cluster "
     "(current openMCP)"},
    {"recover", TRELLIS_ARG_BOOL, "true",
     "a Cluster that carries the request's finalizer is its Cluster, before any other rule"},
    {"exclusive", TRELLIS_ARG_BOOL, "true", "an Exclusive purpose never reuses a Cluster"},
    {"skip_deleting", TRELLIS_ARG_BOOL, "true", "a Shared purpose skips Clusters being deleted"},
    {"tenancy_count", TRELLIS_ARG_BOOL, "true",
     "a Shared purpose with tenancyCount > 0 skips Clusters that hold that many requests"},
    {NULL, 0, NULL, NULL}};

static const trellis_plugin_desc desc = {
    TRELLIS_DESC_HEADER,
    "openmcp-clusters",
    "1.0",
    "openMCP: the existing Clusters a ClusterRequest may get (scope, selectors, purposes, "
    "recovery, tenancy)",
    args,
    init,
    NULL};
TRELLIS_PLUGIN_AS(desc, openmcp_clusters)
