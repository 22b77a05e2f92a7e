/*
 * scn_guard.c: the bounds of a scenario run (DESIGN §9). A script is untrusted input:
 * whatever it does, the run must end, in bounded memory, with a clear message.
 *
 *   - Memory: the Lua state gets its own allocator, which counts the bytes Lua asks
 *     for (not what malloc hands out, which differs between builds) and refuses to
 *     grow past --lua-mem-mb while Lua code runs protected. Lua turns the refusal into
 *     a memory error (after an emergency collection); that error cannot be caught by
 *     pcall/xpcall and ends the run as a script error (exit 2, FILE:LINE). Outside
 *     protected Lua code (results pushed by a simulator callback) nothing is refused:
 *     an error there would have no handler.
 *   - Time: no hook runs while all is well (a count hook makes Lua trace every
 *     instruction, which halved the speed of Lua loops). A one-shot SIGALRM at the
 *     --timeout deadline, and SIGINT/SIGTERM/SIGHUP (chained to the handler that was
 *     installed), set a count hook on the coroutine that is running (lua_sethook is
 *     made to be called from a signal handler; the driver sets it on the next one it
 *     resumes if a signal came in between). The hook reads the clock and the SIGINT
 *     flag; if the scenario must stop it raises an error that pcall cannot keep (the
 *     sandbox's pcall re-raises it, and the hook fires again at the next
 *     instruction), so `while true do end` ends anywhere. The driver polls the same
 *     between simulator events. A run that ends in time never sees the hook, so
 *     digests do not move. 5 s after the deadline a second SIGALRM ends a process
 *     stuck where neither gets control (inside one C call: a pathological string
 *     pattern, a finalizer with --unsafe-lua, a checker): it prints why and exits 3.
 *   - A Lua panic (an error outside any protected call: a bug of ours) prints what
 *     happened and exits 3 instead of aborting.
 *   - The world is reachable only while the run lasts and never from a finalizer:
 *     scn_guard_api raises otherwise. In the sandbox a script cannot create a finalizer
 *     at all (setmetatable refuses __gc, scn_sandbox.c); with --unsafe-lua one that
 *     calls the API gets an error, which Lua swallows (finalizer errors are warnings,
 *     and this state has no warning function).
 * Nothing here changes what a run does before a bound is reached.
 */
#include "harness/lua/scn_int.h"

#include "harness/history/history.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#define WATCHDOG_GRACE_S 5.0

/* Signal handlers see the run through these (one run at a time per process). */
static struct scn *volatile guard_run;
static volatile sig_atomic_t guard_signalled; /* a signal asked for a poll */
static volatile sig_atomic_t guard_alarms;    /* SIGALRMs so far: deadline, watchdog */
static char guard_watchdog_msg[640];
static size_t guard_watchdog_len;
static struct sigaction guard_old_int, guard_old_term, guard_old_hup, guard_old_alrm;
static bool guard_installed;

static void *guard_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct scn *S = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        S->mem_used -= old;
        return NULL;
    }
    /* Only growth can be refused: Lua assumes that shrinking a block never fails. */
    if (nsize > old && S->mem_limit && S->mem_enforce &&
        (nsize - old > S->mem_limit || S->mem_used + (nsize - old) > S->mem_limit))
        return NULL;
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL; /* the host is out of memory: Lua raises its memory error */
    S->mem_used = S->mem_used - old + nsize;
    return p;
}

static int guard_panic(lua_State *L)
{
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)";
    fprintf(stderr, "faultline: internal error: unprotected Lua error: %s\n", msg);
    fflush(stderr);
    _exit(3);
}

static void guard_hook(lua_State *L, lua_Debug *ar);

/* Raises the error that stops the scenario; the hook is re-armed for every instruction
 * so that a pcall that somehow kept the error gets it again at once. */
static _Noreturn void raise_stop(lua_State *L, struct scn *S)
{
    lua_sethook(L, guard_hook, LUA_MASKCOUNT, 1);
    lua_pushstring(L, S->stop_msg);
    lua_error(L);
    FL_UNREACHABLE();
}

