/*
 * fuzz_jepsen.c: fuzz target for the importer of Jepsen etcd logs; see fuzz_import.h
 * for the properties checked.
 */
#include "fuzz/fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_import_one(hist_load_jepsen_mem, "fuzz.log", data, size);
}
