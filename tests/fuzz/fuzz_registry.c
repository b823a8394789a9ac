/* fuzz_registry: every op of the boxed registry called with arguments drawn from its
 * schema's types, as a hostile-but-fair C or Python caller could pass them: shapes
 * that are empty, 0-dim, non-contiguous, broadcast (zero strides) or huge zero-stride
 * views; negative and overflowing sizes and indices; wrong dtypes and devices;
 * out= tensors that alias an input; NULL tensors and None for required arguments.
 *
 * Per call it checks what the library promises (docs/fuzzing.md):
 *   - no crash and no sanitizer report (the test runs in the ASan+UBSan tree);
 *   - a failed call sets an error message that names the op, returns no values, and
 *     leaves every tensor argument (out= included) as it was: same geometry, same
 *     bytes in the whole of its storage;
 *   - a successful call leaves its read-only tensor arguments as they were (when no
 *     written argument shares their storage), returns the tensor it wrote for an
 *     in-place or out= op, and returns tensors with a valid geometry (sizes >= 0,
 *     numel the product of the sizes and within int64, every element inside the
 *     storage's bytes).
 *
 * Two drivers share the generator.  The default one is seeded: iteration i draws
 * from a generator seeded with hash(OPS_FUZZ_SEED, i), so any single call can be
 * replayed alone (the failure report prints the command).  Built with clang and
 * -DOPS_FUZZ_LIBFUZZER, libFuzzer's input bytes drive the same choices instead.
 *
 * Environment: OPS_FUZZ_SEED (default 1), OPS_FUZZ_ITERS (default 20000; 0 runs
 * until stopped), OPS_FUZZ_START (first iteration, default 0), OPS_FUZZ_OP (only the
 * ops of this name, e.g. "add" or "add.out"), OPS_FUZZ_HUGE (1, default: huge
 * zero-stride views and sizes/indices near the int64 limits; 0: none of them),
 * OPS_FUZZ_SKIP (ops to leave out, comma-separated names or name.overloads),
 * OPS_FUZZ_TIMEOUT (seconds a call on a huge view may run, default 2),
 * OPS_FUZZ_VERBOSE (1: print every call). */
#include "fuzz.h"
#include "ops_op_empty.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

#ifdef FUZZ_ASAN
#include <sanitizer/common_interface_defs.h>

/* Allocations over 256 MiB fail (NULL, which the library reports as OOM) instead of
 * aborting the process: the fuzzer asks for absurd sizes on purpose.  ASAN_OPTIONS
 * given in the environment still take precedence. */
const char *__asan_default_options(void);
/* Exported: the project builds with -fvisibility=hidden, and ASan looks it up. */
__attribute__((visibility("default"), used)) const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=256";
}
#endif

#if defined(FUZZ_ASAN) || defined(__SANITIZE_UNDEFINED__)
/* UBSan ends the process with _exit, past ASan's death callback: abort() instead, so
 * that the SIGABRT handler prints the call at fault; and print the stack. */
const char *__ubsan_default_options(void);
__attribute__((visibility("default"), used)) const char *
__ubsan_default_options(void)
{
    return "print_stacktrace=1:abort_on_error=1";
}
#endif

/* The CPU allocator maps large blocks itself (runtime/alloc/alloc.c), past malloc and
 * ASan's limit: a drawn size of 2^31 elements would be mapped, filled and kept
 * resident.  This mmap, found before libc's, refuses mappings over the same limit
 * (the library reports OOM), and passes the others to the kernel.  A PROT_NONE
 * mapping only reserves address space (the emulated CUDA device reserves its memory
 * so, then commits what it hands out, within its own limit): it passes. */
#define FUZZ_MAX_MAP ((size_t)256 << 20)

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (len > FUZZ_MAX_MAP && prot != PROT_NONE) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* ---- settings ----------------------------------------------------------------- */

fuzz_config cfg = {1, 20000, 0, NULL, NULL, true, 2, false, "fuzz_registry"};
fuzz_stats stats;

