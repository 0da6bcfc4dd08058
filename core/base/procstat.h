/*
 * procstat.h - what the process uses, read from /proc/self as the
 * Prometheus Go client's process collector reads it (its procfs source),
 * for the process_* metrics (metrics.c renders them at each scrape).
 */
#ifndef TRELLIS_PROCSTAT_H
#define TRELLIS_PROCSTAT_H

typedef struct procstat {
    /* each value, and have_* 1 when it could be read */
    double cpu_seconds;        /* user + system time, /proc/self/stat */
    double start_time_seconds; /* since the epoch: btime + starttime */
    double resident_bytes;     /* rss pages times the page size */
    double virtual_bytes;      /* vsize */
    double virtual_max_bytes;  /* RLIMIT_AS (unlimited: 2^64 - 1, as procfs) */
    double open_fds;           /* entries of /proc/self/fd */
    double max_fds;            /* RLIMIT_NOFILE's soft limit */
    int have_stat, have_fds, have_limits;
} procstat;

/* Fill ps; what cannot be read is left out (its have_* 0). Returns 0 when
 * everything was read, -1 otherwise. */
int procstat_read(procstat *ps);

/* The text of /proc/<pid>/stat into ps's cpu_seconds, start_time_seconds,
 * virtual_bytes and resident_bytes, given the clock ticks per second, the
 * page size and the boot time (seconds since the epoch): 0, or -1 when
 * the text is not a stat line (ps is then unchanged). Ownership of text is
 * retained by the caller; it is not changed. */
int procstat_parse_stat(const char *text, long hz, long page, double boot_time, procstat *ps);

#endif
