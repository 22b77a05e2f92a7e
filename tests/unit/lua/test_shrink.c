/*
 * test_shrink.c: the text side of shrinking (scn_directive.c) and the runtime's
 * honouring of it: formatting and reading back a directive, finding it at the start
 * of a shrunk script, keeping every line number when it is put in front (a '#' first
 * line included); two scenario runs in one process give the same digest (the
 * runtime's globals are reset); a directive in the script skips what it names.
 */
#include "harness/lua/scn.h"

#include "fl_test.h"
#include "fl_tmpdir.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/fl-test-shrink-XXXXXX";

static void test_format(void)
{
    struct scn_directive d;
    scn_directive_init(&d);
    CHECK(scn_directive_empty(&d));
    struct fl_buf b;
    fl_buf_init(&b);
    scn_directive_format(&d, &b);
    CHECK_EQ_STR(fl_buf_cstr(&b), "shrink{ }");
    int64_t s1[] = {5, 2, 9, 2};
    scn_directive_skip(&d, s1, 4);
    int64_t s2[] = {3, 9};
    scn_directive_skip(&d, s2, 2);
    CHECK_EQ_INT(d.n_skip, 4);
    d.end_at_ns = 12 * FL_S + 250 * FL_MS;
    d.time_scale_pct = 50;
    d.scale_from_ns = 3 * FL_S;
    d.clients = 2;
    d.watchers = 0;
    CHECK(!scn_directive_empty(&d));
    fl_buf_reset(&b);
    scn_directive_format(&d, &b);
    CHECK_EQ_STR(fl_buf_cstr(&b), "shrink{ skip_faults = {2, 3, 5, 9}, end_at = 12250*ms, "
                                  "time_scale = 50, scale_from = 3*s, clients = 2, watchers = 0 }");
    /* read back from the summary's "shrink" object, as the runtime writes it */
    json_t *j =
        json_pack("{s:[i,i,i,i], s:i, s:i, s:i, s:i, s:i}", "skip_faults", 2, 3, 5, 9, "end_at_ms",
                  12250, "time_scale", 50, "scale_from_ms", 3000, "clients", 2, "watchers", 0);
    struct scn_directive e;
    scn_directive_init(&e);
    scn_directive_from_json(&e, j);
    struct fl_buf b2;
    fl_buf_init(&b2);
    scn_directive_format(&e, &b2);
    CHECK_EQ_STR(fl_buf_cstr(&b2), fl_buf_cstr(&b));
    CHECK_EQ_INT(e.keys, -1);
    CHECK_EQ_INT(e.rate, -1);
    scn_directive_from_json(&e, NULL);
    CHECK(scn_directive_empty(&e));
    json_decref(j);
    scn_directive_close(&e);
    scn_directive_close(&d);
    fl_buf_close(&b);
    fl_buf_close(&b2);
}

static void test_text(void)
{
    struct scn_directive d;
    scn_directive_init(&d);
    int64_t s[] = {4};
    scn_directive_skip(&d, s, 1);
    const char *body = "-- line 1\nscenario{}\nexpect(false, \"x\")\n";
    struct fl_buf t;
    fl_buf_init(&t);
    scn_shrink_text(&d, body, strlen(body), &t);
    const char *text = fl_buf_cstr(&t);
    CHECK_EQ_STR(text,
                 "shrink{ skip_faults = {4} }; -- line 1\nscenario{}\nexpect(false, \"x\")\n");
    size_t pl = scn_directive_prefix_len(text, t.len);
    CHECK_EQ_INT(pl, strlen("shrink{ skip_faults = {4} }; "));
    CHECK_EQ_STR(text + pl, body);
    /* a '#' first line, which Lua skips, stays skipped as a comment */
    const char *hash = "#!/usr/bin/env faultline\nscenario{}\n";
    fl_buf_reset(&t);
    scn_shrink_text(&d, hash, strlen(hash), &t);
    CHECK_EQ_STR(fl_buf_cstr(&t), "shrink{ skip_faults = {4} }; --#!/usr/bin/env faultline\n"
                                  "scenario{}\n");
    /* not ours: a script of its own that happens to start with shrink{ */
    CHECK_EQ_INT(scn_directive_prefix_len("scenario{}", 10), 0);
    const char *own = "shrink{ clients = \"x\" }\n";
    CHECK_EQ_INT(scn_directive_prefix_len(own, strlen(own)), 0);
    const char *open = "shrink{ skip_faults = {1}\n}";
    CHECK_EQ_INT(scn_directive_prefix_len(open, strlen(open)), 0);
    scn_directive_close(&d);
    fl_buf_close(&t);
}

