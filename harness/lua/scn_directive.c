/*
 * scn_directive.c: the text side of shrinking. A reduced scenario is the original
 * script with one shrink{...} directive in front of its first line, so every line
 * keeps its number (an `expect` reports the same FILE:LINE and the shrinker can tell
 * it is the same claim). This file formats the directive, reads it back from a run's
 * --json summary, and finds it at the start of a script that was shrunk before, so a
 * shrunk file can be shrunk again. scn_shrink.c is what the runtime does with it.
 */
#include "harness/lua/scn_int.h"

void scn_directive_init(struct scn_directive *d)
{
    memset(d, 0, sizeof *d);
    d->time_scale_pct = 100;
    d->clients = d->keys = d->rate = d->watchers = d->nodes = -1;
}

void scn_directive_close(struct scn_directive *d)
{
    free(d->skip_faults);
    d->skip_faults = NULL;
    d->n_skip = 0;
    free(d->add);
    d->add = NULL;
    d->n_add = 0;
}

void scn_directive_copy(struct scn_directive *dst, const struct scn_directive *src)
{
    FL_ASSERT(dst != src);
    free(dst->skip_faults);
    free(dst->add);
    *dst = *src;
    dst->skip_faults = NULL;
    dst->add = NULL;
    if (src->n_skip)
        dst->skip_faults = fl_memdup(src->skip_faults, sizeof(int64_t) * (size_t)src->n_skip);
    if (src->n_add)
        dst->add = fl_memdup(src->add, sizeof *src->add * (size_t)src->n_add);
}

void scn_directive_add(struct scn_directive *d, const struct run_added_fault *f)
{
    d->add = fl_realloc(d->add, sizeof *d->add * (size_t)(d->n_add + 1));
    d->add[d->n_add++] = *f;
}

void scn_directive_skip(struct scn_directive *d, const int64_t *ordinals, int n)
{
    if (n <= 0)
        return;
    int64_t *m = fl_malloc(sizeof(int64_t) * (size_t)(d->n_skip + n));
    int k = d->n_skip;
    if (k)
        memcpy(m, d->skip_faults, sizeof(int64_t) * (size_t)k);
    for (int i = 0; i < n; i++)
        k = scn_ordinal_add(m, k, ordinals[i]);
    free(d->skip_faults);
    d->skip_faults = m;
    d->n_skip = k;
}

int scn_ordinal_add(int64_t *v, int k, int64_t x)
{
    int j = k;
    while (j > 0 && v[j - 1] > x)
        j--;
    if (j > 0 && v[j - 1] == x)
        return k;
    memmove(v + j + 1, v + j, sizeof(int64_t) * (size_t)(k - j));
    v[j] = x;
    FL_ASSERT(j == 0 || v[j - 1] < x);
    return k + 1;
}

bool scn_directive_empty(const struct scn_directive *d)
{
    return !d->n_skip && !d->end_at_ns && d->time_scale_pct == 100 && d->clients < 0 &&
           d->keys < 0 && d->rate < 0 && d->watchers < 0 && d->nodes < 0 && !d->n_add &&
           !d->reseeded && !d->lanes;
}

/* A duration as Lua text: whole seconds or milliseconds when exact. */
static void fmt_duration(struct fl_buf *out, int64_t ns)
{
    if (ns % FL_S == 0)
        fl_buf_printf(out, "%lld*s", (long long)(ns / FL_S));
    else if (ns % FL_MS == 0)
        fl_buf_printf(out, "%lld*ms", (long long)(ns / FL_MS));
    else
        fl_buf_printf(out, "%lld", (long long)ns);
}

void scn_directive_format(const struct scn_directive *d, struct fl_buf *out)
{
    const char *sep = " ";
    fl_buf_printf(out, "shrink{");
    if (d->n_skip) {
        fl_buf_printf(out, "%sskip_faults = {", sep);
        for (int i = 0; i < d->n_skip; i++)
            fl_buf_printf(out, "%s%lld", i ? ", " : "", (long long)d->skip_faults[i]);
        fl_buf_printf(out, "}");
        sep = ", ";
    }
    if (d->end_at_ns) {
        fl_buf_printf(out, "%send_at = ", sep);
        fmt_duration(out, d->end_at_ns);
        sep = ", ";
    }
    if (d->time_scale_pct != 100) {
        fl_buf_printf(out, "%stime_scale = %d", sep, d->time_scale_pct);
        sep = ", ";
        if (d->scale_from_ns) {
            fl_buf_printf(out, ", scale_from = ");
            fmt_duration(out, d->scale_from_ns);
        }
    }
    static const char *const names[] = {"clients", "keys", "rate", "watchers", "nodes"};
    const int vals[] = {d->clients, d->keys, d->rate, d->watchers, d->nodes};
    for (size_t i = 0; i < FL_ARRAY_LEN(names); i++) {
        if (vals[i] >= 0) {
            fl_buf_printf(out, "%s%s = %d", sep, names[i], vals[i]);
            sep = ", ";
        }
    }
    if (d->reseeded) {
        fl_buf_printf(out, "%sreseed = %llu", sep, (unsigned long long)d->reseed);
        sep = ", ";
    }
    if (d->lanes) {
        fl_buf_printf(out, "%slanes = {", sep);
        const char *lsep = "";
        for (int i = 0; i < 32; i++) {
            unsigned bit = 1u << i;
            if (d->lanes & bit) {
                fl_buf_printf(out, "%s\"%s\"", lsep, run_lane_name(bit));
                lsep = ", ";
            }
        }
        fl_buf_printf(out, "}");
        sep = ", ";
    }
    if (d->n_add) {
        fl_buf_printf(out, "%sadd_faults = {", sep);
        for (int i = 0; i < d->n_add; i++) {
            const struct run_added_fault *f = &d->add[i];
            fl_buf_printf(out, "%s{kind = \"%s\", node = %d, at = ", i ? ", " : "",
                          run_added_kind_name(f->kind), f->node);
            fmt_duration(out, f->at_ns);
            fl_buf_printf(out, ", len = ");
            fmt_duration(out, f->for_ns);
            if (f->on)
                fl_buf_printf(out, ", on = \"%s\"", run_event_kind_name(f->on - 1));
            fl_buf_printf(out, "}");
        }
        fl_buf_printf(out, "}");
    }
    fl_buf_printf(out, " }");
}

