/*
 * test_pb_bound.c: the packed-size bounds of pb_bound.h and packing into a reused
 * buffer. A bound must hold for every frame (random frames with the widest values:
 * 64-bit IDs, negative TTLs and revisions, entry data and snapshots), the frame
 * descriptors must keep the shape the bounds assume, and a frame packed into a buffer
 * that held a longer frame must come out byte for byte as protobuf-c packs it alone,
 * with nothing of the older frame's tail.
 */
#include "fl_test.h"
#include "harness/common/rng.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/pb_bound.h"

static struct fl_rng rng;

/* Mostly small values, sometimes the widest. */
static uint64_t rnd_u64(void)
{
    uint64_t k = fl_rng_below(&rng, 4);
    if (k == 0)
        return 0;
    if (k == 1)
        return UINT64_MAX - fl_rng_below(&rng, 3);
    uint64_t bits = fl_rng_below(&rng, 64);
    return fl_rng_u64(&rng) >> bits;
}

/* ---- the descriptors keep the shape the bounds assume --------------------------------- */

static bool flat_with_body(const ProtobufCMessageDescriptor *d, const char *sub)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->type == PROTOBUF_C_TYPE_MESSAGE && sub && !strcmp(fd->name, sub) &&
            fd->label != PROTOBUF_C_LABEL_REPEATED)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED || fd->type == PROTOBUF_C_TYPE_MESSAGE ||
            fd->type == PROTOBUF_C_TYPE_STRING)
            return false;
        if (fd->type == PROTOBUF_C_TYPE_BYTES && strcmp(fd->name, "body") != 0)
            return false;
        if (fd->id >= 2048)
            return false;
    }
    return true;
}

/* Every length-delimited or repeated field of d is one of the names listed, which the
 * bound of d counts by length or element. */
static bool only_counted(const ProtobufCMessageDescriptor *d, const char *const *counted, size_t n)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->id >= 2048)
            return false;
        bool variable = fd->label == PROTOBUF_C_LABEL_REPEATED ||
                        fd->type == PROTOBUF_C_TYPE_MESSAGE || fd->type == PROTOBUF_C_TYPE_STRING ||
                        fd->type == PROTOBUF_C_TYPE_BYTES;
        bool listed = false;
        for (size_t k = 0; k < n; k++)
            listed = listed || !strcmp(fd->name, counted[k]);
        if (variable != listed)
            return false;
    }
    return true;
}

static void test_descriptor_shape(void)
{
    CHECK(flat_with_body(&rpc__client_frame__descriptor, NULL));
    CHECK(flat_with_body(&rpc__server_frame__descriptor, "error"));
    static const char *const err[] = {"message"};
    CHECK(only_counted(&rpc__error__descriptor, err, FL_ARRAY_LEN(err)));
    static const char *const frame[] = {"msgs", "error", "lease_renews"};
    static const char *const msg[] = {"entry_index", "entry_term", "entry_type", "entry_data",
                                      "snapshot"};
    static const char *const snap[] = {"conf", "data"};
    static const char *const conf[] = {"voters", "learners"};
    CHECK(only_counted(&raftpb__peer_frame__descriptor, frame, FL_ARRAY_LEN(frame)));
    CHECK(only_counted(&raftpb__message__descriptor, msg, FL_ARRAY_LEN(msg)));
    CHECK(only_counted(&raftpb__snapshot__descriptor, snap, FL_ARRAY_LEN(snap)));
    CHECK(only_counted(&raftpb__conf_state__descriptor, conf, FL_ARRAY_LEN(conf)));
    CHECK(only_counted(&raftpb__lease_renew__descriptor, NULL, 0));
    /* the fields the bounds count as scalars are varints of at most ten bytes */
    CHECK(raftpb__message__descriptor.fields != NULL);
}

/* ---- random peer frames ----------------------------------------------------------------- */

#define MSGS_MAX 6
#define ENTS_MAX 40

