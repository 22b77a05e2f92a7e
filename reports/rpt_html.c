/*
 * rpt_html.c: the HTML page of one run: header (scenario, seed, verdict, digest,
 * replay command), the verdict of every checker with its explanation (for a
 * linearizability violation the operations that cannot be ordered, highlighted in the
 * timeline and the table, and the longest linearizable prefix; for a watch violation
 * the watch, revision and guarantee), every expect, the timeline, per-client balancer
 * figures, faults, operations (capped at RPT_OPS_TABLE_MAX rows) and node events.
 *
 * The page is self-contained: inline CSS, inline SVG and a few lines of JS (clicking a
 * bar jumps to its row); nothing is fetched. Every string from the history passes
 * through rpt_html_escape, including JSON details, which are pretty-printed first.
 */
#include "reports/rpt_int.h"

#define RPT_NODE_EVENTS_MAX 1000

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.2em;color:#222;background:#fafafa}"
    "h1{font-size:1.35em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .4em;border-bottom:1px "
    "solid #ccc}"
    "table{border-collapse:collapse;margin:.3em 0;font-size:13px}td,th{border:1px solid "
    "#ddd;padding:2px 6px;text-align:left;vertical-align:top}th{background:#eee}"
    "pre{background:#f0f0f0;padding:6px;overflow:auto;max-height:24em;white-space:pre-wrap;"
    "word-break:break-all}"
    ".v{display:inline-block;padding:1px 8px;border-radius:3px;color:#fff;font-weight:600}"
    ".v-pass{background:#2e7d32}.v-fail{background:#c62828}.v-unknown{background:#ef6c00}"
    ".v-error{background:#6a1b9a}.box{border:2px solid #c62828;background:#fff3f3;padding:6px "
    "10px;margin:.6em 0}"
    "tr.hl td{background:#ffe0e0}code{background:#eee;padding:0 3px}"
    ".tlw{overflow-x:auto;background:#fff;border:1px solid #ccc}"
    "svg .lane{fill:#f7f7f7}svg .grid{stroke:#e4e4e4}svg .ax,svg .ln{font-size:11px;fill:#444}"
    "svg .tt{font-size:10px;fill:#fff}svg .fl-t{font-size:10px;fill:#8a5a00}"
    "svg .op.ok{fill:#43a047}svg .op.fl{fill:#e53935}svg .op.un{fill:#fb8c00}"
    "svg .op.open{opacity:.55}svg .op.hl{stroke:#000;stroke-width:1.5}svg .op:hover{opacity:.7}"
    "svg .rf{fill:#b0bec5}svg .rp{fill:#ffe082}svg .rc{fill:#ffb300}svg .rl{fill:#1e88e5}"
    "svg .rd{fill:#212121}svg .rz{fill:#8e24aa}svg .fs{fill:#ffca28;opacity:.16}"
    "svg .fb{fill:#ffa000}svg .fi{stroke:#8d6e63;stroke-dasharray:3 3}"
    "svg .mk-crash{fill:#000}svg .mk-restart{fill:#43a047}"
    "svg .hlv{stroke:#d50000;stroke-width:1;opacity:.6}"
    "svg #plot line,svg #plot .hl{vector-effect:non-scaling-stroke}"
    "svg.zoomed #plot text{display:none}svg{cursor:grab;user-select:none}"
    ".zb button{margin-right:4px}"
    ".lg span{display:inline-block;width:12px;height:10px;margin:0 3px 0 10px}"
    "details{margin:.3em 0}.small{color:#666;font-size:12px}";

/* Click a bar: jump to its row. Wheel or the buttons: zoom around the pointer (or the
 * middle); drag: pan; the readout shows the visible time range. Labels inside the
 * plot hide while zoomed (they would be stretched). */
