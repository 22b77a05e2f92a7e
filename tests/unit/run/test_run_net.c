/*
 * test_run_net.c: network faults on clients in the run driver (harness/run/run_net.c,
 * issue 14 §2). A client endpoint cuts exactly the links between its process and the
 * members named, never a member-member link; unknown clients and an endpoint on both
 * sides are refused without taking an ordinal; targets name clients "cN"; per-link
 * net parameters are set on the named links only, and the "network changed" state the
 * liveness check reads follows them back to the base; heal and heal_all undo them.
 */
#include "harness/run/run_int.h"

#include "fl_test.h"
#include "run_fixture.h"

/* The one world the cases share, in order (each leaves the network healed). */
static struct run_world *rw;

static struct run_world *open_world(void)
{
    struct run_options o = {.scenario = "test_run_net.c", .seed = 11};
    struct run_world *w = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x); /* 2 clients */
    fx_setup(w, &x, RUN_CHECK_ALL);
    run_advance(w, 2 * FL_S);
    return w;
}

static int cproc(int i)
{
    return kvc_client_proc(run_client(rw, i));
}

static int nproc(int n)
{
    return run_node_proc(rw, n);
}

static const char *target_of(size_t i)
{
    return json_string_value(json_object_get(json_array_get(rw->sum.faults, i), "target"));
}

static void test_refused(void)
{
    int c1 = RUN_EP_CLIENT(1), c3 = RUN_EP_CLIENT(3), n1 = 1;
    int64_t before = run_fault_ordinals(rw);
    CHECK(run_endpoint_exists(rw, c1) && !run_endpoint_exists(rw, c3));
    CHECK_EQ_INT(run_partition(rw, &c3, 1, &n1, 1, false), FL_ENOENT);
    CHECK_EQ_INT(run_partition(rw, &c1, 1, &c1, 1, false), FL_EINVAL);
    CHECK_EQ_INT(run_isolate(rw, c3), FL_ENOENT);
    CHECK_EQ_INT(run_hold(rw, c3, 0), FL_ENOENT);
    CHECK_EQ_INT(run_clog(rw, 0, c3, true), FL_ENOENT);
    CHECK_EQ_INT(run_net_links(rw, &c3, 1, NULL, 0, false, 0, 0, 5), FL_ENOENT);
    CHECK_EQ_INT(run_net_links(rw, NULL, 0, NULL, 0, false, 0, 0, 5), FL_EINVAL);
    CHECK_EQ_INT(run_net_links(rw, &c1, 1, NULL, 0, false, -1, 0, 5), FL_ERANGE);
    CHECK_EQ_INT(run_fault_ordinals(rw), before); /* nothing applied, nothing numbered */
}

static void test_cuts(void)
{
    struct sim_world *w = rw->w;
    size_t row = json_array_size(rw->sum.faults);
    int a[] = {RUN_EP_CLIENT(1)}, b[] = {2};
    CHECK_EQ_INT(run_partition(rw, a, 1, b, 1, false), FL_OK);
    CHECK_EQ_STR(target_of(row), "c1|n2");
    CHECK(net_blocked(w, cproc(1), nproc(2)) && net_blocked(w, nproc(2), cproc(1)));
    CHECK(!net_blocked(w, cproc(1), nproc(1)) && !net_blocked(w, cproc(2), nproc(2)));
    CHECK_EQ_INT(run_heal(rw), FL_OK);
    CHECK(!net_blocked(w, cproc(1), nproc(2)));
    /* a client and a member on one side: the member's links to the other side are cut too,
     * the links inside the side are not */
    int s1[] = {RUN_EP_CLIENT(2), 1}, s2[] = {2, 3};
    CHECK_EQ_INT(run_partition(rw, s1, 2, s2, 2, true), FL_OK);
    CHECK_EQ_STR(target_of(row + 2), "c2,n1|n2,n3");
    CHECK(net_blocked(w, cproc(2), nproc(3)) && net_blocked(w, nproc(1), nproc(2)));
    CHECK(!net_blocked(w, nproc(3), cproc(2))); /* oneway */
    CHECK(!net_blocked(w, cproc(2), nproc(1)));
    run_heal(rw);
    /* isolating a client cuts it from every member and leaves the members together */
    CHECK_EQ_INT(run_isolate(rw, RUN_EP_CLIENT(2)), FL_OK);
    CHECK_EQ_STR(target_of(row + 4), "c2|n1,n2,n3");
    for (int n = 1; n <= 3; n++)
        CHECK(net_blocked(w, cproc(2), nproc(n)) && net_blocked(w, nproc(n), cproc(2)));
    CHECK(!net_blocked(w, nproc(1), nproc(2)) && !net_blocked(w, cproc(1), nproc(1)));
    run_heal(rw);
    CHECK_EQ_INT(run_hold(rw, 3, RUN_EP_CLIENT(1)), FL_OK);
    CHECK_EQ_STR(target_of(row + 6), "n3>c1");
    CHECK_EQ_INT(run_clog(rw, RUN_EP_CLIENT(1), 0, true), FL_OK);
    CHECK_EQ_STR(target_of(row + 7), "c1>*");
    CHECK_EQ_INT(run_heal_all(rw), FL_OK);
}

