/*
 * driver.c: a standalone main() for the fuzz targets, so every build (gcc, ASan) runs
 * the seed and regression corpora through them once, without libFuzzer and without
 * fuzzing. Arguments are files or directories (each regular file in a directory, in
 * name order, so the run is the same everywhere). Exit 0 when every input ran; a
 * target that finds a problem aborts, which fails the test.
 *
 *     fuzz_jsonl_replay fuzz/corpus/jsonl          # what ctest runs
 */
#include "fuzz/fuzz.h"
#include "harness/common/common.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    size_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    for (;;) {
        FL_GROW(buf, cap, n + 4096, 4096);
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    /* An exact-size copy, so ASan sees a read past the input as libFuzzer would. */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open directory\n", dir);
        return 1;
    }
    char **names = NULL;
    size_t len = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (len + 1) * sizeof(*names));
        names[len++] = strdup(e->d_name);
    }
    closedir(d);
    if (len)
        qsort(names, len, sizeof(*names), cmp_names);
    int rc = 0;
    for (size_t i = 0; i < len; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= run_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    int rc = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "%s: no such file or directory\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            rc |= run_dir(argv[i], &count);
        } else {
            rc |= run_file(argv[i]);
            count++;
        }
    }
    printf("%s: %d inputs run\n", argv[0], count);
    return rc;
}
