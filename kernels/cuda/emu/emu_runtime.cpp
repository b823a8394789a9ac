// The emulated CUDA runtime API: errors, devices, device memory (mmap'ed, PROT_NONE
// outside kernels and copies), pinned memory, copies, streams and events.  Every
// call completes before it returns, so streams and events are always done.
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <set>

#include "emu_internal.h"

namespace ops_emu {

namespace {

constexpr int max_devices = 16;
constexpr size_t alloc_align = 256; // cudaMalloc's guarantee

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_current_device = 0;

int
env_int(const char *name, int dflt, int lo, int hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        ops_emu_fatal("%s=%s: expected an integer in [%d, %d]", name, s, lo, hi);
    return (int)v;
}

// One device's memory: a reserved range (PROT_NONE, no swap reserved) carved by a
// first-fit allocator; only [base, base + high_water) is ever opened.
struct device_memory {
    char *base = nullptr;
    size_t limit = 0;
    size_t used = 0;
    size_t high_water = 0;
    std::map<size_t, size_t> free_blocks; // offset -> bytes
    // offset -> {bytes taken, bytes asked for}: copies are checked against the latter.
    std::map<size_t, std::pair<size_t, size_t>> live;
};

struct emulator {
    int count = 0;
    size_t limit = 0;
    device_memory dev[max_devices];
    std::map<const void *, size_t> pinned; // block -> bytes
    std::set<cudaStream_t> streams;
    std::set<cudaEvent_t> events;

