/*
 * codec.c: ClientMsg / ServerMsg <-> ClientFrame / ServerFrame (see codec.h).
 *
 * The oneof member is found through the message descriptor (its field number is the
 * case value), so one generic path serves every request and response type.
 */
#include "nodes/proto/codec.h"
#include "nodes/proto/pb_bound.h"

/* The oneof member of m in use: its descriptor, or NULL (case 0 or not a message). */
static const ProtobufCFieldDescriptor *oneof_field_lookup(const ProtobufCMessageDescriptor *d,
                                                          uint32_t number)
{
    if (number == 0)
        return NULL;
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, number);
    if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE || !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return NULL;
    return fd;
}

/* The same answers from a table by field number, filled on first use: every frame
 * looked its body's field up twice (encode and decode), a binary search each, 0.9% of
 * bench --only cluster. The table holds only what the descriptor, a constant, says. */
#define ONEOF_TAB_MAX 64
struct oneof_tab {
    const ProtobufCMessageDescriptor *d;
    bool filled;
    const ProtobufCFieldDescriptor *by_number[ONEOF_TAB_MAX];
};
static struct oneof_tab client_tab = {&rpc__client_msg__descriptor, false, {NULL}};
static struct oneof_tab server_tab = {&rpc__server_msg__descriptor, false, {NULL}};

static const ProtobufCFieldDescriptor *oneof_field(const ProtobufCMessageDescriptor *d,
                                                   uint32_t number)
{
    struct oneof_tab *t = d == client_tab.d ? &client_tab : d == server_tab.d ? &server_tab : NULL;
    if (!t || number >= ONEOF_TAB_MAX)
        return oneof_field_lookup(d, number);
    if (!t->filled) {
        for (uint32_t k = 0; k < ONEOF_TAB_MAX; k++)
            t->by_number[k] = oneof_field_lookup(d, k);
        t->filled = true;
    }
    return t->by_number[number];
}

static ProtobufCMessage **member_at(void *msg, const ProtobufCFieldDescriptor *fd)
{
    return (ProtobufCMessage **)((char *)msg + fd->offset);
}

/* A body up to this bound is packed on the stack (the usual put or range). */
#define BODY_STACK 512

/* The frame's bound: the frame holding a body of body_len bytes. */
static size_t frame_bound(const ProtobufCMessage *frame)
{
    return frame->descriptor == &rpc__client_frame__descriptor
               ? pb_client_frame_bound((const Rpc__ClientFrame *)frame)
               : pb_server_frame_bound((const Rpc__ServerFrame *)frame);
}

/* Packs sub, reserved to a bound without a sizing walk (pb_msg_bound), as the
 * frame's body and appends the frame, whose body bytes protobuf-c copies. A small body
 * is packed on the stack; a larger one (a range response's key-values) in out's own
 * memory past the room the frame can take, so neither a malloc nor a copy of the
 * frame's tail is needed, and the frame packed before it never reaches it. */
static size_t body_and_frame_pack(ProtobufCMessage *frame, const ProtobufCMessage *sub,
                                  ProtobufCBinaryData *body, struct fl_buf *out)
{
    size_t bound = 0;
    if (sub) {
        bound = pb_msg_bound(sub);
        if (!bound)
            bound = protobuf_c_message_get_packed_size(sub);
    }
    uint8_t stack[BODY_STACK];
    uint8_t *b = stack;
    size_t room = 0; /* bytes of out reserved for the frame, before the body */
    if (bound > BODY_STACK) {
        body->len = bound; /* the frame's bound with a body of the body's bound */
        room = frame_bound(frame);
        fl_buf_reserve(out, room + bound);
        b = out->data + out->len + room;
    }
    size_t w = sub ? protobuf_c_message_pack(sub, b) : 0;
    FL_ASSERTF(w <= bound, "codec: %s packed to %zu bytes over its bound %zu",
               sub ? sub->descriptor->name : "(none)", w, bound);
    body->data = b;
    body->len = w;
    /* the frame with the w-byte body fits in room: out is not moved under b */
    return pb_pack_append(frame, room ? room : frame_bound(frame), out);
}

/* The part both encoders share: packs msg's oneof member in use (case_value of
 * descriptor d) as the frame's body, names it in *case_out, and appends the frame. */
