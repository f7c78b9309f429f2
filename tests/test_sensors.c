/* Sensors without the hardware:
 * - the text of the hashrate lines and the fake source's line format
 *   (core/base/sensors.c);
 * - the fake sensor source (LODE_TEST_SENSORS) and the wrapper's fallbacks
 *   (core/dispatch/registry.c), over fake backends;
 * - the sysfs readers (core/backend_support/sysfs_sensors.c) on fake trees
 *   this test builds under LODE_TEST_SYSFS_ROOT: amdgpu hwmon, coretemp,
 *   k10temp, RAPL (with the clock driven by the test, and a counter that
 *   wraps), cpufreq and /proc/cpuinfo, and broken files (empty, garbage,
 *   a folder, a FIFO, unreadable, missing) that must read as absent;
 * - the CPU backend's read_sensors and describe through the registry;
 * - NVML (core/backend_support/nvml_sensors.c) where the library is
 *   missing. The other NVML cases load the fake libraries of
 *   tests/fake_nvml.c, one process each (NVML is initialised once a
 *   process): test_sensors nvml-full | nvml-minimal | nvml-no-lookup |
 *   nvml-init-fails, with LODE_TEST_NVML_LIB naming the library. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/backend_support/nvml_sensors.h"
#include "core/backend_support/sysfs_sensors.h"
#include "core/base/sensors.h"
#include "core/base/status.h"
#include "core/dispatch/registry.h"
#include "tests/test_util.h"

static bool near(double a, double b) { return fabs(a - b) < 1e-6; }

/* ---- a fake tree ------------------------------------------------------ */

static char root[256];

/* mkdir -p of path's folders under root. */
static void make_parents(const char *full)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", full);
    for (char *p = buf + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(buf, 0755);
        *p = '/';
    }
}

/* Writes text to root/path (creating folders). */
static void put(const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    make_parents(full);
    FILE *f = fopen(full, "w");
    if (f == NULL) {
        fprintf(stderr, "cannot write %s: %s\n", full, strerror(errno));
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void putf(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(const char *path, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    put(path, text);
}

static void full_path(char *out, size_t len, const char *path)
{
    int n = snprintf(out, len, "%s%s", root, path);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "path too long: %s%s\n", root, path);
        exit(1);
    }
}

/* The trees made, removed at the end. */
static char made[8][256];
static int made_count;

static void remove_roots(void)
{
    for (int i = 0; i < made_count; i++) {
        char cmd[2 * sizeof made[0] + 64];
        int n = snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", made[i], made[i]);
        if (n < 0 || (size_t)n >= sizeof cmd || system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", made[i]);
    }
}

static void new_root(const char *name)
{
    snprintf(root, sizeof root, "%s/%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0 || mkdir(root, 0755) != 0) {
        fprintf(stderr, "cannot make %s\n", root);
        exit(1);
    }
    setenv("LODE_TEST_SYSFS_ROOT", root, 1);
    if (made_count < 8)
        snprintf(made[made_count++], sizeof made[0], "%s", root);
}

/* ---- text ------------------------------------------------------------- */

static void test_format_and_parse(void)
{
    lode_sensors s = {0};
    char text[160];
    lode_sensors_format(&s, text, sizeof text);
    CHECK(strcmp(text, "") == 0, "nothing present prints nothing: '%s'", text);

    int bad = lode_sensors_parse(" temp=85 power=120.5\tfan=40 sm=1980 mem=2619 throttle=thermal,power"
                                 " energy=5400.25\n", &s);
    CHECK(bad == 0 && s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_POWER | LODE_SENSOR_FAN | LODE_SENSOR_SM_CLOCK |
                                    LODE_SENSOR_MEM_CLOCK | LODE_SENSOR_THROTTLE | LODE_SENSOR_ENERGY),
          "every key parsed: bad %d present %#x", bad, s.present);
    CHECK(near(s.energy_j, 5400.25), "energy %g", s.energy_j);
    CHECK(near(s.temp_c, 85) && near(s.power_w, 120.5) && near(s.fan_percent, 40) && near(s.sm_clock_mhz, 1980) &&
              near(s.mem_clock_mhz, 2619) && strcmp(s.throttle, "thermal,power") == 0,
          "values %g %g %g %g %g '%s'", s.temp_c, s.power_w, s.fan_percent, s.sm_clock_mhz, s.mem_clock_mhz,
          s.throttle);
    s.power_w = 120.7; /* not a tie: libcs may round 120.5 either way */
    lode_sensors_format(&s, text, sizeof text);
    CHECK(strcmp(text, " 85C 121W fan 40% 1980MHz mem 2619MHz throttle thermal,power") == 0, "format: '%s'", text);

    /* Only what is present, and a throttle of "none" says nothing. */
    lode_sensors t = {.present = LODE_SENSOR_TEMP | LODE_SENSOR_THROTTLE, .temp_c = 64};
    snprintf(t.throttle, sizeof t.throttle, "none");
    lode_sensors_format(&t, text, sizeof text);
    CHECK(strcmp(text, " 64C") == 0, "temp only: '%s'", text);
    /* A zero reading that is present is shown (absent is not zero). */
    lode_sensors z = {.present = LODE_SENSOR_FAN};
    lode_sensors_format(&z, text, sizeof text);
    CHECK(strcmp(text, " fan 0%") == 0, "fan 0 is shown: '%s'", text);
    /* Cut, never overflowed. */
    char small[6];
    lode_sensors_format(&s, small, sizeof small);
    CHECK(strlen(small) == 5 && strncmp(small, " 85C ", 5) == 0, "cut: '%s'", small);

    lode_sensors u = {0};
    bad = lode_sensors_parse("temp=abc power= =5 fan=1e999 sm=12x volts=3 throttle= junk mem=nan temp=70", &u);
    CHECK(bad == 9 && u.present == LODE_SENSOR_TEMP && near(u.temp_c, 70),
          "malformed words are skipped and counted: bad %d present %#x temp %g", bad, u.present, u.temp_c);
}

/* ---- the registry: the fake source and the wrapper ------------------- */

static int fake_probe(char why[LODE_WHY_LEN])
{
    why[0] = '\0';
    return 0;
}
static int fake_count(void) { return 2; }
static int fake_info(int index, lode_device_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "fake %d", index);
    out->workers = out->max_workers = 1;
    out->algo_mask = 1u << LODE_ALGO_SHA256D;
    return 0;
}
/* Device 0 reads 50C; device 1 fails (its half-filled reading must not
 * show). */
