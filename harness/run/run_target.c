/*
 * run_target.c: which target a run runs on (run.h run_options.target) and what each
 * target can do, so that a scenario calling a function its target cannot honour
 * stops with that function's name and the target (harness/lua asks before the script
 * runs), instead of running something else than what it says.
 */
#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"

#include <stdio.h>

static const char *const target_names[] = {"sim", "etcd"};

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

/* What a real etcd cluster here cannot do, and why (issue 16 §3). */
static const struct {
    const char *api, *why;
} etcd_refuses[] = {
    {"skew", "etcd's Go runtime reads the clock without libc, so its clock cannot be skewed"},
    {"failpoint", "Debian's etcd is built without gofail failpoints"},
    {"bug", "bug switches exist only in faultline's own members"},
    {"net", "loss, duplication and delay of frames are simulator faults (the etcd target cuts "
            "and clogs links only)"},
    {"hold", "holding frames in flight is a simulator fault (use clog)"},
    {"release", "holding frames in flight is a simulator fault (use clog)"},
    {"start", "a member added on etcd is started at once (member_add { start = false } is "
              "not wired)"},
    {"swarm", "the swarm draws simulator-only faults (power loss, skew, failpoints)"},
    {"on", "etcd exposes no typed Raft events to fire faults on"},
    {"config", "a member's configuration is etcd's own (see its log)"},
};

const char *run_target_unsupported(const struct run_world *rw, const char *api)
{
    if (rw->target.kind != RUN_TARGET_ETCD)
        return NULL;
    for (size_t i = 0; i < FL_ARRAY_LEN(etcd_refuses); i++)
        if (!strcmp(etcd_refuses[i].api, api))
            return etcd_refuses[i].why;
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
    /* converge runs on etcd (HashKV, run_etcd_converged) */
    unsigned off = rw->checks & (RUN_CHECK_RAFT_SAFETY | RUN_CHECK_LIVENESS);
    rw->checks &= ~off;
    json_t *a = json_array();
    if (off & RUN_CHECK_RAFT_SAFETY)
        json_array_append_new(a, json_string("raft_safety"));
    if (off & RUN_CHECK_LIVENESS)
        json_array_append_new(a, json_string("liveness"));
    run_summary_set(rw, "not_on_target", a);
}
