/*
 * ivtree.h: an interval tree over byte strings: which of these key ranges hold this
 * key? Watchers in nodes/mvcc and watch streams in nodes/client ask it for every
 * written key, so a write costs work in the watches it concerns (and the height of
 * the tree), not in the number of watches.
 *
 * An AVL tree of intervals [lo, hi) ordered by (lo, id), where every node knows the
 * node of its subtree with the greatest hi; a stabbing query skips every subtree
 * whose greatest hi is at or below the key, and every right subtree whose lo is
 * above it. Nodes are intrusive: the owner embeds struct fl_ivnode, fills it with
 * fl_ivnode_set_etcd, and keeps the bytes it points at alive while the node is in a
 * tree; nothing here allocates. No recursion (paths live in bounded arrays: an AVL
 * tree of 2^64 nodes is under 93 levels high). Nothing depends on addresses: ties in
 * lo break by id, which callers keep unique within a tree.
 */
#ifndef FL_IVTREE_H
#define FL_IVTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fl_iv_hi {
    FL_IV_BOUNDED = 0, /* [lo, hi) */
    FL_IV_EXACT,       /* the key lo alone: hi is lo followed by one 0x00 byte */
    FL_IV_INF,         /* every key >= lo */
};

struct fl_ivnode {
    struct fl_ivnode *left, *right;
    const struct fl_ivnode *max; /* the node of this subtree with the greatest hi */
    const uint8_t *lo, *hi;      /* borrowed; hi unused unless FL_IV_BOUNDED */
    size_t lo_len, hi_len;
    enum fl_iv_hi hi_kind;
    int height;
    uint64_t id;
};

struct fl_ivtree {
    struct fl_ivnode *root;
    size_t len;
};

/* Sets n's interval from etcd's (key, range_end) convention, as mvcc__in_range and
 * kvc_watch_matches read it: range_end empty is the key alone, "\0" every key >= key,
 * anything else [key, range_end). The bytes are borrowed. Returns false when the
 * range holds no key at all (range_end <= key): such a node stays out of trees. */
bool fl_ivnode_set_etcd(struct fl_ivnode *n, uint64_t id, const uint8_t *key, size_t key_len,
                        const uint8_t *range_end, size_t range_end_len);

/* Inserts n (its interval set, not in any tree). */
void fl_ivtree_insert(struct fl_ivtree *t, struct fl_ivnode *n);
/* Removes n, which must be in t. */
void fl_ivtree_remove(struct fl_ivtree *t, struct fl_ivnode *n);

typedef void fl_ivtree_fn(void *ctx, struct fl_ivnode *n);
/* Calls fn for every node whose interval holds key (lo <= key < hi), in a fixed order
 * that depends only on the tree's contents and history. fn must not change the tree.
 * Returns the number of nodes examined (the query's work). */
size_t fl_ivtree_stab(const struct fl_ivtree *t, const uint8_t *key, size_t key_len,
                      fl_ivtree_fn *fn, void *ctx);

/* Does n's interval hold key? */
bool fl_ivnode_holds(const struct fl_ivnode *n, const uint8_t *key, size_t key_len);

/* Asserts every invariant (order, balance, heights, greatest hi, length). O(n). */
void fl_ivtree_check(const struct fl_ivtree *t);

#endif
