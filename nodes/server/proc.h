/*
 * proc.h: one member as a process of its own (issue 16 §2, `faultline member`): the
 * member host (host.h) of a single member, on any node environment (env_uv in a real
 * process). The caller maps the addresses (env_uv_map: slot node's SRV_PEER_PORT and
 * SRV_CLIENT_PORT to TCP ports) and runs the loop; this file owns the member, its
 * checkers and its event file.
 *
 * Identity: every member of a live cluster derives the same member IDs (one per slot)
 * and cluster ID from the cluster seed, so the founders agree without talking; the
 * data directory keeps them afterwards (a restart recovers term, vote, log, snapshot
 * and store from it, whatever the seed says).
 *
 * Checkers: none runs in a member process. The online Raft safety checker and the KV
 * hash check judge every member's feeds together (a quorum of votes behind each
 * election, one store per revision), and a process has only its own; fed by one
 * member they report "violations" of what they cannot see. So the Raft safety feeds
 * are recorded instead (raft_feed_path: raft_safety_new_recorder), one line each,
 *   CLUSTER_ID_HEX FEED   (FEED: raft_safety_feed_format's text)
 * written with one write(2) on an O_APPEND descriptor at the moment the member feeds
 * it, before what it promises takes effect (a message leaves, an entry applies): every
 * member of a live cluster appends to the same file, so its order is one the members
 * could have seen, and the harness replays it into one checker. A write that fails is
 * an event "raft_feed_lost" (the file misses a feed: the harness cannot judge). What
 * one member finds alone (a restart on a WAL that is not a Raft log) is written as a
 * "raft_safety" event line.
 *
 * Events: every node event is one JSON line appended to the event file and flushed
 * (at_ns: the reference clock, env_now_ns: CLOCK_MONOTONIC, the same in every
 * process of the machine, so a harness can merge the files of all members):
 *   {"at_ns":N,"node":N,"member_id":"hex","kind":"leader","term":N,"detail":"..."}
 *
 * Membership (the live target's member_add / member_remove / member_promote): the
 * founders' IDs come from the seed; a member added later has the ID the leader drew,
 * and the process that runs it is started by the harness with that ID (join_id). The
 * other members learn which slot runs an ID they do not know through dir_lookup (the
 * harness's directory: `faultline member --directory FILE`), and whether it was
 * started. The slot of a member add is the one the request names (the harness
 * picks it); a slot that runs or ran another member is refused ("Peer URLs already
 * exists"). A member that applies its own removal stops serving and says so in the
 * event file. Not supported: typed hooks.
 */
#ifndef FL_SERVER_PROC_H
#define FL_SERVER_PROC_H

#include "nodes/server/server.h"

struct fl_env;
struct srv_proc;

#define SRV_PROC_NODES_MAX    16
#define SRV_PROC_SLOTS_MAX    1000             /* slot numbers, founders and joiners */
#define SRV_EV_RAFT_FEED_LOST "raft_feed_lost" /* a Raft safety feed could not be written */

/* The slot that runs member_id, -1 when the directory does not name it; *started:
 * its process was started (etcd's IsStarted). */
typedef int srv_proc_dir_fn(void *ud, uint64_t member_id, bool *started);

struct srv_proc_opts {
    int node;                      /* this member's slot, 1-based */
    int nodes[SRV_PROC_NODES_MAX]; /* every founding slot (this one included unless it
                                    * joins), ascending */
    int n_nodes;
    uint64_t seed;               /* the cluster seed: member and cluster IDs */
    struct srv_config cfg;       /* cfg.nodes is ignored: n_nodes founders */
    const char *events_path;     /* appended; NULL: events are dropped */
    const char *raft_feed_path;  /* appended; NULL: no Raft safety feeds are recorded */
    uint64_t join_id;            /* nonzero: joins the cluster as this member (not a founder) */
    srv_proc_dir_fn *dir_lookup; /* NULL: only the founders are known */
    void *dir_ud;
};

/* The member ID of slot node in the cluster of seed (nonzero), and the cluster ID. */
uint64_t srv_proc_member_id(uint64_t seed, int node);
uint64_t srv_proc_cluster_id(uint64_t seed);

/* Starts the member on env (which must outlive it): recovered from env's files when
 * they hold an identity, else booted as a founder. Its listeners are open when this
 * returns. NULL with *err (static) on bad options or an event file that cannot be
 * opened. The process runs it until it exits; srv_proc_stop frees what is left once
 * the caller's loop has nothing in flight (tests). */
struct srv_proc *srv_proc_start(struct fl_env *env, const struct srv_proc_opts *o,
                                const char **err);
void srv_proc_status(struct srv_proc *p, struct srv_member_status *out);
/* Writes a node event of this member (kind, detail: the caller's) to the event file,
 * for what the process itself did (e.g. "skew": its clock rate changed). */
void srv_proc_event(struct srv_proc *p, const char *kind, const char *detail);
/* True once the member applied its own removal (it serves nothing more). */
bool srv_proc_removed(const struct srv_proc *p);
void srv_proc_stop(struct srv_proc *p);

/* The live target's copy_db and restore (backup.h formats): the db image inside a
 * backup that snapshot_save answered (its hash checked), pointing into bk; FL_OK or
 * FL_ECORRUPT. */
int srv_proc_backup_db(const uint8_t *bk, size_t len, const uint8_t **db, size_t *db_len);
/* Checks a backup (or, with skip_hash_check, a raw db copy) as `etcdutl snapshot
 * restore` does: FL_OK, or an error with etcd's text in text. */
int srv_proc_restore_check(const uint8_t *data, size_t len, bool skip_hash_check, char *text,
                           size_t text_len);
/* The restore tool on one member's data directory (env over it, the member not
 * running): its files are replaced by the backup's state restored as member_id of the
 * new cluster cluster_id whose voters are ids[0..n). Checked as above. */
int srv_proc_restore_dir(struct fl_env *env, const uint8_t *data, size_t len, bool skip_hash_check,
                         uint64_t member_id, uint64_t cluster_id, const uint64_t *ids, int n,
                         char *text, size_t text_len);

#endif
