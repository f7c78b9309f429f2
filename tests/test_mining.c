/* The job model and the mining session (core/base/job.c, core/mining/mining.c), checked
 * against OpenSSL: merkle branches against whole trees, headers rebuilt
 * independently, and every share the session reports re-hashed, on the
 * real CPU backend with extranonce2, version and ntime rolling. */
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/job.h"
#include "core/dispatch/registry.h"
#include "core/mining/mining.h"
#include "tests/test_util.h"

static void ossl_sha256d(const void *data, size_t len, uint8_t out[32])
{
    uint8_t first[32];
    SHA256(data, len, first);
    SHA256(first, 32, out);
}

static void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rand();
}

/* The whole tree, level by level, as Bitcoin builds it. */
static void full_merkle_root(uint8_t (*leaves)[32], size_t n, uint8_t root[32])
{
    uint8_t (*level)[32] = malloc((n + 1) * 32);
    memcpy(level, leaves, n * 32);
    while (n > 1) {
        if (n & 1)
            memcpy(level[n], level[n - 1], 32);
        for (size_t i = 0; i < (n + 1) / 2; i++) {
            uint8_t pair[64];
            memcpy(pair, level[2 * i], 64);
            ossl_sha256d(pair, 64, level[i]);
        }
        n = (n + 1) / 2;
    }
    memcpy(root, level[0], 32);
    free(level);
}

static void test_merkle_branch(void)
{
    for (size_t n = 1; n <= 40; n++) {
        uint8_t (*leaves)[32] = malloc(n * 32), branch[LODE_MERKLE_BRANCH_MAX][32], want[32], got[32];
        random_bytes(&leaves[0][0], n * 32);
        full_merkle_root(leaves, n, want);
        int depth = lode_merkle_branch((const uint8_t(*)[32])leaves, n, branch);
        memcpy(got, leaves[0], 32);
        for (int d = 0; d < depth; d++) {
            uint8_t pair[64];
            memcpy(pair, got, 32);
            memcpy(pair + 32, branch[d], 32);
            ossl_sha256d(pair, 64, got);
        }
        CHECK(depth >= 0 && memcmp(got, want, 32) == 0, "merkle branch of %zu leaves folds to the tree's root", n);
        free(leaves);
    }
    CHECK(lode_merkle_branch(NULL, 0, NULL) == -1, "no leaves: no branch");
}

/* A header built by hand: coinbase, txid, fold, fields little-endian. */
static void independent_header(const lode_job *job, const uint8_t *en2, uint32_t ntime,
                               uint32_t version, uint32_t nonce, uint8_t header[80])
{
    size_t len = job->coinb1_len + job->extranonce1_len + job->extranonce2_len + job->coinb2_len;
    uint8_t *cb = malloc(len), *p = cb;
    memcpy(p, job->coinb1, job->coinb1_len), p += job->coinb1_len;
    memcpy(p, job->extranonce1, job->extranonce1_len), p += job->extranonce1_len;
    memcpy(p, en2, job->extranonce2_len), p += job->extranonce2_len;
    memcpy(p, job->coinb2, job->coinb2_len);
    uint8_t root[32];
    ossl_sha256d(cb, len, root);
    free(cb);
    for (size_t i = 0; i < job->branch_len; i++) {
        uint8_t pair[64];
        memcpy(pair, root, 32);
        memcpy(pair + 32, job->branch[i], 32);
        ossl_sha256d(pair, 64, root);
    }
    uint32_t fields[4] = {version, ntime, job->nbits, nonce};
    uint8_t le[4][4];
    for (int f = 0; f < 4; f++)
        for (int b = 0; b < 4; b++)
            le[f][b] = (uint8_t)(fields[f] >> (8 * b));
    memcpy(header, le[0], 4);
    memcpy(header + 4, job->prevhash, 32);
    memcpy(header + 36, root, 32);
    memcpy(header + 68, le[1], 4);
    memcpy(header + 72, le[2], 4);
    memcpy(header + 76, le[3], 4);
}

static void make_job(lode_job *job, const char *id, bool clean)
{
    memset(job, 0, sizeof *job);
    snprintf(job->id, sizeof job->id, "%s", id);
    job->algo = LODE_ALGO_SHA256D;
    job->version = 0x20000000;
    job->version_mask = 0x00006000; /* two bits: four versions, then extranonce2 rolls */
    random_bytes(job->prevhash, 32);
    job->nbits = 0x1d00ffff;
    job->ntime = 0x65000000;
    job->ntime_roll_max = 600;
    uint8_t c1[70], c2[90];
    random_bytes(c1, sizeof c1);
    random_bytes(c2, sizeof c2);
    lode_job_set_coinbase(job, c1, sizeof c1, c2, sizeof c2);
    job->extranonce1_len = 4;
    random_bytes(job->extranonce1, 4);
    job->extranonce2_len = 4;
    job->branch_len = 5;
    random_bytes(&job->branch[0][0], 5 * 32);
    /* 1 hash in 65536 is a share. */
    memset(&job->share_target, 0xff, sizeof job->share_target);
    job->share_target.w[7] = 0x0000ffff;
    job->clean = clean;
}

