#include "core/mining/mining.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/base/target.h"

/* Jobs a share may still belong to: a pool accepts shares of the jobs it
 * sent before its last clean job, and shares arrive after the switch. */
#define KEPT_JOBS 8
/* Job contents whose header spaces the session remembers (see
 * content_space). Pools resend the current content under new ids a few
 * times a block; sixteen contents span many blocks. */
#define KEPT_CONTENTS 16
/* What an evicted content leaves behind: the least ntime its headers may
 * use if it comes back, in a table indexed by its digest. Contents that
 * share a bucket share the larger floor, which costs ntime room, never a
 * repeated header. */
#define EVICTED_FLOORS 4096

typedef struct kept_job {
    uint64_t epoch; /* 0 = empty slot */
    lode_job job;
} kept_job;

/* The headers made from one job content: everything of a job that fixes its
 * headers but extranonce2, ntime and the rolled version bits (the coinbase
 * parts, extranonce1, merkle branch, prevhash, nbits). Pools send the same
 * content again under new ids, and may change the version mask or
 * extranonce2's width meanwhile; a header made twice would be mined twice
 * and its shares submitted twice. So the count of (version, extranonce2)
 * combinations belongs to the content, not to the job: a repeated job goes
 * on where the last one stopped, and a new split of the combinations (mask,
 * base version, extranonce2 width) starts a new pass, above every ntime
 * used before. A pass of combinations never repeats one; the next pass
 * starts at a later ntime, so no header is made twice. */
typedef struct content_space {
    uint8_t digest[32];   /* SHA-256 of the content */
    uint64_t last_used;   /* the epoch of its latest job; 0 = empty slot */
    uint32_t version_mask, version; /* the split of the current pass */
    size_t extranonce2_len;
    uint64_t variants;    /* variants made under this split */
    uint64_t pass_floor;  /* the least ntime the current pass may use */
    uint64_t max_ntime;   /* the largest ntime of its variants (a resent job may go back in time); 0 = none yet */
} content_space;

/* What a header installed on the dispatcher carries in its work's
 * source_tag, so that its hits find their job and extranonce2 however late
 * they are re-checked: the header itself (ntime, version) comes back with
 * the work. */
enum { TAG_EPOCH, TAG_EXTRANONCE2 };

struct lode_mining {
    lode_dispatcher *miner;
    lode_algo algo;
    const lode_job_source_ops *ops;
    void *source;
    uint64_t nonces_per_header;

    pthread_mutex_t lock;
    kept_job kept[KEPT_JOBS];
    uint64_t epoch;       /* the current job's epoch; 0 = no job yet */
    uint64_t clean_epoch; /* jobs older than this one are stale */
    bool has_job;
    double job_received;  /* monotonic seconds */
    content_space contents[KEPT_CONTENTS];
    uint64_t evicted_floors[EVICTED_FLOORS];
    content_space *space; /* the current job's content */
    bool spent;           /* no later ntime is left for the current job: the devices idle */
    bool stopping;        /* hits found now are worth nothing */
    uint64_t current_seq; /* the variant being scanned */
    lode_mining_stats stats;
    char failure[256]; /* lode_mining_fail's reason; "" = none */
};

static kept_job *find_kept(lode_mining *m, uint64_t epoch)
{
    for (size_t i = 0; i < KEPT_JOBS; i++)
        if (m->kept[i].epoch == epoch && epoch != 0)
            return &m->kept[i];
    return NULL;
}

/* Spreads the low bits of counter over the set bits of mask. */
static uint32_t deposit_bits(uint64_t counter, uint32_t mask)
{
    uint32_t out = 0;
    for (uint32_t bit = 1; bit != 0 && mask != 0; bit <<= 1) {
        if (!(mask & bit))
            continue;
        if (counter & 1)
            out |= bit;
        counter >>= 1;
        mask &= ~bit;
    }
    return out;
}

