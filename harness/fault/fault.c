/*
 * fault.c: failpoints on libfiu, decided by our RNG (see fault.h).
 *
 * libfiu keeps a process-wide table of enabled failpoints and asks an external
 * callback whether an enabled one fires; that callback gets no context argument.
 * So flt_check points `cur` at the entry being asked about for the duration of
 * one fiu_fail call and clears it afterwards: the only global state here besides
 * the per-name enable counts, which return to zero as worlds are freed.
 *
 * Each process has its own fault stream "fault/<proc name>" (world-level checks
 * use "fault"), so enabling a failpoint on one node never moves another node's
 * draws, and a probability of 1,000,000 ppm draws nothing at all.
 */
#include "harness/fault/fault.h"

#define FIU_ENABLE 1
#include <fiu-control.h>
#include <fiu.h>

static const struct flt_info registry[] = {
#define FLT_INFO_(e, name, desc) {name, desc},
    FL_FAILPOINTS(FLT_INFO_)
#undef FLT_INFO_
};
_Static_assert(FL_ARRAY_LEN(registry) == FLT_POINT_COUNT, "registry");
#define FLT_N FL_ARRAY_LEN(registry)

struct flt_entry {
    size_t fp;
    int node;
    struct flt_spec spec;
    uint64_t hits, fired;
};

struct flt_state {
    struct flt_entry *e;
    size_t n, cap;
    uint64_t fired[FLT_N];
    struct sim_rng **rngs; /* per process, derived on first use */
    int nrngs;
};

/* Process-wide: how many entries (over all live worlds) enable each name in
 * libfiu. */
static unsigned fiu_refs[FLT_N];
static bool fiu_ready;

static struct {
    struct flt_state *st;
    struct flt_entry *entry;
    struct sim_rng *rng;
} cur;

size_t flt_failpoint_count(void)
{
    return FLT_N;
}

const struct flt_info *flt_failpoint_info(size_t i)
{
    return i < FLT_N ? &registry[i] : NULL;
}

static int fp_index(const char *name)
{
    for (size_t i = 0; i < FLT_N; i++)
        if (strcmp(registry[i].name, name) == 0)
            return (int)i;
    return -1;
}

const struct flt_info *flt_failpoint_find(const char *name)
{
    int i = fp_index(name);
    return i < 0 ? NULL : &registry[i];
}

bool flt_action_parse(const char *s, enum sim_fault *out)
{
    static const struct {
        const char *name;
        enum sim_fault a;
    } t[] = {{"crash", SIM_FAULT_CRASH},
             {"error", SIM_FAULT_ERROR},
             {"delay", SIM_FAULT_DELAY},
             {"delay_ms", SIM_FAULT_DELAY},
             {"drop", SIM_FAULT_DROP}};
    for (size_t i = 0; i < FL_ARRAY_LEN(t); i++)
        if (strcmp(s, t[i].name) == 0) {
            *out = t[i].a;
            return true;
        }
    return false;
}

const char *flt_action_str(enum sim_fault a)
{
    static const char *const names[] = {[SIM_FAULT_NONE] = "none",
                                        [SIM_FAULT_CRASH] = "crash",
                                        [SIM_FAULT_ERROR] = "error",
                                        [SIM_FAULT_DELAY] = "delay_ms",
                                        [SIM_FAULT_DROP] = "drop"};
    return FL_ENUM_NAME(names, a, "?");
}

/* ---------------------------------------------------------------- decisions ---*/

/* libfiu's external callback: 1 fires the failpoint. Only answers for the entry
 * flt_check_proc is asking about; anything else (a stray fiu_fail) never fires. */
static int fiu_decide(const char *name, int *failnum, void **failinfo, unsigned int *flags)
{
    (void)failnum;
    (void)failinfo;
    (void)flags;
    struct flt_entry *e = cur.entry;
    if (!e || strcmp(registry[e->fp].name, name) != 0)
        return 0;
    e->hits++;
    if (e->hits <= e->spec.skip)
        return 0;
    if (e->spec.count && e->fired >= e->spec.count)
        return 0;
    uint32_t p = e->spec.p_ppm ? e->spec.p_ppm : (uint32_t)SIM_PPM;
    if (!sim_rng_chance_ppm(cur.rng, p))
        return 0;
    e->fired++;
    cur.st->fired[e->fp]++;
    return 1;
}

static struct sim_rng *proc_rng(struct sim_world *w, struct flt_state *st, int proc)
{
    if (proc < 0)
        return sim_rng(w, "fault");
    if (proc >= st->nrngs) {
        int n = sim_proc_count(w);
        FL_ASSERT(proc < n);
        st->rngs = fl_realloc(st->rngs, (size_t)n * sizeof(*st->rngs));
        for (int i = st->nrngs; i < n; i++)
            st->rngs[i] = NULL;
        st->nrngs = n;
    }
    if (!st->rngs[proc]) {
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "fault/%s", sim_proc_name(w, proc));
        st->rngs[proc] = sim_rng(w, fl_buf_cstr(&b));
        fl_buf_close(&b);
    }
    return st->rngs[proc];
}

static struct flt_entry *entry_find(struct flt_state *st, size_t fp, int node)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->e[i].fp == fp && st->e[i].node == node)
            return &st->e[i];
    return NULL;
}

