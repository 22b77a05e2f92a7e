/*
 * run_etcd_int.h: internals shared by the files of the etcd target (run_target_etcd*.c):
 * its state (struct run_etcd: the cluster, one bridge per member slot, the calls,
 * watches and control calls in flight) and the functions one file calls in another.
 * run_target_etcd.c describes the whole; each file's head says what it holds.
 */
#ifndef FL_RUN_ETCD_INT_H
#define FL_RUN_ETCD_INT_H

#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"
#include "nodes/proto/codec.h"

#define CALL_TIMEOUT_MS     10000 /* the clients time out first (default 2 s) */
#define POLL_MS             100
#define START_MS            20000
#define SNAPSHOT_TIMEOUT_MS 30000
#define CHECKPOINT_MS       2000

struct run_etcd;

/* One frame to send from a bridge, at the wall time its answer came. */
struct delivery {
    struct run_etcd *E;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint8_t *frame;
    size_t len;
    struct delivery *prev, *next;
};

/* Where a client's request came from: the answer goes back there, unless the bridge
 * died since (epoch) or the connection closed. */
struct origin {
    struct run_etcd *E;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint64_t call_id;
};

/* A unary call in flight to etcd. */
struct ecall {
    struct origin o;
    int method;
    struct ecall *prev, *next;
};

/* A client's watch stream, carried by a gateway watch. */
struct ewatch {
    struct origin o;
    struct lv_etcd_watch *w; /* NULL once the gateway stream ended */
    bool dead;               /* to cancel outside curl's callbacks */
    struct ewatch *prev, *next;
};

/* A control call of the scenario (compact, defrag, ...). */
struct ectl {
    struct run_etcd *E;
    run_etcd_ctl_fn *done;
    void *ud;
    int code;
    char text[256];
    int64_t revision;
    int node;                     /* member_add: the slot of the new member, once started */
    int removing;                 /* member_remove: the slot removed when it succeeds */
    int add_idx;                  /* member_add: the prepared member (-1 none) */
    json_t *resp;                 /* member_add: MemberAdd's answer, until the member starts */
    struct fl_buf data;           /* snapshot_save: the blobs so far */
    int disarm_at;                /* alarm_disarm: the member asked */
    size_t disarm_next;           /* alarm_disarm: the next alarm of resp to deactivate */
    struct lv_etcd_watch *stream; /* snapshot_save: the stream, until it ends */
    struct ectl *prev, *next;
};

/* One Status call in flight: at most one of each kind per member (a round starts only
 * when the last one has answered), so it lives in the member's bridge and nothing is
 * left to free when closing cancels the call without its callback. */
struct run_etcd_poll {
    struct run_etcd *E;
    int slot;
    bool refresh; /* a call of run_etcd__refresh's round */
    uint64_t seq; /* E->poll_seq when sent: an older answer never replaces a newer */
};

struct bridge {
    int slot, proc;
    uint32_t epoch; /* bumped at every kill: answers to an older life are dropped */
    struct lv_etcd_status st;
    uint64_t cluster_id; /* the header of its last Status answer */
    bool st_ok;
    struct run_etcd_poll poll[2]; /* [0] the poll's, [1] the refresh's */
    uint64_t st_seq;              /* the poll_seq of the newest Status answer seen */
    bool removed;                 /* member_remove succeeded: no longer one of nodes() */
    long log_off;                 /* bytes of its log read so far */
    struct fl_buf log_part;       /* a line not complete yet */
    bool log_leader;              /* its log's last role change made it leader */
    /* The highest Raft term its log named ("became candidate at term 7", ...). Status
     * raftTerm is the term of the last applied entry (etcd's s.Term()), which stays put
     * while an isolated member campaigns; this is the Raft term status().term reports. */
    uint64_t log_term;
    /* failpoint on its WAL (strace): on, and with what (delay_ms, or a crash) */
    struct run_etcd *E;
    bool fp_on;
    int fp_delay_ms;
    enum lv_wal_crash fp_crash;
    bool fp_crashed; /* its member died of the crash: the bridge is killed too */
};

