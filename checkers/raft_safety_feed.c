/*
 * raft_safety_feed.c: the Raft safety checker's feeds as data (raft_safety.h): a
 * recorder that hands every feed to a sink instead of checking it, the replay of a
 * recorded feed into a checker, and the text line of one feed.
 *
 * Line: NAME NODE A0 .. Ak [v IDS l IDS], every number decimal, IDS comma-separated or
 * "-" for none; k and the configuration are the op's (raft_safety.h enum
 * raft_safety_op). A recovered feed without a configuration ends with "-".
 *
 * Pure: no I/O.
 */
#include "checkers/raft_safety_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int n_args;
    int conf; /* 0 none, 1 always, 2 optional (recovered) */
} ops[RAFT_SAFETY_OP_COUNT] = {
    [RAFT_SAFETY_OP_LEADER] = {"leader", 1, 0},
    [RAFT_SAFETY_OP_NOT_LEADER] = {"not_leader", 0, 0},
    [RAFT_SAFETY_OP_APPEND] = {"append", 3, 0},
    [RAFT_SAFETY_OP_RESTART] = {"restart", 1, 0},
    [RAFT_SAFETY_OP_SNAPSHOT] = {"snapshot", 2, 0},
    [RAFT_SAFETY_OP_COMMIT] = {"commit", 1, 0},
    [RAFT_SAFETY_OP_APPLY] = {"apply", 3, 0},
    [RAFT_SAFETY_OP_FORGET] = {"forget", 0, 0},
    [RAFT_SAFETY_OP_SENT] = {"sent", 2, 0},
    [RAFT_SAFETY_OP_SYNCED] = {"synced", 0, 0},
    [RAFT_SAFETY_OP_CONF_ENTRY] = {"conf_entry", 3, 0},
    [RAFT_SAFETY_OP_SNAPSHOT_CONF] = {"snapshot_conf", 2, 1},
    [RAFT_SAFETY_OP_ELECTED] = {"elected", 1, 1},
    [RAFT_SAFETY_OP_LEADER_COMMIT] = {"leader_commit", 2, 0},
    [RAFT_SAFETY_OP_RECOVERED] = {"recovered", 5, 2},
};

struct raft_safety *raft_safety_new_recorder(raft_safety_sink_fn *sink, void *ud)
{
    FL_ASSERT(sink != NULL);
    struct raft_safety *c = raft_safety_new();
    c->sink = sink;
    c->sink_ud = ud;
    return c;
}

bool rs__record(struct raft_safety *c, const struct raft_safety_feed *f)
{
    c->sink(c->sink_ud, f);
    return true;
}

bool rs__record_conf(struct raft_safety *c, struct raft_safety_feed *f,
                     const struct raft_safety_conf *conf)
{
    if (conf) {
        size_t cap = FL_ARRAY_LEN(f->ids), n = 0;
        f->has_conf = true;
        for (size_t i = 0; i < conf->n_voters && n < cap; i++)
            f->ids[n++] = conf->voters[i];
        f->n_voters = (uint32_t)n;
        for (size_t i = 0; i < conf->n_learners && n < cap; i++)
            f->ids[n++] = conf->learners[i];
        f->n_learners = (uint32_t)n - f->n_voters;
    }
    return rs__record(c, f);
}

bool raft_safety_replay(struct raft_safety *c, const struct raft_safety_feed *f)
{
    const uint64_t *a = f->a;
    struct raft_safety_conf conf = {f->ids, f->n_voters, f->ids + f->n_voters, f->n_learners};
    switch (f->op) {
    case RAFT_SAFETY_OP_LEADER:
        return raft_safety_leader(c, f->node, a[0]);
    case RAFT_SAFETY_OP_NOT_LEADER:
        return raft_safety_not_leader(c, f->node);
    case RAFT_SAFETY_OP_APPEND:
        return raft_safety_append(c, f->node, a[0], a[1], a[2]);
    case RAFT_SAFETY_OP_RESTART:
        return raft_safety_restart(c, f->node, a[0]);
    case RAFT_SAFETY_OP_SNAPSHOT:
        return raft_safety_snapshot(c, f->node, a[0], a[1]);
    case RAFT_SAFETY_OP_COMMIT:
        return raft_safety_commit(c, f->node, a[0]);
    case RAFT_SAFETY_OP_APPLY:
        return raft_safety_apply(c, f->node, a[0], a[1], a[2]);
    case RAFT_SAFETY_OP_FORGET:
        raft_safety_forget(c, f->node);
        return !c->failed;
    case RAFT_SAFETY_OP_SENT:
        return raft_safety_sent(c, f->node, a[0], a[1]);
    case RAFT_SAFETY_OP_SYNCED:
        raft_safety_synced(c, f->node);
        return !c->failed;
    case RAFT_SAFETY_OP_CONF_ENTRY:
        return raft_safety_conf_entry(c, f->node, a[0], (int)(int64_t)a[1], a[2]);
    case RAFT_SAFETY_OP_SNAPSHOT_CONF:
        return raft_safety_snapshot_conf(c, f->node, a[0], a[1], &conf);
    case RAFT_SAFETY_OP_ELECTED:
        return raft_safety_elected(c, f->node, a[0], &conf);
    case RAFT_SAFETY_OP_LEADER_COMMIT:
        return raft_safety_leader_commit(c, f->node, a[0], a[1]);
    case RAFT_SAFETY_OP_RECOVERED: {
        struct raft_safety_boot b = {.term = a[0],
                                     .vote = a[1],
                                     .commit = a[2],
                                     .last_index = a[3],
                                     .applied = a[4],
                                     .conf = f->has_conf ? &conf : NULL};
        return raft_safety_recovered(c, f->node, &b);
    }
    case RAFT_SAFETY_OP_COUNT:
        break;
    }
    FL_ASSERTF(false, "raft_safety_replay: op %d", (int)f->op);
    return false;
}

