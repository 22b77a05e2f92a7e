/*
 * run_converge_hash.c: HashKV of every member at one revision, compared (see
 * run_converge_hash.h): the etcd target asks through etcdctl, the live target on each
 * member's Status connection.
 */
#include "harness/run/run_converge_hash.h"

#include "harness/common/common.h"

/* The object of members that names node slot. */
static json_t *member_entry(json_t *members, int slot)
{
    size_t idx;
    json_t *v;
    json_array_foreach(members, idx, v)
    {
        if (json_integer_value(json_object_get(v, "node")) == slot)
            return v;
    }
    return NULL;
}

bool run_converge_hash(json_t *d, const int *slots, int n, int64_t rev, run_hash_kv_fn *hash_kv,
                       void *ud, int *compared)
{
    json_t *members = json_object_get(d, "members");
    json_object_set_new(d, "revision", json_integer((json_int_t)rev));
    bool ok = true;
    uint32_t hash0 = 0;
    int64_t compact0 = 0;
    int answered = 0;
    for (int k = 0; k < n; k++) {
        uint32_t h = 0;
        int64_t compact = 0;
        char err[300] = "";
        json_t *o = member_entry(members, slots[k]);
        FL_ASSERT(o != NULL);
        if (hash_kv(ud, slots[k], rev, &h, &compact, err, sizeof err)) {
            json_object_set_new(o, "error", json_string(err));
            ok = false;
            continue;
        }
        answered++;
        json_object_set_new(o, "hash", json_integer(h));
        json_object_set_new(o, "compact_revision", json_integer(compact));
        if (answered == 1) {
            hash0 = h;
            compact0 = compact;
        } else if (h != hash0 || compact != compact0) {
            ok = false;
        }
    }
    if (!ok)
        json_object_set_new(d, "why", json_string("HashKV differs (or failed) at one revision"));
    if (compared)
        *compared = answered;
    return ok;
}