enum sim_fault flt_check_proc(struct sim_world *w, int proc, enum flt_point fp,
                              struct sim_fault_hit *hit)
{
    if (hit) {
        hit->action = SIM_FAULT_NONE;
        hit->delay_ns = 0;
    }
    struct flt_state *st = sim_fault_hook_ctx(w);
    if (!st || st->n == 0)
        return SIM_FAULT_NONE;
    FL_ASSERTF((size_t)fp < FLT_N, "unregistered failpoint %d", (int)fp);
    const char *name = registry[fp].name;
    struct flt_entry *e = proc >= 0 ? entry_find(st, (size_t)fp, proc) : NULL;
    if (!e)
        e = entry_find(st, (size_t)fp, -1);
    if (!e)
        return SIM_FAULT_NONE;
    FL_ASSERT(cur.entry == NULL);
    cur.st = st;
    cur.entry = e;
    cur.rng = proc_rng(w, st, proc);
    int fired = fiu_fail(name);
    memset(&cur, 0, sizeof(cur));
    if (!fired)
        return SIM_FAULT_NONE;
    if (hit) {
        hit->action = e->spec.action;
        hit->delay_ns = e->spec.delay_ms * FL_MS;
    }
    /* A fired failpoint is part of the run: fold it into the digest. */
    sim_digest_u64(w, 0xfa017u);
    sim_digest_u64(w, (uint64_t)(int64_t)proc);
    sim_digest_str(w, name);
    return e->spec.action;
}

enum sim_fault flt_check(struct sim_world *w, enum flt_point fp, struct sim_fault_hit *hit)
{
    int proc = sim_current_proc(w);
    enum sim_fault a = flt_check_proc(w, proc, fp, hit);
    if (a == SIM_FAULT_CRASH && proc >= 0)
        sim_proc_kill(w, proc);
    return a;
}

/* ---------------------------------------------------------------- enabling ----*/

static bool hook_check(void *ctx, struct sim_world *w, int proc, enum flt_point fp,
                       struct sim_fault_hit *hit)
{
    (void)ctx;
    return flt_check_proc(w, proc, fp, hit) != SIM_FAULT_NONE;
}

static void entry_remove(struct flt_state *st, size_t i)
{
    size_t fp = st->e[i].fp;
    FL_ASSERT(fiu_refs[fp] > 0);
    if (--fiu_refs[fp] == 0)
        fiu_disable(registry[fp].name);
    memmove(&st->e[i], &st->e[i + 1], (st->n - i - 1) * sizeof(*st->e));
    st->n--;
}

static void state_free(void *ctx)
{
    struct flt_state *st = ctx;
    while (st->n)
        entry_remove(st, st->n - 1);
    free(st->e);
    free(st->rngs);
    free(st);
}

static struct flt_state *state_get(struct sim_world *w)
{
    struct flt_state *st = sim_fault_hook_ctx(w);
    if (st)
        return st;
    if (!fiu_ready) {
        fiu_init(0);
        fiu_ready = true;
    }
    st = fl_calloc(1, sizeof(*st));
    struct sim_fault_hook hook = {.check = hook_check, .free = state_free, .ctx = st};
    sim_set_fault_hook(w, &hook);
    return st;
}

int flt_enable(struct sim_world *w, const char *name, const struct flt_spec *spec)
{
    int fp = fp_index(name);
    if (fp < 0)
        return FL_ENOENT;
    if (spec->node < -1 || spec->node >= sim_proc_count(w) || spec->p_ppm > SIM_PPM ||
        spec->action < SIM_FAULT_CRASH || spec->action > SIM_FAULT_DROP || spec->delay_ms < 0)
        return FL_EINVAL;
    struct flt_state *st = state_get(w);
    struct flt_entry *e = entry_find(st, (size_t)fp, spec->node);
    if (!e) {
        FL_GROW_ZERO(st->e, st->n, st->cap, st->n + 1, 8);
        e = &st->e[st->n - 1];
        e->fp = (size_t)fp;
        e->node = spec->node;
        if (fiu_refs[fp]++ == 0)
            FL_ASSERT(fiu_enable_external(name, 1, NULL, 0, fiu_decide) == 0);
    }
    e->spec = *spec;
    e->hits = 0;
    e->fired = 0;
    return FL_OK;
}

int flt_disable(struct sim_world *w, const char *name, int node)
{
    struct flt_state *st = sim_fault_hook_ctx(w);
    int fp = fp_index(name);
    if (!st || fp < 0)
        return FL_ENOENT;
    for (size_t i = 0; i < st->n; i++)
        if (st->e[i].fp == (size_t)fp && st->e[i].node == node) {
            entry_remove(st, i);
            return FL_OK;
        }
    return FL_ENOENT;
}

void flt_disable_all(struct sim_world *w)
{
    struct flt_state *st = sim_fault_hook_ctx(w);
    while (st && st->n)
        entry_remove(st, st->n - 1);
}

uint64_t flt_fired(struct sim_world *w, enum flt_point fp)
{
    struct flt_state *st = sim_fault_hook_ctx(w);
    return st && (size_t)fp < FLT_N ? st->fired[fp] : 0;
}
