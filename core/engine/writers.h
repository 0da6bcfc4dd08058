/*
 * writers.h - which decision of a run wrote an object that the store
 * could not write: the binding objects its placements made or released
 * (binding model "object") and the targets its post-filters created, by
 * the object's id.
 *
 * Built once, at the first failure of a flush, from every decision: a
 * flush that fails as a whole (a full disk, a lost fence) reports each of
 * its objects, and a search of every decision for each one made that
 * quadratic (a Fleet run's 95,000 bindings: hours).
 */
#ifndef TRELLIS_WRITERS_H
#define TRELLIS_WRITERS_H

#include "decision.h"

typedef struct writers writers;

/* The writers of the objects ds's decisions wrote (ds is read now and
 * not kept). */
writers *writers_new(const decisions *ds);
/* The decision whose placement wrote (or released) the binding object id:
 * *target (owned by w, valid until the next call) the target it names,
 * *released which. It is taken out: a second report of the same object
 * finds the next one a search of the decisions would (a decision that
 * released a target and placed it again, or another decision), as that
 * decision no longer holds it. NULL when none (left). */
decision *writers_take_binding(writers *w, const char *id, const char **target, int *released);
/* The decision whose post-filter created the object id, or NULL. */
decision *writers_creator(const writers *w, const char *id);
void writers_free(writers *w);

#endif
