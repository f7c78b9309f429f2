#include "core/backend_support/sysfs_sensors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/settings.h"

/* Readings outside these are a driver's nonsense (a sensor not ready reads
 * 0 or -273 on some), not a temperature or power to show. */
#define TEMP_MIN_C (-60.0)
#define TEMP_MAX_C 200.0
#define POWER_MAX_W 10000.0

/* root + the absolute path made from fmt; false if it does not fit. */
static bool make_path(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool make_path(char *out, size_t len, const char *fmt, ...)
{
    const char *root = lode_setting_text(LODE_SETTING_TEST_SYSFS_ROOT);
    int n = snprintf(out, len, "%s", root != NULL ? root : "");
    if (n < 0 || (size_t)n >= len)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(out + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return m >= 0 && (size_t)m < len - (size_t)n;
}

/* Up to len-1 bytes of a regular file (sysfs attributes are small).
 * O_NONBLOCK: a FIFO planted in the tree must not hang the reader. */
static bool read_small(const char *full, char *out, size_t len)
{
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        do
            n = read(fd, out, len - 1);
        while (n < 0 && errno == EINTR);
    }
    close(fd);
    if (n <= 0)
        return false;
    out[n] = '\0';
    return true;
}

static bool read_int_full(const char *full, long long *out)
{
    char buf[64];
    if (!read_small(full, buf, sizeof buf))
        return false;
    char *p = buf + strspn(buf, " \t");
    char *end = NULL;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno == ERANGE || end[strspn(end, " \t\r\n")] != '\0')
        return false;
    *out = v;
    return true;
}

static bool read_line_full(const char *full, char *out, size_t len)
{
    if (len < 2 || !read_small(full, out, len))
        return false;
    out[strcspn(out, "\r\n")] = '\0';
    return out[0] != '\0';
}

bool lode_sysfs_read_int(const char *path, long long *out)
{
    char full[512];
    return make_path(full, sizeof full, "%s", path) && read_int_full(full, out);
}

bool lode_sysfs_read_line(const char *path, char *out, size_t len)
{
    char full[512];
    return make_path(full, sizeof full, "%s", path) && read_line_full(full, out, len);
}

/* dir/name as an integer. */
static bool attr_int(const char *dir, const char *name, long long *out)
{
    char full[600];
    int n = snprintf(full, sizeof full, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof full && read_int_full(full, out);
}

static bool attr_line(const char *dir, const char *name, char *out, size_t len)
{
    char full[600];
    int n = snprintf(full, sizeof full, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof full && read_line_full(full, out, len);
}

static void set_temp(lode_sensors *out, double c)
{
    if (c >= TEMP_MIN_C && c <= TEMP_MAX_C) {
        out->temp_c = c;
        out->present |= LODE_SENSOR_TEMP;
    }
}

static void set_power(lode_sensors *out, double w)
{
    if (w >= 0 && w <= POWER_MAX_W) {
        out->power_w = w;
        out->present |= LODE_SENSOR_POWER;
    }
}

/* The hwmon folders of a folder (".../hwmon/hwmon3"), in hwmon number
 * order, each with its full path; returns how many (at most max). */
#define MAX_HWMON 64
typedef char hwmon_path[512];

static int cmp_hwmon(const void *a, const void *b)
{
    const char *x = strrchr((const char *)a, '/'), *y = strrchr((const char *)b, '/');
    long nx = strtol(x + 6, NULL, 10), ny = strtol(y + 6, NULL, 10); /* past "/hwmon" */
    return nx < ny ? -1 : nx > ny;
}

static int list_hwmon(const char *dir, hwmon_path *paths, int max)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        if (strncmp(e->d_name, "hwmon", 5) != 0 || e->d_name[5] < '0' || e->d_name[5] > '9')
            continue;
        int k = snprintf(paths[n], sizeof paths[n], "%s/%s", dir, e->d_name);
        if (k > 0 && (size_t)k < sizeof paths[n])
            n++;
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof paths[0], cmp_hwmon);
    return n;
}

