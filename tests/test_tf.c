/* Mersenne trial factoring: the reference (core/base/tf_ref.c) and every
 * backend that offers "tf", against the known factors of
 * tests/vectors/mersenne-factors.json (each verified there with Python's
 * pow(2, p, q) == 1; tests/test_tf.py checks lode's CLI against Python).
 *
 *   test_tf [--backend NAME]   exit 77 if no device of that backend runs tf */
#include <math.h>
#include <pthread.h>

#include "backend-cpu/tf_cpu.h"
#include "core/base/status.h"
#include "core/backend_support/tf_tables.h"
#include "core/base/tf_ref.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/registry.h"
#include "core/dispatch/tf_selftest.h"
#include "tests/test_util.h"

static const atomic_int never_abort = 0;

static lode_u128 parse_u128(const char *s)
{
    lode_u128 v = 0;
    for (; *s; s++)
        v = v * 10 + (unsigned)(*s - '0');
    return v;
}

static void test_reference(void)
{
    json_t *root = test_load_vectors("mersenne-factors.json");
    json_t *vectors = json_object_get(root, "vectors");
    CHECK(json_array_size(vectors) == lode_tf_vector_count, "embedded %zu vectors, file %zu",
          lode_tf_vector_count, json_array_size(vectors));
    size_t i;
    json_t *v;
    json_array_foreach(vectors, i, v) {
        uint32_t p = (uint32_t)test_json_uint(v, "exponent");
        uint64_t k = test_json_uint(v, "k");
        unsigned lo = (unsigned)test_json_uint(v, "bit_min"), hi = (unsigned)test_json_uint(v, "bit_max");
        lode_u128 q = parse_u128(test_json_str(v, "factor"));
        char err[128], dec[48];
        CHECK(lode_tf_validate_job(p, lo, hi, err, sizeof err) == 0, "M%u %u..%u valid: %s", p, lo, hi, err);
        CHECK(lode_tf_q(p, k) == q, "M%u: q = 2kp + 1", p);
        lode_tf_u128_str(q, dec);
        CHECK(strcmp(dec, test_json_str(v, "factor")) == 0, "decimal %s", dec);
        CHECK(lode_tf_divides(p, q), "reference: %s divides M%u", dec, p);
        CHECK(cpu_tf_montgomery_divides(p, q), "montgomery: %s divides M%u", dec, p);
        CHECK(lode_tf_class_needed(p, (uint32_t)(k % LODE_TF_CLASSES)), "M%u: class of k needed", p);
        CHECK(k % LODE_TF_CLASSES == test_json_uint(v, "class_4620"), "class_4620");
        uint64_t nb, ne, n = k / LODE_TF_CLASSES;
        lode_tf_class_range(p, lo, hi, (uint32_t)(k % LODE_TF_CLASSES), &nb, &ne);
        CHECK(n >= nb && n < ne, "M%u: k inside the class range", p);
        /* calculate_k: the largest k with 2kp + 1 < 2^bits. */
        uint64_t kmax = lode_tf_calculate_k(p, hi);
        CHECK(lode_tf_q(p, kmax) >> hi == 0 && (kmax == UINT64_MAX || lode_tf_q(p, kmax + 1) >> hi != 0),
              "calculate_k M%u %u", p, hi);
        CHECK(lode_tf_q(p, lode_tf_k((uint32_t)(k % LODE_TF_CLASSES), nb)) >> lo != 0, "range starts at 2^%u", lo);
    }
    json_t *counts = json_object_get(root, "needed_class_counts");
    json_array_foreach(counts, i, v) {
        uint32_t p = (uint32_t)test_json_uint(v, "exponent");
        unsigned needed = 0;
        for (uint32_t c = 0; c < LODE_TF_CLASSES; c++)
            needed += lode_tf_class_needed(p, c);
        CHECK(needed == test_json_uint(v, "needed_classes_of_4620"), "M%u: %u classes needed", p, needed);
    }
    json_decref(root);

    /* The two exponentiations agree on random odd q of every size. */
    for (int t = 0; t < 3000; t++) {
        uint32_t p = (uint32_t)(test_rand() | 1);
        unsigned bits = 2 + (unsigned)(test_rand() % 94);
        lode_u128 q = ((lode_u128)test_rand() << 64 | test_rand()) >> (128 - bits);
        q |= 1;
        if (q < 3)
            q = 3;
        CHECK(lode_tf_divides(p, q) == (bool)cpu_tf_montgomery_divides(p, q), "p %u, %u-bit q", p, bits);
    }
    /* Bounds. */
    char err[128];
    CHECK(lode_tf_validate(99991, 60, 61, err, sizeof err) != 0, "below 100000");
    CHECK(lode_tf_validate(100001, 60, 61, err, sizeof err) != 0, "composite");
    CHECK(lode_tf_validate(4294967291u, 94, 95, err, sizeof err) == 0, "largest 32-bit prime: %s", err);
    CHECK(lode_tf_validate(100003, 0, 61, err, sizeof err) != 0, "bit_min 0");
    CHECK(lode_tf_validate(100003, 61, 61, err, sizeof err) != 0, "empty range");
    CHECK(lode_tf_validate(100003, 94, 96, err, sizeof err) != 0, "above 2^95");
    CHECK(lode_tf_validate(100003, 80, 82, err, sizeof err) != 0, "k beyond 2^63.9");
    /* mfaktc's documented example: M50,000,000 from 2^69 to 2^70. */
    CHECK(fabs(lode_tf_ghz_days(50000000, 69, 70) - 2.3912767291392) < 1e-9, "GHz-days %.10f",
          lode_tf_ghz_days(50000000, 69, 70));
}