static void ids_format(struct fl_buf *out, const uint64_t *ids, uint32_t n)
{
    if (!n)
        fl_buf_printf(out, " -");
    for (uint32_t i = 0; i < n; i++)
        fl_buf_printf(out, "%c%" PRIu64, i ? ',' : ' ', ids[i]);
}

void raft_safety_feed_format(const struct raft_safety_feed *f, struct fl_buf *out)
{
    FL_ASSERT((unsigned)f->op < RAFT_SAFETY_OP_COUNT);
    fl_buf_printf(out, "%s %" PRIu64, ops[f->op].name, f->node);
    for (int i = 0; i < ops[f->op].n_args; i++)
        fl_buf_printf(out, " %" PRIu64, f->a[i]);
    if (!ops[f->op].conf)
        return;
    if (!f->has_conf) {
        fl_buf_printf(out, " -");
        return;
    }
    fl_buf_printf(out, " v");
    ids_format(out, f->ids, f->n_voters);
    fl_buf_printf(out, " l");
    ids_format(out, f->ids + f->n_voters, f->n_learners);
}

/* A cursor over one line. */
struct cur {
    const char *p, *end;
};

/* The next space-separated word: false at the end of the line. */
static bool word(struct cur *c, const char **w, size_t *n)
{
    if (c->p < c->end && *c->p == ' ')
        c->p++;
    const char *s = c->p;
    while (c->p < c->end && *c->p != ' ')
        c->p++;
    *w = s;
    *n = (size_t)(c->p - s);
    return *n > 0;
}

static bool u64_of(const char *s, size_t n, uint64_t *v)
{
    char tmp[24];
    if (n == 0 || n >= sizeof tmp)
        return false;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (tmp[i] < '0' || tmp[i] > '9')
            return false;
    char *end = NULL;
    errno = 0;
    *v = strtoull(tmp, &end, 10);
    return errno == 0 && end == tmp + n;
}

static bool u64_word(struct cur *c, uint64_t *v)
{
    const char *w;
    size_t n;
    return word(c, &w, &n) && u64_of(w, n, v);
}

/* "-" or a comma-separated list, appended to f->ids; the count in *n. */
static bool ids_parse(struct cur *c, struct raft_safety_feed *f, uint32_t *n)
{
    const char *w;
    size_t len;
    *n = 0;
    uint32_t base = f->n_voters + f->n_learners; /* the ids before this list */
    if (!word(c, &w, &len))
        return false;
    if (len == 1 && w[0] == '-')
        return true;
    const char *end = w + len;
    while (w < end) {
        const char *comma = memchr(w, ',', (size_t)(end - w));
        const char *stop = comma ? comma : end;
        uint32_t at = base + *n;
        if (at >= FL_ARRAY_LEN(f->ids) || !u64_of(w, (size_t)(stop - w), &f->ids[at]))
            return false;
        (*n)++;
        w = comma ? comma + 1 : end;
        if (comma && w == end)
            return false;
    }
    return true;
}

static bool tag(struct cur *c, char t)
{
    const char *w;
    size_t n;
    return word(c, &w, &n) && n == 1 && w[0] == t;
}

bool raft_safety_feed_parse(const char *line, size_t len, struct raft_safety_feed *f)
{
    memset(f, 0, sizeof *f);
    struct cur c = {line, line + len};
    const char *w;
    size_t n;
    if (!word(&c, &w, &n))
        return false;
    int op = 0;
    while (op < RAFT_SAFETY_OP_COUNT && (strlen(ops[op].name) != n || memcmp(ops[op].name, w, n)))
        op++;
    if (op == RAFT_SAFETY_OP_COUNT)
        return false;
    f->op = (enum raft_safety_op)op;
    if (!u64_word(&c, &f->node) || !f->node)
        return false;
    for (int i = 0; i < ops[op].n_args; i++)
        if (!u64_word(&c, &f->a[i]))
            return false;
    if ((op == RAFT_SAFETY_OP_APPEND || op == RAFT_SAFETY_OP_APPLY) && !f->a[0])
        return false; /* entries start at index 1 (raft_safety_append asserts it) */
    if (ops[op].conf) {
        const char *save = c.p;
        if (ops[op].conf == 2 && word(&c, &w, &n) && n == 1 && w[0] == '-') {
            f->has_conf = false;
        } else {
            c.p = save;
            f->has_conf = true;
            if (!tag(&c, 'v') || !ids_parse(&c, f, &f->n_voters) || !tag(&c, 'l') ||
                !ids_parse(&c, f, &f->n_learners))
                return false;
        }
    }
    return c.p == c.end; /* nothing after the last field */
}
