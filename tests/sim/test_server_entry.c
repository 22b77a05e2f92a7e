/*
 * test_server_entry.c: what a client request becomes in the Raft log. The leader logs
 * the request message's bytes as the client's frame carried them (its body), not a
 * packing of the decoded request: a PutRequest sent with its fields out of the order
 * protobuf-c packs them in (value before key, which any protobuf decoder accepts) shows
 * up byte for byte at the end of the entry in the leader's WAL, and every member
 * applies it as the put it is.
 */
#include "server/tfixture.h"

#include "harness/sim/disk.h"
#include "nodes/server/wal.h"

/* A protobuf field of wire type 2: key byte, one-byte length, bytes. */
static size_t put_ld(uint8_t *out, unsigned field, const char *s)
{
    size_t n = strlen(s);
    FL_ASSERT(n < 128);
    out[0] = (uint8_t)(field << 3 | 2);
    out[1] = (uint8_t)n;
    memcpy(out + 2, s, n);
    return n + 2;
}

/* Sends a put whose body is `body` (already packed) on c; returns the call id. */
static uint64_t send_raw_put(struct tclient *c, const uint8_t *body, size_t n)
{
    Rpc__ClientFrame fr = RPC__CLIENT_FRAME__INIT;
    fr.call_id = c->next_call++;
    fr.method = RPC__METHOD__METHOD_PUT;
    fr.req = RPC__CLIENT_MSG__REQ_PUT;
    fr.body.data = (uint8_t *)body;
    fr.body.len = n;
    uint8_t buf[256];
    size_t len = rpc__client_frame__get_packed_size(&fr);
    FL_ASSERT(len <= sizeof buf);
    rpc__client_frame__pack(&fr, buf);
    net_send(c->w, c->sock, buf, len);
    return fr.call_id;
}

struct wal_scan {
    struct sim_world *w;
    int proc;
    struct srv_wal_state st;
};

static void scan_file(const char *name, uint64_t size, void *ctx)
{
    (void)size;
    struct wal_scan *s = ctx;
    const uint8_t *p;
    size_t n;
    if (disk_view(s->w, s->proc, name, &p, &n) == FL_OK)
        srv_wal_replay(&s->st, p, n);
}

/* True when an entry of node's WAL ends with tail[0..n). */
static bool wal_has_tail(struct fixture *f, int node, const uint8_t *tail, size_t n)
{
    struct wal_scan s = {f->w, srv_cluster_node_proc(f->cl, node), {0}};
    srv_wal_state_init(&s.st);
    disk_list(f->w, s.proc, "wal/", scan_file, &s);
    bool found = false;
    for (size_t i = 0; i < s.st.n_entries && !found; i++) {
        const struct srv_wal_entry *e = &s.st.entries[i];
        found = e->data && e->len >= n && !memcmp(e->data + e->len - n, tail, n);
    }
    srv_wal_state_close(&s.st);
    return found;
}

static void test_entry_keeps_client_bytes(void)
{
    struct fixture f;
    int l = setup_default(&f, 41);
    CHECK(l > 0);
    uint8_t body[64];
    size_t n = put_ld(body, 2, "value-first"); /* PutRequest.value */
    n += put_ld(body + n, 1, "kraw");          /* PutRequest.key */
    /* What packing the decoded request gives: key first. */
    Rpc__PutRequest pr = RPC__PUT_REQUEST__INIT;
    pr.key.data = (uint8_t *)"kraw";
    pr.key.len = 4;
    pr.value.data = (uint8_t *)"value-first";
    pr.value.len = 11;
    uint8_t packed[64];
    size_t pn = rpc__put_request__pack(&pr, packed);
    CHECK(pn == n && memcmp(packed, body, n) != 0);

    struct tclient c;
    tc_open_node(&c, &f, l);
    Rpc__ServerMsg *r = tc_wait(&c, send_raw_put(&c, body, n), 5 * FL_S);
    CHECK(r != NULL && r->error == NULL && r->put != NULL);
    tc_free(r);
    tc_close(&c);
    CHECK(wait_converged(&f, 3 * FL_S));
    CHECK(wal_has_tail(&f, l, body, n));
    CHECK(!wal_has_tail(&f, l, packed, pn));
    for (int node = 1; node <= 3; node++)
        CHECK(read_is(&f, node, "kraw", "value-first", false));
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    FL_TEST(test_entry_keeps_client_bytes);
    return fl_test_end();
}
