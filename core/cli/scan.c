/* `lode scan` and `lode hash`: the exact, scriptable interface for checking
 * any backend by hand. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/hex.h"
#include "core/base/momentum_ref.h"
#include "core/base/target.h"
#include "core/base/tf_ref.h"
#include "core/cli/commands.h"
#include "core/cli/devices.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/run_setup.h"
#include "core/cli/signals.h"
#include "core/dispatch/dispatch.h"

typedef struct scan_results {
    pthread_mutex_t lock;
    lode_found *items;
    size_t count, capacity;
    bool out_of_memory;
    uint64_t hw_errors; /* hits the CPU re-check rejected, over every device */
} scan_results;

static void collect(void *user, const lode_found *found)
{
    scan_results *r = user;
    pthread_mutex_lock(&r->lock);
    if (r->count == r->capacity) {
        size_t cap = r->capacity ? 2 * r->capacity : 64;
        lode_found *grown = realloc(r->items, cap * sizeof *grown);
        if (grown == NULL) {
            r->out_of_memory = true;
            pthread_mutex_unlock(&r->lock);
            return;
        }
        r->items = grown;
        r->capacity = cap;
    }
    r->items[r->count++] = *found;
    pthread_mutex_unlock(&r->lock);
}

static int by_hit(const void *a, const void *b)
{
    return lode_hit_compare(&((const lode_found *)a)->hit, &((const lode_found *)b)->hit);
}