/* A narrow job: one extranonce2 byte, the given version bits and seconds of
 * ntime, and a share in every 2^32 / (share_top + 1) hashes. */
static void make_narrow_job(lode_job *job, const char *id, bool clean, uint32_t version_mask, uint32_t roll_max,
                            uint32_t share_top)
{
    make_job(job, id, clean);
    job->extranonce2_len = 1;
    job->version_mask = version_mask;
    job->ntime_roll_max = roll_max;
    job->share_target.w[7] = share_top;
}

static void test_job_header(void)
{
    for (int trial = 0; trial < 20; trial++) {
        lode_job job;
        make_job(&job, "h", true);
        job.branch_len = (size_t)trial % 7;
        uint8_t en2[4], got[80], want[80];
        random_bytes(en2, 4);
        lode_job_header(&job, en2, job.ntime + 7, job.version | 0x2000, got);
        independent_header(&job, en2, job.ntime + 7, job.version | 0x2000, 0, want);
        CHECK(memcmp(got, want, 80) == 0, "lode_job_header matches a hand-built header (branch %zu)", job.branch_len);
        uint8_t cb[256];
        size_t len = lode_job_coinbase(&job, en2, cb, sizeof cb);
        CHECK(len == 70 + 4 + 4 + 90 && memcmp(cb + 70 + 4, en2, 4) == 0, "coinbase assembled");
        CHECK(lode_job_coinbase(&job, en2, cb, 100) == 0, "coinbase too big for the buffer: 0");
        lode_job copy;
        CHECK(lode_job_copy(&copy, &job) == 0 && copy.coinb1 != job.coinb1 &&
                  memcmp(copy.coinb2, job.coinb2, job.coinb2_len) == 0, "deep copy");
        lode_job_free(&copy);
        lode_job_free(&job);
    }
}

/* The fake source: records every share. */
#define MAX_SHARES 20000
typedef struct recorded_share {
    lode_share share;
    lode_job job; /* copy */
    bool stale;
    double when;
} recorded_share;

typedef struct fake_source {
    pthread_mutex_t lock;
    pthread_cond_t released;
    bool hold_next, held; /* the next submit blocks (held) until released */
    recorded_share *shares;
    size_t count;
    size_t dropped; /* shares past MAX_SHARES: a test that lets this many come is wrong */
} fake_source;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fake_submit(void *source, const lode_share *share, bool stale)
{
    fake_source *s = source;
    pthread_mutex_lock(&s->lock);
    if (s->hold_next) {
        s->hold_next = false;
        s->held = true;
        while (s->held)
            pthread_cond_wait(&s->released, &s->lock);
    }
    if (s->count < MAX_SHARES) {
        recorded_share *r = &s->shares[s->count++];
        r->share = *share;
        lode_job_copy(&r->job, share->job);
        r->share.job = NULL;
        r->stale = stale;
        r->when = now_s();
    } else {
        s->dropped++;
    }
    pthread_mutex_unlock(&s->lock);
}

static const lode_job_source_ops fake_ops = {.submit = fake_submit};

static size_t share_count(fake_source *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Shares recorded so far whose job id starts with prefix. */
static size_t shares_of(fake_source *s, const char *prefix)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->count; i++)
        n += strncmp(s->shares[i].job.id, prefix, strlen(prefix)) == 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (up to 30 s) for n shares of the jobs whose id starts with prefix. */
static void wait_shares(fake_source *s, const char *prefix, size_t n)
{
    for (int i = 0; i < 3000 && shares_of(s, prefix) < n; i++)
        sleep_ms(10);
}

/* The session's job event counter now. A share's staleness is decided when
 * its hit is confirmed, a moment before the source records it, so a test
 * asks the share when it was decided (lode_share.decided_at), never the
 * clock: a share decided at or after a clean job's event must be stale,
 * however loaded the machine. */
static uint64_t job_events(lode_mining *m)
{
    lode_mining_stats st;
    lode_mining_stats_get(m, &st);
    return st.job_events;
}

static int compare_headers(const void *a, const void *b)
{
    return memcmp(a, b, 80);
}

/* Once no scan can be claimed (the job withdrawn or spent): waits (up to a
 * minute) until the session's devices have no scan out and no hit waiting
 * for its re-check, so every share of the work done is handed over however
 * long the machine starved a thread. Returns the count of shares then. */
static size_t drain(lode_mining *m, fake_source *src)
{
    CHECK(lode_dispatcher_wait_scans_counted(lode_mining_miner(m), 60000) == 1,
          "the devices' scans came back and their hits were re-checked");
    return share_count(src);
}

