// Sorting on CUDA: the lines of sort (and its stable overloads), argsort, msort, topk
// and kthvalue (the stub sort_order_lines; their driver is kernels/sort.c), and the loops
// of _unique2, unique, unique_dim and unique_consecutive (the stubs unique_flat_loop and
// unique_rows_loop, ports of kernels/cpu/sort_unique.c; their driver is kernels/unique.c).
//
// The order is the CPU's: each element becomes a pair (key, position) with the
// order-preserving key of ops_index_math.h (NaN largest, -0.0 equal to +0.0;
// inverted for descending, so NaN comes first there), and pairs compare by key, then
// position.  That is a total order (positions differ), so any correct sort of the
// pairs yields the stable sort's result: ties keep input order, topk's ties go to the
// lower index, kthvalue picks the stable sort's k-th element.
//
// A line (the elements along dim; all of self, flattened, for unique) is sorted in
// two steps: chunks of up to SORT_CHUNK pairs by a bitonic network in shared memory,
// one block each; then merge passes that double the sorted run length, each thread
// placing one pair by binary search in the other run (its rank there plus its rank in
// its own run is its place; distinct pairs make the places unique).  topk and
// kthvalue read the first k / the k-th pair of the sorted line.  Values are copied
// from the input elements (never rebuilt from keys), so NaN payloads survive.
// unique along a dim sorts slices as rows lexicographically: one stable sort per
// column, last column first (LSD), each keyed by the column and the rank so far.
#include "index_cuda.cuh"
#include "kernels/sort.h"
#include "kernels/unique.h"

// Pairs a chunk sort takes at most (a power of two; shared memory 16 bytes each), and
// its threads at most (each runs up to SORT_CHUNK / 2 / SORT_THREADS comparators per
// step: fewer threads, fewer barriers to pass).
#define SORT_CHUNK 1024
#define SORT_THREADS 128

struct sort_pair_less {
    __device__ static bool lt(uint64_t ka, int64_t pa, uint64_t kb, int64_t pb)
    {
        return ka < kb || (ka == kb && pa < pb);
    }
};

// keys/pos of element j of line l: the element at (lg.off(l) + eg.off(j)) of src.
__global__ void
sort_keys_kernel(const char *src, ops_dtype dt, int isz, ixc_geom lg, ixc_geom eg, int64_t len, int64_t n,
                 uint64_t inv, uint64_t *keys, int64_t *pos)
{
    IXC_FOR(e, n)
    {
        const int64_t l = e / len, j = e % len;
        keys[e] = ops_ix_key_at(dt, src + (ixc_off(lg, l) + ixc_off(eg, j)) * isz) ^ inv;
        pos[e] = j;
    }
}

// Sorts the chunk blockIdx.x of its line (ch pairs, a power of two, padded with
// pairs larger than any real one) with a bitonic network: one comparator per thread
// per step.
__global__ void
sort_chunk_kernel(uint64_t *keys, int64_t *pos, int64_t len, int64_t chunks, int64_t ch)
{
    OPS_SHARED_DYNAMIC(unsigned char, smem);
    uint64_t *const sk = (uint64_t *)smem;
    int64_t *const sp = (int64_t *)(smem + ch * sizeof(uint64_t));
    const int64_t l = blockIdx.x / chunks, c = blockIdx.x % chunks;
    const int64_t start = l * len + c * ch, m = len - c * ch < ch ? len - c * ch : ch;
    for (int64_t t = threadIdx.x; t < ch; t += blockDim.x) {
        sk[t] = t < m ? keys[start + t] : ~0ull;
        sp[t] = t < m ? pos[start + t] : INT64_MAX;
    }
    __syncthreads();
    for (int64_t k = 2; k <= ch; k <<= 1)
        for (int64_t j = k >> 1; j > 0; j >>= 1) {
            for (int64_t t = threadIdx.x; t < ch / 2; t += blockDim.x) {
                const int64_t i = 2 * j * (t / j) + t % j, q = i + j;
                const bool up = (i & k) == 0;
                const bool swap = up ? sort_pair_less::lt(sk[q], sp[q], sk[i], sp[i])
                                     : sort_pair_less::lt(sk[i], sp[i], sk[q], sp[q]);
                if (swap) {
                    const uint64_t tk = sk[i];
                    const int64_t tp = sp[i];
                    sk[i] = sk[q], sp[i] = sp[q];
                    sk[q] = tk, sp[q] = tp;
                }
            }
            __syncthreads();
        }
    for (int64_t t = threadIdx.x; t < m; t += blockDim.x) {
        keys[start + t] = sk[t];
        pos[start + t] = sp[t];
    }
}