/* ---- amdgpu ---------------------------------------------------------- */

int lode_sysfs_amdgpu_read(const char *bus_id, lode_sensors *out)
{
    if (bus_id == NULL || bus_id[0] == '\0')
        return -1;
    /* "03:00.0" has no domain: sysfs names it "0000:03:00.0". */
    const char *first = strchr(bus_id, ':');
    bool has_domain = first != NULL && strchr(first + 1, ':') != NULL;
    char dev_dir[512], lower[32];
    size_t i = 0;
    for (; bus_id[i] != '\0' && i + 1 < sizeof lower; i++) /* sysfs spells it in lower case */
        lower[i] = (char)(bus_id[i] >= 'A' && bus_id[i] <= 'F' ? bus_id[i] - 'A' + 'a' : bus_id[i]);
    lower[i] = '\0';
    if (!make_path(dev_dir, sizeof dev_dir, "/sys/bus/pci/devices/%s%s/hwmon", has_domain ? "" : "0000:",
                   lower))
        return -1;
    hwmon_path *hw = malloc(sizeof *hw * MAX_HWMON);
    if (hw == NULL)
        return -1;
    int n = list_hwmon(dev_dir, hw, MAX_HWMON), found = -1;
    for (int h = 0; h < n && found < 0; h++) {
        char name[64];
        if (!attr_line(hw[h], "name", name, sizeof name) || strcmp(name, "amdgpu") != 0)
            continue;
        found = 0;
        lode_sensors s = {0};
        /* temp1 edge, temp2 junction (the hot spot), temp3 mem (HBM): the die is the hotter of
         * the first two; a sensor without a label is a die sensor. */
        double hottest = -1e9;
        for (int t = 1; t <= 8; t++) {
            char attr[32], label[64] = "";
            long long milli;
            snprintf(attr, sizeof attr, "temp%d_input", t);
            if (!attr_int(hw[h], attr, &milli))
                continue;
            snprintf(attr, sizeof attr, "temp%d_label", t);
            if (attr_line(hw[h], attr, label, sizeof label) && strcmp(label, "edge") != 0 &&
                strcmp(label, "junction") != 0)
                continue;
            double c = (double)milli / 1000.0;
            if (c >= TEMP_MIN_C && c <= TEMP_MAX_C && c > hottest)
                hottest = c;
        }
        if (hottest > -1e9)
            set_temp(&s, hottest);
        long long uw, uj;
        if (attr_int(hw[h], "power1_average", &uw) || attr_int(hw[h], "power1_input", &uw))
            set_power(&s, (double)uw / 1e6);
        /* The hwmon ABI's energy counter (µJ), where the driver has one. */
        if (attr_int(hw[h], "energy1_input", &uj) && uj >= 0) {
            s.energy_j = (double)uj / 1e6;
            s.present |= LODE_SENSOR_ENERGY;
        }
        long long pwm, pwm_max = 255, rpm, rpm_max;
        if (attr_int(hw[h], "pwm1", &pwm)) {
            if (!attr_int(hw[h], "pwm1_max", &pwm_max))
                pwm_max = 255; /* the hwmon ABI's range */
            if (pwm >= 0 && pwm_max > 0 && pwm <= pwm_max) {
                s.fan_percent = 100.0 * (double)pwm / (double)pwm_max;
                s.present |= LODE_SENSOR_FAN;
            }
        } else if (attr_int(hw[h], "fan1_input", &rpm) && attr_int(hw[h], "fan1_max", &rpm_max) &&
                   rpm >= 0 && rpm_max > 0) {
            s.fan_percent = 100.0 * (double)(rpm < rpm_max ? rpm : rpm_max) / (double)rpm_max;
            s.present |= LODE_SENSOR_FAN;
        }
        long long hz;
        if (attr_int(hw[h], "freq1_input", &hz) && hz > 0) {
            s.sm_clock_mhz = (double)hz / 1e6;
            s.present |= LODE_SENSOR_SM_CLOCK;
        }
        if (attr_int(hw[h], "freq2_input", &hz) && hz > 0) {
            s.mem_clock_mhz = (double)hz / 1e6;
            s.present |= LODE_SENSOR_MEM_CLOCK;
        }
        *out = s;
    }
    free(hw);
    return found;
}

