/*
 * chk_revision.c: engine 1, linearizability from the revision order etcd exposes.
 *
 * etcd gives every applied write exactly one revision and answers every request with
 * the revision it was served at, so a linearization is almost given: a write sits at
 * position 2r (its revision r), a read served at revision R at 2R+1 (after write R,
 * before write R+1). The history is linearizable iff
 *   1. no two writes claim one revision;
 *   2. replaying the writes in revision order through the etcd model reproduces every
 *      response (values, versions, create/mod revisions, deleted counts, txn branch)
 *      and every read matches the state at its revision; and
 *   3. the positions respect real time: if A returned before B was called, then
 *      pos(A) <= pos(B).
 * Each is near-linear: a counting sort by revision and one sweep over the ops sorted
 * by call and return time.
 *
 * Operations with unknown outcome are placed only when the history reveals them: a
 * read or a watch event shows a key-value whose mod revision no acknowledged write
 * claims, and an unknown op writes exactly that (key, value) (the earliest-called
 * such op is chosen: it constrains real time least); a read showing a create
 * revision nobody claims reveals an unknown put of that key. A revision no op claims
 * after that (a gap) is filled, in revision order, by the unknown op that could have
 * written it there: called before every op ordered after the gap returned, and
 * writing something in the state there. One such op (or several with the same
 * effect, or effects nobody could see) is a proof; otherwise the engine guesses,
 * guided by what later reads saw (the value, the version count, the mod revision of
 * the key). A guess can only confirm: if the replay with it finds no violation, that
 * replay is a linearization; if it finds one, the verdict is CHK_UNKNOWN (and the
 * dispatcher may hand the history to the search). A gap with no candidate stays
 * content-unknown (reads judge what follows), unless watch events show what it did
 * (a lease expiry: the deletes are applied). Watch events only ever place unknown ops
 * and fill such gaps; they never fail this check by themselves (a verdict other than
 * pass that used them is judged again without them). With revisions_complete a gap
 * no op fills is a violation; the search engine reasons the same way on that flag.
 * One exception, guess-free and shared with the search (chk_dup.c): a put's value
 * that a recorded op wrote, shown applied (by its response, a watch event or a read)
 * at more revisions than ops write it, is a duplicate application and fails.
 *
 * Serializable reads are judged against the state at their revision only, not
 * against real time (etcd's serializable validator).
 *
 * The replay also yields the change log (every put/delete per revision) the watch
 * checker judges watch events against.
 *
 * The engine's files: this one classifies the ops (writes, reads, candidates; at most
 * one write claims a revision, every claim is a write at its own revision), runs the
 * tries and states the verdict; chk_rev_replay.c replays (check 2), chk_rev_time.c
 * checks real time and failed reads (check 3) and explains; chk_gap.c places the
 * unknown-outcome ops. Their shared state, struct rv, is in chk_rev_int.h.
 */
#include "checkers/chk_rev_int.h"
#include "harness/common/marker.h"

/* Does the op's taken branch (or either, when unknown) write? 2 = surely, 1 = maybe. */
static int op_writes(const struct chk_history *h, const struct chk_op *op)
{
    bool known = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET);
    bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
    int best = 0;
    for (int b = 0; b < 2; b++) {
        if (known && b != (succ ? 0 : 1))
            continue;
        uint32_t first = op->sub_first + (b ? op->then_count : 0);
        uint32_t n = b ? op->else_count : op->then_count;
        for (uint32_t i = 0; i < n; i++) {
            const struct chk_sub *s = &h->subs[first + i];
            int w = 0;
            if (s->kind == CHK_SUB_PUT || s->kind == CHK_SUB_APPEND)
                w = 2;
            else if (s->kind == CHK_SUB_DELETE)
                w = !(s->flags & CHK_SUBF_COUNT_SET) || op->status != CHK_ST_OK ? 1
                    : s->count > 0                                              ? 2
                                                                                : 0;
            best = FL_MAX(best, w);
        }
    }
    return known ? best : FL_MIN(best, 1);
}