static void test_net_links(void)
{
    struct sim_world *w = rw->w;
    struct net_link l;
    int c1 = RUN_EP_CLIENT(1), n2 = 2;
    CHECK(!rw->net.changed);
    CHECK_EQ_INT(run_net_links(rw, &c1, 1, &n2, 1, true, 0, 0, 40), FL_OK);
    CHECK(rw->net.changed);
    net_link_get(w, cproc(1), nproc(2), &l);
    CHECK_EQ_INT(l.latency_ns, rw->net.base_link.latency_ns + 40 * FL_MS);
    net_link_get(w, nproc(2), cproc(1), &l); /* oneway: the way back is untouched */
    CHECK_EQ_INT(l.latency_ns, rw->net.base_link.latency_ns);
    net_link_get(w, nproc(1), nproc(2), &l);
    CHECK_EQ_INT(l.latency_ns, rw->net.base_link.latency_ns);
    /* every link of client 1, both ways */
    CHECK_EQ_INT(run_net_links(rw, &c1, 1, NULL, 0, false, 1000, 0, 0), FL_OK);
    net_link_get(w, nproc(3), cproc(1), &l);
    CHECK_EQ_INT(l.loss_ppm, 1000);
    net_link_get(w, cproc(1), nproc(2), &l); /* replaced: loss, no delay */
    CHECK(l.loss_ppm == 1000 && l.latency_ns == rw->net.base_link.latency_ns);
    net_link_get(w, cproc(2), nproc(3), &l);
    CHECK_EQ_INT(l.loss_ppm, 0);
    CHECK(rw->net.changed);
    /* zeros put them back to the base: the network is as it was */
    CHECK_EQ_INT(run_net_links(rw, &c1, 1, NULL, 0, false, 0, 0, 0), FL_OK);
    CHECK(!rw->net.changed);
    /* heal_all resets what was set on some links */
    CHECK_EQ_INT(run_net_links(rw, NULL, 0, &c1, 1, false, 0, 0, 10), FL_OK);
    CHECK(rw->net.changed);
    run_heal_all(rw);
    CHECK(!rw->net.changed);
    net_link_get(w, nproc(1), cproc(1), &l);
    CHECK_EQ_INT(l.latency_ns, rw->net.base_link.latency_ns);
}

int main(void)
{
    rw = open_world();
    if (!rw)
        return fl_test_end();
    FL_TEST(test_refused);
    FL_TEST(test_cuts);
    FL_TEST(test_net_links);
    run_advance(rw, 2 * FL_S);
    struct run_result res;
    run_world_finish(rw, NULL, &res);
    /* no database: the history checkers do not judge; the cluster's do */
    json_t *checks = json_object_get(res.summary, "checks");
    CHECK_EQ_STR(
        json_string_value(json_object_get(json_object_get(checks, "raft_safety"), "verdict")),
        "pass");
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(checks, "converge"), "verdict")),
                 "pass");
    run_result_close(&res);
    run_world_close(rw);
    return fl_test_end();
}
