/*
 * keys.h - map keys interned for the process.
 *
 * A few hundred distinct keys (apiVersion, metadata, labels, label
 * keys...) make up most of the bytes of small manifests. A key is a 32-bit
 * id; its text lives in chunks that never move, so readers need no lock.
 * Keys are never freed.
 */
#ifndef TRELLIS_KEYS_H
#define TRELLIS_KEYS_H

#include <stdint.h>

/* The id of key (NUL-terminated), added when new; UINT32_MAX when the
 * table is full. */
uint32_t object_key_id(const char *key);
/* The text of an id. */
const char *object_key_text(uint32_t id);

#endif
