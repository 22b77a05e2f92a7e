/*
 * test_load_corpus.c: the porcupine corpus (103 Jepsen etcd logs, 6 kv logs) loaded
 * with the corpus loaders and checked; every verdict must equal
 * expected_verdicts.tsv. The search engine runs on every file, both partitioned and
 * (for the kv files) unpartitioned where that stays small, and the answers must
 * agree. Exits 77 (ctest SKIP) when the corpus is absent.
 */
#include "checkers/checkers.h"
#include "fl_test.h"
#include "harness/history/load.h"

static int check_file(const char *dir, const char *file, const char *expected, int *agree)
{
    char path[1400];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int fmt = strstr(file, "jepsen/") ? HIST_FMT_JEPSEN : HIST_FMT_PORCUPINE_KV;
    int rc = hist_load(path, HIST_FMT_AUTO, 0, &h, NULL, &err);
    CHECK_EQ_INT(rc, FL_OK);
    if (rc) {
        fprintf(stderr, "%s\n", fl_buf_cstr(&err));
        goto out;
    }
    int sniffed = -1;
    hist_format_sniff(path, &sniffed, &err);
    if (strcmp(expected, "none") != 0)
        CHECK_EQ_INT(sniffed, fmt);
    struct chk_lin_result r;
    chk_lin_check(&h, NULL, &r);
    const char *want = !strcmp(expected, "linearizable")       ? "pass"
                       : !strcmp(expected, "not_linearizable") ? "fail"
                                                               : "pass"; /* empty */
    if (strcmp(chk_verdict_name(r.verdict), want) != 0)
        fprintf(stderr, "%s: got %s, want %s (%s)\n", file, chk_verdict_name(r.verdict), want,
                r.reason);
    else
        (*agree)++;
    CHECK_EQ_STR(chk_verdict_name(r.verdict), want);
    if (r.verdict == CHK_FAIL) {
        /* a failure explains itself */
        CHECK(r.detail != NULL);
        CHECK(json_array_size(json_object_get(r.detail, "unordered_ops")) > 0);
        CHECK(json_object_get(r.detail, "state") != NULL);
        CHECK(r.reason[0] != 0);
    }
    if (strstr(file, "c01") || strstr(file, "c10")) {
        struct chk_limits lim = {0};
        lim.no_partition = true;
        struct chk_lin_result r2;
        chk_lin_check(&h, &lim, &r2);
        if (r2.verdict != CHK_UNKNOWN)
            CHECK_EQ_INT(r2.verdict, r.verdict);
        chk_lin_result_close(&r2);
    }
    chk_lin_result_close(&r);
out:
    fl_buf_close(&err);
    chk_history_close(&h);
    return rc;
}

int main(void)
{
    const char *shared = getenv("FL_SHARED");
    char dir[1024], tsv[1100];
    snprintf(dir, sizeof(dir), "%s/corpus/porcupine", shared ? shared : "../shared");
    snprintf(tsv, sizeof(tsv), "%s/expected_verdicts.tsv", dir);
    FILE *f = fopen(tsv, "r");
    if (!f) {
        printf("SKIP: porcupine corpus not found at %s\n", dir);
        return 77;
    }
    char line[512];
    int files = 0, agree = 0;
    while (fgets(line, sizeof(line), f)) {
        char file[256], expected[64];
        if (sscanf(line, "%255s %63s", file, expected) != 2 || !strcmp(file, "file"))
            continue;
        check_file(dir, file, expected, &agree);
        files++;
    }
    fclose(f);
    printf("corpus agreement: %d/%d\n", agree, files);
    CHECK_EQ_INT(files, 109);
    CHECK_EQ_INT(agree, files);
    return fl_test_end();
}
