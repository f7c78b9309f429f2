/* Must compile: linked as the registry is, including the CPU backend's
 * public header. */
#include "backend-cpu/cpu_backend.h"

int layering_registry_allowed(void);
int layering_registry_allowed(void) { return lode_backend_cpu.name != 0; }