int nops;
const ops_op_info **ops_sel; /* the ops this run draws from */
int nsel;

/* ---- replay cases ---------------------------------------------------------------- */

/* Calls the fuzzer found wrong, fixed since, built by hand and run through the same
 * checks at the start of every run (their iteration number is -1). */

static call *
replay_begin(const char *name, const char *overload)
{
    const ops_op_info *op = ops_registry_find(name, overload);
    if (op == NULL) {
        fprintf(stderr, "fuzz_registry: replay case for %s%s%s: no such op\n", name, overload ? "." : "",
                overload ? overload : "");
        exit(1);
    }
    call *c = calloc(1, sizeof *c);
    if (c == NULL)
        exit(1);
    c->op = op;
    c->iter = -1;
    return c;
}

/* A tensor of the given sizes and dtype holding 0, 1, 2, ... */
static ops_tensor *
replay_tensor_of(call *c, ops_int_list sizes, ops_dtype dt)
{
    ops_tensor *t = own(c, ops_empty(sizes, dt, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE));
    if (t == NULL) {
        fprintf(stderr, "fuzz_registry: replay: %s\n", ops_last_error());
        exit(1);
    }
    for (int64_t i = 0; i < ops_tensor_numel(t); i++)
        store_value((char *)ops_tensor_data_ptr(t) + (size_t)i * ops_dtype_size(dt), dt, (double)i, i,
                    !ops_dtype_is_floating(dt));
    return t;
}

static ops_tensor *
replay_tensor(call *c, ops_int_list sizes)
{
    return replay_tensor_of(c, sizes, OPS_FLOAT32);
}

static void
replay_run(call *c)
{
    run_call(c);
    call_free(c);
    free(c);
}

static void
replay_cases(void)
{
    call *c;
    /* Composite ops failing inside another op named that op only ("empty_strided: no
     * kernel for device cuda:7" from ones_like, "repeat: ..." from tile): the boxed
     * call now puts the called op's name in front. */
    c = replay_begin("ones_like", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(2)));
    c->args[1] = ops_ivalue_none();
    c->args[2] = ops_ivalue_device(OPS_DEVICE_CUDA(7));
    replay_run(c);
    c = replay_begin("tile", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(2, 4)));
    c->args[1] = ops_ivalue_int_list(OPS_INTS(-2, 2));
    replay_run(c);
    /* nll_loss took a 1-D input with a 1-D target of as many entries, then computed
     * one target position and copied as many as the target has (heap-buffer-overflow
     * in loss_from_buffer; with both empty, a read of target[0] in cls_nll). */
    for (int64_t n = 0; n <= 4; n += 4) {
        for (int form = 0; form < 2; form++) {
            c = replay_begin("nll_loss", form ? "out" : NULL);
            c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(n)));
            c->args[1] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(n), OPS_INT64));
            c->args[2] = ops_ivalue_none();
            c->args[3] = ops_ivalue_int(0); /* reduction none */
            c->args[4] = ops_ivalue_int(-100);
            if (form)
                c->args[5] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(n)));
            replay_run(c);
        }
    }
    /* roll of a 0-dim tensor with dims given read sizes[0] of a tensor without dims
     * (UBSan: pointer overflow in the copy of its narrowed views). */
    c = replay_begin("roll", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
    c->args[1] = ops_ivalue_int_list(OPS_INTS(6, 0));
    c->args[2] = ops_ivalue_int_list(OPS_INTS(0, -1));
    replay_run(c);
    /* index_add / index_copy of a 0-dim self took any source whose size at dim matched
     * the index count, and read one element of an empty [1, 5, 0] source. */
    for (int form = 0; form < 3; form++) {
        c = replay_begin(form == 2 ? "index_copy" : "index_add", form == 1 ? "out" : NULL);
        c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
        c->args[1] = ops_ivalue_int(-1);
        c->args[2] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_INT64));
        c->args[3] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(1, 5, 0)));
        if (form < 2)
            c->args[4] = ops_ivalue_scalar(OPS_SCALAR_INT(1));
        if (form == 1)
            c->args[5] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS()));
        replay_run(c);
    }
    /* upsample with scales 1e-310: 1 / scales is inf, and the source index computed
     * from it was converted to int64 unclamped (INT64_MIN: a read far before the input). */
    for (int form = 0; form < 2; form++) {
        c = replay_begin(form ? "upsample_nearest1d" : "upsample_linear1d", NULL);
        c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(3, 1, 1)));
        c->args[1] = ops_ivalue_int_list(OPS_INTS(5));
        if (form) {
            c->args[2] = ops_ivalue_double(1e-310);
        } else {
            c->args[2] = ops_ivalue_bool(false);
            c->args[3] = ops_ivalue_double(1e-310);
        }
        replay_run(c);
    }
    /* histc with min=-1e300 on float32: the edge is -inf in float32, and the bin of
     * every value was (inf / inf) converted to int64 (clang's UBSan: float-cast-overflow). */
    c = replay_begin("histc", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor(c, OPS_INTS(3)));
    c->args[1] = ops_ivalue_int(6);
    c->args[2] = ops_ivalue_scalar(OPS_SCALAR_FLOAT(-1e300));
    c->args[3] = ops_ivalue_scalar(OPS_SCALAR_BOOL(false));
    replay_run(c);
    /* addcmul_ of uint8 with value=-2.0 converted the float straight to uint8
     * (undefined below 0; clang's UBSan float-cast-overflow, found by libFuzzer). */
    c = replay_begin("addcmul_", NULL);
    c->args[0] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(3), OPS_UINT8));
    c->args[1] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_UINT8));
    c->args[2] = ops_ivalue_tensor(replay_tensor_of(c, OPS_INTS(), OPS_UINT8));
    c->args[3] = ops_ivalue_scalar(OPS_SCALAR_FLOAT(-2.0));
    replay_run(c);
}

