/*
 * scn_core.c: the scenario runtime's engine: the Lua state, the coroutines and the
 * loop that drives them on the simulated clock.
 *
 * Every piece of a scenario that can block (the main chunk, each spawn, each watch
 * callback) is a Lua thread. A C function that blocks registers how it will be woken
 * (a timer via run_at, or the completion of a client or control operation), marks its
 * coroutine waiting and returns lua_yieldk with a continuation; the wake-up puts the
 * coroutine on a FIFO ready list; the driver resumes ready coroutines in that order
 * and otherwise processes one simulator event. Wake-ups come only from simulator
 * events and the FIFO is ordered, so the interleaving is a function of the seed.
 *
 * The run ends when the main chunk returns (spawned coroutines still waiting are
 * abandoned), or at the first script error, which is reported as "SCENARIO:LINE:
 * message" and ends the run as 'error' (exit 2).
 */
#include "harness/lua/scn_int.h"
#include "harness/common/exit_codes.h"

#include <errno.h>

static char describe_sentinel;

/* --- coroutines ---------------------------------------------------------------------- */

static void ready_push(struct scn *S, int id)
{
    if (S->ready_len == S->ready_cap) {
        int cap = (int)fl_grow_cap((size_t)S->ready_cap, (size_t)S->ready_len + 1, 16, sizeof(int));
        int *r = fl_malloc(sizeof(int) * (size_t)cap);
        for (int i = 0; i < S->ready_len; i++)
            r[i] = S->ready[(S->ready_head + i) % S->ready_cap];
        free(S->ready);
        S->ready = r;
        S->ready_cap = cap;
        S->ready_head = 0;
    }
    S->ready[(S->ready_head + S->ready_len) % S->ready_cap] = id;
    S->ready_len++;
}

static int ready_pop(struct scn *S)
{
    FL_ASSERT(S->ready_len > 0);
    int id = S->ready[S->ready_head];
    S->ready_head = (S->ready_head + 1) % S->ready_cap;
    S->ready_len--;
    return id;
}

struct scn_co *scn_co_start(struct scn *S, lua_State *L, int nargs)
{
    FL_ASSERT(lua_type(L, -nargs - 1) == LUA_TFUNCTION);
    FL_GROW(S->cos, S->cap_cos, (size_t)S->n_cos + 1, 16);
    struct scn_co *co = fl_calloc(1, sizeof(*co));
    co->S = S;
    co->id = S->n_cos + 1;
    S->cos[S->n_cos++] = co;
    co->th = lua_newthread(L);
    *(struct scn_co **)lua_getextraspace(co->th) = co;
    co->ref = luaL_ref(L, LUA_REGISTRYINDEX);    /* pops the thread */
    co->fault_scope = scn_co_of(L)->fault_scope; /* a spawn inside an on() handler */
    lua_xmove(L, co->th, nargs + 1);
    /* It starts at the next turn of the driver, after the current coroutine yields. */
    ready_push(S, co->id);
    return co;
}

void scn_co_wake(struct scn_co *co)
{
    struct scn *S = co->S;
    if (S->stopping || co->done)
        return;
    FL_ASSERT(co->waiting);
    co->waiting = false;
    if (co->starting) {
        co->woke_early = true; /* scn_wait_end hands it to the continuation */
        return;
    }
    ready_push(S, co->id);
}

void scn_wait_begin(struct scn_co *co)
{
    FL_ASSERT(co->id > 0 && !co->waiting && !co->starting);
    co->waiting = true;
    co->starting = true;
    co->woke_early = false;
}

int scn_wait_end(lua_State *L, lua_KContext ctx, lua_KFunction k)
{
    struct scn_co *co = scn_co_of(L);
    FL_ASSERT(co->starting);
    co->starting = false;
    if (co->woke_early) {
        co->woke_early = false;
        return k(L, LUA_OK, ctx);
    }
    return lua_yieldk(L, 0, ctx, k);
}

struct scn_co *scn_need_co(lua_State *L, const char *name)
{
    struct scn_co *co = scn_co_of(L);
    if (co->S->describe_only)
        scn_describe_stop(L);
    if (co->id == 0 || !lua_isyieldable(L))
        luaL_error(L,
                   "%s must be called from the scenario or a spawned coroutine (it blocks), "
                   "not from a callback such as a sort comparator; use spawn(fn)",
                   name);
    return co;
}

