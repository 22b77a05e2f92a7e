/*
 * cmd_list.c: `faultline list bugs|failpoints|scenarios|balancers|api`.
 *   bugs        NAME  SCENARIO  DESCRIPTION, one bug switch a line (bugs.h)
 *   failpoints  NAME  DESCRIPTION (harness/fault)
 *   scenarios   PATH  DESCRIPTION of every bundled scenario (scenarios/, seeds/, bugs/),
 *               read from its scenario{ description = ... } without running it; the
 *               folder is ./scenarios, else the one next to the binary's build dir
 *   balancers   NAME  MODELS  DESCRIPTION (nodes/client/lb.h)
 *   api         every function of the Lua surface, one a line (harness/lua)
 * Output is sorted or in table order, never in directory or hash order.
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/text.h"
#include "harness/fault/fault.h"
#include "harness/lua/scn.h"
#include "nodes/client/lb.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Finds the scenarios folder: ./scenarios, else <binary dir>/../scenarios. */
static bool scenarios_dir(char *out, size_t n)
{
    DIR *d = opendir("scenarios");
    if (d) {
        closedir(d);
        snprintf(out, n, "scenarios");
        return true;
    }
    char exe[PATH_MAX - 16];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(out, n, "%s/../scenarios", exe);
    d = opendir(out);
    if (!d)
        return false;
    closedir(d);
    return true;
}

static void collect(const char *dir, char ***paths, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua"))
            continue;
        FL_GROW(*paths, *cap, *n + 1, 32);
        size_t plen = strlen(dir) + len + 2;
        char *p = fl_malloc(plen);
        snprintf(p, plen, "%s/%s", dir, e->d_name);
        (*paths)[(*n)++] = p;
    }
    closedir(d);
}

static int list_scenarios(void)
{
    char base[PATH_MAX], sub[PATH_MAX + 16];
    if (!scenarios_dir(base, sizeof base))
        return cli_usage_error("list: no scenarios folder found (run from the repository)");
    char **paths = NULL;
    size_t n = 0, cap = 0;
    collect(base, &paths, &n, &cap);
    snprintf(sub, sizeof sub, "%s/seeds", base);
    collect(sub, &paths, &n, &cap);
    snprintf(sub, sizeof sub, "%s/bugs", base);
    collect(sub, &paths, &n, &cap);
    if (n)
        qsort(paths, n, sizeof paths[0], cmp_str);
    int rc = FL_EXIT_PASS;
    for (size_t i = 0; i < n; i++) {
        char name[128], desc[512];
        if (scn_describe(paths[i], name, sizeof name, desc, sizeof desc)) {
            cli_usage_error("%s", desc);
            rc = FL_EXIT_USAGE;
        } else {
            /* descriptions are script text: no raw control bytes on the terminal */
            char *p = fl_term_dup(paths[i]), *d = fl_term_dup(desc[0] ? desc : name);
            printf("%s  %s\n", p, d);
            free(p);
            free(d);
        }
        free(paths[i]);
    }
    free(paths);
    return rc;
}

const char cmd_list_usage[] =
    "usage: faultline list bugs|failpoints|scenarios|balancers|api\n"
    "  bugs        bug switches: NAME  SCENARIO  DESCRIPTION\n"
    "  failpoints  failpoints: NAME  DESCRIPTION\n"
    "  scenarios   the bundled scenarios: PATH  DESCRIPTION\n"
    "  balancers   client balancer policies: NAME  MODELS  DESCRIPTION\n"
    "  api         every function of the Lua scenario surface, one a line\n";

int cmd_list(int argc, char **argv)
{
    if (argc != 2) {
        cli_usage_error("list: %s", argc < 2 ? "what to list?" : "one list at a time");
        fputs(cmd_list_usage, stderr);
        return FL_EXIT_USAGE;
    }
    const char *what = argv[1];
    if (!strcmp(what, "bugs")) {
        for (int i = 0; i < FL_BUG_COUNT; i++)
            printf("%s  %s  %s\n", fl_bug_table[i].name, fl_bug_table[i].scenario,
                   fl_bug_table[i].description);
    } else if (!strcmp(what, "failpoints")) {
        for (size_t i = 0; i < flt_failpoint_count(); i++) {
            const struct flt_info *f = flt_failpoint_info(i);
            printf("%s  %s\n", f->name, f->description);
        }
    } else if (!strcmp(what, "balancers")) {
        for (size_t i = 0; i < lb_policy_count(); i++) {
            const struct lb_policy_desc *p = lb_policy_info(i);
            printf("%s  %s  %s\n", p->name, p->models, p->description);
        }
    } else if (!strcmp(what, "api")) {
        for (int i = 0; scn_api_names[i]; i++)
            puts(scn_api_names[i]);
    } else if (!strcmp(what, "scenarios")) {
        return list_scenarios();
    } else {
        cli_usage_error("list: unknown list '%s'", what);
        fputs(cmd_list_usage, stderr);
        return FL_EXIT_USAGE;
    }
    return FL_EXIT_PASS;
}
