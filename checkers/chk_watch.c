/*
 * chk_watch.c: the watch checker. Judges every watch's delivered events against
 * the nine guarantees etcd's robustness tests name (etcd-facts §A.9):
 *   filter        every event lies in the watched key range
 *   ordered       event revisions never go backwards
 *   unique        no (revision, key) is delivered twice
 *   atomic        a response never starts with the revision the previous one ended
 *                 with (a revision's events are not split over responses)
 *   bookmarkable  no event at or below a progress notification's revision; progress
 *                 revisions never go backwards nor below the last event
 *   resumable     a watch from an explicit start revision first delivers the first
 *                 matching change at or after it
 *   is_create     is_create (create_rev == mod_rev) iff the key was absent before
 *   prev_kv       a prev value, when present, is the value before the change
 *   reliable      the events equal the matching changes from the start revision to
 *                 the last revision the watch reached (event or progress): none
 *                 missing, none invented
 * The changes come from the linearized history (the revision engine's replay:
 * acknowledged writes and unknown-outcome writes a read or event revealed). When they
 * are not known the last four are "unknown". A stale read never reaches this file; a
 * dropped event never reaches the linearizability verdict.
 */
#include "checkers/chk_int.h"
#include "harness/common/order.h"

#include <stdarg.h>

#define WVIOL_MAX 64

struct wk {
    const struct chk_history *h;
    const struct chk_lin_result *lin;
    struct chk_watch_result *out;
    uint32_t viol_cap;
};

