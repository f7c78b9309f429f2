#include "core/base/algo.h"

#include <pthread.h>
#include <string.h>

#include "core/base/momentum_ref.h"
#include "core/base/scrypt_ref.h"
#include "core/base/sha256_ref.h"
#include "core/base/tf_ref.h"
#include "core/base/work.h"

/* A nonce-scan hit is genuine if the header with that nonce (and, for a
 * version-rolled job, one of its versions) hashes, by the reference, to at
 * most the target. */
static bool lode_algo_check_nonce_hit(const lode_work *work, const lode_hit *hit, uint8_t hash[32])
{
    memset(hash, 0xff, 32);
    if (hit->index > UINT32_MAX)
        return false;
    uint8_t header[80];
    memcpy(header, work->header.header, 80);
    const lode_header_job *job = &work->header;
    if (job->version_count > 0) {
        bool listed = false;
        for (uint32_t i = 0; i < job->version_count && i < LODE_VERSIONS_MAX; i++)
            listed |= job->versions[i] == hit->version;
        if (!listed)
            return false;
        for (int i = 0; i < 4; i++)
            header[i] = (uint8_t)(hit->version >> (8 * i));
    } else if (hit->version != 0) {
        return false;
    }
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(hit->index >> (8 * i));
    lode_algo_get(work->algo)->pow_hash_ref(header, hash);
    return lode_hash_meets_target(hash, &work->header.target);
}

/* A collision-search hit is genuine if the pair (a < b, both inside the
 * 2^26 space) collides by the reference for the header whose nonce is the
 * hit's index, and the 88-byte header's block hash meets the target. */
static bool lode_algo_check_collision_hit(const lode_work *work, const lode_hit *hit, uint8_t hash[32])
{
    memset(hash, 0xff, 32);
    if (hit->index > UINT32_MAX || hit->pair[0] >= hit->pair[1] ||
        hit->pair[1] >= LODE_MOMENTUM_NONCES)
        return false;
    uint8_t header[80], header88[88];
    memcpy(header, work->header.header, 80);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(hit->index >> (8 * i));
    lode_ref_momentum_header88(header, hit->pair[0], hit->pair[1], header88);
    if (!lode_ref_momentum_block_hash(header88, hash))
        return false;
    return lode_hash_meets_target(hash, &work->header.target);
}

/* A trial-factoring hit is genuine if index n of the job's class gives a
 * q = 2kp + 1 inside [2^bit_min, 2^bit_max) that divides 2^p - 1 by the
 * reference or, for a job with a proof, passes C(p, q, proof_bits); hash[0]
 * gets the LODE_TF_HIT_* verdict. */
static bool lode_algo_check_factor_hit(const lode_work *work, const lode_hit *hit, uint8_t hash[32])
{
    const lode_tf_job *f = &work->factor;
    memset(hash, 0, 32);
    if (f->num_classes != LODE_TF_CLASSES || f->class_index >= LODE_TF_CLASSES ||
        f->bit_max > LODE_TF_MAX_BITS || hit->index > (UINT64_MAX - f->class_index) / LODE_TF_CLASSES ||
        (f->proof && f->proof_bits > LODE_TF_PROOF_MAX_T))
        return false;
    lode_u128 q = lode_tf_q(f->exponent, lode_tf_k(f->class_index, hit->index));
    if (q >> f->bit_max != 0 || q >> f->bit_min == 0)
        return false;
    const bool factor = lode_tf_divides(f->exponent, q);
    const bool passes = f->proof && (factor || lode_tf_proof_condition(f->exponent, q, f->proof_bits));
    if (passes && q >= LODE_TF_PROOF_HOST_LIMIT && lode_tf_is_prime_u128(q))
        hash[0] |= LODE_TF_HIT_PROOF;
    if (factor)
        hash[0] |= LODE_TF_HIT_FACTOR;
    return factor || passes;
}

static const lode_algo_info algos[LODE_ALGO_COUNT] = {
#define LODE_ALGO(ID, algo_name, work_kind, pow_hash, check, diff1_shift, e_unit, e_work)          \
    [LODE_ALGO_##ID] = {.name = #algo_name, .kind = work_kind, .pow_hash_ref = pow_hash,            \
                        .check_hit = check, .pool_diff1_shift = diff1_shift, .energy_unit = e_unit, \
                        .energy_work_per_unit = e_work},
#include "core/base/algos.def"
#undef LODE_ALGO
};

const lode_algo_info *lode_algo_get(lode_algo algo)
{
    return (unsigned)algo < LODE_ALGO_COUNT ? &algos[algo] : NULL;
}

/* Other miners' names: cgminer's and ccminer's sha256, cpuminer's scrypt:N
 * for the N lode's scrypt hashes with (Litecoin's). */
static const struct {
    const char *name;
    lode_algo algo;
} aliases[] = {
    {"sha256", LODE_ALGO_SHA256D},
    {"scrypt:1024", LODE_ALGO_SCRYPT},
};

int lode_algo_parse(const char *name, lode_algo *out)
{
    for (int i = 0; i < LODE_ALGO_COUNT; i++)
        if (name != NULL && strcmp(name, algos[i].name) == 0) {
            *out = (lode_algo)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (name != NULL && strcmp(name, aliases[i].name) == 0) {
            *out = aliases[i].algo;
            return 0;
        }
    return -1;
}

static char names_text[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void join_names(void)
{
    for (int i = 0; i < LODE_ALGO_COUNT; i++) {
        if (i > 0)
            strcat(names_text, ", ");
        strcat(names_text, algos[i].name);
    }
}

const char *lode_algo_names(void)
{
    pthread_once(&names_once, join_names);
    return names_text;
}
