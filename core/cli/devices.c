/* `lode --list-devices`, `lode --selftest` and `lode tf --selftest`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/status.h"
#include "core/base/text.h"
#include "core/cli/devices.h"
#include "core/cli/messages.h"
#include "core/cli/options.h"
#include "core/cli/report.h"
#include "core/cli/signals.h"
#include "core/dispatch/registry.h"
#include "core/dispatch/selftest.h"
#include "core/dispatch/tf_selftest.h"

#define MAX_VARIANTS 16

int cmd_list_devices(void)
{
    lode_device_ref *devices;
    size_t count;
    if (lode_registry_enumerate(&devices, &count) != 0) {
        cli_error("out of memory while listing devices");
        return EXIT_RUNTIME;
    }
    for (size_t b = 0; b < lode_backend_count(); b++) {
        const char *name = lode_backend_name(b);
        char why[LODE_WHY_LEN];
        if (lode_backend_probe(b, why) != 0) {
            printf("%s: unavailable: %s\n", name, why);
            continue;
        }
        size_t listed = 0;
        for (size_t d = 0; d < count; d++) {
            const lode_device_ref *ref = &devices[d];
            if (strcmp(lode_device_backend_name(ref), name) != 0)
                continue;
            listed++;
            printf("%s  %s", ref->id, ref->info.name);
            if (ref->info.bus_id[0])
                printf("  [%s]", ref->info.bus_id);
            printf("\n    workers %u (up to %u), memory %.1f GiB\n", ref->info.workers,
                   ref->info.max_workers, (double)ref->info.memory_bytes / (1u << 30));
            if (ref->info.details[0] != '\0')
                printf("    %s\n", ref->info.details);
            char sensors[160];
            cli_device_sensors_text(ref, sensors, sizeof sensors);
            if (sensors[0] != '\0')
                printf("    sensors now:%s\n", sensors);
            for (int a = 0; a < LODE_ALGO_COUNT; a++) {
                if (!((ref->info.algo_mask >> a) & 1u))
                    continue;
                const char *names[MAX_VARIANTS];
                int k = lode_device_variants(ref, (lode_algo)a, names, MAX_VARIANTS);
                printf("    %-8s variants:", lode_algo_get((lode_algo)a)->name);
                for (int v = 0; v < k; v++)
                    printf(" %s", names[v] ? names[v] : "default");
                printf("\n");
            }
        }
        if (listed == 0)
            printf("%s: no devices\n", name);
    }
    free(devices);
    return 0;
}

int cli_check_variant(const cli_options *o, lode_algo algo, const lode_device_ref *devices,
                      size_t count)
{
    if (o->variant == NULL)
        return 0;
    char valid[512] = "";
    size_t len = 0;
    for (size_t d = 0; d < count; d++) {
        const char *names[MAX_VARIANTS];
        int k = lode_device_variants(&devices[d], algo, names, MAX_VARIANTS);
        len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s:", d ? "; " : "", devices[d].id);
        if (len >= sizeof valid)
            len = sizeof valid - 1;
        bool named = false;
        for (int v = 0; v < k; v++) {
            if (names[v] == NULL)
                continue;
            if (strcmp(names[v], o->variant) == 0)
                return 0;
            named = true;
            len += (size_t)snprintf(valid + len, sizeof valid - len, " %s", names[v]);
            if (len >= sizeof valid)
                len = sizeof valid - 1;
        }
        if (!named) {
            len += (size_t)snprintf(valid + len, sizeof valid - len, " none (one implementation)");
            if (len >= sizeof valid)
                len = sizeof valid - 1;
        }
    }
    return cli_usage_error("no selected device has a %s variant '%s'; valid variants: %s",
                           lode_algo_get(algo)->name, o->variant, valid);
}

/* Devices that run algo but that the default selection leaves out (an
 * OpenCL driver on the host CPU, which the cpu backend already uses): one
 * line each, so a self-test never skips a device silently. */
static int print_skipped(lode_algo algo, const lode_device_ref *chosen, size_t chosen_count)
{
    lode_device_ref *all;
    size_t n;
    if (lode_registry_enumerate(&all, &n) != 0)
        return 0;
    int skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (!((all[i].info.algo_mask >> algo) & 1u))
            continue;
        bool selected = false;
        for (size_t k = 0; k < chosen_count && !selected; k++)
            selected = strcmp(chosen[k].id, all[i].id) == 0;
        if (selected)
            continue;
        printf("%-8s %-8s %-8s skipped: %s; test it with -d %s\n", all[i].id, lode_algo_get(algo)->name,
               "-",
               all[i].info.on_host_cpu ? "not used by default, it computes on the host CPU that the cpu "
                                         "backend already uses"
                                       : "not selected by default",
               all[i].id);
        skipped++;
    }
    free(all);
    return skipped;
}

/* One variant of one device: LODE_OK, or an error with why. A stop ends it
 * early (its scans poll cli_stop_flag); the caller then ignores it. */
