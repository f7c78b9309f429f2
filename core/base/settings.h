#ifndef LODE_SETTINGS_H
#define LODE_SETTINGS_H
/* lode's environment variables: one table (core/base/settings.c) of every
 * LODE_* variable lode or its tests read, with its kind, default, range or
 * words, one line of help and who reads it; `lode --help-env` prints it.
 * Code reads a variable only through these getters, never getenv()
 * (tests/check_settings.py fails the build's tests on a getenv("LODE_...")
 * elsewhere, or on a LODE_* name the table lacks).
 *
 * Parsed one way: unset or empty is the default. A number is decimal digits
 * only (strtoul with the whole text checked); anything else is malformed:
 * warned once (naming the variable and the default used) and the default is
 * used. A number outside the range is clamped to the nearest bound, with a
 * warning. A flag is "1" (on) or "0" (off); a choice is one of its words.
 * Variables are read each time a getter is called (no cache): tests set
 * them between calls. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lode_setting_id {
    /* Tuning and device choice */
    LODE_SETTING_CUDA_TUNE,
    LODE_SETTING_OPENCL_TUNE,
    LODE_SETTING_OPENCL_SHOW_ALL,
    LODE_SETTING_OPENCL_NO_CACHE,
    LODE_SETTING_OPENCL_LOOKUP_GAP,
    LODE_SETTING_MOMENTUM_CPU_SHA,
    LODE_SETTING_MOMENTUM_TABLE_BITS,
    LODE_SETTING_MOMENTUM_BATCH,
    LODE_SETTING_TF_SIEVE_PRIMES,
    LODE_SETTING_TF_LAUNCH_BITS,
    LODE_SETTING_TF_SEGMENT_BITS,
    LODE_SETTING_TF_INTERLEAVE,
    LODE_SETTING_TF_EXP_BLOCKS_PER_SM,
    LODE_SETTING_TF_BATCH,
    LODE_SETTING_CUDA_NO_GRAPHS,
    /* Operation */
    LODE_SETTING_API_TOKEN,
    /* Measurements */
    LODE_SETTING_MOMENTUM_PROFILE,
    LODE_SETTING_TF_PROFILE,
    LODE_SETTING_TF_NO_PROOF,
    /* Test hooks (listed by `lode --help-env` under their own heading) */
    LODE_SETTING_MOMENTUM_BUCKET_CAP,
    LODE_SETTING_TF_CHECK_TABLES,
    LODE_SETTING_TEST_FAIL_SCANS_AFTER,
    LODE_SETTING_TEST_FAULT,
    LODE_SETTING_SKIP_SELFTEST,
    LODE_SETTING_TF_CRASH_AT,
    LODE_SETTING_PRIMENET_RETRY_S,
    LODE_SETTING_PRIMENET_CHECKIN_S,
    LODE_SETTING_PRIMENET_TIMEOUT_S,
    LODE_SETTING_VECTORS_DIR,
    LODE_SETTING_TEST_SEED,
    LODE_SETTING_TEST_VERBOSE,
    LODE_SETTING_TEST_ONLY,
    LODE_SETTING_TEST_KEEP,
    LODE_SETTING_SAMPLER_OUT,
    LODE_SETTING_TEST_SENSORS,
    LODE_SETTING_TEST_SYSFS_ROOT,
    LODE_SETTING_TEST_NVML_LIB,
    LODE_SETTING_TEST_OPENCL_LIB,
    LODE_SETTING_TEST_OPENCL_OPTIONS,
    LODE_SETTING_COUNT
} lode_setting_id;

typedef enum lode_setting_kind {
    LODE_SETTING_FLAG,     /* "1" on, "0" off */
    LODE_SETTING_UNSIGNED, /* decimal, lo..hi */
    LODE_SETTING_CHOICE,   /* one of words */
    LODE_SETTING_TEXT,     /* free text or a path (its reader parses it) */
} lode_setting_kind;

typedef enum lode_setting_group {
    LODE_SETTING_TUNING,
    LODE_SETTING_MEASURE,
    LODE_SETTING_TEST_HOOK,
} lode_setting_group;

typedef struct lode_setting {
    lode_setting_id id;
    const char *name;
    lode_setting_kind kind;
    lode_setting_group group;
    unsigned lo, hi, dflt;     /* UNSIGNED: the widest range any reader takes, its default */
    const char *const *words;  /* CHOICE: NULL-terminated */
    const char *default_text;  /* as printed ("per device: ...", "off", ...) */
    const char *help;          /* one line */
    const char *readers;       /* who reads it */
} lode_setting;

/* The table, in lode_setting_id order. */
const lode_setting *lode_settings(size_t *count);
const lode_setting *lode_setting_info(lode_setting_id id);

/* The raw text; NULL when unset or empty. */
const char *lode_setting_text(lode_setting_id id);
/* FLAG: "1" true, unset/empty/"0" false; anything else false, warned. */
bool lode_setting_flag(lode_setting_id id);
/* UNSIGNED with the table's default and range. */
unsigned lode_setting_unsigned(lode_setting_id id);
/* UNSIGNED with the reader's own default and range (a backend whose
 * default or limits depend on the device): malformed -> dflt, warned;
 * outside lo..hi -> the nearest bound, warned. */
unsigned lode_setting_unsigned_in(lode_setting_id id, unsigned dflt, unsigned lo, unsigned hi);
/* UNSIGNED, for a variable whose absence means "off": true and *out when
 * set and well formed (clamped to the table's range), false otherwise
 * (malformed is warned). */
bool lode_setting_unsigned_given(lode_setting_id id, unsigned *out);
/* CHOICE: the index of the word given, or -1 when unset, empty or not one
 * of the words (warned). */
int lode_setting_choice(lode_setting_id id);

/* `lode --help-env`: the table, grouped; test hooks under their own
 * heading at the end. */
void lode_settings_print(FILE *out);

#ifdef __cplusplus
}
#endif

#endif