/* The sieve tables: what tf_sieve_plan_of says a GPU must build (which
 * primes, which one is skipped, how many are small) equals the host's
 * tables, and every entry satisfies its definition. */
static void test_sieve_tables(void)
{
    const unsigned n = 1000000; /* the GPU engines' default */
    const uint32_t *primes = tf_sieve_primes(n);
    CHECK(primes != NULL, "primes");
    CHECK(tf_sieve_primes(1000) == primes, "a shorter list is the same list's start");
    if (primes == NULL)
        return;
    /* The list: 13 first, and at random places every number from one entry
     * to the next is tested by trial division (an entry prime, none
     * skipped between). */
    CHECK(primes[0] == 13, "the first sieve prime is 13, not %u", primes[0]);
    /* The millionth prime is 15 485 863 (a published count); the list
     * starts after the five primes below 13. */
    CHECK(primes[1000000 - 6] == 15485863u, "the millionth prime is 15485863, not %u", primes[1000000 - 6]);
    unsigned wrong = 0;
    for (int t = 0; t < 300; t++) {
        const unsigned k = (unsigned)(test_rand() % (n - 1));
        for (uint32_t x = primes[k]; x <= primes[k + 1]; x++) {
            bool prime = x % 2 != 0;
            for (uint32_t d = 3; prime && d * d <= x; d += 2)
                prime = x % d != 0;
            wrong += prime != (x == primes[k] || x == primes[k + 1]);
        }
    }
    CHECK(wrong == 0, "sieve primes: %u numbers misjudged", wrong);
    /* p in the list and below a segment, in the list above it, past every
     * prime, not prime-listed (composite values are never exponents, but
     * the plan must not care). */
    const uint32_t ps[] = {100003, 131071, 1000003, 7999993, 66362159, 4294967291u};
    const uint32_t segs[] = {1u << 16, 1u << 18};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (size_t s = 0; s < 2; s++) {
            tf_sieve_tables t;
            CHECK(tf_sieve_tables_build(primes, n, ps[i], segs[s], &t) == 0, "build");
            const tf_sieve_plan plan = tf_sieve_plan_of(primes, n, ps[i], segs[s]);
            CHECK(plan.count == t.count && plan.n_small == t.n_small, "M%u seg %u: plan %u/%u, tables %u/%u",
                  ps[i], segs[s], plan.count, plan.n_small, t.count, t.n_small);
            unsigned bad = 0;
            for (unsigned k = 0; k < t.count && k < plan.count; k++) {
                const uint32_t r = primes[k < plan.skip ? k : k + 1];
                const uint64_t step = 2ull * ps[i] * 4620u % r;
                bad += t.prime[k] != r || r == ps[i] || (uint64_t)r >= 2ull * ps[i] + 1 || t.pmod[k] != ps[i] % r ||
                       (uint64_t)t.inv[k] * step % r != 1 || t.smod[k] != segs[s] % r ||
                       t.minv[k] != 0xFFFFFFFFu / r || (k < t.n_small) != (r < segs[s]);
            }
            CHECK(bad == 0, "M%u seg %u: %u entries wrong", ps[i], segs[s], bad);
            tf_sieve_tables_free(&t);
        }
}