/* ---- drivers ------------------------------------------------------------------- */

/* Is op (by name or name.overload) in the comma-separated list? */
static bool
in_list(const char *list, const ops_op_info *op)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if ((len == strlen(op->name) && !strncmp(p, op->name, len)) || (len == strlen(full) && !strncmp(p, full, len)))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void
setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    const char *e;
    if ((e = getenv("OPS_FUZZ_SEED")) != NULL)
        cfg.seed = strtoull(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_ITERS")) != NULL)
        cfg.iters = strtoll(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_START")) != NULL)
        cfg.start = strtoll(e, NULL, 0);
    if ((e = getenv("OPS_FUZZ_OP")) != NULL && e[0])
        cfg.only_op = e;
    if ((e = getenv("OPS_FUZZ_SKIP")) != NULL && e[0])
        cfg.skip_ops = e;
    if ((e = getenv("OPS_FUZZ_HUGE")) != NULL)
        cfg.huge = atoi(e) != 0;
    if ((e = getenv("OPS_FUZZ_TIMEOUT")) != NULL && atoi(e) > 0)
        cfg.timeout_s = atoi(e);
    if ((e = getenv("OPS_FUZZ_VERBOSE")) != NULL)
        cfg.verbose = atoi(e) != 0;
    /* One thread: the machine is shared, and a forked child needs no OpenMP pool. */
    ops_set_num_threads(1);
#ifdef FUZZ_ASAN
    __sanitizer_set_death_callback(print_desc);
#else
    /* Without ASan's allocator limit, cap the address space so that a drawn size
     * of a few GiB fails as OOM instead of being allocated and filled. */
    struct rlimit rl = {(rlim_t)8 << 30, (rlim_t)8 << 30};
    setrlimit(RLIMIT_AS, &rl);
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
#endif
    signal(SIGABRT, crash_handler);
    signal(SIGALRM, crash_handler);
    nops = ops_registry_count();
    stats.op_calls = calloc((size_t)nops, sizeof *stats.op_calls);
    stats.op_ok = calloc((size_t)nops, sizeof *stats.op_ok);
    ops_sel = calloc((size_t)nops, sizeof *ops_sel);
    if (stats.op_calls == NULL || stats.op_ok == NULL || ops_sel == NULL)
        exit(1);
    for (int i = 0; i < nops; i++) {
        const ops_op_info *op = ops_registry_at(i);
        if (cfg.only_op != NULL) {
            char full[256];
            snprintf(full, sizeof full, "%s%s%s", op->name, op->overload[0] ? "." : "", op->overload);
            if (strcmp(cfg.only_op, op->name) != 0 && strcmp(cfg.only_op, full) != 0)
                continue;
        }
        if (cfg.skip_ops != NULL && in_list(cfg.skip_ops, op))
            continue;
        ops_sel[nsel++] = op;
    }
    if (nsel == 0) {
        fprintf(stderr, "fuzz_registry: no op named %s\n", cfg.only_op);
        exit(1);
    }
}

static int
report(void)
{
    int covered = 0, succeeded = 0;
    for (int i = 0; i < nops; i++) {
        covered += stats.op_calls[i] > 0;
        succeeded += stats.op_ok[i] > 0;
    }
    printf("fuzz_registry: seed %" PRIu64 ", huge views %s: %" PRId64 " calls (%" PRId64 " succeeded, %" PRId64
           " failed cleanly; %" PRId64 " on huge views in a child, %" PRId64 " of them stopped after %d s), %d of %d ops "
           "called, %d with a successful call; %" PRId64 " violations\n",
           cfg.seed, cfg.huge ? "on" : "off", stats.calls, stats.ok, stats.failed, stats.forked, stats.timeouts,
           cfg.timeout_s, covered, nops, succeeded, stats.violations);
    if (getenv("OPS_FUZZ_LIST_UNREACHED") != NULL)
        for (int i = 0; i < nops; i++)
            if (stats.op_ok[i] == 0)
                printf("  never succeeded: %s%s%s\n", ops_registry_at(i)->name, ops_registry_at(i)->overload[0] ? "." : "",
                       ops_registry_at(i)->overload);
    return stats.violations == 0 ? 0 : 1;
}

#ifdef OPS_FUZZ_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: two bytes pick the op, the rest drive the choices. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    static bool replayed;
    if (!replayed) {
        replayed = true;
        if (cfg.only_op == NULL)
            replay_cases();
    }
    if (size < 2)
        return 0;
    rng r = {0, data + 2, size - 2, 0};
    for (size_t k = 0; k < size; k++)
        r.state = r.state * 131 + data[k];
    const ops_op_info *op = ops_sel[((size_t)data[0] << 8 | data[1]) % (size_t)nsel];
    static int64_t iter;
    fuzz_one(op, &r, iter++);
    if (stats.violations > 0) {
        report();
        abort();
    }
    return 0;
}

#else

int
main(int argc, char **argv)
{
    (void)argc;
    cfg.argv0 = argv[0];
    setup();
    if (cfg.only_op == NULL)
        replay_cases();
    /* Iteration i calls the op at order[i % nsel] of a seeded shuffle, so every op is
     * called once per nsel iterations. */
    int *order = malloc((size_t)nsel * sizeof *order);
    if (order == NULL)
        return 1;
    uint64_t s = cfg.seed;
    for (int i = 0; i < nsel; i++)
        order[i] = i;
    for (int i = nsel - 1; i > 0; i--) {
        int j = (int)(splitmix(&s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int64_t it = cfg.start; cfg.iters == 0 || it < cfg.start + cfg.iters; it++) {
        uint64_t st = cfg.seed ^ ((uint64_t)it * 0xD1342543DE82EF95ull);
        rng r = {splitmix(&st), NULL, 0, 0};
        fuzz_one(ops_sel[order[it % nsel]], &r, it);
        if (cfg.iters == 0 && it % 100000 == 0 && it > cfg.start)
            report();
    }
    free(order);
    int rc = report();
    free(stats.op_calls);
    free(stats.op_ok);
    free(ops_sel);
    return rc;
}

#endif
