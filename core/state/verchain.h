/*
 * verchain.h - the versions of objects that a store's own writes made.
 *
 * A networked store sends each write with the version of the object it
 * was made against as precondition (etcd's mod_revision, the Kubernetes
 * API's resourceVersion), and the server refuses it when the object has
 * moved on. The host's copy of an object moves to the server's version
 * only when the watch brings it, so a second write of the object made
 * within the watch's lag was refused, though nothing but the host's own
 * first write came between.
 *
 * A chain remembers, per object, the latest version its own writes made
 * and the versions those writes replaced one after another. A write
 * refused because the object moved from a version of its chain to
 * another one of it is made again on the object as it is now (its edits,
 * not the copy: the copy may lack one of those writes): nothing but this
 * store's writes came between. Another writer's version enters a chain
 * only as the first of a new one (a write made on it starts one, without
 * the versions before), so a write made before it stays refused.
 *
 * A chain ends with its object's deletion; the watch bringing a version
 * ends nothing, as the answer to the write that made it may come after it
 * and writes made on the older copy may still be queued. At most
 * VERCHAIN_MAX chains are kept, the oldest dropped first (a write made on
 * a version of a dropped chain is refused, as without one). Versions are
 * the server's opaque strings. Every function locks: writes finish on
 * several threads.
 */
#ifndef TRELLIS_VERCHAIN_H
#define TRELLIS_VERCHAIN_H

#include <stddef.h>

#define VERCHAIN_MAX 65536

typedef struct verchain verchain;

/* max: the most chains kept (0: VERCHAIN_MAX). */
verchain *verchain_new(size_t max);
void verchain_free(verchain *v);

/* Whether the object id at version to differs from version from only by
 * this store's own writes (both in id's chain, or the same version): a
 * write made on from may then be made again on to. */
int verchain_own_between(verchain *v, const char *id, const char *from, const char *to);

/* A write of id sent against sent was applied and made the version made
 * (empty strings are ignored): made becomes the chain's latest, sent one
 * of the versions it replaced when it was the latest; otherwise (another
 * writer's version, a write made again on the object as it is now) the
 * chain starts again from sent. */
void verchain_wrote(verchain *v, const char *id, const char *sent, const char *made);

/* The object id was deleted: its chain ends. */
void verchain_forget(verchain *v, const char *id);

/* Chains held. */
size_t verchain_count(verchain *v);

#endif
