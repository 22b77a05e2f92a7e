/*
 * cmd_member.c: `faultline member` (issue 16 §2), one of our etcd-like members as an
 * OS process: a libuv loop, the node environment over it (nodes/env/env_uv.h: real
 * files and fsync under --data, loopback TCP) and the member host of one process
 * (nodes/server/proc.h). It runs until SIGTERM or SIGINT (a clean exit, status 0) or
 * until it is killed; a restart on the same --data recovers everything durable (term,
 * vote, log, snapshot, store) and counts one more incarnation.
 *
 * Addresses: slot N's peer port is the TCP port given for N in --peers (or
 * --peer-listen for this member); clients dial --client-listen. Every address is
 * loopback (127.0.0.1), which is all env_uv dials.
 *
 * Never: read the wall clock for anything the member decides (env_uv's clocks only).
 */
#include "harness/cli/cli.h"

#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "nodes/env/env_uv.h"
#include "nodes/server/proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

const char cmd_member_usage[] =
    "usage: faultline member --id N --data DIR --peer-listen ADDR --client-listen ADDR\n"
    "       [--peers N=ADDR,...] [--seed S] [--events FILE] [--skew-ppm R]\n"
    "       [--election-ms MS] [--heartbeat-ms MS] [--snapshot-count N]\n"
    "       [--snapshot-catchup N] [--prevote 0|1]\n"
    "       [--check-quorum 0|1] [--quota-backend-bytes B] [--request-timeout-ms MS]\n"
    "       [--join ID] [--directory FILE] [--raft-feed FILE] [--bug NAME]...\n"
    "  runs one member of a live cluster (what `run --target live` starts per slot)\n"
    "  --id N              this member's slot (1..); the founders are N and the --peers\n"
    "  --data DIR          its data directory: WAL, snapshots, incarnation (made if absent)\n"
    "  --peer-listen ADDR  127.0.0.1:PORT (or PORT) other members dial\n"
    "  --client-listen ADDR  127.0.0.1:PORT (or PORT) clients dial\n"
    "  --peers N=ADDR,...  the other founding members' slots and peer addresses\n"
    "  --seed S            cluster seed: member and cluster IDs (same for every member; 1)\n"
    "  --events FILE       node events as JSON lines, appended (default DIR/events.jsonl)\n"
    "  --raft-feed FILE    the Raft safety checker's feeds, appended one a line (proc.h):\n"
    "                      every member of a cluster names the same file, the harness\n"
    "                      replays it into one checker\n"
    "  --bug NAME          turn a bug switch on in this member (as `run --bug`)\n"
    "  --join ID           join the running cluster as member ID (hex, what member add\n"
    "                      answered): an empty --data, --peers the founders\n"
    "  --directory FILE    members added later, one a line: SLOT ID PORT STARTED (ID in\n"
    "                      hex, PORT its peer port, STARTED 0|1); read again when it changes\n"
    "  failpoints: DATA/failpoints, read at the start and at SIGUSR2, one a line:\n"
    "                      NAME ACTION DELAY_MS P_PPM COUNT SKIP (the node code's only)\n"
    "  --skew-ppm R        the member's clock runs at R parts per million (1000000 exact);\n"
    "                      later: write R to DIR/skew_ppm and send SIGUSR1\n"
    "  the cluster options are those of scenario{cluster = {...}}, etcd's defaults\n"
    "exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad input, 3 cannot start\n";

struct member_args {
    struct srv_proc_opts o;
    const char *data;
    const char *events;
    const char *directory;
    int peer_port, client_port;
    int peer_ports[SRV_PROC_NODES_MAX]; /* of o.nodes[i] */
    int64_t rate_ppm;
};

/* "127.0.0.1:PORT" or "PORT" -> port; 0 when it is neither. */
static int parse_addr(const char *s)
{
    const char *p = strncmp(s, "127.0.0.1:", 10) == 0   ? s + 10
                    : strncmp(s, "localhost:", 10) == 0 ? s + 10
                                                        : s;
    uint64_t v;
    if (!cli_parse_u64(p, &v) || v < 1 || v > 65535)
        return 0;
    return (int)v;
}

