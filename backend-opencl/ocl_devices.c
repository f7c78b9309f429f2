/* OpenCL device enumeration (ocl_devices.h). */
#include "backend-opencl/ocl_devices.h"
#include "core/base/text.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

/* cl_nv_device_attribute_query values; the Khronos headers leave them out. */
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#endif
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif
#ifndef CL_DEVICE_WARP_SIZE_NV
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#endif
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#endif
#ifndef CL_DEVICE_PCI_SLOT_ID_NV
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

#define MAX_DEVICES 64
#define MAX_PLATFORMS 16

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static ocl_dev_desc devices[MAX_DEVICES];
static int device_count;
static char probe_why[256];
/* Every platform found, with or without devices (lode -V lists them). */
static ocl_platform_desc platforms_found[MAX_PLATFORMS];
static int platform_count;

static void dev_str(cl_device_id d, cl_device_info what, char *out, size_t len)
{
    out[0] = '\0';
    if (ocl.clGetDeviceInfo(d, what, len, out, NULL) != CL_SUCCESS)
        out[0] = '\0';
    out[len - 1] = '\0';
    /* Some drivers pad names with spaces. */
    size_t n = strlen(out);
    while (n > 0 && isspace((unsigned char)out[n - 1]))
        out[--n] = '\0';
    size_t lead = strspn(out, " \t");
    memmove(out, out + lead, n - lead + 1);
}

static bool has_ext(const char *exts, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = exts; (p = strstr(p, name)) != NULL; p += len)
        if ((p == exts || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

/* PCI address from whichever vendor query the driver answers:
 * "0000:41:00.0", or "41:00.0" where the driver does not say the domain
 * (AMD's topology query has none; older NVIDIA drivers). The registry
 * matches it against the other backends' devices to hide aliases. */
static bool read_bus_id(const ocl_dev_desc *d, const char *exts, char out[32])
{
    if (has_ext(exts, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr info;
        if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, NULL) == CL_SUCCESS) {
            snprintf(out, 32, "%04x:%02x:%02x.%x", info.pci_domain & 0xffff, info.pci_bus & 0xff,
                     info.pci_device & 0x1f, info.pci_function & 7);
            return true;
        }
    }
    if (has_ext(exts, "cl_nv_device_attribute_query")) {
        cl_uint bus = 0, slot = 0, domain = 0;
        if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, NULL) == CL_SUCCESS &&
            ocl.clGetDeviceInfo(d->id, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, NULL) == CL_SUCCESS) {
            /* The slot id packs device << 3 | function; newer drivers also
             * answer the domain. */
            if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, NULL) ==
                CL_SUCCESS)
                snprintf(out, 32, "%04x:%02x:%02x.%x", domain & 0xffff, bus & 0xff, (slot >> 3) & 0x1f,
                         slot & 7);
            else
                snprintf(out, 32, "%02x:%02x.%x", bus & 0xff, (slot >> 3) & 0x1f, slot & 7);
            return true;
        }
    }
    if (has_ext(exts, "cl_amd_device_attribute_query")) {
        cl_device_topology_amd topo;
        if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_TOPOLOGY_AMD, sizeof topo, &topo, NULL) == CL_SUCCESS &&
            topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
            snprintf(out, 32, "%02x:%02x.%x", (unsigned)(unsigned char)topo.pcie.bus,
                     (unsigned)(unsigned char)topo.pcie.device & 0x1f,
                     (unsigned)(unsigned char)topo.pcie.function & 7);
            return true;
        }
    }
    out[0] = '\0';
    return false;
}

