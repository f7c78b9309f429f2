/* Host CPU cost of the OpenCL commands the engines enqueue (a measurement
 * for docs/PERFORMANCE.md, not a test): microseconds of the calling
 * thread's CPU time, and of the whole process's (the driver's threads
 * included), per enqueued kernel, by the number of buffer arguments, the
 * arguments set per enqueue, an event per enqueue and a busy device.
 *
 *   enqueue_cost_probe [platform substring]   one line per case */
#include "backend-opencl/ocl_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *kSource =
    "__kernel void one(__global uint *a, uint n) { if (get_global_id(0) == n) a[0] = n; }\n"
    "__kernel void ten(__global uint *a0, __global uint *a1, __global uint *a2, __global uint *a3,\n"
    "                  __global uint *a4, __global uint *a5, __global uint *a6, __global uint *a7,\n"
    "                  __global uint *a8, __global uint *a9, uint n)\n"
    "{ if (get_global_id(0) == n) a0[0] = a1[0] + a2[0] + a3[0] + a4[0] + a5[0] + a6[0] + a7[0] + a8[0] + a9[0]; }\n"
    "__kernel void spin(__global uint *a, uint n)\n"
    "{ uint x = get_global_id(0); for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u; if (x == 7u) a[1] = x; }\n";

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double process_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Waits for the queue by polling an event's status with sleeps (a spinning
 * wait would count as cost). */
static int drain(cl_command_queue q, cl_mem buf)
{
    cl_event ev = NULL;
    cl_uint v = 0;
    if (ocl.clEnqueueReadBuffer(q, buf, CL_FALSE, 0, 4, &v, 0, NULL, &ev) != CL_SUCCESS)
        return -1;
    ocl.clFlush(q);
    while (ocl_event_done(ev) == 0)
        nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
    ocl.clReleaseEvent(ev);
    return 0;
}

enum { kEnqueues = 2000 };

/* One case: kEnqueues enqueues of kernel k (busy: behind a long kernel). */
static int run_case(const char *name, cl_command_queue q, cl_kernel k, cl_kernel spin, cl_mem buf, int set_args,
                    int events, int busy)
{
    size_t global = 256, local = 64;
    if (busy) {
        size_t sg = 1u << 20;
        cl_uint n = 20000;
        ocl.clSetKernelArg(spin, 1, sizeof n, &n);
        if (ocl.clEnqueueNDRangeKernel(q, spin, 1, NULL, &sg, &local, 0, NULL, NULL) != CL_SUCCESS)
            return -1;
        ocl.clFlush(q);
    }
    const double t0 = thread_cpu(), p0 = process_cpu();
    for (cl_uint i = 0; i < kEnqueues; i++) {
        if (set_args) {
            cl_uint n = 1000000 + i;
            cl_uint idx = set_args == 2 ? 10 : 1;
            ocl.clSetKernelArg(k, idx, sizeof n, &n);
        }
        cl_event ev = NULL;
        if (ocl.clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, events ? &ev : NULL) != CL_SUCCESS)
            return -1;
        if (ev != NULL)
            ocl.clReleaseEvent(ev);
    }
    const double t1 = thread_cpu();
    if (drain(q, buf) != 0)
        return -1;
    const double p1 = process_cpu();
    printf("%-44s thread %6.2f us  process %6.2f us per enqueue\n", name, (t1 - t0) * 1e6 / kEnqueues,
           (p1 - p0) * 1e6 / kEnqueues);
    return 0;
}

int main(int argc, char **argv)
{
    char why[256];
    if (ocl_api_load(why, sizeof why) != 0) {
        fprintf(stderr, "no OpenCL: %s\n", why);
        return 1;
    }
    cl_platform_id plats[8];
    cl_uint np = 0;
    if (ocl.clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "no OpenCL platform\n");
        return 1;
    }
    cl_platform_id plat = plats[0];
    for (cl_uint i = 0; i < np && argc > 1; i++) {
        char name[256] = "";
        ocl.clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, argv[1]) != NULL)
            plat = plats[i];
    }
    cl_device_id dev;
    if (ocl.clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    char dname[256] = "";
    ocl.clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    printf("device: %s\n", dname);
    cl_int err = CL_SUCCESS;
    cl_context ctx = ocl.clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = ctx != NULL ? ocl.clCreateCommandQueue(ctx, dev, 0, &err) : NULL;
    cl_program prog = q != NULL ? ocl.clCreateProgramWithSource(ctx, 1, &kSource, NULL, &err) : NULL;
    if (prog == NULL || ocl.clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "set-up failed (%d)\n", (int)err);
        return 1;
    }
    cl_kernel one = ocl.clCreateKernel(prog, "one", &err), ten = ocl.clCreateKernel(prog, "ten", &err),
              spin = ocl.clCreateKernel(prog, "spin", &err);
    cl_mem bufs[10];
    for (int i = 0; i < 10; i++)
        bufs[i] = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1u << 20, NULL, &err);
    cl_uint n = 0xFFFFFFFFu;
    ocl.clSetKernelArg(one, 0, sizeof(cl_mem), &bufs[0]);
    ocl.clSetKernelArg(one, 1, sizeof n, &n);
    for (int i = 0; i < 10; i++)
        ocl.clSetKernelArg(ten, i, sizeof(cl_mem), &bufs[i]);
    ocl.clSetKernelArg(ten, 10, sizeof n, &n);
    ocl.clSetKernelArg(spin, 0, sizeof(cl_mem), &bufs[0]);
    run_case("warm-up", q, ten, spin, bufs[0], 0, 0, 0);
    int rc = 0;
    rc |= run_case("1 buffer argument", q, one, spin, bufs[0], 0, 0, 0);
    rc |= run_case("10 buffer arguments", q, ten, spin, bufs[0], 0, 0, 0);
    rc |= run_case("1 buffer, a scalar set per enqueue", q, one, spin, bufs[0], 1, 0, 0);
    rc |= run_case("10 buffers, a scalar set per enqueue", q, ten, spin, bufs[0], 2, 0, 0);
    rc |= run_case("1 buffer, an event per enqueue", q, one, spin, bufs[0], 0, 1, 0);
    rc |= run_case("1 buffer, behind a busy kernel", q, one, spin, bufs[0], 0, 0, 1);
    rc |= run_case("10 buffers, behind a busy kernel", q, ten, spin, bufs[0], 0, 0, 1);
    return rc != 0;
}
