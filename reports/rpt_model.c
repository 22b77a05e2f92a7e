/*
 * rpt_model.c: loads one recorded run from the history database into a struct
 * rpt_run, through the read API of harness/history only (every read ordered there).
 * Checks are read first so that the operations a linearizability violation names are
 * known while the ops stream by: their text is kept along with the first
 * RPT_OPS_TABLE_MAX operations, and only times and outcome for the rest, which keeps a
 * 100,000-operation run at a few megabytes.
 */
#include "reports/rpt_int.h"

#define RPT_TEXT_CAP 400

/* Room for element count (0-based) of an array that grows one element at a time:
 * doubling at powers of two, so a run with 100,000 expects or faults loads in linear
 * time (growing by one made it quadratic, minutes under ASan). */
static void *grow(void *p, size_t count, size_t size)
{
    if (count == 0)
        return fl_realloc(p, 8 * size);
    if (count >= 8 && (count & (count - 1)) == 0)
        return fl_realloc(p, 2 * count * size);
    return p;
}

static json_t *parse_detail(const char *text)
{
    if (!text)
        return json_null();
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (j)
        return j;
    struct fl_buf b;
    fl_buf_init(&b);
    rpt_bytes_text(&b, text, strlen(text));
    j = json_string(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return j ? j : json_null();
}

static int on_check(void *arg, const struct hist_check *c)
{
    struct rpt_run *r = arg;
    const char *name = c->checker ? c->checker : "?";
    size_t at = r->check_count;
    if (strcmp(name, "expect") != 0)
        for (size_t i = 0; i < r->check_count; i++)
            if (!strcmp(r->checks[i].checker, name))
                at = i;
    if (at == r->check_count) {
        r->checks = grow(r->checks, r->check_count, sizeof *r->checks);
        r->checks[at].checker = fl_strdup(name);
        r->check_count++;
    } else {
        free(r->checks[at].verdict);
        json_decref(r->checks[at].detail);
    }
    r->checks[at].verdict = fl_strdup(c->verdict ? c->verdict : "error");
    r->checks[at].elapsed_ms = c->elapsed_ms;
    r->checks[at].detail = parse_detail(c->detail);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every op_id named inside a linearizability detail, except the prefix list. */
static void collect_op_ids(struct rpt_run *r, json_t *j, int depth)
{
    if (depth > 8)
        return;
    if (json_is_object(j)) {
        json_t *id = json_object_get(j, "op_id");
        if (json_is_integer(id)) {
            r->hl_ids = grow(r->hl_ids, r->hl_count, sizeof *r->hl_ids);
            r->hl_ids[r->hl_count++] = json_integer_value(id);
        }
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            if (strcmp(k, "prefix_op_ids") != 0)
                collect_op_ids(r, v, depth + 1);
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) collect_op_ids(r, v, depth + 1);
    }
}

static bool is_highlighted(const struct rpt_run *r, int64_t op_id)
{
    return r->hl_count &&
           bsearch(&op_id, r->hl_ids, r->hl_count, sizeof *r->hl_ids, cmp_i64) != NULL;
}

static char *capped(const char *s)
{
    if (!s)
        return NULL;
    struct fl_buf b;
    fl_buf_init(&b);
    rpt_bytes_text(&b, s, strlen(s));
    char *r = rpt_text_cap(fl_buf_cstr(&b), RPT_TEXT_CAP);
    fl_buf_close(&b);
    return r;
}

static int on_op(void *arg, const struct hist_op *op)
{
    struct rpt_run *r = arg;
    if (r->op_count % 1024 == 0)
        r->ops = fl_realloc(r->ops, (r->op_count + 1024) * sizeof *r->ops);
    struct rpt_op *o = &r->ops[r->op_count];
    memset(o, 0, sizeof *o);
    o->op_id = op->op_id;
    o->client_id = op->client_id;
    o->node_id = op->node_id;
    o->call_ns = op->call_ns;
    o->return_ns = op->return_ns;
    o->revision = op->revision;
    o->status = (int)op->status;
    o->highlighted = is_highlighted(r, op->op_id);
    if (r->op_count < RPT_OPS_TABLE_MAX || o->highlighted) {
        o->kind = fl_strdup(op->kind ? op->kind : "?");
        struct fl_buf b;
        fl_buf_init(&b);
        if (op->key)
            rpt_bytes_text(&b, op->key, op->key_len);
        if (op->range_end) {
            fl_buf_append(&b, "..", 2);
            rpt_bytes_text(&b, op->range_end, op->range_end_len);
        }
        o->key = rpt_text_cap(fl_buf_cstr(&b), 120);
        fl_buf_close(&b);
        o->request = capped(op->request);
        o->response = capped(op->response);
        o->error = capped(op->error);
    }
    r->end_ns = FL_MAX(r->end_ns, FL_MAX(op->call_ns, op->return_ns));
    r->op_count++;
    return 0;
}

static int on_fault(void *arg, const struct hist_fault *f)
{
    struct rpt_run *r = arg;
    r->faults = grow(r->faults, r->fault_count, sizeof *r->faults);
    struct rpt_fault *x = &r->faults[r->fault_count++];
    x->at_ns = f->at_ns;
    x->kind = fl_strdup(f->kind ? f->kind : "?");
    x->target = fl_strdup(f->target ? f->target : "");
    x->detail = parse_detail(f->detail);
    r->end_ns = FL_MAX(r->end_ns, f->at_ns);
    return 0;
}

static int on_node_event(void *arg, const struct hist_node_event *e)
{
    struct rpt_run *r = arg;
    if (r->nev_count % 256 == 0)
        r->nev = fl_realloc(r->nev, (r->nev_count + 256) * sizeof *r->nev);
    struct rpt_node_event *x = &r->nev[r->nev_count++];
    x->at_ns = e->at_ns;
    x->node_id = e->node_id;
    x->term = e->term;
    x->kind = fl_strdup(e->kind ? e->kind : "?");
    x->detail = capped(e->detail);
    r->end_ns = FL_MAX(r->end_ns, e->at_ns);
    return 0;
}

static int fail_db(struct hist_db *db, int rc, char *err, size_t err_len)
{
    snprintf(err, err_len, "%s", hist_errmsg(db));
    return rc;
}

/* A clients row: its stats object (JSON the run wrote), with "last_attempts" beside it. A
 * row whose JSON does not parse is shown as what it is: only its id and balancer. */
static int on_client(void *arg, const struct hist_client *c)
{
    struct rpt_run *r = arg;
    if (!r->clients)
        r->clients = json_array();
    json_t *o = c->stats ? json_loads(c->stats, JSON_ALLOW_NUL, NULL) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
        json_object_set_new(o, "id", json_integer(c->client_id));
        json_object_set_new(o, "balancer", json_string(c->balancer ? c->balancer : ""));
    }
    json_t *a = c->attempts ? json_loads(c->attempts, JSON_ALLOW_NUL, NULL) : NULL;
    json_object_set_new(o, "last_attempts", json_is_array(a) ? a : json_array());
    if (!json_is_array(a))
        json_decref(a);
    json_array_append_new(r->clients, o);
    return 0;
}

