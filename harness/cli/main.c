/*
 * main.c: the faultline binary's entry point; it only dispatches to a subcommand.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"

#include <stdarg.h>

static const char usage[] =
    "usage: faultline COMMAND [ARGS]\n"
    "\n"
    "  run SCENARIO.lua [--seed N] [--db FILE] [--report DIR] [--json] [--bug NAME]...\n"
    "  sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N] [--db FILE] [--junit FILE]\n"
    "        [--report DIR] [--fail-fast] [--bug NAME]...\n"
    "  check HISTORY [--format auto|db|jsonl|jepsen|porcupine-kv] [--run ID] [--json]\n"
    "        [--timeout S]\n"
    "  report DB... [--run ID] -o DIR\n"
    "  shrink SCENARIO.lua --seed N [--bug NAME]... [-o FILE]\n"
    "  bench [--json] [--corpus DIR]\n"
    "  list bugs|failpoints|scenarios|balancers|api\n"
    "  hunt [SCENARIO.lua] [--seeds A..B] [--bug NAME]... [--own] [-j N] [--json]\n"
    "\n"
    "exit codes: 0 pass, 1 violation, 2 bad input, 3 internal error, 4 unknown\n";

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("faultline: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return FL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"run", cmd_run},       {"sweep", cmd_sweep}, {"check", cmd_check}, {"report", cmd_report},
        {"shrink", cmd_shrink}, {"bench", cmd_bench}, {"list", cmd_list},   {"hunt", cmd_hunt},
    };
    if (argc < 2)
        return fputs(usage, stderr), FL_EXIT_USAGE;
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return FL_EXIT_PASS;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("faultline %s\n", FL_VERSION);
        return FL_EXIT_PASS;
    }
    for (size_t i = 0; i < FL_ARRAY_LEN(cmds); i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    cli_usage_error("unknown command '%s' (try faultline --help)", argv[1]);
    return FL_EXIT_USAGE;
}