static const char js[] =
    "(function(){var svg=document.getElementById('timeline'),g=document.getElementById('plot');"
    "if(!svg||!g)return;var X0=+g.getAttribute('data-x0'),W=+g.getAttribute('data-w'),"
    "END=+g.getAttribute('data-end-ns'),k=1,tx=0,drag=null,moved=false,"
    "info=document.getElementById('tlinfo');"
    "function fmt(ns){var sp=END/k;return (ns/1e9).toFixed(sp<1e8?6:sp<1e10?3:1)+' s';}"
    "function apply(){if(k<1)k=1;if(k>20000)k=20000;if(tx>0)tx=0;if(tx<W-W*k)tx=W-W*k;"
    "g.setAttribute('transform','translate('+(X0*(1-k)+tx)+',0) scale('+k+',1)');"
    "svg.classList.toggle('zoomed',k>1);if(info)info.textContent='showing '+"
    "fmt(-tx/(W*k)*END)+' to '+fmt((W-tx)/(W*k)*END)+(k>1?' (x'+k.toFixed(1)+')':'');}"
    "function px(e){var r=svg.getBoundingClientRect();"
    "return (e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;}"
    "function zoom(f,p){var x=(p-X0-tx)/k;k*=f;if(k<1)k=1;if(k>20000)k=20000;tx=p-X0-k*x;"
    "apply();}"
    "svg.addEventListener('wheel',function(e){e.preventDefault();"
    "zoom(e.deltaY<0?1.25:0.8,px(e));},{passive:false});"
    "svg.addEventListener('mousedown',function(e){drag={x:px(e),tx:tx};moved=false;});"
    "window.addEventListener('mousemove',function(e){if(!drag)return;var d=px(e)-drag.x;"
    "if(Math.abs(d)>2)moved=true;tx=drag.tx+d;apply();});"
    "window.addEventListener('mouseup',function(){drag=null;});"
    "svg.addEventListener('click',function(e){if(moved)return;"
    "var id=e.target.getAttribute&&e.target.getAttribute('data-op');"
    "if(id){var row=document.getElementById('op-'+id);if(row){var d=row.closest('details');"
    "if(d)d.open=true;row.scrollIntoView();row.style.outline='2px solid #000';}}});"
    "var b=function(id,f){var el=document.getElementById(id);"
    "if(el)el.addEventListener('click',f);};"
    "b('zin',function(){zoom(2,X0+W/2);});b('zout',function(){zoom(0.5,X0+W/2);});"
    "b('zreset',function(){k=1;tx=0;apply();});apply();})();";

void rpt_html_head(struct fl_buf *out, const char *title)
{
    fl_buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<meta name=\"viewport\" content=\"width=device-width\"><title>");
    rpt_html_escape_str(out, title);
    fl_buf_printf(out, "</title><style>%s</style></head><body>\n", css);
}

static void verdict_badge(struct fl_buf *o, const char *v)
{
    const char *cls =
        v && (!strcmp(v, "pass") || !strcmp(v, "fail") || !strcmp(v, "unknown")) ? v : "error";
    fl_buf_printf(o, "<span class=\"v v-%s\">", cls);
    rpt_html_escape_str(o, v ? v : "error");
    fl_buf_printf(o, "</span>");
}

static void json_pre(struct fl_buf *o, const json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_ENCODE_ANY);
    fl_buf_printf(o, "<pre>");
    rpt_html_escape_str(o, s ? s : "null");
    fl_buf_printf(o, "</pre>");
    free(s);
}

