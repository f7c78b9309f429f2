#include "core/base/settings.h"

#include "core/base/log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const lookup_gap_words[] = {"1", "2", "4", NULL};
static const char *const cpu_sha_words[] = {"avx512", "avx2", "portable", NULL};

#define UNSIGNED(lo_, hi_, d_) .kind = LODE_SETTING_UNSIGNED, .lo = (lo_), .hi = (hi_), .dflt = (d_)

static const lode_setting table[LODE_SETTING_COUNT] = {
    /* ---- tuning and device choice ---- */
    {LODE_SETTING_CUDA_TUNE, "LODE_CUDA_TUNE", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TUNING,
     .default_text = "cached or measured",
     .help = "CUDA launch parameters: off (built-in), retune, or ALGO:tpb=N,npt=N,waves=N;...",
     .readers = "backend-cuda/cuda_nonce_scan.c (the shared autotuner parses it)"},
    {LODE_SETTING_OPENCL_TUNE, "LODE_OPENCL_TUNE", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TUNING,
     .default_text = "cached or measured",
     .help = "OpenCL launch parameters: off (built-in), retune, or ALGO:ls=N,npt=N,il=N,batch=N;...",
     .readers = "backend-opencl/ocl_nonce.c (the shared autotuner parses it)"},
    {LODE_SETTING_OPENCL_SHOW_ALL, "LODE_OPENCL_SHOW_ALL", .kind = LODE_SETTING_FLAG,
     .group = LODE_SETTING_TUNING, .default_text = "0",
     .help = "1: list OpenCL devices that CUDA also drives (hidden by default)",
     .readers = "core/dispatch/registry.c"},
    {LODE_SETTING_OPENCL_NO_CACHE, "LODE_OPENCL_NO_CACHE", .kind = LODE_SETTING_FLAG,
     .group = LODE_SETTING_TUNING, .default_text = "0",
     .help = "1: build OpenCL programs every time (no binary cache in ~/.cache/lode/opencl)",
     .readers = "backend-opencl/ocl_program.c"},
    {LODE_SETTING_OPENCL_LOOKUP_GAP, "LODE_OPENCL_LOOKUP_GAP", .kind = LODE_SETTING_CHOICE,
     .group = LODE_SETTING_TUNING, .words = lookup_gap_words,
     .default_text = "1 (2 under 2 GiB of device memory)", .help = "OpenCL scrypt lookup gap",
     .readers = "backend-opencl/ocl_scrypt.c"},
    {LODE_SETTING_MOMENTUM_CPU_SHA, "LODE_MOMENTUM_CPU_SHA", .kind = LODE_SETTING_CHOICE,
     .group = LODE_SETTING_TUNING, .words = cpu_sha_words, .default_text = "the best this CPU runs",
     .help = "CPU Momentum SHA-512 path (the best below it that runs)",
     .readers = "backend-cpu/momentum_cpu.c"},
    {LODE_SETTING_MOMENTUM_TABLE_BITS, "LODE_MOMENTUM_TABLE_BITS", UNSIGNED(24, 34, 27),
     .group = LODE_SETTING_TUNING, .default_text = "27 (fewer where memory is short)",
     .help = "GPU Momentum first-round table: 2^N counters",
     .readers = "backend-cuda/cuda_momentum.c, backend-opencl/ocl_momentum.c"},
    {LODE_SETTING_MOMENTUM_BATCH, "LODE_MOMENTUM_BATCH", UNSIGNED(1, 64, 16), .group = LODE_SETTING_TUNING,
     .default_text = "16",
     .help = "GPU Momentum bucket method: sweeps per launch (one host wait and one read-back each)",
     .readers = "backend-cuda/cuda_momentum.c, backend-opencl/ocl_momentum.c"},
    {LODE_SETTING_TF_SIEVE_PRIMES, "LODE_TF_SIEVE_PRIMES", UNSIGNED(0, 2000000, 1000000),
     .group = LODE_SETTING_TUNING,
     .default_text = "per backend: CPU 4000 (0..100000), CUDA 1000000 (14..2000000), "
                     "OpenCL 1000000 GPU / 20000 CPU (14..2000000)",
     .help = "trial factoring: primes the candidates are sieved by",
     .readers = "backend-cpu/tf_cpu.c, backend-cuda/cuda_tf.c, backend-opencl/ocl_tf.c"},
    {LODE_SETTING_TF_LAUNCH_BITS, "LODE_TF_LAUNCH_BITS", UNSIGNED(17, 28, 27), .group = LODE_SETTING_TUNING,
     .default_text = "per backend: CUDA 28 on GPUs of 16 GiB or more, else 27 (20..28); "
                     "OpenCL 27 GPU / 20 CPU (18..28)",
     .help = "trial factoring: 2^N sieve bits per GPU launch",
     .readers = "backend-cuda/cuda_tf.c, backend-opencl/ocl_tf.c"},
    {LODE_SETTING_TF_SEGMENT_BITS, "LODE_TF_SEGMENT_BITS", UNSIGNED(16, 18, 18), .group = LODE_SETTING_TUNING,
     .help = "trial factoring: 2^N sieve bits per CUDA segment", .readers = "backend-cuda/cuda_tf.c"},
    {LODE_SETTING_TF_INTERLEAVE, "LODE_TF_INTERLEAVE", UNSIGNED(1, 4, 2), .group = LODE_SETTING_TUNING,
     .default_text = "2 for factors below 2^92, 1 above",
     .help = "trial factoring: candidates per CUDA thread at once (1, 2 or 4)", .readers = "backend-cuda/cuda_tf.c"},
    {LODE_SETTING_TF_EXP_BLOCKS_PER_SM, "LODE_TF_EXP_BLOCKS_PER_SM", UNSIGNED(1, 64, 5),
     .group = LODE_SETTING_TUNING, .help = "trial factoring: CUDA exponentiation blocks per SM",
     .readers = "backend-cuda/cuda_tf.c"},
    {LODE_SETTING_TF_BATCH, "LODE_TF_BATCH", UNSIGNED(1, 64, 16), .group = LODE_SETTING_TUNING,
     .default_text = "per backend: CUDA 16 (at most 2^31 indices a launch: 8 at 2^28), OpenCL 32 GPU / 16 CPU",
     .help = "trial factoring: GPU sub-launches of 2^LODE_TF_LAUNCH_BITS per launch (one host wait each)",
     .readers = "backend-cuda/cuda_tf.c, backend-opencl/ocl_tf.c"},
    {LODE_SETTING_CUDA_NO_GRAPHS, "LODE_CUDA_NO_GRAPHS", .kind = LODE_SETTING_FLAG, .group = LODE_SETTING_TUNING,
     .default_text = "0",
     .help = "1: CUDA Momentum and trial factoring queue each launch call by call, not as a CUDA graph",
     .readers = "backend-cuda/cuda_momentum.c, backend-cuda/cuda_tf.c"},
    {LODE_SETTING_API_TOKEN, "LODE_API_TOKEN", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TUNING,
     .default_text = "unset (no token)",
     .help = "the HTTP API's token when neither --api-token nor --api-token-file is given (never logged)",
     .readers = "core/cli/run_api.c"},
    /* ---- measurements ---- */
    {LODE_SETTING_MOMENTUM_PROFILE, "LODE_MOMENTUM_PROFILE", .kind = LODE_SETTING_FLAG,
     .group = LODE_SETTING_MEASURE, .default_text = "0",
     .help = "1: log CUDA Momentum stage times (CUDA events)", .readers = "backend-cuda/cuda_momentum.c"},
    {LODE_SETTING_TF_PROFILE, "LODE_TF_PROFILE", .kind = LODE_SETTING_FLAG, .group = LODE_SETTING_MEASURE,
     .default_text = "0",
     .help = "1: log GPU trial-factoring kernel times (CUDA events; OpenCL profiling events), each kernel run "
             "alone",
     .readers = "backend-cuda/cuda_tf.c, backend-opencl/ocl_tf.c"},
    {LODE_SETTING_TF_NO_PROOF, "LODE_TF_NO_PROOF", .kind = LODE_SETTING_FLAG, .group = LODE_SETTING_MEASURE,
     .default_text = "0", .help = "1: lode tf collects no proof of work (to measure its cost; results carry none)",
     .readers = "core/tf/class_driver.c"},
    /* ---- test hooks ---- */
    {LODE_SETTING_MOMENTUM_BUCKET_CAP, "LODE_MOMENTUM_BUCKET_CAP", UNSIGNED(64, UINT_MAX, UINT_MAX),
     .group = LODE_SETTING_TEST_HOOK, .default_text = "the bucket's full size",
     .help = "GPU Momentum bucket method: fewer slots per bucket, to force redos",
     .readers = "backend-cuda/cuda_momentum.c, backend-opencl/ocl_momentum.c"},
    {LODE_SETTING_TF_CHECK_TABLES, "LODE_TF_CHECK_TABLES", .kind = LODE_SETTING_FLAG,
     .group = LODE_SETTING_TEST_HOOK, .default_text = "0",
     .help = "1: GPU trial factoring reads its device-built sieve tables back and fails on any "
             "difference from the host's",
     .readers = "backend-cuda/cuda_tf.c, backend-opencl/ocl_tf.c"},
    {LODE_SETTING_TEST_FAIL_SCANS_AFTER, "LODE_TEST_FAIL_SCANS_AFTER", UNSIGNED(0, UINT_MAX, 0),
     .group = LODE_SETTING_TEST_HOOK, .default_text = "off",
     .help = "N: every worker fails with a device error at its scan N+1 and every one after",
     .readers = "core/dispatch/dispatch.c"},
    {LODE_SETTING_TEST_FAULT, "LODE_TEST_FAULT", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "off",
     .help = "hang|error|badhits:DEV[:AFTER[:TIMES]],corrupt|drop|extra:DEV:N,temp:DEV:FILE,...: adds the "
             "fault-injecting devices fault:0..3 (CPU sha256d) that misbehave so (corrupt, drop, extra: about one "
             "hit in N at a wrong index, left out, or one non-hit nonce in N reported, chosen by nonce)",
     .readers = "core/dispatch/fault_backend.c, core/dispatch/registry.c"},
    {LODE_SETTING_SKIP_SELFTEST, "LODE_SKIP_SELFTEST", .kind = LODE_SETTING_FLAG, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "0",
     .help = "1: workers start without their self-test (compute-sanitizer runs, where the tool checks the "
             "kernels and a self-test takes minutes; hits are still re-checked on the CPU)",
     .readers = "core/dispatch/dispatch.c"},
    {LODE_SETTING_TF_CRASH_AT, "LODE_TF_CRASH_AT", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "off", .help = "STEP: lode tf kills itself (SIGKILL) on reaching STEP",
     .readers = "core/tf/fileio.c"},
    {LODE_SETTING_PRIMENET_RETRY_S, "LODE_PRIMENET_RETRY_S", UNSIGNED(1, 3600, 60), .group = LODE_SETTING_TEST_HOOK,
     .default_text = "60",
     .help = "lode tf --primenet: seconds before the next pass after a failed one (doubles up to an hour); "
             "the quick retries within a call wait 1/60, 2/60 and 4/60 of it",
     .readers = "core/cli/tf_primenet.c"},
    {LODE_SETTING_PRIMENET_CHECKIN_S, "LODE_PRIMENET_CHECKIN_S", UNSIGNED(1, 604800, 3600),
     .group = LODE_SETTING_TEST_HOOK, .default_text = "3600",
     .help = "lode tf --primenet: seconds between progress reports (ap)", .readers = "core/cli/tf_primenet.c"},
    {LODE_SETTING_PRIMENET_TIMEOUT_S, "LODE_PRIMENET_TIMEOUT_S", UNSIGNED(1, 600, 180),
     .group = LODE_SETTING_TEST_HOOK, .default_text = "180",
     .help = "lode tf --primenet: seconds a call to PrimeNet may take", .readers = "core/cli/tf_primenet.c"},
    {LODE_SETTING_VECTORS_DIR, "LODE_VECTORS_DIR", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "tests/vectors of the source tree", .help = "where the C tests read their vector files",
     .readers = "tests/test_util.c"},
    {LODE_SETTING_TEST_SEED, "LODE_TEST_SEED", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "from the clock", .help = "replays a random test run",
     .readers = "tests/test_util.c, tests/test_cli.py, tests/test_tf.py"},
    {LODE_SETTING_TEST_VERBOSE, "LODE_TEST_VERBOSE", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "unset", .help = "set: test_stratum logs everything", .readers = "tests/test_stratum.c"},
    {LODE_SETTING_TEST_ONLY, "LODE_TEST_ONLY", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "all", .help = "runs one test function of test_tf.py", .readers = "tests/test_tf.py"},
    {LODE_SETTING_TEST_KEEP, "LODE_TEST_KEEP", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "unset", .help = "set: the pool harness keeps its work folder",
     .readers = "tests/pool/harness.py"},
    {LODE_SETTING_SAMPLER_OUT, "LODE_SAMPLER_OUT", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "unset (no sampling)", .help = "FILE: the preloaded CPU sampler writes its profile here",
     .readers = "tests/tools/cpu_sampler.c"},
    {LODE_SETTING_TEST_SENSORS, "LODE_TEST_SENSORS", .kind = LODE_SETTING_TEXT, .group = LODE_SETTING_TEST_HOOK,
     .default_text = "unset (the devices' own sensors)",
     .help = "FILE: every device's sensor readings come from FILE, re-read on each reading (lines "
             "'cpu:0 temp=85 power=120.5 fan=40 sm=1980 mem=2619 throttle=thermal energy=5400.5'; a "
             "device not listed has none)",
     .readers = "core/dispatch/registry.c"},
    {LODE_SETTING_TEST_SYSFS_ROOT, "LODE_TEST_SYSFS_ROOT", .kind = LODE_SETTING_TEXT,
     .group = LODE_SETTING_TEST_HOOK, .default_text = "unset (/)",
     .help = "DIR: the sensors read DIR/sys/... and DIR/proc/cpuinfo instead of /sys and /proc "
             "(a fake hwmon, amdgpu, powercap and cpufreq tree)",
     .readers = "core/backend_support/sysfs_sensors.c"},
    {LODE_SETTING_TEST_NVML_LIB, "LODE_TEST_NVML_LIB", .kind = LODE_SETTING_TEXT,
     .group = LODE_SETTING_TEST_HOOK, .default_text = "libnvidia-ml.so.1",
     .help = "FILE: the NVML library loaded for GPU sensors (a fake one in the tests)",
     .readers = "core/backend_support/nvml_sensors.c"},
    {LODE_SETTING_TEST_OPENCL_LIB, "LODE_TEST_OPENCL_LIB", .kind = LODE_SETTING_TEXT,
     .group = LODE_SETTING_TEST_HOOK, .default_text = "libOpenCL.so.1",
     .help = "FILE: the OpenCL library loaded instead of the ICD loader (a fake AMD one in the tests)",
     .readers = "backend-opencl/ocl_api.c"},
    {LODE_SETTING_TEST_OPENCL_OPTIONS, "LODE_TEST_OPENCL_OPTIONS", .kind = LODE_SETTING_TEXT,
     .group = LODE_SETTING_TEST_HOOK, .default_text = "unset",
     .help = "OPTIONS: appended to the build options of the OpenCL programs that take the common ones "
             "(sha256d, scrypt), e.g. -D LODE_KERNEL_AMD=1 runs AMD's kernel paths on any device",
     .readers = "backend-opencl/ocl_backend.c"},
};