/* The count of jobs the session has reported spent so far. */
static uint64_t spent_now(lode_mining *m)
{
    lode_mining_stats st;
    lode_mining_stats_get(m, &st);
    return st.spent;
}

/* Waits (up to limit_s) until the session has reported `want` jobs spent. */
static bool wait_spent(lode_mining *m, uint64_t want, int limit_s)
{
    for (int i = 0; i < limit_s * 100 && spent_now(m) < want; i++)
        sleep_ms(10);
    return spent_now(m) >= want;
}

/* An empty fake source, and its end (the recorded jobs freed too). */
static void source_init(fake_source *s)
{
    *s = (fake_source){.shares = calloc(MAX_SHARES, sizeof(recorded_share))};
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->released, NULL);
}

static void source_free(fake_source *s)
{
    CHECK(s->dropped == 0, "the fake source recorded every share (%zu past its %d)", s->dropped, MAX_SHARES);
    for (size_t i = 0; i < s->count; i++)
        lode_job_free(&s->shares[i].job);
    pthread_cond_destroy(&s->released);
    pthread_mutex_destroy(&s->lock);
    free(s->shares);
}

/* A fake source and a session on it, its devices ready; NULL (the source
 * freed) if the session did not start. */
static lode_mining *open_session(fake_source *src, uint64_t nonces_per_header)
{
    source_init(src);
    lode_device_ref *devices;
    size_t count;
    char err[512];
    if (lode_registry_select("cpu", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err) != 0) {
        CHECK(false, "cpu device: %s", err);
        source_free(src);
        return NULL;
    }
    lode_mining_config config = {
        .miner = {.algo = LODE_ALGO_SHA256D, .devices = devices, .device_count = count, .threads = 2,
                  .chunk_ms = 20},
        .source_ops = &fake_ops,
        .source = src,
        .nonces_per_header = nonces_per_header,
    };
    lode_mining *m = lode_mining_start(&config, err, sizeof err);
    free(devices);
    CHECK(m != NULL, "session starts: %s", m ? "" : err);
    if (m != NULL && lode_dispatcher_wait_ready(lode_mining_miner(m), 60000) <= 0) {
        CHECK(false, "devices ready");
        lode_mining_free(m);
        m = NULL;
    }
    if (m == NULL)
        source_free(src);
    return m;
}

/* Whether a recorded share rebuilds, by hand from its job, into the header
 * it names, and OpenSSL's hash of that header is the hash it names and meets
 * the job's share target. */
static bool share_rebuilds(const recorded_share *r)
{
    uint8_t want[80], hash[32];
    independent_header(&r->job, r->share.extranonce2, r->share.ntime, r->share.version, r->share.nonce, want);
    ossl_sha256d(want, 80, hash);
    return memcmp(want, r->share.header, 80) == 0 && memcmp(hash, r->share.hash, 32) == 0 &&
           lode_hash_meets_target(hash, &r->job.share_target);
}

/* Of the first n shares: those that do not rebuild from their job by hand
 * and hash right by OpenSSL, or change a version bit outside the job's
 * mask (bad_hash), and those whose ntime leaves the job's roll. */
static void audit_shares(fake_source *s, size_t n, size_t *bad_hash, size_t *bad_ntime)
{
    *bad_hash = *bad_ntime = 0;
    for (size_t i = 0; i < n; i++) {
        const lode_share *sh = &s->shares[i].share;
        const lode_job *j = &s->shares[i].job;
        *bad_hash += !share_rebuilds(&s->shares[i]) ||
                     (sh->version & ~j->version_mask) != (j->version & ~j->version_mask);
        *bad_ntime += sh->ntime < j->ntime || sh->ntime > j->ntime + j->ntime_roll_max;
    }
}

/* How many of the first n recorded shares repeat an earlier one's header. */
static size_t repeated_headers(fake_source *s, size_t n)
{
    uint8_t (*headers)[80] = malloc(n * 80 + 80);
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < n; i++)
        memcpy(headers[i], s->shares[i].share.header, 80);
    pthread_mutex_unlock(&s->lock);
    qsort(headers, n, 80, compare_headers);
    size_t repeats = 0;
    for (size_t i = 1; i < n; i++)
        repeats += memcmp(headers[i - 1], headers[i], 80) == 0;
    free(headers);
    return repeats;
}

