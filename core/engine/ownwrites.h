/*
 * ownwrites.h - what the host wrote, to be seen at once.
 *
 * A store reports what was written only later (the file store's watch;
 * never in a one-shot run), yet the host's next cycles must see its own
 * writes: a binding object created or released, an object a plugin
 * created. The writer notes them here, from any thread (a binder runs on
 * the binding thread); the scheduling thread takes them and applies them
 * as changes (changes_apply_own).
 */
#ifndef TRELLIS_OWNWRITES_H
#define TRELLIS_OWNWRITES_H

#include "binding.h"
#include "sched_impl.h"

/* o as the host wrote it, or deleted (a reference is taken). Any thread. */
void own_note(sched *s, trellis_object *o, int deleted);
/* o as the host patched it on base (a reference to each is taken): seen
 * while the host holds base or what was noted on it (the same store
 * version); once the store has delivered another version of the object
 * (the write read back, or another writer's), that one stays. Any
 * thread. */
void own_note_patched(sched *s, trellis_object *o, trellis_object *base);
/* What a binding write changed (ch->obj may be NULL; its reference is
 * dropped). Any thread. */
void own_note_binding(sched *s, binding_change *ch);
/* Forget what was noted for the object of id (its write failed: the host
 * must not see it). Any thread. */
void own_forget(sched *s, const char *id);
/* A plugin's write (op) that the host sees at once (read your writes),
 * before it is handed to the store: before (the object as the host holds
 * it; NULL for a creation) is kept until the store has flushed the write,
 * to be seen again should the store refuse it (a creation: after is seen
 * deleted) while the host still holds what the write made it see (after;
 * nothing, for a deletion). A reference to each is taken. Returns the
 * entry's number: then own_pending_queued once the store took the write
 * (with the object the host is told, now), or own_pending_drop when it
 * refused it at once. Any thread. */
enum { OWN_PATCH, OWN_CREATE, OWN_DELETE };
/* When a noted write applies (struct own_write's undo): the host holds
 * expect or an object of its content; holds expect itself; holds
 * nothing; holds an object of expect's store version. */
enum { OWN_IF_HELD = 1, OWN_IF_SAME, OWN_IF_ABSENT, OWN_IF_VERSION };
uint64_t own_pending(sched *s, int op, trellis_object *before, trellis_object *after);
void own_pending_queued(sched *s, uint64_t gen, trellis_object *now);
void own_pending_drop(sched *s, uint64_t gen);
/* The store's flush with failed and ud (store.h), and what it did not
 * write of a plugin's (own_pending) seen again as it was: the host's
 * view follows the store. The flush's result. Any thread. */
int own_flush(sched *s, store_fail_cb failed, void *ud, char *err, size_t errlen);
/* Everything noted so far, in order: *n entries, the caller owns the
 * references and the array. */
struct own_write *own_take(sched *s, size_t *n);
/* Drop what was noted and not taken. */
void own_free(sched *s);

#endif
