/*
 * sweep_print.c: the end of a sweep on stderr: every run that did not pass, with the
 * command that replays it, grouped by the first violated check (the text before the
 * first ':' of its first violation), groups in order of first appearance, then the
 * totals.
 */
#include "harness/sweep/sweep.h"

#include "harness/common/text.h"
#include "reports/report.h"

/* The group of a run that did not pass, in a fresh string the caller frees. */
static char *group_key(const struct sweep_result *r)
{
    const char *fv = r->first_violation ? r->first_violation : "";
    const char *colon = strchr(fv, ':');
    struct fl_buf b;
    fl_buf_init(&b);
    if (r->verdict == SWEEP_ERROR && strncmp(fv, "worker:", 7) == 0)
        fl_buf_printf(&b, "error");
    else if (colon)
        fl_buf_append(&b, fv, (size_t)(colon - fv));
    else
        fl_buf_printf(&b, "%s", sweep_verdict_name(r->verdict));
    char *k = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return k;
}

/* One run of a group: what failed (escaped: it may be script text) and the replay
 * command (shell-quoted, so it runs as printed). */
static void print_run(const struct sweep_result *r, const struct sweep_options *opts, FILE *out)
{
    json_t *o = json_object(), *bugs = json_array();
    for (int b = 0; b < opts->bug_count; b++)
        json_array_append_new(bugs, json_string(opts->bugs[b]));
    json_object_set_new(o, "bugs", bugs);
    char *oj = json_dumps(o, JSON_COMPACT);
    char *replay = rpt_replay_command(r->scenario, r->seed, oj);
    char *scn = fl_term_dup(r->scenario), *fv = fl_term_dup(r->first_violation);
    fprintf(out, "  %s seed %llu [%s] %s\n    %s\n", scn, (unsigned long long)r->seed,
            sweep_verdict_name(r->verdict), fv, replay);
    free(scn);
    free(fv);
    free(replay);
    free(oj);
    json_decref(o);
}

void sweep_print_failures(const struct sweep_report *rep, const struct sweep_options *opts,
                          FILE *out)
{
    /* every key once: grouping stays cheap for sweeps with thousands of failures */
    char **keys = fl_calloc((size_t)rep->count + 1, sizeof *keys);
    for (int i = 0; i < rep->count; i++)
        if (rep->results[i].verdict != SWEEP_PASS)
            keys[i] = group_key(&rep->results[i]);
    bool *shown = fl_calloc((size_t)rep->count + 1, sizeof *shown);
    for (int i = 0; i < rep->count; i++) {
        if (shown[i] || !keys[i])
            continue;
        int n = 0;
        for (int j = i; j < rep->count; j++)
            n += keys[j] && !strcmp(keys[j], keys[i]);
        char *shown_key = fl_term_dup(keys[i]);
        fprintf(out, "\n%s (%d run%s):\n", shown_key, n, n == 1 ? "" : "s");
        free(shown_key);
        for (int j = i; j < rep->count; j++) {
            if (!keys[j] || strcmp(keys[j], keys[i]))
                continue;
            shown[j] = true;
            print_run(&rep->results[j], opts, out);
        }
    }
    for (int i = 0; i < rep->count; i++)
        free(keys[i]);
    free(keys);
    free(shown);
    fprintf(out,
            "\nsweep: %d of %d planned runs: %d pass, %d fail, %d unknown, %d error%s in %.1f s\n",
            rep->count, rep->planned, rep->pass, rep->fail, rep->unknown, rep->error,
            rep->interrupted ? " (interrupted)" : "", rep->wall_s);
}
