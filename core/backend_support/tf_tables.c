#include "core/backend_support/tf_tables.h"

#include "core/base/status.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first `count` odd primes from 13 (malloc'd), or NULL. A segmented
 * sieve over odd numbers (byte j of a segment stands for lo + 2j): each
 * segment stays in the L1/L2 cache, and the GPU engines take a million
 * primes at every start. */
static uint32_t *tf_first_primes(unsigned count)
{
    enum { kSegmentOdds = 1 << 16 };
    /* The (count + 5)-th prime is below n (ln n + ln ln n) for n >= 6
     * (Rosser's bound); its base primes are those up to its square root. */
    const double n = (double)count + 6;
    const uint64_t bound = (uint64_t)(n * (log(n) + log(log(n)))) + 64;
    const uint32_t root = (uint32_t)sqrt((double)bound) + 1;
    uint32_t *out = malloc((size_t)count * sizeof *out);
    uint8_t *base = calloc(root + 1, 1), *segment = malloc(kSegmentOdds);
    uint32_t *sieving = malloc((root / 2 + 1) * sizeof *sieving); /* odd base primes */
    uint64_t *next = malloc((root / 2 + 1) * sizeof *next);       /* each one's next odd multiple */
    if (out == NULL || base == NULL || segment == NULL || sieving == NULL || next == NULL) {
        free(out), free(base), free(segment), free(sieving), free(next);
        return NULL;
    }
    unsigned n_sieving = 0;
    for (uint32_t i = 3; i <= root; i += 2) {
        if (base[i])
            continue;
        sieving[n_sieving] = i;
        next[n_sieving++] = (uint64_t)i * i;
        for (uint64_t k = (uint64_t)i * i; k <= root; k += 2 * i)
            base[k] = 1;
    }
    unsigned got = 0;
    for (uint64_t lo = 13; got < count; lo += 2 * kSegmentOdds) {
        const uint64_t hi = lo + 2 * kSegmentOdds; /* odd numbers lo .. hi - 2 */
        memset(segment, 0, kSegmentOdds);
        for (unsigned i = 0; i < n_sieving && (uint64_t)sieving[i] * sieving[i] < hi; i++) {
            uint64_t m = next[i];
            if (m < lo) /* the first odd multiple at or above lo */
                m += ((lo - m + 2 * sieving[i] - 1) / (2 * sieving[i])) * 2 * sieving[i];
            for (; m < hi; m += 2 * sieving[i])
                segment[(m - lo) / 2] = 1;
            next[i] = m;
        }
        for (uint32_t j = 0; j < kSegmentOdds && got < count; j++)
            if (!segment[j])
                out[got++] = (uint32_t)(lo + 2 * j);
    }
    free(base), free(segment), free(sieving), free(next);
    return out;
}

/* Every list built so far stays (engines hold pointers into them): a
 * process builds one or two (the CPU's short one, the GPUs' long one). */
typedef struct prime_list {
    struct prime_list *next;
    unsigned count;
    uint32_t *primes;
} prime_list;
static prime_list *lists;
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;

const uint32_t *tf_sieve_primes(unsigned count)
{
    const uint32_t *found = NULL;
    pthread_mutex_lock(&lists_lock);
    for (const prime_list *l = lists; l != NULL && found == NULL; l = l->next)
        if (l->count >= count)
            found = l->primes;
    if (found == NULL) {
        prime_list *l = malloc(sizeof *l);
        uint32_t *primes = l != NULL ? tf_first_primes(count ? count : 1) : NULL;
        if (primes != NULL) {
            *l = (prime_list){.next = lists, .count = count ? count : 1, .primes = primes};
            lists = l;
            found = primes;
        } else {
            free(l);
        }
    }
    pthread_mutex_unlock(&lists_lock);
    return found;
}

uint32_t tf_inverse_mod(uint32_t x, uint32_t r)
{
    int64_t t = 0, nt = 1, a = r, b = x % r;
    while (b != 0) {
        int64_t q = a / b, tmp = t - q * nt;
        t = nt;
        nt = tmp;
        tmp = a - q * b;
        a = b;
        b = tmp;
    }
    return (uint32_t)(t < 0 ? t + r : t);
}

