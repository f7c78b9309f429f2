/* The API's renderers (core/api/api_internal.h) on snapshots this test
 * makes, parsed back with jansson: the PrimeNet section of a tf run as its
 * client reports it (texts cut at their size and cleaned, an unknown next
 * contact null, an empty error null), {"enabled": false} without a client,
 * no section outside tf, and the metrics of each. */
#include <string.h>

#include "core/api/api_internal.h"
#include "tests/test_util.h"

typedef struct fake {
    const char *kind;
    lode_api_primenet primenet;
} fake;

static void fake_snapshot(void *user, lode_api_snapshot *out)
{
    const fake *f = user;
    out->device_count = 1;
    snprintf(out->devices[0].id, sizeof out->devices[0].id, "cpu:0");
    out->devices[0].hashes = 1000;
    out->devices[0].proof_entries = 7;
    out->devices[0].factors = 1;
    out->tf = (lode_api_tf){.running = true, .exponent = 100003, .bit_min = 1, .bit_max = 53,
                            .classes_total = 960, .ghz_days = 0.012, .candidates = 9357848361u,
                            .factors = 1, .factors_found = 3, .ghz_days_per_day = -1, .eta_s = -1};
    out->primenet = f->primenet;
}

/* The summary and the metrics of one snapshot; both malloc'd. */
static json_t *render(fake *f, char **metrics)
{
    lode_api_config c = {.source_kind = f->kind, .source = "worktodo.txt", .unit = "candidates/s",
                         .provider = {.user = f, .snapshot = fake_snapshot}};
    api_state s;
    api_state_init(&s, &c);
    json_t *root = NULL;
    if (api_state_start(&s) == 0) {
        char *text = api_render_summary(&s, false);
        root = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        *metrics = api_render_metrics(&s);
    }
    api_state_destroy(&s);
    return root;
}

static void check_client(void)
{
    fake f = {.kind = "tf"};
    f.primenet = (lode_api_primenet){.enabled = true, .results_sent = 12, .results_queued = 2,
                                     .assignments_queued = 5, .next_contact_s = 3600};
    memset(f.primenet.state, 'w', sizeof f.primenet.state); /* no terminating NUL */
    snprintf(f.primenet.last_error, sizeof f.primenet.last_error, "server said \xff\"no\"\n");
    char *metrics = NULL;
    json_t *root = render(&f, &metrics);
    json_t *pn = json_object_get(root, "primenet");
    char want_state[sizeof f.primenet.state];
    memset(want_state, 'w', sizeof want_state - 1);
    want_state[sizeof want_state - 1] = '\0';
    CHECK(json_is_true(json_object_get(pn, "enabled")), "enabled");
    CHECK(json_is_string(json_object_get(pn, "state")) &&
              strcmp(json_string_value(json_object_get(pn, "state")), want_state) == 0,
          "state cut at its size: %s", json_string_value(json_object_get(pn, "state")));
    CHECK(json_integer_value(json_object_get(pn, "results_sent")) == 12 &&
              json_integer_value(json_object_get(pn, "results_queued")) == 2 &&
              json_integer_value(json_object_get(pn, "assignments_queued")) == 5,
          "the counts");
    const char *err = json_string_value(json_object_get(pn, "last_error"));
    CHECK(err != NULL && strcmp(err, "server said ?\"no\"?") == 0, "last_error cleaned: %s", err ? err : "(null)");
    CHECK(json_real_value(json_object_get(pn, "next_contact_s")) == 3600, "next contact");
    json_t *tf = json_object_get(root, "tf"), *dev = json_array_get(json_object_get(root, "devices"), 0);
    CHECK(json_integer_value(json_object_get(tf, "candidates")) == 9357848361 &&
              json_integer_value(json_object_get(tf, "factors")) == 1 &&
              json_integer_value(json_object_get(tf, "factors_found")) == 3,
          "tf: candidates, factors, factors_found");
    CHECK(json_integer_value(json_object_get(dev, "proof_entries")) == 7 &&
              json_integer_value(json_object_get(dev, "factors")) == 1 && json_is_null(json_object_get(dev, "ghz_days_per_day")),
          "device: proof entries, factors, no rate from one sample");
    CHECK(metrics != NULL && strstr(metrics, "\nlode_primenet_enabled 1\n") &&
              strstr(metrics, "\nlode_primenet_results_sent_total 12\n") &&
              strstr(metrics, "\nlode_primenet_results_queued 2\n") &&
              strstr(metrics, "\nlode_primenet_assignments_queued 5\n") &&
              strstr(metrics, "\nlode_primenet_next_contact_seconds 3600\n") &&
              strstr(metrics, "lode_primenet_state{state=\"wwwwwwwwwwwwwwwwwwwwwwwwwwwwwww\"} 1\n") &&
              strstr(metrics, "lode_tf_proof_entries_total{device=\"cpu:0\"} 7\n") &&
              strstr(metrics, "\nlode_tf_factors_found_total 3\n"),
          "metrics: %s", metrics ? metrics : "(none)");
    json_decref(root);
    free(metrics);

    /* No time of next contact, no error. */
    f.primenet.next_contact_s = -1;
    f.primenet.last_error[0] = '\0';
    root = render(&f, &metrics);
    pn = json_object_get(root, "primenet");
    CHECK(json_is_null(json_object_get(pn, "next_contact_s")) && json_is_null(json_object_get(pn, "last_error")),
          "unknown next contact and no error are null");
    CHECK(metrics != NULL && strstr(metrics, "lode_primenet_next_contact_seconds") == NULL, "no next-contact gauge");
    json_decref(root);
    free(metrics);
}

static void check_without_client(void)
{
    fake f = {.kind = "tf", .primenet = {.enabled = false, .results_sent = 9, .state = "ignored"}};
    char *metrics = NULL;
    json_t *root = render(&f, &metrics);
    json_t *want = json_pack("{s:b}", "enabled", 0);
    CHECK(json_equal(json_object_get(root, "primenet"), want), "{\"enabled\": false} alone");
    CHECK(metrics != NULL && strstr(metrics, "\nlode_primenet_enabled 0\n") && !strstr(metrics, "lode_primenet_state") &&
              !strstr(metrics, "results_sent"),
          "metrics without a client: %s", metrics ? metrics : "(none)");
    json_decref(want);
    json_decref(root);
    free(metrics);

    f.kind = "benchmark";
    root = render(&f, &metrics);
    CHECK(root != NULL && json_object_get(root, "primenet") == NULL && json_object_get(root, "tf") == NULL &&
              json_object_get(json_array_get(json_object_get(root, "devices"), 0), "proof_entries") == NULL,
          "no tf fields outside lode tf");
    CHECK(metrics != NULL && !strstr(metrics, "lode_primenet") && !strstr(metrics, "lode_tf_") &&
              strstr(metrics, "# HELP lode_hits_total Hits"),
          "metrics outside lode tf");
    json_decref(root);
    free(metrics);
}

int main(void)
{
    check_client();
    check_without_client();
    return test_summary();
}