static void guard_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    struct scn *S = scn_of(L);
    if (S->stop == SCN_STOP_NONE && !scn_guard_poll(S, L)) {
        lua_sethook(L, NULL, 0, 0); /* not due (yet): back to full speed */
        return;
    }
    raise_stop(L, S);
}

/* --- signals ---------------------------------------------------------------------------- */

/* From a signal handler: the running coroutine stops at its next instruction to poll. */
static void arm_running(void)
{
    guard_signalled = 1;
    struct scn *S = guard_run;
    lua_State *L = S ? S->running : NULL;
    if (L)
        lua_sethook(L, guard_hook, LUA_MASKCOUNT, 1);
}

static void set_alarm(double s)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)s;
    it.it_value.tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6);
    if (s > 0 && !it.it_value.tv_sec && !it.it_value.tv_usec)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

static void on_alarm(int sig)
{
    (void)sig;
    if (guard_alarms++ == 0) { /* the deadline */
        arm_running();
        set_alarm(WATCHDOG_GRACE_S);
        return;
    }
    /* the watchdog: write and _exit only (async-signal-safe) */
    ssize_t w = write(STDERR_FILENO, guard_watchdog_msg, guard_watchdog_len);
    (void)w;
    _exit(3);
}

static void on_interrupt(int sig)
{
    const struct sigaction *old = sig == SIGINT    ? &guard_old_int
                                  : sig == SIGTERM ? &guard_old_term
                                                   : &guard_old_hup;
    old->sa_handler(sig); /* hist's: sets the flag (a second one ends the process) */
    arm_running();
}

/* A handler on_interrupt can call first: a plain one (faultline run's sets a flag). */
static bool chainable(const struct sigaction *old)
{
    return !(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL &&
           old->sa_handler != SIG_IGN;
}

void scn_guard_begin(struct scn *S)
{
    FL_ASSERT(!guard_installed);
    guard_run = S;
    guard_signalled = 0;
    guard_alarms = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    /* SIGINT/SIGTERM/SIGHUP: only chained when someone handles them (faultline run
     * does); else they end the process as they would have. */
    sigaction(SIGINT, NULL, &guard_old_int);
    sigaction(SIGTERM, NULL, &guard_old_term);
    sigaction(SIGHUP, NULL, &guard_old_hup);
    sa.sa_handler = on_interrupt;
    if (chainable(&guard_old_int))
        sigaction(SIGINT, &sa, NULL);
    if (chainable(&guard_old_term))
        sigaction(SIGTERM, &sa, NULL);
    if (chainable(&guard_old_hup))
        sigaction(SIGHUP, &sa, NULL);
    if (S->opts->timeout_s > 0) {
        int n = snprintf(guard_watchdog_msg, sizeof guard_watchdog_msg,
                         "faultline: %s: timeout: the run took more than %g s of wall-clock "
                         "time (--timeout) and did not stop; ended by the watchdog\n",
                         S->opts->path, S->opts->timeout_s);
        guard_watchdog_len = n < 0 ? 0 : FL_MIN((size_t)n, sizeof guard_watchdog_msg - 1);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, &guard_old_alrm);
        set_alarm(S->opts->timeout_s);
    }
    guard_installed = true;
}

void scn_guard_detach(struct scn *S)
{
    FL_ASSERT(guard_run == S);
    S->running = NULL;
    guard_run = NULL;
}

void scn_guard_end(bool had_timeout)
{
    FL_ASSERT(guard_installed);
    guard_run = NULL;
    if (had_timeout) {
        set_alarm(0);
        sigaction(SIGALRM, &guard_old_alrm, NULL);
    }
    struct sigaction cur;
    sigaction(SIGINT, NULL, &cur);
    if (cur.sa_handler == on_interrupt)
        sigaction(SIGINT, &guard_old_int, NULL);
    sigaction(SIGTERM, NULL, &cur);
    if (cur.sa_handler == on_interrupt)
        sigaction(SIGTERM, &guard_old_term, NULL);
    sigaction(SIGHUP, NULL, &cur);
    if (cur.sa_handler == on_interrupt)
        sigaction(SIGHUP, &guard_old_hup, NULL);
    guard_installed = false;
}