/* Installs w and scans [start, start + count) of it: the handle's status. */
static int scan_job(lode_handle *h, const lode_work *w, uint64_t start, uint64_t count, lode_hits *hits,
                    uint64_t *done)
{
    lode_range r = {.start = start, .count = count};
    *done = 0;
    int rc = lode_handle_set_work(h, w);
    return rc == LODE_OK ? lode_handle_scan(h, &r, hits, done, &never_abort) : rc;
}

/* The backend's hits over [start, start + count) of one class equal the
 * reference's verdict on every single index. */
static void check_exact(lode_handle *h, uint32_t p, unsigned lo, unsigned hi, uint32_t c,
                        uint64_t start, uint64_t count)
{
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {p, lo, hi, LODE_TF_CLASSES, c}};
    lode_hits hits = {0};
    uint64_t done;
    int rc = scan_job(h, &w, start, count, &hits, &done);
    CHECK(rc == LODE_OK && done == count, "%s: scan M%u class %u: rc %d", h->ref->id, p, c, rc);
    size_t expected = 0, matched = 0;
    for (uint64_t n = start; n < start + count; n++) {
        if (!lode_tf_divides(p, lode_tf_q(p, lode_tf_k(c, n))))
            continue;
        expected++;
        for (size_t i = 0; i < hits.count; i++)
            matched += hits.items[i].index == n;
    }
    CHECK(hits.count == expected && matched == expected,
          "%s: M%u class %u n %llu+%llu: %zu hits, reference %zu", h->ref->id, p, c,
          (unsigned long long)start, (unsigned long long)count, hits.count, expected);
    lode_hits_free(&hits);
}


/* With a proof of t bits, the backend reports every index whose q passes
 * C(p, q, t) or divides M(p), as far as its sieve leaves them: each report
 * must pass C by the reference (core/base/tf_ref.c, plain arithmetic), and
 * every prime q at or above LODE_TF_PROOF_HOST_LIMIT that passes C must be
 * reported (composites may be sieved out first: sieve depths differ). */
static void check_proof(lode_handle *h, uint32_t p, unsigned lo, unsigned hi, uint32_t c, unsigned t,
                        uint64_t start, uint64_t count)
{
    while (!lode_tf_class_needed(p, c))
        c++; /* a class with primes */
    uint64_t nb, ne;
    lode_tf_class_range(p, lo, hi, c, &nb, &ne);
    start += nb;
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {p, lo, hi, LODE_TF_CLASSES, c, true, t}};
    lode_hits hits = {0};
    uint64_t done;
    int rc = scan_job(h, &w, start, count, &hits, &done);
    CHECK(rc == LODE_OK && done == count, "%s: proof scan M%u class %u t %u: rc %d", h->ref->id, p, c, t, rc);
    size_t wrong = 0, primes = 0, missed = 0;
    for (size_t i = 0; i < hits.count; i++) {
        lode_u128 q = lode_tf_q(p, lode_tf_k(c, hits.items[i].index));
        wrong += hits.items[i].index < start || hits.items[i].index - start >= count ||
                 !(lode_tf_proof_condition(p, q, t) || lode_tf_divides(p, q));
    }
    for (uint64_t n = start; n < start + count; n++) {
        lode_u128 q = lode_tf_q(p, lode_tf_k(c, n));
        if (n == 0 && c == 0)
            continue; /* k = 0 */
        if (q < LODE_TF_PROOF_HOST_LIMIT || q >> hi != 0 || q >> lo == 0 || !lode_tf_proof_condition(p, q, t) ||
            !lode_tf_is_prime_u128(q))
            continue;
        primes++;
        bool seen = false;
        for (size_t i = 0; i < hits.count && !seen; i++)
            seen = hits.items[i].index == n;
        missed += !seen;
    }
    CHECK(wrong == 0 && missed == 0 && primes > 0,
          "%s: proof M%u %u-%u class %u t %u n %llu+%llu: %zu reports, %zu failing C, %zu of %zu primes missed",
          h->ref->id, p, lo, hi, c, t, (unsigned long long)start, (unsigned long long)count, hits.count, wrong,
          missed, primes);
    lode_hits_free(&hits);
}

