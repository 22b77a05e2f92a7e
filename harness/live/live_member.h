/*
 * live_member.h: our own members (`faultline member`, issue 16 §2) as real processes
 * for the live target and its tests: n member processes under the supervisor
 * (live.h: process groups, parent-death signal, claimed ports), each behind a proxy
 * on its peer port and one on its client port (live_proxy.h).
 *
 * Member i (slot i + 1 of the scenario; proxy node index i + 1, so that the address a
 * member's hello frame names is its node index): peer listener P_i (the member
 * listens), peer proxy X_i (forwards to P_i; the other members dial X_i, so
 * lv_net_cut(&c->net, a, b, ...) cuts what a sends to b, told apart by the hello frame
 * every member connection opens with), client listener C_i, client proxy Y_i (forwards
 * to C_i; its connections are LV_EXTERNAL's: lv_net_cut(&c->net, LV_EXTERNAL, i + 1,
 * ...) cuts the clients from member i). Data directory and event file under the work
 * directory: DIR/m<slot>/ and DIR/m<slot>/events.jsonl; log DIR/m<slot>.log. Every
 * member appends its Raft safety feeds to DIR/raft_feed.txt (`--raft-feed`, proc.h).
 */
#ifndef FL_LIVE_MEMBER_H
#define FL_LIVE_MEMBER_H

#include "harness/live/live.h"
#include "harness/live/live_proxy.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* An lv_identify_fn: the sender of a connection opened by an env_uv environment is
 * the address its hello frame names (a member's address is its slot, which is also
 * its proxy node index). LV_EXTERNAL when the bytes are not a hello or the address is
 * not a node index; -1 while fewer than the hello's 12 bytes arrived. arg unused. */
int lv_identify_member_hello(const uint8_t *p, size_t n, void *arg);

#define LV_MEMBERS_MAX (LV_NODES_MAX - 1) /* node index 0 is unused: slots are 1-based */

struct lv_member {
    int slot;
    uint64_t member_id;  /* a founder's from the seed, a joiner's from member add */
    bool joiner;         /* added by member add (started with --join) */
    bool started;        /* its process was started at least once */
    uint64_t events_off; /* how far lv_member_events_poll read its event file */
    int peer_port, proxy_port, client_port, client_proxy_port;
    char *data_dir, *log_path, *events_path; /* owned */
    struct lv_proc proc;
};

struct lv_member_cluster {
    uv_loop_t *loop;
    int n;                /* members set up: founders and joiners */
    int n0;               /* founders */
    char *dir_path;       /* owned: the directory of members (`faultline member --directory`) */
    char *raft_feed_path; /* owned: DIR/raft_feed.txt, every member's --raft-feed */
    struct lv_member m[LV_MEMBERS_MAX]; /* m[i]: slot i + 1 */
    struct lv_net net;
    struct lv_proxy proxy[LV_MEMBERS_MAX], client_proxy[LV_MEMBERS_MAX];
    struct lv_ports ports;
};

/* Starts n members of program (the faultline binary) with data directories under wd,
 * the cluster seed and the extra `faultline member` options (NULL-terminated, at most
 * LV_MEMBER_EXTRA_MAX, e.g. "--election-ms", "500"). Returns once every process was
 * spawned; the members elect a leader by themselves. FL_EIO with err. */
#define LV_MEMBER_EXTRA_MAX 32
int lv_member_cluster_start(struct lv_member_cluster *c, uv_loop_t *loop, struct lv_workdir *wd,
                            int n, const char *program, uint64_t seed, const char *const *extra,
                            struct fl_buf *err);
/* Member add: sets up slot n + 1 (ports, proxies, data directory) for the member
 * member_id that the cluster's leader added, a process that joins with --join; it is
 * not started (lv_proc_start(&c->m[slot - 1].proc), then lv_member_dir_write). Returns
 * the slot, or -1 with err (no slot left, no port). */
int lv_member_add(struct lv_member_cluster *c, struct lv_workdir *wd, const char *program,
                  uint64_t seed, const char *const *extra, uint64_t member_id, struct fl_buf *err);
/* Writes the directory every member reads to learn the slot, peer port and start of
 * members it does not know (written whole, then renamed over the old one). */
int lv_member_dir_write(struct lv_member_cluster *c, struct fl_buf *err);
/* Cuts member i (0-based) from every other member both ways (on: isolate, off: heal). */
void lv_member_cluster_isolate(struct lv_member_cluster *c, int i, bool on);
/* The node events the members appended since the last poll, in each member's file
 * order (member 1's first): fn(arg, slot, ev) for each whole JSON line (ev borrowed,
 * an object with at_ns, node, member_id, kind, term, detail). A line not yet ended
 * waits for the next poll. Returns how many events were read. (at_ns is
 * CLOCK_MONOTONIC, uv_hrtime's clock: the caller merges the members by it.) */
typedef void lv_member_event_fn(void *arg, int slot, json_t *ev);
int lv_member_events_poll(struct lv_member_cluster *c, lv_member_event_fn *fn, void *arg);
/* Kills every member, closes the proxies, releases the ports. */
void lv_member_cluster_close(struct lv_member_cluster *c);

#endif