// Merges sorted runs of w pairs pairwise within each line (ki/pi -> ko/po).
__global__ void
sort_merge_kernel(const uint64_t *ki, const int64_t *pi, uint64_t *ko, int64_t *po, int64_t len, int64_t n,
                  int64_t w)
{
    IXC_FOR(e, n)
    {
        const int64_t l = e / len, j = e % len, base = l * len;
        const int64_t start = j / (2 * w) * (2 * w);
        const int64_t mid = start + w < len ? start + w : len, end = start + 2 * w < len ? start + 2 * w : len;
        const uint64_t k = ki[e];
        const int64_t p = pi[e];
        // the other run: [mid, end) for a pair of the first, [start, mid) otherwise
        int64_t lo = j < mid ? mid : start, hi = j < mid ? end : mid;
        const int64_t first = lo;
        while (lo < hi) {
            const int64_t m = lo + (hi - lo) / 2;
            if (sort_pair_less::lt(ki[base + m], pi[base + m], k, p))
                lo = m + 1;
            else
                hi = m;
        }
        const int64_t dst = j < mid ? j + (lo - first) : start + (j - mid) + (lo - first);
        ko[base + dst] = k;
        po[base + dst] = p;
    }
}

// Sorted (key, position) pairs, line after line, in keys()/pos().
struct sort_lines {
    ixc_buf k[2], p[2];
    int cur = 0;
    uint64_t *keys() const { return k[cur].as<uint64_t>(); }
    int64_t *pos() const { return p[cur].as<int64_t>(); }

    // Room for n pairs, on like's device.
    ops_status alloc(const char *op, const ops_tensor *like, int64_t n)
    {
        cur = 0;
        if ((k[0].t == NULL && !k[0].alloc(op, like, n, OPS_INT64)) ||
            (p[0].t == NULL && !p[0].alloc(op, like, n, OPS_INT64)))
            return ops_last_status();
        return OPS_OK;
    }

    // nlines lines of len elements of src (line l's element j at lg.off(l) +
    // eg.off(j)): their keys (inverted when desc) and positions, sorted when sort.
    ops_status run(const char *op, const ops_tensor *src, const ixc_geom &lg, const ixc_geom &eg, int64_t nlines,
                   int64_t len, bool desc, bool sort)
    {
        const int64_t n = nlines * len;
        if (alloc(op, src, n) != OPS_OK)
            return ops_last_status();
        if (n == 0)
            return OPS_OK;
        const ops_dtype dt = src->dtype;
        const uint64_t inv = desc ? ~0ull >> (64 - ops_ix_key_bits(dt)) : 0;
        IXC_LAUNCH(op, src, n, sort_keys_kernel, (const char *)ixc_ptr(src), dt, (int)ops_dtype_itemsize(dt), lg,
                   eg, len, n, inv, keys(), pos());
        return sort ? sort_pairs(op, src, nlines, len) : OPS_OK;
    }

