/*
 * statelock.c - see statelock.h.
 */
#include "config.h"

#include "statelock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int statelock_open(const char *dir, char **path, int *created, char *err, size_t errlen)
{
    char *p = xasprintf("%s/%s", dir, STATELOCK_FILE);
    /* never through a link: the lock holds a pid, written over whatever
     * it opens, and nothing of trellis is written outside the state */
    int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (created)
        *created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            errf(err, errlen,
                 "%s: cannot open the state lock: it is a symbolic link (trellis writes its "
                 "lock in the state directory itself): remove it",
                 p);
        else
            errf(err, errlen, "%s: cannot open the state lock: %s", p, strerror(errno));
        free(p);
        return -1;
    }
    *path = p;
    return fd;
}

int statelock_try(int fd, const char *path, char *err, size_t errlen)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 1;
    if (errno == EWOULDBLOCK)
        return 0;
    return errf(err, errlen, "%s: cannot lock: %s", path, strerror(errno));
}

const char *statelock_holder(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0])
        snprintf(buf, len, "?");
    return buf;
}

int statelock_record_pid(int fd)
{
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        return -1;
    return 0;
}

int statelock_is_ours(int fd, const char *path, char *why, size_t whylen)
{
    struct stat a, b;
    if (fd < 0 || fstat(fd, &a) != 0 || a.st_nlink == 0 || stat(path, &b) != 0 ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        snprintf(why, whylen,
                 "the state lock %s was removed or replaced while this host held it; another "
                 "host may be active",
                 path);
        return 0;
    }
    return 1;
}

void statelock_release(int fd, const char *path, int remove)
{
    if (fd < 0)
        return;
    char why[512];
    if (remove && statelock_is_ours(fd, path, why, sizeof why))
        unlink(path);
    close(fd);
}