struct frame_store {
    Raftpb__PeerFrame f;
    Raftpb__Message msgs[MSGS_MAX], *pmsgs[MSGS_MAX];
    uint64_t idx[MSGS_MAX][ENTS_MAX], term[MSGS_MAX][ENTS_MAX];
    uint32_t type[MSGS_MAX][ENTS_MAX];
    ProtobufCBinaryData data[MSGS_MAX][ENTS_MAX];
    Raftpb__Snapshot snap[MSGS_MAX];
    Raftpb__ConfState conf[MSGS_MAX];
    uint64_t voters[MSGS_MAX][7], learners[MSGS_MAX][7];
    Raftpb__LeaseRenew lr[3], *plr[3];
    uint8_t bytes[4096];
    char error[64];
};

static void random_frame(struct frame_store *s)
{
    for (size_t i = 0; i < sizeof s->bytes; i++)
        s->bytes[i] = (uint8_t)fl_rng_u64(&rng);
    raftpb__peer_frame__init(&s->f);
    s->f.cluster_id = rnd_u64();
    s->f.from_member = rnd_u64();
    s->f.to_member = rnd_u64();
    s->f.refused = fl_rng_below(&rng, 8) == 0;
    if (fl_rng_below(&rng, 8) == 0) {
        size_t n = fl_rng_below(&rng, sizeof s->error);
        memset(s->error, 'e', n);
        s->error[n] = 0;
        s->f.error = s->error;
    }
    s->f.n_msgs = fl_rng_below(&rng, MSGS_MAX + 1);
    s->f.msgs = s->pmsgs;
    for (size_t i = 0; i < s->f.n_msgs; i++) {
        Raftpb__Message *m = &s->msgs[i];
        s->pmsgs[i] = m;
        raftpb__message__init(m);
        m->type = (uint32_t)rnd_u64();
        m->from = rnd_u64();
        m->to = rnd_u64();
        m->term = rnd_u64();
        m->log_term = rnd_u64();
        m->index = rnd_u64();
        m->commit = rnd_u64();
        m->context = rnd_u64();
        m->reject = fl_rng_below(&rng, 2) != 0;
        m->reject_hint = rnd_u64();
        m->hint_term = rnd_u64();
        size_t ne =
            fl_rng_below(&rng, 3) ? fl_rng_below(&rng, 4) : fl_rng_below(&rng, ENTS_MAX + 1);
        m->n_entry_index = m->n_entry_term = m->n_entry_type = m->n_entry_data = ne;
        m->entry_index = s->idx[i];
        m->entry_term = s->term[i];
        m->entry_type = s->type[i];
        m->entry_data = s->data[i];
        for (size_t k = 0; k < ne; k++) {
            s->idx[i][k] = rnd_u64();
            s->term[i][k] = rnd_u64();
            s->type[i][k] = (uint32_t)rnd_u64();
            size_t len = fl_rng_below(&rng, 300);
            s->data[i][k].len = len;
            s->data[i][k].data = len ? s->bytes + fl_rng_below(&rng, sizeof s->bytes - len) : NULL;
        }
        if (fl_rng_below(&rng, 10) == 0) {
            Raftpb__Snapshot *sn = &s->snap[i];
            raftpb__snapshot__init(sn);
            sn->index = rnd_u64();
            sn->term = rnd_u64();
            sn->data.len = fl_rng_below(&rng, sizeof s->bytes);
            sn->data.data = sn->data.len ? s->bytes : NULL;
            if (fl_rng_below(&rng, 4)) {
                Raftpb__ConfState *c = &s->conf[i];
                raftpb__conf_state__init(c);
                c->n_voters = fl_rng_below(&rng, 8);
                c->n_learners = fl_rng_below(&rng, 8);
                c->voters = s->voters[i];
                c->learners = s->learners[i];
                for (size_t k = 0; k < 7; k++) {
                    s->voters[i][k] = rnd_u64();
                    s->learners[i][k] = rnd_u64();
                }
                sn->conf = c;
            }
            m->snapshot = sn;
        }
    }
    s->f.n_lease_renews = fl_rng_below(&rng, 4) ? 0 : fl_rng_below(&rng, 4);
    s->f.lease_renews = s->plr;
    for (size_t i = 0; i < s->f.n_lease_renews; i++) {
        raftpb__lease_renew__init(&s->lr[i]);
        s->lr[i].req_id = rnd_u64();
        s->lr[i].lease_id = (int64_t)rnd_u64();
        s->lr[i].ttl = (int64_t)rnd_u64();
        s->lr[i].is_response = true;
        s->lr[i].not_leader = true;
        s->plr[i] = &s->lr[i];
    }
}