void chk__rv_viol_add(struct rv *r, int kind, uint32_t op, uint32_t other, int64_t rev, int64_t pos,
                      const char *msg, json_t *state)
{
    FL_ASSERT(kind >= 0 && kind <= 2 && msg != NULL);
    FL_ASSERT(op < r->h->op_count && (other == UINT32_MAX || other < r->h->op_count));
    FL_ASSERT(r->viol_count <= VIOL_MAX && r->viol_count <= r->viol_total);
    r->viol_total++;
    if (r->viol_count == VIOL_MAX) {
        json_decref(state);
        return;
    }
    struct rv_viol *v = &r->viol[r->viol_count++];
    v->kind = kind;
    v->op = op;
    v->other = other;
    v->rev = rev;
    v->pos = pos;
    snprintf(v->msg, sizeof(v->msg), "%s", msg);
    v->state = state;
}

static int64_t max_revision(const struct chk_history *h)
{
    int64_t m = 1;
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (h->ops[i].status == CHK_ST_OK && h->ops[i].rev != CHK_NO_REV)
            m = FL_MAX(m, h->ops[i].rev);
    }
    for (uint32_t i = 0; i < h->kv_count; i++)
        m = FL_MAX(m, FL_MAX(h->kvs[i].mod_rev, h->kvs[i].create_rev));
    for (uint32_t i = 0; i < h->event_count; i++) {
        if (h->events[i].kind != CHK_EV_PROGRESS)
            m = FL_MAX(m, h->events[i].mod_rev);
    }
    return m;
}

/* The first classification of op i: its role, and the revision it claims when it
 * surely wrote. An acknowledged op whose result does not say whether it wrote is
 * left ROLE_TENT for classify_tentative. */
static void classify_op(struct rv *r, uint32_t i)
{
    const struct chk_op *op = &r->h->ops[i];
    if (op->status == CHK_ST_FAIL) {
        r->role[i] = ROLE_FAILED;
        return;
    }
    if (op->status == CHK_ST_OK && op->rev < 1) {
        r->role[i] = ROLE_NONE; /* e.g. defragment: not linearizable (rev -1) */
        return;
    }
    if (op->kind == CHK_OP_COMPACT) {
        r->role[i] = op->status == CHK_ST_OK ? ROLE_READ : ROLE_NONE;
        return;
    }
    int w = op_writes(r->h, op);
    if (op->status == CHK_ST_UNKNOWN) {
        r->role[i] = w ? ROLE_CAND : ROLE_NONE;
        return;
    }
    FL_ASSERT(op->rev >= 1 && op->rev <= r->max_rev);
    if (w == 2 && op->rev >= 2) {
        FL_TESTCASE(r->claim[op->rev] >= 0); /* two acknowledged writes at one revision */
        if (r->claim[op->rev] >= 0) {
            char msg[200];
            snprintf(msg, sizeof(msg), "two writes claim revision %lld", (long long)op->rev);
            chk__rv_viol_add(r, 2, i, (uint32_t)r->claim[op->rev], op->rev, 2 * op->rev, msg, NULL);
            r->role[i] = ROLE_READ; /* judged as a read at its revision */
            return;
        }
        r->claim[op->rev] = (int32_t)i;
        r->role[i] = ROLE_WRITE;
    } else {
        r->role[i] = w == 1 && op->rev >= 2 ? ROLE_TENT : ROLE_READ;
    }
}

/* A tentative writer takes its revision when no sure write claims it (unless
 * tent_read: then every tentative op is judged as a read). */
static void classify_tentative(struct rv *r, uint32_t i)
{
    const struct chk_op *op = &r->h->ops[i];
    FL_ASSERT(r->role[i] == ROLE_TENT && op->rev >= 2);
    if (r->claim[op->rev] < 0 && !r->tent_read) {
        r->claim[op->rev] = (int32_t)i;
        r->role[i] = ROLE_WRITE;
        r->tent_writes++;
    } else {
        r->role[i] = ROLE_READ;
    }
}

