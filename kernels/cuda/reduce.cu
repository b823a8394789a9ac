// Reductions on CUDA devices: sum, nansum, mean, nanmean, prod, amax, amin, aminmax,
// max/min (whole tensor and .dim with indices), argmax, argmin, all, any, var, std,
// var_mean, std_mean, logsumexp, norm, frobenius_norm, linalg_vector_norm.
//
// The entry points (end of file) call the device-generic drivers of
// kernels/cpu/reduce.c, so dims, dtype rules, errors and out= are the CPU's code;
// those call ops_cuda_reduce_run here for the element loops, which use the launcher of
// ops_cuda_reduce.cuh with the CPU's accumulation types and rules:
//  - floating sums in opmath (float for float16/bfloat16/float32, double for
//    float64); integer and bool sums and products wrap in uint64_t as int64 does;
//  - amax/amin/aminmax propagate NaN (ops_red_max_nan/min_nan, shared with the CPU);
//  - argmax/argmin/max.dim/min.dim report the first NaN, else the first extreme;
//  - var/std: the mean, then the squared deviations from it, both in double;
//  - logsumexp: the maximum (ops_red_lse_shift), then the sum of exp(x - m);
//  - norms as reduce.c's red_norm: order 0 counts, +-inf take max/min |x|, 1 and 2
//    sum |x| and x*x, others |x|^p; one reduced element gives |x| exactly.
// Only the order of the additions differs from the CPU (a tree instead of pairwise
// blocks), so floating results agree within rounding and integer ones exactly.
#include "ops_cuda_reduce.cuh"
#include "ops_kernels_reduce.h"

template <typename T> using red_opmath_t = typename ops_opmath<T>::type;

// Stores an accumulated value v into *p: floating types round from opmath, integer
// types take the low bits of the int64 value (as the CPU's (T)(int64_t)acc).
template <typename T, typename V>
__device__ inline void
red_store(T *p, V v)
{
    if constexpr (red_is_floating<T>::value)
        ops_store(p, (red_opmath_t<T>)v);
    else
        *p = (T)(int64_t)v;
}

// ---- sums and products -------------------------------------------------------------------

template <typename T> struct red_sum_acc {
    typedef typename std::conditional<red_is_floating<T>::value, red_opmath_t<T>, uint64_t>::type type;
};

