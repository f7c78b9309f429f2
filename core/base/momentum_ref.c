/* Momentum, straight from the protocol's momentum.cpp and main.h. */
#include "core/base/momentum_ref.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/sha256_ref.h"
#include "core/base/sha512_ref.h"

void lode_ref_momentum_midhash(const uint8_t header80[80], uint8_t mid[32])
{
    lode_ref_sha256d(header80, 80, mid);
}

/* The birthdays of nonces base .. base+7 (base a multiple of 8): one
 * SHA-512(le32(base) || midHash) gives all eight, word i (little-endian)
 * shifted right by 14 for nonce base + i. */
static void birthdays_of_base(const uint8_t mid[32], uint32_t base, uint64_t birthdays[8])
{
    uint8_t input[36], digest[64];
    for (int i = 0; i < 4; i++)
        input[i] = (uint8_t)(base >> (8 * i));
    memcpy(input + 4, mid, 32);
    lode_ref_sha512(input, sizeof input, digest);
    for (int w = 0; w < 8; w++) {
        uint64_t word = 0;
        for (int i = 7; i >= 0; i--)
            word = word << 8 | digest[8 * w + i];
        birthdays[w] = word >> (64 - LODE_MOMENTUM_BIRTHDAY_BITS);
    }
}

uint64_t lode_ref_momentum_birthday(const uint8_t mid[32], uint32_t nonce)
{
    uint64_t birthdays[8];
    birthdays_of_base(mid, nonce - nonce % 8, birthdays);
    return birthdays[nonce % 8];
}

bool lode_ref_momentum_verify(const uint8_t mid[32], uint32_t a, uint32_t b)
{
    if (a == b || a > LODE_MOMENTUM_NONCES || b > LODE_MOMENTUM_NONCES)
        return false;
    return lode_ref_momentum_birthday(mid, a) == lode_ref_momentum_birthday(mid, b);
}

void lode_ref_momentum_header88(const uint8_t header80[80], uint32_t a, uint32_t b,
                                uint8_t header88[88])
{
    memcpy(header88, header80, 80);
    for (int i = 0; i < 4; i++) {
        header88[80 + i] = (uint8_t)(a >> (8 * i));
        header88[84 + i] = (uint8_t)(b >> (8 * i));
    }
}

bool lode_ref_momentum_block_hash(const uint8_t header88[88], uint8_t hash[32])
{
    uint8_t mid[32];
    lode_ref_momentum_midhash(header88, mid);
    uint32_t a = 0, b = 0;
    for (int i = 3; i >= 0; i--) {
        a = a << 8 | header88[80 + i];
        b = b << 8 | header88[84 + i];
    }
    if (!lode_ref_momentum_verify(mid, a, b)) {
        memset(hash, 0xff, 32);
        return false;
    }
    lode_ref_sha256d(header88, 88, hash);
    return true;
}

/* ---- the complete search ----
 * Every birthday goes to one of 4096 buckets by its top 12 bits, as an
 * entry (the other 38 bits << 26 | nonce): 2^26 entries of 8 bytes, the
 * whole memory cost. To place them without locks or a second array, each
 * birthday is computed twice: pass 1 counts entries per (thread, bucket),
 * prefix sums give each (thread, bucket) its own slots, pass 2 fills them.
 * Each bucket is then sorted on its birthday bits, and every run of equal
 * birthdays gives all of its pairs. */

#define BUCKET_BITS 12
#define BUCKETS (1u << BUCKET_BITS)
#define ENTRY_BIRTHDAY_BITS (LODE_MOMENTUM_BIRTHDAY_BITS - BUCKET_BITS)
#define ENTRY_NONCE_BITS 26
#define ENTRY_NONCE_MASK ((UINT64_C(1) << ENTRY_NONCE_BITS) - 1)
#define NONCE_BASES (LODE_MOMENTUM_NONCES / 8)
#define MAX_THREADS 256u
/* The radix sort's digit: three passes cover an entry's 38 birthday bits. */
#define DIGIT_BITS 13
#define DIGIT_MASK ((UINT64_C(1) << DIGIT_BITS) - 1)

