/*
 * run_target_live_safety.c: raft_safety on --target live. Every member process records
 * its Raft safety feeds (`faultline member --raft-feed`, proc.h) in one file of the
 * work directory, DIR/raft_feed.txt, one line each and in the order they happened
 * (each line is one O_APPEND write(2), made before what it promises takes effect: a
 * vote before the message leaves, an append once it is durable and before it is
 * acknowledged), so the file holds the members' feeds in an order consistent with
 * every message between them. The harness appends what the simulator's cluster feeds
 * itself: "not_leader" when it kills a member, "forget" when a removal stopped one
 * (their cluster field "*": the member's last cluster ID in the file). At the end of
 * the run the file is replayed into one checker per cluster ID, as the simulator feeds
 * its own; the verdict and the checked counters are the simulator's detail.
 *
 * What cannot be judged is 'unknown' with the reason: a line that is not a whole feed
 * (a record cut short: the file is no longer the members' whole feed), a feed file
 * that cannot be read, or a member that said it could not write one (its event
 * "raft_feed_lost"). A member's own finding (its event "raft_safety": a restart on a
 * WAL that is not a Raft log) fails the check as on the simulator.
 */
#include "harness/run/run_target_live.h"

#include "checkers/raft_safety.h"

#include <inttypes.h>
#include <unistd.h>

#define FEED_RETRIES 10 /* an unfinished last line is read again this often ... */
#define FEED_WAIT_MS 20 /* ... this long apart (a member writing right now) */

void lvt_feed_note(struct run_live *L, int slot, const char *op)
{
    if (!L || slot < 1 || slot > L->c.n || !L->c.raft_feed_path || !L->c.m[slot - 1].member_id)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "* %s %" PRIu64 "\n", op, L->c.m[slot - 1].member_id);
    FILE *f = fopen(L->c.raft_feed_path, "a"); /* O_APPEND: after every whole write */
    bool ok = f && fwrite(line, 1, (size_t)n, f) == (size_t)n;
    if (f && fclose(f))
        ok = false;
    if (!ok && !L->feed_problem[0])
        snprintf(L->feed_problem, sizeof L->feed_problem,
                 "not judged: the harness could not append to the Raft feed file %s",
                 L->c.raft_feed_path);
}

struct feed_cl {
    uint64_t id;
    struct raft_safety *c;
};

struct feed_replay {
    struct feed_cl *cl;
    size_t n_cl, cap_cl;
    struct {
        uint64_t member, cluster;
    } * last; /* each member's cluster of its last feed */
    size_t n_last, cap_last;
    char *violation; /* the first violation found (a checker's; owned) */
    uint64_t lines;
};

static struct raft_safety *replay_checker(struct feed_replay *r, uint64_t id)
{
    for (size_t i = 0; i < r->n_cl; i++)
        if (r->cl[i].id == id)
            return r->cl[i].c;
    FL_GROW(r->cl, r->cap_cl, r->n_cl + 1, 4);
    r->cl[r->n_cl] = (struct feed_cl){id, raft_safety_new()};
    return r->cl[r->n_cl++].c;
}

static uint64_t *last_cluster(struct feed_replay *r, uint64_t member, bool add)
{
    for (size_t i = 0; i < r->n_last; i++)
        if (r->last[i].member == member)
            return &r->last[i].cluster;
    if (!add)
        return NULL;
    FL_GROW(r->last, r->cap_last, r->n_last + 1, 8);
    r->last[r->n_last].member = member;
    r->last[r->n_last].cluster = 0;
    return &r->last[r->n_last++].cluster;
}

/* One line (no newline): false when it is not a feed. */
static bool replay_line(struct feed_replay *r, const char *p, size_t len)
{
    const char *sp = memchr(p, ' ', len);
    if (!sp || sp == p)
        return false;
    struct raft_safety_feed f;
    size_t head = (size_t)(sp - p);
    if (!raft_safety_feed_parse(sp + 1, len - head - 1, &f))
        return false;
    uint64_t cluster;
    if (head == 1 && p[0] == '*') {
        /* the harness's: the member's cluster as its own feeds last named it */
        if (f.op != RAFT_SAFETY_OP_NOT_LEADER && f.op != RAFT_SAFETY_OP_FORGET)
            return false;
        const uint64_t *c = last_cluster(r, f.node, false);
        if (!c)
            return true; /* it fed nothing: nothing to tell */
        cluster = *c;
    } else {
        char hex[17];
        char *end = NULL;
        if (head > 16)
            return false;
        memcpy(hex, p, head);
        hex[head] = 0;
        cluster = strtoull(hex, &end, 16);
        if (end != hex + head)
            return false;
        *last_cluster(r, f.node, true) = cluster;
    }
    struct raft_safety *c = replay_checker(r, cluster);
    if (!raft_safety_replay(c, &f) && !r->violation)
        r->violation = fl_strdup(raft_safety_violation_json(c));
    return true;
}

