/*
 * fuzz_jsonl.c: fuzz target for the importer of JSON lines (DESIGN §3.7); see fuzz_import.h
 * for the properties checked.
 */
#include "fuzz/fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_import_one(hist_load_jsonl_mem, "fuzz.jsonl", data, size);
}
