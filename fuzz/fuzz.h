/*
 * fuzz.h: what the fuzz targets share. Each target defines LLVMFuzzerTestOneInput;
 * it is linked either with libFuzzer (FL_FUZZ=ON, clang) or with driver.c, the
 * standalone main() that runs corpus files through it once (every build; ctest).
 *
 * fz_in is a cursor over the input that generators draw from: when the input runs
 * out every draw returns 0, so any input, even an empty one, is a valid program.
 * A target must never abort on bad input; FZ_REQUIRE states a property that must
 * hold for every input and aborts (a finding) when it does not.
 */
#ifndef FL_FUZZ_H
#define FL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_REQUIRE(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz property failed: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Writes data[0..n) to the scratch file NAME (fuzz_temp.c) in this process's private
 * folder /tmp/fl-fuzz-TAG.XXXXXX, made on the first call; the last input's file and
 * its SQLite side files are removed first, the folder at exit. Returns the file's path
 * (the same every call). The first call's tag and name stay. */
const char *fz_temp_write(const char *tag, const char *name, const void *data, size_t n);

struct fz_in {
    const uint8_t *p;
    size_t n, at;
};

static inline uint8_t fz_u8(struct fz_in *in)
{
    return in->at < in->n ? in->p[in->at++] : 0;
}

static inline uint32_t fz_u32(struct fz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | fz_u8(in);
    return v;
}

/* A number in [0, n) (n > 0). */
static inline uint32_t fz_below(struct fz_in *in, uint32_t n)
{
    return n <= 256 ? fz_u8(in) % n : fz_u32(in) % n;
}

static inline int fz_left(const struct fz_in *in)
{
    return in->at < in->n;
}

#endif
