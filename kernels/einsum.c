/* einsum, one driver for every device: a composite over views, sum and bmm, following PyTorch's algorithm
 * (aten/src/ATen/native/Linear.cpp).
 *
 * 1. Parse the equation: per operand its labels ([a-zA-Z]) and at most one ellipsis;
 *    the output is the explicit right-hand side, or (implicit) the ellipsis followed
 *    by the labels seen once, in alphabetical order (upper case first, as PyTorch).
 * 2. Give every label (and every ellipsis dim) a position in one "permuted" space:
 *    the output dims first, then the contraction dims.  Each operand becomes a view
 *    over that space: a repeated label is its diagonal (the two strides added), a
 *    label it lacks is a size-1 dim.  Size-1 dims broadcast against other operands.
 * 3. One operand: sum the contraction dims.  Several: contract left to right (or in
 *    the order `path` gives, opt_einsum's convention), each pair as one bmm
 *    (batch dims, left-only dims, summed dims x right-only dims), so float32/float64
 *    reach the BLAS; a contraction dim that only one operand of the pair has, and no
 *    later operand, is summed out of it first.
 *
 * Every operand must have the same dtype (bmm's rule); bool is taken for one operand
 * only (a sum of bool is int64, as sum's; pairs would need a bool bmm, which
 * PyTorch's CPU refuses too).  Sums follow PyTorch 1.13, which sums with sum's default
 * dtype: summing a uint8..int32 operand gives int64, so a single-operand einsum that
 * sums ('i->', 'ii') is int64, and a pair in which one side had a dim summed out is
 * multiplied in int64 (PyTorch's mul promotes there; where it uses bmm on the mixed
 * pair it refuses, and we compute in int64 rather than fail).  When any dim of the
 * broadcast space is empty the result is zeros of the operands' dtype (PyTorch's fast
 * path, which returns before any sum). */
#include <string.h>

#include "ops_dispatch.h"
#include "ops_functions_copy.h"
#include "ops_functions_core.h"
#include "ops_functions_creation.h"
#include "ops_functions_linalg.h"
#include "ops_functions_reduce.h"
#include "ops_kernels_einsum.h"

#define EIN_LABELS 52      /* A-Z then a-z */
#define EIN_ELLIPSIS 52    /* marker in an operand's label list */
#define EIN_MAX_OPERANDS 64

typedef struct {
    int nlabels;            /* entries in labels (ellipsis counted once) */
    int labels[OPS_MAX_DIMS + 1];
    bool has_ell;
} ein_operand;

static int
ein_label_index(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    return -1;
}

static char
ein_label_char(int s)
{
    return s < 26 ? (char)('A' + s) : (char)('a' + (s - 26));
}

/* A new reference: t summed over the dims where mask is set, keeping them as size 1. */
static ops_tensor *
ein_sum_keep(const ops_tensor *t, const bool *mask, ops_dtype dtype)
{
    int64_t dims[OPS_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < (int)t->ndim; d++)
        if (mask[d])
            dims[n++] = d;
    const ops_int_list dl = {dims, n};
    return ops_sum_dim(t, &dl, true, dtype);
}

/* a and b over the permuted space (np dims each): sum over the dims in sum_mask via
 * one bmm.  Returns a new reference over the same np dims (summed dims size 1). */