    // Sorts the pairs in keys()/pos() (nlines lines of len) by (key, position).
    ops_status sort_pairs(const char *op, const ops_tensor *like, int64_t nlines, int64_t len)
    {
        const int64_t n = nlines * len;
        if (n == 0 || len < 2)
            return OPS_OK;
        int64_t ch = 2;
        while (ch < len && ch < SORT_CHUNK)
            ch <<= 1;
        const int64_t chunks = (len + ch - 1) / ch;
        const unsigned threads = (unsigned)(ch / 2 < SORT_THREADS ? ch / 2 : SORT_THREADS);
        OPS_LAUNCH_COOP(sort_chunk_kernel, (unsigned)(nlines * chunks), threads,
                        (size_t)ch * (sizeof(uint64_t) + sizeof(int64_t)), ixc_stream(like), keys(), pos(), len,
                        chunks, ch);
        OPS_CUDA_CHECK_LAUNCH(op);
        if (chunks > 1 && ((k[1].t == NULL && !k[1].alloc(op, like, n, OPS_INT64)) ||
                           (p[1].t == NULL && !p[1].alloc(op, like, n, OPS_INT64))))
            return ops_last_status();
        for (int64_t w = ch; w < len; w *= 2) {
            IXC_LAUNCH(op, like, n, sort_merge_kernel, (const uint64_t *)keys(), (const int64_t *)pos(),
                       k[1 - cur].as<uint64_t>(), p[1 - cur].as<int64_t>(), len, n, w);
            cur = 1 - cur;
        }
        return OPS_OK;
    }
};

// Line l's sorted pairs first .. first + olen - 1 -> the contiguous results: value
// and position j - first of line l at (l / inner) * olen * inner + l % inner +
// (j - first) * inner (the layout of a result with dim resized to olen).
template <class T>
__global__ void
sort_output_kernel(const int64_t *pos, int64_t len, int64_t n, int64_t first, int64_t olen, int64_t inner,
                   const T *src, ixc_geom lg, ixc_geom eg, T *vals, int64_t *idx)
{
    IXC_FOR(e, n)
    {
        const int64_t l = e / olen, j = e % olen;
        const int64_t p = pos[l * len + first + j];
        const int64_t o = (l / inner) * olen * inner + l % inner + j * inner;
        if (vals != nullptr)
            vals[o] = src[ixc_off(lg, l) + ixc_off(eg, p)];
        if (idx != nullptr)
            idx[o] = p;
    }
}

// The lines of self along dim: lg over self's dims but dim, eg the line itself.
static void
line_geoms(const ops_tensor *self, int dim, ixc_geom *lg, ixc_geom *eg)
{
    lg->nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d == dim)
            continue;
        lg->sizes[lg->nd] = self->sizes[d];
        lg->strides[lg->nd++] = self->strides[d];
    }
    eg->nd = 1;
    eg->sizes[0] = self->ndim ? self->sizes[dim] : 1;
    eg->strides[0] = self->ndim ? self->strides[dim] : 0;
}

// The stub sort_order_lines (the driver: kernels/sort.c): every line sorted, then the olen
// results of each read from the sorted pairs.
OPS_REGISTER_STUB(sort_order_lines, CUDA, sort_order_lines_cuda);
extern "C" ops_status
sort_order_lines_cuda(const char *op, const sort_plan *p)
{
    const ops_tensor *self = p->self;
    if (p->nlines == 0 || p->olen == 0)
        return OPS_OK;
    ixc_geom lg, eg;
    line_geoms(self, (int)p->dim, &lg, &eg);
    sort_lines s;
    ops_status st = s.run(op, self, lg, eg, p->nlines, p->len, p->desc, true);
    if (st != OPS_OK)
        return st;
    const int64_t n = p->nlines * p->olen, first = p->kind == LINE_KTH ? p->k - 1 : 0;
    ixc_by_size(ops_dtype_itemsize(self->dtype), [&](auto tag) {
        typedef decltype(tag) T;
        OPS_LAUNCH(sort_output_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (const int64_t *)s.pos(),
                   p->len, n, first, p->olen, p->inner, (const T *)ixc_ptr(self), lg, eg,
                   p->vals != NULL ? (T *)ixc_ptr(p->vals) : (T *)nullptr,
                   p->idx != NULL ? (int64_t *)ixc_ptr(p->idx) : (int64_t *)nullptr);
    });
    OPS_CUDA_CHECK_LAUNCH(op);
    return OPS_OK;
}

// ---- unique (flat) ----------------------------------------------------------------------