static size_t frame_with_body(ProtobufCMessage *frame, const ProtobufCMessageDescriptor *d,
                              const void *msg, uint32_t case_value, uint32_t *case_out,
                              ProtobufCBinaryData *body, struct fl_buf *out)
{
    const ProtobufCFieldDescriptor *fd = oneof_field(d, case_value);
    const ProtobufCMessage *sub = fd ? *member_at((void *)msg, fd) : NULL;
    *case_out = fd ? case_value : 0;
    return body_and_frame_pack(frame, sub, body, out);
}

size_t rpc_client_msg_encode(const Rpc__ClientMsg *m, struct fl_buf *out)
{
    Rpc__ClientFrame f = RPC__CLIENT_FRAME__INIT;
    f.call_id = m->call_id;
    f.method = m->method;
    f.require_leader = m->require_leader;
    f.close_stream = m->close_stream;
    f.client_id = m->client_id;
    return frame_with_body(&f.base, &rpc__client_msg__descriptor, m, m->req_case, &f.req, &f.body,
                           out);
}

size_t rpc_server_msg_encode(const Rpc__ServerMsg *m, struct fl_buf *out)
{
    Rpc__ServerFrame f = RPC__SERVER_FRAME__INIT;
    f.call_id = m->call_id;
    f.method = m->method;
    if (m->header) { /* flattened: one message fewer to size, pack and unpack */
        f.has_header = true;
        f.cluster_id = m->header->cluster_id;
        f.member_id = m->header->member_id;
        f.revision = m->header->revision;
        f.raft_term = m->header->raft_term;
    }
    f.error = m->error;
    f.stream_end = m->stream_end;
    return frame_with_body(&f.base, &rpc__server_msg__descriptor, m, m->resp_case, &f.resp, &f.body,
                           out);
}

static void *pb_alloc(ProtobufCAllocator *a, size_t n)
{
    return a ? a->alloc(a->allocator_data, n) : fl_malloc(n);
}

/* Frees a decoded frame that owns nothing but itself and its body bytes (what every
 * frame is once its error, if any, moved out) without protobuf-c's walk over its
 * fields; one with unknown fields takes the general path. */
static void frame_free(ProtobufCAllocator *a, ProtobufCMessage *f, void *body, size_t unknown)
{
    if (unknown) {
        protobuf_c_message_free_unpacked(f, a);
        return;
    }
    if (a) {
        if (body)
            a->free(a->allocator_data, body);
        a->free(a->allocator_data, f);
    } else {
        free(body);
        free(f);
    }
}

/* Unpacks the body named by number into the oneof member of msg. */
static bool body_unpack(ProtobufCAllocator *a, const ProtobufCMessageDescriptor *d, void *msg,
                        uint32_t number, const ProtobufCBinaryData *body, uint32_t *case_out)
{
    if (number == 0)
        return body->len == 0;
    const ProtobufCFieldDescriptor *fd = oneof_field(d, number);
    if (!fd)
        return false;
    ProtobufCMessage *sub = protobuf_c_message_unpack(fd->descriptor, a, body->len, body->data);
    if (!sub)
        return false;
    *member_at(msg, fd) = sub;
    *case_out = number;
    return true;
}

Rpc__ClientMsg *rpc_client_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p)
{
    return rpc_client_msg_decode_body(a, n, p, NULL);
}

Rpc__ClientMsg *rpc_client_msg_decode_body(ProtobufCAllocator *a, size_t n, const uint8_t *p,
                                           ProtobufCBinaryData *body)
{
    FL_ASSERT(!body || a);
    if (body)
        *body = (ProtobufCBinaryData){0, NULL};
    Rpc__ClientMsg *m = pb_alloc(a, sizeof *m); /* first: see codec.h */
    rpc__client_msg__init(m);
    Rpc__ClientFrame *f = rpc__client_frame__unpack(a, n, p);
    uint32_t c = 0;
    bool ok = f && body_unpack(a, &rpc__client_msg__descriptor, m, f->req, &f->body, &c);
    if (ok) {
        m->call_id = f->call_id;
        m->method = f->method;
        m->require_leader = f->require_leader;
        m->close_stream = f->close_stream;
        m->client_id = f->client_id;
        m->req_case = (Rpc__ClientMsg__ReqCase)c;
    }
    if (ok && body && c) {
        *body = f->body; /* left in a's memory with the frame: no free */
    } else if (f) {
        frame_free(a, &f->base, f->body.data, f->base.n_unknown_fields);
    }
    if (!ok) {
        rpc__client_msg__free_unpacked(m, a);
        return NULL;
    }
    return m;
}