/* ---- CPU ------------------------------------------------------------- */

/* The package's temperature from coretemp ("Package id N", "Physical id N"
 * on old kernels) or the N-th k10temp (Tdie: the real die temperature;
 * Tctl may carry a fan-control offset). */
static void cpu_temp(unsigned package, lode_sensors *out)
{
    char dir[512];
    if (!make_path(dir, sizeof dir, "/sys/class/hwmon"))
        return;
    hwmon_path *hw = malloc(sizeof *hw * MAX_HWMON);
    if (hw == NULL)
        return;
    int n = list_hwmon(dir, hw, MAX_HWMON);
    unsigned k10 = 0;
    for (int h = 0; h < n && !(out->present & LODE_SENSOR_TEMP); h++) {
        char name[64];
        if (!attr_line(hw[h], "name", name, sizeof name))
            continue;
        bool coretemp = strcmp(name, "coretemp") == 0;
        bool k10temp = strcmp(name, "k10temp") == 0;
        if (!coretemp && !k10temp)
            continue;
        if (k10temp && k10++ != package)
            continue;
        long long tctl = 0;
        bool have_tctl = false;
        for (int t = 1; t <= 64 && !(out->present & LODE_SENSOR_TEMP); t++) {
            char attr[32], label[64];
            long long milli;
            snprintf(attr, sizeof attr, "temp%d_label", t);
            if (!attr_line(hw[h], attr, label, sizeof label))
                continue;
            snprintf(attr, sizeof attr, "temp%d_input", t);
            if (coretemp) {
                unsigned id;
                char extra;
                if ((sscanf(label, "Package id %u%c", &id, &extra) == 1 ||
                     sscanf(label, "Physical id %u%c", &id, &extra) == 1) &&
                    id == package && attr_int(hw[h], attr, &milli))
                    set_temp(out, (double)milli / 1000.0);
            } else if (strcmp(label, "Tdie") == 0 && attr_int(hw[h], attr, &milli)) {
                set_temp(out, (double)milli / 1000.0);
            } else if (strcmp(label, "Tctl") == 0 && attr_int(hw[h], attr, &tctl)) {
                have_tctl = true;
            }
        }
        if (k10temp && have_tctl && !(out->present & LODE_SENSOR_TEMP))
            set_temp(out, (double)tctl / 1000.0);
    }
    free(hw);
}

/* RAPL: the package's energy counter (µJ) between two readings. */
#define MAX_PACKAGES 64
/* Two readings closer than this give no new power (too noisy): the
 * previous figure stays. */
#define RAPL_MIN_INTERVAL_S 0.2
static pthread_mutex_t rapl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool have;        /* a previous reading */
    double at;        /* its time */
    long long energy; /* its counter */
    bool have_power;  /* the last figure */
    double power_w;
    double total_j;   /* every step since the first reading: the energy counter lode shows */
} rapl[MAX_PACKAGES];

