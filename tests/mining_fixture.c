#include "tests/mining_fixture.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dispatch/registry.h"
#include "tests/test_util.h"

void ossl_sha256d(const void *data, size_t len, uint8_t out[32])
{
    uint8_t first[32];
    SHA256(data, len, first);
    SHA256(first, 32, out);
}

void random_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rand();
}

/* A header built by hand: coinbase, txid, fold, fields little-endian. */
void independent_header(const lode_job *job, const uint8_t *en2, uint32_t ntime,
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

void make_job(lode_job *job, const char *id, bool clean)
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
void make_narrow_job(lode_job *job, const char *id, bool clean, uint32_t version_mask, uint32_t roll_max,
                     uint32_t share_top)
{
    make_job(job, id, clean);
    job->extranonce2_len = 1;
    job->version_mask = version_mask;
    job->ntime_roll_max = roll_max;
    job->share_target.w[7] = share_top;
}


double now_s(void)
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

const lode_job_source_ops fake_ops = {.submit = fake_submit};

size_t share_count(fake_source *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Shares recorded so far whose job id starts with prefix. */
size_t shares_of(fake_source *s, const char *prefix)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->count; i++)
        n += strncmp(s->shares[i].job.id, prefix, strlen(prefix)) == 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (up to 30 s) for n shares of the jobs whose id starts with prefix. */
void wait_shares(fake_source *s, const char *prefix, size_t n)
{
    for (int i = 0; i < 3000 && shares_of(s, prefix) < n; i++)
        sleep_ms(10);
}

/* The session's job event counter now. A share's staleness is decided when
 * its hit is confirmed, a moment before the source records it, so a test
 * asks the share when it was decided (lode_share.decided_at), never the
 * clock: a share decided at or after a clean job's event must be stale,
 * however loaded the machine. */
uint64_t job_events(lode_mining *m)
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
size_t drain(lode_mining *m, fake_source *src)
{
    CHECK(lode_dispatcher_wait_scans_counted(lode_mining_miner(m), 60000) == 1,
          "the devices' scans came back and their hits were re-checked");
    return share_count(src);
}

/* The count of jobs the session has reported spent so far. */
uint64_t spent_now(lode_mining *m)
{
    lode_mining_stats st;
    lode_mining_stats_get(m, &st);
    return st.spent;
}

/* Waits (up to limit_s) until the session has reported `want` jobs spent. */
bool wait_spent(lode_mining *m, uint64_t want, int limit_s)
{
    for (int i = 0; i < limit_s * 100 && spent_now(m) < want; i++)
        sleep_ms(10);
    return spent_now(m) >= want;
}

/* An empty fake source, and its end (the recorded jobs freed too). */
void source_init(fake_source *s)
{
    *s = (fake_source){.shares = calloc(MAX_SHARES, sizeof(recorded_share))};
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->released, NULL);
}

void source_free(fake_source *s)
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
lode_mining *open_session(fake_source *src, uint64_t nonces_per_header)
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
bool share_rebuilds(const recorded_share *r)
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
void audit_shares(fake_source *s, size_t n, size_t *bad_hash, size_t *bad_ntime)
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
size_t repeated_headers(fake_source *s, size_t n)
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

/* Blocks the next submit (true) until released (false). */
void source_hold_next(fake_source *s, bool hold)
{
    pthread_mutex_lock(&s->lock);
    s->hold_next = hold;
    s->held = s->held && hold;
    pthread_cond_broadcast(&s->released);
    pthread_mutex_unlock(&s->lock);
}