    emulator()
    {
        count = env_int("OPS_EMU_DEVICES", 1, 0, max_devices);
        limit = (size_t)env_int("OPS_EMU_MEM_MB", 4096, 1, 1 << 20) << 20;
        for (int d = 0; d < count; d++) {
            void *p = mmap(nullptr, limit, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p == MAP_FAILED)
                ops_emu_fatal("cannot reserve %zu MiB of address space for emulated device %d: %s", limit >> 20,
                              d, strerror(errno));
            dev[d].base = static_cast<char *>(p);
            dev[d].limit = limit;
            dev[d].free_blocks[0] = limit;
        }
    }
};

emulator &
emu()
{
    static emulator e; // first use reads the environment (tests set it before)
    return e;
}

size_t
page_size()
{
    static const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

void
protect_all(int prot)
{
    emulator &e = emu();
    for (int d = 0; d < e.count; d++) {
        device_memory &m = e.dev[d];
        size_t len = (m.high_water + page_size() - 1) / page_size() * page_size();
        if (len && mprotect(m.base, len, prot) != 0)
            ops_emu_fatal("mprotect of emulated device %d memory failed: %s", d, strerror(errno));
    }
}

// The device holding p, or -1; *off gets p's offset in it.
int
device_of(const void *p, size_t *off)
{
    emulator &e = emu();
    const char *c = static_cast<const char *>(p);
    for (int d = 0; d < e.count; d++)
        if (c >= e.dev[d].base && c < e.dev[d].base + e.dev[d].limit) {
            *off = (size_t)(c - e.dev[d].base);
            return d;
        }
    return -1;
}

bool
is_pinned(const void *p)
{
    const std::map<const void *, size_t> &pinned = emu().pinned;
    auto it = pinned.upper_bound(p);
    if (it == pinned.begin())
        return false;
    --it;
    return static_cast<const char *>(p) < static_cast<const char *>(it->first) + it->second;
}

cudaError_t
check_device_present()
{
    return emu().count == 0 ? set_error(cudaErrorNoDevice) : cudaSuccess;
}

double
now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace

std::mutex &
device_lock()
{
    static std::mutex m;
    return m;
}

memory_window::memory_window() { protect_all(PROT_READ | PROT_WRITE); }
memory_window::~memory_window() { protect_all(PROT_NONE); }

cudaError_t
set_error(cudaError_t err)
{
    if (err != cudaSuccess)
        t_last_error = err;
    return err;
}

int
device_count()
{
    return emu().count;
}

int
current_device()
{
    return t_current_device;
}

bool
device_range(const void *p, size_t bytes, int *device)
{
    size_t off = 0;
    int d = device_of(p, &off);
    if (d < 0)
        return false;
    const auto &live = emu().dev[d].live;
    auto it = live.upper_bound(off);
    if (it == live.begin())
        return false;
    --it;
    const size_t end = it->first + it->second.second;
    if (off >= end || off + bytes > end)
        return false;
    *device = d;
    return true;
}

} // namespace ops_emu

using namespace ops_emu;

extern "C" {

void
ops_emu_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("libops CUDA emulation: fatal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    abort();
}

const char *
cudaGetErrorName(cudaError_t err)
{
    switch (err) {
#define OPS_EMU_NAME_(e) \
    case e:              \
        return #e;
        OPS_EMU_NAME_(cudaSuccess)
        OPS_EMU_NAME_(cudaErrorInvalidValue)
        OPS_EMU_NAME_(cudaErrorMemoryAllocation)
        OPS_EMU_NAME_(cudaErrorInitializationError)
        OPS_EMU_NAME_(cudaErrorInvalidConfiguration)
        OPS_EMU_NAME_(cudaErrorInvalidPitchValue)
        OPS_EMU_NAME_(cudaErrorInvalidSymbol)
        OPS_EMU_NAME_(cudaErrorInvalidDevicePointer)
        OPS_EMU_NAME_(cudaErrorInvalidMemcpyDirection)
        OPS_EMU_NAME_(cudaErrorInsufficientDriver)
        OPS_EMU_NAME_(cudaErrorNoDevice)
        OPS_EMU_NAME_(cudaErrorInvalidDevice)
        OPS_EMU_NAME_(cudaErrorInvalidResourceHandle)
        OPS_EMU_NAME_(cudaErrorNotReady)
        OPS_EMU_NAME_(cudaErrorIllegalAddress)
        OPS_EMU_NAME_(cudaErrorLaunchOutOfResources)
        OPS_EMU_NAME_(cudaErrorNotSupported)
        OPS_EMU_NAME_(cudaErrorUnknown)
#undef OPS_EMU_NAME_
    }
    return "cudaErrorUnknown";
}

const char *
cudaGetErrorString(cudaError_t err)
{
    // CUDA's own wording, so messages read the same as on a GPU.
    switch (err) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
    }
    return "unrecognized error code";
}

cudaError_t
cudaGetLastError(void)
{
    cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

cudaError_t
cudaPeekAtLastError(void)
{
    return t_last_error;
}

cudaError_t
cudaGetDeviceCount(int *count)
{
    if (!count)
        return set_error(cudaErrorInvalidValue);
    *count = emu().count;
    return check_device_present();
}

cudaError_t
cudaGetDevice(int *device)
{
    if (!device)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    *device = t_current_device;
    return cudaSuccess;
}

cudaError_t
cudaSetDevice(int device)
{
    if (cudaError_t e = check_device_present())
        return e;
    if (device < 0 || device >= emu().count)
        return set_error(cudaErrorInvalidDevice);
    t_current_device = device;
    return cudaSuccess;
}

cudaError_t
cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (!p)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    if (device < 0 || device >= emu().count)
        return set_error(cudaErrorInvalidDevice);
    // A plausible Hopper (sm_90, H100-like) part, sized by OPS_EMU_MEM_MB.
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "libops emulated device (sm_90)");
    p->totalGlobalMem = emu().limit;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->clockRate = 1755000;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 132;
    p->maxThreadsPerMultiProcessor = 2048;
    p->l2CacheSize = 50 * 1024 * 1024;
    p->memoryBusWidth = 5120;
    p->memoryClockRate = 2619000;
    p->concurrentKernels = 1;
    p->unifiedAddressing = 1;
    p->canMapHostMemory = 1;
    p->managedMemory = 1;
    p->pciBusID = device + 1;
    return cudaSuccess;
}

cudaError_t
cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    if (!value)
        return set_error(cudaErrorInvalidValue);
    cudaDeviceProp p;
    if (cudaError_t e = cudaGetDeviceProperties(&p, device))
        return e;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    default: return set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t
cudaDeviceSynchronize(void)
{
    return check_device_present();
}

cudaError_t
cudaDeviceReset(void)
{
    return check_device_present();
}

cudaError_t
cudaDriverGetVersion(int *version)
{
    if (!version)
        return set_error(cudaErrorInvalidValue);
    *version = 13000;
    return cudaSuccess;
}

cudaError_t
cudaRuntimeGetVersion(int *version)
{
    if (!version)
        return set_error(cudaErrorInvalidValue);
    *version = 13000;
    return cudaSuccess;
}

cudaError_t
cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (cudaError_t e = check_device_present())
        return e;
    std::lock_guard<std::mutex> g(device_lock());
    const device_memory &m = emu().dev[t_current_device];
    if (free_bytes)
        *free_bytes = m.limit - m.used;
    if (total_bytes)
        *total_bytes = m.limit;
    return cudaSuccess;
}

