#include "tests/momentum_oracle.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define N (UINT32_C(1) << 26)

static int by_pair(const void *x, const void *y)
{
    const oracle_pair *a = x, *b = y;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The 50-bit birthdays of nonces [0, n) (SHA-512 of nonce || mid, eight a
 * hash; n a multiple of 8), into bd and keys both. */
static void birthdays(EVP_MD_CTX *ctx, const uint8_t mid[32], uint32_t n, uint64_t *bd, uint64_t *keys)
{
    uint8_t in[36], out[64];
    memcpy(in + 4, mid, 32);
    unsigned len;
    for (uint32_t base = 0; base < n; base += 8) {
        in[0] = (uint8_t)base, in[1] = (uint8_t)(base >> 8), in[2] = (uint8_t)(base >> 16),
        in[3] = (uint8_t)(base >> 24);
        EVP_DigestInit_ex(ctx, EVP_sha512(), NULL);
        EVP_DigestUpdate(ctx, in, sizeof in);
        EVP_DigestFinal_ex(ctx, out, &len);
        for (int j = 0; j < 8; j++) {
            uint64_t w = 0;
            for (int i = 7; i >= 0; i--)
                w = w << 8 | out[8 * j + i];
            bd[base + (uint32_t)j] = keys[base + (uint32_t)j] = w >> 14;
        }
    }
}

/* LSD radix sort of the 50-bit birthdays, 10 bits a pass; *tmp is the
 * scratch, and the two swap each pass. */
static void radix_sort(uint64_t **keys, uint64_t **tmp)
{
    static uint32_t count[1024];
    for (unsigned shift = 0; shift < 50; shift += 10) {
        memset(count, 0, sizeof count);
        for (uint32_t i = 0; i < N; i++)
            count[((*keys)[i] >> shift) & 1023]++;
        uint32_t sum = 0;
        for (int d = 0; d < 1024; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < N; i++)
            (*tmp)[count[((*keys)[i] >> shift) & 1023]++] = (*keys)[i];
        uint64_t *t = *keys;
        *keys = *tmp;
        *tmp = t;
    }
}

int oracle_momentum_birthdays(const uint8_t mid[32], uint32_t n, uint64_t *bd)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL || n % 8 != 0) {
        EVP_MD_CTX_free(ctx);
        return -1;
    }
    birthdays(ctx, mid, n, bd, bd);
    EVP_MD_CTX_free(ctx);
    return 0;
}

size_t oracle_momentum_pairs(const uint8_t mid[32], oracle_pair **pairs)
{
    uint64_t *bd = malloc((size_t)N * 8), *keys = malloc((size_t)N * 8), *tmp = malloc((size_t)N * 8);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t found = (size_t)-1;
    *pairs = NULL;
    if (bd == NULL || keys == NULL || tmp == NULL || ctx == NULL)
        goto out;
    birthdays(ctx, mid, N, bd, keys);
    radix_sort(&keys, &tmp);
    /* The repeated values (few), then every nonce that has one. */
    size_t dups = 0;
    for (uint32_t i = 1; i < N; i++)
        if (keys[i] == keys[i - 1] && (dups == 0 || tmp[dups - 1] != keys[i]))
            tmp[dups++] = keys[i];
    size_t members = 0;
    uint32_t *nonce = (uint32_t *)keys; /* reuse: members are few */
    uint64_t *value = tmp + dups;
    for (uint32_t n = 0; n < N; n++) {
        size_t lo = 0, hi = dups;
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (tmp[m] < bd[n])
                lo = m + 1;
            else
                hi = m;
        }
        if (lo < dups && tmp[lo] == bd[n]) {
            nonce[members] = n;
            value[members++] = bd[n];
        }
    }
    found = 0;
    oracle_pair *list = malloc((members * members / 2 + 1) * sizeof *list);
    if (list == NULL) {
        found = (size_t)-1;
        goto out;
    }
    for (size_t x = 0; x < members; x++)
        for (size_t y = x + 1; y < members; y++)
            if (value[x] == value[y])
                list[found++] = (oracle_pair){nonce[x], nonce[y], value[x]};
    qsort(list, found, sizeof *list, by_pair);
    *pairs = list;
out:
    EVP_MD_CTX_free(ctx);
    free(bd);
    free(keys);
    free(tmp);
    return found;
}