/* Every random frame fits its bound, and packs into a dirty reused buffer as alone. */
static void test_peer_frame_bound(void)
{
    struct frame_store *s = fl_calloc(1, sizeof *s);
    struct fl_buf reused, fresh;
    fl_buf_init(&reused);
    fl_buf_init(&fresh);
    int over = 0, differ = 0;
    for (int it = 0; it < 20000; it++) {
        random_frame(s);
        size_t exact = raftpb__peer_frame__get_packed_size(&s->f);
        size_t bound = pb_peer_frame_bound(&s->f);
        if (bound < exact)
            over++;
        /* the reused buffer keeps what the frames before wrote past its length */
        fl_buf_reset(&reused);
        size_t n = pb_pack_append(&s->f.base, bound, &reused);
        fl_buf_reset(&fresh);
        fl_buf_reserve(&fresh, exact);
        raftpb__peer_frame__pack(&s->f, fresh.data);
        if (n != exact || reused.len != exact || memcmp(reused.data, fresh.data, exact) != 0)
            differ++;
    }
    CHECK_EQ_INT(over, 0);
    CHECK_EQ_INT(differ, 0);
    fl_buf_close(&reused);
    fl_buf_close(&fresh);
    free(s);
}

/* A frame with unknown fields (decoded from a newer sender) is sized exactly. */
static void test_unknown_fields(void)
{
    Raftpb__PeerFrame f = RAFTPB__PEER_FRAME__INIT;
    f.cluster_id = 7;
    uint8_t b[64];
    size_t n = raftpb__peer_frame__pack(&f, b);
    /* field 99, length-delimited, 20 bytes */
    b[n++] = (uint8_t)((99 << 3 | 2) & 0x7f) | 0x80;
    b[n++] = (uint8_t)((99 << 3 | 2) >> 7);
    b[n++] = 20;
    memset(b + n, 'u', 20);
    n += 20;
    Raftpb__PeerFrame *d = raftpb__peer_frame__unpack(NULL, n, b);
    CHECK(d != NULL);
    if (!d)
        return;
    CHECK_EQ_INT(d->base.n_unknown_fields, 1);
    CHECK_EQ_INT(pb_peer_frame_bound(d), raftpb__peer_frame__get_packed_size(d));
    CHECK_EQ_INT(pb_peer_frame_bound(d), n);
    raftpb__peer_frame__free_unpacked(d, NULL);
}

/* ---- client and server frames ------------------------------------------------------------ */

static void test_flat_frame_bounds(void)
{
    uint8_t body[600];
    memset(body, 'b', sizeof body);
    int over = 0;
    for (int it = 0; it < 20000; it++) {
        Rpc__ClientFrame c = RPC__CLIENT_FRAME__INIT;
        c.call_id = rnd_u64();
        c.method = (Rpc__Method)(int32_t)(uint32_t)rnd_u64();
        c.require_leader = true;
        c.close_stream = true;
        c.client_id = (uint32_t)rnd_u64();
        c.req = (uint32_t)rnd_u64();
        c.body.len = fl_rng_below(&rng, sizeof body);
        c.body.data = c.body.len ? body : NULL;
        if (pb_client_frame_bound(&c) < rpc__client_frame__get_packed_size(&c))
            over++;
        Rpc__ServerFrame s = RPC__SERVER_FRAME__INIT;
        s.call_id = rnd_u64();
        s.method = (Rpc__Method)(int32_t)(uint32_t)rnd_u64();
        s.has_header = true;
        Rpc__Error e = RPC__ERROR__INIT;
        char text[100];
        size_t tl = fl_rng_below(&rng, sizeof text);
        memset(text, 't', tl);
        text[tl] = 0;
        e.code = (int32_t)rnd_u64();
        e.message = fl_rng_below(&rng, 2) ? text : NULL;
        s.error = fl_rng_below(&rng, 3) ? NULL : &e;
        s.stream_end = true;
        s.resp = (uint32_t)rnd_u64();
        s.body = c.body;
        s.cluster_id = rnd_u64();
        s.member_id = rnd_u64();
        s.revision = (int64_t)rnd_u64();
        s.raft_term = rnd_u64();
        if (pb_server_frame_bound(&s) < rpc__server_frame__get_packed_size(&s))
            over++;
    }
    CHECK_EQ_INT(over, 0);
}