static void test_session(void)
{
    fake_source src;
    lode_mining *m = open_session(&src, 1 << 14);
    if (m == NULL)
        return;

    lode_job a, b, c;
    make_job(&a, "A", true);
    make_job(&b, "B", true);
    make_job(&c, "C", false);
    c.extranonce2_len = 2; /* a narrow extranonce2 still rolls */
    /* A's shares come fast, so scans in flight when B arrives still hold
     * some: those must come back stale. */
    a.share_target.w[7] = 0x000fffff;
    lode_job bad = a;
    bad.extranonce2_len = 0;
    CHECK(lode_mining_set_job(m, &bad) == -1, "a job without extranonce2 is refused");

    CHECK(lode_mining_set_job(m, &a) == 0, "job A installed");
    for (int i = 0; i < 1000 && share_count(&src) < 200; i++)
        sleep_ms(10);
    CHECK(lode_mining_set_job(m, &b) == 0, "job B (clean) installed");
    const uint64_t b_event = job_events(m);
    /* Waits scale with the machine (sanitizers slow hashing tenfold). */
    wait_shares(&src, "B", 50);
    CHECK(lode_mining_set_job(m, &c) == 0, "job C (not clean) installed");
    const uint64_t c_event = job_events(m);
    wait_shares(&src, "C", 50);
    /* The same job again under a new id (pools do this): no share twice. */
    snprintf(c.id, sizeof c.id, "C2");
    CHECK(lode_mining_set_job(m, &c) == 0, "job C again as C2");
    wait_shares(&src, "C2", 30);
    /* A storm of clean jobs with easy targets: hits in flight at each
     * switch must come back stale. It goes on (a bounded while) until some
     * hit was in flight at a switch, however the machine schedules. */
    enum { STORM_MIN = 40, STORM_MAX = 1000 };
    static uint64_t storm_event[STORM_MAX + 1];
    int storm = 0;
    for (lode_mining_stats st = {0}; storm < STORM_MAX && (storm < STORM_MIN || st.stale == 0); storm++) {
        lode_job s;
        make_job(&s, "S", true);
        snprintf(s.id, sizeof s.id, "S%d", storm);
        s.share_target.w[7] = 0x000fffff;
        lode_mining_set_job(m, &s);
        storm_event[storm] = job_events(m);
        lode_job_free(&s);
        sleep_ms(5);
        lode_mining_stats_get(m, &st);
    }
    storm_event[storm] = UINT64_MAX;
    lode_mining_clear_job(m);
    /* Hits in flight at the clear are still handed over: once the scans
     * came back and their hits were re-checked, none may come at all. */
    size_t after_clear = drain(m, &src);
    sleep_ms(400);
    CHECK(share_count(&src) == after_clear, "no shares once the job is cleared (%zu, %zu)",
          after_clear, share_count(&src));
    lode_mining_stats stats;
    lode_mining_stats_get(m, &stats);
    lode_mining_free(m);

    size_t bad_hash = 0, bad_stale = 0, bad_version = 0, bad_ntime = 0;
    size_t per_job[3] = {0}, stale = 0, a_fresh_after_b = 0, b_stale_after_c = 0;
    uint32_t versions_seen = 0;
    uint64_t en2_seen[3] = {0};
    for (size_t i = 0; i < src.count; i++) {
        recorded_share *r = &src.shares[i];
        const lode_job *j = &r->job;
        int which = j->id[0] - 'A';
        bad_hash += !share_rebuilds(r);
        bad_version += (r->share.version & ~j->version_mask) != (j->version & ~j->version_mask);
        bad_ntime += r->share.ntime < j->ntime || r->share.ntime > j->ntime + j->ntime_roll_max;
        if (j->id[0] == 'S') {
            int k = atoi(j->id + 1);
            if (r->share.decided_at >= storm_event[k + 1])
                a_fresh_after_b += !r->stale;
            stale += r->stale;
            continue;
        }
        if (which >= 0 && which < 3) {
            per_job[which]++;
            uint64_t en2 = 0;
            for (size_t k = 0; k < j->extranonce2_len; k++)
                en2 |= (uint64_t)r->share.extranonce2[k] << (8 * k);
            en2_seen[which] |= UINT64_C(1) << (en2 & 63);
        }
        if (which == 0)
            versions_seen |= 1u << ((r->share.version >> 13) & 3);
        stale += r->stale;
        /* A's shares after B (clean) was installed must be stale; B's after
         * C (not clean) must not be; B and C's never are. */
        if (which == 0 && r->share.decided_at >= b_event)
            a_fresh_after_b += !r->stale;
        if (which == 1 && r->share.decided_at >= c_event)
            b_stale_after_c += r->stale;
        if (which > 0)
            bad_stale += r->stale;
    }
    printf("session: %zu shares (A %zu, B %zu, C %zu), %zu handed over stale, %llu stale in all; jobs %llu\n",
           src.count, per_job[0], per_job[1], per_job[2], stale, (unsigned long long)stats.stale,
           (unsigned long long)stats.jobs);
    size_t repeats = repeated_headers(&src, src.count);
    CHECK(repeats == 0, "no header is submitted twice, even for a repeated job (%zu)", repeats);
    CHECK(per_job[0] >= 100 && per_job[1] > 10 && per_job[2] > 10, "shares on every job");
    CHECK(bad_hash == 0, "every share's header rebuilds from its job and hashes right by OpenSSL (%zu bad)",
          bad_hash);
    CHECK(bad_version == 0, "rolled versions stay inside the mask (%zu bad)", bad_version);
    CHECK(bad_ntime == 0, "ntime stays within the job's roll (%zu bad)", bad_ntime);
    CHECK(versions_seen == 0xf, "all four versions of the 2-bit mask were mined (%x)", versions_seen);
    CHECK(__builtin_popcountll(en2_seen[0]) > 1 && __builtin_popcountll(en2_seen[2]) > 1,
          "extranonce2 rolled on A and on C");
    CHECK(a_fresh_after_b == 0, "shares of a job after the next clean job are stale (%zu were not)",
          a_fresh_after_b);
    CHECK(stats.stale > 0, "some hits were in flight at a clean switch (else the check above is empty)");
    CHECK(b_stale_after_c == 0 && bad_stale == 0, "a non-clean job leaves older shares valid");
    CHECK(stats.shares == src.count - stale && stats.stale >= stale,
          "session counts agree with the source (%llu + %llu stale vs %zu, %zu stale)",
          (unsigned long long)stats.shares, (unsigned long long)stats.stale, src.count, stale);
    source_free(&src);
    lode_job_free(&a);
    lode_job_free(&b);
    lode_job_free(&c);
}

