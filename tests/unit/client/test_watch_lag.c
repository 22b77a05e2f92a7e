/*
 * test_watch_lag.c: the watch-lag accounting of nodes/client/client_stats.c (what
 * watch_max_stall_ms reports) against the rule it implements, written out here as
 * the former per-watch queue: every commit is offered to every open watch, which
 * queues it when the commit touches its range (or its keys are unknown), it has not
 * reached that revision, and (for a watch "from now") the commit is not older than
 * the watch; reaching a revision pops what it covers and measures the lag.
 *
 * Random watches (exact keys, ranges, open-ended and empty ranges, with and without
 * a start revision), opened and canceled at random times, random commits of known
 * and unknown keys, random progress; every figure compared after every step. Then
 * the work: 3000 watches, 3000 commits of known keys and 3000 of unknown keys cost
 * the bookkeeping a bounded number of steps per watch and commit (each commit was a
 * visit of every watch before: 18,000,000 steps, against about 54,000 now). The
 * model agrees with the former code on every step of the random part as well.
 */
#include "fl_test.h"

#include "nodes/client/client_int.h"
#include "harness/sim/sim.h"

#define MW 48

struct model {
    bool open;
    uint64_t id;
    struct kvc_stream *st;
    uint8_t key[3], end[3];
    size_t key_len, end_len;
    int64_t start_rev, opened_ns, reached;
    int64_t q_rev[4096], q_at[4096];
    size_t q_head, q_len;
    int64_t max_stall_ns;
};

static struct model mw[MW];
static uint64_t rng = 12345;

static uint64_t rnd(uint64_t n)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (z ^ (z >> 31)) % n;
}

static int bcmp3(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int r = n ? memcmp(a, b, n) : 0;
    return r ? r : (an < bn ? -1 : an > bn);
}

static bool model_matches(const struct model *m, const uint8_t *k, size_t kn)
{
    if (m->end_len == 0)
        return bcmp3(k, kn, m->key, m->key_len) == 0;
    if (bcmp3(k, kn, m->key, m->key_len) < 0)
        return false;
    if (m->end_len == 1 && m->end[0] == 0)
        return true;
    return bcmp3(k, kn, m->end, m->end_len) < 0;
}

static void model_commit(struct model *m, int64_t rev, const uint8_t *k, size_t kn, int64_t at)
{
    if (!m->open || rev <= m->reached)
        return;
    if (m->start_rev == 0 && at < m->opened_ns)
        return;
    if (kn > 0 && !model_matches(m, k, kn))
        return;
    if (m->q_len > 0 && m->q_rev[(m->q_head + m->q_len - 1) % 4096] >= rev)
        return;
    FL_ASSERT(m->q_len < 4096);
    m->q_rev[(m->q_head + m->q_len) % 4096] = rev;
    m->q_at[(m->q_head + m->q_len) % 4096] = at;
    m->q_len++;
}

static void model_reached(struct model *m, int64_t rev, int64_t now)
{
    if (rev > m->reached)
        m->reached = rev;
    while (m->q_len > 0 && m->q_rev[m->q_head] <= m->reached) {
        m->max_stall_ns = FL_MAX(m->max_stall_ns, now - m->q_at[m->q_head]);
        m->q_head = (m->q_head + 1) % 4096;
        m->q_len--;
    }
}

static int64_t model_lag(const struct model *m, int64_t now)
{
    return m->q_len ? now - m->q_at[m->q_head] : 0;
}

static size_t rand_key(uint8_t *p)
{
    static const uint8_t abc[] = {'a', 'b', 'c', 0x00};
    size_t n = 1 + rnd(2);
    for (size_t i = 0; i < n; i++)
        p[i] = abc[rnd(sizeof(abc))];
    return n;
}

static void open_watch(struct kvc_client *c, struct model *m, int64_t rev_now, int64_t now)
{
    memset(m, 0, sizeof(*m));
    m->key_len = rand_key(m->key);
    switch (rnd(4)) {
    case 0:
        m->end_len = 0;
        break;
    case 1:
        m->end[0] = 0;
        m->end_len = 1;
        break;
    default:
        m->end_len = rand_key(m->end); /* sometimes empty: end <= key */
        break;
    }
    m->start_rev = rnd(2) ? 0 : FL_MAX(1, rev_now - (int64_t)rnd(5));
    m->reached = m->start_rev > 0 ? m->start_rev - 1 : 0;
    m->opened_ns = now;
    m->open = true;
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key = (struct kvc_bytes){m->key, m->key_len};
    wr.range_end = (struct kvc_bytes){m->end, m->end_len};
    wr.start_rev = m->start_rev;
    m->id = kvc_watch(c, &wr, NULL, NULL, NULL);
    m->st = c->streams_tail;
    CHECK(m->st->id == m->id);
}

static struct kvc_client *new_client(struct sim_world *w, struct kvc_endpoint *ep)
{
    struct kvc_config cfg;
    kvc_config_default(&cfg);
    cfg.endpoints = ep;
    cfg.endpoint_count = 1;
    struct kvc_client *c;
    const char *err;
    FL_ASSERT(kvc_client_new(w, &cfg, &c, &err) == 0);
    return c;
}

