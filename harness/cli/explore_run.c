/*
 * explore_run.c: the search of `faultline explore SCENARIO.lua [--runs N] [--seed S] [--bug
 * NAME]...
 * [-j N] [--json] [--out DIR] [--shrink-runs N] [--keep-going] [--timeout S]` (issue 13
 * §5): guided search over fault schedules, in the manner of coverage-guided fuzzing.
 *
 * A schedule is a seed plus a shrink{} directive over the scenario (explore.h): faults
 * dropped by ordinal, faults added at fixed times, the swarm's fault mix redrawn. The
 * explorer keeps a corpus of schedules; it runs them in batches through the sweep's
 * worker pool (harness/sweep, one worker process per run, -j at once), each worker with
 * FAULTLINE_COVERAGE=1 so that its --json summary carries the abstract signatures its
 * run reached, its features and state pairs, and in an explore build its code edges
 * (harness/run/run_coverage.c documents the encoding). A schedule whose run reached a
 * feature or code edge no earlier run reached, or a few new signatures or edge counts,
 * joins the corpus (past XP_CORPUS_SOFT entries, only a new feature or edge). The next
 * batch is made of the ablation children waiting (refill_queue: one child per fault
 * lane of the first entry that reached a rare risky situation, each with that lane
 * alone), then fresh seeds (world seeds from a stream of --seed's own, fresh_seed: two
 * fifths of each batch, and all of the first; half of them
 * with one fault lane alone, drawn by the lane bandit, pick_lane), entries'
 * fault mixes over fresh worlds (reworld, a quarter), crossovers (one entry's world,
 * another's fault mix, a twentieth), thinned entries (some of their lanes, a twentieth)
 * and mutants (explore_mutate.c). Parents are picked by
 * rarity, AFL's rare-edge schedule: an entry counts 1024 / k^2 for each feature and
 * edge its run reached that k runs reached, plus a power schedule over its risky
 * situations (AFL-fast): XP_RISKY_ENERGY / k for each kind its run reached that k runs
 * reached, over the times it was picked already. Half the mutants of a parent with
 * risky situations aim a fault at one of them (xp_aim).
 *
 * With --bug NAME the switch is on in every run, and each bug is explored on its own
 * with the same --seed, so the figures compare with `faultline hunt`: the runs until the
 * first failure. A failing run is run once more with the switch off; one that fails then
 * too is a false alarm, never a finding (its file is kept in --out DIR as it ran, for
 * whoever looks into why the scenario fails without the switch). A finding is shrunk by the
 * shrinker (scn_shrink, at most --shrink-runs replays) and written to --out DIR as a Lua file that
 * `faultline run FILE --seed N --bug NAME` replays; its replay line goes to stderr and
 * into the table and JSON. Without --keep-going the exploration of a bug ends at its
 * first finding; with it, every finding within --runs is written.
 *
 * Determinism: every choice comes from a stream derived from --seed, batches are of a
 * fixed size whatever -j is, and results are taken in batch order, so the same
 * invocation gives the same output (wall time appears on stderr only).
 *
 * Exit code: with --bug, 0 when every bug was found, 1 when one was not; without, 1 when
 * a failure was found, else 0; 2 bad input; 3 a run errored or the search was stopped.
 */
#include "harness/cli/cli.h"
#include "harness/cli/explore.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/text.h"
#include "harness/history/history.h"
#include "harness/sweep/sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#define XP_BATCH        8    /* schedules per batch, whatever -j is (determinism) */
#define XP_FRESH_PCT    40   /* fresh seeds in a batch once the corpus has entries */
#define XP_NEW_SIGS_MIN 3    /* new signatures that keep a schedule without a new feature */
#define XP_REWORLD_PCT  25   /* an entry's fault mix over a fresh world */
#define XP_CROSS_PCT    5    /* one entry's world, another's fault mix */
#define XP_THIN_PCT     5    /* an entry with only some of its fault lanes */
#define XP_RARE_DIV     8    /* a risky kind at most 1 run in this many reached is rare */
#define XP_RARE_AFTER   16   /* runs before a risky kind is judged rare */
#define XP_ABLATE_KIND  1    /* entries ablated per rare risky kind; one more when twice as rare */
#define XP_CORPUS_SOFT  128  /* past it, only a new feature or a new edge keeps a schedule */
#define XP_AIM_PCT      50   /* of the mutants of a parent with risky situations: aimed */
#define XP_RISKY_ENERGY 8192 /* a risky situation k runs reached adds this / k to a weight */
#define XP_FOCUS_PCT    50   /* of the fresh seeds: one fault lane, drawn by the lane bandit */
#define XP_LANE_PRIOR   1024 /* the lane bandit's reward of a lane no run tried yet */

