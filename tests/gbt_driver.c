/* By-hand end-to-end check of the getblocktemplate source (not a ctest):
 *   gbt_driver URL USER PASS ADDRESS ALGO BLOCKS [SECONDS [POLL_S]]
 * mines on the CPU backend through the mining session until BLOCKS blocks
 * were accepted or SECONDS (default 120) passed; exit 0 if enough were
 * accepted. USER "-" means PASS is the node's cookie file. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/gbt/gbt_client.h"
#include "core/log.h"
#include "core/mining.h"
#include "core/registry.h"

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s URL USER PASS ADDRESS ALGO BLOCKS [SECONDS [POLL_S]]\n", argv[0]);
        return 2;
    }
    lode_log_configure(false, false);
    lode_gbt_config config = {.url = argv[1], .payout_address = argv[4], .poll_s = 2};
    if (strcmp(argv[2], "-") == 0)
        config.cookie_file = argv[3];
    else
        config.user = argv[2], config.pass = argv[3];
    if (lode_algo_parse(argv[5], &config.algo) != 0) {
        fprintf(stderr, "unknown algorithm %s\n", argv[5]);
        return 2;
    }
    long want = atol(argv[6]);
    long seconds = argc > 7 ? atol(argv[7]) : 120;
    if (argc > 8)
        config.poll_s = atof(argv[8]);

    char err[256];
    lode_gbt *g = lode_gbt_create(&config, err, sizeof err);
    if (!g) {
        fprintf(stderr, "gbt: %s\n", err);
        return 2;
    }
    lode_device_ref *devices = NULL;
    size_t device_count = 0;
    if (lode_registry_select("cpu", config.algo, &devices, &device_count, err, sizeof err) != 0) {
        fprintf(stderr, "devices: %s\n", err);
        return 1;
    }
    lode_mining_config mc = {
        .miner = {.algo = config.algo, .devices = devices, .device_count = device_count,
                  .threads = 2},
        .source_ops = &lode_gbt_source_ops,
        .source = g,
    };
    lode_mining *mining = lode_mining_start(&mc, err, sizeof err);
    free(devices);
    if (!mining) {
        fprintf(stderr, "mining: %s\n", err);
        return 1;
    }
    if (lode_gbt_start(g, mining) != 0) {
        fprintf(stderr, "gbt: cannot start its threads\n");
        return 1;
    }
    lode_gbt_stats stats = {0};
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        lode_gbt_stats_get(g, &stats);
        if ((long)stats.accepted >= want)
            break;
        usleep(100000);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lode_gbt_stop(g);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    lode_gbt_stats_get(g, &stats);
    lode_mining_free(mining);
    lode_gbt_free(g);
    printf("submitted %llu accepted %llu rejected %llu stale %llu height %llu connected %d "
           "last_reject \"%s\" stop %.3f s\n",
           (unsigned long long)stats.submitted, (unsigned long long)stats.accepted,
           (unsigned long long)stats.rejected, (unsigned long long)stats.stale,
           (unsigned long long)stats.height, stats.connected, stats.last_reject,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return (long)stats.accepted >= want ? 0 : 1;
}
