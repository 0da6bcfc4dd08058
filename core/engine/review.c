/*
 * review.c - see review.h.
 */
#include "config.h"

#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "object.h"
#include "util.h"

/* A candidate of the answer with its place among those given. */
typedef struct placed {
    size_t at;
    trellis_candidate c;
} placed;

static int by_place(const void *a, const void *b)
{
    size_t x = ((const placed *)a)->at, y = ((const placed *)b)->at;
    return x < y ? -1 : x > y;
}

/* Whether o is one of the workloads assigned to t. */
static int on_target(const struct trellis_target *t, const trellis_object *o)
{
    for (size_t i = 0; i < t->n_wl; i++)
        if (t->wl[i] == o)
            return 1;
    return 0;
}

/* The victims of the given candidate `given` as answered in c: 0, or -1
 * with why. */
static int check_victims(const trellis_candidate *given, const trellis_candidate *c, char *why,
                         size_t whylen)
{
    const struct trellis_target *t = given->target;
    char who[256];
    if (c->n_victims == 0 || !c->victims) {
        snprintf(why, whylen, "target %s: no victims (a candidate evicts at least one workload)",
                 t->name);
        return -1;
    }
    if (c->pdb_violations < 0) {
        snprintf(why, whylen, "target %s: %lld disruption budget violations", t->name,
                 (long long)c->pdb_violations);
        return -1;
    }
    for (size_t i = 0; i < c->n_victims; i++) {
        if (!on_target(t, c->victims[i])) {
            snprintf(why, whylen, "target %s: victim %zu is not a workload on it", t->name, i);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (c->victims[j] == c->victims[i]) {
                snprintf(why, whylen, "target %s: victim %s is listed twice", t->name,
                         object_describe(c->victims[i], who, sizeof who));
                return -1;
            }
    }
    return 0;
}

int review_check(const trellis_candidate *before, size_t n_before, trellis_candidate *after,
                 size_t n_after, char *why, size_t whylen)
{
    if (n_after > n_before) {
        snprintf(why, whylen, "answered %zu candidates, more than the %zu it was given", n_after,
                 n_before);
        return -1;
    }
    if (n_after == 0)
        return 0;
    placed *v = xcalloc(n_after, sizeof *v);
    int rc = 0;
    for (size_t j = 0; j < n_after && rc == 0; j++) {
        size_t at = n_before;
        for (size_t i = 0; i < n_before && at == n_before; i++)
            if (before[i].target == after[j].target)
                at = i;
        if (at == n_before) {
            snprintf(why, whylen, "candidate %zu of its answer is a target it was not given", j);
            rc = -1;
            break;
        }
        for (size_t k = 0; k < j; k++)
            if (v[k].at == at) {
                snprintf(why, whylen, "target %s is listed twice", before[at].target->name);
                rc = -1;
            }
        if (rc == 0)
            rc = check_victims(&before[at], &after[j], why, whylen);
        v[j].at = at;
        v[j].c = after[j];
    }
    if (rc == 0) {
        qsort(v, n_after, sizeof *v, by_place);
        for (size_t j = 0; j < n_after; j++)
            after[j] = v[j].c;
    }
    free(v);
    return rc;
}
