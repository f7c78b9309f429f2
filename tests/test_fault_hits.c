/* The fault-injecting backend's hit faults (core/dispatch/fault_backend.h),
 * which `lode check` must catch: fault:0's hits over 2^16 nonces of a
 * random header with a loose target (about one nonce in 16 hits), through
 * the registry's wrappers, against the plain reference:
 * - corrupt: about one hit in N is missing and a non-hit near it reported
 *   instead, so the count stays (a hit is dropped only where its wrong
 *   index would leave the range);
 * - drop: a strict subset; extra: a strict superset by about range/N;
 * - none of it before the handle is tuned (its self-test passes);
 * - by nonce: the same nonces scanned as one range and as sub-ranges of
 *   odd sizes give the same hits (corrupt: away from the sub-ranges' edges,
 *   where a wrong index would leave its range);
 * - malformed LODE_TEST_FAULT entries are rejected. */
#include "core/base/status.h"
#include "core/base/target.h"
#include "core/dispatch/fault_backend.h"
#include "core/dispatch/registry.h"
#include "tests/test_util.h"

enum { SPAN = 1 << 16, NEAR = 16 /* a wrong index is at most this far from its hit */ };

static const atomic_int never_abort = 0;

typedef struct scan_setup {
    lode_work work;
    uint64_t start;     /* the nonces scanned are [start, start + SPAN) */
    bool real[SPAN];    /* the reference's hits */
    uint8_t got[SPAN];  /* how often fault:0 reported each */
    size_t real_count;
} scan_setup;

static bool ref_hit(const lode_work *w, uint64_t nonce)
{
    uint8_t header[80], hash[32];
    memcpy(header, w->header.header, 80);
    for (int i = 0; i < 4; i++)
        header[76 + i] = (uint8_t)(nonce >> (8 * i));
    lode_algo_get(LODE_ALGO_SHA256D)->pow_hash_ref(header, hash);
    return lode_hash_meets_target(hash, &w->header.target);
}

static void new_setup(scan_setup *s)
{
    memset(s, 0, sizeof *s);
    s->work.algo = LODE_ALGO_SHA256D;
    test_rand_bytes(s->work.header.header, 80);
    memset(s->work.header.target.w, 0xff, sizeof s->work.header.target.w);
    s->work.header.target.w[7] = 0x0fffffffu; /* about one nonce in 16 hits */
    s->start = test_rand() % ((UINT64_C(1) << 32) - SPAN);
    for (uint32_t i = 0; i < SPAN; i++)
        s->real_count += s->real[i] = ref_hit(&s->work, s->start + i);
}

/* Opens fault:0 on the setup's work; tuned: its faults apply. */
static bool open_fault0(lode_handle *h, lode_device_ref **refs, const scan_setup *s, bool tuned)
{
    size_t count = 0;
    char err[256] = "";
    if (lode_registry_select("fault:0", LODE_ALGO_SHA256D, refs, &count, err, sizeof err) != 0 || count != 1) {
        CHECK(false, "select fault:0: %s", err);
        return false;
    }
    lode_open_params params = {.algo = LODE_ALGO_SHA256D, .id = "fault:0"};
    int rc = lode_handle_open(h, &(*refs)[0], &params);
    if (rc == LODE_OK)
        rc = lode_handle_set_work(h, &s->work);
    if (rc == LODE_OK && tuned)
        rc = lode_handle_tune(h, 20);
    CHECK(rc == LODE_OK, "open, set work and tune fault:0: %d", rc);
    if (rc != LODE_OK)
        free(*refs);
    return rc == LODE_OK;
}

static void close_fault0(lode_handle *h, lode_device_ref *refs)
{
    lode_handle_close(h);
    free(refs);
}

/* Scans [start + from, start + from + count) and adds its hits to got. */
static void scan_part(lode_handle *h, scan_setup *s, uint64_t from, uint64_t count)
{
    lode_hits hits = {0};
    lode_range r = {.start = s->start + from, .count = count};
    uint64_t done = 0;
    int rc = lode_handle_scan(h, &r, &hits, &done, &never_abort);
    CHECK(rc == LODE_OK && done == count, "scan %llu+%llu: rc %d, done %llu", (unsigned long long)r.start,
          (unsigned long long)count, rc, (unsigned long long)done);
    size_t outside = 0;
    for (size_t i = 0; i < hits.count; i++) {
        uint64_t k = hits.items[i].index - s->start;
        outside += hits.items[i].index < r.start || hits.items[i].index >= r.start + count;
        if (k < SPAN && s->got[k] < 255)
            s->got[k]++;
    }
    CHECK(outside == 0, "scan %llu+%llu: %zu hits outside it", (unsigned long long)r.start,
          (unsigned long long)count, outside);
    lode_hits_free(&hits);
}