/* Candidate index: every put (key, value) and single-key delete of unknown ops, in
 * (key, value, call, op) order for the reveals' binary searches. */
static void index_candidates(struct rv *r)
{
    const struct chk_history *h = r->h;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_CAND)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            bool range_delete = s->kind == CHK_SUB_DELETE && s->range_end != CHK_RANGE_ONE;
            r->cand_range |= range_delete;
            if (s->kind == CHK_SUB_RANGE || range_delete)
                continue;
            FL_GROW(r->cands, cap, r->cand_count + 1, 256);
            r->cands[r->cand_count++] = (struct cand_ent){
                s->key, s->kind == CHK_SUB_DELETE ? CHK_NIL : s->value, op->call_ns, i};
        }
    }
    if (r->cand_count)
        qsort(r->cands, r->cand_count, sizeof(*r->cands), chk__rv_cand_cmp);
    for (uint32_t c = 1; c < r->cand_count; c++)
        FL_ASSERT(chk__rv_cand_cmp(&r->cands[c - 1], &r->cands[c]) <= 0);
}

/* Roles and claims of acknowledged ops; candidates of unknown ones. Afterwards every
 * claimed revision names a writer answered at it, and no op is left tentative. */
static void rv_classify(struct rv *r)
{
    struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++)
        classify_op(r, i);
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r->role[i] == ROLE_TENT)
            classify_tentative(r, i);
    }
    index_candidates(r);
    for (int64_t rev = 2; rev <= r->max_rev; rev++) {
        int32_t w = r->claim[rev];
        FL_ASSERT(w < 0 || (r->role[w] == ROLE_WRITE && h->ops[w].rev == rev));
    }
    for (uint32_t i = 0; i < h->op_count; i++)
        FL_ASSERT(r->role[i] != ROLE_TENT);
}

/* Forgets what one replay placed into gaps and found, for another try. What obs_build
 * built stays: it ran before the replay's first gap placement, so from the roles and
 * claims of the reveals, which every try starts from (role0, claim0). */
static void rv_reset(struct rv *r, const uint8_t *role0, const int64_t *pos0, const int32_t *claim0,
                     uint32_t revealed0)
{
    const struct chk_history *h = r->h;
    memcpy(r->role, role0, h->op_count);
    memcpy(r->pos, pos0, h->op_count * sizeof(int64_t));
    memcpy(r->claim, claim0, (size_t)(r->max_rev + 2) * sizeof(int32_t));
    for (uint32_t i = 0; i < r->viol_count; i++)
        json_decref(r->viol[i].state);
    r->viol_count = r->viol_total = 0;
    r->ambiguous = false;
    r->guess_min = 0;
    r->gaps = 0;
    r->xput_count = 0;
    r->ndecisions = 0;
    r->out->revealed = revealed0;
    free(r->out->changes);
    r->out->changes = NULL;
    r->out->change_count = 0;
    json_decref(r->out->detail);
    r->out->detail = NULL;
}

/* Next choices: the last decision before the first violation that has an untried
 * alternative; false when there is none. */
static bool rv_next_choice(struct rv *r)
{
    int64_t first = INT64_MAX;
    for (uint32_t i = 0; i < r->viol_count; i++)
        first = FL_MIN(first, r->viol[i].pos);
    for (uint32_t d = r->ndecisions; d-- > 0;) {
        uint32_t cur = d < r->nchoice ? r->choice[d] : 0;
        if (2 * r->dec_rev[d] > first || cur + 1 >= r->dec_count[d])
            continue;
        for (uint32_t x = r->nchoice; x < d; x++)
            r->choice[x] = 0;
        r->choice[d] = cur + 1;
        r->nchoice = d + 1;
        FL_ASSERT(r->choice[d] < r->dec_count[d] && r->nchoice <= DECISIONS_MAX);
        return true;
    }
    return false;
}