// flag[j] = 1 where pair j starts a group of equal values (NaNs never equal).
__global__ void
unique_flag_kernel(const uint64_t *keys, int64_t n, bool fl, uint64_t nan, int64_t *flag)
{
    IXC_FOR(j, n)
    flag[j] = j == 0 || !ops_ix_same(fl, nan, keys[j - 1], keys[j]) ? 1 : 0;
}

// grp[j]: exclusive scan of the flags.  A group's first pair gives its value and its
// start; every pair gives its element's inverse.
template <class T>
__global__ void
unique_fill_kernel(const int64_t *pos, const int64_t *grp, const int64_t *flag, int64_t n, const T *src,
                   ixc_geom sg, T *uo, int64_t *start, int64_t *inv)
{
    IXC_FOR(j, n)
    {
        const int64_t g = grp[j] + flag[j] - 1;
        if (flag[j]) {
            uo[g] = src[ixc_off(sg, pos[j])];
            start[g] = j;
        }
        if (inv != nullptr)
            inv[pos[j]] = g;
    }
}

__global__ void
unique_count_kernel(const int64_t *start, int64_t groups, int64_t n, int64_t *cnt)
{
    IXC_FOR(g, groups)
    cnt[g] = (g + 1 < groups ? start[g + 1] : n) - start[g];
}

// unique over all of self (sorted), or over runs of equal consecutive elements
// (consecutive): the number of groups is counted on the device and read back, then
// the results are allocated and filled.  inverse has self's shape, output and counts
// are 1-D; a result not asked for is an empty int64 tensor (as the CPU's).
OPS_REGISTER_STUB(unique_flat_loop, CUDA, unique_flat_loop_cuda);
extern "C" ops_status
unique_flat_loop_cuda(const char *op, const ops_tensor *self, bool consecutive, bool want_inv, bool want_cnt, ops_tensor **r0,
            ops_tensor **r1, ops_tensor **r2)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    const ops_dtype dt = self->dtype;
    const int64_t n = ops_tensor_numel(self), zero = 0;
    // one line: self flattened (positions are row-major element numbers of self)
    const ixc_geom sg = ixc_geom_of(self);
    ixc_geom lg;
    lg.nd = 0;
    sort_lines s;
    ixc_buf flag, grp;
    ops_status st = s.run(op, self, lg, sg, 1, n, false, !consecutive);
    if (st != OPS_OK)
        return st;
    int64_t groups = 0;
    if (!flag.alloc(op, self, n, OPS_INT64) || !grp.alloc(op, self, n, OPS_INT64))
        return ops_last_status();
    if (n > 0) {
        IXC_LAUNCH(op, self, n, unique_flag_kernel, (const uint64_t *)s.keys(), n, ops_dtype_is_floating(dt),
                   ops_ix_nan_key(dt), flag.as<int64_t>());
        if (cudaMemcpyAsync(grp.as<void>(), flag.as<void>(), (size_t)n * sizeof(int64_t), cudaMemcpyDeviceToDevice,
                            ixc_stream(self)) != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemcpyAsync", cudaGetLastError());
        if ((st = ixc_exclusive_scan(op, self, grp.as<int64_t>(), n, &groups)) != OPS_OK)
            return st;
    }
    ixc_ref uo(ixc_new(op, self, 1, &groups, dt));
    ixc_ref inv(want_inv ? ixc_new(op, self, self->ndim, self->sizes, OPS_INT64)
                         : ixc_new(op, self, 1, &zero, OPS_INT64));
    ixc_ref cnt(ixc_new(op, self, 1, want_cnt ? &groups : &zero, OPS_INT64));
    ixc_buf start;
    if (uo.t == NULL || inv.t == NULL || cnt.t == NULL || !start.alloc(op, self, groups, OPS_INT64))
        return ops_last_status();
    if (n > 0) {
        ixc_by_size(ops_dtype_itemsize(dt), [&](auto tag) {
            typedef decltype(tag) T;
            OPS_LAUNCH(unique_fill_kernel<T>, ixc_grid(n), IXC_BLOCK, 0, ixc_stream(self), (const int64_t *)s.pos(),
                       (const int64_t *)grp.as<int64_t>(), (const int64_t *)flag.as<int64_t>(), n,
                       (const T *)ixc_ptr(self), sg, (T *)ixc_ptr(uo.t), start.as<int64_t>(),
                       want_inv ? (int64_t *)ixc_ptr(inv.t) : (int64_t *)nullptr);
        });
        OPS_CUDA_CHECK_LAUNCH(op);
        if (want_cnt)
            IXC_LAUNCH(op, self, groups, unique_count_kernel, (const int64_t *)start.as<int64_t>(), groups, n,
                       (int64_t *)ixc_ptr(cnt.t));
    }
    *r0 = uo.take(), *r1 = inv.take(), *r2 = cnt.take();
    return OPS_OK;
}

