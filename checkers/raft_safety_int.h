/*
 * raft_safety_int.h: what the two files of the Raft safety checker share (not a public
 * interface). raft_safety.c keeps the logs, commits and applies (the hash-chain model
 * of raft_safety.h); raft_safety_votes.c keeps terms, votes, elections, durability
 * across restarts and each member's configuration as its log and snapshots imply it.
 * Pure: no I/O.
 */
#ifndef FL_CHECKERS_RAFT_SAFETY_INT_H
#define FL_CHECKERS_RAFT_SAFETY_INT_H

/* Internal to checkers: compiled only into fl_checkers (which defines FL_INTERNAL_checkers)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_checkers
#error "checkers/raft_safety_int.h is internal to checkers: include its public header instead"
#endif

#include "checkers/raft_safety.h"

#include <inttypes.h>

#define RS_TRIM_SLACK 4096

struct rs_rec {
    uint64_t term;
    uint64_t chain;
    uint64_t hash;
    uint64_t apply_term;
    uint64_t apply_hash;
    uint64_t apply_node;
    uint64_t commit_bound; /* highest leader term on record when it committed */
    uint8_t flags;
};
#define RS_SEEN      1u
#define RS_COMMITTED 2u
#define RS_APPLIED   4u
#define RS_NOCHAIN   8u  /* committed term known, chain not (yet): fed by an unanchored node */
#define RS_NOHASH    16u /* committed entry's data hash not known */

struct rs_alt {
    uint64_t index, term, chain, hash;
};

/* A configuration as the checker models it, independently of the Raft core: member
 * ids ascending, each a voter or a learner. */
struct rs_conf {
    uint64_t ids[RAFT_SAFETY_CONF_MAX];
    uint8_t learner[RAFT_SAFETY_CONF_MAX];
    uint32_t n;
};

/* The configuration after the conf entry at index (in force from index on). */
struct rs_confrec {
    uint64_t index;
    struct rs_conf conf;
};

struct rs_node {
    uint64_t id;
    uint64_t base;       /* view holds (base, last]; chain at base = base_chain */
    uint64_t base_chain; /* chain at base */
    uint64_t base_term;
    uint64_t last;
    uint64_t *terms; /* [i - base - 1] */
    uint64_t *chains;
    size_t cap;
    uint64_t commit;
    uint64_t applied;
    bool leader;
    uint64_t leader_term;
    bool unanchored;  /* its base came from a snapshot whose chain we never saw */
    bool retired;     /* forgotten: ignored by the trimming floor until fed again */
    uint64_t lc_term; /* the term of its last raft_safety_leader_commit ... */
    uint64_t lc_last; /* ... and its last index then */

    /* commits and applies (raft_safety.c) */
    uint64_t commit_fed;     /* the last commit index fed, unclamped */
    uint64_t commit_durable; /* commit_fed at its last sync */
    bool applied_unknown;    /* restarted without an applied index: the next apply sets it */
    bool commit_unknown;     /* restarted without a commit index: the next commit sets it */

    /* terms and votes (raft_safety_votes.c) */
    uint64_t promised_term; /* highest term of a message it sent (pre-votes aside) */
    uint64_t grant_term;    /* its last vote (a grant, or its own candidacy) ... */
    uint64_t grant_to;      /* ... and for whom */

    /* configuration: base_conf at base, then one record per conf entry in (base, last] */
    bool conf_known;
    struct rs_conf base_conf;
    struct rs_confrec *confs;
    size_t confs_count, confs_cap;
};

/* One vote that left a member: voter granted its vote in term to candidate (a
 * candidate's own vote counts as voter == candidate). */
struct rs_grant {
    uint64_t term, voter, candidate;
};

struct raft_safety {
    struct rs_rec *g; /* g[i - g_base] for i in [g_base, g_base + g_count) */
    uint64_t g_base;
    size_t g_count, g_cap;
    struct rs_alt *alts;
    size_t alts_count, alts_cap;
    uint64_t *leaders;               /* leaders[term] = node, 0 none */
    size_t leaders_len, leaders_cap; /* terms 0..leaders_len-1 known (zeroed) */
    struct rs_node *nodes;           /* every member id ever fed, in first-seen order */
    size_t nodes_count, nodes_cap;
    struct rs_grant *grants; /* ascending term as fed; trimmed to the newest terms */
    size_t grants_count, grants_cap;
    uint64_t max_commit;
    uint64_t max_leader_term;
    uint64_t n_leaders, n_appends, n_commits, n_applies;
    uint64_t n_votes, n_elections, n_restarts, n_conf_checks;
    bool failed;
    struct fl_buf violation;
    const char *property;
    raft_safety_sink_fn *sink; /* a recorder (raft_safety_new_recorder): checks nothing */
    void *sink_ud;
};

/* raft_safety_feed.c: hands f to a recorder's sink; true (a recorder sees no violation). */
bool rs__record(struct raft_safety *c, const struct raft_safety_feed *f);
/* The same for a feed with a configuration (conf NULL: none), copied into f first. */
bool rs__record_conf(struct raft_safety *c, struct raft_safety_feed *f,
                     const struct raft_safety_conf *conf);
#define RS_RECORD(c, ...)                                                                          \
    do {                                                                                           \
        if ((c)->sink)                                                                             \
            return rs__record((c), &(struct raft_safety_feed){__VA_ARGS__});                       \
    } while (0)

/* raft_safety.c */
bool rs__violate(struct raft_safety *c, const char *property, uint64_t node, uint64_t other,
                 uint64_t index, uint64_t term, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* The node with this id, or NULL: nothing is added or changed. */
struct rs_node *rs__node_find(const struct raft_safety *c, uint64_t id);
/* The node with this id, added (empty) if it is new; a retired one is live again. */
struct rs_node *rs__node_get(struct raft_safety *c, uint64_t id);
/* The chain of n's log at i (≤ n->last); false when it is not known (below the view,
 * not committed or unchained). */
bool rs__chain_at(struct raft_safety *c, const struct rs_node *n, uint64_t i, uint64_t *chain);
/* The term of n's last entry (0 for an empty log); false when it is not known. */
bool rs__last_term(struct raft_safety *c, const struct rs_node *n, uint64_t *term);
/* The node's log view now ends at last (a crash or a truncation). */
void rs__view_truncate(struct raft_safety *c, struct rs_node *n, uint64_t last);
/* The node's log ends at last with entries the checker never saw. */
void rs__view_rebase_unknown(struct rs_node *n, uint64_t last);
/* The node restarted with the log es[0..count) on its disk: from the first entry that
 * is not in its view (another term or prefix, or past its end) on, they are fed as
 * appends (and conf entries); the view's tail past the disk's is the restart's to cut. */
bool rs__view_recovered(struct raft_safety *c, struct rs_node *n,
                        const struct raft_safety_entry *es, size_t count);

/* raft_safety_votes.c: the configuration view follows the log view. */
void rs__conf_truncate(struct rs_node *n, uint64_t last);           /* records > last go */
void rs__conf_trim(struct rs_node *n, uint64_t base);               /* records <= base fold in */
void rs__conf_forget(struct rs_node *n);                            /* unknown until a snapshot */
void rs__conf_reset(struct rs_node *n, const struct rs_conf *conf); /* a snapshot's */
void rs__node_close(struct rs_node *n);

#endif