/* One line of f from offset *off, newline included: its length, 0 at the end of the
 * file, -1 when the last line is unfinished (read again FEED_RETRIES times, when
 * wait: a member writing it right now). */
static ssize_t next_line(FILE *f, off_t *off, char **line, size_t *cap, bool wait)
{
    for (int i = 0;; i++) {
        ssize_t n = getline(line, cap, f);
        if (n <= 0)
            return 0;
        if ((*line)[n - 1] == '\n') {
            *off += n;
            return n;
        }
        if (!wait || i >= FEED_RETRIES)
            return -1;
        uv_sleep(FEED_WAIT_MS);
        clearerr(f);
        if (fseeko(f, *off, SEEK_SET) != 0)
            return -1;
    }
}

int lvt_feed_judge(const char *path, bool wait, json_t **detail)
{
    json_t *d = json_object();
    *detail = d;
    FILE *f = fopen(path, "r");
    if (!f) {
        json_object_set_new(d, "reason",
                            json_sprintf("not judged: the members' Raft feed file %s cannot be "
                                         "read (%s)",
                                         path, strerror(errno)));
        return CHK_UNKNOWN;
    }
    struct feed_replay r;
    memset(&r, 0, sizeof r);
    int verdict = CHK_PASS;
    char *line = NULL;
    size_t cap = 0;
    off_t off = 0;
    ssize_t n;
    while ((n = next_line(f, &off, &line, &cap, wait)) != 0) {
        r.lines++;
        if (n < 0 || !replay_line(&r, line, (size_t)n - 1)) {
            size_t show = strcspn(line, "\n");
            json_object_set_new(
                d, "reason",
                json_sprintf("not judged: line %" PRIu64 " of the members' Raft feed file %s is "
                             "%s ('%.*s'): a member's record was cut short or the file is "
                             "damaged, so the feeds after it are not the members' whole story",
                             r.lines, path, n < 0 ? "unfinished" : "not a feed",
                             (int)FL_MIN(show, (size_t)80), line));
            verdict = CHK_UNKNOWN;
            break;
        }
    }
    if (ferror(f) && verdict == CHK_PASS) {
        json_object_set_new(d, "reason",
                            json_sprintf("not judged: reading the members' Raft feed file %s "
                                         "failed after line %" PRIu64,
                                         path, r.lines));
        verdict = CHK_UNKNOWN;
    }
    free(line);
    fclose(f);
    /* the checker's JSON text, as the simulator's detail carries it (a member ID may not
     * fit a JSON integer) */
    json_object_set_new(d, "violation", r.violation ? json_string(r.violation) : json_null());
    if (r.violation)
        verdict = CHK_FAIL; /* what was found before a damaged line stands */
    json_t *checked = json_array();
    struct fl_buf sb;
    fl_buf_init(&sb);
    for (size_t i = 0; i < r.n_cl; i++) {
        raft_safety_summary_json(r.cl[i].c, &sb);
        json_t *one = json_loads(fl_buf_cstr(&sb), 0, NULL);
        if (one)
            json_array_append_new(checked, one);
        raft_safety_free(r.cl[i].c);
    }
    fl_buf_close(&sb);
    json_object_set_new(d, "checked", checked); /* per cluster ID: what was fed */
    json_object_set_new(d, "feed_lines", json_integer((json_int_t)r.lines));
    free(r.cl);
    free(r.last);
    free(r.violation);
    return verdict;
}

int lvt_raft_safety(struct run_world *rw, json_t **detail)
{
    struct run_live *L = rw->lv;
    if (!L || !L->c.raft_feed_path) {
        *detail = json_object();
        json_object_set_new(*detail, "reason",
                            json_string("not judged: the live cluster never started"));
        return CHK_UNKNOWN;
    }
    lvt_events_poll(L); /* the members' last words: a finding, a feed they lost */
    int v = lvt_feed_judge(L->c.raft_feed_path, true, detail);
    if (L->member_violation) {
        json_object_set_new(*detail, "violation", json_string(L->member_violation));
        json_object_del(*detail, "reason");
        return CHK_FAIL;
    }
    if (v == CHK_PASS && L->feed_problem[0]) {
        json_object_set_new(*detail, "reason", json_string(L->feed_problem));
        return CHK_UNKNOWN;
    }
    return v;
}