static int selftest_variant(const cli_options *o, const lode_device_ref *device, lode_algo algo,
                            const char *variant, char *why, size_t why_len)
{
    lode_open_params params = {.algo = algo, .variant = variant};
    lode_handle h;
    int rc = lode_handle_open(&h, device, &params);
    if (rc == LODE_OK)
        rc = (algo == LODE_ALGO_TF && o->command == CLI_CMD_TF
                  ? lode_tf_selftest_handle(&h, false, cli_stop_flag(), why, why_len)
                  : lode_selftest_handle(&h, cli_stop_flag(), why, why_len)) == 0
                 ? LODE_OK
                 : LODE_ERR_DEVICE;
    else
        snprintf(why, why_len, "cannot open: %s", lode_status_str(rc));
    lode_handle_close(&h);
    return rc;
}

/* What a self-test run gave: counts, and for `lode tf --selftest` the
 * devices tested and the variants that failed. */
typedef struct selftest_tally {
    int runs, failures, skipped;
    char devices[512], failed[512];
    size_t devices_used, failed_used;
} selftest_tally;

/* Every variant of one device (or the one --variant names). */
static void selftest_device(const cli_options *o, const lode_device_ref *device, lode_algo algo,
                            selftest_tally *t)
{
    const char *names[MAX_VARIANTS];
    int k = lode_device_variants(device, algo, names, MAX_VARIANTS);
    bool ran = false;
    for (int v = 0; v < k && !cli_interrupted(); v++) {
        if (o->variant != NULL && (names[v] == NULL || strcmp(names[v], o->variant) != 0))
            continue;
        char why[512];
        int rc = selftest_variant(o, device, algo, names[v], why, sizeof why);
        if (cli_interrupted())
            break; /* cut short: its outcome says nothing */
        const char *variant = names[v] ? names[v] : "default";
        printf("%-8s %-8s %-8s %s%s\n", device->id, lode_algo_get(algo)->name, variant,
               rc == LODE_OK ? "ok" : "FAILED: ", rc == LODE_OK ? "" : why);
        t->runs++;
        ran = true;
        if (rc != LODE_OK) {
            t->failures++;
            lode_appendf(t->failed, sizeof t->failed, &t->failed_used, "%s%s (%s)", t->failed_used ? ", " : "",
                         device->id, variant);
        }
    }
    if (ran)
        lode_appendf(t->devices, sizeof t->devices, &t->devices_used, "%s%s", t->devices_used ? ", " : "",
                     device->id);
}

/* `lode tf --selftest`'s last line: how many known factors on which
 * devices, and whether every one was found. */
static void print_tf_outcome(const selftest_tally *t)
{
    printf("tf self-test: %zu known factors on %s: %s%s", lode_tf_selftest_count(false), t->devices,
           t->failures ? "NOT all found, FAILED on " : "all found", t->failures ? t->failed : "");
    if (t->skipped)
        printf("; %d device%s skipped (above)", t->skipped, t->skipped == 1 ? "" : "s");
    printf("\n");
}

/* Every vector on every variant of every selected device: what a device
 * must pass before it gets work, here for all of its implementations.
 * `lode tf --selftest` (o->command CLI_CMD_TF) runs the whole known-factor
 * set of trial factoring, not the short one a worker runs at start, and
 * ends with a line naming how many on which devices. A stop (Ctrl-C) ends
 * the test running and the rest: status 130. */
int cmd_selftest(const cli_options *o)
{
    selftest_tally t = {0};
    for (int a = 0; a < LODE_ALGO_COUNT && !cli_interrupted(); a++) {
        if (o->algo_given && (lode_algo)a != o->algo)
            continue;
        lode_device_ref *devices;
        size_t count;
        char err[512];
        if (lode_registry_select(o->devices, (lode_algo)a, &devices, &count, err, sizeof err) != 0) {
            if (o->algo_given || o->devices != NULL)
                return cli_usage_error("%s", err);
            continue; /* no device runs this algorithm: nothing to test */
        }
        if (o->algo_given && cli_check_variant(o, (lode_algo)a, devices, count) != 0) {
            free(devices);
            return EXIT_USAGE;
        }
        if (o->devices == NULL)
            t.skipped += print_skipped((lode_algo)a, devices, count);
        for (size_t d = 0; d < count && !cli_interrupted(); d++)
            selftest_device(o, &devices[d], (lode_algo)a, &t);
        free(devices);
    }
    if (cli_interrupted()) {
        printf("%d passed, %d failed, %d skipped, then interrupted\n", t.runs - t.failures, t.failures, t.skipped);
        fprintf(stderr, "lode: interrupted\n");
        return EXIT_INTERRUPTED;
    }
    if (t.runs == 0)
        return cli_usage_error("nothing to self-test (check --devices, --algo and --variant)");
    if (o->command == CLI_CMD_TF)
        print_tf_outcome(&t);
    else
        printf("%d passed, %d failed, %d skipped\n", t.runs - t.failures, t.failures, t.skipped);
    return t.failures ? EXIT_RUNTIME : 0;
}
