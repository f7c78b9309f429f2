/* What the OpenCL backend builds: each program's source, build options and
 * kernels, described once per algorithm from a device description and the
 * program's parameters. The run-time build (ocl_<name>.c) compiles what
 * these functions describe, and tools/ocl_programs.c lists every program
 * they can describe for a device, so that other compilers (clang for AMD's
 * targets, scripts/amd-isa.py) see exactly what a driver would. */
#ifndef LODE_OCL_PROGRAMS_H
#define LODE_OCL_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend-opencl/ocl_devices.h"

#define OCL_PROGRAM_MAX_KERNELS 8

typedef struct ocl_program_spec {
    const char *algo;    /* "sha256d" */
    const char *variant; /* the variant it serves; NULL: every variant of the algorithm */
    const char *source;  /* lode_ocl_src_<algo>, as compiled */
    char id[64];         /* unique for the device: "scrypt-local-g2-h1" */
    char options[256];
    const char *kernels[OCL_PROGRAM_MAX_KERNELS]; /* the kernels the backend creates from it */
    int n_kernels;
} ocl_program_spec;

/* Receives each program an algorithm may build on a device. */
typedef void (*ocl_program_sink)(void *ctx, const ocl_program_spec *spec);

/* The build options every program gets; returns their length. */
int ocl_device_options(const ocl_dev_desc *x, char *options, size_t len);

/* SHA-256d: the plain or version-rolled search of variant "imad"/"iadd3". */
void ocl_sha256d_program(const ocl_dev_desc *x, const char *variant, bool versions, ocl_program_spec *out);
/* scrypt: the exchange xchg (kernels/scrypt.cl XCHG) of variant, a lookup
 * gap and HASHES interleaved. */
void ocl_scrypt_program(const ocl_dev_desc *x, const char *variant, unsigned lookup_gap, unsigned hashes,
                        ocl_program_spec *out);
/* Momentum (one program for both variants) and trial factoring. */
void ocl_momentum_program(const ocl_dev_desc *x, ocl_program_spec *out);
void ocl_tf_program(const ocl_dev_desc *x, ocl_program_spec *out);

/* Every program of each algorithm the backend may build on x: every
 * variant and every option set the tuner or the settings can choose. */
void ocl_sha256d_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx);
void ocl_scrypt_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx);
void ocl_momentum_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx);
void ocl_tf_programs(const ocl_dev_desc *x, ocl_program_sink sink, void *ctx);

#endif
