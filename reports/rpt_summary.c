/*
 * rpt_summary.c: the --json summary of a run rebuilt from its history (DESIGN §3.9),
 * per-client figures derived from the ops table, and the one-line "first violation"
 * that JUnit, Markdown and sweeps show.
 *
 * The clients' own counters (balancer, connections, endpoints, retries, failovers) come
 * from the history's clients table, as the run's --json summary had them. A database
 * older than that table does not store them, so these figures come from the ops: outcome
 * counts, availability = ok / all, the longest stall (time without a success while an
 * operation was outstanding), the members used and how often the client moved between
 * them, and per fault the time to the client's first success after it.
 */
#include "reports/rpt_int.h"

struct stall_ev {
    int64_t t;
    int kind; /* 0 return (fail/unknown), 1 return ok, 2 call */
    int64_t seq;
};

static int stall_cmp(const void *a, const void *b)
{
    const struct stall_ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Longest stall of one client in ns; ev has 2 entries per op. */
static int64_t max_stall_ns(struct stall_ev *ev, size_t n)
{
    qsort(ev, n, sizeof *ev, stall_cmp);
    int64_t pending = 0, start = -1, best = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == 2) {
            if (pending++ == 0 && start < 0)
                start = ev[i].t;
            continue;
        }
        pending--;
        if (ev[i].kind == 1) {
            if (start >= 0)
                best = FL_MAX(best, ev[i].t - start);
            start = pending > 0 ? ev[i].t : -1;
        } else if (pending == 0) {
            if (start >= 0)
                best = FL_MAX(best, ev[i].t - start);
            start = -1;
        }
    }
    return best;
}

static bool fault_disrupts(const char *kind)
{
    static const char *const calm[] = {"heal",    "heal_all", "restart", "resume",
                                       "release", "unclog",   "nemesis", "bug"};
    for (size_t i = 0; i < FL_ARRAY_LEN(calm); i++)
        if (!strcmp(kind, calm[i]))
            return false;
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static json_t *client_json(const struct rpt_run *r, int64_t cid)
{
    int64_t ok = 0, fail = 0, unk = 0, switches = 0, last_node = HIST_NULL;
    size_t n = 0;
    struct stall_ev *ev = fl_malloc(2 * r->op_count * sizeof *ev + 1);
    json_t *nodes = json_array();
    for (size_t i = 0; i < r->op_count; i++) {
        const struct rpt_op *o = &r->ops[i];
        if (o->client_id != cid)
            continue;
        ok += o->status == HIST_STATUS_OK;
        fail += o->status == HIST_STATUS_FAIL;
        unk += o->status == HIST_STATUS_UNKNOWN;
        int64_t ret = o->return_ns == HIST_NULL ? r->end_ns : o->return_ns;
        ev[n++] = (struct stall_ev){o->call_ns, 2, o->op_id};
        ev[n++] = (struct stall_ev){ret, o->status == HIST_STATUS_OK, o->op_id};
        if (o->node_id != HIST_NULL) {
            if (last_node != HIST_NULL && o->node_id != last_node)
                switches++;
            last_node = o->node_id;
            bool seen = false;
            size_t k;
            json_t *v;
            json_array_foreach(nodes, k, v) seen |= json_integer_value(v) == o->node_id;
            if (!seen)
                json_array_append_new(nodes, json_integer(o->node_id));
        }
    }
    json_t *c = json_object();
    json_object_set_new(c, "id", json_integer(cid));
    json_object_set_new(c, "balancer", json_null());
    json_object_set_new(c, "ok", json_integer(ok));
    json_object_set_new(c, "fail", json_integer(fail));
    json_object_set_new(c, "unknown", json_integer(unk));
    int64_t all = ok + fail + unk;
    json_object_set_new(c, "availability", json_real(all ? (double)ok / (double)all : 1.0));
    json_object_set_new(c, "max_stall_ms", json_integer(max_stall_ns(ev, n) / FL_MS));
    json_object_set_new(c, "nodes_used", nodes);
    json_object_set_new(c, "node_switches", json_integer(switches));
    free(ev);
    /* Failover: per fault, the first success returned after it (binary search over
     * the client's sorted success times, so long runs with many faults stay fast). */
    int64_t *oks = fl_malloc((r->op_count + 1) * sizeof *oks);
    size_t n_ok = 0;
    for (size_t i = 0; i < r->op_count; i++)
        if (r->ops[i].client_id == cid && r->ops[i].status == HIST_STATUS_OK &&
            r->ops[i].return_ns != HIST_NULL)
            oks[n_ok++] = r->ops[i].return_ns;
    qsort(oks, n_ok, sizeof *oks, cmp_i64);
    json_t *fo = json_array();
    for (size_t f = 0; f < r->fault_count; f++) {
        if (!fault_disrupts(r->faults[f].kind))
            continue;
        int64_t at = r->faults[f].at_ns;
        size_t lo = 0, hi = n_ok;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (oks[mid] < at)
                lo = mid + 1;
            else
                hi = mid;
        }
        json_t *x = json_object();
        json_object_set_new(x, "fault_ns", json_integer(at));
        json_object_set_new(x, "fault", json_string(r->faults[f].kind));
        json_object_set_new(x, "failover_ms",
                            lo < n_ok ? json_integer((oks[lo] - at) / FL_MS) : json_null());
        json_array_append_new(fo, x);
    }
    free(oks);
    json_object_set_new(c, "failover", fo);
    json_object_set_new(c, "source", json_string("ops"));
    return c;
}

