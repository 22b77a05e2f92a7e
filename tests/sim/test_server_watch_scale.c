/*
 * test_server_watch_scale.c: many watches and a write to each cost the members and
 * the client work linear in their number (issue 12, item 7: 5000 watches and 5000
 * puts to the watched keys took 4.7 s: every write matched every watcher of the
 * store, every drained response looked its watch up by a scan of the member's
 * watches, every commit visited every watch of the client's lag accounting).
 *
 * The test counts work, not time: each member's watch_steps (its store's matching,
 * catch-up and draining, its stream lookups) and the client's stream steps (which
 * include the lag accounting of every commit). N watches on distinct keys spread
 * over the members, a put to each key (fed to the lag accounting as the run driver
 * does), then a cancel of each watch (a cancel request the member looks up by call).
 * Every watch must see exactly its event and its cancellation, and the steps must
 * stay within a fixed number per watch; the former scans, counted the same way,
 * took about N^2 (11,913,669 steps here, against about 126,000 now).
 */
#include "fl_test.h"
#include "kvc_fixture.h"

#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"

#include <stdio.h>

#define WATCHES         2000
#define INFLIGHT        40
#define STEPS_PER_WATCH 200

struct wstate {
    int events;
    int canceled;
};
static struct wstate ws[WATCHES];

static void on_watch(void *ud, const struct kvc_watch_resp *r)
{
    struct wstate *s = ud;
    s->events += (int)r->event_count;
    s->canceled += r->canceled;
}

struct put_ctx {
    struct kvc_client *c;
    char key[16];
    int64_t *last_rev;
    int *done;
};

/* What the run driver does with a write's answer: the lag accounting hears of every
 * revision the cluster committed, once, in order. */
static void on_put(void *ud, const struct kvc_result *r)
{
    struct put_ctx *p = ud;
    if (r->status == KVC_OK) {
        (*p->done)++;
        if (r->header.revision > *p->last_rev) {
            *p->last_rev = r->header.revision;
            struct kvc_bytes k = {(const uint8_t *)p->key, strlen(p->key)};
            kvc_client_note_commit(p->c, r->header.revision, k, r->return_ns);
        }
    }
}

static uint64_t steps_now(struct srv_cluster *cl, struct kvc_client *c)
{
    uint64_t n = kvc_client_stream_steps(c);
    for (int i = 1; i <= 3; i++) {
        struct srv_member_status st;
        srv_cluster_status(cl, i, &st);
        n += st.watch_steps;
    }
    return n;
}

int main(void)
{
    struct sim_world *w = sim_world_new(11);
    struct srv_cluster *cl = kf_cluster(w);
    struct kvc_endpoint eps[3];
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.balancer = LB_ROUND_ROBIN;
    struct kvc_client *c = kf_client(w, cl, &kc, eps);
    CHECK(kf_wait_leader(w, cl) != 0);
    sim_run_for(w, 500 * FL_MS);
    uint64_t start = steps_now(cl, c);

    static struct put_ctx puts[WATCHES];
    static uint64_t ids[WATCHES];
    for (int i = 0; i < WATCHES; i++) {
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof(wr));
        int n = snprintf(puts[i].key, sizeof(puts[i].key), "key/%05d", i);
        wr.key = (struct kvc_bytes){(const uint8_t *)puts[i].key, (size_t)n};
        ids[i] = kvc_watch(c, &wr, NULL, on_watch, &ws[i]);
    }
    sim_run_for(w, 500 * FL_MS);
    uint64_t opened = steps_now(cl, c);

    int64_t last_rev = 0;
    int done = 0;
    for (int i = 0; i < WATCHES; i++) {
        puts[i].c = c;
        puts[i].last_rev = &last_rev;
        puts[i].done = &done;
        struct kvc_bytes k = {(const uint8_t *)puts[i].key, strlen(puts[i].key)};
        kvc_put(c, k, (struct kvc_bytes){(const uint8_t *)"v", 1}, 0, NULL, on_put, &puts[i]);
        if ((i + 1) % INFLIGHT == 0)
            sim_run_for(w, 100 * FL_MS);
    }
    sim_run_for(w, 1 * FL_S);
    CHECK_EQ_INT(done, WATCHES);
    uint64_t written = steps_now(cl, c);
    int one_each = 0;
    for (int i = 0; i < WATCHES; i++)
        one_each += ws[i].events == 1;
    CHECK_EQ_INT(one_each, WATCHES);
    struct kvc_stats st;
    kvc_client_stats(c, &st);
    printf("watch lag: max %lld ms\n", (long long)st.watch_max_stall_ms);
    CHECK(st.watch_max_stall_ms < 1000); /* every watch reached its write */

    for (int i = 0; i < WATCHES; i++)
        CHECK_EQ_INT(kvc_watch_cancel(c, ids[i]), 0);
    sim_run_for(w, 500 * FL_MS);
    int canceled = 0;
    for (int i = 0; i < WATCHES; i++)
        canceled += ws[i].canceled == 1;
    CHECK_EQ_INT(canceled, WATCHES);
    uint64_t end = steps_now(cl, c);
    printf("steps: open %llu, writes %llu, cancels %llu; %.1f per watch (bound %d)\n",
           (unsigned long long)(opened - start), (unsigned long long)(written - opened),
           (unsigned long long)(end - written), (double)(end - start) / WATCHES, STEPS_PER_WATCH);
    CHECK(end - start <= (uint64_t)WATCHES * STEPS_PER_WATCH);

    kvc_client_free(c);
    srv_cluster_destroy(cl);
    sim_world_free(w);
    return fl_test_end();
}
