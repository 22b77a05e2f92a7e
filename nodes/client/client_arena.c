/*
 * client_arena.c: a bump allocator for the protobuf-c decoding of server frames. A
 * frame is decoded, handled and dropped within kvc_conn_on_message, so its fields
 * (a range response carries every key and value) cost one pointer bump each instead
 * of a malloc and a free, and the whole message goes at once when the handler is
 * done. Blocks start at 4 KiB and double up to 256 KiB; a reset keeps the largest,
 * so a steady load settles on one block and allocates nothing.
 */
#include "nodes/client/client_int.h"

#define BLOCK_MIN (4u * 1024u)
#define BLOCK_MAX (256u * 1024u)

struct kvc_arena_block {
    struct kvc_arena_block *next;
    size_t cap, used;
    max_align_t data[];
};

static void *arena_alloc(void *ud, size_t size)
{
    struct kvc_arena *a = ud;
    size_t n = (size + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    struct kvc_arena_block *h = a->head;
    if (!h || h->cap - h->used < n) {
        size_t cap = h ? FL_MIN((size_t)BLOCK_MAX, h->cap * 2) : BLOCK_MIN;
        if (cap < n)
            cap = n;
        struct kvc_arena_block *b = fl_malloc(sizeof *b + cap);
        b->next = h;
        b->cap = cap;
        b->used = 0;
        a->head = h = b;
    }
    void *p = (char *)h->data + h->used;
    h->used += n;
    return p;
}

static void arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p; /* everything goes at kvc_arena_reset */
}

void kvc_arena_init(struct kvc_arena *a)
{
    a->alloc.alloc = arena_alloc;
    a->alloc.free = arena_free;
    a->alloc.allocator_data = a;
    a->head = NULL;
}

void kvc_arena_reset(struct kvc_arena *a)
{
    struct kvc_arena_block *keep = a->head;
    if (!keep)
        return;
    for (struct kvc_arena_block *b = keep->next; b; b = b->next)
        if (b->cap > keep->cap)
            keep = b;
    for (struct kvc_arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        if (b != keep)
            free(b);
    }
    keep->next = NULL;
    keep->used = 0;
    a->head = keep;
}

void kvc_arena_close(struct kvc_arena *a)
{
    while (a->head) {
        struct kvc_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}
