/*
 * marker.c: the registry of FL_TESTCASE / FL_ALWAYS / FL_NEVER markers (marker.h).
 * The records are laid out by the linker in section fl_marker_section (named like
 * no function: the assembler takes a section name as a symbol, and a call to a
 * function of the same name would jump into the records); GNU ld and lld define
 * __start_fl_marker_section and __stop_fl_marker_section around it. The symbols are
 * weak, so a program that links no marker has an empty list, not a link error.
 * Sanitizers put no redzones around variables in named sections, so the records
 * stay one packed array.
 */
#include "harness/common/marker.h"

extern struct fl_marker __start_fl_marker_section[] __attribute__((weak));
extern struct fl_marker __stop_fl_marker_section[] __attribute__((weak));

void fl__marker_broken(struct fl_marker *m)
{
    m->hits++;
#ifdef FL_MARKERS_STRICT
    fl_assert_fail(m->cond, m->file, m->line, "(marker)",
                   m->kind == FL_MARKER_ALWAYS ? "FL_ALWAYS belief broken: the condition is false"
                                               : "FL_NEVER belief broken: the condition is true");
#endif
}

struct fl_marker *fl_markers(size_t *count)
{
    struct fl_marker *first = __start_fl_marker_section, *end = __stop_fl_marker_section;
    if (!first || !end || end <= first) {
        *count = 0;
        return NULL;
    }
    *count = (size_t)(end - first);
    return first;
}

struct fl_marker *fl_marker_find(const char *file_suffix, const char *cond)
{
    size_t n;
    struct fl_marker *m = fl_markers(&n);
    size_t sl = strlen(file_suffix);
    for (size_t i = 0; i < n; i++) {
        size_t fl = strlen(m[i].file);
        if (fl >= sl && !strcmp(m[i].file + fl - sl, file_suffix) && !strcmp(m[i].cond, cond))
            return &m[i];
    }
    return NULL;
}

void fl_markers_reset(void)
{
    size_t n;
    struct fl_marker *m = fl_markers(&n);
    for (size_t i = 0; i < n; i++)
        m[i].hits = 0;
}

bool fl_markers_strict(void)
{
#ifdef FL_MARKERS_STRICT
    return true;
#else
    return false;
#endif
}