static void wake_timer(void *arg)
{
    scn_co_wake(arg);
}

int scn_sleep_k(lua_State *L, int64_t delay_ns, lua_KContext ctx, lua_KFunction k)
{
    struct scn_co *co = scn_co_of(L);
    struct run_world *rw = co->S->rw;
    int64_t at = scn_deadline(L, "sleep", delay_ns);
    scn_wait_begin(co);
    run_at(rw, at, wake_timer, co);
    return scn_wait_end(L, ctx, k);
}

_Noreturn void scn_describe_stop(lua_State *L)
{
    lua_pushlightuserdata(L, &describe_sentinel);
    lua_error(L);
    FL_UNREACHABLE();
}

struct run_world *scn_world(lua_State *L)
{
    struct scn *S = scn_of(L);
    scn_guard_api(L);
    if (S->describe_only)
        scn_describe_stop(L);
    if (!run_world_is_setup(S->rw)) {
        char err[256];
        scn_swarm_apply(S);
        scn_shrink_apply(S);
        if (run_world_setup(S->rw, &S->cluster, &S->clients, &S->workload, S->checks, err,
                            sizeof err))
            luaL_error(L, "cannot set up the cluster: %s", err);
    }
    return S->rw;
}

/* --- errors -------------------------------------------------------------------------- */

/* Lua shortens long chunk names to "...tail"; put the full path back so every message
 * starts with the scenario path exactly as the user gave it. */
static void fix_chunk_prefix(struct scn *S, const char *msg, char *out, size_t n)
{
    const char *path = S->opts->path;
    if (!strncmp(msg, "...", 3)) {
        for (const char *c = strchr(msg + 3, ':'); c; c = strchr(c + 1, ':')) {
            size_t tail = (size_t)(c - (msg + 3)), plen = strlen(path);
            if (tail <= plen && !memcmp(path + plen - tail, msg + 3, tail)) {
                snprintf(out, n, "%s%s", path, c);
                return;
            }
        }
    }
    snprintf(out, n, "%s", msg);
}

static int tostring_fn(lua_State *L)
{
    luaL_tolstring(L, 1, NULL);
    return 1;
}

/* The text of the error object on top of th, into buf. A __tostring is script code: it
 * runs protected, in the main state (th may be a dead coroutine), and an error it raises
 * becomes part of the message instead of a Lua panic. */
static void error_text(struct scn *S, lua_State *th, char *buf, size_t n)
{
    int t = lua_type(th, -1);
    if (t == LUA_TSTRING || t == LUA_TNUMBER) {
        snprintf(buf, n, "%s", lua_tostring(th, -1));
        return;
    }
    if (luaL_getmetafield(th, -1, "__tostring") == LUA_TNIL) {
        snprintf(buf, n, "(error object is a %s value)", luaL_typename(th, -1));
        return;
    }
    lua_pop(th, 1);
    lua_State *L = S->L;
    lua_pushvalue(th, -1);
    lua_xmove(th, L, 1);
    lua_pushcfunction(L, tostring_fn);
    lua_insert(L, -2);
    lua_State *was = S->running;
    scn_guard_enter(S, L);
    S->mem_enforce = true;
    int st = lua_pcall(L, 1, 1, 0);
    S->mem_enforce = false;
    S->running = was;
    if (st == LUA_OK)
        snprintf(buf, n, "%s", lua_tostring(L, -1));
    else if (lua_type(L, -1) == LUA_TSTRING)
        snprintf(buf, n, "(error object is a %s value whose __tostring failed: %s)",
                 luaL_typename(th, -1), lua_tostring(L, -1));
    else
        snprintf(buf, n, "(error object is a %s value whose __tostring failed)",
                 luaL_typename(th, -1));
    lua_pop(L, 1);
}

/* S->error = text; a text too long for it ends in "..." (never cut silently). */
static void set_error(struct scn *S, const char *text)
{
    size_t n = strlen(text);
    if (n < sizeof S->error) {
        memcpy(S->error, text, n + 1);
        return;
    }
    memcpy(S->error, text, sizeof S->error - 4);
    memcpy(S->error + sizeof S->error - 4, "...", 4);
}