Rpc__ServerMsg *rpc_server_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p)
{
    Rpc__ServerMsg *m = pb_alloc(a, sizeof *m); /* first: see codec.h */
    rpc__server_msg__init(m);
    Rpc__ServerFrame *f = rpc__server_frame__unpack(a, n, p);
    uint32_t c = 0;
    bool ok = f && body_unpack(a, &rpc__server_msg__descriptor, m, f->resp, &f->body, &c);
    if (ok && f->has_header) {
        m->header = pb_alloc(a, sizeof *m->header);
        rpc__response_header__init(m->header);
        m->header->cluster_id = f->cluster_id;
        m->header->member_id = f->member_id;
        m->header->revision = f->revision;
        m->header->raft_term = f->raft_term;
    }
    if (ok) {
        m->call_id = f->call_id;
        m->method = f->method;
        m->error = f->error; /* moved: the frame no longer owns it */
        m->stream_end = f->stream_end;
        m->resp_case = (Rpc__ServerMsg__RespCase)c;
        f->error = NULL;
    }
    if (f && f->error)
        rpc__server_frame__free_unpacked(f, a);
    else if (f)
        frame_free(a, &f->base, f->body.data, f->base.n_unknown_fields);
    if (!ok) {
        rpc__server_msg__free_unpacked(m, a);
        return NULL;
    }
    return m;
}

void rpc_ctl_req_init(struct rpc_ctl_req *q, enum rpc_ctl_kind kind, uint64_t arg)
{
    Rpc__ClientMsg *m = &q->msg;
    *m = (Rpc__ClientMsg)RPC__CLIENT_MSG__INIT;
    switch (kind) {
    case RPC_CTL_COMPACT:
        q->r.compact = (Rpc__CompactionRequest)RPC__COMPACTION_REQUEST__INIT;
        q->r.compact.revision = (int64_t)arg;
        m->method = RPC__METHOD__METHOD_COMPACT;
        m->req_case = RPC__CLIENT_MSG__REQ_COMPACT;
        m->compact = &q->r.compact;
        return;
    case RPC_CTL_DEFRAG:
        q->r.defrag = (Rpc__DefragmentRequest)RPC__DEFRAGMENT_REQUEST__INIT;
        m->method = RPC__METHOD__METHOD_DEFRAGMENT;
        m->req_case = RPC__CLIENT_MSG__REQ_DEFRAGMENT;
        m->defragment = &q->r.defrag;
        return;
    case RPC_CTL_ALARM_DISARM:
        q->r.alarm = (Rpc__AlarmRequest)RPC__ALARM_REQUEST__INIT;
        q->r.alarm.action = RPC__ALARM_REQUEST__ALARM_ACTION__DEACTIVATE;
        q->r.alarm.memberid = 0;
        q->r.alarm.alarm = RPC__ALARM_TYPE__NOSPACE;
        m->method = RPC__METHOD__METHOD_ALARM;
        m->req_case = RPC__CLIENT_MSG__REQ_ALARM;
        m->alarm = &q->r.alarm;
        return;
    case RPC_CTL_MOVE_LEADER:
        q->r.move = (Rpc__MoveLeaderRequest)RPC__MOVE_LEADER_REQUEST__INIT;
        q->r.move.targetid = arg;
        m->method = RPC__METHOD__METHOD_MOVE_LEADER;
        m->req_case = RPC__CLIENT_MSG__REQ_MOVE_LEADER;
        m->move_leader = &q->r.move;
        return;
    case RPC_CTL_SNAPSHOT_SAVE:
        q->r.snap = (Rpc__SnapshotRequest)RPC__SNAPSHOT_REQUEST__INIT;
        m->method = RPC__METHOD__METHOD_SNAPSHOT;
        m->req_case = RPC__CLIENT_MSG__REQ_SNAPSHOT;
        m->snapshot = &q->r.snap;
        return;
    case RPC_CTL_HASH_KV:
        q->r.hash = (Rpc__HashKVRequest)RPC__HASH_KVREQUEST__INIT;
        q->r.hash.revision = (int64_t)arg;
        m->method = RPC__METHOD__METHOD_HASH_KV;
        m->req_case = RPC__CLIENT_MSG__REQ_HASH_KV;
        m->hash_kv = &q->r.hash;
        return;
    }
    FL_UNREACHABLE();
}