_Static_assert(ENTRY_BIRTHDAY_BITS + ENTRY_NONCE_BITS == 64, "an entry fills a uint64_t");
_Static_assert(LODE_MOMENTUM_NONCES == UINT32_C(1) << ENTRY_NONCE_BITS, "a nonce fits an entry");

typedef struct pair_list {
    lode_momentum_pair *items;
    size_t count, capacity;
    bool failed; /* out of memory */
} pair_list;

typedef struct search {
    const uint8_t *mid;
    unsigned threads;
    /* [thread * BUCKETS + bucket]: pass 1's counts, then pass 2's next slot. */
    uint32_t *slots;
    uint32_t bucket_start[BUCKETS + 1];
    uint64_t *entries;
    pair_list found[MAX_THREADS];
} search;

typedef void phase_fn(search *s, unsigned thread);

typedef struct worker {
    search *s;
    phase_fn *phase;
    unsigned thread;
    pthread_t id;
} worker;

/* Thread t's share of the nonce bases starts here (t = threads: the end). */
static uint32_t first_base(const search *s, unsigned t)
{
    return (uint32_t)((uint64_t)NONCE_BASES * t / s->threads);
}

static void count_entries(search *s, unsigned t)
{
    uint32_t *count = s->slots + (size_t)t * BUCKETS;
    for (uint32_t base = first_base(s, t); base < first_base(s, t + 1); base++) {
        uint64_t birthdays[8];
        birthdays_of_base(s->mid, base * 8, birthdays);
        for (int i = 0; i < 8; i++)
            count[birthdays[i] >> ENTRY_BIRTHDAY_BITS]++;
    }
}

static void fill_entries(search *s, unsigned t)
{
    uint32_t *next = s->slots + (size_t)t * BUCKETS;
    for (uint32_t base = first_base(s, t); base < first_base(s, t + 1); base++) {
        uint64_t birthdays[8];
        birthdays_of_base(s->mid, base * 8, birthdays);
        for (uint32_t i = 0; i < 8; i++) {
            uint64_t low = birthdays[i] & ((UINT64_C(1) << ENTRY_BIRTHDAY_BITS) - 1);
            s->entries[next[birthdays[i] >> ENTRY_BIRTHDAY_BITS]++] = low << ENTRY_NONCE_BITS | (base * 8 + i);
        }
    }
}

/* LSD radix sort of n entries on their birthday bits; returns whichever of
 * a and spare holds the result. */
static uint64_t *sort_by_birthday(uint64_t *a, uint64_t *spare, size_t n)
{
    uint32_t count[1u << DIGIT_BITS];
    for (unsigned shift = ENTRY_NONCE_BITS; shift < 64; shift += DIGIT_BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(a[i] >> shift) & DIGIT_MASK]++;
        uint32_t sum = 0;
        for (size_t d = 0; d < sizeof count / sizeof *count; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            spare[count[(a[i] >> shift) & DIGIT_MASK]++] = a[i];
        uint64_t *t = a;
        a = spare;
        spare = t;
    }
    return a;
}

static void add_pair(pair_list *list, uint32_t x, uint32_t y)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 16;
        lode_momentum_pair *items = realloc(list->items, capacity * sizeof *items);
        if (items == NULL) {
            list->failed = true;
            return;
        }
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = x < y ? (lode_momentum_pair){x, y} : (lode_momentum_pair){y, x};
}

