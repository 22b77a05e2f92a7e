/*
 * fuzz_lua.c: fuzz target for the Lua scenario API. The input is not Lua text: it is
 * read as a program for a generator (fz_in draws) that writes a scenario calling the
 * API in random sequences with arguments of random types (integers in and out of
 * range, floats, strings, tables, booleans, nil, functions), some calls inside
 * pcall (so the script goes on), some bare (a script error), some in spawned
 * coroutines. The scenario runs with scn_run against a real world (no database) for
 * a few simulated seconds at most: clients time out after 200 ms and every `run`,
 * `sleep` and timeout is short.
 *
 * The runtime's bounds are exercised too (issue 12 items 1-3, 5, 6, 11, 12, 19, 20):
 * finalizers, metatables of runtime objects (and their __gc called by hand), error
 * objects whose __tostring fails, a table that grows without end (the run's Lua
 * memory limit is 16 MiB here), an endless loop (rarely: each costs the 3 s wall-clock
 * limit the run gets here), walks with pairs and next over mixed keys, durations and
 * times out of range (math.maxinteger, 2^63, NaN, inf), keys over 64 bytes in txns,
 * and control calls that fail at once.
 *
 * Properties: no crash, assertion or sanitizer report; the exit code is a documented
 * one and never 3 (an internal error: a script must not be able to cause one), except
 * the timeout of a script that holds an endless loop or that waited in simulated time
 * far past anything it asked for (FZ_WAITING_MS); a script error (exit 2) names
 * the scenario and line. A script that walks a table, and one input in eight, runs
 * twice: the exit code, the message and the digest must be the same (DESIGN §6).
 */
#include "fuzz/fuzz.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/lua/scn.h"

#include <jansson.h>
#include <string.h>
#include <unistd.h>

struct fz_gen {
    struct fz_in in;
    struct fl_buf out;
    int depth;
    bool may_hang; /* an endless loop was written */
    bool walks;    /* a pairs/next walk was written */
};

#define EMIT(g, ...) fl_buf_printf(&(g)->out, __VA_ARGS__)

static const char *pick(struct fz_gen *g, const char *const *v, size_t n)
{
    return v[fz_below(&g->in, (uint32_t)n)];
}
#define PICK(g, arr) pick(g, arr, sizeof(arr) / sizeof(*(arr)))

static const char *const k_ints[] = {"0",  "1", "2",   "3",    "4",       "5",
                                     "-1", "7", "100", "2^31", "-(2^40)", "1e300"};
static const char *const k_nodes[] = {"1", "2", "3",  "1", "2",        "3",
                                      "4", "0", "-1", "9", "leader()", "nodes()[1]"};
static const char *const k_durs[] = {"0",
                                     "1*ms",
                                     "10*ms",
                                     "50*ms",
                                     "100*ms",
                                     "300*ms",
                                     "-1",
                                     "1.5",
                                     "2*s",
                                     "0.5*ms",
                                     "math.maxinteger",
                                     "math.maxinteger - 10",
                                     "2^62",
                                     "2^63",
                                     "math.mininteger",
                                     "math.huge",
                                     "0/0",
                                     "(2^62) // 1"};
static const char *const k_strs[] = {"\"a\"",
                                     "\"b\"",
                                     "\"k1\"",
                                     "\"\"",
                                     "\"a/\"",
                                     "\"\\0x\"",
                                     "\"\\255\"",
                                     "string.rep(\"z\", 40)",
                                     "\"k\" .. 1",
                                     "tostring(now())",
                                     "string.rep(\"p\", 100)",
                                     "string.rep(\"\\255\", 70)",
                                     "string.rep(\"q\", 65) .. \"/\""};
static const char *const k_tabs[] = {"{}",   "{1, 2}",   "{node = 1}",      "{1, \"x\"}",
                                     "{{}}", "{n = -1}", "{prefix = true}", "{timeout = 50*ms}"};
