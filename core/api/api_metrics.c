/* The Prometheus text exposition (format 0.0.4) of the sampler's newest
 * snapshot: build, devices, sensors, pools, and for lode tf its progress
 * and PrimeNet client. The help texts speak the run's words: candidates
 * and proof entries in a tf run, hashes and hits otherwise. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api_internal.h"
#include "core/base/clock.h"
#include "core/base/device_state.h"

/* A label value: cleaned as JSON strings are (valid UTF-8, no control
 * characters), then backslash and double quote escaped. */
static void put_label(FILE *f, const char *v)
{
    char *clean = api_clean_text(v);
    for (const char *p = clean ? clean : "?"; *p; p++) {
        if (*p == '\\' || *p == '"')
            fputc('\\', f);
        fputc(*p, f);
    }
    free(clean);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_value(FILE *f, double v)
{
    if (isnan(v))
        fputs("NaN\n", f);
    else
        fprintf(f, "%.17g\n", v);
}

static void device_sample(FILE *f, const char *name, const lode_api_device *dev, const char *extra_label,
                          const char *extra_value, double v)
{
    fprintf(f, "%s{device=\"", name);
    put_label(f, dev->id);
    fputc('"', f);
    if (extra_label) {
        fprintf(f, ",%s=\"", extra_label);
        put_label(f, extra_value);
        fputc('"', f);
    }
    fputs("} ", f);
    put_value(f, v);
}

/* Each device's counters, rate and state. */
static void device_counters(FILE *f, const api_state *s, const lode_api_snapshot *snap, bool tf)
{
    const size_t nd = snap->device_count;
    family(f, "lode_device_info", "gauge", "Always 1: a device's name, backend and variant.");
    for (size_t d = 0; d < nd; d++) {
        const lode_api_device *dev = &snap->devices[d];
        fputs("lode_device_info{device=\"", f);
        put_label(f, dev->id);
        fputs("\",name=\"", f);
        put_label(f, dev->name);
        fputs("\",backend=\"", f);
        put_label(f, dev->backend);
        fputs("\",variant=\"", f);
        put_label(f, dev->variant);
        fputs("\"} 1\n", f);
    }
    family(f, "lode_hashes_total", "counter",
           tf ? "Candidates (k of the needed classes) a device has tested." : "Nonces (indices) a device has scanned.");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_hashes_total", &snap->devices[d], NULL, NULL, (double)snap->devices[d].hashes);
    family(f, "lode_hits_total", "counter",
           tf ? "q a device reported that the CPU re-check confirmed: passing the proof's test (the primes "
                "among them are lode_tf_proof_entries_total), or factors."
              : "Hits a device found that the CPU re-check confirmed.");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_hits_total", &snap->devices[d], NULL, NULL, (double)snap->devices[d].hits);
    family(f, "lode_hardware_errors_total", "counter",
           tf ? "q a device reported that the CPU re-check refused (neither a proof entry nor a factor)."
              : "Hits a device reported that the CPU re-check refused.");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_hardware_errors_total", &snap->devices[d], NULL, NULL,
                      (double)snap->devices[d].hw_errors);
    family(f, "lode_hits_expected_total", "counter",
           "Hits the hashes counted should have given (SHA-256d, scrypt; 0 otherwise).");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_hits_expected_total", &snap->devices[d], NULL, NULL, snap->devices[d].hits_expected);
    family(f, "lode_hits_dropped_total", "counter", "Hits dropped unchecked: their job had ended (a clean job).");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_hits_dropped_total", &snap->devices[d], NULL, NULL,
                      (double)snap->devices[d].hits_dropped);
    family(f, "lode_device_scans_in_flight", "gauge",
           "Scans a device's workers have claimed whose hashes are not counted yet.");
    for (size_t d = 0; d < nd; d++)
        device_sample(f, "lode_device_scans_in_flight", &snap->devices[d], NULL, NULL,
                      (double)snap->devices[d].scans_in_flight);
    family(f, "lode_device_hashrate", "gauge",
           tf ? "Candidates per second over the last 60 seconds." : "Hashes per second over the last 60 seconds.");
    for (size_t d = 0; d < nd; d++) {
        double r = api_device_rate(s, d, 60);
        if (isfinite(r))
            device_sample(f, "lode_device_hashrate", &snap->devices[d], NULL, NULL, r);
    }
    family(f, "lode_device_state", "gauge", "1 for the state a device is in, 0 for the others.");
    for (size_t d = 0; d < nd; d++)
        for (int k = 0; k < LODE_DEVICE_STATE_COUNT; k++) {
            const char *state = lode_device_state_name((lode_device_state)k);
            device_sample(f, "lode_device_state", &snap->devices[d], "state", state,
                          strcmp(snap->devices[d].state, state) == 0);
        }
}

