/* The registry fuzzer's invariants: snapshots of every tensor argument, the checks
 * after a failed or a successful call, and running one call, in a child process when
 * it is on a huge view (fuzz.h). */
#include "fuzz.h"

/* ---- the invariants ------------------------------------------------------------- */

/* The checks of a returned tensor's geometry; false with the reason in why. */
bool
geometry_ok(const ops_tensor *t, char *why, size_t n)
{
    if (t->ndim < 0 || t->ndim > OPS_MAX_DIMS) {
        snprintf(why, n, "ndim %d", (int)t->ndim);
        return false;
    }
    if ((int)t->dtype < 0 || t->dtype >= OPS_NUM_DTYPES) {
        snprintf(why, n, "dtype %d", (int)t->dtype);
        return false;
    }
    if (t->storage == NULL) {
        snprintf(why, n, "no storage");
        return false;
    }
    int64_t numel = 1;
    bool empty = false;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] < 0) {
            snprintf(why, n, "size %" PRId64 " at dim %d", t->sizes[d], d);
            return false;
        }
        empty |= t->sizes[d] == 0;
    }
    for (int d = 0; d < t->ndim && !empty; d++) {
        if (__builtin_mul_overflow(numel, t->sizes[d], &numel)) {
            snprintf(why, n, "numel overflows int64");
            return false;
        }
    }
    if (empty)
        numel = 0;
    if (ops_tensor_numel(t) != numel) {
        snprintf(why, n, "numel() %" PRId64 " but the sizes make %" PRId64, ops_tensor_numel(t), numel);
        return false;
    }
    if (numel == 0)
        return true;
    int64_t lo = t->offset, hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int64_t span;
        if (__builtin_mul_overflow(t->sizes[d] - 1, t->strides[d], &span) ||
            __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) {
            snprintf(why, n, "extent overflows int64");
            return false;
        }
    }
    const int64_t item = (int64_t)ops_dtype_size(t->dtype);
    int64_t end;
    if (lo < 0 || __builtin_add_overflow(hi, 1, &end) || __builtin_mul_overflow(end, item, &end) ||
        (uint64_t)end > (uint64_t)t->storage->nbytes) {
        snprintf(why, n, "elements [%" PRId64 ", %" PRId64 "] outside the storage's %zu bytes", lo, hi,
                 t->storage->nbytes);
        return false;
    }
    if (t->storage->data == NULL) {
        snprintf(why, n, "NULL data with %" PRId64 " elements", numel);
        return false;
    }
    return true;
}

/* What a tensor argument was before the call. */
typedef struct snap {
    const ops_tensor *t;
    ops_tensor copy;        /* the header's fields (sizes, strides, offset, dtype) */
    ops_storage *storage;   /* the storage it viewed */
    void *data;
    size_t nbytes;
    unsigned char *bytes;   /* the storage's bytes (shared between snaps of one storage) */
    bool owns_bytes;
    bool written;           /* a Tensor(a!) argument */
} snap;

typedef struct snapshot {
    snap s[MAX_ARGS * MAX_LIST + MAX_ARGS];
    int n;
} snapshot;

static void
snap_add(snapshot *ss, const ops_tensor *t, bool written)
{
    if (t == NULL || ss->n == (int)(sizeof ss->s / sizeof ss->s[0]))
        return;
    snap *s = &ss->s[ss->n++];
    memset(s, 0, sizeof *s);
    s->t = t;
    s->copy = *t;
    s->storage = t->storage;
    s->data = t->storage->data;
    s->nbytes = t->storage->nbytes;
    s->written = written;
    for (int k = 0; k < ss->n - 1; k++)
        if (ss->s[k].storage == t->storage) {
            s->bytes = ss->s[k].bytes;
            return;
        }
    s->bytes = malloc(s->nbytes ? s->nbytes : 1);
    if (s->bytes == NULL) {
        fprintf(stderr, "fuzz_registry: out of memory for a snapshot\n");
        exit(1);
    }
    s->owns_bytes = true;
    if (s->nbytes)
        memcpy(s->bytes, s->data, s->nbytes);
}