static void test_proof(lode_handle *h)
{
    /* Small q (Barrett/lazy kernels), t small enough for tens of primes. */
    check_proof(h, 100003, 26, 60, 1, 3, 1000, 3000);
    check_proof(h, 100043, 26, 64, 15, 4, 5000, 4000);
    check_proof(h, 100043, 1, 40, 0, 3, 0, 2000); /* from q = 2^1: below the host limit too */
    /* M66362159 at 2^70 (lazy, q < 2^92) and the largest exponent at 2^94
     * (the fully reduced kernel). */
    check_proof(h, 66362159, 70, 71, 11, 2, 12345, 3000);
    check_proof(h, 4294967291u, 94, 95, 11, 2, 777, 3000);
    /* A factor is reported with a proof too (it passes C), at a t that
     * lists little else. */
    const lode_tf_vector *v = &lode_tf_vectors[0];
    uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
    uint64_t n = v->k / LODE_TF_CLASSES;
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {v->exponent, v->bit_min, v->bit_max, LODE_TF_CLASSES, c, true, 40}};
    lode_hits hits = {0};
    uint64_t done;
    int rc = scan_job(h, &w, n > 500 ? n - 500 : 0, 1000, &hits, &done);
    bool found = false;
    for (size_t i = 0; i < hits.count; i++)
        found |= hits.items[i].index == n;
    CHECK(rc == LODE_OK && found, "%s: the factor of M%u is reported with a proof", h->ref->id, v->exponent);
    lode_hits_free(&hits);
    /* t past 64 is refused. */
    w.factor.proof_bits = LODE_TF_PROOF_MAX_T + 1;
    CHECK(lode_handle_set_work(h, &w) != LODE_OK, "%s: t %u refused", h->ref->id, w.factor.proof_bits);
}

/* ---- launch and segment edges (GPU backends cut a range into launches
 * and segments: 2^16 each under LODE_TF_LAUNCH_BITS=16 and
 * LODE_TF_SEGMENT_BITS=16, 2^18 segments by default) ---- */

/* A range around known factor n: `before` indices ahead of it, count in all.
 * n must be reported, every hit must divide, and the whole range scanned. */
static void check_edge(lode_handle *h, const lode_tf_vector *v, uint64_t before, uint64_t count)
{
    uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
    uint64_t n = v->k / LODE_TF_CLASSES;
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {v->exponent, v->bit_min, v->bit_max, LODE_TF_CLASSES, c}};
    lode_range r = {.start = n - before, .count = count};
    lode_hits hits = {0};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, &w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &never_abort);
    bool found = false, bad = false;
    for (size_t i = 0; i < hits.count; i++) {
        uint64_t m = hits.items[i].index;
        found |= m == n;
        bad |= m < r.start || m - r.start >= count || !lode_tf_divides(v->exponent, lode_tf_q(v->exponent, lode_tf_k(c, m)));
    }
    CHECK(rc == LODE_OK && done == count && found && !bad,
          "%s: M%u factor at offset %llu of %llu: rc %d, done %llu, found %d, bad %d", h->ref->id,
          v->exponent, (unsigned long long)before, (unsigned long long)count, rc,
          (unsigned long long)done, found, bad);
    lode_hits_free(&hits);
}

static void test_edges(lode_handle *h)
{
    static const uint64_t cases[][2] = {
        {0, 1}, {1, 2}, {0, 3}, {2, 3},                                      /* tiny ranges */
        {(1u << 15) - 1, 1u << 15}, {1u << 15, (1u << 15) + 1},             /* CPU blocks */
        {(1u << 16) - 1, 1u << 16}, {1u << 16, (1u << 16) + 1},             /* last, first of a 2^16 piece */
        {(1u << 16) - 1, (1u << 17) + 2}, {0, (1u << 16) + 3},
        {(1u << 18) - 1, 1u << 18}, {1u << 18, (1u << 18) + 1},             /* 2^18 segments */
    };
    int used = 0;
    for (size_t i = 0; i < lode_tf_vector_count && used < 3; i++) {
        const lode_tf_vector *v = &lode_tf_vectors[i];
        uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
        uint64_t n = v->k / LODE_TF_CLASSES, nb, ne;
        lode_tf_class_range(v->exponent, v->bit_min, v->bit_max, c, &nb, &ne);
        if (n - nb < (1u << 18) + 1 || ne - n < (1u << 17) + 8)
            continue;
        used++;
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
            check_edge(h, v, cases[j][0], cases[j][1]);
    }
    CHECK(used == 3, "edge tests: %d vectors with room", used);
}

