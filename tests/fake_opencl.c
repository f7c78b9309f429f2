/* A stand-in for libOpenCL.so.1 that lode loads when LODE_TEST_OPENCL_LIB
 * names it, so that CI runs the OpenCL backend's host code for AMD GPUs
 * (backend-opencl/ocl_devices.c, the listing, the sensors by bus id) on a
 * machine without one. One platform, "AMD Accelerated Parallel Processing",
 * with two GPUs answering the queries as AMD's ROCm driver does (names,
 * values and cl_amd_device_attribute_query's attributes):
 *   gfx1100  AMD Radeon RX 7900 XTX, 48 CUs, wave32, PCI 03:00.0, cl_amd_media_ops
 *   gfx90a   AMD Instinct MI250X, 110 CUs, wave64, PCI 29:00.0, listed without
 *            cl_amd_media_ops so that the tests see a device without it
 * Built with FAKE_OPENCL_NVIDIA it is NVIDIA's driver instead, with one H200
 * (cl_nv_device_attribute_query: sm_90, warp 32, PCI 0000:41:00.0), so that
 * the tests see what the AMD fields leave of NVIDIA's devices.
 * No device computes: clCreateContext fails with CL_DEVICE_NOT_AVAILABLE, and
 * every other entry point lode loads exists and answers CL_INVALID_CONTEXT. */
#include <stdint.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct fake_device {
    const char *name, *board, *extensions;
    cl_uint compute_units, wavefront, arch_major, arch_minor; /* AMD: GFXIP; NVIDIA: compute capability */
    cl_ulong global_mem;
    unsigned char bus;
} fake_device;

#ifdef FAKE_OPENCL_NVIDIA
/* cl_nv_device_attribute_query's values (the Khronos header has some). */
#define NV_CC_MAJOR 0x4000
#define NV_CC_MINOR 0x4001
#define NV_WARP 0x4003
#define NV_PCI_BUS 0x4008
#define NV_PCI_SLOT 0x4009
#define NV_PCI_DOMAIN 0x400A
#define VENDOR_ID 0x10de
#define VENDOR "NVIDIA Corporation"
#define PLATFORM_NAME "NVIDIA CUDA"
#define PLATFORM_VERSION "OpenCL 3.0 CUDA 12.8.97"
#define DRIVER "570.124.06"
#define LOCAL_BYTES 49152
#define MAX_GROUP 1024
#define MAX_ALLOC_PERCENT 25 /* OpenCL's minimum, as NVIDIA answers */
static const fake_device gpus[] = {
    {"NVIDIA H200", "",
     "cl_khr_global_int32_base_atomics cl_khr_local_int32_base_atomics cl_khr_int64_base_atomics "
     "cl_khr_byte_addressable_store cl_nv_device_attribute_query cl_nv_compiler_options",
     132, 32, 9, 0, UINT64_C(150110011392), 0x41},
};
#else
#define VENDOR_ID 0x1002
#define VENDOR "Advanced Micro Devices, Inc."
#define PLATFORM_NAME "AMD Accelerated Parallel Processing"
#define PLATFORM_VERSION "OpenCL 2.1 AMD-APP (3614.0)"
#define DRIVER "3614.0 (HSA1.1,LC)"
#define LOCAL_BYTES 65536
#define MAX_GROUP 256
#define MAX_ALLOC_PERCENT 85
static const fake_device gpus[] = {
    {"gfx1100", "AMD Radeon RX 7900 XTX",
     "cl_khr_fp64 cl_khr_global_int32_base_atomics cl_khr_local_int32_base_atomics cl_khr_int64_base_atomics "
     "cl_khr_byte_addressable_store cl_khr_subgroups cl_amd_device_attribute_query cl_amd_media_ops "
     "cl_amd_media_ops2 cl_khr_image2d_from_buffer",
     48, 32, 11, 0, UINT64_C(25753026560), 0x03},
    {"gfx90a:sramecc+:xnack-", "AMD Instinct MI250X",
     "cl_khr_fp64 cl_khr_global_int32_base_atomics cl_khr_local_int32_base_atomics cl_khr_int64_base_atomics "
     "cl_khr_byte_addressable_store cl_khr_subgroups cl_amd_device_attribute_query",
     110, 64, 9, 0, UINT64_C(68702699520), 0x29},
};
#endif
#define GPU_COUNT (sizeof gpus / sizeof gpus[0])

