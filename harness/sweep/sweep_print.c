/*
 * sweep_print.c: the end of a sweep on stderr: every run that did not pass, with the
 * command that replays it, grouped by the first violated check (the text before the
 * first ':' of its first violation), groups in order of first appearance, then the
 * totals.
 */
#include "harness/sweep/sweep.h"

#include "reports/report.h"

static void group_key(const struct sweep_result *r, char *key, size_t n)
{
    const char *fv = r->first_violation ? r->first_violation : "";
    const char *colon = strchr(fv, ':');
    if (r->verdict == SWEEP_ERROR && strncmp(fv, "worker:", 7) == 0)
        snprintf(key, n, "error");
    else if (colon)
        snprintf(key, n, "%.*s", (int)(colon - fv), fv);
    else
        snprintf(key, n, "%s", sweep_verdict_name(r->verdict));
}

void sweep_print_failures(const struct sweep_report *rep, const struct sweep_options *opts,
                          FILE *out)
{
    bool *shown = fl_calloc((size_t)rep->count + 1, sizeof *shown);
    for (int i = 0; i < rep->count; i++) {
        if (shown[i] || rep->results[i].verdict == SWEEP_PASS)
            continue;
        char key[128];
        group_key(&rep->results[i], key, sizeof key);
        int n = 0;
        for (int j = i; j < rep->count; j++) {
            char k2[128];
            group_key(&rep->results[j], k2, sizeof k2);
            n += rep->results[j].verdict != SWEEP_PASS && !strcmp(k2, key);
        }
        fprintf(out, "\n%s (%d run%s):\n", key, n, n == 1 ? "" : "s");
        for (int j = i; j < rep->count; j++) {
            const struct sweep_result *r = &rep->results[j];
            char k2[128];
            group_key(r, k2, sizeof k2);
            if (r->verdict == SWEEP_PASS || strcmp(k2, key) != 0)
                continue;
            shown[j] = true;
            json_t *o = json_object(), *bugs = json_array();
            for (int b = 0; b < opts->bug_count; b++)
                json_array_append_new(bugs, json_string(opts->bugs[b]));
            json_object_set_new(o, "bugs", bugs);
            char *oj = json_dumps(o, JSON_COMPACT);
            char *replay = rpt_replay_command(r->scenario, r->seed, oj);
            fprintf(out, "  %s seed %llu [%s] %s\n    %s\n", r->scenario,
                    (unsigned long long)r->seed, sweep_verdict_name(r->verdict),
                    r->first_violation ? r->first_violation : "", replay);
            free(replay);
            free(oj);
            json_decref(o);
        }
    }
    free(shown);
    fprintf(out,
            "\nsweep: %d of %d planned runs: %d pass, %d fail, %d unknown, %d error%s in %.1f s\n",
            rep->count, rep->planned, rep->pass, rep->fail, rep->unknown, rep->error,
            rep->interrupted ? " (interrupted)" : "", rep->wall_s);
}