/* A short frame encoded after a long one into the same buffer is the short frame's
 * bytes alone, as encoded into a fresh buffer (nothing of the long one's tail). */
static void test_codec_reused_buffer(void)
{
    struct fl_buf reused, fresh;
    fl_buf_init(&reused);
    fl_buf_init(&fresh);
    char key[8], val[400];
    memset(key, 'k', sizeof key);
    memset(val, 'v', sizeof val);
    int differ = 0;
    for (int it = 0; it < 2000; it++) {
        Rpc__PutRequest put = RPC__PUT_REQUEST__INIT;
        put.key.data = (uint8_t *)key;
        put.key.len = 1 + fl_rng_below(&rng, sizeof key);
        put.value.data = (uint8_t *)val;
        put.value.len = fl_rng_below(&rng, sizeof val);
        Rpc__ClientMsg cm = RPC__CLIENT_MSG__INIT;
        cm.call_id = rnd_u64();
        cm.method = RPC__METHOD__METHOD_PUT;
        cm.req_case = RPC__CLIENT_MSG__REQ_PUT;
        cm.put = &put;
        fl_buf_reset(&reused);
        size_t n = rpc_client_msg_encode(&cm, &reused);
        fl_buf_close(&fresh);
        fl_buf_init(&fresh);
        size_t m = rpc_client_msg_encode(&cm, &fresh);
        if (n != m || reused.len != n || memcmp(reused.data, fresh.data, n) != 0)
            differ++;
        Rpc__ClientMsg *back = rpc_client_msg_decode(NULL, reused.len, reused.data);
        if (!back || back->call_id != cm.call_id || !back->put ||
            back->put->value.len != put.value.len)
            differ++;
        if (back)
            rpc__client_msg__free_unpacked(back, NULL);
        Rpc__PutResponse pr = RPC__PUT_RESPONSE__INIT;
        Rpc__ResponseHeader h = RPC__RESPONSE_HEADER__INIT;
        h.revision = (int64_t)rnd_u64();
        h.member_id = rnd_u64();
        Rpc__ServerMsg sm = RPC__SERVER_MSG__INIT;
        sm.call_id = cm.call_id;
        sm.method = RPC__METHOD__METHOD_PUT;
        sm.header = fl_rng_below(&rng, 2) ? &h : NULL;
        sm.resp_case = RPC__SERVER_MSG__RESP_PUT;
        sm.put = &pr;
        fl_buf_reset(&reused);
        n = rpc_server_msg_encode(&sm, &reused);
        fl_buf_close(&fresh);
        fl_buf_init(&fresh);
        m = rpc_server_msg_encode(&sm, &fresh);
        if (n != m || reused.len != n || memcmp(reused.data, fresh.data, n) != 0)
            differ++;
    }
    CHECK_EQ_INT(differ, 0);
    fl_buf_close(&reused);
    fl_buf_close(&fresh);
}

/* Every request and response type round-trips through the codec under its own case
 * (the oneof member is found by field number through codec.c's table), and a case
 * that names no message field is refused. */
