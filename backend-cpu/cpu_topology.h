/* Where the CPU backend's workers run: hwloc's view of packages and cores
 * when built with it, a portable count of online CPUs otherwise. */
#ifndef LODE_CPU_TOPOLOGY_H
#define LODE_CPU_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

/* Number of CPU devices (processor packages); at least 1. */
int cpu_topology_device_count(void);
/* Physical cores of package `device` (logical CPUs without hwloc). */
unsigned cpu_topology_core_count(int device);
/* Logical CPUs of the package (the most workers worth running). */
unsigned cpu_topology_pu_count(int device);
void cpu_topology_device_name(int device, char *out, size_t len);
/* The package's physical id (sysfs physical_package_id, coretemp's
 * "Package id N", intel-rapl:N); 0 without hwloc (one device). */
unsigned cpu_topology_package_id(int device);
/* For `lode -V`: "hwloc 2.9.0 (API 0x20800), 1 package, 8 cores, 16 PUs",
 * or "no hwloc (portable topology: N CPUs)". */
void cpu_topology_describe(char *out, size_t len);
uint64_t cpu_topology_memory(int device);
/* Binds the calling thread to core `worker` of the device (round-robin over
 * its cores, then over their hyperthreads). Returns 0, or -1 if binding is
 * unavailable (the worker then runs unbound). */
int cpu_topology_bind_thread(int device, unsigned worker);
/* Memory near the core the calling thread is bound to, 64-byte aligned. */
void *cpu_topology_alloc_local(size_t bytes);
void cpu_topology_free_local(void *p, size_t bytes);

#endif