// sum, nansum (SKIP_NAN), mean (divide by nred at the end).
template <typename T, bool SKIP_NAN> struct red_sum_op {
    typedef typename red_sum_acc<T>::type acc_t;
    T *out;
    int64_t nred;
    bool mean;
    __device__ acc_t identity() const { return 0; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const
    {
        if constexpr (red_is_floating<T>::value)
            return SKIP_NAN && x != x ? acc_t(0) : acc_t(x);
        else
            return (acc_t)(int64_t)x;
    }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
    __device__ void finish(int64_t o, acc_t a) const
    {
        if constexpr (red_is_floating<T>::value) {
            if (mean)
                a = a / (acc_t)nred;
        }
        red_store(&out[o], a);
    }
};

template <typename T> struct red_prod_op {
    typedef typename red_sum_acc<T>::type acc_t;
    T *out;
    __device__ acc_t identity() const { return 1; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const
    {
        if constexpr (red_is_floating<T>::value)
            return acc_t(x);
        else
            return (acc_t)(int64_t)x;
    }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a * b; }
    __device__ void finish(int64_t o, acc_t a) const { red_store(&out[o], a); }
};

// nanmean: the sum and the count of the elements that are not NaN.
template <typename A> struct red_sum_count {
    A s;
    int64_t n;
};

template <typename T> struct red_nanmean_op {
    typedef red_opmath_t<T> V;
    typedef red_sum_count<V> acc_t;
    T *out;
    __device__ acc_t identity() const { return {V(0), 0}; }
    __device__ acc_t project(V x, int64_t, int64_t) const { return x == x ? acc_t{x, 1} : acc_t{V(0), 0}; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return {a.s + b.s, a.n + b.n}; }
    __device__ void finish(int64_t o, acc_t a) const { ops_store(&out[o], a.s / (V)a.n); } // none: NaN
};

// ---- extremes -----------------------------------------------------------------------------

// The value an extreme is tracked in: opmath for floating types, T itself otherwise.
template <typename T> struct red_ext_val {
    typedef typename std::conditional<red_is_floating<T>::value, red_opmath_t<T>, T>::type type;
};

template <typename T, bool MAX> __device__ inline typename red_ext_val<T>::type
red_ext_identity()
{
    typedef typename red_ext_val<T>::type V;
    if constexpr (red_is_floating<T>::value)
        return MAX ? V(-INFINITY) : V(INFINITY);
    else
        return MAX ? red_int_limits<T>::lowest : red_int_limits<T>::highest;
}

template <typename T, bool MAX> __device__ inline typename red_ext_val<T>::type
red_ext_combine(typename red_ext_val<T>::type a, typename red_ext_val<T>::type b)
{
    if constexpr (red_is_floating<T>::value)
        return MAX ? ops_red_max_nan(a, b) : ops_red_min_nan(a, b);
    else
        return MAX ? (b > a ? b : a) : (b < a ? b : a);
}

// amax, amin (and max(), min()): NaN propagates.
template <typename T, bool MAX> struct red_ext_op {
    typedef typename red_ext_val<T>::type acc_t;
    T *out;
    __device__ acc_t identity() const { return red_ext_identity<T, MAX>(); }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const { return (acc_t)x; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return red_ext_combine<T, MAX>(a, b); }
    __device__ void finish(int64_t o, acc_t a) const { ops_store(&out[o], a); }
};

template <typename V> struct red_lohi {
    V lo, hi;
};

// aminmax: the minima into out, the maxima into out2.
template <typename T> struct red_aminmax_op {
    typedef typename red_ext_val<T>::type V;
    typedef red_lohi<V> acc_t;
    T *out, *out2;
    __device__ acc_t identity() const { return {red_ext_identity<T, false>(), red_ext_identity<T, true>()}; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const { return {(V)x, (V)x}; }
    __device__ acc_t combine(acc_t a, acc_t b) const
    {
        return {red_ext_combine<T, false>(a.lo, b.lo), red_ext_combine<T, true>(a.hi, b.hi)};
    }
    __device__ void finish(int64_t o, acc_t a) const
    {
        ops_store(&out[o], a.lo);
        ops_store(&out2[o], a.hi);
    }
};

template <typename V> struct red_val_idx {
    V v;
    int64_t i; // -1: no element yet
};

// argmax/argmin (indices into idx) and max.dim/min.dim (values into vals too).  The
// CPU scans in order and keeps the first NaN, else the first extreme; as an
// order-free rule: a NaN beats a number, a larger (smaller) value beats a smaller
// one, and between equals the lower position wins.
template <typename T, bool MAX> struct red_arg_op {
    typedef typename red_ext_val<T>::type V;
    typedef red_val_idx<V> acc_t;
    T *vals; // NULL for argmax/argmin
    int64_t *idx;
    __device__ acc_t identity() const { return {V(0), -1}; }
    template <typename X> __device__ acc_t project(X x, int64_t r, int64_t) const { return {(V)x, r}; }
    __device__ acc_t combine(acc_t a, acc_t b) const
    {
        if (a.i < 0)
            return b;
        if (b.i < 0)
            return a;
        const bool an = a.v != a.v, bn = b.v != b.v;
        if (an || bn)
            return an && bn ? (b.i < a.i ? b : a) : (an ? a : b);
        if (MAX ? b.v > a.v : b.v < a.v)
            return b;
        return b.v == a.v && b.i < a.i ? b : a;
    }
    __device__ void finish(int64_t o, acc_t a) const
    {
        if (vals != nullptr)
            ops_store(&vals[o], a.v);
        idx[o] = a.i;
    }
};

// all/any into a bool or uint8 result (one byte holding 0 or 1 either way).
template <typename T, bool ALL> struct red_truth_op {
    typedef bool acc_t;
    uint8_t *out;
    __device__ acc_t identity() const { return ALL; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const { return x != 0; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return ALL ? (a && b) : (a || b); }
    __device__ void finish(int64_t o, acc_t a) const { out[o] = (uint8_t)a; }
};

// ---- two-pass reductions: a per-output value first (the mean, the maximum) ------------------

// var/std pass 1: the mean in double into aux (and, for var_mean/std_mean, means).
template <typename T> struct red_mean_aux_op {
    typedef double acc_t;
    double *aux;
    T *means; // or NULL
    int64_t nred;
    __device__ acc_t identity() const { return 0; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t) const { return (double)x; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
    __device__ void finish(int64_t o, acc_t a) const
    {
        const double m = a / (double)nred; // empty: NaN
        aux[o] = m;
        if (means != nullptr)
            ops_store(&means[o], (red_opmath_t<T>)m);
    }
};

// var/std pass 2: the squared deviations from aux, in double.
template <typename T> struct red_var_op {
    typedef double acc_t;
    const double *aux;
    T *out;
    double divisor;
    bool take_sqrt;
    __device__ acc_t identity() const { return 0; }
    template <typename X> __device__ acc_t project(X x, int64_t, int64_t o) const
    {
        const double d = (double)x - aux[o];
        return d * d;
    }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
    __device__ void finish(int64_t o, acc_t a) const
    {
        double r = a / divisor;
        if (take_sqrt)
            r = sqrt(r);
        ops_store(&out[o], (red_opmath_t<T>)r);
    }
};

// logsumexp pass 1: the shift (the maximum, NaN propagating) into aux.
template <typename T> struct red_max_aux_op {
    typedef red_opmath_t<T> acc_t;
    acc_t *aux;
    __device__ acc_t identity() const { return -INFINITY; }
    __device__ acc_t project(acc_t x, int64_t, int64_t) const { return x; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return ops_red_max_nan(a, b); }
    __device__ void finish(int64_t o, acc_t a) const { aux[o] = ops_red_lse_shift(a); }
};

// logsumexp pass 2: log(sum exp(x - m)) + m.
template <typename T> struct red_lse_op {
    typedef red_opmath_t<T> acc_t;
    const acc_t *aux;
    T *out;
    __device__ acc_t identity() const { return 0; }
    __device__ acc_t project(acc_t x, int64_t, int64_t o) const { return red_exp((acc_t)(x - aux[o])); }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
    __device__ void finish(int64_t o, acc_t a) const { ops_store(&out[o], red_log(a) + aux[o]); }
};

// ---- norms ----------------------------------------------------------------------------------

enum red_norm_mode { NORM_ABS_SUM, NORM_SQ_SUM, NORM_POW_SUM, NORM_MAX_ABS, NORM_MIN_ABS };

template <typename T> struct red_norm_op {
    typedef red_opmath_t<T> acc_t;
    T *out;
    red_norm_mode mode;
    acc_t p, inv;
    __device__ acc_t identity() const { return mode == NORM_MIN_ABS ? acc_t(INFINITY) : acc_t(0); }
    __device__ acc_t project(acc_t x, int64_t, int64_t) const
    {
        switch (mode) {
        case NORM_SQ_SUM: return x * x;
        case NORM_POW_SUM: return red_pow(red_abs(x), p);
        default: return red_abs(x);
        }
    }
    __device__ acc_t combine(acc_t a, acc_t b) const
    {
        if (mode == NORM_MAX_ABS)
            return ops_red_max_nan(a, b);
        if (mode == NORM_MIN_ABS)
            return ops_red_min_nan(a, b);
        return a + b;
    }
    __device__ void finish(int64_t o, acc_t a) const
    {
        if (mode == NORM_SQ_SUM)
            a = red_sqrt(a);
        else if (mode == NORM_POW_SUM)
            a = red_pow(a, inv);
        ops_store(&out[o], a);
    }
};

// Order 0: the count of nonzero elements (NaN counts), exact in int64.
template <typename T> struct red_count_op {
    typedef uint64_t acc_t;
    T *out;
    __device__ acc_t identity() const { return 0; }
    __device__ acc_t project(red_opmath_t<T> x, int64_t, int64_t) const { return x != 0; }
    __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
    __device__ void finish(int64_t o, acc_t a) const { ops_store(&out[o], (red_opmath_t<T>)(int64_t)a); }
};

// ---- dispatch ---------------------------------------------------------------------------------

struct red_job {
    const char *op;
    red_kind kind;
    ops_dtype dtype;
    red_geom g;
    double arg;
    void *dst, *dst2;
    int dev;
};

// The reductions every dtype has.
template <typename T>
static ops_status
red_run_any(const red_job &j, red_src_input<T> src, bool *handled)
{
    T *const dst = static_cast<T *>(j.dst), *const dst2 = static_cast<T *>(j.dst2);
    *handled = true;
    switch (j.kind) {
    case RED_SUM:
    case RED_MEAN: return red_launch(j.op, red_sum_op<T, false>{dst, j.g.nred, j.kind == RED_MEAN}, src, j.g, j.dev);
    case RED_NANSUM: return red_launch(j.op, red_sum_op<T, true>{dst, j.g.nred, false}, src, j.g, j.dev);
    case RED_PROD: return red_launch(j.op, red_prod_op<T>{dst}, src, j.g, j.dev);
    case RED_AMAX: return red_launch(j.op, red_ext_op<T, true>{dst}, src, j.g, j.dev);
    case RED_AMIN: return red_launch(j.op, red_ext_op<T, false>{dst}, src, j.g, j.dev);
    case RED_AMINMAX: return red_launch(j.op, red_aminmax_op<T>{dst, dst2}, src, j.g, j.dev);
    case RED_ARGMAX:
        return red_launch(j.op, red_arg_op<T, true>{nullptr, static_cast<int64_t *>(j.dst)}, src, j.g, j.dev);
    case RED_ARGMIN:
        return red_launch(j.op, red_arg_op<T, false>{nullptr, static_cast<int64_t *>(j.dst)}, src, j.g, j.dev);
    case RED_MAXDIM:
        return red_launch(j.op, red_arg_op<T, true>{dst, static_cast<int64_t *>(j.dst2)}, src, j.g, j.dev);
    case RED_MINDIM:
        return red_launch(j.op, red_arg_op<T, false>{dst, static_cast<int64_t *>(j.dst2)}, src, j.g, j.dev);
    case RED_ALL: return red_launch(j.op, red_truth_op<T, true>{static_cast<uint8_t *>(j.dst)}, src, j.g, j.dev);
    case RED_ANY: return red_launch(j.op, red_truth_op<T, false>{static_cast<uint8_t *>(j.dst)}, src, j.g, j.dev);
    default: *handled = false; return OPS_OK;
    }
}

// var/std (and their _mean forms): two passes over a per-output double buffer.
template <typename T>
static ops_status
red_run_var(const red_job &j, red_src_input<T> src)
{
    ops_tensor *aux_t = red_workspace(j.op, j.dev, j.g.nout * (int64_t)sizeof(double));
    if (aux_t == NULL)
        return ops_last_status();
    double *const aux = static_cast<double *>(ops_tensor_data_ptr(aux_t));
    ops_status st = red_launch(j.op, red_mean_aux_op<T>{aux, static_cast<T *>(j.dst2), j.g.nred}, src, j.g, j.dev);
    if (st == OPS_OK)
        st = red_launch(j.op,
                        red_var_op<T>{aux, static_cast<T *>(j.dst), ops_red_var_divisor(j.g.nred, j.arg),
                                      j.kind == RED_STD},
                        src, j.g, j.dev);
    ops_tensor_release(aux_t);
    return st;
}

template <typename T>
static ops_status
red_run_lse(const red_job &j, red_src_input<T> src)
{
    typedef red_opmath_t<T> A;
    ops_tensor *aux_t = red_workspace(j.op, j.dev, j.g.nout * (int64_t)sizeof(A));
    if (aux_t == NULL)
        return ops_last_status();
    A *const aux = static_cast<A *>(ops_tensor_data_ptr(aux_t));
    ops_status st = red_launch(j.op, red_max_aux_op<T>{aux}, src, j.g, j.dev);
    if (st == OPS_OK)
        st = red_launch(j.op, red_lse_op<T>{aux, static_cast<T *>(j.dst)}, src, j.g, j.dev);
    ops_tensor_release(aux_t);
    return st;
}

template <typename T>
static ops_status
red_run_norm(const red_job &j, red_src_input<T> src)
{
    typedef red_opmath_t<T> A;
    T *const dst = static_cast<T *>(j.dst);
    const double ord = j.arg;
    if (ord == 0)
        return red_launch(j.op, red_count_op<T>{dst}, src, j.g, j.dev);
    red_norm_mode mode = ord == INFINITY    ? NORM_MAX_ABS
                         : ord == -INFINITY ? NORM_MIN_ABS
                         : ord == 1         ? NORM_ABS_SUM
                         : ord == 2         ? NORM_SQ_SUM
                                            : NORM_POW_SUM;
    if (j.g.nred == 1)
        mode = NORM_ABS_SUM; // |x| exactly, where x*x could overflow
    return red_launch(j.op, red_norm_op<T>{dst, mode, (A)ord, (A)(1.0 / ord)}, src, j.g, j.dev);
}

template <typename T>
static ops_status
red_run_typed(const red_job &j, const void *in)
{
    red_src_input<T> src;
    src.p = static_cast<const T *>(in);
    bool handled = false;
    const ops_status st = red_run_any<T>(j, src, &handled);
    if (handled)
        return st;
    if constexpr (red_is_floating<T>::value) {
        switch (j.kind) {
        case RED_NANMEAN: return red_launch(j.op, red_nanmean_op<T>{static_cast<T *>(j.dst)}, src, j.g, j.dev);
        case RED_VAR:
        case RED_STD: return red_run_var<T>(j, src);
        case RED_LSE: return red_run_lse<T>(j, src);
        case RED_NORM: return red_run_norm<T>(j, src);
        default: break;
        }
    }
    // the driver only asks for the floating kinds in floating dtypes
    return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: no CUDA reduction %d for dtype %s", j.op, (int)j.kind,
                    ops_dtype_name(j.dtype));
}

extern "C" ops_status
ops_cuda_reduce_run(const char *op, red_kind kind, const ops_tensor *src, const bool *mask, double arg,
                    ops_tensor *res, ops_tensor *res2)
{
    red_job j;
    j.op = op;
    j.kind = kind;
    j.dtype = src->dtype;
    j.g = red_geom_make(src, mask);
    j.arg = arg;
    j.dst = ops_tensor_data_ptr(res);
    j.dst2 = res2 != NULL ? ops_tensor_data_ptr(res2) : NULL;
    j.dev = ops_tensor_device(src).index;
    if (j.g.nout == 0)
        return OPS_OK;
    ops_cuda_device_guard guard(j.dev);
    const void *in = ops_tensor_data_ptr(src);
    switch (src->dtype) {
    case OPS_BOOL: return red_run_typed<bool>(j, in);
    case OPS_UINT8: return red_run_typed<uint8_t>(j, in);
    case OPS_INT8: return red_run_typed<int8_t>(j, in);
    case OPS_INT16: return red_run_typed<int16_t>(j, in);
    case OPS_INT32: return red_run_typed<int32_t>(j, in);
    case OPS_INT64: return red_run_typed<int64_t>(j, in);
    case OPS_FLOAT16: return red_run_typed<ops_half>(j, in);
    case OPS_BFLOAT16: return red_run_typed<ops_bfloat16>(j, in);
    case OPS_FLOAT32: return red_run_typed<float>(j, in);
    case OPS_FLOAT64: return red_run_typed<double>(j, in);
    default:
        return ops_fail(OPS_ERR_DTYPE, "%s: unsupported dtype %s on CUDA", op, ops_dtype_name(src->dtype));
    }
}

// ---- entry points ------------------------------------------------------------------------------
//
// Each makes the input's device current and runs reduce.c's driver for the op (named
// after its CPU dispatch entry, which is that driver's CPU face): the driver
// validates, converts, allocates on the input's device and calls ops_cuda_reduce_run.
extern "C" ops_tensor *
sum_cuda(const ops_tensor *self, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return sum_cpu(self, dtype);
}

extern "C" ops_status
sum_out_cuda(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return sum_out_cpu(self, dtype, out);
}

extern "C" ops_tensor *
sum_dim_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return sum_dim_cpu(self, dim, keepdim, dtype);
}

extern "C" ops_status
sum_dim_out_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return sum_dim_out_cpu(self, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
nansum_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return nansum_cpu(self, dim, keepdim, dtype);
}

extern "C" ops_status
nansum_out_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return nansum_out_cpu(self, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
mean_cuda(const ops_tensor *self, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return mean_cpu(self, dtype);
}

extern "C" ops_status
mean_out_cuda(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return mean_out_cpu(self, dtype, out);
}

extern "C" ops_tensor *
mean_dim_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return mean_dim_cpu(self, dim, keepdim, dtype);
}

extern "C" ops_status
mean_dim_out_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return mean_dim_out_cpu(self, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
prod_cuda(const ops_tensor *self, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return prod_cpu(self, dtype);
}

extern "C" ops_status
prod_out_cuda(const ops_tensor *self, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return prod_out_cpu(self, dtype, out);
}

extern "C" ops_tensor *
prod_dim_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return prod_dim_cpu(self, dim, keepdim, dtype);
}

extern "C" ops_status
prod_dim_out_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return prod_dim_out_cpu(self, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
amax_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return amax_cpu(self, dim, keepdim);
}

extern "C" ops_status
amax_out_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return amax_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
amin_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return amin_cpu(self, dim, keepdim);
}

extern "C" ops_status
amin_out_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return amin_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
all_cuda(const ops_tensor *self)
{
    RED_ON_DEVICE_OF(self);
    return all_cpu(self);
}

extern "C" ops_status
all_out_cuda(const ops_tensor *self, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return all_out_cpu(self, out);
}

extern "C" ops_tensor *
all_dim_cuda(const ops_tensor *self, int64_t dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return all_dim_cpu(self, dim, keepdim);
}

extern "C" ops_status
all_dim_out_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return all_dim_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
any_cuda(const ops_tensor *self)
{
    RED_ON_DEVICE_OF(self);
    return any_cpu(self);
}

extern "C" ops_status
any_out_cuda(const ops_tensor *self, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return any_out_cpu(self, out);
}

extern "C" ops_tensor *
any_dim_cuda(const ops_tensor *self, int64_t dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return any_dim_cpu(self, dim, keepdim);
}

extern "C" ops_status
any_dim_out_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return any_dim_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
logsumexp_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return logsumexp_cpu(self, dim, keepdim);
}

