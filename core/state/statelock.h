/*
 * statelock.h - the state directory's lock: one host writes a state.
 *
 * <dir>/.trellis.lock is locked with flock(2) by whoever writes the state:
 * the active `trellis run` (a second one waits as a standby) and the
 * one-shot commands that schedule (`schedule`, `deschedule`), which refuse
 * to start while another holds it; both through election.h. (`taint`,
 * `drain` and `uncordon` edit the state as any other writer would, and a
 * running host follows.) The holder writes its pid into
 * the file, for the message the others print. A holder checks, before it
 * writes, that the file it locked is still the one at that path: deleting
 * or replacing the lock file would otherwise let a second writer in.
 */
#ifndef TRELLIS_STATELOCK_H
#define TRELLIS_STATELOCK_H

#include <stddef.h>

#define STATELOCK_FILE ".trellis.lock"

/* Open (creating it) dir's lock file; the path goes to *path (ownership
 * transfers to the caller), and *created (may be NULL) says whether this
 * call made the file. The descriptor, or -1 with err. */
int statelock_open(const char *dir, char **path, int *created, char *err, size_t errlen);
/* Give the lock up; with remove, the file goes first (a one-shot command
 * leaves no file behind in the manifests). A host waiting on the removed
 * file sees it is not the one at the path any more (statelock_is_ours)
 * and locks the path again. */
void statelock_release(int fd, const char *path, int remove);
/* Try to lock fd without waiting: 1 when locked, 0 when another holds it,
 * -1 with err on another failure. */
int statelock_try(int fd, const char *path, char *err, size_t errlen);
/* The pid the holder wrote, as text ("?" when none), into buf. */
const char *statelock_holder(int fd, char *buf, size_t len);
/* Write this process's pid into the locked file. 0, or -1 (errno). */
int statelock_record_pid(int fd);
/* Whether fd still locks the file at path: 1, or 0 with why (the file was
 * removed or replaced while it was held). */
int statelock_is_ours(int fd, const char *path, char *why, size_t whylen);

#endif
