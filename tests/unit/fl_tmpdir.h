/*
 * fl_tmpdir.h: a test program's scratch folder, made and removed in one call each
 * (instead of the mkdtemp and `rm -rf` blocks every such test wrote out):
 * fl_tmpdir_make fills in a mkdtemp template and says why it failed; fl_tmpdir_remove
 * removes the folder and all it holds (nftw, no shell) and says when it could not.
 */
#ifndef FL_TEST_TMPDIR_H
#define FL_TEST_TMPDIR_H

#include <ftw.h> /* nftw: _GNU_SOURCE is on for the whole tree */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
