/*
 * lower_bound.h: the binary search over a sorted range, written once (C++'s
 * std::lower_bound, as a macro so that the array and its order stay the caller's).
 * Nothing here reads a clock or allocates.
 */
#ifndef FL_LOWER_BOUND_H
#define FL_LOWER_BOUND_H

#include <stddef.h>

/* Binary search, written once: sets out (a size_t lvalue) to the first index in [0, n)
 * at which the condition below is false, or n; below must be true on a prefix of the
 * range and false after it (the array is sorted by what it reads). below reads the
 * probed index through the name mid, which the macro declares:
 *     FL_LOWER_BOUND(i, s->len, mid, s->ids[mid] < id);                            */
#define FL_LOWER_BOUND(out, n, mid, below)                                                         \
    do {                                                                                           \
        size_t fl_lo_ = 0, fl_hi_ = (n);                                                           \
        while (fl_lo_ < fl_hi_) {                                                                  \
            size_t mid = fl_lo_ + (fl_hi_ - fl_lo_) / 2;                                           \
            if (below)                                                                             \
                fl_lo_ = mid + 1;                                                                  \
            else                                                                                   \
                fl_hi_ = mid;                                                                      \
        }                                                                                          \
        (out) = fl_lo_;                                                                            \
    } while (0)

#endif
