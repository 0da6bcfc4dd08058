/*
 * report.c - see report.h. The page is built in a string buffer section
 * by section: the summary, then per profile the targets (fleet.c's view,
 * with this run's placements added), the workloads the run decided on,
 * and the unschedulable ones by reason code. Bars are plain blocks sized
 * in CSS: of the target's capacity (operator.capacity_field) when it has
 * one, else of the fullest target, and the page says which.
 */
#include "config.h"

#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "fleet.h"
#include "object.h"
#include "profile.h"
#include "util.h"

/* s, escaped for HTML text and attribute values */
static void put_text(strbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            sb_puts(b, "&lt;");
            break;
        case '>':
            sb_puts(b, "&gt;");
            break;
        case '&':
            sb_puts(b, "&amp;");
            break;
        case '"':
            sb_puts(b, "&quot;");
            break;
        default:
            sb_add(b, s, 1);
        }
    }
}

static const char STYLE[] =
    "body{font-family:DejaVu Sans,sans-serif;margin:24px;color:#222;font-size:18px}"
    "h1{font-size:28px}h2{font-size:24px;margin-top:32px}h3{font-size:20px}"
    "table{border-collapse:collapse;margin:8px 0}"
    "td,th{padding:6px 12px;text-align:left;border-bottom:1px solid #ddd;vertical-align:top}"
    ".bar{width:320px;height:22px;background:#eee;border:1px solid #999}"
    ".fill{height:22px;background:#3a7bd5}.full{background:#d9534f}"
    ".tag{font-size:14px;background:#f0ad4e;padding:2px 6px;margin-left:6px}"
    ".scheduled{color:#2e7d32}.unschedulable{color:#b26a00}.error{color:#c62828}"
    ".small{font-size:15px;color:#555}"
    "td:first-child{white-space:nowrap}"
    ".amt{white-space:nowrap;margin:2px 0}.amt span{display:inline-block;min-width:270px}"
    ".amt .bar{display:inline-block;width:160px;height:16px;vertical-align:middle}"
    ".amt .fill{height:16px}";

/* Target i's named counters, one line each: "cpu 1500m/4 (37%)" and a
 * bar of the share (red at or over what it can hold). */
static void put_amounts(strbuf *b, fleet_view *v, size_t i)
{
    for (size_t c = 0; c < fleet_counter_count(v); c++) {
        char text[96];
        int pct = fleet_counter_text(v, i, c, text, sizeof text);
        sb_puts(b, "<div class=\"amt\"><span>");
        put_text(b, fleet_counter_name(v, c));
        sb_puts(b, " ");
        put_text(b, text);
        sb_printf(b,
                  "</span><div class=\"bar\"><div class=\"fill%s\" style=\"width:%d%%\">"
                  "</div></div></div>",
                  pct >= 100 ? " full" : "",
                  pct < 0     ? 0
                  : pct > 100 ? 100
                              : pct);
    }
}

/* The targets of one profile: name, bar, count, cordon, the amounts of
 * its named counters, what is on it. */
