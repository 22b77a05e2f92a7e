/*
 * test_run.c: the run driver without Lua (harness/run/run.h): the --json summary has
 * the shape DESIGN §3.9 promises; two worlds run one after the other in one process
 * give the same digest (every global reset at open); fault ordinals are handed out in
 * order and skipped ones leave no trace without moving later ones; a skipped nemesis
 * draw moves neither the time nor the choice of any other tick; bad input is refused.
 */
#include "harness/run/run.h"

#include "fl_test.h"
#include "fl_tmpdir.h"
#include "run_fixture.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/fl-test-run-XXXXXX";
static int db_no;

/* A fresh database path in the scratch directory. */
static const char *db_path(char *buf, size_t n)
{
    snprintf(buf, n, "%s/run%d.db", dir, ++db_no);
    return buf;
}

static struct run_world *open_world(uint64_t seed, const char *db)
{
    struct run_options o = {.scenario = "test_run.c", .seed = seed, .db_path = db};
    return fx_open(&o);
}

static void setup(struct run_world *rw, int rate)
{
    struct fx_config x;
    fx_config_default(&x);
    x.w.rate = rate;
    x.w.watchers = 1;
    fx_setup(rw, &x, RUN_CHECK_ALL);
}

/* A short run with a kill and a restart; returns the summary (caller decrefs). */
static json_t *short_run(uint64_t seed, const char *db, char digest[17])
{
    struct run_world *rw = open_world(seed, db);
    if (!rw)
        return NULL;
    setup(rw, 60);
    run_advance(rw, 2 * FL_S);
    int l = run_leader(rw);
    CHECK(l > 0);
    int victim = l == 1 ? 2 : 1;
    CHECK_EQ_INT(run_kill(rw, victim), FL_OK);
    run_advance(rw, 3 * FL_S);
    CHECK_EQ_INT(run_restart(rw, victim), FL_OK);
    run_advance(rw, 4 * FL_S);
    run_heal_all(rw);
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    snprintf(digest, 17, "%s", res.digest);
    json_t *s = json_incref(res.summary);
    run_result_close(&res);
    run_world_close(rw);
    return s;
}

static void test_summary_shape(void)
{
    char db[256], digest[17];
    json_t *s = short_run(7, db_path(db, sizeof db), digest);
    CHECK(s != NULL);
    if (!s)
        return;
    static const char *const keys[] = {"scenario", "seed",    "digest", "verdict",
                                       "sim_ms",   "wall_ms", "ops",    "checks",
                                       "faults",   "leaders", "clients"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK(json_object_get(s, keys[i]) != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(s, "digest")), digest);
    CHECK_EQ_INT(strlen(digest), 16);
    CHECK_EQ_INT(strspn(digest, "0123456789abcdef"), 16);
    CHECK_EQ_STR(json_string_value(json_object_get(s, "verdict")), "pass");
    CHECK_EQ_INT(json_integer_value(json_object_get(s, "seed")), 7);
    CHECK(json_integer_value(json_object_get(s, "sim_ms")) >=
          4000); /* run_advance takes an absolute time */
    json_t *ops = json_object_get(s, "ops");
    json_int_t total = json_integer_value(json_object_get(ops, "total"));
    CHECK(total > 100); /* 60 ops/s for 4 s */
    CHECK_EQ_INT(total, json_integer_value(json_object_get(ops, "ok")) +
                            json_integer_value(json_object_get(ops, "fail")) +
                            json_integer_value(json_object_get(ops, "unknown")));
    json_t *checks = json_object_get(s, "checks");
    static const char *const names[] = {"linearizability", "watch", "raft_safety", "converge",
                                        "expect"};
    for (size_t i = 0; i < 5; i++) {
        const char *v =
            json_string_value(json_object_get(json_object_get(checks, names[i]), "verdict"));
        CHECK(v && !strcmp(v, "pass"));
    }
    json_t *faults = json_object_get(s, "faults");
    CHECK(json_array_size(faults) >= 3); /* kill, restart, heal_all (+ converge's) */
    json_t *f0 = json_array_get(faults, 0);
    CHECK_EQ_STR(json_string_value(json_object_get(f0, "kind")), "kill");
    CHECK_EQ_INT(json_integer_value(json_object_get(f0, "ordinal")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(f0, "at_ms")), 2000);
    json_t *f2 = json_array_get(faults, 2);
    CHECK_EQ_STR(json_string_value(json_object_get(f2, "kind")), "heal_all");
    CHECK(json_object_get(f2, "ordinal") == NULL); /* heal_all cannot be skipped */
    CHECK_EQ_INT(json_integer_value(json_object_get(s, "fault_ordinals")), 2);
    CHECK(json_array_size(json_object_get(s, "leaders")) >= 1);
    json_t *clients = json_object_get(s, "clients");
    CHECK_EQ_INT(json_array_size(clients), 2);
    static const char *const ck[] = {"id",
                                     "balancer",
                                     "ok",
                                     "fail",
                                     "unknown",
                                     "availability",
                                     "max_stall_ms",
                                     "watch_max_stall_ms",
                                     "connections_opened",
                                     "retries"};
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++)
        CHECK(json_object_get(json_array_get(clients, 0), ck[i]) != NULL);
    json_t *wl = json_object_get(s, "workload");
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "rate")), 60);
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "clients")), 2);
    json_decref(s);
}