static int fake_read(int index, lode_sensors *out)
{
    out->present = LODE_SENSOR_TEMP;
    out->temp_c = index == 0 ? 50 : 99;
    return index == 0 ? LODE_OK : LODE_ERR_DEVICE;
}
static void fake_describe(char *buf, size_t len) { snprintf(buf, len, "  fake: %s\n", "said"); }

static const lode_backend_ops with_sensors = {
    .name = "alpha", .probe = fake_probe, .device_count = fake_count, .device_info = fake_info,
    .read_sensors = fake_read, .describe = fake_describe};
static const lode_backend_ops without_sensors = {
    .name = "beta", .probe = fake_probe, .device_count = fake_count, .device_info = fake_info};

static void write_sensors_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        exit(1);
    fputs(text, f);
    fclose(f);
}

static void test_registry(void)
{
    static const lode_backend_ops *const list[] = {&with_sensors, &without_sensors};
    lode_registry_use_backends(list, 2);
    lode_device_ref *devs;
    size_t n;
    CHECK(lode_registry_enumerate(&devs, &n) == 0 && n == 4, "4 fake devices: %zu", n);
    if (n != 4)
        return;
    unsetenv("LODE_TEST_SENSORS");
    lode_sensors s;
    memset(&s, 0xff, sizeof s);
    CHECK(lode_device_read_sensors(&devs[0], &s) == LODE_OK && s.present == LODE_SENSOR_TEMP && near(s.temp_c, 50),
          "alpha:0 reads its backend: %#x %g", s.present, s.temp_c);
    memset(&s, 0xff, sizeof s);
    CHECK(lode_device_read_sensors(&devs[1], &s) == LODE_OK && s.present == 0 && s.temp_c == 0,
          "a failed read is no sensors, not a half reading: %#x %g", s.present, s.temp_c);
    memset(&s, 0xff, sizeof s);
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == 0,
          "a backend without read_sensors has none: %#x", s.present);
    char text[256];
    lode_backend_describe(0, text, sizeof text);
    CHECK(strcmp(text, "  fake: said\n") == 0, "describe: '%s'", text);
    lode_backend_describe(1, text, sizeof text);
    CHECK(strcmp(text, "") == 0, "no describe: '%s'", text);
    lode_backend_describe(7, text, sizeof text);
    CHECK(strcmp(text, "") == 0, "no such backend: '%s'", text);

    /* The fake source replaces every backend's readings, re-read each call. */
    char path[300];
    snprintf(path, sizeof path, "%s/sensors.txt", root);
    write_sensors_file(path, "# the fake source\n"
                             "alpha:10 temp=11\n"
                             "  beta:0 temp=85 power=120.5 fan=40 sm=1980 mem=2619 throttle=thermal # hot\n"
                             "beta:1 temp=abc power=7\n");
    setenv("LODE_TEST_SENSORS", path, 1);
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == 0x3f && near(s.temp_c, 85) &&
              near(s.power_w, 120.5) && near(s.fan_percent, 40) && near(s.sm_clock_mhz, 1980) &&
              near(s.mem_clock_mhz, 2619) && strcmp(s.throttle, "thermal") == 0,
          "beta:0 from the file: %#x %g %g '%s'", s.present, s.temp_c, s.power_w, s.throttle);
    CHECK(lode_device_read_sensors(&devs[3], &s) == LODE_OK && s.present == LODE_SENSOR_POWER && near(s.power_w, 7),
          "beta:1: the bad word is absent, the good one read: %#x", s.present);
    CHECK(lode_device_read_sensors(&devs[0], &s) == LODE_OK && s.present == 0,
          "alpha:0 is not in the file ('alpha:10' is another device): %#x", s.present);
    write_sensors_file(path, "beta:0 temp=91\n");
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == LODE_SENSOR_TEMP && near(s.temp_c, 91),
          "a changed file is read again: %#x %g", s.present, s.temp_c);
    write_sensors_file(path, "beta:0\nbeta:1");
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == 0, "an id alone: none");
    CHECK(lode_device_read_sensors(&devs[3], &s) == LODE_OK && s.present == 0, "an id alone at the end: none");
    write_sensors_file(path, "beta:1 temp=1\nbeta:1 temp=2\n");
    CHECK(lode_device_read_sensors(&devs[3], &s) == LODE_OK && near(s.temp_c, 2), "the last line of an id wins");
    write_sensors_file(path, "");
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == 0, "an empty file: none");
    unlink(path);
    CHECK(lode_device_read_sensors(&devs[2], &s) == LODE_OK && s.present == 0, "no file: none");
    unsetenv("LODE_TEST_SENSORS");
    free(devs);
    lode_registry_use_backends(NULL, 0);
}