cudaError_t
cudaMalloc(void **ptr, size_t size)
{
    if (!ptr)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    *ptr = nullptr;
    if (size == 0)
        return cudaSuccess;
    std::lock_guard<std::mutex> g(device_lock());
    device_memory &m = emu().dev[t_current_device];
    if (size > m.limit)
        return set_error(cudaErrorMemoryAllocation);
    const size_t bytes = (size + alloc_align - 1) / alloc_align * alloc_align;
    for (auto it = m.free_blocks.begin(); it != m.free_blocks.end(); ++it) {
        if (it->second < bytes)
            continue;
        const size_t off = it->first, rest = it->second - bytes;
        m.free_blocks.erase(it);
        if (rest)
            m.free_blocks[off + bytes] = rest;
        m.live[off] = {bytes, size};
        m.used += bytes;
        if (off + bytes > m.high_water)
            m.high_water = off + bytes;
        *ptr = m.base + off;
        return cudaSuccess;
    }
    return set_error(cudaErrorMemoryAllocation);
}

cudaError_t
cudaFree(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> g(device_lock());
    size_t off = 0;
    const int d = device_of(ptr, &off);
    if (d < 0)
        return set_error(cudaErrorInvalidValue);
    device_memory &m = emu().dev[d];
    auto it = m.live.find(off);
    if (it == m.live.end())
        return set_error(cudaErrorInvalidValue);
    size_t bytes = it->second.first;
    m.live.erase(it);
    m.used -= bytes;
    // Give the whole pages back to the OS (a later allocation reads zeros there).
    const size_t ps = page_size();
    const size_t lo = (off + ps - 1) / ps * ps, hi = (off + bytes) / ps * ps;
    if (hi > lo)
        (void)madvise(m.base + lo, hi - lo, MADV_DONTNEED);
    // Merge with the free neighbours.
    auto next = m.free_blocks.lower_bound(off);
    if (next != m.free_blocks.end() && next->first == off + bytes) {
        bytes += next->second;
        next = m.free_blocks.erase(next);
    }
    if (next != m.free_blocks.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == off) {
            prev->second += bytes;
            return cudaSuccess;
        }
    }
    m.free_blocks[off] = bytes;
    return cudaSuccess;
}

cudaError_t
cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    if (!ptr)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    *ptr = nullptr;
    if (size == 0)
        return cudaSuccess;
    void *p = nullptr;
    if (posix_memalign(&p, 4096, size) != 0)
        return set_error(cudaErrorMemoryAllocation);
    std::lock_guard<std::mutex> g(device_lock());
    emu().pinned[p] = size;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t
cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t
cudaFreeHost(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> g(device_lock());
    if (emu().pinned.erase(ptr) == 0)
        return set_error(cudaErrorInvalidValue);
    free(ptr);
    return cudaSuccess;
}

cudaError_t
cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
    if (!attr)
        return set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> g(device_lock());
    size_t off = 0;
    const int d = device_of(ptr, &off);
    memset(attr, 0, sizeof *attr);
    attr->device = -2;
    if (d >= 0) {
        attr->type = cudaMemoryTypeDevice;
        attr->device = d;
        attr->devicePointer = const_cast<void *>(ptr);
    } else if (is_pinned(ptr)) {
        attr->type = cudaMemoryTypeHost;
        attr->device = t_current_device;
        attr->devicePointer = const_cast<void *>(ptr);
        attr->hostPointer = const_cast<void *>(ptr);
    } else {
        attr->type = cudaMemoryTypeUnregistered;
        attr->hostPointer = const_cast<void *>(ptr);
    }
    return cudaSuccess;
}

} // extern "C"

namespace {

// A copy's pointers checked against its kind: device sides must lie inside one live
// allocation (an out-of-bounds copy is an error here, not silent corruption), host
// sides must not be device memory.  The lock must be held.
cudaError_t
check_copy(void *dst, const void *src, size_t dst_extent, size_t src_extent, cudaMemcpyKind kind)
{
    int d = 0;
    size_t off = 0;
    const bool dst_dev = device_of(dst, &off) >= 0, src_dev = device_of(src, &off) >= 0;
    if (kind == cudaMemcpyDefault)
        kind = (cudaMemcpyKind)((src_dev ? 2 : 0) | (dst_dev ? 1 : 0)); // H2H, H2D, D2H, D2D
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    const bool want_dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool want_src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (want_dst_dev != dst_dev || want_src_dev != src_dev)
        return cudaErrorInvalidValue;
    if (dst_dev && !device_range(dst, dst_extent, &d))
        return cudaErrorInvalidValue;
    if (src_dev && !device_range(src, src_extent, &d))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t
copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
        cudaMemcpyKind kind)
{
    if (cudaError_t e = check_device_present())
        return e;
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (!dst || !src)
        return set_error(cudaErrorInvalidValue);
    if (width > dpitch || width > spitch)
        return set_error(cudaErrorInvalidPitchValue);
    std::lock_guard<std::mutex> g(device_lock());
    const size_t dext = dpitch * (height - 1) + width, sext = spitch * (height - 1) + width;
    if (cudaError_t e = check_copy(dst, src, dext, sext, kind))
        return set_error(e);
    memory_window open;
    for (size_t r = 0; r < height; r++)
        memmove(static_cast<char *>(dst) + r * dpitch, static_cast<const char *>(src) + r * spitch, width);
    return cudaSuccess;
}

} // namespace

