/*
 * procstat.c - see procstat.h. The fields of /proc/self/stat after the
 * command name (which may hold spaces and parentheses: the last ')' ends
 * it) are counted from the state, field 3 of proc(5).
 */
#include "config.h"

#include "procstat.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The boot time in seconds since the epoch (/proc/stat btime), or -1. */
static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[256];
    double bt = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "btime %llu", &v) == 1) {
            bt = (double)v;
            break;
        }
    }
    fclose(f);
    return bt;
}

int procstat_parse_stat(const char *text, long hz, long page, double boot_time, procstat *ps)
{
    if (hz <= 0 || page <= 0 || !(boot_time >= 0))
        return -1;
    const char *p = strrchr(text, ')');
    if (!p || !strchr(text, '('))
        return -1;
    p++;
    /* fields 3.. : state is token 0, utime (14) token 11, stime 12,
     * starttime (22) 19, vsize 20, rss 21: those read must be unsigned
     * decimals; the others (tpgid is -1 without a terminal) need only be
     * there */
    unsigned long long tok[22] = {0};
    int k = 0;
    while (k < 22) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            return -1;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\n')
            p++;
        if (k != 11 && k != 12 && k < 19) {
            k++;
            continue;
        }
        unsigned long long v = 0;
        for (const char *d = start; d < p; d++) {
            if (*d < '0' || *d > '9' || v > (UINT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (unsigned long long)(*d - '0');
        }
        tok[k++] = v;
    }
    ps->cpu_seconds = (double)(tok[11] + tok[12]) / (double)hz;
    ps->start_time_seconds = boot_time + (double)tok[19] / (double)hz;
    ps->virtual_bytes = (double)tok[20];
    ps->resident_bytes = (double)tok[21] * (double)page;
    return 0;
}

static int read_stat(procstat *ps)
{
    char buf[4096];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return procstat_parse_stat(buf, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), boot_time(), ps);
}

static int count_fds(double *out)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    double n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    *out = n;
    return 0;
}

static double limit_value(rlim_t v)
{
    return v == RLIM_INFINITY ? (double)UINT64_MAX : (double)v;
}

int procstat_read(procstat *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->have_stat = read_stat(ps) == 0;
    ps->have_fds = count_fds(&ps->open_fds) == 0;
    struct rlimit nofile, as;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && getrlimit(RLIMIT_AS, &as) == 0) {
        ps->max_fds = limit_value(nofile.rlim_cur);
        ps->virtual_max_bytes = limit_value(as.rlim_cur);
        ps->have_limits = 1;
    }
    return ps->have_stat && ps->have_fds && ps->have_limits ? 0 : -1;
}