int tf_sieve_tables_build(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg,
                          tf_sieve_tables *t)
{
    memset(t, 0, sizeof *t);
    uint32_t *h = malloc(5 * (size_t)(nprimes ? nprimes : 1) * sizeof *h);
    if (h == NULL)
        return -1;
    t->prime = h;
    t->inv = h + nprimes;
    t->pmod = h + 2 * (size_t)nprimes;
    t->smod = h + 3 * (size_t)nprimes;
    t->minv = h + 4 * (size_t)nprimes;
    unsigned n = 0;
    for (unsigned i = 0; i < nprimes; i++) {
        const uint32_t r = primes[i];
        if ((uint64_t)r >= 2ull * p + 1)
            break;
        if (r == p)
            continue;
        t->prime[n] = r;
        t->pmod[n] = p % r;
        t->inv[n] = tf_inverse_mod((uint32_t)((2ull * p * 4620u) % r), r);
        t->smod[n] = seg % r;
        t->minv[n] = 0xFFFFFFFFu / r;
        if (r < seg)
            t->n_small = n + 1;
        n++;
    }
    t->count = n;
    return 0;
}

void tf_sieve_tables_free(tf_sieve_tables *t)
{
    free(t->prime);
    memset(t, 0, sizeof *t);
}

/* The number of primes[0 .. n) below limit (primes sorted). */
static unsigned count_below(const uint32_t *primes, unsigned n, uint64_t limit)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (primes[mid] < limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

tf_sieve_plan tf_sieve_plan_of(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg)
{
    const unsigned below = count_below(primes, nprimes, 2ull * p + 1);
    const unsigned at_p = count_below(primes, below, p);
    const bool has_p = at_p < below && primes[at_p] == p;
    const unsigned count = below - (has_p ? 1 : 0);
    unsigned n_small = count_below(primes, below, seg);
    if (has_p && at_p < n_small)
        n_small--;
    return (tf_sieve_plan){.count = count, .skip = has_p ? at_p : count, .n_small = n_small};
}

int tf_sieve_tables_verify(const uint32_t *primes, unsigned nprimes, uint32_t p, uint32_t seg,
                           const tf_sieve_plan *plan, int (*read)(void *ctx, int table, uint32_t *out, unsigned count),
                           void *ctx, char *why, size_t why_size)
{
    tf_sieve_tables t;
    if (tf_sieve_tables_build(primes, nprimes, p, seg, &t) != 0)
        return LODE_ERR_NO_MEMORY;
    int rc = LODE_OK;
    if (t.count != plan->count || t.n_small != plan->n_small) {
        snprintf(why, why_size, "the plan has %u primes (%u small), the host %u (%u small)", plan->count,
                 plan->n_small, t.count, t.n_small);
        rc = LODE_ERR_DEVICE;
    }
    uint32_t *dev = rc == LODE_OK ? malloc((size_t)(t.count ? t.count : 1) * sizeof *dev) : NULL;
    if (rc == LODE_OK && dev == NULL)
        rc = LODE_ERR_NO_MEMORY;
    static const char *const names[] = {"prime", "inv", "pmod", "smod", "minv"};
    const uint32_t *host[] = {t.prime, t.inv, t.pmod, t.smod, t.minv};
    for (int i = 0; i < 5 && rc == LODE_OK && t.count > 0; i++) {
        rc = read(ctx, i, dev, t.count);
        for (unsigned e = 0; rc == LODE_OK && e < t.count; e++)
            if (dev[e] != host[i][e]) {
                snprintf(why, why_size, "%s[%u] = %u on the device, %u on the host", names[i], e, dev[e],
                         host[i][e]);
                rc = LODE_ERR_DEVICE;
            }
    }
    free(dev);
    tf_sieve_tables_free(&t);
    return rc;
}
