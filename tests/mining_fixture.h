/* The mining session's test fixture (tests/test_mining.c): jobs built by
 * hand and checked against OpenSSL, and a fake job source that records
 * every share the session hands it. */
#ifndef LODE_TESTS_MINING_FIXTURE_H
#define LODE_TESTS_MINING_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/job.h"
#include "core/mining/mining.h"

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

/* The fake source's operations: submit records the share (and blocks while
 * source_hold_next holds it). */
extern const lode_job_source_ops fake_ops;

void ossl_sha256d(const void *data, size_t len, uint8_t out[32]);
void random_bytes(uint8_t *p, size_t n);
/* A header built by hand: coinbase, txid, fold, fields little-endian. */
void independent_header(const lode_job *job, const uint8_t *en2, uint32_t ntime,
                        uint32_t version, uint32_t nonce, uint8_t header[80]);
void make_job(lode_job *job, const char *id, bool clean);
/* A narrow job: one extranonce2 byte, the given version bits and seconds of
 * ntime, and a share in every 2^32 / (share_top + 1) hashes. */
void make_narrow_job(lode_job *job, const char *id, bool clean, uint32_t version_mask, uint32_t roll_max,
                     uint32_t share_top);
double now_s(void);
size_t share_count(fake_source *s);
/* Shares recorded so far whose job id starts with prefix. */
size_t shares_of(fake_source *s, const char *prefix);
void sleep_ms(int ms);
/* Waits (up to 30 s) for n shares of the jobs whose id starts with prefix. */
void wait_shares(fake_source *s, const char *prefix, size_t n);
/* The session's job event counter now. A share's staleness is decided when
 * its hit is confirmed, a moment before the source records it, so a test
 * asks the share when it was decided (lode_share.decided_at), never the
 * clock: a share decided at or after a clean job's event must be stale,
 * however loaded the machine. */
uint64_t job_events(lode_mining *m);
/* Once no scan can be claimed (the job withdrawn or spent): waits (up to a
 * minute) until the session's devices have no scan out and no hit waiting
 * for its re-check, so every share of the work done is handed over however
 * long the machine starved a thread. Returns the count of shares then. */
size_t drain(lode_mining *m, fake_source *src);
/* The count of jobs the session has reported spent so far. */
uint64_t spent_now(lode_mining *m);
/* Waits (up to limit_s) until the session has reported `want` jobs spent. */
bool wait_spent(lode_mining *m, uint64_t want, int limit_s);
/* An empty fake source, and its end (the recorded jobs freed too). */
void source_init(fake_source *s);
void source_free(fake_source *s);
/* A fake source and a session on it, its devices ready; NULL (the source
 * freed) if the session did not start. */
lode_mining *open_session(fake_source *src, uint64_t nonces_per_header);
/* Whether a recorded share rebuilds, by hand from its job, into the header
 * it names, and OpenSSL's hash of that header is the hash it names and meets
 * the job's share target. */
bool share_rebuilds(const recorded_share *r);
/* Of the first n shares: those that do not rebuild from their job by hand
 * and hash right by OpenSSL, or change a version bit outside the job's
 * mask (bad_hash), and those whose ntime leaves the job's roll. */
void audit_shares(fake_source *s, size_t n, size_t *bad_hash, size_t *bad_ntime);
/* How many of the first n recorded shares repeat an earlier one's header. */
size_t repeated_headers(fake_source *s, size_t n);
/* Blocks the next submit (true) until released (false). */
void source_hold_next(fake_source *s, bool hold);

#endif
