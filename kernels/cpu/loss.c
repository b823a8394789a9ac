/* Loss functions (CPU loops): the per-element and per-position terms and the sums of
 * the loss drivers (kernels/loss.c), registered for the stubs of kernels/loss.h, over
 * the formulas of kernels/nn_common.h; and the CPU loop of the NN families' index
 * check nn_first_bad_index.  Buffers are contiguous float64 (int64 targets). */
#include <inttypes.h>
#include <stdlib.h>

#include "kernels/cpu/vec/vec_rows.h"
#include "kernels/loss.h"
#include "ops_dispatch.h"

OPS_REGISTER_STUB(loss_sum, CPU, loss_sum_cpu);
OPS_REGISTER_STUB(loss_pointwise_terms, CPU, loss_pointwise_terms_cpu);
OPS_REGISTER_STUB(loss_bce_terms, CPU, loss_bce_terms_cpu);
OPS_REGISTER_STUB(loss_bce_logits_terms, CPU, loss_bce_logits_terms_cpu);
OPS_REGISTER_STUB(loss_log_softmax, CPU, loss_log_softmax_cpu);
OPS_REGISTER_STUB(loss_nll_terms, CPU, loss_nll_terms_cpu);
OPS_REGISTER_STUB(loss_ce_smooth_terms, CPU, loss_ce_smooth_terms_cpu);
OPS_REGISTER_STUB(loss_ce_prob_terms, CPU, loss_ce_prob_terms_cpu);
OPS_REGISTER_STUB(nn_first_bad_index, CPU, nn_first_bad_index_cpu);
OPS_REGISTER_STUB(loss_ce_rows, CPU, loss_ce_rows_cpu);

#ifdef _OPENMP
#define LOSS_PARALLEL_REGION_(cond) OPS_PRAGMA_(omp parallel if (cond))
#define LOSS_FOR_ OPS_PRAGMA_(omp for schedule(static))
#else
#define LOSS_PARALLEL_REGION_(cond)
#define LOSS_FOR_
#endif

/* Threads for the fused cross_entropy rows from this many logits on (an exponential
 * each: a fork pays for itself at far fewer than OPS_GRAIN_SIZE copies). */
#define CE_GRAIN_ 8192

/* The doubles of a buffer (NULL stays NULL: an absent weight). */
static double *
dbl(const ops_tensor *t)
{
    return t != NULL ? (double *)ops_tensor_data_ptr(t) : NULL;
}

ops_status
loss_sum_cpu(const char *op, const ops_tensor *buf, int64_t off, int64_t n, double *s)
{
    (void)op;
    const double *l = dbl(buf) + off;
    double acc = 0;
    for (int64_t i = 0; i < n; i++)
        acc += l[i];
    *s = acc;
    return OPS_OK;
}

ops_status
loss_pointwise_terms_cpu(const char *op, int kind, ops_tensor *x, const ops_tensor *y, double param)
{
    (void)op;
    double *xd = dbl(x);
    const double *yd = dbl(y);
    const int64_t n = ops_tensor_numel(x);
    for (int64_t i = 0; i < n; i++)
        xd[i] = ops_nn_pointwise_loss(kind, xd[i], yd[i], param);
    return OPS_OK;
}

ops_status
loss_bce_terms_cpu(const char *op, ops_tensor *x, const ops_tensor *y, const ops_tensor *w, bool *bad)
{
    (void)op;
    double *xd = dbl(x);
    const double *yd = dbl(y), *wd = dbl(w);
    const int64_t n = ops_tensor_numel(x);
    *bad = false;
    for (int64_t i = 0; i < n && !*bad; i++)
        *bad = !(xd[i] >= 0 && xd[i] <= 1);
    for (int64_t i = 0; i < n && !*bad; i++)
        xd[i] = ops_nn_bce(xd[i], yd[i]) * (wd != NULL ? wd[i] : 1.0);
    return OPS_OK;
}

ops_status
loss_bce_logits_terms_cpu(const char *op, ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
                          const ops_tensor *pw)
{
    (void)op;
    double *xd = dbl(x);
    const double *td = dbl(t), *wd = dbl(w), *pwd = dbl(pw);
    const int64_t n = ops_tensor_numel(x);
    for (int64_t i = 0; i < n; i++)
        xd[i] = ops_nn_bce_logits(xd[i], td[i], pwd != NULL ? 1 + (pwd[i] - 1) * td[i] : 1.0) *
                (wd != NULL ? wd[i] : 1.0);
    return OPS_OK;
}

ops_status
loss_log_softmax_cpu(const char *op, int64_t N, int64_t C, int64_t S, ops_tensor *x)
{
    (void)op;
    double *p = dbl(x);
    for (int64_t n = 0; n < N; n++)
        for (int64_t s = 0; s < S; s++)
            ops_nn_log_softmax_pos(p + n * C * S + s, C, S);
    return OPS_OK;
}