/* ---- sysfs: amdgpu --------------------------------------------------- */

static void test_amdgpu(void)
{
    new_root("lode_sensors_amdgpu");
    const char *a = "/sys/bus/pci/devices/0000:03:00.0/hwmon/hwmon2/";
    char p[1024];
#define AT(dir, file) (snprintf(p, sizeof p, "%s%s", dir, file), p)
    put(AT(a, "name"), "amdgpu\n");
    put(AT(a, "temp1_input"), "55000\n");
    put(AT(a, "temp1_label"), "edge\n");
    put(AT(a, "temp2_input"), "71000\n");
    put(AT(a, "temp2_label"), "junction\n");
    put(AT(a, "temp3_input"), "80000\n"); /* HBM: not the die */
    put(AT(a, "temp3_label"), "mem\n");
    put(AT(a, "power1_average"), "187000000\n");
    put(AT(a, "energy1_input"), "98765432100\n"); /* µJ */
    put(AT(a, "pwm1"), "128\n");
    put(AT(a, "pwm1_max"), "255\n");
    put(AT(a, "freq1_input"), "2100000000\n");
    put(AT(a, "freq2_input"), "1000000000\n");
    /* Another hwmon of the same device that is not amdgpu's comes first. */
    put("/sys/bus/pci/devices/0000:03:00.0/hwmon/hwmon1/name", "other\n");
    lode_sensors s;
    memset(&s, 0, sizeof s);
    CHECK(lode_sysfs_amdgpu_read("0000:03:00.0", &s) == 0, "amdgpu found");
    CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_POWER | LODE_SENSOR_FAN | LODE_SENSOR_SM_CLOCK |
                        LODE_SENSOR_MEM_CLOCK | LODE_SENSOR_ENERGY) && near(s.energy_j, 98765.4321),
          "present %#x (no throttle from hwmon), energy %g J", s.present, s.energy_j);
    CHECK(near(s.temp_c, 71) && near(s.power_w, 187) && fabs(s.fan_percent - 100.0 * 128 / 255) < 1e-9 &&
              near(s.sm_clock_mhz, 2100) && near(s.mem_clock_mhz, 1000),
          "values %g %g %g %g %g", s.temp_c, s.power_w, s.fan_percent, s.sm_clock_mhz, s.mem_clock_mhz);
    memset(&s, 0, sizeof s);
    CHECK(lode_sysfs_amdgpu_read("03:00.0", &s) == 0 && near(s.temp_c, 71), "no domain means 0000");

    /* Broken files: each reading falls back or is absent. */
    const char *b = "/sys/bus/pci/devices/0000:0a:00.0/hwmon/hwmon0/";
    put(AT(b, "name"), "amdgpu");                /* no newline */
    put(AT(b, "temp1_input"), "");               /* empty */
    put(AT(b, "temp2_input"), "hot\n");          /* garbage */
    put(AT(b, "temp3_input"), "999999999\n");    /* nonsense: 999999 C */
    put(AT(b, "power1_average"), "12abc\n");     /* garbage: power1_input instead */
    put(AT(b, "power1_input"), " 150000000 \n");
    put(AT(b, "fan1_input"), "1500\n");          /* no pwm1: RPM of the maximum */
    put(AT(b, "fan1_max"), "3000\n");
    full_path(p, sizeof p, b);
    strcat(p, "freq1_input");
    mkdir(p, 0755);                              /* a folder, not a file */
    full_path(p, sizeof p, b);
    strcat(p, "freq2_input");
    CHECK(mkfifo(p, 0644) == 0, "fifo: %s", strerror(errno)); /* would block a plain read */
    memset(&s, 0, sizeof s);
    CHECK(lode_sysfs_amdgpu_read("0000:0A:00.0", &s) == 0, "upper-case bus id found");
    CHECK(s.present == (LODE_SENSOR_POWER | LODE_SENSOR_FAN) && near(s.power_w, 150) && near(s.fan_percent, 50),
          "broken files are absent: %#x %g %g", s.present, s.power_w, s.fan_percent);

    /* Unreadable: absent (root reads anything, so only checked as a user). */
    const char *c = "/sys/bus/pci/devices/0000:0b:00.0/hwmon/hwmon0/";
    put(AT(c, "name"), "amdgpu\n");
    put(AT(c, "temp1_input"), "60000\n");
    full_path(p, sizeof p, c);
    strcat(p, "temp1_input");
    chmod(p, 0);
    memset(&s, 0, sizeof s);
    CHECK(lode_sysfs_amdgpu_read("0000:0b:00.0", &s) == 0, "found");
    if (geteuid() != 0)
        CHECK(s.present == 0, "an unreadable file is absent: %#x", s.present);
    else
        printf("running as root: the permission-denied case is not observable\n");

    /* Not amdgpu, no hwmon, no device, no bus id: not found, out untouched. */
    put("/sys/bus/pci/devices/0000:05:00.0/hwmon/hwmon4/name", "nouveau\n");
    put("/sys/bus/pci/devices/0000:05:00.0/hwmon/hwmon4/temp1_input", "40000\n");
    put("/sys/bus/pci/devices/0000:06:00.0/vendor", "0x1002\n");
    lode_sensors untouched = {.present = 0x80000000u};
    s = untouched;
    CHECK(lode_sysfs_amdgpu_read("0000:05:00.0", &s) == -1 && s.present == 0x80000000u, "nouveau: not amdgpu");
    CHECK(lode_sysfs_amdgpu_read("0000:06:00.0", &s) == -1, "no hwmon");
    CHECK(lode_sysfs_amdgpu_read("0000:07:00.0", &s) == -1, "no device");
    CHECK(lode_sysfs_amdgpu_read("", &s) == -1 && lode_sysfs_amdgpu_read(NULL, &s) == -1, "no bus id");
