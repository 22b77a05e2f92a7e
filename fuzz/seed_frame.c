/*
 * seed_frame.c: writes the seed corpus of fuzz_frame (fuzz/corpus/frame) from the
 * frames a real cluster sends: a 3-member cluster and a client doing puts, gets, a
 * txn, a range delete, a watch with prev_kv, a lease with keep-alives, a compaction,
 * a member kill (elections, snapshot-less catch-up). A net tap (net_set_tap) sees every
 * frame; the first few distinct sizes of each direction (client->member, member->
 * client, member->member) are written, each under the modes of fuzz_frame.c that take
 * that kind of frame. Deterministic (fixed seed).
 *
 *     fuzz_seed_frame fuzz/corpus/frame
 */
#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"
#include "nodes/server/server.h"

#include <stdio.h>
#include <string.h>

#define PER_KIND 8

struct tap {
    const char *dir;
    int count[3];
    size_t seen[3][PER_KIND];
    int files;
};

static void put_file(struct tap *t, int mode, int how, const uint8_t *p, size_t n, int k, int i)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/m%d-k%d-%02d.bin", t->dir, mode, k, i);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint8_t hdr[2] = {(uint8_t)mode, (uint8_t)how};
    fwrite(hdr, 1, 2, f);
    fwrite(p, 1, n, f);
    fclose(f);
    t->files++;
}

static void on_tap(void *ctx, int from, int to, int port, const uint8_t *p, size_t n)
{
    (void)from;
    (void)to;
    struct tap *t = ctx;
    /* kind 0: to a member's client port; 2: between members; 1: a member's answer. */
    int k = port == SRV_CLIENT_PORT ? (from > to ? 0 : 1) : port == SRV_PEER_PORT ? 2 : -1;
    if (k < 0 || t->count[k] >= PER_KIND)
        return;
    for (int i = 0; i < t->count[k]; i++)
        if (t->seen[k][i] == n)
            return;
    int i = t->count[k];
    t->seen[k][t->count[k]++] = n;
    static const int modes[3][2] = {{0, 4}, {1, 6}, {2, 5}};
    put_file(t, modes[k][0], i, p, n, k, i);
    put_file(t, modes[k][1], i, p, n, k, i);
    if (i < 2)
        put_file(t, 3, i, p, n, k, i); /* CRC framing: intact (even) or flipped (odd) */
}

static void on_done(void *ud, const struct kvc_result *r)
{
    (void)ud;
    (void)r;
}

static void on_watch(void *ud, const struct kvc_watch_resp *r)
{
    (void)ud;
    (void)r;
}

static struct kvc_bytes B(const char *s) {
    return (struct kvc_bytes){(const uint8_t *)s, strlen(s)};
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    struct tap t;
    memset(&t, 0, sizeof(t));
    t.dir = argv[1];
    struct sim_world *w = sim_world_new(5);
    net_set_tap(w, on_tap, &t);
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct srv_cluster *cl = NULL;
    const char *err = NULL;
    if (srv_cluster_create(w, &cfg, NULL, NULL, &cl, &err) != 0) {
        fprintf(stderr, "cluster: %s\n", err);
        return 1;
    }
    struct kvc_endpoint eps[3];
    for (int i = 0; i < 3; i++) {
        eps[i].node = i + 1;
        eps[i].proc = srv_cluster_node_proc(cl, i + 1);
    }
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = 1;
    kc.endpoints = eps;
    kc.endpoint_count = 3;
    struct kvc_client *c = NULL;
    if (kvc_client_new(w, &kc, &c, &err) != 0)
        return 1;
    sim_run_for(w, 3 * FL_S);
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key = B("a");
    wr.range_end = B("z");
    wr.prev_kv = true;
    wr.progress_notify = true;
    kvc_watch(c, &wr, NULL, on_watch, NULL);
    kvc_put(c, B("a"), B("1"), 0, NULL, on_done, NULL);
    sim_run_for(w, 200 * FL_MS);
    kvc_put(c, B("b"), B("a longer value, with some bytes \x01\x02"), 0, NULL, on_done, NULL);
    kvc_get(c, B("a"), B("z"), NULL, on_done, NULL);
    sim_run_for(w, 200 * FL_MS);
    kvc_delete(c, B("a"), B(""), NULL, on_done, NULL);
    kvc_lease_keepalive(c, 1, NULL, on_done, NULL);
    sim_run_for(w, 2 * FL_S);
    srv_cluster_kill(cl, srv_cluster_leader(cl));
    sim_run_for(w, 5 * FL_S);
    kvc_put(c, B("c"), B("3"), 0, NULL, on_done, NULL);
    sim_run_for(w, 2 * FL_S);
    kvc_client_free(c);
    srv_cluster_destroy(cl);
    sim_world_free(w);
    printf("%d seed files in %s\n", t.files, t.dir);
    return 0;
}
