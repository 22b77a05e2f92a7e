#!/usr/bin/env perl
# regroup-run-world.pl FILE...: rewrites uses of struct run_world's fields after they
# were grouped into named parts (issue 15 §4; harness/run/run_int.h holds the grouped
# struct, written by hand). Idempotent: run it again over files that gained uses of
# the old names (a rebase) and only those change. Matches `rw->FIELD` only (every
# struct run_world pointer in the tree is called rw, also as l->rw, S->rw).
#   perl -i scripts/regroup-run-world.pl $(git grep -l 'rw->' -- harness tests)
use strict;
use warnings;

my @map = (
    # workload (run_workload.c)
    ['wl\[', 'wl.client['],
    ['wl_stopped', 'wl.stopped'], ['wl_outstanding', 'wl.outstanding'],
    ['wl_gap_mean_ns', 'wl.gap_mean_ns'],
    ['watcher_ids', 'wl.watcher_ids'], ['watcher_client', 'wl.watcher_client'],
    ['n_watchers', 'wl.n_watchers'], ['watcher_reached', 'wl.watcher_reached'],
    ['churn\[', 'wl.churn['], ['churn_next', 'wl.churn_next'],
    ['churn_timer', 'wl.churn_timer'], ['churn_rng', 'wl.churn_rng'],
    # the plain nemesis (run_fault.c)
    ['nem_kinds', 'nem.kinds'], ['nem_every_ns', 'nem.every_ns'],
    ['nem_until_ns', 'nem.until_ns'], ['nem_timer', 'nem.timer'],
    ['nem_undo_kind', 'nem.undo_kind'], ['nem_undo_node', 'nem.undo_node'],
    ['nem_dry', 'nem.dry'], ['nem_undo_next', 'nem.undo_next'], ['nem_tick', 'nem.tick'],
    ['nem_ordinal', 'nem.ordinal'], ['nem_rng', 'nem.rng'],
    # the swarm's lanes (run_lanes.c)
    ['lanes\[', 'lanes.l['], ['n_lanes', 'lanes.n'], ['lanes_dry', 'lanes.dry'],
    ['lanes_until_ns', 'lanes.until_ns'],
    # the cluster hook: triggers and on() (run_trigger.c)
    ['triggers_armed', 'hook.triggers_armed'], ['on_fn', 'hook.on_fn'],
    ['on_ud', 'hook.on_ud'], ['on_kinds', 'hook.on_kinds'], ['hooked', 'hook.installed'],
    ['firings', 'hook.firings'],
    # fault ordinals (run_fault.c)
    ['n_ordinals', 'ord.n'], ['cur_ordinal', 'ord.cur'], ['cur_skipped', 'ord.cur_skipped'],
    ['skip', 'ord.skip'], ['n_skip', 'ord.n_skip'],
    # summary material (run_finish.c)
    ['extra', 'sum.extra'], ['faults', 'sum.faults'], ['leaders', 'sum.leaders'],
    ['expects', 'sum.expects'], ['expect_total', 'sum.expect_total'],
    ['expect_failed', 'sum.expect_failed'], ['ops_total', 'sum.ops_total'],
    ['ops_ok', 'sum.ops_ok'], ['ops_fail', 'sum.ops_fail'], ['ops_unknown', 'sum.ops_unknown'],
    ['last_commit_rev', 'sum.last_commit_rev'], ['safety_logged', 'sum.safety_logged'],
    # the network's base (run_net.c)
    ['base_link', 'net.base_link'], ['net_changed', 'net.changed'],
    # recording (run_record.c)
    ['rec_request', 'rec.request'], ['rec_response', 'rec.response'],
    ['lease_ends', 'rec.lease_ends'], ['n_lease_ends', 'rec.n_lease_ends'],
    ['cap_lease_ends', 'rec.cap_lease_ends'], ['compactions', 'rec.compactions'],
    ['n_compactions', 'rec.n_compactions'], ['cap_compactions', 'rec.cap_compactions'],
    # node events kept (run_observe.c)
    ['events', 'obs.events'], ['n_events', 'obs.n_events'], ['cap_events', 'obs.cap_events'],
    # the liveness timeline (run_liveness.c)
    ['live_gen', 'live.gen'], ['live_seen', 'live.seen'], ['live_holds', 'live.holds'],
    ['live_clogs', 'live.clogs'], ['live_failpoints', 'live.failpoints'],
    ['live_unknown', 'live.unknown'], ['live_segs', 'live.segs'], ['live_n', 'live.n'],
    ['live_cap', 'live.cap'], ['live_end_ns', 'live.end_ns'],
    # explore (run_added.c, run_coverage.c)
    ['added', 'explore.added'], ['n_added', 'explore.n_added'],
    ['added_waiting', 'explore.added_waiting'], ['fault_seed', 'explore.fault_seed'],
    ['fault_reseeded', 'explore.fault_reseeded'], ['cov', 'explore.cov'],
    # --paranoid (run_paranoid.c)
    ['paranoid', 'par.on'], ['paranoid_events', 'par.events'],
    ['paranoid_violation', 'par.violation'], ['paranoid_raft', 'par.raft'],
);

while (my $line = <>) {
    for my $m (@map) {
        my ($old, $new) = @$m;
        my $end = $old =~ /\\\[$/ ? '' : '\b';
        $line =~ s/\brw->$old$end/rw->$new/g;
    }
    print $line;
}