/* Replays, retrying other guesses while a guessed replay ends in a violation. A
 * replay without violation is a linearization (pass); violations without any guess
 * are a proof (fail); violations after guesses that all retries kept are "unknown". */
static void rv_attempts(struct rv *r)
{
    const struct chk_history *h = r->h;
    struct chk_lin_result *out = r->out;
    /* A retry needs a decision point, which only a gap with an unknown op left to place
     * makes (chk__rv_fill_gap): without one, no try is ever reset and the starting
     * roles, positions and claims need no copy (at 10M operations ~120 MB). */
    bool retries = r->cand_op_count > 0;
    uint8_t *role0 = retries ? fl_memdup(r->role, h->op_count + 1) : NULL;
    int64_t *pos0 = retries ? fl_memdup(r->pos, (h->op_count + 1) * sizeof(int64_t)) : NULL;
    int32_t *claim0 =
        retries ? fl_memdup(r->claim, (size_t)(r->max_rev + 2) * sizeof(int32_t)) : NULL;
    uint32_t revealed0 = out->revealed;
    uint32_t attempt = 0;
    /* retries cost a replay each: keep the total near a few replays of big histories */
    uint32_t attempts_max = (uint32_t)FL_MAX(2, FL_MIN(ATTEMPTS_MAX, 4000000 / (h->op_count + 1)));
    for (;;) {
        chk__rv_replay(r);
        chk__rv_realtime(r);
        chk__rv_failed(r);
        attempt++;
        if (!r->viol_total || !r->ambiguous || attempt >= attempts_max || !rv_next_choice(r))
            break;
        FL_ASSERT(retries && r->ndecisions > 0); /* rv_next_choice found a decision point */
        rv_reset(r, role0, pos0, claim0, revealed0);
    }
    FL_ASSERT(attempt >= 1 && attempt <= attempts_max);
    FL_ASSERT(r->viol_count == FL_MIN(r->viol_total, (uint32_t)VIOL_MAX));
    out->verdict = r->viol_total ? CHK_FAIL : CHK_PASS;
    chk__rv_explain(r);
    if (r->ambiguous && r->viol_total) {
        /* the violation may be an artefact of a guessed placement */
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision %lld could have been written by several operations of unknown "
                 "outcome, and a violation follows in all %u placements tried; undecided",
                 (long long)r->ambiguous_rev, attempt);
        out->changes_known = false;
    }
    if (out->detail)
        json_object_set_new(out->detail, "attempts", json_integer(attempt));
    free(role0);
    free(pos0);
    free(claim0);
}

/* r->retmin: per revision R, the earliest return of an acknowledged op ordered after
 * write R (reads at >= R, writes at > R). */
static void rv_retmin(struct rv *r)
{
    const struct chk_history *h = r->h;
    int64_t R = r->max_rev;
    r->retmin = fl_malloc((size_t)(R + 2) * sizeof(int64_t));
    for (int64_t x = 0; x <= R + 1; x++)
        r->retmin[x] = CHK_NEVER;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->flags & CHK_OPF_SERIALIZABLE || op->rev < 1 || op->rev > R)
            continue;
        if (r->role[i] == ROLE_READ)
            r->retmin[op->rev] = FL_MIN(r->retmin[op->rev], op->return_ns);
        else if (r->role[i] == ROLE_WRITE)
            r->retmin[op->rev - 1] = FL_MIN(r->retmin[op->rev - 1], op->return_ns);
    }
    for (int64_t x = R; x-- > 0;)
        r->retmin[x] = FL_MIN(r->retmin[x], r->retmin[x + 1]);
    for (int64_t x = 1; x <= R + 1; x++)
        FL_ASSERT(r->retmin[x - 1] <= r->retmin[x]);
}