static int the_platform; /* its address is the platform's handle, the devices' the same way */

static const fake_device *device_of(cl_device_id id)
{
    for (size_t i = 0; i < GPU_COUNT; i++)
        if ((const void *)id == (const void *)&gpus[i])
            return &gpus[i];
    return NULL;
}

/* OpenCL's query convention: the size is told, the value copied where it fits. */
static cl_int answer(const void *value, size_t size, size_t room, void *out, size_t *size_ret)
{
    if (size_ret != NULL)
        *size_ret = size;
    if (out == NULL)
        return CL_SUCCESS;
    if (room < size)
        return CL_INVALID_VALUE;
    memcpy(out, value, size);
    return CL_SUCCESS;
}

static cl_int answer_text(const char *text, size_t room, void *out, size_t *size_ret)
{
    return answer(text, strlen(text) + 1, room, out, size_ret);
}

EXPORT cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *out, cl_uint *count)
{
    if (count != NULL)
        *count = 1;
    if (out != NULL && n > 0)
        out[0] = (cl_platform_id)(void *)&the_platform;
    return CL_SUCCESS;
}

EXPORT cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info what, size_t room, void *out, size_t *size_ret)
{
    if ((void *)p != (void *)&the_platform)
        return CL_INVALID_PLATFORM;
    switch (what) {
    case CL_PLATFORM_NAME: return answer_text(PLATFORM_NAME, room, out, size_ret);
    case CL_PLATFORM_VENDOR: return answer_text(VENDOR, room, out, size_ret);
    case CL_PLATFORM_VERSION: return answer_text(PLATFORM_VERSION, room, out, size_ret);
    case CL_PLATFORM_PROFILE: return answer_text("FULL_PROFILE", room, out, size_ret);
    case CL_PLATFORM_EXTENSIONS: return answer_text("cl_khr_icd cl_amd_event_callback", room, out, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

EXPORT cl_int clGetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *out, cl_uint *count)
{
    if ((void *)p != (void *)&the_platform)
        return CL_INVALID_PLATFORM;
    if (!(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT)) && type != CL_DEVICE_TYPE_ALL)
        return CL_DEVICE_NOT_FOUND;
    if (count != NULL)
        *count = GPU_COUNT;
    for (cl_uint i = 0; out != NULL && i < n && i < GPU_COUNT; i++)
        out[i] = (cl_device_id)(void *)&gpus[i];
    return CL_SUCCESS;
}

/* The answers every device gives the same way. */
static cl_int common_info(cl_device_info what, size_t room, void *out, size_t *size_ret)
{
    const cl_bool yes = CL_TRUE;
    const cl_uint vendor_id = VENDOR_ID;
    const size_t max_group = MAX_GROUP;
    const cl_ulong local = LOCAL_BYTES;
    const cl_device_type gpu = CL_DEVICE_TYPE_GPU;
    switch (what) {
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE: return answer(&yes, sizeof yes, room, out, size_ret);
    case CL_DEVICE_VENDOR: return answer_text(VENDOR, room, out, size_ret);
    case CL_DRIVER_VERSION: return answer_text(DRIVER, room, out, size_ret);
    case CL_DEVICE_VERSION: return answer_text("OpenCL 2.0 ", room, out, size_ret);
    case CL_DEVICE_TYPE: return answer(&gpu, sizeof gpu, room, out, size_ret);
    case CL_DEVICE_VENDOR_ID: return answer(&vendor_id, sizeof vendor_id, room, out, size_ret);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: return answer(&max_group, sizeof max_group, room, out, size_ret);
    case CL_DEVICE_LOCAL_MEM_SIZE: return answer(&local, sizeof local, room, out, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

#ifdef FAKE_OPENCL_NVIDIA
static cl_int vendor_info(const fake_device *g, cl_device_info what, size_t room, void *out, size_t *size_ret)
{
    const cl_uint bus = g->bus, slot = 0, domain = 0; /* slot: device 0 << 3 | function 0 */
    switch (what) {
    case NV_CC_MAJOR: return answer(&g->arch_major, sizeof(cl_uint), room, out, size_ret);
    case NV_CC_MINOR: return answer(&g->arch_minor, sizeof(cl_uint), room, out, size_ret);
    case NV_WARP: return answer(&g->wavefront, sizeof(cl_uint), room, out, size_ret);
    case NV_PCI_BUS: return answer(&bus, sizeof bus, room, out, size_ret);
    case NV_PCI_SLOT: return answer(&slot, sizeof slot, room, out, size_ret);
    case NV_PCI_DOMAIN: return answer(&domain, sizeof domain, room, out, size_ret);
    default: return CL_INVALID_VALUE;
    }
}
#else
static cl_int vendor_info(const fake_device *g, cl_device_info what, size_t room, void *out, size_t *size_ret)
{
    cl_device_topology_amd topo;
    memset(&topo, 0, sizeof topo);
    topo.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
    topo.pcie.bus = (char)g->bus;
    switch (what) {
    case CL_DEVICE_BOARD_NAME_AMD: return answer_text(g->board, room, out, size_ret);
    case CL_DEVICE_WAVEFRONT_WIDTH_AMD: return answer(&g->wavefront, sizeof(cl_uint), room, out, size_ret);
    case CL_DEVICE_GFXIP_MAJOR_AMD: return answer(&g->arch_major, sizeof(cl_uint), room, out, size_ret);
    case CL_DEVICE_GFXIP_MINOR_AMD: return answer(&g->arch_minor, sizeof(cl_uint), room, out, size_ret);
    case CL_DEVICE_TOPOLOGY_AMD: return answer(&topo, sizeof topo, room, out, size_ret);
    default: return CL_INVALID_VALUE;
    }
}
#endif

EXPORT cl_int clGetDeviceInfo(cl_device_id id, cl_device_info what, size_t room, void *out, size_t *size_ret)
{
    const fake_device *g = device_of(id);
    if (g == NULL)
        return CL_INVALID_DEVICE;
    cl_ulong max_alloc = g->global_mem / 100 * MAX_ALLOC_PERCENT;
    switch (what) {
    case CL_DEVICE_NAME: return answer_text(g->name, room, out, size_ret);
    case CL_DEVICE_EXTENSIONS: return answer_text(g->extensions, room, out, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS: return answer(&g->compute_units, sizeof(cl_uint), room, out, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return answer(&g->global_mem, sizeof(cl_ulong), room, out, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return answer(&max_alloc, sizeof max_alloc, room, out, size_ret);
    default: break;
    }
    cl_int rc = vendor_info(g, what, room, out, size_ret);
    return rc != CL_INVALID_VALUE ? rc : common_info(what, room, out, size_ret);
}

/* The device cannot be used: what a driver says for a GPU that is lost,
 * reset or taken by another process. */
EXPORT cl_context clCreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devices,
                                  void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                  void *user, cl_int *err)
{
    (void)props, (void)n, (void)devices, (void)notify, (void)user;
    if (err != NULL)
        *err = CL_DEVICE_NOT_AVAILABLE;
    return NULL;
}

/* The rest: there is never a context, so nothing made in one exists (the
 * parameters are there for the prototypes alone). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NO_CONTEXT_STATUS(name, params)                                                                      \
    EXPORT cl_int name params;                                                                             \
    cl_int name params { return CL_INVALID_CONTEXT; }
#define NO_CONTEXT_OBJECT(type, name, params, err)                                                           \
    EXPORT type name params;                                                                               \
    type name params                                                                                       \
    {                                                                                                      \
        if (err != NULL)                                                                                   \
            *err = CL_INVALID_CONTEXT;                                                                     \
        return NULL;                                                                                       \
    }

NO_CONTEXT_STATUS(clReleaseContext, (cl_context c))
NO_CONTEXT_OBJECT(cl_command_queue, clCreateCommandQueue,
                  (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *err), err)
NO_CONTEXT_STATUS(clReleaseCommandQueue, (cl_command_queue q))
NO_CONTEXT_OBJECT(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t n, void *h, cl_int *err), err)
NO_CONTEXT_STATUS(clReleaseMemObject, (cl_mem m))
NO_CONTEXT_OBJECT(cl_program, clCreateProgramWithSource,
                  (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *err), err)
NO_CONTEXT_OBJECT(cl_program, clCreateProgramWithBinary,
                  (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b,
                   cl_int *st, cl_int *err), err)
NO_CONTEXT_STATUS(clBuildProgram, (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
                                   void(CL_CALLBACK *f)(cl_program, void *), void *u))
NO_CONTEXT_STATUS(clGetProgramBuildInfo,
                  (cl_program p, cl_device_id d, cl_program_build_info w, size_t n, void *v, size_t *r))
NO_CONTEXT_STATUS(clGetProgramInfo, (cl_program p, cl_program_info w, size_t n, void *v, size_t *r))
NO_CONTEXT_STATUS(clReleaseProgram, (cl_program p))
NO_CONTEXT_OBJECT(cl_kernel, clCreateKernel, (cl_program p, const char *name, cl_int *err), err)
NO_CONTEXT_STATUS(clReleaseKernel, (cl_kernel k))
NO_CONTEXT_STATUS(clSetKernelArg, (cl_kernel k, cl_uint i, size_t n, const void *v))
NO_CONTEXT_STATUS(clGetKernelWorkGroupInfo,
                  (cl_kernel k, cl_device_id d, cl_kernel_work_group_info w, size_t n, void *v, size_t *r))
NO_CONTEXT_STATUS(clEnqueueNDRangeKernel, (cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *o,
                                           const size_t *g, const size_t *l, cl_uint ne, const cl_event *w,
                                           cl_event *e))
NO_CONTEXT_STATUS(clEnqueueWriteBuffer, (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t n,
                                         const void *h, cl_uint ne, const cl_event *w, cl_event *e))
NO_CONTEXT_STATUS(clEnqueueReadBuffer, (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t n, void *h,
                                        cl_uint ne, const cl_event *w, cl_event *e))
NO_CONTEXT_OBJECT(void *, clEnqueueMapBuffer, (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f,
                                               size_t o, size_t n, cl_uint ne, const cl_event *w, cl_event *e,
                                               cl_int *err), err)
NO_CONTEXT_STATUS(clEnqueueUnmapMemObject,
                  (cl_command_queue q, cl_mem m, void *p, cl_uint ne, const cl_event *w, cl_event *e))
NO_CONTEXT_STATUS(clFlush, (cl_command_queue q))
NO_CONTEXT_STATUS(clFinish, (cl_command_queue q))
NO_CONTEXT_STATUS(clWaitForEvents, (cl_uint n, const cl_event *e))
NO_CONTEXT_STATUS(clGetEventInfo, (cl_event e, cl_event_info w, size_t n, void *v, size_t *r))
NO_CONTEXT_STATUS(clGetEventProfilingInfo, (cl_event e, cl_profiling_info w, size_t n, void *v, size_t *r))
NO_CONTEXT_STATUS(clRetainEvent, (cl_event e))
NO_CONTEXT_STATUS(clReleaseEvent, (cl_event e))