static const char *const k_fps[] = {"\"raft/before_save\"",
                                    "\"raft/after_save\"",
                                    "\"mvcc/before_commit\"",
                                    "\"mvcc/compact_batch\"",
                                    "\"server/defrag_before_rename\"",
                                    "\"server/before_apply_snapshot\"",
                                    "\"server/before_send\"",
                                    "\"watch/before_send\"",
                                    "\"disk/fsync_eio\"",
                                    "\"disk/write_eio\"",
                                    "\"disk/read_eio\"",
                                    "\"disk/torn_write\"",
                                    "\"net/drop\"",
                                    "\"net/corrupt\"",
                                    "\"no/such\""};
static const char *const k_actions[] = {"\"crash\"", "\"error\"", "\"delay\"",
                                        "\"drop\"",  "\"off\"",   "\"x\""};
static const char *const k_bugs[] = {"\"raft.vote_ignores_log\"",
                                     "\"raft.commit_old_term\"",
                                     "\"raft.ack_before_fsync\"",
                                     "\"raft.multiple_conf_changes\"",
                                     "\"mvcc.stale_read\"",
                                     "\"mvcc.watch_skip_on_compact\"",
                                     "\"mvcc.watch_old_after_partition\"",
                                     "\"mvcc.revision_reset_on_restart\"",
                                     "\"mvcc.progress_before_events\"",
                                     "\"server.restore_keeps_ids\"",
                                     "\"client.retry_sent_writes\"",
                                     "\"client.no_failover\"",
                                     "\"no.such_bug\""};
static const char *const k_kinds[] = {"\"partition\"",  "\"kill\"", "\"pause\"", "\"skew\"",
                                      "\"membership\"", "\"net\"",  "\"all\"",   "\"bogus\""};
static const char *const k_bools[] = {"true", "false", "nil"};

/* A value of a random type. */
static void gen_any(struct fz_gen *g)
{
    switch (fz_below(&g->in, 8)) {
    case 0:
        EMIT(g, "nil");
        break;
    case 1:
        EMIT(g, "%s", PICK(g, k_ints));
        break;
    case 2:
        EMIT(g, "%s", PICK(g, k_strs));
        break;
    case 3:
        EMIT(g, "%s", PICK(g, k_tabs));
        break;
    case 4:
        EMIT(g, "%s", PICK(g, k_bools));
        break;
    case 5:
        EMIT(g, "function() return 1 end");
        break;
    case 6:
        EMIT(g, "%s", PICK(g, k_durs));
        break;
    default:
        EMIT(g, "0.25");
        break;
    }
}

/* An argument of the expected kind, or (one time in four) of any type. */
static void gen_arg(struct fz_gen *g, const char *const *v, size_t n)
{
    if (fz_below(&g->in, 4) == 0)
        gen_any(g);
    else
        EMIT(g, "%s", pick(g, v, n));
}
#define ARG(g, arr) gen_arg(g, arr, sizeof(arr) / sizeof(*(arr)))

static void gen_node_list(struct fz_gen *g)
{
    EMIT(g, "{");
    int n = (int)fz_below(&g->in, 4);
    for (int i = 0; i < n; i++) {
        ARG(g, k_nodes);
        EMIT(g, ",");
    }
    EMIT(g, "}");
}

static void gen_client(struct fz_gen *g)
{
    static const char *const ids[] = {"1", "2", "1", "2", "3", "0"};
    EMIT(g, "client(%s)", PICK(g, ids));
}

static void gen_txn(struct fz_gen *g)
{
    static const char *const targets[] = {"\"value\"", "\"version\"", "\"create\"",
                                          "\"mod\"",   "\"lease\"",   "\"x\""};
    static const char *const results[] = {"\"=\"", "\"!=\"", "\">\"", "\"<\"", "\"~\""};
    EMIT(g, ":txn{ compare = {{ key = ");
    ARG(g, k_strs);
    EMIT(g, ", target = %s, result = %s, value = ", PICK(g, targets), PICK(g, results));
    ARG(g, k_strs);
    EMIT(g, ", version = ");
    ARG(g, k_ints);
    EMIT(g, " }}, success = {{ put = { key = ");
    ARG(g, k_strs);
    EMIT(g, ", value = ");
    ARG(g, k_strs);
    EMIT(g, " } }, { get = { key = ");
    ARG(g, k_strs);
    EMIT(g, ", prefix = %s } }}, failure = {{ delete = { key = ", PICK(g, k_bools));
    ARG(g, k_strs);
    EMIT(g, " } }} }");
}

