/*
 * mvcc_autocompact.c: the auto-compaction policy as pure math over (time, current
 * revision). The server owns the timer: it calls mvcc_autocompact_step at
 * mvcc_autocompact_next_ns and proposes a compaction to the answer.
 *
 * REVISION mode (etcd): every 5 minutes, target = current - retention.
 * PERIODIC mode (the design's etcd 3.3 description): with period =
 * min(retention, 1h), the revision is sampled every period/10; the first compaction
 * comes one retention after start and then one every period, each to the newest
 * sample taken at or before now - retention. Retention 8h: from hour 8 on, every
 * hour, to the revision of 8 hours earlier: the oldest hour's revisions go.
 */
#include "nodes/mvcc/mvcc_int.h"

static int64_t periodic_period_ns(const struct mvcc_autocompact *ac)
{
    return FL_MIN(ac->retention, MVCC_AUTOCOMPACT_PERIODIC_MAX_NS);
}

void mvcc_autocompact_init(struct mvcc_autocompact *ac, enum mvcc_autocompact_mode mode,
                           int64_t retention, int64_t now_ns)
{
    memset(ac, 0, sizeof(*ac));
    ac->mode = retention > 0 ? mode : MVCC_AUTOCOMPACT_OFF;
    ac->retention = retention;
    ac->start_ns = now_ns;
    ac->paused = true;
    ac->next_sample_ns = INT64_MAX;
    ac->next_compact_ns = INT64_MAX;
    if (ac->mode == MVCC_AUTOCOMPACT_REVISION) {
        ac->next_compact_ns = now_ns + MVCC_AUTOCOMPACT_REVISION_INTERVAL_NS;
    } else if (ac->mode == MVCC_AUTOCOMPACT_PERIODIC) {
        FL_ASSERT(periodic_period_ns(ac) >= 10);
        ac->next_sample_ns = now_ns; /* sample at start */
        ac->next_compact_ns = now_ns + retention;
    }
}

void mvcc_autocompact_close(struct mvcc_autocompact *ac)
{
    free(ac->samples);
    ac->samples = NULL;
    ac->samples_len = ac->samples_cap = 0;
}

void mvcc_autocompact_pause(struct mvcc_autocompact *ac, bool paused)
{
    ac->paused = paused;
}

int64_t mvcc_autocompact_next_ns(const struct mvcc_autocompact *ac)
{
    return FL_MIN(ac->next_sample_ns, ac->next_compact_ns);
}

static void take_sample(struct mvcc_autocompact *ac, int64_t now_ns, int64_t rev)
{
    /* Samples older than the one a compaction could still need are dropped: keep
     * the newest sample at or before now - retention, and everything after it. */
    size_t keep_from = 0;
    for (size_t i = 0; i < ac->samples_len; i++)
        if (ac->samples[i].at_ns <= now_ns - ac->retention)
            keep_from = i;
    if (keep_from) {
        memmove(ac->samples, ac->samples + keep_from,
                (ac->samples_len - keep_from) * sizeof(*ac->samples));
        ac->samples_len -= keep_from;
    }
    FL_GROW(ac->samples, ac->samples_cap, ac->samples_len + 1, 16);
    ac->samples[ac->samples_len++] = (struct mvcc_ac_sample){now_ns, rev};
}

static int64_t periodic_step(struct mvcc_autocompact *ac, int64_t now_ns, int64_t rev)
{
    int64_t period = periodic_period_ns(ac);
    while (ac->next_sample_ns <= now_ns) {
        take_sample(ac, now_ns, rev);
        ac->next_sample_ns += period / 10;
        if (ac->next_sample_ns <= now_ns) /* a late caller: resume from now */
            ac->next_sample_ns = now_ns + period / 10;
    }
    if (now_ns < ac->next_compact_ns)
        return 0;
    if (ac->paused) {
        ac->next_compact_ns = ac->next_sample_ns; /* checked again at the next tick */
        return 0;
    }
    ac->next_compact_ns = now_ns + period;
    int64_t target = 0;
    for (size_t i = 0; i < ac->samples_len; i++)
        if (ac->samples[i].at_ns <= now_ns - ac->retention)
            target = ac->samples[i].rev;
    if (target <= ac->last_target_rev)
        return 0;
    ac->last_target_rev = target;
    return target;
}

int64_t mvcc_autocompact_step(struct mvcc_autocompact *ac, int64_t now_ns, int64_t current_rev)
{
    FL_ASSERT(current_rev >= 1);
    switch (ac->mode) {
    case MVCC_AUTOCOMPACT_OFF:
        return 0;
    case MVCC_AUTOCOMPACT_REVISION: {
        if (now_ns < ac->next_compact_ns)
            return 0;
        /* etcd's revision compactor ticks every 5 minutes from its start (each
         * interval measured from the end of the last) whether paused or not. */
        ac->next_compact_ns = now_ns + MVCC_AUTOCOMPACT_REVISION_INTERVAL_NS;
        if (ac->paused)
            return 0;
        int64_t target = current_rev - ac->retention;
        if (target <= 0 || target == ac->last_target_rev)
            return 0;
        ac->last_target_rev = target;
        return target;
    }
    case MVCC_AUTOCOMPACT_PERIODIC:
        return periodic_step(ac, now_ns, current_rev);
    }
    return 0;
}

void mvcc_autocompact_failed(struct mvcc_autocompact *ac, int64_t now_ns)
{
    if (ac->mode == MVCC_AUTOCOMPACT_OFF)
        return;
    /* Forget the target so the retry may hand it out again. */
    ac->last_target_rev = 0;
    if (ac->mode == MVCC_AUTOCOMPACT_PERIODIC)
        ac->next_compact_ns = now_ns + periodic_period_ns(ac) / 10;
}
