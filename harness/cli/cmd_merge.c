/*
 * cmd_merge.c: `faultline merge OUT.db IN.db...` (DESIGN §8). The shards of a sweep
 * that ran on several machines (`--shard K/N` or `--shard auto`) each leave a history
 * database; merge copies the runs of every IN into OUT (created if missing; runs
 * already in OUT stay), each run with a fresh run_id and all its rows, so one
 * `faultline report OUT.db` or `check` covers the whole sweep. Every input is checked
 * first (it exists, is a faultline history of a schema this binary reads, and is not
 * OUT itself), so bad input leaves OUT untouched; each input is then copied in one
 * transaction. Exit 0, or 2 for bad input, 3 for a write that failed.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/history/history.h"
#include "harness/sweep/sweep.h"

#include <errno.h>
#include <sys/stat.h>

const char cmd_merge_usage[] =
    "usage: faultline merge OUT.db IN.db...\n"
    "Copies every run of the IN databases (e.g. the shards of a sweep) into OUT, created\n"
    "if missing; runs already in OUT stay. Each run gets a new run id.\n"
    "exit codes: 0 merged, 2 bad input (OUT untouched), 3 a write failed\n";

/* Same file (through links, or another spelling of the path)? */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Every input before anything is written: it exists, it is a faultline history this
 * binary reads, it is not OUT, and it is not given twice. */
static int check_inputs(const char *out, char **in, int n)
{
    char err[1024];
    for (int i = 0; i < n; i++) {
        if (same_file(out, in[i]) || !strcmp(out, in[i]))
            return cli_usage_error("merge: '%s' is the output database too", in[i]);
        for (int k = 0; k < i; k++)
            if (!strcmp(in[k], in[i]) || same_file(in[k], in[i]))
                return cli_usage_error("merge: '%s' is given twice", in[i]);
        struct hist_db *db = NULL;
        if (hist_open(in[i], HIST_OPEN_READONLY, &db, err, sizeof err))
            return cli_usage_error("merge: %s", err);
        hist_close(db);
    }
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_merge_usage, stdout);
        return FL_EXIT_PASS;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1])
            return cli_unknown_option("merge", argv[i]);
    if (argc < 3) {
        cli_usage_error("merge: needs an output database and at least one input");
        fputs(cmd_merge_usage, stderr);
        return FL_EXIT_USAGE;
    }
    const char *out = argv[1];
    int rc = cli_db_arg("merge", "OUT", out);
    if (rc)
        return rc;
    rc = check_inputs(out, argv + 2, argc - 2);
    if (rc)
        return rc;
    char err[1024];
    struct hist_db *db = NULL;
    if (hist_open(out, HIST_OPEN_WRITE, &db, err, sizeof err))
        return cli_usage_error("merge: %s", err);
    struct sweep_merge *mg = sweep_merge_new(db);
    int total = 0;
    for (int i = 2; i < argc && !rc; i++) {
        int64_t first = 0;
        int count = 0;
        if (sweep_merge_from(mg, argv[i], &first, &count, err, sizeof err)) {
            fprintf(stderr, "faultline: merge: %s\n", err);
            rc = FL_EXIT_INTERNAL;
            break;
        }
        fprintf(stderr, "merge: %s: %d run%s", argv[i], count, count == 1 ? "" : "s");
        if (count)
            fprintf(stderr, " (now run %lld..%lld)", (long long)first,
                    (long long)(first + count - 1));
        fputc('\n', stderr);
        total += count;
    }
    sweep_merge_free(mg);
    if (hist_close(db) && !rc) {
        fprintf(stderr, "faultline: merge: closing '%s' failed\n", out);
        rc = FL_EXIT_INTERNAL;
    }
    if (!rc)
        fprintf(stderr, "merge: %d run%s from %d database%s into %s\n", total,
                total == 1 ? "" : "s", argc - 2, argc - 2 == 1 ? "" : "s", out);
    return rc;
}
