/*
 * run_converge_hash.h: the converge check's last step on both real targets (issue 15:
 * one copy): HashKV of each member at the one revision they all reached, compared.
 */
#ifndef FL_RUN_CONVERGE_HASH_H
#define FL_RUN_CONVERGE_HASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* HashKV of slot's member at rev: FL_OK with *hash and *compact (its compacted
 * revision), or an error with the text in err. */
typedef int run_hash_kv_fn(void *ud, int slot, int64_t rev, uint32_t *hash, int64_t *compact,
                           char *err, size_t err_len);

/* Asks hash_kv for each of slots[0..n) at rev and writes its answer ("hash",
 * "compact_revision", or "error") into that member's object of d's "members" (the one
 * whose "node" is the slot), d's "revision" too. True when every member answered the
 * same hash and compacted revision; else d's "why" says so. *compared (may be NULL):
 * the members that answered. */
bool run_converge_hash(json_t *d, const int *slots, int n, int64_t rev, run_hash_kv_fn *hash_kv,
                       void *ud, int *compared);

#endif
