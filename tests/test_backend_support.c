/* What the GPU backends share in core/backend_support, without a GPU: the
 * autotuner's pick (autotune.h), hit collection from a hit buffer
 * (hit_collect.h) and a Momentum batch of candidates (momentum_batch.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/backend_support/autotune.h"
#include "core/backend_support/hit_collect.h"
#include "core/backend_support/kernel_params.h"
#include "core/backend_support/momentum_batch.h"
#include "core/base/status.h"
#include "core/base/work.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* ---- the autotuner's pick ------------------------------------------------- */

typedef struct trials {
    const double *rates; /* per candidate; < 0: the trial fails */
    size_t calls;
    double sleep_s; /* each trial's time */
} trials;

static int fake_trial(void *ctx, size_t index, double *rate)
{
    trials *t = ctx;
    t->calls++;
    if (t->sleep_s > 0)
        nanosleep(&(struct timespec){.tv_nsec = (long)(t->sleep_s * 1e9)}, NULL);
    if (t->rates[index] < 0)
        return LODE_ERR_DEVICE;
    *rate = t->rates[index];
    return LODE_OK;
}

static void test_autotune_best(void)
{
    /* The first of the fastest wins; a skipped candidate (0) never does. */
    const double rates[] = {3, 0, 7, 7, 5};
    trials t = {rates, 0, 0};
    size_t best = 99;
    double rate = -1;
    int rc = lode_autotune_best(&t, 5, fake_trial, 1e9, &best, &rate);
    CHECK(rc == LODE_OK && best == 2 && rate == 7, "rc %d, best %zu at %g", rc, best, rate);
    CHECK(t.calls == 5, "%zu trials of 5", t.calls);

    /* A failing trial ends the measurement with its error. */
    const double failing[] = {4, -1, 9};
    trials f = {failing, 0, 0};
    rc = lode_autotune_best(&f, 3, fake_trial, 1e9, &best, &rate);
    CHECK(rc == LODE_ERR_DEVICE && f.calls == 2, "rc %d after %zu trials", rc, f.calls);
    CHECK(best == 0 && rate == 4, "best %zu at %g before the failure", best, rate);

    /* Nothing ran: no rate. */
    const double skipped[] = {0, 0};
    trials s = {skipped, 0, 0};
    rc = lode_autotune_best(&s, 2, fake_trial, 1e9, &best, &rate);
    CHECK(rc == LODE_OK && rate == 0, "rc %d, rate %g with every candidate skipped", rc, rate);

    /* Slow trials (0.3 s each) stop at the budget (0.5 s), well before all
     * 10, and keep the best timed. */
    const double slow[] = {2, 6, 5, 9, 9, 9, 9, 9, 9, 9};
    trials w = {slow, 0, 0.3};
    rc = lode_autotune_best(&w, 10, fake_trial, 0.5, &best, &rate);
    CHECK(rc == LODE_OK && w.calls >= 1 && w.calls <= 3, "%zu slow trials of 10 within the budget", w.calls);
    CHECK(rate == slow[best] && best < w.calls, "best %zu at %g among those timed", best, rate);
}

/* ---- hit collection ------------------------------------------------------ */

static bool keep_even(const void *ctx, uint32_t nonce)
{
    (void)ctx;
    return nonce % 2 == 0;
}

