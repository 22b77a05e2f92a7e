/*
 * cmd_export.c: `faultline export DB [--run ID] --format jsonl [-o FILE]` (issue 16
 * §4). Loads one run of a history database through the loader API (load.h) and
 * writes it as JSON lines (harness/export/export.h), to stdout unless -o names a
 * file, so the history can go to other tools and come back: `faultline check` on the
 * output gives the run's verdicts. Exit 0, 2 on bad arguments or a database that
 * cannot be loaded, 3 when writing fails.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/export/export.h"
#include "harness/history/load.h"

#include <errno.h>

const char cmd_export_usage[] =
    "usage: faultline export DB [--run ID] --format jsonl [-o FILE]\n"
    "Writes one run of a history database as JSON lines (the format `faultline check\n"
    "--format jsonl` reads): every operation with its key, flat fields for single-key\n"
    "operations, then the watches and their events. stdout unless -o FILE.\n"
    "  --run ID  the run to export (default: the only run; several need --run)\n"
    "exit codes: 0 written, 2 bad input, 3 a write failed\n";

struct export_args {
    const char *db, *out;
    int64_t run_id;
    bool fmt_seen, run_seen, out_seen;
};

static int parse_one(int argc, char **argv, int *i, struct export_args *a)
{
    const char *s = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    uint64_t u;
    int rc;
    if (!strcmp(s, "--format")) {
        if ((rc = cli_once("export", s, &a->fmt_seen)))
            return rc;
        if (!v || strcmp(v, "jsonl"))
            return cli_usage_error("export: --format wants jsonl (got '%s')", v ? v : "");
    } else if (!strcmp(s, "--run")) {
        if ((rc = cli_once("export", s, &a->run_seen)) ||
            (rc = cli_u64_arg("export", s, v, 1, INT64_MAX, &u)))
            return rc;
        a->run_id = (int64_t)u;
    } else if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
        if ((rc = cli_once("export", s, &a->out_seen)) ||
            (rc = cli_output_arg("export", s, v, false)))
            return rc;
        a->out = v;
    } else if (s[0] == '-' && s[1]) {
        return cli_unknown_option("export", s);
    } else if (!a->db) {
        a->db = s;
        return 0;
    } else {
        return cli_usage_error("export: one database at a time (got %s and %s)", a->db, s);
    }
    (*i)++;
    return 0;
}

static int parse_args(int argc, char **argv, struct export_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        int rc = parse_one(argc, argv, &i, a);
        if (rc)
            return rc;
    }
    if (!a->db)
        return cli_usage_error("export: no database given (%s)",
                               "faultline export DB --format jsonl");
    if (!a->fmt_seen)
        return cli_usage_error("export: --format jsonl is required");
    return cli_db_arg("export", "DB", a->db);
}

int cmd_export(int argc, char **argv)
{
    struct export_args a;
    int ex = parse_args(argc, argv, &a);
    if (ex)
        return ex;
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int64_t run_id = 0;
    if (hist_load_db_path(a.db, a.run_id, &h, &run_id, &err)) {
        fprintf(stderr, "faultline: export: %s\n", fl_buf_cstr(&err));
        ex = FL_EXIT_USAGE;
        goto out;
    }
    FILE *f = a.out ? fopen(a.out, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "faultline: export: cannot write '%s': %s\n", a.out, strerror(errno));
        ex = FL_EXIT_INTERNAL;
        goto out;
    }
    int rc = exp_jsonl_file(&h, f);
    if (a.out && fclose(f))
        rc = FL_EIO;
    if (rc) {
        fprintf(stderr, "faultline: export: writing %s failed\n", a.out ? a.out : "stdout");
        ex = FL_EXIT_INTERNAL;
    }
out:
    fl_buf_close(&err);
    chk_history_close(&h);
    return ex;
}
