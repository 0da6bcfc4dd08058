/*
 * store_file.h - the embedded store: a directory of manifest files.
 *
 * Every .yaml/.yml/.json file under the directory (recursively, hidden
 * files and directories skipped, in path order) is read; the state is the
 * files. A patch is written back into the file the object came from by a
 * format-preserving edit (writeback.c), atomically, leaving every other
 * byte of the file as it was. A file that changed on disk since it was
 * read is not overwritten: its patches are refused at flush with a message
 * naming it. Created objects are written as new files
 * (<kind>-<namespace>-<name>.json; Events below events/).
 *
 * watch follows the directory tree with inotify: a file written, moved in
 * or removed is read again, and only the objects whose content changed
 * become events for dispatch; the store's own writes come back the same
 * way, so a written binding is seen as the workload's modification.
 */
#ifndef TRELLIS_STORE_FILE_H
#define TRELLIS_STORE_FILE_H

#include "store.h"

/* A store over dir. NULL with err when dir is not a readable directory. */
store *store_file_open(const char *dir, int dry_run, char *err, size_t errlen);

#endif
