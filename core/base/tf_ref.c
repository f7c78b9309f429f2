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
           (!job->proof || job->proof_bits <= LODE_TF_PROOF_MAX_T) &&
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

/* a * b mod q for a, b < q < 2^127 by shift-and-add from b's top bit:
 * r < q and r + a < 2q < 2^128, so nothing overflows. q < 2^64: one
 * 128-bit product. */
static lode_u128 mulmod127(lode_u128 a, lode_u128 b, lode_u128 q)
{
    if ((q >> 64) == 0)
        return (a * b) % q;
    if (a < b) {
        lode_u128 t = a;
        a = b;
        b = t;
    }
    int top = 127;
    while (top >= 0 && ((b >> top) & 1) == 0)
        top--;
    lode_u128 r = 0;
    for (int i = top; i >= 0; i--) {
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
        r = mulmod127(r, r, q);
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

uint64_t lode_tf_candidates(uint32_t p, unsigned bit_min, unsigned bit_max)
{
    uint64_t n = 0;
    for (uint32_t c = 0; c < LODE_TF_CLASSES; c++) {
        uint64_t b, e;
        if (!lode_tf_class_needed(p, c))
            continue;
        lode_tf_class_range(p, bit_min, bit_max, c, &b, &e);
        n += e - b;
    }
    return n;
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

/* ---- Verifiable trial factoring (docs/TF-PROOF.md): the condition C and a
 * primality test of q < 2^127. ---- */

/* 2^e mod q, odd q >= 3, q < 2^127: left to right, a doubling per bit. */
static lode_u128 pow2mod127(uint64_t e, lode_u128 q)
{
    lode_u128 r = 1;
    for (int i = 63; i >= 0; i--) {
        r = mulmod127(r, r, q);
        if ((e >> i) & 1) {
            r <<= 1; /* r < 2^127: no overflow */
            if (r >= q)
                r -= q;
        }
    }
    return r;
}

bool lode_tf_proof_condition(uint32_t p, lode_u128 q, unsigned t)
{
    if (q < 3 || (q & 1) == 0 || (q >> 127) != 0)
        return false;
    if (t == 0)
        return true;
    lode_u128 mask = t >= 128 ? ~(lode_u128)0 : ((lode_u128)1 << t) - 1;
    lode_u128 lhs = pow2mod127((uint64_t)p + 96, q);
    lode_u128 rhs = pow2mod127(96, q);
    return (lhs & mask) == (rhs & mask);
}

/* a - b mod q and a + b mod q, for a, b < q < 2^127. */
static lode_u128 submod(lode_u128 a, lode_u128 b, lode_u128 q) { return a >= b ? a - b : a + (q - b); }
static lode_u128 addmod(lode_u128 a, lode_u128 b, lode_u128 q)
{
    lode_u128 s = a + b; /* < 2^128 */
    return s >= q ? s - q : s;
}

/* x / 2 mod odd q, x < q. */
static lode_u128 halfmod(lode_u128 x, lode_u128 q) { return (x & 1) ? (x + q) >> 1 : x >> 1; }

/* Montgomery arithmetic mod odd n < 2^127, R = 2^128, for the primality
 * test (the condition and the factor test above stay plain): each q a run
 * lists is tested on the host as its scans are checked, about 100x faster
 * than by shift-and-add. Values in Montgomery form are x R mod n, below n;
 * addmod, submod and halfmod work on them unchanged (they are linear). */
typedef struct mont127 {
    lode_u128 n, ninv; /* ninv = -1/n mod 2^128 */
    lode_u128 one, r2; /* R mod n, R^2 mod n */
} mont127;

/* The 256-bit product a b as hi 2^128 + lo. */
static void mul_wide(lode_u128 a, lode_u128 b, lode_u128 *hi, lode_u128 *lo)
{
    const uint64_t a0 = (uint64_t)a, a1 = (uint64_t)(a >> 64), b0 = (uint64_t)b, b1 = (uint64_t)(b >> 64);
    const lode_u128 p00 = (lode_u128)a0 * b0, p01 = (lode_u128)a0 * b1, p10 = (lode_u128)a1 * b0,
                    p11 = (lode_u128)a1 * b1;
    const lode_u128 mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10; /* < 3 2^64 */
    *lo = mid << 64 | (uint64_t)p00;
    *hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
}

/* a b / R mod n for a, b < n: t + u n = 0 mod R, so the low halves sum to
 * R exactly when t's is not zero; the result is below 2n < 2^128. */
static lode_u128 mont_mul(const mont127 *m, lode_u128 a, lode_u128 b)
{
    lode_u128 th, tl, mh, ml;
    mul_wide(a, b, &th, &tl);
    mul_wide(tl * m->ninv, m->n, &mh, &ml);
    const lode_u128 r = th + mh + (tl != 0);
    return r >= m->n ? r - m->n : r;
}

static void mont_init(mont127 *m, lode_u128 n)
{
    lode_u128 x = n; /* n^-1 mod 8, then Newton: 6, 12, ..., 384 bits */
    for (int i = 0; i < 7; i++)
        x *= 2 - n * x;
    m->n = n;
    m->ninv = 0 - x;
    m->one = (0 - n) % n; /* (2^128 - n) mod n = 2^128 mod n */
    m->r2 = m->one;
    for (int i = 0; i < 128; i++) /* 2^256 mod n by doublings */
        m->r2 = m->r2 >= n - m->r2 ? m->r2 - (n - m->r2) : m->r2 + m->r2;
}

static lode_u128 to_mont(const mont127 *m, lode_u128 a) { return mont_mul(m, a % m->n, m->r2); }

/* The strong probable-prime test of odd n > 2 to base a (2 <= a < n). */
static bool strong_probable_prime(const mont127 *m, lode_u128 a)
{
    const lode_u128 n = m->n, minus_one = n - m->one;
    lode_u128 d = n - 1;
    int s = 0;
    while ((d & 1) == 0) {
        d >>= 1;
        s++;
    }
    lode_u128 x = m->one, base = to_mont(m, a); /* x = a^d, right to left */
    for (lode_u128 e = d; e != 0; e >>= 1) {
        if (e & 1)
            x = mont_mul(m, x, base);
        base = mont_mul(m, base, base);
    }
    if (x == m->one || x == minus_one)
        return true;
    for (int r = 1; r < s; r++) {
        x = mont_mul(m, x, x);
        if (x == minus_one)
            return true;
        if (x == m->one)
            return false;
    }
    return false;
}

/* Jacobi symbol (a / n), odd n > 0. */
static int jacobi(lode_u128 a, lode_u128 n)
{
    int j = 1;
    a %= n;
    while (a != 0) {
        while ((a & 1) == 0) {
            a >>= 1;
            unsigned r = (unsigned)(n & 7);
            if (r == 3 || r == 5)
                j = -j;
        }
        lode_u128 t = a;
        a = n;
        n = t;
        if ((a & 3) == 3 && (n & 3) == 3)
            j = -j;
        a %= n;
    }
    return n == 1 ? j : 0;
}

static bool is_square(lode_u128 n)
{
    lode_u128 x = (lode_u128)sqrtl((long double)n);
    if (x > UINT64_MAX)
        x = UINT64_MAX;
    while (x * x > n)
        x--;
    while (x < UINT64_MAX && (x + 1) * (x + 1) <= n)
        x++;
    return x * x == n;
}

/* The strong Lucas probable-prime test of odd n > 2, not a square, with
 * Selfridge's method A: D the first of 5, -7, 9, -11, ... with (D / n) = -1,
 * P = 1, Q = (1 - D) / 4. */
static bool strong_lucas_probable_prime(const mont127 *m)
{
    const lode_u128 n = m->n;
    int64_t d = 5;
    for (;;) {
        lode_u128 dm = d > 0 ? (lode_u128)d % n : n - (lode_u128)(-d) % n;
        int j = jacobi(dm, n);
        if (j == -1)
            break;
        if (j == 0 && (lode_u128)(d > 0 ? d : -d) != n)
            return false; /* gcd(D, n) > 1 */
        d = d > 0 ? -(d + 2) : -d + 2;
        if (d > 1000000 || d < -1000000)
            return false; /* cannot happen for a non-square n */
    }
    lode_u128 dm = d > 0 ? (lode_u128)d % n : n - (lode_u128)(-d) % n;
    int64_t qs = (1 - d) / 4;
    lode_u128 qm = qs >= 0 ? (lode_u128)qs % n : n - (lode_u128)(-qs) % n;
    if (qm == n)
        qm = 0;
    /* n + 1 = k 2^s, k odd */
    lode_u128 k = n + 1;
    int s = 0;
    while ((k & 1) == 0) {
        k >>= 1;
        s++;
    }
    /* U_1 = 1, V_1 = P = 1, Q^1; then the bits of k below its top (all in
     * Montgomery form). */
    dm = to_mont(m, dm);
    qm = to_mont(m, qm);
    lode_u128 u = m->one, v = m->one, qk = qm;
    int top = 127;
    while (((k >> top) & 1) == 0)
        top--;
    for (int i = top - 1; i >= 0; i--) {
        u = mont_mul(m, u, v);                                    /* U_2m = U_m V_m */
        v = submod(mont_mul(m, v, v), addmod(qk, qk, n), n);      /* V_2m = V_m^2 - 2 Q^m */
        qk = mont_mul(m, qk, qk);
        if ((k >> i) & 1) {
            lode_u128 u1 = halfmod(addmod(u, v, n), n);                   /* (P U + V) / 2 */
            lode_u128 v1 = halfmod(addmod(mont_mul(m, dm, u), v, n), n); /* (D U + P V) / 2 */
            u = u1;
            v = v1;
            qk = mont_mul(m, qk, qm);
        }
    }
    if (u == 0 || v == 0)
        return true;
    for (int r = 1; r < s; r++) {
        v = submod(mont_mul(m, v, v), addmod(qk, qk, n), n); /* V_2m */
        qk = mont_mul(m, qk, qk);
        if (v == 0)
            return true;
    }
    return false;
}

bool lode_tf_is_prime_u128(lode_u128 q)
{
    static const unsigned bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41};
    if (q < 2 || (q >> 127) != 0)
        return false;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        if (q == bases[i])
            return true;
        if (q % bases[i] == 0)
            return false;
    }
    if (q < 43 * 43)
        return true;
    /* Sorenson and Webster (2015): the strong test to the 13 prime bases
     * up to 41 has no pseudoprime below 3 317 044 064 679 887 385 961 981. */
    const lode_u128 mr_bound = (lode_u128)331704u * 10000000000000000000ull + 4064679887385961981ull;
    mont127 m;
    mont_init(&m, q);
    if (q < mr_bound) {
        for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
            if (!strong_probable_prime(&m, bases[i]))
                return false;
        return true;
    }
    /* Baillie-PSW: no pseudoprime is known (none below 2^64 exists). */
    return strong_probable_prime(&m, 2) && !is_square(q) && strong_lucas_probable_prime(&m);
}
