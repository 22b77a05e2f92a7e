/*
 * cmd_report.c: `faultline report DB... [--run ID] -o DIR` (DESIGN §3.9): the runs of
 * one or several history databases (e.g. the shards of a sweep) in one report
 * directory. Every error (missing or foreign database, unknown run id, a directory
 * that cannot be written) is one line on stderr and exit code 2.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "reports/report.h"

#include <errno.h>

static const char usage[] = "usage: faultline report DB... [--run ID] -o DIR";

int cmd_report(int argc, char **argv)
{
    const char **dbs = fl_calloc((size_t)argc + 1, sizeof *dbs);
    int n_db = 0, rc;
    int64_t run_id = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--run") || !strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                rc = cli_usage_error("%s needs a value (%s)", a, usage);
                goto out;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--run")) {
                char *end;
                errno = 0;
                long long id = strtoll(v, &end, 10);
                if (errno || *end || end == v || id <= 0) {
                    rc = cli_usage_error("--run: '%s' is not a run id (a positive integer)", v);
                    goto out;
                }
                run_id = id;
            } else {
                dir = v;
            }
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            puts(usage);
            rc = FL_EXIT_PASS;
            goto out;
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error("report: unknown option '%s' (%s)", a, usage);
            goto out;
        } else {
            dbs[n_db++] = a;
        }
    }
    if (n_db == 0 || !dir) {
        rc = cli_usage_error("report needs at least one database and -o DIR (%s)", usage);
        goto out;
    }
    char err[1024];
    if (rpt_write_report(dbs, n_db, run_id, dir, err, sizeof err)) {
        rc = cli_usage_error("%s", err);
        goto out;
    }
    fprintf(stderr, "report: %s/index.html\n", dir);
    rc = FL_EXIT_PASS;
out:
    free(dbs);
    return rc;
}