bool scn_guard_due(void)
{
    return guard_signalled != 0;
}

void scn_guard_enter(struct scn *S, lua_State *L)
{
    S->running = L;
    if (guard_signalled || S->stop != SCN_STOP_NONE)
        lua_sethook(L, guard_hook, LUA_MASKCOUNT, 1);
}

bool scn_guard_poll(struct scn *S, lua_State *L)
{
    if (S->stop != SCN_STOP_NONE)
        return true;
    if (hist_interrupted()) {
        S->stop = SCN_STOP_INTERRUPT;
        snprintf(S->stop_msg, sizeof S->stop_msg, "%s: interrupted", S->opts->path);
        return true;
    }
    if (S->deadline_s > 0 && (guard_alarms > 0 || scn_mono_s() >= S->deadline_s)) {
        S->stop = SCN_STOP_TIMEOUT;
        snprintf(S->stop_msg, sizeof S->stop_msg,
                 "%s:%d: timeout: the run took more than %g s of wall-clock time (--timeout)",
                 S->opts->path, L ? scn_current_line(L, 0) : 0, S->opts->timeout_s);
        return true;
    }
    return false;
}

void scn_guard_memory_msg(struct scn *S, lua_State *th)
{
    if (S->stop != SCN_STOP_NONE)
        return;
    S->stop = SCN_STOP_MEMORY;
    if (S->mem_limit)
        snprintf(S->stop_msg, sizeof S->stop_msg,
                 "%s:%d: out of memory: the scenario's Lua state reached its limit of %zu MiB "
                 "(--lua-mem-mb)",
                 S->opts->path, scn_current_line(th, 0), S->mem_limit >> 20);
    else
        snprintf(S->stop_msg, sizeof S->stop_msg, "%s:%d: out of memory", S->opts->path,
                 scn_current_line(th, 0));
}

/* True when L runs (inside) a finalizer: Lua names the function it calls as a finalizer
 * "__gc", a metamethod. Walked only where finalizers can exist (--unsafe-lua). */
static bool in_finalizer(lua_State *L)
{
    lua_Debug ar;
    for (int level = 0; level < 1000 && lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "n", &ar) && ar.namewhat && !strcmp(ar.namewhat, "metamethod") &&
            ar.name && !strcmp(ar.name, "__gc"))
            return true;
    }
    return false;
}

void scn_guard_api(lua_State *L)
{
    struct scn *S = scn_of(L);
    if (S->closed)
        luaL_error(L, "the run has ended: the scenario API cannot be used any more");
    if (S->opts->unsafe_lua && in_finalizer(L))
        luaL_error(L, "the scenario API cannot be used from a finalizer (__gc): when it runs "
                      "depends on the garbage collector");
}

void scn_protect_metatable(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lua_pushboolean(L, 0);
    lua_setfield(L, idx, "__metatable");
}

/* --- pcall and xpcall that cannot keep a stop ----------------------------------------- */

/* As Lua's own (lbaselib.c), except that a memory error and the error of a stopped
 * scenario (timeout, interrupt) go on up: a script must not survive them. */
static int finish_pcall(lua_State *L, int status, lua_KContext extra)
{
    if (status != LUA_OK && status != LUA_YIELD) {
        struct scn *S = scn_of(L);
        if (status == LUA_ERRMEM)
            scn_guard_memory_msg(S, L);
        if (S->stop != SCN_STOP_NONE)
            raise_stop(L, S);
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int l_pcall(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_pcall);
    return finish_pcall(L, status, 0);
}

static int l_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
    return finish_pcall(L, status, 2);
}

lua_State *scn_guard_newstate(struct scn *S)
{
    lua_State *L = lua_newstate(guard_alloc, S);
    FL_ASSERT(L != NULL);
    lua_atpanic(L, guard_panic);
    return L;
}

void scn_guard_open(lua_State *L)
{
    lua_pushcfunction(L, l_pcall);
    lua_setglobal(L, "pcall");
    lua_pushcfunction(L, l_xpcall);
    lua_setglobal(L, "xpcall");
}
