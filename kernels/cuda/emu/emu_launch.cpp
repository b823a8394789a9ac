// Kernel launches on the emulated device: configuration checks, the direct-call
// path of OPS_LAUNCH, and the fiber scheduler of OPS_LAUNCH_COOP with its block
// barrier and warp primitives.
//
// A COOP block runs its threads as fibers, round-robin: each runs until it waits at
// __syncthreads or a warp primitive, or exits.  When every thread has stopped, the
// scheduler completes what can complete (the block barrier when every live thread
// waits there; a warp primitive when every live lane of its mask waits at one) and
// resumes those threads; when nothing can complete, the block is deadlocked.
#include <errno.h>
#include <sys/mman.h>

#include <map>
#include <string>

#include "emu_internal.h"

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

// ---- context switch --------------------------------------------------------
//
// On x86-64 a hand-written switch saves only the callee-saved registers: a few
// nanoseconds, against a system call per switch for swapcontext (signal mask).
#if defined(__x86_64__)
extern "C" void ops_emu_switch(void **save_sp, void *next_sp);
extern "C" void ops_emu_fiber_start(void);
asm(R"(
    .text
    .p2align 4
    .type ops_emu_switch, @function
ops_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ops_emu_switch, .-ops_emu_switch

    .p2align 4
    .type ops_emu_fiber_start, @function
ops_emu_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size ops_emu_fiber_start, .-ops_emu_fiber_start
    .section .note.GNU-stack,"",@progbits
    .text
)");
#else
#include <ucontext.h>
#endif