/* Blocks the next submit (true) until released (false). */
static void source_hold_next(fake_source *s, bool hold)
{
    pthread_mutex_lock(&s->lock);
    s->hold_next = hold;
    s->held = s->held && hold;
    pthread_cond_broadcast(&s->released);
    pthread_mutex_unlock(&s->lock);
}

/* A job with one extranonce2 byte, no version bits and one second of ntime
 * has 256 * 2 headers. The session must mine each once, then idle (and say
 * so) until the next job; before, the counter wrapped and every share came
 * again. The first share's submit blocks for a second (sources never block
 * there: this stands for a re-check thread a loaded machine starves, as
 * CI's did): the dispatcher's re-check thread, which hands it over, stalls
 * while the workers go on, so the hits of many headers wait for their
 * re-check at once. Each must still find its header (a ring of the last 64
 * headers lost them). */
static void test_spent_space(void)
{
    fake_source src;
    lode_mining *m = open_session(&src, 256);
    if (m == NULL)
        return;
    lode_job job;
    make_narrow_job(&job, "N", true, 0, 1, 0x0fffffff); /* 1 hash in 16: 16 shares a header */
    const size_t space = 256 * 2;
    source_hold_next(&src, true);
    CHECK(lode_mining_set_job(m, &job) == 0, "narrow job installed");
    sleep_ms(1000);
    source_hold_next(&src, false);
    CHECK(wait_spent(m, 1, 60), "the job's headers are mined until spent");
    size_t n = drain(m, &src);
    lode_mining_stats stats;
    lode_mining_stats_get(m, &stats);
    CHECK(stats.spent == 1, "the session reports the job's headers spent (%llu)", (unsigned long long)stats.spent);
    CHECK(stats.stale == 0, "no hit of the job is dropped: nothing replaced it (%llu dropped)",
          (unsigned long long)stats.stale);
    sleep_ms(300);
    CHECK(share_count(&src) == n, "idle once the job is spent (%zu then %zu shares)", n, share_count(&src));

    pthread_mutex_lock(&src.lock);
    size_t variants_bad = 0;
    uint8_t seen[256 * 2] = {0};
    for (size_t i = 0; i < src.count; i++) {
        uint32_t dt = src.shares[i].share.ntime - job.ntime;
        if (dt > 1 || src.shares[i].share.version != job.version)
            variants_bad++;
        else
            seen[dt * 256 + src.shares[i].share.extranonce2[0]] = 1;
    }
    size_t count = src.count;
    pthread_mutex_unlock(&src.lock);
    size_t repeats = repeated_headers(&src, count);
    /* ntime follows the clock: a pass over the 256 extranonce2 values that
     * takes over a second (a slow build, a loaded machine) moves on to the
     * second ntime within the pass, and the job is spent after that one
     * pass. Either way every extranonce2 is mined under some ntime. */
    size_t covered = 0, en2_covered = 0;
    for (size_t i = 0; i < space; i++)
        covered += seen[i];
    for (size_t e = 0; e < 256; e++)
        en2_covered += seen[e] | seen[256 + e];
    printf("spent space: %zu shares, %zu of %zu headers with a share, %zu of 256 extranonce2 values, %zu repeats\n",
           count, covered, space, en2_covered, repeats);
    CHECK(repeats == 0, "no share is found twice on a spent job (%zu repeats in %zu)", repeats, count);
    CHECK(variants_bad == 0, "every header stays inside the job's ntime and version (%zu bad)", variants_bad);
    CHECK(en2_covered == 256, "every extranonce2 was mined before the job idled (%zu of 256 had shares)",
          en2_covered);

    /* A new job: mining resumes. */
    snprintf(job.id, sizeof job.id, "N2");
    job.prevhash[0] ^= 1;
    CHECK(lode_mining_set_job(m, &job) == 0, "the next job installed");
    wait_shares(&src, "N2", 10);
    CHECK(shares_of(&src, "N2") >= 10, "mining resumes on the next job");
    lode_mining_free(m);
    source_free(&src);
    lode_job_free(&job);
}

