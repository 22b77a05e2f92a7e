/*
 * fl_tmpdir.h: a test program's scratch folder, made and removed in one call each
 * (instead of the mkdtemp and `rm -rf` blocks every such test wrote out):
 * fl_tmpdir_make fills in a mkdtemp template and says why it failed; fl_tmpdir_remove
 * removes the folder and all it holds (nftw, no shell) and says when it could not.
 * fl_test_main_in is the whole main of a program whose cases share one such folder.
 */
#ifndef FL_TEST_TMPDIR_H
#define FL_TEST_TMPDIR_H

#include <ftw.h> /* nftw: _GNU_SOURCE is on for the whole tree */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "fl_test.h"

static inline bool fl_tmpdir_make(char *tmpl)
{
    if (mkdtemp(tmpl))
        return true;
    perror("mkdtemp");
    return false;
}

static inline int fl_tmpdir_remove_one(const char *path, const struct stat *st, int flag,
                                       struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void fl_tmpdir_remove(const char *dir)
{
    if (nftw(dir, fl_tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Makes the folder `tmpl` (a mkdtemp template), runs the cases in it, removes it and
 * returns fl_test_end(); 1 when the folder cannot be made. */
static inline int fl_test_main_in(char *tmpl, const struct fl_case *cases, size_t n)
{
    if (!fl_tmpdir_make(tmpl))
        return 1;
    fl_test_cases(cases, n);
    fl_tmpdir_remove(tmpl);
    return fl_test_end();
}

#endif
