#!/usr/bin/env perl
# regroup-srv-member.pl FILE...: rewrites uses of struct srv_member's fields after they
# were grouped into named parts (issue 15 §4; nodes/server/srv_int.h holds the grouped
# struct, written by hand). Every use keeps its field name under its part's name:
# m->peers -> m->net.peers. Idempotent: run it again over files that gained uses of
# the old names (a rebase) and only those change. Matches `m->FIELD` only (every
# struct srv_member pointer is called m, also as sl->m), and only in nodes/server, the
# one folder that sees the struct (elsewhere m is a Raft or history message); a struct
# of another type reached through a variable called m with a field of the same name
# would be rewritten too, which the compiler then refuses, so nothing passes silently.
#   perl -i scripts/regroup-srv-member.pl $(git grep -l 'm->' -- 'nodes/server/*.c')
use strict;
use warnings;

my %parts = (
    # the Raft core's soft state as the member last saw it, and its clock (member.c)
    soft => [qw(role leader term last_leader_contact_ns last_leader_msg_ns no_leader_ticks
                leader_announced_term tick_timer tick_ns ticks)],
    # the ready loop's persistence: WAL, fsync in flight, its delays (member.c, storage.c)
    disk => [qw(log wal_seq wal_name persisting sent_early drop_msgs ready_synced
                safety_fed pending_wal delay_timer hook_append_index)],
    # what is applied: index, configuration, snapshot, alarms (apply.c, member.c)
    app => [qw(applied applied_since_snap applied_conf snap_index bug_reset_at alarms
               n_alarms)],
    # the cluster's online checkers as this member feeds them (member.c)
    chk => [qw(safety kvh kvh_rev inv_fp inv_fp_set)],
    # peers (peer.c) and client connections (rpc.c)
    net => [qw(peers n_peers cap_peers conns n_conns cap_conns last_refused_ns)],
    # watch and keep-alive streams (rpc_stream.c)
    streams => [qw(watches n_watches cap_watches active_watches watch_calls watch_calls_cap
                   watch_calls_used watch_steps kas n_kas cap_kas watch_held_until_ns
                   watch_hold_timer)],
    # requests waiting for their entry or read index (rpc.c)
    req => [qw(waiters n_waiters cap_waiters next_req_id reads_ready)],
    # maintenance: defrag's block and deferred frames, auto-compaction (rpc_admin.c)
    maint => [qw(blocked_until_ns deferred n_deferred cap_deferred deferred_sock
                 unblock_timer defrag_pending ac last_progress_ns)],
);
my %part_of;
for my $p (keys %parts) { $part_of{$_} = $p for @{$parts{$p}}; }
my $re = join('|', sort { length($b) <=> length($a) } keys %part_of);

while (my $line = <>) {
    $line =~ s/\bm->($re)\b/m->$part_of{$1}.$1/g;
    print $line;
}
