/* Lists every OpenCL program the backend may build on a described device,
 * from the backend's own descriptions (ocl_programs.h), so that another
 * compiler can build exactly those (scripts/amd-isa.py compiles them for
 * AMD's targets with clang):
 *
 *   ocl_programs --vendor amd|nvidia|intel|pocl [--wavefront 32|64] --out DIR
 *
 * writes DIR/<algo>.cl (the embedded source, as compiled at run time) and
 * DIR/manifest.json: [{"id", "algo", "variant", "source", "options",
 * "kernels": [...]}], one entry per program. Not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-opencl/ocl_program.h"
#include "backend-opencl/ocl_programs.h"

/* A device as its driver would describe it: the vendor id, the type and the
 * capabilities its extensions give (ocl_devices.c), with memory enough for
 * the run-time defaults (scrypt's lookup gap 1). */
static int describe(const char *vendor, unsigned wavefront, ocl_dev_desc *x)
{
    memset(x, 0, sizeof *x);
    x->type = CL_DEVICE_TYPE_GPU;
    x->compute_units = 60;
    x->global_mem = (cl_ulong)16 << 30;
    x->max_alloc = (cl_ulong)4 << 30;
    x->max_work_group = 256;
    x->local_mem = 64 << 10;
    x->wavefront = wavefront;
    if (strcmp(vendor, "amd") == 0) {
        x->vendor_id = 0x1002; /* ROCm: cl_amd_media_ops, no cl_khr_subgroup_shuffle */
        x->caps = OCL_CAP_AMD_MEDIA_OPS;
        x->wavefront = wavefront ? wavefront : 64;
    } else if (strcmp(vendor, "nvidia") == 0) {
        x->vendor_id = 0x10de; /* cl_nv_device_attribute_query (sm_30+), cl_nv_compiler_options */
        x->caps = OCL_CAP_NV_SHFL | OCL_CAP_NV_OPTIONS;
        x->wavefront = 32;
    } else if (strcmp(vendor, "intel") == 0) {
        x->vendor_id = 0x8086; /* cl_intel_subgroups */
        x->caps = OCL_CAP_INTEL_SHUFFLE;
    } else if (strcmp(vendor, "pocl") == 0) {
        x->vendor_id = 0x10006; /* PoCL on the host CPU */
        x->type = CL_DEVICE_TYPE_CPU;
    } else {
        return -1;
    }
    snprintf(x->name, sizeof x->name, "described %s device", vendor);
    return 0;
}

typedef struct listing {
    FILE *manifest;
    const char *dir;
    int programs;
    int failed;
} listing;

/* The string as a JSON string (the options and names hold no control
 * characters, but quotes and backslashes are escaped all the same). */
static void put_json(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_source(listing *l, const ocl_program_spec *p)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.cl", l->dir, p->algo);
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(p->source, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "ocl_programs: cannot write %s\n", path);
        l->failed = 1;
    }
}

static void add_program(void *ctx, const ocl_program_spec *p)
{
    listing *l = ctx;
    FILE *f = l->manifest;
    if (p->n_kernels == 0 || p->id[0] == '\0') {
        fprintf(stderr, "ocl_programs: %s: a program without an id or kernels\n", p->algo);
        l->failed = 1;
        return;
    }
    fprintf(f, "%s\n  {\"id\": ", l->programs++ ? "," : "");
    put_json(f, p->id);
    fprintf(f, ", \"algo\": ");
    put_json(f, p->algo);
    fprintf(f, ", \"variant\": ");
    put_json(f, p->variant ? p->variant : "*");
    fprintf(f, ", \"source\": \"%s.cl\", \"options\": ", p->algo);
    put_json(f, p->options);
    fprintf(f, ", \"kernels\": [");
    for (int i = 0; i < p->n_kernels; i++) {
        fprintf(f, "%s", i ? ", " : "");
        put_json(f, p->kernels[i]);
    }
    fprintf(f, "]}");
}

/* The algorithm's source, written once from its first program. */
static void source_of(void *ctx, const ocl_program_spec *p)
{
    listing *l = ctx;
    if (l->programs == 0)
        write_source(l, p);
    l->programs++;
}

static int usage(void)
{
    fprintf(stderr, "usage: ocl_programs --vendor amd|nvidia|intel|pocl [--wavefront 32|64] --out DIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *vendor = NULL, *out = NULL;
    unsigned wavefront = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--vendor") == 0)
            vendor = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--out") == 0)
            out = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--wavefront") == 0)
            wavefront = (unsigned)strtoul(argv[++i], NULL, 10);
        else
            return usage();
    }
    ocl_dev_desc x;
    if (vendor == NULL || out == NULL || (wavefront != 0 && wavefront != 32 && wavefront != 64) ||
        describe(vendor, wavefront, &x) != 0)
        return usage();
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.json", out);
    listing l = {.manifest = fopen(path, "w"), .dir = out};
    if (l.manifest == NULL) {
        fprintf(stderr, "ocl_programs: cannot write %s (does the folder exist?)\n", path);
        return 1;
    }
    void (*const all[])(const ocl_dev_desc *, ocl_program_sink, void *) = {
#define LODE_ALGO(ID, name, ...) ocl_##name##_programs,
#include "core/base/algos.def"
#undef LODE_ALGO
    };
    fprintf(l.manifest, "[");
    for (size_t a = 0; a < sizeof all / sizeof all[0]; a++) {
        listing src = {.dir = out};
        all[a](&x, source_of, &src);
        l.failed |= src.failed;
        all[a](&x, add_program, &l);
    }
    fprintf(l.manifest, "\n]\n");
    if (fclose(l.manifest) != 0)
        l.failed = 1;
    return l.failed ? 1 : 0;
}