#undef AT
}

/* ---- sysfs: CPU ------------------------------------------------------ */

static void test_cpu_coretemp_rapl_cpufreq(void)
{
    new_root("lode_sensors_cpu");
    put("/sys/class/hwmon/hwmon0/name", "acpitz\n");
    put("/sys/class/hwmon/hwmon0/temp1_input", "30000\n");
    put("/sys/class/hwmon/hwmon1/name", "coretemp\n");
    put("/sys/class/hwmon/hwmon1/temp1_label", "Package id 0\n");
    put("/sys/class/hwmon/hwmon1/temp1_input", "61000\n");
    put("/sys/class/hwmon/hwmon1/temp2_label", "Core 0\n");
    put("/sys/class/hwmon/hwmon1/temp2_input", "59000\n");
    put("/sys/class/hwmon/hwmon10/name", "coretemp\n"); /* after hwmon1 and hwmon2, not between */
    put("/sys/class/hwmon/hwmon10/temp1_label", "Package id 1\n");
    put("/sys/class/hwmon/hwmon10/temp1_input", "66000\n");
    for (int cpu = 0; cpu < 3; cpu++) {
        char dir[128];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        putf(dir, "%d\n", cpu < 2 ? 0 : 1);
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
        putf(dir, "%d\n", (cpu + 2) * 1000000 - (cpu == 2) * 3000000); /* 2000, 3000, 1000 MHz */
    }
    put("/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "5\n"); /* not a cpuN */
    put("/proc/cpuinfo", "processor : 0\ncpu MHz : 9999.0\n\n"); /* cpufreq wins */
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "1000000\n");
    put("/sys/class/powercap/intel-rapl:0/max_energy_range_uj", "10000000\n");

    lode_sensors s;
    lode_sysfs_cpu_read_at(0, 100.0, &s);
    CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_SM_CLOCK | LODE_SENSOR_ENERGY) && near(s.temp_c, 61) &&
              near(s.sm_clock_mhz, 2500) && near(s.energy_j, 0),
          "package 0: coretemp 61C, mean clock 2500 MHz, no power on the first reading, energy from 0: %#x %g %g %g",
          s.present, s.temp_c, s.sm_clock_mhz, s.energy_j);
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "5000000\n");
    lode_sysfs_cpu_read_at(0, 102.0, &s);
    CHECK((s.present & LODE_SENSOR_POWER) && near(s.power_w, 2.0), "4 J in 2 s: %#x %g W", s.present, s.power_w);
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "5000100\n");
    lode_sysfs_cpu_read_at(0, 102.05, &s);
    CHECK((s.present & LODE_SENSOR_POWER) && near(s.power_w, 2.0), "too soon: the last figure stays: %g", s.power_w);
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "999999\n"); /* wrapped past 10000000 */
    lode_sysfs_cpu_read_at(0, 104.0, &s);
    CHECK((s.present & LODE_SENSOR_POWER) && near(s.power_w, 3.0),
          "a wrapped counter: (10000000 - 5000000 + 999999 + 1) uJ in 2 s = 3 W: %g", s.power_w);
    /* The counter lode shows: 4 J, then the 0.05-s reading left out, 6 J
     * across the wrap. */
    CHECK((s.present & LODE_SENSOR_ENERGY) && near(s.energy_j, 10.0), "energy unwrapped: %g J", s.energy_j);
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "garbage\n");
    lode_sysfs_cpu_read_at(0, 106.0, &s);
    CHECK(!(s.present & LODE_SENSOR_POWER), "unreadable counter: no power: %#x", s.present);

    lode_sysfs_cpu_read_at(1, 100.0, &s);
    CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_SM_CLOCK) && near(s.temp_c, 66) && near(s.sm_clock_mhz, 1000),
          "package 1: %#x %g %g", s.present, s.temp_c, s.sm_clock_mhz);
    lode_sysfs_cpu_read_at(2, 100.0, &s);
    CHECK(s.present == 0, "package 2 has nothing (cpuinfo is not read where cpufreq exists): %#x", s.present);

    /* The CPU backend through the registry reads the same tree. */
    lode_device_ref *devs;
    size_t n;
    if (lode_registry_enumerate(&devs, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(devs[i].id, "cpu:0") != 0)
                continue;
            lode_device_read_sensors(&devs[i], &s);
            CHECK((s.present & LODE_SENSOR_TEMP) && (near(s.temp_c, 61) || near(s.temp_c, 66)),
                  "cpu:0 through its backend: %#x %g", s.present, s.temp_c);
        }
        free(devs);
    }
    for (size_t b = 0; b < lode_backend_count(); b++) {
        if (strcmp(lode_backend_name(b), "cpu") != 0)
            continue;
        char text[4096];
        lode_backend_describe(b, text, sizeof text);
        CHECK(strstr(text, "  sha256d paths: ") != NULL && strstr(text, "portable") != NULL &&
                  strstr(text, "  topology: ") != NULL,
              "cpu describe: '%s'", text);
    }
}