static void gen_client_call(struct fz_gen *g)
{
    gen_client(g);
    switch (fz_below(&g->in, 10)) {
    case 0:
        EMIT(g, ":put(");
        ARG(g, k_strs);
        EMIT(g, ", ");
        ARG(g, k_strs);
        EMIT(g, ", ");
        ARG(g, k_tabs);
        EMIT(g, ")");
        break;
    case 1:
        EMIT(g, ":get(");
        ARG(g, k_strs);
        EMIT(g, ", ");
        ARG(g, k_tabs);
        EMIT(g, ")");
        break;
    case 2:
        EMIT(g, ":delete(");
        ARG(g, k_strs);
        EMIT(g, ", ");
        ARG(g, k_tabs);
        EMIT(g, ")");
        break;
    case 3:
        gen_txn(g);
        break;
    case 4:
        EMIT(g, ":watch(");
        ARG(g, k_strs);
        EMIT(g, ", { prev_kv = %s, progress_notify = %s, start_rev = ", PICK(g, k_bools),
             PICK(g, k_bools));
        ARG(g, k_ints);
        EMIT(g, " }):next(");
        ARG(g, k_durs);
        EMIT(g, ")");
        break;
    case 5:
        EMIT(g, ":lease_grant(");
        ARG(g, k_ints);
        EMIT(g, ")");
        break;
    case 6:
        EMIT(g, ":lease_revoke(");
        ARG(g, k_ints);
        EMIT(g, ")");
        break;
    case 7:
        EMIT(g, ":lease_keepalive_stop(");
        gen_client(g);
        EMIT(g, ":lease_keepalive(");
        ARG(g, k_ints);
        EMIT(g, "))");
        break;
    case 8:
        EMIT(g, ":lease_ttl(");
        ARG(g, k_ints);
        EMIT(g, ")");
        break;
    default:
        EMIT(g, ":stats()");
        break;
    }
}

static void gen_fault(struct fz_gen *g)
{
    static const char *const one[] = {"kill",        "restart", "pause",          "resume",
                                      "isolate",     "defrag",  "member_promote", "member_remove",
                                      "move_leader", "status",  "others",         "snapshot_save",
                                      "copy_db"};
    switch (fz_below(&g->in, 12)) {
    case 0:
    case 1:
    case 2:
        EMIT(g, "%s(", PICK(g, one));
        ARG(g, k_nodes);
        EMIT(g, ")");
        break;
    case 3:
        EMIT(g, "partition(");
        gen_node_list(g);
        EMIT(g, ", ");
        gen_node_list(g);
        EMIT(g, ", { oneway = %s })", PICK(g, k_bools));
        break;
    case 4:
        EMIT(g, "net{ drop = %s, dup = %s, delay_ms = ", fz_below(&g->in, 2) ? "0.1" : "0",
             fz_below(&g->in, 2) ? "0.05" : "0");
        ARG(g, k_ints);
        EMIT(g, " }");
        break;
    case 5: {
        static const char *const f[] = {"hold", "release", "clog"};
        EMIT(g, "%s(", PICK(g, f));
        ARG(g, k_nodes);
        EMIT(g, ", ");
        ARG(g, k_nodes);
        EMIT(g, ")");
        break;
    }
    case 6:
        EMIT(g, "failpoint(");
        ARG(g, k_fps);
        EMIT(g, ", { node = ");
        ARG(g, k_nodes);
        EMIT(g, ", action = %s, p = %s, count = ", PICK(g, k_actions),
             fz_below(&g->in, 2) ? "0.5" : "1");
        ARG(g, k_ints);
        EMIT(g, " })");
        break;
    case 7:
        EMIT(g, "bug(");
        ARG(g, k_bugs);
        EMIT(g, ")");
        break;
    case 8:
        EMIT(g, "member_add{ learner = %s }", PICK(g, k_bools));
        break;
    case 9:
        EMIT(g, "skew(");
        ARG(g, k_nodes);
        EMIT(g, ", %s)", fz_below(&g->in, 2) ? "1.5" : "0.5");
        break;
    case 10:
        EMIT(g, "restore(snapshot_save(");
        ARG(g, k_nodes);
        EMIT(g, "), { skip_hash_check = %s })", PICK(g, k_bools));
        break;
    default:
        EMIT(g, "%s", fz_below(&g->in, 2) ? "heal()" : "alarm_disarm()");
        break;
    }
}

