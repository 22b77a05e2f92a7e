/*
 * fuzz_porcupine.c: fuzz target for the importer of porcupine kv logs; see fuzz_import.h
 * for the properties checked.
 */
#include "fuzz/fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_import_one(hist_load_porcupine_kv_mem, "fuzz.kv.log", data, size);
}