static void json_inline(struct fl_buf *o, const json_t *j)
{
    if (json_is_string(j)) {
        rpt_html_escape(o, json_string_value(j), json_string_length(j));
        return;
    }
    /* Bytes that are not UTF-8 ({"hex":...}, history.h): shown with \xNN escapes. */
    if (json_is_object(j) && json_object_size(j) == 1 && json_object_get(j, "hex")) {
        struct fl_buf b;
        bool is_null;
        fl_buf_init(&b);
        if (hist_json_bytes_get(j, &b, &is_null) == FL_OK) {
            rpt_html_escape(o, b.data ? (const char *)b.data : "", b.len);
            fl_buf_close(&b);
            return;
        }
        fl_buf_close(&b);
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    rpt_html_escape_str(o, s ? s : "null");
    free(s);
}

static void header(struct fl_buf *o, const struct rpt_run *r, const char *nav_back)
{
    char a[32];
    if (nav_back) {
        fl_buf_printf(o, "<p><a href=\"");
        rpt_html_escape_str(o, nav_back);
        fl_buf_printf(o, "\">&larr; all runs</a></p>");
    }
    fl_buf_printf(o, "<h1>");
    rpt_html_escape_str(o, r->row.scenario);
    fl_buf_printf(o, " &middot; seed %llu &middot; ", (unsigned long long)r->row.seed);
    verdict_badge(o, r->row.verdict);
    fl_buf_printf(o, "</h1><p class=\"small\">run %lld in <code>", (long long)r->row.run_id);
    rpt_html_escape_str(o, r->db_path);
    fl_buf_printf(o, "</code> &middot; digest <code>");
    rpt_html_escape_str(o, r->row.digest ? r->row.digest : "-");
    fl_buf_printf(o, "</code> &middot; simulated %s", rpt_fmt_ns(r->row.sim_end_ns, a, sizeof a));
    if (r->row.wall_ms != HIST_NULL)
        fl_buf_printf(o, " in %lld ms wall", (long long)r->row.wall_ms);
    fl_buf_printf(o, " &middot; started ");
    rpt_html_escape_str(o, r->row.started_at);
    fl_buf_printf(o, " &middot; ops %lld (ok %lld, fail %lld, unknown %lld)</p>",
                  (long long)r->counts.total, (long long)r->counts.ok, (long long)r->counts.fail,
                  (long long)r->counts.unknown);
    if (r->first_violation[0]) {
        fl_buf_printf(o, "<div class=\"box\"><b>First violation:</b> ");
        rpt_html_escape_str(o, r->first_violation);
        fl_buf_printf(o, "</div>");
    }
    fl_buf_printf(o, "<p>Replay: <code id=\"replay\">");
    rpt_html_escape_str(o, r->replay);
    fl_buf_printf(o, "</code></p>\n");
}

static void op_row_json(struct fl_buf *o, const json_t *op)
{
    char a[32], b[32];
    json_t *ret = json_object_get(op, "return");
    int64_t id = json_integer_value(json_object_get(op, "op_id"));
    fl_buf_printf(o, "<tr class=\"hl\"><td><a href=\"#op-%lld\">%lld</a></td><td>%lld</td><td>",
                  (long long)id, (long long)id,
                  (long long)json_integer_value(json_object_get(op, "client")));
    rpt_html_escape_str(o, json_string_value(json_object_get(op, "op")));
    fl_buf_printf(o, "</td><td>%s</td><td>%s</td><td>",
                  rpt_fmt_ns(json_integer_value(json_object_get(op, "call")), a, sizeof a),
                  json_is_integer(ret) ? rpt_fmt_ns(json_integer_value(ret), b, sizeof b) : "-");
    rpt_html_escape_str(o, json_string_value(json_object_get(op, "status")));
    json_t *rev = json_object_get(op, "revision");
    if (json_is_integer(rev))
        fl_buf_printf(o, "</td><td>%lld</td></tr>", (long long)json_integer_value(rev));
    else
        fl_buf_printf(o, "</td><td>-</td></tr>");
}

static void op_table_json(struct fl_buf *o, const json_t *ops)
{
    fl_buf_printf(o, "<table><tr><th>op</th><th>client</th><th>operation</th><th>call</th>"
                     "<th>return</th><th>status</th><th>revision</th></tr>");
    size_t i;
    json_t *v;
    json_array_foreach(ops, i, v) op_row_json(o, v);
    fl_buf_printf(o, "</table>");
}

static void lin_detail(struct fl_buf *o, const struct rpt_check *c)
{
    json_t *d = c->detail, *ex = json_object_get(d, "explanation");
    if (!ex)
        ex = d;
    const char *reason = json_string_value(json_object_get(d, "reason"));
    if (reason) {
        fl_buf_printf(o, "<p><b>Reason:</b> ");
        rpt_html_escape_str(o, reason);
        fl_buf_printf(o, "</p>");
    }
    json_t *unord = json_object_get(ex, "unordered_ops");
    if (json_array_size(unord)) {
        fl_buf_printf(o, "<p><b>Operations that cannot be ordered</b> (highlighted in the "
                         "timeline):</p>");
        op_table_json(o, unord);
    }
    json_t *viol = json_object_get(ex, "violations");
    size_t i;
    json_t *v;
    json_array_foreach(viol, i, v)
    {
        fl_buf_printf(o, "<p>Violation %zu (", i + 1);
        json_inline(o, json_object_get(v, "kind"));
        fl_buf_printf(o, ", revision ");
        json_inline(o, json_object_get(v, "revision"));
        fl_buf_printf(o, "): ");
        json_inline(o, json_object_get(v, "message"));
        fl_buf_printf(o, "</p>");
        op_table_json(o, json_object_get(v, "ops"));
        if (i >= 9)
            break;
    }
    json_t *plen = json_object_get(ex, "prefix_length");
    if (json_is_integer(plen)) {
        fl_buf_printf(o, "<p><b>Longest linearizable prefix:</b> %lld operations",
                      (long long)json_integer_value(plen));
        json_t *prev = json_object_get(ex, "prefix_revision");
        if (json_is_integer(prev))
            fl_buf_printf(o, ", up to revision %lld", (long long)json_integer_value(prev));
        json_t *key = json_object_get(ex, "key");
        if (key) {
            fl_buf_printf(o, " on key ");
            json_inline(o, key);
        }
        json_t *ids = json_object_get(ex, "prefix_op_ids");
        if (json_array_size(ids)) {
            fl_buf_printf(o, ": ops ");
            json_array_foreach(ids, i, v)
            {
                fl_buf_printf(o, "%s<a href=\"#op-%lld\">%lld</a>", i ? ", " : "",
                              (long long)json_integer_value(v), (long long)json_integer_value(v));
            }
            if (json_array_size(ids) >= 200)
                fl_buf_printf(o, ", …");
        }
        fl_buf_printf(o, ".</p>");
    }
}

static void watch_detail(struct fl_buf *o, const struct rpt_check *c)
{
    json_t *g = json_object_get(c->detail, "guarantees");
    const char *k;
    json_t *v;
    if (json_object_size(g)) {
        fl_buf_printf(o, "<table><tr><th>guarantee</th><th>verdict</th><th>violations</th></tr>");
        json_object_foreach(g, k, v)
        {
            fl_buf_printf(o, "<tr><td>");
            rpt_html_escape_str(o, k);
            fl_buf_printf(o, "</td><td>");
            verdict_badge(o, json_string_value(json_object_get(v, "verdict")));
            fl_buf_printf(o, "</td><td>%lld</td></tr>",
                          (long long)json_integer_value(json_object_get(v, "violations")));
        }
        fl_buf_printf(o, "</table>");
    }
    json_t *viol = json_object_get(c->detail, "violations");
    if (!json_array_size(viol))
        return;
    fl_buf_printf(o, "<table><tr><th>watch</th><th>revision</th><th>guarantee</th>"
                     "<th>message</th></tr>");
    size_t i;
    json_array_foreach(viol, i, v)
    {
        fl_buf_printf(o, "<tr class=\"hl\"><td>");
        json_inline(o, json_object_get(v, "watch"));
        fl_buf_printf(o, "</td><td>");
        json_inline(o, json_object_get(v, "revision"));
        fl_buf_printf(o, "</td><td>");
        json_inline(o, json_object_get(v, "guarantee"));
        fl_buf_printf(o, "</td><td>");
        json_inline(o, json_object_get(v, "message"));
        fl_buf_printf(o, "</td></tr>");
        if (i >= 199)
            break;
    }
    fl_buf_printf(o, "</table>");
}

static void checks(struct fl_buf *o, const struct rpt_run *r)
{
    fl_buf_printf(o, "<h2>Checks</h2><table><tr><th>checker</th><th>verdict</th>"
                     "<th>elapsed</th></tr>");
    for (size_t i = 0; i < r->check_count; i++) {
        const struct rpt_check *c = &r->checks[i];
        if (!strcmp(c->checker, "expect"))
            continue;
        fl_buf_printf(o, "<tr><td><a href=\"#chk-");
        rpt_html_escape_str(o, c->checker);
        fl_buf_printf(o, "\">");
        rpt_html_escape_str(o, c->checker);
        fl_buf_printf(o, "</a></td><td>");
        verdict_badge(o, c->verdict);
        fl_buf_printf(o, "</td><td>%lld ms</td></tr>", (long long)c->elapsed_ms);
    }
    fl_buf_printf(o, "</table>");
    for (size_t i = 0; i < r->check_count; i++) {
        const struct rpt_check *c = &r->checks[i];
        if (!strcmp(c->checker, "expect"))
            continue;
        fl_buf_printf(o, "<h3 id=\"chk-");
        rpt_html_escape_str(o, c->checker);
        fl_buf_printf(o, "\">");
        rpt_html_escape_str(o, c->checker);
        fl_buf_printf(o, " ");
        verdict_badge(o, c->verdict);
        fl_buf_printf(o, "</h3>");
        if (!strcmp(c->checker, "linearizability"))
            lin_detail(o, c);
        else if (!strcmp(c->checker, "watch"))
            watch_detail(o, c);
        fl_buf_printf(o, "<details%s><summary>detail</summary>",
                      strcmp(c->verdict, "pass") && strcmp(c->checker, "linearizability") &&
                              strcmp(c->checker, "watch")
                          ? " open"
                          : "");
        json_pre(o, c->detail);
        fl_buf_printf(o, "</details>");
    }
}

static void expects(struct fl_buf *o, const struct rpt_run *r)
{
    fl_buf_printf(o, "<h2>Expectations</h2><table><tr><th>verdict</th><th>message</th>"
                     "<th>observed</th><th>line</th><th>at</th></tr>");
    size_t n = 0;
    for (size_t i = 0; i < r->check_count; i++) {
        const struct rpt_check *c = &r->checks[i];
        if (strcmp(c->checker, "expect") != 0)
            continue;
        char a[32];
        json_t *at = json_object_get(c->detail, "at_ns");
        fl_buf_printf(o, "<tr%s><td>", strcmp(c->verdict, "pass") ? " class=\"hl\"" : "");
        verdict_badge(o, c->verdict);
        fl_buf_printf(o, "</td><td>");
        json_inline(o,
                    json_is_object(c->detail) ? json_object_get(c->detail, "message") : c->detail);
        fl_buf_printf(o, "</td><td>");
        json_inline(o, json_object_get(c->detail, "observed"));
        fl_buf_printf(o, "</td><td>");
        json_inline(o, json_object_get(c->detail, "line"));
        fl_buf_printf(o, "</td><td>%s</td></tr>",
                      json_is_integer(at) ? rpt_fmt_ns(json_integer_value(at), a, sizeof a) : "-");
        n++;
    }
    fl_buf_printf(o, "</table>");
    if (!n)
        fl_buf_printf(o, "<p class=\"small\">The scenario made no expectations.</p>");
}

/* Each client's endpoints at the end and its last attempts, from the history. */
static void client_details(struct fl_buf *o, json_t *arr)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        json_t *eps = json_object_get(c, "endpoints"), *att = json_object_get(c, "last_attempts");
        if (!json_array_size(eps) && !json_array_size(att))
            continue;
        fl_buf_printf(o, "<details><summary>client %lld (",
                      (long long)json_integer_value(json_object_get(c, "id")));
        rpt_html_escape_str(o, json_string_value(json_object_get(c, "balancer")));
        fl_buf_printf(o, "): endpoints and the last %zu attempts</summary>", json_array_size(att));
        fl_buf_printf(o, "<table><tr><th>member</th><th>state</th><th>unhealthy until</th>"
                         "<th>pinned</th><th>in flight</th><th>connections opened</th></tr>");
        size_t k;
        json_t *e;
        json_array_foreach(eps, k, e)
        {
            json_t *u = json_object_get(e, "unhealthy_until_ms");
            fl_buf_printf(o, "<tr><td>%lld</td><td>",
                          (long long)json_integer_value(json_object_get(e, "member")));
            rpt_html_escape_str(o, json_string_value(json_object_get(e, "state")));
            if (json_is_integer(u))
                fl_buf_printf(o, "</td><td>%lld ms", (long long)json_integer_value(u));
            else
                fl_buf_printf(o, "</td><td>-");
            fl_buf_printf(o, "</td><td>%s</td><td>%lld</td><td>%lld</td></tr>",
                          json_is_true(json_object_get(e, "pinned")) ? "yes" : "",
                          (long long)json_integer_value(json_object_get(e, "in_flight")),
                          (long long)json_integer_value(json_object_get(e, "connections_opened")));
        }
        fl_buf_printf(o, "</table><table><tr><th>sent</th><th>answered</th><th>member</th>"
                         "<th>call</th><th>outcome</th><th>error</th><th>retry</th></tr>");
        json_array_foreach(att, k, e)
        {
            char a[32], b[32];
            json_t *end = json_object_get(e, "end_ns");
            fl_buf_printf(o, "<tr><td>%s</td><td>%s</td><td>%lld</td><td>",
                          rpt_fmt_ns(json_integer_value(json_object_get(e, "at_ns")), a, sizeof a),
                          json_is_integer(end) ? rpt_fmt_ns(json_integer_value(end), b, sizeof b)
                                               : "-",
                          (long long)json_integer_value(json_object_get(e, "member")));
            rpt_html_escape_str(o, json_string_value(json_object_get(e, "call")));
            fl_buf_printf(o, "</td><td>");
            rpt_html_escape_str(o, json_string_value(json_object_get(e, "outcome")));
            fl_buf_printf(o, "</td><td>");
            rpt_html_escape_str(o, json_string_value(json_object_get(e, "error")));
            fl_buf_printf(o, "</td><td>%s</td></tr>",
                          json_is_true(json_object_get(e, "retry")) ? "yes" : "");
        }
        fl_buf_printf(o, "</table></details>");
    }
}