static void fail_from(struct scn *S, lua_State *th)
{
    if (S->failed)
        return;
    S->failed = true;
    char msg[4 * sizeof S->error]; /* longer than S->error: set_error marks the cut */
    error_text(S, th, msg, sizeof msg);
    char fixed[4 * sizeof S->error];
    fix_chunk_prefix(S, msg, fixed, sizeof fixed);
    size_t plen = strlen(S->opts->path);
    if (strncmp(fixed, S->opts->path, plen) || fixed[plen] != ':') {
        /* error(msg, 0) or an error object: say where the coroutine stopped. */
        int line = scn_current_line(th, 0);
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "%s:%d: %s", S->opts->path, line, fixed);
        set_error(S, fl_buf_cstr(&b));
        fl_buf_close(&b);
    } else {
        set_error(S, fixed);
    }
}

/* --- the driver ---------------------------------------------------------------------- */

/* One lua_resume of a coroutine (resume): in its on() firing's scope, if any. */
struct co_run {
    struct scn *S;
    struct scn_co *co;
    int nargs, nres, st;
};

static void co_run(struct run_world *rw, void *arg)
{
    (void)rw;
    struct co_run *r = arg;
    scn_guard_enter(r->S, r->co->th);
    r->S->mem_enforce = true;
    r->st = lua_resume(r->co->th, r->S->L, r->nargs, &r->nres);
    r->S->mem_enforce = false;
    r->S->running = NULL;
}

static void resume(struct scn *S, struct scn_co *co)
{
    if (co->done)
        return;
    /* First start: the function and its arguments are on the stack. After a yield:
     * whatever the wake-up pushed (a client result), handed to the continuation. */
    int nargs = lua_gettop(co->th);
    if (lua_status(co->th) != LUA_YIELD)
        nargs -= 1;
    struct co_run r = {S, co, nargs, 0, LUA_OK};
    if (co->fault_scope) /* an on() firing's faults: they do nothing when it is skipped */
        run_scope(S->rw, co->fault_scope, RUN_SCOPE_ALWAYS, co_run, &r);
    else
        co_run(S->rw, &r);
    int st = r.st, nres = r.nres;
    if (st == LUA_ERRMEM)
        scn_guard_memory_msg(S, co->th);
    if (st == LUA_YIELD) {
        lua_pop(co->th, nres);
        if (!co->waiting && S->stop == SCN_STOP_NONE) {
            lua_pushliteral(co->th, "a coroutine yielded outside the scenario API "
                                    "(coroutine.yield is not a way to wait; use sleep)");
            fail_from(S, co->th);
        }
        return;
    }
    co->done = true;
    if (S->stop != SCN_STOP_NONE)
        ; /* the stop's own message (scn_guard.c), whatever the coroutine raised */
    else if (st != LUA_OK)
        fail_from(S, co->th);
    else if (co->id == 1)
        S->main_done = true;
    luaL_unref(S->L, LUA_REGISTRYINDEX, co->ref);
    co->ref = LUA_NOREF;
}

/* shrink{ end_at }: true when nothing is left to do before end_at; the world is then
 * at end_at and the scenario stops as if its main chunk had returned. */
static bool cut_now(struct scn *S)
{
    if (!S->end_at_ns || run_next_event_ns(S->rw) <= S->end_at_ns || run_world_stopped(S->rw))
        return false;
    run_advance(S->rw, S->end_at_ns);
    S->cut = true;
    if (S->shrink_info)
        json_object_set_new(S->shrink_info, "cut_at_ms", json_integer(run_now_ns(S->rw) / FL_MS));
    return true;
}

static void drive(struct scn *S)
{
    while (!S->main_done && !S->failed && S->stop == SCN_STOP_NONE) {
        if (((++S->poll_tick & 63) == 0 || scn_guard_due()) && scn_guard_poll(S, S->cos[0]->th))
            break;
        if (S->ready_len > 0) {
            struct scn_co *co = S->cos[ready_pop(S) - 1];
            resume(S, co);
            continue;
        }
        if (cut_now(S))
            break;
        if (!run_step(S->rw)) {
            if (run_world_stopped(S->rw))
                break; /* SIGINT or a safety violation: the run ends and is judged */
            snprintf(S->error, sizeof S->error,
                     "%s:%d: the scenario is blocked: every coroutine waits and no event is "
                     "pending",
                     S->opts->path, scn_current_line(S->cos[0]->th, 0));
            S->failed = true;
        }
    }
    S->stopping = true;
}

