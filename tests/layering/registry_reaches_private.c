/* Must NOT compile: a file in the registry's position (linking the CPU
 * backend) including a header the backend keeps private. The
 * layering_registry_reaches_private test expects the compiler to refuse it. */
#include "backend-cpu/sha256_cpu.h"

int layering_registry_reaches_private(void);
int layering_registry_reaches_private(void) { return 0; }
