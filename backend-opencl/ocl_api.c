/* Run-time loading of the OpenCL ICD loader (ocl_api.h). */
#include "backend-opencl/ocl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/settings.h"
#include "core/base/status.h"

ocl_api ocl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_why[256];
static int load_rc = -1;
static char load_file[256] = "libOpenCL.so.1";

static void load_run(void)
{
    /* The SONAME, not libOpenCL.so: that link exists only with the -dev
     * package. RTLD_LOCAL keeps the loader's symbols out of the program.
     * The tests name a fake driver library instead (tests/fake_opencl.c). */
    const char *setting = lode_setting_text(LODE_SETTING_TEST_OPENCL_LIB);
    if (setting != NULL)
        snprintf(load_file, sizeof load_file, "%s", setting);
    const char *file = load_file;
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(load_why, sizeof load_why,
                 "cannot load %.60s (%s): install an OpenCL ICD loader "
                 "(Debian: ocl-icd-libopencl1) and a driver", file, e ? e : "unknown error");
        return;
    }
    /* dlsym returns void *; converting it through a union keeps ISO C quiet
     * about object-to-function pointer casts. */
#define OCL_LOAD(ret, name, args)                                                                  \
    {                                                                                              \
        union { void *obj; ret(CL_API_CALL *fn) args; } u_ = {.obj = dlsym(lib, #name)};          \
        if (u_.obj == NULL) {                                                                      \
            snprintf(load_why, sizeof load_why, "%.60s lacks %s (an OpenCL 1.2 loader is needed)", \
                     file, #name);                                                                 \
            dlclose(lib);                                                                          \
            return;                                                                                \
        }                                                                                          \
        ocl.name = u_.fn;                                                                          \
    }
    OCL_FUNCTIONS(OCL_LOAD)
#undef OCL_LOAD
    load_rc = 0; /* the library stays loaded for the life of the process */
}

int ocl_api_load(char *why, size_t why_len)
{
    pthread_once(&load_once, load_run);
    if (load_rc != 0 && why != NULL)
        snprintf(why, why_len, "%s", load_why);
    return load_rc;
}

const char *ocl_api_library(void)
{
    pthread_once(&load_once, load_run);
    return load_file;
}

const char *ocl_error_name(cl_int err, char buf[32])
{
    switch (err) {
#define NAME(code) case code: return #code;
    NAME(CL_SUCCESS)
    NAME(CL_DEVICE_NOT_FOUND)
    NAME(CL_DEVICE_NOT_AVAILABLE)
    NAME(CL_COMPILER_NOT_AVAILABLE)
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NAME(CL_OUT_OF_RESOURCES)
    NAME(CL_OUT_OF_HOST_MEMORY)
    NAME(CL_BUILD_PROGRAM_FAILURE)
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    NAME(CL_INVALID_VALUE)
    NAME(CL_INVALID_DEVICE)
    NAME(CL_INVALID_BINARY)
    NAME(CL_INVALID_BUILD_OPTIONS)
    NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    NAME(CL_INVALID_KERNEL_NAME)
    NAME(CL_INVALID_KERNEL_ARGS)
    NAME(CL_INVALID_ARG_SIZE)
    NAME(CL_INVALID_WORK_GROUP_SIZE)
    NAME(CL_INVALID_WORK_ITEM_SIZE)
    NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    NAME(CL_INVALID_BUFFER_SIZE)
    NAME(CL_INVALID_COMMAND_QUEUE)
    NAME(CL_INVALID_CONTEXT)
    NAME(CL_INVALID_MEM_OBJECT)
    NAME(CL_INVALID_OPERATION)
    NAME(CL_INVALID_EVENT)
#undef NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        snprintf(buf, 32, "error %d", (int)err);
        return buf;
    }
}

int ocl_status(cl_int err)
{
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
                   err == CL_INVALID_BUFFER_SIZE
               ? LODE_ERR_NO_MEMORY
               : LODE_ERR_DEVICE;
}

cl_int ocl_event_done(cl_event ev)
{
    cl_int status = CL_QUEUED;
    cl_int err = ocl.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (err != CL_SUCCESS)
        return err;
    return status < 0 ? status : status == CL_COMPLETE ? 1 : 0;
}

cl_int ocl_pinned_new(cl_context ctx, cl_command_queue queue, size_t size, ocl_pinned *out)
{
    out->mem = NULL;
    out->ptr = NULL;
    cl_int err = CL_SUCCESS;
    cl_mem mem = ocl.clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
    if (mem != NULL && err == CL_SUCCESS) {
        void *ptr = ocl.clEnqueueMapBuffer(queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL,
                                           NULL, &err);
        if (ptr != NULL && err == CL_SUCCESS) {
            out->mem = mem;
            out->ptr = ptr;
            return CL_SUCCESS;
        }
    }
    if (mem != NULL)
        ocl.clReleaseMemObject(mem);
    out->ptr = calloc(1, size);
    return out->ptr != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
}

void ocl_pinned_free(ocl_pinned *p, cl_command_queue queue)
{
    if (p->mem != NULL) {
        ocl.clEnqueueUnmapMemObject(queue, p->mem, p->ptr, 0, NULL, NULL);
        ocl.clFinish(queue);
        ocl.clReleaseMemObject(p->mem);
    } else {
        free(p->ptr);
    }
    p->mem = NULL;
    p->ptr = NULL;
}