static void cpu_power(unsigned package, double now, lode_sensors *out)
{
    if (package >= MAX_PACKAGES)
        return;
    char dir[512];
    long long energy, range = 0;
    if (!make_path(dir, sizeof dir, "/sys/class/powercap/intel-rapl:%u", package) ||
        !attr_int(dir, "energy_uj", &energy) || energy < 0)
        return;
    if (!attr_int(dir, "max_energy_range_uj", &range) || range <= 0)
        range = 0;
    pthread_mutex_lock(&rapl_lock);
    if (rapl[package].have && now - rapl[package].at >= RAPL_MIN_INTERVAL_S) {
        long long used = energy - rapl[package].energy;
        if (used < 0 && range > 0 && rapl[package].energy <= range)
            used += range + 1; /* the counter wrapped: it counts 0..max_energy_range_uj */
        if (used >= 0) {
            double w = (double)used / 1e6 / (now - rapl[package].at);
            rapl[package].have_power = w <= POWER_MAX_W;
            rapl[package].power_w = w;
            if (rapl[package].have_power)
                rapl[package].total_j += (double)used / 1e6;
        } else {
            rapl[package].have_power = false; /* a reset counter: start again */
        }
        rapl[package].at = now;
        rapl[package].energy = energy;
    } else if (!rapl[package].have || now < rapl[package].at) {
        rapl[package].have = true;
        rapl[package].at = now;
        rapl[package].energy = energy;
        rapl[package].have_power = false;
    }
    if (rapl[package].have_power)
        set_power(out, rapl[package].power_w);
    /* Unwrapped and from lode's first reading: the counter never goes back. */
    out->energy_j = rapl[package].total_j;
    out->present |= LODE_SENSOR_ENERGY;
    pthread_mutex_unlock(&rapl_lock);
}

/* The mean current clock of the package's CPUs: cpufreq's scaling_cur_freq
 * (kHz); where no CPU has cpufreq (VMs), /proc/cpuinfo's "cpu MHz" of the
 * processors whose "physical id" is the package (all of them where no
 * line says). */
static void cpu_clock(unsigned package, lode_sensors *out)
{
    char dir[512];
    double sum = 0;
    unsigned count = 0;
    bool cpufreq = false; /* any CPU has a clock there: cpuinfo is not needed */
    if (make_path(dir, sizeof dir, "/sys/devices/system/cpu")) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9')
                continue;
            char cpu[800];
            long long id = 0, khz;
            int k = snprintf(cpu, sizeof cpu, "%s/%s", dir, e->d_name);
            if (k < 0 || (size_t)k >= sizeof cpu)
                continue;
            if (!attr_int(cpu, "cpufreq/scaling_cur_freq", &khz) || khz <= 0)
                continue;
            cpufreq = true;
            if (attr_int(cpu, "topology/physical_package_id", &id) && id != (long long)package)
                continue;
            sum += (double)khz / 1000.0;
            count++;
        }
        if (d != NULL)
            closedir(d);
    }
    char path[512];
    FILE *f = !cpufreq && make_path(path, sizeof path, "/proc/cpuinfo") ? fopen(path, "r") : NULL;
    if (f != NULL) {
        char line[256];
        long long physical = -1; /* the current processor block's package */
        double mhz = 0;
        bool have_mhz = false;
        for (;;) {
            bool eof = fgets(line, sizeof line, f) == NULL;
            if (eof || line[0] == '\n') { /* a processor block ends */
                if (have_mhz && (physical < 0 || physical == (long long)package)) {
                    sum += mhz;
                    count++;
                }
                physical = -1;
                have_mhz = false;
                if (eof)
                    break;
                continue;
            }
            const char *colon = strchr(line, ':');
            if (colon == NULL)
                continue;
            char *end;
            if (strncmp(line, "physical id", 11) == 0) {
                long long v = strtoll(colon + 1, &end, 10);
                if (end != colon + 1)
                    physical = v;
            } else if (strncmp(line, "cpu MHz", 7) == 0) {
                double v = strtod(colon + 1, &end);
                if (end != colon + 1 && v > 0 && v < 1e5) {
                    mhz = v;
                    have_mhz = true;
                }
            }
        }
        fclose(f);
    }
    if (count > 0) {
        out->sm_clock_mhz = sum / count;
        out->present |= LODE_SENSOR_SM_CLOCK;
    }
}

void lode_sysfs_cpu_read_at(unsigned package, double now, lode_sensors *out)
{
    memset(out, 0, sizeof *out);
    cpu_temp(package, out);
    cpu_power(package, now, out);
    cpu_clock(package, out);
}

void lode_sysfs_cpu_read(unsigned package, lode_sensors *out)
{
    lode_sysfs_cpu_read_at(package, lode_clock_s(), out);
}
