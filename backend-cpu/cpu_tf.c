/* Mersenne trial factoring on the CPU: the bit sieve and 128-bit
 * Montgomery exponentiation of tf_cpu.c. */
#include <string.h>

#include "backend-cpu/cpu_internal.h"
#include "backend-cpu/tf_cpu.h"
#include "core/base/status.h"

static int tf_variants(const char **names, int max)
{
    if (max <= 0)
        return 0;
    names[0] = "montgomery"; /* bit sieve + 128-bit Montgomery exponentiation */
    return 1;
}

static bool tf_supports(const char *variant) { return variant == NULL || strcmp(variant, "montgomery") == 0; }

static int tf_open(const char *variant, void **state)
{
    (void)variant;
    cpu_tf *tf = cpu_tf_new(0);
    *state = tf;
    return tf != NULL ? LODE_OK : LODE_ERR_NO_MEMORY;
}

static void tf_close(void *state) { cpu_tf_free(state); }

static int tf_set_work(void *state, const lode_work *work) { return cpu_tf_set_work(state, &work->factor); }

static int tf_scan(void *state, const lode_range *r, lode_hits *hits, uint64_t *done, const atomic_int *abort)
{
    return cpu_tf_scan(state, r->start, r->count, hits, done, abort);
}

/* A first guess only; the dispatcher measures and adjusts. */
static uint64_t tf_preferred_chunk(double target_ms)
{
    return (uint64_t)(200.0 * target_ms) + 1; /* indices (k) per ms, about */
}

const cpu_algo_ops cpu_tf_ops = {
    .variants = tf_variants,
    .supports = tf_supports,
    .open = tf_open,
    .close = tf_close,
    .set_work = tf_set_work,
    .scan = tf_scan,
    .preferred_chunk = tf_preferred_chunk,
};