static void test_handle(lode_handle *h)
{
    test_edges(h);
    test_proof(h);
    /* Every known factor, in a window of 50 000 indices of its class. */
    for (size_t i = 0; i < lode_tf_vector_count; i++) {
        char why[512];
        CHECK(lode_tf_selftest_vector(h, &lode_tf_vectors[i], 50000, why, sizeof why) == 0, "%s: %s",
              h->ref->id, why);
    }
    /* Exactly the reference's factors, index by index: around known
     * factors (block edges straddled) and in random windows. */
    for (size_t i = 0; i < lode_tf_vector_count; i += 7) {
        const lode_tf_vector *v = &lode_tf_vectors[i];
        uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
        uint64_t n = v->k / LODE_TF_CLASSES, nb, ne;
        lode_tf_class_range(v->exponent, v->bit_min, v->bit_max, c, &nb, &ne);
        uint64_t start = n - nb > TF_CPU_BLOCK_BITS + 7 ? n - TF_CPU_BLOCK_BITS - 7 : nb;
        uint64_t count = ne - start < 3000 + (n - start) ? ne - start : 3000 + (n - start);
        if (count > TF_CPU_BLOCK_BITS + 3000)
            start = n - 1500, count = 3000; /* keep the reference's work small */
        check_exact(h, v->exponent, v->bit_min, v->bit_max, c, start, count);
    }
    /* Long ranges: many sieve segments and (with LODE_TF_LAUNCH_BITS=20, as
     * ctest runs it) several GPU launches, the known factor just past a
     * launch boundary. */
    int long_ranges = 0;
    for (size_t i = 0; i < lode_tf_vector_count && long_ranges < 3; i += 5) {
        const lode_tf_vector *v = &lode_tf_vectors[i];
        uint64_t n = v->k / LODE_TF_CLASSES, nb, ne;
        lode_tf_class_range(v->exponent, v->bit_min, v->bit_max, (uint32_t)(v->k % LODE_TF_CLASSES), &nb, &ne);
        if (n - nb < (UINT64_C(1) << 20) + 3 || ne - n < (UINT64_C(4) << 20))
            continue;
        check_edge(h, v, (UINT64_C(1) << 20) + 3, UINT64_C(5) << 20);
        long_ranges++;
    }
    CHECK(long_ranges == 3, "long ranges: %d vectors with room", long_ranges);
    /* Small exponents and tiny q: many factors, sieve primes near q. */
    check_exact(h, 100003, 17, 40, 0, 0, 2000); /* n = 0 of class 0 is k = 0: q = 1, no factor */
    for (uint32_t c = 0; c < 40; c++)
        if (lode_tf_class_needed(100043, c))
            check_exact(h, 100043, 1, 50, c, 0, 1500);
    /* An aborted scan reports a prefix. */
    atomic_int stop = 1;
    lode_work w = {.algo = LODE_ALGO_TF, .factor = {66362159, 70, 71, LODE_TF_CLASSES, 1}};
    lode_range r = {.start = 1000000, .count = 10000000};
    lode_hits hits = {0};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, &w);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &stop);
    CHECK(rc == LODE_OK && done < r.count, "%s: an aborted scan stops early", h->ref->id);
    lode_hits_free(&hits);
    /* A job outside the bounds is refused. */
    w.factor.exponent = 100001;
    CHECK(lode_handle_set_work(h, &w) != LODE_OK, "%s: composite exponent refused", h->ref->id);
}

typedef struct found_log {
    pthread_mutex_t lock;
    uint64_t n[16];
    int count;
} found_log;

static void on_found(void *user, const lode_found *f)
{
    found_log *log = user;
    pthread_mutex_lock(&log->lock);
    if (log->count < 16)
        log->n[log->count++] = f->hit.index;
    pthread_mutex_unlock(&log->lock);
}

/* Through the dispatcher (several workers, re-checked hits): a class of a
 * known factor, split in chunks, yields exactly that factor. */