/* One run of the engine; no_watch: watch events reveal nothing; tent_read: see struct
 * rv (*tent_writes, when not NULL, gets how many were taken as writers). */
static void rv_run(struct chk_history *h, int64_t max_rev, struct chk_lin_result *out,
                   bool no_watch, bool tent_read, uint32_t *watch_reveals, uint32_t *tent_writes)
{
    struct rv r;
    memset(&r, 0, sizeof(r));
    r.h = h;
    r.out = out;
    r.no_watch = no_watch;
    r.tent_read = tent_read;
    r.max_rev = max_rev; /* max_revision(h), computed once by chk_lin_revision */
    FL_ASSERT(max_rev >= 1);
    r.role = fl_calloc(h->op_count + 1, 1);
    r.pos = fl_malloc((h->op_count + 1) * sizeof(int64_t));
    r.claim = fl_malloc((size_t)(r.max_rev + 2) * sizeof(int32_t));
    for (int64_t x = 0; x <= r.max_rev + 1; x++)
        r.claim[x] = -1;
    for (uint32_t i = 0; i < h->op_count; i++)
        r.pos[i] = INT64_MIN;
    rv_classify(&r);
    /* retmin bounds where an unknown-outcome writer may go (chk_gap.c reads it only for
     * r.cands): a history without any skips its 8 bytes a revision */
    if (r.cand_count)
        rv_retmin(&r);
    chk__rv_wev_build(&r);
    chk__rv_reveal_all(&r);
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r.role[i] == ROLE_WRITE)
            r.pos[i] = 2 * h->ops[i].rev;
        else if (r.role[i] == ROLE_READ)
            r.pos[i] = 2 * h->ops[i].rev + 1;
    }
    uint32_t ncand = 0; /* sized to the unknown writers: usually far fewer than ops */
    for (uint32_t i = 0; i < h->op_count; i++)
        ncand += r.role[i] == ROLE_CAND;
    r.cand_ops = fl_malloc(((size_t)ncand + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r.role[i] == ROLE_CAND)
            r.cand_ops[r.cand_op_count++] = i;
    }
    FL_ASSERT(r.cand_op_count == ncand);
    chk__rv_sort_ops(h, r.cand_ops, r.cand_op_count, false);
    /* candidate order: the gap filling walks unknown writers by call time */
    for (uint32_t c = 1; c < r.cand_op_count; c++)
        FL_ASSERT(h->ops[r.cand_ops[c - 1]].call_ns <= h->ops[r.cand_ops[c]].call_ns);
    rv_attempts(&r);
    /* a pass whose linearization rests on guessed placements: where they start */
    out->guessed_from = out->verdict == CHK_PASS && r.ambiguous ? r.guess_min : 0;
    if (watch_reveals)
        *watch_reveals = r.watch_reveals + (r.watch_obs && r.out->verdict != CHK_PASS);
    if (tent_writes)
        *tent_writes = r.tent_writes;
    for (uint32_t i = 0; i < r.viol_count; i++)
        json_decref(r.viol[i].state);
    free(r.role);
    free(r.pos);
    free(r.claim);
    free(r.cands);
    free(r.obs);
    free(r.puts);
    free(r.xputs);
    free(r.gapcount);
    free(r.obs_key);
    free(r.put_key);
    free(r.cand_ops);
    free(r.wev);
    free(r.wcov_lo);
    free(r.wcov_hi);
    free(r.retmin);
}

/*
 * Watch events may settle where an unknown-outcome op took effect, nothing more
 * (DESIGN §3.7): when a verdict other than pass used such a placement, the history is
 * judged again without them, and if that finds a linearization, it stands (the watch
 * checker then reports the events no write explains).
 */
/* rv_run, and when ops that may not have written were taken as writers and that
 * failed, again with them judged as reads. Either passing is a linearization. Both
 * failing is a proof when there was one such op (its two possibilities are all there
 * is); with several, mixed choices were not tried: undecided. */