static void codec_every_case(const ProtobufCMessageDescriptor *d, bool client)
{
    int cases = 0, bad = 0;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE || !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        cases++;
        const ProtobufCMessageDescriptor *sd = fd->descriptor;
        ProtobufCMessage *sub = fl_calloc(1, sd->sizeof_message);
        sd->message_init(sub);
        void *msg = fl_calloc(1, d->sizeof_message);
        d->message_init(msg);
        *(ProtobufCMessage **)((char *)msg + fd->offset) = sub;
        *(uint32_t *)((char *)msg + fd->quantifier_offset) = fd->id;
        struct fl_buf b;
        fl_buf_init(&b);
        if (client) {
            ((Rpc__ClientMsg *)msg)->call_id = 1000 + fd->id;
            rpc_client_msg_encode(msg, &b);
            Rpc__ClientMsg *back = rpc_client_msg_decode(NULL, b.len, b.data);
            if (!back || (uint32_t)back->req_case != fd->id || back->call_id != 1000 + fd->id ||
                !*(ProtobufCMessage **)((char *)back + fd->offset) ||
                (*(ProtobufCMessage **)((char *)back + fd->offset))->descriptor != sd)
                bad++;
            if (back)
                rpc__client_msg__free_unpacked(back, NULL);
        } else {
            ((Rpc__ServerMsg *)msg)->call_id = 1000 + fd->id;
            rpc_server_msg_encode(msg, &b);
            Rpc__ServerMsg *back = rpc_server_msg_decode(NULL, b.len, b.data);
            if (!back || (uint32_t)back->resp_case != fd->id || back->call_id != 1000 + fd->id ||
                !*(ProtobufCMessage **)((char *)back + fd->offset) ||
                (*(ProtobufCMessage **)((char *)back + fd->offset))->descriptor != sd)
                bad++;
            if (back)
                rpc__server_msg__free_unpacked(back, NULL);
        }
        fl_buf_close(&b);
        free(msg);
        free(sub);
    }
    CHECK(cases >= 10);
    CHECK_EQ_INT(bad, 0);
    /* a frame naming a field that is no oneof message (1: call_id; 63: none) */
    for (uint32_t number = 1; number < 64; number += 62) {
        Rpc__ClientFrame f = RPC__CLIENT_FRAME__INIT;
        Rpc__ServerFrame g = RPC__SERVER_FRAME__INIT;
        uint8_t buf[64];
        size_t n;
        if (client) {
            f.req = number;
            n = rpc__client_frame__pack(&f, buf);
            CHECK(rpc_client_msg_decode(NULL, n, buf) == NULL);
        } else {
            g.resp = number;
            n = rpc__server_frame__pack(&g, buf);
            CHECK(rpc_server_msg_decode(NULL, n, buf) == NULL);
        }
    }
}

static void test_codec_every_case(void)
{
    codec_every_case(&rpc__client_msg__descriptor, true);
    codec_every_case(&rpc__server_msg__descriptor, false);
}

/* Random values in every scalar, string and bytes field of m (oneof members left unset). */
static void fill_flat(ProtobufCMessage *m, uint8_t *bytes, size_t cap, char *text, size_t text_cap)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    char *base = (char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->label == PROTOBUF_C_LABEL_REPEATED || (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        void *p = base + fd->offset;
        uint64_t v = rnd_u64();
        switch (fd->type) {
        case PROTOBUF_C_TYPE_MESSAGE:
            break;
        case PROTOBUF_C_TYPE_STRING: {
            size_t n = fl_rng_below(&rng, text_cap);
            memset(text, 's', n);
            text[n] = 0;
            *(char **)p = text;
            break;
        }
        case PROTOBUF_C_TYPE_BYTES: {
            ProtobufCBinaryData *b = p;
            b->len = fl_rng_below(&rng, cap);
            b->data = b->len ? bytes : NULL;
            break;
        }
        case PROTOBUF_C_TYPE_BOOL:
            *(protobuf_c_boolean *)p = (protobuf_c_boolean)(v & 1);
            break;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_FIXED64:
        case PROTOBUF_C_TYPE_DOUBLE:
            memcpy(p, &v, 8);
            break;
        default: { /* 32-bit kinds, enums included */
            uint32_t w = (uint32_t)v;
            memcpy(p, &w, 4);
        }
        }
    }
}

/* Every allocation of one random nested message, freed together. */
struct nest_pool {
    void *p[4096];
    size_t n;
};

static void *nest_alloc(struct nest_pool *np, size_t n)
{
    FL_ASSERT(np->n < FL_ARRAY_LEN(np->p));
    void *q = fl_calloc(1, n ? n : 1);
    np->p[np->n++] = q;
    return q;
}

static void nest_free(struct nest_pool *np)
{
    for (size_t i = 0; i < np->n; i++)
        free(np->p[i]);
    np->n = 0;
}

/* m filled at random as fill_flat does, and below depth 3 its sub-messages set and
 * its repeated fields given 0..3 elements each (sub-messages, strings, bytes, or
 * scalars of random bits), oneof members left unset. */