static void test_dispatch(const lode_device_ref *dev)
{
    const lode_tf_vector *v = &lode_tf_vectors[3];
    uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
    uint64_t n = v->k / LODE_TF_CLASSES;
    found_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    lode_dispatcher_config cfg = {.algo = LODE_ALGO_TF, .devices = dev, .device_count = 1,
                             .chunk_ms = 20, .callbacks = {.user = &log, .found = on_found}};
    char err[256];
    lode_dispatcher *m = lode_dispatcher_start(&cfg, err, sizeof err);
    CHECK(m != NULL, "miner: %s", err);
    if (m == NULL)
        return;
    CHECK(lode_dispatcher_wait_ready(m, 60000) > 0, "workers ready");
    lode_work w = {.factor = {v->exponent, v->bit_min, v->bit_max, LODE_TF_CLASSES, c}};
    uint64_t seq = lode_dispatcher_set_job(m, &w, n - 300000, n + 300000);
    CHECK(lode_dispatcher_wait_job(m, seq, 120000) == 1, "class scanned");
    lode_device_stats st;
    lode_dispatcher_device_stats(m, 0, &st);
    lode_dispatcher_free(m);
    CHECK(log.count == 1 && log.n[0] == n, "dispatcher: %d factors (want n %llu)", log.count,
          (unsigned long long)n);
    CHECK(st.hashes == 600000 && st.hw_errors == 0, "dispatcher: %llu indices, %llu hw errors",
          (unsigned long long)st.hashes, (unsigned long long)st.hw_errors);
}

int main(int argc, char **argv)
{
    const char *only_backend = argc == 3 && strcmp(argv[1], "--backend") == 0 ? argv[2] : NULL;
    test_seed();
    if (only_backend == NULL) {
        test_reference();
        test_sieve_tables();
    }
    lode_device_ref *devices;
    size_t count;
    int runs = 0;
    if (lode_registry_enumerate(&devices, &count) != 0)
        return 1;
    for (size_t d = 0; d < count; d++) {
        if (!((devices[d].info.algo_mask >> LODE_ALGO_TF) & 1u) ||
            (only_backend ? strcmp(lode_device_backend_name(&devices[d]), only_backend) != 0
                          : strcmp(lode_device_backend_name(&devices[d]), "cpu") != 0))
            continue;
        const char *names[8];
        int k = lode_device_variants(&devices[d], LODE_ALGO_TF, names, 8);
        for (int i = 0; i < k; i++) {
            lode_open_params params = {.algo = LODE_ALGO_TF, .variant = names[i]};
            lode_handle h;
            int rc = lode_handle_open(&h, &devices[d], &params);
            CHECK(rc == LODE_OK, "%s opens tf %s", devices[d].id, names[i] ? names[i] : "");
            if (rc != LODE_OK)
                continue;
            printf("%s tf %s\n", devices[d].id, names[i] ? names[i] : "default");
            test_handle(&h);
            lode_handle_close(&h);
            runs++;
            /* Again in the shortest launches and segments the backend
             * takes (it clamps these knobs): many edges in short scans. */
            const char *launch_bits = getenv("LODE_TF_LAUNCH_BITS");
            char saved[32] = "";
            if (launch_bits != NULL)
                snprintf(saved, sizeof saved, "%s", launch_bits);
            setenv("LODE_TF_LAUNCH_BITS", "16", 1);
            setenv("LODE_TF_SEGMENT_BITS", "16", 1);
            rc = lode_handle_open(&h, &devices[d], &params);
            CHECK(rc == LODE_OK, "%s opens tf %s with short launches", devices[d].id, names[i] ? names[i] : "");
            if (rc == LODE_OK) {
                test_edges(&h);
                test_proof(&h);
                check_exact(&h, 100003, 17, 40, 0, 0, 200000);
                lode_handle_close(&h);
            }
            if (launch_bits != NULL)
                setenv("LODE_TF_LAUNCH_BITS", saved, 1);
            else
                unsetenv("LODE_TF_LAUNCH_BITS");
            unsetenv("LODE_TF_SEGMENT_BITS");
        }
        test_dispatch(&devices[d]);
    }
    free(devices);
    if (only_backend != NULL && runs == 0 && test_failed == 0) { /* failed opens fail */
        printf("no %s device runs tf: skipped\n", only_backend);
        return 77;
    }
    return test_summary();
}