/* The sensors a device has (an absent one gives no sample). */
static void device_sensors(FILE *f, const lode_api_snapshot *snap)
{
    const size_t nd = snap->device_count;
    static const struct {
        uint32_t bit;
        const char *name, *help;
        size_t field; /* offset of the reading in lode_sensors */
        double scale;
    } sensors[] = {
        {LODE_SENSOR_TEMP, "lode_device_temperature_celsius", "The device's hottest temperature sensor.",
         offsetof(lode_sensors, temp_c), 1},
        {LODE_SENSOR_POWER, "lode_device_power_watts", "Board (GPU) or package (CPU) power.",
         offsetof(lode_sensors, power_w), 1},
        {LODE_SENSOR_FAN, "lode_device_fan_ratio", "Fan speed, 0 to 1 of its maximum.",
         offsetof(lode_sensors, fan_percent), 0.01},
    };
    for (size_t k = 0; k < sizeof sensors / sizeof sensors[0]; k++) {
        bool any = false;
        for (size_t d = 0; d < nd; d++)
            any |= (snap->devices[d].sensors.present & sensors[k].bit) != 0;
        if (!any)
            continue; /* an absent sensor gives no sample */
        family(f, sensors[k].name, "gauge", sensors[k].help);
        for (size_t d = 0; d < nd; d++) {
            const lode_sensors *se = &snap->devices[d].sensors;
            if (!(se->present & sensors[k].bit))
                continue;
            double v;
            memcpy(&v, (const char *)se + sensors[k].field, sizeof v);
            device_sample(f, sensors[k].name, &snap->devices[d], NULL, NULL, v * sensors[k].scale);
        }
    }
    bool clocks = false;
    for (size_t d = 0; d < nd; d++)
        clocks |= (snap->devices[d].sensors.present & (LODE_SENSOR_SM_CLOCK | LODE_SENSOR_MEM_CLOCK)) != 0;
    if (clocks) {
        family(f, "lode_device_clock_hertz", "gauge", "Clock frequencies: the cores (sm) and memory (mem).");
        for (size_t d = 0; d < nd; d++) {
            const lode_sensors *se = &snap->devices[d].sensors;
            if (se->present & LODE_SENSOR_SM_CLOCK)
                device_sample(f, "lode_device_clock_hertz", &snap->devices[d], "clock", "sm",
                              se->sm_clock_mhz * 1e6);
            if (se->present & LODE_SENSOR_MEM_CLOCK)
                device_sample(f, "lode_device_clock_hertz", &snap->devices[d], "clock", "mem",
                              se->mem_clock_mhz * 1e6);
        }
    }
}

/* NVML's form of a PCI bus id, as DCGM's pci_bus_id label has it:
 * "00000000:41:00.0" (an 8-digit domain, upper-case hex). */
static void dcgm_bus_id(const char *bus_id, char *out, size_t len)
{
    unsigned domain = 0, bus, dev, fn;
    if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4 &&
        (domain = 0, sscanf(bus_id, "%x:%x.%x", &bus, &dev, &fn) != 3)) {
        snprintf(out, len, "%s", bus_id);
        return;
    }
    snprintf(out, len, "%08X:%02X:%02X.%X", domain, bus, dev, fn);
}

/* Joules since each device began counting work. An NVIDIA GPU's sample
 * carries DCGM exporter's labels for it (gpu, UUID, pci_bus_id,
 * modelName), so `on(UUID)` joins it to DCGM's series of the same GPU. */
