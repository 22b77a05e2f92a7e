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
#include "checkers/chk_int.h"

static int conv_pass, conv_undecided, conv_files;
static const char *conv_name;

/*
 * Corpus conversion: a linearizable single-register history is given etcd revisions
 * from the linearization the search found (each effective write takes the next
 * revision; reads carry the revision and the mod/create revision and version they
 * saw). Unknown-outcome ops stay unknown, so the revision engine has to place them
 * again from what the reads reveal. Both engines must accept the converted history
 * (the revision engine may only say "unknown", never "fail").
 */
static void convert_and_check(const struct chk_history *h, const struct chk_lin_result *r)
{
    struct chk_history c;
    chk_history_init(&c);
    int32_t key = chk_history_key(&c, "register", 8);
    uint8_t *placed = calloc(h->op_count + 1, 1);
    int64_t *rev_of = calloc(h->op_count + 1, sizeof(int64_t));
    int64_t rev = 1, version = 0, create = 0, mod = 0;
    int32_t value = CHK_NIL; /* value ids of h */
    for (uint32_t i = 0; i < r->order_count; i++) {
        uint32_t o = r->order[i];
        const struct chk_op *op = &h->ops[o];
        const struct chk_sub *s = &h->subs[op->sub_first];
        placed[o] = 1;
        bool write = false;
        if (s->kind == CHK_SUB_PUT && op->cmp_count == 0) {
            write = true;
        } else if (s->kind == CHK_SUB_PUT) {
            write = value != CHK_NIL && value == (int32_t)h->cmps[op->cmp_first].operand;
        }
        if (write) {
            rev++;
            create = value == CHK_NIL ? rev : create;
            version = value == CHK_NIL ? 1 : version + 1;
            mod = rev;
            value = s->value;
        }
        rev_of[o] = rev;
        (void)mod;
        if (s->kind == CHK_SUB_RANGE)
            rev_of[o] = rev * 1000000 + (value == CHK_NIL ? 0 : version) * 1000 + 0; /* packed */
    }
    /* emit in the original op order */
    rev = 1;
    int64_t mod_of_value = 0;
    (void)mod_of_value;
    for (uint32_t o = 0; o < h->op_count; o++) {
        const struct chk_op *op = &h->ops[o];
        const struct chk_sub *s = &h->subs[op->sub_first];
        int st = op->status;
        size_t n;
        int32_t v = CHK_NIL;
        if (s->value != CHK_NIL) {
            const uint8_t *p = chk_value_bytes(h, s->value, &n);
            v = chk_history_value(&c, p, n);
        }
        if (s->kind == CHK_SUB_RANGE) {
            int32_t seen = CHK_NIL;
            int64_t mr = CHK_NO_REV, cr = CHK_NO_REV, ver = CHK_NO_REV, hr = CHK_NO_REV;
            if (st == CHK_ST_OK && s->kv_count) {
                const uint8_t *p = chk_value_bytes(h, h->kvs[s->kv_first].value, &n);
                seen = chk_history_value(&c, p, n);
            }
            if (st == CHK_ST_OK) {
                hr = rev_of[o] / 1000000;
                ver = (rev_of[o] / 1000) % 1000;
            }
            chk_history_get(&c, op->client, key, seen, op->call_ns, op->return_ns, st, hr, mr, cr,
                            seen == CHK_NIL ? CHK_NO_REV : ver);
        } else if (op->cmp_count == 0) {
            chk_history_put(&c, op->client, key, v, op->call_ns, op->return_ns, st,
                            st == CHK_ST_OK ? rev_of[o] : CHK_NO_REV);
        } else {
            int32_t ex = CHK_NIL;
            const uint8_t *p = chk_value_bytes(h, (int32_t)h->cmps[op->cmp_first].operand, &n);
            ex = chk_history_value(&c, p, n);
            int succ = st != CHK_ST_OK ? -1 : (op->flags & CHK_OPF_SUCCEEDED) ? 1 : 0;
            chk_history_cas(&c, op->client, key, ex, v, op->call_ns, op->return_ns, st,
                            st == CHK_ST_OK ? rev_of[o] : CHK_NO_REV, succ);
        }
        c.ops[c.op_count - 1].err = op->err;
    }
    struct fl_buf e;
    fl_buf_init(&e);
    CHECK_EQ_INT(chk_history_finish(&c, &e), FL_OK);
    CHECK(c.has_revs);
    struct chk_limits lim = {0};
    lim.engine = CHK_ENGINE_REVISION;
    struct chk_lin_result r1, r2;
    chk_lin_check(&c, &lim, &r1);
    lim.engine = CHK_ENGINE_SEARCH;
    lim.steps_max = 5000000;
    chk_lin_check(&c, &lim, &r2);
    if (r1.verdict == CHK_FAIL || r2.verdict == CHK_FAIL)
        fprintf(stderr, "%s converted: revision %s (%s), search %s (%s)\n", conv_name,
                chk_verdict_name(r1.verdict), r1.reason, chk_verdict_name(r2.verdict), r2.reason);
    CHECK(r1.verdict != CHK_FAIL);
    CHECK(r2.verdict != CHK_FAIL);
    if (r1.verdict == CHK_FAIL && getenv("CHK_DUMP")) {
        for (uint32_t i = 0; i < c.op_count; i++) {
            struct fl_buf t;
            fl_buf_init(&t);
            chk_op_text(&c, &c.ops[i], &t);
            fprintf(stderr, "%u c%d [%lld,%lld] st%d rev %lld %s\n", i, c.ops[i].client,
                    (long long)c.ops[i].call_ns, (long long)c.ops[i].return_ns, c.ops[i].status,
                    (long long)c.ops[i].rev, fl_buf_cstr(&t));
            fl_buf_close(&t);
        }
    }
    conv_files++;
    conv_pass += r1.verdict == CHK_PASS && r2.verdict == CHK_PASS;
    conv_undecided += r1.verdict == CHK_UNKNOWN || r2.verdict == CHK_UNKNOWN;
    chk_lin_result_close(&r1);
    chk_lin_result_close(&r2);
    fl_buf_close(&e);
    free(placed);
    free(rev_of);
    chk_history_close(&c);
}

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
    if (!strcmp(expected, "none")) {
        /* The empty history: nothing to check is bad input, never a pass (issue 12). */
        CHECK_EQ_INT(rc, FL_EINVAL);
        CHECK(strstr(fl_buf_cstr(&err), "no operations") != NULL);
        (*agree)++;
        rc = FL_OK;
        goto out;
    }
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
    if (r.verdict == CHK_PASS && fmt == HIST_FMT_JEPSEN && r.order_count)
        conv_name = file, convert_and_check(&h, &r);
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
    printf("converted with revisions: %d files, both engines pass %d, undecided %d\n", conv_files,
           conv_pass, conv_undecided);
    CHECK_EQ_INT(conv_files, 23);
    CHECK_EQ_INT(files, 109);
    CHECK_EQ_INT(agree, files);
    return fl_test_end();
}