static int cmp_hash(const uint8_t x[32], const uint8_t y[32])
{
    for (int i = 31; i >= 0; i--)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Momentum's results (sorted by header nonce, then pair). Without a target,
 * every colliding pair: "<a> <b> <birthday as 13 hex digits>". With one, the
 * job-source answer per header nonce: the pair with the smallest block hash
 * among those meeting the target, "<nonce> <a> <b> <block hash>". */
static void print_collisions(const cli_options *o, const lode_work *work, const scan_results *r)
{
    for (size_t i = 0; i < r->count;) {
        size_t j = i, best = i;
        while (j < r->count && r->items[j].hit.index == r->items[i].hit.index) {
            if (cmp_hash(r->items[j].hash, r->items[best].hash) < 0)
                best = j;
            j++;
        }
        if (o->target != NULL) {
            char hex[65];
            lode_hex_encode_reversed(r->items[best].hash, 32, hex);
            printf("%llu %u %u %s\n", (unsigned long long)r->items[best].hit.index,
                   r->items[best].hit.pair[0], r->items[best].hit.pair[1], hex);
        } else {
            uint8_t header[80], mid[32];
            memcpy(header, work->header.header, 80);
            for (int b = 0; b < 4; b++)
                header[76 + b] = (uint8_t)(r->items[i].hit.index >> (8 * b));
            lode_ref_momentum_midhash(header, mid);
            for (size_t k = i; k < j; k++)
                printf("%u %u %013llx\n", r->items[k].hit.pair[0], r->items[k].hit.pair[1],
                       (unsigned long long)lode_ref_momentum_birthday(mid, r->items[k].hit.pair[0]));
        }
        i = j;
    }
}

/* Says, per device, how many of its hits failed the CPU re-check; returns
 * the total. */
static uint64_t count_hardware_errors(lode_dispatcher *m)
{
    uint64_t total = 0;
    for (size_t d = 0; d < lode_dispatcher_device_count(m); d++) {
        lode_device_stats stats;
        lode_dispatcher_device_stats(m, d, &stats);
        if (stats.hw_errors > 0)
            fprintf(stderr, "lode: error: %s: %llu hit%s failed the CPU re-check (a hardware error)\n",
                    lode_dispatcher_device(m, d)->id, (unsigned long long)stats.hw_errors,
                    stats.hw_errors == 1 ? "" : "s");
        total += stats.hw_errors;
    }
    return total;
}

/* Runs [start, start+count) of work on the selected devices through the
 * dispatcher (every hit re-checked), sorts the confirmed hits into *results
 * and counts those the re-check rejected in results->hw_errors (said on
 * stderr). Returns 0 or an exit status. */
static int scan_range(const cli_options *o, const lode_work *work, uint64_t start, uint64_t count,
                      scan_results *results)
{
    lode_device_ref *devices;
    size_t device_count;
    char err[512];
    if (lode_registry_select(o->devices, o->algo, &devices, &device_count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    if (cli_check_variant(o, o->algo, devices, device_count) != 0) {
        free(devices);
        return EXIT_USAGE;
    }
    lode_dispatcher_config config = {
        .algo = o->algo,
        .devices = devices,
        .device_count = device_count,
        .threads = o->threads,
        .variant = o->variant,
        .callbacks = {.user = results, .found = collect},
    };
    lode_dispatcher *m = lode_dispatcher_start(&config, err, sizeof err);
    free(devices);
    if (m == NULL) {
        cli_error("%s", err);
        return EXIT_RUNTIME;
    }
    int status = 0, ready = cli_wait_ready(m);
    if (ready < 0) {
        cli_note("interrupted");
        status = EXIT_INTERRUPTED;
    } else if (ready == 0) {
        cli_error("no device passed its self-test");
        status = EXIT_RUNTIME;
    } else {
        uint64_t seq = lode_dispatcher_set_job(m, work, start, start + count);
        int done;
        while ((done = lode_dispatcher_wait_job(m, seq, 100)) == 0 && !cli_interrupted())
            ;
        if (cli_interrupted()) {
            cli_note("interrupted");
            status = EXIT_INTERRUPTED;
        } else if (done < 0) {
            cli_error("every device failed before the scan finished");
            status = EXIT_RUNTIME;
        }
    }
    if (status == 0)
        results->hw_errors = count_hardware_errors(m);
    lode_dispatcher_free(m);
    if (status == 0 && results->out_of_memory) {
        cli_error("out of memory collecting hits");
        status = EXIT_RUNTIME;
    }
    if (status == 0 && results->count > 1)
        qsort(results->items, results->count, sizeof *results->items, by_hit);
    return status;
}

/* scan -a tf: one class of one exponent's bit range, indices n of
 * k = CLASS + 4620 n; prints "<n> <k> <q>" for each factor q. */
static int scan_tf(const cli_options *o)
{
    unsigned p, bit_min, bit_max, c;
    char extra;
    if (o->tf_class == NULL ||
        sscanf(o->tf_class, "%u,%u,%u,%u%c", &p, &bit_min, &bit_max, &c, &extra) != 4)
        return cli_usage_error("scan -a tf wants --tf-class EXPONENT,BIT_MIN,BIT_MAX,CLASS");
    lode_work work = {.algo = LODE_ALGO_TF,
                      .factor = {.exponent = p, .bit_min = bit_min, .bit_max = bit_max,
                                 .num_classes = LODE_TF_CLASSES, .class_index = c}};
    char why[256];
    if (lode_tf_validate_job(p, bit_min, bit_max, why, sizeof why) != 0)
        return cli_usage_error("--tf-class: %s", why);
    if (!lode_tf_job_valid(&work.factor))
        return cli_usage_error("--tf-class: class %u is not below %u", c, LODE_TF_CLASSES);
    if (!o->start_given || !o->count_given)
        return cli_usage_error("scan needs --start N and --count M");
    uint64_t nb, ne;
    lode_tf_class_range(p, bit_min, bit_max, c, &nb, &ne);
    if (o->start < nb || o->start + o->count > ne)
        return cli_usage_error("indices %llu..%llu lie outside class %u's %llu..%llu (2^%u..2^%u)",
                               (unsigned long long)o->start, (unsigned long long)(o->start + o->count - 1), c,
                               (unsigned long long)nb, (unsigned long long)(ne ? ne - 1 : 0), bit_min, bit_max);
    scan_results results = {.lock = PTHREAD_MUTEX_INITIALIZER};
    int status = scan_range(o, &work, o->start, o->count, &results);
    for (size_t i = 0; status == 0 && i < results.count; i++) {
        uint64_t n = results.items[i].hit.index, k = lode_tf_k(c, n);
        char q[48];
        lode_tf_u128_str(lode_tf_q(p, k), q);
        printf("%llu %llu %s\n", (unsigned long long)n, (unsigned long long)k, q);
    }
    free(results.items);
    return status == 0 && results.hw_errors > 0 ? EXIT_RUNTIME : status;
}

/* --versions: 1..LODE_VERSIONS_MAX distinct nVersion values, comma-separated,
 * each 8 hex digits as `lode scan` prints them. Returns 0 or -1. */
static int parse_versions(const char *text, lode_header_job *job)
{
    const size_t len = strlen(text);
    if ((len + 1) % 9 != 0 || (len + 1) / 9 > LODE_VERSIONS_MAX)
        return -1;
    job->version_count = 0;
    for (const char *p = text; p < text + len; p += 9) {
        char digits[9];
        uint8_t be[4];
        memcpy(digits, p, 8);
        digits[8] = '\0';
        if (lode_hex_decode(digits, be, 4) != 0 || (p[8] != ',' && p[8] != '\0'))
            return -1;
        const uint32_t v = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 | (uint32_t)be[2] << 8 | be[3];
        for (uint32_t k = 0; k < job->version_count; k++)
            if (job->versions[k] == v)
                return -1; /* each version once */
        job->versions[job->version_count++] = v;
    }
    return 0;
}

int cmd_scan(const cli_options *o)
{
    lode_work work = {.algo = o->algo};
    if (!o->algo_given)
        return cli_usage_error("scan needs --algo (%s)", lode_algo_names());
    if (lode_algo_get(o->algo)->kind == LODE_WORK_TF)
        return scan_tf(o);
    if (o->header == NULL || lode_hex_decode(o->header, work.header.header, 80) != 0)
        return cli_usage_error("--header wants an 80-byte header as 160 hex digits");
    /* Momentum: the target is optional (every pair), and the header nonces
     * to search default to the header's own. */
    const bool collisions = lode_algo_get(o->algo)->kind == LODE_WORK_COLLISION_SEARCH;
    uint64_t start = o->start, count = o->count;
    if (collisions && o->target == NULL)
        memset(work.header.target.w, 0xff, sizeof work.header.target.w);
    else if (o->target == NULL || lode_target_parse_hex(o->target, &work.header.target) != 0)
        return cli_usage_error("--target wants 64 hex digits, most significant first");
    if (collisions && !o->start_given && !o->count_given) {
        const uint8_t *n = work.header.header + 76;
        start = (uint32_t)n[0] | (uint32_t)n[1] << 8 | (uint32_t)n[2] << 16 | (uint32_t)n[3] << 24;
        count = 1;
    } else if (!o->start_given || !o->count_given) {
        return cli_usage_error("scan needs --start N and --count M");
    }
    if (start + count > (UINT64_C(1) << 32))
        return cli_usage_error("nonces %llu..%llu run past 4294967295",
                               (unsigned long long)start,
                               (unsigned long long)(start + count - 1));
    if (o->versions != NULL && o->algo != LODE_ALGO_SHA256D)
        return cli_usage_error("--versions is for sha256d (its version-rolled jobs), not %s",
                               lode_algo_get(o->algo)->name);
    if (o->versions != NULL && parse_versions(o->versions, &work.header) != 0)
        return cli_usage_error("--versions wants 1 to %d distinct versions of 8 hex digits, comma-separated "
                               "(e.g. 20000000,20002000), not '%s'", LODE_VERSIONS_MAX, o->versions);

    scan_results results = {.lock = PTHREAD_MUTEX_INITIALIZER};
    int status = scan_range(o, &work, start, count, &results);
    if (status == 0) {
        if (collisions)
            print_collisions(o, &work, &results);
        for (size_t i = 0; i < results.count && !collisions; i++) {
            char hex[65];
            lode_hex_encode_reversed(results.items[i].hash, 32, hex);
            if (work.header.version_count > 0)
                printf("%llu %08x %s\n", (unsigned long long)results.items[i].hit.index,
                       (unsigned)results.items[i].hit.version, hex);
            else
                printf("%llu %s\n", (unsigned long long)results.items[i].hit.index, hex);
        }
    }
    free(results.items);
    /* The confirmed hits are printed; a device that reported others is a
     * hardware error all the same. */
    return status == 0 && results.hw_errors > 0 ? EXIT_RUNTIME : status;
}

int cmd_hash(const cli_options *o)
{
    uint8_t header[88], hash[32];
    char hex[65];
    if (!o->algo_given)
        return cli_usage_error("hash needs --algo (%s)", lode_algo_names());
    if (lode_algo_get(o->algo)->pow_hash_ref == NULL &&
        lode_algo_get(o->algo)->kind != LODE_WORK_COLLISION_SEARCH)
        return cli_usage_error("hash is for block headers, not %s (trial factoring: lode tf --help)",
                               lode_algo_get(o->algo)->name);
    if (lode_algo_get(o->algo)->kind == LODE_WORK_COLLISION_SEARCH) {
        /* Momentum: the 88-byte header; whether its pair collides (the
         * protocol's momentum_verify), then GetHash() (all ones if not). */
        if (o->operand == NULL || lode_hex_decode(o->operand, header, 88) != 0)
            return cli_usage_error("hash wants one 88-byte header as 176 hex digits");
        uint8_t mid[32];
        lode_ref_momentum_midhash(header, mid);
        uint32_t a = 0, b = 0;
        for (int i = 3; i >= 0; i--) {
            a = a << 8 | header[80 + i];
            b = b << 8 | header[84 + i];
        }
        if (lode_ref_momentum_block_hash(header, hash))
            printf("collision %u %u birthday %013llx\n", a, b,
                   (unsigned long long)lode_ref_momentum_birthday(mid, a));
        else
            printf("no collision %u %u\n", a, b);
        lode_hex_encode_reversed(hash, sizeof hash, hex);
        printf("%s\n", hex);
        return 0;
    }
    if (o->operand == NULL || lode_hex_decode(o->operand, header, 80) != 0)
        return cli_usage_error("hash wants one 80-byte header as 160 hex digits");
    lode_algo_get(o->algo)->pow_hash_ref(header, hash);
    lode_hex_encode_reversed(hash, sizeof hash, hex);
    printf("%s\n", hex);
    return 0;
}
