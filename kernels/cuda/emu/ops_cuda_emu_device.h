/* The kernel side of the emulated device (C++ only; included by ops_cuda_emu.h).
 *
 * What nvcc gives a kernel, for the host compiler: the qualifiers, threadIdx /
 * blockIdx / blockDim / gridDim, __syncthreads, the warp primitives, atomics and the
 * few intrinsics kernels use, and OPS_LAUNCH / OPS_LAUNCH_COOP / OPS_SHARED_DYNAMIC.
 *
 * Every launch holds the emulator's lock and runs on the calling OS thread, one block
 * at a time, so the index variables and __shared__ storage are plain globals and the
 * atomics are plain read-modify-writes. */
#ifndef OPS_CUDA_EMU_DEVICE_H
#define OPS_CUDA_EMU_DEVICE_H

/* Standard headers first: some (libstdc++'s shared_ptr_base.h) spell
 * __attribute__((__noinline__)), which the __noinline__ macro below would break. */
#include <algorithm>
#include <atomic>
#include <cmath>
#include <math.h> /* isnan, fabsf, ... unqualified, as CUDA declares them */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __CUDA_ARCH_EMULATED__ 900

/* Set by the scheduler before each thread runs (one block at a time, under the lock). */
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
constexpr int warpSize = 32;

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

/* C++ conveniences of cuda_runtime.h: typed pointers and kernel symbols. */
template <typename T>
static inline cudaError_t
cudaMalloc(T **ptr, size_t size)
{
    return cudaMalloc(reinterpret_cast<void **>(ptr), size);
}
template <typename T>
static inline cudaError_t
cudaHostAlloc(T **ptr, size_t size, unsigned int flags)
{
    return cudaHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
template <typename T>
static inline cudaError_t
cudaMallocHost(T **ptr, size_t size)
{
    return cudaMallocHost(reinterpret_cast<void **>(ptr), size);
}

namespace ops_emu {

/* The warp primitives, one entry point: kind, the caller's mask, its value (bits),
 * the lane argument (srcLane, delta or laneMask) and the segment width. */
enum warp_kind { WARP_SYNC, WARP_IDX, WARP_UP, WARP_DOWN, WARP_XOR, WARP_BALLOT, WARP_ANY, WARP_ALL };
uint64_t warp_op(warp_kind kind, unsigned mask, uint64_t bits, int lane_arg, int width);
unsigned active_mask();
void sync_threads();
void *dynamic_shared();

template <typename T>
static inline T
shuffle(warp_kind kind, unsigned mask, T v, int lane_arg, int width)
{
    static_assert(std::is_arithmetic<T>::value && (sizeof(T) == 4 || sizeof(T) == 8),
                  "warp shuffles take 32- and 64-bit integers, float and double");
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    bits = warp_op(kind, mask, bits, lane_arg, width);
    T r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
}

struct launch_desc {
    const char *name; /* the kernel expression as written at the launch */
    bool coop;        /* OPS_LAUNCH_COOP: threads as fibers */
    dim3 grid, block;
    size_t shared_bytes;
    cudaStream_t stream;
};

/* Validates the configuration (errors go to cudaGetLastError, as a GPU's launch
 * errors do) and runs body(ctx) once per thread of every block. */
void run(const launch_desc &d, void (*body)(void *), void *ctx);

/* The arguments are evaluated and converted once, at the launch, as CUDA copies them
 * into the parameter buffer; each thread then gets its own copy (by-value params). */
template <typename Call, typename... A>
void
launch(const launch_desc &d, Call call, A &&...a)
{
    std::tuple<std::decay_t<A>...> args(std::forward<A>(a)...);
    auto thread = [&] { std::apply(call, args); };
    run(d, [](void *p) { (*static_cast<decltype(thread) *>(p))(); }, &thread);
}

} // namespace ops_emu

/* The kernel is called through a generic lambda (capturing by copy, so a local
 * function pointer may name the kernel), so template kernels deduce their
 * arguments as at a <<<>>> launch.  A kernel named with template arguments goes in
 * parentheses or through an alias (its commas would split the macro's arguments). */
#define OPS_EMU_LAUNCH_(coop, kernel, grid, block, shared_bytes, stream, ...)                                     \
    ::ops_emu::launch(::ops_emu::launch_desc{#kernel, coop, dim3(grid), dim3(block), (size_t)(shared_bytes),       \
                                             (stream)},                                                            \
                      [=](auto &...ops_emu_args_) { kernel(ops_emu_args_...); }, ##__VA_ARGS__)
#define OPS_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                                                 \
    OPS_EMU_LAUNCH_(false, kernel, grid, block, shared_bytes, stream, ##__VA_ARGS__)
#define OPS_LAUNCH_COOP(kernel, grid, block, shared_bytes, stream, ...)                                            \
    OPS_EMU_LAUNCH_(true, kernel, grid, block, shared_bytes, stream, ##__VA_ARGS__)
#define OPS_SHARED_DYNAMIC(T, name) T *const name = static_cast<T *>(::ops_emu::dynamic_shared())

/* ---- barriers and warp primitives ---- */

static inline void __syncthreads() { ops_emu::sync_threads(); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)ops_emu::warp_op(ops_emu::WARP_SYNC, mask, 0, 0, 32); }
static inline void __threadfence() { std::atomic_signal_fence(std::memory_order_seq_cst); }
static inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
static inline unsigned __activemask() { return ops_emu::active_mask(); }

template <typename T>
static inline T
__shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize)
{
    return ops_emu::shuffle(ops_emu::WARP_IDX, mask, v, src_lane, width);
}
template <typename T>
static inline T
__shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize)
{
    return ops_emu::shuffle(ops_emu::WARP_UP, mask, v, (int)delta, width);
}
template <typename T>
static inline T
__shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize)
{
    return ops_emu::shuffle(ops_emu::WARP_DOWN, mask, v, (int)delta, width);
}
template <typename T>
static inline T
__shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize)
{
    return ops_emu::shuffle(ops_emu::WARP_XOR, mask, v, lane_mask, width);
}
static inline unsigned
__ballot_sync(unsigned mask, int pred)
{
    return (unsigned)ops_emu::warp_op(ops_emu::WARP_BALLOT, mask, pred != 0, 0, 32);
}
static inline int
__any_sync(unsigned mask, int pred)
{
    return (int)ops_emu::warp_op(ops_emu::WARP_ANY, mask, pred != 0, 0, 32);
}
static inline int
__all_sync(unsigned mask, int pred)
{
    return (int)ops_emu::warp_op(ops_emu::WARP_ALL, mask, pred != 0, 0, 32);
}