static void device_energy(FILE *f, const lode_api_snapshot *snap)
{
    bool any = false;
    for (size_t d = 0; d < snap->device_count; d++)
        any |= snap->devices[d].energy.measured;
    if (!any)
        return;
    family(f, "lode_device_energy_joules_total", "counter",
           "Energy a device used since it began counting work: its energy counter where it has one, else its "
           "power integrated.");
    for (size_t d = 0; d < snap->device_count; d++) {
        const lode_api_device *dev = &snap->devices[d];
        if (!dev->energy.measured)
            continue;
        fputs("lode_device_energy_joules_total{device=\"", f);
        put_label(f, dev->id);
        if (dev->uuid[0] != '\0') {
            char bus[32];
            dcgm_bus_id(dev->bus_id, bus, sizeof bus);
            fprintf(f, "\",gpu=\"%u\",UUID=\"", dev->nvml_index);
            put_label(f, dev->uuid);
            fputs("\",pci_bus_id=\"", f);
            put_label(f, bus);
            fputs("\",modelName=\"", f);
            put_label(f, dev->name);
        }
        fputs("\"} ", f);
        put_value(f, dev->energy.joules);
    }
}

/* Each pool's (node's) shares and state. */
static void pool_metrics(FILE *f, const lode_api_snapshot *snap)
{
    const size_t np = snap->pool_count;
    family(f, "lode_shares_total", "counter",
           "Shares (solo: blocks) by what became of them: the pool's answer (accepted, rejected, "
           "stale), or never answered (dropped: job ended; unsent: a flood; unanswered).");
    static const char *const results[] = {"accepted", "rejected", "stale", "dropped", "unsent", "unanswered"};
    for (size_t p = 0; p < np; p++) {
        const lode_api_pool *pl = &snap->pools[p];
        const uint64_t v[] = {pl->accepted, pl->rejected, pl->stale, pl->dropped, pl->unsent, pl->unanswered};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            fputs("lode_shares_total{pool=\"", f);
            put_label(f, pl->url);
            fprintf(f, "\",result=\"%s\"} %llu\n", results[k], (unsigned long long)v[k]);
        }
    }
    family(f, "lode_pool_active", "gauge", "1 for the pool lode mines on, 0 for the others.");
    for (size_t p = 0; p < np; p++) {
        fputs("lode_pool_active{pool=\"", f);
        put_label(f, snap->pools[p].url);
        fprintf(f, "\"} %d\n", snap->pools[p].active);
    }
    family(f, "lode_pool_connected", "gauge", "1 while connected (subscribed) to the pool.");
    for (size_t p = 0; p < np; p++) {
        fputs("lode_pool_connected{pool=\"", f);
        put_label(f, snap->pools[p].url);
        fprintf(f, "\"} %d\n", snap->pools[p].connected);
    }
}

/* lode tf: the run's counters, the running assignment, each device's
 * GHz-days/day and proof entries, and the PrimeNet client. */