extern "C" ops_status
logsumexp_out_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return logsumexp_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
nanmean_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return nanmean_cpu(self, dim, keepdim, dtype);
}

extern "C" ops_status
nanmean_out_cuda(const ops_tensor *self, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return nanmean_out_cpu(self, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
argmax_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return argmax_cpu(self, dim, keepdim);
}

extern "C" ops_status
argmax_out_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return argmax_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
argmin_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return argmin_cpu(self, dim, keepdim);
}

extern "C" ops_status
argmin_out_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return argmin_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
var_correction_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return var_correction_cpu(self, dim, correction, keepdim);
}

extern "C" ops_status
var_correction_out_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return var_correction_out_cpu(self, dim, correction, keepdim, out);
}

extern "C" ops_tensor *
std_correction_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return std_correction_cpu(self, dim, correction, keepdim);
}

extern "C" ops_status
std_correction_out_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return std_correction_out_cpu(self, dim, correction, keepdim, out);
}

extern "C" ops_tensor *
max_cuda(const ops_tensor *self)
{
    RED_ON_DEVICE_OF(self);
    return max_cpu(self);
}

extern "C" ops_status
max_unary_out_cuda(const ops_tensor *self, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return max_unary_out_cpu(self, out);
}

extern "C" ops_tensor *
min_cuda(const ops_tensor *self)
{
    RED_ON_DEVICE_OF(self);
    return min_cpu(self);
}

