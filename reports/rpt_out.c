/*
 * rpt_out.c: the report formats that list runs rather than show one: JUnit XML (one
 * <testsuite> per scenario, one <testcase> per scenario x seed, the first violation as
 * the failure message), the Markdown digest for CI logs, and the index page of a
 * report with several runs. They work from struct rpt_brief so that a sweep of
 * thousands of runs never holds more than one run's operations in memory.
 */
#include "reports/rpt_int.h"

void rpt_brief_from(struct rpt_brief *b, const struct rpt_run *r, const char *page)
{
    memset(b, 0, sizeof *b);
    b->db_index = r->db_index;
    b->run_id = r->row.run_id;
    b->wall_ms = r->row.wall_ms;
    b->sim_end_ns = r->row.sim_end_ns;
    b->seed = r->row.seed;
    b->scenario = fl_strdup(r->row.scenario ? r->row.scenario : "?");
    b->verdict = fl_strdup(r->row.verdict ? r->row.verdict : "error");
    b->digest = r->row.digest ? fl_strdup(r->row.digest) : NULL;
    b->first_violation = fl_strdup(r->first_violation);
    b->replay = fl_strdup(r->replay ? r->replay : "");
    b->page = page ? fl_strdup(page) : NULL;
    b->counts = r->counts;
}

void rpt_brief_close(struct rpt_brief *b)
{
    free(b->scenario);
    free(b->verdict);
    free(b->digest);
    free(b->first_violation);
    free(b->replay);
    free(b->page);
    memset(b, 0, sizeof *b);
}

static void xml_str(struct fl_buf *o, const char *s)
{
    if (s)
        rpt_xml_escape(o, s, strlen(s));
}

static void junit_case(struct fl_buf *o, const struct rpt_brief *b)
{
    fl_buf_printf(o, "    <testcase classname=\"");
    xml_str(o, b->scenario);
    fl_buf_printf(o, "\" name=\"seed %llu\" time=\"%.3f\"", (unsigned long long)b->seed,
                  b->wall_ms == HIST_NULL ? 0.0 : (double)b->wall_ms / 1000.0);
    bool fail = !strcmp(b->verdict, "fail"), pass = !strcmp(b->verdict, "pass");
    if (pass) {
        fl_buf_printf(o, "/>\n");
        return;
    }
    /* type: the checker that failed first (text before the first ':'). */
    char type[64];
    snprintf(type, sizeof type, "%s", b->first_violation[0] ? b->first_violation : b->verdict);
    char *colon = strchr(type, ':');
    if (colon)
        *colon = '\0';
    fl_buf_printf(o, ">\n      <%s message=\"", fail ? "failure" : "error");
    xml_str(o, b->first_violation[0] ? b->first_violation : b->verdict);
    fl_buf_printf(o, "\" type=\"");
    xml_str(o, fail ? type : b->verdict);
    fl_buf_printf(o, "\">");
    xml_str(o, b->first_violation);
    fl_buf_printf(o, "\nverdict: ");
    xml_str(o, b->verdict);
    fl_buf_printf(o, "\nreplay: ");
    xml_str(o, b->replay);
    fl_buf_printf(o, "</%s>\n      <system-out>digest ", fail ? "failure" : "error");
    xml_str(o, b->digest ? b->digest : "-");
    fl_buf_printf(o, "&#10;replay: ");
    xml_str(o, b->replay);
    fl_buf_printf(o, "</system-out>\n    </testcase>\n");
}

void rpt_junit(struct fl_buf *o, const struct rpt_brief *runs, size_t n)
{
    size_t fails = 0, errors = 0;
    double time_s = 0;
    for (size_t i = 0; i < n; i++) {
        fails += !strcmp(runs[i].verdict, "fail");
        errors += strcmp(runs[i].verdict, "fail") && strcmp(runs[i].verdict, "pass");
        time_s += runs[i].wall_ms == HIST_NULL ? 0 : (double)runs[i].wall_ms / 1000.0;
    }
    fl_buf_printf(o,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<testsuites name=\"faultline\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
                  "time=\"%.3f\">\n",
                  n, fails, errors, time_s);
    bool *done = fl_calloc(n + 1, sizeof *done);
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t t = 0, f = 0, e = 0;
        double ts = 0;
        for (size_t j = i; j < n; j++) {
            if (strcmp(runs[j].scenario, runs[i].scenario) != 0)
                continue;
            t++;
            f += !strcmp(runs[j].verdict, "fail");
            e += strcmp(runs[j].verdict, "fail") && strcmp(runs[j].verdict, "pass");
            ts += runs[j].wall_ms == HIST_NULL ? 0 : (double)runs[j].wall_ms / 1000.0;
        }
        fl_buf_printf(o, "  <testsuite name=\"");
        xml_str(o, runs[i].scenario);
        fl_buf_printf(o,
                      "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" "
                      "time=\"%.3f\">\n",
                      t, f, e, ts);
        for (size_t j = i; j < n; j++) {
            if (done[j] || strcmp(runs[j].scenario, runs[i].scenario) != 0)
                continue;
            done[j] = true;
            junit_case(o, &runs[j]);
        }
        fl_buf_printf(o, "  </testsuite>\n");
    }
    free(done);
    fl_buf_printf(o, "</testsuites>\n");
}

