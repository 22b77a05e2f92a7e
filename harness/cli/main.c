/*
 * main.c: the faultline binary's entry point. It dispatches to a subcommand, and
 * answers --help / -h for every one of them (anywhere after the subcommand name) with
 * that subcommand's usage on stdout and exit code 0, so no subcommand can forget to.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/live/live.h"

static const char usage[] =
    "usage: faultline COMMAND [ARGS]   (faultline COMMAND --help for one command)\n"
    "\n"
    "  run SCENARIO.lua [--seed N] [--db FILE] [--report DIR] [--json] [--bug NAME]...\n"
    "      [--target sim|etcd|live] [--workdir DIR] [--keep]\n"
    "  sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N] [--db FILE] [--junit FILE]\n"
    "        [--report DIR] [--fail-fast] [--bug NAME]... [--timeout S]\n"
    "  check HISTORY [--format auto|db|jsonl|jepsen|porcupine-kv] [--run ID] [--json]\n"
    "        [--timeout S] [--engine auto|revision|search]\n"
    "  report DB... [--run ID] -o DIR\n"
    "  shrink SCENARIO.lua --seed N [--bug NAME]... [-o FILE]\n"
    "  bench [--json] [--corpus DIR]\n"
    "  list bugs|failpoints|scenarios|balancers|api\n"
    "  hunt [SCENARIO.lua] [--seeds A..B] [--bug NAME]... [--own] [-j N] [--json]\n"
    "  explore SCENARIO.lua [--runs N] [--seed S] [--bug NAME]... [-j N] [--json] [--out DIR]\n"
    "  merge OUT.db IN.db...\n"
    "  export DB [--run ID] --format jsonl [-o FILE]\n"
    "  diff SCENARIO.lua [--seeds A..B] [--targets sim,etcd] [--db FILE] [--json]\n"
    "  member --id N --data DIR --peer-listen ADDR --client-listen ADDR [--peers N=ADDR,...]\n"
    "\n"
    "exit codes: 0 pass, 1 violation, 2 bad input, 3 internal error, 4 unknown\n";

/* check and report parse their own arguments (cmd_check.c, cmd_report.c); their
 * usage texts live here with the others so that --help answers for them too. */
static const char check_usage[] =
    "usage: faultline check HISTORY [--format auto|db|jsonl|jepsen|porcupine-kv] [--run ID]\n"
    "       [--json] [--timeout S] [--engine auto|revision|search]\n"
    "  HISTORY   a faultline database, or a JSON-lines, Jepsen or porcupine-kv history\n"
    "  --run ID  the run of a database to check (needed when it holds several runs;\n"
    "            without it, a database of several runs is exit 2, naming them)\n"
    "  --json    print one JSON object on stdout\n"
    "  --timeout S  give up (exit 4) after S seconds of checking\n"
    "exit codes: 0 pass, 1 violation, 2 bad input, 4 unknown\n";
static const char report_usage[] =
    "usage: faultline report DB... [--run ID] -o DIR\n"
    "  writes index.html, run pages, summary.json, junit.xml and summary.md for the runs\n"
    "  of one or more history databases (e.g. the shards of a sweep) into DIR\n";

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *usage;
} cmds[] = {
    {"run", cmd_run, cmd_run_usage},          {"sweep", cmd_sweep, cmd_sweep_usage},
    {"check", cmd_check, check_usage},        {"report", cmd_report, report_usage},
    {"shrink", cmd_shrink, cmd_shrink_usage}, {"bench", cmd_bench, cmd_bench_usage},
    {"list", cmd_list, cmd_list_usage},       {"hunt", cmd_hunt, cmd_hunt_usage},
    {"merge", cmd_merge, cmd_merge_usage},    {"explore", cmd_explore, cmd_explore_usage},
    {"export", cmd_export, cmd_export_usage}, {"diff", cmd_diff, cmd_diff_usage},
    {"member", cmd_member, cmd_member_usage},
};

const char *cli_usage(const char *cmd)
{
    if (!strcmp(cmd, "faultline"))
        return usage;
    for (size_t i = 0; i < FL_ARRAY_LEN(cmds); i++)
        if (!strcmp(cmd, cmds[i].name))
            return cmds[i].usage;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fputs(usage, stderr), FL_EXIT_USAGE;
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return FL_EXIT_PASS;
    }
    /* Hidden: the parent-death exec wrapper of the live process supervisor (live.h). */
    if (!strcmp(argv[1], "_pdeath-exec"))
        return lv_pdeath_exec_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "--version")) {
        printf("faultline %s\n", FL_VERSION);
        return FL_EXIT_PASS;
    }
    for (size_t i = 0; i < FL_ARRAY_LEN(cmds); i++) {
        if (strcmp(argv[1], cmds[i].name))
            continue;
        if (cli_wants_help(argc - 1, argv + 1)) {
            fputs(cmds[i].usage, stdout);
            return fflush(stdout) ? FL_EXIT_INTERNAL : FL_EXIT_PASS;
        }
        return cmds[i].fn(argc - 1, argv + 1);
    }
    cli_usage_error("unknown command '%s' (try faultline --help)", argv[1]);
    fputs(usage, stderr);
    return FL_EXIT_USAGE;
}