extern "C" ops_status
min_unary_out_cuda(const ops_tensor *self, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return min_unary_out_cpu(self, out);
}

extern "C" ops_status
max_dim_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    RED_ON_DEVICE_OF(self);
    return max_dim_cpu(self, dim, keepdim, values, indices);
}

extern "C" ops_status
max_dim_max_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *max, ops_tensor *max_values)
{
    RED_ON_DEVICE_OF(self);
    return max_dim_max_cpu(self, dim, keepdim, max, max_values);
}

extern "C" ops_status
min_dim_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor **values, ops_tensor **indices)
{
    RED_ON_DEVICE_OF(self);
    return min_dim_cpu(self, dim, keepdim, values, indices);
}

extern "C" ops_status
min_dim_min_cuda(const ops_tensor *self, int64_t dim, bool keepdim, ops_tensor *min, ops_tensor *min_indices)
{
    RED_ON_DEVICE_OF(self);
    return min_dim_min_cpu(self, dim, keepdim, min, min_indices);
}

extern "C" ops_status
aminmax_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor **min, ops_tensor **max)
{
    RED_ON_DEVICE_OF(self);
    return aminmax_cpu(self, dim, keepdim, min, max);
}

extern "C" ops_status
aminmax_out_cuda(const ops_tensor *self, const int64_t *dim, bool keepdim, ops_tensor *min, ops_tensor *max)
{
    RED_ON_DEVICE_OF(self);
    return aminmax_out_cpu(self, dim, keepdim, min, max);
}