static void put_targets(strbuf *b, fleet_view *v)
{
    size_t most = 1;
    int any_cap = 0;
    int amounts = fleet_counter_count(v) > 0;
    for (size_t i = 0; i < fleet_count(v); i++) {
        if (fleet_placed_count(v, i) > most)
            most = fleet_placed_count(v, i);
        any_cap |= fleet_capacity(v, i) > 0;
    }
    sb_printf(b, "<h3>Targets</h3><p class=\"small\">Bars: workloads placed, %s%s.</p>",
              any_cap ? "of the target's capacity" : "of the fullest target's",
              amounts ? "; allocated: what its workloads use of what it can hold" : "");
    /* the text first, the bar last: a row reads left to right */
    sb_printf(b, "<table><tr><th>Target</th><th>Workloads</th><th>Use</th>%s<th>On it</th></tr>",
              amounts ? "<th>Allocated</th>" : "");
    for (size_t i = 0; i < fleet_count(v); i++) {
        size_t n = fleet_placed_count(v, i);
        int64_t cap = fleet_capacity(v, i);
        double share = cap > 0 ? (double)n / (double)cap : (double)n / (double)most;
        sb_puts(b, "<tr><td>");
        put_text(b, fleet_target(v, i)->key);
        if (fleet_cordoned(v, i))
            sb_puts(b, "<span class=\"tag\">cordoned</span>");
        sb_puts(b, "</td><td>");
        if (cap >= 0)
            sb_printf(b, "%zu of %lld", n, (long long)cap);
        else
            sb_printf(b, "%zu", n);
        /* red: at or over its capacity; the fullest target is not full */
        sb_printf(b,
                  "</td><td><div class=\"bar\"><div class=\"fill%s\" style=\"width:%.0f%%\">"
                  "</div></div></td>",
                  cap > 0 && share >= 1 ? " full" : "", share > 1 ? 100.0 : share * 100);
        if (amounts) {
            sb_puts(b, "<td>");
            put_amounts(b, v, i);
            sb_puts(b, "</td>");
        }
        sb_puts(b, "<td class=\"small\">");
        for (size_t k = 0; k < n; k++) {
            sb_puts(b, k ? ", " : "");
            put_text(b, fleet_placed_at(v, i, k)->key);
        }
        sb_puts(b, "</td></tr>");
    }
    sb_puts(b, "</table>");
}

/* Where each workload of the run went: result, target, message. */
static void put_decisions(strbuf *b, const decisions *ds, const profile *p)
{
    sb_puts(b, "<h3>Workloads this run decided on</h3><table><tr><th>Workload</th>"
               "<th>Result</th><th>Target</th><th>Message</th></tr>");
    for (size_t i = 0; i < decisions_count(ds); i++) {
        const decision *d = decisions_at(ds, i);
        if (d->p != p)
            continue;
        dec_result r = d->result == DEC_PENDING ? DEC_UNSCHEDULABLE : d->result;
        const char *name = decision_result_name(r);
        sb_puts(b, "<tr><td>");
        put_text(b, d->w->key);
        sb_printf(b, "</td><td class=\"%s\">%s</td><td>", name, name);
        for (uint32_t k = 0; k < d->n_targets; k++) {
            sb_puts(b, k ? ", " : "");
            put_text(b, d->targets[k]);
        }
        sb_puts(b, "</td><td class=\"small\">");
        put_text(b, d->message);
        sb_puts(b, "</td></tr>");
    }
    sb_puts(b, "</table>");
}

/* The reason codes that rejected d somewhere, each once, into codes. */
static size_t codes_of(const decision *d, const char **codes, size_t max)
{
    size_t n = 0;
    for (uint32_t k = 0; k < d->n_cands; k++) {
        const char *c = d->cands[k].feasible ? NULL : d->cands[k].code;
        size_t j = 0;
        while (c && j < n && strcmp(codes[j], c) != 0)
            j++;
        if (c && j == n && n < max)
            codes[n++] = c;
    }
    return n;
}

/* The unschedulable workloads of p grouped by reason code (a workload
 * under each code some target rejected it with). */
static void put_unschedulable(strbuf *b, const decisions *ds, const profile *p)
{
    const char *all[64];
    size_t n_all = 0;
    for (size_t i = 0; i < decisions_count(ds); i++) {
        const decision *d = decisions_at(ds, i);
        if (d->p == p && d->result != DEC_SCHEDULED && d->result != DEC_ERROR)
            n_all += codes_of(d, all + n_all, 64 - n_all);
    }
    sb_puts(b, "<h3>Unschedulable, by reason code</h3>");
    if (!n_all) {
        sb_puts(b, "<p>None.</p>");
        return;
    }
    sb_puts(b, "<table><tr><th>Reason code</th><th>Workloads</th><th>Which</th></tr>");
    for (size_t c = 0; c < n_all; c++) {
        size_t j = 0;
        while (j < c && strcmp(all[j], all[c]) != 0)
            j++;
        if (j < c)
            continue; /* shown already */
        strbuf which;
        sb_init(&which);
        size_t count = 0;
        for (size_t i = 0; i < decisions_count(ds); i++) {
            const decision *d = decisions_at(ds, i);
            const char *codes[64];
            size_t nc = d->p == p && d->result != DEC_SCHEDULED && d->result != DEC_ERROR
                            ? codes_of(d, codes, 64)
                            : 0;
            for (size_t k = 0; k < nc; k++)
                if (strcmp(codes[k], all[c]) == 0) {
                    sb_puts(&which, count++ ? ", " : "");
                    put_text(&which, d->w->key);
                }
        }
        sb_puts(b, "<tr><td>");
        put_text(b, all[c]);
        sb_printf(b, "</td><td>%zu</td><td class=\"small\">%s</td></tr>", count,
                  which.s ? which.s : "");
        sb_free(&which);
    }
    sb_puts(b, "</table>");
}