static int add_node(struct member_args *a, int node, int port)
{
    if (a->o.n_nodes >= SRV_PROC_NODES_MAX)
        return cli_usage_error("member: at most %d members", SRV_PROC_NODES_MAX);
    int i = a->o.n_nodes;
    while (i > 0 && a->o.nodes[i - 1] > node) {
        a->o.nodes[i] = a->o.nodes[i - 1];
        a->peer_ports[i] = a->peer_ports[i - 1];
        i--;
    }
    if (i > 0 && a->o.nodes[i - 1] == node)
        return cli_usage_error("member: slot %d is listed twice", node);
    a->o.nodes[i] = node;
    a->peer_ports[i] = port;
    a->o.n_nodes++;
    return 0;
}

/* --peers 2=127.0.0.1:4002,3=4003 */
static int parse_peers(struct member_args *a, const char *v)
{
    char *copy = fl_strdup(v), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        uint64_t node;
        int port = eq ? parse_addr(eq + 1) : 0;
        if (eq)
            *eq = 0;
        if (!eq || !cli_parse_u64(t, &node) || node < 1 || node > 1000 || !port)
            rc = cli_usage_error("member: --peers: '%s' is not SLOT=127.0.0.1:PORT", t);
        else
            rc = add_node(a, (int)node, port);
    }
    free(copy);
    return rc;
}

static int int_opt(const char *opt, const char *v, uint64_t min, uint64_t max, int64_t *out)
{
    uint64_t x;
    int rc = cli_u64_arg("member", opt, v, min, max, &x);
    if (rc == 0)
        *out = (int64_t)x;
    return rc;
}

static int parse_args(int argc, char **argv, struct member_args *a)
{
    memset(a, 0, sizeof *a);
    srv_config_default(&a->o.cfg);
    a->o.seed = 1;
    a->rate_ppm = 1000000;
    int64_t v = 0, id = 0;
    const char *peers = NULL;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *o = argv[i];
        if (i + 1 >= argc)
            return o[0] == '-' && o[1] == '-' && strcmp(o, "--help")
                       ? cli_usage_error("member: %s needs a value", o)
                       : cli_unknown_option("member", o);
        const char *val = argv[++i];
        if (!strcmp(o, "--id"))
            rc = int_opt(o, val, 1, 1000, &id);
        else if (!strcmp(o, "--data"))
            a->data = val;
        else if (!strcmp(o, "--events"))
            a->events = val;
        else if (!strcmp(o, "--directory"))
            a->directory = val;
        else if (!strcmp(o, "--raft-feed"))
            a->o.raft_feed_path = val;
        else if (!strcmp(o, "--bug")) {
            if (!fl_bug_enable(val))
                rc = cli_usage_error("member: --bug: no bug switch is named '%s'", val);
        } else if (!strcmp(o, "--join")) {
            char *end = NULL;
            errno = 0;
            a->o.join_id = strtoull(val, &end, 16);
            if (errno || !end || *end || end == val || !a->o.join_id)
                rc = cli_usage_error("member: --join: '%s' is not a member ID (hex)", val);
        } else if (!strcmp(o, "--peer-listen") || !strcmp(o, "--client-listen")) {
            int port = parse_addr(val);
            if (!port)
                rc = cli_usage_error("member: %s: '%s' is not 127.0.0.1:PORT", o, val);
            *(!strcmp(o, "--peer-listen") ? &a->peer_port : &a->client_port) = port;
        } else if (!strcmp(o, "--peers"))
            peers = val;
        else if (!strcmp(o, "--seed"))
            rc = cli_u64_arg("member", o, val, 0, UINT64_MAX, &a->o.seed);
        else if (!strcmp(o, "--skew-ppm"))
            rc = int_opt(o, val, 1000, 100000000, &a->rate_ppm);
        else if (!strcmp(o, "--election-ms"))
            rc = int_opt(o, val, 1, 600000, &a->o.cfg.election_ms);
        else if (!strcmp(o, "--heartbeat-ms"))
            rc = int_opt(o, val, 1, 600000, &a->o.cfg.heartbeat_ms);
        else if (!strcmp(o, "--request-timeout-ms"))
            rc = int_opt(o, val, 1, 3600000, &a->o.cfg.request_timeout_ms);
        else if (!strcmp(o, "--quota-backend-bytes"))
            rc = int_opt(o, val, 1, INT64_MAX, &a->o.cfg.quota_backend_bytes);
        else if (!strcmp(o, "--snapshot-count")) {
            rc = int_opt(o, val, 1, UINT32_MAX, &v);
            a->o.cfg.snapshot_count = (uint64_t)v;
        } else if (!strcmp(o, "--snapshot-catchup")) {
            rc = int_opt(o, val, 1, INT32_MAX, &v);
            a->o.cfg.snapshot_catchup_entries = (uint64_t)v;
        } else if (!strcmp(o, "--prevote") || !strcmp(o, "--check-quorum")) {
            rc = int_opt(o, val, 0, 1, &v);
            *(!strcmp(o, "--prevote") ? &a->o.cfg.prevote : &a->o.cfg.check_quorum) = v != 0;
        } else
            return cli_unknown_option("member", o);
    }
    if (rc)
        return rc;
    if (!id || !a->data || !a->peer_port || !a->client_port)
        return cli_usage_error(
            "member: --id, --data, --peer-listen and --client-listen are required");
    a->o.node = (int)id;
    if (!a->o.join_id && (rc = add_node(a, (int)id, a->peer_port)) != 0)
        return rc;
    if (peers && (rc = parse_peers(a, peers)) != 0)
        return rc;
    for (int i = 0; a->o.join_id && i < a->o.n_nodes; i++)
        if (a->o.nodes[i] == (int)id)
            return cli_usage_error("member: --join: slot %d is a founder's (--peers)", (int)id);
    if (a->o.join_id && !a->o.n_nodes)
        return cli_usage_error("member: --join needs the founders (--peers)");
    return 0;
}

