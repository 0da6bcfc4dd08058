/*
 * election_impl.h - what an election implements (election.h): the file
 * store's lock (election.c), the etcd store's lease (election_etcd.c) and
 * the Kubernetes API store's Lease (election_kube.c).
 * Only elections include this.
 */
#ifndef TRELLIS_ELECTION_IMPL_H
#define TRELLIS_ELECTION_IMPL_H

#include <stdint.h>

#include "election.h"

typedef struct election_ops {
    const char *(*where)(const election *e);
    int (*campaign)(election *e, char *holder, size_t holderlen, char *err, size_t errlen);
    int (*wait_fd)(election *e, char *err, size_t errlen);
    int (*wait_done)(election *e, char *err, size_t errlen);
    int (*leading)(election *e, char *why, size_t whylen);
    void (*resign)(election *e);
    void (*destroy)(election *e); /* resigns first when leading */
    /* election_hold took the lead for a one-shot command (may be NULL) */
    void (*held)(election *e);
    /* the key and version every fenced write compares (store.h
     * store_fence_key_fn); NULL: this election has none */
    int (*fence_key)(election *e, char *key, size_t keylen, int64_t *version);
} election_ops;

/* The head of every election. */
struct election {
    const election_ops *ops;
};

#ifdef HAVE_ETCD
/* The etcd store's election (election_etcd.c). */
election *election_etcd_open(const cfg_store *sc, char *err, size_t errlen);
/* The Kubernetes API store's election (election_kube.c). */
election *election_kube_open(const cfg_store *sc, char *err, size_t errlen);
#endif

#endif