extern "C" ops_status
var_mean_correction_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return var_mean_correction_cpu(self, dim, correction, keepdim, result0, result1);
}

extern "C" ops_status
var_mean_correction_out_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    RED_ON_DEVICE_OF(self);
    return var_mean_correction_out_cpu(self, dim, correction, keepdim, out0, out1);
}

extern "C" ops_status
var_mean_cuda(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return var_mean_cpu(self, unbiased, result0, result1);
}

extern "C" ops_status
var_mean_dim_cuda(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return var_mean_dim_cpu(self, dim, unbiased, keepdim, result0, result1);
}

extern "C" ops_status
std_mean_correction_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return std_mean_correction_cpu(self, dim, correction, keepdim, result0, result1);
}

extern "C" ops_status
std_mean_correction_out_cuda(const ops_tensor *self, const ops_int_list *dim, const ops_scalar *correction, bool keepdim, ops_tensor *out0, ops_tensor *out1)
{
    RED_ON_DEVICE_OF(self);
    return std_mean_correction_out_cpu(self, dim, correction, keepdim, out0, out1);
}

extern "C" ops_status
std_mean_cuda(const ops_tensor *self, bool unbiased, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return std_mean_cpu(self, unbiased, result0, result1);
}

extern "C" ops_status
std_mean_dim_cuda(const ops_tensor *self, const ops_int_list *dim, bool unbiased, bool keepdim, ops_tensor **result0, ops_tensor **result1)
{
    RED_ON_DEVICE_OF(self);
    return std_mean_dim_cpu(self, dim, unbiased, keepdim, result0, result1);
}

