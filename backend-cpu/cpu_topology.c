#include "backend-cpu/cpu_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* The processor's brand string, for device names without hwloc. */
static void brand_string(char *out, size_t len)
{
    snprintf(out, len, "CPU");
#if defined(__x86_64__)
    unsigned r[12], max_ext, b, c, d;
    __cpuid(0x80000000u, max_ext, b, c, d);
    if (max_ext < 0x80000004u)
        return;
    for (unsigned i = 0; i < 3; i++)
        __cpuid(0x80000002u + i, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
    char brand[49];
    memcpy(brand, r, 48);
    brand[48] = '\0';
    const char *s = brand;
    while (*s == ' ')
        s++;
    snprintf(out, len, "%s", s);
    for (size_t n = strlen(out); n > 0 && out[n - 1] == ' '; n--)
        out[n - 1] = '\0';
#endif
}

#ifdef LODE_HAVE_HWLOC
#include <hwloc.h>
#include <pthread.h>

static hwloc_topology_t topology;
static int topology_ok;
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

static void load_topology(void)
{
    if (hwloc_topology_init(&topology) == 0 && hwloc_topology_load(topology) == 0)
        topology_ok = 1;
}

static hwloc_topology_t topo(void)
{
    pthread_once(&topology_once, load_topology);
    return topology_ok ? topology : NULL;
}

static hwloc_obj_t package(int device)
{
    hwloc_topology_t t = topo();
    if (t == NULL)
        return NULL;
    if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) <= 0)
        return hwloc_get_root_obj(t);
    return hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)device);
}

static unsigned count_inside(hwloc_obj_t pkg, hwloc_obj_type_t type)
{
    hwloc_topology_t t = topo();
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(t, pkg->cpuset, type);
    return n > 0 ? (unsigned)n : 1;
}

int cpu_topology_device_count(void)
{
    hwloc_topology_t t = topo();
    int n = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) : 0;
    return n > 0 ? n : 1;
}

unsigned cpu_topology_core_count(int device)
{
    hwloc_obj_t pkg = package(device);
    return pkg ? count_inside(pkg, HWLOC_OBJ_CORE) : 1;
}

unsigned cpu_topology_pu_count(int device)
{
    hwloc_obj_t pkg = package(device);
    return pkg ? count_inside(pkg, HWLOC_OBJ_PU) : 1;
}

void cpu_topology_device_name(int device, char *out, size_t len)
{
    hwloc_obj_t pkg = package(device);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (model != NULL)
        snprintf(out, len, "%s", model);
    else
        brand_string(out, len);
}

uint64_t cpu_topology_memory(int device)
{
    hwloc_obj_t pkg = package(device);
    return pkg ? pkg->total_memory : 0;
}

unsigned cpu_topology_package_id(int device)
{
    hwloc_obj_t pkg = package(device);
    return pkg != NULL && pkg->type == HWLOC_OBJ_PACKAGE && pkg->os_index != HWLOC_UNKNOWN_INDEX
               ? pkg->os_index
               : 0;
}

void cpu_topology_describe(char *out, size_t len)
{
    /* The library's own version where it says it (hwloc 2.x: the API
     * version it implements), and the header's the binary was built with. */
    unsigned api = hwloc_get_api_version();
    hwloc_topology_t t = topo();
    int packages = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE) : 0;
    int cores = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) : 0;
    int pus = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) : 0;
    snprintf(out, len, "hwloc %s (built), API %u.%u.%u (loaded); %d package(s), %d core(s), %d PU(s)%s",
             HWLOC_VERSION, api >> 16, (api >> 8) & 0xff, api & 0xff, packages, cores, pus,
             t ? "" : " (topology not loaded)");
}

/* Worker w runs on core w (mod cores); past the core count it takes the
 * cores' second hardware threads, then the third, and so on. */
static hwloc_obj_t worker_pu(int device, unsigned worker)
{
    hwloc_topology_t t = topo();
    hwloc_obj_t pkg = package(device);
    if (pkg == NULL)
        return NULL;
    unsigned cores = count_inside(pkg, HWLOC_OBJ_CORE);
    hwloc_obj_t core =
        hwloc_get_obj_inside_cpuset_by_type(t, pkg->cpuset, HWLOC_OBJ_CORE, worker % cores);
    if (core == NULL)
        return NULL;
    int pus = hwloc_get_nbobjs_inside_cpuset_by_type(t, core->cpuset, HWLOC_OBJ_PU);
    if (pus <= 0)
        return NULL;
    return hwloc_get_obj_inside_cpuset_by_type(t, core->cpuset, HWLOC_OBJ_PU,
                                               (worker / cores) % (unsigned)pus);
}

int cpu_topology_bind_thread(int device, unsigned worker)
{
    hwloc_obj_t pu = worker_pu(device, worker);
    if (pu == NULL)
        return -1;
    return hwloc_set_cpubind(topo(), pu->cpuset, HWLOC_CPUBIND_THREAD) == 0 ? 0 : -1;
}

void *cpu_topology_alloc_local(size_t bytes)
{
    hwloc_topology_t t = topo();
    if (t == NULL)
        return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    void *p = NULL;
    hwloc_cpuset_t here = hwloc_bitmap_alloc();
    if (here != NULL && hwloc_get_cpubind(t, here, HWLOC_CPUBIND_THREAD) == 0)
        p = hwloc_alloc_membind(t, bytes, here, HWLOC_MEMBIND_BIND, 0);
    hwloc_bitmap_free(here);
    /* Without binding support (some VMs and containers) plain pages, first
     * touched by this thread, still land on its node. Both are page-aligned
     * and both are released by hwloc_free. */
    return p != NULL ? p : hwloc_alloc(t, bytes);
}

void cpu_topology_free_local(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    hwloc_topology_t t = topo();
    if (t != NULL)
        hwloc_free(t, p, bytes);
    else
        free(p);
}

#else /* portable fallback: one device, every online CPU a worker, no binding */

int cpu_topology_device_count(void) { return 1; }

unsigned cpu_topology_core_count(int device)
{
    (void)device;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

unsigned cpu_topology_pu_count(int device) { return cpu_topology_core_count(device); }

void cpu_topology_device_name(int device, char *out, size_t len)
{
    (void)device;
    brand_string(out, len);
}

unsigned cpu_topology_package_id(int device)
{
    (void)device;
    return 0;
}

void cpu_topology_describe(char *out, size_t len)
{
    snprintf(out, len, "no hwloc (built without it): one device of %u online CPUs", cpu_topology_core_count(0));
}

uint64_t cpu_topology_memory(int device)
{
    (void)device;
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

int cpu_topology_bind_thread(int device, unsigned worker)
{
    (void)device;
    (void)worker;
    return -1;
}

void *cpu_topology_alloc_local(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

void cpu_topology_free_local(void *p, size_t bytes)
{
    (void)bytes;
    free(p);
}
#endif
