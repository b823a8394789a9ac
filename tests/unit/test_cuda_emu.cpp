// The emulated CUDA device itself (kernels/cuda/emu/), built only in the emulation
// tree: kernels defined here run through OPS_LAUNCH / OPS_LAUNCH_COOP and are checked
// against plain host loops; misuse must kill the process with a message, and host
// code touching device memory must fault, as on a GPU.
#include <check.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "ops_cuda_rt.h"
#include "ops_scalar_math.h"

#define CK_CUDA(call) ck_assert_int_eq((int)(call), (int)cudaSuccess)

template <typename T>
static T *
to_device(const std::vector<T> &h)
{
    T *d = nullptr;
    CK_CUDA(cudaMalloc(&d, h.size() * sizeof(T)));
    CK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
static std::vector<T>
to_host(const T *d, size_t n)
{
    std::vector<T> h(n);
    CK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// Runs fn in a child process; returns its stderr, and its wait status in *status.
template <typename F>
static std::string
in_child(F fn, int *status)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        fn();
        _exit(0);
    }
    close(fd[1]);
    std::string out;
    char buf[512];
    ssize_t r;
    while ((r = read(fd[0], buf, sizeof buf)) > 0)
        out.append(buf, (size_t)r);
    close(fd[0]);
    waitpid(pid, status, 0);
    return out;
}

// ---- indexing ----

__global__ void
count_kernel(int *hits, int nx, int ny)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    atomicAdd(&hits[(z * ny + y) * nx + x], 1);
}

START_TEST(test_indexing_covers_every_thread_once)
{
    const dim3 grid(3, 2, 2), block(8, 4, 2);
    const int nx = 24, ny = 8, nz = 4;
    int *d = to_device(std::vector<int>((size_t)nx * ny * nz, 0));
    OPS_LAUNCH(count_kernel, grid, block, 0, 0, d, nx, ny);
    CK_CUDA(cudaGetLastError());
    std::vector<int> h = to_host(d, (size_t)nx * ny * nz);
    for (size_t i = 0; i < h.size(); i++)
        ck_assert_msg(h[i] == 1, "element %zu hit %d times", i, h[i]);
    CK_CUDA(cudaFree(d));
}
END_TEST

// Template kernels: explicit arguments in parentheses (the macro's commas), and
// arguments deduced from the launch's arguments as at a <<<>>> launch.
template <typename T, int V>
__global__ void
fill_kernel(T *p, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (T)V;
}

struct times_three {
    __host__ __device__ int operator()(int x) const { return 3 * x; }
};

template <typename F>
__global__ void
map_kernel(int *p, int n, F f)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = f(p[i]);
}

START_TEST(test_template_kernels)
{
    const int n = 300;
    int *d = to_device(std::vector<int>(n, 0));
    OPS_LAUNCH((fill_kernel<int, 7>), (n + 127) / 128, 128, 0, 0, d, n);
    OPS_LAUNCH(map_kernel, (n + 127) / 128, 128, 0, 0, d, n, times_three());
    CK_CUDA(cudaGetLastError());
    for (int v : to_host(d, n))
        ck_assert_int_eq(v, 21);
    CK_CUDA(cudaFree(d));
}
END_TEST

// ---- shared memory and __syncthreads ----

template <int N>
__global__ void
block_sum_static(const int *in, int *out, int n)
{
    __shared__ int buf[N];
    const int i = blockIdx.x * N + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = N / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}

__global__ void
block_sum_dynamic(const int *in, int *out, int n)
{
    OPS_SHARED_DYNAMIC(int, buf);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}

