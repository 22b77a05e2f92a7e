/*
 * run_etcd.h: the etcd target of the run driver (issue 16 §3), internal to
 * harness/run. run_target_etcd.c implements it and fills run_target_etcd_ops with the
 * hooks declared here; run_world.c, run_fault.c, run_net.c, run_observe.c,
 * run_paranoid.c and run_finish.c call them through rw->tgt (run_int.h).
 *
 * The simulator stays the scheduler, paced by the wall clock: an event at simulated
 * time t runs only once t has passed on the wall clock since the cluster started, and
 * the libuv loop (etcd members, proxies, curl requests) runs while the run waits.
 * What comes back from etcd enters the world as an event at the wall time it came.
 * Our clients stay simulated processes; each etcd member is represented in the world
 * by a "bridge" process at that member's slot that serves the client protocol
 * (rpc.proto) by calling the member over etcd's v3 JSON gateway (live_etcd.h).
 */
#ifndef FL_RUN_ETCD_H
#define FL_RUN_ETCD_H

#include "harness/run/run_int.h"

#include "harness/live/live_proxy.h"

struct run_etcd;

/* Starts the cluster (cfg->nodes members) and one bridge process per member.
 * FL_EINVAL / FL_EIO / FL_ETIMEOUT with a message in err. */
int run_etcd_setup(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                   size_t err_len);
void run_etcd_close(struct run_world *rw); /* kills every member, removes the workdir */

/* Pacing: runs the libuv loop until wall time reaches simulated time t_ns or an event
 * earlier than t_ns entered the world. */
void run_etcd_pace(struct run_world *rw, int64_t t_ns);
/* run_advance on the etcd target. */
void run_etcd_advance(struct run_world *rw, int64_t until_ns);

/* Cluster view (slots 1..n). */
int run_etcd_slots(struct run_world *rw);
int run_etcd_node_proc(struct run_world *rw, int node);
bool run_etcd_alive(struct run_world *rw, int node);   /* its process runs */
bool run_etcd_removed(struct run_world *rw, int node); /* member_remove took it out */
int run_etcd_leader(struct run_world *rw);             /* the slot every member follows, 0 none */
int run_etcd_node_status(struct run_world *rw, int id, struct run_node_status *out);
const char *run_etcd_version(struct run_world *rw);

/* Member id's --pre-vote flag from its next (re)start on (restart{ prevote }). */
void run_etcd_set_prevote(struct run_world *rw, int id, bool on);
/* Faults: kill / restart / pause / resume of member `id` (its bridge follows). */
void run_etcd_node_fault(struct run_world *rw, int id, const char *kind);
/* After any change of the simulated network: member-member cuts between bridges
 * become cuts of the real peer links (the bridges never talk to each other, so the
 * simulated links between them only say what is cut). */
void run_etcd_net_sync(struct run_world *rw);
/* clog / unclog from -> to (processes, -1 every one) on the real peer links between
 * members; run_etcd_clog(rw, -1, -1, false) at heal. */
void run_etcd_clog(struct run_world *rw, int from_proc, int to_proc, bool on);

/* Control calls (compact, defrag, alarm disarm, member remove/promote, move leader)
 * through etcd's API; done runs from inside the event loop. */
typedef run_target_ctl_fn run_etcd_ctl_fn;
/* kind "member_add": arg 1 for a learner; node in done is the new member's slot.
 * kind "snapshot_save": Maintenance Snapshot of member node, streamed through the
 * gateway (etcd's db followed by its SHA-256, what `etcdctl snapshot save` writes),
 * in r->data / r->len. */
void run_etcd_ctl(struct run_world *rw, const char *kind, int node, int64_t arg,
                  run_etcd_ctl_fn *done, void *ud);
/* copy_db: member node's bbolt file (DATA/member/snap/db) as it is on disk, no hash;
 * FL_ENOENT when it cannot be read. */
int run_etcd_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len);
/* restore: `etcdctl snapshot restore` of the backup into a new data directory for
 * each of nodes (a new cluster token: new cluster ID, new member IDs; the old
 * directory is kept beside it), then those members restart on it. Refused (etcdctl's
 * error text in err, nothing touched): FL_ECORRUPT. */
int run_etcd_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                     int n_nodes, bool skip_hash_check, char *err, size_t err_len);
/* converge on etcd: once every running member of the leader's cluster (not removed)
 * reports the same revision, HashKV at that revision on each (`etcdctl endpoint
 * hashkv`, the gateway's /v3/maintenance/hash serves Hash, not HashKV, in 3.4); true
 * when revisions, compact revisions and hashes agree. state: what was seen (JSON
 * object, new). */
bool run_etcd_converged(struct run_world *rw, json_t **state);
/* converge's checkpoints during the run (every 2 s of wall time, when converge is
 * asked): how many revisions were compared on two members or more; *corruption the
 * first HashKV mismatch ({"revision","members":[{"node","hash"}]}) or NULL. */
int run_etcd_checkpoints(struct run_world *rw, const json_t **corruption);

/* run_etcd_codec.c: rpc.proto <-> etcd's JSON gateway. An answer's allocations go
 * into a scratch set, freed together once the answer is encoded. */
#include "nodes/proto/codec.h"
struct ec_scratch {
    void **p;
    size_t n, cap;
};
void *ec_new(struct ec_scratch *s, size_t n); /* zeroed */
void ec_free(struct ec_scratch *s);
int64_t ec_i64(const json_t *o, const char *name); /* "123", "-1" or 123; 0 absent */
bool ec_bool(const json_t *o, const char *name);
json_t *ec_b64(ProtobufCBinaryData d);
void ec_set_bytes(json_t *o, const char *name, ProtobufCBinaryData d); /* omitted if empty */
void ec_set_i64(json_t *o, const char *name, int64_t v);               /* omitted if 0 */
void ec_set_u64(json_t *o, const char *name, uint64_t v);              /* member ids are uint64 */
Rpc__KeyValue *ec_kv(struct ec_scratch *s, const json_t *o);           /* NULL if not an object */
Rpc__ResponseHeader *ec_header(struct ec_scratch *s, const json_t *h);
Rpc__Event **ec_events(struct ec_scratch *s, const json_t *a, size_t *n);
/* Member ids of slots 1..n (id[slot - 1]), to name a member's slot (Member.node). */
struct ec_ids {
    uint64_t id[LV_NODES_MAX];
    int n;
};
/* The body of method's answer o into msg's oneof (and header for keep-alives). */
void ec_answer(struct ec_scratch *s, const struct ec_ids *ids, int method, const json_t *o,
               Rpc__ServerMsg *msg);
/* The gateway path and (new) body of a unary request; NULL when not served. */
const char *ec_request(const Rpc__ClientMsg *m, json_t **body);

/* run_target.c: "etcd --version"'s version into out ("unknown" when it cannot say). */
const char *run_etcd_binary_version(char *out, size_t n);
/* The checks that read our own members' state (raft_safety, converge, and liveness,
 * whose fault timeline asks the cluster) are dropped from
 * rw->checks on the etcd target and named in the summary ("not_on_target"). */
void run_target_trim_checks(struct run_world *rw);

#endif
