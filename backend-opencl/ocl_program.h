/* Building the kernels for one device: the embedded OpenCL C sources
 * compiled at run time with device-specific options, and an on-disk cache
 * of the compiled binaries.
 *
 * The cache is $XDG_CACHE_HOME/lode/opencl/<key>.bin (else
 * ~/.cache/lode/opencl/), where key is the SHA-256 of the platform name and
 * version, the device name, the driver version, the build options and the
 * sources: a new driver, option or kernel gets a new file. A binary that
 * fails to load is ignored and rebuilt. LODE_OPENCL_NO_CACHE=1 turns the
 * cache off. */
#ifndef LODE_OCL_PROGRAM_H
#define LODE_OCL_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "backend-opencl/ocl_api.h"
#include "backend-opencl/ocl_devices.h"

/* Generated from the files in kernels/ by EmbedKernels.cmake, with the
 * kernel code they include from core/backend_support inlined: one
 * lode_ocl_src_<name> per algorithm of core/base/algos.def. */
#define LODE_ALGO(ID, name, ...) extern const char lode_ocl_src_##name[];
#include "core/base/algos.def"
#undef LODE_ALGO

/* The lode cache folder with sub appended ("opencl", ...), created when
 * make is set. 0, or -1 if there is no HOME/XDG_CACHE_HOME or no folder. */
int ocl_cache_dir(char *out, size_t len, const char *sub, bool make);

/* Builds the sources (concatenated in order) for dev in ctx with options,
 * from the cache when it can. On failure logs an error naming the device
 * (label, e.g. "opencl:0 (NVIDIA H100)") with the build log and returns
 * LODE_ERR_DEVICE. */
int ocl_program_build(const ocl_dev_desc *dev, cl_context ctx, const char *label,
                      const char *const *sources, unsigned n_sources, const char *options,
                      cl_program *out);

#endif
