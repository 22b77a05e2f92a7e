/*
 * ivtree.c: the byte-string interval tree of ivtree.h. An AVL tree (heights differ
 * by at most one between siblings) keyed by (lo, id), each node carrying the node of
 * its subtree with the greatest upper bound. Insert and remove walk down once,
 * remember the links they passed in a bounded array, and walk back up rebalancing;
 * the stabbing query walks with a bounded explicit stack.
 *
 * Upper bounds are compared as "virtual" strings: FL_IV_EXACT's bound is lo followed
 * by a 0x00 byte, the successor of lo in byte order, so a single key is the interval
 * [lo, lo\0) without storing the extra byte; FL_IV_INF is above every string.
 */
#include "harness/common/ivtree.h"

#include "harness/common/common.h"

/* 1.44 * log2(2^64) + 2: no AVL tree that fits in memory is higher. */
#define IV_DEPTH_MAX 96

/* Compares p[0..n) followed by pe 0x00 bytes (0 or 1) with q[0..m) followed by qe. */
static int vcmp(const uint8_t *p, size_t n, int pe, const uint8_t *q, size_t m, int qe)
{
    size_t c = n < m ? n : m;
    int r = c ? memcmp(p, q, c) : 0;
    if (r != 0)
        return r;
    /* Equal over the common real bytes: at most two more positions decide. */
    for (size_t i = c;; i++) {
        bool pend = i >= n + (size_t)pe, qend = i >= m + (size_t)qe;
        if (pend || qend)
            return pend && qend ? 0 : (pend ? -1 : 1);
        int a = i < n ? p[i] : 0, b = i < m ? q[i] : 0;
        if (a != b)
            return a < b ? -1 : 1;
    }
}

static int bytes_cmp(const uint8_t *p, size_t n, const uint8_t *q, size_t m)
{
    return vcmp(p, n, 0, q, m, 0);
}

/* key < hi(n)? */
static bool below_hi(const uint8_t *key, size_t key_len, const struct fl_ivnode *n)
{
    switch (n->hi_kind) {
    case FL_IV_INF:
        return true;
    case FL_IV_EXACT:
        return vcmp(key, key_len, 0, n->lo, n->lo_len, 1) < 0;
    default:
        return vcmp(key, key_len, 0, n->hi, n->hi_len, 0) < 0;
    }
}

/* Compares the upper bounds of a and b. */
static int hi_cmp(const struct fl_ivnode *a, const struct fl_ivnode *b)
{
    if (a->hi_kind == FL_IV_INF || b->hi_kind == FL_IV_INF)
        return (a->hi_kind == FL_IV_INF) - (b->hi_kind == FL_IV_INF);
    const uint8_t *ap = a->hi_kind == FL_IV_EXACT ? a->lo : a->hi;
    size_t an = a->hi_kind == FL_IV_EXACT ? a->lo_len : a->hi_len;
    const uint8_t *bp = b->hi_kind == FL_IV_EXACT ? b->lo : b->hi;
    size_t bn = b->hi_kind == FL_IV_EXACT ? b->lo_len : b->hi_len;
    return vcmp(ap, an, a->hi_kind == FL_IV_EXACT, bp, bn, b->hi_kind == FL_IV_EXACT);
}

/* Order of the tree: lo, then id. */
static int node_cmp(const struct fl_ivnode *a, const struct fl_ivnode *b)
{
    int r = bytes_cmp(a->lo, a->lo_len, b->lo, b->lo_len);
    if (r != 0)
        return r;
    return a->id < b->id ? -1 : (a->id > b->id ? 1 : 0);
}

bool fl_ivnode_set_etcd(struct fl_ivnode *n, uint64_t id, const uint8_t *key, size_t key_len,
                        const uint8_t *range_end, size_t range_end_len)
{
    memset(n, 0, sizeof(*n));
    n->id = id;
    n->lo = key;
    n->lo_len = key_len;
    if (range_end_len == 0) {
        n->hi_kind = FL_IV_EXACT;
    } else if (range_end_len == 1 && range_end[0] == 0) {
        n->hi_kind = FL_IV_INF;
    } else {
        n->hi_kind = FL_IV_BOUNDED;
        n->hi = range_end;
        n->hi_len = range_end_len;
        if (bytes_cmp(range_end, range_end_len, key, key_len) <= 0)
            return false;
    }
    return true;
}

bool fl_ivnode_holds(const struct fl_ivnode *n, const uint8_t *key, size_t key_len)
{
    return bytes_cmp(n->lo, n->lo_len, key, key_len) <= 0 && below_hi(key, key_len, n);
}

/* ---------------------------------------------------------------- balancing */

static int height(const struct fl_ivnode *n)
{
    return n ? n->height : 0;
}

static void update(struct fl_ivnode *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
    n->max = n;
    if (n->left && hi_cmp(n->left->max, n->max) > 0)
        n->max = n->left->max;
    if (n->right && hi_cmp(n->right->max, n->max) > 0)
        n->max = n->right->max;
}

/* One rotation, both mirror images: the child of *link on side `left` (else its right
 * child) comes up into *link, and *link goes down on the other side of it. */
static void rotate(struct fl_ivnode **link, bool left)
{
    struct fl_ivnode *x = *link;
    struct fl_ivnode **up = left ? &x->left : &x->right;
    struct fl_ivnode *y = *up;
    struct fl_ivnode **inner = left ? &y->right : &y->left;
    FL_ASSERT(y);
    *up = *inner;
    *inner = x;
    update(x);
    update(y);
    *link = y;
}