static ops_tensor *
ein_pair(const ops_tensor *a, const ops_tensor *b, int np, const bool *sum_mask)
{
    int bd[OPS_MAX_DIMS], ld[OPS_MAX_DIMS], rd[OPS_MAX_DIMS], kd[OPS_MAX_DIMS];
    int nb = 0, nl = 0, nr = 0, nk = 0;
    int64_t pb = 1, pl = 1, pr = 1, pk = 1;
    for (int d = 0; d < np; d++) {
        const int64_t sa = a->sizes[d], sb = b->sizes[d];
        if (sum_mask[d]) {
            kd[nk++] = d;
            pk *= sa;
        } else if (sa != 1 && sb != 1) {
            bd[nb++] = d;
            pb *= sa;
        } else if (sa != 1) {
            ld[nl++] = d;
            pl *= sa;
        } else if (sb != 1) {
            rd[nr++] = d;
            pr *= sb;
        }
    }
    /* the dims of size 1 in both go last in both permutations */
    int64_t perm_a[OPS_MAX_DIMS], perm_b[OPS_MAX_DIMS];
    bool used_a[OPS_MAX_DIMS] = {false}, used_b[OPS_MAX_DIMS] = {false};
    int ia = 0, ib = 0;
    for (int i = 0; i < nb; i++)
        perm_a[ia++] = bd[i], perm_b[ib++] = bd[i], used_a[bd[i]] = used_b[bd[i]] = true;
    for (int i = 0; i < nl; i++)
        perm_a[ia++] = ld[i], used_a[ld[i]] = true;
    for (int i = 0; i < nk; i++)
        perm_a[ia++] = kd[i], perm_b[ib++] = kd[i], used_a[kd[i]] = used_b[kd[i]] = true;
    for (int i = 0; i < nr; i++)
        perm_b[ib++] = rd[i], used_b[rd[i]] = true;
    for (int d = 0; d < np; d++) {
        if (!used_a[d])
            perm_a[ia++] = d;
        if (!used_b[d])
            perm_b[ib++] = d;
    }
    ops_tensor *pa = NULL, *pbt = NULL, *ma = NULL, *mb = NULL, *prod = NULL, *r = NULL;
    if ((pa = ops_permute(a, (ops_int_list){perm_a, np})) == NULL ||
        (pbt = ops_permute(b, (ops_int_list){perm_b, np})) == NULL)
        goto done;
    const int64_t sa3[3] = {pb, pl, pk}, sb3[3] = {pb, pk, pr};
    if ((ma = ops_reshape(pa, (ops_int_list){sa3, 3})) == NULL ||
        (mb = ops_reshape(pbt, (ops_int_list){sb3, 3})) == NULL || (prod = ops_bmm(ma, mb)) == NULL)
        goto done;
    /* prod is (B, L, R) row-major: view it over the np dims (size 1 elsewhere) */
    int64_t sizes[OPS_MAX_DIMS], strides[OPS_MAX_DIMS];
    for (int d = 0; d < np; d++)
        sizes[d] = 1, strides[d] = 0;
    int64_t st = 1;
    for (int i = nr - 1; i >= 0; i--)
        sizes[rd[i]] = b->sizes[rd[i]], strides[rd[i]] = st, st *= b->sizes[rd[i]];
    for (int i = nl - 1; i >= 0; i--)
        sizes[ld[i]] = a->sizes[ld[i]], strides[ld[i]] = st, st *= a->sizes[ld[i]];
    for (int i = nb - 1; i >= 0; i--)
        sizes[bd[i]] = a->sizes[bd[i]], strides[bd[i]] = st, st *= a->sizes[bd[i]];
    r = ops_tensor_new_view(prod, np, sizes, strides, prod->offset);
done:
    ops_tensor_release(pa);
    ops_tensor_release(pbt);
    ops_tensor_release(ma);
    ops_tensor_release(mb);
    ops_tensor_release(prod);
    return r;
}

/* Every step is a dispatched op or a view, so this runs on any device: the schema
 * names it for CPU and CUDA. */