static void clients(struct fl_buf *o, const struct rpt_run *r)
{
    json_t *live = r->live ? json_object_get(r->live, "clients") : NULL;
    json_t *arr = json_array_size(r->clients) ? json_incref(r->clients)
                  : json_array_size(live)     ? json_incref(live)
                                              : rpt_clients_from_ops(r);
    fl_buf_printf(o, "<h2>Clients</h2>");
    if (arr != live && arr != r->clients)
        fl_buf_printf(o, "<p class=\"small\">Derived from the recorded operations (this "
                         "database, older than the clients table, does not keep the "
                         "balancer's own counters).</p>");
    static const char *const cols[] = {"id",
                                       "balancer",
                                       "ok",
                                       "fail",
                                       "unknown",
                                       "availability",
                                       "max_stall_ms",
                                       "watch_max_stall_ms",
                                       "connections_opened",
                                       "retries",
                                       "switches",
                                       "nodes_used",
                                       "node_switches",
                                       "failover"};
    fl_buf_printf(o, "<table><tr>");
    bool used[FL_ARRAY_LEN(cols)] = {false};
    size_t i;
    json_t *c;
    for (size_t k = 0; k < FL_ARRAY_LEN(cols); k++) {
        json_array_foreach(arr, i, c) used[k] |= json_object_get(c, cols[k]) != NULL;
        if (used[k]) {
            fl_buf_printf(o, "<th>%s</th>", cols[k]);
        }
    }
    fl_buf_printf(o, "</tr>");
    json_array_foreach(arr, i, c)
    {
        fl_buf_printf(o, "<tr>");
        for (size_t k = 0; k < FL_ARRAY_LEN(cols); k++) {
            if (!used[k])
                continue;
            json_t *v = json_object_get(c, cols[k]);
            fl_buf_printf(o, "<td>");
            if (json_is_real(v))
                fl_buf_printf(o, "%.4f", json_real_value(v));
            else if (!strcmp(cols[k], "failover") && json_is_array(v)) {
                size_t f;
                json_t *x;
                json_array_foreach(v, f, x)
                {
                    char a[32];
                    json_t *ms = json_object_get(x, "failover_ms");
                    fl_buf_printf(o, "%s%s&rarr;", f ? "<br>" : "",
                                  rpt_fmt_ns(json_integer_value(json_object_get(x, "fault_ns")), a,
                                             sizeof a));
                    if (json_is_integer(ms))
                        fl_buf_printf(o, "%lld ms", (long long)json_integer_value(ms));
                    else
                        fl_buf_printf(o, "none");
                }
            } else if (v)
                json_inline(o, v);
            fl_buf_printf(o, "</td>");
        }
        fl_buf_printf(o, "</tr>");
    }
    fl_buf_printf(o, "</table>");
    client_details(o, arr);
    json_decref(arr);
}

