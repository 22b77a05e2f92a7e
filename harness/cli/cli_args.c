/*
 * cli_args.c: the argument rules every faultline subcommand shares (cli.h). Numbers
 * are plain decimal digits and nothing else (strtoull would take " -5" as a huge
 * number and "+5", "5 " or "0x10" silently); a value option given twice is an error
 * rather than "the last one wins"; a history database must be a file, since an
 * in-memory or URI database (":memory:", "", "file:...") keeps nothing once the
 * process ends; an output file or folder must have an existing, writable folder to
 * go into before any run starts. Every refusal is one line on stderr naming the subcommand, the
 * option and the value, and exit code 2 (FL_EXIT_USAGE).
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/text.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_usage_error(const char *fmt, ...)
{
    struct fl_buf b;
    fl_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small) {
        char *big = fl_malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        fl_term_escape(&b, big, (size_t)n, FL_TERM_KEEP_NEWLINES);
        free(big);
    } else if (n > 0) {
        /* arguments and paths may hold control bytes: show them escaped */
        fl_term_escape(&b, small, (size_t)n, FL_TERM_KEEP_NEWLINES);
    }
    fprintf(stderr, "faultline: %s\n", fl_buf_cstr(&b));
    fl_buf_close(&b);
    return FL_EXIT_USAGE;
}

int cli_unknown_option(const char *cmd, const char *opt)
{
    cli_usage_error("%s: unknown option '%s'", cmd, opt);
    const char *u = cli_usage(cmd);
    if (u)
        fputs(u, stderr);
    return FL_EXIT_USAGE;
}

int cli_value_once(const char *cmd, const char *opt, bool has_val, const char *what, bool *seen)
{
    if (!has_val)
        return cli_usage_error("%s: %s needs %s", cmd, opt, what);
    return cli_once(cmd, opt, seen);
}

int cli_scenario_arg(const char *cmd, const char *arg, const char **scenario)
{
    if (arg[0] == '-' && arg[1])
        return cli_unknown_option(cmd, arg);
    if (*scenario)
        return cli_usage_error("%s: more than one scenario given ('%s', '%s')", cmd, *scenario,
                               arg);
    *scenario = arg;
    return 0;
}

int cli_missing(const char *cmd, const char *what)
{
    cli_usage_error("%s: %s", cmd, what);
    const char *u = cli_usage(cmd);
    if (u)
        fputs(u, stderr);
    return FL_EXIT_USAGE;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    return s && fl_parse_u64(s, strlen(s), out);
}

int cli_u64_arg(const char *cmd, const char *opt, const char *v, uint64_t min, uint64_t max,
                uint64_t *out)
{
    uint64_t x;
    bool digits = v && *v && strspn(v, "0123456789") == strlen(v);
    if (!digits)
        return cli_usage_error("%s: %s '%s': expected a whole number from %llu to %llu", cmd, opt,
                               v ? v : "", (unsigned long long)min, (unsigned long long)max);
    if (!cli_parse_u64(v, &x) || x < min || x > max)
        return cli_usage_error("%s: %s '%s': out of range (%llu to %llu)", cmd, opt, v,
                               (unsigned long long)min, (unsigned long long)max);
    *out = x;
    return 0;
}

int cli_seconds_arg(const char *cmd, const char *opt, const char *v, double max_s, double *out)
{
    /* digits, optionally a fraction: no sign, exponent, hex, inf or nan */
    size_t whole = v ? strspn(v, "0123456789") : 0;
    size_t frac = whole && v[whole] == '.' ? strspn(v + whole + 1, "0123456789") : 0;
    bool shape = whole && (v[whole] == '\0' || (v[whole] == '.' && frac && !v[whole + 1 + frac]));
    double t = shape ? strtod(v, NULL) : 0;
    if (!shape || !(t > 0) || t > max_s)
        return cli_usage_error("%s: %s '%s': expected seconds, a number above 0 and at most %.0f",
                               cmd, opt, v ? v : "", max_s);
    *out = t;
    return 0;
}

int cli_once(const char *cmd, const char *opt, bool *seen)
{
    if (*seen)
        return cli_usage_error("%s: %s given twice", cmd, opt);
    *seen = true;
    return 0;
}

int cli_bug_arg(const char *cmd, const char *name, const char **bugs, int *count, int max)
{
    if (!fl_bug_find(name))
        return cli_usage_error("%s: unknown bug '%s' (see faultline list bugs)", cmd, name);
    for (int k = 0; k < *count; k++)
        if (!strcmp(bugs[k], name))
            return cli_usage_error("%s: --bug %s given twice", cmd, name);
    if (*count >= max)
        return cli_usage_error("%s: too many --bug options", cmd);
    bugs[(*count)++] = name;
    return 0;
}

int cli_db_arg(const char *cmd, const char *opt, const char *v)
{
    if (!v || !*v)
        return cli_usage_error("%s: %s '': an empty name is a temporary database that keeps no "
                               "history; give a file",
                               cmd, opt);
    if (!strcmp(v, ":memory:") || !strncmp(v, "file:", 5))
        return cli_usage_error("%s: %s '%s': an in-memory or URI database (:memory:, "
                               "file:...) keeps no history; give a file path",
                               cmd, opt, v);
    return 0;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

int cli_output_arg(const char *cmd, const char *opt, const char *v, bool is_dir)
{
    if (!v || !*v)
        return cli_usage_error("%s: %s needs a non-empty path", cmd, opt);
    /* the folder it goes into must exist and be writable: checked before any run, not
     * after a sweep of thousands */
    size_t len = strlen(v);
    while (len > 1 && v[len - 1] == '/') /* "out/" is the folder out */
        len--;
    const char *slash = memrchr(v, '/', len);
    struct fl_buf parent;
    fl_buf_init(&parent);
    if (!slash)
        fl_buf_printf(&parent, ".");
    else
        fl_buf_append(&parent, v, slash == v ? 1 : (size_t)(slash - v));
    struct stat st;
    int rc = 0;
    if (stat(fl_buf_cstr(&parent), &st) != 0 || !S_ISDIR(st.st_mode))
        rc = cli_usage_error("%s: %s: cannot write '%s': folder '%s' does not exist", cmd, opt, v,
                             fl_buf_cstr(&parent));
    else if (access(fl_buf_cstr(&parent), W_OK | X_OK) != 0)
        rc = cli_usage_error("%s: %s: cannot write '%s': folder '%s' is not writable", cmd, opt, v,
                             fl_buf_cstr(&parent));
    else if (stat(v, &st) == 0 && S_ISDIR(st.st_mode) != is_dir)
        rc = cli_usage_error("%s: %s: '%s' %s", cmd, opt, v,
                             is_dir ? "exists and is not a folder" : "is a folder");
    fl_buf_close(&parent);
    return rc;
}
