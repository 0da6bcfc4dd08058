/*
 * store.h - where objects live: the interface every store implements.
 *
 * The host reads all objects with list, writes bindings and evictions as
 * field patches with a version precondition (a patch made against an
 * object that has changed in the store since it was read is refused, never
 * applied over the change), creates objects (targets made by a post-filter,
 * events), and commits with flush. Stores that can follow changes offer
 * watch and dispatch. Every operation may be called from the binding
 * thread as well as the main thread: a store locks what it shares. The
 * file store (store_file.c) is the embedded default; an etcd store and a
 * Kubernetes API store implement the same operations, opened by
 * store_open from the config.
 *
 * Versions: o->version is the store's token for the object as read,
 * compared on every write made against o. A store whose own versions are
 * text carries them in the object it reads: the object's
 * metadata.resourceVersion (the Kubernetes API's opaque string, etcd's
 * mod_revision as digits) is the precondition it sends, and o->version
 * only orders what the host holds. The file store counts versions itself
 * and writes no resourceVersion into manifests.
 */
#ifndef TRELLIS_STORE_H
#define TRELLIS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "manifest.h"
#include "object.h"

typedef struct store store;

/* What an edit does to the field at its path. List edits are resolved
 * against the object as the store holds it when the write is made (with
 * the edits queued before them), never against a copy a caller read
 * earlier: two additions to the same list both land. */
typedef enum {
    STORE_SET = 0,     /* value: the new string; NULL removes the field */
    STORE_SET_JSON,    /* value: a JSON text (a list, a map, a number...) */
    STORE_LIST_ADD,    /* add the string value to a list of strings unless it is
                          there; the list is created when the field is absent */
    STORE_LIST_REMOVE, /* remove the string value from a list of strings */
} store_edit_op;
/* (The file store writes a list it changed as a flow list on the key's
 * line, ["a", "b"], as it writes any JSON value.) */

typedef struct store_edit {
    /* dotted keys; a key with dots or slashes in brackets:
     * metadata.labels["kubernetes-fleet.io/parent-CRP"] */
    const char *path;
    const char *value;
    int op; /* store_edit_op */
} store_edit;

typedef enum { STORE_ADDED = 1, STORE_MODIFIED, STORE_DELETED } store_event_type;
/* A change: old is NULL when added, new_obj NULL when deleted. Both are
 * borrowed for the call (take a reference to keep one). */
typedef void (*store_watch_cb)(void *ud, store_event_type type, trellis_object *old_obj,
                               trellis_object *new_obj);

/* A write flush could not make: the object's id ("Kind/namespace/name")
 * and why, both borrowed for the call. */
typedef void (*store_fail_cb)(void *ud, const char *id, const char *message);

typedef struct store_ops {
    const char *name;
    /* Append every object, and every malformed document as an error, to
     * out. 0, or -1 with err when the store cannot be read at all. */
    int (*list)(store *s, manifest_set *out, char *err, size_t errlen);
    /* A new reference to the stored object, or NULL. */
    trellis_object *(*get)(store *s, const char *kind, const char *namespace_, const char *name);
    /* Patch fields of o, or of its subresource ("status", "binding"; NULL:
     * the object itself); refused when the stored object's version is no
     * longer o->version. May be buffered until flush. The file store keeps
     * an object's status in the object: a status patch edits the document
     * as any other. */
    int (*patch)(store *s, const trellis_object *o, const char *subresource,
                 const store_edit *edits, size_t n, char *err, size_t errlen);
    /* Create a new object from o (borrowed); refused if it exists. The
     * object as stored (a new reference: what the store filled in, a
     * server's uid or version; the file store keeps o itself), or NULL
     * with err. */
    trellis_object *(*create)(store *s, trellis_object *o, char *err, size_t errlen);
    /* Delete o; refused when the stored object's version is no longer
     * o->version. May be buffered until flush, which then reports it like
     * a patch when it cannot be made. The file store removes o's document
     * or List item (every other byte of the file stays), the file when
     * nothing else is in it, or forgets an object created in this run and
     * not written yet. */
    int (*remove)(store *s, const trellis_object *o, char *err, size_t errlen);
    /* Commit buffered writes. 0, or -1 with err listing what was not
     * written (nothing is lost: the rest is written); failed (may be
     * NULL) is called for every object whose patch or creation was not
     * written, with the reason. */
    int (*flush)(store *s, store_fail_cb failed, void *ud, char *err, size_t errlen);
    /* Follow changes: a descriptor that becomes readable when changes may
     * be waiting, or -1 with err. NULL when the store cannot follow. */
    int (*watch)(store *s, char *err, size_t errlen);
    /* Deliver the changes waiting, made outside and by this store's own
     * flushes (a written binding comes back as a modification), in order.
     * Malformed documents are logged and skipped; the objects they held
     * before stay. Returns the number of changes delivered. */
    size_t (*dispatch)(store *s, store_watch_cb cb, void *ud);
    void (*destroy)(store *s);
    /* The kinds the host reads, kinds[0..n) (copied), told before list:
     * a store that lists and watches per kind (etcd, the Kubernetes API)
     * reads only these. NULL: the store reads every object (the file
     * store: the directory is the state). */
    void (*set_kinds)(store *s, const char *const *kinds, size_t n);
} store_ops;

/* Whether this host may still write (it holds the state lock): 1, or 0
 * with the reason in why. */
typedef int (*store_fence_fn)(void *ud, char *why, size_t whylen);
/* For a store that can make the fence part of every write it sends (etcd:
 * a compare in each transaction, so that the server itself refuses the
 * writes of a host that lost its lease while paused): the key this
 * host's leadership lives under and the version it must still have (its
 * create revision). 1, or 0 when this host does not lead. */
typedef int (*store_fence_key_fn)(void *ud, char *key, size_t keylen, int64_t *version);

struct store {
    const store_ops *ops;
    int dry_run; /* patches and creates are checked but nothing is written */
    /* asked before every write a flush makes; NULL: always allowed. A host
     * that lost its lock writes nothing more: what flush would have
     * written fails with the fence's reason. */
    store_fence_fn fence;
    void *fence_ud;
    store_fence_key_fn fence_key; /* NULL: only fence is asked (fence_ud too) */
};

/* The store a config names, every front-end's one way to a store: the
 * file store at state_dir when one is given (a command line's --state),
 * else the one sc names (sc->type: "file" at sc->path, "etcd"...). NULL
 * with err naming the type when this build has no such store or it
 * cannot be opened. sc and state_dir are borrowed (copied as needed). */
store *store_open(const cfg_store *sc, const char *state_dir, int dry_run, char *err,
                  size_t errlen);
/* Where that store is, for messages: "/srv/state" or "etcd
 * http://10.0.0.1:2379 /trellis". Writes into buf and returns it. */
const char *store_where(const cfg_store *sc, const char *state_dir, char *buf, size_t len);
/* The file store's directory of that choice (for local files such as the
 * quarantine list), or NULL for a store that is not a directory. */
const char *store_dir(const cfg_store *sc, const char *state_dir);
/* Whether this build has the store type ("file", "etcd"). */
int store_type_built(const char *type);

#endif
