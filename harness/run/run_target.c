/*
 * run_target.c: which target a run runs on (run.h run_options.target), the table of
 * each real target's hooks (run_int.h struct run_target_ops: run_target_etcd_ops,
 * run_target_live_ops) and what each target can do, so that a scenario calling a function its
 * target cannot honour stops with that function's name and the target (harness/lua asks before the
 * script runs), instead of running something else than what it says.
 */
#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"

#include <stdio.h>

static const char *const target_names[] = {"sim", "etcd", "live"};

const char *run_target_name(int target)
{
    return target >= 0 && target < (int)FL_ARRAY_LEN(target_names) ? target_names[target] : "?";
}

int run_target_find(const char *name)
{
    for (int i = 0; i < (int)FL_ARRAY_LEN(target_names); i++)
        if (!strcmp(target_names[i], name))
            return i;
    return -1;
}

int run_target(const struct run_world *rw)
{
    return rw->target.kind;
}

const struct run_target_ops *run_target_ops_of(int kind)
{
    switch (kind) {
    case RUN_TARGET_ETCD:
        return &run_target_etcd_ops;
    case RUN_TARGET_LIVE:
        return &run_target_live_ops;
    default:
        return NULL;
    }
}

const char *run_target_unsupported(const struct run_world *rw, const char *api)
{
    if (!rw->tgt || !rw->tgt->refuses)
        return NULL;
    for (const struct run_target_refusal *r = rw->tgt->refuses; r->api; r++)
        if (!strcmp(r->api, api))
            return r->why;
    return NULL;
}

const char *run_etcd_binary_version(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    char *bin = lv_etcd_find();
    if (!bin)
        return out;
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    fl_buf_printf(&cmd, "'%s' --version 2>/dev/null", bin);
    FILE *f = strchr(bin, '\'') ? NULL : popen(fl_buf_cstr(&cmd), "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "etcd Version: ");
        if (p) {
            p += strlen("etcd Version: ");
            size_t len = strcspn(p, "\r\n");
            snprintf(out, n, "%.*s", (int)len, p);
        }
    }
    if (f)
        pclose(f);
    fl_buf_close(&cmd);
    free(bin);
    return out;
}

void run_target_trim_checks(struct run_world *rw)
{
    /* converge runs on etcd (HashKV, run_etcd_converged), not on the live target */
    unsigned off = rw->checks & (RUN_CHECK_RAFT_SAFETY | RUN_CHECK_LIVENESS);
    if (!rw->tgt->converged)
        off |= rw->checks & RUN_CHECK_CONVERGE;
    rw->checks &= ~off;
    json_t *a = json_array();
    if (off & RUN_CHECK_RAFT_SAFETY)
        json_array_append_new(a, json_string("raft_safety"));
    if (off & RUN_CHECK_LIVENESS)
        json_array_append_new(a, json_string("liveness"));
    if (off & RUN_CHECK_CONVERGE)
        json_array_append_new(a, json_string("converge"));
    run_summary_set(rw, "not_on_target", a);
}
