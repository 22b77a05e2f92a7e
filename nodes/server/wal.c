/*
 * wal.c: WAL record encoding and replay (see wal.h). No I/O here.
 */
#include "nodes/server/wal.h"

#include <endian.h>
#include <string.h>

void srv_put_u32(struct fl_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fl_buf_append(b, x, 4);
}

void srv_put_u64(struct fl_buf *b, uint64_t v)
{
    srv_put_u32(b, (uint32_t)v);
    srv_put_u32(b, (uint32_t)(v >> 32));
}

void srv_put_bytes(struct fl_buf *b, const void *p, size_t n)
{
    FL_ASSERT(n <= UINT32_MAX);
    srv_put_u32(b, (uint32_t)n);
    if (n)
        fl_buf_append(b, p, n);
}

uint32_t srv_get_u32(struct srv_reader *r)
{
    if (r->bad || r->n - r->off < 4) {
        r->bad = true;
        return 0;
    }
    const uint8_t *q = r->p + r->off;
    r->off += 4;
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

uint64_t srv_get_u64(struct srv_reader *r)
{
    uint64_t lo = srv_get_u32(r);
    uint64_t hi = srv_get_u32(r);
    return lo | hi << 32;
}

size_t srv_get_bytes(struct srv_reader *r, const uint8_t **out)
{
    size_t n = srv_get_u32(r);
    if (r->bad || r->n - r->off < n) {
        r->bad = true;
        *out = NULL;
        return 0;
    }
    *out = r->p + r->off;
    r->off += n;
    return n;
}

/* Records are framed in place: wal_begin reserves the 9-byte header, the payload is
 * appended, wal_end fills length and CRC (over type and payload, contiguous). */
static size_t wal_begin(struct fl_buf *b, uint8_t type)
{
    size_t start = b->len;
    uint8_t hdr[9] = {0, 0, 0, 0, 0, 0, 0, 0, type};
    fl_buf_append(b, hdr, sizeof hdr);
    return start;
}

static void wal_end(struct fl_buf *b, size_t start)
{
    size_t len = b->len - start - 9;
    FL_ASSERT(len <= UINT32_MAX);
    uint32_t crc = fl_crc32c(0, b->data + start + 8, len + 1);
    uint8_t *h = b->data + start;
    for (int i = 0; i < 4; i++) {
        h[i] = (uint8_t)(len >> (8 * i));
        h[4 + i] = (uint8_t)(crc >> (8 * i));
    }
}

void srv_wal_put_meta(struct fl_buf *b, uint64_t member_id, uint64_t cluster_id)
{
    size_t st = wal_begin(b, SRV_WAL_META);
    srv_put_u64(b, member_id);
    srv_put_u64(b, cluster_id);
    wal_end(b, st);
}

void srv_wal_put_hardstate(struct fl_buf *b, uint64_t term, uint64_t vote, uint64_t commit)
{
    size_t st = wal_begin(b, SRV_WAL_HARDSTATE);
    srv_put_u64(b, term);
    srv_put_u64(b, vote);
    srv_put_u64(b, commit);
    wal_end(b, st);
}

/* Little-endian stores, whole: written as byte loops gcc did not merge them, and they
 * were 48 M of the 62 M instructions srv_wal_put_entry itself took in `bench --only
 * cluster` (about 180 per entry). */
static uint8_t *le_put64(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
    return p + 8;
}

static uint8_t *le_put32(uint8_t *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
    return p + 4;
}

/* The hot record (one per entry per member): written in place after one reservation,
 * byte for byte what wal_begin, srv_put_* and wal_end would write. */
void srv_wal_put_entry(struct fl_buf *b, uint64_t term, uint64_t index, uint32_t type,
                       const void *data, size_t len)
{
    FL_ASSERT(len <= UINT32_MAX - 24);
    size_t payload = 8 + 8 + 4 + 4 + len;
    fl_buf_reserve(b, 9 + payload);
    uint8_t *h = b->data + b->len, *p = h + 8;
    *p++ = SRV_WAL_ENTRY;
    p = le_put64(p, term);
    p = le_put64(p, index);
    p = le_put32(p, type);
    p = le_put32(p, (uint32_t)len);
    if (len)
        memcpy(p, data, len);
    uint32_t crc = fl_crc32c(0, h + 8, payload + 1);
    le_put32(le_put32(h, (uint32_t)payload), crc);
    b->len += 9 + payload;
}

void srv_wal_put_snapshot(struct fl_buf *b, uint64_t index, uint64_t term, bool reset)
{
    size_t st = wal_begin(b, SRV_WAL_SNAPSHOT);
    srv_put_u64(b, index);
    srv_put_u64(b, term);
    srv_put_u32(b, reset ? 1u : 0u);
    wal_end(b, st);
}

void srv_wal_state_init(struct srv_wal_state *st)
{
    memset(st, 0, sizeof *st);
}

void srv_wal_state_drop_data(struct srv_wal_state *st)
{
    for (size_t i = 0; i < st->n_entries; i++) {
        free(st->entries[i].data);
        st->entries[i].data = NULL;
    }
    st->no_data = true;
}

static void wal_drop_from(struct srv_wal_state *st, size_t pos)
{
    for (size_t i = pos; i < st->n_entries; i++)
        free(st->entries[i].data);
    if (pos < st->n_entries)
        st->n_entries = pos;
}

void srv_wal_state_close(struct srv_wal_state *st)
{
    wal_drop_from(st, 0);
    free(st->entries);
    memset(st, 0, sizeof *st);
}

void srv_wal_state_compact(struct srv_wal_state *st, uint64_t upto)
{
    size_t k = 0;
    while (k < st->n_entries && st->entries[k].index <= upto) {
        free(st->entries[k].data);
        k++;
    }
    if (k == 0)
        return;
    memmove(st->entries, st->entries + k, (st->n_entries - k) * sizeof *st->entries);
    st->n_entries -= k;
}

/* Adds one entry with the Raft log rules: a match is a no-op, a conflict truncates,
 * a gap (an entry after a missing one, possible only after a snapshot) restarts the
 * log at this entry. */
void srv_wal_state_reset(struct srv_wal_state *st)
{
    wal_drop_from(st, 0);
}

void srv_wal_state_append(struct srv_wal_state *st, uint64_t term, uint64_t index, uint32_t type,
                          const uint8_t *data, size_t len)
{
    if (st->n_entries) {
        uint64_t first = st->entries[0].index;
        uint64_t last = st->entries[st->n_entries - 1].index;
        if (index >= first && index <= last) {
            struct srv_wal_entry *e = &st->entries[index - first];
            FL_ASSERT(e->index == index);
            if (e->term == term)
                return;
            wal_drop_from(st, (size_t)(index - first));
        } else if (index < first || index > last + 1) {
            wal_drop_from(st, 0);
        }
    }
    FL_GROW(st->entries, st->cap_entries, st->n_entries + 1, 64);
    struct srv_wal_entry *e = &st->entries[st->n_entries++];
    e->term = term;
    e->index = index;
    e->type = type;
    e->len = len;
    e->data = len && !st->no_data ? fl_memdup(data, len) : NULL;
}

static bool wal_apply(struct srv_wal_state *st, uint8_t type, struct srv_reader *r)
{
    switch (type) {
    case SRV_WAL_META:
        st->member_id = srv_get_u64(r);
        st->cluster_id = srv_get_u64(r);
        break;
    case SRV_WAL_HARDSTATE:
        st->term = srv_get_u64(r);
        st->vote = srv_get_u64(r);
        st->commit = srv_get_u64(r);
        break;
    case SRV_WAL_ENTRY: {
        uint64_t term = srv_get_u64(r), index = srv_get_u64(r);
        uint32_t etype = srv_get_u32(r);
        const uint8_t *d;
        size_t len = srv_get_bytes(r, &d);
        if (r->bad)
            return false;
        srv_wal_state_append(st, term, index, etype, d, len);
        break;
    }
    case SRV_WAL_SNAPSHOT: {
        uint64_t idx = srv_get_u64(r), term = srv_get_u64(r);
        bool reset = srv_get_u32(r) != 0;
        if (!r->bad && idx >= st->snap_index) {
            st->snap_index = idx;
            st->snap_term = term;
        }
        if (!r->bad && reset)
            wal_drop_from(st, 0);
        break;
    }
    default:
        return false;
    }
    return !r->bad;
}

int srv_wal_replay(struct srv_wal_state *st, const uint8_t *p, size_t n)
{
    size_t off = 0;
    int count = 0;
    st->torn = false;
    while (off < n) {
        if (n - off < 9) {
            st->torn = true;
            break;
        }
        struct srv_reader hr = {p + off, 9, 0, false};
        uint32_t len = srv_get_u32(&hr), crc = srv_get_u32(&hr);
        uint8_t type = p[off + 8];
        if (n - off - 9 < len) {
            st->torn = true;
            break;
        }
        uint32_t got = fl_crc32c(fl_crc32c(0, &type, 1), p + off + 9, len);
        struct srv_reader r = {p + off + 9, len, 0, false};
        if (got != crc || !wal_apply(st, type, &r)) {
            st->torn = true;
            break;
        }
        off += 9 + (size_t)len;
        count++;
    }
    st->valid_bytes = off;
    st->records += count;
    return count;
}