static void gen_stmts(struct fz_gen *g, int n);

/* What a hostile script does to the runtime itself (issue 12): each is one expression. */
static void gen_bounds(struct fz_gen *g)
{
    static const char *const fin[] = {"kill(1)", "now()", "client(1):put(\"a\", \"1\")",
                                      "spawn(function() end)", "expect(false, \"x\")"};
    static const char *const objs[] = {"client(1)", "copy_db(1)", "client(2):watch(\"a\")",
                                       "snapshot_save(1)"};
    static const char *const uses[] = {":put(\"a\", \"1\")", ":corrupt()", ":next(10*ms)",
                                       ":size()", ":stats()"};
    switch (fz_below(&g->in, 8)) {
    case 0:
        EMIT(g, "setmetatable({}, { __gc = function() %s end })", PICK(g, fin));
        break;
    case 1:
        EMIT(g, "error(setmetatable({}, { __tostring = function() %s end }))",
             fz_below(&g->in, 2) ? "error(\"inner\")" : "return {}");
        break;
    case 2: /* a runtime object's metatable, its __gc called by hand, then the object used */
        EMIT(g,
             "(function() local o = %s local mt = getmetatable(o) if type(mt) == \"table\" "
             "and mt.__gc then mt.__gc(o) end local _ = o%s return restore(o, { "
             "skip_hash_check = true }) end)()",
             PICK(g, objs), PICK(g, uses));
        break;
    case 3:
        EMIT(g, "(function() local t = {} for i = 1, 1e9 do t[i] = string.rep(\"x\", 10000) .. i "
                "end end)()");
        break;
    case 4: /* an endless loop, rarely: it costs the run's whole time limit */
        if (fz_below(&g->in, 16) == 0) {
            g->may_hang = true;
            EMIT(g, "%s",
                 fz_below(&g->in, 2) ? "(function() while true do end end)()"
                                     : "spawn(function() repeat local _ = 1 until false end)");
        } else {
            EMIT(g, "(function() local n = 0 while n < 1000 do n = n + 1 end end)()");
        }
        break;
    case 5: /* walks whose order reaches the history */
        g->walks = true;
        EMIT(g,
             "(function() local t = { b = 1, a = 2, [3] = 4, [1.5] = 5, [true] = 6, z = {}, "
             "[\"\\0\"] = 7 } local s = \"\" for k in pairs(t) do s = s .. tostring(k) .. "
             "\",\" end local k = next(t) while k ~= nil do s = s .. tostring(k) k = next(t, k) "
             "end %s client(1):put(\"order\", s) end)()",
             fz_below(&g->in, 2) ? "" : "for k in pairs(t) do t[k] = nil end");
        break;
    case 6:
        EMIT(g, "(function() local t = { [{}] = 1, [print] = 2 } for k in pairs(t) do end end)()");
        break;
    default:
        EMIT(g, "client(2):watch(\"a\"):next(");
        ARG(g, k_durs);
        EMIT(g, ")");
        break;
    }
}

