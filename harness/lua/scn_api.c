/*
 * scn_api.c: the names of the scenario surface, for `faultline list api`. Each one is
 * documented with its arguments, defaults and an example in scenarios/README.md (a
 * test checks that), so keep this list, the registrations and the README in step.
 */
#include "harness/lua/scn.h"

const char *const scn_api_names[] = {
    /* time */
    "ns",
    "us",
    "ms",
    "s",
    "now",
    "run",
    "run_until",
    "sleep",
    "spawn",
    /* the cluster */
    "scenario",
    "leader",
    "nodes",
    "others",
    "status",
    "node_events",
    "config",
    /* node faults */
    "kill",
    "restart",
    "pause",
    "resume",
    "skew",
    /* network faults */
    "partition",
    "isolate",
    "heal",
    "heal_all",
    "net",
    "hold",
    "release",
    "clog",
    /* failpoints and bugs */
    "failpoint",
    "bug",
    /* membership */
    "member_add",
    "member_promote",
    "member_remove",
    "start",
    "move_leader",
    /* maintenance */
    "compact",
    "defrag",
    "snapshot_save",
    "copy_db",
    "restore",
    "alarm_disarm",
    "snapshot:size",
    "snapshot:corrupt",
    /* clients */
    "client",
    "client:put",
    "client:get",
    "client:delete",
    "client:txn",
    "client:watch",
    "client:lease_grant",
    "client:lease_revoke",
    "client:lease_ttl",
    "client:lease_keepalive",
    "client:lease_keepalive_stop",
    "client:stats",
    "client:attempts",
    "watch:next",
    "watch:events",
    "watch:cancel",
    "watch:id",
    /* judging */
    "expect",
    "nemesis",
    "swarm",
    "on",
    /* sandbox helpers */
    "sorted_pairs",
    "math.random",
    "math.randomseed",
    "print",
    /* replaying a shrunk run */
    "shrink",
    NULL,
};
