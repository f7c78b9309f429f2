/* The job model and the mining session (core/base/job.c, core/mining/mining.c), checked
 * against OpenSSL: merkle branches against whole trees, headers rebuilt
 * independently, and every share the session reports re-hashed, on the
 * real CPU backend with extranonce2, version and ntime rolling. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/job.h"
#include "core/dispatch/registry.h"
#include "core/mining/mining.h"
#include "tests/mining_fixture.h"
#include "tests/test_util.h"

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

enum { STORM_MIN = 40, STORM_MAX = 1000 };

/* A storm of clean jobs with easy targets, S0, S1, ...: it goes on (a
 * bounded while) until some hit was in flight at a switch, however the
 * machine schedules. storm_event[k]: the job event of Sk; after the last,
 * UINT64_MAX. */
static void clean_job_storm(lode_mining *m, uint64_t *storm_event)
{
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
}

/* test_session's shares sorted out: those that fail a check, and those
 * that show what the checks are about. */
typedef struct session_tally {
    size_t bad_hash, bad_stale, bad_version, bad_ntime;
    size_t per_job[3], stale, a_fresh_after_b, b_stale_after_c;
    uint32_t versions_seen;
    uint64_t en2_seen[3];
} session_tally;

static void tally_session(const fake_source *src, uint64_t b_event, uint64_t c_event, const uint64_t *storm_event,
                          session_tally *t)
{
    *t = (session_tally){0};
    for (size_t i = 0; i < src->count; i++) {
        const recorded_share *r = &src->shares[i];
        const lode_job *j = &r->job;
        int which = j->id[0] - 'A';
        t->bad_hash += !share_rebuilds(r);
        t->bad_version += (r->share.version & ~j->version_mask) != (j->version & ~j->version_mask);
        t->bad_ntime += r->share.ntime < j->ntime || r->share.ntime > j->ntime + j->ntime_roll_max;
        if (j->id[0] == 'S') {
            int k = atoi(j->id + 1);
            if (r->share.decided_at >= storm_event[k + 1])
                t->a_fresh_after_b += !r->stale;
            t->stale += r->stale;
            continue;
        }
        if (which >= 0 && which < 3) {
            t->per_job[which]++;
            uint64_t en2 = 0;
            for (size_t k = 0; k < j->extranonce2_len; k++)
                en2 |= (uint64_t)r->share.extranonce2[k] << (8 * k);
            t->en2_seen[which] |= UINT64_C(1) << (en2 & 63);
        }
        if (which == 0)
            t->versions_seen |= 1u << ((r->share.version >> 13) & 3);
        t->stale += r->stale;
        /* A's shares after B (clean) was installed must be stale; B's after
         * C (not clean) must not be; B and C's never are. */
        if (which == 0 && r->share.decided_at >= b_event)
            t->a_fresh_after_b += !r->stale;
        if (which == 1 && r->share.decided_at >= c_event)
            t->b_stale_after_c += r->stale;
        if (which > 0)
            t->bad_stale += r->stale;
    }
}

/* What test_session asks of its shares' tally and the session's counts. */
static void check_tally(const session_tally *t, const lode_mining_stats *stats, fake_source *src)
{
    printf("session: %zu shares (A %zu, B %zu, C %zu), %zu handed over stale, %llu stale in all; jobs %llu\n",
           src->count, t->per_job[0], t->per_job[1], t->per_job[2], t->stale, (unsigned long long)stats->stale,
           (unsigned long long)stats->jobs);
    size_t repeats = repeated_headers(src, src->count);
    CHECK(repeats == 0, "no header is submitted twice, even for a repeated job (%zu)", repeats);
    CHECK(t->per_job[0] >= 100 && t->per_job[1] > 10 && t->per_job[2] > 10, "shares on every job");
    CHECK(t->bad_hash == 0, "every share's header rebuilds from its job and hashes right by OpenSSL (%zu bad)",
          t->bad_hash);
    CHECK(t->bad_version == 0, "rolled versions stay inside the mask (%zu bad)", t->bad_version);
    CHECK(t->bad_ntime == 0, "ntime stays within the job's roll (%zu bad)", t->bad_ntime);
    CHECK(t->versions_seen == 0xf, "all four versions of the 2-bit mask were mined (%x)", t->versions_seen);
    CHECK(__builtin_popcountll(t->en2_seen[0]) > 1 && __builtin_popcountll(t->en2_seen[2]) > 1,
          "extranonce2 rolled on A and on C");
    CHECK(t->a_fresh_after_b == 0, "shares of a job after the next clean job are stale (%zu were not)",
          t->a_fresh_after_b);
    CHECK(stats->stale > 0, "some hits were in flight at a clean switch (else the check above is empty)");
    CHECK(t->b_stale_after_c == 0 && t->bad_stale == 0, "a non-clean job leaves older shares valid");
    CHECK(stats->shares == src->count - t->stale && stats->stale >= t->stale,
          "session counts agree with the source (%llu + %llu stale vs %zu, %zu stale)",
          (unsigned long long)stats->shares, (unsigned long long)stats->stale, src->count, t->stale);
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
    static uint64_t storm_event[STORM_MAX + 1];
    clean_job_storm(m, storm_event);
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

    session_tally t;
    tally_session(&src, b_event, c_event, storm_event, &t);
    check_tally(&t, &stats, &src);
    source_free(&src);
    lode_job_free(&a);
    lode_job_free(&b);
    lode_job_free(&c);
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
