/* Helpers every bench program shares: a monotonic clock and a fatal error. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops_base.h"
#include "ops_tensor.h"
#include "ops_registry.h"
#include "ops_autograd.h"
#include "ops_optim.h"
#include "ops_random.h"
#include "ops_interop.h"
#include "ops_cuda.h"

/* Seconds on a monotonic clock. */
static inline double
bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Report a failed libops call with its error and exit. */
static inline void
bench_die(const char *prog, const char *what)
{
    fprintf(stderr, "%s: %s failed: %s\n", prog, what, ops_last_error());
    exit(1);
}

#endif /* BENCH_UTIL_H */
