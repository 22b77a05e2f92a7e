/*
 * test_list.c: the intrusive list macros (harness/common/list.h) against an array
 * model: elements inserted first or last and removed from the front, the middle and
 * the back at random (a fixed-seed generator), and after every change the list read
 * forwards and backwards equals the model, its ends are right, and a removed element's
 * links are cleared. The head-only list (FL_LIST_*) the same way.
 */
#include "fl_test.h"

#include "harness/common/common.h"
#include "harness/common/list.h"

#define N 64

struct item {
    int v;
    bool in;
    struct item *q_prev, *q_next;
};

struct queue {
    struct item *head, *tail;
};

static struct item items[N];
static int model[N], n_model;
static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t draw(uint64_t n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
}

/* The list read forwards (and, with a tail, backwards) is the model. */
static void check(const struct queue *q, bool has_tail)
{
    int k = 0;
    const struct item *last = NULL;
    for (const struct item *it = q->head; it; it = it->q_next) {
        CHECK(k < n_model);
        CHECK_EQ_INT(it->v, model[k]);
        CHECK(it->q_prev == last);
        last = it;
        k++;
    }
    CHECK_EQ_INT(k, n_model);
    if (!has_tail)
        return;
    CHECK(q->tail == last);
    for (const struct item *it = q->tail; it; it = it->q_prev)
        CHECK_EQ_INT(it->v, model[--k]);
    CHECK_EQ_INT(k, 0);
}

static void model_insert(int at, int v)
{
    memmove(model + at + 1, model + at, sizeof(int) * (size_t)(n_model - at));
    model[at] = v;
    n_model++;
}

static void model_remove(int v)
{
    int at = 0;
    while (model[at] != v)
        at++;
    memmove(model + at, model + at + 1, sizeof(int) * (size_t)(n_model - at - 1));
    n_model--;
}

static void run(bool has_tail)
{
    struct queue q = {NULL, NULL};
    memset(items, 0, sizeof items);
    n_model = 0;
    for (int i = 0; i < N; i++)
        items[i].v = i;
    for (int step = 0; step < 4000; step++) {
        struct item *it = &items[draw(N)];
        if (it->in) {
            if (has_tail)
                FL_TAILQ_REMOVE(q.head, q.tail, it, q_prev, q_next);
            else
                FL_LIST_REMOVE(q.head, it, q_prev, q_next);
            it->in = false;
            model_remove(it->v);
            CHECK(it->q_prev == NULL && it->q_next == NULL);
        } else if (has_tail && draw(2)) {
            FL_TAILQ_INSERT_TAIL(q.head, q.tail, it, q_prev, q_next);
            it->in = true;
            model_insert(n_model, it->v);
        } else {
            if (has_tail)
                FL_TAILQ_INSERT_HEAD(q.head, q.tail, it, q_prev, q_next);
            else
                FL_LIST_INSERT_HEAD(q.head, it, q_prev, q_next);
            it->in = true;
            model_insert(0, it->v);
        }
        check(&q, has_tail);
    }
    /* empty it from the front: the ends go back to NULL */
    while (q.head) {
        struct item *it = q.head;
        if (has_tail)
            FL_TAILQ_REMOVE(q.head, q.tail, it, q_prev, q_next);
        else
            FL_LIST_REMOVE(q.head, it, q_prev, q_next);
        model_remove(it->v);
        check(&q, has_tail);
    }
    CHECK(q.head == NULL);
    CHECK(!has_tail || q.tail == NULL);
}

static void test_list(void)
{
    run(false);
}

static void test_tailq(void)
{
    run(true);
}

int main(void)
{
    FL_TEST(test_list);
    FL_TEST(test_tailq);
    return fl_test_end();
}
