/* Trial factoring's result lines (mfaktc's results.json.txt and its legacy
 * results.txt; docs/GIMPS.md, "The files"):
 *
 *   results.json.txt, one PrimeNet JSON object a line, with its CRC-32 over
 *     "P;TF;<factors>;;B1;B2;<1 | 0: rangecomplete>;;;lode;<version>;<kernel>;<details>;<os>;<arch>;<timestamp>"
 *   results.txt (and stdout, without the bracketed tags):
 *     M<p> has a factor: <q> [TF:<B1>:<B2>:lode <version> <kernel>]
 *     found <n> factor(s) for M<p> from 2^<B1> to 2^<B2> [(partially tested) ][lode <version> <kernel>]
 *     no factor for M<p> from 2^<B1> to 2^<B2> [lode <version> <kernel>]
 *
 * Lines are appended with lode_tf_append_record (O_APPEND, fsync). */
#ifndef LODE_TF_RESULTS_H
#define LODE_TF_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tf/worktodo.h"

/* The proof of a result (core/tf/proof.h), in the JSON line as the field
 * "lode_proof" (PrimeNet ignores fields it does not know). */
typedef struct lode_tf_proof_summary {
    unsigned t, count;
    double expected;
    char sha256[65];   /* of the list, hex */
    const char *file;  /* the proof file's name */
} lode_tf_proof_summary;

/* What a result line says about the program and the machine. */
typedef struct lode_tf_report_info {
    const char *version;         /* lode's version */
    const char *kernel, *details; /* printable ASCII (the checksum is over bytes) */
    const char *user, *computer; /* JSON only; NULL: left out; UTF-8 */
    const char *os, *arch;       /* NULL: uname's (lode_tf_result_os, lode_tf_result_arch) */
    const char *timestamp;       /* "YYYY-MM-DD HH:MM:SS" UTC; NULL: now */
    const lode_tf_proof_summary *proof; /* NULL: the result carries none */
    bool partial;                /* not every class of the range ran (a stop after a
                                    factor): "rangecomplete": false, and the legacy
                                    summary says "(partially tested)" */
} lode_tf_report_info;

/* uname's names as PrimeNet's result JSON spells them (mfaktc's): os
 * Linux, Windows, macOS ("Darwin"); architecture x86_64 ("amd64"), x86_32
 * ("i386".."i686"), ARM64 ("aarch64", "arm64"); others as they are. */
const char *lode_tf_result_os(const char *sysname);
const char *lode_tf_result_arch(const char *machine);

/* The PrimeNet JSON line of a finished assignment (with its newline),
 * factors given as k (q = 2kp + 1) in the order to list them. The "aid"
 * key is written only for a key of exactly 32 hex digits. malloc'ed; NULL
 * when out of memory. */
char *lode_tf_result_json(const lode_tf_assignment *a, const uint64_t *k, int factors,
                          const lode_tf_report_info *info);

/* The legacy lines of a finished assignment (one per factor, then the
 * summary), each with its newline: tagged = as in results.txt, or as
 * printed on stdout (no bracketed tag). Returns the length the whole text
 * has (as snprintf: out holds what fits). */
size_t lode_tf_legacy_lines(const lode_tf_assignment *a, const uint64_t *k, int factors,
                            const lode_tf_report_info *info, bool tagged, char *out, size_t size);

/* Is this assignment's JSON line (json) or legacy summary line (!json) in
 * the file after offset, whole (newline-terminated)? It tells whether an
 * earlier run was stopped between the append and the checkpoint that says
 * so. A JSON line counts only with the same key (or none, for a key that is
 * not 32 hex digits). */
bool lode_tf_result_present(const char *path, long offset, const lode_tf_assignment *a, bool json);

#endif
