/*
 * run_target_etcd_ctl.c: the etcd target's control calls (the scenario's compact,
 * defrag, alarm_disarm, snapshot_save, member_add/remove/promote, move_leader) through
 * etcd's cluster and maintenance API; an answer enters the world at the wall time it came.
 */
#include "harness/run/run_etcd_int.h"

#include "nodes/proto/errors.h"

#include <inttypes.h>

/* ---- control calls ----------------------------------------------------------------------- */

/* MemberAdd answered: start the new member with the cluster MemberAdd lists, give it
 * a bridge at the next slot and every client that endpoint; refused: undo the
 * preparation. */
/* The member prepared at idx will not run (MemberAdd refused, or its start failed). The
 * last slot prepared is given back; one below another add's (two adds in flight, the
 * later one answered first or still out) cannot be, and stays as a removed member that
 * never ran, with a bridge that is down, so the slots above it keep their numbers. */
static void member_add_abandon(struct run_etcd *E, int idx)
{
    if (idx == E->c.n - 1 && !E->c.m[idx].proc.argv) {
        lv_etcd_cluster_member_unprepare(&E->c, idx);
        return;
    }
    run_etcd__bridge_add(E, idx + 1);
    E->b[idx + 1].removed = true;
    sim_proc_kill(E->rw->w, E->b[idx + 1].proc);
    E->n = FL_MAX(E->n, idx + 1);
}

static void member_add_finish(struct run_etcd *E, struct ectl *c)
{
    int idx = c->add_idx;
    if (c->code != 0 || !c->resp) {
        member_add_abandon(E, idx);
        return;
    }
    const json_t *me = json_object_get(c->resp, "member"),
                 *ms = json_object_get(c->resp, "members");
    uint64_t id = (uint64_t)ec_i64(me, "ID");
    struct fl_buf cluster, err;
    fl_buf_init(&cluster);
    fl_buf_init(&err);
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m)
    {
        uint64_t mid = (uint64_t)ec_i64(m, "ID");
        const char *name = json_string_value(json_object_get(m, "name"));
        char unstarted[40];
        if (mid == id) {
            name = E->c.m[idx].name;
        } else if (!name || !name[0]) {
            /* added but not started yet (a member names itself when it publishes): the
             * new member's --initial-cluster must still list it, for etcd checks the
             * count ("member count is unequal": it exits) and matches members by peer
             * URL, not by name; etcdctl member add lists it with its empty name */
            snprintf(unstarted, sizeof unstarted, "unstarted-%016" PRIx64, mid);
            name = unstarted;
        }
        const char *url = json_string_value(json_array_get(json_object_get(m, "peerURLs"), 0));
        if (name && url)
            fl_buf_printf(&cluster, "%s%s=%s", cluster.len ? "," : "", name, url);
    }
    if (lv_etcd_cluster_member_start(&E->c, idx, E->bin, id, fl_buf_cstr(&cluster), E->flags,
                                     &err)) {
        c->code = RPC_CODE_UNKNOWN;
        snprintf(c->text, sizeof c->text, "target etcd: %s", fl_buf_cstr(&err));
        member_add_abandon(E, idx);
    } else {
        /* not E->c.n: a slot prepared for another add still out is not a member */
        E->n = FL_MAX(E->n, idx + 1);
        run_etcd__bridge_add(E, idx + 1);
        c->node = idx + 1;
    }
    fl_buf_close(&cluster);
    fl_buf_close(&err);
}

static void ectl_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct ectl *c = ctx;
    struct run_etcd *E = c->E;
    RUN_UNLINK(E->ctls, c);
    if (c->add_idx >= 0)
        member_add_finish(E, c);
    if (c->removing && c->code == 0)
        E->b[c->removing].removed = true;
    /* what the call changed (leader, membership, learner) is read back before the
     * scenario goes on: its next status() or leader() sees etcd as it is now */
    run_etcd__refresh(E);
    struct run_ctl_result r = {.code = c->code,
                               .text = c->text,
                               .node = c->node,
                               .revision = c->revision,
                               .data = c->code == 0 ? c->data.data : NULL,
                               .len = c->code == 0 ? c->data.len : 0};
    if (c->done)
        c->done(c->ud, &r);
    json_decref(c->resp);
    fl_buf_close(&c->data);
    free(c);
}

