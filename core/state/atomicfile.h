/*
 * atomicfile.h - replacing a file so that a reader sees the old or the
 * new content and never a mix, and cleaning up after a writer killed in
 * the middle.
 */
#ifndef TRELLIS_ATOMICFILE_H
#define TRELLIS_ATOMICFILE_H

#include <stddef.h>

/* Replace `path` by data atomically: a temporary file
 * (".NAME.tmp.HOST.PID.XXXXXX") in the directory of the file path leads
 * to (links resolved), fsync, rename, fsync of the directory. When within
 * is not NULL (a real path, as realpath gives it), a path that leads
 * outside it is refused. 0, or -1 with err filled (the original file is
 * untouched then). The file's permission bits are kept. */
int atomicfile_write(const char *path, const char *within, const char *data, size_t len, char *err,
                     size_t errlen);

/* Remove the temporary files of atomicfile_write in dir that no
 * live writer holds: this host's whose process is gone, and any other's
 * older than ten minutes (a kill -9 during a write leaves one behind).
 * Returns how many were removed. */
size_t atomicfile_clean_temps(const char *dir);

#endif
