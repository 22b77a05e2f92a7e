/*
 * run_target_etcd_fp.c: failpoints on the etcd target, by strace's syscall injection on
 * a member's WAL.
 */
#include "harness/run/run_etcd_int.h"

/* ---- failpoints: strace's syscall injection on a member's WAL ------------------------- */

/* Debian's etcd has no gofail, so the failpoints a real etcd can have here are the ones
 * strace makes real on the member's WAL files (live_etcd.h lv_etcd_wal_fault_on):
 * raft/before_save delay = each WAL fdatasync of that member waits delay_ms (etcd's
 * raftBeforeSave sits before the WAL save of every Ready, which syncs), raft/before_save
 * crash = SIGKILL at the WAL's next write (before the entries reach the file),
 * raft/after_save crash = SIGKILL at its next fdatasync (after the write; a process crash
 * keeps the written pages, which is what a crash after the save leaves). */
const char *run_etcd__failpoint_refused(struct run_world *rw, const char *name, const char *action,
                                        int p_ppm, int count, int skip)
{
    (void)rw;
    bool before = !strcmp(name, "raft/before_save"), after = !strcmp(name, "raft/after_save");
    if (!before && !after)
        return "Debian's etcd is built without gofail failpoints; only raft/before_save (delay, "
               "crash) and raft/after_save (crash) are made real, by strace's syscall injection "
               "on the member's WAL";
    if (!strcmp(action, "off"))
        return NULL;
    if (strcmp(action, "crash") && !(before && !strcmp(action, "delay")))
        return "raft/before_save takes delay or crash, raft/after_save crash (a slow or "
               "crashing WAL sync by strace's syscall injection)";
    if (p_ppm != 1000000 || count != 0 || skip != 0)
        return "p, count and skip are not carried: strace injects at every WAL call";
    char *strace = lv_strace_find();
    free(strace);
    if (!strace)
        return "needs strace (not installed; scripts/deps.sh installs it with ETCD=1) to slow "
               "or crash the member's WAL";
    return NULL;
}

int run_etcd__fp_attach(struct run_etcd *E, int slot, struct fl_buf *err)
{
    char *strace = lv_strace_find();
    if (!strace) {
        fl_buf_printf(err, "strace is not installed");
        return FL_EIO;
    }
    struct bridge *b = &E->b[slot];
    b->fp_crashed = false;
    int rc = lv_etcd_wal_fault_on(&E->c, slot - 1, strace, b->fp_delay_ms, b->fp_crash, err);
    free(strace);
    return rc;
}

int run_etcd__failpoint(struct run_world *rw, const char *name, int node,
                        const struct flt_spec *spec, bool off, char *err, size_t err_len)
{
    struct run_etcd *E = rw->etcd;
    bool crash = !off && spec->action == SIM_FAULT_CRASH;
    int delay_ms = (int)spec->delay_ms;
    const char *action = off ? "off" : flt_action_str(spec->action);
    int rc = FL_OK;
    for (int i = node ? node : 1; i <= (node ? node : E->n) && rc == FL_OK; i++) {
        struct bridge *b = &E->b[i];
        lv_etcd_wal_fault_off(&E->c, i - 1);
        b->fp_on = !off;
        b->fp_delay_ms = crash ? 0 : delay_ms;
        b->fp_crash = !crash                              ? LV_WAL_CRASH_NONE
                      : !strcmp(name, "raft/before_save") ? LV_WAL_CRASH_AT_WRITE
                                                          : LV_WAL_CRASH_AT_SYNC;
        if (off || !E->c.m[i - 1].proc.running)
            continue; /* a member down gets it at its restart */
        struct fl_buf e;
        fl_buf_init(&e);
        if ((rc = run_etcd__fp_attach(E, i, &e)) != FL_OK)
            snprintf(err, err_len, "'%s' %s on member %d: %s", name, action, i, fl_buf_cstr(&e));
        fl_buf_close(&e);
    }
    return rc;
}