static void test_nonce_hits(void)
{
    static uint32_t buffer[LODE_HITS_WORDS];
    const lode_u256 target = {{0}};
    lode_nonce_hit_check check = {.target = &target, .keep = keep_even};
    lode_hits hits = {0};
    buffer[LODE_HITS_COUNT] = 3;
    buffer[LODE_HITS_NONCE0] = 1002;
    buffer[LODE_HITS_NONCE0 + 1] = 1001;
    buffer[LODE_HITS_NONCE0 + 2] = 1010;
    int rc = lode_collect_nonce_hits("test", buffer, 1000, 16, &check, &hits);
    CHECK(rc == LODE_OK && hits.count == 2, "rc %d, %zu hits, want the 2 even ones", rc, hits.count);
    CHECK(hits.count == 2 && hits.items[0].index + hits.items[1].index == 2012, "wrong nonces kept");

    /* Without a filter every nonce counts. */
    check.keep = NULL;
    hits.count = 0;
    rc = lode_collect_nonce_hits("test", buffer, 1000, 16, &check, &hits);
    CHECK(rc == LODE_OK && hits.count == 3, "rc %d, %zu hits of 3", rc, hits.count);

    /* A nonce outside the launch is a faulty device. */
    hits.count = 0;
    rc = lode_collect_nonce_hits("test", buffer, 1002, 4, &check, &hits);
    CHECK(rc == LODE_ERR_DEVICE, "rc %d for a nonce outside the launch", rc);

    /* More hits than the buffer holds: the launch must be redone. */
    hits.count = 0;
    buffer[LODE_HITS_COUNT] = LODE_HITS_CAP + 1;
    rc = lode_collect_nonce_hits("test", buffer, 1000, 16, &check, &hits);
    CHECK(rc == LODE_ERR_HITS_OVERFLOW && hits.count == 0, "rc %d, %zu hits on overflow", rc, hits.count);

    const uint32_t found[] = {5, 0};
    hits.count = 0;
    rc = lode_collect_factor_offsets("test", 100, 8, found, 2, &hits);
    CHECK(rc == LODE_OK && hits.count == 2 && hits.items[0].index == 105 && hits.items[1].index == 100,
          "rc %d, %zu factor hits", rc, hits.count);
    rc = lode_collect_factor_offsets("test", 100, 5, found, 2, &hits);
    CHECK(rc == LODE_ERR_DEVICE, "rc %d for an offset outside the launch", rc);
    lode_hits_free(&hits);
}

/* ---- a Momentum batch -------------------------------------------------------- */

static void test_momentum_batch(void)
{
    momentum_batch b;
    int rc = momentum_batch_init(&b, 3);
    CHECK(rc == LODE_OK, "init: rc %d", rc);
    const momentum_entry pair[] = {{.birthday = 77, .nonce = 9}, {.birthday = 77, .nonce = 4}};
    const momentum_entry lone[] = {{.birthday = 5, .nonce = 1}};
    for (int round = 0; round < 2 && rc == LODE_OK; round++) { /* the second reuses the grown buffer */
        momentum_batch_begin(&b);
        rc = momentum_batch_add(&b, pair, 2);
        if (rc == LODE_OK)
            rc = momentum_batch_add(&b, NULL, 0);
        if (rc == LODE_OK)
            rc = momentum_batch_add(&b, lone, 1);
        CHECK(rc == LODE_OK && b.sweeps == 3, "round %d: rc %d, %u sweeps", round, rc, b.sweeps);
        CHECK(b.sweep_at[1] == 2 && b.sweep_at[2] == 2 && b.sweep_at[3] == 3, "round %d: sweep bounds", round);
        CHECK(momentum_batch_add(&b, lone, 1) == LODE_ERR_DEVICE, "round %d: a sweep past the batch", round);
    }
    /* Every block hash meets the largest target: one hit, the pair of
     * sweep 0, as header nonce start + 0. */
    lode_u256 target;
    memset(&target, 0xFF, sizeof target);
    uint8_t header[80] = {0};
    lode_hits hits = {0};
    rc = momentum_batch_push_hits(&b, header, 40, &target, &hits);
    CHECK(rc == LODE_OK && hits.count == 1, "rc %d, %zu hits, want 1", rc, hits.count);
    if (hits.count == 1)
        CHECK(hits.items[0].index == 40 && hits.items[0].pair[0] == 4 && hits.items[0].pair[1] == 9,
              "hit %llu (%u, %u)", (unsigned long long)hits.items[0].index, hits.items[0].pair[0],
              hits.items[0].pair[1]);
    lode_hits_free(&hits);
    momentum_batch_free(&b);
}

int main(void)
{
    test_autotune_best();
    test_nonce_hits();
    test_momentum_batch();
    if (failures > 0) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("backend_support: ok\n");
    return 0;
}