static void
snapshot_take(snapshot *ss, const call *c)
{
    ss->n = 0;
    for (int i = 0; i < c->op->num_args; i++) {
        /* batch_norm's running statistics are updated in training mode though the
         * schema, as PyTorch's, does not mark them Tensor(a!). */
        const char *name = c->op->args[i].name;
        const bool written = strchr(c->op->args[i].type, '!') != NULL || !strcmp(name, "running_mean") ||
                             !strcmp(name, "running_var");
        const ops_ivalue *v = &c->args[i];
        if (v->tag == OPS_IVALUE_TENSOR)
            snap_add(ss, v->v.tensor, written);
        else if (v->tag == OPS_IVALUE_TENSOR_LIST)
            for (int64_t k = 0; k < v->v.tensor_list.len; k++)
                snap_add(ss, v->v.tensor_list.data[k], written);
    }
}

static void
snapshot_free(snapshot *ss)
{
    for (int k = 0; k < ss->n; k++)
        if (ss->s[k].owns_bytes)
            free(ss->s[k].bytes);
    ss->n = 0;
}

/* Is s's tensor unchanged?  why says what changed. */
static bool
snap_same(const snap *s, char *why, size_t n)
{
    const ops_tensor *t = s->t;
    if (t->ndim != s->copy.ndim || t->dtype != s->copy.dtype || t->offset != s->copy.offset ||
        memcmp(t->sizes, s->copy.sizes, sizeof t->sizes[0] * (size_t)t->ndim) != 0 ||
        memcmp(t->strides, s->copy.strides, sizeof t->strides[0] * (size_t)t->ndim) != 0) {
        snprintf(why, n, "its geometry changed");
        return false;
    }
    if (t->storage != s->storage || t->storage->data != s->data || t->storage->nbytes != s->nbytes) {
        snprintf(why, n, "its storage changed (%zu -> %zu bytes)", s->nbytes, t->storage->nbytes);
        return false;
    }
    if (s->nbytes && memcmp(s->data, s->bytes, s->nbytes) != 0) {
        size_t k = 0;
        while (((const unsigned char *)s->data)[k] == s->bytes[k])
            k++;
        snprintf(why, n, "its storage's byte %zu changed (0x%02x -> 0x%02x)", k, s->bytes[k],
                 ((const unsigned char *)s->data)[k]);
        return false;
    }
    return true;
}

static void
violation(const call *c, const char *fmt, ...) OPS_PRINTF(2, 3);

static void
violation(const call *c, const char *fmt, ...)
{
    (void)c;
    stats.violations++;
    if (stats.violations > 200)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_registry: FAIL at iteration %" PRId64 ": ", c->iter);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    write_desc();
}

/* The op's name as its messages start: "add_" and "add.out" fail as "add". */
static void
op_base_name(const ops_op_info *op, char *buf, size_t n)
{
    snprintf(buf, n, "%s", op->name);
    size_t len = strlen(buf);
    if (len > 1 && buf[len - 1] == '_')
        buf[len - 1] = '\0';
}

static bool
shares_storage_with_written(const snapshot *ss, const snap *s)
{
    for (int k = 0; k < ss->n; k++)
        if (ss->s[k].written && ss->s[k].storage == s->storage)
            return true;
    return false;
}

static void
check_ret_tensor(const call *c, const ops_tensor *t, int i, int64_t k)
{
    char why[256];
    if (t == NULL) {
        violation(c, "return %d[%" PRId64 "] is a NULL tensor after success", i, k);
        return;
    }
    if (!geometry_ok(t, why, sizeof why))
        violation(c, "return %d[%" PRId64 "] has an invalid geometry: %s", i, k, why);
}

