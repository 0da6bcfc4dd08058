/*
 * clock.c - wall-clock readings and RFC 3339 texts.
 */
#include "clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t clock_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t clock_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void clock_deadline(struct timespec *ts, uint32_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* n decimal digits at *p: the value, or -1. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

static int expect(const char **p, char c)
{
    if (**p != c)
        return -1;
    (*p)++;
    return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int month_days(int y, int m)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : len[m - 1];
}

int clock_parse(const char *text, int64_t *ms)
{
    if (!text)
        return -1;
    const char *p = text;
    int y = digits(&p, 4);
    if (y < 0 || expect(&p, '-') < 0)
        return -1;
    int mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || expect(&p, '-') < 0)
        return -1;
    int d = digits(&p, 2);
    if (d < 1 || d > month_days(y, mo))
        return -1;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return -1;
    p++;
    int h = digits(&p, 2);
    if (h < 0 || h > 23 || expect(&p, ':') < 0)
        return -1;
    int mi = digits(&p, 2);
    if (mi < 0 || mi > 59 || expect(&p, ':') < 0)
        return -1;
    int s = digits(&p, 2);
    if (s < 0 || s > 60) /* a leap second reads as the next second's start */
        return -1;
    int frac = 0;
    if (*p == '.') {
        p++;
        int n = 0, scale = 100;
        while (*p >= '0' && *p <= '9') {
            frac += (*p - '0') * scale;
            scale /= 10;
            p++;
            n++;
        }
        if (n == 0)
            return -1;
    }
    int off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1;
        p++;
        int oh = digits(&p, 2);
        if (oh < 0 || oh > 23 || expect(&p, ':') < 0)
            return -1;
        int om = digits(&p, 2);
        if (om < 0 || om > 59)
            return -1;
        off = sign * (oh * 60 + om);
    } else {
        return -1;
    }
    if (*p)
        return -1;
    int64_t secs =
        days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + s - (int64_t)off * 60;
    *ms = secs * 1000 + frac;
    return 0;
}

void clock_format(int64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, len, "invalid-time");
}
