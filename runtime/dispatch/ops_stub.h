/* Dispatch stubs: how a device-neutral driver reaches the loops of each backend.
 *
 * An op's driver (shape logic, checks, planning, output allocation) is written once,
 * in kernels/, for every device.  The work that touches memory differs per device and
 * is reached through a stub: a table of one function per device type.
 *
 *   kernels/fill.h (the driver's header, C and C++ clean):
 *       OPS_DECLARE_STUB(fill_bytes, ops_status, (const char *op, ops_tensor *t, int64_t pattern));
 *
 *   kernels/cpu/fill.c and kernels/cuda/fill.cu (each backend, once):
 *       OPS_REGISTER_STUB(fill_bytes, CPU, fill_bytes_cpu);
 *       ops_status fill_bytes_cpu(const char *op, ops_tensor *t, int64_t pattern) { ... }
 *
 *   kernels/fill.c (the driver):
 *       return OPS_STUB_CALL(fill_bytes, ops_tensor_device(t), op, t, pattern);
 *
 * The generator (codegen/gen_stubs.py) reads the declarations and registrations out of
 * the kernel sources and writes the tables into ops_stubs.c, with each CUDA entry
 * compiled only in a CUDA build, so no driver says #ifdef OPS_WITH_CUDA and a backend
 * that is linked is always registered (no constructors, nothing a static link drops).
 * It refuses a stub without a CPU loop, a registration of an undeclared stub and a
 * second registration of one (stub, device), each with file:line.
 *
 * A registration is also a declaration: it gives the loop the stub's type (and C
 * linkage in a .cu file), so a loop whose parameters differ from the stub's does not
 * compile (or, in C++, does not link).  Calling a stub on a device with no loop
 * fails with "<op>: no kernel for device <device>". */
#ifndef OPS_STUB_H
#define OPS_STUB_H

#include "ops_internal.h"

#ifdef __cplusplus
#define OPS_STUB_EXTERN extern "C"
#else
#define OPS_STUB_EXTERN extern
#endif

/* name##_fn is the loop's function type; name##_stub the table (ops_stubs.c). */
#define OPS_DECLARE_STUB(name, ret, params)                                                    \
    typedef ret name##_fn params;                                                              \
    OPS_STUB_EXTERN OPS_INTERNAL name##_fn *const name##_stub[OPS_NUM_DEVICE_TYPES]

/* In a backend's source, at file scope: fn is name's loop for device (CPU or CUDA). */
#define OPS_REGISTER_STUB(name, device, fn) OPS_STUB_EXTERN name##_fn fn

/* The loop of name for device d, or NULL when that device has none. */
#define OPS_STUB_GET(name, d)                                                                  \
    ((unsigned)(d).type < (unsigned)OPS_NUM_DEVICE_TYPES ? name##_stub[(d).type] : NULL)

#ifdef __cplusplus
extern "C" {
#endif
/* The error of a stub called for a device without a loop (generated ops_dispatch.c). */
OPS_INTERNAL ops_status ops_dispatch_no_kernel(const char *op, ops_device device);
#ifdef __cplusplus
}
#endif

/* Calls name's loop for device d with the arguments that follow; the loop returns
 * ops_status, and a device without a loop fails with op's name (the first argument). */
#define OPS_STUB_CALL(name, d, op, ...)                                                        \
    (OPS_STUB_GET(name, d) != NULL ? OPS_STUB_GET(name, d)(op, __VA_ARGS__)                    \
                                   : ops_dispatch_no_kernel(op, d))

#endif /* OPS_STUB_H */