/* The member's listeners report no error (a member in the simulator always gets its
 * ports), so a port someone else holds is found here, before the member starts. */
static void no_connection(uv_stream_t *h, int status)
{
    (void)h;
    (void)status;
}

static bool port_free(uv_loop_t *loop, int port)
{
    uv_tcp_t h;
    struct sockaddr_in a;
    uv_tcp_init(loop, &h);
    uv_ip4_addr("127.0.0.1", port, &a);
    bool ok = uv_tcp_bind(&h, (const struct sockaddr *)&a, 0) == 0 &&
              uv_listen((uv_stream_t *)&h, 1, no_connection) == 0;
    uv_close((uv_handle_t *)&h, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return ok;
}

/* The directory (--directory): the members added after the founders, written by the
 * harness (`run --target live`) as it adds and starts them (whole, by a rename). Read
 * at every look-up, which a member makes only about a member it does not know or that
 * was not started yet (so a few times a second at most); every slot's peer port is
 * mapped as read. */
struct member_dir {
    struct fl_env *env;
    int self; /* its own line is not mapped: it listens on --peer-listen */
    const char *path;
    struct {
        uint64_t id;
        int node;
        bool started;
    } e[64];
    int n;
};

static void dir_reread(struct member_dir *d)
{
    FILE *f = fopen(d->path, "r");
    if (!f)
        return; /* none yet */
    d->n = 0;
    char line[256];
    while (fgets(line, sizeof line, f) && d->n < (int)FL_ARRAY_LEN(d->e)) {
        unsigned node, port, started;
        unsigned long long id;
        if (sscanf(line, "%u %llx %u %u", &node, &id, &port, &started) != 4 || !node ||
            node > SRV_PROC_SLOTS_MAX || !port || port > 65535)
            continue;
        d->e[d->n].id = id;
        d->e[d->n].node = (int)node;
        d->e[d->n].started = started != 0;
        d->n++;
        if ((int)node != d->self)
            env_uv_map(d->env, (int)node, SRV_PEER_PORT, (int)port);
    }
    fclose(f);
}

static int dir_lookup(void *ud, uint64_t member_id, bool *started)
{
    struct member_dir *d = ud;
    dir_reread(d);
    for (int i = 0; i < d->n; i++)
        if (d->e[i].id == member_id) {
            *started = d->e[i].started;
            return d->e[i].node;
        }
    return -1;
}

/* SIGUSR1: the clock rate in DATA/skew_ppm (decimal parts per million, 1000000
 * exact) applies from now on (the live target's skew()); the member says so in its
 * event file, or why not. */
struct skew_ctl {
    struct fl_env *env;
    struct srv_proc *p;
    char path[4096];
};

static void on_skew(uv_signal_t *h, int signum)
{
    (void)signum;
    struct skew_ctl *k = h->data;
    char text[64] = "", d[128];
    FILE *f = fopen(k->path, "r");
    if (f) {
        if (!fgets(text, sizeof text, f))
            text[0] = 0;
        fclose(f);
    }
    text[strcspn(text, "\r\n")] = 0;
    uint64_t rate;
    if (!cli_parse_u64(text, &rate) || rate < 1000 || rate > 100000000) {
        snprintf(d, sizeof d, "skew_ppm file: '%.32s' is not a rate in 1000..100000000", text);
        srv_proc_event(k->p, "skew_refused", d);
        return;
    }
    env_uv_set_rate(k->env, (int64_t)rate);
    snprintf(d, sizeof d, "clock rate %llu ppm", (unsigned long long)rate);
    srv_proc_event(k->p, "skew", d);
}

/* SIGUSR2 (and the start): the failpoints in DATA/failpoints are this member's from
 * now on, every other one off (the live target's failpoint()). One a line:
 * NAME ACTION DELAY_MS P_PPM COUNT SKIP, ACTION crash, error, delay or drop. The
 * member says what it took in its event file ("failpoint"). */
struct fp_ctl {
    struct fl_env *env;
    struct srv_proc *p;
    char path[4096];
};

static void fp_read(struct fp_ctl *k, bool tell)
{
    for (int i = 0; i < FLT_POINT_COUNT; i++)
        env_uv_failpoint_set(k->env, (enum flt_point)i, ENV_FAULT_NONE, 0, 0, 0, 0);
    FILE *f = fopen(k->path, "r");
    char line[256], d[256];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char name[64], action[16];
        long long delay_ms;
        unsigned p_ppm, count, skip;
        if (sscanf(line, "%63s %15s %lld %u %u %u", name, action, &delay_ms, &p_ppm, &count,
                   &skip) != 6 ||
            delay_ms < 0)
            continue;
        static const char *const actions[] = {"", "crash", "error", "delay", "drop"};
        int a = 1;
        while (a < (int)FL_ARRAY_LEN(actions) && strcmp(actions[a], action))
            a++;
        int fp = 0;
        while (fp < FLT_POINT_COUNT && strcmp(flt_point_name((enum flt_point)fp), name))
            fp++;
        if (a == (int)FL_ARRAY_LEN(actions) || fp == FLT_POINT_COUNT)
            continue;
        env_uv_failpoint_set(k->env, (enum flt_point)fp, (enum env_fault)a, delay_ms * FL_MS, p_ppm,
                             count, skip);
        n++;
        snprintf(d, sizeof d, "%s: %s (delay %lld ms, p_ppm %u, count %u, skip %u)", name, action,
                 delay_ms, p_ppm, count, skip);
        if (tell)
            srv_proc_event(k->p, "failpoint", d);
    }
    if (f)
        fclose(f);
    if (tell && !n)
        srv_proc_event(k->p, "failpoint", "every failpoint off");
}

