/*
 * order.h: the two pieces of a sort that every sorted array here repeated, written
 * once.
 *  - FL_CMP_STEP: one step of a comparator (instead of an "if they differ, return
 *    which is less" pair of lines per field).
 *  - fl_permute_gather: a sorted order applied to an array in place. A large array of
 *    records is sorted by sorting 4-byte indexes (a counting sort, qsort of indexes),
 *    then the records move once, cycle by cycle, with one record held aside: the extra
 *    memory is the index array, never a copy of the records.
 * Inline, so that each caller's record size is a constant. Nothing
 * here reads a clock or allocates.
 */
#ifndef FL_ORDER_H
#define FL_ORDER_H

#include "harness/common/common.h"

/* One step of a comparator, as a statement: returns -1 or 1 from the enclosing
 * comparator when a and b differ, and goes on to the next field when they tie:
 *     FL_CMP_STEP(x->key, y->key);
 *     FL_CMP_STEP(x->rev, y->rev);
 *     return 0;
 * (the very branches of the "if they differ, return which is less" pair of lines it
 * replaces: a field that ties costs one comparison). */
#define FL_CMP_STEP(a, b)                                                                          \
    do {                                                                                           \
        if ((a) != (b))                                                                            \
            return (a) < (b) ? -1 : 1;                                                             \
    } while (0)

/* Puts the n records of size bytes at base in the order perm lists: the record at j
 * becomes the one that was at perm[j] (perm lists each of 0..n-1 once). held is room
 * for one record. perm is consumed: every entry ends as its own index. */
static inline void fl_permute_gather(void *base, size_t size, uint32_t *perm, uint32_t n,
                                     void *held)
{
    char *b = base;
    for (uint32_t k = 0; k < n; k++) {
        if (perm[k] == k)
            continue;
        memcpy(held, b + (size_t)k * size, size);
        uint32_t j = k;
        for (;;) {
            uint32_t from = perm[j];
            FL_ASSERT(from < n); /* a permutation of 0..n-1 */
            perm[j] = j;
            if (from == k) {
                memcpy(b + (size_t)j * size, held, size);
                break;
            }
            memcpy(b + (size_t)j * size, b + (size_t)from * size, size);
            j = from;
        }
    }
}

#endif