static void gen_misc(struct fz_gen *g)
{
    switch (fz_below(&g->in, 12)) {
    case 0:
        EMIT(g, "run(");
        ARG(g, k_durs);
        EMIT(g, ")");
        break;
    case 1:
        EMIT(g, "sleep(");
        ARG(g, k_durs);
        EMIT(g, ")");
        break;
    case 2:
        EMIT(g, "run_until(function() return leader() ~= nil end, ");
        ARG(g, k_durs);
        EMIT(g, ")");
        break;
    case 3:
        EMIT(g, "expect(");
        gen_any(g);
        EMIT(g, ", \"claim\", ");
        gen_any(g);
        EMIT(g, ")");
        break;
    case 4:
        EMIT(g, "nemesis{ kinds = { %s }, every = ", PICK(g, k_kinds));
        ARG(g, k_durs);
        EMIT(g, ", duration = ");
        ARG(g, k_durs);
        EMIT(g, " }");
        break;
    case 5:
        EMIT(g, "node_events{ node = ");
        ARG(g, k_nodes);
        EMIT(g, ", since = ");
        ARG(g, k_ints);
        EMIT(g, " }");
        break;
    case 6:
        EMIT(g, "compact(");
        ARG(g, k_ints);
        EMIT(g, ")");
        break;
    case 7:
        EMIT(g, "(function() for k, v in sorted_pairs(");
        ARG(g, k_tabs);
        EMIT(g, ") do local _ = tostring(k) .. type(v) end end)()");
        break;
    case 8:
        EMIT(g, "math.random(");
        ARG(g, k_ints);
        EMIT(g, ")");
        break;
    case 9:
    case 10:
        gen_bounds(g);
        break;
    default:
        if (g->depth < 2) {
            g->depth++;
            EMIT(g, "spawn(function()\n");
            gen_stmts(g, 1 + (int)fz_below(&g->in, 4));
            EMIT(g, "end)");
            g->depth--;
        } else {
            EMIT(g, "now()");
        }
        break;
    }
}

static void gen_stmt(struct fz_gen *g)
{
    bool guarded = fz_below(&g->in, 16) != 0;
    EMIT(g, guarded ? "pcall(function() local _ = " : "local _ = ");
    switch (fz_below(&g->in, 3)) {
    case 0:
        gen_client_call(g);
        break;
    case 1:
        gen_fault(g);
        break;
    default:
        gen_misc(g);
        break;
    }
    EMIT(g, guarded ? " end)\n" : "\n");
}

static void gen_stmts(struct fz_gen *g, int n)
{
    for (int i = 0; i < n && fz_left(&g->in); i++)
        gen_stmt(g);
}

/* The cluster and clients: a bad value one time in sixteen (half of all inputs used to
 * end at scenario{}, testing its checks and nothing after). */
static void gen_scenario(struct fz_gen *g)
{
    static const char *const nodes[] = {"3", "3", "3", "5", "1", "2"};
    static const char *const bad_nodes[] = {"0", "\"x\"", "16", "-1"};
    static const char *const bal[] = {"\"round_robin\"", "\"pinned_random\"",
                                      "\"pinned_blacklist\"", "\"health_aware\""};
    static const char *const rates[] = {"0", "50", "200"};
    bool bad = fz_below(&g->in, 16) == 0;
    int which = bad ? (int)fz_below(&g->in, 3) : -1;
    EMIT(g,
         "scenario{ name = \"fz\", cluster = { nodes = %s }, clients = { count = 2, "
         "balancer = %s, timeout_ms = 200 }, workload = { rate = %s, keys = 3, watchers = %s } }\n",
         which == 0 ? PICK(g, bad_nodes) : PICK(g, nodes), which == 1 ? "\"nope\"" : PICK(g, bal),
         which == 2 ? "-5" : PICK(g, rates), fz_below(&g->in, 2) ? "1" : "0");
    EMIT(g, "run(200*ms)\n");
    gen_stmts(g, 24);
    EMIT(g, "heal_all()\nrun(500*ms)\n");
}