static void test_cpu_k10temp_cpuinfo_broken(void)
{
    new_root("lode_sensors_k10");
    put("/sys/class/hwmon/hwmon3/name", "k10temp\n");
    put("/sys/class/hwmon/hwmon3/temp1_label", "Tctl\n");
    put("/sys/class/hwmon/hwmon3/temp1_input", "75000\n");
    put("/sys/class/hwmon/hwmon3/temp2_label", "Tdie\n");
    put("/sys/class/hwmon/hwmon3/temp2_input", "65000\n");
    put("/sys/class/hwmon/hwmon5/name", "k10temp\n"); /* package 1: Tctl only */
    put("/sys/class/hwmon/hwmon5/temp1_label", "Tctl\n");
    put("/sys/class/hwmon/hwmon5/temp1_input", "72500\n");
    put("/proc/cpuinfo", "processor\t: 0\nphysical id\t: 0\ncpu MHz\t\t: 1800.5\n\n"
                         "processor\t: 1\nphysical id\t: 0\ncpu MHz\t\t: 2200.5\n\n"
                         "processor\t: 2\nphysical id\t: 1\ncpu MHz\t\t: 3000.0\n");
    lode_sensors s;
    lode_sysfs_cpu_read_at(0, 1.0, &s);
    CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_SM_CLOCK) && near(s.temp_c, 65) && near(s.sm_clock_mhz, 2000.5),
          "k10temp Tdie, cpuinfo mean of package 0: %#x %g %g", s.present, s.temp_c, s.sm_clock_mhz);
    lode_sysfs_cpu_read_at(1, 1.0, &s);
    CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_SM_CLOCK) && near(s.temp_c, 72.5) && near(s.sm_clock_mhz, 3000),
          "second k10temp, Tctl; last cpuinfo block without a blank line: %#x %g %g", s.present, s.temp_c,
          s.sm_clock_mhz);

    new_root("lode_sensors_broken");
    put("/sys/class/hwmon/hwmon0/name", "coretemp\n");
    put("/sys/class/hwmon/hwmon0/temp1_label", "Package id 0\n");
    put("/sys/class/hwmon/hwmon0/temp1_input", "warm\n");
    put("/sys/class/hwmon/hwmon1/name", "");            /* empty name */
    put("/sys/class/hwmon/hwmonX/name", "coretemp\n"); /* not a hwmon folder name */
    put("/sys/class/hwmon/hwmonX/temp1_label", "Package id 0\n");
    put("/sys/class/hwmon/hwmonX/temp1_input", "50000\n");
    put("/sys/class/powercap/intel-rapl:0/energy_uj", "");
    put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "-5\n");
    put("/proc/cpuinfo", "cpu MHz : fast\n\ncpu MHz :\n");
    lode_sysfs_cpu_read_at(0, 1.0, &s);
    lode_sysfs_cpu_read_at(0, 3.0, &s);
    CHECK(s.present == 0, "a broken tree reads as nothing: %#x", s.present);

    new_root("lode_sensors_empty");
    lode_sysfs_cpu_read_at(0, 1.0, &s);
    CHECK(s.present == 0, "an empty tree: %#x", s.present);
    long long v;
    char line[16];
    CHECK(!lode_sysfs_read_int("/nothing", &v) && !lode_sysfs_read_line("/nothing", line, sizeof line),
          "missing files");
    /* A root so long that no path fits: nothing read, nothing overflowed. */
    char longroot[700];
    memset(longroot, 'x', sizeof longroot - 1);
    longroot[sizeof longroot - 1] = '\0';
    setenv("LODE_TEST_SYSFS_ROOT", longroot, 1);
    lode_sysfs_cpu_read_at(0, 1.0, &s);
    CHECK(s.present == 0 && lode_sysfs_amdgpu_read("0000:03:00.0", &s) == -1, "an over-long root");
    unsetenv("LODE_TEST_SYSFS_ROOT");
}