static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t h)
{
    size_t j = (size_t)(h & (cap - 1));
    while (keys[j] && keys[j] != h)
        j = (j + 1) & (cap - 1);
    return j;
}

static void map_grow(struct xp_map *m)
{
    /* twice the capacity (4096 at first): a power of two, as slot_of masks with it */
    size_t cap = fl_grow_cap(m->cap, m->cap + 1, 4096, sizeof(uint64_t));
    uint64_t *keys = fl_calloc(cap, sizeof *keys);
    uint32_t *hits = fl_calloc(cap, sizeof *hits);
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = slot_of(keys, cap, m->keys[i]);
            keys[j] = m->keys[i];
            hits[j] = m->hits[i];
        }
    free(m->keys);
    free(m->hits);
    m->keys = keys;
    m->hits = hits;
    m->cap = cap;
}

/* One more run reached h; true when it is the first. */
static bool map_hit(struct xp_map *m, uint64_t h)
{
    if (2 * (m->n + 1) > m->cap)
        map_grow(m);
    size_t j = slot_of(m->keys, m->cap, h);
    bool fresh = !m->keys[j];
    m->keys[j] = h;
    m->hits[j]++;
    m->n += fresh;
    return fresh;
}

static uint32_t map_hits(const struct xp_map *m, uint64_t h)
{
    if (!m->cap)
        return 0;
    size_t j = slot_of(m->keys, m->cap, h);
    return m->keys[j] ? m->hits[j] : 0;
}

static void map_close(struct xp_map *m)
{
    free(m->keys);
    free(m->hits);
    memset(m, 0, sizeof *m);
}

/* The signatures of a run's coverage, counted as reached; returns how many no earlier
 * run reached. */
static int take_signatures(struct xp *x, const json_t *sum)
{
    const json_t *arr = json_object_get(json_object_get(sum, "coverage"), "signatures");
    int fresh = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *h = json_string_value(json_array_get(arr, i));
        uint64_t v = h ? strtoull(h, NULL, 16) : 0;
        fresh += map_hit(&x->sigs, v ? v : 1);
    }
    return fresh;
}

/* The features of a run's coverage ("FEATURE#BUCKET"): each (feature, bucket) pair and
 * each feature counted as reached; returns how many pairs no earlier run reached.
 * *out (fl_malloc'ed) gets the features. */
static int take_features(struct xp *x, const json_t *sum, uint64_t **out, int *n_out)
{
    const json_t *arr = json_object_get(json_object_get(sum, "coverage"), "features");
    size_t n = json_array_size(arr);
    uint64_t *v = fl_malloc(sizeof *v * (n ? n : 1));
    int k = 0, fresh = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = json_string_value(json_array_get(arr, i));
        if (!h)
            continue;
        uint64_t f = strtoull(h, NULL, 16), pair = fl_hash64(h, strlen(h));
        v[k++] = f ? f : 1;
        map_hit(&x->feats, f ? f : 1);
        fresh += map_hit(&x->pairs, pair ? pair : 1);
    }
    *out = v;
    *n_out = k;
    return fresh;
}

/* The code edges of a run's coverage ("N#BUCKET", an explore build only): each edge
 * and each (edge, bucket) pair counted as reached, each edge appended to *feats (as the
 * hash of "eN", beside the abstract features: a parent's rarity counts its edges too).
 * *new_pairs gets the pairs no earlier run reached; returns the edges no earlier run
 * reached. */