extern "C" {

cudaError_t
cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    return copy_2d(dst, count, src, count, count, 1, kind);
}

cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return copy_2d(dst, count, src, count, count, 1, kind);
}

/* Between devices: each pointer must lie in the named device's memory. */
cudaError_t
cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device, size_t count,
                    cudaStream_t stream)
{
    (void)stream;
    if (cudaError_t e = check_device_present())
        return e;
    if (count == 0)
        return cudaSuccess;
    {
        std::lock_guard<std::mutex> g(device_lock());
        int dd = -1, sd = -1;
        if (!device_range(dst, count, &dd) || !device_range(src, count, &sd) || dd != dst_device ||
            sd != src_device)
            return set_error(cudaErrorInvalidValue);
    }
    return copy_2d(dst, count, src, count, count, 1, cudaMemcpyDeviceToDevice);
}

cudaError_t
cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device, size_t count)
{
    return cudaMemcpyPeerAsync(dst, dst_device, src, src_device, count, 0);
}

cudaError_t
cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
             cudaMemcpyKind kind)
{
    return copy_2d(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t
cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                  cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return copy_2d(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t
cudaMemset(void *ptr, int value, size_t count)
{
    if (cudaError_t e = check_device_present())
        return e;
    if (count == 0)
        return cudaSuccess;
    std::lock_guard<std::mutex> g(device_lock());
    int d = 0;
    if (!device_range(ptr, count, &d))
        return set_error(cudaErrorInvalidValue);
    memory_window open;
    memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t
cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    return cudaMemset(ptr, value, count);
}

} // extern "C"

struct ops_emu_stream {
    unsigned flags;
};
struct ops_emu_event {
    unsigned flags;
    bool recorded;
    double when_ms;
};

namespace {

// The default stream (0) and the two special handles are always valid.
bool
valid_stream(cudaStream_t s)
{
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return true;
    std::lock_guard<std::mutex> g(device_lock());
    return emu().streams.count(s) != 0;
}

bool
valid_event(cudaEvent_t e)
{
    std::lock_guard<std::mutex> g(device_lock());
    return e && emu().events.count(e) != 0;
}

} // namespace

extern "C" {

cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (!stream)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    *stream = new ops_emu_stream{flags};
    std::lock_guard<std::mutex> g(device_lock());
    emu().streams.insert(*stream);
    return cudaSuccess;
}

cudaError_t
cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
    std::lock_guard<std::mutex> g(device_lock());
    if (!stream || emu().streams.erase(stream) == 0)
        return set_error(cudaErrorInvalidResourceHandle);
    delete stream;
    return cudaSuccess;
}

cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
    return valid_stream(stream) ? check_device_present() : set_error(cudaErrorInvalidResourceHandle);
}

cudaError_t
cudaStreamQuery(cudaStream_t stream)
{
    return cudaStreamSynchronize(stream);
}

cudaError_t
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    if (!valid_stream(stream) || !valid_event(event))
        return set_error(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t
cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = check_device_present())
        return e;
    *event = new ops_emu_event{flags, false, 0.0};
    std::lock_guard<std::mutex> g(device_lock());
    emu().events.insert(*event);
    return cudaSuccess;
}

cudaError_t
cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (!valid_event(event) || !valid_stream(stream))
        return set_error(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->when_ms = now_ms();
    return cudaSuccess;
}

// Work is done when the call that queued it returns: a recorded event is complete,
// and one never recorded counts as complete too, as in CUDA.
cudaError_t
cudaEventQuery(cudaEvent_t event)
{
    return valid_event(event) ? cudaSuccess : set_error(cudaErrorInvalidResourceHandle);
}

cudaError_t
cudaEventSynchronize(cudaEvent_t event)
{
    return cudaEventQuery(event);
}

cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return set_error(cudaErrorInvalidValue);
    if (!valid_event(start) || !valid_event(end))
        return set_error(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return set_error(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded)
        return set_error(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->when_ms - start->when_ms);
    return cudaSuccess;
}

cudaError_t
cudaEventDestroy(cudaEvent_t event)
{
    std::lock_guard<std::mutex> g(device_lock());
    if (!event || emu().events.erase(event) == 0)
        return set_error(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}

} // extern "C"
