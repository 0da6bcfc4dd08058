/*
 * store.c - the one place that turns a config's store into a store.
 */
#include "config.h"

#include "store.h"

#include <string.h>

#include "store_file.h"
#include "util.h"

store *store_open(const char *type, const char *location, int dry_run, char *err, size_t errlen)
{
    if (!type || strcmp(type, "file") == 0) {
        if (!location) {
            errf(err, errlen,
                 "the file store needs a state directory: give --state DIR or store.path");
            return NULL;
        }
        return store_file_open(location, dry_run, err, errlen);
    }
    errf(err, errlen, "store.type '%s': expected file (the stores this build has)", type);
    return NULL;
}
