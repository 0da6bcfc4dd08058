/*
 * store_kube.h - the Kubernetes API store: the state is what an API
 * server holds (Pods and Nodes of a real cluster, custom resources for
 * Gardener, Fleet and openMCP), and trellis is one of its schedulers.
 *
 * Reading: each kind the host reads is listed in pages and then watched
 * (with bookmarks) from the list's resourceVersion, by a thread per kind;
 * a watch that answers 410 Gone (which every API server restart causes)
 * lists that kind again and hands the host the differences. An object's
 * metadata.resourceVersion is kept as the server's opaque string.
 *
 * Writing: patches are JSON merge patches carrying the object's
 * metadata.resourceVersion (a 409 refuses exactly that write; a patch of
 * list edits only, such as a finalizer added, is made again against the
 * object as it is now); status through the status subresource; a binding
 * through the binding subresource (a Binding posted for Pods, a patch
 * where the subresource takes the kind itself) when the profile says
 * subresource = "binding" (a binding released that way, a preemption
 * victim's, deletes the object with its resourceVersion as precondition,
 * as kube-scheduler deletes its victims: the API cannot unbind a Pod);
 * creations POST the object, then its status, then (for an object being
 * deleted: metadata.deletionTimestamp) a deletion that the server keeps
 * pending while the object's finalizers stay;
 * deletions carry the resourceVersion as a precondition. Several writes go
 * at once. The API has no transactions: see election_kube.c for what the
 * Lease fences and what it cannot.
 */
#ifndef TRELLIS_STORE_KUBE_H
#define TRELLIS_STORE_KUBE_H

#include <stddef.h>

#include "cfg.h"
#include "store.h"

/* A store of the API server sc's kubeconfig names (sc borrowed). The
 * kubeconfig is read now; nothing is asked of the server until list or
 * get: a server that is down opens. NULL with err. */
store *store_kube_open(const cfg_store *sc, int dry_run, char *err, size_t errlen);

/* How many writes flush has made and how many requests they took (for
 * benchmarks and tests). */
void store_kube_counts(store *s, size_t *writes, size_t *requests);

#endif
