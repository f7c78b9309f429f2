/* The registry over fake backends (no GPU needed):
 * - a device whose PCI bus id a backend listed earlier already has is
 *   hidden (an alias: the same GPU through CUDA and OpenCL), with or
 *   without a PCI domain in either id, in any letter case;
 * - ids number the devices listed, so "beta:0" is beta's first device not
 *   hidden, and -d, the listing and an open handle all agree on it;
 * - LODE_OPENCL_SHOW_ALL=1 lists OpenCL's aliases too (the fake named
 *   "opencl"; no other backend has the setting);
 * - a backend whose every device is an alias is unavailable, and says why;
 * - a device list that names only early backends does not enumerate the
 *   later ones (their drivers are never loaded: start-up CPU time);
 * - trial factoring's default (lode_registry_select_gpus): the GPUs only
 *   when there are any, the host CPU (the real cpu backend) otherwise; an
 *   OpenCL CPU device (PoCL's) is no GPU. */
#include <stdlib.h>

#include "backend-cpu/cpu_backend.h"
#include "core/base/status.h"
#include "core/dispatch/registry.h"
#include "tests/test_util.h"

struct lode_device {
    int index;
};

static int probe_ok(char why[LODE_WHY_LEN])
{
    why[0] = '\0';
    return 0;
}

static int set_info(lode_device_info *out, const char *name, const char *bus_id)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->bus_id, sizeof out->bus_id, "%s", bus_id);
    out->workers = out->max_workers = 1;
    out->algo_mask = 1u << LODE_ALGO_SHA256D;
    return 0;
}

/* What the last open was told about its device. */
static struct {
    int index;
    char id[32];
} opened;

static int fake_open(int index, const lode_open_params *p, lode_device **out)
{
    opened.index = index;
    snprintf(opened.id, sizeof opened.id, "%s", p->id ? p->id : "(none)");
    *out = calloc(1, sizeof **out);
    return *out ? LODE_OK : LODE_ERR_NO_MEMORY;
}

static void fake_close(lode_device *d) { free(d); }
static int fake_set_work(lode_device *d, const lode_work *w) { (void)d, (void)w; return LODE_OK; }

static int fake_scan(lode_device *d, const lode_range *r, lode_hits *h, uint64_t *done, const atomic_int *a)
{
    (void)d, (void)h, (void)a;
    *done = r->count;
    return LODE_OK;
}

#define FAKE_OPS(backend_name, prefix)                                                   \
    {.name = backend_name, .probe = probe_ok, .device_count = prefix##_count,           \
     .device_info = prefix##_info, .open = fake_open, .close = fake_close,               \
     .set_work = fake_set_work, .scan = fake_scan}

/* alpha: the preferred backend, two GPUs. */
static const char *const alpha_bus[] = {"0000:41:00.0", "0000:4a:00.0"};
/* How often each fake backend was asked for its devices. */
static int listed_alpha, listed_beta, listed_opencl;

static int alpha_count(void) { return listed_alpha++, 2; }
static int alpha_info(int i, lode_device_info *out) { return set_info(out, "alpha gpu", alpha_bus[i]); }

/* beta: alpha's first GPU again, a device without a bus id, alpha's second
 * GPU without a domain and in capitals, and a GPU of its own in another
 * PCI domain than alpha's first. */
static const char *const beta_bus[] = {"0000:41:00.0", "", "4A:00.0", "0001:41:00.0"};
static int beta_count(void) { return listed_beta++, 4; }
static int beta_info(int i, lode_device_info *out) { return set_info(out, "beta device", beta_bus[i]); }

/* opencl: nothing but aliases of alpha's GPUs. */
static const char *const opencl_bus[] = {"0000:4a:00.0", "0000:41:00.0"};
static int opencl_count(void) { return listed_opencl++, 2; }
static int opencl_info(int i, lode_device_info *out) { return set_info(out, "opencl gpu", opencl_bus[i]); }

static const lode_backend_ops alpha = FAKE_OPS("alpha", alpha);
static const lode_backend_ops beta = FAKE_OPS("beta", beta);
static const lode_backend_ops opencl_ops = FAKE_OPS("opencl", opencl);

static const lode_backend_ops *const fakes[] = {&alpha, &beta, &opencl_ops};

/* For trial factoring: "gpu", two GPUs that run tf; "hostcl", a CPU
 * device of an OpenCL driver (on the host's cores, as PoCL's); "shagpu", a
 * GPU that runs sha256d only. */
static int tf_info(lode_device_info *out, const char *name, const char *bus_id, bool host)
{
    set_info(out, name, bus_id);
    out->algo_mask |= 1u << LODE_ALGO_TF;
    out->on_host_cpu = host;
    return 0;
}
static int gpu_count(void) { return 2; }
static int gpu_info(int i, lode_device_info *out) { return tf_info(out, "tf gpu", i ? "0000:02:00.0" : "0000:01:00.0", false); }
static int hostcl_count(void) { return 1; }
static int hostcl_info(int i, lode_device_info *out) { (void)i; return tf_info(out, "pthread cpu", "", true); }
static int shagpu_count(void) { return 1; }
static int shagpu_info(int i, lode_device_info *out) { (void)i; return set_info(out, "sha gpu", "0000:03:00.0"); }
static const lode_backend_ops gpu_ops = FAKE_OPS("gpu", gpu);
static const lode_backend_ops hostcl_ops = FAKE_OPS("hostcl", hostcl);
static const lode_backend_ops shagpu_ops = FAKE_OPS("shagpu", shagpu);

