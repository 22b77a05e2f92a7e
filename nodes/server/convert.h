/*
 * convert.h: translations between rpc.proto messages and the MVCC core's plain
 * structs (the edge where protobuf-c types stop, STYLE "Layout and boundaries").
 * Everything built here is allocated from a srv_arena and freed at once with it;
 * results keep pointing into store memory, so a response must be packed before the
 * store changes again.
 */
#ifndef FL_SERVER_CONVERT_H
#define FL_SERVER_CONVERT_H

#include "nodes/mvcc/mvcc.h"
#include "nodes/proto/rpc.pb-c.h"
#include "nodes/server/pbarena.h"

/* A bump arena (zero-initialise it: `struct srv_arena a = {0};`). */
struct srv_arena {
    struct srv_pb_arena pb;
};
void *srv_arena_alloc(struct srv_arena *a, size_t n); /* zeroed */
void srv_arena_free(struct srv_arena *a);

void srv_range_from_pb(const Rpc__RangeRequest *in, struct mvcc_range_req *out);
void srv_put_from_pb(const Rpc__PutRequest *in, struct mvcc_put_req *out);
void srv_delete_from_pb(const Rpc__DeleteRangeRequest *in, struct mvcc_delete_req *out);
/* Returns false for a malformed txn (an op with no request). */
bool srv_txn_from_pb(struct srv_arena *a, const Rpc__TxnRequest *in, struct mvcc_txn_req *out);
/* Whether a txn (either branch, nested included) writes: etcd's quota cost > 0. */
bool srv_txn_has_writes(const Rpc__TxnRequest *in);

Rpc__KeyValue *srv_kv_pb(struct srv_arena *a, const struct mvcc_kv *kv);
Rpc__RangeResponse *srv_range_resp_pb(struct srv_arena *a, const struct mvcc_range_result *r);
Rpc__PutResponse *srv_put_resp_pb(struct srv_arena *a, const struct mvcc_put_result *r);
Rpc__DeleteRangeResponse *srv_delete_resp_pb(struct srv_arena *a,
                                             const struct mvcc_delete_result *r);
Rpc__TxnResponse *srv_txn_resp_pb(struct srv_arena *a, const struct mvcc_txn_result *r);
/* A watch response as the rpc message (events' bytes point into r). */
Rpc__WatchResponse *srv_watch_resp_pb(struct srv_arena *a, const struct mvcc_watch_resp *r);

#endif
