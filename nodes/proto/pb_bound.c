/*
 * pb_bound.c: packed-size bounds of the wire frames (see pb_bound.h).
 */
#include "nodes/proto/pb_bound.h"

#include <string.h>

/* A key (field numbers below 2048: two bytes), a varint or length prefix (ten). */
#define KEY_MAX    ((size_t)2)
#define VARINT_MAX ((size_t)10)
#define SCALAR_MAX (KEY_MAX + VARINT_MAX)
#define LENPFX_MAX (KEY_MAX + VARINT_MAX) /* a length-delimited field's key and length */

/* A packed repeated varint field of n elements. */
static size_t packed_max(size_t n)
{
    return n ? LENPFX_MAX + n * VARINT_MAX : 0;
}

/* The scalar fields of d (non-repeated, not length-delimited) at most. */
static size_t scalars_max(const ProtobufCMessageDescriptor *d)
{
    return d->n_fields * SCALAR_MAX;
}

static size_t snapshot_max(const Raftpb__Snapshot *s, bool *unknown)
{
    size_t n = LENPFX_MAX + scalars_max(&raftpb__snapshot__descriptor) + LENPFX_MAX + s->data.len;
    *unknown |= s->base.n_unknown_fields != 0;
    if (s->conf) {
        *unknown |= s->conf->base.n_unknown_fields != 0;
        n += LENPFX_MAX + packed_max(s->conf->n_voters) + packed_max(s->conf->n_learners);
    }
    return n;
}

static size_t message_max(const Raftpb__Message *m, bool *unknown)
{
    *unknown |= m->base.n_unknown_fields != 0;
    size_t n = LENPFX_MAX + scalars_max(&raftpb__message__descriptor);
    n += packed_max(m->n_entry_index) + packed_max(m->n_entry_term) + packed_max(m->n_entry_type);
    n += m->n_entry_data * LENPFX_MAX;
    for (size_t i = 0; i < m->n_entry_data; i++)
        n += m->entry_data[i].len;
    if (m->snapshot)
        n += snapshot_max(m->snapshot, unknown);
    return n;
}

size_t pb_peer_frame_bound(const Raftpb__PeerFrame *f)
{
    bool unknown = f->base.n_unknown_fields != 0;
    size_t n = scalars_max(&raftpb__peer_frame__descriptor);
    if (f->error)
        n += LENPFX_MAX + strlen(f->error);
    for (size_t i = 0; i < f->n_msgs; i++)
        n += message_max(f->msgs[i], &unknown);
    for (size_t i = 0; i < f->n_lease_renews; i++) {
        unknown |= f->lease_renews[i]->base.n_unknown_fields != 0;
        n += LENPFX_MAX + scalars_max(&raftpb__lease_renew__descriptor);
    }
    return unknown ? raftpb__peer_frame__get_packed_size(f) : n;
}

size_t pb_client_frame_bound(const Rpc__ClientFrame *f)
{
    if (f->base.n_unknown_fields)
        return rpc__client_frame__get_packed_size(f);
    return scalars_max(&rpc__client_frame__descriptor) + LENPFX_MAX + f->body.len;
}

size_t pb_server_frame_bound(const Rpc__ServerFrame *f)
{
    const Rpc__Error *e = f->error;
    if (f->base.n_unknown_fields || (e && e->base.n_unknown_fields))
        return rpc__server_frame__get_packed_size(f);
    size_t n = scalars_max(&rpc__server_frame__descriptor) + LENPFX_MAX + f->body.len;
    if (e) /* the one sub-message: a code and a text */
        n += LENPFX_MAX + scalars_max(&rpc__error__descriptor) +
             (e->message ? LENPFX_MAX + strlen(e->message) : 0);
    return n;
}

size_t pb_msg_bound(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    if (m->n_unknown_fields)
        return 0;
    const char *base = (const char *)m;
    size_t n = 0;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        const char *member = base + fd->offset;
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
            continue; /* another member of its oneof, or none */
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t count = *(const size_t *)(base + fd->quantifier_offset);
            if (!count)
                continue;
            const void *arr = *(void *const *)member;
            switch (fd->type) {
            case PROTOBUF_C_TYPE_MESSAGE:
                for (size_t k = 0; k < count; k++) {
                    size_t b = pb_msg_bound(((ProtobufCMessage *const *)arr)[k]);
                    if (!b)
                        return 0;
                    n += LENPFX_MAX + b;
                }
                break;
            case PROTOBUF_C_TYPE_STRING:
                for (size_t k = 0; k < count; k++) {
                    const char *s = ((char *const *)arr)[k];
                    n += LENPFX_MAX + (s ? strlen(s) : 0);
                }
                break;
            case PROTOBUF_C_TYPE_BYTES:
                for (size_t k = 0; k < count; k++)
                    n += LENPFX_MAX + ((const ProtobufCBinaryData *)arr)[k].len;
                break;
            default: /* packed (one prefix, elements of at most ten bytes) or not (a key
                      * and at most ten bytes each) */
                n += LENPFX_MAX + count * SCALAR_MAX;
            }
            continue;
        }
        switch (fd->type) {
        case PROTOBUF_C_TYPE_MESSAGE: {
            const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)member;
            if (sub) {
                size_t b = pb_msg_bound(sub);
                if (!b)
                    return 0;
                n += LENPFX_MAX + b;
            }
            break;
        }
        case PROTOBUF_C_TYPE_STRING: {
            const char *s = *(char *const *)member;
            n += LENPFX_MAX + (s ? strlen(s) : 0);
            break;
        }
        case PROTOBUF_C_TYPE_BYTES:
            n += LENPFX_MAX + ((const ProtobufCBinaryData *)member)->len;
            break;
        default:
            n += SCALAR_MAX;
        }
    }
    return n ? n : 1;
}

size_t pb_pack_append(const ProtobufCMessage *m, size_t bound, struct fl_buf *out)
{
    fl_buf_reserve(out, bound);
    size_t w = protobuf_c_message_pack(m, out->data + out->len);
    FL_ASSERTF(w <= bound, "pb_pack_append: %s packed to %zu bytes over its bound %zu",
               m->descriptor->name, w, bound);
    out->len += w;
    return w;
}
