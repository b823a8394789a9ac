/* bench_sort: sort, topk and searchsorted against C's qsort over the same data.
 *
 *   - msort of 1M float32 (values only) against qsort of a copy of the floats;
 *   - sort of 1M float32 (values and int64 indices) against qsort of (value, index)
 *     pairs, the plain C way to get both;
 *   - topk of the 1M floats for k = 10 and k = 1000 against the full sort above, and
 *     topk(k=10) over the rows of [1000, 1000] against sort of those rows;
 *   - searchsorted of 1M float32 values in 4096 sorted boundaries against a plain
 *     binary-search loop.
 * Every output is preallocated (out= forms); the qsort baselines include the copy of
 * the input they sort in place.  Random data from a fixed xorshift seed, no NaN.
 * libops runs on its default thread count (the sorts of one line use one thread);
 * the baselines are single-threaded.  Best of several repetitions, interleaved. */
#include <string.h>

#include "bench_util.h"
#include "ops_op_empty.h"
#include "ops_op_msort.h"
#include "ops_op_searchsorted.h"
#include "ops_op_sort.h"
#include "ops_op_topk.h"
#include "ops_op_view.h"

static uint64_t
xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int
cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct {
    float v;
    int64_t i;
} vi_pair;

/* Ties by index, so the result is the stable order (what sort returns). */
static int
cmp_pair(const void *a, const void *b)
{
    const vi_pair *x = a, *y = b;
    if (x->v != y->v)
        return (x->v > y->v) - (x->v < y->v);
    return (x->i > y->i) - (x->i < y->i);
}

static double
min2(double a, double b)
{
    return a < b ? a : b;
}

static int64_t __attribute__((noinline))
plain_searchsorted(const float *bd, int64_t nb, const float *v, int64_t nv, int64_t *out)
{
    for (int64_t e = 0; e < nv; e++) {
        int64_t lo = 0, hi = nb;
        while (lo < hi) {
            const int64_t mid = lo + ((hi - lo) >> 1);
            if (bd[mid] < v[e])
                lo = mid + 1;
            else
                hi = mid;
        }
        out[e] = lo;
    }
    return out[nv - 1];
}