/* Restores the AVL property at *link, whose subtrees are balanced and differ in
 * height by at most two, and refreshes its height and greatest bound. */
static void rebalance(struct fl_ivnode **link)
{
    struct fl_ivnode *n = *link;
    int bf = height(n->left) - height(n->right);
    if (bf > 1) {
        if (height(n->left->left) < height(n->left->right))
            rotate(&n->left, false);
        rotate(link, true);
    } else if (bf < -1) {
        if (height(n->right->right) < height(n->right->left))
            rotate(&n->right, true);
        rotate(link, false);
    } else {
        update(n);
    }
}

void fl_ivtree_insert(struct fl_ivtree *t, struct fl_ivnode *n)
{
    struct fl_ivnode **path[IV_DEPTH_MAX];
    int d = 0;
    struct fl_ivnode **link = &t->root;
    while (*link) {
        int c = node_cmp(n, *link);
        FL_ASSERTF(c != 0, "ivtree: id %llu inserted twice", (unsigned long long)n->id);
        FL_ASSERT(d < IV_DEPTH_MAX);
        path[d++] = link;
        link = c < 0 ? &(*link)->left : &(*link)->right;
    }
    n->left = n->right = NULL;
    n->height = 1;
    n->max = n;
    *link = n;
    while (d > 0)
        rebalance(path[--d]);
    t->len++;
}

void fl_ivtree_remove(struct fl_ivtree *t, struct fl_ivnode *n)
{
    struct fl_ivnode **path[IV_DEPTH_MAX];
    int d = 0;
    struct fl_ivnode **link = &t->root;
    while (*link != n) {
        FL_ASSERTF(*link != NULL, "ivtree: id %llu is not in the tree", (unsigned long long)n->id);
        FL_ASSERT(d < IV_DEPTH_MAX);
        path[d++] = link;
        link = node_cmp(n, *link) < 0 ? &(*link)->left : &(*link)->right;
    }
    if (!n->left || !n->right) {
        *link = n->left ? n->left : n->right;
    } else {
        /* Its successor (leftmost of the right subtree) takes its place. */
        int at = d;
        path[d++] = link;
        struct fl_ivnode **sl = &n->right;
        while ((*sl)->left) {
            FL_ASSERT(d < IV_DEPTH_MAX);
            path[d++] = sl;
            sl = &(*sl)->left;
        }
        struct fl_ivnode *s = *sl;
        *sl = s->right;
        s->left = n->left;
        s->right = n->right;
        *link = s;
        if (d > at + 1)
            path[at + 1] = &s->right; /* was &n->right */
    }
    n->left = n->right = NULL;
    n->max = NULL;
    while (d > 0)
        rebalance(path[--d]);
    FL_ASSERT(t->len > 0);
    t->len--;
}

/* ---------------------------------------------------------------- queries */

size_t fl_ivtree_stab(const struct fl_ivtree *t, const uint8_t *key, size_t key_len,
                      fl_ivtree_fn *fn, void *ctx)
{
    /* Depth-first, left before right: pending right subtrees are at most one per
     * level. */
    struct fl_ivnode *stack[2 * IV_DEPTH_MAX];
    size_t sp = 0, visited = 0;
    if (t->root)
        stack[sp++] = t->root;
    while (sp > 0) {
        struct fl_ivnode *n = stack[--sp];
        visited++;
        if (!below_hi(key, key_len, n->max))
            continue; /* every bound in this subtree is <= key */
        if (bytes_cmp(n->lo, n->lo_len, key, key_len) <= 0) {
            if (below_hi(key, key_len, n))
                fn(ctx, n);
            if (n->right) {
                FL_ASSERT(sp < FL_ARRAY_LEN(stack));
                stack[sp++] = n->right;
            }
        }
        if (n->left) {
            FL_ASSERT(sp < FL_ARRAY_LEN(stack));
            stack[sp++] = n->left;
        }
    }
    return visited;
}

/* ---------------------------------------------------------------- checking */

/* One node against its children's stored fields: by induction over the tree, every
 * height and greatest bound is then right. */
static void check_node(const struct fl_ivnode *n)
{
    int hl = height(n->left), hr = height(n->right);
    FL_ASSERT(n->height == 1 + (hl > hr ? hl : hr));
    FL_ASSERT(hl - hr <= 1 && hr - hl <= 1);
    const struct fl_ivnode *m = n;
    if (n->left && hi_cmp(n->left->max, m) > 0)
        m = n->left->max;
    if (n->right && hi_cmp(n->right->max, m) > 0)
        m = n->right->max;
    FL_ASSERT(n->max != NULL && hi_cmp(n->max, m) == 0);
    FL_ASSERT(n->hi_kind != FL_IV_BOUNDED || bytes_cmp(n->lo, n->lo_len, n->hi, n->hi_len) < 0);
}

void fl_ivtree_check(const struct fl_ivtree *t)
{
    /* In order, with an explicit stack. */
    const struct fl_ivnode *stack[IV_DEPTH_MAX + 1];
    const struct fl_ivnode *prev = NULL;
    size_t sp = 0, count = 0;
    const struct fl_ivnode *n = t->root;
    while (n || sp > 0) {
        while (n) {
            FL_ASSERT(sp < FL_ARRAY_LEN(stack));
            stack[sp++] = n;
            n = n->left;
        }
        n = stack[--sp];
        check_node(n);
        FL_ASSERT(prev == NULL || node_cmp(prev, n) < 0);
        prev = n;
        count++;
        n = n->right;
    }
    FL_ASSERT(count == t->len);
}