struct run_etcd {
    struct run_world *rw;
    uv_loop_t loop;
    bool loop_open;
    struct lv_workdir wd;
    bool wd_open;
    struct lv_etcd_cluster c;
    bool cluster_open;
    struct bridge b[LV_NODES_MAX + 1]; /* [slot], 1-based */
    int n;
    struct run_pacer pace; /* run_int.h */
    uv_timer_t poll;       /* status polls */
    bool poll_open;
    int poll_ms; /* POLL_MS, or $FL_ETCD_POLL_MS */
    int polls_out;
    int refresh_out;          /* run_etcd__refresh's Status calls out */
    uint64_t poll_seq;        /* Status calls sent */
    uint64_t leader_id, term; /* last seen by polling */
    char version[32];
    char *bin;             /* the etcd binary, for members added */
    char flag_vals[8][32]; /* ... and the flags they run with */
    const char *flags[LV_ETCD_EXTRA_MAX + 1];
    struct delivery *deliveries;
    struct ecall *calls;
    struct ewatch *watches;
    struct ectl *ctls;
    /* converge's checkpoints: HashKV of every member at one revision every
     * CHECKPOINT_MS of wall time, taken outside the loop's callbacks (run_etcd_pace) */
    double checkpoint_at_s;
    int64_t checkpoint_rev; /* the revision last compared */
    int checkpoints;        /* revisions compared */
    json_t *corruption;     /* the first mismatch, NULL none */
    struct ckpt *ckpt;      /* the checkpoint whose etcdctl processes run, NULL none */
    bool closing;           /* run_etcd_close: the run has ended, nothing more is recorded */
    bool refreshing;        /* run_etcd__refresh's Status round is out */
};

/* run_target_etcd_bridge.c */
int run_etcd__slot_of_member(const struct run_etcd *E, uint64_t id); /* 0 none */
/* Enters msg, to be sent on sock by bridge slot, into the world at the wall time now. */
void run_etcd__deliver(struct run_etcd *E, int slot, uint32_t epoch, net_sock sock,
                       const Rpc__ServerMsg *msg);
/* msg answers the error (code, text); e is its storage, text is not copied. */
void run_etcd__error_msg(Rpc__ServerMsg *msg, Rpc__Error *e, int code, const char *text);
void run_etcd__reply_error(Rpc__ServerMsg *msg, Rpc__Error *e, const struct lv_etcd_reply *r);
struct origin run_etcd__origin_of(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id);
void run_etcd__bridge_add(struct run_etcd *E, int slot);

/* run_target_etcd_watch.c */
void run_etcd__watch_open(struct run_etcd *E, int slot, net_sock sock, const Rpc__ClientMsg *m);
void run_etcd__watch_close(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id);
void run_etcd__watch_free(struct run_etcd *E, struct ewatch *x);
void run_etcd__watches_sweep(struct run_etcd *E);
void run_etcd__pace_turn(void *ud); /* the run_pacer's turn hook: ud is the run_etcd */

/* run_target_etcd_observe.c */
int run_etcd__polled_leader(struct run_etcd *E, uint64_t *term);
void run_etcd__on_poll_timer(uv_timer_t *t);
void run_etcd__refresh(struct run_etcd *E); /* fresh Status and logs; from a world event */

/* run_target_etcd_backup.c */
void run_etcd__etcdctl_error(const char *out, char *err, size_t err_len);

/* run_target_etcd_converge.c */
void run_etcd__checkpoint(struct run_etcd *E);
void run_etcd__checkpoint_stop(struct run_etcd *E);

/* run_target_etcd_fp.c */
int run_etcd__fp_attach(struct run_etcd *E, int slot, struct fl_buf *err);
const char *run_etcd__failpoint_refused(struct run_world *rw, const char *name, const char *action,
                                        int p_ppm, int count, int skip);
int run_etcd__failpoint(struct run_world *rw, const char *name, int node,
                        const struct flt_spec *spec, bool off, char *err, size_t err_len);

#endif
