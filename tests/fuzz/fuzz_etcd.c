/*
 * fuzz_etcd.c - the etcd gateway's JSON as etcdclient.c reads it: a watch
 * stream's message, a range reply, and base64.
 *
 * Properties: no input crashes or leaks a parser; a watch message that
 * parses has events whose keys and values are NUL-terminated at their
 * length; base64 of any bytes decodes to the same bytes, and a text that
 * decodes is shorter than three quarters of itself plus three.
 */
#include "config.h"

#include "fuzz.h"

#include "base64.h"
#include "etcdclient.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    char err[512];
    etcd_watch_msg m;
    if (etcd_parse_watch(text, size, &m, err, sizeof err) == 0) {
        for (size_t i = 0; i < m.n_events; i++) {
            const etcd_kv *kv = &m.events[i].kv;
            FUZZ_CHECK(kv->key && kv->key[kv->key_len] == '\0', "event %zu: key not terminated", i);
            FUZZ_CHECK(kv->value && kv->value[kv->value_len] == '\0',
                       "event %zu: value not terminated", i);
        }
        etcd_watch_msg_free(&m);
    }
    json_object *j = json_tokener_parse(text);
    etcd_kv *kvs = NULL;
    size_t n = 0, cap = 0;
    int64_t rev = 0;
    int more = 0;
    etcd_parse_range(j, &kvs, &n, &cap, &rev, &more, err, sizeof err);
    for (size_t i = 0; i < n; i++)
        etcd_kv_free(&kvs[i]);
    free(kvs);
    json_object_put(j);
    char *b = base64_encode(text, size);
    size_t back_len = 0;
    char *back = base64_decode(b, strlen(b), &back_len);
    FUZZ_CHECK(back && back_len == size && memcmp(back, text, size) == 0,
               "base64 of %zu bytes does not decode to them", size);
    free(back);
    free(b);
    back = base64_decode(text, size, &back_len);
    if (back)
        FUZZ_CHECK(back_len <= size * 3 / 4 + 3, "%zu bytes decode to %zu", size, back_len);
    free(back);
    free(text);
    return 0;
}
