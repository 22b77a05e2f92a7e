/*
 * scn_int.h: what the files of harness/lua share. One struct scn per run: the Lua
 * state, the run_world it drives, and the coroutines of the scenario. Every Lua thread
 * carries a pointer to its struct scn_co in its extra space (lua_getextraspace), so a
 * C function finds its coroutine and the run in one load; the main state carries the
 * "root" record, which is not a coroutine and so cannot block.
 */
#ifndef FL_SCN_INT_H
#define FL_SCN_INT_H

/* Internal to harness/lua: compiled only into fl_lua (which defines FL_INTERNAL_lua)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_lua
#error "harness/lua/scn_int.h is internal to harness/lua: include its public header instead"
#endif

#include "harness/lua/scn.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

struct scn;

/* Why a scenario stops before its end, whatever the script does (scn_guard.c). */
enum scn_stop {
    SCN_STOP_NONE = 0,
    SCN_STOP_TIMEOUT,   /* --timeout passed: exit 3, verdict 'error' with the reason */
    SCN_STOP_INTERRUPT, /* SIGINT/SIGTERM: exit 3, 'error' (as before) */
    SCN_STOP_MEMORY,    /* --lua-mem-mb reached: a script error, exit 2 */
    SCN_STOP_REFUSED,   /* a function the target cannot run (scn_target.c): exit 2 */
};

/* One coroutine of the scenario (the main chunk, a spawn, a watch callback). */
struct scn_co {
    struct scn *S;
    lua_State *th;
    int ref;      /* registry reference keeping th alive; LUA_NOREF when done */
    int id;       /* 0 = root (the main state, not a coroutine), 1 = the main chunk */
    bool waiting; /* blocked until a timer or an operation wakes it */
    /* Between scn_wait_begin and scn_wait_end: a wake-up in that window is an operation
     * that completed at once (inside the call that started it); it is handed straight
     * to the continuation instead of the ready list (scn_co_wake). */
    bool starting;
    bool woke_early;
    bool done;
    int64_t fault_scope; /* an on() firing's ordinal its faults belong to; 0 none */
    /* Result of the operation it waits for, handed to the continuation. */
    void *result;
    void (*result_free)(void *result);
};

struct scn_watch;

struct scn {
    lua_State *L;
    struct run_world *rw; /* NULL in describe mode */
    const struct scn_options *opts;
    char chunkname[512];
    struct scn_co root;

    /* scenario{} */
    bool scenario_called;
    struct run_cluster_config cluster;
    struct run_clients_config clients;
    struct run_workload_config workload;
    unsigned checks;
    char name[128];
    char description[256];
    bool describe_only;

    struct scn_co **cos; /* every coroutine ever started, by id - 1 */
    int n_cos, cap_cos;
    int *ready; /* FIFO of coroutine ids ready to resume */
    int ready_head, ready_len, ready_cap;
    bool main_done;
    bool stopping; /* the scenario ended: wake-ups are ignored */

    bool failed;
    char error[1024];

    /* Bounds (scn_guard.c): the Lua state's memory, the wall-clock deadline and SIGINT. */
    size_t mem_used, mem_limit;  /* bytes Lua asked for; limit 0: none */
    bool mem_enforce;            /* the limit applies (Lua code runs protected) */
    double deadline_s;           /* scn_mono_s() deadline; 0: none */
    enum scn_stop stop;          /* why the scenario must stop at once */
    char stop_msg[512];          /* "SCENARIO:LINE: ..." for SCN_STOP_TIMEOUT / _MEMORY */
    unsigned poll_tick;          /* drive() polls the clock every few turns */
    lua_State *volatile running; /* the Lua thread running now (signal handlers arm it) */
    /* The world is closed (or closing): every API call raises (a finalizer run by
     * lua_close must not reach it). */
    bool closed;
    /* next(): the sorted keys of the tables traversed last (scn_sandbox.c), most recent
     * first; the references are in the registry. */
    struct scn_next_slot {
        int t_ref, keys_ref; /* the table and its sorted key array */
        lua_Integer n, pos;  /* keys, and where the last call stopped (1-based) */
    } next_slots[8];
    int n_next_slots;
    bool swarm_called; /* swarm{} (scn_swarm.c) */

