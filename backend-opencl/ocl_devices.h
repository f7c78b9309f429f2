/* OpenCL device enumeration: every available device of every platform, with
 * its PCI bus id where the driver tells it. A GPU that the CUDA backend also
 * lists is hidden above the backends, by the registry (core/dispatch/registry.h),
 * which matches the bus ids. */
#ifndef LODE_OCL_DEVICES_H
#define LODE_OCL_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

#include "backend-opencl/ocl_api.h"

#define OCL_VENDOR_AMD 0x1002u /* CL_DEVICE_VENDOR_ID of AMD's GPUs */

/* What the kernels may use beyond OpenCL C 1.2. */
enum {
    OCL_CAP_NV_SHFL = 1u << 0,       /* NVIDIA: inline PTX shfl.sync */
    OCL_CAP_KHR_SHUFFLE = 1u << 1,   /* cl_khr_subgroups + cl_khr_subgroup_shuffle */
    OCL_CAP_INTEL_SHUFFLE = 1u << 2, /* cl_intel_subgroups */
    OCL_CAP_NV_OPTIONS = 1u << 3,    /* cl_nv_compiler_options: -cl-nv-maxrregcount=N */
    OCL_CAP_AMD_MEDIA_OPS = 1u << 4, /* cl_amd_media_ops: amd_bitalign, amd_bytealign */
};

typedef struct ocl_dev_desc {
    cl_platform_id platform;
    cl_device_id id;
    char name[128];
    char vendor[128];
    char platform_name[128];
    char platform_version[128];
    char driver[128];
    char bus_id[32]; /* "0000:41:00.0", "41:00.0" without a domain, "" if unknown */
    cl_device_type type;
    cl_uint vendor_id;
    cl_uint compute_units;
    cl_ulong global_mem, max_alloc;
    size_t max_work_group;
    cl_ulong local_mem;   /* CL_DEVICE_LOCAL_MEM_SIZE */
    unsigned wavefront;   /* lanes a SIMD instruction runs (AMD wavefront, NVIDIA warp); 0 if unknown */
    char arch[32];        /* "gfx1100", "sm_90"; "" if unknown */
    char board[128];      /* AMD's board name ("AMD Radeon RX 7900 XTX"); "" if unknown */
    unsigned caps;
} ocl_dev_desc;

/* Enumerates once (thread-safe). 0 if at least one device is listed, else
 * -1 with the reason in why. */
int ocl_devices_probe(char *why, size_t why_len);
int ocl_devices_count(void);
/* NULL for an index out of range. */
const ocl_dev_desc *ocl_devices_get(int index);

/* One line of what a problem report needs beyond the name and bus id:
 * "gfx1100, wavefront 32, 48 compute units, local memory 64 KiB, work-groups
 * up to 256, media ops; driver 3614.0 (HSA1.1,LC); OpenCL 2.1 AMD-APP (3614.0)". */
void ocl_device_details(const ocl_dev_desc *d, char *out, size_t len);

/* The smallest work-group size worth launching, from an algorithm's floor
 * (a power of two) and the kernel's largest group: on AMD whole wavefronts
 * (64 on GCN/CDNA, 32 or 64 on RDNA), as a smaller group leaves SIMD lanes
 * idle; elsewhere the floor as given. */
unsigned ocl_group_floor(const ocl_dev_desc *d, unsigned floor, size_t max);

/* A platform the ICD loader listed. */
typedef struct ocl_platform_desc {
    char name[128];
    char version[128]; /* "OpenCL 3.0 PoCL 3.1 ..." */
    unsigned devices;  /* its devices of every type, usable or not */
} ocl_platform_desc;
/* The platforms found by the enumeration (0 where none or no library). */
int ocl_platforms_count(void);
const ocl_platform_desc *ocl_platforms_get(int index);

#endif
