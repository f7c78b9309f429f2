#include "core/base/tf_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool lode_tf_is_prime(uint32_t p)
{
    if (p < 2)
        return false;
    if (p % 2 == 0)
        return p == 2;
    for (uint64_t d = 3; d * d <= p; d += 2)
        if (p % d == 0)
            return false;
    return true;
}

int lode_tf_validate_job(uint32_t p, unsigned bit_min, unsigned bit_max, char *err, size_t err_len)
{
    if (p < LODE_TF_MIN_EXPONENT) {
        snprintf(err, err_len, "exponent %u is below %u", p, LODE_TF_MIN_EXPONENT);
        return -1;
    }
    if (!lode_tf_is_prime(p)) {
        snprintf(err, err_len, "exponent %u is not prime", p);
        return -1;
    }
    if (bit_min < 1 || bit_min >= bit_max || bit_max > LODE_TF_MAX_BITS) {
        snprintf(err, err_len, "bit range %u..%u: need 1 <= bit_min < bit_max <= %u", bit_min,
                 bit_max, LODE_TF_MAX_BITS);
        return -1;
    }
    return 0;
}

int lode_tf_validate(uint32_t p, unsigned bit_min, unsigned bit_max, char *err, size_t err_len)
{
    if (lode_tf_validate_job(p, bit_min, bit_max, err, err_len) != 0)
        return -1;
    if ((double)(bit_max - 1) - log2((double)p) > 63.9) {
        snprintf(err, err_len, "2^%u is too large for exponent %u: k would reach 2^63.9", bit_max, p);
        return -1;
    }
    return 0;
}

bool lode_tf_job_valid(const lode_tf_job *job)
{
    char why[128];
    return job->num_classes == LODE_TF_CLASSES && job->class_index < LODE_TF_CLASSES &&
           lode_tf_validate_job(job->exponent, job->bit_min, job->bit_max, why, sizeof why) == 0;
}

uint64_t lode_tf_calculate_k(uint32_t p, unsigned bits)
{
    lode_u128 top = ((lode_u128)1 << bits) - 2; /* 2kp + 1 < 2^bits <=> 2kp <= 2^bits - 2 */
    lode_u128 k = top / (2 * (lode_u128)p);
    return k > UINT64_MAX ? UINT64_MAX : (uint64_t)k;
}

lode_u128 lode_tf_q(uint32_t p, uint64_t k) { return 2 * (lode_u128)k * p + 1; }

bool lode_tf_class_needed(uint32_t p, uint32_t c)
{
    /* q mod m depends only on k mod m for m = 8 (via k mod 4), 3, 5, 7, 11. */
    uint64_t q8 = (2 * (uint64_t)(c % 4) * (p % 8) + 1) % 8;
    if (q8 != 1 && q8 != 7)
        return false;
    static const unsigned small[] = {3, 5, 7, 11};
    for (int i = 0; i < 4; i++) {
        unsigned m = small[i];
        if ((2 * (uint64_t)(c % m) * (p % m) + 1) % m == 0)
            return false;
    }
    return true;
}

void lode_tf_class_range(uint32_t p, unsigned bit_min, unsigned bit_max, uint32_t c,
                         uint64_t *n_begin, uint64_t *n_end)
{
    /* Smallest k with q >= 2^bit_min: calculate_k(bit_min) + 1. */
    uint64_t k_lo = lode_tf_calculate_k(p, bit_min) + 1;
    uint64_t k_hi = lode_tf_calculate_k(p, bit_max); /* inclusive */
    *n_begin = *n_end = 0;
    if (k_hi < k_lo || k_hi < c)
        return;
    uint64_t b = k_lo <= c ? 0 : (k_lo - c + LODE_TF_CLASSES - 1) / LODE_TF_CLASSES;
    uint64_t e = (k_hi - c) / LODE_TF_CLASSES + 1;
    if (e > b) {
        *n_begin = b;
        *n_end = e;
    }
}

/* a * b mod q by shift-and-add: every intermediate stays below 2q < 2^96. */
static lode_u128 mulmod(lode_u128 a, lode_u128 b, lode_u128 q)
{
    lode_u128 r = 0;
    for (int i = 127; i >= 0; i--) {
        r <<= 1;
        if (r >= q)
            r -= q;
        if ((b >> i) & 1) {
            r += a;
            if (r >= q)
                r -= q;
        }
    }
    return r;
}

bool lode_tf_divides(uint32_t p, lode_u128 q)
{
    if (q < 3 || (q & 1) == 0 || (q >> LODE_TF_MAX_BITS) != 0)
        return false;
    lode_u128 r = 1;
    for (int i = 31; i >= 0; i--) {
        r = mulmod(r, r, q);
        if ((p >> i) & 1) {
            r <<= 1;
            if (r >= q)
                r -= q;
        }
    }
    return r == 1;
}

void lode_tf_u128_str(lode_u128 q, char *buf)
{
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(q % 10));
        q /= 10;
    } while (q != 0);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
}

double lode_tf_ghz_days(uint32_t p, unsigned bit_min, unsigned bit_max)
{
    double total = 0;
    for (unsigned b = bit_min + 1; b <= bit_max; b++) {
        double c = b <= 62 ? 0.011160 : b <= 64 ? 0.017832 : 0.016968;
        total += c * ldexp(1.0, (int)b - 48) * 1680.0 / p;
    }
    return total;
}