static int take_edges(struct xp *x, const json_t *sum, uint64_t **feats, int *n_feats,
                      int *new_pairs)
{
    const json_t *arr = json_object_get(json_object_get(sum, "coverage"), "edges");
    size_t n = json_array_size(arr);
    *new_pairs = 0;
    if (!n)
        return 0;
    *feats = fl_realloc(*feats, sizeof **feats * ((size_t)*n_feats + n));
    int fresh = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = json_string_value(json_array_get(arr, i));
        const char *hash = h ? strchr(h, '#') : NULL;
        if (!hash)
            continue;
        char key[32];
        int len = snprintf(key, sizeof key, "e%.*s", (int)FL_MIN(hash - h, 20), h);
        uint64_t e = fl_hash64(key, (size_t)len), pair = fl_hash64(h, strlen(h));
        e = e ? e : 1;
        (*feats)[(*n_feats)++] = e;
        map_hit(&x->feats, e);
        fresh += map_hit(&x->edges, e);
        *new_pairs += map_hit(&x->edge_pairs, pair ? pair : 1);
    }
    return fresh;
}

/* A parent's weight: the rarity of the features its run reached (one that k runs
 * reached counts 1024 / k^2, whatever how often: entries that reach what few runs reach,
 * a snapshot install, a removed leader, are chosen more), over the times it was chosen
 * already. */
static uint64_t weight(const struct xp *x, const struct xp_entry *e)
{
    uint64_t w = 16;
    for (int i = 0; i < e->n_feats; i++) {
        uint64_t k = map_hits(&x->feats, e->feats[i]);
        w += k ? 1024 / (k * k) : 0;
    }
    /* the power schedule's risky share (AFL-fast's "fast": energy over how many runs
     * reached the same): each kind of risky situation the run reached that k runs
     * reached counts XP_RISKY_ENERGY / k */
    for (int i = 0; i < e->n_risky; i++) {
        bool first = true;
        for (int j = 0; j < i && first; j++)
            first = e->risky[j].what != e->risky[i].what;
        uint64_t k = first ? map_hits(&x->risky, e->risky[i].what) : 0;
        w += k ? XP_RISKY_ENERGY / k : 0;
    }
    return w / (1 + (uint64_t)e->picked / 2);
}

/* Which of a parent's risky moments to aim at: the rarer its kind (k runs reached it),
 * the likelier (1024 / k). */
static int pick_risky(struct xp *x, const struct xp_entry *p)
{
    uint64_t total = 0, w[64];
    int n = FL_MIN(p->n_risky, 64);
    for (int i = 0; i < n; i++) {
        uint64_t k = map_hits(&x->risky, p->risky[i].what);
        w[i] = 1024 / (k ? k : 1) + 1;
        total += w[i];
    }
    uint64_t r = sim_rng_below(&x->rng, total);
    for (int i = 0; i < n; i++) {
        if (r < w[i])
            return i;
        r -= w[i];
    }
    return n - 1;
}

/* Counts the kinds of risky situation a run reached (each once per run); returns their
 * rarity, the lane bandit's reward: 1024 / k for a kind k runs reached (this one too). */
static uint64_t take_risky(struct xp *x, const json_t *sum)
{
    const json_t *arr = json_object_get(json_object_get(sum, "coverage"), "risky");
    uint64_t seen[64];
    int n = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *w = json_string_value(json_object_get(json_array_get(arr, i), "what"));
        if (!w)
            continue;
        uint64_t h = fl_hash64(w, strlen(w));
        h = h ? h : 1;
        bool dup = false;
        for (int j = 0; j < n && !dup; j++)
            dup = seen[j] == h;
        if (dup || n >= 64)
            continue;
        seen[n++] = h;
        map_hit(&x->risky, h);
    }
    uint64_t reward = 0;
    for (int j = 0; j < n; j++)
        reward += 1024 / map_hits(&x->risky, seen[j]);
    return reward;
}

/* The fault lanes a run drew (RUN_LANE_* bits 0..RUN_LANE_COUNT-1, from its summary). */
static unsigned run_lanes(const json_t *sum)
{
    unsigned m = 0;
    const char *lane;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(json_object_get(sum, "swarm"), "lanes_every_ms"),
                        lane, v)
    {
        (void)v;
        m |= run_lane_find(lane);
    }
    return m & ((1u << RUN_LANE_COUNT) - 1);
}

/* Credits the lane bandit with a run's reward: each of the k lanes it drew gets one run
 * and reward / k (a single-lane run's whole reward goes to its lane; a lane that every
 * run reaching a rare situation drew gathers more than the lanes drawn beside it). */
static void credit_lanes(struct xp *x, unsigned lanes, uint64_t reward)
{
    int k = 0;
    for (unsigned m = lanes; m; m &= m - 1)
        k++;
    for (int i = 0; k && i < RUN_LANE_COUNT; i++)
        if (lanes & (1u << i)) {
            x->lane_runs[i]++;
            x->lane_reward[i] += reward / (uint64_t)k;
        }
}

