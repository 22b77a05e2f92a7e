/*
 * run_target_live.h: the state of `--target live` (run_target_live.c tells the
 * design), shared by its files: run_target_live.c (set-up, close, pacing, the ops
 * table), _bridge.c (client connections), _observe.c (Status polling, node events),
 * _ctl.c (control calls), _member.c (membership, restore), _fault.c (faults).
 */
#ifndef FL_RUN_TARGET_LIVE_H
#define FL_RUN_TARGET_LIVE_H

#include "harness/live/live_member.h"
#include "harness/run/run_int.h"
#include "nodes/env/env_uv.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/errors.h"
#include "nodes/raft/raft.h"
#include "nodes/server/proc.h"
#include "nodes/server/server.h"

#include <errno.h>
#include <signal.h>

#define POLL_MS         100
#define EVENTS_POLL_MS  10  /* the members' event files are read this often */
#define FRESH_MS        10  /* status()/leader() ask the members again past this age */
#define REFRESH_MS      500 /* ... waiting at most this long for their answers */
#define STATUS_STALE_MS 1000
#define LIVE_HELLO_ADDR 1000 /* the address our hello frames name: not a member's */
#define CTL_TIMEOUT_MS  10000
#define START_MS        20000
#define CTL_CALL_BIT    ((uint64_t)1 << 62) /* control calls' ids on a Status connection */

struct run_live;

/* One frame (or, frame NULL, a close) to hand to a client socket at the wall time it
 * came from the member. */
struct ldelivery {
    struct run_live *L;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint8_t *frame;
    size_t len;
    struct ldelivery *prev, *next;
};

/* A client's connection to a bridge, carried by a real TCP connection. */
struct lconn {
    struct run_live *L;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uv_tcp_t tcp;
    uv_connect_t creq;
    bool connected, closing;
    struct fl_buf out; /* frames written before the connection was made */
    struct fl_buf in;  /* bytes read, not yet a whole frame */
    struct lconn *prev, *next;
};

/* The Status connection to one member. */
struct lstat {
    struct run_live *L;
    int slot;
    uv_tcp_t tcp;
    uv_connect_t creq;
    bool open, connected;
    struct fl_buf in;
    uint64_t call_id;
    double asked_s, answered_s; /* wall seconds; 0 never */
    uint64_t answered_id;       /* the call_id of the last Status answered */
    /* the last answer */
    bool ok;
    uint64_t leader_id, term, index, applied;
    int64_t revision, db_size, db_in_use, contact_age_ns;
    bool learner;
    uint64_t cluster_id;
};

/* A control call of the scenario (compact, defrag, ...) on a Status connection. */
struct lctl {
    struct run_live *L;
    int slot;
    uint64_t call_id;
    run_target_ctl_fn *done;
    void *ud;
    const char *kind;     /* static */
    bool start;           /* member_add: start the new member once added */
    bool add;             /* member_add: counted in run_live.adds until it finishes */
    bool sync;            /* copy_db: waited for in place, not entered into the world */
    bool finished;        /* ... and answered */
    uint64_t answered_id; /* member_add: the new member's ID as answered */
    int answered_node;    /* ... and its slot */
    int asked_node;       /* member_add: the slot it named */
    uint32_t hash;        /* hash_kv: the answer */
    int64_t compact_revision;
    int node; /* member_add: the new member's slot; remove/promote: the member's */
    int code;
    char text[256];
    int64_t revision;
    struct fl_buf data; /* snapshot_save: the blobs so far */
    double deadline_s;
    struct lctl *prev, *next;
};

struct lbridge {
    struct run_live *L;
    int slot, proc;
    uint32_t epoch; /* bumped at every kill: frames from an older life are dropped */
    int64_t rate_ppm;
    char rate_arg[24];
    double started_s;  /* wall seconds of its process's last start */
    bool skew_pending; /* SIGUSR1 to send once the process answered a Status */
    bool up_pending;   /* the bridge listens again once the process answered a Status */
    bool awaits_start; /* added with member_add{ start = false }, not started yet */
    bool fp_pending;   /* SIGUSR2 to send (DATA/failpoints changed), as skew_pending */
    struct lfp {       /* its failpoints, as DATA/failpoints lists them */
        int fp;        /* enum flt_point */
        char line[160];
    } fps[8];
    int n_fps;
    bool removed;     /* its removal was answered: its process was stopped */
    uint64_t ev_term; /* the highest term its own node events named (its Raft term: the
                       * Status answer's is the applied entry's, etcd's s.Term()) */
};