    /* shrink{} (scn_shrink.c) */
    bool shrink_called;
    int64_t end_at_ns;  /* 0: none */
    bool cut;           /* end_at stopped the scenario */
    int time_scale_pct; /* 100: none */
    int64_t scale_from_ns;
    int ov_clients, ov_keys, ov_rate, ov_watchers, ov_nodes; /* -1: keep scenario{}'s */
    unsigned ov_lanes;         /* RUN_LANE_* the swarm keeps (shrink{ lanes }); 0: every one */
    json_t *shrink_info;       /* borrowed; the summary owns it */
    struct scn_watch *watches; /* every watch of the run (scn_client.c), freed at lua_close */
};

/* The coroutine record of L (root for the main state). */
static inline struct scn_co *scn_co_of(lua_State *L)
{
    return *(struct scn_co **)lua_getextraspace(L);
}
static inline struct scn *scn_of(lua_State *L)
{
    return scn_co_of(L)->S;
}

/* scn_core.c */
struct scn_co *scn_co_start(struct scn *S, lua_State *L, int nargs); /* function + args on L */
void scn_co_wake(struct scn_co *co);
/* Blocking calls: scn_wait_begin marks the calling coroutine waiting before the
 * operation that will wake it is started; scn_wait_end then yields to k, or, when the
 * operation already completed during the start (a control call refused at once),
 * calls k directly: the documented result (nil, message) instead of a stray yield. */
void scn_wait_begin(struct scn_co *co);
int scn_wait_end(lua_State *L, lua_KContext ctx, lua_KFunction k);
/* Raises "NAME must be called from the scenario or a spawned coroutine" unless L can
 * block; returns its coroutine. */
struct scn_co *scn_need_co(lua_State *L, const char *name);
/* The world, set up with defaults if scenario{} has not been called. Raises a Lua
 * error when set-up fails. In describe mode, stops the script. */
struct run_world *scn_world(lua_State *L);
/* Blocks the calling coroutine until now + delay_ns, then continues in k. */
int scn_sleep_k(lua_State *L, int64_t delay_ns, lua_KContext ctx, lua_KFunction k);
/* Stops a describe-mode run (scenario{} was read). */
_Noreturn void scn_describe_stop(lua_State *L);

/* scn_args.c: argument and option checking. */
/* Durations and simulated times a script gives are at most SCN_TIME_MAX ns (2^62, about
 * 146 years), and a deadline (now + a duration) must stay within it too, so that no
 * sum of times the runtime or the world computes can overflow. */
#define SCN_TIME_MAX ((int64_t)1 << 62)
int64_t scn_check_duration(lua_State *L, int idx);
int64_t scn_opt_duration(lua_State *L, int idx, int64_t def);
/* now + d for a deadline; raises "NAME: ... past the end of simulated time" when it
 * would pass SCN_TIME_MAX. */
int64_t scn_deadline(lua_State *L, const char *name, int64_t d);
int scn_check_node(lua_State *L, int idx);
/* The value at idx as a node id, or 0 with what is wrong pushed (scn_check_node's
 * message, without raising). */
int scn_node_or_why(lua_State *L, int idx);
/* Nodes from a number or an array of numbers; returns how many (<= max). */
int scn_check_nodes(lua_State *L, int idx, int *out, int max);
/* The world's members (ascending, at most max <= RUN_EPS_MAX) that are not in
 * ex[0..ne), into out; returns how many. */
int scn_nodes_except(struct run_world *rw, const int *ex, int ne, int *out, int max);
/* Raises "unknown option 'k' in WHAT (known: ...)" for the first key, in sorted order,
 * of the table at idx that is not in known (NULL-terminated). */
void scn_check_options(lua_State *L, int idx, const char *what, const char *const known[]);
int64_t scn_field_int(lua_State *L, int idx, const char *what, const char *key, int64_t def,
                      int64_t min, int64_t max);
int64_t scn_field_duration(lua_State *L, int idx, const char *what, const char *key, int64_t def);
int scn_field_bool(lua_State *L, int idx, const char *what, const char *key, int def);
const char *scn_field_str(lua_State *L, int idx, const char *what, const char *key,
                          const char *def);
/* A probability option in [0, 1] as parts per million (0 when absent). */
int scn_field_prob_ppm(lua_State *L, int idx, const char *what, const char *key);
/* Pushes a JSON value as Lua: objects as tables, arrays as lists, null as nil. */
void scn_push_json(lua_State *L, json_t *v);
/* Appends the value at idx as JSON: tables with sorted keys (array if 1..n), depth
 * bounded, functions and userdata as their type name; never an address. */
void scn_to_json(lua_State *L, int idx, struct fl_buf *out);
/* "SCENARIO:LINE:" of the calling Lua function at level, or 0 for the line. */
int scn_current_line(lua_State *L, int level);