/* The "add_faults" items of a summary's "shrink": {kind, node, at_ns, len_ns}. */
static void added_from_json(struct scn_directive *d, const json_t *arr)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i);
        struct run_added_fault f = {
            .at_ns = (int64_t)json_integer_value(json_object_get(o, "at_ns")),
            .for_ns = (int64_t)json_integer_value(json_object_get(o, "len_ns")),
            .kind = run_added_kind_find(json_string_value(json_object_get(o, "kind"))
                                            ? json_string_value(json_object_get(o, "kind"))
                                            : ""),
            .node = (int)json_integer_value(json_object_get(o, "node")),
        };
        const char *on = json_string_value(json_object_get(o, "on"));
        f.on = on ? run_event_kind_find(on) + 1 : 0;
        if (f.kind >= 0 && (!on || f.on > 0))
            scn_directive_add(d, &f);
    }
}

static int json_int_or(const json_t *o, const char *key, int64_t def, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    *out = json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
    return json_is_integer(v);
}

void scn_directive_from_json(struct scn_directive *d, const json_t *shrink)
{
    scn_directive_close(d);
    scn_directive_init(d);
    if (!json_is_object(shrink))
        return;
    json_t *skip = json_object_get(shrink, "skip_faults");
    size_t n = json_array_size(skip);
    if (n) {
        int64_t *v = fl_malloc(sizeof(int64_t) * n);
        int k = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(skip, i);
            if (json_is_integer(e) && json_integer_value(e) > 0)
                v[k++] = (int64_t)json_integer_value(e);
        }
        scn_directive_skip(d, v, k);
        free(v);
    }
    int64_t x;
    json_int_or(shrink, "end_at_ms", 0, &x);
    d->end_at_ns = x * FL_MS;
    json_int_or(shrink, "time_scale", 100, &x);
    d->time_scale_pct = (int)x;
    json_int_or(shrink, "scale_from_ms", 0, &x);
    d->scale_from_ns = x * FL_MS;
    if (json_int_or(shrink, "clients", -1, &x))
        d->clients = (int)x;
    if (json_int_or(shrink, "keys", -1, &x))
        d->keys = (int)x;
    if (json_int_or(shrink, "rate", -1, &x))
        d->rate = (int)x;
    if (json_int_or(shrink, "watchers", -1, &x))
        d->watchers = (int)x;
    if (json_int_or(shrink, "nodes", -1, &x))
        d->nodes = (int)x;
    if (json_int_or(shrink, "reseed", -1, &x) && x >= 0) {
        d->reseeded = true;
        d->reseed = (uint64_t)x;
    }
    const json_t *lanes = json_object_get(shrink, "lanes");
    for (size_t i = 0; i < json_array_size(lanes); i++) {
        const char *name = json_string_value(json_array_get(lanes, i));
        d->lanes |= name ? run_lane_find(name) : 0;
    }
    added_from_json(d, json_object_get(shrink, "add_faults"));
}

size_t scn_directive_prefix_len(const char *text, size_t len)
{
    static const char head[] = "shrink{";
    size_t hl = sizeof head - 1;
    if (len < hl || memcmp(text, head, hl))
        return 0;
    int depth = 0;
    for (size_t i = hl - 1; i < len; i++) {
        char c = text[i];
        if (c == '\n' || c == '\'' || c == '-' || (c == '"' && depth < 3))
            return 0; /* not one of ours: ours are one line of numbers and names, with
                       * strings only inside an add_faults item (depth 3) */
        if (c == '{')
            depth++;
        else if (c == '}' && --depth == 0) {
            size_t end = i + 1;
            if (end < len && text[end] == ';')
                end++;
            if (end < len && text[end] == ' ')
                end++;
            return end;
        }
    }
    return 0;
}

void scn_shrink_text(const struct scn_directive *d, const char *body, size_t len,
                     struct fl_buf *out)
{
    scn_directive_format(d, out);
    if (len && body[0] == '#') {
        /* Lua skips a first line starting with '#'; as a comment it stays skipped */
        fl_buf_printf(out, "; --");
    } else {
        fl_buf_printf(out, "; ");
    }
    fl_buf_append(out, body, len);
}