namespace ops_emu {

namespace {

constexpr size_t stack_bytes = 64 * 1024;
constexpr int max_block_threads = 1024;

enum thread_state { RUNNABLE, AT_BARRIER, AT_WARP_OP, EXITED };

struct fiber {
#if defined(__x86_64__)
    void *sp = nullptr;
#else
    ucontext_t ctx;
#endif
    char *stack = nullptr;
    thread_state state = RUNNABLE;
    uint3 tid{0, 0, 0};
    // The pending warp primitive.
    warp_kind kind = WARP_SYNC;
    unsigned mask = 0;
    uint64_t value = 0;
    int lane_arg = 0;
    int width = 32;
    uint64_t result = 0;
};

struct block_scheduler {
    std::vector<fiber> fibers; // grown to the largest block, stacks kept
    int nthreads = 0;
#if defined(__x86_64__)
    void *sched_sp = nullptr;
#else
    ucontext_t sched_ctx;
#endif
    int current = -1;
};

// Per-launch state (launches are serialized by the device lock).
const launch_desc *g_launch = nullptr;
void (*g_body)(void *) = nullptr;
void *g_ctx = nullptr;
block_scheduler g_sched;
std::vector<unsigned char> g_dynamic_shared;
std::map<std::string, int> g_max_dynamic_shared; // kernel name -> bytes allowed

// The kernel's name in a launch or cudaFuncSetAttribute expression: template
// argument lists dropped, then the last identifier ("ns::kernel<float, 4>",
// "(kernel<float, 4>)", "reinterpret_cast<const void *>(&kernel)" -> "kernel").
std::string
kernel_key(const char *name)
{
    std::string s;
    int depth = 0;
    for (const char *c = name; *c; c++) {
        if (*c == '<')
            depth++;
        else if (*c == '>' && depth > 0)
            depth--;
        else if (depth == 0)
            s += *c;
    }
    auto ident = [](char c) { return isalnum((unsigned char)c) || c == '_'; };
    size_t end = s.size();
    while (end > 0 && !ident(s[end - 1]))
        end--;
    size_t begin = end;
    while (begin > 0 && ident(s[begin - 1]))
        begin--;
    return s.substr(begin, end - begin);
}

[[noreturn]] void
misuse(const char *what)
{
    ops_emu_fatal("kernel '%s', block (%u,%u,%u), thread (%u,%u,%u): %s", g_launch ? g_launch->name : "?",
                  blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, what);
}

// Inside a COOP block: the calling fiber, else a fatal error naming the primitive.
fiber &
cooperative_caller(const char *primitive)
{
    if (!g_launch)
        ops_emu_fatal("%s called outside a kernel", primitive);
    if (!g_launch->coop) {
        std::string msg = std::string(primitive) +
                          " reached in a kernel launched with OPS_LAUNCH: use OPS_LAUNCH_COOP for kernels with "
                          "barriers or warp primitives";
        misuse(msg.c_str());
    }
    return g_sched.fibers[g_sched.current];
}

void
yield_to_scheduler(fiber &f)
{
#if defined(__x86_64__)
    ops_emu_switch(&f.sp, g_sched.sched_sp);
#else
    swapcontext(&f.ctx, &g_sched.sched_ctx);
#endif
}

void
fiber_main(void *arg)
{
    fiber &f = *static_cast<fiber *>(arg);
    g_body(g_ctx);
    f.state = EXITED;
    yield_to_scheduler(f);
    ops_emu_fatal("an exited emulated thread was resumed");
}

#if !defined(__x86_64__)
void
fiber_main_uc(unsigned lo, unsigned hi)
{
    fiber_main(reinterpret_cast<void *>(((uintptr_t)hi << 32) | lo));
}
#endif

void
start_fiber(fiber &f)
{
    if (!f.stack) {
        // One guard page below each stack: an overflow faults instead of corrupting.
        void *p = mmap(nullptr, stack_bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            ops_emu_fatal("cannot allocate an emulated thread's stack: %s", strerror(errno));
        mprotect(p, 4096, PROT_NONE);
        f.stack = static_cast<char *>(p) + 4096;
    }
    f.state = RUNNABLE;
#if defined(__x86_64__)
    // Frame popped by ops_emu_switch: r15 r14 r13 r12 rbx rbp, then the return
    // address; rsp ends 16-byte aligned at ops_emu_fiber_start's call, as the ABI wants.
    uintptr_t top = ((uintptr_t)(f.stack + stack_bytes)) & ~(uintptr_t)15;
    void **sp = reinterpret_cast<void **>(top - 72);
    sp[0] = nullptr;                                       // r15
    sp[1] = nullptr;                                       // r14
    sp[2] = reinterpret_cast<void *>(&fiber_main);         // r13: called
    sp[3] = &f;                                            // r12: its argument
    sp[4] = nullptr;                                       // rbx
    sp[5] = nullptr;                                       // rbp
    sp[6] = reinterpret_cast<void *>(&ops_emu_fiber_start); // return address
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = stack_bytes;
    f.ctx.uc_link = nullptr;
    const uintptr_t a = reinterpret_cast<uintptr_t>(&f);
    makecontext(&f.ctx, (void (*)())fiber_main_uc, 2, (unsigned)a, (unsigned)(a >> 32));
#endif
}

void
resume(int i)
{
    fiber &f = g_sched.fibers[i];
    g_sched.current = i;
    threadIdx = f.tid;
#if defined(__x86_64__)
    ops_emu_switch(&g_sched.sched_sp, f.sp);
#else
    swapcontext(&g_sched.sched_ctx, &f.ctx);
#endif
    g_sched.current = -1;
}

// The lanes of warp w that exist and have not exited.
unsigned
live_lanes(int w)
{
    unsigned m = 0;
    for (int l = 0; l < 32 && w * 32 + l < g_sched.nthreads; l++)
        if (g_sched.fibers[w * 32 + l].state != EXITED)
            m |= 1u << l;
    return m;
}

// Completes the warp primitive of lane `lane` of warp w when every live lane of its
// mask waits at one; returns whether it did (and released those lanes).
bool
complete_warp_op(int w, int lane)
{
    fiber *lanes = &g_sched.fibers[w * 32];
    const unsigned group = (lanes[lane].mask & live_lanes(w)) | (1u << lane);
    for (int l = 0; l < 32; l++)
        if ((group >> l & 1) && lanes[l].state != AT_WARP_OP)
            return false;
    for (int l = 0; l < 32; l++)
        if ((group >> l & 1) && lanes[l].kind != lanes[lane].kind)
            ops_emu_fatal("kernel '%s', block (%u,%u,%u), warp %d: lanes %d and %d wait at different warp "
                          "primitives with overlapping masks",
                          g_launch->name, blockIdx.x, blockIdx.y, blockIdx.z, w, lane, l);
    for (int l = 0; l < 32; l++) {
        if (!(group >> l & 1))
            continue;
        fiber &f = lanes[l];
        const int width = f.width;
        if (width <= 0 || width > 32 || (width & (width - 1)))
            ops_emu_fatal("kernel '%s': warp shuffle width %d is not a power of two up to 32", g_launch->name,
                          width);
        const int seg = l & ~(width - 1);
        int src = l;
        switch (f.kind) {
        case WARP_IDX: src = seg + (f.lane_arg & (width - 1)); break;
        case WARP_UP: src = l - f.lane_arg >= seg ? l - f.lane_arg : l; break;
        case WARP_DOWN: src = l + f.lane_arg < seg + width ? l + f.lane_arg : l; break;
        case WARP_XOR: src = (l ^ f.lane_arg) < seg + width ? (l ^ f.lane_arg) : l; break;
        default: break;
        }
        const unsigned own = f.mask & group;
        unsigned votes = 0;
        if (f.kind == WARP_BALLOT || f.kind == WARP_ANY || f.kind == WARP_ALL)
            for (int j = 0; j < 32; j++)
                if ((own >> j & 1) && lanes[j].value)
                    votes |= 1u << j;
        switch (f.kind) {
        case WARP_SYNC: f.result = 0; break;
        case WARP_BALLOT: f.result = votes; break;
        case WARP_ANY: f.result = votes != 0; break;
        case WARP_ALL: f.result = votes == own; break;
        default:
            // A source lane outside the group (exited, absent or not in the mask) is
            // undefined on a GPU; the caller's own value here.
            f.result = (src >= 0 && src < 32 && (group >> src & 1)) ? lanes[src].value : f.value;
            break;
        }
    }
    for (int l = 0; l < 32; l++)
        if (group >> l & 1)
            lanes[l].state = RUNNABLE;
    return true;
}

// Completes whatever can complete; false: nothing could (deadlock).
bool
release_waiters()
{
    int live = 0, at_barrier = 0;
    for (int i = 0; i < g_sched.nthreads; i++) {
        live += g_sched.fibers[i].state != EXITED;
        at_barrier += g_sched.fibers[i].state == AT_BARRIER;
    }
    if (at_barrier == live) {
        for (int i = 0; i < g_sched.nthreads; i++)
            if (g_sched.fibers[i].state == AT_BARRIER)
                g_sched.fibers[i].state = RUNNABLE;
        return true;
    }
    bool released = false;
    for (int i = 0; i < g_sched.nthreads; i++)
        if (g_sched.fibers[i].state == AT_WARP_OP && complete_warp_op(i / 32, i % 32))
            released = true;
    return released;
}

void
run_block_coop()
{
    const int n = g_sched.nthreads;
    if ((int)g_sched.fibers.size() < n)
        g_sched.fibers.resize(n);
    for (int i = 0; i < n; i++) {
        fiber &f = g_sched.fibers[i];
        f.tid = uint3{i % blockDim.x, (i / blockDim.x) % blockDim.y, i / (blockDim.x * blockDim.y)};
        start_fiber(f);
    }
    for (;;) {
        bool any_live = false;
        for (int i = 0; i < n; i++) {
            if (g_sched.fibers[i].state == RUNNABLE)
                resume(i);
            any_live |= g_sched.fibers[i].state != EXITED;
        }
        if (!any_live)
            return;
        if (!release_waiters()) {
            int barrier = 0, warp = 0, exited = 0;
            for (int i = 0; i < n; i++) {
                barrier += g_sched.fibers[i].state == AT_BARRIER;
                warp += g_sched.fibers[i].state == AT_WARP_OP;
                exited += g_sched.fibers[i].state == EXITED;
            }
            ops_emu_fatal("kernel '%s', block (%u,%u,%u): deadlock: %d threads wait at __syncthreads, %d at warp "
                          "primitives, %d exited; no barrier can complete",
                          g_launch->name, blockIdx.x, blockIdx.y, blockIdx.z, barrier, warp, exited);
        }
    }
}

void
run_block_direct()
{
    for (unsigned z = 0; z < blockDim.z; z++)
        for (unsigned y = 0; y < blockDim.y; y++)
            for (unsigned x = 0; x < blockDim.x; x++) {
                threadIdx = uint3{x, y, z};
                g_body(g_ctx);
            }
}

cudaError_t
check_config(const launch_desc &d)
{
    cudaDeviceProp p;
    if (cudaError_t e = cudaGetDeviceProperties(&p, current_device()))
        return e;
    const dim3 g = d.grid, b = d.block;
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
        return cudaErrorInvalidConfiguration;
    if (b.x > (unsigned)p.maxThreadsDim[0] || b.y > (unsigned)p.maxThreadsDim[1] ||
        b.z > (unsigned)p.maxThreadsDim[2] || (uint64_t)b.x * b.y * b.z > (uint64_t)p.maxThreadsPerBlock)
        return cudaErrorInvalidConfiguration;
    if (g.x > (unsigned)p.maxGridSize[0] || g.y > (unsigned)p.maxGridSize[1] || g.z > (unsigned)p.maxGridSize[2])
        return cudaErrorInvalidConfiguration;
    size_t allowed = p.sharedMemPerBlock;
    auto it = g_max_dynamic_shared.find(kernel_key(d.name));
    if (it != g_max_dynamic_shared.end())
        allowed = (size_t)it->second;
    if (d.shared_bytes > allowed)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

} // namespace

void
run(const launch_desc &d, void (*body)(void *), void *ctx)
{
    std::lock_guard<std::mutex> lock(device_lock());
    if (cudaError_t e = check_config(d)) {
        set_error(e);
        return;
    }
    // Shared memory is not zeroed on a GPU: a pattern, so a kernel that reads it
    // before writing gets garbage here too.
    g_dynamic_shared.assign(d.shared_bytes + 16, 0xa5);
    g_launch = &d;
    g_body = body;
    g_ctx = ctx;
    gridDim = d.grid;
    blockDim = d.block;
    g_sched.nthreads = (int)(d.block.x * d.block.y * d.block.z);
    {
        memory_window open;
        for (unsigned z = 0; z < d.grid.z; z++)
            for (unsigned y = 0; y < d.grid.y; y++)
                for (unsigned x = 0; x < d.grid.x; x++) {
                    blockIdx = uint3{x, y, z};
                    if (d.coop)
                        run_block_coop();
                    else
                        run_block_direct();
                }
    }
    g_launch = nullptr;
}

void
sync_threads()
{
    fiber &f = cooperative_caller("__syncthreads");
    f.state = AT_BARRIER;
    yield_to_scheduler(f);
}

uint64_t
warp_op(warp_kind kind, unsigned mask, uint64_t bits, int lane_arg, int width)
{
    fiber &f = cooperative_caller("a warp primitive (__shfl_*_sync, __ballot_sync, __syncwarp, ...)");
    f.state = AT_WARP_OP;
    f.kind = kind;
    f.mask = mask;
    f.value = bits;
    f.lane_arg = lane_arg;
    f.width = width;
    yield_to_scheduler(f);
    return f.result;
}

unsigned
active_mask()
{
    if (!g_launch)
        ops_emu_fatal("__activemask called outside a kernel");
    const int t = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    if (!g_launch->coop) {
        // Threads run one at a time: every lane of the warp that exists is "active".
        const int first = t / 32 * 32, n = std::min(32, g_sched.nthreads - first);
        return n == 32 ? 0xffffffffu : (1u << n) - 1;
    }
    return live_lanes(t / 32);
}

void *
dynamic_shared()
{
    if (!g_launch)
        ops_emu_fatal("dynamic shared memory used outside a kernel");
    // 16-byte aligned, as the largest vector type needs.
    uintptr_t p = reinterpret_cast<uintptr_t>(g_dynamic_shared.data());
    return reinterpret_cast<void *>((p + 15) & ~(uintptr_t)15);
}

} // namespace ops_emu

extern "C" cudaError_t
ops_emu_func_set_attribute(const char *kernel_name, cudaFuncAttribute attr, int value)
{
    using namespace ops_emu;
    if (!kernel_name)
        return set_error(cudaErrorInvalidValue);
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: {
        if (value < 0 || value > 227 * 1024)
            return set_error(cudaErrorInvalidValue);
        std::lock_guard<std::mutex> lock(device_lock());
        g_max_dynamic_shared[kernel_key(kernel_name)] = value;
        return cudaSuccess;
    }
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        return value < -1 || value > 100 ? set_error(cudaErrorInvalidValue) : cudaSuccess;
    }
    return set_error(cudaErrorInvalidValue);
}