/* ---- NVML ------------------------------------------------------------ */

static void test_nvml_missing(void)
{
    /* The default library is absent on a machine without NVIDIA's driver;
     * a path that cannot exist stands for it everywhere. */
    setenv("LODE_TEST_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    char why[256] = "", text[256];
    lode_sensors s = {.present = 0x80000000u};
    CHECK(lode_nvml_load(why, sizeof why) == -1 && strstr(why, "not loaded") != NULL, "missing: '%s'", why);
    CHECK(lode_nvml_read("0000:41:00.0", &s) == -1 && s.present == 0x80000000u, "no reading, out untouched");
    lode_nvml_describe(text, sizeof text);
    CHECK(strncmp(text, "NVML not loaded", 15) == 0, "describe: '%s'", text);
    char t[64];
    lode_nvml_throttle_text(0, t, sizeof t);
    CHECK(strcmp(t, "none") == 0, "0: '%s'", t);
    lode_nvml_throttle_text(0x1 | 0x8 | 0x20 | 0x40 | 0x4, t, sizeof t);
    CHECK(strcmp(t, "idle,power,hw-slowdown,sw-thermal,thermal") == 0, "bits: '%s'", t);
    lode_nvml_throttle_text(~0ull, t, 16);
    CHECK(strlen(t) < 16, "cut: '%s'", t);
    lode_nvml_throttle_text(1ull << 40, t, sizeof t);
    CHECK(strcmp(t, "other") == 0, "unknown bit: '%s'", t);
}

static void *read_gpu(void *arg)
{
    lode_sensors *s = arg;
    lode_nvml_read("0000:41:00.0", s);
    return NULL;
}

static int nvml_scenario(const char *name)
{
    const char *lib = getenv("LODE_TEST_NVML_LIB");
    if (lib == NULL) {
        fprintf(stderr, "set LODE_TEST_NVML_LIB to the fake library\n");
        return 2;
    }
    char why[256] = "", text[256];
    lode_sensors s;
    memset(&s, 0, sizeof s);
    if (strcmp(name, "nvml-full") == 0) {
        /* Eight threads read at once: NVML is initialised once. */
        pthread_t th[8];
        lode_sensors got[8];
        memset(got, 0, sizeof got);
        for (int i = 0; i < 8; i++)
            pthread_create(&th[i], NULL, read_gpu, &got[i]);
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
        void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
        union { void *obj; int (*fn)(void); } calls = {.obj = h ? dlsym(h, "fake_nvml_init_calls") : NULL};
        CHECK(calls.fn != NULL && calls.fn() == 1, "nvmlInit once: %d", calls.fn ? calls.fn() : -1);
        for (int i = 0; i < 8; i++)
            CHECK(got[i].present == got[0].present && near(got[i].temp_c, 64), "thread %d", i);
        CHECK(lode_nvml_read("0000:41:00.0", &s) == 0, "found by bus id");
        CHECK(s.present == (LODE_SENSOR_TEMP | LODE_SENSOR_POWER | LODE_SENSOR_SM_CLOCK | LODE_SENSOR_MEM_CLOCK |
                            LODE_SENSOR_THROTTLE | LODE_SENSOR_ENERGY),
              "no fan (NOT_SUPPORTED is absent, not 0): %#x", s.present);
        /* The counter's millijoules as joules: 9 readings so far (8 threads
         * and this one), 2.5 J apart from 1 234 567.89 J. */
        CHECK(near(s.energy_j, 1234567.89 + 8 * 2.5), "energy %.3f J", s.energy_j);
        lode_sensors next;
        CHECK(lode_nvml_read("0000:41:00.0", &next) == 0 && near(next.energy_j - s.energy_j, 2.5),
              "energy step %.3f J", next.energy_j - s.energy_j);
        lode_device_info info = {.bus_id = "0000:41:00.0"};
        lode_nvml_identify(&info);
        CHECK(strcmp(info.uuid, "GPU-0b9f3c1e-7d2a-4c55-9e01-5a6b7c8d9e0f") == 0 && info.nvml_index == 3,
              "identity '%s' %u", info.uuid, info.nvml_index);
        lode_device_info other = {.bus_id = "0000:42:00.0", .uuid = "stale"};
        lode_nvml_identify(&other);
        CHECK(other.uuid[0] == '\0', "another bus id: no identity ('%s')", other.uuid);
        CHECK(near(s.temp_c, 64) && near(s.power_w, 487.25) && near(s.sm_clock_mhz, 1980) &&
                  near(s.mem_clock_mhz, 2619) && strcmp(s.throttle, "power,thermal,other") == 0,
              "values %g %g W %g %g '%s'", s.temp_c, s.power_w, s.sm_clock_mhz, s.mem_clock_mhz, s.throttle);
        memset(&s, 0, sizeof s);
        CHECK(lode_nvml_read("41:00.0", &s) == 0 && near(s.temp_c, 64), "no domain: domain 0 is added");
        lode_sensors untouched = {.present = 0x80000000u};
        s = untouched;
        CHECK(lode_nvml_read("0000:42:00.0", &s) == -1 && s.present == 0x80000000u, "another bus id: not found");
        CHECK(lode_nvml_read("", &s) == -1 && lode_nvml_read(NULL, &s) == -1, "no bus id");
        lode_nvml_describe(text, sizeof text);
        CHECK(strcmp(text, "NVML 12.999.1-fake, driver 999.1-fake") == 0, "describe: '%s'", text);
    } else if (strcmp(name, "nvml-minimal") == 0) {
        CHECK(lode_nvml_read("0000:41:00.0", &s) == 0 && s.present == LODE_SENSOR_TEMP && near(s.temp_c, 64),
              "only the temperature: %#x", s.present);
        lode_device_info info = {.bus_id = "0000:41:00.0"};
        lode_nvml_identify(&info);
        CHECK(info.uuid[0] == '\0', "no UUID entry point: no identity ('%s')", info.uuid);
        lode_nvml_describe(text, sizeof text);
        CHECK(strcmp(text, "NVML (version unknown), driver unknown") == 0, "describe: '%s'", text);
    } else if (strcmp(name, "nvml-no-lookup") == 0) {
        CHECK(lode_nvml_load(why, sizeof why) == -1 && strstr(why, "lacks nvmlDeviceGetHandleByPciBusId_v2") != NULL,
              "a required symbol missing: '%s'", why);
        CHECK(lode_nvml_read("0000:41:00.0", &s) == -1 && s.present == 0, "no reading");
    } else if (strcmp(name, "nvml-init-fails") == 0) {
        CHECK(lode_nvml_load(why, sizeof why) == -1 && strstr(why, "Driver Not Loaded") != NULL,
              "init fails: '%s'", why);
        CHECK(lode_nvml_read("0000:41:00.0", &s) == -1 && s.present == 0, "no reading");
        lode_nvml_describe(text, sizeof text);
        CHECK(strstr(text, "not initialised") != NULL, "describe: '%s'", text);
    } else {
        fprintf(stderr, "unknown scenario %s\n", name);
        return 2;
    }
    return test_summary();
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return nvml_scenario(argv[1]);
    snprintf(root, sizeof root, "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    test_format_and_parse();
    new_root("lode_sensors_registry");
    test_registry();
    test_amdgpu();
    test_cpu_coretemp_rapl_cpufreq();
    test_cpu_k10temp_cpuinfo_broken();
    test_nvml_missing();
    remove_roots();
    return test_summary();
}
