/* The OpenCL API, loaded at run time.
 *
 * lode does not link libOpenCL: ocl_api_load() dlopens libOpenCL.so.1 (the
 * ICD loader) and fills the table `ocl` with the entry points the backend
 * uses, so a binary built with OpenCL support starts on machines without
 * it. The Khronos headers supply the types and constants only. */
#ifndef LODE_OCL_API_H
#define LODE_OCL_API_H

/* OpenCL 1.2 is the floor: clCreateCommandQueue and friends, no 2.0 API. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stddef.h>

/* X(return type, name, parameter list) for every function used. */
#define OCL_FUNCTIONS(X)                                                                           \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                           \
    X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *))    \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
    X(cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *))          \
    X(cl_context, clCreateContext,                                                                 \
      (const cl_context_properties *, cl_uint, const cl_device_id *,                               \
       void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *))        \
    X(cl_int, clReleaseContext, (cl_context))                                                      \
    X(cl_command_queue, clCreateCommandQueue,                                                      \
      (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))                           \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue))                                           \
    X(cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *))               \
    X(cl_int, clReleaseMemObject, (cl_mem))                                                        \
    X(cl_program, clCreateProgramWithSource,                                                       \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                              \
    X(cl_program, clCreateProgramWithBinary,                                                       \
      (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **,          \
       cl_int *, cl_int *))                                                                        \
    X(cl_int, clBuildProgram,                                                                      \
      (cl_program, cl_uint, const cl_device_id *, const char *,                                    \
       void(CL_CALLBACK *)(cl_program, void *), void *))                                           \
    X(cl_int, clGetProgramBuildInfo,                                                               \
      (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *))                 \
    X(cl_int, clGetProgramInfo, (cl_program, cl_program_info, size_t, void *, size_t *))          \
    X(cl_int, clReleaseProgram, (cl_program))                                                      \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                             \
    X(cl_int, clReleaseKernel, (cl_kernel))                                                        \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                          \
    X(cl_int, clGetKernelWorkGroupInfo,                                                            \
      (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *))              \
    X(cl_int, clEnqueueNDRangeKernel,                                                              \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,       \
       cl_uint, const cl_event *, cl_event *))                                                     \
    X(cl_int, clEnqueueWriteBuffer,                                                                \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, \
       cl_event *))                                                                                \
    X(cl_int, clEnqueueReadBuffer,                                                                 \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,       \
       cl_event *))                                                                                \
    X(void *, clEnqueueMapBuffer,                                                                  \
      (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint, const cl_event *,  \
       cl_event *, cl_int *))                                                                      \
    X(cl_int, clEnqueueUnmapMemObject,                                                             \
      (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *))                   \
    X(cl_int, clFlush, (cl_command_queue))                                                         \
    X(cl_int, clFinish, (cl_command_queue))                                                        \
    X(cl_int, clWaitForEvents, (cl_uint, const cl_event *))                                        \
    X(cl_int, clGetEventInfo, (cl_event, cl_event_info, size_t, void *, size_t *))                \
    X(cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *))   \
    X(cl_int, clRetainEvent, (cl_event))                                                           \
    X(cl_int, clReleaseEvent, (cl_event))

#define OCL_MEMBER(ret, name, args) ret(CL_API_CALL *name) args;
typedef struct ocl_api {
    OCL_FUNCTIONS(OCL_MEMBER)
} ocl_api;
#undef OCL_MEMBER

/* The loaded entry points; valid once ocl_api_load() returned 0. */
extern ocl_api ocl;

/* Loads libOpenCL.so.1 once (thread-safe). 0, or -1 with the reason in why. */
int ocl_api_load(char *why, size_t why_len);

/* The library file loaded (or tried): libOpenCL.so.1, or the one
 * LODE_TEST_OPENCL_LIB names. */
const char *ocl_api_library(void);

/* "CL_OUT_OF_RESOURCES" for an error code, or "error -N". */
const char *ocl_error_name(cl_int err, char buf[32]);
/* The lode status of a failed OpenCL call: out of memory, or a device failure. */
int ocl_status(cl_int err);
/* An event's state without waiting (clWaitForEvents spins in some drivers):
 * 1 complete, 0 queued or running, else the command's (negative) error. */
cl_int ocl_event_done(cl_event ev);

/* Host memory that read-backs land in: a CL_MEM_ALLOC_HOST_PTR buffer
 * mapped once, which drivers pin (NVIDIA: the copy is DMA'd straight in, no
 * staging copy on the host and no completion only inside a wait); plain
 * malloc where mapping fails. */
typedef struct ocl_pinned {
    cl_mem mem; /* NULL: ptr is malloc'd */
    void *ptr;
} ocl_pinned;
/* 0, or a negative OpenCL error / CL_OUT_OF_HOST_MEMORY. */
cl_int ocl_pinned_new(cl_context ctx, cl_command_queue queue, size_t size, ocl_pinned *out);
void ocl_pinned_free(ocl_pinned *p, cl_command_queue queue);

#endif