static void faults_table(struct fl_buf *o, const struct rpt_run *r)
{
    fl_buf_printf(o, "<h2>Faults (%zu)</h2>", r->fault_count);
    if (!r->fault_count)
        return;
    fl_buf_printf(o, "<table><tr><th>at</th><th>kind</th><th>target</th><th>detail</th></tr>");
    for (size_t i = 0; i < r->fault_count && i < RPT_NODE_EVENTS_MAX; i++) {
        char a[32];
        fl_buf_printf(o, "<tr><td>%s</td><td>", rpt_fmt_ns(r->faults[i].at_ns, a, sizeof a));
        rpt_html_escape_str(o, r->faults[i].kind);
        fl_buf_printf(o, "</td><td>");
        rpt_html_escape_str(o, r->faults[i].target);
        fl_buf_printf(o, "</td><td>");
        if (!json_is_null(r->faults[i].detail))
            json_inline(o, r->faults[i].detail);
        fl_buf_printf(o, "</td></tr>");
    }
    fl_buf_printf(o, "</table>");
}

static void op_row(struct fl_buf *o, const struct rpt_op *op)
{
    char a[32], b[32];
    fl_buf_printf(o, "<tr id=\"op-%lld\"%s><td>%lld</td><td>%lld</td><td>", (long long)op->op_id,
                  op->highlighted ? " class=\"hl\"" : "", (long long)op->op_id,
                  (long long)op->client_id);
    if (op->node_id != HIST_NULL)
        fl_buf_printf(o, "%lld", (long long)op->node_id);
    fl_buf_printf(o, "</td><td>");
    rpt_html_escape_str(o, op->kind);
    fl_buf_printf(o, "</td><td>");
    rpt_html_escape_str(o, op->key);
    fl_buf_printf(o, "</td><td>%s</td><td>%s</td><td>%s</td><td>",
                  rpt_fmt_ns(op->call_ns, a, sizeof a), rpt_fmt_ns(op->return_ns, b, sizeof b),
                  hist_status_name((enum hist_status)op->status));
    if (op->revision != HIST_NULL)
        fl_buf_printf(o, "%lld", (long long)op->revision);
    fl_buf_printf(o, "</td><td>");
    rpt_html_escape_str(o, op->error);
    fl_buf_printf(o, "</td><td>");
    rpt_html_escape_str(o, op->request);
    fl_buf_printf(o, "</td><td>");
    rpt_html_escape_str(o, op->response);
    fl_buf_printf(o, "</td></tr>\n");
}

