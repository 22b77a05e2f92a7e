/*
 * test_client_watch_scale.c: many watches on one client cost work linear in their
 * number (issue 12, item 7: 1000 watches took 1 s, 3000 11 s, 5000 more than a
 * minute, because every reconcile looked each stream up by id in an array).
 *
 * The test counts work, not time: kvc_client_stream_steps() counts the streams the
 * client's stream bookkeeping examined. N watches (on distinct keys, one of them
 * pinned to a member), a lease keep-alive, writes to some watched keys, the loss of
 * a member that holds streams (so they all resume elsewhere) and a cancellation of
 * every watch must stay within a fixed number of steps per stream; with the former
 * scan it was about N^3/6 steps. It also checks that every watch still works: each
 * written key's watch sees its event, and every watch resumes after the kill.
 */
#include "fl_test.h"
#include "kvc_fixture.h"

#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"

#include <stdio.h>

#define WATCHES 2000
#define WRITES  40
/* Steps per watch allowed over the whole test: each watch is examined a handful of
 * times when it opens, resumes and ends, and each message costs one lookup. */
#define STEPS_PER_WATCH 40

struct wstate {
    int events;
    int canceled;
    uint32_t reconnects;
    int node; /* member of the latest response */
};

static struct wstate ws[WATCHES];

static void on_watch(void *ud, const struct kvc_watch_resp *r)
{
    struct wstate *s = ud;
    s->events += (int)r->event_count;
    s->canceled += r->canceled;
    s->reconnects = r->reconnects;
    s->node = r->node;
}

static int puts_done;
static void on_put(void *ud, const struct kvc_result *r)
{
    (void)ud;
    puts_done += r->status == KVC_OK;
}

static void on_ka(void *ud, const struct kvc_result *r)
{
    (void)ud;
    (void)r;
}

static struct kvc_bytes key_of(char *buf, size_t cap, int i)
{
    int n = snprintf(buf, cap, "key/%05d", i);
    return (struct kvc_bytes){(const uint8_t *)buf, (size_t)n};
}

int main(void)
{
    struct sim_world *w = sim_world_new(7);
    struct srv_cluster *cl = kf_cluster(w);
    struct kvc_endpoint eps[3];
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = 1;
    kc.balancer = LB_ROUND_ROBIN;
    struct kvc_client *c = kf_client(w, cl, &kc, eps);
    int leader = kf_wait_leader(w, cl);
    CHECK(leader != 0);

    char kb[32];
    uint64_t ids[WATCHES];
    for (int i = 0; i < WATCHES; i++) {
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof(wr));
        wr.key = key_of(kb, sizeof(kb), i);
        struct kvc_call_opts o;
        memset(&o, 0, sizeof(o));
        o.node = leader; /* watch 0 is pinned to the leader, the others are balanced */
        ids[i] = kvc_watch(c, &wr, i == 0 ? &o : NULL, on_watch, &ws[i]);
    }
    kvc_lease_keepalive(c, 12345, NULL, on_ka, NULL);
    sim_run_for(w, 500 * FL_MS);
    uint64_t after_open = kvc_client_stream_steps(c);
    printf("steps after opening %d watches: %llu\n", WATCHES, (unsigned long long)after_open);

    for (int i = 0; i < WRITES; i++) {
        char vb[32]; /* its own buffer: argument evaluation order is unspecified */
        kvc_put(c, key_of(kb, sizeof(kb), i * (WATCHES / WRITES)), key_of(vb, sizeof(vb), i), 0,
                NULL, on_put, NULL);
    }
    sim_run_for(w, 1 * FL_S);
    CHECK_EQ_INT(puts_done, WRITES);
    for (int i = 0; i < WRITES; i++)
        CHECK_EQ_INT(ws[i * (WATCHES / WRITES)].events, 1);

    /* Lose the member holding most watches: they all resume elsewhere. */
    int on[4] = {0, 0, 0, 0};
    for (int i = 0; i < WATCHES; i++)
        on[ws[i].node >= 1 && ws[i].node <= 3 ? ws[i].node : 0]++;
    int victim = 1;
    for (int n = 2; n <= 3; n++)
        victim = on[n] > on[victim] ? n : victim;
    printf("watches per member: %d %d %d (unknown %d); killing %d\n", on[1], on[2], on[3], on[0],
           victim);
    CHECK(on[victim] >= WATCHES / 3);
    srv_cluster_kill(cl, victim);
    sim_run_for(w, 30 * FL_S); /* past the keepalive timeout that notices the death */
    struct kvc_stats st;
    kvc_client_stats(c, &st);
    printf("stream reconnects: %lld\n", (long long)st.stream_reconnects);
    CHECK(st.stream_reconnects >= on[victim]);
    /* Every watch works after that: one more write to each watched key (WRITES
     * calls in flight at a time: this test is about streams, not unary calls). */
    puts_done = 0;
    for (int i = 0; i < WATCHES; i++) {
        char vb[32];
        kvc_put(c, key_of(kb, sizeof(kb), i), key_of(vb, sizeof(vb), i), 0, NULL, on_put, NULL);
        if ((i + 1) % WRITES == 0)
            sim_run_for(w, 200 * FL_MS);
    }
    sim_run_for(w, 1 * FL_S);
    CHECK_EQ_INT(puts_done, WATCHES);
    int seen = 0;
    for (int i = 0; i < WATCHES; i++)
        seen +=
            ws[i].events == 1 + (i % (WATCHES / WRITES) == 0 && i / (WATCHES / WRITES) < WRITES);
    CHECK_EQ_INT(seen, WATCHES);

    for (int i = 0; i < WATCHES; i++)
        CHECK_EQ_INT(kvc_watch_cancel(c, ids[i]), 0);
    int canceled = 0;
    for (int i = 0; i < WATCHES; i++)
        canceled += ws[i].canceled;
    CHECK_EQ_INT(canceled, WATCHES);

    uint64_t steps = kvc_client_stream_steps(c);
    printf("steps in all: %llu (%.1f per watch; bound %d)\n", (unsigned long long)steps,
           (double)steps / WATCHES, STEPS_PER_WATCH);
    CHECK(steps <= (uint64_t)WATCHES * STEPS_PER_WATCH);

    kvc_client_free(c);
    srv_cluster_destroy(cl);
    sim_world_free(w);
    return fl_test_end();
}