/* The lane bandit: a fresh seed's one fault lane, drawn with odds by the square of the
 * lane's mean reward over the runs that drew it (credit_lanes: the rarity of the risky situations
 * they reached, shared among their lanes); a lane no run drew counts XP_LANE_PRIOR. A
 * switch's failures often need one lane's faults undisturbed by the others (membership
 * alone fails raft.removed_leader_counts_self on 12 of chaos seeds 1..60, every lane on
 * about 1 seed in 50): the bandit spends fresh seeds where lanes reached rare situations. */
static int pick_lane(struct xp *x)
{
    uint64_t w[RUN_LANE_COUNT], total = 0;
    for (int i = 0; i < RUN_LANE_COUNT; i++) {
        uint64_t mean = x->lane_runs[i] ? x->lane_reward[i] / x->lane_runs[i] : XP_LANE_PRIOR;
        w[i] = 1 + mean * mean / 64; /* squared: the best lanes drawn far more often */
        total += w[i];
    }
    uint64_t r = sim_rng_below(&x->rng, total);
    for (int i = 0; i < RUN_LANE_COUNT; i++) {
        if (r < w[i])
            return i;
        r -= w[i];
    }
    return RUN_LANE_COUNT - 1;
}

/* Lane ablation: when no schedule waits, the rarest risky situation that at most one run
 * in XP_RARE_DIV reached (judged from XP_RARE_AFTER runs on) and that fewer than
 * XP_ABLATE_KIND entries were ablated for (one more for a kind at most one run in
 * 2 * XP_RARE_DIV reached): its first corpus entry not ablated yet that
 * drew two lanes or more gets one child per lane, each with only that lane, queued ahead of the
 * other schedules. A child that still reaches the situation is a corpus entry with that rare kind
 * and a single lane, whose reworlds and mutants keep that lane. */
static void refill_queue(struct xp *x, int runs)
{
    if (x->q_len || runs < XP_RARE_AFTER)
        return;
    uint64_t best_k = UINT64_MAX, best_what = 0;
    struct xp_entry *best = NULL;
    const char *best_name = "";
    for (int i = 0; i < x->n_corpus; i++) {
        struct xp_entry *e = &x->corpus[i];
        if (!e->ablated && (e->lanes & (e->lanes - 1))) /* two lanes or more */
            for (int j = 0; j < e->n_risky; j++) {
                uint64_t w = e->risky[j].what, k = map_hits(&x->risky, w);
                uint32_t allowed = XP_ABLATE_KIND + (k * 2 * XP_RARE_DIV <= (uint64_t)runs);
                if (k && k < best_k && k * XP_RARE_DIV <= (uint64_t)runs &&
                    map_hits(&x->ablated, w) < allowed) {
                    best_k = k;
                    best_what = w;
                    best = e;
                    best_name = e->risky[j].name;
                }
            }
    }
    if (!best)
        return;
    map_hit(&x->ablated, best_what);
    best->ablated = true;
    x->q_head = 0;
    x->q_len = xp_ablate(best, x->queue, (int)FL_ARRAY_LEN(x->queue));
    fprintf(stderr, "explore: %s: ablating run %d's %d lanes (%s, %llu of %d runs)\n",
            x->row->bug ? x->row->bug : "no bug", best->id, x->q_len, best_name,
            (unsigned long long)best_k, runs);
}

static const struct xp_entry *pick_parent(struct xp *x)
{
    uint64_t total = 0;
    for (int i = 0; i < x->n_corpus; i++)
        total += weight(x, &x->corpus[i]);
    uint64_t r = sim_rng_below(&x->rng, total);
    for (int i = 0; i < x->n_corpus; i++) {
        struct xp_entry *e = &x->corpus[i];
        uint64_t w = weight(x, e);
        if (r < w) {
            e->picked++;
            return e;
        }
        r -= w;
    }
    return &x->corpus[x->n_corpus - 1];
}

/* The next fresh world seed (a fresh run's, or a reworld's world): drawn from the
 * explore seed's own stream ("explore/fresh"), not --seed, --seed+1, ...: those made
 * `explore --seed 1` and `--seed 2` run the same worlds but one, so five explore seeds
 * were not five tries. 53 bits (a JSON number every reader keeps exact), never 0. The
 * n-th fresh seed of an explore seed is the same whatever else the search drew, and the
 * replay lines print it. */