static void wviol(struct wk *k, int g, const struct chk_watch *w, int64_t rev, uint32_t ev,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Does a violation of guarantee g at rev rest on a guessed placement? The guarantees
 * judged against the change log (resumable, is_create, prev_kv, reliable) at or
 * after the first revision a guess placed (lin->guessed_from): the change there, and
 * the state every later change starts from, may differ under another placement. */
static bool rests_on_guess(const struct wk *k, int g, int64_t rev)
{
    bool by_changes =
        g == CHK_G_RESUMABLE || g == CHK_G_IS_CREATE || g == CHK_G_PREV_KV || g == CHK_G_RELIABLE;
    return by_changes && k->lin && k->lin->guessed_from && rev >= k->lin->guessed_from;
}

static void wviol(struct wk *k, int g, const struct chk_watch *w, int64_t rev, uint32_t ev,
                  const char *fmt, ...)
{
    struct chk_watch_result *o = k->out;
    if (rests_on_guess(k, g, rev)) {
        if (o->g_verdict[g] != CHK_FAIL)
            o->g_verdict[g] = CHK_UNKNOWN;
        if (!o->undecided++)
            snprintf(o->reason, sizeof(o->reason),
                     "judged against a linearization that guessed where unknown-outcome "
                     "operations took effect from revision %lld on (with the watch events "
                     "it was undecided): %s at revision %lld not judged",
                     (long long)k->lin->guessed_from, chk_guarantee_name(g), (long long)rev);
        return;
    }
    o->g_verdict[g] = CHK_FAIL;
    o->g_fail_count[g]++;
    if (o->viol_count == WVIOL_MAX)
        return;
    FL_GROW(o->viol, k->viol_cap, o->viol_count + 1, 16);
    struct chk_watch_violation *v = &o->viol[o->viol_count++];
    v->guarantee = g;
    v->watch_id = w->watch_id;
    v->rev = rev;
    v->event = ev;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
    va_end(ap);
}

/* First change with rev >= r. */
static uint32_t change_lb(const struct chk_lin_result *lin, int64_t r)
{
    uint32_t lo = 0, hi = lin->change_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (lin->changes[mid].rev < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The change of (rev, key): its index, UINT32_MAX when none; *unknown_rev set when
 * the revision happened but its content is unknown. */
static uint32_t change_find(const struct chk_lin_result *lin, int64_t rev, int32_t key,
                            bool *unknown_rev)
{
    *unknown_rev = false;
    uint32_t found = UINT32_MAX;
    for (uint32_t i = change_lb(lin, rev); i < lin->change_count && lin->changes[i].rev == rev;
         i++) {
        if (lin->changes[i].kind == CHK_EV_PROGRESS)
            *unknown_rev = true;
        else if (lin->changes[i].key == key)
            found = i; /* the last change of the key in that revision wins */
    }
    return found;
}

static const struct chk_history *g_wh;

/* Events by (revision, key rank, delivery order). */
static int ev_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const struct chk_wevent *ex = &g_wh->events[x], *ey = &g_wh->events[y];
    const uint32_t *rank = g_wh->key_rank;
    FL_CMP_STEP(ex->mod_rev, ey->mod_rev);
    FL_CMP_STEP(rank[ex->key], rank[ey->key]);
    FL_CMP_STEP(x, y);
    return 0;
}

static bool ev_is_create(const struct chk_wevent *e, bool *given)
{
    *given = true;
    if (e->create_rev != CHK_NO_REV && e->mod_rev != CHK_NO_REV)
        return e->create_rev == e->mod_rev;
    if (e->version != CHK_NO_REV)
        return e->version == 1;
    *given = false;
    return false;
}

/* Stream checks: filter, ordered, atomic, bookmarkable, is_create, prev_kv. */
static void watch_stream(struct wk *k, const struct chk_watch *w, bool known, int64_t *last_reached)
{
    const struct chk_history *h = k->h;
    int64_t last_rev = 0, last_progress = 0, prev_resp = INT64_MIN, prev_resp_last = 0;
    int64_t cur_resp = INT64_MIN, cur_last = 0;
    for (uint32_t i = w->ev_first; i < w->ev_first + w->ev_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind == CHK_EV_PROGRESS) {
            if (e->mod_rev < last_progress)
                wviol(k, CHK_G_BOOKMARKABLE, w, e->mod_rev, i,
                      "progress notification went back from %lld to %lld", (long long)last_progress,
                      (long long)e->mod_rev);
            else if (e->mod_rev < last_rev)
                wviol(k, CHK_G_BOOKMARKABLE, w, e->mod_rev, i,
                      "progress notification at %lld after an event at %lld", (long long)e->mod_rev,
                      (long long)last_rev);
            last_progress = FL_MAX(last_progress, e->mod_rev);
            continue;
        }
        if (!chk_key_in_range(h, e->key, w->key, w->range_end) ||
            (e->kind == CHK_EV_PUT && (w->flags & CHK_WF_NOPUT)) ||
            (e->kind == CHK_EV_DELETE && (w->flags & CHK_WF_NODELETE)))
            wviol(k, CHK_G_FILTER, w, e->mod_rev, i, "event not matching watch filter");
        if (e->mod_rev < last_rev)
            wviol(k, CHK_G_ORDERED, w, e->mod_rev, i, "event at %lld after an event at %lld",
                  (long long)e->mod_rev, (long long)last_rev);
        if (e->mod_rev <= last_progress)
            wviol(k, CHK_G_BOOKMARKABLE, w, e->mod_rev, i,
                  "event at %lld after a progress notification at %lld", (long long)e->mod_rev,
                  (long long)last_progress);
        if (e->response != cur_resp) {
            prev_resp = cur_resp;
            prev_resp_last = cur_last;
            cur_resp = e->response;
            if (prev_resp != INT64_MIN && e->mod_rev == prev_resp_last)
                wviol(k, CHK_G_ATOMIC, w, e->mod_rev, i, "revision %lld split over two responses",
                      (long long)e->mod_rev);
        }
        cur_last = e->mod_rev;
        last_rev = FL_MAX(last_rev, e->mod_rev);
        if (!known)
            continue;
        bool unknown_rev;
        uint32_t c = change_find(k->lin, e->mod_rev, e->key, &unknown_rev);
        if (c == UINT32_MAX)
            continue; /* reliable judges invented events */
        const struct chk_change *ch = &k->lin->changes[c];
        bool given;
        bool is_create = ev_is_create(e, &given);
        if (e->kind == CHK_EV_PUT && ch->kind == CHK_EV_PUT && given &&
            is_create != (ch->prev_value == CHK_NIL))
            wviol(k, CHK_G_IS_CREATE, w, e->mod_rev, i, "incorrect event IsCreate (%s)",
                  is_create ? "says created, key existed" : "says updated, key was absent");
        if (e->prev_value != CHK_NOT_GIVEN && e->prev_value != ch->prev_value)
            wviol(k, CHK_G_PREV_KV, w, e->mod_rev, i, "incorrect event prevValue");
    }
    *last_reached = FL_MAX(last_rev, last_progress);
}

static bool change_matches(const struct chk_history *h, const struct chk_watch *w,
                           const struct chk_change *c)
{
    if (c->kind == CHK_EV_PROGRESS)
        return false;
    if ((c->kind == CHK_EV_PUT && (w->flags & CHK_WF_NOPUT)) ||
        (c->kind == CHK_EV_DELETE && (w->flags & CHK_WF_NODELETE)))
        return false;
    return chk_key_in_range(h, c->key, w->key, w->range_end);
}

/* The watch's put/delete events its filters and range let through, into tmp in
 * (revision, key) order; returns how many. */
static uint32_t watch_delivered(const struct chk_history *h, const struct chk_watch *w,
                                uint32_t *tmp)
{
    uint32_t n = 0;
    for (uint32_t i = w->ev_first; i < w->ev_first + w->ev_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        bool filtered = (e->kind == CHK_EV_PUT && (w->flags & CHK_WF_NOPUT)) ||
                        (e->kind == CHK_EV_DELETE && (w->flags & CHK_WF_NODELETE));
        if (e->kind != CHK_EV_PROGRESS && !filtered &&
            chk_key_in_range(h, e->key, w->key, w->range_end))
            tmp[n++] = i;
    }
    g_wh = h;
    qsort(tmp, n, sizeof(uint32_t), ev_cmp);
    for (uint32_t i = 1; i < n; i++)
        FL_ASSERT(h->events[tmp[i - 1]].mod_rev <= h->events[tmp[i]].mod_rev);
    FL_ASSERT(n <= w->ev_count);
    return n;
}

/* Resumable: a watch from a start revision first delivers the first matching change
 * at or after it. */
static void watch_resumable(struct wk *k, const struct chk_watch *w)
{
    const struct chk_history *h = k->h;
    const struct chk_lin_result *lin = k->lin;
    FL_ASSERT(w->start_rev > 0 && w->ev_count > 0);
    const struct chk_wevent *e0 = &h->events[w->ev_first];
    for (uint32_t i = w->ev_first; i < w->ev_first + w->ev_count; i++) {
        if (h->events[i].kind != CHK_EV_PROGRESS) {
            e0 = &h->events[i];
            break;
        }
    }
    uint32_t c = change_lb(lin, w->start_rev);
    while (c < lin->change_count && !change_matches(h, w, &lin->changes[c]) &&
           lin->changes[c].kind != CHK_EV_PROGRESS)
        c++;
    if (c < lin->change_count && lin->changes[c].kind != CHK_EV_PROGRESS &&
        lin->changes[c].rev < e0->mod_rev)
        wviol(k, CHK_G_RESUMABLE, w, lin->changes[c].rev, UINT32_MAX,
              "watch from revision %lld first delivered revision %lld, not %lld",
              (long long)w->start_rev, (long long)e0->mod_rev, (long long)lin->changes[c].rev);
}

/* Reliable: merges the expected changes [first_rev, last_reached] with the n
 * delivered events in tmp, both in (revision, key order). */
static void watch_merge(struct wk *k, const struct chk_watch *w, const uint32_t *tmp, uint32_t n,
                        int64_t first_rev, int64_t last_reached)
{
    const struct chk_history *h = k->h;
    const struct chk_lin_result *lin = k->lin;
    uint32_t c = change_lb(lin, first_rev), j = 0;
    int64_t prev_rev = -1;
    int32_t prev_key = -1;
    while (true) {
        while (c < lin->change_count && lin->changes[c].rev <= last_reached &&
               !change_matches(h, w, &lin->changes[c]))
            c++;
        bool have_c = c < lin->change_count && lin->changes[c].rev <= last_reached;
        while (j < n && h->events[tmp[j]].mod_rev == prev_rev && h->events[tmp[j]].key == prev_key)
            j++; /* duplicates: unique's business */
        bool have_e = j < n;
        if (!have_c && !have_e)
            break;
        const struct chk_change *ch = have_c ? &lin->changes[c] : NULL;
        const struct chk_wevent *e = have_e ? &h->events[tmp[j]] : NULL;
        int ord = !have_c ? 1 : !have_e ? -1 : 0;
        if (!ord && ch->rev != e->mod_rev)
            ord = ch->rev < e->mod_rev ? -1 : 1;
        if (!ord && ch->key != e->key)
            ord = h->key_rank[ch->key] < h->key_rank[e->key] ? -1 : 1;
        bool unknown_rev = false;
        if (ord > 0) {
            change_find(lin, e->mod_rev, e->key, &unknown_rev);
            if (!unknown_rev)
                wviol(k, CHK_G_RELIABLE, w, e->mod_rev, tmp[j],
                      "event at revision %lld that no write made", (long long)e->mod_rev);
        } else if (ord < 0) {
            wviol(k, CHK_G_RELIABLE, w, ch->rev, UINT32_MAX,
                  "missing event at revision %lld (reached %lld)", (long long)ch->rev,
                  (long long)last_reached);
            c++;
            continue;
        } else {
            int ek = e->kind == CHK_EV_PUT ? CHK_EV_PUT : CHK_EV_DELETE;
            if (ek != ch->kind || (ek == CHK_EV_PUT && e->value != ch->value))
                wviol(k, CHK_G_RELIABLE, w, e->mod_rev, tmp[j],
                      "event at revision %lld differs from the write", (long long)e->mod_rev);
            c++;
        }
        prev_rev = e->mod_rev;
        prev_key = e->key;
        j++;
        /* several changes of one key in one revision: the last one is reported */
        while (ord == 0 && c < lin->change_count && lin->changes[c].rev == prev_rev &&
               lin->changes[c].key == prev_key)
            c++;
    }
    FL_ASSERT(j >= n); /* every delivered event was judged */
}

/* Reliable and resumable, against the changes. */
static void watch_changes(struct wk *k, const struct chk_watch *w, int64_t last_reached,
                          uint32_t *tmp)
{
    const struct chk_history *h = k->h;
    uint32_t n = watch_delivered(h, w, tmp);
    int64_t first_rev = w->start_rev > 0 ? w->start_rev : (n ? h->events[tmp[0]].mod_rev : 0);
    if (w->start_rev > 0 && n)
        watch_resumable(k, w);
    if (!first_rev || last_reached < first_rev)
        return;
    watch_merge(k, w, tmp, n, first_rev, last_reached);
}

static void watch_unique(struct wk *k, const struct chk_watch *w, uint32_t *tmp)
{
    const struct chk_history *h = k->h;
    uint32_t n = 0;
    for (uint32_t i = w->ev_first; i < w->ev_first + w->ev_count; i++) {
        if (h->events[i].kind != CHK_EV_PROGRESS)
            tmp[n++] = i;
    }
    g_wh = h;
    qsort(tmp, n, sizeof(uint32_t), ev_cmp);
    for (uint32_t i = 1; i < n; i++) {
        const struct chk_wevent *a = &h->events[tmp[i - 1]], *b = &h->events[tmp[i]];
        if (a->mod_rev == b->mod_rev && a->key == b->key)
            wviol(k, CHK_G_UNIQUE, w, b->mod_rev, tmp[i], "event delivered twice");
    }
}

int chk_watch_check(const struct chk_history *h, const struct chk_lin_result *lin,
                    struct chk_watch_result *out)
{
    FL_ASSERT(h->finished);
    memset(out, 0, sizeof(*out));
    struct wk k = {h, lin, out, 0};
    out->watches = h->watch_count;
    out->events = h->event_count;
    bool known = lin && lin->changes_known;
    uint32_t *tmp = fl_malloc((h->event_count + 1) * sizeof(uint32_t));
    bool any_events = false;
    for (uint32_t i = 0; i < h->watch_count; i++) {
        const struct chk_watch *w = &h->watches[i];
        int64_t last_reached = 0;
        any_events |= w->ev_count > 0;
        watch_stream(&k, w, known, &last_reached);
        watch_unique(&k, w, tmp);
        if (known)
            watch_changes(&k, w, last_reached, tmp);
    }
    free(tmp);
    if (!known && any_events) {
        static const int need[] = {CHK_G_RESUMABLE, CHK_G_IS_CREATE, CHK_G_PREV_KV, CHK_G_RELIABLE};
        for (size_t i = 0; i < FL_ARRAY_LEN(need); i++) {
            if (out->g_verdict[need[i]] == CHK_PASS)
                out->g_verdict[need[i]] = CHK_UNKNOWN;
        }
    }
    out->verdict = CHK_PASS;
    for (int g = 0; g < CHK_G_COUNT; g++) {
        if (out->g_verdict[g] == CHK_FAIL)
            out->verdict = CHK_FAIL;
        else if (out->g_verdict[g] == CHK_UNKNOWN && out->verdict == CHK_PASS)
            out->verdict = CHK_UNKNOWN;
    }
    return FL_OK;
}

void chk_watch_result_close(struct chk_watch_result *r)
{
    free(r->viol);
    json_decref(r->detail);
    memset(r, 0, sizeof(*r));
}

json_t *chk_watch_json(const struct chk_history *h, const struct chk_watch_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(chk_verdict_name(r->verdict)));
    json_object_set_new(o, "watches", json_integer(r->watches));
    json_object_set_new(o, "events", json_integer(r->events));
    json_t *g = json_object();
    for (int i = 0; i < CHK_G_COUNT; i++) {
        json_t *gi = json_object();
        json_object_set_new(gi, "verdict", json_string(chk_verdict_name(r->g_verdict[i])));
        json_object_set_new(gi, "violations", json_integer(r->g_fail_count[i]));
        json_object_set_new(g, chk_guarantee_name(i), gi);
    }
    json_object_set_new(o, "guarantees", g);
    if (r->undecided) {
        json_object_set_new(o, "undecided", json_integer(r->undecided));
        json_object_set_new(o, "reason", json_string(r->reason));
    }
    json_t *v = json_array();
    for (uint32_t i = 0; i < r->viol_count; i++) {
        const struct chk_watch_violation *x = &r->viol[i];
        json_t *vi = json_object();
        json_object_set_new(vi, "guarantee", json_string(chk_guarantee_name(x->guarantee)));
        json_object_set_new(vi, "watch", json_integer(x->watch_id));
        json_object_set_new(vi, "revision", json_integer(x->rev));
        json_object_set_new(vi, "message", json_string(x->msg));
        if (x->event != UINT32_MAX && h->events[x->event].line)
            json_object_set_new(vi, "line", json_integer(h->events[x->event].line));
        json_array_append_new(v, vi);
    }
    json_object_set_new(o, "violations", v);
    return o;
}