/* A finished control call enters the world at the wall time it finished. */
static void ectl_enter(struct run_etcd *E, struct ectl *c)
{
    sim_schedule_at(E->rw->w, run_pacer_arrival(&E->pace, E->rw->w), ectl_fire, c);
}

static void on_ctl_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (r->http_status == 200) {
        c->code = 0;
        c->revision = r->resp ? ec_i64(json_object_get(r->resp, "header"), "revision") : 0;
        c->resp = r->resp ? json_incref(r->resp) : NULL;
    } else {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Error e;
        run_etcd__reply_error(&msg, &e, r);
        c->code = e.code;
        snprintf(c->text, sizeof c->text, "%s", e.message);
    }
    ectl_enter(E, c);
}

/* alarm_disarm: the list (GET) came, or one DEACTIVATE finished: the next, or done. */
static void on_disarm_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (r->http_status != 200) {
        on_ctl_reply(r, c);
        return;
    }
    if (!c->resp) /* the GET's answer: the alarms to deactivate */
        c->resp = json_incref(json_object_get(r->resp, "alarms") ? r->resp : json_object());
    const json_t *list = json_object_get(c->resp, "alarms");
    if (c->disarm_next >= json_array_size(list)) {
        json_decref(c->resp);
        c->resp = NULL;
        on_ctl_reply(r, c);
        return;
    }
    const json_t *a = json_array_get(list, c->disarm_next++);
    json_t *body = json_object();
    json_object_set_new(body, "action", json_string("DEACTIVATE"));
    ec_set_u64(body, "memberID", lv_json_u64(a, "memberID"));
    const char *t = json_string_value(json_object_get(a, "alarm"));
    json_object_set_new(body, "alarm", json_string(t ? t : "NONE"));
    lv_etcd_call(&E->c.client, E->c.m[c->disarm_at - 1].client_url, "/v3/maintenance/alarm", body,
                 CALL_TIMEOUT_MS, on_disarm_reply, c);
}

/* One message of a Maintenance Snapshot stream ({"result":{"blob":..}} or
 * {"error":{..}}), or its end (m NULL). */
static void on_snapshot_msg(json_t *m, const struct lv_etcd_reply *end, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (m) {
        const json_t *r = json_object_get(m, "result"), *err = json_object_get(m, "error");
        if (json_is_object(err) && c->code == 0) {
            c->code = (int)ec_i64(err, "grpc_code");
            if (c->code == 0)
                c->code = RPC_CODE_UNKNOWN;
            const char *t = json_string_value(json_object_get(err, "message"));
            snprintf(c->text, sizeof c->text, "%s", t ? t : "snapshot stream error");
        } else if (r) {
            struct fl_buf blob;
            fl_buf_init(&blob);
            if (lv_b64_decode(json_object_get(r, "blob"), &blob)) {
                fl_buf_append(&c->data, blob.data, blob.len);
            } else if (c->code == 0) {
                c->code = RPC_CODE_INTERNAL;
                snprintf(c->text, sizeof c->text, "snapshot: a blob that is not base64");
            }
            fl_buf_close(&blob);
        }
        if (r)
            c->revision = ec_i64(json_object_get(r, "header"), "revision");
        return;
    }
    c->stream = NULL; /* freed by the transport after this call */
    if (c->code == 0 && (end->http_status != 200 || end->error[0])) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Error e;
        run_etcd__reply_error(&msg, &e, end);
        c->code = e.code ? e.code : RPC_CODE_UNAVAILABLE;
        snprintf(c->text, sizeof c->text, "%s", e.message);
    }
    ectl_enter(E, c);
}

/* member_add: a new member prepared (ports, proxies, directory) and MemberAdd's body
 * naming its peer URL; false when none can be prepared (the call is answered already). */