static void tf_metrics(FILE *f, const api_state *s, const lode_api_snapshot *snap)
{
    const lode_api_tf *tf = &snap->tf;
    family(f, "lode_tf_classes_done_total", "counter", "Trial-factoring classes finished since start.");
    fprintf(f, "lode_tf_classes_done_total %llu\n", (unsigned long long)tf->classes_done_total);
    family(f, "lode_tf_assignments_done_total", "counter", "Trial-factoring assignments finished since start.");
    fprintf(f, "lode_tf_assignments_done_total %llu\n", (unsigned long long)tf->assignments_done);
    family(f, "lode_tf_factors_found_total", "counter", "Factors found since start, counted as their class completes.");
    fprintf(f, "lode_tf_factors_found_total %llu\n", (unsigned long long)tf->factors_found);
    if (snap->device_count) {
        family(f, "lode_tf_proof_entries_total", "counter",
               "Primes for the proof's list a device found (2^25 and up; a factor is one too).");
        for (size_t d = 0; d < snap->device_count; d++)
            device_sample(f, "lode_tf_proof_entries_total", &snap->devices[d], NULL, NULL,
                          (double)snap->devices[d].proof_entries);
    }
    if (tf->running) {
        family(f, "lode_tf_progress_ratio", "gauge", "Classes done of the current assignment, 0 to 1.");
        fprintf(f, "lode_tf_progress_ratio{exponent=\"%u\",bit_min=\"%u\",bit_max=\"%u\"} ", tf->exponent,
                tf->bit_min, tf->bit_max);
        put_value(f, tf->classes_total ? (double)tf->classes_done / tf->classes_total : 0);
        if (tf->ghz_days_per_day >= 0) {
            family(f, "lode_tf_credit_rate", "gauge",
                   "Trial-factoring throughput: GHz-days of PrimeNet credit per day (GHz-days/day).");
            fprintf(f, "lode_tf_credit_rate ");
            put_value(f, tf->ghz_days_per_day);
        }
        if (tf->eta_s >= 0) {
            family(f, "lode_tf_eta_seconds", "gauge", "Estimated seconds until the assignment is done.");
            fprintf(f, "lode_tf_eta_seconds ");
            put_value(f, tf->eta_s);
        }
        bool any = false;
        for (size_t d = 0; d < snap->device_count; d++) {
            double r = api_device_credit_rate(s, d, 60);
            if (!isfinite(r))
                continue;
            if (!any)
                family(f, "lode_tf_device_credit_rate", "gauge",
                       "A device's GHz-days/day over the last 60 seconds, at the running assignment's credit.");
            any = true;
            device_sample(f, "lode_tf_device_credit_rate", &snap->devices[d], NULL, NULL, r);
        }
    }
    const lode_api_primenet *pn = &snap->primenet;
    family(f, "lode_primenet_enabled", "gauge", "1 when lode tf runs its PrimeNet client, 0 without.");
    fprintf(f, "lode_primenet_enabled %d\n", pn->enabled ? 1 : 0);
    if (!pn->enabled)
        return;
    family(f, "lode_primenet_state", "gauge", "Always 1; the label says what the PrimeNet client is doing.");
    fputs("lode_primenet_state{state=\"", f);
    put_label(f, pn->state);
    fputs("\"} 1\n", f);
    family(f, "lode_primenet_results_sent_total", "counter", "Results the PrimeNet client has sent.");
    fprintf(f, "lode_primenet_results_sent_total %u\n", pn->results_sent);
    family(f, "lode_primenet_results_queued", "gauge", "Results written and not sent yet.");
    fprintf(f, "lode_primenet_results_queued %u\n", pn->results_queued);
    family(f, "lode_primenet_assignments_queued", "gauge", "Assignments in the worktodo file.");
    fprintf(f, "lode_primenet_assignments_queued %u\n", pn->assignments_queued);
    if (pn->next_contact_s >= 0) {
        family(f, "lode_primenet_next_contact_seconds", "gauge", "Seconds until the client next contacts PrimeNet.");
        fprintf(f, "lode_primenet_next_contact_seconds ");
        put_value(f, pn->next_contact_s);
    }
}

char *api_render_metrics(api_state *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    const lode_api_config *c = &s->config;
    const lode_api_snapshot *snap = s->last;
    size_t nd = snap ? snap->device_count : 0, np = snap ? snap->pool_count : 0;
    const bool tf = strcmp(c->source_kind, "tf") == 0;

    family(f, "lode_build_info", "gauge", "Always 1; the labels say which lode runs what.");
    fputs("lode_build_info{version=\"", f);
    put_label(f, c->version);
    fputs("\",algorithm=\"", f);
    put_label(f, c->algorithm);
    fputs("\",source=\"", f);
    put_label(f, c->source_kind);
    fputs("\"} 1\n", f);
    family(f, "lode_start_time_seconds", "gauge", "When lode started, in seconds since the Unix epoch.");
    fprintf(f, "lode_start_time_seconds %.3f\n", s->start_wall);
    family(f, "lode_uptime_seconds", "gauge", "Seconds since lode started.");
    fprintf(f, "lode_uptime_seconds %.3f\n", lode_clock_s() - s->start_mono);

    if (nd) {
        device_counters(f, s, snap, tf);
        device_sensors(f, snap);
        device_energy(f, snap);
    }
    if (np)
        pool_metrics(f, snap);
    if (snap && tf)
        tf_metrics(f, s, snap);
    pthread_mutex_unlock(&s->lock);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