static void test_digest_two_worlds(void)
{
    char db[256], a[17], b[17], c[17];
    json_t *s1 = short_run(11, db_path(db, sizeof db), a);
    json_t *s2 = short_run(11, db_path(db, sizeof db), b);
    json_t *s3 = short_run(12, db_path(db, sizeof db), c);
    CHECK_EQ_STR(a, b);
    CHECK(strcmp(a, c) != 0);
    /* the same history too, not only the same hash */
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(s1, "ops"), "total")),
                 json_integer_value(json_object_get(json_object_get(s2, "ops"), "total")));
    json_decref(s1);
    json_decref(s2);
    json_decref(s3);
}

static void test_skip_ordinals(void)
{
    char db[256];
    struct run_world *rw = open_world(3, db_path(db, sizeof db));
    if (!rw)
        return;
    int64_t skip[] = {2, 5};
    run_skip_faults(rw, skip, 2);
    CHECK(run_fault_skipped(rw, 2) && run_fault_skipped(rw, 5) && !run_fault_skipped(rw, 3));
    setup(rw, 0);
    run_advance(rw, 2 * FL_S);
    CHECK_EQ_INT(run_pause(rw, 1), FL_OK);     /* 1 */
    CHECK_EQ_INT(run_pause(rw, 2), FL_OK);     /* 2: skipped */
    CHECK_EQ_INT(run_kill(rw, 99), FL_ENOENT); /* refused: takes no ordinal */
    CHECK_EQ_INT(run_fault_ordinals(rw), 2);
    int b[] = {2, 3};
    CHECK_EQ_INT(run_isolate(rw, 1), FL_OK); /* 3, its partition included */
    CHECK_EQ_INT(run_resume(rw, 1), FL_OK);  /* 4 */
    CHECK_EQ_INT(run_partition(rw, (int[]){1}, 1, b, 2, true), FL_OK); /* 5: skipped */
    CHECK_EQ_INT(run_heal(rw), FL_OK);                                 /* 6 */
    CHECK_EQ_INT(run_fault_ordinals(rw), 6);
    run_summary_set(rw, "note", json_string("x"));
    run_summary_set(rw, "verdict", json_string("not mine")); /* DESIGN keys win */
    struct run_result res;
    run_world_finish(rw, NULL, &res);
    json_t *faults = json_object_get(res.summary, "faults");
    const int64_t want[] = {1, 3, 4, 6};
    const char *kinds[] = {"pause", "partition", "resume", "heal"};
    for (size_t i = 0; i < 4; i++) {
        json_t *f = json_array_get(faults, i);
        CHECK_EQ_INT(json_integer_value(json_object_get(f, "ordinal")), want[i]);
        CHECK_EQ_STR(json_string_value(json_object_get(f, "kind")), kinds[i]);
    }
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(faults, 1), "target")),
                 "n1|n2,n3");
    CHECK_EQ_STR(json_string_value(json_object_get(res.summary, "note")), "x");
    CHECK_EQ_STR(json_string_value(json_object_get(res.summary, "verdict")), "pass");
    run_result_close(&res);
    run_world_close(rw);
}

