/*
 * run_target_live_fault.c: faults on member processes: kill / restart / pause / resume, skew,
 * prevote, the peer proxies' cuts, clogs, loss and delay, and failpoints.
 */
#include "harness/run/run_target_live.h"

/* A skew the member process takes now (SIGUSR1: it reads DATA/skew_ppm), once it can:
 * SIGUSR1 ends a process that has not installed its handler yet (the pdeath wrapper,
 * or a member still starting), so only after it answered a Status since its start. */
void lvt_fp_signal(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!b->fp_pending || !p->running || p->pid <= 0 || L->st[slot].answered_s <= b->started_s)
        return;
    b->fp_pending = false;
    kill(p->pid, SIGUSR2);
}

void lvt_skew_signal(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!b->skew_pending || !p->running || p->pid <= 0 || L->st[slot].answered_s <= b->started_s)
        return;
    b->skew_pending = false;
    kill(p->pid, SIGUSR1); /* a paused member takes it when it resumes */
}

/* argv's "--skew-ppm" value (added when absent): the rate of the member's next starts. */
static void argv_set_rate(struct lv_proc *p, const char *rate)
{
    size_t n = 0;
    while (p->argv && p->argv[n])
        n++;
    for (size_t i = 0; i + 1 < n; i++)
        if (!strcmp(p->argv[i], "--skew-ppm")) {
            free(p->argv[i + 1]);
            p->argv[i + 1] = fl_strdup(rate);
            return;
        }
    p->argv = fl_realloc(p->argv, (n + 3) * sizeof *p->argv);
    p->argv[n] = fl_strdup("--skew-ppm");
    p->argv[n + 1] = fl_strdup(rate);
    p->argv[n + 2] = NULL;
}

void lvt_skew(struct run_world *rw, int id, int64_t rate_ppm)
{
    struct run_live *L = rw->lv;
    if (!L || id < 1 || id > L->n)
        return;
    struct lbridge *b = &L->b[id];
    struct lv_member *m = &L->c.m[id - 1];
    if (b->rate_ppm == rate_ppm)
        return;
    b->rate_ppm = rate_ppm;
    snprintf(b->rate_arg, sizeof b->rate_arg, "%lld", (long long)rate_ppm);
    argv_set_rate(&m->proc, b->rate_arg);
    struct fl_buf path;
    fl_buf_init(&path);
    fl_buf_printf(&path, "%s/skew_ppm", m->data_dir);
    FILE *f = fopen(fl_buf_cstr(&path), "w");
    bool ok = f && fprintf(f, "%s\n", b->rate_arg) > 0;
    if (f && fclose(f))
        ok = false;
    fl_buf_close(&path);
    if (!ok) {
        fl_log(FL_LOG_ERROR, "target live: cannot write %s/skew_ppm", m->data_dir);
        return;
    }
    b->skew_pending = true; /* a member not running takes it from --skew-ppm at its start */
    lvt_skew_signal(L, id);
}

void lvt_node_fault(struct run_world *rw, int id, const char *kind)
{
    struct run_live *L = rw->lv;
    L->dirty = true;
    struct lv_member *m = &L->c.m[id - 1];
    int proc = L->b[id].proc;
    struct fl_buf err;
    fl_buf_init(&err);
    if (!strcmp(kind, "kill")) {
        bool was = m->proc.running;
        lv_proc_kill(&m->proc);
        if (was) /* as the simulator's cluster tells its checker at a crash */
            lvt_feed_note(L, id, "not_leader");
        L->b[id].up_pending = false;
        if (sim_proc_state(rw->w, proc) != SIM_PROC_DOWN)
            sim_proc_kill(rw->w, proc);
        lvt_stat_end(&L->st[id]);
    } else if (!strcmp(kind, "restart")) {
        if (!m->proc.running) {
            L->b[id].started_s = run_target_wall_s();
            L->b[id].skew_pending = false; /* its --skew-ppm is the rate */
            L->b[id].up_pending = true;    /* its bridge follows once it serves */
            if (lv_proc_start(&m->proc, &err))
                fl_log(FL_LOG_ERROR, "target live: restart of member %d: %s", id,
                       fl_buf_cstr(&err));
        } else if (sim_proc_state(rw->w, proc) == SIM_PROC_DOWN && !L->b[id].up_pending) {
            sim_proc_restart(rw->w, proc);
        }
    } else if (!strcmp(kind, "pause")) {
        if (m->proc.running && !m->proc.paused)
            lv_proc_pause(&m->proc);
        L->st[id].ok = false; /* a stopped process answers nothing */
    } else {
        if (m->proc.paused)
            lv_proc_resume(&m->proc);
    }
    fl_buf_close(&err);
}