/* Version groups: with three or more version bits, each header the
 * session installs carries LODE_VERSIONS_MAX versions (the GPUs hash them
 * in one pass; the CPU one after another). A job of 4 version bits (16
 * versions: two groups), one extranonce2 byte and one second of ntime has
 * 16 * 256 * 2 headers: each share must rebuild, with its own version, from
 * its job by hand and hash right by OpenSSL; every version must be mined,
 * no header twice, and the job must end spent. */
static void test_version_groups(void)
{
    fake_source src;
    lode_mining *m = open_session(&src, 64);
    if (m == NULL)
        return;
    lode_job job;
    make_narrow_job(&job, "V", true, 0x0001e000, 1, 0x03ffffff); /* 1 hash in 64: a share a header, on average */
    enum { SPACE = 16 * 256 * 2 };
    CHECK(lode_mining_set_job(m, &job) == 0, "job with 4 version bits installed");
    CHECK(wait_spent(m, 1, 120), "the job's headers are mined until spent");
    size_t n = drain(m, &src);
    lode_mining_stats stats;
    lode_mining_stats_get(m, &stats);
    CHECK(stats.spent == 1, "the job's headers are spent (%llu)", (unsigned long long)stats.spent);
    lode_mining_free(m);

    static uint8_t seen[SPACE];
    memset(seen, 0, sizeof seen);
    size_t bad = 0, bad_hash = 0;
    uint32_t versions_seen = 0;
    for (size_t i = 0; i < n; i++) {
        const lode_share *sh = &src.shares[i].share;
        bad_hash += !share_rebuilds(&src.shares[i]);
        uint32_t dt = sh->ntime - job.ntime, v = (sh->version >> 13) & 15;
        if (dt > 1 || (sh->version & ~job.version_mask) != job.version) {
            bad++;
            continue;
        }
        versions_seen |= 1u << v;
        seen[(dt * 256 + sh->extranonce2[0]) * 16 + v] = 1;
    }
    size_t repeats = repeated_headers(&src, n), covered = 0, pairs_covered = 0;
    for (size_t i = 0; i < SPACE; i++)
        covered += seen[i];
    /* ntime follows the clock (test_spent_space): a slow pass may leave
     * the second ntime to a part of it, so count (extranonce2, version)
     * pairs mined under either ntime. */
    for (size_t i = 0; i < SPACE / 2; i++)
        pairs_covered += seen[i] | seen[SPACE / 2 + i];
    printf("version groups: %zu shares, %zu of %d headers with a share, %zu of %d (extranonce2, version) pairs, "
           "versions %04x\n",
           n, covered, SPACE, pairs_covered, SPACE / 2, versions_seen);
    CHECK(bad_hash == 0, "every share rebuilds from its job with its version and hashes right (%zu bad)", bad_hash);
    CHECK(bad == 0, "every share's version and ntime stay inside the job (%zu bad)", bad);
    CHECK(versions_seen == 0xffff, "all 16 versions were mined (%04x)", versions_seen);
    CHECK(repeats == 0, "no header is found twice (%zu)", repeats);
    /* A share a header on average: about 63% of the pairs have one if each
     * was mined under one ntime only, 86% under both. */
    CHECK(pairs_covered > SPACE / 4, "the whole space was mined (%zu of %d (extranonce2, version) pairs had shares)",
          pairs_covered, SPACE / 2);
    source_free(&src);
    lode_job_free(&job);
}

/* The same job content again under new ids (pools do this), first with a
 * wider version mask, then unchanged: no header may be made twice. The job
 * is narrow (one extranonce2 byte, one version bit: 512 combinations a
 * second of ntime) and each resend comes while the last is being mined.
 * Before, a resent job started again at the job's ntime and a wider mask
 * split the roll counter differently, so old (version, extranonce2)
 * combinations came back at the same ntime and their shares twice. */
