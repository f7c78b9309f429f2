/* `lode scan` and `lode hash`: the exact, scriptable interface for checking
 * any backend by hand. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli/cli.h"
#include "core/dispatch.h"
#include "core/hex.h"
#include "core/target.h"

typedef struct scan_results {
    pthread_mutex_t lock;
    lode_found *items;
    size_t count, capacity;
    bool out_of_memory;
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

static int by_index(const void *a, const void *b)
{
    uint64_t x = ((const lode_found *)a)->hit.index, y = ((const lode_found *)b)->hit.index;
    return x < y ? -1 : x > y;
}

int cmd_scan(const cli_options *o)
{
    lode_work work = {.algo = o->algo};
    if (!o->algo_given)
        return cli_usage_error("scan needs --algo (%s)", lode_algo_names());
    if (o->header == NULL || lode_hex_decode(o->header, work.header.header, 80) != 0)
        return cli_usage_error("--header wants an 80-byte header as 160 hex digits");
    if (o->target == NULL || lode_target_parse_hex(o->target, &work.header.target) != 0)
        return cli_usage_error("--target wants 64 hex digits, most significant first");
    if (!o->start_given || !o->count_given)
        return cli_usage_error("scan needs --start N and --count M");
    if (o->start + o->count > (UINT64_C(1) << 32))
        return cli_usage_error("nonces %llu..%llu run past 4294967295",
                               (unsigned long long)o->start,
                               (unsigned long long)(o->start + o->count - 1));

    lode_device_ref *devices;
    size_t device_count;
    char err[512];
    if (lode_registry_select(o->devices, o->algo, &devices, &device_count, err, sizeof err) != 0)
        return cli_usage_error("%s", err);

    scan_results results = {.lock = PTHREAD_MUTEX_INITIALIZER};
    lode_miner_config config = {
        .algo = o->algo,
        .devices = devices,
        .device_count = device_count,
        .threads = o->threads,
        .variant = o->variant,
        .callbacks = {.user = &results, .found = collect},
    };
    lode_miner *m = lode_miner_start(&config, err, sizeof err);
    free(devices);
    if (m == NULL) {
        fprintf(stderr, "lode: error: %s\n", err);
        return EXIT_RUNTIME;
    }
    int status = 0, ready = cli_wait_ready(m);
    if (ready < 0) {
        fprintf(stderr, "lode: interrupted\n");
        status = EXIT_INTERRUPTED;
    } else if (ready == 0) {
        fprintf(stderr, "lode: error: no device passed its self-test\n");
        status = EXIT_RUNTIME;
    } else {
        uint64_t seq = lode_miner_set_job(m, &work, o->start, o->start + o->count);
        int done;
        while ((done = lode_miner_wait_job(m, seq, 100)) == 0 && !cli_interrupted())
            ;
        if (cli_interrupted()) {
            fprintf(stderr, "lode: interrupted\n");
            status = EXIT_INTERRUPTED;
        } else if (done < 0) {
            fprintf(stderr, "lode: error: every device failed before the scan finished\n");
            status = EXIT_RUNTIME;
        }
    }
    lode_miner_free(m);
    if (status == 0 && results.out_of_memory) {
        fprintf(stderr, "lode: error: out of memory collecting hits\n");
        status = EXIT_RUNTIME;
    }
    if (status == 0) {
        if (results.count > 1)
            qsort(results.items, results.count, sizeof *results.items, by_index);
        for (size_t i = 0; i < results.count; i++) {
            char hex[65];
            lode_hex_encode_reversed(results.items[i].hash, 32, hex);
            printf("%llu %s\n", (unsigned long long)results.items[i].hit.index, hex);
        }
    }
    free(results.items);
    return status;
}

int cmd_hash(const cli_options *o)
{
    uint8_t header[80], hash[32];
    char hex[65];
    if (!o->algo_given)
        return cli_usage_error("hash needs --algo (%s)", lode_algo_names());
    if (o->operand == NULL || lode_hex_decode(o->operand, header, sizeof header) != 0)
        return cli_usage_error("hash wants one 80-byte header as 160 hex digits");
    lode_algo_get(o->algo)->pow_hash_ref(header, hash);
    lode_hex_encode_reversed(hash, sizeof hash, hex);
    printf("%s\n", hex);
    return 0;
}