static uint64_t fresh_seed(struct xp *x)
{
    uint64_t seed = sim_rng_u64(&x->fresh) >> 11;
    seed = seed ? seed : 1;
    struct xp_row *row = x->row;
    row->fresh_seeds =
        fl_realloc(row->fresh_seeds, sizeof *row->fresh_seeds * (size_t)(row->n_fresh_seeds + 1));
    row->fresh_seeds[row->n_fresh_seeds++] = seed;
    return seed;
}

/* The next schedule: an ablation child waiting, a fresh seed (two fifths), a corpus entry's
 * fault mix over a fresh
 * world (reworld), the world of one entry with the fault mix of another (cross), or a
 * mutant of one entry. */
static void next_schedule(struct xp *x, struct xp_sched *s)
{
    xp_sched_init(s);
    if (x->q_len) {
        *s = x->queue[x->q_head]; /* moved out of the queue */
        x->q_head = (x->q_head + 1) % (int)FL_ARRAY_LEN(x->queue);
        x->q_len--;
        x->row->mutants++;
        x->row->ablated++;
        return;
    }
    uint64_t r = x->n_corpus == 0 ? 0 : sim_rng_below(&x->rng, 100);
    if (r < XP_FRESH_PCT) {
        s->seed = fresh_seed(x);
        x->row->fresh++;
        if (sim_rng_below(&x->rng, 100) < XP_FOCUS_PCT) {
            int lane = pick_lane(x);
            s->d.lanes = 1u << lane;
            snprintf(s->how, sizeof s->how, "fresh, %s alone", run_lane_name(1u << lane));
            x->row->focused++;
        } else {
            snprintf(s->how, sizeof s->how, "fresh");
        }
        return;
    }
    x->row->mutants++;
    if (r < XP_FRESH_PCT + XP_REWORLD_PCT) {
        xp_reworld(pick_parent(x), fresh_seed(x), s);
    } else if (r < XP_FRESH_PCT + XP_REWORLD_PCT + XP_CROSS_PCT && x->n_corpus > 1) {
        const struct xp_entry *a = pick_parent(x), *b = pick_parent(x);
        xp_cross(a, b, s);
    } else if (r < XP_FRESH_PCT + XP_REWORLD_PCT + XP_CROSS_PCT + XP_THIN_PCT &&
               xp_thin(&x->rng, pick_parent(x), s)) {
        x->row->thinned++;
    } else {
        const struct xp_entry *p = pick_parent(x);
        if (p->n_risky > 0 && sim_rng_below(&x->rng, 100) < XP_AIM_PCT) {
            xp_aim(&x->rng, p, pick_risky(x, p), s);
            x->row->aimed++;
        } else {
            xp_mutate(&x->rng, p, s);
        }
    }
}

/* --- files ------------------------------------------------------------------------------- */

static bool write_text(const char *path, const struct fl_buf *b)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

static bool read_text(const char *path, struct fl_buf *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char chunk[8192];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(b, chunk, r);
    bool ok = !ferror(f);
    fclose(f);
    fl_buf_cstr(b);
    return ok;
}

static void cand_path(const struct xp *x, int run, char *out, size_t n)
{
    snprintf(out, n, "%.4000s/run-%d.lua", x->dir, run);
}

static bool write_schedule(const struct xp *x, const struct xp_sched *s, const char *path)
{
    struct fl_buf b;
    fl_buf_init(&b);
    if (scn_directive_empty(&s->d))
        fl_buf_append(&b, x->body, x->body_len);
    else
        scn_shrink_text(&s->d, x->body, x->body_len, &b);
    bool ok = write_text(path, &b);
    fl_buf_close(&b);
    return ok;
}

/* --- runs ---------------------------------------------------------------------------------- */