extern "C" ops_tensor *
norm_scalar_cuda(const ops_tensor *self, ops_scalar p)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalar_cpu(self, p);
}

extern "C" ops_status
norm_scalar_out_cuda(const ops_tensor *self, ops_scalar p, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalar_out_cpu(self, p, out);
}

extern "C" ops_tensor *
norm_scalaropt_dim_cuda(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalaropt_dim_cpu(self, p, dim, keepdim);
}

extern "C" ops_status
norm_out_cuda(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return norm_out_cpu(self, p, dim, keepdim, out);
}

extern "C" ops_tensor *
norm_scalaropt_dim_dtype_cuda(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalaropt_dim_dtype_cpu(self, p, dim, keepdim, dtype);
}

extern "C" ops_status
norm_dtype_out_cuda(const ops_tensor *self, const ops_scalar *p, ops_int_list dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return norm_dtype_out_cpu(self, p, dim, keepdim, dtype, out);
}

extern "C" ops_tensor *
norm_scalaropt_dtype_cuda(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalaropt_dtype_cpu(self, p, dtype);
}

extern "C" ops_status
norm_scalaropt_dtype_out_cuda(const ops_tensor *self, const ops_scalar *p, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return norm_scalaropt_dtype_out_cpu(self, p, dtype, out);
}

extern "C" ops_tensor *
frobenius_norm_dim_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim)
{
    RED_ON_DEVICE_OF(self);
    return frobenius_norm_dim_cpu(self, dim, keepdim);
}

extern "C" ops_status
frobenius_norm_out_cuda(const ops_tensor *self, ops_int_list dim, bool keepdim, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return frobenius_norm_out_cpu(self, dim, keepdim, out);
}

extern "C" ops_tensor *
linalg_vector_norm_cuda(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim, ops_dtype dtype)
{
    RED_ON_DEVICE_OF(self);
    return linalg_vector_norm_cpu(self, ord, dim, keepdim, dtype);
}

extern "C" ops_status
linalg_vector_norm_out_cuda(const ops_tensor *self, ops_scalar ord, const ops_int_list *dim, bool keepdim, ops_dtype dtype, ops_tensor *out)
{
    RED_ON_DEVICE_OF(self);
    return linalg_vector_norm_out_cpu(self, ord, dim, keepdim, dtype, out);
}

