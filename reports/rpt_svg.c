/*
 * rpt_svg.c: the timeline of one run as inline SVG. One lane per client (operations
 * as bars coloured ok / fail / unknown, hover shows request, response and times), one
 * lane per node (role and term over time from node_events, kills, pauses and restarts
 * from faults), fault intervals shaded across every lane, instantaneous faults as
 * dashed lines.
 *
 * Up to RPT_OPS_DETAIL_MAX operations every op is its own <rect> with a <title>;
 * beyond that each client lane is drawn as one stacked column per pixel (counts of
 * ok / fail / unknown calls in that column), so a 100,000-op run stays a few thousand
 * elements. Operations a violation names are always drawn on top, outlined.
 */
#include "reports/rpt_int.h"

#define LABEL_W  120
#define PLOT_W   1100
#define AXIS_H   22
#define STRIP_H  16
#define CLANE_H  32
#define NLANE_H  20
#define LANE_GAP 4
#define SUBROWS  4

struct tl {
    const struct rpt_run *r;
    struct fl_buf *out;
    int64_t *clients;
    size_t n_clients;
    int64_t *nodes;
    size_t n_nodes;
    int height;
};

static double xof(const struct tl *t, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    return LABEL_W + (double)ns * PLOT_W / (double)t->r->end_ns;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t uniq(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* "n3" -> 3; 0 when the target is not one node. */
static int64_t node_of_target(const char *s)
{
    if (!s || s[0] != 'n')
        return 0;
    char *end;
    long long v = strtoll(s + 1, &end, 10);
    return *end == '\0' && v > 0 ? v : 0;
}

static void lanes(struct tl *t)
{
    const struct rpt_run *r = t->r;
    t->clients = fl_malloc((r->op_count + 1) * sizeof(int64_t));
    for (size_t i = 0; i < r->op_count; i++)
        if (r->ops[i].client_id != HIST_NULL)
            t->clients[t->n_clients++] = r->ops[i].client_id;
    t->n_clients = uniq(t->clients, t->n_clients);
    t->nodes = fl_malloc((r->nev_count + r->fault_count + 1) * sizeof(int64_t));
    for (size_t i = 0; i < r->nev_count; i++)
        if (r->nev[i].node_id > 0 && r->nev[i].node_id < 1000)
            t->nodes[t->n_nodes++] = r->nev[i].node_id;
    for (size_t i = 0; i < r->fault_count; i++) {
        int64_t n = node_of_target(r->faults[i].target);
        if (n)
            t->nodes[t->n_nodes++] = n;
    }
    t->n_nodes = uniq(t->nodes, t->n_nodes);
    t->height = AXIS_H + STRIP_H + (int)t->n_clients * (CLANE_H + LANE_GAP) +
                (int)t->n_nodes * (NLANE_H + LANE_GAP) + 4;
}

static const char *status_class(int s)
{
    return s == HIST_STATUS_OK ? "ok" : s == HIST_STATUS_FAIL ? "fl" : "un";
}

static void op_title(struct fl_buf *o, const struct rpt_op *op)
{
    char a[32], b[32];
    fl_buf_printf(o, "<title>op %lld client %lld", (long long)op->op_id, (long long)op->client_id);
    if (op->node_id != HIST_NULL)
        fl_buf_printf(o, " node %lld", (long long)op->node_id);
    fl_buf_printf(o, ": ");
    rpt_html_escape_str(o, op->kind);
    fl_buf_printf(o, " ");
    rpt_html_escape_str(o, op->key);
    fl_buf_printf(o, " [%s]\ncall %s, return %s", hist_status_name((enum hist_status)op->status),
                  rpt_fmt_ns(op->call_ns, a, sizeof a), rpt_fmt_ns(op->return_ns, b, sizeof b));
    if (op->revision != HIST_NULL)
        fl_buf_printf(o, ", revision %lld", (long long)op->revision);
    if (op->error) {
        fl_buf_printf(o, "\nerror: ");
        rpt_html_escape_str(o, op->error);
    }
    if (op->request) {
        fl_buf_printf(o, "\nrequest: ");
        rpt_html_escape_str(o, op->request);
    }
    if (op->response) {
        fl_buf_printf(o, "\nresponse: ");
        rpt_html_escape_str(o, op->response);
    }
    fl_buf_printf(o, "</title>");
}

static void op_bar(struct tl *t, const struct rpt_op *op, int y, bool hl)
{
    double x0 = xof(t, op->call_ns);
    int64_t ret = op->return_ns == HIST_NULL ? t->r->end_ns : op->return_ns;
    double w = FL_MAX(xof(t, ret) - x0, 1.0);
    fl_buf_printf(t->out,
                  "<rect class=\"op %s%s%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"6\"",
                  status_class(op->status), hl ? " hl" : "",
                  op->return_ns == HIST_NULL ? " open" : "", x0, y, w);
    if (op->kind) {
        fl_buf_printf(t->out, " data-op=\"%lld\">", (long long)op->op_id);
        op_title(t->out, op);
        fl_buf_printf(t->out, "</rect>");
    } else {
        fl_buf_printf(t->out, "/>");
    }
}

/* One bar per op, greedily stacked into SUBROWS rows so concurrent ops stay visible. */
static void client_lane_detail(struct tl *t, int64_t cid, int y)
{
    double row_end[SUBROWS] = {0};
    for (size_t i = 0; i < t->r->op_count; i++) {
        const struct rpt_op *op = &t->r->ops[i];
        if (op->client_id != cid)
            continue;
        double x0 = xof(t, op->call_ns);
        int row = 0;
        while (row < SUBROWS - 1 && row_end[row] > x0)
            row++;
        int64_t ret = op->return_ns == HIST_NULL ? t->r->end_ns : op->return_ns;
        row_end[row] = FL_MAX(xof(t, ret), x0 + 1.0);
        op_bar(t, op, y + 2 + row * 7, op->highlighted);
    }
}

/* One stacked column per pixel: counts of calls per outcome, scaled to the lane's
 * busiest column. */
static void client_lane_buckets(struct tl *t, int64_t cid, int y)
{
    int64_t(*cnt)[3] = fl_calloc(PLOT_W, sizeof *cnt);
    int64_t peak = 1;
    for (size_t i = 0; i < t->r->op_count; i++) {
        const struct rpt_op *op = &t->r->ops[i];
        if (op->client_id != cid)
            continue;
        int col = (int)(xof(t, op->call_ns) - LABEL_W);
        col = col < 0 ? 0 : col >= PLOT_W ? PLOT_W - 1 : col;
        int s = op->status == HIST_STATUS_OK ? 0 : op->status == HIST_STATUS_FAIL ? 1 : 2;
        cnt[col][s]++;
        peak = FL_MAX(peak, cnt[col][0] + cnt[col][1] + cnt[col][2]);
    }
    static const char *const cls[] = {"ok", "fl", "un"};
    for (int c = 0; c < PLOT_W; c++) {
        int64_t all = cnt[c][0] + cnt[c][1] + cnt[c][2];
        if (!all)
            continue;
        char a[32];
        fl_buf_printf(t->out, "<g><title>%s: %lld ok, %lld fail, %lld unknown</title>",
                      rpt_fmt_ns((int64_t)((double)c * (double)t->r->end_ns / PLOT_W), a, sizeof a),
                      (long long)cnt[c][0], (long long)cnt[c][1], (long long)cnt[c][2]);
        double base = y + CLANE_H - 2;
        for (int s = 0; s < 3; s++) {
            if (!cnt[c][s])
                continue;
            double h = FL_MAX((double)cnt[c][s] * (CLANE_H - 4) / (double)peak, 1.0);
            base -= h;
            fl_buf_printf(t->out,
                          "<rect class=\"op %s\" x=\"%d\" y=\"%.1f\" width=\"1\" height=\"%.1f\"/>",
                          cls[s], LABEL_W + c, base, h);
        }
        fl_buf_printf(t->out, "</g>");
    }
    free(cnt);
    for (size_t i = 0; i < t->r->op_count; i++)
        if (t->r->ops[i].client_id == cid && t->r->ops[i].highlighted)
            op_bar(t, &t->r->ops[i], y + 2, true);
}

/* --- nodes ------------------------------------------------------------------------ */

enum role { R_FOLLOWER, R_PRECAND, R_CAND, R_LEADER, R_DOWN, R_PAUSED, R_NONE };
static const char *const role_names[] = {"follower", "pre-candidate", "candidate", "leader",
                                         "down",     "paused",        "-"};
static const char *const role_cls[] = {"rf", "rp", "rc", "rl", "rd", "rz", "rn"};

struct seg_state {
    enum role role, before_pause;
    int64_t term, since;
};

static void seg_emit(struct tl *t, const struct seg_state *s, int64_t until, int64_t node, int y)
{
    if (s->role == R_NONE || until <= s->since)
        return;
    double x0 = xof(t, s->since), x1 = xof(t, until);
    char a[32], b[32];
    fl_buf_printf(
        t->out,
        "<rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\"><title>n%lld "
        "%s",
        role_cls[s->role], x0, y + 2, FL_MAX(x1 - x0, 0.5), NLANE_H - 4, (long long)node,
        role_names[s->role]);
    if (s->term > 0)
        fl_buf_printf(t->out, " term %lld", (long long)s->term);
    fl_buf_printf(t->out, " from %s to %s</title></rect>", rpt_fmt_ns(s->since, a, sizeof a),
                  rpt_fmt_ns(until, b, sizeof b));
    if (x1 - x0 > 34 && s->term > 0 && s->role != R_DOWN)
        fl_buf_printf(t->out, "<text class=\"tt\" x=\"%.1f\" y=\"%d\">t%lld</text>", x0 + 2,
                      y + NLANE_H - 6, (long long)s->term);
}

static void seg_set(struct tl *t, struct seg_state *s, enum role role, int64_t term, int64_t at,
                    int64_t node, int y)
{
    if (role == s->role && (term <= 0 || term == s->term))
        return;
    seg_emit(t, s, at, node, y);
    s->role = role;
    if (term > 0)
        s->term = term;
    s->since = at;
}

static void marker(struct tl *t, int64_t at, int y, const char *cls, const char *what, int64_t node)
{
    char a[32];
    double x = xof(t, at);
    fl_buf_printf(
        t->out,
        "<path class=\"%s\" d=\"M%.1f %d l-4 -6 h8 z\"><title>n%lld %s at %s</title></path>", cls,
        x, y + 7, (long long)node, what, rpt_fmt_ns(at, a, sizeof a));
}

/* Walks node events and faults in time order (both are sorted) for one node. */
static void node_lane(struct tl *t, int64_t node, int y)
{
    const struct rpt_run *r = t->r;
    /* Raft members start as followers at term 0 (no event is recorded for that). */
    struct seg_state s = {R_FOLLOWER, R_FOLLOWER, 0, 0};
    size_t i = 0, j = 0;
    while (i < r->nev_count || j < r->fault_count) {
        bool take_ev =
            j >= r->fault_count || (i < r->nev_count && r->nev[i].at_ns <= r->faults[j].at_ns);
        if (take_ev) {
            const struct rpt_node_event *e = &r->nev[i++];
            if (e->node_id != node)
                continue;
            const char *k = e->kind;
            if (s.role == R_NONE)
                seg_set(t, &s, R_FOLLOWER, e->term, e->at_ns, node, y);
            if (s.role == R_DOWN && strcmp(k, "restart") != 0)
                continue;
            if (!strcmp(k, "leader"))
                seg_set(t, &s, R_LEADER, e->term, e->at_ns, node, y);
            else if (!strcmp(k, "campaign"))
                seg_set(t, &s, R_CAND, e->term, e->at_ns, node, y);
            else if (!strcmp(k, "prevote"))
                seg_set(t, &s, R_PRECAND, 0, e->at_ns, node, y);
            else if (!strcmp(k, "step_down") || !strcmp(k, "follower"))
                seg_set(t, &s, R_FOLLOWER, e->term, e->at_ns, node, y);
            /* A higher term makes any member a follower; a campaign event at the same
             * instant then makes it a candidate. */
            else if (!strcmp(k, "term"))
                seg_set(t, &s, R_FOLLOWER, e->term, e->at_ns, node, y);
            else if (!strcmp(k, "crash")) {
                seg_set(t, &s, R_DOWN, 0, e->at_ns, node, y);
                marker(t, e->at_ns, y, "mk-crash", "crash", node);
            } else if (!strcmp(k, "restart")) {
                seg_set(t, &s, R_FOLLOWER, 0, e->at_ns, node, y);
                marker(t, e->at_ns, y, "mk-restart", "restart", node);
            }
            continue;
        }
        const struct rpt_fault *f = &r->faults[j++];
        bool mine = node_of_target(f->target) == node;
        if (s.role == R_NONE)
            seg_set(t, &s, R_FOLLOWER, 0, f->at_ns, node, y);
        if (mine && !strcmp(f->kind, "kill")) {
            seg_set(t, &s, R_DOWN, 0, f->at_ns, node, y);
            marker(t, f->at_ns, y, "mk-crash", "killed", node);
        } else if ((mine && !strcmp(f->kind, "restart")) ||
                   (!strcmp(f->kind, "heal_all") && s.role == R_DOWN)) {
            seg_set(t, &s, R_FOLLOWER, 0, f->at_ns, node, y);
            marker(t, f->at_ns, y, "mk-restart", "restarted", node);
        } else if (mine && !strcmp(f->kind, "pause") && s.role != R_DOWN) {
            s.before_pause = s.role;
            seg_set(t, &s, R_PAUSED, 0, f->at_ns, node, y);
        } else if (((mine && !strcmp(f->kind, "resume")) || !strcmp(f->kind, "heal_all")) &&
                   s.role == R_PAUSED) {
            seg_set(t, &s, s.before_pause, 0, f->at_ns, node, y);
        }
    }
    if (s.role == R_NONE)
        s = (struct seg_state){R_FOLLOWER, R_FOLLOWER, 0, 0};
    seg_emit(t, &s, r->end_ns, node, y);
}

/* --- faults ------------------------------------------------------------------------ */

static bool closes(const struct rpt_fault *open, const struct rpt_fault *f)
{
    const char *o = open->kind, *k = f->kind;
    if (!strcmp(k, "heal_all"))
        return true;
    bool netcut = !strcmp(o, "partition") || !strcmp(o, "partition_ring") ||
                  !strcmp(o, "isolate") || !strcmp(o, "clog");
    if (!strcmp(k, "heal") && netcut)
        return true;
    bool same = !strcmp(open->target, f->target);
    if (!strcmp(o, "kill"))
        return !strcmp(k, "restart") && same;
    if (!strcmp(o, "pause"))
        return !strcmp(k, "resume") && same;
    if (!strcmp(o, "hold"))
        return !strcmp(k, "release") && (same || !strcmp(f->target, "*>*"));
    if (!strcmp(o, "clog"))
        return !strcmp(k, "unclog") && same;
    if (!strcmp(o, "net")) /* a network-wide net{} resets the links set for some too */
        return !strcmp(k, "net") && (same || !strcmp(f->target, "*"));
    if (!strcmp(o, "skew"))
        return !strcmp(k, "skew") && same;
    if (!strcmp(o, "failpoint"))
        return !strcmp(k, "failpoint") && same;
    return false;
}

static bool opens_interval(const struct rpt_fault *f)
{
    static const char *const kinds[] = {"partition", "partition_ring", "isolate", "clog",
                                        "kill",      "pause",          "hold",    "net",
                                        "skew",      "failpoint"};
    for (size_t i = 0; i < FL_ARRAY_LEN(kinds); i++)
        if (!strcmp(f->kind, kinds[i])) {
            const char *action = json_string_value(json_object_get(f->detail, "action"));
            if (action && !strcmp(action, "off"))
                return false;
            if (!strcmp(f->kind, "net") &&
                json_integer_value(json_object_get(f->detail, "drop_ppm")) == 0 &&
                json_integer_value(json_object_get(f->detail, "dup_ppm")) == 0 &&
                json_integer_value(json_object_get(f->detail, "delay_ms")) == 0)
                return false;
            return true;
        }
    return false;
}

static void fault_label(struct fl_buf *o, const struct rpt_fault *f)
{
    rpt_html_escape_str(o, f->kind);
    fl_buf_printf(o, " ");
    rpt_html_escape_str(o, f->target);
    if (!json_is_null(f->detail)) {
        char *d = json_dumps(f->detail, JSON_COMPACT | JSON_ENCODE_ANY);
        fl_buf_printf(o, " ");
        rpt_html_escape_str(o, d);
        free(d);
    }
}

static void faults(struct tl *t)
{
    const struct rpt_run *r = t->r;
    int lanes_top = AXIS_H, lanes_h = t->height - AXIS_H;
    int row = 0;
    for (size_t i = 0; i < r->fault_count; i++) {
        const struct rpt_fault *f = &r->faults[i];
        char a[32], b[32];
        double x0 = xof(t, f->at_ns);
        if (!opens_interval(f)) {
            fl_buf_printf(
                t->out,
                "<line class=\"fi\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"><title>%s: ", x0,
                x0, lanes_top, lanes_top + lanes_h, rpt_fmt_ns(f->at_ns, a, sizeof a));
            fault_label(t->out, f);
            fl_buf_printf(t->out, "</title></line>");
            continue;
        }
        int64_t end = r->end_ns;
        for (size_t j = i + 1; j < r->fault_count; j++)
            if (closes(f, &r->faults[j])) {
                end = r->faults[j].at_ns;
                break;
            }
        double x1 = FL_MAX(xof(t, end), x0 + 2);
        fl_buf_printf(t->out,
                      "<g class=\"fault\"><title>%s to %s: ", rpt_fmt_ns(f->at_ns, a, sizeof a),
                      rpt_fmt_ns(end, b, sizeof b));
        fault_label(t->out, f);
        fl_buf_printf(
            t->out,
            "</title><rect class=\"fs\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>"
            "<rect class=\"fb\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"4\"/>",
            x0, lanes_top, x1 - x0, lanes_h, x0, lanes_top + 1 + (row % 3) * 5, x1 - x0);
        if (x1 - x0 > 60) {
            fl_buf_printf(t->out, "<text class=\"fl-t\" x=\"%.1f\" y=\"%d\">", x0 + 2,
                          lanes_top + STRIP_H - 1);
            struct fl_buf lb;
            fl_buf_init(&lb);
            fl_buf_printf(&lb, "%s %s", f->kind, f->target);
            char *cap = rpt_text_cap(fl_buf_cstr(&lb), (size_t)((x1 - x0) / 6));
            rpt_html_escape_str(t->out, cap);
            free(cap);
            fl_buf_close(&lb);
            fl_buf_printf(t->out, "</text>");
        }
        fl_buf_printf(t->out, "</g>");
        row++;
    }
}

static void axis(struct tl *t)
{
    static const int64_t steps[] = {FL_MS,      2 * FL_MS,   5 * FL_MS,   10 * FL_MS,  20 * FL_MS,
                                    50 * FL_MS, 100 * FL_MS, 200 * FL_MS, 500 * FL_MS, FL_S,
                                    2 * FL_S,   5 * FL_S,    10 * FL_S,   30 * FL_S,   60 * FL_S,
                                    120 * FL_S, 300 * FL_S,  600 * FL_S,  1800 * FL_S, 3600 * FL_S};
    int64_t step = steps[FL_ARRAY_LEN(steps) - 1];
    for (size_t i = 0; i < FL_ARRAY_LEN(steps); i++)
        if (t->r->end_ns / steps[i] <= 12) {
            step = steps[i];
            break;
        }
    for (int64_t v = 0; v <= t->r->end_ns; v += step) {
        double x = xof(t, v);
        fl_buf_printf(t->out,
                      "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
                      "<text class=\"ax\" x=\"%.1f\" y=\"14\">",
                      x, x, AXIS_H - 4, t->height, x + 2);
        if (step < FL_S)
            fl_buf_printf(t->out, "%lld ms", (long long)(v / FL_MS));
        else
            fl_buf_printf(t->out, "%lld s", (long long)(v / FL_S));
        fl_buf_printf(t->out, "</text>");
    }
}

/* A red guide line at the call of every operation a violation names (the bars alone
 * can be a pixel wide in a long run), at most 64 of them. */
static void violation_marks(struct tl *t)
{
    int n = 0;
    for (size_t i = 0; i < t->r->op_count && n < 64; i++) {
        const struct rpt_op *op = &t->r->ops[i];
        if (!op->highlighted)
            continue;
        double x = xof(t, op->call_ns);
        fl_buf_printf(t->out,
                      "<line class=\"hlv\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\">"
                      "<title>op %lld: named by a violation</title></line>",
                      x, x, AXIS_H, t->height, (long long)op->op_id);
        n++;
    }
}

/* Lane backgrounds and names stay put; everything placed in time goes into the
 * "plot" group, which the page's script zooms and pans (translate + horizontal scale,
 * clipped to the plot area). */
static void lane_frames(struct tl *t)
{
    int y = AXIS_H + STRIP_H;
    for (size_t i = 0; i < t->n_clients; i++, y += CLANE_H + LANE_GAP)
        fl_buf_printf(t->out,
                      "<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
                      "<text class=\"ln\" x=\"4\" y=\"%d\">client %lld</text>",
                      LABEL_W, y, PLOT_W, CLANE_H, y + 18, (long long)t->clients[i]);
    for (size_t i = 0; i < t->n_nodes; i++, y += NLANE_H + LANE_GAP)
        fl_buf_printf(t->out,
                      "<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
                      "<text class=\"ln\" x=\"4\" y=\"%d\">node n%lld</text>",
                      LABEL_W, y, PLOT_W, NLANE_H, y + 14, (long long)t->nodes[i]);
}

void rpt_svg_timeline(struct fl_buf *out, const struct rpt_run *r)
{
    struct tl t = {.r = r, .out = out};
    lanes(&t);
    bool detail = r->op_count <= RPT_OPS_DETAIL_MAX;
    fl_buf_printf(out,
                  "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                  "width=\"%d\" height=\"%d\" role=\"img\"><defs><clipPath id=\"plotclip\">"
                  "<rect x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/></clipPath></defs>",
                  LABEL_W + PLOT_W + 10, t.height, LABEL_W + PLOT_W + 10, t.height, LABEL_W, PLOT_W,
                  t.height);
    lane_frames(&t);
    fl_buf_printf(out,
                  "<g clip-path=\"url(#plotclip)\"><g id=\"plot\" data-x0=\"%d\" data-w=\"%d\" "
                  "data-end-ns=\"%lld\">",
                  LABEL_W, PLOT_W, (long long)r->end_ns);
    axis(&t);
    int y = AXIS_H + STRIP_H;
    for (size_t i = 0; i < t.n_clients; i++, y += CLANE_H + LANE_GAP) {
        if (detail)
            client_lane_detail(&t, t.clients[i], y);
        else
            client_lane_buckets(&t, t.clients[i], y);
    }
    for (size_t i = 0; i < t.n_nodes; i++, y += NLANE_H + LANE_GAP)
        node_lane(&t, t.nodes[i], y);
    faults(&t);
    violation_marks(&t);
    fl_buf_printf(out, "</g></g></svg>");
    free(t.clients);
    free(t.nodes);
}