ops_tensor *
linalg_einsum(const char *equation, ops_tensor_list tensors, const ops_int_list *path)
{
    const int64_t num_ops = tensors.len;
    ein_operand ops_l[EIN_MAX_OPERANDS];
    ops_tensor *cur[EIN_MAX_OPERANDS] = {NULL};
    ops_tensor *result = NULL;
    int ncur = 0;

    if (num_ops == 0)
        return ops_fail_null(OPS_ERR_VALUE, "einsum(): must provide at least one operand");
    if (num_ops > EIN_MAX_OPERANDS)
        return ops_fail_null(OPS_ERR_VALUE, "einsum(): at most %d operands are supported, got %lld",
                             EIN_MAX_OPERANDS, (long long)num_ops);
    const ops_dtype dt = tensors.data[0]->dtype;
    for (int64_t i = 0; i < num_ops; i++) {
        const ops_tensor *t = tensors.data[i];
        if (t->dtype != dt)
            return ops_fail_null(OPS_ERR_DTYPE,
                                 "einsum(): expected all operands to have the same dtype, but operand 0 is %s and "
                                 "operand %lld is %s",
                                 ops_dtype_name(dt), (long long)i, ops_dtype_name(t->dtype));
    }
    /* one bool operand is a sum (int64, as sum of bool) or a copy; a bool pair would be
     * a bool bmm, which PyTorch's CPU refuses too */
    if (dt == OPS_BOOL && num_ops > 1)
        return ops_fail_null(OPS_ERR_DTYPE,
                             "einsum(): bool operands are supported for a single operand only (sums give int64); "
                             "got %lld bool operands (convert them to an integer dtype first)",
                             (long long)num_ops);

    /* ---- parse the operands' subscripts ---- */
    const char *arrow = strstr(equation, "->");
    const size_t lhs_len = arrow ? (size_t)(arrow - equation) : strlen(equation);
    int64_t curr = 0;
    bool found_ell = false;
    memset(ops_l, 0, sizeof(ein_operand) * (size_t)num_ops);
    for (size_t i = 0; i < lhs_len; i++) {
        const unsigned char c = (unsigned char)equation[i];
        if (c == ' ')
            continue;
        if (c == '.') {
            if (found_ell)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "einsum(): found '.' for operand %lld for which an ellipsis was already found",
                                     (long long)curr);
            if (!(i + 2 < lhs_len && equation[i + 1] == '.' && equation[i + 2] == '.'))
                return ops_fail_null(OPS_ERR_VALUE, "einsum(): found '.' for operand %lld that is not part of any "
                                                    "ellipsis",
                                     (long long)curr);
            i += 2;
            found_ell = true;
            if (ops_l[curr].nlabels > OPS_MAX_DIMS)
                return ops_fail_null(OPS_ERR_VALUE, "einsum(): too many subscripts for operand %lld",
                                     (long long)curr);
            ops_l[curr].labels[ops_l[curr].nlabels++] = EIN_ELLIPSIS;
            ops_l[curr].has_ell = true;
            continue;
        }
        if (c == ',') {
            if (++curr >= num_ops)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "einsum(): fewer operands were provided than specified in the equation");
            found_ell = false;
            continue;
        }
        const int s = ein_label_index(c);
        if (s < 0)
            return ops_fail_null(OPS_ERR_VALUE,
                                 "einsum(): invalid subscript given at index %zu in the equation string, subscripts "
                                 "must be in [a-zA-Z]",
                                 i);
        if (ops_l[curr].nlabels > OPS_MAX_DIMS)
            return ops_fail_null(OPS_ERR_VALUE, "einsum(): too many subscripts for operand %lld", (long long)curr);
        ops_l[curr].labels[ops_l[curr].nlabels++] = s;
    }
    if (curr != num_ops - 1)
        return ops_fail_null(OPS_ERR_VALUE, "einsum(): more operands were provided than specified in the equation");

    /* label counts and the dims the ellipsis covers */
    int label_count[EIN_LABELS] = {0};
    int64_t ell_num_dim = 0;
    for (int64_t i = 0; i < num_ops; i++) {
        const int64_t ndims = tensors.data[i]->ndim;
        int64_t nl = ops_l[i].nlabels;
        for (int j = 0; j < ops_l[i].nlabels; j++) {
            if (ops_l[i].labels[j] == EIN_ELLIPSIS)
                nl--;
            else
                label_count[ops_l[i].labels[j]]++;
        }
        if (ops_l[i].has_ell && ndims - nl > ell_num_dim)
            ell_num_dim = ndims - nl;
        if (ops_l[i].has_ell ? nl > ndims : nl != ndims)
            return ops_fail_null(OPS_ERR_SHAPE,
                                 "einsum(): the number of subscripts in the equation (%lld) does not match the number "
                                 "of dimensions (%lld) for operand %lld%s",
                                 (long long)nl, (long long)ndims, (long long)i,
                                 ops_l[i].has_ell ? "" : " and no ellipsis was given");
    }

    /* ---- positions in the permuted space: output dims, then contraction dims ---- */
    int64_t label_perm[EIN_LABELS];
    for (int s = 0; s < EIN_LABELS; s++)
        label_perm[s] = -1;
    int64_t perm_index = 0, ell_index = 0;
    found_ell = false;
    if (arrow == NULL) {
        perm_index = ell_num_dim;
        found_ell = true;
        for (int s = 0; s < EIN_LABELS; s++)
            if (label_count[s] == 1)
                label_perm[s] = perm_index++;
    } else {
        const char *rhs = arrow + 2;
        const size_t rlen = strlen(rhs);
        for (size_t i = 0; i < rlen; i++) {
            const unsigned char c = (unsigned char)rhs[i];
            if (c == ' ')
                continue;
            if (c == '.') {
                if (found_ell)
                    return ops_fail_null(OPS_ERR_VALUE, "einsum(): found '.' for output but an ellipsis (...) was "
                                                        "already found");
                if (!(i + 2 < rlen && rhs[i + 1] == '.' && rhs[i + 2] == '.'))
                    return ops_fail_null(OPS_ERR_VALUE,
                                         "einsum(): found '.' for output that is not part of any ellipsis (...)");
                i += 2;
                ell_index = perm_index;
                perm_index += ell_num_dim;
                found_ell = true;
                continue;
            }
            const int s = ein_label_index(c);
            if (s < 0)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "einsum(): invalid subscript given at index %zu in the equation string, "
                                     "subscripts must be in [a-zA-Z]",
                                     lhs_len + 2 + i);
            if (!(label_count[s] > 0 && label_perm[s] == -1))
                return ops_fail_null(OPS_ERR_VALUE, "einsum(): output subscript %c %s", c,
                                     label_perm[s] > -1 ? "appears more than once in the output"
                                                        : "does not appear in the equation for any input operand");
            label_perm[s] = perm_index++;
        }
    }
    const int64_t out_num_dim = perm_index;
    if (!found_ell) {
        ell_index = perm_index;
        perm_index += ell_num_dim;
    }
    for (int s = 0; s < EIN_LABELS; s++)
        if (label_count[s] > 0 && label_perm[s] == -1)
            label_perm[s] = perm_index++;
    if (perm_index > OPS_MAX_DIMS)
        return ops_fail_null(OPS_ERR_VALUE, "einsum(): the equation has %lld distinct dimensions (at most %d)",
                             (long long)perm_index, OPS_MAX_DIMS);
    const int np = (int)perm_index;

    /* ---- each operand as a view over the permuted space ---- */
    int64_t label_size[EIN_LABELS], ell_sizes[OPS_MAX_DIMS];
    int64_t dim_counts[OPS_MAX_DIMS] = {0};
    for (int s = 0; s < EIN_LABELS; s++)
        label_size[s] = 1;
    for (int j = 0; j < OPS_MAX_DIMS; j++)
        ell_sizes[j] = 1;
    int64_t vsz[EIN_MAX_OPERANDS][OPS_MAX_DIMS], vst[EIN_MAX_OPERANDS][OPS_MAX_DIMS];
    for (int64_t i = 0; i < num_ops; i++) {
        const ops_tensor *t = tensors.data[i];
        bool set[OPS_MAX_DIMS] = {false};
        for (int p = 0; p < np; p++)
            vsz[i][p] = 1, vst[i][p] = 0;
        int dim = 0;
        for (int j = 0; j < ops_l[i].nlabels; j++) {
            const int s = ops_l[i].labels[j];
            if (s == EIN_ELLIPSIS) {
                const int64_t nd = t->ndim - (ops_l[i].nlabels - 1);
                for (int64_t e = ell_num_dim - nd; e < ell_num_dim; e++, dim++) {
                    const int64_t sz = t->sizes[dim];
                    if (sz != 1) {
                        if (!(ell_sizes[e] == 1 || ell_sizes[e] == sz))
                            return ops_fail_null(OPS_ERR_SHAPE,
                                                 "einsum(): operands do not broadcast with remapped shapes: the "
                                                 "ellipsis dimension of size %lld of operand %lld does not "
                                                 "broadcast with size %lld",
                                                 (long long)sz, (long long)i, (long long)ell_sizes[e]);
                        ell_sizes[e] = sz;
                        dim_counts[ell_index + e]++;
                    }
                    vsz[i][ell_index + e] = sz;
                    vst[i][ell_index + e] = t->strides[dim];
                    set[ell_index + e] = true;
                }
                continue;
            }
            const int64_t p = label_perm[s], sz = t->sizes[dim];
            if (!set[p]) {
                if (sz != 1) {
                    if (!(label_size[s] == 1 || label_size[s] == sz))
                        return ops_fail_null(OPS_ERR_SHAPE,
                                             "einsum(): subscript %c has size %lld for operand %lld which does not "
                                             "broadcast with previously seen size %lld",
                                             ein_label_char(s), (long long)sz, (long long)i,
                                             (long long)label_size[s]);
                    label_size[s] = sz;
                    dim_counts[p]++;
                }
                vsz[i][p] = sz;
                vst[i][p] = t->strides[dim];
                set[p] = true;
            } else {
                /* a repeated label: the diagonal of the two dims */
                if (sz != vsz[i][p])
                    return ops_fail_null(OPS_ERR_SHAPE,
                                         "einsum(): subscript %c is repeated for operand %lld but the sizes don't "
                                         "match, %lld != %lld",
                                         ein_label_char(s), (long long)i, (long long)sz, (long long)vsz[i][p]);
                vst[i][p] += t->strides[dim];
            }
            dim++;
        }
    }

    /* ---- the contraction order ---- */
    int64_t steps[2 * EIN_MAX_OPERANDS];
    const int64_t nsteps = num_ops - 1;
    if (path != NULL) {
        if (path->len != 2 * nsteps)
            return ops_fail_null(OPS_ERR_VALUE,
                                 "einsum(): path must have 2 * (number of operands - 1) = %lld entries, but got %lld",
                                 (long long)(2 * nsteps), (long long)path->len);
        for (int64_t s = 0; s < nsteps; s++) {
            const int64_t left = num_ops - s; /* operands in the list at step s */
            const int64_t x = path->data[2 * s], y = path->data[2 * s + 1];
            if (x < 0 || y < 0 || x >= left || y >= left || x == y)
                return ops_fail_null(OPS_ERR_VALUE,
                                     "einsum(): path step %lld names operands (%lld, %lld), but they must be two "
                                     "different indices into the %lld operands left",
                                     (long long)s, (long long)x, (long long)y, (long long)left);
            steps[2 * s] = x;
            steps[2 * s + 1] = y;
        }
    }

    /* ---- compute ---- */
    /* an empty dim anywhere: zeros of the operands' dtype, never summed (PyTorch 1.13) */
    for (int p = 0; p < np; p++) {
        bool empty = false;
        for (int64_t i = 0; i < num_ops; i++)
            empty = empty || vsz[i][p] == 0;
        if (!empty)
            continue;
        int64_t osz[OPS_MAX_DIMS];
        for (int q = 0; q < (int)out_num_dim; q++) {
            osz[q] = 1;
            for (int64_t i = 0; i < num_ops; i++)
                if (vsz[i][q] != 1)
                    osz[q] = vsz[i][q];
        }
        return ops_zeros((ops_int_list){osz, out_num_dim}, dt, ops_tensor_device(tensors.data[0]));
    }
    /* sum's dtype for an integer operand (the sums below) */
    const ops_dtype sum_dt = ops_dtype_is_integral(dt, true) ? OPS_INT64 : dt;
    for (int64_t i = 0; i < num_ops; i++) {
        cur[i] = ops_tensor_new_view(tensors.data[i], np, vsz[i], vst[i], tensors.data[i]->offset);
        if (cur[i] == NULL)
            goto done;
        ncur++;
    }
    if (num_ops == 1) {
        const ops_tensor *v = cur[0];
        ops_tensor *out_view = NULL;
        if (np > out_num_dim) {
            int64_t dims[OPS_MAX_DIMS];
            for (int p = (int)out_num_dim; p < np; p++)
                dims[p - out_num_dim] = p;
            const ops_int_list dl = {dims, np - out_num_dim};
            result = ops_sum_dim(v, &dl, false, sum_dt);
        } else {
            /* a fresh copy, never a view of the input */
            out_view = ops_tensor_new_view(v, (int)out_num_dim, v->sizes, v->strides, v->offset);
            if (out_view != NULL)
                result = ops_clone(out_view, OPS_MEMORY_FORMAT_NONE);
            ops_tensor_release(out_view);
        }
        goto done;
    }
    for (int64_t s = 0; s < nsteps; s++) {
        /* the pair: (0, 1) left to right, the result in front; or path's, at the end */
        int64_t x = 0, y = 1;
        if (path != NULL)
            x = steps[2 * s], y = steps[2 * s + 1];
        ops_tensor *a = cur[x], *b = cur[y];
        const int64_t lo = x < y ? x : y, hi = x < y ? y : x;
        for (int64_t k = hi; k + 1 < ncur; k++)
            cur[k] = cur[k + 1];
        for (int64_t k = lo; k + 1 < ncur - 1; k++)
            cur[k] = cur[k + 1];
        ncur -= 2;
        bool sum_ab[OPS_MAX_DIMS] = {false}, sum_a[OPS_MAX_DIMS] = {false}, sum_b[OPS_MAX_DIMS] = {false};
        bool any_a = false, any_b = false;
        for (int p = (int)out_num_dim; p < np; p++) {
            const bool na = a->sizes[p] != 1, nb = b->sizes[p] != 1;
            if (na && nb) {
                if (--dim_counts[p] == 1) {
                    sum_ab[p] = true;
                    dim_counts[p] = 0;
                }
            } else if (dim_counts[p] == 1) {
                if (na) {
                    sum_a[p] = any_a = true;
                    dim_counts[p] = 0;
                } else if (nb) {
                    sum_b[p] = any_b = true;
                    dim_counts[p] = 0;
                }
            }
        }
        ops_tensor *r = NULL, *sa = NULL, *sb = NULL;
        /* a summed side (or an earlier pair's promoted result) makes the pair int64 */
        const ops_dtype pdt = (any_a || any_b || a->dtype != b->dtype) ? sum_dt : dt;
        if (any_a)
            sa = ein_sum_keep(a, sum_a, pdt);
        else if (a->dtype != pdt)
            sa = ops_to_dtype(a, pdt, false, false, OPS_MEMORY_FORMAT_NONE);
        if ((any_a || a->dtype != pdt) && sa == NULL)
            goto pair_done;
        if (any_b)
            sb = ein_sum_keep(b, sum_b, pdt);
        else if (b->dtype != pdt)
            sb = ops_to_dtype(b, pdt, false, false, OPS_MEMORY_FORMAT_NONE);
        if ((any_b || b->dtype != pdt) && sb == NULL)
            goto pair_done;
        r = ein_pair(sa ? sa : a, sb ? sb : b, np, sum_ab);
    pair_done:
        ops_tensor_release(sa);
        ops_tensor_release(sb);
        ops_tensor_release(a);
        ops_tensor_release(b);
        if (r == NULL)
            goto done;
        if (path != NULL) {
            cur[ncur++] = r;
        } else {
            for (int64_t k = ncur; k > 0; k--)
                cur[k] = cur[k - 1];
            cur[0] = r;
            ncur++;
        }
    }
    {
        /* what is left: the output dims, then contraction dims that are all size 1 now */
        const ops_tensor *v = cur[0];
        ops_tensor *out_view = ops_tensor_new_view(v, (int)out_num_dim, v->sizes, v->strides, v->offset);
        if (out_view != NULL)
            result = ops_contiguous(out_view, OPS_CONTIGUOUS_FORMAT);
        ops_tensor_release(out_view);
    }
done:
    for (int k = 0; k < ncur; k++)
        ops_tensor_release(cur[k]);
    return result;
}
