/*
 * depends.h - which objects a plugin read while it prepared an object.
 *
 * A plugin's prepare may read other objects (a Shoot's CloudProfile, a
 * ConfigMap of region distances) through lookup_object and
 * foreach_object; what it prepared is only as current as what it read.
 * While an object is being prepared, every such read is recorded here: a
 * read by name depends on that object, a walk over a kind on every object
 * of the kind (in the namespace walked). When an object changes, the host
 * asks which prepared objects read it, and prepares them again.
 * Prepare runs on the main thread; reads from other threads (a plugin's
 * own) are not recorded.
 */
#ifndef TRELLIS_DEPENDS_H
#define TRELLIS_DEPENDS_H

#include <stddef.h>

#include "object.h"

typedef struct depends depends;

depends *depends_new(void);
void depends_free(depends *d);
/* o is being prepared now (NULL: no prepare runs; o is borrowed until
 * then): reads are recorded for it until the next call. */
void depends_preparing(depends *d, const trellis_object *o);
/* A read while preparing: of kind/ns/name, or (name NULL) of every
 * object of kind in ns (ns NULL: in every namespace). Nothing when no
 * prepare runs. */
void depends_read(depends *d, const char *kind, const char *ns, const char *name);
/* The ids ("Kind/namespace/name") of the objects whose prepare read o:
 * *out is a malloc'd array of n malloc'd strings (ownership transfers),
 * without repeats and never o's own. */
size_t depends_on(const depends *d, const trellis_object *o, char ***out);

#endif