/* The wall-clock limit of a run here, and the simulated time past which a run that hit
 * it was only waiting (for a paused member, a lease, a watch event that never comes):
 * nothing the generator asks for adds up to a simulated minute (24 statements of at
 * most 2 s each, client timeouts of 200 ms). */
#define FZ_TIMEOUT_S  3.0
#define FZ_SLOW_S     20.0 /* a second chance for a run that was only slow (a busy host) */
#define FZ_WAITING_MS (60 * 1000)

/* Simulated milliseconds of a run's summary (0 without one). */
static int64_t fz_sim_ms(const struct scn_result *res)
{
    json_t *v = res->run.summary ? json_object_get(res->run.summary, "sim_ms") : NULL;
    return v ? (int64_t)json_integer_value(v) : 0;
}

/* One run of the generated scenario with the target's bounds. */
static int fz_run_once(const char *path, struct scn_result *res, double timeout_s)
{
    struct scn_options o;
    memset(&o, 0, sizeof(o));
    o.path = path;
    o.seed = 1;
    o.timeout_s = timeout_s;
    o.lua_mem_bytes = (size_t)16 << 20;
    int rc = scn_run(&o, res);
    fl_bug_reset();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fl_log_level = FL_LOG_ERROR;
    struct fz_gen g = {{data, size, 0}, {0}, 0, false, false};
    fl_buf_init(&g.out);
    gen_scenario(&g);
    const char *path = fz_temp_write("lua", "fz.lua", g.out.data, g.out.len);
    bool show = getenv("FL_FUZZ_SHOW") != NULL;
    if (show)
        fprintf(stderr, "---- scenario ----\n%s------------------\n", fl_buf_cstr(&g.out));
    struct scn_result res;
    int rc = fz_run_once(path, &res, FZ_TIMEOUT_S);
    if (show)
        fprintf(stderr, "exit %d %s\n", rc, res.error);
    FZ_REQUIRE(rc >= 0 && rc <= 4, "exit code %d", rc);
    /* A timeout is the script's when it loops without end, or when simulated time ran
     * on far past anything asked for (it waits for what never comes: defrag of a paused
     * member blocks until it resumes); stuck simulated time is a hang of ours. */
    bool timed_out = rc == 3 && strstr(res.error, ": timeout:") != NULL;
    if (timed_out && !g.may_hang && fz_sim_ms(&res) < FZ_WAITING_MS) {
        /* stuck, or only slow on a loaded machine: once more with time to spare */
        scn_result_close(&res);
        rc = fz_run_once(path, &res, FZ_SLOW_S);
        timed_out = rc == 3 && strstr(res.error, ": timeout:") != NULL;
    }
    FZ_REQUIRE(rc != 3 || (timed_out && (g.may_hang || fz_sim_ms(&res) >= FZ_WAITING_MS)),
               "internal error or hang from a script (simulated %lld ms): %s\n%s",
               (long long)fz_sim_ms(&res), res.error, fl_buf_cstr(&g.out));
    if (rc == 2)
        FZ_REQUIRE(strstr(res.error, "fz.lua") != NULL, "script error without its file: %s",
                   res.error);
    /* Same input, same run (a timeout stops at a wall-clock moment: not compared). */
    if (!timed_out && (g.walks || (size > 0 && data[0] % 8 == 0))) {
        struct scn_result again;
        int rc2 = fz_run_once(path, &again, FZ_SLOW_S);
        FZ_REQUIRE(rc2 == rc && !strcmp(again.error, res.error) &&
                       !strcmp(again.run.digest, res.run.digest),
                   "a second run differs: exit %d/%d, digest %s/%s, %s / %s\n%s", rc, rc2,
                   res.run.digest, again.run.digest, res.error, again.error, fl_buf_cstr(&g.out));
        scn_result_close(&again);
    }
    scn_result_close(&res);
    fl_buf_close(&g.out);
    return 0;
}
