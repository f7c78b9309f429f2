/* Must compile: linked as a backend is, including what a backend may (the
 * base and the backend support layer). Proves that the probes build at all,
 * so the refusals of the other probes are the layering's. */
#include "core/backend_support/sha256d_lanes.h"
#include "core/base/work.h"

int layering_backend_allowed(void);
int layering_backend_allowed(void) { return PRE_WORDS > 0 && sizeof(lode_range) > 0; }