/* One profile's sections. */
static void put_profile(strbuf *b, sched *s, const profile *p)
{
    const decisions *ds = sched_decisions(s);
    fleet_view *v = fleet_build(s, p);
    /* what the run would have written: evictions off, placements on */
    for (size_t i = 0; i < decisions_eviction_count(ds); i++) {
        const eviction *e = decisions_eviction_at(ds, i);
        fleet_unplace(v, e->workload.kind, e->workload.namespace_, e->workload.name);
    }
    for (size_t i = 0; i < decisions_count(ds); i++) {
        const decision *d = decisions_at(ds, i);
        for (uint32_t k = 0; k < d->n_evicted; k++)
            fleet_unplace(v, d->evicted[k].kind, d->evicted[k].namespace_, d->evicted[k].name);
    }
    for (size_t i = 0; i < decisions_count(ds); i++) {
        const decision *d = decisions_at(ds, i);
        for (uint32_t k = 0; d->p == p && d->result == DEC_SCHEDULED && k < d->n_targets; k++)
            fleet_place(v, d->targets[k], d->w);
    }
    const cfg_profile *pc = profile_cfg(p);
    sb_puts(b, "<h2>Profile ");
    put_text(b, profile_name(p));
    sb_puts(b, ": ");
    put_text(b, pc->workload_kind);
    sb_puts(b, " on ");
    put_text(b, pc->target_kind);
    sb_puts(b, "</h2>");
    put_targets(b, v);
    put_decisions(b, ds, p);
    put_unschedulable(b, ds, p);
    fleet_free(v);
}

int report_write_html(const char *file, sched *s, const char *title, char *err, size_t errlen)
{
    const decisions *ds = sched_decisions(s);
    size_t counts[4] = {0};
    for (size_t i = 0; i < decisions_count(ds); i++) {
        dec_result r = decisions_at(ds, i)->result;
        counts[r == DEC_PENDING ? DEC_UNSCHEDULABLE : r]++;
    }
    strbuf b;
    sb_init(&b);
    sb_puts(&b, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>trellis: ");
    put_text(&b, title);
    sb_printf(&b, "</title><style>%s</style></head><body><h1>trellis report</h1><p>", STYLE);
    put_text(&b, title);
    sb_printf(&b,
              "</p><p><span class=\"scheduled\">%zu scheduled</span>, "
              "<span class=\"unschedulable\">%zu unschedulable</span>, "
              "<span class=\"error\">%zu error</span></p>",
              counts[DEC_SCHEDULED], counts[DEC_UNSCHEDULABLE], counts[DEC_ERROR]);
    for (size_t i = 0; i < sched_profile_count(s); i++)
        put_profile(&b, s, sched_profile_at(s, i));
    sb_puts(&b, "</body></html>\n");
    FILE *f = fopen(file, "w");
    int rc = 0;
    if (!f || fwrite(b.s, 1, b.len, f) != b.len) {
        snprintf(err, errlen, "%s: %s", file, strerror(errno));
        rc = -1;
    }
    if (f && fclose(f) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: %s", file, strerror(errno));
        rc = -1;
    }
    sb_free(&b);
    return rc;
}
