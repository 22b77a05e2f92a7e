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
#include "harness/history/history.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_temp_write("histdb", "h.db", data, size);
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int64_t run = 0;
    int rc = hist_load_db_path(path, 0, &h, &run, &err);
    fz_judge_loaded(&h, rc, &err, false);
    fl_buf_close(&err);
    chk_history_close(&h);
    hist_remove(path);
    return 0;
}