// ---- unique along a dim ----------------------------------------------------------------

// Slices self[..., s, ...] along dim as rows: row s, column e = o * inner + i is the
// element (o, s, i) of self viewed as [outer, len, inner] (row-major over self).
struct slice_rows {
    ixc_geom g; // self
    int64_t len, inner, width;
    __device__ int64_t off(int64_t s, int64_t e) const
    {
        return ixc_off(g, ((e / inner) * len + s) * inner + e % inner);
    }
};

// Pass of the lexicographic sort (columns last to first, each a stable sort): pair j
// gets the key of column c of row ord[j] and position j (its rank so far).
__global__ void
rows_keys_kernel(const char *src, ops_dtype dt, int isz, slice_rows r, int64_t c, const int64_t *ord,
                 uint64_t *keys, int64_t *pos)
{
    IXC_FOR(j, r.len)
    {
        keys[j] = ops_ix_key_at(dt, src + r.off(ord[j], c) * isz);
        pos[j] = j;
    }
}

// The new order after a pass: ord_new[j] = ord[pos[j]].
__global__ void
rows_reorder_kernel(const int64_t *ord, const int64_t *pos, int64_t n, int64_t *ord_new)
{
    IXC_FOR(j, n)
    ord_new[j] = ord[pos[j]];
}

__global__ void
iota_kernel(int64_t *p, int64_t n)
{
    IXC_FOR(j, n)
    p[j] = j;
}

// flag[j] = 1 when row ord[j] starts a group: j == 0 or a column differs from row
// ord[j - 1] (NaNs never equal).
__global__ void
rows_flag_kernel(const char *src, ops_dtype dt, int isz, slice_rows r, const int64_t *ord, bool fl, uint64_t nan,
                 int64_t *flag)
{
    IXC_FOR(j, r.len)
    {
        bool same = j > 0;
        for (int64_t e = 0; same && e < r.width; e++)
            same = ops_ix_same(fl, nan, ops_ix_key_at(dt, src + r.off(ord[j - 1], e) * isz),
                               ops_ix_key_at(dt, src + r.off(ord[j], e) * isz));
        flag[j] = same ? 0 : 1;
    }
}

// From the group flags' scan: the first row of each group (sel, a row of self),
// every row's group (inv), each group's start (first).
__global__ void
rows_groups_kernel(const int64_t *ord, const int64_t *grp, const int64_t *flag, int64_t n, int64_t *sel,
                   int64_t *first, int64_t *inv)
{
    IXC_FOR(j, n)
    {
        const int64_t g = grp[j] + flag[j] - 1;
        if (flag[j]) {
            sel[g] = ord[j];
            first[g] = j;
        }
        if (inv != nullptr)
            inv[ord[j]] = g;
    }
}

