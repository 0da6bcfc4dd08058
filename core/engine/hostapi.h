/*
 * hostapi.h - the host function table handed to plugins.
 *
 * One process-global, immutable trellis_host whose entries forward to the
 * core modules: registration (only while the instance's init runs), args,
 * objects and values, targets in the snapshot, cycle state, post-filter
 * actions and store writes.
 */
#ifndef TRELLIS_HOSTAPI_H
#define TRELLIS_HOSTAPI_H

#include "trellis/plugin.h"

const trellis_host *hostapi_table(void);

#endif