/* Runs the files with their seeds in the worker pool; rep owned by the caller. */
static int run_batch(struct xp *x, const char *const *files, const uint64_t *seeds, int n,
                     const char *bug, struct sweep_report *rep)
{
    char db[4200];
    snprintf(db, sizeof db, "%.4000s/batch.db", x->dir);
    const char *bugs[1] = {bug};
    struct sweep_options o = {
        .scenarios = files,
        .scenario_count = n,
        .seed_first = 1,
        .seed_last = 1,
        .shard_k = 1,
        .shard_n = 1,
        .jobs = x->a->jobs,
        .worker = x->a->self,
        .db_path = db,
        .bugs = bug ? bugs : NULL,
        .bug_count = bug ? 1 : 0,
        .timeout_s = x->a->timeout_s,
        .job_seeds = seeds,
        .keep_summaries = true,
    };
    char err[1024];
    setenv("FAULTLINE_COVERAGE", "1", 1);
    int rc = sweep_run(&o, rep, err, sizeof err);
    unsetenv("FAULTLINE_COVERAGE");
    hist_remove(db); /* the batch's scratch database and its side files */
    if (rc)
        fprintf(stderr, "faultline: explore: %s\n", err);
    return rc ? FL_EXIT_INTERNAL : 0;
}

/* Does the file fail with the seed when the switch is off too? */
static int confirm(struct xp *x, const char *file, uint64_t seed, bool *alarm)
{
    struct sweep_report rep;
    const char *files[1] = {file};
    int rc = run_batch(x, files, &seed, 1, NULL, &rep);
    x->row->confirm_runs++;
    x->row->executed += rep.count;
    *alarm = rep.count != 1 || rep.results[0].verdict != SWEEP_PASS;
    sweep_report_close(&rep);
    return rc;
}

/* --- findings ---------------------------------------------------------------------------- */

static void replay_line(const char *file, uint64_t seed, const char *bug, struct fl_buf *out)
{
    fl_buf_printf(out, "faultline run ");
    fl_shell_word(out, file);
    fl_buf_printf(out, " --seed %llu", (unsigned long long)seed);
    if (bug) {
        fl_buf_printf(out, " --bug ");
        fl_shell_word(out, bug);
    }
}

/* The scenario's base name without ".lua". */
static void base_name(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t len = strlen(b);
    if (len > 4 && !strcmp(b + len - 4, ".lua"))
        len -= 4;
    snprintf(out, n, "%.*s", (int)FL_MIN(len, 200), b);
}

/* The shrinker's note in the written file names the file it shrank, a candidate in a
 * temporary folder whose name changes from one invocation to the next: it is named
 * "explore-run-N.lua" instead, so that the same invocation writes the same bytes. */
static void unname_candidate(const char *cand, const char *out, int run)
{
    struct fl_buf t, r;
    fl_buf_init(&t);
    fl_buf_init(&r);
    if (read_text(out, &t)) {
        const char *s = (const char *)t.data, *hit;
        size_t cl = strlen(cand);
        while ((hit = strstr(s, cand))) {
            fl_buf_append(&r, s, (size_t)(hit - s));
            fl_buf_printf(&r, "explore-run-%d.lua", run);
            s = hit + cl;
        }
        fl_buf_append(&r, s, strlen(s));
        if (!write_text(out, &r))
            fprintf(stderr, "faultline: explore: cannot write '%s': %s\n", out, strerror(errno));
    }
    fl_buf_close(&t);
    fl_buf_close(&r);
}

/* Shrinks the failing file into the output folder (or writes it as it is when nothing
 * smaller fails); returns the finding. */
static void write_finding(struct xp *x, const char *file, const struct xp_sched *s, int run,
                          const char *violation)
{
    const struct xp_args *a = x->a;
    const char *bug = x->row->bug;
    char base[256], out[8192];
    base_name(a->scenario, base, sizeof base);
    snprintf(out, sizeof out, "%.4000s/%s-%s-run%d.lua", a->out, base, bug ? bug : "nobug", run);
    const char *bugs[1] = {bug};
    struct scn_shrink_options so = {.path = file,
                                    .seed = s->seed,
                                    .bugs = bug ? bugs : NULL,
                                    .bug_count = bug ? 1 : 0,
                                    .out_path = out,
                                    .max_runs = a->shrink_runs,
                                    .log = a->json ? NULL : stderr};
    struct scn_shrink_result res;
    int rc = scn_shrink(&so, &res);
    x->row->executed += res.runs;
    bool shrunk = rc == 0;
    if (!shrunk) {
        fprintf(stderr, "explore: run %d not shrunk (%s); written as it ran\n", run,
                res.error[0] ? res.error : "no smaller run fails");
        struct fl_buf t;
        fl_buf_init(&t);
        if (!read_text(file, &t) || !write_text(out, &t))
            fprintf(stderr, "faultline: explore: cannot write '%s': %s\n", out, strerror(errno));
        fl_buf_close(&t);
    }
    scn_shrink_result_close(&res);
    if (shrunk)
        unname_candidate(file, out, run);
    struct xp_row *row = x->row;
    row->found = fl_realloc(row->found, sizeof *row->found * (size_t)(row->n_found + 1));
    struct xp_finding *f = &row->found[row->n_found++];
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    replay_line(out, s->seed, bug, &cmd);
    *f = (struct xp_finding){.run = run,
                             .file = fl_strdup(out),
                             .replay = fl_strdup(fl_buf_cstr(&cmd)),
                             .violation = fl_strdup(violation ? violation : ""),
                             .how = fl_strdup(s->how),
                             .seed = s->seed,
                             .shrunk = shrunk};
    fl_buf_close(&cmd);
    fprintf(stderr, "explore: %s: run %d fails (%s); replay: %s\n", bug ? bug : "no bug", run,
            f->violation, f->replay);
}