/* Scans the whole span with fault:0 planned so; false if it did not open. */
static bool scan_with(scan_setup *s, const lode_fault_plan *plan, bool tuned)
{
    lode_fault_set(0, plan);
    lode_handle h;
    lode_device_ref *refs;
    memset(s->got, 0, sizeof s->got);
    if (!open_fault0(&h, &refs, s, tuned))
        return false;
    scan_part(&h, s, 0, SPAN);
    close_fault0(&h, refs);
    return true;
}

typedef struct tally {
    size_t reported, missing, made_up, doubled;
} tally;

static tally count_up(const scan_setup *s)
{
    tally t = {0};
    for (uint32_t i = 0; i < SPAN; i++) {
        t.reported += s->got[i];
        t.missing += s->real[i] && s->got[i] == 0;
        t.made_up += !s->real[i] && s->got[i] > 0;
        t.doubled += s->got[i] > 1;
    }
    return t;
}

static void test_untuned_is_sound(scan_setup *s)
{
    if (!scan_with(s, &(lode_fault_plan){.kind = LODE_FAULT_CORRUPT_HITS, .every = 1}, false))
        return;
    tally t = count_up(s);
    CHECK(t.reported == s->real_count && t.missing == 0 && t.made_up == 0,
          "before tune, every one of %zu hits and no other: %zu reported, %zu missing, %zu made up", s->real_count,
          t.reported, t.missing, t.made_up);
    CHECK(lode_fault_fired(0) == 0, "nothing fired before tune (%u)", lode_fault_fired(0));
}

static void test_corrupt(scan_setup *s)
{
    const unsigned every = 8;
    if (!scan_with(s, &(lode_fault_plan){.kind = LODE_FAULT_CORRUPT_HITS, .every = every}, true))
        return;
    tally t = count_up(s);
    size_t moved = 0;
    for (uint32_t i = 0; i < SPAN; i++)
        moved += s->real[i] ? 0 : s->got[i];
    /* A wrong index is a non-hit near a missing hit. */
    size_t far = 0;
    for (uint32_t i = 0; i < SPAN; i++) {
        if (s->real[i] || s->got[i] == 0)
            continue;
        bool near_missing = false;
        for (uint32_t j = i > NEAR ? i - NEAR : 0; j <= i + NEAR && j < SPAN && !near_missing; j++)
            near_missing = s->real[j] && s->got[j] == 0;
        far += !near_missing;
    }
    size_t missing_at_edges = 0;
    for (uint32_t i = 0; i < SPAN; i++)
        missing_at_edges += (i < NEAR || i >= SPAN - NEAR) && s->real[i] && s->got[i] == 0;
    size_t dropped = t.missing - moved;
    CHECK(t.missing >= s->real_count / (4 * every) && t.missing <= 4 * s->real_count / every,
          "corrupt:0:%u: %zu of %zu hits missing, about one in %u", every, t.missing, s->real_count, every);
    CHECK(moved > 0 && far == 0, "corrupt: %zu non-hits reported, %zu of them far from a missing hit", moved, far);
    CHECK(t.missing >= moved && dropped <= missing_at_edges,
          "corrupt: the count stays but for hits near the range's ends: %zu reported of %zu (%zu dropped, %zu "
          "missing near the ends)",
          t.reported, s->real_count, dropped, missing_at_edges);
    CHECK(lode_fault_fired(0) == t.missing, "corrupt: fired counts the hits changed (%u, %zu missing)",
          lode_fault_fired(0), t.missing);
}

static void test_drop(scan_setup *s)
{
    const unsigned every = 8;
    if (!scan_with(s, &(lode_fault_plan){.kind = LODE_FAULT_DROP_HITS, .every = every}, true))
        return;
    tally t = count_up(s);
    CHECK(t.made_up == 0 && t.doubled == 0 && t.missing > 0 && t.reported + t.missing == s->real_count,
          "drop:0:%u: a strict subset: %zu of %zu hits reported, %zu made up", every, t.reported, s->real_count,
          t.made_up);
    CHECK(t.missing >= s->real_count / (4 * every) && t.missing <= 4 * s->real_count / every,
          "drop: %zu hits dropped, about one in %u", t.missing, every);
    CHECK(lode_fault_fired(0) == t.missing, "drop: fired counts the hits dropped (%u)", lode_fault_fired(0));
}