json_t *rpt_clients_json(const struct rpt_run *r)
{
    if (!json_array_size(r->clients))
        return rpt_clients_from_ops(r);
    json_t *arr = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(r->clients, i, c)
    {
        json_t *copy = json_deep_copy(c);
        json_object_del(copy, "last_attempts"); /* the summary's client objects, as the run's */
        json_array_append_new(arr, copy);
    }
    return arr;
}

json_t *rpt_clients_from_ops(const struct rpt_run *r)
{
    int64_t *ids = fl_malloc((r->op_count + 1) * sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; i < r->op_count; i++)
        if (r->ops[i].client_id != HIST_NULL)
            ids[n++] = r->ops[i].client_id;
    qsort(ids, n, sizeof *ids, cmp_i64);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            json_array_append_new(arr, client_json(r, ids[i]));
    free(ids);
    return arr;
}

static json_t *checks_json(const struct rpt_run *r)
{
    json_t *checks = json_object(), *items = json_array();
    int64_t total = 0, failed = 0;
    for (size_t i = 0; i < r->check_count; i++) {
        const struct rpt_check *c = &r->checks[i];
        if (!strcmp(c->checker, "expect")) {
            json_t *it = json_is_object(c->detail) ? json_deep_copy(c->detail) : json_object();
            json_object_set_new(it, "verdict", json_string(c->verdict));
            json_array_append_new(items, it);
            total++;
            failed += strcmp(c->verdict, "pass") != 0;
            continue;
        }
        json_t *d = json_is_object(c->detail) ? json_deep_copy(c->detail) : json_object();
        if (!json_is_object(c->detail))
            json_object_set(d, "detail", c->detail);
        json_object_set_new(d, "verdict", json_string(c->verdict));
        json_object_set_new(checks, c->checker, d);
    }
    json_t *e = json_object();
    json_object_set_new(e, "verdict", json_string(failed ? "fail" : "pass"));
    json_object_set_new(e, "total", json_integer(total));
    json_object_set_new(e, "failed", json_integer(failed));
    json_object_set_new(e, "items", items);
    json_object_set_new(checks, "expect", e);
    return checks;
}

json_t *rpt_summary_json(const struct rpt_run *r)
{
    json_t *s = json_object(), *ops = json_object();
    json_object_set_new(s, "scenario", json_string(r->row.scenario ? r->row.scenario : ""));
    json_object_set_new(s, "seed", hist_seed_json(r->row.seed));
    json_object_set_new(s, "digest", r->row.digest ? json_string(r->row.digest) : json_null());
    json_object_set_new(s, "verdict", json_string(r->row.verdict ? r->row.verdict : "error"));
    json_object_set_new(s, "sim_ms",
                        r->row.sim_end_ns == HIST_NULL ? json_null()
                                                       : json_integer(r->row.sim_end_ns / FL_MS));
    json_object_set_new(s, "wall_ms",
                        r->row.wall_ms == HIST_NULL ? json_null() : json_integer(r->row.wall_ms));
    json_object_set_new(ops, "total", json_integer(r->counts.total));
    json_object_set_new(ops, "ok", json_integer(r->counts.ok));
    json_object_set_new(ops, "fail", json_integer(r->counts.fail));
    json_object_set_new(ops, "unknown", json_integer(r->counts.unknown));
    json_object_set_new(s, "ops", ops);
    json_object_set_new(s, "checks", checks_json(r));
    json_t *faults = json_array(), *leaders = json_array();
    for (size_t i = 0; i < r->fault_count; i++) {
        json_t *f = json_object();
        json_object_set_new(f, "at_ms", json_integer(r->faults[i].at_ns / FL_MS));
        json_object_set_new(f, "kind", json_string(r->faults[i].kind));
        json_object_set_new(f, "target", json_string(r->faults[i].target));
        if (!json_is_null(r->faults[i].detail))
            json_object_set(f, "detail", r->faults[i].detail);
        json_array_append_new(faults, f);
    }
    for (size_t i = 0; i < r->nev_count; i++) {
        if (strcmp(r->nev[i].kind, "leader") != 0)
            continue;
        json_t *l = json_object();
        json_object_set_new(l, "at_ms", json_integer(r->nev[i].at_ns / FL_MS));
        json_object_set_new(l, "node", json_integer(r->nev[i].node_id));
        json_object_set_new(
            l, "term", r->nev[i].term == HIST_NULL ? json_null() : json_integer(r->nev[i].term));
        json_array_append_new(leaders, l);
    }
    json_object_set_new(s, "faults", faults);
    json_object_set_new(s, "leaders", leaders);
    json_object_set_new(s, "clients", rpt_clients_json(r));
    json_object_set_new(s, "run_id", json_integer(r->row.run_id));
    json_object_set_new(s, "replay", json_string(r->replay ? r->replay : ""));
    if (r->row.reason)
        json_object_set_new(s, "reason", json_string(r->row.reason));
    if (r->first_violation[0])
        json_object_set_new(s, "first_violation", json_string(r->first_violation));
    return s;
}

