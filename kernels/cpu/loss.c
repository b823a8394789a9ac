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
OPS_REGISTER_STUB(loss_ce_rows_backward, CPU, loss_ce_rows_backward_cpu);

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

/* The fused cross_entropy loops work on blocks of this many positions of an
 * [N, C, d1...] input (a multiple of every vector width): one task each, so a
 * position's result never depends on the split. */
#define CE_BLOCK_ 64

/* A block of cols positions of batch item n widened to float (float16/bfloat16):
 * buf[k cols + j] = x[n, k, s0 + j]. */
static void
ce_widen(ops_dtype dt, const char *xd, int64_t C, int64_t S, int64_t n, int64_t s0, int64_t cols, float *buf)
{
    for (int64_t k = 0; k < C; k++)
        for (int64_t j = 0; j < cols; j++) {
            const int64_t e = (n * C + k) * S + s0 + j;
            buf[k * cols + j] = dt == OPS_FLOAT16 ? ops_half_to_float(((const ops_half *)xd)[e])
                                                  : ops_bfloat16_to_float(((const ops_bfloat16 *)xd)[e]);
        }
}

/* One block of positions: m, ls (and sw with smoothing) per position, through the
 * row loop (S == 1) or the column loop of the process's level. */
static void
ce_block(const ops_vec_rows_table *vt, ops_dtype dt, const char *xd, int64_t C, int64_t S, int64_t n, int64_t s0,
         int64_t cols, const void *wv, bool smooth, float *buf, double *m, double *ls, double *sw, double *xt,
         const int64_t *tgt)
{
    if (dt == OPS_FLOAT64) {
        const double *x = (const double *)xd + n * C * S + s0;
        double mb[CE_BLOCK_], lb[CE_BLOCK_];
        if (S == 1)
            vt->ce_row_f64(x, C, wv, smooth, mb, lb, sw);
        else
            vt->ce_cols_f64(x, C, S, cols, wv, mb, lb, smooth ? sw : NULL, NULL, NULL, NULL);
        for (int64_t j = 0; j < cols; j++) {
            m[j] = mb[j];
            ls[j] = lb[j];
            xt[j] = tgt[j] >= 0 && tgt[j] < C ? x[tgt[j] * S + j] : 0;
        }
        return;
    }
    const float *x = (const float *)xd + n * C * S + s0;
    int64_t inner = S;
    if (dt != OPS_FLOAT32) {
        ce_widen(dt, xd, C, S, n, s0, cols, buf);
        x = buf;
        inner = cols;
    }
    float mb[CE_BLOCK_], lb[CE_BLOCK_];
    if (inner == 1)
        vt->ce_row_f32(x, C, wv, smooth, mb, lb, sw);
    else
        vt->ce_cols_f32(x, C, inner, cols, wv, mb, lb, smooth ? sw : NULL, NULL, NULL, NULL);
    for (int64_t j = 0; j < cols; j++) {
        m[j] = mb[j];
        ls[j] = lb[j];
        xt[j] = tgt[j] >= 0 && tgt[j] < C ? x[tgt[j] * inner + j] : 0;
    }
}

/* The weights in the logits' precision (float for every dtype but float64), or NULL. */
static void *
ce_weights(const ops_tensor *w, ops_dtype dt, int64_t C, bool *oom)
{
    *oom = false;
    if (w == NULL || dt == OPS_FLOAT64)
        return w != NULL ? dbl(w) : NULL;
    float *wf = malloc((size_t)(C > 0 ? C : 1) * sizeof(float));
    if (wf == NULL) {
        *oom = true;
        return NULL;
    }
    for (int64_t c = 0; c < C; c++)
        wf[c] = (float)dbl(w)[c];
    return wf;
}

