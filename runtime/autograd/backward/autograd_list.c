/* Autograd support for Tensor[] arguments (codegen/gen_autograd.py, docs/autograd.md):
 * saving a Tensor[] / Tensor?[] input element by element (each with its version),
 * keeping the shapes of a list's elements, and the list backward helpers the formulas
 * of ops/derivatives.yaml call: cat_tensors_backward (cat, hstack, vstack) and
 * index_backward (index.Tensor).
 *
 * The helpers are written with public ops (ops_narrow, ops_reshape, ops_zeros,
 * ops_index_put), so that a backward pass run under create_graph records them and is
 * itself differentiable. */
#include <inttypes.h>
#include <string.h>

#include "ops_autograd_impl.h"

#if __has_include("ops_functions.h")
#include "ops_op_add.h"
#include "ops_op_cat.h"
#include "ops_op_einsum.h"
#include "ops_op_eye.h"
#include "ops_op_index_put.h"
#include "ops_op_narrow.h"
#include "ops_op_ones.h"
#include "ops_op_reshape.h"
#include "ops_op_zeros.h"
#endif

ops_status
ops_ag_saved_list_save(ops_saved_tensor **dst, ops_tensor_list l, const char *op)
{
    *dst = NULL;
    if (l.len <= 0)
        return OPS_OK;
    ops_saved_tensor *s = ops_host_malloc_array(l.len, sizeof *s);
    if (s == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory saving a Tensor[] for backward", op);
    memset(s, 0, (size_t)l.len * sizeof *s);
    *dst = s; /* the node owns it from here: its release frees what was saved */
    for (int64_t i = 0; i < l.len; i++) {
        ops_status st = ops_saved_save(&s[i], l.data[i], false);
        if (st != OPS_OK)
            return st;
    }
    return OPS_OK;
}

ops_status
ops_ag_saved_list_unpack(ops_saved_tensor *s, int64_t n, ops_node *owner, ops_tensor ***out)
{
    *out = NULL;
    if (owner->released) { /* ops_saved_unpack's freed-graph error */
        ops_saved_tensor none = {0};
        ops_tensor *t = NULL;
        return ops_saved_unpack(&none, owner, &t);
    }
    if (n <= 0)
        return OPS_OK;
    ops_tensor **a = ops_host_malloc_array(n, sizeof *a);
    if (a == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory unpacking a saved Tensor[]", owner->vt->name);
    memset(a, 0, (size_t)n * sizeof *a);
    for (int64_t i = 0; i < n; i++) {
        ops_status st = ops_saved_unpack(&s[i], owner, &a[i]);
        if (st != OPS_OK) {
            ops_ag_tensor_array_release(a, n);
            return st;
        }
    }
    *out = a;
    return OPS_OK;
}

void
ops_ag_saved_list_release(ops_saved_tensor **s, int64_t n)
{
    if (*s == NULL)
        return;
    for (int64_t i = 0; i < n; i++)
        ops_saved_release(&(*s)[i]);
    ops_host_free(*s);
    *s = NULL;
}

void
ops_ag_tensor_array_release(ops_tensor **a, int64_t n)
{
    if (a == NULL)
        return;
    for (int64_t i = 0; i < n; i++)
        ops_tensor_release(a[i]);
    ops_host_free(a);
}

ops_status
ops_ag_list_meta_save(ops_grad_meta **dst, ops_tensor_list l, const char *op)
{
    *dst = NULL;
    if (l.len <= 0)
        return OPS_OK;
    ops_grad_meta *m = ops_host_malloc_array(l.len, sizeof *m);
    if (m == NULL)
        return ops_fail(OPS_ERR_OOM, "%s: out of memory saving the shapes of a Tensor[] for backward", op);
    memset(m, 0, (size_t)l.len * sizeof *m);
    for (int64_t i = 0; i < l.len; i++) {
        const ops_tensor *t = l.data[i];
        if (t == NULL)
            continue; /* a None of a Tensor?[]: ndim 0, never read */
        m[i].ndim = (int32_t)ops_tensor_ndim(t);
        m[i].dtype = ops_tensor_dtype(t);
        m[i].device = ops_tensor_device(t);
        for (int d = 0; d < m[i].ndim; d++)
            m[i].sizes[d] = ops_tensor_size(t, d);
    }
    *dst = m;
    return OPS_OK;
}

void
ops_ag_list_meta_free(ops_grad_meta **m)
{
    ops_host_free(*m);
    *m = NULL;
}

ops_status
ops_autograd_cat_tensors_backward(const ops_tensor *g, int64_t n, const ops_grad_meta *metas, int64_t dim,
                                  int64_t min_ndim, ops_tensor_vec *out)
{
    const char *op = "cat_tensors_backward";
    ops_tensor_vec v = {NULL, 0};
    ops_status st = ops_tensor_vec_init(op, &v, n);
    if (st != OPS_OK)
        return st;
    const int gnd = (int)ops_tensor_ndim(g);
    int64_t d = dim;
    if (!ops_wrap_dim(op, "dim", &d, gnd)) {
        st = ops_last_status();
        goto fail;
    }
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        const ops_grad_meta *m = &metas[i];
        int64_t len;
        if (m->ndim == 1 && m->sizes[0] == 0 && gnd != 1) {
            len = 0; /* cat skips a legacy empty [0] input whatever the others' rank */
        } else {
            /* the element as the op saw it: leading 1s up to min_ndim (atleast_1d/2d) */
            const int64_t pad = min_ndim > m->ndim ? min_ndim - m->ndim : 0;
            len = d < pad ? 1 : m->sizes[d - pad];
        }
        ops_tensor *piece = ops_narrow(g, d, start, len);
        if (piece == NULL) {
            st = ops_last_status();
            goto fail;
        }
        start += len;
        v.data[i] = ops_reshape(piece, (ops_int_list){m->sizes, m->ndim});
        ops_tensor_release(piece);
        if (v.data[i] == NULL) {
            st = ops_last_status();
            goto fail;
        }
    }
    *out = v;
    return OPS_OK;
fail:
    ops_tensor_vec_release(&v);
    return st;
}

ops_tensor *
ops_autograd_index_backward(const ops_tensor *g, int ndim, const int64_t *sizes, ops_tensor_list indices)
{
    /* zeros of self's shape in the gradient's dtype and device, with the gradient
     * added where self was read (a repeated index gets the sum) */
    ops_tensor *z = ops_zeros((ops_int_list){sizes, ndim}, ops_tensor_dtype(g), ops_tensor_device(g));
    if (z == NULL)
        return NULL;
    ops_tensor *r = ops_index_put(z, indices, g, true);
    ops_tensor_release(z);
    return r;
}

/* A zero block of the gradient's dtype and device: sizes with dim set to len. */
static ops_tensor *
zero_block(const ops_tensor *g, int ndim, const int64_t *sizes, int64_t dim, int64_t len)
{
    int64_t s[OPS_MAX_DIMS];
    memcpy(s, sizes, (size_t)ndim * sizeof *s);
    s[dim] = len;
    return ops_zeros((ops_int_list){s, ndim}, ops_tensor_dtype(g), ops_tensor_device(g));
}

ops_tensor *
ops_autograd_tensor_split_tensor_backward(ops_tensor_list grads, int ndim, const int64_t *sizes,
                                          const ops_tensor *tios, int64_t dim)
{
    /* the forward checked tios (an int64 CPU tensor of 0 or 1 dims) */
    const int64_t *data = ops_tensor_data_ptr(tios);
    if (tios->ndim == 0) {
        /* sections: the pieces tile dim in order, so the gradient is their concatenation */
        int64_t d = dim;
        if (!ops_wrap_dim("tensor_split_backward", "dim", &d, ndim))
            return NULL;
        return ops_cat(grads, d);
    }
    const int64_t n = tios->sizes[0];
    int64_t *ix = ops_host_malloc_array(n > 0 ? n : 1, sizeof *ix);
    if (ix == NULL)
        return ops_fail_null(OPS_ERR_OOM, "tensor_split_backward: out of memory for %lld indices", (long long)n);
    for (int64_t i = 0; i < n; i++)
        ix[i] = data[i * tios->strides[0]];
    ops_tensor *r = ops_autograd_tensor_split_backward(grads, ndim, sizes, (ops_int_list){ix, n}, dim);
    ops_host_free(ix);
    return r;
}

ops_tensor *
ops_autograd_tensor_split_backward(ops_tensor_list grads, int ndim, const int64_t *sizes, ops_int_list indices,
                                   int64_t dim)
{
    const char *op = "tensor_split_backward";
    int64_t d = dim;
    if (!ops_wrap_dim(op, "dim", &d, ndim))
        return NULL;
    if (grads.len != indices.len + 1)
        return ops_fail_null(OPS_ERR_VALUE, "%s: %lld gradients for %lld pieces", op, (long long)grads.len,
                             (long long)(indices.len + 1));
    const int64_t size = sizes[d];
    ops_tensor *sum = NULL;
    int64_t prev = 0;
    for (int64_t i = 0; i < grads.len; i++) {
        /* piece i's bounds, as tensor_split (runtime/core/split.c) cut them */
        int64_t end = i < indices.len ? indices.data[i] : size;
        if (end < 0)
            end += size;
        end = end < 0 ? 0 : (end > size ? size : end);
        const int64_t start = prev, len = end > start ? end - start : 0;
        prev = end;
        /* the piece's gradient padded with zeros to self's shape: zeros(start), g, zeros(rest) */
        ops_tensor *parts[3] = {NULL, NULL, NULL};
        ops_tensor *padded = NULL;
        int np = 0;
        bool ok = true;
        if (start > 0)
            ok = (parts[np++] = zero_block(grads.data[i], ndim, sizes, d, start)) != NULL;
        parts[np++] = ops_tensor_retain(grads.data[i]);
        if (ok && size - start - len > 0)
            ok = (parts[np++] = zero_block(grads.data[i], ndim, sizes, d, size - start - len)) != NULL;
        if (ok)
            padded = ops_cat((ops_tensor_list){(const ops_tensor *const *)parts, np}, d);
        for (int k = 0; k < np; k++)
            ops_tensor_release(parts[k]);
        if (padded == NULL) {
            ops_tensor_release(sum);
            return NULL;
        }
        if (sum == NULL) {
            sum = padded;
            continue;
        }
        ops_tensor *next = ops_add(sum, padded, OPS_SCALAR_INT(1));
        ops_tensor_release(sum);
        ops_tensor_release(padded);
        if (next == NULL)
            return NULL;
        sum = next;
    }
    return sum;
}

/* ---- einsum ----------------------------------------------------------------------- */

enum { EINSUM_MAX_OPS = 32, EINSUM_LABELS = 64 };

typedef struct {
    int n;                                       /* operands */
    char labels[EINSUM_MAX_OPS][OPS_MAX_DIMS + 1]; /* one letter per dim, "..." spelled out */
    char out[OPS_MAX_DIMS + 1];
    bool used[128];                              /* letters taken */
} einsum_eq;

static bool
is_label(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A letter the equation does not use (marked used), or 0 when none is left. */
static char
fresh_label(einsum_eq *q)
{
    for (char c = 'A'; c <= 'z'; c++) {
        if (is_label(c) && !q->used[(int)c]) {
            q->used[(int)c] = true;
            return c;
        }
    }
    return 0;
}

/* Parses the equation (einsum already accepted it for these operands) into one letter
 * per dim of every operand and of the output, the dims an ellipsis covers named by
 * fresh letters aligned to the right. */
static ops_status
einsum_parse(const char *op, const char *equation, ops_tensor_list tensors, einsum_eq *q)
{
    char eq[512];
    size_t len = 0;
    memset(q, 0, sizeof *q);
    for (const char *p = equation; *p; p++) {
        if (*p == ' ')
            continue;
        if (len + 1 >= sizeof eq)
            return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: the equation is too long", op);
        eq[len++] = *p;
        if (is_label(*p))
            q->used[(int)*p] = true;
    }
    eq[len] = '\0';
    if (tensors.len > EINSUM_MAX_OPS)
        return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: at most %d operands", op, EINSUM_MAX_OPS);
    char *arrow = strstr(eq, "->");
    if (arrow != NULL)
        *arrow = '\0';
    /* the operands' subscripts and the ellipsis rank */
    const char *subs[EINSUM_MAX_OPS];
    int n = 0;
    for (char *p = eq;; p++) {
        subs[n++] = p;
        p = strchr(p, ',');
        if (p == NULL || n == EINSUM_MAX_OPS)
            break;
        *p = '\0';
    }
    if (n != tensors.len)
        return ops_fail(OPS_ERR_VALUE, "%s: the equation names %d operands for %lld tensors", op, n,
                        (long long)tensors.len);
    q->n = n;
    int ell = 0, ranks[EINSUM_MAX_OPS];
    for (int i = 0; i < n; i++) {
        int letters = 0;
        for (const char *p = subs[i]; *p; p++)
            letters += is_label(*p);
        ranks[i] = (int)ops_tensor_ndim(tensors.data[i]) - letters;
        if (strstr(subs[i], "...") != NULL && ranks[i] > ell)
            ell = ranks[i];
    }
    char ell_labels[OPS_MAX_DIMS];
    for (int k = 0; k < ell; k++)
        if ((ell_labels[k] = fresh_label(q)) == 0)
            return ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: too many subscripts", op);
    int count[128] = {0};
    for (int i = 0; i < n; i++) {
        int d = 0;
        for (const char *p = subs[i]; *p; p++) {
            if (*p == '.') {
                for (int k = ell - ranks[i]; k < ell; k++)
                    q->labels[i][d++] = ell_labels[k];
                p += 2;
            } else {
                q->labels[i][d++] = *p;
                count[(int)*p]++;
            }
        }
        q->labels[i][d] = '\0';
    }
    int d = 0;
    if (arrow != NULL) {
        for (const char *p = arrow + 2; *p; p++) {
            if (*p == '.') {
                for (int k = 0; k < ell; k++)
                    q->out[d++] = ell_labels[k];
                p += 2;
            } else {
                q->out[d++] = *p;
            }
        }
    } else { /* implicit: the ellipsis, then the letters seen once, in ASCII order */
        for (int k = 0; k < ell; k++)
            q->out[d++] = ell_labels[k];
        for (int c = 'A'; c <= 'z'; c++)
            if (is_label((char)c) && count[c] == 1)
                q->out[d++] = (char)c;
    }
    q->out[d] = '\0';
    return OPS_OK;
}

/* The size of letter c in operand i (c occurs there). */
static int64_t
label_size(const einsum_eq *q, ops_tensor_list tensors, int i, char c)
{
    return ops_tensor_size(tensors.data[i], (int)(strchr(q->labels[i], c) - q->labels[i]));
}

/* The gradient of operand i: grad contracted with the other operands into operand i's
 * letters (an einsum itself), a repeated letter (a diagonal) spread with an identity
 * matrix, a letter only operand i has (summed inside it) broadcast with a vector of
 * ones, and dims the operand broadcast summed back (reduce_to). */
static ops_tensor *
einsum_grad_one(const char *op, const ops_tensor *g, const einsum_eq *q0, ops_tensor_list tensors, int i)
{
    einsum_eq q = *q0; /* fresh letters are taken from a copy */
    const ops_tensor *ops_in[2 * EINSUM_MAX_OPS + OPS_MAX_DIMS];
    ops_tensor *made[2 * OPS_MAX_DIMS] = {0};
    int nin = 0, nmade = 0;
    char eq[1024];
    size_t used = 0;
    int64_t present[128]; /* largest size of each letter among the einsum's operands; -1: absent */
    ops_tensor *h = NULL, *r = NULL;
    const ops_dtype dt = ops_tensor_dtype(g);
    const ops_device dev = ops_tensor_device(g);

    for (int c = 0; c < 128; c++)
        present[c] = -1;
    used += (size_t)snprintf(eq + used, sizeof eq - used, "%s", q.out);
    ops_in[nin++] = g;
    for (int d = 0; q.out[d]; d++)
        present[(int)q.out[d]] = ops_tensor_size(g, d) > present[(int)q.out[d]] ? ops_tensor_size(g, d)
                                                                                 : present[(int)q.out[d]];
    for (int j = 0; j < q.n; j++) {
        if (j == i)
            continue;
        used += (size_t)snprintf(eq + used, sizeof eq - used, ",%s", q.labels[j]);
        ops_in[nin++] = tensors.data[j];
        for (int d = 0; q.labels[j][d]; d++) {
            const int64_t sz = ops_tensor_size(tensors.data[j], d);
            const int c = q.labels[j][d];
            present[c] = sz > present[c] ? sz : present[c];
        }
    }
    char out_i[OPS_MAX_DIMS + 1];
    const char *li = q.labels[i];
    const int nd = (int)strlen(li);
    for (int p = 0; p < nd; p++) {
        const char c = li[p];
        if (memchr(li, c, (size_t)p) == NULL) {
            out_i[p] = c;
            continue;
        }
        /* a repeated letter: its own letter in the gradient, tied to c by eye */
        const char f = fresh_label(&q);
        if (f == 0) {
            ops_fail(OPS_ERR_NOT_IMPLEMENTED, "%s: too many subscripts", op);
            goto done;
        }
        out_i[p] = f;
        ops_tensor *e = ops_eye(ops_tensor_size(tensors.data[i], p), dt, dev);
        if (e == NULL)
            goto done;
        made[nmade++] = e;
        ops_in[nin++] = e;
        used += (size_t)snprintf(eq + used, sizeof eq - used, ",%c%c", c, f);
        present[(int)c] = ops_tensor_size(tensors.data[i], p);
    }
    out_i[nd] = '\0';
    for (int p = 0; p < nd; p++) {
        const char c = li[p];
        const int64_t size = label_size(&q, tensors, i, c);
        if (memchr(li, c, (size_t)p) != NULL || present[(int)c] >= size)
            continue;
        /* a letter summed inside operand i only, or seen elsewhere only with size 1
         * (broadcast): the gradient is the same along it, and of operand i's size */
        ops_tensor *o = ops_ones((ops_int_list){&size, 1}, dt, dev);
        if (o == NULL)
            goto done;
        made[nmade++] = o;
        ops_in[nin++] = o;
        used += (size_t)snprintf(eq + used, sizeof eq - used, ",%c", c);
        present[(int)c] = size;
    }
    snprintf(eq + used, sizeof eq - used, "->%s", out_i);
    h = ops_einsum(eq, (ops_tensor_list){ops_in, nin}, NULL);
    if (h == NULL)
        goto done;
    r = ops_autograd_reduce_to(h, (int)ops_tensor_ndim(tensors.data[i]), ops_tensor_sizes(tensors.data[i]));
done:
    ops_tensor_release(h);
    for (int k = 0; k < nmade; k++)
        ops_tensor_release(made[k]);
    return r;
}

ops_status
ops_autograd_einsum_backward(const ops_tensor *g, const char *equation, ops_tensor_list tensors, ops_tensor_vec *out)
{
    const char *op = "einsum_backward";
    einsum_eq q;
    ops_status st = einsum_parse(op, equation, tensors, &q);
    if (st != OPS_OK)
        return st;
    ops_tensor_vec v = {NULL, 0};
    if ((st = ops_tensor_vec_init(op, &v, tensors.len)) != OPS_OK)
        return st;
    for (int i = 0; i < q.n; i++) {
        if ((v.data[i] = einsum_grad_one(op, g, &q, tensors, i)) == NULL) {
            st = ops_last_status();
            ops_tensor_vec_release(&v);
            return st;
        }
    }
    *out = v;
    return OPS_OK;
}