static void on_failpoints(uv_signal_t *h, int signum)
{
    (void)signum;
    fp_read(h->data, true);
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    /* a clean stop: what the member wrote is already on its way to disk or synced;
     * nothing more is owed to anyone (a kill is the other way to stop) */
    fflush(NULL);
    uv_stop(h->loop);
}

int cmd_member(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_member_usage, stdout);
        return FL_EXIT_PASS;
    }
    struct member_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    uv_loop_t loop;
    /* a write on a connection its peer closed (a client gone, a proxy that cut it) is
     * that write's error (EPIPE), not the member's death: uv_spawn starts it with every
     * signal at its default, and SIGPIPE's ends the process */
    signal(SIGPIPE, SIG_IGN);
    uv_loop_init(&loop);
    for (int i = 0; i < 2; i++) {
        int port = i ? a.client_port : a.peer_port;
        if (!port_free(&loop, port)) {
            fprintf(stderr, "faultline: member %d: port %d is taken\n", a.o.node, port);
            return FL_EXIT_INTERNAL;
        }
    }
    const char *err = NULL;
    struct fl_env *env = env_uv_new(&loop, a.o.node, a.data, a.o.seed ^ (uint64_t)a.o.node, &err);
    if (!env) {
        fprintf(stderr, "faultline: member: %s: %s\n", a.data, err);
        return FL_EXIT_USAGE;
    }
    if (env_uv_count_start(env, &err) != FL_OK) {
        fprintf(stderr, "faultline: member: %s: %s\n", a.data, err);
        return FL_EXIT_INTERNAL;
    }
    for (int i = 0; i < a.o.n_nodes; i++)
        env_uv_map(env, a.o.nodes[i], SRV_PEER_PORT, a.peer_ports[i]);
    env_uv_map(env, a.o.node, SRV_PEER_PORT, a.peer_port); /* a joiner is not in nodes */
    env_uv_map(env, a.o.node, SRV_CLIENT_PORT, a.client_port);
    if (a.rate_ppm != 1000000)
        env_uv_set_rate(env, a.rate_ppm);
    char events[4096];
    if (!a.events) {
        snprintf(events, sizeof events, "%s/events.jsonl", a.data);
        a.events = events;
    }
    a.o.events_path = a.events;
    static struct member_dir dir; /* lives as long as the process */
    if (a.directory) {
        dir.env = env;
        dir.self = a.o.node;
        dir.path = a.directory;
        a.o.dir_lookup = dir_lookup;
        a.o.dir_ud = &dir;
        dir_reread(&dir);
    }
    struct srv_proc *p = srv_proc_start(env, &a.o, &err);
    if (!p) {
        fprintf(stderr, "faultline: member: %s\n", err);
        return FL_EXIT_USAGE;
    }
    static struct fp_ctl fps; /* lives as long as the process */
    fps.env = env;
    fps.p = p;
    snprintf(fps.path, sizeof fps.path, "%s/failpoints", a.data);
    fp_read(&fps, false);
    uv_signal_t sig_usr2;
    uv_signal_init(&loop, &sig_usr2);
    sig_usr2.data = &fps;
    uv_signal_start(&sig_usr2, on_failpoints, SIGUSR2);
    struct skew_ctl skew = {env, p, ""};
    snprintf(skew.path, sizeof skew.path, "%s/skew_ppm", a.data);
    uv_signal_t sig_term, sig_int, sig_usr1;
    uv_signal_init(&loop, &sig_usr1);
    sig_usr1.data = &skew;
    uv_signal_start(&sig_usr1, on_skew, SIGUSR1);
    uv_signal_init(&loop, &sig_term);
    uv_signal_init(&loop, &sig_int);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_start(&sig_int, on_signal, SIGINT);
    fprintf(stderr,
            "faultline: member %d: serving peers on 127.0.0.1:%d, clients on 127.0.0.1:%d\n",
            a.o.node, a.peer_port, a.client_port);
    uv_run(&loop, UV_RUN_DEFAULT);
    /* stopped by a signal: the process ends here; an fsync may still be on the thread
     * pool, so nothing is freed under it */
    fflush(NULL);
    _exit(FL_EXIT_PASS);
}
