/*
 * gardener.h - what several Gardener plugins read from Shoots the same way.
 *
 * The Gardener plugins (gardener-usable, -seed-selector, -dns, -region,
 * -networks, -capacity) each own one of the checks of Gardener's scheduler;
 * the few readings they share live here: which CloudProfile a Shoot uses,
 * the project a Shoot's namespace belongs to (from its name or from the
 * Project object that claims it), and a small owned list of
 * strings for values copied out of objects in prepare. The arithmetic that
 * needs no host is in gardener_math.h.
 */
#ifndef TRELLIS_PLUGINS_GARDENER_H
#define TRELLIS_PLUGINS_GARDENER_H

#include <stddef.h>

#include "trellis/plugin.h"

/* The CloudProfile a Shoot uses: spec.cloudProfile.name when
 * spec.cloudProfile.kind is absent or "CloudProfile", else
 * spec.cloudProfileName. NULL when the Shoot names none. Host-owned, valid
 * as long as the Shoot. */
const char *gardener_cloud_profile_name(const trellis_host *h, const trellis_object *shoot);

/* The project of a Shoot's namespace into buf: "garden-dev" -> "dev";
 * "garden" and any namespace without the prefix stay as they are. */
void gardener_project(const char *namespace_, char *buf, size_t len);

/* The project of a Shoot's namespace as current Gardener finds it: the
 * name of the Project whose spec.namespace is namespace_ (the smallest
 * name when several claim it), read with foreach_object so that the host
 * prepares the Shoot again when a Project changes. 0, or -1 with err when
 * no Project claims the namespace. Prepare hooks only. */
int gardener_project_object(const trellis_host *h, const trellis_plugin *self,
                            const char *namespace_, char *buf, size_t len, char *err,
                            size_t errlen);

/* An owned list of strings. */
typedef struct gardener_strings {
    char **v;
    size_t n;
} gardener_strings;

/* Append a copy of s. 0, or -1 when out of memory. */
int gardener_strings_add(gardener_strings *l, const char *s);
/* Whether l holds s. Does not allocate. */
int gardener_strings_has(const gardener_strings *l, const char *s);
/* The items joined by sep into buf (truncated to len). */
void gardener_strings_join(const gardener_strings *l, const char *sep, char *buf, size_t len);
/* Free the items; l is empty afterwards. */
void gardener_strings_clear(gardener_strings *l);

/* Append the list of strings v (found at `field`, named in messages) to l.
 * Absent or null adds nothing. -1 with err naming the element when it is not a list
 * of scalars, or when out of memory. */
int gardener_strings_read(const trellis_host *h, const trellis_value *v, const char *field,
                          gardener_strings *l, char *err, size_t errlen);

#endif
