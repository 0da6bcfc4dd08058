/*
 * pick.c - see pick.h.
 */
#include "pick.h"

uint32_t pick_candidates_wanted(uint32_t nodes, int64_t percentage, int64_t absolute)
{
    int64_t n = (int64_t)nodes * percentage / 100;

    if (n < absolute)
        n = absolute;
    if (n > (int64_t)nodes)
        n = nodes;
    if (n < 0)
        n = 0;
    return (uint32_t)n;
}

int pick_more_important(int64_t pa, int64_t sa, int64_t pb, int64_t sb)
{
    if (pa != pb)
        return pa > pb;
    return sa < sb;
}

int64_t pick_sum_term(int64_t priority)
{
    if (priority > INT32_MAX)
        priority = INT32_MAX;
    if (priority < INT32_MIN)
        priority = INT32_MIN;
    return priority + (int64_t)INT32_MAX + 1;
}

/* The criteria in kube's order, each "higher is better" as kube's score
 * functions have it. */
static int64_t criterion(const pick_summary *s, int k)
{
    switch (k) {
    case 0:
        return -s->pdb_violations;
    case 1:
        return -s->highest;
    case 2:
        return -s->sum;
    case 3:
        return -(int64_t)s->victims;
    default:
        return s->earliest_ms;
    }
}

size_t pick_one(const pick_summary *c, size_t n)
{
    /* Candidates still tied are those with live[i] set; each criterion
     * keeps the maximum and the first survivor wins when all are equal. */
    size_t first = 0;

    if (n <= 1)
        return 0;
    for (int k = 0; k < 5; k++) {
        int64_t best = INT64_MIN;
        size_t kept = 0;

        for (size_t i = 0; i < n; i++) {
            int64_t v;
            int tied = 1;

            /* still in the race: equal to c[first] on every earlier criterion */
            for (int e = 0; e < k && tied; e++)
                tied = criterion(&c[i], e) == criterion(&c[first], e);
            if (!tied)
                continue;
            v = criterion(&c[i], k);
            if (v > best) {
                best = v;
                kept = 0;
            }
            if (v == best)
                kept++;
        }
        /* move `first` to the first survivor of criterion k */
        for (size_t i = 0; i < n; i++) {
            int tied = 1;

            for (int e = 0; e < k && tied; e++)
                tied = criterion(&c[i], e) == criterion(&c[first], e);
            if (tied && criterion(&c[i], k) == best) {
                first = i;
                break;
            }
        }
        if (kept == 1)
            return first;
    }
    return first;
}

int pick_budget_take(int64_t *allowed, const size_t *match, size_t nmatch)
{
    int violated = 0;

    for (size_t i = 0; i < nmatch; i++) {
        allowed[match[i]]--;
        if (allowed[match[i]] < 0)
            violated = 1;
    }
    return violated;
}