/* A false alarm (the schedule fails without the switch too) is no finding, but it is a
 * failure of the scenario: its file is kept in the output folder as it ran
 * (SCENARIO-BUG-alarmN.lua), with its replay line on stderr. */
static void keep_alarm(struct xp *x, const char *file, const struct xp_sched *s, int run)
{
    char base[256], out[8192];
    base_name(x->a->scenario, base, sizeof base);
    snprintf(out, sizeof out, "%.4000s/%s-%s-alarm%d.lua", x->a->out, base, x->row->bug, run);
    struct fl_buf t, cmd;
    fl_buf_init(&t);
    fl_buf_init(&cmd);
    if (!read_text(file, &t) || !write_text(out, &t))
        fprintf(stderr, "faultline: explore: cannot write '%s': %s\n", out, strerror(errno));
    replay_line(out, s->seed, NULL, &cmd);
    fprintf(stderr,
            "explore: run %d (%s) fails without the switch too: a false alarm; replay: %s\n", run,
            s->how, fl_buf_cstr(&cmd));
    fl_buf_close(&t);
    fl_buf_close(&cmd);
}

/* One run's result: a finding, a false alarm, an error, or coverage (maybe new). */
static int take_result(struct xp *x, const struct sweep_result *r, const char *file,
                       const struct xp_sched *s, int run)
{
    struct xp_row *row = x->row;
    row->runs = run;
    if (r->verdict == SWEEP_ERROR)
        row->errors++;
    uint64_t *feats = NULL;
    int n_feats = 0, new_feats = 0, new_sigs = 0, new_edges = 0, new_edge_pairs = 0;
    if (r->summary) {
        new_sigs = take_signatures(x, r->summary);
        new_feats = take_features(x, r->summary, &feats, &n_feats);
        new_edges = take_edges(x, r->summary, &feats, &n_feats, &new_edge_pairs);
        credit_lanes(x, run_lanes(r->summary), take_risky(x, r->summary));
    }
    /* kept: a new feature or code edge, or a few new signatures or edge counts (one
     * alone is too common to tell); past XP_CORPUS_SOFT entries, only the former */
    bool small = x->n_corpus < XP_CORPUS_SOFT;
    bool by_features = new_feats > 0 || (small && new_sigs >= XP_NEW_SIGS_MIN);
    bool by_edges = new_edges > 0 || (small && new_edge_pairs >= XP_NEW_SIGS_MIN);
    bool alarm = false;
    if (r->verdict == SWEEP_FAIL && row->bug) {
        int rc = confirm(x, file, s->seed, &alarm);
        if (rc) {
            free(feats);
            return rc;
        }
    }
    /* a false alarm is no parent: its children fail the same way without the switch */
    if ((by_features || by_edges) && !alarm) {
        row->corpus_by_edges += !by_features;
        x->corpus = fl_realloc(x->corpus, sizeof *x->corpus * (size_t)(x->n_corpus + 1));
        struct xp_entry *e = &x->corpus[x->n_corpus++];
        xp_entry_from_summary(e, s, r->summary, run);
        e->new_sigs = new_sigs + new_feats + new_edges;
        e->feats = feats;
        e->n_feats = n_feats;
    } else {
        free(feats);
    }
    if (r->verdict != SWEEP_FAIL)
        return 0;
    if (alarm) {
        row->false_alarms =
            fl_realloc(row->false_alarms, sizeof(int) * (size_t)(row->n_false_alarms + 1));
        row->false_alarms[row->n_false_alarms++] = run;
        keep_alarm(x, file, s, run);
        return 0;
    }
    write_finding(x, file, s, run, r->first_violation);
    x->stop = !x->a->keep_going;
    return 0;
}