/* The ids lode_registry_select_gpus picks for spec, "a,b|left" with "|left"
 * when it left host-CPU devices out. */
static void gpus_selected(const char *spec, char *out, size_t len)
{
    lode_device_ref *devices;
    size_t count, used = 0;
    bool left = false;
    char err[256] = "";
    out[0] = '\0';
    if (lode_registry_select_gpus(spec, LODE_ALGO_TF, &devices, &count, &left, err, sizeof err) != 0) {
        snprintf(out, len, "error: %s", err);
        return;
    }
    for (size_t i = 0; i < count && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", devices[i].id);
    if (left && used < len)
        snprintf(out + used, len - used, "|left");
    free(devices);
}

static void test_tf_default_gpus(void)
{
    char got[256], cpus[128], want[256];
    const lode_backend_ops *const cpu_only[] = {&lode_backend_cpu};
    lode_registry_use_backends(cpu_only, 1);
    gpus_selected("cpu", cpus, sizeof cpus); /* cpu:0, or one a NUMA node */
    gpus_selected(NULL, got, sizeof got);
    CHECK(strcmp(got, cpus) == 0 && strncmp(cpus, "cpu:0", 5) == 0, "the CPU alone: %s (%s)", got, cpus);
    const lode_backend_ops *const with_gpus[] = {&gpu_ops, &hostcl_ops, &lode_backend_cpu};
    lode_registry_use_backends(with_gpus, 3);
    gpus_selected(NULL, got, sizeof got);
    CHECK(strcmp(got, "gpu:0,gpu:1|left") == 0, "GPUs here: the GPUs only: %s", got);
    gpus_selected("cpu,gpu:1", got, sizeof got);
    snprintf(want, sizeof want, "gpu:1,%s", cpus);
    CHECK(strcmp(got, want) == 0, "-d names the CPU: it is used: %s", got);
    gpus_selected("hostcl", got, sizeof got);
    CHECK(strcmp(got, "hostcl:0") == 0, "-d names the OpenCL CPU device: %s", got);
    /* The other commands' default is unchanged: the CPU backend too. */
    lode_device_ref *devices;
    size_t count;
    char err[256];
    CHECK(lode_registry_select(NULL, LODE_ALGO_TF, &devices, &count, err, sizeof err) == 0 && count > 2 &&
              strcmp(devices[2].id, "cpu:0") == 0,
          "lode_registry_select: %zu devices", count);
    free(devices);

    const lode_backend_ops *const no_gpu[] = {&shagpu_ops, &hostcl_ops, &lode_backend_cpu};
    lode_registry_use_backends(no_gpu, 3);
    gpus_selected(NULL, got, sizeof got);
    CHECK(strcmp(got, cpus) == 0, "no GPU that runs tf (an OpenCL CPU device is none): the CPU: %s", got);
    lode_registry_use_backends(fakes, sizeof fakes / sizeof fakes[0]);
}

/* The ids listed, "alpha:0=0 ..." (id=backend index). */
static void listing(char *out, size_t len)
{
    lode_device_ref *devices;
    size_t count;
    out[0] = '\0';
    if (lode_registry_enumerate(&devices, &count) != 0) {
        snprintf(out, len, "enumerate failed");
        return;
    }
    size_t used = 0;
    for (size_t i = 0; i < count && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s=%d", i ? " " : "", devices[i].id,
                                 devices[i].index);
    free(devices);
}

static void test_aliases_hidden(void)
{
    char got[512];
    listing(got, sizeof got);
    CHECK(strcmp(got, "alpha:0=0 alpha:1=1 beta:0=1 beta:1=3") == 0, "listed: %s", got);

    char why[LODE_WHY_LEN];
    CHECK(lode_backend_probe(0, why) == 0, "alpha: %s", why);
    CHECK(lode_backend_probe(1, why) == 0, "beta has devices of its own: %s", why);
    CHECK(lode_backend_probe(2, why) != 0, "opencl has only aliases");
    const char *want = "every opencl device is also a alpha device and listed as such "
                       "(LODE_OPENCL_SHOW_ALL=1 lists both)";
    CHECK(strcmp(why, want) == 0, "opencl: '%s'", why);
}

static void test_selection_uses_listed_ids(void)
{
    lode_device_ref *devices;
    size_t count;
    char err[256] = "";
    int rc = lode_registry_select("beta:1", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc == 0 && count == 1, "select beta:1: %s", err);
    if (rc == 0 && count == 1) {
        CHECK(devices[0].index == 3, "beta:1 is beta's device 3, got %d", devices[0].index);
        lode_handle h;
        lode_open_params params = {.algo = LODE_ALGO_SHA256D};
        CHECK(lode_handle_open(&h, &devices[0], &params) == LODE_OK, "open");
        CHECK(opened.index == 3 && strcmp(opened.id, "beta:1") == 0, "the backend opened %d as '%s'",
              opened.index, opened.id);
        lode_handle_close(&h);
        free(devices);
    }

    rc = lode_registry_select("beta:2", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "no device 'beta:2'") != NULL, "beta:2 is hidden: %s", err);
    if (rc == 0)
        free(devices);

    rc = lode_registry_select("opencl", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "every opencl device is also a alpha device") != NULL, "opencl: %s", err);
    if (rc == 0)
        free(devices);

    /* The default selection: every device listed, aliases left out. */
    rc = lode_registry_select(NULL, LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc == 0 && count == 4, "default selection: %zu devices (%s)", count, err);
    if (rc == 0)
        free(devices);
}