static void test_repeated_content(void)
{
    fake_source src;
    lode_mining *m = open_session(&src, 256);
    if (m == NULL)
        return;
    lode_job job;
    /* 1 hash in 256: a share a header, so a test thread that reacts late
     * does not fill the source's record (a header mined twice still shows:
     * the old bug repeated over a thousand). */
    make_narrow_job(&job, "R", true, 0x00002000, 600, 0x00ffffff);
    CHECK(lode_mining_set_job(m, &job) == 0, "job R installed");
    wait_shares(&src, "R", 100);
    job.clean = false;
    job.version_mask = 0x00006000;
    snprintf(job.id, sizeof job.id, "R2");
    CHECK(lode_mining_set_job(m, &job) == 0, "the same content as R2, two version bits");
    wait_shares(&src, "R2", 100);
    snprintf(job.id, sizeof job.id, "R3");
    CHECK(lode_mining_set_job(m, &job) == 0, "the same again as R3");
    wait_shares(&src, "R3", 100);
    lode_mining_clear_job(m);
    size_t n = drain(m, &src);
    lode_mining_free(m);

    size_t bad_hash, bad_ntime, per_job[3] = {0};
    audit_shares(&src, n, &bad_hash, &bad_ntime);
    for (size_t i = 0; i < n; i++) {
        const char *id = src.shares[i].job.id;
        per_job[id[1] == '\0' ? 0 : id[1] == '2' ? 1 : 2]++;
    }
    size_t repeats = repeated_headers(&src, n);
    printf("repeated content: %zu shares (R %zu, R2 %zu, R3 %zu), %zu repeats\n", n, per_job[0], per_job[1],
           per_job[2], repeats);
    CHECK(per_job[0] >= 100 && per_job[1] >= 100 && per_job[2] >= 100, "each resend was mined");
    CHECK(bad_hash == 0, "every share rebuilds from its job and hashes right (%zu bad)", bad_hash);
    CHECK(bad_ntime == 0, "ntime stays within the job's roll (%zu bad)", bad_ntime);
    CHECK(repeats == 0, "no header is mined twice over the resends (%zu repeats in %zu)", repeats, n);
    source_free(&src);
    lode_job_free(&job);
}

/* The highest ntime of the recorded shares of job id. */
static uint32_t top_ntime_of(fake_source *s, const char *id)
{
    uint32_t top = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->shares[i].job.id, id) == 0 && s->shares[i].share.ntime > top)
            top = s->shares[i].share.ntime;
    pthread_mutex_unlock(&s->lock);
    return top;
}

/* Whether the shares of job id (one extranonce2 byte, one version) show one
 * pass over its headers at most: no extranonce2 under two ntimes. */
static bool within_one_pass(fake_source *s, const char *id)
{
    uint32_t ntime_of[256] = {0};
    bool one = true;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->count && one; i++) {
        if (strcmp(s->shares[i].job.id, id) != 0)
            continue;
        uint32_t *seen = &ntime_of[s->shares[i].share.extranonce2[0]];
        one = *seen == 0 || *seen == s->shares[i].share.ntime;
        *seen = s->shares[i].share.ntime;
    }
    pthread_mutex_unlock(&s->lock);
    return one;
}

/* What the session remembers of a content outlives the job and the content
 * slot. A narrow job (256 headers a pass, ntime following the clock) is
 * mined for a moment, then withdrawn; it comes back (a pool may, and a
 * hostile one will) with an ntime 5 s below the highest it used, and is
 * mined until spent: a pass must start above every ntime used, not above
 * the last one. Then sixteen other contents push it out of the session's
 * slots, and it comes back with its first ntime: it must resume above every
 * ntime it used, not from its first header again. The resend back in time
 * tests the pass rule only while the first job is still in its first pass
 * (a later pass already starts above everything): a test thread that
 * reacts late gets another try on a fresh content. How far the first job
 * got depends on the machine, so the resends' ntime windows are set from
 * the highest ntime its shares show, with room above it (a header past
 * that top carries no share only by chance). */