ops_status
loss_ce_rows_cpu(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *x, const ops_tensor *t,
                 const ops_tensor *w, int64_t ignore_index, bool smooth, ops_tensor *l, double *total_weight)
{
    const ops_vec_rows_table *vt = ops_vec_rows();
    const ops_dtype dt = x->dtype;
    const char *xd = ops_tensor_data_ptr(x);
    const int64_t *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *wd = dbl(w);
    double *ld = dbl(l);
    const int64_t nt = N * S, nb = (S + CE_BLOCK_ - 1) / CE_BLOCK_, tasks = N * nb;
    const bool widen = dt == OPS_FLOAT16 || dt == OPS_BFLOAT16;
    const bool par = tasks > 1 && (double)N * (double)C * (double)S > CE_GRAIN_;
    bool oom;
    void *wv = ce_weights(w, dt, C, &oom);
    if (oom)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (%" PRId64 " class weights)", op, C);
    double W = 0; /* the smoothing term's sum of the weights */
    for (int64_t c = 0; c < C; c++)
        W += wd != NULL ? wd[c] : 1.0;
    bool ok = true;
    (void)par;
    LOSS_PARALLEL_REGION_(par)
    {
        const int64_t bc = S < CE_BLOCK_ ? S : CE_BLOCK_;
        float *buf = widen ? malloc((size_t)(C * bc > 0 ? C * bc : 1) * sizeof(float)) : NULL;
        if (widen && buf == NULL)
            ok = false;
        LOSS_FOR_
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t n = task / nb, s0 = (task % nb) * CE_BLOCK_;
            const int64_t cols = S - s0 < CE_BLOCK_ ? S - s0 : CE_BLOCK_;
            const int64_t *tb = tgt + n * S + s0;
            double *lb = ld + n * S + s0;
            if (widen && buf == NULL) {
                for (int64_t j = 0; j < cols; j++)
                    lb[j] = 0;
                continue;
            }
            double m[CE_BLOCK_], ls[CE_BLOCK_], sw[CE_BLOCK_], xt[CE_BLOCK_];
            ce_block(vt, dt, xd, C, S, n, s0, cols, wv, smooth, buf, m, ls, sw, xt, tb);
            for (int64_t j = 0; j < cols; j++) {
                if (tb[j] == ignore_index) {
                    lb[j] = 0;
                    if (smooth)
                        lb[nt + j] = 0;
                    continue;
                }
                const double wt = wd != NULL ? wd[tb[j]] : 1.0;
                /* log_softmax at the target in the logits' precision (PyTorch's) */
                const double lp = dt == OPS_FLOAT64 ? (xt[j] - m[j]) - ls[j]
                                                    : (double)(((float)xt[j] - (float)m[j]) - (float)ls[j]);
                lb[j] = -wt * lp;
                if (smooth)
                    lb[nt + j] = W * ls[j] - sw[j];
            }
        }
        free(buf);
    }
    if (wv != NULL && (void *)wd != wv)
        free(wv);
    if (!ok)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (a block of %" PRId64 " classes)", op, C);
    /* the weights of the targets that count, in position order (the same for any split) */
    double tw = 0;
    for (int64_t i = 0; i < nt; i++)
        if (tgt[i] != ignore_index)
            tw += wd != NULL ? wd[tgt[i]] : 1.0;
    *total_weight = tw;
    return OPS_OK;
}

