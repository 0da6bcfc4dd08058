/*
 * atomicfile.c - see atomicfile.h.
 */
#include "config.h"

#include "atomicfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---- atomic replacement ------------------------------------------------ */

/* This host's part of a temporary file's name: ".NAME.tmp.HOST.PID.XXXXXX",
 * so that a later start can tell its own stale files from another live
 * host's. */
static char host_name_buf[64];

static void host_name_init(void)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) < 0 || !h[0])
        snprintf(h, sizeof h, "localhost");
    h[sizeof h - 1] = '\0';
    /* a dot would make the name ambiguous; a slash impossible */
    for (char *c = h; *c; c++)
        if (*c == '.' || *c == '/')
            *c = '_';
    size_t n = strlen(h);
    if (n >= sizeof host_name_buf)
        n = sizeof host_name_buf - 1;
    memcpy(host_name_buf, h, n);
    host_name_buf[n] = '\0';
}

static const char *host_name(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, host_name_init);
    return host_name_buf;
}

int atomicfile_write(const char *path, const char *within, const char *data, size_t len, char *err,
                     size_t errlen)
{
    /* write to the file path names, through any link, but only inside
     * within: a link may not carry a write outside the state */
    char *target = realpath(path, NULL);
    if (!target && errno == ENOENT) {
        char *dc = xstrdup(path);
        char *rd = realpath(dirname(dc), NULL);
        const char *b = strrchr(path, '/');
        target = rd ? xasprintf("%s/%s", rd, b ? b + 1 : path) : NULL;
        free(rd);
        free(dc);
    }
    if (!target)
        return errf(err, errlen, "%s: cannot resolve the path: %s", path, strerror(errno));
    if (within && !path_within(within, target)) {
        errf(err, errlen,
             "%s: leads to %s, outside the state directory %s: not written (trellis never "
             "writes outside its state; replace the link by the file itself)",
             path, target, within);
        free(target);
        return -1;
    }
    char *dcopy = xstrdup(target), *bcopy = xstrdup(target);
    const char *dir = dirname(dcopy);
    const char *base = basename(bcopy);
    char *tmp = xasprintf("%s/.%s.tmp.%s.%ld.XXXXXX", dir, base, host_name(), (long)getpid());
    struct stat st;
    mode_t mode = 0644;
    int rc = -1, fd = -1, dfd = -1;
    if (stat(target, &st) == 0)
        mode = st.st_mode & 07777;
    fd = mkstemp(tmp);
    if (fd < 0) {
        errf(err, errlen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            errf(err, errlen, "%s: write: %s", tmp, strerror(errno));
            goto fail;
        }
        off += (size_t)w;
    }
    if (fsync(fd) < 0) {
        errf(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
        goto fail;
    }
    if (fchmod(fd, mode) < 0) {
        errf(err, errlen, "%s: chmod: %s", tmp, strerror(errno));
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        errf(err, errlen, "%s: close: %s", tmp, strerror(errno));
        goto fail;
    }
    fd = -1;
    if (rename(tmp, target) < 0) {
        errf(err, errlen, "%s: rename: %s", path, strerror(errno));
        goto fail;
    }
    /* the rename is durable once the directory is */
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0 || fsync(dfd) < 0) {
        errf(err, errlen, "%s: written, but syncing directory %s failed: %s", path, dir,
             strerror(errno));
        if (dfd >= 0)
            close(dfd);
        goto out;
    }
    close(dfd);
    rc = 0;
    goto out;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    free(tmp);
    free(dcopy);
    free(bcopy);
    free(target);
    return rc;
}

/* A temporary file of another host (or of an older trellis that did not
 * name its host) may be one being written right now: it is stale only
 * when no write could take this long. */
#define FOREIGN_TEMP_STALE_S 600

/* Is name (in dir) a temporary file of atomicfile_write that no
 * live writer holds? */
static int stale_temp(const char *dir, const char *name)
{
    if (name[0] != '.')
        return 0;
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        t = p; /* the last one: NAME itself may hold ".tmp." */
    if (!t || t == name)
        return 0;
    const char *rest = t + 5; /* HOST.PID.XXXXXX, or XXXXXX */
    size_t rl = strlen(rest);
    if (rl < 6)
        return 0;
    const char *rnd = rest + rl - 6;
    for (const char *c = rnd; *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    int ours = 0;
    long pid = 0;
    if (rnd > rest) {
        /* HOST.PID. before the random part */
        if (rnd[-1] != '.')
            return 0;
        const char *pe = rnd - 1, *pb = pe;
        while (pb > rest && isdigit((unsigned char)pb[-1]))
            pb--;
        if (pb == pe || pb == rest || pb[-1] != '.')
            return 0;
        pid = strtol(pb, NULL, 10);
        const char *me = host_name();
        size_t hl = (size_t)(pb - 1 - rest);
        ours = hl == strlen(me) && memcmp(rest, me, hl) == 0;
    }
    if (ours)
        return pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    int old = lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
              time(NULL) - st.st_mtime > FOREIGN_TEMP_STALE_S;
    free(p);
    return old;
}

size_t atomicfile_clean_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!stale_temp(dir, e->d_name))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        if (unlink(p) == 0)
            removed++;
        free(p);
    }
    closedir(d);
    return removed;
}
