/*
 * quarantine.h - objects a plugin crashed or hung on, kept out of the way.
 *
 * When the host dies in a plugin, or a plugin call overruns its deadline,
 * guard.c appends a record to the state's quarantine file
 * (<state>/.trellis.quarantine): one line of tab-separated fields
 *
 *   cause  plugin  plugin-file  file-identity  hook  object-id  [digest]
 *
 * The next start (a restart, or the standby that takes over) reads it
 * before it prepares anything: a workload named there is not given to the
 * plugins again but reported as an error decision naming the plugin, and a
 * target is left out of the cache. The first start that sees the object
 * adds the digest of its content; a record holds while the object's
 * content and the plugin's file are unchanged, and is dropped as soon as
 * either changes (or the plugin is no longer loaded, or the object is
 * gone), so fixing the workload or the plugin lets it be scheduled again.
 */
#ifndef TRELLIS_QUARANTINE_H
#define TRELLIS_QUARANTINE_H

#include <stddef.h>

#include "object.h"

/* the file's name in a state directory */
#define QUARANTINE_FILE ".trellis.quarantine"

typedef struct quarantine quarantine;

/* The records of path (a missing file has none); read_only: never written
 * back (a dry run). Ownership of the result transfers to the caller. */
quarantine *quarantine_open(const char *path, int read_only);
void quarantine_free(quarantine *q);

/* The current identity of a loaded plugin's file, or NULL when no plugin of
 * that name is loaded. */
typedef const char *(*quarantine_ident_fn)(void *ud, const char *plugin);

/* Whether o is quarantined. When it is, *why (may be NULL) gets a message
 * naming the cause, the plugin, its file and the hook, valid until the next
 * call. Records of o that no longer hold are dropped. Ownership of every
 * argument is retained by the caller. */
int quarantine_check(quarantine *q, const trellis_object *o, quarantine_ident_fn ident, void *ud,
                     const char **why);
/* Drop every record of the object id (it changed or went away). */
void quarantine_forget(quarantine *q, const char *id);
/* Records of objects not checked since open (the objects are gone) are
 * dropped; then the file is written back when anything changed. 0, or -1
 * with err. */
int quarantine_save(quarantine *q, int drop_unseen, char *err, size_t errlen);
/* How many records hold. */
size_t quarantine_count(const quarantine *q);

#endif