int
main(int argc, char **argv)
{
    const char *prog = "bench_sort";
    const int reps = argc > 1 ? atoi(argv[1]) : 5;
    const int64_t n = 1 << 20;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    float *data = malloc((size_t)n * sizeof(float));
    float *work = malloc((size_t)n * sizeof(float));
    vi_pair *pairs = malloc((size_t)n * sizeof(vi_pair));
    int64_t *plain_idx = malloc((size_t)n * sizeof(int64_t));
    if (!data || !work || !pairs || !plain_idx)
        bench_die(prog, "malloc");
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)((double)(xorshift(&seed) >> 11) * (1.0 / 9007199254740992.0) * 2000.0 - 1000.0);

    ops_tensor *x = ops_tensor_from_data(data, OPS_INTS(n), OPS_FLOAT32);
    ops_tensor *vals = ops_empty(OPS_INTS(n), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *idx = ops_empty(OPS_INTS(n), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *tv10 = ops_empty(OPS_INTS(10), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *ti10 = ops_empty(OPS_INTS(10), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *tv1k = ops_empty(OPS_INTS(1000), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *ti1k = ops_empty(OPS_INTS(1000), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *m = x ? ops_view(x, OPS_INTS(1024, 1024)) : NULL;
    ops_tensor *mv = ops_empty(OPS_INTS(1024, 1024), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *mi = ops_empty(OPS_INTS(1024, 1024), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *mtv = ops_empty(OPS_INTS(1024, 10), OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    ops_tensor *mti = ops_empty(OPS_INTS(1024, 10), OPS_INT64, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE);
    if (!x || !vals || !idx || !tv10 || !ti10 || !tv1k || !ti1k || !m || !mv || !mi || !mtv || !mti)
        bench_die(prog, "setup");

    double t_qs = 1e9, t_ms = 1e9, t_qp = 1e9, t_so = 1e9, t_k10 = 1e9, t_k1k = 1e9, t_rs = 1e9, t_rk = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        memcpy(work, data, (size_t)n * sizeof(float));
        qsort(work, (size_t)n, sizeof(float), cmp_float);
        double t1 = bench_now();
        if (ops_msort_out(x, vals) != OPS_OK)
            bench_die(prog, "msort");
        double t2 = bench_now();
        for (int64_t i = 0; i < n; i++)
            pairs[i] = (vi_pair){data[i], i};
        qsort(pairs, (size_t)n, sizeof(vi_pair), cmp_pair);
        double t3 = bench_now();
        if (ops_sort_values(x, -1, false, vals, idx) != OPS_OK)
            bench_die(prog, "sort");
        double t4 = bench_now();
        if (ops_topk_values(x, 10, -1, true, true, tv10, ti10) != OPS_OK)
            bench_die(prog, "topk 10");
        double t5 = bench_now();
        if (ops_topk_values(x, 1000, -1, true, true, tv1k, ti1k) != OPS_OK)
            bench_die(prog, "topk 1000");
        double t6 = bench_now();
        if (ops_sort_values(m, -1, true, mv, mi) != OPS_OK)
            bench_die(prog, "sort rows");
        double t7 = bench_now();
        if (ops_topk_values(m, 10, -1, true, true, mtv, mti) != OPS_OK)
            bench_die(prog, "topk rows");
        double t8 = bench_now();
        t_qs = min2(t_qs, t1 - t0);
        t_ms = min2(t_ms, t2 - t1);
        t_qp = min2(t_qp, t3 - t2);
        t_so = min2(t_so, t4 - t3);
        t_k10 = min2(t_k10, t5 - t4);
        t_k1k = min2(t_k1k, t6 - t5);
        t_rs = min2(t_rs, t7 - t6);
        t_rk = min2(t_rk, t8 - t7);
    }
    /* the values must agree with qsort's */
    if (memcmp(ops_tensor_data_ptr(vals), work, (size_t)n * sizeof(float)) != 0)
        bench_die(prog, "sorted values differ from qsort's:");
    const int64_t *oi = ops_tensor_data_ptr(idx);
    for (int64_t i = 0; i < n; i++)
        if (oi[i] != pairs[i].i)
            bench_die(prog, "sort indices differ from the (value, index) qsort's:");

    printf("msort of 1M float32: qsort %.1f ms, libops %.1f ms (%.1fx qsort)\n", 1e3 * t_qs, 1e3 * t_ms,
           t_qs / t_ms);
    printf("sort (values + indices) of 1M float32: qsort of pairs %.1f ms, libops %.1f ms (%.1fx qsort)\n",
           1e3 * t_qp, 1e3 * t_so, t_qp / t_so);
    printf("topk of 1M float32: k=10 %.2f ms (%.0fx faster than the full sort), k=1000 %.2f ms (%.0fx)\n",
           1e3 * t_k10, t_so / t_k10, 1e3 * t_k1k, t_so / t_k1k);
    printf("rows of [1024, 1024] float32: sort %.1f ms, topk k=10 %.2f ms (%.1fx faster)\n", 1e3 * t_rs,
           1e3 * t_rk, t_rs / t_rk);

    /* searchsorted: 1M values into 4096 sorted boundaries */
    const int64_t nb = 4096;
    float *bd = malloc((size_t)nb * sizeof(float));
    if (!bd)
        bench_die(prog, "malloc");
    for (int64_t i = 0; i < nb; i++)
        bd[i] = -1000.0f + 2000.0f * (float)i / (float)nb;
    ops_tensor *b = ops_tensor_from_data(bd, OPS_INTS(nb), OPS_FLOAT32);
    if (!b)
        bench_die(prog, "searchsorted setup");
    double t_ps = 1e9, t_ss = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        plain_searchsorted(bd, nb, data, n, plain_idx);
        double t1 = bench_now();
        if (ops_searchsorted_tensor_out(b, x, false, false, NULL, NULL, idx) != OPS_OK)
            bench_die(prog, "searchsorted");
        double t2 = bench_now();
        t_ps = min2(t_ps, t1 - t0);
        t_ss = min2(t_ss, t2 - t1);
    }
    if (memcmp(ops_tensor_data_ptr(idx), plain_idx, (size_t)n * sizeof(int64_t)) != 0)
        bench_die(prog, "searchsorted differs from the plain loop:");
    printf("searchsorted of 1M float32 in 4096 boundaries: plain loop %.1f ms, libops %.1f ms (%.2fx)\n",
           1e3 * t_ps, 1e3 * t_ss, t_ps / t_ss);

    free(data);
    free(work);
    free(pairs);
    free(plain_idx);
    free(bd);
    ops_tensor_release(b);
    ops_tensor_release(x);
    ops_tensor_release(vals);
    ops_tensor_release(idx);
    ops_tensor_release(tv10);
    ops_tensor_release(ti10);
    ops_tensor_release(tv1k);
    ops_tensor_release(ti1k);
    ops_tensor_release(m);
    ops_tensor_release(mv);
    ops_tensor_release(mi);
    ops_tensor_release(mtv);
    ops_tensor_release(mti);
    return 0;
}
