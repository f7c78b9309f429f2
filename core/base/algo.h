/* The proof-of-work algorithms lode knows, described by one table (the
 * rows of core/base/algos.def).
 *
 * Everything that differs between algorithms and is not a kernel (name, the
 * reference hash used for re-checks, the pool-difficulty convention) lives in
 * lode_algo_info, so no code elsewhere switches on the algorithm. */
#ifndef LODE_CORE_ALGO_H
#define LODE_CORE_ALGO_H

#include <stdbool.h>
#include <stdint.h>

struct lode_work;
struct lode_hit;

/* LODE_ALGO_SHA256D, LODE_ALGO_SCRYPT, LODE_ALGO_MOMENTUM, LODE_ALGO_TF
 * (Mersenne trial factoring, core/base/tf_ref.h): the rows of algos.def. */
typedef enum lode_algo {
#define LODE_ALGO(ID, name, ...) LODE_ALGO_##ID,
#include "core/base/algos.def"
#undef LODE_ALGO
    LODE_ALGO_COUNT
} lode_algo;

/* How one unit of work of an algorithm is shaped (see docs/ARCHITECTURE.md). */
typedef enum lode_work_kind {
    /* Index = the 32-bit header nonce; a hit is a nonce whose PoW hash meets
     * the target. SHA-256d, scrypt. */
    LODE_WORK_NONCE_SCAN,
    /* Index = the header nonce; one index is a whole 2^26 birthday space of
     * that header; a hit is one colliding nonce pair. Momentum. */
    LODE_WORK_COLLISION_SEARCH,
    /* Index = k in one class of one exponent; a hit is a k whose
     * q = 2kp+1 divides 2^p-1. Mersenne trial factoring. */
    LODE_WORK_TF,
} lode_work_kind;

typedef struct lode_algo_info {
    const char *name;          /* as on the command line: "sha256d" */
    lode_work_kind kind;
    /* Reference PoW hash of an 80-byte header (nonce-scan algorithms; NULL
     * for the others). */
    void (*pow_hash_ref)(const uint8_t header[80], uint8_t hash[32]);
    /* Re-checks a backend's hit against the job with the reference code:
     * true if it is genuine; hash receives the reference PoW hash (trial
     * factoring: hash[0] holds the LODE_TF_HIT_* flags of the verdict). */
    bool (*check_hit)(const struct lode_work *work, const struct lode_hit *hit, uint8_t hash[32]);
    /* Pool difficulty 1 corresponds to the share target 0xffff * 2^(208+shift):
     * 0 for SHA-256d, 16 for scrypt pools (the 65536x convention). */
    unsigned pool_diff1_shift;
    /* Energy per unit of work as its users quote it: joules per
     * energy_work_per_unit units ("J/GH": 1e9 hashes); 0 for trial
     * factoring, whose figure is GHz-days of credit per kWh
     * (core/base/energy.h). */
    const char *energy_unit;
    double energy_work_per_unit;
} lode_algo_info;

const lode_algo_info *lode_algo_get(lode_algo algo);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int lode_algo_parse(const char *name, lode_algo *out);
/* "sha256d, scrypt, momentum": for error messages and --help. */
const char *lode_algo_names(void);

#endif
