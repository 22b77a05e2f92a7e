/*
 * test_explore_directive.c: the fields `faultline explore` adds to the shrink{}
 * directive (scn_directive.c): add_faults and reseed are formatted as one line of Lua,
 * found again at the start of a script (strings only inside an add_faults item), read
 * back from a run's --json "shrink" object exactly as written, copied and counted as
 * asking for something.
 */
#include "harness/lua/scn.h"

#include "fl_test.h"

static void add(struct scn_directive *d, int kind, int node, int64_t at, int64_t len, int on)
{
    struct run_added_fault f = {.at_ns = at, .for_ns = len, .kind = kind, .node = node, .on = on};
    scn_directive_add(d, &f);
}

static void test_format_and_prefix(void)
{
    struct scn_directive d;
    scn_directive_init(&d);
    add(&d, RUN_ADD_KILL, 2, 3 * FL_S, 1500 * FL_MS, 0);
    CHECK(!scn_directive_empty(&d));
    add(&d, RUN_ADD_POWER, 0, 6 * FL_S + 250 * FL_MS, FL_S, run_event_kind_find("append") + 1);
    d.reseeded = true;
    d.reseed = 77;
    struct fl_buf b;
    fl_buf_init(&b);
    scn_directive_format(&d, &b);
    CHECK_EQ_STR(fl_buf_cstr(&b),
                 "shrink{ reseed = 77, add_faults = {{kind = \"kill\", node = 2, at = 3*s, len = "
                 "1500*ms}, {kind = \"power\", node = 0, at = 6250*ms, len = 1*s, on = "
                 "\"append\"}} }");
    size_t n = b.len;
    fl_buf_printf(&b, "; scenario{}\n");
    CHECK_EQ_INT(scn_directive_prefix_len((const char *)b.data, b.len), n + 2);
    /* a string anywhere else is a script's own shrink{ call, not a directive of ours */
    const char *own = "shrink{ add_faults = \"x\" }\n";
    CHECK_EQ_INT(scn_directive_prefix_len(own, strlen(own)), 0);
    struct scn_directive c;
    scn_directive_init(&c);
    scn_directive_copy(&c, &d);
    CHECK_EQ_INT(c.n_add, 2);
    CHECK(c.add != d.add && c.add[1].on == d.add[1].on && c.reseed == 77);
    scn_directive_close(&c);
    scn_directive_close(&d);
    CHECK(d.n_add == 0 && d.add == NULL);
    fl_buf_close(&b);
}

static void test_from_json(void)
{
    json_t *j = json_loads("{\"reseed\": 5, \"skip_faults\": [1000000000000002], \"add_faults\": "
                           "[{\"kind\": \"crash_save\", \"node\": 3, \"at_ns\": 1559000000, "
                           "\"len_ns\": 2442000000}, {\"kind\": \"isolate\", \"node\": 2, "
                           "\"at_ns\": 3375000000, \"len_ns\": 156000000, \"on\": "
                           "\"vote_granted\"}, {\"kind\": \"nope\", \"node\": 1}]}",
                           0, NULL);
    CHECK(j != NULL);
    struct scn_directive d;
    scn_directive_init(&d);
    scn_directive_from_json(&d, j);
    CHECK(d.reseeded && d.reseed == 5);
    CHECK_EQ_INT(d.n_skip, 1);
    CHECK_EQ_INT(d.n_add, 2); /* an unknown kind is left out */
    CHECK_EQ_INT(d.add[0].kind, RUN_ADD_CRASH_SAVE);
    CHECK(d.add[0].at_ns == 1559 * FL_MS && d.add[0].for_ns == 2442 * FL_MS && !d.add[0].on);
    CHECK_EQ_INT(d.add[1].on, run_event_kind_find("vote_granted") + 1);
    struct fl_buf b;
    fl_buf_init(&b);
    scn_directive_format(&d, &b);
    CHECK_EQ_STR(fl_buf_cstr(&b),
                 "shrink{ skip_faults = {1000000000000002}, reseed = 5, add_faults = {{kind = "
                 "\"crash_save\", node = 3, at = 1559*ms, len = 2442*ms}, {kind = \"isolate\", "
                 "node = 2, at = 3375*ms, len = 156*ms, on = \"vote_granted\"}} }");
    fl_buf_close(&b);
    scn_directive_close(&d);
    json_decref(j);
}

int main(void)
{
    FL_TEST(test_format_and_prefix);
    FL_TEST(test_from_json);
    return fl_test_end();
}