/* Checks one finished call; returns true when it succeeded. */
static bool
check_call(call *c, const snapshot *ss, ops_status st)
{
    char why[256];
    const ops_op_info *op = c->op;
    if (st != OPS_OK) {
        char base[128];
        op_base_name(op, base, sizeof base);
        const char *msg = ops_last_error();
        if (msg == NULL || msg[0] == '\0')
            violation(c, "failed (%s) without an error message", ops_status_str(st));
        else if (strstr(msg, base) == NULL)
            violation(c, "failed with a message that does not name the op '%s': %s", base, msg);
        for (int i = 0; i < op->num_returns; i++)
            if (c->rets[i].tag != OPS_IVALUE_NONE)
                violation(c, "failed but return %d is not None", i);
        for (int k = 0; k < ss->n; k++)
            if (!snap_same(&ss->s[k], why, sizeof why))
                violation(c, "failed (%s: %s) but changed an argument: %s", ops_status_str(st), msg, why);
        return false;
    }
    for (int k = 0; k < ss->n; k++)
        if (!ss->s[k].written && !shares_storage_with_written(ss, &ss->s[k]) && !snap_same(&ss->s[k], why, sizeof why))
            violation(c, "succeeded but changed a read-only argument: %s", why);
    for (int i = 0; i < op->num_returns; i++) {
        const ops_ivalue *v = &c->rets[i];
        if (v->tag == OPS_IVALUE_TENSOR)
            check_ret_tensor(c, v->v.tensor, i, 0);
        else if (v->tag == OPS_IVALUE_TENSOR_LIST)
            for (int64_t k = 0; k < v->v.tensor_list.len; k++)
                check_ret_tensor(c, v->v.tensor_list.data[k], i, k);
    }
    /* In-place and out= ops return the tensor they wrote. */
    if (op->kind == OPS_KIND_INPLACE && op->num_returns >= 1 && c->rets[0].tag == OPS_IVALUE_TENSOR &&
        c->args[0].tag == OPS_IVALUE_TENSOR && c->rets[0].v.tensor != c->args[0].v.tensor)
        violation(c, "in-place op returned another tensor than self");
    if (op->kind == OPS_KIND_OUT) {
        int r = 0;
        for (int i = 0; i < op->num_args && r < op->num_returns; i++) {
            if (!op->args[i].is_out)
                continue;
            if (c->rets[r].tag == OPS_IVALUE_TENSOR && c->args[i].tag == OPS_IVALUE_TENSOR &&
                c->rets[r].v.tensor != c->args[i].v.tensor)
                violation(c, "out= op returned another tensor than its out argument %s", op->args[i].name);
            r++;
        }
    }
    return true;
}

static void
release_rets(call *c)
{
    for (int i = 0; i < c->op->num_returns; i++)
        ops_ivalue_release(&c->rets[i]);
}

/* Calls the op and checks it; in a child process when an argument is huge, so that
 * a valid call that has to visit 2^40 elements is stopped after cfg.timeout_s. */
void
run_call(call *c)
{
    snapshot *ss = calloc(1, sizeof *ss);
    if (ss == NULL)
        exit(1);
    describe_call(c);
    if (cfg.verbose) {
        fputs(desc, stderr);
        fflush(stderr);
    }
    stats.calls++;
    stats.op_calls[c->op - ops_registry_at(0)]++;
    if (c->huge) {
        stats.forked++;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGALRM, SIG_DFL);
            alarm((unsigned)cfg.timeout_s);
            snapshot_take(ss, c);
            ops_clear_error();
            ops_status st = c->op->call(c->args, c->rets);
            int64_t before = stats.violations;
            check_call(c, ss, st);
            _exit(stats.violations != before ? 1 : st == OPS_OK ? 0 : 3);
        }
        int status = 0;
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (pid < 0) {
            perror("fuzz_registry: fork");
            exit(1);
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
            stats.timeouts++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            stats.ok++;
            stats.op_ok[c->op - ops_registry_at(0)]++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
            stats.failed++;
        } else {
            violation(c, "the call on a huge view died (%s %d)", WIFSIGNALED(status) ? "signal" : "exit status",
                      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
        free(ss);
        return;
    }
    snapshot_take(ss, c);
    ops_clear_error();
    alarm(60); /* a small call that runs a minute is a hang */
    ops_status st = c->op->call(c->args, c->rets);
    alarm(0);
    if (check_call(c, ss, st)) {
        stats.ok++;
        stats.op_ok[c->op - ops_registry_at(0)]++;
    } else {
        stats.failed++;
    }
    release_rets(c);
    snapshot_free(ss);
    free(ss);
}

/* One fuzzed call of op, its choices drawn from r. */
void
fuzz_one(const ops_op_info *op, rng *r, int64_t iter)
{
    call *c = calloc(1, sizeof *c);
    if (c == NULL)
        exit(1);
    c->op = op;
    c->iter = iter;
    c->dtype = chance(r, 50) ? OPS_FLOAT32 : draw_dtype(r);
    c->nd = chance(r, 10) ? 0 : 1 + (int)below(r, 3);
    for (int d = 0; d < c->nd; d++)
        c->sizes[d] = chance(r, 8) ? 0 : 1 + (int64_t)below(r, 4);
    ops_manual_seed(below(r, 1u << 20));
    if (op->num_args > MAX_ARGS) {
        fprintf(stderr, "fuzz_registry: %s has %d arguments, more than %d\n", op->name, op->num_args, MAX_ARGS);
        exit(1);
    }
    for (int i = 0; i < op->num_args; i++)
        draw_arg(c, r, i);
    run_call(c);
    call_free(c);
    free(c);
}