static void fill_nested(struct nest_pool *np, ProtobufCMessage *m, int depth)
{
    static uint8_t bytes[300];
    static char text[40];
    fill_flat(m, bytes, sizeof bytes, text, sizeof text);
    const ProtobufCMessageDescriptor *d = m->descriptor;
    char *base = (char *)m;
    for (unsigned i = 0; i < d->n_fields && depth < 3; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            continue;
        void *p = base + fd->offset;
        if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
            if (fd->type == PROTOBUF_C_TYPE_MESSAGE && fl_rng_below(&rng, 2)) {
                const ProtobufCMessageDescriptor *sd = fd->descriptor;
                ProtobufCMessage *sub = nest_alloc(np, sd->sizeof_message);
                sd->message_init(sub);
                fill_nested(np, sub, depth + 1);
                *(ProtobufCMessage **)p = sub;
            }
            continue;
        }
        size_t count = fl_rng_below(&rng, 4);
        *(size_t *)(base + fd->quantifier_offset) = count;
        if (!count)
            continue;
        switch (fd->type) {
        case PROTOBUF_C_TYPE_MESSAGE: {
            ProtobufCMessage **arr = nest_alloc(np, count * sizeof *arr);
            const ProtobufCMessageDescriptor *sd = fd->descriptor;
            for (size_t k = 0; k < count; k++) {
                arr[k] = nest_alloc(np, sd->sizeof_message);
                sd->message_init(arr[k]);
                fill_nested(np, arr[k], depth + 1);
            }
            *(void **)p = arr;
            break;
        }
        case PROTOBUF_C_TYPE_STRING: {
            char **arr = nest_alloc(np, count * sizeof *arr);
            for (size_t k = 0; k < count; k++) {
                size_t n = fl_rng_below(&rng, 30);
                arr[k] = nest_alloc(np, n + 1);
                memset(arr[k], 't', n);
            }
            *(void **)p = arr;
            break;
        }
        case PROTOBUF_C_TYPE_BYTES: {
            ProtobufCBinaryData *arr = nest_alloc(np, count * sizeof *arr);
            for (size_t k = 0; k < count; k++) {
                arr[k].len = fl_rng_below(&rng, sizeof bytes);
                arr[k].data = arr[k].len ? bytes : NULL;
            }
            *(void **)p = arr;
            break;
        }
        case PROTOBUF_C_TYPE_BOOL: {
            protobuf_c_boolean *arr = nest_alloc(np, count * sizeof *arr);
            for (size_t k = 0; k < count; k++)
                arr[k] = (protobuf_c_boolean)fl_rng_below(&rng, 2);
            *(void **)p = arr;
            break;
        }
        default: { /* 4- or 8-byte elements: random bits fit either */
            uint64_t *arr = nest_alloc(np, count * sizeof *arr);
            for (size_t k = 0; k < count; k++)
                arr[k] = rnd_u64();
            *(void **)p = arr;
        }
        }
    }
}

/* The codec's frame of body m under the oneof member fd, appended to out. */
static size_t codec_encode(bool client, uint64_t call, const ProtobufCFieldDescriptor *fd,
                           ProtobufCMessage *m, struct fl_buf *out)
{
    Rpc__ClientMsg cm = RPC__CLIENT_MSG__INIT;
    Rpc__ServerMsg sm = RPC__SERVER_MSG__INIT;
    *(ProtobufCMessage **)((char *)(client ? (void *)&cm : (void *)&sm) + fd->offset) = m;
    cm.call_id = sm.call_id = call;
    cm.req_case = (Rpc__ClientMsg__ReqCase)fd->id;
    sm.resp_case = (Rpc__ServerMsg__RespCase)fd->id;
    return client ? rpc_client_msg_encode(&cm, out) : rpc_server_msg_encode(&sm, out);
}

/* protobuf-c's own frame around the packed body, appended to ref. */
static void ref_frame_append(bool client, uint64_t call, uint32_t number, const struct fl_buf *body,
                             struct fl_buf *ref)
{
    Rpc__ClientFrame cf = RPC__CLIENT_FRAME__INIT;
    Rpc__ServerFrame sf = RPC__SERVER_FRAME__INIT;
    cf.call_id = sf.call_id = call;
    cf.req = sf.resp = number;
    cf.body.data = sf.body.data = body->data;
    cf.body.len = sf.body.len = body->len;
    const ProtobufCMessage *f = client ? &cf.base : &sf.base;
    fl_buf_reserve(ref, protobuf_c_message_get_packed_size(f));
    ref->len += protobuf_c_message_pack(f, ref->data + ref->len);
}