int rpt_run_load(struct hist_db *db, int64_t run_id, bool full, struct rpt_run *r, char *err,
                 size_t err_len)
{
    memset(r, 0, sizeof *r);
    int rc = hist_run_get(db, run_id, &r->row);
    if (rc == FL_ENOENT) {
        snprintf(err, err_len, "history database '%s': no run %lld", hist_path(db),
                 (long long)run_id);
        return rc;
    }
    if (rc)
        return fail_db(db, rc, err, err_len);
    r->db_path = hist_path(db);
    if ((rc = hist_ops_count(db, run_id, &r->counts)) ||
        (rc = hist_checks_each(db, run_id, on_check, r)))
        goto fail;
    const struct rpt_check *lin = rpt_check_find(r, "linearizability");
    if (lin && strcmp(lin->verdict, "pass") != 0)
        collect_op_ids(r, lin->detail, 0);
    if (r->hl_count)
        qsort(r->hl_ids, r->hl_count, sizeof *r->hl_ids, cmp_i64);
    if ((rc = hist_clients_each(db, run_id, on_client, r)))
        goto fail;
    if (full && ((rc = hist_ops_each(db, run_id, on_op, r)) ||
                 (rc = hist_faults_each(db, run_id, on_fault, r)) ||
                 (rc = hist_node_events_each(db, run_id, on_node_event, r))))
        goto fail;
    if (r->row.sim_end_ns != HIST_NULL)
        r->end_ns = FL_MAX(r->end_ns, r->row.sim_end_ns);
    if (r->end_ns <= 0)
        r->end_ns = FL_S;
    r->replay = rpt_replay_command(r->row.scenario, r->row.seed, r->row.options);
    rpt_first_violation_of(r, r->first_violation, sizeof r->first_violation);
    return FL_OK;
fail:
    fail_db(db, rc, err, err_len);
    rpt_run_close(r);
    return rc;
}

void rpt_run_close(struct rpt_run *r)
{
    hist_run_row_free(&r->row);
    json_decref(r->clients);
    r->clients = NULL;
    for (size_t i = 0; i < r->op_count; i++) {
        free(r->ops[i].kind);
        free(r->ops[i].key);
        free(r->ops[i].request);
        free(r->ops[i].response);
        free(r->ops[i].error);
    }
    free(r->ops);
    for (size_t i = 0; i < r->nev_count; i++) {
        free(r->nev[i].kind);
        free(r->nev[i].detail);
    }
    free(r->nev);
    for (size_t i = 0; i < r->fault_count; i++) {
        free(r->faults[i].kind);
        free(r->faults[i].target);
        json_decref(r->faults[i].detail);
    }
    free(r->faults);
    for (size_t i = 0; i < r->check_count; i++) {
        free(r->checks[i].checker);
        free(r->checks[i].verdict);
        json_decref(r->checks[i].detail);
    }
    free(r->checks);
    free(r->hl_ids);
    json_decref(r->live);
    free(r->replay);
    memset(r, 0, sizeof *r);
}

const struct rpt_check *rpt_check_find(const struct rpt_run *r, const char *checker)
{
    for (size_t i = 0; i < r->check_count; i++)
        if (!strcmp(r->checks[i].checker, checker))
            return &r->checks[i];
    return NULL;
}