/* scn_shrink.c */
void scn_open_shrink(lua_State *L);
/* Adds x to the ascending set v[0..k) (no duplicates; room for k + 1): the new count,
 * k when x was there already. Fault ordinal sets are small: insertion by moving. */
int scn_ordinal_add(int64_t *v, int k, int64_t x);
/* Applies shrink{}'s clients/keys/rate/watchers to the set-up about to happen. */
void scn_shrink_apply(struct scn *S);
/* A run/sleep/run_until duration after shrink{}'s time_scale. */
int64_t scn_scale_duration(struct scn *S, int64_t d);

/* scn_replay.c: one run of a scenario in a forked child (faultline shrink). */
struct scn_replay {
    uint64_t seed;
    const char *db_path; /* removed before and after the run */
    const char *const *bugs;
    int bug_count;
    int64_t timeout_ms; /* wall-clock bound; the child is killed past it */
};
/* Runs path; *out = {"exit_code", "error", "summary"} (caller owns it). Returns FL_OK,
 * or FL_ETIMEOUT / FL_EINTERNAL / FL_EIO with a message in err (hung, crashed, no
 * answer, no fork). */
int scn_replay(const struct scn_replay *r, const char *path, json_t **out, char *err, size_t n);
double scn_mono_s(void); /* monotonic wall seconds: the replay bound only */

/* scn_swarm.c: swarm{}; what it drew replaces scenario{}'s aspects at set-up; nemesis{}
 * without kinds runs the swarm's fault phase (false: no swarm faults drawn). */
void scn_open_swarm(lua_State *L);
void scn_swarm_apply(struct scn *S);
bool scn_swarm_nemesis(lua_State *L, int64_t duration_ns);
/* scn_on.c: on(kind, fn). */
void scn_open_on(lua_State *L);

/* scn_sandbox.c */
void scn_open_sandbox(lua_State *L, bool unsafe);
int scn_l_sorted_pairs(lua_State *L);

/* scn_guard.c: the bounds of a run (DESIGN §9): the Lua state's allocator with its
 * memory limit, the count hook that enforces the wall-clock timeout and SIGINT, the
 * panic handler, and the refusal of API calls the world cannot take (after the run,
 * from a finalizer). */
lua_State *scn_guard_newstate(struct scn *S);
/* Replaces pcall and xpcall by ones that cannot catch a memory error or a stop. */
void scn_guard_open(lua_State *L);
/* Polls the deadline and SIGINT (for the driver between events); true when the
 * scenario must stop (S->stop says why). */
bool scn_guard_poll(struct scn *S, lua_State *L);
/* Around a run (or a describe): begin installs the signal handlers and, with a
 * timeout, the deadline alarm and the watchdog; detach (before S is freed) stops the
 * handlers from touching S; end (after) restores the handlers and disarms the alarm
 * (had_timeout: opts->timeout_s > 0). One at a time per process. */
void scn_guard_begin(struct scn *S);
void scn_guard_detach(struct scn *S);
void scn_guard_end(bool had_timeout);
/* Before Lua code runs on L (a resume, a protected call): L is the thread a signal
 * arms; if one came already, L gets the hook at once. Set S->running to NULL after. */
void scn_guard_enter(struct scn *S, lua_State *L);
/* True once a signal (the deadline, SIGINT) asked the driver to poll. */
bool scn_guard_due(void);
/* Raises unless the world may be used now: not after the run, not from a finalizer. */
void scn_guard_api(lua_State *L);
/* The message of a memory error raised in th, with the limit and the line. */
void scn_guard_memory_msg(struct scn *S, lua_State *th);
/* Sets __metatable on the metatable at idx: getmetatable() of the runtime's userdata
 * gives false, so a script cannot reach (or call) their __gc or change their methods. */
void scn_protect_metatable(lua_State *L, int idx);

/* API registration. */
void scn_open_sched(lua_State *L);
void scn_open_world(lua_State *L);
void scn_open_client(lua_State *L);
void scn_open_net(lua_State *L); /* scn_net.c: the network faults */
/* scn_client.c: the index of the client object at idx (1..), 0 when it is not one. */
int scn_client_index(lua_State *L, int idx);
void scn_open_observe(lua_State *L); /* scn_observe.c: status, node_events */
/* scn_target.c: the functions rw's target cannot run raise an error naming it. */
void scn_target_restrict(lua_State *L, struct run_world *rw);
/* Stops the scenario at the calling line with "FILE:LINE: what" (SCN_STOP_REFUSED):
 * something the target cannot do, which pcall cannot catch. */
int scn_target_refuse(lua_State *L, const char *what);

#endif