/* --- the loop -------------------------------------------------------------------------------- */

static int one_batch(struct xp *x, int first_run, int n)
{
    struct xp_sched s[XP_BATCH];
    char paths[XP_BATCH][4200];
    const char *files[XP_BATCH];
    uint64_t seeds[XP_BATCH];
    int rc = 0;
    refill_queue(x, first_run - 1);
    for (int i = 0; i < n; i++) {
        next_schedule(x, &s[i]);
        cand_path(x, first_run + i, paths[i], sizeof paths[i]);
        files[i] = paths[i];
        seeds[i] = s[i].seed;
        if (!write_schedule(x, &s[i], paths[i])) {
            fprintf(stderr, "faultline: explore: cannot write '%s': %s\n", paths[i],
                    strerror(errno));
            rc = FL_EXIT_INTERNAL;
        }
    }
    struct sweep_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc)
        rc = run_batch(x, files, seeds, n, x->row->bug, &rep);
    x->row->executed += rep.count;
    if (!rc && rep.interrupted)
        rc = FL_EXIT_INTERNAL;
    for (int i = 0; !rc && i < rep.count && i < n && !x->stop; i++)
        rc = take_result(x, &rep.results[i], files[i], &s[i], first_run + i);
    sweep_report_close(&rep);
    for (int i = 0; i < n; i++) {
        unlink(paths[i]);
        xp_sched_close(&s[i]);
    }
    return rc;
}

int xp_explore(const struct xp_args *a, const char *body, size_t len, struct xp_row *row)
{
    struct xp x;
    memset(&x, 0, sizeof x);
    x.a = a;
    x.row = row;
    x.body = body;
    x.body_len = len;
    sim_rng_derive(&x.rng, a->seed, "explore");
    sim_rng_derive(&x.fresh, a->seed, "explore/fresh");
    const char *tmp = getenv("TMPDIR");
    snprintf(x.dir, sizeof x.dir, "%.3000s/faultline-explore.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(x.dir)) {
        fprintf(stderr, "faultline: explore: cannot make %s: %s\n", x.dir, strerror(errno));
        return FL_EXIT_INTERNAL;
    }
    int rc = 0, done = 0;
    while (!rc && !x.stop && done < a->runs) {
        int n = FL_MIN(XP_BATCH, a->runs - done);
        rc = one_batch(&x, done + 1, n);
        done += n;
        if (!a->json)
            fprintf(stderr, "explore: %s: %d runs, %zu signatures, corpus %d\n",
                    row->bug ? row->bug : "no bug", row->runs, x.sigs.n, x.n_corpus);
    }
    row->signatures = x.sigs.n;
    row->features = x.pairs.n;
    row->edges = x.edges.n;
    row->risky = x.risky.n;
    row->corpus = x.n_corpus;
    for (int i = 0; i < RUN_LANE_COUNT; i++) {
        row->lane_runs[i] = x.lane_runs[i];
        row->lane_mean[i] = x.lane_runs[i] ? x.lane_reward[i] / x.lane_runs[i] : 0;
    }
    for (int i = 0; i < x.n_corpus; i++)
        xp_entry_close(&x.corpus[i]);
    free(x.corpus);
    map_close(&x.sigs);
    map_close(&x.feats);
    map_close(&x.pairs);
    map_close(&x.edges);
    map_close(&x.edge_pairs);
    map_close(&x.risky);
    map_close(&x.ablated);
    for (int i = 0; i < x.q_len; i++)
        xp_sched_close(&x.queue[(x.q_head + i) % (int)FL_ARRAY_LEN(x.queue)]);
    rmdir(x.dir);
    return rc;
}

void xp_row_close(struct xp_row *row)
{
    for (int i = 0; i < row->n_found; i++) {
        free(row->found[i].file);
        free(row->found[i].replay);
        free(row->found[i].violation);
        free(row->found[i].how);
    }
    free(row->found);
    free(row->false_alarms);
    free(row->fresh_seeds);
}