/* (ordinal, at_ms, kind, target) of each recorded nemesis fault, as one string. */
static void nemesis_run(const int64_t *skip, int n_skip, struct fl_buf *out)
{
    struct run_world *rw = open_world(5, NULL);
    if (!rw)
        return;
    run_skip_faults(rw, skip, n_skip);
    setup(rw, 0);
    run_advance(rw, 1 * FL_S);
    CHECK_EQ_INT(run_nemesis(rw, RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE | RUN_NEMESIS_PARTITION,
                             300 * FL_MS, 0),
                 FL_OK);
    run_advance(rw, 6 * FL_S);
    struct run_result res;
    run_world_finish(rw, NULL, &res);
    json_t *faults = json_object_get(res.summary, "faults");
    for (size_t i = 0; i < json_array_size(faults); i++) {
        json_t *f = json_array_get(faults, i);
        json_int_t o = json_integer_value(json_object_get(f, "ordinal"));
        bool skipped = false;
        for (int k = 0; k < n_skip; k++)
            skipped = skipped || skip[k] == o;
        CHECK(!skipped);
        if (o >= 2)
            fl_buf_printf(out, "%lld@%lld:%s:%s ", (long long)o,
                          (long long)json_integer_value(json_object_get(f, "at_ms")),
                          json_string_value(json_object_get(f, "kind")),
                          json_string_value(json_object_get(f, "target")));
    }
    run_result_close(&res);
    run_world_close(rw);
}

/* Drops the items of ordinal o from a nemesis_run string. */
static void without(const char *s, long long o, struct fl_buf *out)
{
    char tag[32];
    int tl = snprintf(tag, sizeof tag, "%lld@", o);
    for (const char *p = s; *p;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p + 1) : strlen(p);
        if (strncmp(p, tag, (size_t)tl))
            fl_buf_append(out, p, n);
        p += n;
    }
}

static void test_nemesis_ticks_stable(void)
{
    struct fl_buf all, skipped, expect;
    fl_buf_init(&all);
    fl_buf_init(&skipped);
    fl_buf_init(&expect);
    nemesis_run(NULL, 0, &all);
    int64_t skip[] = {4};
    nemesis_run(skip, 1, &skipped);
    without(fl_buf_cstr(&all), 4, &expect);
    CHECK(strstr(fl_buf_cstr(&all), "4@") != NULL);
    CHECK(strstr(fl_buf_cstr(&all), "9@") != NULL); /* ~10 draws in 6 s */
    CHECK_EQ_STR(fl_buf_cstr(&skipped), fl_buf_cstr(&expect));
    /* skipping the nemesis itself: its ticks keep their ordinals but apply nothing */
    struct fl_buf none;
    fl_buf_init(&none);
    int64_t skip_all[] = {1};
    nemesis_run(skip_all, 1, &none);
    CHECK_EQ_STR(fl_buf_cstr(&none), "");
    fl_buf_close(&all);
    fl_buf_close(&skipped);
    fl_buf_close(&expect);
    fl_buf_close(&none);
}

static void test_bad_input(void)
{
    const char *bugs[] = {"no.such_bug"};
    struct run_options o = {.scenario = "x", .seed = 1, .bugs = bugs, .bug_count = 1};
    struct run_world *rw = (struct run_world *)1;
    char err[256] = "";
    CHECK(run_world_open(&rw, &o, err, sizeof err) != FL_OK);
    CHECK(rw == NULL);
    CHECK(strstr(err, "unknown bug 'no.such_bug'") != NULL);
    struct run_options o2 = {.scenario = "x", .seed = 1, .db_path = "/no/such/dir/x.db"};
    CHECK(run_world_open(&rw, &o2, err, sizeof err) != FL_OK);
    CHECK(rw == NULL);
    rw = open_world(1, NULL);
    if (!rw)
        return;
    struct fx_config x;
    fx_config_default(&x);
    snprintf(x.k.balancer, sizeof x.k.balancer, "no_such_balancer");
    CHECK_EQ_INT(run_world_setup(rw, &x.c, &x.k, &x.w, RUN_CHECK_ALL, err, sizeof err), FL_EINVAL);
    CHECK(strstr(err, "unknown balancer 'no_such_balancer'") != NULL);
    CHECK_EQ_INT(run_kill(rw, 9), FL_ENOENT);
    CHECK_EQ_INT(run_skew(rw, 1, 10), FL_ERANGE);
    CHECK_EQ_INT(run_nemesis(rw, 0, FL_S, 0), FL_EINVAL);
    CHECK_EQ_INT(run_nemesis_kind("partition"), RUN_NEMESIS_PARTITION);
    CHECK_EQ_INT(run_nemesis_kind("bogus"), 0);
    run_world_close(rw);
}

int main(void)
{
    static const struct fl_case cases[] = {
        FL_CASE(test_summary_shape), FL_CASE(test_digest_two_worlds), FL_CASE(test_skip_ordinals),
        FL_CASE(test_nemesis_ticks_stable), FL_CASE(test_bad_input)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