static void ops_table(struct fl_buf *o, const struct rpt_run *r)
{
    size_t shown = 0;
    for (size_t i = 0; i < r->op_count; i++)
        shown += r->ops[i].kind != NULL;
    fl_buf_printf(o, "<h2>Operations</h2><details%s><summary>%zu of %zu operations",
                  r->hl_count ? " open" : "", shown, r->op_count);
    if (shown < r->op_count)
        fl_buf_printf(o, " (the first %d and every one a violation names)", RPT_OPS_TABLE_MAX);
    fl_buf_printf(o, "</summary><table><tr><th>op</th><th>client</th><th>node</th><th>kind</th>"
                     "<th>key</th><th>call</th><th>return</th><th>status</th><th>revision</th>"
                     "<th>error</th><th>request</th><th>response</th></tr>\n");
    for (size_t i = 0; i < r->op_count; i++)
        if (r->ops[i].kind)
            op_row(o, &r->ops[i]);
    fl_buf_printf(o, "</table></details>");
}

static void node_events(struct fl_buf *o, const struct rpt_run *r)
{
    fl_buf_printf(o, "<h2>Node events</h2><details><summary>%zu events%s</summary>", r->nev_count,
                  r->nev_count > RPT_NODE_EVENTS_MAX ? " (first 1000)" : "");
    fl_buf_printf(o, "<table><tr><th>at</th><th>node</th><th>kind</th><th>term</th>"
                     "<th>detail</th></tr>");
    for (size_t i = 0; i < r->nev_count && i < RPT_NODE_EVENTS_MAX; i++) {
        const struct rpt_node_event *e = &r->nev[i];
        char a[32];
        fl_buf_printf(o, "<tr><td>%s</td><td>%lld</td><td>", rpt_fmt_ns(e->at_ns, a, sizeof a),
                      (long long)e->node_id);
        rpt_html_escape_str(o, e->kind);
        fl_buf_printf(o, "</td><td>");
        if (e->term != HIST_NULL)
            fl_buf_printf(o, "%lld", (long long)e->term);
        fl_buf_printf(o, "</td><td>");
        rpt_html_escape_str(o, e->detail);
        fl_buf_printf(o, "</td></tr>");
    }
    fl_buf_printf(o, "</table></details>");
}