static bool ctl_member_add(struct run_etcd *E, struct ectl *c, int64_t learner, json_t *body)
{
    struct fl_buf err;
    fl_buf_init(&err);
    if (lv_etcd_cluster_member_prepare(&E->c, &E->wd, &c->add_idx, &err)) {
        c->add_idx = -1;
        c->code = RPC_CODE_RESOURCE_EXHAUSTED;
        snprintf(c->text, sizeof c->text, "target etcd: %s", fl_buf_cstr(&err));
        fl_buf_close(&err);
        sim_schedule(E->rw->w, 0, ectl_fire, c);
        return false;
    }
    fl_buf_close(&err);
    json_t *urls = json_array();
    json_array_append_new(urls, json_string(E->c.m[c->add_idx].peer_url));
    json_object_set_new(body, "peerURLs", urls);
    if (learner)
        json_object_set_new(body, "isLearner", json_true());
    return true;
}

/* Where a control call goes: the member named, else the leader, else the first member
 * that runs. */
static int ctl_where(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    int at = node ? node : run_etcd_leader(rw);
    for (int i = 1; !at && i <= E->n; i++)
        if (E->c.m[i - 1].proc.running)
            at = i;
    return at ? at : 1;
}

void run_etcd_ctl(struct run_world *rw, const char *kind, int node, int64_t arg,
                  run_etcd_ctl_fn *done, void *ud)
{
    struct run_etcd *E = rw->etcd;
    struct ectl *c = fl_calloc(1, sizeof *c);
    c->E = E;
    c->done = done;
    c->ud = ud;
    c->add_idx = -1;
    RUN_LINK(E->ctls, c);
    int at = ctl_where(rw, node);
    json_t *body = json_object();
    const char *path;
    if (!strcmp(kind, "snapshot_save")) {
        fl_buf_init(&c->data);
        c->stream =
            lv_etcd_stream_open(&E->c.client, E->c.m[at - 1].client_url, "/v3/maintenance/snapshot",
                                body, SNAPSHOT_TIMEOUT_MS, on_snapshot_msg, c);
        return;
    }
    if (!strcmp(kind, "compact")) {
        path = "/v3/kv/compaction";
        ec_set_i64(body, "revision", arg);
    } else if (!strcmp(kind, "defrag")) {
        path = "/v3/maintenance/defragment";
    } else if (!strcmp(kind, "alarm_disarm")) {
        /* as etcdctl alarm disarm: list the alarms, then deactivate each (member, alarm)
         * (a DEACTIVATE names one member's alarm: memberID 0 deactivates nothing) */
        c->disarm_at = at;
        json_object_set_new(body, "action", json_string("GET"));
        lv_etcd_call(&E->c.client, E->c.m[at - 1].client_url, "/v3/maintenance/alarm", body,
                     CALL_TIMEOUT_MS, on_disarm_reply, c);
        return;
    } else if (!strcmp(kind, "member_add")) {
        if (!ctl_member_add(E, c, arg, body)) {
            json_decref(body);
            return;
        }
        path = "/v3/cluster/member/add";
    } else if (!strcmp(kind, "member_remove") || !strcmp(kind, "member_promote")) {
        path = !strcmp(kind, "member_remove") ? "/v3/cluster/member/remove"
                                              : "/v3/cluster/member/promote";
        if (!strcmp(kind, "member_remove") && arg >= 1 && arg <= E->n)
            c->removing = (int)arg;
        ec_set_u64(body, "ID", arg >= 1 && arg <= E->n ? E->c.m[arg - 1].id : 0);
        if (at == arg)
            at = run_etcd_leader(rw) ? run_etcd_leader(rw) : at;
    } else {
        path = "/v3/maintenance/transfer-leadership";
        ec_set_u64(body, "targetID", arg >= 1 && arg <= E->n ? E->c.m[arg - 1].id : 0);
        at = run_etcd_leader(rw) ? run_etcd_leader(rw) : at;
    }
    lv_etcd_call(&E->c.client, E->c.m[at - 1].client_url, path, body, CALL_TIMEOUT_MS, on_ctl_reply,
                 c);
}