static void rv_run_tent(struct chk_history *h, int64_t max_rev, struct chk_lin_result *out,
                        bool no_watch, uint32_t *watch_reveals)
{
    uint32_t tents = 0;
    rv_run(h, max_rev, out, no_watch, false, watch_reveals, &tents);
    if (out->verdict == CHK_PASS || tents == 0)
        return;
    struct chk_lin_result alt;
    memset(&alt, 0, sizeof(alt));
    alt.engine = CHK_ENGINE_REVISION;
    uint32_t alt_reveals = 0;
    rv_run(h, max_rev, &alt, no_watch, true, &alt_reveals, NULL);
    alt.steps += out->steps;
    if (alt.verdict == CHK_PASS) {
        chk_lin_result_close(out);
        *out = alt;
        if (watch_reveals)
            *watch_reveals = alt_reveals;
        if (out->detail)
            json_object_set_new(out->detail, "writes_judged_as_reads", json_integer(tents));
        return;
    }
    out->steps = alt.steps;
    int alt_verdict = alt.verdict;
    chk_lin_result_close(&alt);
    if (watch_reveals)
        *watch_reveals += alt_reveals; /* a verdict either reading used watches for is
                                          judged again without them */
    if (out->verdict == CHK_FAIL && (tents > 1 || alt_verdict != CHK_FAIL)) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "%u acknowledged operations do not say whether they wrote; taken as the "
                 "writers of their revisions and as reads there, a violation follows; "
                 "undecided",
                 tents);
        out->changes_known = false;
    }
}

int chk_lin_revision(struct chk_history *h, const struct chk_limits *lim,
                     struct chk_lin_result *out)
{
    (void)lim;
    FL_ASSERT(h->finished);
    out->engine = CHK_ENGINE_REVISION;
    if (!h->has_revs) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision order needs a header revision on every acknowledged operation");
        return FL_OK;
    }
    /* The engine sorts by revision through arrays indexed by revision: a history whose
     * revisions are far sparser than its records (fuzz: one revision of 4.4e15) would
     * ask for petabytes. It leaves such a history to the search. */
    int64_t max_rev = max_revision(h);
    int64_t dense = 16 * ((int64_t)h->op_count + h->kv_count + h->event_count) + 4000000;
    if (max_rev > dense) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision %lld is far above what %u operations could have made; the "
                 "revision order engine does not judge such sparse revisions",
                 (long long)max_rev, h->op_count);
        return FL_OK;
    }
    uint32_t watch_reveals = 0;
    rv_run_tent(h, max_rev, out, false, &watch_reveals);
    /* A linearization found with the watch events is one they agree with wherever they
     * guided a placement: the watch checker takes its changes as they are. */
    if (out->verdict == CHK_PASS || watch_reveals == 0) {
        out->guessed_from = 0;
        chk_dup_applications(h, out);
        return FL_OK;
    }
    struct chk_lin_result alt;
    memset(&alt, 0, sizeof(alt));
    alt.engine = CHK_ENGINE_REVISION;
    rv_run_tent(h, max_rev, &alt, true, NULL);
    alt.steps += out->steps;
    if (alt.verdict != CHK_PASS) {
        out->steps = alt.steps;
        out->guessed_from = 0;
        chk_lin_result_close(&alt);
        chk_dup_applications(h, out);
        return FL_OK;
    }
    chk_lin_result_close(out);
    *out = alt;
    /* Judged without the watch events (with them it was undecided), the pass may have
     * guessed where an unknown-outcome op took effect: alt.guessed_from says from which
     * revision on its changes are one placement among several, which the watch checker
     * must not take as fact (a false "reliable" failure against the guess otherwise). */
    if (out->detail) {
        json_object_set_new(out->detail, "watch_reveals_ignored", json_integer(watch_reveals));
        if (out->guessed_from)
            json_object_set_new(out->detail, "guessed_from", json_integer(out->guessed_from));
    }
    chk_dup_applications(h, out);
    return FL_OK;
}