void rpt_markdown(struct fl_buf *o, const struct rpt_brief *runs, size_t n)
{
    size_t c[4] = {0};
    static const char *const names[] = {"pass", "fail", "unknown", "error"};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 4; k++)
            c[k] += !strcmp(runs[i].verdict, names[k]) ||
                    (k == 3 && strcmp(runs[i].verdict, "pass") && strcmp(runs[i].verdict, "fail") &&
                     strcmp(runs[i].verdict, "unknown") && strcmp(runs[i].verdict, "error"));
    fl_buf_printf(o, "## faultline: %zu run%s, %zu pass, %zu fail, %zu unknown, %zu error\n\n", n,
                  n == 1 ? "" : "s", c[0], c[1], c[2], c[3]);
    fl_buf_printf(o, "| scenario | seed | verdict | digest | ops | first violation |\n"
                     "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct rpt_brief *b = &runs[i];
        fl_buf_printf(o, "| ");
        rpt_md_escape(o, b->scenario);
        fl_buf_printf(o, " | %llu | **%s** | %s | %lld | ", (unsigned long long)b->seed,
                      !strcmp(b->verdict, "pass") ? "pass" : b->verdict,
                      b->digest ? b->digest : "-", (long long)b->counts.total);
        rpt_md_escape(o, b->first_violation);
        fl_buf_printf(o, " |\n");
    }
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(runs[i].verdict, "pass"))
            continue;
        if (!any)
            fl_buf_printf(o, "\nReplay:\n\n```\n");
        any = true;
        struct fl_buf t;
        fl_buf_init(&t);
        rpt_bytes_text(&t, runs[i].replay, strlen(runs[i].replay));
        fl_buf_printf(o, "%s\n", fl_buf_cstr(&t));
        fl_buf_close(&t);
    }
    if (any)
        fl_buf_printf(o, "```\n");
}

void rpt_index_html(struct fl_buf *o, const struct rpt_brief *runs, size_t n)
{
    rpt_html_head(o, "faultline report");
    size_t fails = 0;
    for (size_t i = 0; i < n; i++)
        fails += strcmp(runs[i].verdict, "pass") != 0;
    fl_buf_printf(o, "<h1>faultline report: %zu runs, %zu not passing</h1>", n, fails);
    fl_buf_printf(o, "<table><tr><th>#</th><th>scenario</th><th>seed</th><th>verdict</th>"
                     "<th>digest</th><th>ops</th><th>sim</th><th>first violation</th>"
                     "<th>replay</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        const struct rpt_brief *b = &runs[i];
        char a[32];
        fl_buf_printf(o, "<tr%s><td>", strcmp(b->verdict, "pass") ? " class=\"hl\"" : "");
        if (b->page) {
            fl_buf_printf(o, "<a href=\"");
            rpt_html_escape_str(o, b->page);
            fl_buf_printf(o, "\">%d/%lld</a></td><td>", b->db_index, (long long)b->run_id);
        } else {
            fl_buf_printf(o, "%d/%lld</td><td>", b->db_index, (long long)b->run_id);
        }
        rpt_html_escape_str(o, b->scenario);
        fl_buf_printf(o, "</td><td>%llu</td><td><span class=\"v v-%s\">",
                      (unsigned long long)b->seed,
                      !strcmp(b->verdict, "pass") || !strcmp(b->verdict, "fail") ||
                              !strcmp(b->verdict, "unknown")
                          ? b->verdict
                          : "error");
        rpt_html_escape_str(o, b->verdict);
        fl_buf_printf(o, "</span></td><td><code>");
        rpt_html_escape_str(o, b->digest ? b->digest : "-");
        fl_buf_printf(o, "</code></td><td>%lld</td><td>%s</td><td>", (long long)b->counts.total,
                      rpt_fmt_ns(b->sim_end_ns, a, sizeof a));
        rpt_html_escape_str(o, b->first_violation);
        fl_buf_printf(o, "</td><td><code>");
        rpt_html_escape_str(o, b->replay);
        fl_buf_printf(o, "</code></td></tr>\n");
    }
    fl_buf_printf(o, "</table></body></html>\n");
}