const lode_setting *lode_settings(size_t *count)
{
    *count = LODE_SETTING_COUNT;
    return table;
}

const lode_setting *lode_setting_info(lode_setting_id id)
{
    return id >= 0 && id < LODE_SETTING_COUNT ? &table[id] : NULL;
}

/* Each complaint once per process (the same text, not per device or per
 * call); a few distinct ones are remembered, later ones are logged always. */
static void warn_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn_once(const char *fmt, ...)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char seen[16][192];
    static size_t nseen;
    char msg[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&lock);
    bool again = false;
    for (size_t i = 0; i < nseen && !again; i++)
        again = strcmp(seen[i], msg) == 0;
    if (!again && nseen < sizeof seen / sizeof seen[0])
        memcpy(seen[nseen++], msg, sizeof msg);
    pthread_mutex_unlock(&lock);
    if (!again)
        lode_log(LODE_LOG_WARN, "%s", msg);
}

const char *lode_setting_text(lode_setting_id id)
{
    const lode_setting *s = lode_setting_info(id);
    if (s == NULL)
        return NULL;
    const char *v = getenv(s->name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

bool lode_setting_flag(lode_setting_id id)
{
    const char *v = lode_setting_text(id);
    if (v == NULL || strcmp(v, "0") == 0)
        return false;
    if (strcmp(v, "1") == 0)
        return true;
    char shown[64];
    lode_log_printable(shown, sizeof shown, v);
    warn_once("%s='%s' is not 0 or 1; using the default 0", table[id].name, shown);
    return false;
}

/* 1 set and well formed (clamped, warned, to lo..hi), 0 unset, -1 malformed
 * (the caller warns: it knows the default). */
static int parse_unsigned(lode_setting_id id, unsigned lo, unsigned hi, unsigned *out)
{
    const char *v = lode_setting_text(id);
    if (v == NULL)
        return 0;
    /* Digits only: strtoul would take "-1", " 5" and "+5". */
    if (v[0] < '0' || v[0] > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long n = strtoul(v, &end, 10);
    if (*end != '\0')
        return -1;
    char shown[64];
    lode_log_printable(shown, sizeof shown, v);
    if (errno == ERANGE || n > hi) {
        warn_once("%s=%s is above %u; using %u", table[id].name, shown, hi, hi);
        *out = hi;
    } else if (n < lo) {
        warn_once("%s=%s is below %u; using %u", table[id].name, shown, lo, lo);
        *out = lo;
    } else {
        *out = (unsigned)n;
    }
    return 1;
}

static void warn_malformed(lode_setting_id id, const char *dflt)
{
    char shown[64];
    lode_log_printable(shown, sizeof shown, lode_setting_text(id));
    warn_once("%s='%s' is not a whole number; using the default %s", table[id].name, shown, dflt);
}

unsigned lode_setting_unsigned_in(lode_setting_id id, unsigned dflt, unsigned lo, unsigned hi)
{
    unsigned n = dflt;
    int rc = parse_unsigned(id, lo, hi, &n);
    if (rc < 0) {
        char d[16];
        snprintf(d, sizeof d, "%u", dflt);
        warn_malformed(id, d);
    }
    return rc > 0 ? n : dflt;
}

unsigned lode_setting_unsigned(lode_setting_id id)
{
    const lode_setting *s = lode_setting_info(id);
    return s == NULL ? 0 : lode_setting_unsigned_in(id, s->dflt, s->lo, s->hi);
}

bool lode_setting_unsigned_given(lode_setting_id id, unsigned *out)
{
    const lode_setting *s = lode_setting_info(id);
    if (s == NULL)
        return false;
    int rc = parse_unsigned(id, s->lo, s->hi, out);
    if (rc < 0)
        warn_malformed(id, s->default_text != NULL ? s->default_text : "");
    return rc > 0;
}

int lode_setting_choice(lode_setting_id id)
{
    const lode_setting *s = lode_setting_info(id);
    const char *v = lode_setting_text(id);
    if (s == NULL || v == NULL || s->words == NULL)
        return -1;
    for (int i = 0; s->words[i] != NULL; i++)
        if (strcmp(v, s->words[i]) == 0)
            return i;
    char shown[64], words[128] = "";
    lode_log_printable(shown, sizeof shown, v);
    for (int i = 0; s->words[i] != NULL; i++)
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? ", " : "", s->words[i]);
    warn_once("%s='%s' is not one of %s; using the default (%s)", s->name, shown, words,
              s->default_text != NULL ? s->default_text : "");
    return -1;
}

static void print_one(FILE *out, const lode_setting *s)
{
    char values[160] = "";
    switch (s->kind) {
    case LODE_SETTING_FLAG: snprintf(values, sizeof values, "0 or 1"); break;
    case LODE_SETTING_UNSIGNED:
        if (s->hi == UINT_MAX)
            snprintf(values, sizeof values, "%u or more", s->lo);
        else
            snprintf(values, sizeof values, "%u..%u", s->lo, s->hi);
        break;
    case LODE_SETTING_CHOICE:
        for (int i = 0; s->words[i] != NULL; i++)
            snprintf(values + strlen(values), sizeof values - strlen(values), "%s%s", i ? "|" : "",
                     s->words[i]);
        break;
    case LODE_SETTING_TEXT: snprintf(values, sizeof values, "text"); break;
    }
    char dflt[16];
    if (s->default_text == NULL)
        snprintf(dflt, sizeof dflt, "%u", s->dflt);
    fprintf(out, "  %-27s %s\n  %-27s values: %s; default: %s\n", s->name, s->help, "", values,
            s->default_text != NULL ? s->default_text : dflt);
}

void lode_settings_print(FILE *out)
{
    static const char *const headings[] = {
        "Tuning, device choice and operation", "Measurements",
        "Test hooks (for lode's own tests; not for normal use)"};
    fprintf(out, "lode reads these environment variables (unset or empty: the default; a malformed\n"
                 "value is warned about and the default used; a number out of range is clamped,\n"
                 "with a warning):\n");
    for (int g = LODE_SETTING_TUNING; g <= LODE_SETTING_TEST_HOOK; g++) {
        fprintf(out, "\n%s:\n", headings[g]);
        for (size_t i = 0; i < LODE_SETTING_COUNT; i++)
            if ((int)table[i].group == g)
                print_one(out, &table[i]);
    }
}