/* A scenario stopped by a bound (scn_guard.c): a timeout or a memory error is the
 * run's error with that message; an interrupt is the world's, as when it comes between
 * two events (run_world_stopped records it). */
static void end_stopped(struct scn *S)
{
    if (S->stop == SCN_STOP_TIMEOUT || S->stop == SCN_STOP_MEMORY ||
        S->stop == SCN_STOP_REFUSED) {
        S->failed = true;
        snprintf(S->error, sizeof S->error, "%s", S->stop_msg);
    } else if (S->stop == SCN_STOP_INTERRUPT) {
        run_world_stopped(S->rw);
    }
}

/* --- state --------------------------------------------------------------------------- */

static void set_time_constants(lua_State *L)
{
    lua_pushinteger(L, FL_NS);
    lua_setglobal(L, "ns");
    lua_pushinteger(L, FL_US);
    lua_setglobal(L, "us");
    lua_pushinteger(L, FL_MS);
    lua_setglobal(L, "ms");
    lua_pushinteger(L, FL_S);
    lua_setglobal(L, "s");
}

static void scn_init(struct scn *S, const struct scn_options *opts)
{
    memset(S, 0, sizeof *S);
    S->opts = opts;
    S->root.S = S;
    S->root.ref = LUA_NOREF;
    run_cluster_config_default(&S->cluster);
    run_clients_config_default(&S->clients);
    run_workload_config_default(&S->workload);
    S->checks = RUN_CHECK_ALL;
    S->time_scale_pct = 100;
    S->ov_clients = S->ov_keys = S->ov_rate = S->ov_watchers = S->ov_nodes = -1;
    snprintf(S->chunkname, sizeof S->chunkname, "@%s", opts->path);
    S->mem_limit = opts->lua_mem_bytes;
    S->deadline_s = opts->timeout_s > 0 ? scn_mono_s() + opts->timeout_s : 0;
    S->L = scn_guard_newstate(S);
    S->root.th = S->L;
    *(struct scn_co **)lua_getextraspace(S->L) = &S->root;
    scn_open_sandbox(S->L, opts->unsafe_lua);
    scn_guard_open(S->L);
    set_time_constants(S->L);
    scn_open_sched(S->L);
    scn_open_world(S->L);
    scn_open_client(S->L);
    scn_open_observe(S->L);
    scn_open_shrink(S->L);
    scn_open_swarm(S->L);
    scn_open_on(S->L);
}

static void scn_close(struct scn *S)
{
    /* The world is closed (or never was): finalizers that lua_close runs get an error
     * from any API call (scn_guard_api); ours never act on the world. */
    S->closed = true;
    if (S->L)
        lua_close(S->L);
    for (int i = 0; i < S->n_cos; i++) {
        if (S->cos[i]->result_free && S->cos[i]->result)
            S->cos[i]->result_free(S->cos[i]->result);
        free(S->cos[i]);
    }
    free(S->cos);
    free(S->ready);
}

/* Loads the scenario; on failure fills S->error (a syntax error names file:line). */
static bool load_script(struct scn *S)
{
    FILE *f = fopen(S->opts->path, "r");
    if (!f) {
        snprintf(S->error, sizeof S->error, "cannot read scenario '%s': %s", S->opts->path,
                 strerror(errno));
        return false;
    }
    fclose(f);
    S->mem_enforce = true;
    int st = luaL_loadfilex(S->L, S->opts->path, "t");
    S->mem_enforce = false;
    if (st == LUA_ERRMEM) {
        scn_guard_memory_msg(S, S->L);
        snprintf(S->error, sizeof S->error, "%s", S->stop_msg);
        lua_pop(S->L, 1);
        return false;
    }
    if (st != LUA_OK) {
        S->failed = false;
        fail_from(S, S->L);
        lua_pop(S->L, 1);
        return false;
    }
    return true;
}