static void test_content_memory(void)
{
    fake_source src;
    /* 8 192 nonces a header: a pass of 256 headers lasts long enough (about
     * 0.1 s on one core) for the test thread to withdraw the job within it. */
    lode_mining *m = open_session(&src, 8192);
    if (m == NULL)
        return;
    lode_job job;
    make_narrow_job(&job, "K1", false, 0, 6, 0x001fffff); /* 1 hash in 2 048: 4 shares a header */
    enum { TRIES = 8 };
    bool first_pass = false;
    int tries = 0;
    while (!first_pass && tries < TRIES) {
        snprintf(job.id, sizeof job.id, "K1%c", 'a' + tries++);
        job.prevhash[0] ^= 0x80; /* a fresh content each try */
        CHECK(lode_mining_set_job(m, &job) == 0, "job %s installed", job.id);
        wait_shares(&src, job.id, 40);
        lode_mining_clear_job(m);
        drain(m, &src);
        first_pass = within_one_pass(&src, job.id);
    }
    if (!first_pass)
        printf("NOTE: the first job went past its first pass in all %d tries: the resend back in time checks "
               "nothing this run\n", TRIES);
    const uint32_t k1_top = top_ntime_of(&src, job.id);
    CHECK(k1_top >= job.ntime, "%s was mined (ntime up to %u)", job.id, k1_top);
    if (k1_top < job.ntime) {
        lode_mining_free(m);
        source_free(&src);
        lode_job_free(&job);
        return;
    }

    lode_job back;
    CHECK(lode_job_copy(&back, &job) == 0, "job copied");
    snprintf(back.id, sizeof back.id, "K2");
    back.ntime = k1_top - 5;
    back.ntime_roll_max = 8; /* up to k1_top + 3 */
    const uint64_t spent_before_k2 = spent_now(m);
    CHECK(lode_mining_set_job(m, &back) == 0, "the same content as K2, 5 s back in time");
    CHECK(wait_spent(m, spent_before_k2 + 1, 60), "K2 is mined until spent");
    size_t n_back = drain(m, &src);
    size_t repeats_back = repeated_headers(&src, n_back);
    const uint32_t k2_top = top_ntime_of(&src, "K2");

    lode_job other[16];
    for (int i = 0; i < 16; i++) {
        char id[8];
        snprintf(id, sizeof id, "O%d", i);
        make_job(&other[i], id, false);
        CHECK(lode_mining_set_job(m, &other[i]) == 0, "other content %s installed", id);
    }
    snprintf(job.id, sizeof job.id, "K3");
    job.ntime_roll_max = k1_top + 5 - job.ntime; /* up to 2 s above K2's */
    const uint64_t spent_before_k3 = spent_now(m);
    CHECK(lode_mining_set_job(m, &job) == 0, "K1's content again as K3, after sixteen others");
    CHECK(wait_spent(m, spent_before_k3 + 1, 60), "K3 is mined until spent");
    size_t n = drain(m, &src);
    lode_mining_free(m);

    size_t bad_hash, bad_ntime;
    audit_shares(&src, n, &bad_hash, &bad_ntime);
    size_t repeats = repeated_headers(&src, n);
    printf("content memory: %zu shares (K1 %zu in %d tries, the last up to ntime +%u; K2 %zu up to +%u; K3 %zu), "
           "%zu repeats by K2's end, %zu in all\n",
           n, shares_of(&src, "K1"), tries, k1_top - job.ntime, shares_of(&src, "K2"),
           k2_top ? k2_top - job.ntime : 0, shares_of(&src, "K3"), repeats_back, repeats);
    CHECK(shares_of(&src, "K2") > 0 && shares_of(&src, "K3") > 0, "the resends were mined");
    CHECK(bad_hash == 0, "every share rebuilds from its job and hashes right (%zu bad)", bad_hash);
    CHECK(bad_ntime == 0, "ntime stays within each job's roll (%zu bad)", bad_ntime);
    CHECK(repeats_back == 0, "a resend back in time mines no header twice (%zu repeats)", repeats_back);
    CHECK(repeats == 0, "a content back after its eviction mines no header twice (%zu repeats in %zu)", repeats,
          n);
    for (int i = 0; i < 16; i++)
        lode_job_free(&other[i]);
    lode_job_free(&back);
    source_free(&src);
    lode_job_free(&job);
}

/* A clean job the session refuses still ends the jobs it replaces: no
 * share of them is handed over as fresh afterwards, and the devices idle. */
static void test_refused_clean_job(void)
{
    fake_source src;
    lode_mining *m = open_session(&src, 1 << 14);
    if (m == NULL)
        return;
    lode_job a, bad;
    make_job(&a, "A", true);
    CHECK(lode_mining_set_job(m, &a) == 0, "job A installed");
    for (int i = 0; i < 3000 && share_count(&src) < 20; i++)
        sleep_ms(10);
    make_job(&bad, "Z", true);
    memset(&bad.share_target, 0, sizeof bad.share_target); /* no hash can meet it */
    CHECK(lode_mining_set_job(m, &bad) == -1, "a clean job with a zero share target is refused");
    const uint64_t refused_event = job_events(m);
    sleep_ms(600);
    size_t fresh_after = 0, total = 0;
    pthread_mutex_lock(&src.lock);
    for (size_t i = 0; i < src.count; i++) {
        total++;
        fresh_after += src.shares[i].share.decided_at >= refused_event && !src.shares[i].stale;
    }
    pthread_mutex_unlock(&src.lock);
    CHECK(total >= 20, "shares on A before the refused job (%zu)", total);
    CHECK(fresh_after == 0, "no fresh share of the replaced job after a refused clean job (%zu)", fresh_after);
    /* A usable job afterwards is mined. */
    lode_job b;
    make_job(&b, "B", false);
    CHECK(lode_mining_set_job(m, &b) == 0, "job B installed");
    wait_shares(&src, "B", 5);
    CHECK(shares_of(&src, "B") >= 5, "mining resumes on the next usable job");
    lode_mining_free(m);
    source_free(&src);
    lode_job_free(&a);
    lode_job_free(&b);
    lode_job_free(&bad);
}

int main(void)
{
    srand((unsigned)test_seed());
    test_merkle_branch();
    test_job_header();
    test_session();
    test_spent_space();
    test_version_groups();
    test_repeated_content();
    test_content_memory();
    test_refused_clean_job();
    return test_summary();
}