/* Every open watch's figures equal the model's; the client figure too. */
static int compare(struct kvc_client *c, struct sim_world *w)
{
    int bad = 0;
    int64_t now = sim_now_ns(w), want = 0;
    for (int i = 0; i < MW; i++) {
        if (!mw[i].open)
            continue;
        struct kvc_stream *st = mw[i].st;
        bad += st->max_stall_ns != mw[i].max_stall_ns;
        want = FL_MAX(want, FL_MAX(mw[i].max_stall_ns, model_lag(&mw[i], now)) / FL_MS);
    }
    static int64_t closed_max_ms;
    for (int i = 0; i < MW; i++)
        if (!mw[i].open)
            closed_max_ms = FL_MAX(closed_max_ms, mw[i].max_stall_ns / FL_MS);
    want = FL_MAX(want, closed_max_ms);
    struct kvc_stats s;
    kvc_client_stats(c, &s);
    bad += s.watch_max_stall_ms != want;
    return bad;
}

static void random_steps(void)
{
    struct sim_world *w = sim_world_new(3);
    struct sim_proc_ops ops = {NULL, NULL};
    struct kvc_endpoint ep = {1, sim_proc_add(w, "nobody", &ops, NULL)};
    struct kvc_client *c = new_client(w, &ep);
    int64_t rev = 1;
    int bad = 0, steps = 0;
    for (int i = 0; i < MW / 2; i++)
        open_watch(c, &mw[i], rev, sim_now_ns(w));
    int64_t last_at = 0;
    for (int step = 0; step < 6000; step++, steps++) {
        /* Commit times up to 50 ms in the past (never going back), so some are
         * older than a watch "from now" opened meanwhile. */
        int64_t now = sim_now_ns(w);
        int64_t back = (int64_t)rnd(50) * FL_MS; /* FL_MAX evaluates twice */
        int64_t at = FL_MAX(last_at, now - back);
        last_at = at;
        int i = (int)rnd(MW);
        switch (rnd(8)) {
        case 0:
            sim_run_for(w, (int64_t)(1 + rnd(40)) * FL_MS);
            break;
        case 1:
        case 2: {
            uint8_t k[3];
            size_t kn = rand_key(k);
            rev++;
            kvc_client_note_commit(c, rev, (struct kvc_bytes){k, kn}, at);
            for (int j = 0; j < MW; j++)
                model_commit(&mw[j], rev, k, kn, at);
            break;
        }
        case 3:
            rev++;
            kvc_client_note_commit(c, rev, (struct kvc_bytes){NULL, 0}, at);
            for (int j = 0; j < MW; j++)
                model_commit(&mw[j], rev, NULL, 0, at);
            break;
        case 4:
        case 5:
            if (mw[i].open) {
                int64_t r = rev - (int64_t)rnd(4);
                kvc_stats_watch_reached(c, mw[i].st, r);
                model_reached(&mw[i], r, now);
            }
            break;
        case 6:
            if (mw[i].open) {
                int64_t lag = model_lag(&mw[i], now);
                mw[i].max_stall_ns = FL_MAX(mw[i].max_stall_ns, lag);
                mw[i].open = false; /* the client figure keeps what it owed */
                CHECK_EQ_INT(kvc_watch_cancel(c, mw[i].id), 0);
            }
            break;
        default:
            if (!mw[i].open)
                open_watch(c, &mw[i], rev, now);
            break;
        }
        bad += compare(c, w);
    }
    printf("watch lag: %d steps compared, %d differences\n", steps, bad);
    CHECK_EQ_INT(bad, 0);
    kvc_client_free(c);
    sim_world_free(w);
}

/* ---- the work bound ---- */

#define NW 3000

static void work_bound(void)
{
    struct sim_world *w = sim_world_new(4);
    struct sim_proc_ops ops = {NULL, NULL};
    struct kvc_endpoint ep = {1, sim_proc_add(w, "nobody", &ops, NULL)};
    struct kvc_client *c = new_client(w, &ep);
    static char keys[NW][12];
    static struct kvc_stream *sts[NW];
    for (int i = 0; i < NW; i++) {
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof(wr));
        int n = snprintf(keys[i], sizeof(keys[i]), "key/%05d", i);
        wr.key = (struct kvc_bytes){(const uint8_t *)keys[i], (size_t)n};
        kvc_watch(c, &wr, NULL, NULL, NULL);
        sts[i] = c->streams_tail;
    }
    sim_run_for(w, 10 * FL_MS);
    uint64_t before = kvc_client_stream_steps(c);
    int64_t rev = 1;
    for (int i = 0; i < NW; i++) {
        sim_run_for(w, 1 * FL_MS);
        kvc_client_note_commit(c, ++rev, (struct kvc_bytes){(const uint8_t *)keys[i], 9},
                               sim_now_ns(w));
        kvc_client_note_commit(c, ++rev, (struct kvc_bytes){NULL, 0}, sim_now_ns(w));
        kvc_stats_watch_reached(c, sts[i], rev); /* the event reaches its watch */
    }
    sim_run_for(w, 10 * FL_MS);
    struct kvc_stats s;
    kvc_client_stats(c, &s);
    uint64_t steps = kvc_client_stream_steps(c) - before;
    printf("watch lag: %d watches, %d commits: %llu steps (%.1f per watch and commit)\n", NW,
           2 * NW, (unsigned long long)steps, (double)steps / (3 * NW));
    /* The former commit loop visited every watch: 2 * NW * NW = 18,000,000. */
    CHECK(steps <= 40u * 3 * NW);
    /* Watch NW-1 reached everything at the end; watch 0 still owes every commit of
     * unknown keys after its own: its lag counts from the second commit on. */
    CHECK(s.watch_max_stall_ms >= (int64_t)(NW - 1));
    kvc_client_free(c);
    sim_world_free(w);
}

int main(void)
{
    FL_TEST(random_steps);
    FL_TEST(work_bound);
    return fl_test_end();
}