void rpt_html_run(struct fl_buf *o, const struct rpt_run *r, const char *nav_back)
{
    struct fl_buf title;
    fl_buf_init(&title);
    fl_buf_printf(&title, "faultline: %s seed %llu: %s", r->row.scenario ? r->row.scenario : "?",
                  (unsigned long long)r->row.seed, r->row.verdict ? r->row.verdict : "error");
    rpt_html_head(o, fl_buf_cstr(&title));
    fl_buf_close(&title);
    header(o, r, nav_back);
    checks(o, r);
    expects(o, r);
    fl_buf_printf(o, "<h2>Timeline</h2><p class=\"lg small\">"
                     "<span style=\"background:#43a047\"></span>ok"
                     "<span style=\"background:#e53935\"></span>fail"
                     "<span style=\"background:#fb8c00\"></span>unknown"
                     "<span style=\"background:#1e88e5\"></span>leader"
                     "<span style=\"background:#b0bec5\"></span>follower"
                     "<span style=\"background:#ffb300\"></span>candidate"
                     "<span style=\"background:#212121\"></span>down"
                     "<span style=\"background:#8e24aa\"></span>paused"
                     "<span style=\"background:#ffca28\"></span>fault &middot; hover for detail");
    if (r->op_count > RPT_OPS_DETAIL_MAX)
        fl_buf_printf(o, " &middot; %zu operations: client lanes show calls per pixel column",
                      r->op_count);
    fl_buf_printf(o, "</p><p class=\"zb small\"><button id=\"zin\" type=\"button\">zoom in</button>"
                     "<button id=\"zout\" type=\"button\">zoom out</button>"
                     "<button id=\"zreset\" type=\"button\">reset</button> wheel to zoom, drag to "
                     "pan &middot; <span id=\"tlinfo\"></span></p><div class=\"tlw\">");
    rpt_svg_timeline(o, r);
    fl_buf_printf(o, "</div>");
    clients(o, r);
    faults_table(o, r);
    ops_table(o, r);
    node_events(o, r);
    fl_buf_printf(o, "<script>%s</script></body></html>\n", js);
}
