/*
 * run_target_live_check.c: the converge check on --target live. Once the run is
 * healed, the members of the leader's cluster must reach one revision with one KV
 * hash there: their Status answers give the revisions (asked fresh, lvt_refresh), and
 * each member is asked HashKV at that revision on its Status connection, as
 * `etcdctl endpoint hashkv` does on the etcd target. No online corruption check runs
 * during a live run (the simulator compares every shared revision): the converge
 * check's hash_compared counts the members compared at its last look.
 */
#include "harness/run/run_target_live.h"

#include "harness/run/run_converge_hash.h"

#define HASH_KV_MS 5000

static bool call_finished(void *arg)
{
    return ((const struct lctl *)arg)->finished;
}

/* HashKV at rev from slot's member, waited for in place (HASH_KV_MS at most). */
static int hash_kv(void *ud, int slot, int64_t rev, uint32_t *hash, int64_t *compact, char *err,
                   size_t err_len)
{
    struct run_live *L = ud; /* a run_hash_kv_fn (run_converge_hash.h) */
    struct lctl *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->slot = slot;
    c->sync = true;
    c->kind = "hash_kv";
    c->call_id = CTL_CALL_BIT | ++L->ctl_seq;
    c->deadline_s = run_target_wall_s() + HASH_KV_MS / 1000.0;
    fl_buf_init(&c->data);
    RUN_LINK(L->ctls, c);
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_HASH_KV, (uint64_t)rev);
    q.msg.call_id = c->call_id;
    lvt_ctl_send(L, c, &q.msg);
    lv_run_until(&L->loop, call_finished, c, HASH_KV_MS + 2 * POLL_MS);
    int rc = FL_OK;
    if (!c->finished) {
        snprintf(err, err_len, "HashKV: no answer in %d ms", HASH_KV_MS);
        rc = FL_ETIMEOUT;
    } else if (c->code) {
        snprintf(err, err_len, "HashKV: %s", c->text);
        rc = FL_EIO;
    } else {
        *hash = c->hash;
        *compact = c->compact_revision;
    }
    RUN_UNLINK(L->ctls, c);
    fl_buf_close(&c->data);
    free(c);
    return rc;
}

/* The members that count (not removed, started, of the leader's cluster by their last
 * Status) into members; those that answer Status into slots, with their common
 * revision in *rev. False (d's "why" says it) when one does not answer or they differ. */
static bool same_revision(struct run_live *L, int lead, json_t *d, json_t **o, int *slots, int *n,
                          int64_t *rev)
{
    json_t *members = json_object_get(d, "members");
    uint64_t cluster = L->st[lead].cluster_id;
    bool same = true;
    *n = 0;
    *rev = -1;
    for (int i = 1; i <= L->n; i++) {
        const struct lstat *s = &L->st[i];
        const struct lv_proc *p = &L->c.m[i - 1].proc;
        o[i] = NULL;
        if (L->b[i].removed || L->b[i].awaits_start || (s->cluster_id && s->cluster_id != cluster))
            continue;
        o[i] = json_object();
        json_object_set_new(o[i], "node", json_integer(i));
        json_array_append_new(members, o[i]);
        if (!p->running || p->paused || !s->ok) {
            json_object_set_new(o[i], "state", json_string("down or not answering Status"));
            same = false;
            continue;
        }
        json_object_set_new(o[i], "revision", json_integer((json_int_t)s->revision));
        if (*rev >= 0 && s->revision != *rev)
            same = false;
        *rev = s->revision;
        slots[(*n)++] = i;
    }
    if (!same || !*n)
        json_object_set_new(
            d, "why", json_string(*n ? "members at different revisions" : "no member answers"));
    return same && *n;
}

bool lvt_converged(struct run_world *rw, json_t **state)
{
    struct run_live *L = rw->lv;
    json_t *d = json_object();
    *state = d;
    json_object_set_new(d, "members", json_array());
    json_object_set_new(d, "how",
                        json_string("HashKV at the revision every member of the "
                                    "leader's cluster reports in its Status"));
    L->hash_compared = 0;
    int lead = lvt_leader(rw); /* asks every member afresh */
    if (!lead) {
        json_object_set_new(d, "why", json_string("no leader"));
        return false;
    }
    json_t *o[LV_MEMBERS_MAX + 1];
    int slots[LV_MEMBERS_MAX], n;
    int64_t rev;
    if (!same_revision(L, lead, d, o, slots, &n, &rev))
        return false;
    return run_converge_hash(d, slots, n, rev, hash_kv, L, &L->hash_compared);
}

int lvt_checkpoints(struct run_world *rw, const json_t **corruption)
{
    *corruption = NULL; /* no online check on live: see the top of this file */
    return rw->lv ? rw->lv->hash_compared : 0;
}