void lvt_set_prevote(struct run_world *rw, int id, bool on)
{
    struct run_live *L = rw->lv;
    char **argv = L->c.m[id - 1].proc.argv;
    for (size_t i = 0; argv && argv[i] && argv[i + 1]; i++)
        if (!strcmp(argv[i], "--prevote")) {
            free(argv[i + 1]);
            argv[i + 1] = fl_strdup(on ? "1" : "0");
            return;
        }
    struct lv_proc *p = &L->c.m[id - 1].proc;
    size_t n = 0;
    while (p->argv[n])
        n++;
    p->argv = fl_realloc(p->argv, (n + 3) * sizeof *p->argv);
    p->argv[n] = fl_strdup("--prevote");
    p->argv[n + 1] = fl_strdup(on ? "1" : "0");
    p->argv[n + 2] = NULL;
}

/* Member-member links in the world (between bridges, which never talk to each other)
 * become the real peer links' state in the proxies; node index = slot
 * (live_member.h): a cut, and net()'s loss and added delay (its duplication has no
 * meaning on a TCP stream: only the simulated client links carry it). */
void lvt_net_sync(struct run_world *rw)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    const struct net_link *base = &rw->net.base_link;
    for (int i = 1; i <= L->n; i++)
        for (int j = 1; j <= L->n; j++) {
            if (i == j)
                continue;
            struct lv_link *l = lv_net_link(&L->c.net, i, j);
            struct net_link s;
            net_link_get(rw->w, L->b[i].proc, L->b[j].proc, &s);
            l->cut = net_blocked(rw->w, L->b[i].proc, L->b[j].proc);
            l->loss_ppm = s.loss_ppm;
            l->delay_ms =
                s.latency_ns > base->latency_ns ? (s.latency_ns - base->latency_ns) / FL_MS : 0;
        }
    lv_net_update(&L->c.net);
    L->dirty = true;
}

void lvt_clog(struct run_world *rw, int from_proc, int to_proc, bool on)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    for (int i = 1; i <= L->n; i++)
        for (int j = 1; j <= L->n; j++)
            if (i != j && (from_proc < 0 || from_proc == L->b[i].proc) &&
                (to_proc < 0 || to_proc == L->b[j].proc))
                lv_net_link(&L->c.net, i, j)->clog = on;
    lv_net_update(&L->c.net);
    L->dirty = true;
}

/* failpoint(name, { node, action, ... }) in the member processes: the node code's
 * failpoints fire in env_uv as in the simulator (a crash ends the process as a panic
 * does); the member's list goes to DATA/failpoints and the member reads it at SIGUSR2,
 * sent once the process answered a Status since its start (as skew's), and at every
 * start. The simulated disk's and network's failpoints (disk/..., net/...) have no site
 * in a member process: refused. */
int lvt_failpoint(struct run_world *rw, const char *name, int node, const struct flt_spec *spec,
                  bool off, char *err, size_t err_len)
{
    struct run_live *L = rw->lv;
    int fp = 0;
    while (fp < FLT_POINT_COUNT && strcmp(flt_point_name((enum flt_point)fp), name))
        fp++;
    if (fp >= FLT_DISK_FSYNC_EIO) {
        snprintf(err, err_len,
                 "failpoint '%s': not available on --target live (the simulated disk's and "
                 "network's; a member process has the node code's only)",
                 name);
        return FL_EUNSUP;
    }
    static const char *const actions[] = {"none", "crash", "error", "delay", "drop"};
    for (int slot = node ? node : 1; slot <= (node ? node : L->n); slot++) {
        struct lbridge *b = &L->b[slot];
        int k = 0;
        while (k < b->n_fps && b->fps[k].fp != fp)
            k++;
        if (off) {
            if (k < b->n_fps)
                b->fps[k] = b->fps[--b->n_fps];
        } else {
            if (k == b->n_fps && b->n_fps == (int)FL_ARRAY_LEN(b->fps)) {
                snprintf(err, err_len, "failpoint '%s': at most %d on one member", name,
                         (int)FL_ARRAY_LEN(b->fps));
                return FL_EFULL;
            }
            if (k == b->n_fps)
                b->n_fps++;
            b->fps[k].fp = fp;
            snprintf(b->fps[k].line, sizeof b->fps[k].line, "%s %s %lld %u %u %u\n", name,
                     actions[spec->action], (long long)spec->delay_ms, spec->p_ppm, spec->count,
                     spec->skip);
        }
        struct fl_buf path, tmp;
        fl_buf_init(&path);
        fl_buf_init(&tmp);
        fl_buf_printf(&path, "%s/failpoints", L->c.m[slot - 1].data_dir);
        fl_buf_printf(&tmp, "%s.tmp", fl_buf_cstr(&path));
        FILE *f = fopen(fl_buf_cstr(&tmp), "w");
        bool ok = f != NULL;
        for (int i = 0; ok && i < b->n_fps; i++)
            ok = fputs(b->fps[i].line, f) >= 0;
        if (f && fclose(f))
            ok = false;
        ok = ok && rename(fl_buf_cstr(&tmp), fl_buf_cstr(&path)) == 0;
        if (!ok)
            snprintf(err, err_len, "failpoint: cannot write %s", fl_buf_cstr(&path));
        fl_buf_close(&path);
        fl_buf_close(&tmp);
        if (!ok)
            return FL_EIO;
        b->fp_pending = true; /* a member not running reads it at its start */
        lvt_fp_signal(L, slot);
    }
    return FL_OK;
}