// unique_dim (sort: rows sorted lexicographically, NaN largest, ties by position)
// and unique_consecutive along dim (runs of equal consecutive rows): the groups are
// counted on the device and read back; the output is index_select(self, dim, the
// first row of each group).  dim is wrapped, and self is not empty when sort (the
// driver's checks).
OPS_REGISTER_STUB(unique_rows_loop, CUDA, unique_rows_loop_cuda);
extern "C" ops_status
unique_rows_loop_cuda(const char *op, const ops_tensor *self, int64_t dim, bool sort, bool want_inv, bool want_cnt,
                      ops_tensor **r0, ops_tensor **r1, ops_tensor **r2)
{
    ops_cuda_device_guard guard(ixc_dev(self));
    const ops_dtype dt = self->dtype;
    const int isz = (int)ops_dtype_itemsize(dt);
    slice_rows r;
    r.g = ixc_geom_of(self);
    r.len = self->ndim == 0 ? 1 : self->sizes[dim];
    r.inner = 1;
    int64_t outer = 1;
    for (int d = 0; d < self->ndim; d++) {
        if (d < dim)
            outer *= self->sizes[d];
        else if (d > dim)
            r.inner *= self->sizes[d];
    }
    r.width = outer * r.inner;
    const int64_t len = r.len, zero = 0;
    ixc_buf ord[2], flag, grp, first;
    int cur = 0;
    if (!ord[0].alloc(op, self, len, OPS_INT64) || !ord[1].alloc(op, self, len, OPS_INT64) ||
        !flag.alloc(op, self, len, OPS_INT64) || !grp.alloc(op, self, len, OPS_INT64))
        return ops_last_status();
    int64_t groups = 0;
    ops_status st = OPS_OK;
    if (len > 0) {
        IXC_LAUNCH(op, self, len, iota_kernel, ord[0].as<int64_t>(), len);
        sort_lines s;
        for (int64_t c = r.width - 1; sort && c >= 0; c--) {
            if ((st = s.alloc(op, self, len)) != OPS_OK)
                return st;
            IXC_LAUNCH(op, self, len, rows_keys_kernel, (const char *)ixc_ptr(self), dt, isz, r, c,
                       (const int64_t *)ord[cur].as<int64_t>(), s.keys(), s.pos());
            if ((st = s.sort_pairs(op, self, 1, len)) != OPS_OK)
                return st;
            IXC_LAUNCH(op, self, len, rows_reorder_kernel, (const int64_t *)ord[cur].as<int64_t>(),
                       (const int64_t *)s.pos(), len, ord[1 - cur].as<int64_t>());
            cur = 1 - cur;
        }
        IXC_LAUNCH(op, self, len, rows_flag_kernel, (const char *)ixc_ptr(self), dt, isz, r,
                   (const int64_t *)ord[cur].as<int64_t>(), ops_dtype_is_floating(dt), ops_ix_nan_key(dt),
                   flag.as<int64_t>());
        if (cudaMemcpyAsync(grp.as<void>(), flag.as<void>(), (size_t)len * sizeof(int64_t),
                            cudaMemcpyDeviceToDevice, ixc_stream(self)) != cudaSuccess)
            return ops_cuda_fail(op, "cudaMemcpyAsync", cudaGetLastError());
        if ((st = ixc_exclusive_scan(op, self, grp.as<int64_t>(), len, &groups)) != OPS_OK)
            return st;
    }
    ixc_ref sel(ixc_new(op, self, 1, &groups, OPS_INT64));
    ixc_ref inv(ixc_new(op, self, 1, want_inv ? &len : &zero, OPS_INT64));
    ixc_ref cnt(ixc_new(op, self, 1, want_cnt ? &groups : &zero, OPS_INT64));
    if (sel.t == NULL || inv.t == NULL || cnt.t == NULL || !first.alloc(op, self, groups, OPS_INT64))
        return ops_last_status();
    if (len > 0) {
        IXC_LAUNCH(op, self, len, rows_groups_kernel, (const int64_t *)ord[cur].as<int64_t>(),
                   (const int64_t *)grp.as<int64_t>(), (const int64_t *)flag.as<int64_t>(), len,
                   (int64_t *)ixc_ptr(sel.t), first.as<int64_t>(),
                   want_inv ? (int64_t *)ixc_ptr(inv.t) : (int64_t *)nullptr);
        if (want_cnt)
            IXC_LAUNCH(op, self, groups, unique_count_kernel, (const int64_t *)first.as<int64_t>(), groups, len,
                       (int64_t *)ixc_ptr(cnt.t));
    }
    ixc_ref uo(ixc_index_select(op, self, dim, sel.t));
    if (uo.t == NULL)
        return ops_last_status();
    *r0 = uo.take(), *r1 = inv.take(), *r2 = cnt.take();
    return OPS_OK;
}
