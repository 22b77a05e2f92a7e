/*
 * test_live_feed.c: raft_safety on --target live is the members' Raft feed file replayed
 * into the checker (harness/run/run_target_live_safety.c). A file of whole feeds of one
 * cluster passes; one where two members lead the same term fails with the checker's
 * violation; the harness's own "*" lines name a member's last cluster; a last line cut
 * short (a member's record unfinished), two records run together (one cut short in the
 * middle of the file) or a file that is not there are 'unknown' with the reason, never
 * 'pass'; a violation found before the damaged line still fails.
 */
#include "harness/run/run_target_live.h"

#include "fl_test.h"
#include "fl_tmpdir.h"

static char dir[] = "/tmp/fl_live_feed_XXXXXX";

#define CL "00000000000000aa "

/* A correct history of members 1..3 of cluster aa: bootstrap, member 1 elected in term
 * 2 with 2's vote, one entry of term 2 committed and applied everywhere, 1 killed. */
static const char good[] =
    CL "append 1 1 1 11\n" CL "conf_entry 1 1 0 1\n" CL "append 2 1 1 11\n" CL
       "conf_entry 2 1 0 1\n" CL "append 3 1 1 11\n" CL "conf_entry 3 1 0 1\n" CL
       "recovered 2 1 0 1 1 0 -\n" CL "sent 1 2 1\n" CL "sent 2 2 1\n" CL "elected 1 2 v 1 l -\n" CL
       "leader 1 2\n" CL "append 1 2 2 22\n" CL "synced 1\n" CL "append 2 2 2 22\n" CL
       "synced 2\n" CL "commit 1 2\n" CL "leader_commit 1 2 2\n" CL "apply 1 1 1 11\n" CL
       "apply 1 2 2 22\n" CL "commit 2 2\n" CL "apply 2 1 1 11\n" CL "apply 2 2 2 22\n"
       "* not_leader 1\n"
       "* not_leader 77\n";

static const char *write_feed(const char *name, const char *text, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
    return path;
}

static int judge(const char *name, const char *text, size_t len, json_t **d)
{
    return lvt_feed_judge(write_feed(name, text, len), false, d);
}

static const char *reason(json_t *d)
{
    const char *r = json_string_value(json_object_get(d, "reason"));
    return r ? r : "";
}

static void test_pass(void)
{
    json_t *d;
    CHECK_EQ_INT(judge("pass", good, strlen(good), &d), CHK_PASS);
    CHECK(json_is_null(json_object_get(d, "violation")));
    json_t *checked = json_object_get(d, "checked");
    CHECK_EQ_INT((int)json_array_size(checked), 1);
    CHECK_EQ_INT((int)json_integer_value(json_object_get(json_array_get(checked, 0), "leaders")),
                 1);
    CHECK_EQ_INT((int)json_integer_value(json_object_get(d, "feed_lines")), 24);
    json_decref(d);
}

static void test_two_leaders_fail(void)
{
    char text[4096];
    snprintf(text, sizeof text, "%s" CL "leader 2 2\n", good);
    json_t *d;
    CHECK_EQ_INT(judge("fail", text, strlen(text), &d), CHK_FAIL);
    CHECK(strstr(json_string_value(json_object_get(d, "violation")),
                 "\"property\":\"election_safety\"") != NULL);
    json_decref(d);
    /* another cluster's leader of the same term is no violation */
    snprintf(text, sizeof text, "%s00000000000000bb leader 2 2\n", good);
    CHECK_EQ_INT(judge("two_clusters", text, strlen(text), &d), CHK_PASS);
    CHECK_EQ_INT((int)json_array_size(json_object_get(d, "checked")), 2);
    json_decref(d);
    /* the harness's "*" line is member 1's cluster (aa): it no longer leads, and a
     * later leader of term 2 there still is one too many */
    snprintf(text, sizeof text, "%s" CL "leader 3 2\n", good);
    CHECK_EQ_INT(judge("after_kill", text, strlen(text), &d), CHK_FAIL);
    json_decref(d);
}

static void test_truncated_unknown(void)
{
    json_t *d;
    /* the last record cut short: no newline */
    CHECK_EQ_INT(judge("cut_end", good, strlen(good) - 20, &d), CHK_UNKNOWN);
    CHECK(strstr(reason(d), "unfinished") != NULL);
    CHECK(strstr(reason(d), "line 23") != NULL);
    CHECK(strstr(reason(d), "cut_end") != NULL);
    json_decref(d);
    /* a record cut short in the middle: the next member's line runs on after it */
    char text[4096];
    const char *at = strstr(good, CL "leader 1 2\n");
    int head = (int)(at - good);
    snprintf(text, sizeof text, "%.*s" CL "lead%s", head, good, at + strlen(CL "leader 1 2\n"));
    CHECK_EQ_INT(judge("cut_mid", text, strlen(text), &d), CHK_UNKNOWN);
    CHECK(strstr(reason(d), "line 11") != NULL && strstr(reason(d), "not a feed") != NULL);
    json_decref(d);
    /* a violation found before the damage stands */
    snprintf(text, sizeof text, "%s" CL "leader 2 2\n" CL "appe", good);
    CHECK_EQ_INT(judge("fail_then_cut", text, strlen(text), &d), CHK_FAIL);
    json_decref(d);
    /* no file */
    char path[300];
    snprintf(path, sizeof path, "%s/none", dir);
    CHECK_EQ_INT(lvt_feed_judge(path, false, &d), CHK_UNKNOWN);
    CHECK(strstr(reason(d), "cannot be read") != NULL);
    json_decref(d);
    /* an empty file (no member fed anything) passes vacuously, as on the simulator */
    CHECK_EQ_INT(judge("empty", "", 0, &d), CHK_PASS);
    json_decref(d);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_pass), FL_CASE(test_two_leaders_fail),
                                           FL_CASE(test_truncated_unknown)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
