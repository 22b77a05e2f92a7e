/*
 * fuzz_temp.c: the one scratch file of a fuzz target whose code under test reads a
 * path (fuzz.h): a private folder under /tmp made on the first call, the file in it
 * written anew for every input, and both removed when the process exits (with
 * SQLite's side files of it, since a target may open it as a database).
 */
#include "fuzz/fuzz.h"
#include "harness/history/history.h"

#include <string.h>
#include <unistd.h>

static char fz_dir[64];
static char fz_path[128];

static void fz_temp_at_exit(void)
{
    hist_remove(fz_path);
    rmdir(fz_dir);
}

const char *fz_temp_write(const char *tag, const char *name, const void *data, size_t n)
{
    if (fz_dir[0] == 0) {
        snprintf(fz_dir, sizeof(fz_dir), "/tmp/fl-fuzz-%.16s.XXXXXX", tag);
        FZ_REQUIRE(mkdtemp(fz_dir) != NULL, "mkdtemp failed");
        snprintf(fz_path, sizeof(fz_path), "%s/%.32s", fz_dir, name);
        atexit(fz_temp_at_exit);
    }
    hist_remove(fz_path); /* a database's -journal or -wal of the last input must go too */
    FILE *f = fopen(fz_path, "wb");
    FZ_REQUIRE(f != NULL, "cannot write %s", fz_path);
    FZ_REQUIRE(fwrite(data, 1, n, f) == n, "short write");
    fclose(f);
    return fz_path;
}
