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
/* What a binding write changed (ch->obj may be NULL; its reference is
 * dropped). Any thread. */
void own_note_binding(sched *s, binding_change *ch);
/* Forget what was noted for the object of id (its write failed: the host
 * must not see it). Any thread. */
void own_forget(sched *s, const char *id);
/* Everything noted so far, in order: *n entries, the caller owns the
 * references and the array. */
struct own_write *own_take(sched *s, size_t *n);
/* Drop what was noted and not taken. */
void own_free(sched *s);

#endif
