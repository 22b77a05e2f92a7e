/*
 * fuzz_histdb.c: fuzz target for the history database loader (`faultline check
 * DB`): the input is a whole SQLite file, seeded with small real faultline histories
 * (fuzz/corpus/histdb, page size 512). It is written to a file in a private temporary
 * directory and loaded with hist_load_db_path, as the CLI does. Properties: no crash
 * or abort on any file (a damaged database is bad input: an error with a message);
 * an accepted run goes through both checkers (with small limits) and renders as JSON
 * (fz_judge_loaded, as the importer targets; the engines are not compared here).
 */
#include "fuzz/fuzz_import.h"

#include <string.h>
#include <unistd.h>

static char fz_dir[64];
static char fz_path[128];

static void fz_cleanup(void)
{
    static const char *const side[] = {"", "-journal", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof(side) / sizeof(*side); i++) {
        char p[160];
        snprintf(p, sizeof(p), "%s%s", fz_path, side[i]);
        unlink(p);
    }
}

static void fz_at_exit(void)
{
    fz_cleanup();
    rmdir(fz_dir);
}

static void fz_write(const uint8_t *data, size_t size)
{
    if (fz_dir[0] == 0) {
        snprintf(fz_dir, sizeof(fz_dir), "/tmp/fl-fuzz-histdb.XXXXXX");
        FZ_REQUIRE(mkdtemp(fz_dir) != NULL, "mkdtemp failed");
        snprintf(fz_path, sizeof(fz_path), "%s/h.db", fz_dir);
        atexit(fz_at_exit);
    }
    fz_cleanup();
    FILE *f = fopen(fz_path, "wb");
    FZ_REQUIRE(f != NULL, "cannot write %s", fz_path);
    FZ_REQUIRE(fwrite(data, 1, size, f) == size, "short write");
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write(data, size);
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int64_t run = 0;
    int rc = hist_load_db_path(fz_path, 0, &h, &run, &err);
    fz_judge_loaded(&h, rc, &err, false);
    fl_buf_close(&err);
    chk_history_close(&h);
    fz_cleanup();
    return 0;
}