static void test_later_backends_not_listed(void)
{
    lode_device_ref *devices;
    size_t count;
    char err[256] = "";
    listed_alpha = listed_beta = listed_opencl = 0;
    int rc = lode_registry_select("alpha:1", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc == 0 && count == 1 && devices[0].index == 1, "select alpha:1: %s", err);
    CHECK(listed_alpha > 0 && listed_beta == 0 && listed_opencl == 0,
          "alpha:1 listed alpha %d, beta %d, opencl %d times", listed_alpha, listed_beta, listed_opencl);
    if (rc == 0)
        free(devices);
    listed_alpha = listed_beta = listed_opencl = 0;
    rc = lode_registry_select("beta:1,alpha", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc == 0 && count == 3, "select beta:1,alpha: %zu devices (%s)", count, err);
    CHECK(listed_beta > 0 && listed_opencl == 0, "beta:1,alpha listed opencl %d times", listed_opencl);
    if (rc == 0)
        free(devices);
    /* OpenCL showing all hides nothing: its ids need no earlier backend. */
    setenv("LODE_OPENCL_SHOW_ALL", "1", 1);
    listed_alpha = listed_beta = listed_opencl = 0;
    rc = lode_registry_select("opencl:1", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc == 0 && count == 1 && devices[0].index == 1, "select opencl:1 showing all: %s", err);
    CHECK(listed_alpha == 0 && listed_beta == 0 && listed_opencl > 0,
          "opencl:1 showing all listed alpha %d, beta %d, opencl %d times", listed_alpha, listed_beta,
          listed_opencl);
    if (rc == 0)
        free(devices);
    unsetenv("LODE_OPENCL_SHOW_ALL");
    /* Hiding its aliases, it needs both. */
    listed_alpha = listed_beta = listed_opencl = 0;
    rc = lode_registry_select("opencl", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc != 0 || (listed_alpha > 0 && listed_beta > 0), "opencl listed alpha %d, beta %d times",
          listed_alpha, listed_beta);
    if (rc == 0)
        free(devices);
    /* An unknown name still gets the full listing's error. */
    rc = lode_registry_select("alpha:0,gamma", LODE_ALGO_SHA256D, &devices, &count, err, sizeof err);
    CHECK(rc != 0 && strstr(err, "unknown device 'gamma'") != NULL, "gamma: %s", err);
    if (rc == 0)
        free(devices);
}

static void test_show_all(void)
{
    /* Only OpenCL has the setting: beta keeps its aliases hidden. */
    setenv("LODE_OPENCL_SHOW_ALL", "1", 1);
    char got[512];
    listing(got, sizeof got);
    CHECK(strstr(got, "beta:0=1 beta:1=3") != NULL, "listed: %s", got);
    unsetenv("LODE_OPENCL_SHOW_ALL");

    setenv("LODE_OPENCL_SHOW_ALL", "1", 1);
    char why[LODE_WHY_LEN];
    CHECK(lode_backend_probe(2, why) == 0, "opencl shows all: %s", why);
    listing(got, sizeof got);
    CHECK(strstr(got, "opencl:0=0 opencl:1=1") != NULL, "listed: %s", got);
    unsetenv("LODE_OPENCL_SHOW_ALL");
}

/* The alias rule looks only at earlier backends: in the other order, the
 * first listed keeps the GPU. */
static void test_order_decides(void)
{
    static const lode_backend_ops *const reversed[] = {&opencl_ops, &alpha};
    lode_registry_use_backends(reversed, 2);
    char got[512];
    listing(got, sizeof got);
    CHECK(strcmp(got, "opencl:0=0 opencl:1=1") == 0, "listed: %s", got);
    char why[LODE_WHY_LEN];
    CHECK(lode_backend_probe(1, why) != 0 && strstr(why, "every alpha device is also a opencl device"),
          "alpha after opencl: %s", why);
    lode_registry_use_backends(fakes, sizeof fakes / sizeof fakes[0]);
}

int main(void)
{
    unsetenv("LODE_OPENCL_SHOW_ALL");
    lode_registry_use_backends(fakes, sizeof fakes / sizeof fakes[0]);
    test_aliases_hidden();
    test_selection_uses_listed_ids();
    test_later_backends_not_listed();
    test_show_all();
    test_order_decides();
    test_tf_default_gpus();
    lode_registry_use_backends(NULL, 0);
    return test_summary();
}