/* pb_msg_bound holds, and is not 0, for every body kind filled at random with
 * sub-messages and repeated elements (a range response's key-values, a txn's
 * operations: before it, a body with any of them was declined and sized exactly); a
 * message with an unknown field anywhere inside is declined (0). The codec's frame of
 * each such body (packed into the buffer's own memory when over 512 bytes) is byte
 * for byte the frame protobuf-c packs from the body packed alone, appended after what
 * the buffer already held. */
static void nested_bounds_of(const ProtobufCMessageDescriptor *d, bool client, int *over,
                             int *kinds, int *big, int *differ)
{
    struct nest_pool np = {.n = 0};
    struct fl_buf out, ref, body;
    fl_buf_init(&out);
    fl_buf_init(&ref);
    fl_buf_init(&body);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE || !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        const ProtobufCMessageDescriptor *sd = fd->descriptor;
        (*kinds)++;
        for (int it = 0; it < 100; it++) {
            ProtobufCMessage *m = nest_alloc(&np, sd->sizeof_message);
            sd->message_init(m);
            fill_nested(&np, m, 0);
            size_t exact = protobuf_c_message_get_packed_size(m);
            size_t b = pb_msg_bound(m);
            if (b == 0 || b < exact)
                (*over)++;
            *big += exact > 512;
            /* the codec's frame against protobuf-c's, after 3 bytes already held */
            fl_buf_reset(&out);
            fl_buf_append(&out, "abc", 3);
            fl_buf_reset(&body);
            fl_buf_reserve(&body, exact);
            body.len = protobuf_c_message_pack(m, body.data);
            fl_buf_reset(&ref);
            fl_buf_append(&ref, "abc", 3);
            uint64_t call = rnd_u64();
            size_t n = codec_encode(client, call, fd, m, &out);
            ref_frame_append(client, call, fd->id, &body, &ref);
            if (n + 3 != out.len || out.len != ref.len || memcmp(out.data, ref.data, out.len))
                (*differ)++;
            /* an unknown field deep inside: declined */
            ProtobufCMessageUnknownField uf = {.tag = 900,
                                               .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT,
                                               .len = 1,
                                               .data = (uint8_t *)"\x01"};
            ProtobufCMessage *deep = m;
            for (unsigned k = 0; k < sd->n_fields; k++) {
                const ProtobufCFieldDescriptor *f2 = &sd->fields[k];
                if (f2->type == PROTOBUF_C_TYPE_MESSAGE && f2->label != PROTOBUF_C_LABEL_REPEATED &&
                    !(f2->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                    *(ProtobufCMessage **)((char *)m + f2->offset)) {
                    deep = *(ProtobufCMessage **)((char *)m + f2->offset);
                    break;
                }
            }
            deep->n_unknown_fields = 1;
            deep->unknown_fields = &uf;
            if (pb_msg_bound(m) != 0)
                (*over)++;
            deep->n_unknown_fields = 0;
            deep->unknown_fields = NULL;
            nest_free(&np);
        }
    }
    fl_buf_close(&out);
    fl_buf_close(&ref);
    fl_buf_close(&body);
}

static void test_nested_body_bounds(void)
{
    int over = 0, kinds = 0, big = 0, differ = 0;
    nested_bounds_of(&rpc__client_msg__descriptor, true, &over, &kinds, &big, &differ);
    nested_bounds_of(&rpc__server_msg__descriptor, false, &over, &kinds, &big, &differ);
    CHECK_EQ_INT(over, 0);
    CHECK_EQ_INT(differ, 0);
    CHECK(kinds >= 20);
    CHECK(big >= 100); /* the in-buffer path was taken */
}

int main(void)
{
    fl_rng_seed(&rng, fl_test_seed(17));
    static const struct fl_case cases[] = {
        FL_CASE(test_descriptor_shape),    FL_CASE(test_peer_frame_bound),
        FL_CASE(test_unknown_fields),      FL_CASE(test_flat_frame_bounds),
        FL_CASE(test_codec_reused_buffer), FL_CASE(test_codec_every_case),
        FL_CASE(test_nested_body_bounds),
    };
    fl_test_cases(cases, FL_NCASES(cases));
    return fl_test_end();
}