static cl_uint dev_uint(cl_device_id d, cl_device_info what)
{
    cl_uint v = 0;
    return ocl.clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

/* AMD's shape: the wavefront (64 on GCN/CDNA, 32 by default on RDNA), the
 * gfx target (ROCm names the device by it: "gfx90a:sramecc+:xnack-"; older
 * drivers answer the GFXIP version) and the board's marketing name. */
static void read_amd_shape(ocl_dev_desc *d)
{
    d->wavefront = dev_uint(d->id, CL_DEVICE_WAVEFRONT_WIDTH_AMD);
    dev_str(d->id, CL_DEVICE_BOARD_NAME_AMD, d->board, sizeof d->board);
    if (strncmp(d->name, "gfx", 3) == 0) {
        size_t n = strcspn(d->name, ":");
        n = n < sizeof d->arch - 1 ? n : sizeof d->arch - 1;
        memcpy(d->arch, d->name, n);
        d->arch[n] = '\0';
        return;
    }
    cl_uint major = dev_uint(d->id, CL_DEVICE_GFXIP_MAJOR_AMD), minor = dev_uint(d->id, CL_DEVICE_GFXIP_MINOR_AMD);
    if (major != 0)
        snprintf(d->arch, sizeof d->arch, "gfxip %u.%u", (unsigned)major, (unsigned)minor);
}

/* Local memory for every device; the SIMD width and the architecture where
 * the vendor's query extension tells them (no standard query does before a
 * kernel is built). */
static void read_shape(ocl_dev_desc *d, const char *exts)
{
    if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem, &d->local_mem, NULL) !=
        CL_SUCCESS)
        d->local_mem = 0;
    if (has_ext(exts, "cl_amd_device_attribute_query")) {
        read_amd_shape(d);
    } else if (has_ext(exts, "cl_nv_device_attribute_query")) {
        d->wavefront = dev_uint(d->id, CL_DEVICE_WARP_SIZE_NV);
        cl_uint major = dev_uint(d->id, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
        if (major != 0)
            snprintf(d->arch, sizeof d->arch, "sm_%u%u", (unsigned)major,
                     (unsigned)dev_uint(d->id, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV));
    }
    if (d->wavefront > 1024 || (d->wavefront & (d->wavefront - 1)) != 0)
        d->wavefront = 0; /* not a width a work-group could be made of */
}

static unsigned read_caps(const ocl_dev_desc *d, const char *exts)
{
    unsigned caps = 0;
    if (d->vendor_id == 0x10de && has_ext(exts, "cl_nv_device_attribute_query")) {
        /* shfl.sync: sm_30 and newer (every GPU a current driver runs). */
        cl_uint major = 0;
        if (ocl.clGetDeviceInfo(d->id, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                                NULL) == CL_SUCCESS && major >= 3)
            caps |= OCL_CAP_NV_SHFL;
    }
    if (has_ext(exts, "cl_khr_subgroups") && has_ext(exts, "cl_khr_subgroup_shuffle"))
        caps |= OCL_CAP_KHR_SHUFFLE;
    if (has_ext(exts, "cl_intel_subgroups"))
        caps |= OCL_CAP_INTEL_SHUFFLE;
    if (has_ext(exts, "cl_nv_compiler_options"))
        caps |= OCL_CAP_NV_OPTIONS;
    if (has_ext(exts, "cl_amd_media_ops"))
        caps |= OCL_CAP_AMD_MEDIA_OPS;
    return caps;
}

static void add_device(cl_platform_id p, cl_device_id id, const char *pname, const char *pversion)
{
    if (device_count == MAX_DEVICES)
        return;
    cl_bool available = CL_FALSE, compiler = CL_FALSE;
    ocl.clGetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
    if (!available || !compiler) /* the kernels are compiled at run time */
        return;
    ocl_dev_desc *d = &devices[device_count];
    memset(d, 0, sizeof *d);
    d->platform = p;
    d->id = id;
    snprintf(d->platform_name, sizeof d->platform_name, "%s", pname);
    snprintf(d->platform_version, sizeof d->platform_version, "%s", pversion);
    dev_str(id, CL_DEVICE_NAME, d->name, sizeof d->name);
    dev_str(id, CL_DEVICE_VENDOR, d->vendor, sizeof d->vendor);
    dev_str(id, CL_DRIVER_VERSION, d->driver, sizeof d->driver);
    ocl.clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_VENDOR_ID, sizeof d->vendor_id, &d->vendor_id, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units, &d->compute_units, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
    ocl.clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_work_group, &d->max_work_group, NULL);
    if (d->compute_units == 0)
        d->compute_units = 1;
    if (d->max_work_group == 0)
        d->max_work_group = 64;

    size_t ext_len = 0;
    char *exts = NULL;
    if (ocl.clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len) == CL_SUCCESS &&
        (exts = calloc(ext_len + 1, 1)) != NULL &&
        ocl.clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, ext_len, exts, NULL) != CL_SUCCESS)
        exts[0] = '\0';
    const char *e = exts ? exts : "";
    d->caps = read_caps(d, e);
    read_shape(d, e);
    if (d->type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR))
        read_bus_id(d, e, d->bus_id);
    free(exts);
    device_count++;
}