int scn_run(const struct scn_options *opts, struct scn_result *res)
{
    memset(res, 0, sizeof *res);
    FILE *f = fopen(opts->path, "r");
    if (!f) {
        snprintf(res->error, sizeof res->error, "cannot read scenario '%s': %s", opts->path,
                 strerror(errno));
        return res->exit_code = FL_EXIT_USAGE;
    }
    fclose(f);

    struct run_options ro = {.scenario = opts->path,
                             .seed = opts->seed,
                             .db_path = opts->db_path,
                             .bugs = opts->bugs,
                             .bug_count = opts->bug_count,
                             .unsafe_lua = opts->unsafe_lua,
                             .paranoid = opts->paranoid,
                             .target = opts->target,
                             .workdir = opts->workdir,
                             .keep = opts->keep};
    struct run_world *rw = NULL;
    char err[512];
    int rc = run_world_open(&rw, &ro, err, sizeof err);
    if (rc) {
        snprintf(res->error, sizeof res->error, "%s", err);
        return res->exit_code = rc == FL_EINTERNAL ? FL_EXIT_INTERNAL : FL_EXIT_USAGE;
    }

    struct scn *S = fl_calloc(1, sizeof *S);
    scn_init(S, opts);
    S->rw = rw;
    scn_target_restrict(S->L, rw);
    scn_guard_begin(S);
    bool loaded = load_script(S);
    if (loaded) {
        scn_co_start(S, S->L, 0);
        drive(S);
    }
    S->stopping = true;
    if (!loaded && S->stop == SCN_STOP_MEMORY)
        S->failed = true;
    end_stopped(S);
    run_summary_set(rw, "script_end_ms", json_integer(run_now_ns(rw) / FL_MS));
    rc = run_world_finish(rw, S->failed ? S->error : NULL, &res->run);
    if (S->failed) {
        snprintf(res->error, sizeof res->error, "%s", S->error);
        res->exit_code = S->stop == SCN_STOP_TIMEOUT ? FL_EXIT_INTERNAL : FL_EXIT_USAGE;
    } else if (rc) {
        snprintf(res->error, sizeof res->error, "%s%s",
                 res->run.error[0] ? "" : "internal error finishing the run: ",
                 res->run.error[0] ? res->run.error : fl_strerror(rc));
        res->exit_code = res->run.exit_code ? res->run.exit_code : FL_EXIT_INTERNAL;
    } else {
        res->exit_code = res->run.exit_code;
        if (res->run.verdict == RUN_ERROR)
            snprintf(res->error, sizeof res->error, "%s: the run was interrupted", opts->path);
    }
    /* The world first: nothing it still holds may call back into the scenario. */
    run_world_close(rw);
    scn_guard_detach(S);
    scn_close(S);
    free(S);
    scn_guard_end(opts->timeout_s > 0); /* the watchdog covered lua_close too */
    return res->exit_code;
}

void scn_result_close(struct scn_result *res)
{
    run_result_close(&res->run);
}

int scn_describe(const char *path, char *name, size_t name_len, char *desc, size_t desc_len)
{
    /* A file that loops or grows before its scenario{} must not hang `list scenarios`. */
    struct scn_options opts = {.path = path,
                               .timeout_s = SCN_DESCRIBE_TIMEOUT_S,
                               .lua_mem_bytes = (size_t)SCN_LUA_MEM_MB_DEFAULT << 20};
    name[0] = desc[0] = '\0';
    struct scn *S = fl_calloc(1, sizeof *S);
    scn_init(S, &opts);
    S->describe_only = true;
    scn_guard_begin(S);
    int rc = 0;
    if (!load_script(S)) {
        snprintf(desc, desc_len, "%s", S->error);
        rc = FL_EINVAL;
        goto out;
    }
    scn_guard_enter(S, S->L);
    S->mem_enforce = true;
    int st = lua_pcall(S->L, 0, 0, 0);
    S->mem_enforce = false;
    S->running = NULL;
    if (st == LUA_ERRMEM)
        scn_guard_memory_msg(S, S->L);
    if (S->stop != SCN_STOP_NONE) {
        snprintf(desc, desc_len, "%s", S->stop_msg);
        rc = FL_EINVAL;
        goto out;
    }
    if (st != LUA_OK && lua_touserdata(S->L, -1) != &describe_sentinel) {
        fail_from(S, S->L);
        snprintf(desc, desc_len, "%s", S->error);
        rc = FL_EINVAL;
        goto out;
    }
    snprintf(name, name_len, "%s", S->name);
    snprintf(desc, desc_len, "%s", S->description);
out:
    scn_guard_detach(S);
    scn_close(S);
    free(S);
    scn_guard_end(true);
    return rc;
}