ops_status
loss_nll_terms_cpu(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                   const ops_tensor *w, int64_t ignore_index, ops_tensor *l, double *total_weight)
{
    (void)op;
    const int64_t nt = N * S, *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *p = dbl(lp), *wd = dbl(w);
    double *ld = dbl(l), tw = 0;
    for (int64_t i = 0; i < nt; i++) {
        double wt;
        ld[i] = ops_nn_nll_term(p + (i / S) * C * S + i % S, tgt[i], wd, S, ignore_index, &wt);
        tw += wt;
    }
    *total_weight = tw;
    return OPS_OK;
}

ops_status
loss_ce_smooth_terms_cpu(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *t,
                         const ops_tensor *w, int64_t ignore_index, ops_tensor *l, bool mix, double a, double b)
{
    (void)op;
    const int64_t nt = N * S, *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *p = dbl(lp), *wd = dbl(w);
    double *nll = dbl(l), *smooth = nll + nt;
    for (int64_t i = 0; i < nt; i++)
        smooth[i] = tgt[i] == ignore_index ? 0 : ops_nn_ce_smooth_term(p + (i / S) * C * S + i % S, wd, C, S);
    if (mix)
        for (int64_t i = 0; i < nt; i++)
            nll[i] = a * nll[i] + b * smooth[i];
    return OPS_OK;
}

ops_status
loss_ce_prob_terms_cpu(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *lp, const ops_tensor *tp,
                       const ops_tensor *w, double ls, ops_tensor *l)
{
    (void)op;
    const double *p = dbl(lp), *td = dbl(tp), *wd = dbl(w);
    double *ld = dbl(l);
    for (int64_t i = 0; i < N * S; i++) {
        const int64_t base = (i / S) * C * S + i % S;
        ld[i] = ops_nn_ce_prob_term(p + base, td + base, wd, C, S, ls);
    }
    return OPS_OK;
}

ops_status
nn_first_bad_index_cpu(const char *op, const ops_tensor *k, int64_t bound, bool use_skip, int64_t skip, bool *found,
                       int64_t *bad)
{
    (void)op;
    const int64_t n = ops_tensor_numel(k), *kd = (const int64_t *)ops_tensor_data_ptr(k);
    *found = false;
    for (int64_t i = 0; i < n; i++) {
        if ((use_skip && kd[i] == skip) || (kd[i] >= 0 && kd[i] < bound))
            continue;
        *found = true;
        *bad = kd[i];
        break;
    }
    return OPS_OK;
}

/* -log_softmax(row)[t] of one row of n float32 or float64 logits, through the row
 * loops of the process's ISA level (kernels/cpu/vec/vec_rows.c), in the row's
 * precision as PyTorch's CPU log_softmax; float16/bfloat16 rows are widened into buf
 * (n floats) first. */
static double
ce_row_nll(const ops_vec_rows_table *vt, ops_dtype dt, const void *row, int64_t n, int64_t t, float *buf)
{
    if (dt == OPS_FLOAT64) {
        const double *x = row;
        double m, ls;
        vt->logsumexp_f64(x, n, &m, &ls);
        return -((x[t] - m) - ls);
    }
    const float *x = row;
    if (dt == OPS_FLOAT16 || dt == OPS_BFLOAT16) {
        for (int64_t k = 0; k < n; k++)
            buf[k] = dt == OPS_FLOAT16 ? ops_half_to_float(((const ops_half *)row)[k])
                                       : ops_bfloat16_to_float(((const ops_bfloat16 *)row)[k]);
        x = buf;
    }
    float m, ls;
    vt->logsumexp_f32(x, n, &m, &ls);
    return -(double)((x[t] - m) - ls);
}

ops_status
loss_ce_rows_cpu(const char *op, int64_t N, int64_t C, const ops_tensor *x, const ops_tensor *t, const ops_tensor *w,
                 int64_t ignore_index, ops_tensor *l, double *total_weight)
{
    const ops_vec_rows_table *vt = ops_vec_rows();
    const ops_dtype dt = x->dtype;
    const char *xd = ops_tensor_data_ptr(x);
    const size_t es = ops_dtype_size(dt);
    const int64_t *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *wd = dbl(w);
    double *ld = dbl(l);
    const bool widen = dt == OPS_FLOAT16 || dt == OPS_BFLOAT16;
    const bool par = N > 1 && (double)N * (double)C > CE_GRAIN_;
    bool ok = true;
    (void)par;
    LOSS_PARALLEL_REGION_(par)
    {
        float *buf = widen ? malloc((size_t)C * sizeof(float)) : NULL;
        if (widen && buf == NULL)
            ok = false;
        LOSS_FOR_
        for (int64_t i = 0; i < N; i++) {
            if (tgt[i] == ignore_index || (widen && buf == NULL)) {
                ld[i] = 0;
                continue;
            }
            const double wt = wd != NULL ? wd[tgt[i]] : 1.0;
            ld[i] = wt * ce_row_nll(vt, dt, xd + (size_t)(i * C) * es, C, tgt[i], buf);
        }
        free(buf);
    }
    if (!ok)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (a row of %" PRId64 " floats)", op, C);
    /* the weights of the targets that count, in row order (the same for any split) */
    double tw = 0;
    for (int64_t i = 0; i < N; i++)
        if (tgt[i] != ignore_index)
            tw += wd != NULL ? wd[tgt[i]] : 1.0;
    *total_weight = tw;
    return OPS_OK;
}