/* Thread t sorts its share of the buckets and lists their pairs. */
static void collect_pairs(search *s, unsigned t)
{
    unsigned first = (unsigned)((uint64_t)BUCKETS * t / s->threads);
    unsigned end = (unsigned)((uint64_t)BUCKETS * (t + 1) / s->threads);
    size_t largest = 0;
    for (unsigned b = first; b < end; b++)
        if (s->bucket_start[b + 1] - s->bucket_start[b] > largest)
            largest = s->bucket_start[b + 1] - s->bucket_start[b];
    pair_list *found = &s->found[t];
    uint64_t *spare = malloc((largest + 1) * sizeof *spare); /* + 1: never malloc(0) */
    if (spare == NULL) {
        found->failed = true;
        return;
    }
    for (unsigned b = first; b < end && !found->failed; b++) {
        size_t n = s->bucket_start[b + 1] - s->bucket_start[b];
        const uint64_t *e = sort_by_birthday(s->entries + s->bucket_start[b], spare, n);
        for (size_t run = 0, end_run; run < n; run = end_run) {
            for (end_run = run + 1; end_run < n && e[end_run] >> ENTRY_NONCE_BITS == e[run] >> ENTRY_NONCE_BITS;
                 end_run++)
                ;
            for (size_t x = run; x < end_run; x++)
                for (size_t y = x + 1; y < end_run; y++)
                    add_pair(found, (uint32_t)(e[x] & ENTRY_NONCE_MASK), (uint32_t)(e[y] & ENTRY_NONCE_MASK));
        }
    }
    free(spare);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->phase(w->s, w->thread);
    return NULL;
}

/* Runs phase for every thread index, 0 on the calling thread. Returns -1 if
 * a thread could not be started (after joining those that were). */
static int run_phase(search *s, worker *workers, phase_fn *phase)
{
    unsigned started = 1;
    int rc = 0;
    for (; started < s->threads; started++) {
        workers[started] = (worker){.s = s, .phase = phase, .thread = started};
        if (pthread_create(&workers[started].id, NULL, worker_main, &workers[started]) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0)
        phase(s, 0);
    for (unsigned t = 1; t < started; t++)
        pthread_join(workers[t].id, NULL);
    return rc;
}

static int by_pair(const void *x, const void *y)
{
    const lode_momentum_pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

int lode_ref_momentum_pairs(const uint8_t mid[32], unsigned threads, lode_momentum_pair **pairs,
                            size_t *count)
{
    *pairs = NULL;
    *count = 0;
    search *s = calloc(1, sizeof *s);
    worker *workers = NULL;
    int rc = -1;
    if (s == NULL)
        return -1;
    s->mid = mid;
    s->threads = threads == 0 ? 1 : threads < MAX_THREADS ? threads : MAX_THREADS;
    s->slots = calloc((size_t)s->threads * BUCKETS, sizeof *s->slots);
    s->entries = malloc((size_t)LODE_MOMENTUM_NONCES * sizeof *s->entries);
    workers = calloc(s->threads, sizeof *workers);
    if (s->slots == NULL || s->entries == NULL || workers == NULL || run_phase(s, workers, count_entries) != 0)
        goto out;
    /* Slots bucket by bucket, and within a bucket thread by thread. */
    uint32_t slot = 0;
    for (unsigned b = 0; b < BUCKETS; b++) {
        s->bucket_start[b] = slot;
        for (unsigned t = 0; t < s->threads; t++) {
            uint32_t n = s->slots[(size_t)t * BUCKETS + b];
            s->slots[(size_t)t * BUCKETS + b] = slot;
            slot += n;
        }
    }
    s->bucket_start[BUCKETS] = slot;
    if (run_phase(s, workers, fill_entries) != 0 || run_phase(s, workers, collect_pairs) != 0)
        goto out;
    size_t total = 0;
    for (unsigned t = 0; t < s->threads; t++) {
        if (s->found[t].failed)
            goto out;
        total += s->found[t].count;
    }
    if (total > 0) {
        lode_momentum_pair *all = malloc(total * sizeof *all);
        if (all == NULL)
            goto out;
        size_t n = 0;
        for (unsigned t = 0; t < s->threads; t++) {
            if (s->found[t].count > 0)
                memcpy(all + n, s->found[t].items, s->found[t].count * sizeof *all);
            n += s->found[t].count;
        }
        qsort(all, total, sizeof *all, by_pair);
        *pairs = all;
        *count = total;
    }
    rc = 0;
out:
    for (unsigned t = 0; t < s->threads; t++)
        free(s->found[t].items);
    free(workers);
    free(s->entries);
    free(s->slots);
    free(s);
    return rc;
}
