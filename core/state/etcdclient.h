/*
 * etcdclient.h - etcd's v3 API through its JSON gateway (/v3/...) over
 * libcurl: what the etcd store and the etcd election share.
 *
 * The gateway speaks proto3 JSON: keys and values are base64, int64 fields
 * are strings, and fields holding their zero value are left out (a key
 * never written has no create_revision, a lease that expired comes back
 * without TTL). The parsers here read that shape and nothing else; every
 * one of them has a fuzz target (tests/fuzz/fuzz_etcd.c).
 *
 * A client holds the endpoints and rotates to the next one when one does
 * not answer; every request carries Grpc-Metadata-Hasleader: true, so a
 * member that lost its quorum refuses instead of answering from a stale
 * state.
 */
#ifndef TRELLIS_ETCDCLIENT_H
#define TRELLIS_ETCDCLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cfg.h"

typedef struct etcd_client etcd_client;
/* How many calls a client makes at once (its connections). */
#define ETCD_CONNS 4

/* A client of the endpoints and TLS files of sc (copied). NULL with err. */
etcd_client *etcd_client_new(const cfg_store *sc, char *err, size_t errlen);
void etcd_client_free(etcd_client *c);
/* The key prefix of the config ("/trellis"); borrowed from c. */
const char *etcd_client_prefix(const etcd_client *c);
/* The endpoint requests go to now; borrowed, changes when c rotates. */
const char *etcd_client_endpoint(const etcd_client *c);

/* One call: POST /v3/<path> with the JSON body req (borrowed). The reply
 * (ownership transfers), or NULL with err. A call that failed before it
 * was sent is tried at the next endpoint; when idempotent (a read) any
 * failure is. *ambiguous (may be NULL) is set to 1 when a write may have
 * been made although no reply said so (a timeout, a reset connection):
 * the caller reads back to know. Any thread; up to ETCD_CONNS calls run
 * at once, more wait for a connection. */
json_object *etcd_call(etcd_client *c, const char *path, json_object *req, int idempotent,
                       int *ambiguous, char *err, size_t errlen);

/* A stream (/v3/watch, /v3/lease/keepalive): POST req, then line(ud,
 * text, len) for every newline-terminated message until line returns
 * non-zero, the server ends the stream, nothing arrives for idle_ms, or
 * *stop becomes non-zero (looked at about once a second). Its own
 * connection: any thread. 0 when line or stop ended it, -1 with err (and
 * the client rotated to the next endpoint) otherwise. */
typedef int (*etcd_line_fn)(void *ud, const char *text, size_t len);
int etcd_stream(etcd_client *c, const char *path, json_object *req, uint32_t idle_ms,
                atomic_int *stop, etcd_line_fn line, void *ud, char *err, size_t errlen);

/* ---- the gateway's JSON ---- */

/* The key just past every key that starts with prefix (its range_end),
 * as a new string. */
char *etcd_prefix_end(const char *prefix);

/* An int64 field of j: a string of digits, a JSON integer, or absent (0).
 * 0, or -1 when it is something else. */
int etcd_int64(json_object *j, const char *field, int64_t *out);

typedef struct etcd_kv {
    char *key, *value; /* decoded, NUL-terminated, owned */
    size_t key_len, value_len;
    int64_t create_revision, mod_revision, version, lease;
} etcd_kv;
void etcd_kv_free(etcd_kv *kv);
/* A mvccpb.KeyValue. 0, or -1 with err (kv is then empty). */
int etcd_parse_kv(json_object *j, etcd_kv *kv, char *err, size_t errlen);

/* A RangeResponse: its kvs appended to *kvs (*n, *cap), the header's
 * revision, and whether more keys follow. 0, or -1 with err. */
int etcd_parse_range(json_object *reply, etcd_kv **kvs, size_t *n, size_t *cap, int64_t *revision,
                     int *more, char *err, size_t errlen);

typedef struct etcd_event {
    int deleted; /* 0: a put */
    etcd_kv kv;
} etcd_event;

/* One message of a watch stream. */
typedef struct etcd_watch_msg {
    int created, canceled;
    int64_t revision, compact_revision;
    char *error; /* the gateway's error or cancel_reason, owned; NULL when none */
    etcd_event *events;
    size_t n_events;
} etcd_watch_msg;
void etcd_watch_msg_free(etcd_watch_msg *m);
/* Parse a line of /v3/watch ({"result": WatchResponse} or {"error": ...}).
 * 0, or -1 with err (m is then empty). */
int etcd_parse_watch(const char *text, size_t len, etcd_watch_msg *m, char *err, size_t errlen);

/* A gateway error reply ({"error": ..., "code": N}): its message, or NULL
 * when reply is none. Borrowed from reply. */
const char *etcd_reply_error(json_object *reply);

#endif