static const char *write_script(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

static const char script[] = "scenario { name = \"t\", workload = { rate = 50 } }\n"
                             "run_until(function() return leader() end, 5*s)\n"
                             "local l = leader()\n"
                             "pause(l)\n"
                             "run(2*s)\n"
                             "resume(l)\n"
                             "nemesis { kinds = { \"pause\" }, every = 300*ms }\n"
                             "run(2*s)\n"
                             "heal_all()\n"
                             "expect(math.random(1000) > 0, \"seeded\")\n"
                             "run(1*s)\n";

static json_t *run_script(const char *path, char digest[17])
{
    char db[300];
    snprintf(db, sizeof db, "%s/t.db", dir);
    struct scn_options o = {.path = path, .seed = 4, .db_path = db};
    struct scn_result r;
    int code = scn_run(&o, &r);
    CHECK_EQ_INT(code, 0);
    if (code)
        fprintf(stderr, "%s\n", r.error);
    snprintf(digest, 17, "%s", r.run.digest);
    json_t *s = r.run.summary ? json_incref(r.run.summary) : NULL;
    scn_result_close(&r);
    return s;
}

static void test_two_runs_one_process(void)
{
    char a[17], b[17];
    const char *p = write_script("same.lua", script);
    json_t *s1 = run_script(p, a);
    json_t *s2 = run_script(p, b);
    CHECK_EQ_INT(strlen(a), 16);
    CHECK_EQ_STR(a, b);
    CHECK(s1 && s2 && json_equal(json_object_get(s1, "faults"), json_object_get(s2, "faults")));
    json_decref(s1);
    json_decref(s2);
}

static void test_directive_in_script(void)
{
    char d0[17], d1[17];
    json_t *plain = run_script(write_script("plain.lua", script), d0);
    struct fl_buf t;
    fl_buf_init(&t);
    fl_buf_printf(&t, "shrink{ skip_faults = {1, 4} }; %s", script);
    json_t *sk = run_script(write_script("skip.lua", fl_buf_cstr(&t)), d1);
    fl_buf_close(&t);
    if (!plain || !sk)
        goto out;
    CHECK(strcmp(d0, d1) != 0);
    json_t *fp = json_object_get(plain, "faults"), *fs = json_object_get(sk, "faults");
    /* plain: pause #1, resume #2, nemesis #3, draws from #4 */
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(fp, 0), "kind")), "pause");
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(fs, 0), "kind")), "resume");
    for (size_t i = 0; i < json_array_size(fs); i++) {
        json_int_t o = json_integer_value(json_object_get(json_array_get(fs, i), "ordinal"));
        CHECK(o != 1 && o != 4);
    }
    CHECK_EQ_INT(json_integer_value(json_object_get(plain, "fault_ordinals")),
                 json_integer_value(json_object_get(sk, "fault_ordinals")));
    json_t *info = json_object_get(sk, "shrink");
    CHECK_EQ_INT(json_array_size(json_object_get(info, "skip_faults")), 2);
    CHECK(json_object_get(plain, "shrink") == NULL);
    CHECK(json_integer_value(json_object_get(plain, "script_end_ms")) >= 5000);
out:
    json_decref(plain);
    json_decref(sk);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_format), FL_CASE(test_text),
                                           FL_CASE(test_two_runs_one_process),
                                           FL_CASE(test_directive_in_script)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