/* ---- atomics: one OS thread runs the device, so read-modify-write is atomic ---- */

#define OPS_EMU_ATOMIC_(name, T, expr)                                                                              \
    static inline T name(T *addr, T val)                                                                            \
    {                                                                                                               \
        const T old = *addr;                                                                                        \
        *addr = (expr);                                                                                             \
        return old;                                                                                                 \
    }
#define OPS_EMU_ATOMIC_ARITH_(T)                                                                                    \
    OPS_EMU_ATOMIC_(atomicAdd, T, old + val)                                                                        \
    OPS_EMU_ATOMIC_(atomicSub, T, old - val)                                                                        \
    OPS_EMU_ATOMIC_(atomicExch, T, val)
#define OPS_EMU_ATOMIC_INT_(T)                                                                                      \
    OPS_EMU_ATOMIC_ARITH_(T)                                                                                        \
    OPS_EMU_ATOMIC_(atomicMax, T, old < val ? val : old)                                                            \
    OPS_EMU_ATOMIC_(atomicMin, T, val < old ? val : old)                                                            \
    OPS_EMU_ATOMIC_(atomicOr, T, old | val)                                                                         \
    OPS_EMU_ATOMIC_(atomicAnd, T, old & val)                                                                        \
    OPS_EMU_ATOMIC_(atomicXor, T, old ^ val)                                                                        \
    static inline T atomicCAS(T *addr, T compare, T val)                                                            \
    {                                                                                                               \
        const T old = *addr;                                                                                        \
        if (old == compare)                                                                                         \
            *addr = val;                                                                                            \
        return old;                                                                                                 \
    }
OPS_EMU_ATOMIC_INT_(int)
OPS_EMU_ATOMIC_INT_(unsigned int)
OPS_EMU_ATOMIC_INT_(long long)
OPS_EMU_ATOMIC_INT_(unsigned long long)
OPS_EMU_ATOMIC_ARITH_(float)
OPS_EMU_ATOMIC_ARITH_(double)
static inline unsigned short
atomicCAS(unsigned short *addr, unsigned short compare, unsigned short val)
{
    const unsigned short old = *addr;
    if (old == compare)
        *addr = val;
    return old;
}
#undef OPS_EMU_ATOMIC_INT_
#undef OPS_EMU_ATOMIC_ARITH_
#undef OPS_EMU_ATOMIC_

/* ---- intrinsics ---- */

template <typename T>
static inline T
__ldg(const T *p)
{
    return *p;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned long long
__umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __brev(unsigned x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}

template <typename To, typename From>
static inline To
ops_emu_bit_cast_(From f)
{
    static_assert(sizeof(To) == sizeof(From), "bit cast between different sizes");
    To t;
    std::memcpy(&t, &f, sizeof t);
    return t;
}
static inline int __float_as_int(float f) { return ops_emu_bit_cast_<int>(f); }
static inline float __int_as_float(int i) { return ops_emu_bit_cast_<float>(i); }
static inline unsigned __float_as_uint(float f) { return ops_emu_bit_cast_<unsigned>(f); }
static inline float __uint_as_float(unsigned u) { return ops_emu_bit_cast_<float>(u); }
static inline long long __double_as_longlong(double d) { return ops_emu_bit_cast_<long long>(d); }
static inline double __longlong_as_double(long long l) { return ops_emu_bit_cast_<double>(l); }

/* CUDA's global min/max over integers and floats, mixed types converted as C++'s
 * usual arithmetic conversions do (CUDA's mixed-sign overloads pick the same type). */
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
static inline std::common_type_t<A, B>
min(A a, B b)
{
    using C = std::common_type_t<A, B>;
    if (std::is_floating_point<C>::value)
        return (C)std::fmin((C)a, (C)b);
    return (C)b < (C)a ? (C)b : (C)a;
}
template <typename A, typename B,
          typename = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>>
static inline std::common_type_t<A, B>
max(A a, B b)
{
    using C = std::common_type_t<A, B>;
    if (std::is_floating_point<C>::value)
        return (C)std::fmax((C)a, (C)b);
    return (C)a < (C)b ? (C)b : (C)a;
}

/* Device math without a <math.h> spelling, and the fast-math intrinsics (exact here). */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
/* glibc declares these names itself: macros (its headers are already included). */
#define __expf expf
#define __logf logf
#define __sinf sinf
#define __cosf cosf
#define __powf powf
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

#endif /* OPS_CUDA_EMU_DEVICE_H */