struct run_live {
    struct run_world *rw;
    uv_loop_t loop;
    bool loop_open;
    struct lv_workdir wd;
    bool wd_open;
    struct lv_member_cluster c;
    bool cluster_open;
    struct lbridge b[LV_MEMBERS_MAX + 1]; /* [slot] */
    struct lstat st[LV_MEMBERS_MAX + 1];
    int n;
    struct run_pacer pace; /* run_int.h */
    uv_timer_t poll, evpoll;
    double fresh_s;       /* wall seconds of the last lvt_refresh */
    int64_t fresh_sim_ns; /* ... and the world's time then */
    bool dirty;           /* a call answered or a fault applied since: refresh again */
    bool refreshing;
    bool timers_open;
    uint64_t leader_id, term; /* last seen by polling */
    int64_t last_event_ns;
    struct ldelivery *deliveries;
    struct lconn *conns;
    struct lctl *ctls;
    uint64_t ctl_seq;
    bool closing;
    char extra_vals[16][24];
    const char *extra[LV_MEMBER_EXTRA_MAX + 1]; /* the members' options (extra_vals) */
    char self[4096];                            /* the faultline binary */
    int adds;                                   /* member adds in flight */
    int restores;                               /* restore() calls so far */
    struct llost {  /* member adds whose answer was lost (timed out, connection ended) */
        int slot;   /* the slot the add named */
        bool start; /* started once adopted (member_add), or awaiting start(n) */
    } lost[LV_MEMBERS_MAX];
    int n_lost;
    uint64_t list_call_id; /* the MemberList call in flight that looks for them */
    int hash_compared;     /* members whose HashKV the last converge look compared */
    /* raft_safety (run_target_live_safety.c) */
    char *member_violation; /* the first "raft_safety" event of a member (owned) */
    char feed_problem[256]; /* why the feed file misses feeds ("": it does not) */
};

/* run_target_live_bridge.c */
void lvt_frame_put(struct fl_buf *b, const uint8_t *p, size_t n);
void lvt_hello_put(struct fl_buf *b);
void lvt_frames_take(struct fl_buf *in, const char *bytes, size_t n,
                     void (*fn)(void *arg, const uint8_t *p, size_t n), void *arg);
void lvt_write_buf(uv_stream_t *s, struct fl_buf *b);
/* Writes m as one frame on stream (a Status connection). */
void lvt_msg_write(uv_stream_t *s, const Rpc__ClientMsg *m);
void lvt_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
void lvt_conn_end(struct lconn *c, bool tell);
void lvt_bridge_add(struct run_live *L, int slot);
void lvt_bridge_up(struct run_live *L, int slot);

/* run_target_live_observe.c */
void lvt_stat_end(struct lstat *s);
void lvt_on_poll_timer(uv_timer_t *t);
void lvt_on_events_timer(uv_timer_t *t);
void lvt_events_poll(struct run_live *L);
void lvt_refresh(struct run_live *L);
int lvt_leader(struct run_world *rw);
int lvt_polled_leader(struct run_live *L);
int lvt_node_status(struct run_world *rw, int id, struct run_node_status *out);

/* run_target_live_ctl.c */
void lvt_ctl_fire(struct sim_world *w, void *ctx);
void lvt_ctl_finish_with(struct lctl *c, int code, const char *text, sim_event_fn *fire);
void lvt_ctl_finish(struct lctl *c, int code, const char *text);
void lvt_ctl_answer(struct run_live *L, int slot, const Rpc__ServerMsg *m);
void lvt_ctls_fail(struct run_live *L, int slot, bool timed_out_only);
void lvt_ctl(struct run_world *rw, const char *kind, int node, int64_t arg, run_target_ctl_fn *done,
             void *ud);
void lvt_ctl_send(struct run_live *L, struct lctl *c, const Rpc__ClientMsg *q);
int lvt_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len);

/* run_target_live_member.c */
void lvt_member_answered(struct run_live *L, struct lctl *c, const Rpc__ServerMsg *m);
bool lvt_removed(struct run_world *rw, int node);
bool lvt_awaits_start(struct run_world *rw, int node);
int lvt_member_start(struct run_world *rw, int node);
void lvt_member_lost(struct run_live *L, const struct lctl *c);
void lvt_members_ask(struct run_live *L);
void lvt_members_listed(struct run_live *L, const Rpc__ServerMsg *m);
void lvt_member_ctl(struct run_live *L, struct lctl *c, const char *kind, int64_t arg);
int lvt_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                int n_nodes, bool skip_hash_check, char *err, size_t err_len);

/* run_target_live_check.c */
bool lvt_converged(struct run_world *rw, json_t **state);
int lvt_checkpoints(struct run_world *rw, const json_t **corruption);

/* run_target_live_safety.c */
/* Appends the harness's own feed for the member of slot (op "not_leader" at a kill,
 * "forget" at its removal) to the Raft feed file. */
void lvt_feed_note(struct run_live *L, int slot, const char *op);
/* The Raft feed file at path replayed into the safety checker: CHK_PASS, CHK_FAIL (the
 * violation in *detail) or CHK_UNKNOWN (*detail's "reason": the file cannot be read, or a
 * line of it is not a whole feed). wait: an unfinished last line is read again for a
 * while (members still run). *detail is the caller's. */
int lvt_feed_judge(const char *path, bool wait, json_t **detail);
int lvt_raft_safety(struct run_world *rw, json_t **detail);

/* run_target_live_fault.c */
void lvt_fp_signal(struct run_live *L, int slot);
void lvt_skew_signal(struct run_live *L, int slot);
void lvt_skew(struct run_world *rw, int id, int64_t rate_ppm);
void lvt_node_fault(struct run_world *rw, int id, const char *kind);
void lvt_set_prevote(struct run_world *rw, int id, bool on);
void lvt_net_sync(struct run_world *rw);
void lvt_clog(struct run_world *rw, int from_proc, int to_proc, bool on);
int lvt_failpoint(struct run_world *rw, const char *name, int node, const struct flt_spec *spec,
                  bool off, char *err, size_t err_len);

#endif
