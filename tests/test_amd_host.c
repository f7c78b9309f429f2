/* The OpenCL backend's device fields and work-group floors for AMD GPUs,
 * through the fake driver library of tests/fake_opencl.c (which
 * LODE_TEST_OPENCL_LIB names): what ocl_devices.c reads must be what the
 * fake answers, each value written here from the fake's table, and the
 * local sizes the algorithms pick must be whole wavefronts on AMD while
 * NVIDIA's and PoCL's stay as they were (`test_amd_host amd`; `nvidia`: the
 * fake's NVIDIA build). */
#include "backend-opencl/ocl_devices.h"
#include "backend-opencl/ocl_internal.h"
#include "test_util.h"

static const ocl_dev_desc *find(const char *arch)
{
    for (int i = 0; i < ocl_devices_count(); i++)
        if (strcmp(ocl_devices_get(i)->arch, arch) == 0)
            return ocl_devices_get(i);
    return NULL;
}

static void test_fields(void)
{
    char why[256] = "";
    int rc = ocl_devices_probe(why, sizeof why);
    CHECK(rc == 0 && ocl_devices_count() == 2, "the fake's two GPUs: rc %d, %d devices, %s", rc,
          ocl_devices_count(), why);
    const ocl_dev_desc *rdna = find("gfx1100"), *cdna = find("gfx90a");
    CHECK(rdna != NULL && cdna != NULL, "arch from the device name, the feature suffix cut (gfx90a:sramecc+:xnack-)");
    if (rdna == NULL || cdna == NULL)
        return;
    CHECK(rdna->vendor_id == OCL_VENDOR_AMD && strcmp(rdna->board, "AMD Radeon RX 7900 XTX") == 0,
          "vendor %#x, board '%s'", rdna->vendor_id, rdna->board);
    CHECK(rdna->wavefront == 32 && cdna->wavefront == 64, "wavefronts %u %u", rdna->wavefront, cdna->wavefront);
    CHECK(rdna->local_mem == 65536 && cdna->local_mem == 65536, "local memory %llu",
          (unsigned long long)rdna->local_mem);
    CHECK(rdna->compute_units == 48 && cdna->compute_units == 110, "compute units %u %u", rdna->compute_units,
          cdna->compute_units);
    /* AMD's topology query has no PCI domain: sysfs's lookup takes it as 0000. */
    CHECK(strcmp(rdna->bus_id, "03:00.0") == 0 && strcmp(cdna->bus_id, "29:00.0") == 0, "bus ids '%s' '%s'",
          rdna->bus_id, cdna->bus_id);
    CHECK((rdna->caps & OCL_CAP_AMD_MEDIA_OPS) && !(cdna->caps & OCL_CAP_AMD_MEDIA_OPS), "media ops %#x %#x",
          rdna->caps, cdna->caps);
    CHECK(strcmp(rdna->platform_name, "AMD Accelerated Parallel Processing") == 0 &&
              strcmp(rdna->platform_version, "OpenCL 2.1 AMD-APP (3614.0)") == 0 &&
              strcmp(rdna->driver, "3614.0 (HSA1.1,LC)") == 0,
          "platform '%s' '%s', driver '%s'", rdna->platform_name, rdna->platform_version, rdna->driver);
    char line[256];
    ocl_device_details(cdna, line, sizeof line);
    CHECK(strcmp(line, "gfx90a, wavefront 64, 110 compute units, local memory 64 KiB, work-groups up to 256; "
                       "driver 3614.0 (HSA1.1,LC); OpenCL 2.1 AMD-APP (3614.0)") == 0,
          "details '%s'", line);
}

static void test_floors(void)
{
    ocl_dev_desc wave64 = {.vendor_id = OCL_VENDOR_AMD, .wavefront = 64};
    ocl_dev_desc wave32 = {.vendor_id = OCL_VENDOR_AMD, .wavefront = 32};
    ocl_dev_desc amd_unknown = {.vendor_id = OCL_VENDOR_AMD};
    ocl_dev_desc nvidia = {.vendor_id = 0x10de, .wavefront = 32};
    ocl_dev_desc pocl = {.vendor_id = 0x10006};
    CHECK(ocl_group_floor(&wave64, 4, 256) == 64 && ocl_group_floor(&wave32, 4, 256) == 32, "whole wavefronts");
    CHECK(ocl_group_floor(&wave64, 128, 256) == 128, "a higher floor stands");
    CHECK(ocl_group_floor(&wave64, 4, 32) == 32 && ocl_group_floor(&wave64, 16, 8) == 16,
          "within the kernel's largest group, never below the algorithm's floor");
    CHECK(ocl_group_floor(&amd_unknown, 4, 256) == 4 && ocl_group_floor(&nvidia, 4, 256) == 4 &&
              ocl_group_floor(&pocl, 4, 256) == 4,
          "unknown wavefront, NVIDIA and PoCL: the floor as given");
    /* As the SHA-256d and scrypt clamps combine them: a tuned 16 becomes a wavefront. */
    CHECK(ocl_pow2_local(16, 256, ocl_group_floor(&wave64, 4, 256)) == 64, "16 on wave64 -> 64");
    CHECK(ocl_pow2_local(16, 256, ocl_group_floor(&wave32, 4, 256)) == 32, "16 on wave32 -> 32");
    CHECK(ocl_pow2_local(128, 256, ocl_group_floor(&wave64, 4, 256)) == 128, "128 stays");
    CHECK(ocl_pow2_local(16, 256, ocl_group_floor(&nvidia, 4, 256)) == 16, "NVIDIA: 16 stays");
}

/* The NVIDIA build of the fake: the NVIDIA query's fields, the bus id with
 * its domain (as NVML wants it) and the floor as it was. */
static void test_nvidia(void)
{
    char why[256] = "";
    const ocl_dev_desc *d = ocl_devices_probe(why, sizeof why) == 0 ? ocl_devices_get(0) : NULL;
    CHECK(d != NULL && ocl_devices_count() == 1, "one H200: %s", why);
    if (d == NULL)
        return;
    CHECK(strcmp(d->arch, "sm_90") == 0 && d->wavefront == 32 && d->local_mem == 49152 && d->board[0] == '\0',
          "arch '%s', warp %u, local %llu, board '%s'", d->arch, d->wavefront, (unsigned long long)d->local_mem,
          d->board);
    CHECK(strcmp(d->bus_id, "0000:41:00.0") == 0, "bus id '%s'", d->bus_id);
    CHECK(ocl_group_floor(d, 4, 256) == 4 && ocl_group_floor(d, 32, 256) == 32, "NVIDIA's floors as given");
}

int main(int argc, char **argv)
{
    const bool nvidia = argc > 1 && strcmp(argv[1], "nvidia") == 0;
    if (getenv("LODE_TEST_OPENCL_LIB") == NULL || argc != 2 || (!nvidia && strcmp(argv[1], "amd") != 0)) {
        fprintf(stderr, "usage: LODE_TEST_OPENCL_LIB=<tests/fake_opencl.c's library> test_amd_host amd|nvidia\n");
        return 2;
    }
    if (nvidia) {
        test_nvidia();
    } else {
        test_fields();
        test_floors();
    }
    return test_summary();
}
