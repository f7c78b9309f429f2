/* Must NOT compile: a file in a backend's position (linked as a backend is:
 * lode_base, lode_backend_support) reaching into another backend's private
 * header. The layering_backend_reaches_backend test expects the compiler
 * to refuse the include. */
#include "backend-cpu/cpu_features.h"

int layering_backend_reaches_backend(void);
int layering_backend_reaches_backend(void) { return 0; }
