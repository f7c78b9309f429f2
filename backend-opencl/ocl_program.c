/* Kernel compilation and the binary cache (ocl_program.h). */
#include "backend-opencl/ocl_program.h"
#include "core/base/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/sha256_ref.h"
#include "core/base/status.h"

#define MAX_BINARY (64u << 20)

static int make_dir(const char *path)
{
    return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

int ocl_cache_dir(char *out, size_t len, const char *sub, bool make)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[512];
    if (xdg != NULL && xdg[0] == '/')
        snprintf(base, sizeof base, "%s", xdg);
    else if (home != NULL && home[0] != '\0')
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return -1;
    int n = snprintf(out, len, "%s/lode%s%s", base, sub[0] ? "/" : "", sub);
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (make) {
        /* mkdir -p of the levels lode owns (and ~/.cache, which may be new). */
        char path[600];
        snprintf(path, sizeof path, "%s", base);
        if (make_dir(path) != 0)
            return -1;
        snprintf(path, sizeof path, "%s/lode", base);
        if (make_dir(path) != 0 || (sub[0] && make_dir(out) != 0))
            return -1;
    }
    return 0;
}

static bool cache_enabled(void)
{
    return !lode_setting_flag(LODE_SETTING_OPENCL_NO_CACHE);
}

/* The cache file of this device, options and sources. */
static int cache_file(const ocl_dev_desc *dev, const char *const *sources, unsigned n,
                      const char *options, char *out, size_t len, bool make)
{
    char dir[600];
    if (ocl_cache_dir(dir, sizeof dir, "opencl", make) != 0)
        return -1;
    /* The key material: every field NUL-terminated, so no two inputs
     * concatenate to the same bytes. */
    const char *parts[5] = {dev->platform_name, dev->platform_version, dev->name, dev->driver, options};
    lode_ref_sha256_ctx ctx;
    lode_ref_sha256_init(&ctx);
    for (int i = 0; i < 5; i++)
        lode_ref_sha256_update(&ctx, parts[i], strlen(parts[i]) + 1);
    for (unsigned i = 0; i < n; i++)
        lode_ref_sha256_update(&ctx, sources[i], strlen(sources[i]) + 1);
    uint8_t digest[32];
    lode_ref_sha256_final(&ctx, digest);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    int k = snprintf(out, len, "%s/%s.bin", dir, hex);
    return k > 0 && (size_t)k < len ? 0 : -1;
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *data = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && (size_t)n <= MAX_BINARY &&
        fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n)) != NULL &&
        fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = data ? (size_t)n : 0;
    return data;
}

/* Writes the program's binary for its one device; a failure only costs a
 * rebuild next time. Written under a temporary name and renamed, so
 * concurrent workers never read half a file. */
static void store_binary(cl_program prog, const char *path)
{
    size_t size = 0;
    if (ocl.clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0 || size > MAX_BINARY)
        return;
    unsigned char *data = malloc(size);
    if (data == NULL)
        return;
    unsigned char *ptrs[1] = {data};
    if (ocl.clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, NULL) == CL_SUCCESS) {
        char tmp[740];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        if (f != NULL) {
            bool ok = fwrite(data, 1, size, f) == size;
            ok = fclose(f) == 0 && ok;
            if (!ok || rename(tmp, path) != 0) {
                remove(tmp);
                lode_log(LODE_LOG_DEBUG, "opencl: cannot write the kernel cache %s", path);
            }
        }
    }
    free(data);
}

static cl_program from_binary(const ocl_dev_desc *dev, cl_context ctx, const char *path,
                              const char *options)
{
    size_t size = 0;
    unsigned char *data = read_file(path, &size);
    if (data == NULL)
        return NULL;
    const unsigned char *bins[1] = {data};
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program prog = ocl.clCreateProgramWithBinary(ctx, 1, &dev->id, &size, bins, &status, &err);
    free(data);
    if (prog != NULL && (err != CL_SUCCESS || status != CL_SUCCESS ||
                         ocl.clBuildProgram(prog, 1, &dev->id, options, NULL, NULL) != CL_SUCCESS)) {
        ocl.clReleaseProgram(prog);
        prog = NULL;
    }
    return prog;
}

/* Logs the build log, trimmed: a driver's log can be very long. */
static void log_build_failure(const ocl_dev_desc *dev, cl_program prog, const char *label,
                              const char *options, cl_int err)
{
    size_t len = 0;
    char *text = NULL;
    if (ocl.clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) == CL_SUCCESS &&
        (text = calloc(len + 1, 1)) != NULL &&
        ocl.clGetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG, len, text, NULL) != CL_SUCCESS)
        text[0] = '\0';
    if (text != NULL && strlen(text) > 4000)
        strcpy(text + 3980, "\n[... log cut]");
    char buf[32];
    lode_log(LODE_LOG_ERROR, "%s: building the OpenCL kernels (options \"%s\") failed: %s%s%s", label,
             options, ocl_error_name(err, buf), text && text[0] ? "; build log:\n" : "",
             text ? text : "");
    free(text);
}

int ocl_program_build(const ocl_dev_desc *dev, cl_context ctx, const char *label,
                      const char *const *sources, unsigned n_sources, const char *options,
                      cl_program *out)
{
    char path[700];
    const bool use_cache = cache_enabled() &&
                           cache_file(dev, sources, n_sources, options, path, sizeof path, true) == 0;
    if (use_cache && (*out = from_binary(dev, ctx, path, options)) != NULL)
        return LODE_OK;

    cl_int err = CL_SUCCESS;
    cl_program prog = ocl.clCreateProgramWithSource(ctx, n_sources, (const char **)sources, NULL, &err);
    if (prog == NULL || err != CL_SUCCESS) {
        char buf[32];
        lode_log(LODE_LOG_ERROR, "%s: clCreateProgramWithSource failed: %s", label,
                 ocl_error_name(err, buf));
        return LODE_ERR_DEVICE;
    }
    err = ocl.clBuildProgram(prog, 1, &dev->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        log_build_failure(dev, prog, label, options, err);
        ocl.clReleaseProgram(prog);
        return LODE_ERR_DEVICE;
    }
    if (use_cache)
        store_binary(prog, path);
    *out = prog;
    return LODE_OK;
}
