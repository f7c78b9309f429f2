#include "core/dispatch/tf_selftest.h"

#include <stdio.h>

#include "core/base/status.h"
#include "core/base/tf_ref.h"

int lode_tf_selftest_vector(lode_handle *h, const lode_tf_vector *v, uint64_t window, char *why,
                            size_t why_len)
{
    static const atomic_int never = 0;
    uint32_t c = (uint32_t)(v->k % LODE_TF_CLASSES);
    uint64_t n = v->k / LODE_TF_CLASSES, nb, ne;
    lode_tf_class_range(v->exponent, v->bit_min, v->bit_max, c, &nb, &ne);
    if (n < nb || n >= ne) {
        snprintf(why, why_len, "vector M%u k=%llu lies outside 2^%u..2^%u", v->exponent,
                 (unsigned long long)v->k, v->bit_min, v->bit_max);
        return -1;
    }
    uint64_t before = window ? (v->k * 2654435761u) % window : 0; /* spread over the window */
    uint64_t lo = n - nb > before ? n - before : nb;
    uint64_t hi = ne - lo > window + 1 ? lo + window + 1 : ne;
    lode_work work = {.algo = h->algo,
                      .factor = {.exponent = v->exponent, .bit_min = v->bit_min, .bit_max = v->bit_max,
                                 .num_classes = LODE_TF_CLASSES, .class_index = c}};
    lode_range r = {.start = lo, .count = hi - lo};
    lode_hits hits = {0};
    uint64_t done = 0;
    int rc = lode_handle_set_work(h, &work);
    if (rc == LODE_OK)
        rc = lode_handle_scan(h, &r, &hits, &done, &never);
    if (rc == LODE_OK && done != r.count)
        rc = LODE_ERR_DEVICE;
    bool found = false, bad = false;
    for (size_t i = 0; rc == LODE_OK && i < hits.count; i++) {
        uint8_t hash[32];
        found |= hits.items[i].index == n;
        bad |= hits.items[i].index < lo || hits.items[i].index >= hi ||
               !lode_algo_get(LODE_ALGO_TF)->check_hit(&work, &hits.items[i], hash);
    }
    lode_hits_free(&hits);
    if (rc != LODE_OK || !found || bad) {
        snprintf(why, why_len, "M%u has a factor %s (2^%u..2^%u, class %u): %s", v->exponent,
                 v->factor, v->bit_min, v->bit_max, c,
                 rc != LODE_OK ? lode_status_str(rc) : !found ? "not found" : "a false factor reported");
        return -1;
    }
    return 0;
}

size_t lode_tf_selftest_count(bool short_only)
{
    size_t n = 0;
    for (size_t i = 0; i < lode_tf_vector_count; i++)
        n += !short_only || lode_tf_vectors[i].in_short_selftest;
    return n;
}

int lode_tf_selftest_handle(lode_handle *h, bool short_only, const atomic_int *abort, char *why, size_t why_len)
{
    int runs = 0;
    for (size_t i = 0; i < lode_tf_vector_count; i++) {
        if (short_only && !lode_tf_vectors[i].in_short_selftest)
            continue;
        if (abort != NULL && atomic_load(abort)) { /* each vector is short: between them is soon enough */
            snprintf(why, why_len, "interrupted");
            return -1;
        }
        if (lode_tf_selftest_vector(h, &lode_tf_vectors[i], 2000, why, why_len) != 0)
            return -1;
        runs++;
    }
    if (runs == 0) {
        snprintf(why, why_len, "no trial-factoring self-test vectors");
        return -1;
    }
    return 0;
}