/* The one-line reason of a failing (or unknown / error) check. */
static void check_reason(const struct rpt_check *c, struct fl_buf *b)
{
    json_t *d = c->detail;
    const char *s;
    fl_buf_printf(b, "%s: ", c->checker);
    if (!strcmp(c->checker, "expect")) {
        /* Bytes: valid UTF-8 as is, anything else as \xNN (the message is stored as a
         * string or {"hex":...}). */
        struct fl_buf m;
        bool is_null = false;
        fl_buf_init(&m);
        if (hist_json_bytes_get(json_object_get(d, "message"), &m, &is_null) == FL_OK && !is_null)
            rpt_bytes_text(b, m.data ? (const char *)m.data : "", m.len);
        else
            fl_buf_printf(b, "(no message)");
        fl_buf_close(&m);
        json_t *line = json_object_get(d, "line");
        if (json_is_integer(line) && json_integer_value(line) > 0)
            fl_buf_printf(b, " (line %lld)", (long long)json_integer_value(line));
        return;
    }
    json_t *v0 = json_array_get(json_object_get(d, "violations"), 0);
    if (!strcmp(c->checker, "watch") && v0) {
        s = json_string_value(json_object_get(v0, "guarantee"));
        fl_buf_printf(b, "%s violated on watch %lld at revision %lld: ", s ? s : "?",
                      (long long)json_integer_value(json_object_get(v0, "watch")),
                      (long long)json_integer_value(json_object_get(v0, "revision")));
        s = json_string_value(json_object_get(v0, "message"));
        fl_buf_printf(b, "%s", s ? s : "");
        return;
    }
    static const char *const keys[] = {"reason", "violation", "message", "state", "detail"};
    for (size_t i = 0; i < FL_ARRAY_LEN(keys); i++) {
        json_t *x = json_object_get(d, keys[i]);
        if (!json_is_string(x) || !json_string_length(x))
            continue;
        /* raft_safety nests its own JSON: prefer its "detail" sentence. */
        json_t *inner = json_loads(json_string_value(x), 0, NULL);
        const char *t = json_string_value(json_object_get(inner, "detail"));
        fl_buf_printf(b, "%s", t ? t : json_string_value(x));
        json_decref(inner);
        return;
    }
    if (json_is_string(d)) {
        fl_buf_printf(b, "%s", json_string_value(d));
        return;
    }
    char *text = json_dumps(d, JSON_COMPACT);
    fl_buf_printf(b, "%s %s", c->verdict, text ? text : "");
    free(text);
}

void rpt_first_violation_of(const struct rpt_run *r, char *out, size_t out_len)
{
    out[0] = '\0';
    static const char *const order[] = {"fail", "error", "unknown"};
    for (size_t k = 0; k < FL_ARRAY_LEN(order); k++) {
        for (size_t i = 0; i < r->check_count; i++) {
            if (strcmp(r->checks[i].verdict, order[k]) != 0)
                continue;
            struct fl_buf b;
            fl_buf_init(&b);
            check_reason(&r->checks[i], &b);
            struct fl_buf t;
            fl_buf_init(&t);
            rpt_bytes_text(&t, b.data, b.len);
            char *cap = rpt_text_cap(fl_buf_cstr(&t), out_len > 4 ? out_len - 4 : 0);
            snprintf(out, out_len, "%s", cap);
            free(cap);
            for (char *p = out; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            fl_buf_close(&t);
            fl_buf_close(&b);
            return;
        }
    }
    if (r->row.verdict && strcmp(r->row.verdict, "pass") != 0) {
        const char *why = r->row.reason                        ? r->row.reason
                          : !strcmp(r->row.verdict, "running") ? "the run never finished"
                          : r->row.sim_end_ns == HIST_NULL     ? "the run never finished"
                                                               : "no check failed";
        snprintf(out, out_len, "run: verdict %s (%s)", r->row.verdict, why);
    }
}