static void test_extra(scan_setup *s)
{
    /* Planned through the LODE_TEST_FAULT text, as `lode` plans it. */
    static const unsigned rates[] = {256, 4096};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        char spec[64], err[256] = "";
        snprintf(spec, sizeof spec, "extra:0:%u", rates[i]);
        CHECK(lode_fault_configure(spec, err, sizeof err) == 0, "%s is accepted: %s", spec, err);
        lode_handle h;
        lode_device_ref *refs;
        memset(s->got, 0, sizeof s->got);
        if (!open_fault0(&h, &refs, s, true))
            return;
        scan_part(&h, s, 0, SPAN);
        close_fault0(&h, refs);
        tally t = count_up(s);
        size_t want = SPAN / rates[i];
        CHECK(t.missing == 0 && t.doubled == 0 && t.made_up > 0 && t.reported == s->real_count + t.made_up,
              "%s: a strict superset: %zu reported for %zu hits", spec, t.reported, s->real_count);
        CHECK(t.made_up >= want / 4 && t.made_up <= 4 * want, "%s: %zu made up, about %zu", spec, t.made_up,
              want);
        CHECK(lode_fault_fired(0) == t.made_up, "%s: fired counts the hits made up (%u)", spec,
              lode_fault_fired(0));
    }
    lode_fault_set(0, NULL);
}

/* One range and sub-ranges of odd sizes: the same hits, since a nonce's
 * fate depends on the nonce alone. */
static void test_by_nonce(scan_setup *s, lode_fault_kind kind, unsigned every, const char *what)
{
    static const uint64_t sizes[] = {1, 7, 333, 4097, 12345, 3, 9999, 65, 20001};
    static uint8_t whole[SPAN];
    if (!scan_with(s, &(lode_fault_plan){.kind = kind, .every = every}, true))
        return;
    memcpy(whole, s->got, SPAN);
    static bool edge[SPAN]; /* within NEAR of a sub-range's edge */
    lode_handle h;
    lode_device_ref *refs;
    memset(s->got, 0, sizeof s->got);
    if (!open_fault0(&h, &refs, s, true))
        return;
    uint64_t from = 0;
    for (size_t i = 0; from < SPAN; i = (i + 1) % (sizeof sizes / sizeof sizes[0])) {
        uint64_t count = sizes[i] < SPAN - from ? sizes[i] : SPAN - from;
        scan_part(&h, s, from, count);
        for (uint64_t k = 0; k < count; k++)
            edge[from + k] = k < NEAR || count - k <= NEAR;
        from += count;
    }
    close_fault0(&h, refs);
    size_t differ = 0, compared = 0, changed = 0;
    for (uint32_t i = 0; i < SPAN; i++) {
        if (kind == LODE_FAULT_CORRUPT_HITS && edge[i])
            continue;
        compared++;
        differ += whole[i] != s->got[i];
        changed += s->got[i] != s->real[i];
    }
    CHECK(differ == 0 && changed > 0,
          "%s: one range and sub-ranges of odd sizes report the same: %zu of %zu nonces differ (%zu faulty)", what,
          differ, compared, changed);
}

static void test_parse(void)
{
    static const char *const bad[] = {"corrupt:0:0", "drop:0", "extra:0:abc", "drop:0:5:1", "corrupt:0:1000001",
                                      "extra:0:", "drop:0:-3", "corrupt:4:10", "extra:0:12x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        CHECK(lode_fault_configure(bad[i], err, sizeof err) == -1 && strstr(err, "LODE_TEST_FAULT") != NULL &&
                  strstr(err, bad[i]) != NULL,
              "'%s' is rejected: '%s'", bad[i], err);
    }
    static const char *const good[] = {"corrupt:0:1", "drop:1:1000000", "extra:3:4096,corrupt:2:7"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char err[256] = "";
        CHECK(lode_fault_configure(good[i], err, sizeof err) == 0, "'%s' is accepted: '%s'", good[i], err);
    }
    for (int d = 0; d < LODE_FAULT_DEVICES; d++)
        lode_fault_set(d, NULL);
}

int main(void)
{
    test_seed();
    static const lode_backend_ops *const fault_only[] = {&lode_backend_fault};
    lode_registry_use_backends(fault_only, 1);
    scan_setup *s = malloc(sizeof *s);
    new_setup(s);
    test_untuned_is_sound(s);
    test_corrupt(s);
    test_drop(s);
    test_extra(s);
    new_setup(s);
    test_by_nonce(s, LODE_FAULT_CORRUPT_HITS, 8, "corrupt");
    test_by_nonce(s, LODE_FAULT_DROP_HITS, 8, "drop");
    test_by_nonce(s, LODE_FAULT_EXTRA_HITS, 256, "extra");
    lode_fault_set(0, NULL);
    test_parse();
    lode_registry_use_backends(NULL, 0);
    free(s);
    return test_summary();
}