ops_status
loss_ce_rows_backward_cpu(const char *op, int64_t N, int64_t C, int64_t S, const ops_tensor *x, const ops_tensor *t,
                          const ops_tensor *w, int64_t ignore_index, double eps, int64_t reduction,
                          const ops_tensor *g, ops_tensor *gx)
{
    const ops_vec_rows_table *vt = ops_vec_rows();
    const ops_dtype dt = x->dtype;
    const char *xd = ops_tensor_data_ptr(x);
    char *gd = ops_tensor_data_ptr(gx);
    const int64_t *tgt = (const int64_t *)ops_tensor_data_ptr(t);
    const double *wd = dbl(w), *gv = dbl(g);
    const int64_t nt = N * S, nb = (S + CE_BLOCK_ - 1) / CE_BLOCK_, tasks = N * nb;
    const bool par = tasks > 1 && (double)N * (double)C * (double)S > CE_GRAIN_;
    if (dt != OPS_FLOAT32 && dt != OPS_FLOAT64)
        return ops_fail(OPS_ERR_DTYPE, "%s: backward: fused loop wants float32 or float64, got %s", op,
                        ops_dtype_name(dt));
    bool oom;
    void *wv = ce_weights(w, dt, C, &oom);
    if (oom)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory (%" PRId64 " class weights)", op, C);
    double W = 0, tw = 0;
    for (int64_t c = 0; c < C; c++)
        W += wd != NULL ? wd[c] : 1.0;
    for (int64_t i = 0; i < nt; i++)
        if (tgt[i] != ignore_index)
            tw += wd != NULL ? wd[tgt[i]] : 1.0;
    const double k = eps / (double)C;
    (void)par;
    LOSS_PARALLEL_REGION_(par)
    {
        LOSS_FOR_
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t n = task / nb, s0 = (task % nb) * CE_BLOCK_;
            const int64_t cols = S - s0 < CE_BLOCK_ ? S - s0 : CE_BLOCK_;
            const int64_t *tb = tgt + n * S + s0;
            /* per position: gx = a softmax(x) - b w - c at the target */
            double a[CE_BLOCK_], b[CE_BLOCK_], c[CE_BLOCK_];
            for (int64_t j = 0; j < cols; j++) {
                const double gi = reduction == 0 ? gv[n * S + s0 + j] : gv[0];
                const double d = reduction == 1 ? tw : 1.0;
                /* a mean over zero total weight has a zero gradient (PyTorch's) */
                const double sc = tb[j] != ignore_index && d != 0 ? gi / d : 0.0;
                const double wt = tb[j] != ignore_index ? (wd != NULL ? wd[tb[j]] : 1.0) : 0.0;
                a[j] = sc * ((1 - eps) * wt + k * W);
                b[j] = sc * k;
                c[j] = sc * (1 - eps) * wt;
            }
            const size_t off = (size_t)(n * C * S + s0);
            if (dt == OPS_FLOAT64) {
                const double *xp = (const double *)xd + off;
                double *yp = (double *)gd + off;
                if (S == 1) {
                    vt->softmax_f64(xp, yp, C, false);
                    for (int64_t q = 0; q < C; q++)
                        yp[q] = a[0] * yp[q] - b[0] * (wd != NULL ? wd[q] : 1.0);
                } else {
                    double mb[CE_BLOCK_], lb[CE_BLOCK_];
                    vt->ce_cols_f64(xp, C, S, cols, wv, mb, lb, NULL, yp, a, eps > 0 ? b : NULL);
                }
                for (int64_t j = 0; j < cols; j++)
                    if (tb[j] != ignore_index)
                        yp[tb[j] * S + j] -= c[j];
            } else {
                const float *xp = (const float *)xd + off;
                float *yp = (float *)gd + off;
                const float *wf = wv;
                if (S == 1) {
                    const float af = (float)a[0], bf = (float)b[0];
                    vt->softmax_f32(xp, yp, C, false);
                    for (int64_t q = 0; q < C; q++)
                        yp[q] = af * yp[q] - bf * (wf != NULL ? wf[q] : 1.0f);
                } else {
                    float af[CE_BLOCK_], bf[CE_BLOCK_], mb[CE_BLOCK_], lb[CE_BLOCK_];
                    for (int64_t j = 0; j < cols; j++) {
                        af[j] = (float)a[j];
                        bf[j] = (float)b[j];
                    }
                    vt->ce_cols_f32(xp, C, S, cols, wf, mb, lb, NULL, yp, af, eps > 0 ? bf : NULL);
                }
                for (int64_t j = 0; j < cols; j++)
                    if (tb[j] != ignore_index)
                        yp[tb[j] * S + j] -= (float)c[j];
            }
        }
    }
    if (wv != NULL && (void *)wd != wv)
        free(wv);
    return OPS_OK;
}