START_TEST(test_block_reduction)
{
    const int n = 5000, threads = 1024, blocks = (n + threads - 1) / threads;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++)
        h[i] = (i * 37) % 101 - 50;
    int *in = to_device(h), *out = nullptr;
    CK_CUDA(cudaMalloc(&out, blocks * sizeof(int)));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            OPS_LAUNCH_COOP(block_sum_static<1024>, blocks, threads, 0, 0, in, out, n);
        else
            OPS_LAUNCH_COOP(block_sum_dynamic, blocks, threads, threads * sizeof(int), 0, in, out, n);
        CK_CUDA(cudaGetLastError());
        std::vector<int> got = to_host(out, blocks);
        for (int b = 0; b < blocks; b++) {
            int want = 0;
            for (int i = b * threads; i < n && i < (b + 1) * threads; i++)
                want += h[i];
            ck_assert_int_eq(got[b], want);
        }
    }
    CK_CUDA(cudaFree(in));
    CK_CUDA(cudaFree(out));
}
END_TEST

// Threads past n return first; the barrier then waits only for the others (on a
// GPU exited threads no longer take part either).
__global__ void
reverse_kernel(int *p, int n)
{
    __shared__ int buf[128];
    if ((int)threadIdx.x >= n)
        return;
    buf[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    p[threadIdx.x] = buf[n - 1 - threadIdx.x];
}

START_TEST(test_exited_threads_leave_barriers)
{
    const int n = 77;
    std::vector<int> h(n);
    for (int i = 0; i < n; i++)
        h[i] = i * 3;
    int *d = to_device(h);
    OPS_LAUNCH_COOP(reverse_kernel, 1, 128, 0, 0, d, n);
    CK_CUDA(cudaGetLastError());
    std::vector<int> got = to_host(d, n);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(got[i], h[n - 1 - i]);
    CK_CUDA(cudaFree(d));
}
END_TEST

// ---- warp primitives ----

// Per thread t (block of 64): out[k * 64 + t] for each primitive k.
__global__ void
shuffle_kernel(const float *in, float *out, unsigned *votes)
{
    const int t = threadIdx.x, lane = t % 32;
    const float v = in[t];
    const int nt = blockDim.x;
    out[0 * nt + t] = __shfl_down_sync(0xffffffffu, v, 3);
    out[1 * nt + t] = __shfl_up_sync(0xffffffffu, v, 5, 16);
    out[2 * nt + t] = __shfl_xor_sync(0xffffffffu, v, 6);
    out[3 * nt + t] = __shfl_sync(0xffffffffu, v, 9, 8);
    // A partial mask: only the low half of each warp takes part.
    if (lane < 16)
        out[4 * nt + t] = __shfl_down_sync(0x0000ffffu, v, 2, 16);
    else
        out[4 * nt + t] = -1.0f;
    const unsigned b = __ballot_sync(0xffffffffu, (t % 3) == 0);
    if (lane == 0)
        votes[3 * (t / 32)] = b;
    const int any = __any_sync(0xffffffffu, t == 40);
    const int all = __all_sync(0xffffffffu, t < 32);
    if (lane == 0) {
        votes[3 * (t / 32) + 1] = (unsigned)any;
        votes[3 * (t / 32) + 2] = (unsigned)all;
    }
    // A warp-level tree sum through doubles (64-bit shuffles).
    double s = v;
    for (int off = 16; off > 0; off /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    out[5 * nt + t] = (float)s;
}

START_TEST(test_warp_primitives)
{
    const int nt = 64;
    std::vector<float> h(nt);
    for (int i = 0; i < nt; i++)
        h[i] = (float)(i * i % 97);
    float *in = to_device(h), *out = nullptr;
    unsigned *votes = nullptr;
    CK_CUDA(cudaMalloc(&out, 6 * nt * sizeof(float)));
    CK_CUDA(cudaMalloc(&votes, 6 * sizeof(unsigned)));
    OPS_LAUNCH_COOP(shuffle_kernel, 1, nt, 0, 0, in, out, votes);
    CK_CUDA(cudaGetLastError());
    std::vector<float> got = to_host(out, 6 * nt);
    std::vector<unsigned> v = to_host(votes, 6);
    for (int t = 0; t < nt; t++) {
        const int lane = t % 32, w = t / 32 * 32;
        const int down = lane + 3 < 32 ? t + 3 : t;
        const int up = lane % 16 >= 5 ? t - 5 : t;
        const int x = w + (lane ^ 6);
        const int idx = w + (lane & ~7) + 1; // 9 % 8 within each 8-lane segment
        ck_assert_float_eq(got[0 * nt + t], h[down]);
        ck_assert_float_eq(got[1 * nt + t], h[up]);
        ck_assert_float_eq(got[2 * nt + t], h[x]);
        ck_assert_float_eq(got[3 * nt + t], h[idx]);
        const float partial = lane < 16 ? h[lane + 2 < 16 ? t + 2 : t] : -1.0f;
        ck_assert_float_eq(got[4 * nt + t], partial);
        float sum = 0;
        for (int j = 0; j < 32; j++)
            sum += h[w + j];
        ck_assert_float_eq(got[5 * nt + t], sum);
    }
    for (int warp = 0; warp < 2; warp++) {
        unsigned want = 0;
        for (int l = 0; l < 32; l++)
            want |= ((warp * 32 + l) % 3 == 0 ? 1u : 0u) << l;
        ck_assert_uint_eq(v[3 * warp], want);
        ck_assert_uint_eq(v[3 * warp + 1], warp == 1 ? 1u : 0u);
        ck_assert_uint_eq(v[3 * warp + 2], warp == 0 ? 1u : 0u);
    }
    CK_CUDA(cudaFree(in));
    CK_CUDA(cudaFree(out));
    CK_CUDA(cudaFree(votes));
}
END_TEST

// ---- atomics ----

__global__ void
atomics_kernel(float *fsum, int *imax, unsigned long long *usum, int *cas_winner, int *exch)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(fsum, 0.5f);
    atomicMax(imax, (t * 7919) % 1000);
    atomicAdd(usum, (unsigned long long)t);
    atomicCAS(cas_winner, -1, t);
    atomicExch(exch, t);
}

START_TEST(test_atomics)
{
    float *f = to_device(std::vector<float>{0.0f});
    int *m = to_device(std::vector<int>{-1}), *c = to_device(std::vector<int>{-1}), *e = to_device(std::vector<int>{0});
    unsigned long long *u = to_device(std::vector<unsigned long long>{0});
    OPS_LAUNCH(atomics_kernel, 10, 100, 0, 0, f, m, u, c, e);
    CK_CUDA(cudaGetLastError());
    int want_max = 0;
    for (int t = 0; t < 1000; t++)
        want_max = std::max(want_max, (t * 7919) % 1000);
    ck_assert_float_eq(to_host(f, 1)[0], 500.0f);
    ck_assert_int_eq(to_host(m, 1)[0], want_max);
    ck_assert_uint_eq(to_host(u, 1)[0], 999ull * 1000 / 2);
    ck_assert_int_eq(to_host(c, 1)[0], 0); // blocks and threads run in order
    ck_assert_int_eq(to_host(e, 1)[0], 999);
    CK_CUDA(cudaFree(f));
    CK_CUDA(cudaFree(m));
    CK_CUDA(cudaFree(u));
    CK_CUDA(cudaFree(c));
    CK_CUDA(cudaFree(e));
}
END_TEST

// ---- misuse is fatal, with a message naming the kernel ----

__global__ void
barrier_kernel(int *p)
{
    __syncthreads();
    p[threadIdx.x] = 1;
}

__global__ void
deadlock_kernel(int *p)
{
    // Lane 0 waits for its warp, whose other lanes wait at the block barrier.
    if (threadIdx.x == 0)
        __syncwarp();
    else
        __syncthreads();
    p[threadIdx.x] = 1;
}

START_TEST(test_misuse_is_fatal)
{
    int *d = nullptr;
    CK_CUDA(cudaMalloc(&d, 64 * sizeof(int)));
    int status = 0;
    std::string err = in_child([&] { OPS_LAUNCH(barrier_kernel, 1, 64, 0, 0, d); }, &status);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
    ck_assert_msg(err.find("barrier_kernel") != std::string::npos && err.find("OPS_LAUNCH_COOP") != std::string::npos,
                  "%s", err.c_str());
    err = in_child([&] { OPS_LAUNCH_COOP(deadlock_kernel, 1, 64, 0, 0, d); }, &status);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
    ck_assert_msg(err.find("deadlock_kernel") != std::string::npos && err.find("deadlock") != std::string::npos,
                  "%s", err.c_str());
    // The same kernel under COOP is fine.
    OPS_LAUNCH_COOP(barrier_kernel, 1, 64, 0, 0, d);
    CK_CUDA(cudaGetLastError());
    CK_CUDA(cudaFree(d));
}
END_TEST

START_TEST(test_host_access_to_device_memory_faults)
{
    float *d = to_device(std::vector<float>{1.0f, 2.0f});
    int status = 0;
    volatile float *vp = d;
    (void)in_child([&] { printf("%f\n", (double)vp[1]); }, &status);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %d", status);
    (void)in_child([&] { vp[0] = 3.0f; }, &status);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %d", status);
    ck_assert_float_eq(to_host(d, 2)[1], 2.0f);
    CK_CUDA(cudaFree(d));
}
END_TEST

// ---- launch configuration errors ----

__global__ void
noop_kernel()
{
}

START_TEST(test_launch_errors)
{
    const struct {
        dim3 grid, block;
        size_t shared;
        cudaError_t want;
    } cases[] = {
        {dim3(1), dim3(1025), 0, cudaErrorInvalidConfiguration},
        {dim3(1), dim3(1, 1, 65), 0, cudaErrorInvalidConfiguration},
        {dim3(1), dim3(64, 32), 0, cudaErrorInvalidConfiguration},
        {dim3(0), dim3(32), 0, cudaErrorInvalidConfiguration},
        {dim3(1, 65536), dim3(32), 0, cudaErrorInvalidConfiguration},
        {dim3(1), dim3(32), 48 * 1024 + 1, cudaErrorInvalidValue},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        OPS_LAUNCH(noop_kernel, cases[i].grid, cases[i].block, cases[i].shared, 0);
        ck_assert_int_eq(cudaPeekAtLastError(), cases[i].want); // sticky until read
        ck_assert_int_eq(cudaGetLastError(), cases[i].want);
        ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    }
    // More dynamic shared memory once the kernel opts in, as on sm_90.
    CK_CUDA(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    OPS_LAUNCH(noop_kernel, 1, 32, 100 * 1024, 0);
    CK_CUDA(cudaGetLastError());
    // A template kernel opts in through a cast of one specialization.
    OPS_LAUNCH((fill_kernel<int, 1>), 1, 32, 64 * 1024, 0, nullptr, 0);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidValue);
    CK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void *>(&fill_kernel<int, 1>),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    OPS_LAUNCH((fill_kernel<int, 1>), 1, 32, 64 * 1024, 0, nullptr, 0);
    CK_CUDA(cudaGetLastError());
    ck_assert_int_eq(cudaFuncSetAttribute(noop_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024),
                     cudaErrorInvalidValue);
    (void)cudaGetLastError();
}
END_TEST

// ---- memory: copies, memset, limits ----

START_TEST(test_memcpy_kinds)
{
    std::vector<int> h(100);
    for (int i = 0; i < 100; i++)
        h[i] = i;
    int *a = to_device(h), *b = nullptr, *pinned = nullptr;
    CK_CUDA(cudaMalloc(&b, 100 * sizeof(int)));
    CK_CUDA(cudaMemcpy(b, a, 100 * sizeof(int), cudaMemcpyDeviceToDevice));
    CK_CUDA(cudaMemset(b, 0, 10 * sizeof(int)));
    CK_CUDA(cudaHostAlloc(&pinned, 100 * sizeof(int), cudaHostAllocDefault));
    CK_CUDA(cudaMemcpyAsync(pinned, b, 100 * sizeof(int), cudaMemcpyDefault, 0));
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(pinned[i], i < 10 ? 0 : i);
    // 2D: column 3..5 of a 10x10 row-major matrix into a dense 10x3 one.
    int *c = nullptr;
    CK_CUDA(cudaMalloc(&c, 30 * sizeof(int)));
    CK_CUDA(cudaMemcpy2D(c, 3 * sizeof(int), a + 3, 10 * sizeof(int), 3 * sizeof(int), 10, cudaMemcpyDeviceToDevice));
    std::vector<int> got = to_host(c, 30);
    for (int r = 0; r < 10; r++)
        for (int j = 0; j < 3; j++)
            ck_assert_int_eq(got[r * 3 + j], r * 10 + 3 + j);
    // Wrong kind, out of bounds, bad pitch: errors, nothing copied.
    ck_assert_int_eq(cudaMemcpy(h.data(), a, 4, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(h.data(), a, 101 * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy2D(c, 4, a, 4, 8, 2, cudaMemcpyDeviceToDevice), cudaErrorInvalidPitchValue);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidPitchValue);
    cudaPointerAttributes attr;
    CK_CUDA(cudaPointerGetAttributes(&attr, a + 5));
    ck_assert_int_eq(attr.type, cudaMemoryTypeDevice);
    CK_CUDA(cudaPointerGetAttributes(&attr, pinned + 5));
    ck_assert_int_eq(attr.type, cudaMemoryTypeHost);
    CK_CUDA(cudaPointerGetAttributes(&attr, h.data()));
    ck_assert_int_eq(attr.type, cudaMemoryTypeUnregistered);
    ck_assert_int_eq(cudaFree(a + 1), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    CK_CUDA(cudaFreeHost(pinned));
    CK_CUDA(cudaFree(a));
    CK_CUDA(cudaFree(b));
    CK_CUDA(cudaFree(c));
}
END_TEST

START_TEST(test_out_of_memory_at_limit)
{
    size_t free_b = 0, total = 0;
    CK_CUDA(cudaMemGetInfo(&free_b, &total));
    const char *env = getenv("OPS_EMU_MEM_MB");
    ck_assert_uint_eq(total, (size_t)(env ? atoi(env) : 4096) << 20);
    void *p = nullptr;
    ck_assert_int_eq(cudaMalloc(&p, total + 1), cudaErrorMemoryAllocation);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
    // Quarters fill the device; one byte more fails; freeing one makes room again.
    void *q[4];
    for (int i = 0; i < 4; i++)
        CK_CUDA(cudaMalloc(&q[i], total / 4));
    ck_assert_int_eq(cudaMalloc(&p, 1), cudaErrorMemoryAllocation);
    (void)cudaGetLastError();
    CK_CUDA(cudaFree(q[2]));
    CK_CUDA(cudaMalloc(&p, total / 8));
    CK_CUDA(cudaFree(p));
    for (int i : {0, 1, 3})
        CK_CUDA(cudaFree(q[i]));
    CK_CUDA(cudaMemGetInfo(&free_b, &total));
    ck_assert_uint_eq(free_b, total);
}
END_TEST

START_TEST(test_devices_streams_events)
{
    int n = 0;
    CK_CUDA(cudaGetDeviceCount(&n));
    const char *env = getenv("OPS_EMU_DEVICES");
    ck_assert_int_eq(n, env ? atoi(env) : 1);
    cudaDeviceProp p;
    CK_CUDA(cudaGetDeviceProperties(&p, 0));
    ck_assert_int_eq(p.major, 9);
    ck_assert_int_eq(p.warpSize, 32);
    ck_assert_int_eq(cudaSetDevice(n), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidDevice);
    if (n > 1) {
        // Memory belongs to the device current at cudaMalloc.
        CK_CUDA(cudaSetDevice(1));
        float *d = nullptr;
        CK_CUDA(cudaMalloc(&d, 16));
        cudaPointerAttributes attr;
        CK_CUDA(cudaPointerGetAttributes(&attr, d));
        ck_assert_int_eq(attr.device, 1);
        CK_CUDA(cudaFree(d));
        CK_CUDA(cudaSetDevice(0));
    }
    cudaStream_t s;
    cudaEvent_t a, b, untimed;
    CK_CUDA(cudaStreamCreate(&s));
    CK_CUDA(cudaEventCreate(&a));
    CK_CUDA(cudaEventCreate(&b));
    CK_CUDA(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    CK_CUDA(cudaEventRecord(a, s));
    OPS_LAUNCH(noop_kernel, 4, 32, 0, s);
    CK_CUDA(cudaGetLastError());
    CK_CUDA(cudaEventRecord(b, s));
    CK_CUDA(cudaEventRecord(untimed, s));
    CK_CUDA(cudaEventQuery(b));
    CK_CUDA(cudaEventSynchronize(b));
    CK_CUDA(cudaStreamSynchronize(s));
    float ms = -1;
    CK_CUDA(cudaEventElapsedTime(&ms, a, b));
    ck_assert(ms >= 0);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();
    CK_CUDA(cudaEventDestroy(a));
    CK_CUDA(cudaEventDestroy(b));
    CK_CUDA(cudaEventDestroy(untimed));
    CK_CUDA(cudaStreamDestroy(s));
    ck_assert_int_eq(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();
    ck_assert_str_eq(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
    ck_assert_str_eq(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
}
END_TEST

// ---- cuBLAS against a naive column-major triple loop ----

static double
ref_elem(const std::vector<double> &m, int ld, bool trans, int r, int c)
{
    return trans ? m[(size_t)r * ld + c] : m[(size_t)c * ld + r];
}

// C = alpha op(A) op(B) + beta C on the host, column-major, leading dims as given.
static void
ref_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const std::vector<double> &a, int lda,
         const std::vector<double> &b, int ldb, double beta, std::vector<double> &c, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += ref_elem(a, lda, ta, i, p) * ref_elem(b, ldb, tb, p, j);
            c[(size_t)j * ldc + i] = alpha * s + (beta == 0 ? 0 : beta * c[(size_t)j * ldc + i]);
        }
}

static std::vector<double>
pattern(size_t n, int seed)
{
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((i * 7 + seed * 13) % 17) / 8.0 - 1.0; // exact in half and bfloat16
    return v;
}

START_TEST(test_cublas_gemm)
{
    cublasHandle_t h;
    ck_assert_int_eq(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    const int m = 5, n = 4, k = 3, batch = 3;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            // Padded leading dimensions: the padding must be neither read nor written.
            const int lda = (ta ? k : m) + 2, ldb = (tb ? n : k) + 1, ldc = m + 3;
            const long long sa = (long long)lda * (ta ? m : k) + 1, sb = (long long)ldb * (tb ? k : n),
                            sc = (long long)ldc * n + 2;
            std::vector<double> a = pattern(sa * batch, 1), b = pattern(sb * batch, 2), c0 = pattern(sc * batch, 3);
            const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
            for (double beta : {0.0, 0.5}) {
                std::vector<double> want = c0;
                for (int i = 0; i < batch; i++) {
                    std::vector<double> ai(a.begin() + i * sa, a.end()), bi(b.begin() + i * sb, b.end());
                    std::vector<double> ci(want.begin() + i * sc, want.end());
                    ref_gemm(ta, tb, m, n, k, 1.5, ai, lda, bi, ldb, beta, ci, ldc);
                    std::copy(ci.begin(), ci.begin() + sc, want.begin() + i * sc);
                }
                // float and double, strided batched
                std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(c0.begin(), c0.end());
                if (beta == 0)
                    for (float &x : cf)
                        x = NAN; // beta == 0: C is never read
                float *da = to_device(af), *db = to_device(bf), *dc = to_device(cf);
                const float alf = 1.5f, bef = (float)beta;
                ck_assert_int_eq(cublasSgemmStridedBatched(h, oa, ob, m, n, k, &alf, da, lda, sa, db, ldb, sb, &bef,
                                                           dc, ldc, sc, batch),
                                 CUBLAS_STATUS_SUCCESS);
                std::vector<float> got = to_host(dc, cf.size());
                for (int i = 0; i < batch; i++)
                    for (int j = 0; j < n; j++)
                        for (int r = 0; r < m; r++) {
                            const size_t at = i * sc + (size_t)j * ldc + r;
                            ck_assert_msg(fabs(got[at] - want[at]) < 1e-5, "ta %d tb %d beta %g: %g vs %g", ta, tb,
                                          beta, (double)got[at], want[at]);
                        }
                // The padding row of C is neither read nor written.
                if (beta == 0)
                    ck_assert(std::isnan(got[m]));
                else
                    ck_assert_float_eq(got[m], cf[m]);
                CK_CUDA(cudaFree(da));
                CK_CUDA(cudaFree(db));
                CK_CUDA(cudaFree(dc));
                double *xa = to_device(a), *xb = to_device(b), *xc = to_device(c0);
                const double ald = 1.5;
                ck_assert_int_eq(cublasDgemm(h, oa, ob, m, n, k, &ald, xa, lda, xb, ldb, &beta, xc, ldc),
                                 CUBLAS_STATUS_SUCCESS);
                std::vector<double> gd = to_host(xc, c0.size());
                for (int j = 0; j < n; j++)
                    for (int r = 0; r < m; r++)
                        ck_assert_double_eq_tol(gd[(size_t)j * ldc + r], want[(size_t)j * ldc + r], 1e-12);
                CK_CUDA(cudaFree(xa));
                CK_CUDA(cudaFree(xb));
                CK_CUDA(cudaFree(xc));
                // GemmEx in half and bfloat16 (inputs exact there; results rounded once).
                for (cudaDataType_t t : {CUDA_R_16F, CUDA_R_16BF}) {
                    std::vector<uint16_t> ah(a.size()), bh(b.size()), ch(c0.size());
                    auto enc = [&](double x) {
                        return t == CUDA_R_16F ? ops_float_to_half((float)x).bits
                                               : ops_float_to_bfloat16((float)x).bits;
                    };
                    auto dec = [&](uint16_t u) {
                        return t == CUDA_R_16F ? ops_half_to_float(ops_half{u}) : ops_bfloat16_to_float(ops_bfloat16{u});
                    };
                    for (size_t i = 0; i < a.size(); i++)
                        ah[i] = enc(a[i]);
                    for (size_t i = 0; i < b.size(); i++)
                        bh[i] = enc(b[i]);
                    for (size_t i = 0; i < c0.size(); i++)
                        ch[i] = enc(c0[i]);
                    uint16_t *ha = to_device(ah), *hb = to_device(bh), *hc = to_device(ch);
                    ck_assert_int_eq(cublasGemmStridedBatchedEx(h, oa, ob, m, n, k, &alf, ha, t, lda, sa, hb, t, ldb,
                                                                sb, &bef, hc, t, ldc, sc, batch, CUBLAS_COMPUTE_32F,
                                                                CUBLAS_GEMM_DEFAULT),
                                     CUBLAS_STATUS_SUCCESS);
                    std::vector<uint16_t> gh = to_host(hc, ch.size());
                    for (int i = 0; i < batch; i++)
                        for (int j = 0; j < n; j++)
                            for (int r = 0; r < m; r++) {
                                const size_t at = i * sc + (size_t)j * ldc + r;
                                const double w = dec(enc(want[at]));
                                ck_assert_msg(fabs(dec(gh[at]) - w) <= fabs(w) * 1e-2 + 1e-3, "%g vs %g",
                                              (double)dec(gh[at]), w);
                            }
                    CK_CUDA(cudaFree(ha));
                    CK_CUDA(cudaFree(hb));
                    CK_CUDA(cudaFree(hc));
                }
            }
        }
    // cuBLAS's parameter checks.
    float one = 1, *d = nullptr;
    CK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
    ck_assert_int_eq(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 3, d, 4, &one, d, 4),
                     CUBLAS_STATUS_INVALID_VALUE);
    ck_assert_int_eq(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 2, &one, d, 1, d, 4, &one, d, 4),
                     CUBLAS_STATUS_INVALID_VALUE);
    ck_assert_int_eq(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, d, 4, d, 4, &one, d, 4),
                     CUBLAS_STATUS_INVALID_VALUE);
    ck_assert_int_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d, CUDA_R_64F, 2, d, CUDA_R_32F, 2,
                                  &one, d, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     CUBLAS_STATUS_NOT_SUPPORTED);
    ck_assert_str_eq(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
    CK_CUDA(cudaFree(d));
    ck_assert_int_eq(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}
END_TEST

START_TEST(test_cublas_gemv_dot)
{
    cublasHandle_t h;
    ck_assert_int_eq(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    const int m = 4, n = 3, lda = 6;
    std::vector<double> a = pattern(lda * n, 4), x = pattern(8, 5), y = pattern(8, 6);
    double *da = to_device(a), *dx = to_device(x), *dy = to_device(y);
    const double alpha = 2, beta = 0;
    // y[0:n] = 2 A^T x, x read with stride 2.
    ck_assert_int_eq(cublasDgemv(h, CUBLAS_OP_T, m, n, &alpha, da, lda, dx, 2, &beta, dy, 1), CUBLAS_STATUS_SUCCESS);
    std::vector<double> got = to_host(dy, 8);
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < m; i++)
            s += a[(size_t)j * lda + i] * x[2 * i];
        ck_assert_double_eq_tol(got[j], 2 * s, 1e-12);
    }
    ck_assert_double_eq(got[n], y[n]);
    double r = 0, want = 0;
    ck_assert_int_eq(cublasDdot(h, 4, dx, 2, dx, 2, &r), CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < 4; i++)
        want += x[2 * i] * x[2 * i];
    ck_assert_double_eq_tol(r, want, 1e-12);
    ck_assert_int_eq(cublasDgemv(h, CUBLAS_OP_N, m, n, &alpha, da, 3, dx, 1, &beta, dy, 1),
                     CUBLAS_STATUS_INVALID_VALUE);
    CK_CUDA(cudaFree(da));
    CK_CUDA(cudaFree(dx));
    CK_CUDA(cudaFree(dy));
    ck_assert_int_eq(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
}
END_TEST

int
main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
        return 77;
    Suite *s = suite_create("cuda_emu");
    TCase *tc = tcase_create("emu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_indexing_covers_every_thread_once);
    tcase_add_test(tc, test_template_kernels);
    tcase_add_test(tc, test_block_reduction);
    tcase_add_test(tc, test_exited_threads_leave_barriers);
    tcase_add_test(tc, test_warp_primitives);
    tcase_add_test(tc, test_atomics);
    tcase_add_test(tc, test_misuse_is_fatal);
    tcase_add_test(tc, test_host_access_to_device_memory_faults);
    tcase_add_test(tc, test_launch_errors);
    tcase_add_test(tc, test_memcpy_kinds);
    tcase_add_test(tc, test_out_of_memory_at_limit);
    tcase_add_test(tc, test_devices_streams_events);
    tcase_add_test(tc, test_cublas_gemm);
    tcase_add_test(tc, test_cublas_gemv_dot);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