/* extranonce2 as a little-endian counter over its whole width. */
static void extranonce2_bytes(uint64_t counter, size_t len, uint8_t out[LODE_EXTRANONCE_MAX])
{
    memset(out, 0, LODE_EXTRANONCE_MAX);
    for (size_t i = 0; i < len && i < 8; i++)
        out[i] = (uint8_t)(counter >> (8 * i));
}

static unsigned popcount32(uint32_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* The devices stop until the next job: an empty index space, the workers
 * finish their scans and wait. Called with the lock held. */
static void idle_locked(lode_mining *m)
{
    m->current_seq = lode_dispatcher_set_job(m->miner, &(lode_work){.algo = m->algo}, 0, 0);
}

/* log2 of the versions each SHA-256d header variant carries: 3 (the
 * LODE_VERSIONS_MAX the GPU kernels hash per nonce) where the job lets lode
 * roll that many bits, else 0 (one version a variant). */
static unsigned version_group_bits(lode_algo algo, unsigned version_bits)
{
    _Static_assert(LODE_VERSIONS_MAX == 8, "the group is 2^3 versions");
    return algo == LODE_ALGO_SHA256D && version_bits >= 3 ? 3 : 0;
}

/* How many (version, extranonce2) combinations a job has: 0 when there are
 * 2^64 or more (never spent). */
static uint64_t header_space(const lode_job *job, unsigned version_bits)
{
    size_t en2_bytes = job->extranonce2_len < 8 ? job->extranonce2_len : 8;
    unsigned bits = version_bits + 8 * (unsigned)en2_bytes;
    return bits >= 64 ? 0 : UINT64_C(1) << bits;
}

/* The SHA-256 of what fixes a job's headers besides extranonce2, ntime and
 * the version (content_space). */
static void content_digest(const lode_job *job, uint8_t digest[32])
{
    lode_ref_sha256_ctx ctx;
    lode_ref_sha256_init(&ctx);
    const uint64_t lengths[4] = {job->coinb1_len, job->coinb2_len, job->extranonce1_len, job->branch_len};
    const uint32_t words[2] = {(uint32_t)job->algo, job->nbits};
    lode_ref_sha256_update(&ctx, lengths, sizeof lengths);
    lode_ref_sha256_update(&ctx, words, sizeof words);
    lode_ref_sha256_update(&ctx, job->prevhash, sizeof job->prevhash);
    lode_ref_sha256_update(&ctx, job->coinb1, job->coinb1_len);
    lode_ref_sha256_update(&ctx, job->coinb2, job->coinb2_len);
    lode_ref_sha256_update(&ctx, job->extranonce1, job->extranonce1_len);
    lode_ref_sha256_update(&ctx, job->branch, 32 * job->branch_len);
    lode_ref_sha256_final(&ctx, digest);
}

static size_t floor_bucket(const uint8_t digest[32])
{
    return ((size_t)digest[0] | (size_t)digest[1] << 8) % EVICTED_FLOORS;
}

/* The header space of the job of epoch m->epoch: its content's, found or
 * made (in the least recently used slot), with a new pass if the job
 * splits the combinations differently. Lock held. */
static content_space *enter_content(lode_mining *m, const lode_job *job)
{
    uint8_t digest[32];
    content_digest(job, digest);
    content_space *c = NULL, *oldest = &m->contents[0];
    for (size_t i = 0; i < KEPT_CONTENTS && c == NULL; i++) {
        if (m->contents[i].last_used != 0 && memcmp(m->contents[i].digest, digest, 32) == 0)
            c = &m->contents[i];
        else if (m->contents[i].last_used < oldest->last_used)
            oldest = &m->contents[i];
    }
    if (c == NULL) {
        c = oldest;
        /* A content that comes back after its eviction resumes above every
         * ntime it used: its count of combinations starts again. */
        if (c->last_used != 0 && c->max_ntime != 0) {
            uint64_t *floor = &m->evicted_floors[floor_bucket(c->digest)];
            if (*floor < c->max_ntime + 1)
                *floor = c->max_ntime + 1;
        }
        memset(c, 0, sizeof *c);
        memcpy(c->digest, digest, 32);
        c->pass_floor = m->evicted_floors[floor_bucket(digest)];
    } else if (c->version_mask != job->version_mask || c->version != job->version ||
               c->extranonce2_len != job->extranonce2_len) {
        c->variants = 0; /* the new split's combinations may equal old ones: a later ntime */
        c->pass_floor = c->max_ntime + 1;
    }
    c->last_used = m->epoch;
    c->version_mask = job->version_mask;
    c->version = job->version;
    c->extranonce2_len = job->extranonce2_len;
    return c;
}

/* Installs the next 2^32-nonce header of the current job: roll the version
 * bits first (no merkle work), then extranonce2; ntime follows the clock
 * within what the job allows. A pass over every (version, extranonce2)
 * combination makes distinct headers; the next pass needs an ntime above
 * every one of the last pass (ahead of the clock if need be, never past
 * the job's limit). When none is left the job is spent: the devices idle
 * until the source sends a new job, and the log says so. Called with the
 * lock held. */
static void install_next_variant(lode_mining *m)
{
    kept_job *k = find_kept(m, m->epoch);
    if (k == NULL || m->spent)
        return;
    const lode_job *job = &k->job;
    unsigned version_bits = popcount32(job->version_mask);
    if (version_bits > 16) /* plenty of headers; keeps the split below in range */
        version_bits = 16;
    /* A variant takes 2^group versions at once: its roll counts groups. */
    const unsigned group = version_group_bits(m->algo, version_bits);
    const uint64_t space = header_space(job, version_bits - group);
    content_space *c = m->space;
    if (space != 0 && c->variants > 0 && c->variants % space == 0)
        c->pass_floor = c->max_ntime + 1; /* a new pass: every combination again */
    double ahead = lode_clock_s() - m->job_received;
    if (ahead < 0)
        ahead = 0;
    if (ahead > job->ntime_roll_max)
        ahead = job->ntime_roll_max;
    uint64_t ntime = (uint64_t)job->ntime + (uint64_t)ahead;
    if (ntime < c->pass_floor)
        ntime = c->pass_floor;
    if (ntime > (uint64_t)job->ntime + job->ntime_roll_max || ntime > UINT32_MAX) {
        m->spent = true;
        m->stats.spent++;
        idle_locked(m);
        lode_log(LODE_LOG_WARN,
                 "job '%s': no header of its content is left to mine (%llu mined under this version split: "
                 "extranonce2 of %zu byte(s), %u version bit(s), ntime up to %u s ahead); waiting for a new job",
                 job->id, (unsigned long long)(c->variants << group), job->extranonce2_len, version_bits,
                 job->ntime_roll_max);
        return;
    }
    uint64_t roll = c->variants++;
    if (ntime > c->max_ntime)
        c->max_ntime = ntime;
    uint64_t version_roll = version_bits > group ? roll & ((UINT64_C(1) << (version_bits - group)) - 1) : 0;
    uint64_t extranonce_roll = roll >> (version_bits - group);

    lode_work work = {.algo = m->algo, .source_tag = {[TAG_EPOCH] = m->epoch, [TAG_EXTRANONCE2] = extranonce_roll}};
    uint8_t extranonce2[LODE_EXTRANONCE_MAX];
    extranonce2_bytes(extranonce_roll, job->extranonce2_len, extranonce2);
    lode_header_job *h = &work.header;
    for (uint32_t i = 0; i < 1u << group; i++)
        h->versions[i] =
            (job->version & ~job->version_mask) | deposit_bits(version_roll << group | i, job->version_mask);
    h->version_count = group ? 1u << group : 0; /* one version: the plain header */
    h->target = job->share_target;
    lode_job_header(job, extranonce2, (uint32_t)ntime, h->versions[0], h->header);
    m->current_seq = lode_dispatcher_set_job(m->miner, &work, 0, m->nonces_per_header);
}

static void on_exhausted(void *user, uint64_t seq)
{
    lode_mining *m = user;
    pthread_mutex_lock(&m->lock);
    if (m->has_job && !m->spent && seq == m->current_seq)
        install_next_variant(m);
    pthread_mutex_unlock(&m->lock);
}

/* Hits of a job a clean job replaced, or of a session that is stopping,
 * are dropped before the reference re-checks them (counted stale). */
static bool on_wanted(void *user, const lode_work *work)
{
    lode_mining *m = user;
    const uint64_t epoch = work->source_tag[TAG_EPOCH];
    pthread_mutex_lock(&m->lock);
    bool wanted = !m->stopping && epoch >= m->clean_epoch && find_kept(m, epoch) != NULL;
    if (!wanted)
        m->stats.stale++;
    pthread_mutex_unlock(&m->lock);
    return wanted;
}

static void on_found(void *user, const lode_found *found)
{
    lode_mining *m = user;
    const uint64_t epoch = found->work->source_tag[TAG_EPOCH];
    const lode_header_job *h = &found->work->header;
    lode_share share = {.nonce = (uint32_t)found->hit.index};
    lode_job job = {0};

    pthread_mutex_lock(&m->lock);
    kept_job *k = find_kept(m, epoch);
    bool known = k != NULL && lode_job_copy(&job, &k->job) == 0;
    bool stale = epoch < m->clean_epoch;
    share.decided_at = m->stats.job_events;
    if (known && !stale)
        m->stats.shares++;
    else
        m->stats.stale++; /* replaced by a clean job, or long gone */
    pthread_mutex_unlock(&m->lock);
    if (!known)
        return;

    extranonce2_bytes(found->work->source_tag[TAG_EXTRANONCE2], job.extranonce2_len, share.extranonce2);
    share.ntime = lode_header_ntime(h->header);
    share.version = h->version_count ? found->hit.version : h->versions[0];
    memcpy(share.header, h->header, 80);
    for (int b = 0; b < 4; b++)
        share.header[b] = (uint8_t)(share.version >> (8 * b));
    share.job = &job;
    share.header[76] = (uint8_t)share.nonce;
    share.header[77] = (uint8_t)(share.nonce >> 8);
    share.header[78] = (uint8_t)(share.nonce >> 16);
    share.header[79] = (uint8_t)(share.nonce >> 24);
    memcpy(share.hash, found->hash, 32);
    lode_u256 block_target;
    share.block_candidate = lode_target_from_nbits(job.nbits, &block_target) == 0 &&
                            lode_hash_meets_target(share.hash, &block_target);
    lode_u256 hash_value = lode_u256_from_le_bytes(share.hash);
    share.difficulty = lode_target_to_difficulty(&hash_value, m->algo);
    /* The dispatcher re-checked the hash against this very target; a share
     * that misses it here means the bookkeeping above is wrong. */
    if (!lode_hash_meets_target(share.hash, &job.share_target)) {
        lode_log(LODE_LOG_ERROR, "internal error: a share misses its job's target; not submitted");
    } else {
        m->ops->submit(m->source, &share, stale);
    }
    lode_job_free(&job);
}

lode_mining *lode_mining_start(const lode_mining_config *config, char *err, size_t err_len)
{
    if (config->source_ops == NULL || config->source_ops->submit == NULL) {
        snprintf(err, err_len, "no job source");
        return NULL;
    }
    lode_mining *m = calloc(1, sizeof *m);
    if (m == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    m->algo = config->miner.algo;
    m->ops = config->source_ops;
    m->source = config->source;
    m->nonces_per_header = config->nonces_per_header;
    if (m->nonces_per_header == 0 || m->nonces_per_header > (UINT64_C(1) << 32))
        m->nonces_per_header = UINT64_C(1) << 32;
    pthread_mutex_init(&m->lock, NULL);
    lode_dispatcher_config mc = config->miner;
    mc.callbacks = (lode_dispatcher_callbacks){
        .user = m, .found = on_found, .exhausted = on_exhausted, .wanted = on_wanted};
    m->miner = lode_dispatcher_start(&mc, err, err_len);
    if (m->miner == NULL) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
    }
    return m;
}

lode_dispatcher *lode_mining_miner(lode_mining *m) { return m->miner; }

static bool job_is_well_formed(const lode_job *job, lode_algo algo)
{
    return job->algo == algo && job->coinb1 != NULL && job->coinb2 != NULL &&
           job->extranonce1_len <= LODE_EXTRANONCE_MAX && job->extranonce2_len >= 1 &&
           job->extranonce2_len <= LODE_EXTRANONCE_MAX && job->branch_len <= LODE_MERKLE_BRANCH_MAX &&
           !lode_u256_is_zero(&job->share_target);
}

/* Every job so far is dead (a clean job that cannot be mined replaced
 * them): their shares are stale and the devices idle. Lock held. */
static void drop_jobs_locked(lode_mining *m)
{
    m->clean_epoch = m->epoch + 1;
    m->has_job = false;
    idle_locked(m);
}

int lode_mining_set_job(lode_mining *m, const lode_job *job)
{
    if (!job_is_well_formed(job, m->algo)) {
        pthread_mutex_lock(&m->lock);
        m->stats.job_events++;
        if (job->clean)
            drop_jobs_locked(m);
        pthread_mutex_unlock(&m->lock);
        lode_log(LODE_LOG_WARN, "job '%s' is malformed; not mined%s", job->id,
                 job->clean ? " (it replaces the older jobs: idle until a usable job arrives)" : "");
        return -1;
    }
    pthread_mutex_lock(&m->lock);
    m->stats.job_events++;
    /* Reuse the slot of the oldest kept job. */
    kept_job *slot = &m->kept[0];
    for (size_t i = 1; i < KEPT_JOBS; i++)
        if (m->kept[i].epoch < slot->epoch)
            slot = &m->kept[i];
    lode_job_free(&slot->job);
    slot->epoch = 0;
    if (lode_job_copy(&slot->job, job) != 0) {
        if (job->clean) /* the old jobs are dead and the new one is lost */
            drop_jobs_locked(m);
        pthread_mutex_unlock(&m->lock);
        lode_log(LODE_LOG_ERROR, "out of memory installing job '%s'", job->id);
        return -1;
    }
    slot->epoch = ++m->epoch;
    if (job->clean)
        m->clean_epoch = m->epoch;
    m->has_job = true;
    m->job_received = lode_clock_s();
    m->stats.jobs++;
    m->space = enter_content(m, job);
    m->spent = false;
    install_next_variant(m);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

void lode_mining_drop_jobs(lode_mining *m)
{
    pthread_mutex_lock(&m->lock);
    m->stats.job_events++;
    drop_jobs_locked(m);
    pthread_mutex_unlock(&m->lock);
}

void lode_mining_clear_job(lode_mining *m)
{
    pthread_mutex_lock(&m->lock);
    m->stats.job_events++;
    m->has_job = false;
    idle_locked(m);
    pthread_mutex_unlock(&m->lock);
}

void lode_mining_stats_get(lode_mining *m, lode_mining_stats *out)
{
    pthread_mutex_lock(&m->lock);
    *out = m->stats;
    pthread_mutex_unlock(&m->lock);
}

void lode_mining_fail(lode_mining *m, const char *why)
{
    pthread_mutex_lock(&m->lock);
    if (m->failure[0] == '\0')
        snprintf(m->failure, sizeof m->failure, "%s", why && why[0] ? why : "the job source failed");
    pthread_mutex_unlock(&m->lock);
}

bool lode_mining_failure(lode_mining *m, char *why, size_t why_len)
{
    pthread_mutex_lock(&m->lock);
    bool failed = m->failure[0] != '\0';
    if (failed && why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", m->failure);
    pthread_mutex_unlock(&m->lock);
    return failed;
}

void lode_mining_free(lode_mining *m)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->lock);
    m->stopping = true;
    pthread_mutex_unlock(&m->lock);
    lode_dispatcher_free(m->miner);
    for (size_t i = 0; i < KEPT_JOBS; i++)
        lode_job_free(&m->kept[i].job);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
