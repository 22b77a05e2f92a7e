/*
 * list.h: the intrusive doubly linked list, written once (BSD sys/queue.h's LIST and
 * TAILQ, the kernel's list_head, libuv's QUEUE). An element carries its two links as
 * fields of its own type (named by the caller: prev/next, q_prev/q_next); a list is
 * its first element (an lvalue: a field or a variable), and a tail queue its first
 * and last. Insertion and removal are O(1) and never allocate; iteration is the
 * caller's plain loop over `next`. Removal clears the element's links.
 *
 * The macros evaluate their arguments more than once: pass names and fields, not
 * calls with side effects. Nothing here reads a clock or allocates.
 */
#ifndef FL_LIST_H
#define FL_LIST_H

#include <stddef.h>

/* Puts n first in the list that starts at head. */
#define FL_LIST_INSERT_HEAD(head, n, prev, next)                                                   \
    do {                                                                                           \
        (n)->prev = NULL;                                                                          \
        (n)->next = (head);                                                                        \
        if ((head) != NULL)                                                                        \
            (head)->prev = (n);                                                                    \
        (head) = (n);                                                                              \
    } while (0)

/* Takes n out of the list that starts at head. */
#define FL_LIST_REMOVE(head, n, prev, next)                                                        \
    do {                                                                                           \
        if ((n)->prev != NULL)                                                                     \
            (n)->prev->next = (n)->next;                                                           \
        else                                                                                       \
            (head) = (n)->next;                                                                    \
        if ((n)->next != NULL)                                                                     \
            (n)->next->prev = (n)->prev;                                                           \
        (n)->prev = (n)->next = NULL;                                                              \
    } while (0)

/* Puts n first in the tail queue head..tail. */
#define FL_TAILQ_INSERT_HEAD(head, tail, n, prev, next)                                            \
    do {                                                                                           \
        if ((head) == NULL)                                                                        \
            (tail) = (n);                                                                          \
        FL_LIST_INSERT_HEAD(head, n, prev, next);                                                  \
    } while (0)

/* Puts n last in the tail queue head..tail. */
#define FL_TAILQ_INSERT_TAIL(head, tail, n, prev, next)                                            \
    do {                                                                                           \
        (n)->next = NULL;                                                                          \
        (n)->prev = (tail);                                                                        \
        if ((tail) != NULL)                                                                        \
            (tail)->next = (n);                                                                    \
        else                                                                                       \
            (head) = (n);                                                                          \
        (tail) = (n);                                                                              \
    } while (0)

/* Takes n out of the tail queue head..tail. */
#define FL_TAILQ_REMOVE(head, tail, n, prev, next)                                                 \
    do {                                                                                           \
        if ((n)->next == NULL)                                                                     \
            (tail) = (n)->prev;                                                                    \
        FL_LIST_REMOVE(head, n, prev, next);                                                       \
    } while (0)

#endif