static void probe_run(void)
{
    if (ocl_api_load(probe_why, sizeof probe_why) != 0)
        return;
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint np = 0;
    cl_int err = ocl.clGetPlatformIDs(MAX_PLATFORMS, platforms, &np);
    if (err != CL_SUCCESS || np == 0) {
        char buf[32];
        snprintf(probe_why, sizeof probe_why,
                 "no OpenCL platform (clGetPlatformIDs: %s): no driver is registered in "
                 "/etc/OpenCL/vendors (or OCL_ICD_VENDORS)", np == 0 && err == CL_SUCCESS ?
                 "0 platforms" : ocl_error_name(err, buf));
        return;
    }
    for (cl_uint i = 0; i < np && i < MAX_PLATFORMS; i++) {
        char pname[128] = "", pversion[128] = "";
        ocl.clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        ocl.clGetPlatformInfo(platforms[i], CL_PLATFORM_VERSION, sizeof pversion, pversion, NULL);
        pname[sizeof pname - 1] = pversion[sizeof pversion - 1] = '\0';
        ocl_platform_desc *pd = &platforms_found[platform_count++];
        snprintf(pd->name, sizeof pd->name, "%s", pname);
        snprintf(pd->version, sizeof pd->version, "%s", pversion);
        cl_device_id ids[MAX_DEVICES];
        cl_uint nd = 0;
        if (ocl.clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &nd) != CL_SUCCESS)
            continue; /* CL_DEVICE_NOT_FOUND: a platform with no device */
        pd->devices = nd;
        for (cl_uint j = 0; j < nd && j < MAX_DEVICES; j++)
            add_device(platforms[i], ids[j], pname, pversion);
    }
    if (device_count == 0)
        snprintf(probe_why, sizeof probe_why, "no usable OpenCL device (%u platform(s), none "
                 "with an available device and compiler)", (unsigned)np);
}

int ocl_devices_probe(char *why, size_t why_len)
{
    pthread_once(&probe_once, probe_run);
    if (device_count == 0 && why != NULL)
        snprintf(why, why_len, "%s", probe_why);
    return device_count > 0 ? 0 : -1;
}

int ocl_devices_count(void)
{
    pthread_once(&probe_once, probe_run);
    return device_count;
}

const ocl_dev_desc *ocl_devices_get(int index)
{
    return index >= 0 && index < ocl_devices_count() ? &devices[index] : NULL;
}

int ocl_platforms_count(void)
{
    pthread_once(&probe_once, probe_run);
    return platform_count;
}

const ocl_platform_desc *ocl_platforms_get(int index)
{
    return index >= 0 && index < ocl_platforms_count() ? &platforms_found[index] : NULL;
}

void ocl_device_details(const ocl_dev_desc *d, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    if (d->arch[0] != '\0')
        lode_appendf(out, len, &used, "%s, ", d->arch);
    if (d->wavefront != 0)
        lode_appendf(out, len, &used, "%s %u, ", d->vendor_id == 0x10de ? "warp" : "wavefront", d->wavefront);
    lode_appendf(out, len, &used, "%u compute units, local memory %llu KiB, work-groups up to %zu",
                 (unsigned)d->compute_units, (unsigned long long)(d->local_mem >> 10), d->max_work_group);
    if (d->caps & OCL_CAP_AMD_MEDIA_OPS)
        lode_appendf(out, len, &used, ", media ops");
    lode_appendf(out, len, &used, "; driver %s; %s", d->driver[0] ? d->driver : "unknown",
                 d->platform_version[0] ? d->platform_version : d->platform_name);
}

unsigned ocl_group_floor(const ocl_dev_desc *d, unsigned floor, size_t max)
{
    /* NVIDIA's warps argue the same, but its shapes are the ones measured on
     * the H200 (docs/PERFORMANCE.md) and stay as they are. */
    unsigned wave = d->vendor_id == OCL_VENDOR_AMD ? d->wavefront : 0;
    if (wave <= floor)
        return floor;
    while (wave > floor && wave > max) /* a kernel the device runs in smaller groups only */
        wave /= 2;
    return wave;
}
