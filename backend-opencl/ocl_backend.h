/* The OpenCL backend's public header: its vtable, all that the layers above
 * (the registry, core/dispatch/registry.c) see of it. Everything else in
 * backend-opencl/ is private to the backend. */
#ifndef LODE_BACKEND_OCL_BACKEND_H
#define LODE_BACKEND_OCL_BACKEND_H

#include "core/base/backend.h"

extern const lode_backend_ops lode_backend_opencl;

#endif
