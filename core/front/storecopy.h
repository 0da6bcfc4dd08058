/*
 * storecopy.h - `trellis store copy SRC DST`: every object of one store
 * written into another (seeding an etcd store from manifests, exporting
 * one back to a directory, moving a state).
 */
#ifndef TRELLIS_STORECOPY_H
#define TRELLIS_STORECOPY_H

#include <stdio.h>

/* Copy every object of src into dst; each side a state directory or a
 * config file whose store group names a store (nothing else of it is
 * read). Objects are written as they are, versions aside (an etcd
 * store's resourceVersion is not copied); an object dst holds already is
 * refused and named. What was done goes to out. The exit status: 0 every
 * object copied, 1 some were not (each named on standard error), 2 a
 * store cannot be opened or read. */
int storecopy_main(const char *src, const char *dst, FILE *out);

#endif
